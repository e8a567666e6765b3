//! Multicolor SymGS, a different smoother from the sequential one: the rows are colored so
//! that no two neighbours share a color (here, by Jones-Plassmann rounds on the GPU) and the
//! rows are copied color by color (rows of a color contiguous, in their original order;
//! [`color_sort`] and [`permute_without_diagonal`]; the columns and the vectors keep the
//! caller's numbering); the sweep then runs
//! the colors in order, one launch each, and back in reverse order. The rows of one color
//! neither read nor write each other's values, so each launch updates x in place with full
//! parallelism.

use abi::symgs::{
    BACKWARD, BACKWARD_KEEPING_UPPER, FORWARD_FROM_ZERO, FORWARD_KEPT_UPPER, RELAX_COLOR_THREADS,
};

use crate::device::memory::{load_evict_first, load_nc};
use crate::device::thread::{
    WARP_SIZE, block_idx_x, grid_dim_x, grid_size_1d, index_1d, lane_id, sync_threads, warp_index_1d,
};
use crate::device::{Float, atomic, shared, warp};

use super::breadth_first::RoundQueue;
use super::first_column_from;

/// Bit 63 of a row's coloring state: not colored yet, its degree in the low 32 bits. A colored
/// row's state is `round << 32 | color`, the round in which it took its color.
const UNCOLORED: u64 = 1 << 63;

/// `state[i] = UNCOLORED | degree`, the degree being row i's length in A, plus in A^T when
/// `transposed != 0` (unsymmetric patterns: the host passes A^T's pattern). Launch: a thread
/// per row.
#[gpu::kernel]
pub unsafe fn jp_init(
    rows: u32,
    transposed: u32,
    row_ptr: *const u32,
    t_row_ptr: *const u32,
    state: *mut u64,
) {
    let i = index_1d();
    if i < rows {
        let i = i as usize;
        // SAFETY: i < rows; both row pointers have rows + 1 entries.
        unsafe {
            let mut degree = load_nc(row_ptr.add(i + 1)) - load_nc(row_ptr.add(i));
            if transposed != 0 {
                degree += load_nc(t_row_ptr.add(i + 1)) - load_nc(t_row_ptr.add(i));
            }
            *state.add(i) = UNCOLORED | degree as u64;
        }
    }
}

/// A row's priority in `round`: with `degree_first`, larger degree first; ties (or every row,
/// without it) by row order in the rounds before `row_order_rounds`, by a hash of the row
/// after. Distinct rows always have distinct priorities (the hash is a bijection).
#[inline(always)]
fn priority(uncolored_state: u64, row: u32, round: u32, degree_first: u32, row_order_rounds: u32) -> u64 {
    let degree = if degree_first != 0 { uncolored_state as u32 } else { 0 };
    let tie = if round < row_order_rounds { !row } else { mix(row) };
    (degree as u64) << 32 | tie as u64
}

/// MurmurHash3's 32-bit finalizer: a bijection of u32 that scatters consecutive rows.
#[inline(always)]
pub(crate) fn mix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// A square pattern's neighbour lists: row i's columns in A, and in A^T where
/// `transposed != 0` (unsymmetric patterns: the host passes A^T's pattern).
#[derive(Clone, Copy)]
struct Adjacency {
    transposed: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    t_row_ptr: *const u32,
    t_col_idx: *const u32,
}

impl Adjacency {
    /// Calls `visit(j)` for each neighbour j != i, once per entry.
    ///
    /// # Safety
    /// i < rows; valid square patterns (columns < rows).
    #[inline(always)]
    unsafe fn visit(self, i: u32, mut visit: impl FnMut(u32)) {
        let mut row = |pointers: *const u32, columns: *const u32| {
            // SAFETY: the caller's bounds.
            unsafe {
                for k in load_nc(pointers.add(i as usize))..load_nc(pointers.add(i as usize + 1)) {
                    let j = load_nc(columns.add(k as usize));
                    if j != i {
                        visit(j);
                    }
                }
            }
        };
        // Two calls, not a loop over an array of the two patterns: that array went to local
        // memory (a stack frame).
        row(self.row_ptr, self.col_idx);
        if self.transposed != 0 {
            row(self.t_row_ptr, self.t_col_idx);
        }
    }

    /// Groups of `width` lanes (a power of two up to 32) each take a row (None: no row) and
    /// share its entries, `width` at a time: every lane calls `visit` with its entry's
    /// neighbour (None past its row's end, for the row itself, or without a row) as often as
    /// every other lane of the warp, so `visit` may hold warp-wide steps. The whole warp calls
    /// this.
    ///
    /// # Safety
    /// As for [`Adjacency::visit`].
    #[inline(always)]
    unsafe fn visit_groups(self, row: Option<u32>, width: u32, mut visit: impl FnMut(Option<u32>)) {
        let lane = lane_id() % width;
        let mut part = |pointers: *const u32, columns: *const u32| {
            // SAFETY: the caller's bounds.
            unsafe {
                let (start, end) = row.map_or((0, 0), |i| {
                    (load_nc(pointers.add(i as usize)), load_nc(pointers.add(i as usize + 1)))
                });
                let steps = warp::reduce_max((end - start).div_ceil(width));
                for step in 0..steps {
                    let k = start + step * width + lane;
                    let j = if k < end { Some(load_nc(columns.add(k as usize))) } else { None };
                    visit(j.filter(|&j| Some(j) != row));
                }
            }
        };
        part(self.row_ptr, self.col_idx);
        if self.transposed != 0 {
            part(self.t_row_ptr, self.t_col_idx);
        }
    }
}

