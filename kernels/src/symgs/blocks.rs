//! Multicolor SymGS on node blocks: rows whose patterns are identical (the unknowns of one
//! mesh node: 3 per node in 3-D elasticity) always neighbour each other, so a coloring of
//! single rows needs as many colors per node as it has unknowns. Grouped into blocks of `k`
//! rows, the nodes are colored instead (the graph of the blocks, `k` times fewer colors), and
//! a block's rows are relaxed one after the other by the group of lanes that holds it: the
//! sequential sweep of the matrix renumbered color by color, block by block, row by row.
//! A block's rows share their columns, so the copy keeps them once per block, with the `k`
//! rows' values side by side (`values[k e + t]`), and x is gathered once per block entry
//! instead of once per row entry.

use abi::symgs::{FORWARD_FROM_ZERO, MAX_BLOCK_ROWS};

use crate::device::memory::{load_evict_first, load_nc};
use crate::device::thread::{WARP_SIZE, index_1d, lane_id, warp_index_1d};
use crate::device::{Float, atomic, warp};

use super::multicolor::{is_backward, mix, reads_upper, rest_and_carry};

/// `hash[i]`: an order-free hash of row i's columns (equal patterns hash alike). Launch: a
/// thread per row.
#[gpu::kernel]
pub unsafe fn pattern_hash(rows: u32, row_ptr: *const u32, col_idx: *const u32, hash: *mut u32) {
    let i = index_1d();
    if i < rows {
        // SAFETY: i < rows; k < nnz.
        unsafe {
            let (start, end) = (load_nc(row_ptr.add(i as usize)), load_nc(row_ptr.add(i as usize + 1)));
            let mut h = end - start;
            for k in start..end {
                h = h.wrapping_add(mix(load_nc(col_idx.add(k as usize))));
            }
            *hash.add(i as usize) = h;
        }
    }
}

/// Row i's block: the rows of its pattern whose pattern equals its own (the pattern is
/// symmetric, so these are all the rows of that pattern). `leader[i]`: the lowest of them,
/// `rank[i]`: how many of them are below i; `sizes[0]` gets the largest `!size` (the smallest
/// size, complemented) and `sizes[1]` the largest size over the rows. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn block_members(
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    hash: *const u32,
    leader: *mut u32,
    rank: *mut u32,
    sizes: *mut u32,
) {
    let i = index_1d();
    if i >= rows {
        return;
    }
    // SAFETY (every access): i < rows; columns < rows (a square pattern); k < nnz.
    unsafe {
        let (start, end) = (load_nc(row_ptr.add(i as usize)), load_nc(row_ptr.add(i as usize + 1)));
        let own_hash = load_nc(hash.add(i as usize));
        let (mut lowest, mut below, mut size) = (i, 0u32, 0u32);
        for k in start..end {
            let j = load_nc(col_idx.add(k as usize));
            if load_nc(hash.add(j as usize)) != own_hash {
                continue;
            }
            let (j_start, j_end) = (load_nc(row_ptr.add(j as usize)), load_nc(row_ptr.add(j as usize + 1)));
            let same = j_end - j_start == end - start
                && (0..end - start).all(|q| {
                    load_nc(col_idx.add((start + q) as usize)) == load_nc(col_idx.add((j_start + q) as usize))
                });
            if same {
                size += 1;
                below += (j < i) as u32;
                lowest = lowest.min(j);
            }
        }
        *leader.add(i as usize) = lowest;
        *rank.add(i as usize) = below;
        atomic::max_u32(sizes, !size);
        atomic::max_u32(sizes.add(1), size);
    }
}

/// `is_member[i]`: 0 where row i leads its block (`leader[i] == i`), else 1. Sorted by it
/// (stably), the leaders come first in row order: the blocks numbered in the order of their
/// lowest rows. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn leader_states(rows: u32, leader: *const u32, is_member: *mut u64) {
    let i = index_1d();
    if i < rows {
        // SAFETY: i < rows.
        unsafe { *is_member.add(i as usize) = (load_nc(leader.add(i as usize)) != i) as u64 };
    }
}

