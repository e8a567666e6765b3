//! Iterative refinement of the mixed-precision solve: the f64 matrix rounded to f32 for the
//! factorisation (with its row sums, for ||A||), the residual r = b - A x in f64, and the
//! corrections that go through the f32 factors and back.

use abi::solve::{TRIANGULAR_CHUNK as CHUNK, TRIANGULAR_STRIDE as STRIDE};
use abi::{Strided, StridedMut};

use crate::device::thread::{
    block_dim_x, block_idx_x, grid_size_1d, index_1d, lane_id, sync_threads, thread_idx_x, warp_id,
    warp_index_1d,
};
use crate::device::warp::reduce_sum;
use crate::device::{Float, block, shared, tagged};
use crate::solve::triangular::{ROWS_PER_WARP, Triangle, solve_chunk};

/// A row's values a lane loads at once (32 apart) before using any, in the rounding of A to
/// f32: one load at a time per lane leaves too few bytes in flight (PERF.md).
const BATCH: usize = 4;
const BATCH_SPAN: u32 = 32 * BATCH as u32;

/// `low[i][j] = a[i][j]` rounded to f32, and `row_sums[i]` = sum_j |a[i][j]| (in f64), for an
/// n x n row-major matrix `a` and `low` one with rows `ld` apart (a pointer and `ld`, which LLVM
/// addresses as global memory: `solve::blocked`). Launch: a warp per row.
#[gpu::kernel]
pub unsafe fn demote_matrix(n: u32, a: *const f64, low: *mut f32, ld: u32, row_sums: *mut f64) {
    let low = StridedMut { ptr: low, ld };
    let row = warp_index_1d();
    if row >= n {
        return;
    }
    // SAFETY: row < n: the row's n values lie inside the n x n matrix.
    let a_row = unsafe { a.add(row as usize * n as usize) };
    let mut sum = 0.0f64;
    let mut j = lane_id();
    while j + BATCH_SPAN - 32 < n {
        let mut values = [0.0f64; BATCH];
        for (k, v) in values.iter_mut().enumerate() {
            // SAFETY: the batch's last index, j + BATCH_SPAN - 32, is below n, inside both matrices.
            *v = unsafe { *a_row.add((j + 32 * k as u32) as usize) };
        }
        for (k, v) in values.iter().enumerate() {
            // SAFETY: as above.
            unsafe { *low.at(row, j + 32 * k as u32) = *v as f32 };
            sum += v.abs();
        }
        j += BATCH_SPAN;
    }
    while j < n {
        // SAFETY: row, j < n: inside both n x n matrices.
        unsafe {
            let v = *a_row.add(j as usize);
            *low.at(row, j) = v as f32;
            sum += v.abs();
        }
        j += 32;
    }
    let sum = reduce_sum(sum);
    if lane_id() == 0 {
        // SAFETY: row < n.
        unsafe { *row_sums.add(row as usize) = sum };
    }
}

/// r = b - A x for an n x n row-major A, in f64. Launch: a warp per row.
#[gpu::kernel]
pub unsafe fn residual(n: u32, a: *const f64, x: *const f64, b: *const f64, r: *mut f64) {
    let row = warp_index_1d();
    if row >= n {
        return;
    }
    let mut sum = 0.0f64;
    let mut j = lane_id();
    while j < n {
        // SAFETY: row, j < n.
        unsafe { sum = (*a.add((row * n + j) as usize)).mul_add(*x.add(j as usize), sum) };
        j += 32;
    }
    let sum = reduce_sum(sum);
    if lane_id() == 0 {
        // SAFETY: row < n.
        unsafe { *r.add(row as usize) = *b.add(row as usize) - sum };
    }
}

/// Values of each vector a thread of [`max_abs_pair`] loads at once: one block reads them.
const NORM_BATCH: usize = 16;

/// `norms[0]` = max_i |u[i]| and `norms[1]` = max_i |v[i]| over n values each, NaN where a value
/// is: the refinement's ||r|| and ||x|| in one 16-byte copy to the host. The |values| are
/// compared by their bits, in whose order NaN comes after infinity. Launch: one block of 1024
/// threads; shared bytes: 32 x 8.
#[gpu::kernel]
pub unsafe fn max_abs_pair(n: u32, u: *const f64, v: *const f64, norms: *mut f64) {
    let step = block_dim_x();
    // SAFETY (the loads): every index read is below n, the length of both vectors.
    let bits = |values: *const f64, j: u32| unsafe { *values.add(j as usize) }.abs().to_bits();
    let largest = |values: *const f64| {
        let mut most = 0u64;
        let mut i = thread_idx_x();
        while i + (NORM_BATCH as u32 - 1) * step < n {
            let mut batch = [0u64; NORM_BATCH];
            for (k, b) in batch.iter_mut().enumerate() {
                *b = bits(values, i + k as u32 * step);
            }
            most = batch.iter().fold(most, |most, &b| most.max(b));
            i += NORM_BATCH as u32 * step;
        }
        while i < n {
            most = most.max(bits(values, i));
            i += step;
        }
        most
    };
    let scratch = shared::dynamic::<u64>();
    let most_u = block::reduce_max(largest(u), 0, scratch);
    let most_v = block::reduce_max(largest(v), 0, scratch);
    if thread_idx_x() == 0 {
        // SAFETY: the host passes two values.
        unsafe { (*norms, *norms.add(1)) = (f64::from_bits(most_u), f64::from_bits(most_v)) };
    }
}