/// Where the rounds start, or where the priorities change in round `round` (row order to
/// hashed ties): `waiting[i]` = the neighbours of each uncolored row i of higher priority (of
/// A's row, and of A^T's when `transposed != 0`, counted once per entry), and the rows with
/// none queued for round `round` (`words` zeroed before; see [`RoundQueue`]). Launch: a thread
/// per row.
#[gpu::kernel]
pub unsafe fn jp_ready(
    rows: u32,
    round: u32,
    degree_first: u32,
    row_order_rounds: u32,
    transposed: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    t_row_ptr: *const u32,
    t_col_idx: *const u32,
    state: *const u64,
    waiting: *mut u32,
    words: *mut u32,
    found: *mut u32,
) {
    let i = index_1d();
    let adjacency = Adjacency { transposed, row_ptr, col_idx, t_row_ptr, t_col_idx };
    // SAFETY: i < rows, the length of `state` and `waiting`; valid square patterns; only this
    // thread writes waiting[i]; the queue holds every row at most once.
    let own = if i < rows { unsafe { *state.add(i as usize) } } else { 0 };
    let ready = own & UNCOLORED != 0 && {
        let key = priority(own, i, round, degree_first, row_order_rounds);
        let mut higher = 0;
        unsafe {
            adjacency.visit(i, |j| {
                let s = *state.add(j as usize);
                higher += (s & UNCOLORED != 0 && priority(s, j, round, degree_first, row_order_rounds) > key)
                    as u32;
            });
            *waiting.add(i as usize) = higher;
        }
        higher == 0
    };
    // Appended as round - 1 would, from the queue's start.
    unsafe { RoundQueue { words, found }.append(round + 2, 0, ready, i) };
}

/// One Jones-Plassmann round: every row the round before queued ([`RoundQueue`]), whose
/// neighbours of higher priority are all colored, takes the smallest color none of its
/// neighbours holds and counts itself in `colored`; each of its uncolored neighbours, all of
/// lower priority, then waits on one row fewer, and is queued for the next round when it waits
/// on none. Two rows of a frontier are never neighbours, so the result does not depend on
/// the timing of the threads: the greedy (first-fit) coloring in priority order, each row
/// colored in the round in which every neighbour of higher priority had been colored before.
/// Neighbours: the columns of A's row, and of A^T's when `transposed != 0`. Launch: any number
/// of whole warps, `W` lanes per frontier row, grid-strided.
#[gpu::kernel(W = 8 | 32)]
pub unsafe fn jp_round<const W: u32>(
    round: u32,
    degree_first: u32,
    row_order_rounds: u32,
    transposed: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    t_row_ptr: *const u32,
    t_col_idx: *const u32,
    state: *mut u64,
    waiting: *mut u32,
    words: *mut u32,
    found: *mut u32,
    colored: *mut u32,
) {
    // SAFETY (every access): the frontier's rows are < rows, the length of `state` and
    // `waiting`; valid square patterns; the queue holds every row at most once. A frontier row
    // alone writes its state, which no other frontier row reads.
    let queue = RoundQueue { words, found };
    let (first, end) = unsafe { queue.frontier(round) };
    let adjacency = Adjacency { transposed, row_ptr, col_idx, t_row_ptr, t_col_idx };
    let mut count = 0;
    let mut p = first + index_1d() / W;
    // Every lane runs the same steps: the groups' loops hold warp-wide steps.
    while warp::any(p < end) {
        let row = (p < end).then(|| unsafe { *found.add(p as usize) });
        let key = row.map_or(0, |i| {
            priority(unsafe { *state.add(i as usize) }, i, round, degree_first, row_order_rounds)
        });
        // Colors in windows of 64: a second window only when 64 neighbours hold 0..64.
        let (mut color, mut base) = (None, 0u32);
        while warp::any(row.is_some() && color.is_none()) {
            let mut used = 0u64;
            unsafe {
                adjacency.visit_groups(row, W, |j| {
                    let s = j.map_or(UNCOLORED, |j| *state.add(j as usize));
                    let in_window = (s as u32).wrapping_sub(base);
                    if s & UNCOLORED == 0 && in_window < 64 {
                        used |= 1 << in_window;
                    }
                })
            };
            let used = warp::reduce_or_groups(used, W);
            if color.is_none() && used != u64::MAX {
                color = Some(base + (!used).trailing_zeros());
            }
            base += 64;
        }
        if let (Some(i), Some(color), 0) = (row, color, lane_id() % W) {
            unsafe { *state.add(i as usize) = (round as u64) << 32 | color as u64 };
            count += 1;
        }
        unsafe {
            adjacency.visit_groups(row, W, |j| {
                let freed = j.is_some_and(|j| {
                    let s = *state.add(j as usize);
                    s & UNCOLORED != 0
                        && priority(s, j, round, degree_first, row_order_rounds) < key
                        && atomic::add(waiting.add(j as usize), u32::MAX) == 1
                });
                queue.append(round, end, freed, j.unwrap_or(0));
            })
        };
        p += grid_size_1d() / W;
    }
    count_per_warp(count, colored);
}

/// Adds the warp's `count`s to `counter`, one atomic per warp (all its lanes call this).
#[inline(always)]
fn count_per_warp(count: u32, counter: *mut u32) {
    let count = warp::reduce_sum(count);
    if lane_id() == 0 && count != 0 {
        // SAFETY: the caller's counter.
        unsafe { atomic::add(counter, count) };
    }
}

/// The peeling's control words (`sl_peel`, `sl_unlink`; ten, zeroed before), two of each by
/// the round's parity: the round's smallest degree...
const SMALLEST: usize = 0;
/// ...the length of its `peeled` list...
const PEELED: usize = 2;
/// ...the length of its `touched` list...
const TOUCHED: usize = 4;
/// ...the least degree below the smallest that a row fell to, as its complement (0: none)...
const BELOW: usize = 6;
/// ...and the least degree of the rows left where the round looked at every row, as its
/// complement (0: none).
const LEAST: usize = 8;

