//! Sync-free sweeps: one launch per sweep direction, each row waiting on the rows it depends
//! on, instead of a launch per level. Two ways for a row to signal that it is done:
//!
//! - done flags (`SIGNAL` = `abi::symgs::DONE_FLAGS`): the finishing warp stores its value, then the row's flag
//!   (the half-sweep's number, so flags need no reset) with a release store; a waiting lane
//!   polls the flag with relaxed loads, then makes one acquire load, then reads the value
//!   with a relaxed load (never from a stale L1 line). Polling with acquire loads instead
//!   invalidates the SM's L1 at every poll.
//! - the value itself (`abi::symgs::VALUE`): the output vector is first filled with an
//!   "unset" NaN no arithmetic produces (all bits one); a waiting lane polls the value until it
//!   is set. One location, so no fence and no second load: the shortest hand-over.
//!
//! Polls and the value's store are relaxed at GPU scope (`ld/st.relaxed.gpu`), not volatile
//! (system scope), which is faster.
//!
//! No deadlock: rows are taken in an order where every row comes after the rows it depends
//! on, by warps that are all running (the sweep's blocks are all resident; the level
//! analysis hands rows out through an atomic ticket), so a row only ever waits on rows that
//! running warps already hold; by induction every wait ends. A wait that still lasts
//! `timeout_ns` (a broken input or a bug, never a valid run) stores `row + 1` in `error` and
//! gives up; every other wait then gives up too, the kernel ends, and the host reports the
//! error instead of hanging.

use abi::symgs::VALUE;

use crate::device::atomic;
use crate::device::memory::{
    Relaxed, load_acquire, load_nc, load_quad, load_relaxed, load_stream, load_volatile, store_quad,
    store_relaxed, store_release,
};
use crate::device::thread::{WARP_SIZE, global_timer_ns, grid_size_1d, lane_id, nanosleep, warp_index_1d};
use crate::device::{Float, warp};
use crate::search::segment_of;

use super::{first_column_from, updated_earlier};

/// Polls of a wait between two looks at `error` and the clock.
const POLLS_PER_CHECK: u32 = 64;

/// Polls `load()` until `finished` holds for what it returns (`backoff_ns` apart when not 0)
/// and returns that. Gives up (None) when `error` is set, or sets it (to `row + 1`, the first
/// one wins) after `timeout_ns` nanoseconds. `error` and the clock are read once every
/// [`POLLS_PER_CHECK`] polls, not at each: a poll whose branch waited on a second load would
/// take two round trips to memory, and every level of the sweep waits through one.
///
/// # Safety
/// `error` is a valid device pointer; `load` reads valid memory.
#[inline(always)]
unsafe fn wait_until<V: Copy>(
    load: impl Fn() -> V,
    finished: impl Fn(V) -> bool,
    error: *mut u32,
    row: u32,
    timeout_ns: u64,
    backoff_ns: u32,
) -> Option<V> {
    let mut start = None;
    loop {
        for _ in 0..POLLS_PER_CHECK {
            let value = load();
            if finished(value) {
                return Some(value);
            }
            if backoff_ns != 0 {
                nanosleep(backoff_ns);
            }
        }
        // SAFETY (both): the caller's pointer.
        if unsafe { load_volatile(error) } != 0 {
            return None;
        }
        let now = global_timer_ns();
        let started = *start.get_or_insert(now);
        if now.wrapping_sub(started) > timeout_ns {
            unsafe { atomic::compare_and_swap(error, 0, row + 1) };
            return None;
        }
    }
}

/// Waits until `finished(*flag)` (see [`wait_until`]): relaxed polls, then one acquire load,
/// so that what the flag's release store published is visible.
///
/// # Safety
/// `flag` and `error` are valid device pointers.
#[inline(always)]
unsafe fn wait_for(
    flag: *const u32,
    finished: impl Fn(u32) -> bool,
    error: *mut u32,
    row: u32,
    timeout_ns: u64,
    backoff_ns: u32,
) -> Option<u32> {
    // SAFETY (both): the caller's pointers.
    let seen = unsafe { wait_until(|| load_relaxed(flag), &finished, error, row, timeout_ns, backoff_ns) };
    seen.map(|_| unsafe { load_acquire(flag) })
}

