//! CSR SpMV kernels, from the reports' classics to the fast adaptive kernel.
//!
//! Arguments common to all: `rows`, `row_ptr` (rows + 1 offsets), `col_idx` and `values`
//! (nnz each), `x` (cols), `y` (rows). Launch shapes are given per kernel; every kernel
//! checks its row or nonzero index against the sizes passed in.

use crate::device::memory::{
    LoadNc, fence_gpu, load_evict_first, load_nc, load_relaxed, load_stream, store_relaxed,
};
use crate::device::shared;
use crate::device::thread::{
    WARP_SIZE, block_dim_x, block_idx_x, index_1d, lane_id, sync_threads, thread_idx_x, warp_id,
};
use crate::device::warp::{self, sync_warp};
use crate::device::{Float, atomic};
use crate::search::segment_of;

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
        // SAFETY: the search reads starts below rows.
        row = segment_of(rows, k, |r| unsafe { *row_ptr.add(r as usize) });
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
/// through the read-only path; with `EVICT_FIRST` = 1 the entries are read first out of L2
/// ([`load_entry`]), which the host's timing at upload picks where it is faster. Each group
/// takes `R` rows (1, 2 or 4); with more than one it loads the first `2 W` entries of all of
/// them before it adds any: on short rows a lane then has `R` times the loads in flight, which
/// is what keeps the memory busy there. The warp's rows are `32 R / W` consecutive ones, the
/// groups side by side within each of its `R` turns. With `LONG` = 1, rows longer than
/// `long_row` are left to blocks before the rows' ones, in the same launch: each of their
/// warps takes one of the `chunks` pieces of a long row (see [`long_row_chunk`]), so a row of
/// millions spreads over the whole GPU, its latency hidden behind the short rows', and a small
/// matrix with a few long rows still costs one launch; with `LONG` = 0 there are no chunks
/// and no prologue, which slows matrices of short rows (PERF.md).
/// Launch: a warp per chunk, then `32` threads per `32 R / W` rows; blocks a multiple of 32.
#[gpu::kernel(W = 2 | 4 | 8 | 16 | 32, R = 1 | 2 | 4, EVICT_FIRST = 0 | 1, LONG = 0 | 1, T = f32 | f64)]
#[inline(always)]
pub unsafe fn vector<T: Float, const W: u32, const R: u32, const EVICT_FIRST: u32, const LONG: u32>(
    rows: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
    long_row: u32,
    chunks: u32,
    chunk_rows: *const u32,
    chunk_starts: *const u32,
    partials: *mut T,
    arrivals: *mut u32,
) {
    // The long rows' chunks take the grid's first blocks, the rows the rest.
    let (long_row, first_warp) = if LONG == 0 {
        (u32::MAX, 0)
    } else {
        let warps = block_dim_x() / WARP_SIZE;
        let chunk_blocks = chunks.div_ceil(warps);
        if block_idx_x() < chunk_blocks {
            let chunk = block_idx_x() * warps + warp_id();
            let chunks =
                LongRowChunks { count: chunks, rows: chunk_rows, starts: chunk_starts, partials, arrivals };
            // SAFETY: the caller's matrix, vectors and chunks.
            unsafe { long_row_chunk(chunk, chunks, row_ptr, col_idx, values, x, y) };
            return; // the whole warp leaves together
        }
        (long_row, chunk_blocks * warps)
    };
    let columns = CsrColumns::<EVICT_FIRST> { row_ptr, col_idx };
    // SAFETY: the caller's CSR matrix and vectors.
    unsafe { vector_rows::<T, _, W, R, EVICT_FIRST>(rows, columns, values, x, y, (long_row, first_warp)) }
}

/// Kernel 9: [`vector`] on a matrix whose rows repeat a few patterns (stencils, structured
/// meshes): row `r`'s columns are `r + offsets[k]` for the `k`-th entry of its pattern, so no
/// column index is read from memory, only the row's pattern number (a byte, `pattern_of`) and
/// its first entry (`row_ptr`); the patterns' offsets (`pattern_start[p]..pattern_start[p +
/// 1]` in `offsets`, as wrapping u32) are few and stay in L1. 4 (f32) or 8 (f64) bytes per
/// nonzero instead of 8 or 12. The host builds the patterns only where every row's is one of
/// at most 256 (a byte each). Launch: as [`vector`].
#[gpu::kernel(W = 2 | 4 | 8 | 16 | 32, R = 1 | 2 | 4, T = f32 | f64)]
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the matrix in four arrays, the vectors
pub unsafe fn patterns<T: Float, const W: u32, const R: u32>(
    rows: u32,
    row_ptr: *const u32,
    pattern_of: *const u8,
    pattern_start: *const u32,
    offsets: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let columns = PatternColumns { row_ptr, pattern_of, pattern_start, offsets };
    // SAFETY: the caller's matrix and vectors; no pattern is long.
    unsafe { vector_rows::<T, _, W, R, 0>(rows, columns, values, x, y, (u32::MAX, 0)) }
}

/// Where [`vector_rows`] finds a row's entries and their columns.
trait Columns: Copy {
    /// What a row needs to give its columns.
    type Row: Copy + Default;

    /// Row `row`'s entries, `start..end`, and its column source.
    ///
    /// # Safety
    /// row < the matrix's rows.
    unsafe fn row(self, row: u32) -> (u32, u32, Self::Row);

    /// The column of entry `j` (within the row's entries) of a row.
    ///
    /// # Safety
    /// `j` is one of the row's entries.
    unsafe fn column(self, row: Self::Row, j: u32) -> u32;
}

/// A CSR matrix's own column indices, read as [`load_entry`] says.
#[derive(Clone, Copy)]
struct CsrColumns<const EVICT_FIRST: u32> {
    row_ptr: *const u32,
    col_idx: *const u32,
}

