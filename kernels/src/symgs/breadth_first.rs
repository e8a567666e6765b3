//! Breadth-first levels from row 0, for the multicolor smoother: where the levels' parities
//! are a proper coloring (a bipartite pattern, as the 5- and 7-point Laplacians'), they color
//! it with 2 colors, which Jones-Plassmann misses in a random row order (6 on a renumbered
//! 7-point Laplacian) and past its row-order rounds (5 on a large 5-point one; PERF.md). A
//! level is two launches, [`bfs_level`] and [`bfs_advance`], the queue's bounds on the device,
//! so the host queues many levels between two looks, and stops at the first look that saw
//! an odd cycle. Levels count from 1 at row 0 (0: not reached yet, so a zeroed buffer starts
//! the search); each row's is its component's first level plus its distance from that
//! component's first row, whatever the timing.

use crate::device::memory::{load_nc, store_volatile};
use crate::device::thread::{WARP_SIZE, grid_size_1d, index_1d, lane_id, warp_index_1d};
use crate::device::{atomic, warp};

/// A row not reached yet.
const NONE: u32 = 0;

/// `total += sum over the entries of |row - column|`: the mean distance from the diagonal
/// tells a renumbered matrix from one in a mesh order. Launch: any number of whole warps (a
/// warp per row, grid-strided; one atomic per warp).
#[gpu::kernel]
pub unsafe fn distance_sum(rows: u32, row_ptr: *const u32, col_idx: *const u32, total: *mut f64) {
    let warps = grid_size_1d() / WARP_SIZE;
    let mut sum = 0.0f64;
    let mut row = warp_index_1d();
    while row < rows {
        // SAFETY (every access): row < rows, j < end <= nnz.
        let (start, end) =
            unsafe { (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1))) };
        let mut j = start + lane_id();
        while j < end {
            let col = unsafe { load_nc(col_idx.add(j as usize)) };
            sum += col.abs_diff(row) as f64;
            j += WARP_SIZE;
        }
        row += warps;
    }
    let sum = warp::reduce_sum(sum);
    if lane_id() == 0 && sum != 0.0 {
        // SAFETY: one accumulator.
        unsafe { atomic::add(total, sum) };
    }
}

/// Level `level` of the search: every row of the frontier `found[bounds[0]..bounds[1]]` gives
/// its neighbours not reached yet that level and appends them at the queue's tail
/// (`bounds[2]`, taken atomically), and sets `bounds[3]` where it has a neighbour reached
/// before at a level of its own parity. Every entry of the pattern is looked at once, from
/// its row's frontier, so the levels' parities 2-color the pattern (and its transpose's)
/// exactly where no frontier ever sets it. Once it is set, the launches that follow return at
/// once. Launch: any number of whole warps (a warp per frontier row, grid-strided), then
/// [`bfs_advance`].
#[gpu::kernel]
pub unsafe fn bfs_level(
    level: u32,
    bounds: *mut u32,
    found: *mut u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    levels: *mut u32,
) {
    let warps = grid_size_1d() / WARP_SIZE;
    // SAFETY (every access): the bounds and the tail lie in `found`, which holds rows < rows;
    // j < end <= nnz; columns < rows. A row is appended once: by the thread whose
    // compare-and-swap gives it its level.
    let (first, end, odd_before) = unsafe { (*bounds, *bounds.add(1), *bounds.add(3)) };
    if odd_before != 0 {
        return; // the search is over: the host stops at its next look
    }
    let mut p = first + warp_index_1d();
    while p < end {
        let row = unsafe { *found.add(p as usize) };
        let (start, stop) =
            unsafe { (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1))) };
        let mut odd = false;
        let mut j = start + lane_id();
        while j < stop {
            let col = unsafe { load_nc(col_idx.add(j as usize)) };
            let cell = unsafe { levels.add(col as usize) };
            let reached = unsafe { *cell };
            if reached == NONE && unsafe { atomic::compare_and_swap(cell, NONE, level) } == NONE {
                let slot = unsafe { atomic::add(bounds.add(2), 1u32) };
                unsafe { *found.add(slot as usize) = col };
            } else if reached != NONE && (reached ^ (level - 1)) & 1 == 0 && col != row {
                // The frontier's own parity, so set before this launch: not a race.
                odd = true;
            }
            j += WARP_SIZE;
        }
        // One store a warp, and no more rows: on a random matrix most rows hold such entries,
        // and their stores all go to one word.
        if warp::any(odd) {
            if lane_id() == 0 {
                unsafe { store_volatile(bounds.add(3), 1) };
            }
            return;
        }
        p += warps;
    }
}

/// The next level's frontier: the rows appended by the last one (`bounds[0..2] =
/// bounds[1..3]`). Launch: one thread.
#[gpu::kernel]
pub unsafe fn bfs_advance(bounds: *mut u32) {
    // SAFETY: three words.
    unsafe {
        *bounds = *bounds.add(1);
        *bounds.add(1) = *bounds.add(2);
    }
}

/// `lowest = min(lowest, row)` over the rows not reached yet: the first row of the next
/// component (then [`bfs_seed`]). Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn lowest_unreached(rows: u32, levels: *const u32, lowest: *mut u32) {
    let row = index_1d();
    // SAFETY: row < rows.
    if row < rows && unsafe { *levels.add(row as usize) } == NONE {
        unsafe { atomic::min_u32(lowest, row) };
    }
}

/// Starts a component at the queue's tail: `row = *lowest` at `level`, the frontier that one
/// row. Launch: one thread.
#[gpu::kernel]
pub unsafe fn bfs_seed(level: u32, lowest: *const u32, bounds: *mut u32, found: *mut u32, levels: *mut u32) {
    // SAFETY: three bound words; a row found by `lowest_unreached`, its slot below the rows.
    unsafe {
        let (row, at) = (*lowest, *bounds.add(2));
        *found.add(at as usize) = row;
        *levels.add(row as usize) = level;
        (*bounds, *bounds.add(1), *bounds.add(2)) = (at, at + 1, at + 1);
    }
}

/// The coloring by level parity, as Jones-Plassmann's colored states (`round << 32 | color`,
/// round 0): row 0's level, 1, gives color 0. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn parity_states(rows: u32, levels: *const u32, state: *mut u64) {
    let i = index_1d();
    if i < rows {
        // SAFETY: i < rows.
        unsafe { *state.add(i as usize) = ((load_nc(levels.add(i as usize)) - 1) & 1) as u64 };
    }
}