/// A value no arithmetic produces: the marker of a row not yet computed in
/// the value-signalled [`sweep`] (a NaN with every bit set; the GPU's NaNs have the sign clear).
pub trait Unset: Relaxed {
    const UNSET: Self;
    fn is_unset(self) -> bool;
}

impl Unset for f32 {
    const UNSET: f32 = f32::from_bits(u32::MAX);
    fn is_unset(self) -> bool {
        self.to_bits() == u32::MAX
    }
}

impl Unset for f64 {
    const UNSET: f64 = f64::from_bits(u64::MAX);
    fn is_unset(self) -> bool {
        self.to_bits() == u64::MAX
    }
}

/// The next row in sweep order for this warp (lane 0 takes the ticket, every lane gets it), or
/// None when all are taken.
///
/// # Safety
/// `ticket` is a valid device pointer; every lane of the warp calls this together.
#[inline(always)]
unsafe fn next_row(ticket: *mut u32, rows: u32, forward: bool) -> Option<u32> {
    let mut t = 0;
    if lane_id() == 0 {
        // SAFETY: the caller's pointer.
        t = unsafe { atomic::add(ticket, 1u32) };
    }
    let t = warp::shuffle_idx(t, 0);
    if t >= rows {
        return None;
    }
    Some(if forward { t } else { rows - 1 - t })
}

/// What every wait of a sweep shares: where a timed-out wait reports (`row + 1` in `error`),
/// how long a wait may last, and the pause between polls (0: spin).
#[derive(Clone, Copy)]
struct Waits {
    error: *mut u32,
    timeout_ns: u64,
    backoff_ns: u32,
}

/// How a finished row tells the rows that wait on it: `SIGNAL` is `abi::symgs::DONE_FLAGS`
/// (`done[row] == epoch` once row `row` is done; `epoch` is new for every launch, so the flags
/// need no reset) or `abi::symgs::VALUE` (`new` holds [`Unset::UNSET`] for every row at the
/// launch; `done` and `epoch` are unused).
#[derive(Clone, Copy)]
struct Handover<const SIGNAL: u32> {
    done: *mut u32,
    epoch: u32,
    waits: Waits,
}

impl<const SIGNAL: u32> Handover<SIGNAL> {
    /// `new[col]` once row `col` is done (None: the wait gave up), for a lane of row `row`.
    ///
    /// # Safety
    /// `new` holds the sweep's output, `col` < its length (and the flags').
    #[inline(always)]
    unsafe fn wait<T: Float + Unset>(&self, new: *const T, col: u32, row: u32) -> Option<T> {
        let Waits { error, timeout_ns, backoff_ns } = self.waits;
        let cell = unsafe { new.add(col as usize) };
        if SIGNAL == VALUE {
            // SAFETY (every access): col < rows, the length of `new` and `done`.
            return unsafe {
                wait_until(|| load_relaxed(cell), |v: T| !v.is_unset(), error, row, timeout_ns, backoff_ns)
            };
        }
        let epoch = self.epoch;
        unsafe { wait_for(self.done.add(col as usize), |f| f == epoch, error, row, timeout_ns, backoff_ns) }?;
        Some(unsafe { load_relaxed(cell) })
    }

    /// Stores row `row`'s value and tells the waiting rows.
    ///
    /// # Safety
    /// As `wait`, for `row`.
    #[inline(always)]
    unsafe fn publish<T: Float + Unset>(&self, new: *mut T, row: u32, value: T) {
        // SAFETY: row < rows, the length of `new` and `done`.
        unsafe {
            if SIGNAL == VALUE {
                store_relaxed(new.add(row as usize), value);
            } else {
                *new.add(row as usize) = value;
                store_release(self.done.add(row as usize), self.epoch); // publishes the value above
            }
        }
    }
}

