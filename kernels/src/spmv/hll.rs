//! HLL (hacked ELLPACK) SpMV kernels, the Tor Vergata report's v1..v4 and the column-major
//! (SELL-style) kernel.
//!
//! Arguments common to all: `rows`, `hack_size`, `hack_offsets` (hacks + 1), `hack_widths`
//! (hacks), `col_idx`, `values` (padded slots: value zero at a valid column), x, y. v1..v4
//! read the report's row-major layout (row r's slot j at offset + r * width + j); `sell`
//! reads the column-major layout (offset + j * rows_in_hack + r).

use crate::device::memory::load_nc;
use crate::device::thread::{
    WARP_SIZE, block_dim_x, block_idx_x, index_1d, lane_id, sync_threads, thread_idx_x,
};
use crate::device::{Float, shared, warp};

/// Slot range of `row` in the row-major layout: (first slot, width).
#[inline(always)]
unsafe fn row_major_slots(
    row: u32,
    hack_size: u32,
    hack_offsets: *const u32,
    hack_widths: *const u32,
) -> (u32, u32) {
    let h = row / hack_size;
    // SAFETY: row < rows, so h < hacks.
    unsafe {
        let width = *hack_widths.add(h as usize);
        (*hack_offsets.add(h as usize) + (row % hack_size) * width, width)
    }
}

/// The sum of row `row` in the row-major layout, by one thread.
#[inline(always)]
unsafe fn row_major_dot<T: Float>(
    row: u32,
    hack_size: u32,
    hack_offsets: *const u32,
    hack_widths: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
) -> T {
    // SAFETY: the caller's row < rows; slots inside the hack; padded columns are valid.
    unsafe {
        let (start, width) = row_major_slots(row, hack_size, hack_offsets, hack_widths);
        let mut sum = T::ZERO;
        for s in start..start + width {
            sum = (*values.add(s as usize)).mul_add(*x.add(*col_idx.add(s as usize) as usize), sum);
        }
        sum
    }
}

/// v1: one thread per hack, walking its rows one by one. Launch: one thread per hack.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn v1_thread_per_hack<T: Float>(
    rows: u32,
    hack_size: u32,
    hack_offsets: *const u32,
    hack_widths: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let h = index_1d();
    let first_row = h.saturating_mul(hack_size);
    if first_row >= rows {
        return;
    }
    for row in first_row..(first_row + hack_size).min(rows) {
        // SAFETY: row < rows.
        unsafe {
            *y.add(row as usize) =
                row_major_dot(row, hack_size, hack_offsets, hack_widths, col_idx, values, x)
        };
    }
}

/// v2: one thread per row. Launch: one thread per row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn v2_thread_per_row<T: Float>(
    rows: u32,
    hack_size: u32,
    hack_offsets: *const u32,
    hack_widths: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let row = index_1d();
    if row < rows {
        // SAFETY: row < rows.
        unsafe {
            *y.add(row as usize) =
                row_major_dot(row, hack_size, hack_offsets, hack_widths, col_idx, values, x)
        };
    }
}

/// v3: one thread per row with the block's window of x (the entries whose index matches the
/// block's rows, where a banded matrix reads most) staged in shared memory. Launch: one
/// thread per row; shared bytes: block_dim * size_of T.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn v3_shared_x<T: Float>(
    rows: u32,
    cols: u32,
    hack_size: u32,
    hack_offsets: *const u32,
    hack_widths: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let window = shared::dynamic::<T>();
    let first = block_idx_x() * block_dim_x();
    let window_len = block_dim_x().min(cols.saturating_sub(first));
    let t = thread_idx_x();
    if t < window_len {
        // SAFETY: first + t < cols; t < block_dim, the shared size.
        unsafe { window.set(t, *x.add((first + t) as usize)) };
    }
    sync_threads();
    let row = first + t;
    if row >= rows {
        return;
    }
    // SAFETY: row < rows; slots inside the hack; shared index checked against the window.
    unsafe {
        let (start, width) = row_major_slots(row, hack_size, hack_offsets, hack_widths);
        let mut sum = T::ZERO;
        for s in start..start + width {
            let col = *col_idx.add(s as usize);
            let xv = if col.wrapping_sub(first) < window_len {
                window.get(col - first)
            } else {
                *x.add(col as usize)
            };
            sum = (*values.add(s as usize)).mul_add(xv, sum);
        }
        *y.add(row as usize) = sum;
    }
}

/// v4: one warp per row, `shfl_down` reduction (the report's best). Launch: one warp per row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn v4_warp_per_row<T: Float>(
    rows: u32,
    hack_size: u32,
    hack_offsets: *const u32,
    hack_widths: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let row = index_1d() / WARP_SIZE;
    if row >= rows {
        return; // the whole warp leaves together
    }
    let lane = lane_id();
    // SAFETY: row < rows; slots inside the hack; padded columns are valid.
    unsafe {
        let (start, width) = row_major_slots(row, hack_size, hack_offsets, hack_widths);
        let mut sum = T::ZERO;
        let mut s = start + lane;
        while s < start + width {
            sum = (*values.add(s as usize)).mul_add(*x.add(*col_idx.add(s as usize) as usize), sum);
            s += WARP_SIZE;
        }
        let sum = warp::reduce_sum_down(sum, WARP_SIZE);
        if lane == 0 {
            *y.add(row as usize) = sum;
        }
    }
}

/// The fast HLL kernel: column-major slices (SELL), one thread per row; slot j of the
/// threads of a warp are contiguous, so every load is coalesced. Launch: one thread per row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn sell<T: Float>(
    rows: u32,
    hack_size: u32,
    hack_offsets: *const u32,
    hack_widths: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let row = index_1d();
    if row >= rows {
        return;
    }
    let h = row / hack_size;
    let local = row % hack_size;
    // SAFETY: row < rows so h < hacks; slots inside the hack; padded columns are valid;
    // everything read is read-only during the kernel.
    unsafe {
        let rows_in_hack = hack_size.min(rows - h * hack_size);
        let (offset, width) = (load_nc(hack_offsets.add(h as usize)), load_nc(hack_widths.add(h as usize)));
        let mut s = offset + local;
        let mut sum = T::ZERO;
        for _ in 0..width {
            let col = load_nc(col_idx.add(s as usize));
            sum = load_nc(values.add(s as usize)).mul_add(load_nc(x.add(col as usize)), sum);
            s += rows_in_hack;
        }
        *y.add(row as usize) = sum;
    }
}
