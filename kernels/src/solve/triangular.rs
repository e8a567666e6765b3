//! Triangular solves T x = b for one or many right-hand sides, in parallel: the back
//! substitution of the classic solver and both halves of getrs (L unit lower, then U).
//!
//! The rows are cut into chunks of 32; block `order` of the grid solves the `order`-th chunk
//! in dependency order (the top chunk first for L, the bottom one first for U). It first adds
//! up the products of its rows with every chunk already solved, as each becomes ready (each x
//! also published in tagged words, `device::tagged`, tagged with this solve's `epoch`: a
//! reader waits for the value itself, with no flag or fence between), then solves its 32 x 32
//! diagonal triangle in one warp and publishes its own chunk. A block waits
//! only on blocks launched before it, which the GPU schedules first, so the spin always ends
//! (the decoupled look-back of single-pass scans relies on the same order).

use crate::device::Float;
use crate::device::shared;
use crate::device::thread::{block_idx_x, block_idx_y, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::device::warp::shuffle_idx;

use abi::solve::{
    TRIANGULAR_CHUNK as CHUNK, TRIANGULAR_STRIDE as STRIDE, TRIANGULAR_THREADS as THREADS, tagged_words,
};
use abi::{Strided, StridedMut};

const ROWS_PER_WARP: u32 = CHUNK / (THREADS / 32);

/// Solves with the n x n triangle of `a`: lower when `upper` is 0, upper otherwise; 1s taken
/// on the diagonal when `unit_diagonal` is nonzero (the other triangle is never read).
/// Right-hand side r is column r of `b` (n x nrhs), its solution column r of `x`, also
/// published in `published` (`abi::solve::triangular_exchange_words(n, nrhs, size_of T)`
/// words, none tagged `epoch` at launch).
/// Launch: grid (ceil(n / 32), nrhs), `abi::solve::TRIANGULAR_THREADS` threads; shared bytes:
/// `abi::solve::triangular_shared_bytes`.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn triangular<T: Float>(
    n: u32,
    a: Strided<T>,
    b: Strided<T>,
    x: StridedMut<T>,
    upper: u32,
    unit_diagonal: u32,
    published: *mut u64,
    epoch: u32,
) {
    let chunks = n.div_ceil(CHUNK);
    let order = block_idx_x();
    if order >= chunks {
        return;
    }
    let upper = upper != 0;
    let chunk_at = |step: u32| if upper { chunks - 1 - step } else { step };
    let chunk = chunk_at(order);
    let rhs = block_idx_y();
    let words = tagged_words(size_of::<T>()) as u32;
    let published = published.wrapping_add((rhs * chunks * CHUNK * words) as usize);
    let row0 = chunk * CHUNK;
    let (tid, warp, lane) = (thread_idx_x(), warp_id(), lane_id());
    let row = row0 + lane; // warp 0's row
    // SAFETY: row < n.
    let rhs_value = if warp == 0 && row < n { unsafe { *b.at(row, rhs) } } else { T::ZERO };
    let diagonal = shared::dynamic::<T>();
    let sums = diagonal.after::<T>(CHUNK * STRIDE);

    // Stage the diagonal block while the chunks before this one are being solved, with the
    // reciprocals of its diagonal (no division on the chain of chunks).
    let mut e = tid;
    while e < CHUNK * CHUNK {
        let (r, c) = (row0 + e / CHUNK, row0 + e % CHUNK);
        // SAFETY: read only inside the n x n matrix; the shared index is below 32 * 33.
        unsafe {
            let value = if r < n && c < n { *a.at(r, c) } else { T::ZERO };
            let value = if r == c { T::ONE / value } else { value };
            diagonal.set((e / CHUNK) * STRIDE + e % CHUNK, value);
        }
        e += THREADS;
    }

    // This warp's rows times every solved chunk, the earliest solved first. Lane l takes
    // column l of each chunk; the 8 partial sums stay in registers (constant indices).
    let mut partial = [T::ZERO; ROWS_PER_WARP as usize];
    for step in 0..order {
        let done = chunk_at(step);
        let col = done * CHUNK + lane;
        // This warp's rows of A in the chunk's columns, loaded before the wait for its x (the
        // loads after an acquire could not start earlier).
        let rows: [T; ROWS_PER_WARP as usize] = core::array::from_fn(|i| {
            let row = row0 + warp * ROWS_PER_WARP + i as u32;
            // SAFETY: row, col < n.
            if row < n && col < n { unsafe { *a.at(row, col) } } else { T::ZERO }
        });
        // SAFETY: col < n, its word inside this right-hand side's; chunk `done`'s block
        // publishes it.
        let xv =
            if col < n { unsafe { T::wait(published.add((col * words) as usize), epoch) } } else { T::ZERO };
        for (sum, &a_value) in partial.iter_mut().zip(&rows) {
            *sum = a_value.mul_add(xv, *sum);
        }
    }
    // Row r's 32 lane sums go to row r of `sums`; lane r of warp 0 adds them up.
    for (i, &sum) in partial.iter().enumerate() {
        // SAFETY: row < 32, lane < 32 < STRIDE.
        unsafe { sums.set((warp * ROWS_PER_WARP + i as u32) * STRIDE + lane, sum) };
    }
    sync_threads();
    if warp != 0 {
        return;
    }
    let mut total = T::ZERO;
    for s in 0..CHUNK {
        total = total + unsafe { sums.get(lane * STRIDE + s) };
    }
    let mut value = rhs_value - total;

    // The diagonal triangle, column by column in one warp: lane s finishes x[s] and
    // broadcasts it; the lanes still to be solved subtract their multiple of it.
    for step in 0..CHUNK {
        let s = if upper { CHUNK - 1 - step } else { step };
        if row0 + s >= n {
            continue; // rows past the end of the matrix (the same for every lane)
        }
        if lane == s && unit_diagonal == 0 {
            value = value * unsafe { diagonal.get(s * STRIDE + s) }; // the reciprocal
        }
        let xs = shuffle_idx(value, s);
        if (upper && lane < s) || (!upper && lane > s) {
            value = value - unsafe { diagonal.get(lane * STRIDE + s) } * xs;
        }
    }
    if row < n {
        // SAFETY: row < n, its word inside this right-hand side's.
        unsafe {
            value.publish(published.add((row * words) as usize), epoch);
            *x.at(row, rhs) = value;
        }
    }
}