/// One sweep direction, out of place (see the module `symgs`), `lanes_per_row` lanes per row
/// (a power of two: a warp holds `32 / lanes_per_row` rows at once).
///
/// A row reads its entries in one of two forms:
/// - whole rows (`ROWS` = `WHOLE_ROWS`, or `WHOLE_ROWS_KEEPING` to keep r_i less each row's
///   waited sum for the next half in `starts`): the columns this direction has updated (below
///   the diagonal going forward, above it going backward) are waited on, the others read from
///   `old`; where kept (rows longer than their lanes), a lane takes one of each a round;
/// - half rows (`ROWS` = `HALF_ROWS`): only the entries it waits on. The rest of x_i's
///   numerator, r_i less the sum over the entries whose values stay old for the whole
///   half-sweep, is `starts[row]`, which the half before kept (`keep` stores r_i less this
///   half's waited sum there for the next half; both halves solve for the same r), or r_i
///   alone (`from_zero`: those entries multiply zeros). Where a row is longer than its lanes,
///   this takes a lane's round of loads off the row's path, and the half reads half the
///   matrix.
///
/// Rows come in the sequence `order` (a dependency order: the host passes the rows level by
/// level, each level padded with entries of row `u32::MAX` to whole warp slots, so the rows a
/// warp holds at once share a level and never wait on each other), each entry four values:
/// the row, its first entry, its diagonal entry and its end: one 16-byte load gives a row and
/// its extent, a round trip to memory fewer than reading `row_ptr` after `order`. The extents
/// index `col_idx` and `values`: the matrix's, or a copy of its rows in `order`'s sequence
/// ([`copy_rows_in_order`]).
/// `inverse_diagonal` holds the rows' 1 / a_ii in the same sequence, read in order rather than
/// gathered. Warp `w` of the grid's `W` takes the warp slots `first_slot + w`, `+ W`, `+ 2W`,
/// ... of `order` (a slot is `32 / lanes_per_row` rows; `first_slot` is 0 but for a test of
/// stuck waits): a warp knows its rows without an atomic ticket or a block barrier. The
/// matrix, the right-hand side and the reciprocals are read once, with [`load_stream`], so
/// that they leave L2 first and the gathered vector stays.
///
/// `lanes_per_row` is a launch argument, even where it is 32, because the compiler then lays
/// the loops out differently, and the sweep is faster (same source otherwise). Fewer lanes
/// pay on short rows in wide levels; on thin levels and long rows a warp per row is faster
/// (the host's default, PERF.md). Letting a warp's rows wait on each other instead (each
/// group of lanes reducing on its own, which independent thread scheduling allows) was slower
/// still, as the warp runs its groups' polling loops one after another (PERF.md).
///
/// No deadlock, as every block of the grid is resident at once (the host launches it
/// cooperatively): a row depends only on rows earlier in `order`, and every warp takes its
/// slots in order. Take the earliest row not finished: the rows before it are, so its warp
/// (running, as every warp is) has reached it and nothing it waits on is missing; it
/// finishes, and by induction so does every row.
///
/// A finished row signals as `SIGNAL` says (see [`Handover`]); with `VALUE`, `new` holds
/// [`Unset::UNSET`] for every row at the launch ([`mark_unset`]). Launch: blocks of
/// `abi::symgs::SYNC_FREE_WARPS_PER_BLOCK` warps, all resident at once (`Launch::all_resident`).
#[gpu::kernel(
    SIGNAL = abi::symgs::DONE_FLAGS | abi::symgs::VALUE,
    ROWS = abi::symgs::WHOLE_ROWS | abi::symgs::WHOLE_ROWS_KEEPING | abi::symgs::HALF_ROWS,
    T = f32 | f64
)]
pub unsafe fn sweep<T: Float + Unset, const SIGNAL: u32, const ROWS: u32>(
    lanes_per_row: u32,
    order_len: u32,
    order: *const u32,
    first_slot: u32,
    forward: u32,
    epoch: u32,
    timeout_ns: u64,
    backoff_ns: u32,
    done: *mut u32,
    error: *mut u32,
    col_idx: *const u32,
    values: *const T,
    inverse_diagonal: *const T,
    rhs: *const T,
    old: *const T,
    from_zero: u32,
    keep: u32,
    starts: *mut T,
    new: *mut T,
) {
    let handover = Handover::<SIGNAL> { done, epoch, waits: Waits { error, timeout_ns, backoff_ns } };
    let forward = forward != 0;
    let half_rows = ROWS == abi::symgs::HALF_ROWS;
    // Whole rows keeping their waited sums add the old values' part apart.
    let apart = ROWS == abi::symgs::WHOLE_ROWS_KEEPING;
    let keep = apart || (half_rows && keep != 0);
    let rows_per_warp = WARP_SIZE / lanes_per_row;
    let (group, lane) = (lane_id() / lanes_per_row, lane_id() % lanes_per_row);
    let warps = grid_size_1d() / WARP_SIZE;
    let warp_slots = order_len.div_ceil(rows_per_warp);
    let mut slot = first_slot.saturating_add(warp_index_1d());
    while slot < warp_slots {
        let k = slot as usize * rows_per_warp as usize + group as usize;
        // SAFETY (every access): k < order_len; the host lists rows < rows with extents
        // within their entries (16-byte aligned entries), and their 1 / a_ii in the same
        // order; j < end <= nnz; columns < rows; flags and vectors hold `rows` values.
        let [row, first, diagonal, end] =
            if k < order_len as usize { unsafe { load_quad(order.add(4 * k)) } } else { [NO_ROW; 4] };
        // This lane's sum, and its old values' part where added `apart`.
        let (mut sum, mut rest) = (T::ZERO, T::ZERO);
        // The row's own terms: where x_i's numerator starts, 1 / a_ii, and r_i for what this
        // half keeps for the next.
        let mut own = (T::ZERO, T::ZERO, T::ZERO);
        if row != NO_ROW {
            let r = row as usize;
            // Loaded here and used after the waits, so that the entries' loads never wait for
            // them (the reciprocal comes from the host: no division in the kernel). Half rows
            // start from what the half before kept (a plain load: this lane overwrites it
            // below), the others from r_i.
            let from_kept = half_rows && from_zero == 0;
            let start =
                if from_kept { unsafe { *starts.add(r) } } else { unsafe { load_stream(rhs.add(r)) } };
            // Half rows that keep for the next half need r_i besides (elsewhere it is the start).
            let rhs_kept = if from_kept && keep { unsafe { load_stream(rhs.add(r)) } } else { start };
            own = (start, unsafe { load_stream(inverse_diagonal.add(k)) }, rhs_kept);
            let entry = |j: u32| unsafe {
                (load_stream(col_idx.add(j as usize)), load_stream(values.add(j as usize)))
            };
            // The entries this direction has updated (below the diagonal going forward, above
            // it going back) are waited on. A wait given up on leaves the sum wrong: the host
            // discards the sweep.
            let (below, above) = ((first, diagonal), (diagonal + 1, end));
            let (waited, unwaited) = if forward { (below, above) } else { (above, below) };
            if apart {
                // Rows longer than their lanes (the host reads half rows after this half). A
                // lane takes a waited entry and one of the others a round, and issues both
                // entries' loads and the old value's before it waits: in column order a row's
                // second round of loads came after its waits.
                let (mut j, mut jo) = (waited.0 + lane, unwaited.0 + lane);
                while j < waited.1 || jo < unwaited.1 {
                    let waited_entry = (j < waited.1).then(|| entry(j));
                    let old_term = (jo < unwaited.1).then(|| {
                        let (col, a) = entry(jo);
                        (a, unsafe { load_nc(old.add(col as usize)) })
                    });
                    if let Some((col, a)) = waited_entry {
                        let x = unsafe { handover.wait(new, col, row) }.unwrap_or(T::ZERO);
                        sum = a.mul_add(x, sum);
                    }
                    if let Some((a, x)) = old_term {
                        rest = a.mul_add(x, rest);
                    }
                    j += lanes_per_row;
                    jo += lanes_per_row;
                }
            } else {
                // An entry a lane, in column order: rows that fit their lanes whole, or only
                // the waited entries.
                let (start, stop) = if half_rows { waited } else { (first, end) };
                let mut j = start + lane;
                while j < stop {
                    let (col, a) = entry(j);
                    let x = if half_rows || updated_earlier(forward, row, col) {
                        unsafe { handover.wait(new, col, row) }.unwrap_or(T::ZERO)
                    } else if col == row {
                        T::ZERO // the diagonal: the division below stands for it
                    } else {
                        unsafe { load_nc(old.add(col as usize)) }
                    };
                    sum = a.mul_add(x, sum);
                    j += lanes_per_row;
                }
            }
        }
        // Every lane takes part in the shuffles, with a row or not. The lanes leave their
        // waits one by one; met at a warp barrier first, they shuffle together rather than
        // group by group on the diverged path, which held up every hand-over (PERF.md).
        warp::sync_warp();
        let total = warp::reduce_sum_down(if apart { sum + rest } else { sum }, lanes_per_row);
        let (start, inverse, rhs_kept) = own;
        if lane == 0 && row != NO_ROW {
            // x_i = (r_i - sum_{j != i} a_ij x_j) / a_ii, part of the sum in the start.
            unsafe { handover.publish(new, row, (start - total) * inverse) };
        }
        if keep {
            // The next half's start, after the hand-over, off the waiting rows' path.
            let waited_sum = if apart { warp::reduce_sum_down(sum, lanes_per_row) } else { total };
            if lane == 0 && row != NO_ROW {
                unsafe { *starts.add(row as usize) = rhs_kept - waited_sum };
            }
        }
        slot = slot.saturating_add(warps);
    }
}