/// Block b, led by row `leaders[b]`: `block_of` its leader row, and the end of its extent in
/// the graph of the blocks, `block_ptr[b + 1]`, the leaders' lengths up to b over k (each
/// leader row holds whole blocks); `before[b]` holds the lengths of the leaders before b less
/// their diagonals (the sort's row pointers). Launch: a thread per block.
#[gpu::kernel]
pub unsafe fn number_blocks(
    blocks: u32,
    k: u32,
    leaders: *const u32,
    row_ptr: *const u32,
    before: *const u32,
    block_of: *mut u32,
    block_ptr: *mut u32,
) {
    let b = index_1d();
    if b < blocks {
        // SAFETY: b < blocks, the length of `leaders` and `before`, and of `block_ptr` less
        // one; leaders are rows.
        unsafe {
            let row = load_nc(leaders.add(b as usize)) as usize;
            let len = load_nc(row_ptr.add(row + 1)) - load_nc(row_ptr.add(row));
            *block_of.add(row) = b;
            *block_ptr.add(b as usize + 1) = (load_nc(before.add(b as usize)) + b + len) / k;
        }
    }
}

/// Row i of a block that it does not lead: its block, that of its leader (`number_blocks`);
/// and every row into its place in its block, `members[k block + rank[i]]`. Launch: a thread
/// per row.
#[gpu::kernel]
pub unsafe fn place_members(
    rows: u32,
    k: u32,
    leader: *const u32,
    rank: *const u32,
    block_of: *mut u32,
    members: *mut u32,
) {
    let i = index_1d();
    if i >= rows {
        return;
    }
    // SAFETY: i < rows; leaders are rows whose blocks `number_blocks` set, and ranks are below
    // k, so each place lies in the k * blocks = rows members.
    unsafe {
        let lead = load_nc(leader.add(i as usize));
        let block = *block_of.add(lead as usize);
        if lead != i {
            *block_of.add(i as usize) = block;
        }
        *members.add((block * k + load_nc(rank.add(i as usize))) as usize) = i;
    }
}

/// `first[b]`: the first place p of `order` (rows) that holds a row of block b. Launch: a
/// thread per place, `first` filled with `u32::MAX`.
#[gpu::kernel]
pub unsafe fn first_places(places: u32, order: *const u32, block_of: *const u32, first: *mut u32) {
    let p = index_1d();
    if p < places {
        // SAFETY: p < places, the length of `order`, whose rows have blocks.
        unsafe {
            let block = load_nc(block_of.add(load_nc(order.add(p as usize)) as usize));
            atomic::min_u32(first.add(block as usize), p);
        }
    }
}

/// `is_later[p]`: 0 where place p of `order` is its block's first place (`first_places`), 1
/// elsewhere. Sorted by it (stably), the places come in the order their blocks first appear.
/// Launch: a thread per place.
#[gpu::kernel]
pub unsafe fn first_place_states(
    places: u32,
    order: *const u32,
    block_of: *const u32,
    first: *const u32,
    is_later: *mut u64,
) {
    let p = index_1d();
    if p < places {
        // SAFETY: p < places, the length of `order` and `is_later`; rows have blocks.
        unsafe {
            let block = load_nc(block_of.add(load_nc(order.add(p as usize)) as usize));
            *is_later.add(p as usize) = (load_nc(first.add(block as usize)) != p) as u64;
        }
    }
}

/// `blocks_in_order[q]`: the block of the row at place `places[q]` of `order`. Launch: a
/// thread per block.
#[gpu::kernel]
pub unsafe fn blocks_at_places(
    blocks: u32,
    places: *const u32,
    order: *const u32,
    block_of: *const u32,
    blocks_in_order: *mut u32,
) {
    let q = index_1d();
    if q < blocks {
        // SAFETY: q < blocks, the length of `places` and `blocks_in_order`; places lie in
        // `order`, whose rows have blocks.
        unsafe {
            let row = load_nc(order.add(load_nc(places.add(q as usize)) as usize));
            *blocks_in_order.add(q as usize) = load_nc(block_of.add(row as usize));
        }
    }
}