impl<const EVICT_FIRST: u32> Columns for CsrColumns<EVICT_FIRST> {
    type Row = ();

    #[inline(always)]
    unsafe fn row(self, row: u32) -> (u32, u32, ()) {
        // SAFETY: row < rows, and row_ptr holds rows + 1 offsets.
        unsafe { (load_nc(self.row_ptr.add(row as usize)), load_nc(self.row_ptr.add(row as usize + 1)), ()) }
    }

    #[inline(always)]
    unsafe fn column(self, _: (), j: u32) -> u32 {
        // SAFETY: j < nnz.
        unsafe { load_entry::<_, EVICT_FIRST>(self.col_idx.add(j as usize)) }
    }
}

/// Columns rebuilt from row patterns (see [`patterns`]).
#[derive(Clone, Copy)]
struct PatternColumns {
    row_ptr: *const u32,
    pattern_of: *const u8,
    pattern_start: *const u32,
    offsets: *const u32,
}

impl Columns for PatternColumns {
    /// The row, and where its pattern's offsets start less where its entries start (wrapping),
    /// so that entry j's offset is at that plus j.
    type Row = (u32, u32);

    #[inline(always)]
    unsafe fn row(self, row: u32) -> (u32, u32, (u32, u32)) {
        // SAFETY: row < rows; the patterns were built from this matrix (pattern numbers below
        // the dictionary's length, each pattern the row's length).
        unsafe {
            let start = load_nc(self.row_ptr.add(row as usize));
            let pattern = load_nc(self.pattern_of.add(row as usize)) as usize;
            let (first, last) =
                (load_nc(self.pattern_start.add(pattern)), load_nc(self.pattern_start.add(pattern + 1)));
            (start, start + (last - first), (row, first.wrapping_sub(start)))
        }
    }

    #[inline(always)]
    unsafe fn column(self, (row, shift): (u32, u32), j: u32) -> u32 {
        // SAFETY: j is the row's entry, so j + shift is within its pattern's offsets.
        row.wrapping_add(unsafe { load_nc(self.offsets.add(j.wrapping_add(shift) as usize)) })
    }
}

/// The body of [`vector`] and [`patterns`]: `R` rows for each group of `W` lanes from the
/// grid's warp `first_warp` on, their columns from `columns`; rows longer than `long_row` are
/// left to [`long_row_chunk`].
///
/// # Safety
/// `columns` describes a matrix of `rows` rows whose columns are below x's length; `values`
/// holds its entries; y holds `rows` values.
#[inline(always)]
unsafe fn vector_rows<T: Float, C: Columns, const W: u32, const R: u32, const EVICT_FIRST: u32>(
    rows: u32,
    columns: C,
    values: *const T,
    x: *const T,
    y: *mut T,
    (long_row, first_warp): (u32, u32),
) {
    let lane = lane_id() % W;
    let row = |k: usize| group_row::<W, R>(k, first_warp);
    // The row whose y the group stores: none (u32::MAX) for a long row, its chunks' to write.
    let own_row = |k: usize, long: bool| if long { u32::MAX } else { row(k) };
    let (mut j, mut end) = ([0u32; MAX_ROWS_PER_GROUP], [0u32; MAX_ROWS_PER_GROUP]);
    let mut source = [C::Row::default(); MAX_ROWS_PER_GROUP];
    let mut long = [false; MAX_ROWS_PER_GROUP];
    for k in 0..R as usize {
        // Out-of-range rows are empty; their groups still take part in the shuffles.
        if row(k) < rows {
            // SAFETY: row < rows.
            let (start, stop, row_source) = unsafe { columns.row(row(k)) };
            long[k] = stop - start > long_row;
            (j[k], end[k], source[k]) = (start + lane, if long[k] { start } else { stop }, row_source);
        }
    }
    // SAFETY (the loads below): every entry read is < end <= nnz; columns < cols; inputs are
    // read-only here.
    if R == 1 {
        // One row: its loop has two loads in flight.
        let [sum0, sum1] = unsafe {
            add_entries::<T, C, W, EVICT_FIRST>(j[0], end[0], (columns, source[0]), values, x, [T::ZERO; 2])
        };
        // SAFETY: y holds `rows` values.
        unsafe { store_group_sum::<T, W>(sum0 + sum1, own_row(0, long[0]), rows, y) };
        return;
    }
    // Several rows: the first two steps of every row are loaded before any product.
    let (mut c, mut v) = ([[0u32; 2]; MAX_ROWS_PER_GROUP], [[T::ZERO; 2]; MAX_ROWS_PER_GROUP]);
    for k in 0..R as usize {
        for step in 0..2 {
            let at = j[k] + step as u32 * W;
            if at < end[k] {
                unsafe {
                    c[k][step] = columns.column(source[k], at);
                    v[k][step] = load_entry::<_, EVICT_FIRST>(values.add(at as usize));
                }
            }
        }
    }
    let (mut sum0, mut sum1) = ([T::ZERO; MAX_ROWS_PER_GROUP], [T::ZERO; MAX_ROWS_PER_GROUP]);
    for k in 0..R as usize {
        if j[k] < end[k] {
            unsafe { sum0[k] = v[k][0] * load_nc(x.add(c[k][0] as usize)) };
        }
        if j[k] + W < end[k] {
            unsafe { sum1[k] = v[k][1] * load_nc(x.add(c[k][1] as usize)) };
        }
    }
    for k in 0..R as usize {
        let from = j[k] + 2 * W;
        [sum0[k], sum1[k]] = unsafe {
            add_entries::<T, C, W, EVICT_FIRST>(
                from,
                end[k],
                (columns, source[k]),
                values,
                x,
                [sum0[k], sum1[k]],
            )
        };
    }
    for k in 0..R as usize {
        // SAFETY: as above.
        unsafe { store_group_sum::<T, W>(sum0[k] + sum1[k], own_row(k, long[k]), rows, y) };
    }
}

