//! CSR SpMV kernels, from the reports' classics to the fast adaptive kernel.
//!
//! Arguments common to all: `rows`, `row_ptr` (rows + 1 offsets), `col_idx` and `values`
//! (nnz each), `x` (cols), `y` (rows). Launch shapes are given per kernel; every kernel
//! checks its row or nonzero index against the sizes passed in.

use crate::device::memory::load_nc;
use crate::device::shared;
use crate::device::thread::{WARP_SIZE, block_dim_x, index_1d, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::device::warp::{self, sync_warp};
use crate::device::{Float, atomic};

/// `values[j] * x[col_idx[j]]` summed over `j` in `start..end` stepping by `step`, starting at
/// `start + first`.
#[inline(always)]
unsafe fn row_dot<T: Float>(
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    first: u32,
    start: u32,
    end: u32,
    step: u32,
) -> T {
    let mut sum = T::ZERO;
    let mut j = start + first;
    while j < end {
        // SAFETY: j < end <= nnz; the column index is < cols by the format's invariant.
        unsafe { sum = (*values.add(j as usize)).mul_add(*x.add(*col_idx.add(j as usize) as usize), sum) };
        j += step;
    }
    sum
}

/// Kernel 1: Scalar: one thread per row (the reports' first kernel). Uncoalesced: neighbouring
/// threads read rows far apart. Launch: one thread per row, any block size.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn scalar<T: Float>(
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let row = index_1d();
    if row < rows {
        // SAFETY: row < rows, so row + 1 indexes row_ptr.
        unsafe {
            let (start, end) = (*row_ptr.add(row as usize), *row_ptr.add(row as usize + 1));
            *y.add(row as usize) = row_dot(col_idx, values, x, 0, start, end, 1);
        }
    }
}

/// Kernel 2: One thread per nonzero (the Uruguay report): products staged in shared memory, each run
/// of one row inside the block summed by the run's first thread and added into `y` with an
/// atomic. `y` must be zeroed first. Launch: one thread per nonzero; shared bytes:
/// block_dim * (size_of T + 4).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn nnz_atomic<T: Float>(
    rows: u32,
    nnz: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let k = index_1d();
    let t = thread_idx_x();
    let products = shared::dynamic::<T>();
    let row_of = products.after::<u32>(block_dim_x());
    let mut row = u32::MAX;
    if k < nnz {
        // The row holding nonzero k: the last row whose start is <= k (skips empty rows).
        let (mut lo, mut hi) = (0u32, rows);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            // SAFETY: mid < rows.
            if unsafe { *row_ptr.add(mid as usize) } <= k { lo = mid } else { hi = mid }
        }
        row = lo;
        // SAFETY: k < nnz.
        let p = unsafe { *values.add(k as usize) * *x.add(*col_idx.add(k as usize) as usize) };
        unsafe { products.set(t, p) };
    }
    // SAFETY (shared): t < block_dim, the size of both arrays.
    unsafe { row_of.set(t, row) };
    sync_threads();
    let starts_run = row != u32::MAX && (t == 0 || unsafe { row_of.get(t - 1) } != row);
    if starts_run {
        let mut sum = T::ZERO;
        let mut i = t;
        while i < block_dim_x() && unsafe { row_of.get(i) } == row {
            sum = sum + unsafe { products.get(i) };
            i += 1;
        }
        // SAFETY: row < rows.
        unsafe { atomic::add(y.add(row as usize), sum) };
    }
}

/// Kernel 3: Warp per row, shuffle reduction. Launch: one warp per row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn warp_shuffle<T: Float>(
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let row = index_1d() / WARP_SIZE;
    if row >= rows {
        return; // the whole warp leaves together
    }
    // SAFETY: row < rows.
    let (start, end) = unsafe { (*row_ptr.add(row as usize), *row_ptr.add(row as usize + 1)) };
    let sum = warp::reduce_sum(unsafe { row_dot(col_idx, values, x, lane_id(), start, end, WARP_SIZE) });
    if lane_id() == 0 {
        unsafe { *y.add(row as usize) = sum };
    }
}

/// Kernel 4: Warp per row, shared-memory tree reduction (Tor Vergata kernel 3). Launch: one warp per
/// row; shared bytes: block_dim * size_of T.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn warp_shared<T: Float>(
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let row = index_1d() / WARP_SIZE;
    if row >= rows {
        return;
    }
    let lane = lane_id();
    let partials = shared::dynamic::<T>();
    let base = warp_id() * WARP_SIZE;
    // SAFETY: row < rows; shared indices are below block_dim.
    unsafe {
        let (start, end) = (*row_ptr.add(row as usize), *row_ptr.add(row as usize + 1));
        partials.set(base + lane, row_dot(col_idx, values, x, lane, start, end, WARP_SIZE));
        let mut offset = WARP_SIZE / 2;
        while offset > 0 {
            sync_warp();
            if lane < offset {
                partials.set(base + lane, partials.get(base + lane) + partials.get(base + lane + offset));
            }
            offset /= 2;
        }
        if lane == 0 {
            *y.add(row as usize) = partials.get(base);
        }
    }
}

