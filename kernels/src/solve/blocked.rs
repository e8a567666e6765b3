//! Blocked right-looking LU with partial pivoting, in place on a row-major n x n matrix whose
//! rows are `ld` apart (P A = L U, L unit lower, both in A as LAPACK stores them). The host
//! starts each row on a 128-byte line, for its tensor-core updates. The kernels take a pointer
//! and `ld`, not an `abi::StridedMut`: LLVM addresses a pointer parameter as global memory, but
//! one read from a struct as generic memory, which the factorisation's chain pays for (PERF.md).
//! Step k0, panel width w <= NB, is three launches:
//!
//! 1. `panel`: factor the n - k0 by w panel A[k0.., k0..k0 + w] column by column, each
//!    row swap also applied to the rest of the two rows inside a range of columns (the
//!    panel's block column); records the pivots and the permutation. `swap_rows` (LAPACK's
//!    `laswp`) applies a block column's swaps to the columns outside it;
//! 2. `trsm`: U12 = L11^-1 A12, the w rows right of the panel (a range of columns);
//! 3. the trailing update A22 -= L21 U12, a GEMM (`gemm::update`).
//!
//! The host runs these on two levels (`rgla::solve::blocked`): steps of w inside a block
//! column of several panels, then one update of the rest with that block column's k, the
//! next block column's panels running beside it (look-ahead).
//!
//! The panel is the latency-bound part: for every column, a search for the largest entry over
//! all the rows below it. It runs as one persistent grid (one block per SM at most) whose
//! blocks keep their rows of the panel in shared memory for the whole panel and exchange one
//! candidate row each per column in tagged words (`device::tagged`): a block reads the others'
//! candidates as soon as they land, with no barrier between (or, the classic alternative kept
//! for comparison, after a grid barrier per column).

use abi::StridedMut;
use abi::solve::{BLOCKED_THREADS as THREADS, SWAP_COLS, TRSM_COLS, panel_slot_words, tagged_words};

use crate::device::shared::{self, SharedArray};
use crate::device::tagged;
use crate::device::thread::{
    WARP_SIZE, block_idx_x, grid_dim_x, index_1d, lane_id, sync_threads, thread_idx_x, warp_id,
};
use crate::device::{Float, block, grid, warp};

// The panel width NB (64 or 128: the k of the trailing GEMM) is a const parameter. Rows of NB
// values are stored NB + 1 apart in shared memory (odd: threads reading down a column hit
// distinct banks).