/// `low[i] = scale * v[i]` rounded to f32: a residual brought into f32's range before it goes
/// through the f32 factors. Launch: any, grid-stride loop.
#[gpu::kernel]
pub unsafe fn demote_scaled(n: u32, v: *const f64, scale: f64, low: *mut f32) {
    let mut i = index_1d();
    while i < n {
        // SAFETY: i < n, the length of both vectors.
        unsafe { *low.add(i as usize) = (scale * *v.add(i as usize)) as f32 };
        i += grid_size_1d();
    }
}

/// `x[i] += scale * d[i]` in f64: a correction from the f32 factors, scaled back. Launch: any,
/// grid-stride loop.
#[gpu::kernel]
pub unsafe fn add_correction(n: u32, d: *const f32, scale: f64, x: *mut f64) {
    let mut i = index_1d();
    while i < n {
        // SAFETY: i < n, the length of both vectors.
        unsafe { *x.add(i as usize) += scale * *d.add(i as usize) as f64 };
        i += grid_size_1d();
    }
}

/// Rows of the residual a warp of [`backward_residual`] takes (a block's warps take 32 rows, as
/// the triangular solve's).
const RESIDUAL_ROWS: usize = ROWS_PER_WARP as usize;
/// Pause between polls of a residual warp that has caught up with the solve: its polls hit
/// the words the solve's next block is waiting on.
const RESIDUAL_PAUSE_NS: u32 = 2000;

/// The backward half of getrs with the f32 factors, U d = y (as the triangular kernel, by the
/// first ceil(n / 32) blocks), and beside it the next residual r = b - A (x + scale d) in f64:
/// block q after the solve's takes rows 32q..32q + 32 and adds up A's columns times
/// x + scale d chunk by chunk as the solve publishes d, from the last chunk up, so that reading
/// A overlaps the solve's chain instead of following it. x + scale d is rounded as
/// [`add_correction`] rounds it, so r is the residual of the x that comes next.
/// Launch: grid 2 ceil(n / 32), `abi::solve::TRIANGULAR_THREADS` threads; shared bytes:
/// `abi::solve::triangular_shared_bytes(4)`; `published` as the triangular kernel's, none
/// tagged `epoch` at launch.
#[gpu::kernel]
#[allow(clippy::too_many_arguments)] // the solve's arguments, then the residual's
pub unsafe fn backward_residual(
    n: u32,
    lu: Strided<f32>,
    y: Strided<f32>,
    d: StridedMut<f32>,
    published: *mut u64,
    epoch: u32,
    a: *const f64,
    x: *const f64,
    b: *const f64,
    scale: f64,
    r: *mut f64,
) {
    let chunks = n.div_ceil(CHUNK);
    let block = block_idx_x();
    if block < chunks {
        // The refinement's own solve: its f64 residuals make up for the inverses' error.
        let upper = Triangle { n, upper: true, unit_diagonal: false, by_inverse: true };
        // SAFETY: as the triangular kernel's contract: the launch, shared memory and words.
        unsafe { solve_chunk(upper, block, 0, lu, y, d, published, epoch) };
        return;
    }
    let block = block - chunks;
    if block >= chunks {
        return;
    }
    let lane = lane_id();
    let row0 = block * CHUNK + warp_id() * RESIDUAL_ROWS as u32;
    let mut sums = [0.0f64; RESIDUAL_ROWS];
    for step in 0..chunks {
        let col = (chunks - 1 - step) * CHUNK + lane;
        if col >= n {
            continue; // past the last chunk's end
        }
        // This warp's rows of A in the chunk's columns, loaded before the wait for d.
        let mut values = [0.0f64; RESIDUAL_ROWS];
        for (i, v) in values.iter_mut().enumerate() {
            let row = row0 + i as u32;
            // SAFETY: row, col < n: inside the n x n matrix.
            *v = if row < n { unsafe { *a.add(row as usize * n as usize + col as usize) } } else { 0.0 };
        }
        // SAFETY: col < n, inside x and the published words; the solve's block publishes it.
        let (x_old, d_col) = unsafe {
            let x_old = *x.add(col as usize);
            (x_old, tagged::wait_pausing::<f32>(published.add(col as usize), epoch, RESIDUAL_PAUSE_NS))
        };
        let x_new = x_old + scale * d_col as f64;
        for (sum, v) in sums.iter_mut().zip(values.iter()) {
            *sum = v.mul_add(x_new, *sum);
        }
    }
    // Row i's 32 lane sums go to row i of shared memory; thread i adds them up.
    let lane_sums = shared::dynamic::<f64>();
    for (i, &sum) in sums.iter().enumerate() {
        // SAFETY: below 32 x STRIDE f64, inside the launch's shared bytes.
        unsafe { lane_sums.set((warp_id() * RESIDUAL_ROWS as u32 + i as u32) * STRIDE + lane, sum) };
    }
    sync_threads();
    let (i, row) = (thread_idx_x(), block * CHUNK + thread_idx_x());
    if i < CHUNK && row < n {
        let mut total = 0.0f64;
        for l in 0..32 {
            // SAFETY: as above.
            total += unsafe { lane_sums.get(i * STRIDE + l) };
        }
        // SAFETY: row < n.
        unsafe { *r.add(row as usize) = *b.add(row as usize) - total };
    }
}