/// Smallest-last priorities (Matula and Beck's ordering, peeled in parallel): round after
/// round, every row left whose degree among the rows left is the smallest takes the round as
/// its rank, and leaves. Coloring the rows in decreasing rank then colors the sparse parts
/// last, where colors are free: 32 instead of 44 colors on a renumbered FEM matrix, 4 instead
/// of 6 on a renumbered 7-point Laplacian (PERF.md).
///
/// A round reads only the rows it can change. After a round of smallest degree d, the rows
/// left have more than d neighbours left, less those they just lost. The rows that fell to d
/// are listed (`touched`) and the least degree below d noted: if any fell, the next round
/// peels the least of those, from the list. If none fell, the next round looks at every row
/// for degree d + 1, and notes the least degree it sees; a round that peels no row (none of
/// degree d + 1) is followed by one for that least degree. Such an empty round leaves a gap in
/// the ranks but not in their order.
///
/// `sl_init`: `degree[i]` = the row's degree from its uncolored Jones-Plassmann state (`jp_init`),
/// `rank[i]` = `u32::MAX` (left), and the least degree in the control words (`control`, ten
/// words zeroed before), for round 0. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn sl_init(rows: u32, state: *const u64, degree: *mut u32, rank: *mut u32, control: *mut u32) {
    let i = index_1d();
    let complement = if i < rows {
        // SAFETY: i < rows, the length of all three.
        unsafe {
            let own = *state.add(i as usize) as u32;
            *degree.add(i as usize) = own;
            *rank.add(i as usize) = u32::MAX;
            !own
        }
    } else {
        0
    };
    let complement = warp::reduce_max(complement);
    if lane_id() == 0 && complement != 0 {
        // SAFETY: ten control words; round 0 reads the other parity's.
        unsafe { atomic::max_u32(control.add(LEAST + 1), complement) };
    }
}

/// Round `round` of the peeling: the rows left of the smallest degree take rank `round`, are
/// listed in `peeled` and counted in `total`. Launch: any number of whole warps, grid-strided
/// over the rows or the list of `touched` rows; then [`sl_unlink`].
#[gpu::kernel]
pub unsafe fn sl_peel(
    rows: u32,
    round: u32,
    degree: *const u32,
    rank: *mut u32,
    control: *mut u32,
    touched: *const u32,
    peeled: *mut u32,
    total: *mut u32,
) {
    let (now, before) = ((round % 2) as usize, ((round + 1) % 2) as usize);
    // SAFETY (every access): ten control words, this launch writing none that it reads; the
    // lists hold rows < rows, the length of `degree` and `rank`, each at most once.
    let word = |slot: usize| unsafe { *control.add(slot) };
    let listed = word(TOUCHED + before);
    let (smallest, from_list) = if listed != 0 {
        (word(SMALLEST + before).min(!word(BELOW + before)), true)
    } else if word(PEELED + before) == 0 {
        (!word(LEAST + before), false) // round 0, or after an empty round
    } else {
        (word(SMALLEST + before) + 1, false)
    };
    if index_1d() == 0 {
        unsafe {
            *control.add(SMALLEST + now) = smallest;
            *control.add(TOUCHED + now) = 0;
            *control.add(BELOW + now) = 0;
        }
    }
    if smallest == u32::MAX {
        return; // no rows left
    }
    let count = if from_list { listed } else { rows };
    let (mut peels, mut least) = (0, 0);
    let mut k = index_1d();
    while warp::any(k < count) {
        let i = if from_list && k < count { unsafe { *touched.add(k as usize) } } else { k };
        let left = k < count && unsafe { *rank.add(i as usize) } == u32::MAX;
        let own = if left { unsafe { *degree.add(i as usize) } } else { u32::MAX };
        if own == smallest {
            unsafe { *rank.add(i as usize) = round };
            peels += 1;
        }
        least = least.max(!own);
        unsafe { warp::append(own == smallest, i, control.add(PEELED + now), peeled) };
        k += grid_size_1d();
    }
    let least = warp::reduce_max(least);
    if !from_list && lane_id() == 0 && least != 0 {
        unsafe { atomic::max_u32(control.add(LEAST + now), least) };
    }
    count_per_warp(peels, total);
}

/// The rows `peeled` in round `round` leave: each lowers the degree of its neighbours still
/// left (the columns of its row of A, and of A^T when `transposed != 0`, as counted by
/// `jp_init`), and lists those that fall to the round's smallest degree in `touched` (each
/// once: its degree passes that value once). Launch: any number of whole warps, `W` lanes per
/// peeled row, grid-strided.
#[gpu::kernel(W = 8 | 32)]
pub unsafe fn sl_unlink<const W: u32>(
    round: u32,
    transposed: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    t_row_ptr: *const u32,
    t_col_idx: *const u32,
    degree: *mut u32,
    rank: *const u32,
    control: *mut u32,
    touched: *mut u32,
    peeled: *const u32,
) {
    let (now, next) = ((round % 2) as usize, ((round + 1) % 2) as usize);
    let adjacency = Adjacency { transposed, row_ptr, col_idx, t_row_ptr, t_col_idx };
    // SAFETY (every access): ten control words, this launch writing none that it reads; the
    // peeled rows are < rows; valid square patterns; a degree and a rank per row; `touched`
    // has room for every row. The ranks read are not written in this launch.
    let (count, smallest) = unsafe { (*control.add(PEELED + now), *control.add(SMALLEST + now)) };
    if index_1d() == 0 {
        // The next round's peel appends to these.
        unsafe { (*control.add(PEELED + next), *control.add(LEAST + next)) = (0, 0) };
    }
    let mut p = index_1d() / W;
    while warp::any(p < count) {
        let row = (p < count).then(|| unsafe { *peeled.add(p as usize) });
        unsafe {
            adjacency.visit_groups(row, W, |j| {
                let left = j.filter(|&j| *rank.add(j as usize) == u32::MAX);
                // Rows left have a degree above the smallest: each falls one at a time.
                let fell_to = left.map(|j| atomic::add(degree.add(j as usize), u32::MAX) - 1);
                if let Some(below) = fell_to.filter(|&d| d < smallest) {
                    atomic::max_u32(control.add(BELOW + now), !below);
                }
                warp::append(fell_to == Some(smallest), j.unwrap_or(0), control.add(TOUCHED + now), touched);
            })
        };
        p += grid_size_1d() / W;
    }
}

