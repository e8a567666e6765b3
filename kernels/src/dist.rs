//! Kernels of the distributed SpMV: what a part sends (its x entries that other parts need),
//! and the product of its boundary rows with the halo received.

use crate::device::Float;
use crate::device::memory::load_nc;
use crate::device::thread::index_1d;

/// `out[i] = x[rows[i]]` for `i < count`: the x values a part sends, gathered into one buffer.
/// Launch: a thread per entry.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn gather<T: Float>(count: u32, rows: *const u32, x: *const T, out: *mut T) {
    let i = index_1d();
    if i < count {
        // SAFETY: i < count, the length of rows and out; rows index x (the host's plan).
        unsafe { *out.add(i as usize) = *x.add(load_nc(rows.add(i as usize)) as usize) };
    }
}

/// `y[rows[i]] += sum_j values[j] * halo[col_idx[j]]` over boundary row `i`'s entries, for
/// `i < count`: the remote part of a part's product, added once the halo has arrived.
/// Boundary rows hold few entries each, so a thread per row. Launch: a thread per row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn boundary_add<T: Float>(
    count: u32,
    rows: *const u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    halo: *const T,
    y: *mut T,
) {
    let i = index_1d();
    if i >= count {
        return;
    }
    // SAFETY: i < count; row_ptr has count + 1 entries bounding col_idx and values; columns
    // index the halo and rows index y (the host's plan).
    unsafe {
        let row = load_nc(rows.add(i as usize)) as usize;
        let mut sum = *y.add(row);
        for j in load_nc(row_ptr.add(i as usize))..load_nc(row_ptr.add(i as usize + 1)) {
            sum = load_nc(values.add(j as usize))
                .mul_add(load_nc(halo.add(load_nc(col_idx.add(j as usize)) as usize)), sum);
        }
        *y.add(row) = sum;
    }
}