/// Factors the panel of step `k0` (width `width` <= NB). Block b owns rows
/// k0 + b R .. k0 + (b + 1) R (R = `rows_per_block`), staged in shared memory.
///
/// Row swaps reach the columns `swap_begin..swap_end` (a range holding the panel's); the host
/// applies them to the other columns with [`swap_rows`].
///
/// For each column c, every block publishes its best candidate (row, |pivot| and the whole
/// panel row) in its slot of `exchange`, tagged `epoch + c`, and the owner of the diagonal row
/// publishes that row (the swap partner); each block waits for every block's candidate (one
/// thread per block), picks the pivot, reads its row, swaps and eliminates. With `use_barrier`
/// nonzero the blocks also meet at a grid barrier on `barrier` (a word zeroed before the
/// launch) before reading. Two slots per block, for even and odd columns: a block can run at
/// most one column ahead of the slowest, so it never overwrites what another block is still
/// reading. Row swaps outside the panel are applied one column late, by the threads that do
/// not wait, while they would otherwise idle. The multipliers are scaled at the end (each
/// update scales on the fly).
///
/// `exchange` holds `abi::solve::panel_exchange_words(grid, NB, size_of T)` words, none tagged
/// epoch..epoch + width at launch. `pivots[k0 + c]` receives the row swapped with row k0 + c
/// (LAPACK's ipiv, 0-based); `perm` (row i of P A is row perm[i] of A) gets the same swaps.
///
/// Launch: at most one block per SM and at most 256 blocks (all resident: blocks wait on each
/// other), 256 threads; shared bytes: `abi::solve::panel_shared_bytes(R, NB, size_of T)`.
#[gpu::kernel(NB = 64 | 128, T = f32 | f64)]
pub unsafe fn panel<T: Float, const NB: u32>(
    n: u32,
    a: *mut T,
    ld: u32,
    k0: u32,
    width: u32,
    rows_per_block: u32,
    pivots: *mut u32,
    perm: *mut u32,
    exchange: *mut u64,
    epoch: u32,
    barrier: *mut u32,
    use_barrier: u32,
    swap_begin: u32,
    swap_end: u32,
) {
    let a = StridedMut { ptr: a, ld };
    let stride = NB + 1;
    let words = tagged_words(size_of::<T>()) as u32;
    let slot_words = panel_slot_words(NB as usize, size_of::<T>()) as u32;
    let (tid, block, blocks) = (thread_idx_x(), block_idx_x(), grid_dim_x());
    // A slot (16-byte aligned): the row and |pivot| (with its first word in one 16-byte
    // store), then the row's values. After the 2 x grid slots: the diagonal rows, NB values each.
    let slot_of = |parity: u32, b: u32| exchange.wrapping_add(((parity * blocks + b) * slot_words) as usize);
    let row_values = |slot: *mut u64| slot.wrapping_add((1 + words) as usize);
    let diagonal_of =
        |parity: u32| exchange.wrapping_add((2 * blocks * slot_words + parity * NB * words) as usize);
    let first = k0 + block * rows_per_block;
    let owned = n.saturating_sub(first).min(rows_per_block);
    let owns = |row: u32| row >= first && row < first + owned;
    let tile = shared::dynamic::<T>();
    let pivot_row = tile.after::<T>(rows_per_block * stride);
    let inverse_pivots = pivot_row.after::<T>(NB);
    let scratch = inverse_pivots.after::<T>(NB);
    let scratch_rows = scratch.after::<u32>(32);
    let block_candidate_row = scratch_rows.after::<u32>(32);
    let lowest = T::ZERO - T::ONE; // below every |value|
    // Thread t works on column t % 64 of rows t / 64, t / 64 + 4, ...
    let (col, row_step) = (tid % NB, THREADS / NB);

    // SAFETY (shared accesses): rows below `owned` <= R, columns below `width` <= NB.
    unsafe { load_rows::<T, NB>(tile, a, first, owned, k0, width, tid) };
    sync_threads();

    // Warp 0 holds the next pivot column: this lane's candidate for column 0 (afterwards
    // found as warp 0 updates each next column).
    let (mut best, mut best_row) = (lowest, u32::MAX);
    if warp_id() == 0 {
        let mut r = lane_id();
        while r < owned {
            let value = unsafe { tile.get(r * stride) }.abs();
            if value > best {
                (best, best_row) = (value, first + r);
            }
            r += WARP_SIZE;
        }
    }
    // The threads that do not wait apply the row swaps outside the panel.
    let (swapper, swappers) =
        (block * (THREADS - blocks) + tid.wrapping_sub(blocks), blocks * (THREADS - blocks));
    let mut pending_swap = None;

    for c in 0..width {
        let d = k0 + c; // the diagonal row
        let (parity, tag) = (c % 2, epoch + c);
        // 1. This block's candidate, the first largest |a[row][d]| over its rows >= d: found and
        // published by warp 0.
        if warp_id() == 0 {
            let (value, row) = warp::reduce_max_index(best, best_row);
            if lane_id() == 0 {
                // It goes out at once: it depends on column c alone, which warp 0 updated.
                // SAFETY: the slot lies inside `exchange`; one row in shared memory, read after
                // the barrier below.
                unsafe {
                    value.publish_after(row, slot_of(parity, block), tag);
                    block_candidate_row.set(0, row);
                }
            }
        }
        sync_threads();
        // SAFETY: written before the barrier.
        let block_row = unsafe { block_candidate_row.get(0) };

        // 2. Its whole row (the other warps' columns are final after the barrier), and the
        // diagonal row (the swap partner).
        let slot = slot_of(parity, block);
        // SAFETY: slots and diagonal rows lie inside `exchange`; values < width <= NB; rows
        // read from shared are owned ones.
        unsafe {
            if block_row != u32::MAX && tid < width {
                let value = tile.get((block_row - first) * stride + tid);
                value.publish(row_values(slot).add((tid * words) as usize), tag);
            }
            if owns(d) && tid < width {
                let value = tile.get((d - first) * stride + tid);
                value.publish(diagonal_of(parity).add((tid * words) as usize), tag);
            }
            if use_barrier != 0 {
                grid::barrier(barrier, c + 1);
            }
        }

        // 3. The pivot: the best candidate of the grid (the lowest row among equals). Thread g
        // waits for block g's; the others apply the previous column's row swap meanwhile.
        let (mut candidate, mut candidate_row) = (lowest, u32::MAX);
        if tid < blocks {
            // SAFETY: block tid's slot for this column, which it publishes.
            (candidate_row, candidate) = unsafe { tagged::wait_after::<T>(slot_of(parity, tid), tag) };
        } else if let Some((row, other)) = pending_swap {
            // SAFETY: rows < n; the columns outside this panel are this grid's alone.
            unsafe {
                swap_outside_panel(a, (k0, width), (swap_begin, swap_end), (row, other), swapper, swappers)
            };
        }
        let (_, p) = block::reduce_max_index(candidate, candidate_row, lowest, scratch, scratch_rows);
        // No candidate at all only if the column is NaN: keep the diagonal row then.
        let p = if p == u32::MAX { d } else { p };
        pending_swap = if p != d { Some((d, p)) } else { None };
        let diagonal_values = diagonal_of(parity);
        let pivot_values =
            if p == d { diagonal_values } else { row_values(slot_of(parity, (p - k0) / rows_per_block)) };

        // 4. Swap rows d and p in the panel.
        // SAFETY: tid < width <= NB; d, p < n; the winner published its row, the diagonal
        // row's owner that row.
        unsafe {
            if tid < width {
                let at = (tid * words) as usize;
                if p != d && owns(p) {
                    let (value, partner) =
                        tagged::wait_both::<T, T>(pivot_values.add(at), diagonal_values.add(at), tag);
                    pivot_row.set(tid, value);
                    tile.set((p - first) * stride + tid, partner);
                } else {
                    pivot_row.set(tid, T::wait(pivot_values.add(at), tag));
                }
                if owns(d) {
                    tile.set((d - first) * stride + tid, pivot_row.get(tid));
                }
            }
            if block == 0 && tid == 0 {
                *pivots.add(d as usize) = p;
                core::ptr::swap(perm.add(d as usize), perm.add(p as usize));
            }
        }
        sync_threads();

        // 5. Eliminate below the pivot: a[row][j] -= a[row][c] (u[j] / pivot) for the rows
        // below d and the columns j right of c (the multipliers a[row][c] / pivot are scaled
        // at the end). Warp 0 takes column c + 1, the next pivot column, and finds its
        // candidates on the way, so step 1 reduces within one warp; the other warps take the
        // columns after it. A zero pivot leaves the column as it is; the host's check reports
        // it.
        let pivot = unsafe { pivot_row.get(c) };
        let inverse = if pivot != T::ZERO { T::ONE / pivot } else { T::ZERO };
        if tid == 0 {
            unsafe { inverse_pivots.set(c, inverse) };
        }
        (best, best_row) = (lowest, u32::MAX);
        if c + 1 < width && warp_id() == 0 {
            // The next pivot column, by warp 0, which finds its candidates on the way.
            let u = unsafe { pivot_row.get(c + 1) } * inverse;
            let mut r = (d + 1).saturating_sub(first) + lane_id();
            while r < owned {
                // SAFETY: r < owned, c + 1 < width.
                unsafe {
                    let x = (-tile.get(r * stride + c)).mul_add(u, tile.get(r * stride + c + 1));
                    tile.set(r * stride + c + 1, x);
                    if x.abs() > best {
                        (best, best_row) = (x.abs(), first + r);
                    }
                }
                r += WARP_SIZE;
            }
        } else if c + 2 < width {
            // The columns after it, by the other warps.
            // SAFETY: the pivot row is staged; rows below `owned`, columns below width <= NB.
            unsafe {
                eliminate::<T, NB>(
                    tile,
                    pivot_row,
                    inverse,
                    c,
                    c + 2..width,
                    (d + 1).saturating_sub(first),
                    owned,
                    tid - WARP_SIZE,
                )
            };
        }
    }
    // The last column's row swap, by the same threads (a column's swaps stay in order).
    if let (Some((row, other)), true) = (pending_swap, tid >= blocks) {
        // SAFETY: as above.
        unsafe {
            swap_outside_panel(a, (k0, width), (swap_begin, swap_end), (row, other), swapper, swappers)
        };
    }
    sync_threads();

    // Scale the multipliers: column c of every row below the diagonal row k0 + c.
    if col < width {
        let inverse = unsafe { inverse_pivots.get(col) };
        let mut r = tid / NB;
        while r < owned {
            if first + r > k0 + col {
                // SAFETY: r < owned, col < width.
                unsafe { tile.set(r * stride + col, tile.get(r * stride + col) * inverse) };
            }
            r += row_step;
        }
    }
    sync_threads();

    // SAFETY: as for the load.
    unsafe { store_rows::<T, NB>(tile, a, first, owned, k0, width, tid) };
}