/// `state[i] = UNCOLORED | rank[i]`: Jones-Plassmann with `degree_first` then colors by rank,
/// the highest first, ties by hash. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn sl_state(rows: u32, rank: *const u32, state: *mut u64) {
    let i = index_1d();
    if i < rows {
        // SAFETY: i < rows, the length of both.
        unsafe { *state.add(i as usize) = UNCOLORED | *rank.add(i as usize) as u64 };
    }
}

/// `*count = 1 + the largest color` of the colored rows' states. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn color_count(rows: u32, state: *const u64, count: *mut u32) {
    let i = index_1d();
    if i < rows {
        // SAFETY: i < rows; `count` is one counter.
        unsafe { atomic::max_u32(count, *state.add(i as usize) as u32 + 1) };
    }
}

/// Each row's color c becomes `places[c]`, its round kept. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn recolor(rows: u32, places: *const u32, state: *mut u64) {
    let i = index_1d();
    if i < rows {
        // SAFETY: i < rows; a place per color.
        unsafe {
            let s = *state.add(i as usize);
            *state.add(i as usize) = s >> 32 << 32 | load_nc(places.add(s as u32 as usize)) as u64;
        }
    }
}

/// The stable counting sort of the rows by color, in two passes over chunks of `chunk_rows`
/// rows, a warp per chunk (`grid_dim_x` chunks); `colors` counters per chunk, color-major
/// (`[color * chunks + chunk]`). With `ordered`, the rows are taken in the order of `order` (a
/// permutation of them; else it is not read): place p of a chunk is row `order[p]`.
///
/// - `place == 0`: counts each chunk's rows of each color into `row_base`, and their nonzeros
///   without the diagonal (row length - 1) into `nnz_base`.
/// - `place != 0`: `row_base` and `nnz_base` hold the exclusive prefix sums of those counts
///   (where the chunk's rows of each color start in the colored copy, and their
///   nonzeros); each row takes the next place of its color, in row order:
///   `new_to_old[new] = old`, `new_row_ptr[new]` its first nonzero,
///   and `new_row_ptr[rows] = nnz_without_diagonal`.
///
/// Each 32-row step peels the colors present one at a time: a ballot gives the lanes of one
/// color, their rank is the count of those below them, their nonzeros a prefix sum.
/// Launch: blocks of one warp; shared bytes `8 * colors`.
#[gpu::kernel]
pub unsafe fn color_sort(
    place: u32,
    rows: u32,
    colors: u32,
    chunk_rows: u32,
    nnz_without_diagonal: u32,
    ordered: u32,
    order: *const u32,
    state: *const u64,
    row_ptr: *const u32,
    row_base: *mut u32,
    nnz_base: *mut u32,
    new_to_old: *mut u32,
    new_row_ptr: *mut u32,
) {
    let (chunk, chunks, lane) = (block_idx_x(), grid_dim_x(), lane_id());
    let next_row = shared::dynamic::<u32>();
    let next_nnz = next_row.after::<u32>(colors);
    // SAFETY (every access): c < colors, the shared arrays' and the bases' sizes per chunk;
    // rows < `rows` (`order` a permutation of them); the places are a permutation of 0..rows
    // and the nonzero offsets stay below `nnz_without_diagonal` (the prefix sums of the
    // counts).
    let mut c = lane;
    while c < colors {
        let k = (c * chunks + chunk) as usize;
        let (rows_before, nnz_before) =
            if place != 0 { unsafe { (*row_base.add(k), *nnz_base.add(k)) } } else { (0, 0) };
        unsafe {
            next_row.set(c, rows_before);
            next_nnz.set(c, nnz_before);
        }
        c += WARP_SIZE;
    }
    sync_threads();
    let first = chunk.saturating_mul(chunk_rows);
    let end = first.saturating_add(chunk_rows).min(rows);
    let below = (1u32 << lane) - 1;
    let mut step = first;
    while step < end {
        let p = step + lane;
        let valid = p < end;
        let i = if valid && ordered != 0 { unsafe { load_nc(order.add(p as usize)) } } else { p };
        let (color, len) = if valid {
            let r = i as usize;
            unsafe { (*state.add(r) as u32, load_nc(row_ptr.add(r + 1)) - load_nc(row_ptr.add(r)) - 1) }
        } else {
            (u32::MAX, 0)
        };
        let mut remaining = warp::ballot(valid);
        while remaining != 0 {
            let leader = remaining.trailing_zeros();
            let group_color = warp::shuffle_idx(color, leader);
            let in_group = valid && color == group_color;
            let group = warp::ballot(in_group);
            // Inclusive prefix sum of the group's row lengths (the other lanes add 0).
            let inclusive = warp::inclusive_sum_groups(if in_group { len } else { 0 }, WARP_SIZE);
            let group_nnz = warp::shuffle_idx(inclusive, 31);
            let (rows_before, nnz_before) = unsafe { (next_row.get(group_color), next_nnz.get(group_color)) };
            if in_group && place != 0 {
                let new = rows_before + (group & below).count_ones();
                unsafe {
                    *new_to_old.add(new as usize) = i;
                    *new_row_ptr.add(new as usize) = nnz_before + inclusive - len;
                }
            }
            sync_threads(); // every lane has read the color's counters
            if lane == leader {
                unsafe {
                    next_row.set(group_color, rows_before + group.count_ones());
                    next_nnz.set(group_color, nnz_before + group_nnz);
                }
            }
            sync_threads();
            remaining &= !group;
        }
        step += WARP_SIZE;
    }
    let mut c = lane;
    while c < colors {
        let k = (c * chunks + chunk) as usize;
        if place == 0 {
            unsafe {
                *row_base.add(k) = next_row.get(c);
                *nnz_base.add(k) = next_nnz.get(c);
            }
        }
        c += WARP_SIZE;
    }
    if place != 0 && chunk == 0 && lane == 0 {
        unsafe { *new_row_ptr.add(rows as usize) = nnz_without_diagonal };
    }
}