/// The sweep's `order` (see [`sweep`]) from level lists: level `l` lists the rows
/// `level_rows[level_offsets[l]..level_offsets[l + 1]]` and fills the entries from
/// `padded_offsets[l]` on, padded to whole warp slots. A row's entry is `[row, first entry,
/// diagonal entry, end]` (columns strictly increase within a row and every row holds its
/// diagonal) and its 1 / a_ii goes to `inverse_diagonal`; padding is row `u32::MAX`, 1 / a_ii
/// 0. Each entry's number of matrix entries goes to `lengths` (0 for padding), for
/// [`copy_rows_in_order`]. A listed row out of range is reported in `error` (the row + 1) and
/// left as padding. Launch: a thread per entry (`entries_len`, the last padded offset).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn order_entries<T: Float>(
    entries_len: u32,
    levels: u32,
    level_offsets: *const u32,
    padded_offsets: *const u32,
    level_rows: *const u32,
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    diagonal: *const T,
    error: *mut u32,
    entries: *mut u32,
    inverse_diagonal: *mut T,
    lengths: *mut u32,
) {
    let at = crate::device::thread::index_1d();
    if at >= entries_len {
        return;
    }
    // SAFETY (every access): `levels + 1` offsets each, rising from 0 (to the listed rows and
    // to `entries_len`), so the level found is < levels and holds `at`; a listed row < rows
    // indexes the matrix's `rows + 1` row offsets and `rows` diagonal values; `entries_len`
    // entries of four values, reciprocals and lengths.
    unsafe {
        // The level holding `at`: the last whose padded offset is at most `at`.
        let l = segment_of(levels, at, |l| load_nc(padded_offsets.add(l as usize))) as usize;
        let (level, next) = (load_nc(level_offsets.add(l)), load_nc(level_offsets.add(l + 1)));
        let listed = level + (at - load_nc(padded_offsets.add(l)));
        let (mut entry, mut inverse) = ([NO_ROW, 0, 0, 0], T::ZERO);
        if listed < next {
            let row = load_nc(level_rows.add(listed as usize));
            if row < rows {
                let r = row as usize;
                let (first, end) = (load_nc(row_ptr.add(r)), load_nc(row_ptr.add(r + 1)));
                entry = [row, first, first_column_from(row_ptr, col_idx, row, row), end];
                inverse = T::ONE / load_nc(diagonal.add(r));
            } else {
                atomic::compare_and_swap(error, 0, row.saturating_add(1));
            }
        }
        store_quad(entries.add(4 * at as usize), entry);
        *inverse_diagonal.add(at as usize) = inverse;
        *lengths.add(at as usize) = if entry[0] == NO_ROW { 0 } else { entry[3] - entry[1] };
    }
}