/// Adds the products of a row's entries `j`, `j + W`, .. below `end` to `sums`, two loads in
/// flight (entries `j + 2 i W` to the first sum, `j + (2 i + 1) W` to the second).
///
/// # Safety
/// Entries below `end` are the row's; their columns within x.
#[inline(always)]
unsafe fn add_entries<T: Float, C: Columns, const W: u32, const EVICT_FIRST: u32>(
    mut j: u32,
    end: u32,
    (columns, source): (C, C::Row),
    values: *const T,
    x: *const T,
    [mut sum0, mut sum1]: [T; 2],
) -> [T; 2] {
    // SAFETY: the caller's bounds.
    unsafe {
        while j + W < end {
            let (c0, c1) = (columns.column(source, j), columns.column(source, j + W));
            let (v0, v1) = (
                load_entry::<_, EVICT_FIRST>(values.add(j as usize)),
                load_entry::<_, EVICT_FIRST>(values.add((j + W) as usize)),
            );
            sum0 = v0.mul_add(load_nc(x.add(c0 as usize)), sum0);
            sum1 = v1.mul_add(load_nc(x.add(c1 as usize)), sum1);
            j += 2 * W;
        }
        if j < end {
            let c0 = columns.column(source, j);
            sum0 = load_entry::<_, EVICT_FIRST>(values.add(j as usize))
                .mul_add(load_nc(x.add(c0 as usize)), sum0);
        }
    }
    [sum0, sum1]
}

/// The most rows a group of [`vector`], [`patterns`] or [`gaps16`] takes.
const MAX_ROWS_PER_GROUP: usize = 4;

/// Row `k` (below `R`) of this lane's group, where groups of `W` lanes take `R` rows each from
/// the grid's warp `first_warp` on: a warp's `32 R / W` rows are consecutive, its groups side
/// by side within each of `R` turns, so that each turn's loads stay coalesced.
#[inline(always)]
fn group_row<const W: u32, const R: u32>(k: usize, first_warp: u32) -> u32 {
    const { assert!(R as usize <= MAX_ROWS_PER_GROUP) };
    let groups = WARP_SIZE / W;
    (index_1d() / WARP_SIZE - first_warp) * groups * R + lane_id() / W + k as u32 * groups
}

/// A matrix entry of [`vector`]: through the read-only path, and with `EVICT_FIRST` = 1 first
/// out of L2 when room is needed, so that the entries streaming past leave x's lines there (a
/// gain where x is gathered far and wide, a loss where rows are read as well through L1 alone:
/// PERF.md).
///
/// # Safety
/// As [`load_nc`].
#[inline(always)]
unsafe fn load_entry<V: LoadNc, const EVICT_FIRST: u32>(address: *const V) -> V {
    // SAFETY: the caller's address.
    unsafe { if EVICT_FIRST != 0 { load_evict_first(address) } else { load_nc(address) } }
}

/// Adds up the sums of a group of `W` lanes (a shuffle tree; every lane of the warp takes part)
/// and stores the total in `y[row]` from the group's first lane, if `row < rows`.
///
/// # Safety
/// `y` holds `rows` values.
#[inline(always)]
unsafe fn store_group_sum<T: Float, const W: u32>(sum: T, row: u32, rows: u32, y: *mut T) {
    let sum = warp::reduce_sum_groups(sum, W);
    if lane_id().is_multiple_of(W) && row < rows {
        // SAFETY: row < rows.
        unsafe { *y.add(row as usize) = sum };
    }
}