/// `position[new_to_old[c]] = c`: where each block lands in the copy. Launch: a thread per
/// block.
#[gpu::kernel]
pub unsafe fn block_positions(blocks: u32, new_to_old: *const u32, position: *mut u32) {
    let c = index_1d();
    if c < blocks {
        // SAFETY: c < blocks; `new_to_old` a permutation of the blocks.
        unsafe { *position.add(load_nc(new_to_old.add(c as usize)) as usize) = c };
    }
}

/// The graph of the blocks: block b's neighbours are the blocks of the leaders (`leader[j] ==
/// j`) in its leader row `members[k b]`, numbered `block_of[j]`, into `block_col[block_ptr[b]..]`
/// (in the leader row's order, so sorted). Launch: a thread per block.
#[gpu::kernel]
pub unsafe fn block_graph(
    blocks: u32,
    k: u32,
    members: *const u32,
    leader: *const u32,
    block_of: *const u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    block_ptr: *const u32,
    block_col: *mut u32,
) {
    let b = index_1d();
    if b >= blocks {
        return;
    }
    // SAFETY: b < blocks, k rows each in `members`; rows and columns < rows; the host sized
    // block b's extent to the leader row's length / k, its leaders' count.
    unsafe {
        let row = load_nc(members.add((b * k) as usize)) as usize;
        let mut to = load_nc(block_ptr.add(b as usize)) as usize;
        for q in load_nc(row_ptr.add(row))..load_nc(row_ptr.add(row + 1)) {
            let j = load_nc(col_idx.add(q as usize)) as usize;
            if load_nc(leader.add(j)) as usize == j {
                *block_col.add(to) = load_nc(block_of.add(j));
                to += 1;
            }
        }
    }
}

/// Block `c` of the colored copy from block `new_to_old[c]` of A (rows `members[k b..k b +
/// k]`, in rank order): its rows into `rows_of[k c..]`; the entries of its leader row outside
/// the block, those of lower colors first and those of higher colors from `upper_start[c]` on
/// (each part in A's order), into `new_col_idx[k block_ptr[c]..]` (with `copy_columns` as rows
/// of the copy: row t of block b of A is row `k position[b] + t`), each with the `k` rows'
/// values side by side in `new_values` (the rows share the pattern, so an entry's place in
/// the row is the same in each); the block's own `k x k` entries into `diagonal_blocks[k^2
/// c..]`, row-major. `state` holds each block's color in its low 32 bits. Launch: a warp per
/// block.
#[gpu::kernel(T = f32 | f64)]
#[allow(clippy::too_many_arguments)] // the blocks, A, and the copy's arrays
pub unsafe fn permute_blocks<T: Float>(
    blocks: u32,
    k: u32,
    new_to_old: *const u32,
    copy_columns: u32,
    position: *const u32,
    members: *const u32,
    state: *const u64,
    block_of: *const u32,
    rank: *const u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    block_ptr: *const u32,
    rows_of: *mut u32,
    upper_start: *mut u32,
    new_col_idx: *mut u32,
    new_values: *mut T,
    diagonal_blocks: *mut T,
) {
    let c = warp_index_1d();
    if c >= blocks {
        return; // the whole warp
    }
    let (lane, ku) = (lane_id(), k as usize);
    let below = (1u32 << lane) - 1;
    // SAFETY (every access): c < blocks; old < blocks, its k members rows of A; q < the leader
    // row's length, which each member row shares; columns < rows; each destination lies in
    // block c's extent (k times its neighbour blocks) or its k x k block.
    let old = unsafe { load_nc(new_to_old.add(c as usize)) };
    let member = |t: usize| unsafe { load_nc(members.add(old as usize * ku + t)) } as usize;
    if (lane as usize) < ku {
        unsafe { *rows_of.add(c as usize * ku + lane as usize) = member(lane as usize) as u32 };
    }
    let color = unsafe { *state.add(old as usize) } as u32;
    let leader_row = member(0);
    let (start, len) = unsafe {
        let start = load_nc(row_ptr.add(leader_row));
        (start, load_nc(row_ptr.add(leader_row + 1)) - start)
    };
    // An entry of the leader row: (column, its block, whether that is this block, whether
    // its color is lower).
    let entry = |q: u32| {
        if q >= len {
            return (u32::MAX, 0, false, false);
        }
        let col = unsafe { load_nc(col_idx.add((start + q) as usize)) };
        let block = unsafe { load_nc(block_of.add(col as usize)) };
        (col, block, block == old, block != old && (unsafe { *state.add(block as usize) } as u32) < color)
    };
    let mut lower_count = 0;
    let mut base = 0;
    while base < len {
        lower_count += warp::ballot(entry(base + lane).3).count_ones();
        base += WARP_SIZE;
    }
    let destination = k * unsafe { load_nc(block_ptr.add(c as usize)) };
    if lane == 0 {
        unsafe { *upper_start.add(c as usize) = destination + lower_count };
    }
    let (mut lower_seen, mut upper_seen) = (0, 0);
    let mut base = 0;
    while base < len {
        let q = base + lane;
        let (col, block, in_block, is_lower) = entry(q);
        let is_upper = q < len && !in_block && !is_lower;
        let (lowers, uppers) = (warp::ballot(is_lower), warp::ballot(is_upper));
        if q < len {
            let value =
                |t: usize| unsafe { load_nc(values.add((load_nc(row_ptr.add(member(t))) + q) as usize)) };
            let u = unsafe { load_nc(rank.add(col as usize)) };
            if in_block {
                let u = u as usize;
                for t in 0..ku {
                    unsafe { *diagonal_blocks.add((c as usize * ku + t) * ku + u) = value(t) };
                }
            } else {
                let to = if is_lower {
                    destination + lower_seen + (lowers & below).count_ones()
                } else {
                    destination + lower_count + upper_seen + (uppers & below).count_ones()
                } as usize;
                let column = if copy_columns != 0 {
                    k * unsafe { load_nc(position.add(block as usize)) } + u
                } else {
                    col
                };
                unsafe { *new_col_idx.add(to) = column };
                for t in 0..ku {
                    unsafe { *new_values.add(to * ku + t) = value(t) };
                }
            }
        }
        lower_seen += lowers.count_ones();
        upper_seen += uppers.count_ones();
        base += WARP_SIZE;
    }
}