/// a[r][j] -= a[r][c] (u[j] / pivot) for the tile's rows `from..owned` and the columns
/// `columns` (right of c), u the staged pivot row and `inverse` 1 / pivot, by the block's
/// threads but warp 0 (`worker` their index). They tile that rectangle, a thread per column of
/// a row, so none idles as the panel narrows; four rows in flight at a time.
///
/// # Safety
/// `owned` rows of NB + 1 values in `tile`, the columns below NB, c < columns.start.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the tile, the pivot, and the rectangle
unsafe fn eliminate<T: Float, const NB: u32>(
    tile: SharedArray<T>,
    pivot_row: SharedArray<T>,
    inverse: T,
    c: u32,
    columns: core::ops::Range<u32>,
    from: u32,
    owned: u32,
    worker: u32,
) {
    const WORKERS: u32 = THREADS - WARP_SIZE;
    let (stride, width) = (NB + 1, columns.end - columns.start);
    if worker >= WORKERS / width * width {
        return;
    }
    let (j, rows_at_once) = (columns.start + worker % width, WORKERS / width);
    let u = unsafe { pivot_row.get(j) } * inverse;
    // SAFETY (shared accesses): rows below `owned`, c < j < NB.
    let updated = |r: u32| unsafe { (-tile.get(r * stride + c)).mul_add(u, tile.get(r * stride + j)) };
    let mut r = from + worker / width;
    while r + 3 * rows_at_once < owned {
        let rows: [u32; 4] = core::array::from_fn(|i| r + i as u32 * rows_at_once);
        for (&r, &x) in rows.iter().zip(&rows.map(updated)) {
            // SAFETY: as for `updated`.
            unsafe { tile.set(r * stride + j, x) };
        }
        r += 4 * rows_at_once;
    }
    while r < owned {
        // SAFETY: as for `updated`.
        unsafe { tile.set(r * stride + j, updated(r)) };
        r += rows_at_once;
    }
}