/// Kernel 8: [`vector`] on a compressed copy of the column indices: each row's first column
/// (`row_base`) and the gaps between its consecutive columns (`gaps`, 16 bits each, the first
/// 0), so 2 bytes per nonzero instead of 4. A group of `W` lanes per row takes the row `W`
/// entries at a time and rebuilds their columns by a prefix sum of the gaps across the group.
/// Each group takes `R` rows (1 or 2) in the same steps, as [`vector`] does: a lane then has
/// `R` times the loads in flight, on short rows and long. The host builds the copy only
/// where every gap fits. Launch: as [`vector`].
#[gpu::kernel(W = 2 | 4 | 8 | 16 | 32, R = 1 | 2, T = f32 | f64)]
#[inline(always)]
pub unsafe fn gaps16<T: Float, const W: u32, const R: u32>(
    rows: u32,
    row_ptr: *const u32,
    row_base: *const u32,
    gaps: *const u16,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let row = |k: usize| group_row::<W, R>(k, 0);
    let lane = lane_id() % W;
    let last_lane_of_group = lane_id() - lane + W - 1;
    // Each row's entries and the column of its last entry so far (out-of-range rows are empty).
    let (mut start, mut end, mut column) =
        ([0u32; MAX_ROWS_PER_GROUP], [0u32; MAX_ROWS_PER_GROUP], [0u32; MAX_ROWS_PER_GROUP]);
    let mut longest = 0;
    for k in 0..R as usize {
        if row(k) < rows {
            // SAFETY: row < rows.
            unsafe {
                start[k] = load_nc(row_ptr.add(row(k) as usize));
                end[k] = load_nc(row_ptr.add(row(k) as usize + 1));
                column[k] = load_nc(row_base.add(row(k) as usize));
            }
        }
        longest = longest.max(end[k] - start[k]);
    }
    // Every lane runs the warp's longest row's steps (the scans' shuffles need all of them),
    // 2 W entries of each row a step: two loads of x in flight per lane and row.
    let steps = warp::reduce_max(longest.div_ceil(2 * W));
    // The columns of a group's W entries: the column before them plus the prefix sums of
    // their gaps across the group.
    let columns = |before: u32, gap: u32| before + warp::inclusive_sum_groups(gap, W);
    // SAFETY (loads): every j read is < end <= nnz; rebuilt columns are the row's, < cols.
    let gap =
        |j: u32, end: u32| if j < end { u32::from(unsafe { load_nc(gaps.add(j as usize)) }) } else { 0 };
    let value = |j: u32, end: u32| if j < end { unsafe { load_nc(values.add(j as usize)) } } else { T::ZERO };
    // Every row's gaps and values of a step.
    let load_step = |step: u32| {
        let (mut g, mut v) = ([[0u32; 2]; MAX_ROWS_PER_GROUP], [[T::ZERO; 2]; MAX_ROWS_PER_GROUP]);
        for k in 0..R as usize {
            let j0 = start[k] + step * 2 * W + lane;
            (g[k], v[k]) =
                ([gap(j0, end[k]), gap(j0 + W, end[k])], [value(j0, end[k]), value(j0 + W, end[k])]);
        }
        (g, v)
    };
    let (mut sum0, mut sum1) = ([T::ZERO; MAX_ROWS_PER_GROUP], [T::ZERO; MAX_ROWS_PER_GROUP]);
    let mut ahead = load_step(0);
    for step in 0..steps {
        // With one row, the next step's loads go out before this step's products; two rows
        // have as many in flight already, and the registers it would take cost more.
        let (g, v) =
            if R == 1 { core::mem::replace(&mut ahead, load_step(step + 1)) } else { load_step(step) };
        let mut c = [[0u32; 2]; MAX_ROWS_PER_GROUP];
        for k in 0..R as usize {
            c[k][0] = columns(column[k], g[k][0]);
            c[k][1] = columns(warp::shuffle_idx(c[k][0], last_lane_of_group), g[k][1]);
            column[k] = warp::shuffle_idx(c[k][1], last_lane_of_group);
        }
        for k in 0..R as usize {
            let j0 = start[k] + step * 2 * W + lane;
            if j0 < end[k] {
                sum0[k] = v[k][0].mul_add(unsafe { load_nc(x.add(c[k][0] as usize)) }, sum0[k]);
            }
            if j0 + W < end[k] {
                sum1[k] = v[k][1].mul_add(unsafe { load_nc(x.add(c[k][1] as usize)) }, sum1[k]);
            }
        }
    }
    for k in 0..R as usize {
        // SAFETY: y holds `rows` values.
        unsafe { store_group_sum::<T, W>(sum0[k] + sum1[k], row(k), rows, y) };
    }
}

/// The long rows of [`vector`], cut by the host into chunks of at most `LONG_ROW_CHUNK`
/// nonzeros: chunk `c` is in row `rows[c]` from nonzero `starts[c]`, and a row's chunks are
/// consecutive; a partial sum per chunk, and a count of arrivals at each row's first chunk.
#[derive(Clone, Copy)]
struct LongRowChunks<T> {
    count: u32,
    rows: *const u32,
    starts: *const u32,
    partials: *mut T,
    arrivals: *mut u32,
}

/// Chunk `chunk` of the long rows (none where `chunk >= chunks.count`): a warp's dot product
/// over at most `LONG_ROW_CHUNK` nonzeros of one row, and a shuffle reduction. A row of one
/// chunk stores its sum. Otherwise the sums combine in a fixed tree, so the rows need no second
/// launch and their sums do not depend on which chunk finished first: the last of each 32
/// consecutive chunks to finish adds their sums ([`combine`]), and where a row has more than
/// 32, the last of its groups adds the groups' sums; the row's last stores y.
///
/// # Safety
/// `chunks` were cut from this CSR matrix's long rows, its counts zero; x and y as in
/// [`vector`].
#[inline(always)]
unsafe fn long_row_chunk<T: Float>(
    chunk: u32,
    chunks: LongRowChunks<T>,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    if chunk >= chunks.count {
        return;
    }
    let size = abi::spmv::LONG_ROW_CHUNK;
    // SAFETY: chunk < count; the host built the lists from row_ptr, so row < rows and the
    // chunk lies inside the row; the row's chunks are `first..first + pieces`, below count.
    unsafe {
        let row = load_nc(chunks.rows.add(chunk as usize));
        let start = load_nc(chunks.starts.add(chunk as usize));
        let (row_start, row_end) =
            (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1)));
        let end = row_end.min(start + size);
        let sum = warp::reduce_sum(row_dot(col_idx, values, x, lane_id(), start, end, WARP_SIZE));
        let pieces = (row_end - row_start).div_ceil(size);
        let first = chunk - (start - row_start) / size;
        let group_first = first + (chunk - first) / WARP_SIZE * WARP_SIZE;
        let group =
            Combine { first: group_first, stride: 1, count: (first + pieces - group_first).min(WARP_SIZE) };
        let Some(sum) = combine(chunks, chunk, group, sum) else { return };
        // Past 32 chunks, the groups' sums: each in the slot of its group's first chunk.
        let groups = Combine { first, stride: WARP_SIZE, count: pieces.div_ceil(WARP_SIZE) };
        let Some(sum) = combine(chunks, group_first, groups, sum) else { return };
        if lane_id() == 0 {
            *y.add(row as usize) = sum;
        }
    }
}

/// The slots of `partials` that [`combine`] adds: `count` of them from `first`, `stride` apart;
/// their count of arrivals is at `arrivals[first + stride - 1]` (each level of the tree has its
/// own).
#[derive(Clone, Copy)]
struct Combine {
    first: u32,
    stride: u32,
    count: u32,
}