/// Row `new` of the colored copy without its diagonal, from row `new_to_old[new]` of A: its
/// off-diagonal entries split by color, those of lower colors first and those of higher
/// colors from `upper_start[new]` on (each part in A's order; `state` holds each row's color
/// in its low 32 bits), and a_ii into `diagonal`. Launch: a warp per row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn permute_without_diagonal<T: Float>(
    rows: u32,
    new_to_old: *const u32,
    state: *const u64,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    new_row_ptr: *const u32,
    upper_start: *mut u32,
    new_col_idx: *mut u32,
    new_values: *mut T,
    diagonal: *mut T,
) {
    let new = warp_index_1d();
    if new >= rows {
        return; // the whole warp
    }
    let lane = lane_id();
    let below = (1u32 << lane) - 1;
    // SAFETY (every access): new < rows; old a row of A; j < end <= nnz; columns < rows (a
    // square matrix, a state per row); the destination of each off-diagonal entry lies in
    // row `new`'s extent (A's row less its one diagonal entry).
    let old = unsafe { load_nc(new_to_old.add(new as usize)) };
    let color = unsafe { *state.add(old as usize) } as u32;
    let (start, end) =
        unsafe { (load_nc(row_ptr.add(old as usize)), load_nc(row_ptr.add(old as usize + 1))) };
    // An entry of the row: (column, whether it is a_ii, whether its column's color is lower).
    let entry = |j: u32| {
        if j >= end {
            return (u32::MAX, false, false);
        }
        let col = unsafe { load_nc(col_idx.add(j as usize)) };
        (col, col == old, col != old && (unsafe { *state.add(col as usize) } as u32) < color)
    };
    // First pass: how many entries go to the lower part.
    let mut lower_count = 0;
    let mut base = start;
    while base < end {
        lower_count += warp::ballot(entry(base + lane).2).count_ones();
        base += WARP_SIZE;
    }
    let destination = unsafe { load_nc(new_row_ptr.add(new as usize)) };
    if lane == 0 {
        unsafe { *upper_start.add(new as usize) = destination + lower_count };
    }
    // Second pass: each entry to the next place of its part.
    let (mut lower_seen, mut upper_seen) = (0, 0);
    let mut base = start;
    while base < end {
        let j = base + lane;
        let (col, is_diagonal, is_lower) = entry(j);
        let is_upper = j < end && !is_diagonal && !is_lower;
        let (lowers, uppers) = (warp::ballot(is_lower), warp::ballot(is_upper));
        if j < end {
            let value = unsafe { load_nc(values.add(j as usize)) };
            if is_diagonal {
                unsafe { *diagonal.add(new as usize) = value };
            } else {
                let to = if is_lower {
                    destination + lower_seen + (lowers & below).count_ones()
                } else {
                    destination + lower_count + upper_seen + (uppers & below).count_ones()
                };
                unsafe {
                    *new_col_idx.add(to as usize) = col;
                    *new_values.add(to as usize) = value;
                }
            }
        }
        lower_seen += lowers.count_ones();
        upper_seen += uppers.count_ones();
        base += WARP_SIZE;
    }
}

/// Sets `*unsymmetric = 1` if some stored a_ij (i != j) has no stored a_ji (columns sorted
/// within rows, as `Csr` keeps them; a column >= rows counts as unsymmetric): each entry's
/// lane looks for its mirror by binary search. Launch: any number of whole warps, `W` lanes a
/// row, grid-strided.
#[gpu::kernel(W = 8 | 32)]
pub unsafe fn pattern_unsymmetric<const W: u32>(
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    unsymmetric: *mut u32,
) {
    let mut i = index_1d() / W;
    while i < rows {
        // SAFETY: i < rows and every j checked < rows before its row is read; k < nnz.
        unsafe {
            let (start, end) = (load_nc(row_ptr.add(i as usize)), load_nc(row_ptr.add(i as usize + 1)));
            let mut k = start + lane_id() % W;
            while k < end {
                let j = load_nc(col_idx.add(k as usize));
                let found = j == i
                    || j < rows && {
                        let at = first_column_from(row_ptr, col_idx, j, i);
                        at < load_nc(row_ptr.add(j as usize + 1)) && load_nc(col_idx.add(at as usize)) == i
                    };
                if !found {
                    *unsymmetric = 1;
                    return;
                }
                k += W;
            }
        }
        i += grid_size_1d() / W;
    }
}

const _: () = assert!(RELAX_COLOR_THREADS == 128, "`relax_color`'s #[gpu::max_threads]");