/// Swaps rows `rows.0` and `rows.1` of `a` in the columns `swapped` (a range holding the
/// panel's columns `panel.0..panel.0 + panel.1`) but the panel's, worker `worker` of `workers`
/// taking every workers-th column: successive swaps of one column stay with one thread, so
/// they happen in order.
#[inline(always)]
unsafe fn swap_outside_panel<T: Float>(
    a: StridedMut<T>,
    panel: (u32, u32),
    swapped: (u32, u32),
    rows: (u32, u32),
    worker: u32,
    workers: u32,
) {
    let ((k0, width), (begin, end), (row, other)) = (panel, swapped, rows);
    let mut j = worker;
    while j < end - begin - width {
        let col = if begin + j < k0 { begin + j } else { begin + j + width };
        // SAFETY: the caller's rows are < n; col < end <= n.
        unsafe { core::ptr::swap(a.at(row, col), a.at(other, col)) };
        j += workers;
    }
}

/// Copies rows first..first + owned, columns k0..k0 + width of `a` into the shared tile (rows
/// NB + 1 apart): thread t takes column t % NB of every (THREADS / NB)-th row.
#[inline(always)]
unsafe fn load_rows<T: Float, const NB: u32>(
    tile: SharedArray<T>,
    a: StridedMut<T>,
    first: u32,
    owned: u32,
    k0: u32,
    width: u32,
    tid: u32,
) {
    let col = tid % NB;
    if col < width {
        // SAFETY: the caller's bounds.
        unsafe {
            stage_column::<T, 8>(tile, (NB + 1, col), a, (first, owned, k0 + col), (tid / NB, THREADS / NB))
        };
    }
}