/// Publishes this warp's `sum` in `partials[slot]`, one of `set`'s, and counts its arrival;
/// the warp that arrives last gets the sum of the set's slots in their order and zeroes the
/// count for the next product, the others get `None`. One slot needs no count.
///
/// # Safety
/// `set` and `slot` lie within `chunks`' arrays; every warp of the set calls this once.
#[inline(always)]
unsafe fn combine<T: Float>(chunks: LongRowChunks<T>, slot: u32, set: Combine, sum: T) -> Option<T> {
    if set.count == 1 {
        return Some(sum);
    }
    let counter = (set.first + set.stride - 1) as usize;
    let mut arrived = 0;
    // SAFETY (all accesses): the caller's bounds.
    if lane_id() == 0 {
        unsafe {
            store_relaxed(chunks.partials.add(slot as usize), sum);
            fence_gpu(); // the sum before the arrival
            arrived = atomic::add(chunks.arrivals.add(counter), 1);
        }
    }
    if warp::shuffle_idx(arrived, 0) + 1 < set.count {
        return None;
    }
    fence_gpu(); // every sum of the set after the last arrival
    let mut total = T::ZERO;
    let mut k = lane_id();
    while k < set.count {
        total = total + unsafe { load_relaxed(chunks.partials.add((set.first + k * set.stride) as usize)) };
        k += WARP_SIZE;
    }
    if lane_id() == 0 {
        unsafe { *chunks.arrivals.add(counter) = 0 };
    }
    Some(warp::reduce_sum(total))
}

/// Kernel 7: merge-path load balance (Merrill and Garland's CSR merge), for skewed rows and
/// empty-row-heavy matrices. The rows' ends and the nonzeros form one sequence of
/// `rows + nnz` items; each warp takes a tile of `TILE` consecutive items (`ITEMS` a lane,
/// `abi::spmv::merge_items_per_lane`), so every warp has
/// the same work whatever the row lengths, and an empty row costs one item. The host computes
/// where each tile starts (`tile_rows[w]`: the row in progress at item `w * TILE`; the nonzero
/// is `w * TILE - tile_rows[w]`) once, at upload.
///
/// A block takes `warps` consecutive tiles. Its threads stage the products `values[j] *
/// x[col_idx[j]]` of all its nonzeros and its rows' ends in shared memory, side by side across
/// the block (coalesced, and a block's tiles cross one boundary of lines, not one a warp: the
/// per-warp staging asked L1 for more sectors, PERF.md). Then each warp walks its tile: each
/// lane takes `ITEMS` consecutive items and stages the sum of every row that ends in them,
/// the first of them plus what earlier lanes carried in (a segmented scan of the lanes'
/// carries by shuffles). A row still open at the end of a tile leaves its partial sum to the
/// block: where the row ends in a later tile of the block, the block adds it to the row's
/// staged sum; the block's last open sum goes to `carries[block]`, and [`merge_fixup`] adds
/// those afterwards (one per block, not per tile: that launch's work costs as much as the
/// launch does, PERF.md). The sums go to y in one coalesced pass of the block (scattered
/// stores of single rows cost a partial sector each).
///
/// Columns below `hot_count` read `hot` (a graph's most popular columns, gathered there so that
/// their values share lines), the others `x` at the column minus `hot_count`; with no hot
/// columns, `hot_count` is 0.
/// Launch: a warp per tile, blocks of whole warps (at most 32); shared bytes:
/// `abi::spmv::merge_shared_bytes` for the block's warps.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn merge<T: Float>(
    rows: u32,
    nnz: u32,
    tiles: u32,
    tile_rows: *const u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    hot: *const T,
    hot_count: u32,
    y: *mut T,
    carries: *mut T,
) {
    let tile_len = WARP_SIZE * const { abi::spmv::merge_items_per_lane(core::mem::size_of::<T>()) };
    let warps = block_dim_x() / WARP_SIZE;
    let (first, threads, tid) = (block_idx_x() * warps, block_dim_x(), thread_idx_x());
    if first >= tiles {
        return;
    }
    let last = (first + warps).min(tiles) - 1; // the block's last tile
    // The block's items, rows first_row..=last_row and nonzeros first_nz..end_nz.
    let (first_item, end_item) = (first * tile_len, ((last + 1) * tile_len).min(rows + nnz));
    // SAFETY: first <= last < tiles, and tile_rows has tiles + 1 entries.
    let (first_row, last_row) =
        unsafe { (load_nc(tile_rows.add(first as usize)), load_nc(tile_rows.add(last as usize + 1))) };
    let (first_nz, end_nz) = (first_item - first_row, end_item - last_row);
    let block_nnz = end_nz - first_nz;
    // Shared memory: the block's products, then the sums of its rows; its row ends; the
    // warps' open sums. A block's rows and nonzeros are at most its items.
    let products = shared::dynamic::<T>();
    let row_ends = products.after::<u32>(warps * tile_len);
    let open = row_ends.after::<T>(warps * tile_len + 1);
    // The ends of rows first_row..=last_row (the last may be past the matrix: never reached).
    let mut i = tid;
    while i <= last_row - first_row {
        let row = first_row + i;
        // SAFETY: row < rows; i <= the block's rows <= its items (shared).
        let end = if row < rows { unsafe { load_nc(row_ptr.add(row as usize + 1)) } } else { u32::MAX };
        unsafe { row_ends.set(i, end) };
        i += threads;
    }
    // The block's products, its threads side by side (coalesced), four loads in flight a
    // thread in f32 and two in f64 (four were slower there, PERF.md), then the last one. The
    // rounds are written out: a generic loop over an array of products kept it in local
    // memory (PERF.md).
    // Each line of the matrix is read once: evict-first keeps x in L2 instead (PERF.md).
    // SAFETY: nonzeros below nnz, columns below hot_count + the length of x.
    let product = |j: u32| unsafe {
        let (from, at) = x_at((x, hot, hot_count), load_stream(col_idx.add(j as usize)));
        load_stream(values.add(j as usize)) * load_nc(from.add(at as usize))
    };
    // SAFETY (shared, every store below): first_nz <= j, and each product's nonzero is below
    // end_nz, so its slot is below block_nnz.
    let stage = |j: u32, p: T| unsafe { products.set(j - first_nz, p) };
    let mut j = first_nz + tid;
    if core::mem::size_of::<T>() == 4 {
        while j + 3 * threads < end_nz {
            let (p0, p1, p2, p3) =
                (product(j), product(j + threads), product(j + 2 * threads), product(j + 3 * threads));
            stage(j, p0);
            stage(j + threads, p1);
            stage(j + 2 * threads, p2);
            stage(j + 3 * threads, p3);
            j += 4 * threads;
        }
    }
    while j + threads < end_nz {
        let (p0, p1) = (product(j), product(j + threads));
        stage(j, p0);
        stage(j + threads, p1);
        j += 2 * threads;
    }
    if j < end_nz {
        stage(j, product(j));
    }
    sync_threads();

    let tile = first + warp_id();
    let carried = if tile <= last {
        let block = BlockTile { first_row, first_nz, block_nnz, products, row_ends };
        // SAFETY: tile < tiles; the block's staged arrays.
        unsafe { merge_walk(tile, tile_len, rows + nnz, tile_rows, block) }
    } else {
        T::ZERO
    };
    if lane_id() == WARP_SIZE - 1 {
        // SAFETY (shared): warp_id() < warps.
        unsafe { open.set(warp_id(), carried) };
    }
    sync_threads(); // every ended row's sum staged, every open sum too
    if warp_id() == 0 {
        // Lane w: tile first + w's open row, summed over the run of tiles that leave it open.
        let w = lane_id();
        let (row, carry) = if first + w <= last {
            // SAFETY: first + w + 1 <= tiles; w < warps (shared).
            unsafe { (load_nc(tile_rows.add((first + w + 1) as usize)), open.get(w)) }
        } else {
            (u32::MAX, T::ZERO)
        };
        let (before, after) = (warp::shuffle_up(row, 1), warp::shuffle_down(row, 1));
        let run = segmented_scan(carry, w == 0 || before != row);
        if first + w == last {
            // This row is still open past the block (or past the matrix).
            // SAFETY: block_idx_x() < ceil(tiles / warps), the carries' length.
            unsafe { *carries.add(block_idx_x() as usize) = run };
        } else if first + w < last && after != row {
            // The row ended in a later tile of the block, which staged its sum.
            // SAFETY (shared): first_row <= row < last_row.
            unsafe {
                let at = block_nnz + row - first_row;
                products.set(at, products.get(at) + run);
            }
        }
    }
    sync_threads();
    // Rows first_row..last_row ended in the block, each with its sum staged.
    let mut i = tid;
    while i < last_row - first_row {
        // SAFETY: first_row + i < last_row <= rows; the sum's slot is within the block's items.
        unsafe { *y.add((first_row + i) as usize) = products.get(block_nnz + i) };
        i += threads;
    }
}