/// Copies the rows of `order` (entries as [`order_entries`] writes them) in its sequence:
/// entry `k`'s row to `copy_cols` / `copy_values` from `copy_offsets[k]` on, and points the
/// entry at the copy. A warp's rows are then contiguous in memory, and so are the next
/// warp's: the sweep's loads coalesce across rows where rows are shorter than a warp. Launch:
/// a warp per entry (`len`).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn copy_rows_in_order<T: Float>(
    len: u32,
    copy_offsets: *const u32,
    col_idx: *const u32,
    values: *const T,
    order: *mut u32,
    copy_cols: *mut u32,
    copy_values: *mut T,
) {
    let k = warp_index_1d() as usize;
    if k >= len as usize {
        return;
    }
    // SAFETY (every access): k < len entries of four values, their extents within the
    // matrix (none for padding); the copy's offsets leave each row room for its entries.
    unsafe {
        let [row, first, diagonal, end] = load_quad(order.add(4 * k));
        if row == NO_ROW {
            return;
        }
        let start = load_nc(copy_offsets.add(k));
        let mut j = lane_id();
        while first + j < end {
            *copy_cols.add((start + j) as usize) = load_nc(col_idx.add((first + j) as usize));
            *copy_values.add((start + j) as usize) = load_nc(values.add((first + j) as usize));
            j += WARP_SIZE;
        }
        // Every lane has read the entry before lane 0 rewrites it.
        warp::sync_warp();
        if lane_id() == 0 {
            store_quad(order.add(4 * k), [row, start, start + (diagonal - first), start + (end - first)]);
        }
    }
}