/// Rows `first..first + count` of the colored copy (one color), x in place: `x[i] = (r[i] -
/// sum_{j != i} a_ij x[j]) / a_ii` for `i = rows_of[k]`, from the copy without its diagonal
/// (`diagonal` apart, in the copy's order; columns, r and x in A's numbering), `W` lanes per
/// row (a power of two, 2..=32), two loads in flight per lane as in the SpMV vector kernel.
///
/// Each row's entries of lower colors come first, those of higher colors from
/// `upper_start[k]`. The forward sweep (`sweep` FORWARD) sums both parts and keeps r[i] minus
/// the lower one in `carried[k]`; the backward sweep (BACKWARD) reuses it and reads only the
/// upper part, and no r: between a color's forward and backward updates no lower color changes
/// (the backward sweep reaches them later), so the lower sum is the same, and the backward
/// sweep reads half the matrix. From x = 0 (FORWARD_FROM_ZERO) the forward sweep reads only
/// the lower part: the higher colors still hold zeros. Where another sweep follows, the
/// backward sweep (BACKWARD_KEEPING_UPPER) also keeps its upper sum in `carried[k]`, which the
/// next forward sweep (FORWARD_KEPT_UPPER) reads instead of the upper part: no higher color
/// changes in between. (`abi::symgs`'s constants.) Launch: `W` threads per row, blocks of
/// `RELAX_COLOR_THREADS`.
#[gpu::kernel(W = 2 | 4 | 8 | 16 | 32, T = f32 | f64)]
#[gpu::max_threads(128)] // RELAX_COLOR_THREADS
#[gpu::min_blocks(16)] // ptxas keeps to 32 registers: a full SM hides more of the loads' latency
#[inline(always)]
pub unsafe fn relax_color<T: Float, const W: u32>(
    sweep: u32,
    first: u32,
    count: u32,
    rows_of: *const u32,
    row_ptr: *const u32,
    upper_start: *const u32,
    col_idx: *const u32,
    values: *const T,
    diagonal: *const T,
    carried: *mut T,
    r: *const T,
    x: *mut T,
) {
    let k = index_1d() / W;
    let lane = lane_id() % W;
    let row = first.wrapping_add(k) as usize;
    // Groups past the color still take part in the shuffles, with an empty row.
    let (start, split, end) = if k < count {
        // SAFETY: first + count <= rows, so row < rows.
        unsafe { (load_nc(row_ptr.add(row)), load_nc(upper_start.add(row)), load_nc(row_ptr.add(row + 1))) }
    } else {
        (0, 0, 0)
    };
    // The row's own values do not depend on its sums: their loads go out beside the sums'.
    // SAFETY: row < rows; only this group touches carried[row].
    let own =
        (lane == 0 && k < count).then(|| unsafe { own_values(sweep, row, rows_of, diagonal, carried, r) });
    // Only the parts the sweep reads, in one pass: the lower part (of lower colors) comes first.
    let begin = if is_backward(sweep) { split } else { start };
    let end = if reads_upper(sweep) { end } else { split };
    // SAFETY: start <= split <= end <= nnz, columns < rows.
    let (lower, upper) = unsafe { group_dots::<T, W>(begin, split, end, lane, col_idx, values, x) };
    let lower = if is_backward(sweep) { lower } else { warp::reduce_sum_groups(lower, W) };
    let upper = if reads_upper(sweep) { warp::reduce_sum_groups(upper, W) } else { upper };
    if let Some(own) = own {
        // SAFETY: only this group writes x[i] and carried[row], and no row of this color
        // reads them.
        unsafe { update_row(sweep, row, own, lower, upper, carried, x) };
    }
}

/// Whether a multicolor launch runs the backward half of its sweep.
#[inline(always)]
pub(crate) fn is_backward(sweep: u32) -> bool {
    sweep == BACKWARD || sweep == BACKWARD_KEEPING_UPPER
}

/// Whether a multicolor launch reads its rows' upper parts (their entries of higher colors).
#[inline(always)]
pub(crate) fn reads_upper(sweep: u32) -> bool {
    sweep != FORWARD_FROM_ZERO && sweep != FORWARD_KEPT_UPPER
}

/// Whether a multicolor launch reads its rows' slots of `carried` (see [`rest_and_carry`]).
#[inline(always)]
pub(crate) fn reads_kept(sweep: u32) -> bool {
    is_backward(sweep) || sweep == FORWARD_KEPT_UPPER
}

/// What a row's update reads besides its sums: its row `i` of A (and of r and x), a_ii, r_i
/// (forward sweeps) and `kept`, its slot of `carried` where the sweep reads it (see
/// [`rest_and_carry`]).
struct OwnValues<T> {
    i: usize,
    diagonal: T,
    r_i: T,
    kept: T,
}

/// Loads row `row`'s [`OwnValues`].
///
/// # Safety
/// `row` < rows, the length of `rows_of`, `diagonal` and `carried`; `rows_of` a permutation of
/// the rows of `r`; no other thread writes carried[row] in the launch.
#[inline(always)]
unsafe fn own_values<T: Float>(
    sweep: u32,
    row: usize,
    rows_of: *const u32,
    diagonal: *const T,
    carried: *const T,
    r: *const T,
) -> OwnValues<T> {
    // SAFETY: the caller's bounds.
    unsafe {
        let i = load_nc(rows_of.add(row)) as usize;
        let diagonal = load_nc(diagonal.add(row));
        let backward = is_backward(sweep);
        let kept = if reads_kept(sweep) { *carried.add(row) } else { T::ZERO };
        let r_i = if backward { T::ZERO } else { load_nc(r.add(i)) };
        OwnValues { i, diagonal, r_i, kept }
    }
}