/// Where [`merge`] and [`split`] read x's value at `column`: `hot` at the column below
/// `hot_count` (a graph's hot columns, gathered side by side), else `x` at the column less
/// `hot_count`.
#[inline(always)]
fn x_at<T: Float>((x, hot, hot_count): (*const T, *const T, u32), column: u32) -> (*const T, u32) {
    if column < hot_count { (hot, column) } else { (x, column - hot_count) }
}

/// What a block of [`merge`] staged: its products (`block_nnz` of them, from nonzero
/// `first_nz`), then the sums of its rows from `first_row`, and the ends of those rows.
#[derive(Clone, Copy)]
struct BlockTile<T> {
    first_row: u32,
    first_nz: u32,
    block_nnz: u32,
    products: shared::SharedArray<T>,
    row_ends: shared::SharedArray<u32>,
}

/// Sums of the values of lanes up to this one, restarting at every lane whose `starts` is set
/// (a segmented inclusive scan).
#[inline(always)]
fn segmented_scan<T: Float>(value: T, starts: bool) -> T {
    let lane = lane_id();
    let (mut sum, mut segment_start) = (value, starts as u32);
    let mut offset = 1;
    while offset < WARP_SIZE {
        let (before, before_start) = (warp::shuffle_up(sum, offset), warp::shuffle_up(segment_start, offset));
        if lane >= offset && segment_start == 0 {
            sum = sum + before;
            segment_start = before_start;
        }
        offset *= 2;
    }
    sum
}

