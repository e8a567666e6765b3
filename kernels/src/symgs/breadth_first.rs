//! Breadth-first levels from row 0, for the multicolor smoother: where the levels' parities
//! are a proper coloring (a bipartite pattern, as the 5- and 7-point Laplacians'), they color
//! it with 2 colors, which Jones-Plassmann misses in a random row order (6 on a renumbered
//! 7-point Laplacian) and past its row-order rounds (5 on a large 5-point one; PERF.md). A
//! level is one launch, [`bfs_level`], which moves the queue on itself ([`RoundQueue`]), so
//! the host queues many levels between two looks, and stops at the first look that saw an
//! odd cycle. Levels count from 1 at row 0 (0: not reached yet, so a zeroed buffer starts
//! the search); each row's is its component's first level plus its distance from that
//! component's first row, whatever the timing.

use abi::symgs::{ODD_CYCLE, ROUND_COUNT, ROUND_START};

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

/// A queue of rows on the device taken in rounds (the search's levels, Jones-Plassmann's
/// rounds), each reading the rows the round before appended and appending the rows for the
/// round after, with no launch between rounds to move the queue on. `words` (six, zeroed
/// where the queue starts) hold, by the round modulo 3, where a round's appended rows start
/// in `found` ([`ROUND_START`]) and how many there are ([`ROUND_COUNT`]). Round r reads round
/// r - 1's words, appends to its own, and clears round r + 1's count, which round r - 1 read
/// last.
pub(crate) struct RoundQueue {
    pub(crate) words: *mut u32,
    pub(crate) found: *mut u32,
}

impl RoundQueue {
    /// The words' slots of rounds `round` - 1, `round` and `round` + 1.
    #[inline(always)]
    fn slots(round: u32) -> (usize, usize, usize) {
        (((round + 2) % 3) as usize, (round % 3) as usize, ((round + 1) % 3) as usize)
    }

    /// Round `round`'s rows, `found[first..end]` (what round - 1 appended); its appends go
    /// from `end` on. Every thread of the round's launch calls this, before any appends.
    ///
    /// # Safety
    /// The six words and `found` as [`RoundQueue`] says.
    #[inline(always)]
    pub(crate) unsafe fn frontier(&self, round: u32) -> (u32, u32) {
        let (before, now, next) = Self::slots(round);
        // SAFETY: the caller's words; this launch reads only round - 1's and writes no other
        // round's it reads.
        unsafe {
            let first = *self.words.add(ROUND_START + before);
            let end = first + *self.words.add(ROUND_COUNT + before);
            if index_1d() == 0 {
                *self.words.add(ROUND_START + now) = end;
                *self.words.add(ROUND_COUNT + next) = 0;
            }
            (first, end)
        }
    }

    /// Appends `row` for every lane that passes `predicate` to round `round`'s rows, from `end`
    /// ([`Self::frontier`]), one atomic per warp; all lanes call this together.
    ///
    /// # Safety
    /// As [`Self::frontier`]; `found` has room for every row appended.
    #[inline(always)]
    pub(crate) unsafe fn append(&self, round: u32, end: u32, predicate: bool, row: u32) {
        let count = ROUND_COUNT + (round % 3) as usize;
        // SAFETY: the caller's room.
        unsafe { warp::append(predicate, row, self.words.add(count), self.found.add(end as usize)) };
    }

    /// Appends `row` to round `round`'s rows, from `end`, one atomic per row.
    ///
    /// # Safety
    /// As [`Self::append`].
    #[inline(always)]
    pub(crate) unsafe fn push(&self, round: u32, end: u32, row: u32) {
        // SAFETY: the caller's room.
        unsafe {
            let slot = atomic::add(self.words.add(ROUND_COUNT + (round % 3) as usize), 1u32);
            *self.found.add((end + slot) as usize) = row;
        }
    }

    /// Makes `row` round `round`'s only row, after the other rows, as if round `round` had
    /// appended it (round `round` - 1 ran last, and round `round` does not run).
    ///
    /// # Safety
    /// As [`Self::append`]; one thread.
    #[inline(always)]
    unsafe fn seed(&self, round: u32, row: u32) {
        let (before, now, next) = Self::slots(round);
        // SAFETY: the caller's words and room.
        unsafe {
            let at = *self.words.add(ROUND_START + before) + *self.words.add(ROUND_COUNT + before);
            *self.found.add(at as usize) = row;
            *self.words.add(ROUND_START + now) = at;
            *self.words.add(ROUND_COUNT + now) = 1;
            *self.words.add(ROUND_COUNT + next) = 0;
        }
    }
}

/// Level `level` of the search: every row the level before queued ([`RoundQueue`], `words`'
/// first six; the level is the round) gives its neighbours not reached yet that level and
/// queues them, and sets `words[ODD_CYCLE]` where it has a neighbour reached before at a level
/// of its own parity. Every entry of the pattern is looked at once, from its row's frontier, so
/// the levels' parities 2-color the pattern (and its transpose's) exactly where no frontier
/// ever sets it. Once it is set, the launches that follow return at once. Launch: any number
/// of whole warps (a warp per frontier row, grid-strided).
#[gpu::kernel]
pub unsafe fn bfs_level(
    level: u32,
    words: *mut u32,
    found: *mut u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    levels: *mut u32,
) {
    let warps = grid_size_1d() / WARP_SIZE;
    let queue = RoundQueue { words, found };
    // SAFETY (every access): seven words; the queue lies in `found`, which holds rows < rows;
    // j < end <= nnz; columns < rows. A row is queued once: by the thread whose
    // compare-and-swap gives it its level.
    if unsafe { *words.add(ODD_CYCLE) } != 0 {
        return; // the search is over: the host stops at its next look
    }
    let (first, end) = unsafe { queue.frontier(level) };
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
                unsafe { queue.push(level, end, col) };
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
                unsafe { store_volatile(words.add(ODD_CYCLE), 1) };
            }
            return;
        }
        p += warps;
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

/// Starts a component after the rows queued so far: `row = *lowest` at `level`, as if level
/// `level` had queued it alone (the level before ran last). Launch: one thread.
#[gpu::kernel]
pub unsafe fn bfs_seed(level: u32, lowest: *const u32, words: *mut u32, found: *mut u32, levels: *mut u32) {
    // SAFETY: the queue's words; a row found by `lowest_unreached`, its slot below the rows.
    unsafe {
        let row = *lowest;
        *levels.add(row as usize) = level;
        RoundQueue { words, found }.seed(level, row);
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
