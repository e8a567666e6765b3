//! Triangular solves T x = b for one or many right-hand sides, in parallel: the back
//! substitution of the classic solver and both halves of getrs (L unit lower, then U).
//!
//! The rows are cut into chunks of 32; block `order` of the grid solves the `order`-th chunk
//! in dependency order (the top chunk first for L, the bottom one first for U). Each x is also
//! published in tagged words (`device::tagged`, tagged with this solve's `epoch`): a reader
//! waits for the value itself, with no flag or fence between. A block waits only on blocks
//! launched before it, which the GPU schedules first, so the spin always ends (the decoupled
//! look-back of single-pass scans relies on the same order).
//!
//! The chain of chunks is the critical path, so a block does all it can before the chunk just
//! before it lands: it stages its 32 x 32 diagonal triangle D and A_prev (its rows in the
//! previous chunk's columns) and adds up its rows times every earlier chunk as each becomes
//! ready. When the previous chunk's x lands, one warp takes A_prev x_prev off and solves with
//! D by substitution: backward stable, as LAPACK's trsv. Solves inside an iterative refinement
//! may instead multiply by D's inverse (`by_inverse`, as MAGMA's trsm does): D^-1 and
//! M = D^-1 A_prev formed while the block waits, one product left on the chain, x = y - M
//! x_prev, but an error that grows with D's condition, which an ill-conditioned U's blocks
//! have (PERF.md).

use crate::device::Float;
use crate::device::shared;
use crate::device::tagged;
use crate::device::thread::{block_idx_x, block_idx_y, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::device::warp::shuffle_idx;

use abi::solve::{
    TRIANGULAR_CHUNK as CHUNK, TRIANGULAR_STRIDE as STRIDE, TRIANGULAR_THREADS as THREADS, tagged_words,
};
use abi::{Strided, StridedMut};

/// Rows of a chunk each warp takes.
pub(crate) const ROWS_PER_WARP: u32 = CHUNK / (THREADS / 32);
/// Entries of a chunk's 32 x 32 blocks that each thread stages.
const STAGED: usize = (CHUNK * CHUNK / THREADS) as usize;
const _: () = assert!((CHUNK * CHUNK).is_multiple_of(THREADS));
/// Pause between polls of an f64 block waiting for a chunk, per chunk between that chunk and
/// the one on its critical path, up to `BACKOFF_CHUNKS` chunks.
const BACKOFF_NS: u32 = 500;
const BACKOFF_CHUNKS: u32 = 16;

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
    by_inverse: u32,
    published: *mut u64,
    epoch: u32,
) {
    if block_idx_x() < n.div_ceil(CHUNK) {
        let shape =
            Triangle { n, upper: upper != 0, unit_diagonal: unit_diagonal != 0, by_inverse: by_inverse != 0 };
        // SAFETY: as the kernel's contract, for the block's chunk and right-hand side.
        unsafe { solve_chunk(shape, block_idx_x(), block_idx_y(), a, b, x, published, epoch) };
    }
}

/// Which triangle of an n x n matrix a solve takes, and how each chunk's 32 x 32 diagonal
/// block D is solved with: by substitution once the chunk's right-hand side is complete
/// (backward stable), or `by_inverse`, D^-1 formed while the chunk waits so that one product
/// is left on the chain (shorter, but its error grows with D's condition: for the solves
/// inside an iterative refinement, whose f64 residuals make up for it).
#[derive(Clone, Copy)]
pub struct Triangle {
    pub n: u32,
    pub upper: bool,
    pub unit_diagonal: bool,
    pub by_inverse: bool,
}