/// Blocks `first..first + count` of the colored copy (one color), `W` lanes per block of `K`
/// rows. The lanes sum each row's entries outside the block (of lower colors, and of higher
/// colors from `upper_start[c]`: x gathered once per entry for the block's K rows), as
/// `relax_color` does for one row, with the same sweeps (`abi::symgs`'s constants) and the
/// same use of `carried`; then the group relaxes the block's rows in order (backward: in
/// reverse order) through its `K x K` diagonal block, each row taking its block neighbours'
/// newest values: lane t holds row t, and shuffles hand each new value to the other lanes.
/// With `and_back` (the last color, which has no entries of higher colors) the forward sweep
/// relaxes the rows again in reverse order at once, as the backward sweep would.
///
/// x in A's order, or with `in_copy_order` (columns numbered as rows of the copy) in
/// `x_copy`, x in the copy's order, where a neighbour block's K values lie side by side and
/// share sectors; there the backward relaxations also write their values to `x`, in A's order,
/// which every sweep relaxes backward last. Launch: `W >= K` threads per block, blocks a
/// multiple of 32.
#[gpu::kernel(W = 2 | 4 | 8 | 16 | 32, K = 2 | 3 | 4, T = f32 | f64)]
#[allow(clippy::too_many_arguments)] // the color, the copy and the vectors
pub unsafe fn relax_block<T: Float, const W: u32, const K: u32>(
    sweep: u32,
    and_back: u32,
    first: u32,
    count: u32,
    rows_of: *const u32,
    block_ptr: *const u32,
    upper_start: *const u32,
    col_idx: *const u32,
    values: *const T,
    diagonal_blocks: *const T,
    carried: *mut T,
    r: *const T,
    in_copy_order: u32,
    x: *mut T,
    x_copy: *mut T,
) {
    let b = index_1d() / W;
    let lane = lane_id() % W;
    let c = first.wrapping_add(b) as usize;
    // The vector the columns number.
    let swept = if in_copy_order != 0 { x_copy } else { x };
    // Groups past the color still take part in the shuffles, with no entries.
    let (start, split, end) = if b < count {
        // SAFETY: first + count <= blocks, so c < blocks and c + 1 <= blocks.
        unsafe {
            (K * load_nc(block_ptr.add(c)), load_nc(upper_start.add(c)), K * load_nc(block_ptr.add(c + 1)))
        }
    } else {
        (0, 0, 0)
    };
    // Lane t < K of the group holds row t of the block: what the update needs of it is
    // loaded now, in the shadow of the dot products.
    let row = (lane < K && b < count).then(|| c * K as usize + lane as usize);
    // SAFETY: row < rows (c < blocks), its K x K block's row in range; rows_of maps to rows
    // of x, and x_copy (in the copy's order) holds a value per row of the copy.
    let own = row.map(|row| unsafe {
        let mut own = BlockRow::<T, K>::load(sweep, row, rows_of, diagonal_blocks, carried, r);
        if sweep != FORWARD_FROM_ZERO {
            own.value = *swept.add(if in_copy_order != 0 { row } else { own.at });
        }
        own
    });
    let zero = [T::ZERO; MAX_BLOCK_ROWS];
    // SAFETY (both): start <= split <= end <= the copy's entries; K values per entry; columns
    // < rows.
    let lower = if !is_backward(sweep) {
        unsafe { block_dot::<T, W, K>(start, split, lane, col_idx, values, swept) }
    } else {
        zero
    };
    let upper = if reads_upper(sweep) {
        unsafe { block_dot::<T, W, K>(split, end, lane, col_idx, values, swept) }
    } else {
        zero
    };
    // Each lane t < K takes its row's sums.
    let (mut own_lower, mut own_upper) = (T::ZERO, T::ZERO);
    each_row::<K>(|t| {
        let (l, u) = (warp::reduce_sum_groups(lower[t], W), warp::reduce_sum_groups(upper[t], W));
        if lane as usize == t {
            (own_lower, own_upper) = (l, u);
        }
    });
    let own = own.unwrap_or(BlockRow::EMPTY);
    // SAFETY: only lane t of this group touches row t's slot of carried, and its x below.
    let rest = unsafe { own.rest(sweep, row, own_lower, own_upper, carried) };
    // Every lane keeps the block's current values; each step's row is relaxed by its lane and
    // handed to the others.
    let group_lane = lane_id() - lane;
    let mut value = [T::ZERO; MAX_BLOCK_ROWS];
    each_row::<K>(|u| value[u] = warp::shuffle_idx(own.value, group_lane + u as u32));
    let mut relax = |t: usize, backward: bool| {
        let mut sum = rest;
        each_row::<K>(|u| {
            if u != t {
                sum = (-own.block[u]).mul_add(value[u], sum);
            }
        });
        value[t] = warp::shuffle_idx(sum / own.block[t], group_lane + t as u32);
        if let Some(row) = row
            && lane as usize == t
        {
            // SAFETY: row t of this block: only this lane writes its x, no other block of the
            // color reads it.
            unsafe {
                if in_copy_order != 0 {
                    *x_copy.add(row) = value[t];
                }
                if in_copy_order == 0 || backward {
                    *x.add(own.at) = value[t];
                }
            }
        }
    };
    if is_backward(sweep) {
        each_row_reversed::<K>(|t| relax(t, true));
    } else {
        each_row::<K>(|t| relax(t, false));
        if and_back != 0 {
            each_row_reversed::<K>(|t| relax(t, true));
        }
    }
}