/// Copies column `col` of rows first + r of `a`, for r = start, start + step, ... below `rows`,
/// to `tile[r * stride + at]`, `BATCH` rows' loads in flight before their stores (rows past the
/// last read the last, unstored): a few trips to memory, not one per row.
///
/// # Safety
/// Rows first..first + rows and `col` lie inside `a`; `tile` holds `rows` rows of `stride`.
#[inline(always)]
unsafe fn stage_column<T: Float, const BATCH: usize>(
    tile: SharedArray<T>,
    (stride, at): (u32, u32),
    a: StridedMut<T>,
    (first, rows, col): (u32, u32, u32),
    (start, step): (u32, u32),
) {
    let mut r = start;
    while r < rows {
        let batch: [u32; BATCH] = core::array::from_fn(|i| r + i as u32 * step);
        // SAFETY: every row read is below `rows` (the caller's bounds).
        let values = batch.map(|row| unsafe { *a.at(first + row.min(rows - 1), col) });
        for (&row, &value) in batch.iter().zip(&values) {
            if row < rows {
                // SAFETY: row < rows, at < stride.
                unsafe { tile.set(row * stride + at, value) };
            }
        }
        r += BATCH as u32 * step;
    }
}

/// Writes the shared tile back (the inverse of [`load_rows`]).
#[inline(always)]
unsafe fn store_rows<T: Float, const NB: u32>(
    tile: SharedArray<T>,
    a: StridedMut<T>,
    first: u32,
    owned: u32,
    k0: u32,
    width: u32,
    tid: u32,
) {
    let (col, mut r) = (tid % NB, tid / NB);
    while col < width && r < owned {
        // SAFETY: the caller's bounds.
        unsafe { *a.at(first + r, k0 + col) = tile.get(r * (NB + 1) + col) };
        r += THREADS / NB;
    }
}