/// One warp's tile of [`merge`] over what its block staged: stages the sum of every row that
/// ends in the tile; returns, in lane 31, the partial sum of its last row, still open.
///
/// # Safety
/// As [`merge`]; tile < tiles, within the block.
#[inline(always)]
unsafe fn merge_walk<T: Float>(
    tile: u32,
    tile_len: u32,
    items_len: u32,
    tile_rows: *const u32,
    block: BlockTile<T>,
) -> T {
    let items = tile_len / WARP_SIZE;
    let lane = lane_id();
    let BlockTile { first_row, first_nz, block_nnz, products, row_ends } = block;
    // SAFETY: tile < tiles, and tile_rows has tiles + 1 entries.
    let (row0, row1) =
        unsafe { (load_nc(tile_rows.add(tile as usize)), load_nc(tile_rows.add(tile as usize + 1))) };
    let (first_item, end_item) = (tile * tile_len, ((tile + 1) * tile_len).min(items_len));
    let (nz0, nz1) = (first_item - row0, end_item - row1);
    // This tile's rows within the block's arrays.
    let rows_at = row0 - first_row;

    // This lane's items: its start on the merge path (a search of the staged row ends), then
    // ITEMS steps, each a nonzero of the current row or the end of the row.
    let (tile_rows_len, tile_nnz) = (row1 - row0, nz1 - nz0);
    let diagonal = (lane * items).min(tile_rows_len + tile_nnz);
    let last = ((lane + 1) * items).min(tile_rows_len + tile_nnz);
    let (mut lo, mut hi) = (diagonal.saturating_sub(tile_nnz), diagonal.min(tile_rows_len));
    while lo < hi {
        let pivot = (lo + hi) / 2;
        // SAFETY (shared): pivot < tile_rows_len, within the block's rows.
        if unsafe { row_ends.get(rows_at + pivot) } - nz0 < diagonal - pivot {
            lo = pivot + 1
        } else {
            hi = pivot
        }
    }
    let (mut row, mut nz) = (lo, nz0 + diagonal - lo); // row relative to row0, nz absolute
    let mut sum = T::ZERO;
    let mut first_end = u32::MAX; // the first row this lane ends
    // A row's sum is staged after the block's products: a block's rows and nonzeros together
    // are at most its items, so the two fit in one array.
    let sums = |row: u32| block_nnz + rows_at + row;
    // SAFETY (shared): row <= tile_rows_len (a lane ends at most the tile's rows), and
    // nz - first_nz < block_nnz while nz is below the row's end (the tile's nonzeros lie
    // within the block's).
    let mut row_end = unsafe { row_ends.get(rows_at + row) };
    for _ in diagonal..last {
        if nz < row_end {
            sum = sum + unsafe { products.get(nz - first_nz) };
            nz += 1;
        } else {
            // Every ended row's sum is staged, the first's too (its carry is added after the
            // scan): no special case for the lane's first row.
            // SAFETY (shared): row < tile_rows_len (it ended in this tile).
            unsafe { products.set(sums(row), sum) };
            first_end = first_end.min(row); // rows only grow: the first one stays
            sum = T::ZERO;
            row += 1;
            row_end = unsafe { row_ends.get(rows_at + row) };
        }
    }

    // What earlier lanes carry into this lane's first row: a segmented inclusive scan of the
    // lanes' open sums, restarting at every lane that ended a row.
    let ended = first_end != u32::MAX;
    let carried = segmented_scan(sum, ended);
    let carry_in = warp::shuffle_up(carried, 1);
    if ended && lane > 0 {
        // SAFETY (shared): first_end < tile_rows_len (it ended).
        unsafe { products.set(sums(first_end), products.get(sums(first_end)) + carry_in) };
    }
    carried
}

/// Adds each block's open sum into y, after [`merge`]: block b's is the row in progress at the
/// end of its last tile, `tile_rows[min((b + 1) warps, tiles)]`, with `warps` tiles a block.
/// Launch: a thread per block of [`merge`].
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn merge_fixup<T: Float>(
    rows: u32,
    tiles: u32,
    warps: u32,
    tile_rows: *const u32,
    carries: *const T,
    y: *mut T,
) {
    let block = index_1d();
    if block < tiles.div_ceil(warps) {
        // SAFETY: block < ceil(tiles / warps), the carries' length; tile_rows has tiles + 1
        // entries; the row is checked.
        unsafe {
            let row = load_nc(tile_rows.add(((block + 1) * warps).min(tiles) as usize));
            let carry = load_nc(carries.add(block as usize));
            if row < rows && carry != T::ZERO {
                atomic::add(y.add(row as usize), carry);
            }
        }
    }
}