/// The work of one block of [`triangular`]: the `order`-th chunk in dependency order
/// (`order` below ceil(n / 32)) of right-hand side `rhs`. Every block of the grid runs it
/// with 128 threads and the kernel's shared memory; a block waits only on blocks that solve
/// earlier chunks.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the kernel's arguments and the block's place
pub unsafe fn solve_chunk<T: Float>(
    Triangle { n, upper, unit_diagonal, by_inverse }: Triangle,
    order: u32,
    rhs: u32,
    a: Strided<T>,
    b: Strided<T>,
    x: StridedMut<T>,
    published: *mut u64,
    epoch: u32,
) {
    let chunks = n.div_ceil(CHUNK);
    let chunk_at = |step: u32| if upper { chunks - 1 - step } else { step };
    let chunk = chunk_at(order);
    let words = tagged_words(size_of::<T>()) as u32;
    let published = published.wrapping_add((rhs * chunks * CHUNK * words) as usize);
    let row0 = chunk * CHUNK;
    let (tid, warp, lane) = (thread_idx_x(), warp_id(), lane_id());
    let row = row0 + lane; // warp 0's row
    // SAFETY: row < n.
    let rhs_value = if warp == 0 && row < n { unsafe { *b.at(row, rhs) } } else { T::ZERO };
    let triangle = shared::dynamic::<T>(); // D, 32 x STRIDE
    let inverse = triangle.after::<T>(CHUNK * STRIDE); // D^-1
    let product = inverse.after::<T>(CHUNK * STRIDE); // A_prev (by inverse: then M = D^-1 A_prev)
    let sums = product.after::<T>(CHUNK * STRIDE); // the warps' partial sums per row
    let previous = (order > 0).then(|| chunk_at(order - 1));

    // D (the identity past the matrix's end), and A_prev: every load of the thread's entries
    // in flight before any store (one trip to memory, not one per entry).
    let entries: [u32; STAGED] = core::array::from_fn(|k| tid + k as u32 * THREADS);
    // SAFETY: read only inside the n x n matrix.
    let diagonal = entries.map(|e| {
        let (i, j) = (e / CHUNK, e % CHUNK);
        let (r, c) = (row0 + i, row0 + j);
        match (r < n && c < n, i == j) {
            (_, true) if unit_diagonal || r >= n => T::ONE,
            (true, _) => unsafe { *a.at(r, c) },
            (false, _) => T::ZERO,
        }
    });
    let left = entries.map(|e| {
        let (r, c) = (row0 + e / CHUNK, previous.unwrap_or(0) * CHUNK + e % CHUNK);
        // SAFETY: as above.
        if previous.is_some() && r < n && c < n { unsafe { *a.at(r, c) } } else { T::ZERO }
    });
    for k in 0..STAGED {
        let at = entries[k] / CHUNK * STRIDE + entries[k] % CHUNK;
        // SAFETY: shared indices below 32 x STRIDE.
        unsafe {
            triangle.set(at, diagonal[k]);
            product.set(at, left[k]);
        }
    }
    sync_threads();
    // D^-1 by substitution, column j by lane j of warp 0 (each lane reads only its own
    // column back): top-down for a lower triangle, bottom-up for an upper one.
    if by_inverse && warp == 0 {
        let j = lane;
        for step in 0..CHUNK {
            let s = if upper { CHUNK - 1 - step } else { step };
            let mut value = if s == j { T::ONE } else { T::ZERO };
            for done in 0..step {
                let r = if upper { CHUNK - 1 - done } else { done };
                // SAFETY: indices below 32 x STRIDE.
                value =
                    unsafe { (-triangle.get(s * STRIDE + r)).mul_add(inverse.get(r * STRIDE + j), value) };
            }
            // SAFETY: as above.
            unsafe { inverse.set(s * STRIDE + j, value / triangle.get(s * STRIDE + s)) };
        }
    }
    sync_threads();
    // M = D^-1 A_prev: lane j of warp w computes rows 8w..8w + 8 of column j.
    if by_inverse && previous.is_some() {
        let m: [T; ROWS_PER_WARP as usize] = core::array::from_fn(|i| {
            let row = warp * ROWS_PER_WARP + i as u32;
            let mut sum = T::ZERO;
            for s in 0..CHUNK {
                // SAFETY: indices below 32 x STRIDE.
                sum = unsafe { inverse.get(row * STRIDE + s).mul_add(product.get(s * STRIDE + lane), sum) };
            }
            sum
        });
        sync_threads(); // every warp has read A_prev
        for (i, &value) in m.iter().enumerate() {
            // SAFETY: as above.
            unsafe { product.set((warp * ROWS_PER_WARP + i as u32) * STRIDE + lane, value) };
        }
    }

    // This warp's rows times every chunk solved before the previous one, the earliest first.
    // Lane l takes column l of each chunk; the 8 partial sums stay in registers (constant
    // indices).
    let mut partial = [T::ZERO; ROWS_PER_WARP as usize];
    for step in 0..order.saturating_sub(1) {
        let done = chunk_at(step);
        let col = done * CHUNK + lane;
        // This warp's rows of A in the chunk's columns, loaded before the wait for its x.
        let rows: [T; ROWS_PER_WARP as usize] = core::array::from_fn(|i| {
            let row = row0 + warp * ROWS_PER_WARP + i as u32;
            // SAFETY: row, col < n.
            if row < n && col < n { unsafe { *a.at(row, col) } } else { T::ZERO }
        });
        // The chunk before the previous one is on this block's critical path: poll it at full
        // speed. Every later block waits for the chunk the chain has reached. In f64 (two words
        // a value) the earlier chunks' waits pause between polls, the longer the further this
        // block's turn, so that their polls do not crowd the hand-overs on the chain; in f32 a
        // block that pauses falls behind, and the chain then waits for it (PERF.md).
        let pause_ns = if words == 1 { 0 } else { (order - 2 - step).min(BACKOFF_CHUNKS) * BACKOFF_NS };
        // SAFETY: col < n, its word inside this right-hand side's; chunk `done`'s block
        // publishes it.
        let xv = if col < n {
            unsafe { tagged::wait_pausing(published.add((col * words) as usize), epoch, pause_ns) }
        } else {
            T::ZERO
        };
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
    // Lane r holds row r (rows past the end hold 0); lane s waits for the previous chunk's x[s].
    let rest = rhs_value - total;
    // `sum` less A_prev x_prev (or M x_prev by inverse), once the previous chunk's x lands.
    let take_off_previous = |mut sum: T| {
        if let Some(p) = previous {
            let col = p * CHUNK + lane;
            // SAFETY: as in the loop above.
            let x_prev = if col < n {
                unsafe { T::wait(published.add((col * words) as usize), epoch) }
            } else {
                T::ZERO
            };
            for s in 0..CHUNK {
                // SAFETY: indices below 32 x STRIDE.
                sum = unsafe { (-product.get(lane * STRIDE + s)).mul_add(shuffle_idx(x_prev, s), sum) };
            }
        }
        sum
    };
    let value = if by_inverse {
        // x = D^-1 (b - the sum) - M x_prev: y before the wait, one product after it.
        let mut y = T::ZERO;
        for s in 0..CHUNK {
            // SAFETY: indices below 32 x STRIDE.
            y = unsafe { inverse.get(lane * STRIDE + s) }.mul_add(shuffle_idx(rest, s), y);
        }
        take_off_previous(y)
    } else {
        // D x = b - the sum - A_prev x_prev, by substitution: x[s] from lane s, in order, then
        // taken off the rows after it.
        let mut rest = take_off_previous(rest);
        // SAFETY: as above.
        let reciprocal = T::ONE / unsafe { triangle.get(lane * STRIDE + lane) };
        let mut value = T::ZERO;
        for step in 0..CHUNK {
            let s = if upper { CHUNK - 1 - step } else { step };
            let x_s = shuffle_idx(rest * reciprocal, s);
            if lane == s {
                value = x_s;
            }
            if (lane > s) != upper && lane != s {
                // SAFETY: as above.
                rest = unsafe { (-triangle.get(lane * STRIDE + s)).mul_add(x_s, rest) };
            }
        }
        value
    };
    if row < n {
        // SAFETY: row < n, its word inside this right-hand side's.
        unsafe {
            value.publish(published.add((row * words) as usize), epoch);
            *x.at(row, rhs) = value;
        }
    }
}