/// LAPACK's `laswp` for the steps k0..k0 + width (a block column, or a part of one where its
/// shared bytes do not fit): row k0 + i swapped with row pivots[k0 + i], in order of i, in the
/// columns 0..left_end and right_begin..right_end (outside the steps' block column, whose own
/// columns the panels swapped). Block b takes SWAP_COLS of those columns: it stages rows
/// k0..k0 + width and the rows below them that the swaps reach, swaps in shared memory (a
/// thread per column), and writes both back; every global access is independent of the
/// others, so the swaps' chain runs at shared-memory latency.
/// Launch: ceil(columns / SWAP_COLS) blocks of BLOCKED_THREADS; shared bytes:
/// `swap_rows_shared_bytes(width)`.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn swap_rows<T: Float>(
    a: *mut T,
    ld: u32,
    pivots: *const u32,
    k0: u32,
    width: u32,
    left_end: u32,
    right_begin: u32,
    right_end: u32,
) {
    let a = StridedMut { ptr: a, ld };
    const COLS: u32 = SWAP_COLS;
    const NONE: u32 = u32::MAX;
    let tid = thread_idx_x();
    let inside = shared::dynamic::<T>(); // rows k0..k0 + width, width x COLS
    let outside = inside.after::<T>(width * COLS); // a row below, at its first swap's slot
    let partners = outside.after::<u32>(width * COLS); // pivots[k0 + i]
    let slots = partners.after::<u32>(width); // a partner below: the first step swapping it
    let mut i = tid;
    while i < width {
        // SAFETY: i < width; pivots holds the steps k0..k0 + width.
        unsafe { partners.set(i, *pivots.add((k0 + i) as usize)) };
        i += THREADS;
    }
    sync_threads();
    let mut i = tid;
    while i < width {
        // SAFETY: indices below width.
        unsafe {
            let p = partners.get(i);
            let mut first = NONE;
            if p >= k0 + width {
                let mut j = 0;
                while first == NONE {
                    if partners.get(j) == p {
                        first = j;
                    }
                    j += 1;
                }
            }
            slots.set(i, first);
        }
        i += THREADS;
    }
    sync_threads();
    let c = tid % COLS;
    let j = block_idx_x() * COLS + c;
    let valid = j < left_end + (right_end - right_begin); // right_begin <= right_end <= n
    let col = if j < left_end { j } else { right_begin + (j - left_end) };
    let mut r = tid / COLS;
    while r < width && valid {
        // Eight rows' loads in flight before their stores (rows past the last read the last,
        // and a row with no partner below reads itself again, unstored).
        let rows: [u32; 8] = core::array::from_fn(|i| (r + i as u32 * (THREADS / COLS)).min(width - 1));
        // SAFETY (shared accesses): indices below width x COLS.
        let below =
            rows.map(|row| unsafe { if slots.get(row) == row { partners.get(row) } else { k0 + row } });
        // SAFETY: rows k0 + row and the partners are < n, col < n.
        let (here, there) =
            (rows.map(|row| unsafe { *a.at(k0 + row, col) }), below.map(|p| unsafe { *a.at(p, col) }));
        for i in 0..8 {
            let row = r + i as u32 * (THREADS / COLS);
            if row < width {
                // SAFETY: as above.
                unsafe {
                    inside.set(row * COLS + c, here[i]);
                    if slots.get(row) == row {
                        outside.set(row * COLS + c, there[i]);
                    }
                }
            }
        }
        r += 8 * (THREADS / COLS);
    }
    sync_threads();
    if tid < COLS && valid {
        for i in 0..width {
            // SAFETY: indices below width x COLS (a partner inside is below k0 + width).
            unsafe {
                let p = partners.get(i);
                if p == k0 + i {
                    continue;
                }
                let here = i * COLS + c;
                let held = inside.get(here);
                if p < k0 + width {
                    let there = (p - k0) * COLS + c;
                    inside.set(here, inside.get(there));
                    inside.set(there, held);
                } else {
                    let there = slots.get(i) * COLS + c;
                    inside.set(here, outside.get(there));
                    outside.set(there, held);
                }
            }
        }
    }
    sync_threads();
    let mut r = tid / COLS;
    while r < width {
        if valid {
            // SAFETY: as for the loads.
            unsafe {
                *a.at(k0 + r, col) = inside.get(r * COLS + c);
                if slots.get(r) == r {
                    *a.at(partners.get(r), col) = outside.get(r * COLS + c);
                }
            }
        }
        r += THREADS / COLS;
    }
}