/// Kernel 8: nonzero split, for skewed and empty-row-heavy matrices. Each block takes a chunk
/// of four nonzeros a thread, consecutive, whatever rows they fall in, so an empty row costs no
/// product and no step (the merge path takes an item for each). Each lane loads its four
/// columns and values with one vector load each and keeps their products in registers, the
/// four gathers of x in flight together; meanwhile the block marks, a byte a nonzero in shared
/// memory, where each row that ends in the chunk ends. Each lane then sums its products
/// between the marks; a row that crosses lanes or warps is joined by segmented scans (shuffles
/// within a warp, then across the warps in shared memory). A row's sum is staged at the
/// position where it ends, and the block writes y for the rows that end in its chunk in one
/// coalesced pass. The sum of the row still open at the chunk's end goes to `carries[block]`,
/// which [`merge_fixup`] adds afterwards (one tile a block).
///
/// `chunk_rows[b]` (chunks + 1 entries, from the host at upload, chunks = nnz / chunk + 1 so
/// the last chunk holds the matrix's end): the row open at chunk b's first nonzero, the last
/// to start before it (`u32::MAX` for chunk 0, `rows - 1` for the end). Columns below
/// `hot_count` read `hot`, as in [`merge`]. `col_idx` and `values` are 16-byte aligned.
/// Launch: a block of `abi::spmv::SPLIT_WARPS` warps per chunk (a chunk is four nonzeros a
/// thread); shared bytes: `abi::spmv::split_shared_bytes`.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn split<T: Float>(
    rows: u32,
    nnz: u32,
    chunks: u32,
    chunk_rows: *const u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    x: *const T,
    hot: *const T,
    hot_count: u32,
    y: *mut T,
    carries: *mut T,
) {
    let (chunk, threads, tid) = (block_idx_x(), block_dim_x(), thread_idx_x());
    if chunk >= chunks {
        return;
    }
    let (chunk_len, warps, base) = (4 * threads, threads / WARP_SIZE, chunk * 4 * threads);
    // SAFETY: chunk < chunks, and chunk_rows has chunks + 1 entries.
    let (open_row, last_row) =
        unsafe { (load_nc(chunk_rows.add(chunk as usize)), load_nc(chunk_rows.add(chunk as usize + 1))) };
    // The rows that may end in the chunk: the one open at its start, then those that start in
    // it (the last of which may run on).
    let (first_row, end_row) = (if open_row == u32::MAX { 0 } else { open_row }, (last_row + 1).min(rows));
    // Shared memory: a row sum at each nonzero's position, a byte at each (set where a row
    // ends), then the warps' open sums and first row ends.
    let sums = shared::dynamic::<T>();
    let (end_marks, end_words) = (sums.after::<u8>(chunk_len), sums.after::<u32>(chunk_len));
    let warp_open = end_words.after::<T>(threads);
    let warp_first_end = warp_open.after::<u32>(warps);

    // This lane's four products, first of all: their loads are in flight while the block
    // marks the rows' ends.
    let at = 4 * tid; // within the chunk
    let first = base + at;
    // SAFETY: nonzeros below nnz (each checked at the matrix's end), columns below hot_count
    // + the length of x; the vector loads start at a multiple of four (16-byte aligned).
    let gather = |column: u32| unsafe {
        let (from, at) = x_at((x, hot, hot_count), column);
        load_nc(from.add(at as usize))
    };
    let products: [T; 4] = if first + 3 < nnz {
        let (columns, entries) = unsafe {
            (
                u32::load_quad_stream(col_idx.add(first as usize)),
                T::load_quad_stream(values.add(first as usize)),
            )
        };
        [0, 1, 2, 3].map(|k| entries[k] * gather(columns[k]))
    } else {
        [0, 1, 2, 3].map(|k| {
            let j = first + k;
            if j < nnz {
                unsafe { load_stream(values.add(j as usize)) * gather(load_stream(col_idx.add(j as usize))) }
            } else {
                T::ZERO
            }
        })
    };

    // SAFETY (shared): tid < threads = chunk_len / 4 words of marks.
    unsafe { end_words.set(tid, 0) };
    sync_threads();
    let mut row = first_row + tid;
    while row < end_row {
        // SAFETY: row < end_row <= rows, and row_ptr has rows + 1 entries.
        let (start, end) =
            unsafe { (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1))) };
        let end_at = end.wrapping_sub(base);
        if start < end && end_at < chunk_len {
            // SAFETY (shared): end_at < chunk_len.
            unsafe { end_marks.set(end_at, 1) };
        }
        row += threads;
    }
    sync_threads();

    // Within the lane: the sum before its first row end (`lead`), each row that ends between
    // two of its ends (staged here), and what is open after its last end.
    // SAFETY (shared): the word of this lane's four marks.
    let marks = unsafe { end_words.get(tid) };
    let (mut open, mut lead, mut first_end) = (T::ZERO, T::ZERO, u32::MAX);
    for (k, product) in products.into_iter().enumerate() {
        let k = k as u32;
        if (marks >> (8 * k)) & 0xff != 0 {
            if first_end == u32::MAX {
                (lead, first_end) = (open, at + k);
            } else {
                // SAFETY (shared): at + k < chunk_len.
                unsafe { sums.set(at + k, open) };
            }
            open = T::ZERO;
        }
        open = open + product;
    }
    // Across the warp's lanes: what the lanes before carry into this lane's first row.
    let ended = first_end != u32::MAX;
    let carried = segmented_scan(open, ended);
    let before = warp::shuffle_up(carried, 1);
    if ended {
        // SAFETY (shared): first_end < chunk_len.
        unsafe { sums.set(first_end, if lane_id() == 0 { lead } else { lead + before }) };
    }
    // The warp's first row end, from the first lane that ended a row (where none did, lane
    // 31's own u32::MAX).
    let lanes_ended = warp::ballot(ended);
    let warp_end = warp::shuffle_idx(first_end, lanes_ended.trailing_zeros().min(WARP_SIZE - 1));
    if lane_id() == WARP_SIZE - 1 {
        // SAFETY (shared): warp_id() < warps.
        unsafe {
            warp_open.set(warp_id(), carried);
            warp_first_end.set(warp_id(), warp_end);
        }
    }
    sync_threads();
    if warp_id() == 0 {
        // Lane w: what warp w leaves open, summed over the run of warps that end no row.
        let w = lane_id();
        // SAFETY (shared): w < warps.
        let (sum, end) = if w < warps {
            unsafe { (warp_open.get(w), warp_first_end.get(w)) }
        } else {
            (T::ZERO, u32::MAX)
        };
        let run = segmented_scan(sum, end != u32::MAX);
        let before = warp::shuffle_up(run, 1);
        if w > 0 && w < warps && end != u32::MAX {
            // SAFETY (shared): end < chunk_len, a row's end in warp w.
            unsafe { sums.set(end, sums.get(end) + before) };
        }
        if w == warps - 1 {
            // SAFETY: chunk < chunks, the carries' length.
            unsafe { *carries.add(chunk as usize) = run };
        }
    }
    sync_threads();
    let mut row = first_row + tid;
    while row < end_row {
        // SAFETY: as above; the sum's slot is below chunk_len.
        unsafe {
            let (start, end) = (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1)));
            let end_at = end.wrapping_sub(base);
            if start == end {
                // An empty row that starts in the chunk.
                if start >= base {
                    *y.add(row as usize) = T::ZERO;
                }
            } else if end_at < chunk_len {
                *y.add(row as usize) = sums.get(end_at);
            }
        }
        row += threads;
    }
}