/// Row i's r_i minus its sums outside the row (or node block), and what its slot of `carried`
/// keeps. Forward, the slot keeps r_i minus the lower sum, and the upper sum is taken from
/// that (in FORWARD_KEPT_UPPER, `kept`: the upper sum the backward sweep before kept).
/// Backward, `kept` is r_i minus the lower sum, and the slot keeps the upper sum where another
/// sweep follows.
#[inline(always)]
pub(crate) fn rest_and_carry<T: Float>(sweep: u32, r_i: T, kept: T, lower: T, upper: T) -> (T, Option<T>) {
    if is_backward(sweep) {
        (kept - upper, (sweep == BACKWARD_KEEPING_UPPER).then_some(upper))
    } else {
        let r_minus_lower = r_i - lower;
        let upper = if sweep == FORWARD_KEPT_UPPER { kept } else { upper };
        (r_minus_lower - upper, Some(r_minus_lower))
    }
}

/// Row `row`'s update from its sums ([`rest_and_carry`]). The loads ([`own_values`]) come
/// before the stores: a load of the diagonal after the store to `carried` made the backward
/// sweeps that keep their upper sums several times slower (PERF.md).
///
/// # Safety
/// `row` < rows, the length of `carried`, and `own.i` a row of `x`; no other thread touches
/// carried[row] or x[own.i] in the launch.
#[inline(always)]
unsafe fn update_row<T: Float>(
    sweep: u32,
    row: usize,
    own: OwnValues<T>,
    lower: T,
    upper: T,
    carried: *mut T,
    x: *mut T,
) {
    let (rest, carry) = rest_and_carry(sweep, own.r_i, own.kept, lower, upper);
    // SAFETY: the caller's bounds and slots.
    unsafe {
        if let Some(carry) = carry {
            *carried.add(row) = carry;
        }
        *x.add(own.i) = rest / own.diagonal;
    }
}

/// This lane's shares of `sum_j values[j] x[col_idx[j]]` over `begin..split` (the lower sum)
/// and `split..end` (the upper one), in one pass so that both parts' loads are in flight
/// together; lanes `W` apart, two loads of x in flight (four were slower: PERF.md). The
/// entries are read with the L2 `evict_first` policy ([`load_evict_first`]): they stream past
/// once a launch, and the vectors of the sweep stay in L2 for the launches after.
///
/// # Safety
/// `begin..end` lies in the arrays; columns are < the length of `x`. `x` may be written in
/// the launch (other rows of the color), so it is read with plain loads.
#[inline(always)]
unsafe fn group_dots<T: Float, const W: u32>(
    begin: u32,
    split: u32,
    end: u32,
    lane: u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
) -> (T, T) {
    let (mut lower, mut upper) = (T::ZERO, T::ZERO);
    let mut add = |j: u32, value: T, x_j: T| {
        if j < split {
            lower = value.mul_add(x_j, lower);
        } else {
            upper = value.mul_add(x_j, upper);
        }
    };
    let mut j = begin + lane;
    // SAFETY: the caller's ranges.
    unsafe {
        while j + W < end {
            let (c0, c1) =
                (load_evict_first(col_idx.add(j as usize)), load_evict_first(col_idx.add((j + W) as usize)));
            let (v0, v1) =
                (load_evict_first(values.add(j as usize)), load_evict_first(values.add((j + W) as usize)));
            let (x0, x1) = (*x.add(c0 as usize), *x.add(c1 as usize));
            add(j, v0, x0);
            add(j + W, v1, x1);
            j += 2 * W;
        }
        if j < end {
            let c0 = load_evict_first(col_idx.add(j as usize));
            add(j, load_evict_first(values.add(j as usize)), *x.add(c0 as usize));
        }
    }
    (lower, upper)
}

/// The widths of a group's slices in the sliced-ELL form of the grouped copy: slice `s` holds
/// rows `first + 32 s..` (a warp's), and `widths[2 (slice_first + s)]` and `[.. + 1]` get the
/// longest lower part and the longest upper part among them. Launch: a thread per row of the
/// group (`count`), blocks a multiple of 32.
#[gpu::kernel]
pub unsafe fn ell_widths(
    first: u32,
    count: u32,
    slice_first: u32,
    row_ptr: *const u32,
    upper_start: *const u32,
    widths: *mut u32,
) {
    let k = index_1d();
    let (lower, upper) = if k < count {
        let row = (first + k) as usize;
        // SAFETY: first + count <= rows; row_ptr has rows + 1 entries, upper_start rows.
        unsafe {
            let (start, split, end) =
                (load_nc(row_ptr.add(row)), load_nc(upper_start.add(row)), load_nc(row_ptr.add(row + 1)));
            (split - start, end - split)
        }
    } else {
        (0, 0)
    };
    let (lower, upper) = (warp::reduce_max(lower), warp::reduce_max(upper));
    if lane_id() == 0 && k < count {
        let slice = (slice_first + k / WARP_SIZE) as usize;
        // SAFETY: the host sizes `widths` at two per slice of every group.
        unsafe {
            *widths.add(2 * slice) = lower;
            *widths.add(2 * slice + 1) = upper;
        }
    }
}