/// Kernel 5: Warp per row with read-only cached loads (`__ldg`, Tor Vergata kernel 4). Launch: one
/// warp per row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn warp_ldg<T: Float>(
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let row = index_1d() / WARP_SIZE;
    if row >= rows {
        return;
    }
    let lane = lane_id();
    let mut sum = T::ZERO;
    // SAFETY: row < rows; j < end <= nnz; columns < cols; nothing writes these during the kernel.
    unsafe {
        let (start, end) = (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1)));
        let mut j = start + lane;
        while j < end {
            let col = load_nc(col_idx.add(j as usize));
            sum = load_nc(values.add(j as usize)).mul_add(load_nc(x.add(col as usize)), sum);
            j += WARP_SIZE;
        }
    }
    let sum = warp::reduce_sum(sum);
    if lane == 0 {
        unsafe { *y.add(row as usize) = sum };
    }
}

/// Kernel 6: The fast kernel: a group of `W` lanes per row (W a power of two, 2..=32, picked by the
/// host from the mean row length), two independent loads in flight per lane, all reads
/// through the read-only path. Rows longer than `long_row` get a zero here and their sum from
/// [`long_row_chunks`]. Launch: `W` threads per row, block a multiple of 32.
#[gpu::kernel(W = 2 | 4 | 8 | 16 | 32, T = f32 | f64)]
#[inline(always)]
pub unsafe fn vector<T: Float, const W: u32>(
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
    long_row: u32,
) {
    let row = index_1d() / W;
    let lane = lane_id() % W;
    // Out-of-range groups still take part in the shuffles, with an empty row.
    let (start, end) = if row < rows {
        // SAFETY: row < rows.
        unsafe { (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1))) }
    } else {
        (0, 0)
    };
    let is_long = end - start > long_row;
    let end = if is_long { start } else { end };
    let (mut sum0, mut sum1) = (T::ZERO, T::ZERO);
    let mut j = start + lane;
    // SAFETY: every j read is < end <= nnz; columns < cols; inputs are read-only here.
    unsafe {
        while j + W < end {
            let (c0, c1) = (load_nc(col_idx.add(j as usize)), load_nc(col_idx.add((j + W) as usize)));
            let (v0, v1) = (load_nc(values.add(j as usize)), load_nc(values.add((j + W) as usize)));
            sum0 = v0.mul_add(load_nc(x.add(c0 as usize)), sum0);
            sum1 = v1.mul_add(load_nc(x.add(c1 as usize)), sum1);
            j += 2 * W;
        }
        if j < end {
            let c0 = load_nc(col_idx.add(j as usize));
            sum0 = load_nc(values.add(j as usize)).mul_add(load_nc(x.add(c0 as usize)), sum0);
        }
    }
    let mut sum = sum0 + sum1;
    let mut offset = W / 2;
    while offset > 0 {
        sum = sum + warp::shuffle_xor(sum, offset);
        offset /= 2;
    }
    if lane == 0 && row < rows {
        // SAFETY: row < rows. A long row's sum (zero here) is added by `long_row_chunks`.
        unsafe { *y.add(row as usize) = sum };
    }
}

/// The long rows [`vector`] zeroed, cut into chunks of at most `chunk` nonzeros so that even a
/// row of millions spreads over the whole GPU: one warp per chunk, a shuffle reduction, and an
/// atomic add into the row's y. Launch: one warp per chunk.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn long_row_chunks<T: Float>(
    chunks: u32,
    chunk: u32,
    chunk_rows: *const u32,
    chunk_starts: *const u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let c = index_1d() / WARP_SIZE;
    if c >= chunks {
        return; // the whole warp leaves together
    }
    // SAFETY: c < chunks; the host built the lists from row_ptr, so row < rows and the chunk
    // lies inside the row.
    unsafe {
        let row = load_nc(chunk_rows.add(c as usize));
        let start = load_nc(chunk_starts.add(c as usize));
        let end = load_nc(row_ptr.add(row as usize + 1)).min(start.saturating_add(chunk));
        let sum = warp::reduce_sum(row_dot(col_idx, values, x, lane_id(), start, end, WARP_SIZE));
        if lane_id() == 0 {
            atomic::add(y.add(row as usize), sum);
        }
    }
}