/// Calls `f(t)` for t in 0..K, each call with t a constant (no loop), so that arrays indexed by
/// t stay in registers (a loop over them kept the f64 kernel's sums in local memory).
#[inline(always)]
fn each_row<const K: u32>(mut f: impl FnMut(usize)) {
    f(0);
    if K > 1 {
        f(1);
    }
    if K > 2 {
        f(2);
    }
    if K > 3 {
        f(3);
    }
}

/// As [`each_row`], t from K - 1 down to 0.
#[inline(always)]
fn each_row_reversed<const K: u32>(mut f: impl FnMut(usize)) {
    if K > 3 {
        f(3);
    }
    if K > 2 {
        f(2);
    }
    if K > 1 {
        f(1);
    }
    f(0);
}

/// This lane's share, lanes `W` apart, of `sum_e values[K e + t] x[col_idx[e]]` over
/// `begin..end` for each row t < K of the block; the entries read as in `group_dots`, four
/// gathers of x in flight.
///
/// # Safety
/// `begin..end` lies in the copy, `K` values per entry; columns are < the length of `x`.
#[inline(always)]
unsafe fn block_dot<T: Float, const W: u32, const K: u32>(
    begin: u32,
    end: u32,
    lane: u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
) -> [T; MAX_BLOCK_ROWS] {
    let mut sums = [T::ZERO; MAX_BLOCK_ROWS];
    // SAFETY (both): the caller's ranges.
    let gather = |e: u32| unsafe { *x.add(load_evict_first(col_idx.add(e as usize)) as usize) };
    let mut add = |e: u32, xe: T| {
        let row_values = unsafe { values.add(e as usize * K as usize) };
        each_row::<K>(|t| sums[t] = unsafe { load_evict_first(row_values.add(t)) }.mul_add(xe, sums[t]));
    };
    let mut e = begin + lane;
    while e + 3 * W < end {
        let xs = [gather(e), gather(e + W), gather(e + 2 * W), gather(e + 3 * W)];
        add(e, xs[0]);
        add(e + W, xs[1]);
        add(e + 2 * W, xs[2]);
        add(e + 3 * W, xs[3]);
        e += 4 * W;
    }
    while e < end {
        add(e, gather(e));
        e += W;
    }
    sums
}