/// Fills a group's rows of the sliced-ELL form from the CSR copy: slice `s` of the group
/// starts at `offsets[slice_first + s]` with its lower block (`widths[2 slice]` entries a row,
/// row-interleaved: entry q of the slice's lane l at `32 q + l`) and then its upper block.
/// Padding holds zeros at the row's own column (A's numbering: `new_to_old`), which the sweep
/// multiplies by a value x holds anyway. Launch: a thread per row of the group, blocks a
/// multiple of 32.
#[gpu::kernel(T = f32 | f64)]
#[allow(clippy::too_many_arguments)] // the CSR copy, the slices, and the form they fill
pub unsafe fn ell_fill<T: Float>(
    first: u32,
    count: u32,
    slice_first: u32,
    new_to_old: *const u32,
    row_ptr: *const u32,
    upper_start: *const u32,
    col_idx: *const u32,
    values: *const T,
    offsets: *const u32,
    widths: *const u32,
    ell_cols: *mut u32,
    ell_values: *mut T,
) {
    let k = index_1d();
    if k >= count {
        return;
    }
    // SAFETY: row < rows and its slice < slices (the host's sizes); each entry written lies
    // in the slice's blocks (q < width), which the host's offsets keep apart.
    unsafe {
        let e = ell_row(k, first, slice_first, offsets, widths);
        let own = load_nc(new_to_old.add(e.row));
        let (start, split, end) =
            (load_nc(row_ptr.add(e.row)), load_nc(upper_start.add(e.row)), load_nc(row_ptr.add(e.row + 1)));
        for (block, from, to, width) in
            [(e.lower, start, split, e.lower_width), (e.upper, split, end, e.upper_width)]
        {
            for q in 0..width {
                let at = (block + WARP_SIZE * q) as usize;
                let j = from + q;
                let (col, value) = if j < to {
                    (load_nc(col_idx.add(j as usize)), load_nc(values.add(j as usize)))
                } else {
                    (own, T::ZERO)
                };
                *ell_cols.add(at) = col;
                *ell_values.add(at) = value;
            }
        }
    }
}

/// Where thread `k` of a group's launch finds its row's entries in the sliced-ELL form: entry
/// q of the row's lower part at `lower + 32 q` (of `lower_width`), of its upper part at
/// `upper + 32 q` (of `upper_width`).
struct EllRow {
    row: usize,
    lower: u32,
    lower_width: u32,
    upper: u32,
    upper_width: u32,
}

/// The [`EllRow`] of thread `k`, row `first + k` of the copy, in slice `slice_first + k / 32`.
///
/// # Safety
/// The slice lies in `offsets` and (two per slice) `widths`.
#[inline(always)]
unsafe fn ell_row(k: u32, first: u32, slice_first: u32, offsets: *const u32, widths: *const u32) -> EllRow {
    let slice = (slice_first + k / WARP_SIZE) as usize;
    // SAFETY: the caller's bounds.
    let (offset, lower_width, upper_width) = unsafe {
        (load_nc(offsets.add(slice)), load_nc(widths.add(2 * slice)), load_nc(widths.add(2 * slice + 1)))
    };
    let lower = offset + k % WARP_SIZE;
    EllRow {
        row: (first + k) as usize,
        lower,
        lower_width,
        upper: lower + WARP_SIZE * lower_width,
        upper_width,
    }
}

/// As [`relax_color`] from the sliced-ELL form ([`ell_fill`]): a thread per row, whose loads
/// of the slice's entries are coalesced across the warp (a warp holds a slice), with no
/// shuffles. The forward sweep sums the lower block and the upper one (or takes the kept
/// upper sum; from x = 0, the lower block alone) and keeps r[i] minus the lower sum; the
/// backward sweep reads only the upper block. Launch: a thread per row of the group, blocks a
/// multiple of 32.
#[gpu::kernel(T = f32 | f64)]
#[allow(clippy::too_many_arguments)] // the group, its slices, the copy and the vectors
pub unsafe fn relax_color_ell<T: Float>(
    sweep: u32,
    first: u32,
    count: u32,
    slice_first: u32,
    rows_of: *const u32,
    offsets: *const u32,
    widths: *const u32,
    ell_cols: *const u32,
    ell_values: *const T,
    diagonal: *const T,
    carried: *mut T,
    r: *const T,
    x: *mut T,
) {
    let k = index_1d();
    if k >= count {
        return;
    }
    // SAFETY: row < rows and its slice < slices; the blocks lie in the ELL arrays (the host's
    // offsets and widths), their columns < rows. Only this thread writes x[i] and
    // carried[row], and no row of this group reads them.
    unsafe {
        let e = ell_row(k, first, slice_first, offsets, widths);
        let upper = if reads_upper(sweep) {
            ell_dot(e.upper, e.upper_width, ell_cols, ell_values, x)
        } else {
            T::ZERO
        };
        let lower = if !is_backward(sweep) {
            ell_dot(e.lower, e.lower_width, ell_cols, ell_values, x)
        } else {
            T::ZERO
        };
        // Its own values after the sums here: a thread holds a whole row's loads, and loading
        // these first was slower on the stencils (PERF.md).
        let own = own_values(sweep, e.row, rows_of, diagonal, carried, r);
        update_row(sweep, e.row, own, lower, upper, carried, x);
    }
}

/// `sum_q values[at_q] x[cols[at_q]]` over a row's `width` entries of a sliced-ELL block,
/// `at_q = first + 32 q`, two loads of x in flight, the entries read as in [`group_dots`].
///
/// # Safety
/// The entries lie in the arrays, their columns in `x`, which other threads of the launch may
/// write (other rows): plain loads.
#[inline(always)]
unsafe fn ell_dot<T: Float>(first: u32, width: u32, cols: *const u32, values: *const T, x: *const T) -> T {
    let (mut sum0, mut sum1) = (T::ZERO, T::ZERO);
    let mut q = 0;
    // SAFETY: the caller's ranges.
    unsafe {
        while q + 1 < width {
            let (at0, at1) = ((first + WARP_SIZE * q) as usize, (first + WARP_SIZE * (q + 1)) as usize);
            let (c0, c1) = (load_evict_first(cols.add(at0)), load_evict_first(cols.add(at1)));
            sum0 = load_evict_first(values.add(at0)).mul_add(*x.add(c0 as usize), sum0);
            sum1 = load_evict_first(values.add(at1)).mul_add(*x.add(c1 as usize), sum1);
            q += 2;
        }
        if q < width {
            let at = (first + WARP_SIZE * q) as usize;
            sum0 = load_evict_first(values.add(at))
                .mul_add(*x.add(load_evict_first(cols.add(at)) as usize), sum0);
        }
    }
    sum0 + sum1
}