/// U12 = L11^-1 A12 in place: L11 the unit lower w x w triangle at (k0, k0), A12 the w rows
/// from k0, columns `begin..end` (w = `width` <= NB; begin >= k0 + w, end <= n). Block b
/// solves TRSM_COLS columns; thread t owns column t % TRSM_COLS and updates every
/// (256 / TRSM_COLS)-th row. Launch: ceil((end - begin) / TRSM_COLS) blocks of 256 threads;
/// shared bytes: `abi::solve::trsm_shared_bytes`.
#[gpu::kernel(NB = 64 | 128, T = f32 | f64)]
pub unsafe fn trsm<T: Float, const NB: u32>(
    n: u32,
    a: *mut T,
    ld: u32,
    k0: u32,
    width: u32,
    begin: u32,
    end: u32,
) {
    let a = StridedMut { ptr: a, ld };
    const COLS: u32 = TRSM_COLS;
    const GROUPS: u32 = THREADS / COLS;
    let stride = NB + 1;
    let tid = thread_idx_x();
    let (tx, ty) = (tid % COLS, tid / COLS);
    let col = begin + block_idx_x() * COLS + tx;
    let end = end.min(n);
    let l = shared::dynamic::<T>(); // NB x stride
    let x = l.after::<T>(NB * stride); // NB x COLS
    // SAFETY: rows and columns k0..k0 + width < n; L11 fits NB rows of `stride`.
    unsafe { load_rows::<T, NB>(l, a, k0, width, k0, width, tid) };
    if col < end {
        // SAFETY: rows k0..k0 + width and col < n; the shared indices below NB x COLS.
        unsafe { stage_column::<T, 4>(x, (COLS, tx), a, (k0, width, col), (ty, GROUPS)) };
    } else {
        let mut r = ty;
        while r < width {
            // SAFETY: as above.
            unsafe { x.set(r * COLS + tx, T::ZERO) };
            r += GROUPS;
        }
    }
    sync_threads();
    // Column-oriented forward substitution: x[s] is final once the rows above are done. Four
    // rows in flight at a time: their loads go out together (a store between two loads of x
    // would make the second wait for the first).
    for s in 0..width {
        let xs = unsafe { x.get(s * COLS + tx) };
        // SAFETY (shared accesses): r < width, s < width.
        let updated = |r: u32| unsafe { (-l.get(r * stride + s)).mul_add(xs, x.get(r * COLS + tx)) };
        let mut r = s + 1 + ty;
        while r + 3 * GROUPS < width {
            let rows: [u32; 4] = core::array::from_fn(|i| r + i as u32 * GROUPS);
            for (&r, &value) in rows.iter().zip(&rows.map(updated)) {
                // SAFETY: as for `updated`.
                unsafe { x.set(r * COLS + tx, value) };
            }
            r += 4 * GROUPS;
        }
        while r < width {
            // SAFETY: as for `updated`.
            unsafe { x.set(r * COLS + tx, updated(r)) };
            r += GROUPS;
        }
        sync_threads();
    }
    let mut r = ty;
    while r < width {
        if col < end {
            // SAFETY: as for the load.
            unsafe { *a.at(k0 + r, col) = x.get(r * COLS + tx) };
        }
        r += GROUPS;
    }
}

/// perm[i] = i. Launch: one thread per row.
#[gpu::kernel]
pub unsafe fn identity_permutation(n: u32, perm: *mut u32) {
    let i = index_1d();
    if i < n {
        // SAFETY: i < n.
        unsafe { *perm.add(i as usize) = i };
    }
}

/// y = P b: row i of y is row perm[i] of b (both n x nrhs, row-major). Launch: one thread per
/// element.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn permute_rows<T: Float>(n: u32, nrhs: u32, perm: *const u32, b: *const T, y: *mut T) {
    let e = index_1d();
    if e >= n * nrhs {
        return;
    }
    let (row, r) = (e / nrhs, e % nrhs);
    // SAFETY: e < n * nrhs; perm holds a permutation of 0..n.
    unsafe { *y.add(e as usize) = *b.add((*perm.add(row as usize) * nrhs + r) as usize) };
}