/// An `order` slot past its end.
const NO_ROW: u32 = u32::MAX;

/// `v[i] = UNSET` for i < n: marks every row not yet computed. Launch: a thread per element.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn mark_unset<T: Float + Unset>(n: u32, v: *mut T) {
    let i = crate::device::thread::index_1d();
    if i < n {
        // SAFETY: i < n, the length of v.
        unsafe { *v.add(i as usize) = T::UNSET };
    }
}

/// The dependency levels of one sweep direction, computed the sync-free way: `level[row]` =
/// 1 + the highest level among the rows it depends on (0 for none), stored plus one so that
/// 0 means "not yet known" (`level_plus_one` zeroed before the launch, like `ticket`); `depth`
/// ends as the number of levels. Rows are taken in row order (the levels are not known yet),
/// which is slow where rows in sequence form chains (the 27-point stencil's x-lines), fast
/// elsewhere. Launch: any number of whole warps.
#[gpu::kernel]
pub unsafe fn levels(
    rows: u32,
    forward: u32,
    timeout_ns: u64,
    backoff_ns: u32,
    ticket: *mut u32,
    error: *mut u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    level_plus_one: *mut u32,
    depth: *mut u32,
) {
    let forward = forward != 0;
    // SAFETY (every access): as in `sweep`.
    while let Some(row) = unsafe { next_row(ticket, rows, forward) } {
        let r = row as usize;
        let (start, end) = unsafe { (load_nc(row_ptr.add(r)), load_nc(row_ptr.add(r + 1))) };
        let mut highest = 0; // the highest dependency level plus one, 0 for none
        let mut j = start + lane_id();
        while j < end {
            let col = unsafe { load_nc(col_idx.add(j as usize)) };
            if updated_earlier(forward, row, col) {
                let flag = unsafe { level_plus_one.add(col as usize) };
                if let Some(level_plus_one) =
                    unsafe { wait_for(flag, |f| f != 0, error, row, timeout_ns, backoff_ns) }
                {
                    highest = highest.max(level_plus_one);
                }
            }
            j += WARP_SIZE;
        }
        warp::sync_warp(); // the lanes meet after their waits, as in `sweep`
        let highest = warp::reduce_max(highest);
        if lane_id() == 0 {
            unsafe {
                // This row's level is `highest`, stored plus one.
                store_release(level_plus_one.add(r), highest + 1);
                atomic::max_u32(depth, highest + 1);
            }
        }
    }
}

/// `counts[level] += 1` for every row. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn level_counts(rows: u32, levels: u32, level_plus_one: *const u32, counts: *mut u32) {
    let row = crate::device::thread::index_1d();
    if row < rows {
        // SAFETY: row < rows; the host sized `counts` for the `levels` levels it found.
        unsafe {
            let level = (*level_plus_one.add(row as usize)).wrapping_sub(1); // MAX if never set
            if level < levels {
                atomic::add(counts.add(level as usize), 1u32);
            }
        }
    }
}

/// Lists each row at the next free slot of its level: `cursor[level]` starts at the level's
/// offset in `level_rows`. Rows of a level land in any order (they are independent, so the
/// sweep's result does not depend on it). Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn level_scatter(
    rows: u32,
    levels: u32,
    level_plus_one: *const u32,
    cursor: *mut u32,
    level_rows: *mut u32,
) {
    let row = crate::device::thread::index_1d();
    if row < rows {
        // SAFETY: row < rows; the cursors start at prefix sums of the counts, so every slot
        // taken is < rows.
        unsafe {
            let level = (*level_plus_one.add(row as usize)).wrapping_sub(1); // MAX if never set
            if level < levels {
                let slot = atomic::add(cursor.add(level as usize), 1u32);
                *level_rows.add(slot as usize) = row;
            }
        }
    }
}
