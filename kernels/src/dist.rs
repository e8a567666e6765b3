//! Kernels of the distributed SpMV: the product of a part's boundary rows with the halo
//! received (what a part sends is gathered by `blas1::gather`).

use crate::device::Float;
use crate::device::memory::load_nc;
use crate::device::thread::index_1d;

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