/// What lane t of a block's group keeps of row t for the block's update.
#[derive(Clone, Copy)]
struct BlockRow<T, const K: u32> {
    /// Row t of the K x K diagonal block.
    block: [T; MAX_BLOCK_ROWS],
    /// `carried` at the row (r minus the lower sum backward, the kept upper sum forward).
    kept: T,
    /// r at the row (forward sweeps).
    r_i: T,
    /// x at the row (0 from zero).
    value: T,
    /// The row's index in r and x.
    at: usize,
}

impl<T: Float, const K: u32> BlockRow<T, K> {
    /// A lane without a row.
    const EMPTY: Self =
        BlockRow { block: [T::ZERO; MAX_BLOCK_ROWS], kept: T::ZERO, r_i: T::ZERO, value: T::ZERO, at: 0 };

    /// All but its x (`value`).
    ///
    /// # Safety
    /// `row` < rows, the length of `rows_of` and `carried`, and its block row lies in
    /// `diagonal_blocks`; `rows_of` maps to rows of r.
    #[inline(always)]
    unsafe fn load(
        sweep: u32,
        row: usize,
        rows_of: *const u32,
        diagonal_blocks: *const T,
        carried: *const T,
        r: *const T,
    ) -> Self {
        let mut own = Self::EMPTY;
        // SAFETY: the caller's bounds.
        unsafe {
            let i = load_nc(rows_of.add(row)) as usize;
            own.at = i;
            let block_row = diagonal_blocks.add(row * K as usize);
            each_row::<K>(|u| own.block[u] = load_nc(block_row.add(u)));
            own.kept = *carried.add(row);
            if !is_backward(sweep) {
                own.r_i = load_nc(r.add(i));
            }
        }
        own
    }

    /// The row's r minus its sums outside the block ([`rest_and_carry`]); keeps in
    /// `carried[row]` what the sweep keeps (the lanes without a row keep nothing).
    ///
    /// # Safety
    /// `row` < rows, the length of `carried`, and no other thread touches carried[row].
    #[inline(always)]
    unsafe fn rest(&self, sweep: u32, row: Option<usize>, lower: T, upper: T, carried: *mut T) -> T {
        let (rest, keep) = rest_and_carry(sweep, self.r_i, self.kept, lower, upper);
        if let (Some(row), Some(keep)) = (row, keep) {
            // SAFETY: the caller's bounds.
            unsafe { *carried.add(row) = keep };
        }
        rest
    }
}
