//! Multicolor SymGS: a *different* smoother from the sequential one. Rows are colored so that
//! no two neighbours (a_ij or a_ji stored: the graph of A + A^T, so unsymmetric patterns are
//! fine) share a color, and the matrix is renumbered color by color (P A P^T, rows of a color
//! contiguous, in their original order within the color). A sweep runs the colors in order,
//! one launch each, then back in reverse order (from the second-to-last color): the
//! sequential sweep of the renumbered matrix to rounding (verified against the CPU sweep in
//! its row order, [`Smoother::row_order`]), so it converges like Gauss-Seidel, but its iterates
//! differ from the original order's.
//!
//! The coloring ([`ColoringMethod`]) is by default computed on the GPU: Jones-Plassmann rounds
//! (`kernels/src/symgs/multicolor.rs`), each uncolored row whose priority beats all its
//! uncolored neighbours' taking the smallest color none of its neighbours holds (a row waits
//! on a count of its neighbours of higher priority and joins a queue when the last of them is
//! colored, so a round reads only the rows it colors and their neighbours). Priority:
//! larger degree first, ties in row order (the Welsh-Powell greedy order: 8 colors on the
//! 27-point stencil, its 2x2x2 parity classes, in about 900 rounds at 128^3; 16 on the random
//! SPD matrix of 2 M rows and 27 per row, whose late rows have up to 200 neighbours), ties by a
//! hash of the row after [`ROW_ORDER_ROUNDS`] rounds so that long chains of equal-degree rows
//! (a tridiagonal matrix) cannot make the rounds as many as the rows. The default
//! ([`ColoringMethod::Auto`]) first tries the parity of each row's breadth-first level from
//! row 0 (levels found on the GPU, given up at the first odd cycle), the 2 colors of a
//! bipartite pattern such as a 5- or 7-point Laplacian's, which Jones-Plassmann misses in a
//! random row order (6 on a renumbered 7-point Laplacian) and where its wavefront outlasts the
//! row-order rounds (5 on a 5-point Laplacian of 2000 x 2000). A matrix whose row order has no
//! locality (a renumbered mesh) has no wavefront left to follow in its row order: the default
//! colors it, unless bipartite, in smallest-last order (`jp-sl`, peeled on the GPU), which
//! gives renumbered meshes fewer colors (a FEM matrix 32 instead of 44, a renumbered 27-point
//! stencil 13 instead of 18, a renumbered 7-point Laplacian 4 instead of 6, Delaunay 5 instead
//! of 7) for a setup of as many rounds as the peeling takes (PERF.md); where the peeling
//! passes [`MAX_ROUNDS`] (a band of even rows peels a few rows a round from its ends), by
//! degree as in row order. In a mesh's own order Jones-Plassmann's row-order ties follow a
//! wavefront (8 colors on the 27-point stencil, smallest-last 13). The host's greedy coloring
//! in row order stays as the reference (47 colors on the random matrix: its high-degree late
//! rows come last). Hashed priorities alone (Jones-Plassmann-Luby) take the fewest rounds but
//! 18 colors on the stencil, whose sweep then takes 1.5 times as long.
//!
//! The GPU copy ([`MulticolorSmoother::from_matrix`]: colored, sorted by color and copied on
//! the GPU from the uploaded matrix) holds the rows in color order, with A's column numbers:
//! r and x stay in the caller's order (no gather or scatter) and a structured matrix keeps the
//! locality of its x reads. It keeps the diagonal apart (a row's update reads neither a_ii
//! from the matrix nor its own old value), and each row's entries of lower colors before
//! those of higher colors: the forward sweep keeps each row's sum over its lower colors, which
//! no launch changes before the row's backward update, so the backward sweep reads only the
//! upper parts (half the matrix). A sweep, 2c - 1 color launches, is replayed from a CUDA
//! graph by default; the largest color is numbered last (`largest_last`), so its rows are
//! relaxed once a sweep, the others' twice (not with node blocks, below: there the last color
//! is relaxed forward and back in one launch, which a large color makes the longest). Sweeps
//! that follow each other in one call ([`Smoother::sweeps`]) carry the upper sums over: each
//! after the first skips the first color (its rows would be computed from the values they
//! were just computed from) and its forward half reads only the lower parts, 2c - 2 launches
//! reading each entry once. A color of many short, even rows is
//! read in sliced-ELL form, as NVIDIA's HPCG does (a thread per row, loads coalesced across
//! the warp; [`CopyForm`]); the others in CSR, each row given the lanes its color's mean row
//! length calls for ([`CsrPlan::width_for`]).
//!
//! A matrix of node blocks (every row sharing its pattern with the same number k - 1 of
//! others, 2 <= k <= 4: the unknowns of a mesh node; `super::blocks`) is colored by blocks
//! instead: rows of one pattern neighbour each other, so a coloring of rows takes k times the
//! colors. The copy keeps each block's rows in turn, its entries outside the diagonal block
//! once per block with the k rows' values side by side (x gathered once for k rows), and the
//! sweep relaxes a block's rows one after another through its k x k diagonal block: still the
//! sequential sweep of the renumbered matrix. Its last color is relaxed again going back (in
//! the same launch), and a sweep that follows another relaxes its first color again: a block's
//! rows read each other's new values. Where the matrix's row order has no locality (a
//! renumbered mesh), the copy keeps each color's blocks in breadth-first order (the SpMV's
//! renumbering order where it made one, else a pass over the blocks' graph on the host; the
//! colors are found first, so the order changes no value), its columns number rows of the
//! copy, and the sweep runs on x in the copy's order, gathered from x when it starts: a node's
//! k values of x then lie side by side and near its neighbours' (in A's order they lie
//! anywhere), so its gathers share sectors; the backward launches write the new values to x as
//! well.

use abi::symgs::{
    BACKWARD, BACKWARD_KEEPING_UPPER, FORWARD, FORWARD_FROM_ZERO, FORWARD_KEPT_UPPER, ODD_CYCLE,
    RELAX_COLOR_THREADS, ROUND_COUNT, ROUND_START, ROUND_WORDS,
};
use rayon::prelude::*;

use super::blocks::{NodeBlocks, breadth_first_blocks, node_blocks};
use super::cpu::{CpuSymgs, check_vector, checked_diagonal};
use super::sync_free::{FULL_WARPS_PER_SM, persistent_launch};
use super::{Smoother, SymgsMatrix, check_lengths};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, GraphReplay, L2SetAside, Launch, Queue, keep_in_l2};
use crate::kernels::blas1;
use crate::kernels::symgs::blocks as kernels_blocks;
use crate::kernels::symgs::breadth_first as kernels_bfs;
use crate::kernels::symgs::multicolor as kernels;
use crate::sparse::{Csr, UNORDERED_MEAN_DISTANCE};
use crate::spmv::csr::CsrPlan;
use crate::vendor::device_ptr;

/// A color per row and the number of colors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coloring {
    pub colors: Vec<u32>,
    pub count: usize,
}

impl Coloring {
    /// The first two neighbours (a_ij stored, i != j) that share a color, if any.
    pub fn conflict<T: Sync>(&self, a: &Csr<T>) -> Option<(usize, usize)> {
        (0..a.rows()).into_par_iter().find_map_first(|i| {
            let (cols, _) = a.row(i);
            cols.iter()
                .find(|&&j| j as usize != i && self.colors[j as usize] == self.colors[i])
                .map(|&j| (i, j as usize))
        })
    }
}

/// How the rows are colored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColoringMethod {
    /// The 2 colors of the breadth-first levels' parity where the pattern is bipartite, which
    /// Jones-Plassmann can miss; else [`ColoringMethod::JonesPlassmann`], but where the
    /// matrix's row order has no locality (its entries lie further than
    /// [`UNORDERED_MEAN_DISTANCE`] n from the diagonal on average: a renumbered mesh)
    /// [`ColoringMethod::SmallestLast`] (fewer colors there, for a longer setup), unless its
    /// peeling passes [`MAX_ROUNDS`].
    #[default]
    Auto,
    /// Jones-Plassmann on the GPU, larger degree first, ties in row order (then hashed).
    JonesPlassmann,
    /// Jones-Plassmann on the GPU with hashed priorities only (Jones-Plassmann-Luby).
    JonesPlassmannRandom,
    /// Jones-Plassmann on the GPU in smallest-last order (peeled on the GPU), ties hashed:
    /// fewer colors on unstructured and renumbered meshes, for a longer setup.
    SmallestLast,
    /// First fit in row order on the host.
    Greedy,
}

impl ColoringMethod {
    pub const ALL: [ColoringMethod; 5] = [
        ColoringMethod::Auto,
        ColoringMethod::JonesPlassmann,
        ColoringMethod::JonesPlassmannRandom,
        ColoringMethod::SmallestLast,
        ColoringMethod::Greedy,
    ];

    /// The CLI's name: `auto`, `jp`, `jp-random`, `jp-sl`, `greedy`.
    pub fn name(self) -> &'static str {
        match self {
            ColoringMethod::Auto => "auto",
            ColoringMethod::JonesPlassmann => "jp",
            ColoringMethod::JonesPlassmannRandom => "jp-random",
            ColoringMethod::SmallestLast => "jp-sl",
            ColoringMethod::Greedy => "greedy",
        }
    }

    pub fn from_name(name: &str) -> Option<ColoringMethod> {
        ColoringMethod::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Jones-Plassmann rounds that break degree ties by row order; later rounds use a hash.
pub const ROW_ORDER_ROUNDS: u32 = 2048;

/// Components of the pattern the breadth-first levels start before they are given up (each
/// costs a search over the rows): the levels are for meshes, not for many small blocks.
const MAX_COMPONENTS: usize = 64;

/// Breadth-first levels searched before the parity coloring is given up (a level costs two
/// launches): a 5-point Laplacian of 4096 x 4096 has 8191 from a corner, a long chain (a
/// tridiagonal matrix) as many as its rows.
const MAX_PARITY_LEVELS: u32 = 8192;

/// Warps per SM (fewer for fewer rows) of the breadth-first kernels, which stride over rows.
const STRIDING_WARPS_PER_SM: u32 = 32;

/// Levels of the breadth-first search queued between two looks at its queue.
const LEVELS_PER_LOOK: u32 = 16;

/// Jones-Plassmann, and the peeling of its smallest-last order, give up (with an error) past
/// this many rounds.
pub const MAX_ROUNDS: u32 = 16384;

/// Rows per warp of the GPU's sort by color.
pub const CHUNK_ROWS: u32 = 1024;

/// Rounds queued before the first check of how many rows are colored, doubled after each
/// check up to [`MOST_ROUNDS_PER_CHECK`] (extra rounds are no-ops): a check waits for the GPU,
/// which then idles until the host queues again.
const ROUNDS_PER_CHECK: u32 = 16;
/// The most rounds queued between two checks.
const MOST_ROUNDS_PER_CHECK: u32 = 128;

/// Blocks of 256 threads per SM of the kernels that stride over the rows or a queue of them
/// round after round (the peeling's, Jones-Plassmann's rounds): a full SM.
const STRIDING_BLOCKS_PER_SM: u32 = 8;

/// Colors `a` (square) with `method`: on the GPU for the Jones-Plassmann methods.
pub fn color<T: Scalar>(gpu: &Gpu, a: &Csr<T>, method: ColoringMethod) -> Result<Coloring> {
    match method {
        ColoringMethod::Greedy => Ok(greedy_coloring(a)),
        jp => jones_plassmann(gpu, a, jp),
    }
}

/// Greedy (first-fit) coloring in row order of the graph of A + A^T.
pub fn greedy_coloring<T: Scalar>(a: &Csr<T>) -> Coloring {
    greedy_coloring_in_order(a, 0..a.rows())
}

/// Greedy (first-fit) coloring of the graph of A + A^T, the rows taken in `order` (each row
/// once): what Jones-Plassmann computes when `order` is its priority order.
pub fn greedy_coloring_in_order<T: Scalar>(a: &Csr<T>, order: impl IntoIterator<Item = usize>) -> Coloring {
    let transpose = a.transpose(); // row i of A^T: the rows that store column i
    let n = a.rows();
    let mut colors = vec![u32::MAX; n];
    // forbidden[c] == i: a neighbour of row i already has color c.
    let mut forbidden: Vec<usize> = Vec::new();
    for i in order {
        for &j in a.row(i).0.iter().chain(transpose.row(i).0) {
            let c = colors[j as usize];
            if c != u32::MAX {
                forbidden[c as usize] = i;
            }
        }
        let c = (0..forbidden.len()).find(|&c| forbidden[c] != i).unwrap_or(forbidden.len());
        if c == forbidden.len() {
            forbidden.push(usize::MAX);
        }
        colors[i] = c as u32;
    }
    Coloring { count: forbidden.len(), colors }
}

/// Jones-Plassmann on the GPU (see the module doc) of a host matrix.
fn jones_plassmann<T: Scalar>(gpu: &Gpu, a: &Csr<T>, method: ColoringMethod) -> Result<Coloring> {
    check_square(a.rows(), a.cols())?;
    let (row_ptr, col_idx) = (gpu.upload(a.row_ptr())?, gpu.upload(a.col_indices())?);
    let transpose =
        if pattern_symmetric(gpu, a.rows(), &row_ptr, &col_idx)? { None } else { Some(a.transpose()) };
    let (state, count) = jones_plassmann_states(gpu, a.rows(), &row_ptr, &col_idx, method, transpose)?;
    let colors = gpu.download(&state)?.into_iter().map(|s| s as u32).collect();
    Ok(Coloring { colors, count })
}

fn check_square(rows: usize, cols: usize) -> Result<()> {
    if rows != cols {
        return Err(Error::InvalidInput(format!("coloring needs a square matrix, got {rows} x {cols}")));
    }
    Ok(())
}

/// Whether every stored a_ij (i != j) of the square pattern on the device (`n` rows, columns
/// sorted within rows) has a stored a_ji.
pub(crate) fn pattern_symmetric(
    gpu: &Gpu,
    n: usize,
    row_ptr: &CudaSlice<u32>,
    col_idx: &CudaSlice<u32>,
) -> Result<bool> {
    if n == 0 {
        return Ok(true);
    }
    let mut unsymmetric = gpu.zeros::<u32>(1)?;
    let lanes = lanes_per_row(col_idx.len(), n);
    let launch = persistent_launch(gpu, (n * lanes as usize).div_ceil(32), FULL_WARPS_PER_SM);
    // SAFETY: a valid square CSR pattern of n rows, one flag.
    unsafe {
        kernels::pattern_unsymmetric(gpu, launch, lanes, n as u32, row_ptr, col_idx, &mut unsymmetric)?
    };
    Ok(gpu.download(&unsymmetric)?[0] == 0)
}

/// Jones-Plassmann on the GPU on a pattern on the device, with the priorities of `method`
/// (one of the Jones-Plassmann ones): each row's state (its color in the low 32 bits) and the
/// number of colors. `transpose` is A^T (only its pattern is read) where the pattern is not
/// symmetric, None where it is.
fn jones_plassmann_states<U: Scalar>(
    gpu: &Gpu,
    n: usize,
    row_ptr: &CudaSlice<u32>,
    col_idx: &CudaSlice<u32>,
    mut method: ColoringMethod,
    transpose: Option<Csr<U>>,
) -> Result<(CudaSlice<u64>, usize)> {
    let mut state = gpu.zeros::<u64>(n)?;
    if n == 0 {
        return Ok((state, 0));
    }
    let transpose = match transpose {
        Some(t) => Some((gpu.upload(t.row_ptr())?, gpu.upload(t.col_indices())?)),
        None => None,
    };
    // Without a transpose the kernels get A's pattern again and do not read it.
    let (t_row_ptr, t_col_idx) = transpose.as_ref().map_or((row_ptr, col_idx), |(p, c)| (p, c));
    let pattern =
        Pattern { n, transposed: transpose.is_some() as u32, row_ptr, col_idx, t_row_ptr, t_col_idx };
    // SAFETY: row pointers of rows + 1 entries, a state per row.
    unsafe {
        kernels::jp_init(gpu, pattern.launch(), n as u32, pattern.transposed, row_ptr, t_row_ptr, &mut state)?
    };
    let too_many = |what: &str, instead: &str| Error::Library {
        library: "SymGS",
        what: "Jones-Plassmann coloring",
        message: format!("rows still {what} after {MAX_ROUNDS} rounds; color {instead} instead"),
    };
    let auto = method == ColoringMethod::Auto;
    if auto {
        if parity_coloring(gpu, n, row_ptr, col_idx, &mut state)? {
            let count = color_count(gpu, &state)?;
            return Ok((state, count));
        }
        if mean_distance(gpu, n, row_ptr, col_idx)? > UNORDERED_MEAN_DISTANCE {
            method = ColoringMethod::SmallestLast;
        }
    }
    let row_order = (1, ROW_ORDER_ROUNDS);
    let priorities = match method {
        ColoringMethod::JonesPlassmann | ColoringMethod::Auto => row_order,
        // The states hold the degrees: they become the ranks, colored highest first. Where the
        // peeling takes too many rounds (a band of even rows peels a few rows a round from its
        // ends), `Auto` colors by degree instead.
        ColoringMethod::SmallestLast => match smallest_last_ranks(gpu, &pattern, &state)? {
            Some(rank) => {
                // SAFETY: a rank and a state per row.
                unsafe { kernels::sl_state(gpu, pattern.launch(), n as u32, &rank, &mut state)? };
                (1, 0)
            }
            None if auto => row_order,
            None => {
                return Err(too_many(
                    "unranked",
                    "by degree (ColoringMethod::JonesPlassmann, `--coloring jp`)",
                ));
            }
        },
        _ => (0, 0),
    };
    let count = jp_rounds(gpu, &pattern, priorities, &mut state)?
        .ok_or_else(|| too_many("uncolored", "on the host (ColoringMethod::Greedy, `--coloring greedy`)"))?;
    Ok((state, count))
}

/// The mean |i - j| over the entries of a square pattern of n rows, as a fraction of n.
fn mean_distance(gpu: &Gpu, n: usize, row_ptr: &CudaSlice<u32>, col_idx: &CudaSlice<u32>) -> Result<f64> {
    if n == 0 || col_idx.is_empty() {
        return Ok(0.0);
    }
    let mut total = gpu.zeros::<f64>(1)?;
    let launch = persistent_launch(gpu, n, STRIDING_WARPS_PER_SM);
    // SAFETY: a square pattern of n rows; one accumulator.
    unsafe { kernels_bfs::distance_sum(gpu, launch, n as u32, row_ptr, col_idx, &mut total)? };
    Ok(gpu.download(&total)?[0] / col_idx.len() as f64 / n as f64)
}

/// Colors the states by the parity of each row's breadth-first level where that is a proper
/// coloring (a bipartite pattern); false, the states as they were, where it is not or the
/// search gives up ([`bipartite_levels`]).
fn parity_coloring(
    gpu: &Gpu,
    n: usize,
    row_ptr: &CudaSlice<u32>,
    col_idx: &CudaSlice<u32>,
    state: &mut CudaSlice<u64>,
) -> Result<bool> {
    let Some(levels) = bipartite_levels(gpu, n, row_ptr, col_idx)? else { return Ok(false) };
    // SAFETY: a level and a state per row.
    unsafe { kernels_bfs::parity_states(gpu, Launch::linear(n, 256), n as u32, &levels, state)? };
    Ok(true)
}

/// Each row's breadth-first level over the pattern from row 0, each further component from
/// its lowest row at the levels after the last (`kernels/src/symgs/breadth_first.rs`), where
/// the pattern is bipartite; None from the first look at the queue after an odd cycle, or
/// past [`MAX_COMPONENTS`] components or [`MAX_PARITY_LEVELS`] levels.
fn bipartite_levels(
    gpu: &Gpu,
    n: usize,
    row_ptr: &CudaSlice<u32>,
    col_idx: &CudaSlice<u32>,
) -> Result<Option<CudaSlice<u32>>> {
    let mut levels = gpu.zeros::<u32>(n)?; // 0: not reached; levels count from 1
    let mut found = gpu.zeros::<u32>(n)?; // the rows in the order they are reached
    // The queue's words (`kernels_bfs::RoundQueue`), and whether an odd cycle was seen.
    let mut words = gpu.zeros::<u32>(ODD_CYCLE + 1)?;
    let mut lowest = gpu.zeros::<u32>(1)?;
    let search = persistent_launch(gpu, n, STRIDING_WARPS_PER_SM);
    let one = Launch::linear(1, 32);
    let (mut reached, mut frontier, mut components, mut level) = (0usize, 0usize, 0usize, 1u32);
    // Until every row is reached and its neighbours looked at.
    while reached < n || frontier != 0 {
        if level > MAX_PARITY_LEVELS {
            return Ok(None);
        }
        if frontier == 0 {
            components += 1;
            if components > MAX_COMPONENTS {
                return Ok(None);
            }
            gpu.upload_into(&[u32::MAX], &mut lowest)?;
            // SAFETY: a level per row; rows are left, so the queue's end is below n.
            unsafe {
                kernels_bfs::lowest_unreached(gpu, Launch::linear(n, 256), n as u32, &levels, &mut lowest)?;
                kernels_bfs::bfs_seed(gpu, one, level, &lowest, &mut words, &mut found, &mut levels)?;
            }
            level += 1;
        }
        for _ in 0..LEVELS_PER_LOOK {
            // SAFETY: the queue lies in `found`, which holds rows; each row is queued once, so
            // the queue's end stays within n.
            unsafe {
                kernels_bfs::bfs_level(
                    gpu,
                    search,
                    level,
                    &mut words,
                    &mut found,
                    row_ptr,
                    col_idx,
                    &mut levels,
                )?
            };
            level += 1;
        }
        let words = gpu.download(&words)?;
        if words[ODD_CYCLE] != 0 {
            return Ok(None);
        }
        // The last level's rows: the next one's frontier, at the end of those reached.
        let last = (level - 1) as usize % 3;
        let (start, count) = (words[ROUND_START + last] as usize, words[ROUND_COUNT + last] as usize);
        (reached, frontier) = (start + count, count);
    }
    Ok(Some(levels))
}

/// Lanes a row of `entries / rows` entries on average takes in the kernels that walk rows of a
/// pattern: 8 where rows average at most 16 entries (a warp idles on the short rows of a 2-D
/// mesh), else a warp.
fn lanes_per_row(entries: usize, rows: usize) -> u32 {
    if entries > 16 * rows { 32 } else { 8 }
}

/// A square pattern on the device for the coloring kernels: A's, and A^T's where
/// `transposed` (else A's again, not read).
struct Pattern<'a> {
    n: usize,
    transposed: u32,
    row_ptr: &'a CudaSlice<u32>,
    col_idx: &'a CudaSlice<u32>,
    t_row_ptr: &'a CudaSlice<u32>,
    t_col_idx: &'a CudaSlice<u32>,
}

impl Pattern<'_> {
    /// A thread per row, blocks of 256.
    fn launch(&self) -> Launch {
        Launch::linear(self.n, 256)
    }

    /// Lanes a queued row takes ([`lanes_per_row`]).
    fn lanes(&self) -> u32 {
        let entries = self.col_idx.len() + if self.transposed != 0 { self.t_col_idx.len() } else { 0 };
        lanes_per_row(entries, self.n)
    }

    /// The kernels run round after round, grid-strided over the rows or a queue of them: as
    /// many blocks of 256 as the GPU holds at once, or fewer for fewer rows. The peeling runs
    /// thousands of rounds on some matrices, each a few loads a row, and a launch of a block
    /// per 256 rows spent most of its time starting blocks (PERF.md).
    fn striding_launch(&self, gpu: &Gpu) -> Launch {
        let blocks = (gpu.props().sm_count * STRIDING_BLOCKS_PER_SM) as usize;
        Launch::linear(self.n.min(256 * blocks), 256)
    }
}

/// 1 + the largest low word of the states: the number of colors of colored states.
fn color_count(gpu: &Gpu, state: &CudaSlice<u64>) -> Result<usize> {
    let mut count = gpu.zeros::<u32>(1)?;
    // SAFETY: a state per row, one counter.
    unsafe {
        kernels::color_count(gpu, Launch::linear(state.len(), 256), state.len() as u32, state, &mut count)?
    };
    Ok(gpu.download(&count)?[0] as usize)
}

/// Jones-Plassmann rounds with priorities `(degree_first, row_order_rounds)` until every row
/// is colored: the number of colors, None past [`MAX_ROUNDS`] rounds. Each row waits on a
/// count of its neighbours of higher priority, and joins a queue on the device when the last
/// of them is colored: a round colors only the rows that became free in the round before
/// (`kernels::jp_round`, one launch a round: the rounds move the queue on themselves), and the
/// queue is counted again where the ties change from row order to hashes (`kernels::jp_ready`).
fn jp_rounds(
    gpu: &Gpu,
    pattern: &Pattern,
    (degree_first, row_order_rounds): (u32, u32),
    state: &mut CudaSlice<u64>,
) -> Result<Option<usize>> {
    let n = pattern.n;
    let (mut waiting, mut found, mut words) =
        (gpu.zeros::<u32>(n)?, gpu.zeros::<u32>(n)?, gpu.zeros::<u32>(ROUND_WORDS)?);
    let (frontier_launch, lanes) = (pattern.striding_launch(gpu), pattern.lanes());
    // SAFETY (every launch): valid square patterns (A, and A^T or A again), a state, a count
    // and a queue slot per row, the queue's six words, one counter.
    let finished = rounds_until_all(gpu, n, |round, colored| unsafe {
        if round == 0 || round == row_order_rounds {
            gpu.memset_zeros(&mut words)?;
            kernels::jp_ready(
                gpu,
                pattern.launch(),
                n as u32,
                round,
                degree_first,
                row_order_rounds,
                pattern.transposed,
                pattern.row_ptr,
                pattern.col_idx,
                pattern.t_row_ptr,
                pattern.t_col_idx,
                state,
                &mut waiting,
                &mut words,
                &mut found,
            )?;
        }
        kernels::jp_round(
            gpu,
            frontier_launch,
            lanes,
            round,
            degree_first,
            row_order_rounds,
            pattern.transposed,
            pattern.row_ptr,
            pattern.col_idx,
            pattern.t_row_ptr,
            pattern.t_col_idx,
            state,
            &mut waiting,
            &mut words,
            &mut found,
            colored,
        )
    })?;
    if !finished {
        return Ok(None);
    }
    Ok(Some(color_count(gpu, state)?))
}

/// Queues `round(r, counter)` for r = 0, 1, ..., more at a time after each check, until the
/// rounds have counted all `rows` rows in `counter` (zeroed first): false past [`MAX_ROUNDS`].
fn rounds_until_all(
    gpu: &Gpu,
    rows: usize,
    mut round: impl FnMut(u32, &mut CudaSlice<u32>) -> Result<()>,
) -> Result<bool> {
    let mut counter = gpu.zeros::<u32>(1)?;
    let (mut r, mut per_check) = (0u32, ROUNDS_PER_CHECK);
    loop {
        for _ in 0..per_check {
            round(r, &mut counter)?;
            r += 1;
        }
        per_check = (2 * per_check).min(MOST_ROUNDS_PER_CHECK);
        if gpu.download(&counter)?[0] as usize >= rows {
            return Ok(true);
        }
        if r >= MAX_ROUNDS {
            return Ok(false);
        }
    }
}

/// Each row's smallest-last rank (`kernels::sl_peel`), from the uncolored states of
/// `jp_init` (which hold the degrees); None past [`MAX_ROUNDS`] rounds of peeling.
fn smallest_last_ranks(
    gpu: &Gpu,
    pattern: &Pattern,
    degrees: &CudaSlice<u64>,
) -> Result<Option<CudaSlice<u32>>> {
    let (n, rows, launch, lanes) =
        (pattern.n, pattern.n as u32, pattern.striding_launch(gpu), pattern.lanes());
    let (mut degree, mut rank) = (gpu.zeros::<u32>(n)?, gpu.zeros::<u32>(n)?);
    let (mut touched, mut peeled, mut control) =
        (gpu.zeros::<u32>(n)?, gpu.zeros::<u32>(n)?, gpu.zeros::<u32>(10)?);
    // SAFETY (every launch): a state, a degree, a rank and a slot of each list per row; the
    // peeling's ten control words (`kernels::sl_peel`); valid square patterns.
    unsafe { kernels::sl_init(gpu, pattern.launch(), rows, degrees, &mut degree, &mut rank, &mut control)? };
    let finished = rounds_until_all(gpu, n, |round, total| unsafe {
        kernels::sl_peel(
            gpu,
            launch,
            rows,
            round,
            &degree,
            &mut rank,
            &mut control,
            &touched,
            &mut peeled,
            total,
        )?;
        kernels::sl_unlink(
            gpu,
            launch,
            lanes,
            round,
            pattern.transposed,
            pattern.row_ptr,
            pattern.col_idx,
            pattern.t_row_ptr,
            pattern.t_col_idx,
            &mut degree,
            &rank,
            &mut control,
            &mut touched,
            &peeled,
        )
    })?;
    Ok(finished.then_some(rank))
}

/// A matrix renumbered color by color, with what it takes to go back and forth.
pub struct MulticolorOrder<T> {
    /// The coloring, its colors numbered in sweep order (`largest_last`).
    pub coloring: Coloring,
    /// How the coloring was made (`None`: given by the caller).
    pub method: Option<ColoringMethod>,
    /// Row k of the renumbered matrix is row `new_to_old[k]` of the original.
    pub new_to_old: Vec<u32>,
    /// Color c is rows `color_offsets[c]..color_offsets[c + 1]` of the renumbered matrix.
    pub color_offsets: Vec<u32>,
    /// P A P^T.
    pub permuted: Csr<T>,
}

impl<T: Scalar> MulticolorOrder<T> {
    /// Checks `a` as every smoother does, and `coloring` (a color per row, below its count,
    /// no two neighbours alike), numbers its colors in sweep order (`largest_last`) and
    /// renumbers `a` by it.
    pub fn new(a: &Csr<T>, mut coloring: Coloring) -> Result<Self> {
        checked_diagonal(a)?;
        if coloring.colors.len() != a.rows() {
            return Err(Error::InvalidInput(format!(
                "a coloring of {} rows for a matrix of {}",
                coloring.colors.len(),
                a.rows()
            )));
        }
        if let Some(&c) = coloring.colors.iter().find(|&&c| c as usize >= coloring.count) {
            return Err(Error::InvalidInput(format!("color {c} in a coloring of {} colors", coloring.count)));
        }
        if let Some((i, j)) = coloring.conflict(a) {
            return Err(Error::InvalidInput(format!(
                "not a coloring: rows {i} and {j} are neighbours and both have color {}",
                coloring.colors[i]
            )));
        }
        // A counting sort by color, rows in their original order within a color, the colors
        // numbered in sweep order once counted.
        let mut color_offsets = vec![0u32; coloring.count + 1];
        for &c in &coloring.colors {
            color_offsets[c as usize + 1] += 1;
        }
        if let Some(places) = largest_last(&color_offsets[1..]) {
            coloring.colors.iter_mut().for_each(|c| *c = places[*c as usize]);
            let counts = color_offsets.clone();
            for (c, &place) in places.iter().enumerate() {
                color_offsets[place as usize + 1] = counts[c + 1];
            }
        }
        for c in 0..coloring.count {
            color_offsets[c + 1] += color_offsets[c];
        }
        let mut next = color_offsets.clone();
        let mut new_to_old = vec![0u32; a.rows()];
        let mut old_to_new = vec![0u32; a.rows()];
        for (old, &c) in coloring.colors.iter().enumerate() {
            let new = next[c as usize];
            new_to_old[new as usize] = old as u32;
            old_to_new[old] = new;
            next[c as usize] += 1;
        }
        let permuted = a.permute_symmetric(&new_to_old, &old_to_new);
        Ok(MulticolorOrder { coloring, method: None, new_to_old, color_offsets, permuted })
    }

    /// Colors `a` with `method` (on the GPU for Jones-Plassmann) and renumbers it.
    pub fn colored(gpu: &Gpu, a: &Csr<T>, method: ColoringMethod) -> Result<Self> {
        checked_diagonal(a)?; // the SymGS error first, before any work
        let order = Self::new(a, color(gpu, a, method)?)?;
        Ok(MulticolorOrder { method: Some(method), ..order })
    }

    /// Colors `a` greedily on the host and renumbers it (no GPU needed).
    pub fn greedy(a: &Csr<T>) -> Result<Self> {
        checked_diagonal(a)?;
        let order = Self::new(a, greedy_coloring(a))?;
        Ok(MulticolorOrder { method: Some(ColoringMethod::Greedy), ..order })
    }

    pub fn colors(&self) -> usize {
        self.coloring.count
    }

    /// The CPU reference of the multicolor smoother: the sequential sweep of the renumbered
    /// matrix, in the original numbering.
    pub fn sweep_cpu(&self, r: &[T], x: &mut [T]) -> Result<()> {
        let n = self.permuted.rows();
        check_vector("r", r, n)?;
        check_vector("x", x, n)?;
        let gather = |v: &[T]| self.new_to_old.iter().map(|&old| v[old as usize]).collect::<Vec<T>>();
        let (r_new, mut x_new) = (gather(r), gather(x));
        CpuSymgs::new(&self.permuted)?.sweep(&r_new, &mut x_new)?;
        for (&old, &v) in self.new_to_old.iter().zip(&x_new) {
            x[old as usize] = v;
        }
        Ok(())
    }
}

/// The rows of A in color order (row k of the result is row `order.new_to_old[k]` of A), with
/// A's own column numbers and without the diagonal entries (the relax kernels take the
/// diagonal apart), each row's entries of lower colors first: the matrix and where each row's
/// upper part starts. Built from P A P^T by numbering its columns back.
fn rows_by_color_without_diagonal<T: Scalar>(order: &MulticolorOrder<T>) -> (Csr<T>, Vec<u32>) {
    let (b, colors) = (&order.permuted, &order.coloring.colors);
    let mut row_ptr = Vec::with_capacity(b.rows() + 1);
    let mut upper_start = Vec::with_capacity(b.rows());
    row_ptr.push(0u32);
    let (mut col_indices, mut values) = (Vec::with_capacity(b.nnz()), Vec::with_capacity(b.nnz()));
    for k in 0..b.rows() {
        let (cols, vals) = b.row(k);
        let color = colors[order.new_to_old[k] as usize];
        let is_lower = |c: u32| colors[order.new_to_old[c as usize] as usize] < color;
        for lower in [true, false] {
            if !lower {
                upper_start.push(col_indices.len() as u32);
            }
            let part = cols.iter().zip(vals).filter(|&(&c, _)| c as usize != k && is_lower(c) == lower);
            for (&c, &v) in part {
                col_indices.push(order.new_to_old[c as usize]);
                values.push(v);
            }
        }
        row_ptr.push(col_indices.len() as u32);
    }
    (Csr::from_parts_unchecked(b.rows(), b.cols(), row_ptr, col_indices, values), upper_start)
}

/// Each color's place in the sweep, given its rows: the largest color (the last of equal ones)
/// last, the others in order; None where it is last already. A sweep relaxes its last color
/// once and every other twice (forward and back), so the largest last saves the most rows.
pub(crate) fn largest_last(counts: &[u32]) -> Option<Vec<u32>> {
    let largest = (0..counts.len()).max_by_key(|&c| counts[c])? as u32;
    let last = counts.len() as u32 - 1;
    let place = |c: u32| match c.cmp(&largest) {
        std::cmp::Ordering::Less => c,
        std::cmp::Ordering::Equal => last,
        std::cmp::Ordering::Greater => c - 1,
    };
    (largest != last).then(|| (0..=last).map(place).collect())
}

/// Each row's coloring state on the device (its color in the low 32 bits) and the number of
/// colors: Jones-Plassmann on the GPU, or the greedy coloring on the host from the downloaded
/// pattern.
fn color_states<T: Scalar>(
    gpu: &Gpu,
    m: &SymgsMatrix<T>,
    method: ColoringMethod,
) -> Result<(CudaSlice<u64>, usize)> {
    let (n, csr) = (m.rows, &m.csr);
    let host_pattern = || -> Result<Csr<f32>> {
        let (row_ptr, col_idx) = (gpu.download(&csr.row_ptr)?, gpu.download(&csr.col_idx)?);
        let values = vec![0.0; col_idx.len()];
        Ok(Csr::from_parts_unchecked(n, n, row_ptr, col_idx, values))
    };
    if method == ColoringMethod::Greedy {
        let coloring = greedy_coloring(&host_pattern()?);
        let state: Vec<u64> = coloring.colors.iter().map(|&c| c as u64).collect();
        return Ok((gpu.upload(&state)?, coloring.count));
    }
    let transpose = if m.pattern_symmetric(gpu)? { None } else { Some(host_pattern()?.transpose()) };
    jones_plassmann_states(gpu, n, &csr.row_ptr, &csr.col_idx, method, transpose)
}

/// The order of a grouped copy's groups.
#[derive(Clone, Copy)]
pub(crate) enum GroupOrder {
    /// As numbered: levels, whose order is the sweep's, and node blocks, whose last color is
    /// relaxed both ways in one launch (a large one there made sweeps slower, PERF.md).
    AsNumbered,
    /// Colors: the largest last ([`largest_last`]), its rows' states renumbered to match.
    LargestLast,
}

/// The stable counting sort of the rows of a square pattern on the device (`n` rows, `nnz`
/// entries, each row holding its diagonal) by color on the GPU (see `kernels::color_sort`),
/// the rows taken in row order or in `rows_in_order` (a permutation of them), the colors in
/// `order` (`state` renumbered to it, from the sort's own counts): the permutation (row k of
/// the copy is row `new_to_old[k]` of the pattern), the copy's row pointers (rows without
/// their diagonal), and each nonempty color's rows of the copy.
pub(crate) fn sort_by_color(
    gpu: &Gpu,
    (n, row_ptr, nnz): (usize, &CudaSlice<u32>, usize),
    rows_in_order: Option<&CudaSlice<u32>>,
    state: &mut CudaSlice<u64>,
    colors: usize,
    order: GroupOrder,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>, Vec<ColorSpan>)> {
    let rows = n as u32;
    let off_nnz = u32::try_from(nnz - n).expect("DeviceCsr keeps nnz in u32");
    let chunks = n.div_ceil(CHUNK_ROWS as usize);
    let sort = Launch::linear(chunks * 32, 32).shared(8 * colors);
    let (mut row_base, mut nnz_base) =
        (gpu.zeros::<u32>(colors * chunks)?, gpu.zeros::<u32>(colors * chunks)?);
    let mut new_to_old = gpu.zeros::<u32>(n)?;
    let mut new_row_ptr = gpu.zeros::<u32>(n + 1)?;
    // Without an order the kernel gets the row pointers again and does not read them.
    let (ordered, in_order) = rows_in_order.map_or((0, row_ptr), |o| (1, o));
    for place in [0, 1] {
        if place == 1 {
            let (mut rows_at, mut nnz_at) = (gpu.download(&row_base)?, gpu.download(&nnz_base)?);
            let places = match order {
                GroupOrder::AsNumbered => None,
                GroupOrder::LargestLast => {
                    largest_last(&rows_at.chunks(chunks).map(|c| c.iter().sum()).collect::<Vec<u32>>())
                }
            };
            if let Some(places) = places {
                // SAFETY: a state per row, its color below `colors`; a place per color.
                unsafe { kernels::recolor(gpu, Launch::linear(n, 256), rows, &gpu.upload(&places)?, state)? };
                for counts in [&mut rows_at, &mut nnz_at] {
                    let mut moved = vec![0u32; counts.len()];
                    for (color, chunk_counts) in counts.chunks(chunks).enumerate() {
                        let to = places[color] as usize * chunks;
                        moved[to..to + chunks].copy_from_slice(chunk_counts);
                    }
                    *counts = moved;
                }
            }
            // Exclusive prefix sums, color-major: where each chunk's rows of each color start,
            // and their nonzeros.
            for (counts, base) in [(&mut rows_at, &mut row_base), (&mut nnz_at, &mut nnz_base)] {
                let mut sum = 0u32;
                for c in counts.iter_mut() {
                    (*c, sum) = (sum, sum + *c);
                }
                gpu.upload_into(counts, base)?;
            }
        }
        // SAFETY: a state per row with colors < `colors`, the pattern's row pointers, a
        // permutation of the rows where `ordered`, counters of `colors` x `chunks`, a
        // permutation of n and row pointers of n + 1; a warp per chunk with 8 * colors shared
        // bytes.
        unsafe {
            kernels::color_sort(
                gpu,
                sort,
                place,
                rows,
                colors as u32,
                CHUNK_ROWS,
                off_nnz,
                ordered,
                in_order,
                state,
                row_ptr,
                &mut row_base,
                &mut nnz_base,
                &mut new_to_old,
                &mut new_row_ptr,
            )?;
        }
    }
    // Each color's first row and first nonzero: the prefix sums at its first chunk.
    let (row_starts, nnz_starts) = (gpu.download(&row_base)?, gpu.download(&nnz_base)?);
    let start_of = |c: usize| {
        if c < colors { (row_starts[c * chunks], nnz_starts[c * chunks]) } else { (rows, off_nnz) }
    };
    let spans = (0..colors)
        .map(|c| (start_of(c), start_of(c + 1)))
        .filter(|((first, _), (end, _))| end > first)
        .map(|((first, nnz_first), (end, nnz_end))| ColorSpan {
            first,
            count: end - first,
            nnz: nnz_end - nnz_first,
        })
        .collect();
    Ok((new_to_old, new_row_ptr, spans))
}

/// A nonempty color's rows of a sorted copy and their entries off the diagonal.
pub(crate) struct ColorSpan {
    pub(crate) first: u32,
    pub(crate) count: u32,
    pub(crate) nnz: u32,
}

/// One group's launch (a color, or a level): its rows of the copy and lanes per row.
pub(crate) struct GroupLaunch {
    first: u32,
    count: u32,
    /// Off-diagonal entries of the group's rows.
    nnz: u32,
    width: u32,
}

impl GroupLaunch {
    /// Slices of [`ELL_SLICE`] rows (the last one short) in the sliced-ELL form.
    fn slices(&self) -> u32 {
        self.count.div_ceil(ELL_SLICE)
    }

    /// A thread per row of the group, blocks of whole warps (the sliced-ELL kernels).
    fn thread_per_row(&self) -> Launch {
        Launch::linear(self.count as usize, 128)
    }
}

/// Rows per slice of the sliced-ELL form: a warp's, so that a slice's loads are coalesced.
const ELL_SLICE: u32 = 32;

/// A group is read in sliced-ELL form (unless CSR is asked for) when its entries there,
/// padding included, are at most this many times its nonzeros, it has at least
/// `MIN_ELL_ROWS` rows (a thread each: enough to fill the GPU) and at most `MAX_ELL_ROW_LEN`
/// entries a row on average (a thread's entries are read one after the other). The stencils'
/// colors gain; colors of uneven rows (random SPD, Delaunay) or of few long rows (FEM) lose
/// (PERF.md).
const MAX_ELL_PADDING: f64 = 1.2;
const MIN_ELL_ROWS: u32 = 32_768;
const MAX_ELL_ROW_LEN: u32 = 32;

/// How the sweep reads the grouped copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyForm {
    /// CSR, a group of lanes per row sized to the group's mean row length.
    Csr,
    /// Sliced ELL as in NVIDIA's HPCG: slices of 32 rows, each padded to its longest lower
    /// part and its longest upper part, entry q of every row of the slice side by side; a
    /// thread per row, its loads coalesced across the warp.
    SlicedEll,
}

/// The groups of the copy read in sliced-ELL form ([`CopyForm::SlicedEll`]): per slice its
/// first entry and its two widths (0 for the slices of the other groups), the entries of
/// every slice in order.
struct SlicedEll<T> {
    offsets: CudaSlice<u32>,
    widths: CudaSlice<u32>,
    cols: CudaSlice<u32>,
    values: CudaSlice<T>,
    /// Each group's first slice, if the group is read in this form.
    slice_first: Vec<Option<u32>>,
}

/// A copy of the matrix with its rows grouped (by color here, by level in
/// [`super::level_copies`]), each group's rows independent of each other, without the
/// diagonal (a row's update then reads neither a_ii nor its own old value), the columns and
/// the vectors in the caller's numbering (no gather or scatter of r and x, and a structured
/// matrix keeps the locality of its x reads; but see `x_in_copy_order`). Each row's entries
/// of lower groups come first.
pub(crate) struct GroupedCopy<T> {
    /// The rows in group order without their diagonal: CSR arrays (the relax kernels need no
    /// SpMV analysis); the column indices and values are dropped once `ell` holds them. With
    /// node blocks, a pointer per block counting its neighbour blocks (k entries each), and
    /// k values per entry.
    off_diagonal: (CudaSlice<u32>, CudaSlice<u32>, CudaSlice<T>),
    ell: Option<SlicedEll<T>>,
    /// Entries of the sliced-ELL form, padding included, per nonzero of the copy, where it
    /// was worked out.
    ell_padding: Option<f64>,
    /// Where each row's (each node block's) entries of higher groups start.
    upper_start: CudaSlice<u32>,
    /// a_ii in group order; with blocks, each block's `k x k` diagonal block, row-major.
    diagonal: CudaSlice<T>,
    /// Rows per block, k: 1, or a copy of node blocks ([`GroupedCopy::sorted_blocks`]), whose
    /// entries off the diagonal blocks are kept once per block, the k rows' values side by side.
    block_rows: u32,
    /// Row k of the copy is row `new_to_old[k]` of A.
    new_to_old: CudaSlice<u32>,
    /// The columns number rows of the copy, and the sweeps run on x in the copy's order (a
    /// copy of node blocks of a matrix in no row order: a neighbour block's k values of x then
    /// lie side by side; PERF.md).
    x_in_copy_order: bool,
    /// The nonempty groups in order.
    groups: Vec<GroupLaunch>,
}

impl<T: Scalar> GroupedCopy<T> {
    /// From a host-renumbered order.
    fn from_order(gpu: &Gpu, order: &MulticolorOrder<T>) -> Result<Self> {
        let (b, upper_start) = rows_by_color_without_diagonal(order);
        let mut groups = Vec::new();
        for c in order.color_offsets.windows(2) {
            let (first, count) = (c[0], c[1] - c[0]);
            if count == 0 {
                continue;
            }
            let nnz = b.row_ptr()[c[1] as usize] - b.row_ptr()[c[0] as usize];
            let width = CsrPlan::width_for(nnz as f64 / count as f64);
            groups.push(GroupLaunch { first, count, nnz, width });
        }
        Ok(GroupedCopy {
            off_diagonal: (gpu.upload(b.row_ptr())?, gpu.upload(b.col_indices())?, gpu.upload(b.values())?),
            upper_start: gpu.upload(&upper_start)?,
            ell: None,
            ell_padding: None,
            diagonal: gpu.upload(&order.permuted.diagonal())?,
            new_to_old: gpu.upload(&order.new_to_old)?,
            groups,
            block_rows: 1,
            x_in_copy_order: false,
        })
    }

    /// On the GPU from the uploaded matrix, the rows grouped by `state` (each row's group in
    /// its low 32 bits, below `group_count`; the groups in `order`, `state` renumbered to it):
    /// a counting sort ([`CHUNK_ROWS`] rows per warp, stable within each group, as
    /// [`MulticolorOrder::new`] orders them), then each row copied to its place without its
    /// diagonal. Only the per-group counts of each chunk make the round trip to the host (for
    /// their prefix sums). Each row's entries keep A's order within their part, so the sums
    /// may round differently from those of a copy built from a [`MulticolorOrder`].
    pub(crate) fn sorted(
        gpu: &Gpu,
        m: &SymgsMatrix<T>,
        state: &mut CudaSlice<u64>,
        group_count: usize,
        order: GroupOrder,
    ) -> Result<Self> {
        let (n, csr) = (m.rows, &m.csr);
        let off_nnz = u32::try_from(csr.nnz - n).expect("DeviceCsr keeps nnz in u32");
        let (new_to_old, row_ptr, spans) =
            sort_by_color(gpu, (n, &csr.row_ptr, csr.nnz), None, state, group_count, order)?;
        let groups = spans
            .iter()
            .map(|s| GroupLaunch {
                first: s.first,
                count: s.count,
                nnz: s.nnz,
                width: CsrPlan::width_for(s.nnz as f64 / s.count as f64),
            })
            .collect();
        let (mut col_idx, mut values) =
            (gpu.zeros::<u32>(off_nnz as usize)?, gpu.zeros::<T>(off_nnz as usize)?);
        let (mut diagonal, mut upper_start) = (gpu.zeros::<T>(n)?, gpu.zeros::<u32>(n)?);
        // SAFETY: A's checked square CSR arrays, a state per row, the permutation and row
        // pointers built above (each row's extent its length less its diagonal); a warp per row.
        unsafe {
            kernels::permute_without_diagonal(
                gpu,
                Launch::warp_per_item(n, 4),
                n as u32,
                &new_to_old,
                state,
                &csr.row_ptr,
                &csr.col_idx,
                &csr.values,
                &row_ptr,
                &mut upper_start,
                &mut col_idx,
                &mut values,
                &mut diagonal,
            )?;
        }
        Ok(GroupedCopy {
            off_diagonal: (row_ptr, col_idx, values),
            ell: None,
            ell_padding: None,
            upper_start,
            diagonal,
            new_to_old,
            groups,
            block_rows: 1,
            x_in_copy_order: false,
        })
    }

    /// As [`GroupedCopy::sorted`] for the node blocks of the matrix, `state` holding each
    /// block's color: the blocks sorted by color (stable), each block's k rows in turn, its
    /// entries off the diagonal block once per block with the k rows' values side by side
    /// (`kernels::permute_blocks`); each color read by groups of lanes per block. With an
    /// `order` of the blocks (for a matrix whose row order has no locality: a breadth-first
    /// one) the blocks of each color come in that order, the columns number rows of the copy,
    /// and the sweeps run on x in the copy's order.
    pub(crate) fn sorted_blocks(
        gpu: &Gpu,
        m: &SymgsMatrix<T>,
        blocks: &NodeBlocks,
        state: &mut CudaSlice<u64>,
        colors: usize,
        order: Option<&CudaSlice<u32>>,
    ) -> Result<Self> {
        let (n, csr, k) = (m.rows, &m.csr, blocks.k);
        let (count, graph_entries) = (blocks.count, blocks.block_col.len());
        let (block_order, block_ptr, spans) = sort_by_color(
            gpu,
            (count, &blocks.block_ptr, graph_entries),
            order,
            state,
            colors,
            GroupOrder::AsNumbered,
        )?;
        // With an order, `position` holds where each block of A lands in the copy.
        let x_in_copy_order = order.is_some();
        let mut position = gpu.zeros::<u32>(if x_in_copy_order { count } else { 0 })?;
        if x_in_copy_order {
            // SAFETY: the sorted blocks, a permutation of `count`; a position per block.
            unsafe {
                kernels_blocks::block_positions(
                    gpu,
                    Launch::linear(count, 256),
                    count as u32,
                    &block_order,
                    &mut position,
                )?
            };
        }
        // Entries off the diagonal blocks: k per neighbour block, k values each.
        let entries = k as usize * (blocks.block_col.len() - blocks.count);
        let (mut col_idx, mut values) = (gpu.zeros::<u32>(entries)?, gpu.zeros::<T>(k as usize * entries)?);
        let mut diagonal = gpu.zeros::<T>(n * k as usize)?;
        let (mut upper_start, mut new_to_old) = (gpu.zeros::<u32>(blocks.count)?, gpu.zeros::<u32>(n)?);
        // SAFETY: the blocks' order (a permutation of them), members, ranks and graph as
        // `node_blocks` built them (each member row shares its leader row's pattern), A's
        // square CSR arrays, a state per block, a position per block where columns are copy rows;
        // the copy's arrays sized above; a warp per block.
        unsafe {
            kernels_blocks::permute_blocks(
                gpu,
                Launch::warp_per_item(blocks.count, 4),
                blocks.count as u32,
                k,
                &block_order,
                x_in_copy_order as u32,
                &position,
                &blocks.members,
                state,
                &blocks.block_of,
                &blocks.rank,
                &csr.row_ptr,
                &csr.col_idx,
                &csr.values,
                &block_ptr,
                &mut new_to_old,
                &mut upper_start,
                &mut col_idx,
                &mut values,
                &mut diagonal,
            )?;
        }
        let groups = spans
            .iter()
            .map(|s| GroupLaunch {
                first: k * s.first,
                count: k * s.count,
                nnz: k * k * s.nnz,
                // At most 8 lanes a block, and at most twice its rows: a color's groups then
                // fit in fewer waves, each lane with more gathers in flight (FEM blocks of 2-4
                // rows against 16 or 32 lanes, and blocks of 2 rows against 8, PERF.md); lane
                // t < k relaxes row t.
                width: CsrPlan::width_for((k * s.nnz) as f64 / s.count as f64)
                    .clamp(k.next_power_of_two(), (2 * k).next_power_of_two().min(8)),
            })
            .collect();
        Ok(GroupedCopy {
            off_diagonal: (block_ptr, col_idx, values),
            ell: None,
            ell_padding: None,
            upper_start,
            diagonal,
            new_to_old,
            groups,
            block_rows: k,
            x_in_copy_order,
        })
    }

    pub(crate) fn groups(&self) -> &[GroupLaunch] {
        &self.groups
    }

    /// Groups read in sliced-ELL form.
    fn ell_groups(&self) -> usize {
        self.ell.as_ref().map_or(0, |ell| ell.slice_first.iter().flatten().count())
    }

    /// Builds the sliced-ELL form on the GPU from the CSR copy for the groups `form` asks for
    /// (all, or none), or if `form` is `None` for those it suits (`MAX_ELL_PADDING`,
    /// `MIN_ELL_ROWS`, `MAX_ELL_ROW_LEN`); the CSR entries are dropped when no group reads them
    /// any more. Only the slices' widths make the round trip to the host (for their prefix
    /// sums).
    pub(crate) fn with_form(mut self, gpu: &Gpu, form: Option<CopyForm>) -> Result<Self> {
        if form == Some(CopyForm::Csr) || self.groups.is_empty() || self.block_rows > 1 {
            return Ok(self);
        }
        let mut slice_first = Vec::with_capacity(self.groups.len());
        let mut slices = 0u32;
        for group in &self.groups {
            slice_first.push(slices);
            slices += group.slices();
        }
        let (row_ptr, col_idx, values) = &self.off_diagonal;
        let mut widths = gpu.zeros::<u32>(2 * slices as usize)?;
        for (group, &first_slice) in self.groups.iter().zip(&slice_first) {
            // SAFETY: the group's rows of the copy, whose row pointers and upper starts these
            // are; two widths per slice of every group.
            unsafe {
                kernels::ell_widths(
                    gpu,
                    group.thread_per_row(),
                    group.first,
                    group.count,
                    first_slice,
                    row_ptr,
                    &self.upper_start,
                    &mut widths,
                )?;
            }
        }
        // Each group's entries in the form, and the choice; the slices of the groups left in
        // CSR get no entries.
        let mut host_widths = gpu.download(&widths)?;
        let slice_entries = |pair: &[u32]| ELL_SLICE as u64 * (pair[0] + pair[1]) as u64;
        let mut chosen = Vec::with_capacity(self.groups.len());
        let (mut all_entries, mut all_nnz) = (0u64, 0u64);
        for (group, &first_slice) in self.groups.iter().zip(&slice_first) {
            let range = 2 * first_slice as usize..2 * (first_slice + group.slices()) as usize;
            let entries: u64 = host_widths[range.clone()].chunks(2).map(slice_entries).sum();
            (all_entries, all_nnz) = (all_entries + entries, all_nnz + group.nnz as u64);
            let suits = entries as f64 <= MAX_ELL_PADDING * group.nnz as f64
                && group.count >= MIN_ELL_ROWS
                && group.nnz <= MAX_ELL_ROW_LEN * group.count;
            let ell = form == Some(CopyForm::SlicedEll) || suits;
            if !ell {
                host_widths[range].fill(0);
            }
            chosen.push(ell.then_some(first_slice));
        }
        self.ell_padding = Some(all_entries as f64 / all_nnz.max(1) as f64);
        let mut offsets = Vec::with_capacity(slices as usize);
        let mut entries = 0u64;
        for pair in host_widths.chunks(2) {
            offsets.push(entries as u32); // every offset is below `entries`, checked next
            entries += slice_entries(pair);
        }
        // No entries, or more than u32 offsets reach: stay in CSR.
        if entries == 0 || entries > u32::MAX as u64 {
            return Ok(self);
        }
        gpu.upload_into(&host_widths, &mut widths)?;
        let offsets = gpu.upload(&offsets)?;
        // The form is held beside the CSR copy until it is built: where that does not fit, a
        // choice of our own stays in CSR (an asked-for form is an error).
        let arrays =
            gpu.zeros::<u32>(entries as usize).and_then(|c| Ok((c, gpu.zeros::<T>(entries as usize)?)));
        let (mut cols, mut ell_values) = match arrays {
            Err(Error::OutOfMemory { .. }) if form.is_none() => return Ok(self),
            other => other?,
        };
        for (group, first_slice) in self.groups.iter().zip(&chosen) {
            let Some(first_slice) = *first_slice else { continue };
            // SAFETY: as for the widths; the offsets and widths just computed place every
            // slice's blocks apart inside the arrays of `entries`.
            unsafe {
                kernels::ell_fill(
                    gpu,
                    group.thread_per_row(),
                    group.first,
                    group.count,
                    first_slice,
                    &self.new_to_old,
                    row_ptr,
                    &self.upper_start,
                    col_idx,
                    values,
                    &offsets,
                    &widths,
                    &mut cols,
                    &mut ell_values,
                )?;
            }
        }
        if chosen.iter().all(Option::is_some) {
            self.off_diagonal.1 = gpu.zeros(0)?;
            self.off_diagonal.2 = gpu.zeros(0)?;
        }
        self.ell = Some(SlicedEll { offsets, widths, cols, values: ell_values, slice_first: chosen });
        Ok(self)
    }

    /// Queues a symmetric sweep of kind `kind`: the groups in order, each row keeping r minus
    /// its sum over lower groups in `carried`, then back from the second-to-last group, each
    /// row reading that and its entries of higher groups (and no r). The rows of a group do not
    /// read each other, so relaxing the last group again at once would recompute its rows from
    /// the very values they were just computed from (the same result, to the bit). For the same
    /// reason a sweep that follows another skips its first group, and its forward half takes
    /// each row's sum over higher groups from the backward half before (no higher group has
    /// changed since), which that one kept in `carried` (but the first group's, whose slots
    /// keep r). The last group has no higher entries: it never keeps or takes a sum. A copy of
    /// node blocks relaxes its last group's blocks again in reverse order in the same launch,
    /// and its first group again after another sweep (from all its entries): a block's rows
    /// read each other's new values. A copy whose sweeps run on x in its own order
    /// (`x_in_copy_order`) sweeps `x_copy`, gathered from x first (but from zero or after
    /// another sweep); its backward half writes each new value to x as well.
    fn queue_sweep(
        &self,
        queue: Queue<'_>,
        carried: &mut CudaSlice<T>,
        r: &CudaSlice<T>,
        x: &mut CudaSlice<T>,
        x_copy: &mut CudaSlice<T>,
        kind: SweepKind,
    ) -> Result<()> {
        let (groups, blocks) = (self.groups.len(), self.block_rows > 1);
        if self.x_in_copy_order && kind.start == Start::Given {
            let n = self.new_to_old.len();
            // SAFETY: new_to_old holds a row of x for each of the n rows of the copy, and
            // x_copy a value per row of the copy.
            unsafe { blas1::gather(queue, Launch::linear(n, 256), n as u32, &self.new_to_old, x, x_copy)? };
        }
        let first = (kind.start == Start::AfterKept && !blocks) as usize;
        let forward = |g: usize| match kind.start {
            Start::Given => FORWARD,
            Start::Zero => FORWARD_FROM_ZERO,
            Start::AfterKept if g == 0 || g + 1 == groups => FORWARD,
            Start::AfterKept => FORWARD_KEPT_UPPER,
        };
        let backward = |g: usize| if kind.keep_upper && g > 0 { BACKWARD_KEEPING_UPPER } else { BACKWARD };
        let forward = (first..groups).map(|g| (g, forward(g)));
        let backward = (0..groups.saturating_sub(1)).rev().map(|g| (g, backward(g)));
        for (group, sweep) in forward.chain(backward) {
            self.queue_group(queue, group, sweep, carried, r, x, x_copy)?;
        }
        Ok(())
    }

    /// Queues the update of group `index`'s rows, x in place (`kernels::relax_color`, or
    /// `relax_color_ell` on the sliced-ELL form): for the forward `sweep` from all their
    /// entries (of lower groups only from zero), keeping each row's r minus its sum over lower
    /// groups in `carried`; for the backward one from that and their entries of higher
    /// groups. A copy of node blocks (`relax_block`) relaxes its last group forward and back.
    #[allow(clippy::too_many_arguments)] // the group, its sweep and the vectors
    fn queue_group(
        &self,
        queue: Queue<'_>,
        index: usize,
        sweep: u32,
        carried: &mut CudaSlice<T>,
        r: &CudaSlice<T>,
        x: &mut CudaSlice<T>,
        x_copy: &mut CudaSlice<T>,
    ) -> Result<()> {
        let group = &self.groups[index];
        let (row_ptr, col_idx, values) = &self.off_diagonal;
        if self.block_rows > 1 {
            let and_back = index + 1 == self.groups.len();
            let k = self.block_rows;
            let launch = Launch::linear((group.count / k) as usize * group.width as usize, 128);
            // SAFETY: blocks first / k.. of the copy, its block pointers, upper starts, k
            // values per entry (their columns rows of the copy where x_in_copy_order says so)
            // and k x k diagonal blocks as `permute_blocks` wrote them; vectors as below,
            // x_copy a value per row of the copy if it is read; blocks a multiple of 32.
            return unsafe {
                kernels_blocks::relax_block(
                    queue,
                    launch,
                    group.width,
                    k,
                    sweep,
                    and_back as u32,
                    group.first / k,
                    group.count / k,
                    &self.new_to_old,
                    row_ptr,
                    &self.upper_start,
                    col_idx,
                    values,
                    &self.diagonal,
                    carried,
                    r,
                    self.x_in_copy_order as u32,
                    x,
                    x_copy,
                )
            };
        }
        if let Some((ell, slice_first)) = self.ell.as_ref().and_then(|e| Some((e, e.slice_first[index]?))) {
            // SAFETY: rows first..first + count of the copy and their slices, the blocks
            // `ell_fill` wrote; r minus the lower sums, and vectors, as below; blocks a multiple
            // of 32.
            return unsafe {
                kernels::relax_color_ell(
                    queue,
                    group.thread_per_row(),
                    sweep,
                    group.first,
                    group.count,
                    slice_first,
                    &self.new_to_old,
                    &ell.offsets,
                    &ell.widths,
                    &ell.cols,
                    &ell.values,
                    &self.diagonal,
                    carried,
                    r,
                    x,
                )
            };
        }
        let launch = Launch::linear(group.count as usize * group.width as usize, RELAX_COLOR_THREADS);
        // SAFETY: rows first..first + count of the copy without its diagonal, with their rows
        // of A and the starts of their upper parts; r minus a lower sum per row (written by a
        // forward launch before any backward one reads it); vectors of the copy's rows; blocks a
        // multiple of 32.
        unsafe {
            kernels::relax_color(
                queue,
                launch,
                group.width,
                sweep,
                group.first,
                group.count,
                &self.new_to_old,
                row_ptr,
                &self.upper_start,
                col_idx,
                values,
                &self.diagonal,
                carried,
                r,
                x,
            )
        }
    }
}

/// Where a sweep of the grouped copy starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    /// x as given.
    Given,
    /// x = 0, whatever it holds (a preconditioner's sweep).
    Zero,
    /// Where the sweep before left x, having kept its upper sums.
    AfterKept,
}

/// A sweep of the grouped copy: where it starts, and whether it keeps its upper sums for a
/// sweep that follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SweepKind {
    start: Start,
    keep_upper: bool,
}

impl SweepKind {
    /// Sweep `index` of `count` in one call.
    fn in_chain(index: usize, count: usize) -> SweepKind {
        let start = if index == 0 { Start::Given } else { Start::AfterKept };
        SweepKind { start, keep_upper: index + 1 < count }
    }

    /// A sweep on its own, from x or from zero.
    fn alone(from_zero: bool) -> SweepKind {
        SweepKind { start: if from_zero { Start::Zero } else { Start::Given }, keep_upper: false }
    }

    /// Its slot among the captured sweeps.
    fn slot(self) -> usize {
        2 * self.start as usize + self.keep_upper as usize
    }
}

/// A [`GroupedCopy`] and what its sweeps keep from one call to the next: the multicolor and
/// the level-copies smoothers sweep through it.
pub(crate) struct GroupedSweeps<T> {
    pub(crate) copy: GroupedCopy<T>,
    /// Each row's r minus its sum over lower groups, from the forward sweep to the backward
    /// one, and its sum over higher groups from there to the next sweep's forward one.
    carried: CudaSlice<T>,
    /// x in the copy's order, where the copy's sweeps run on it (`x_in_copy_order`); empty
    /// otherwise.
    x_copy: CudaSlice<T>,
    /// The captured sweeps, one per [`SweepKind::slot`], keyed by the addresses of r and x.
    graphs: [GraphReplay<(u64, u64)>; 6],
    /// L2 set aside for x from the first sweep on, while this lives ([`keep_in_l2`]).
    set_aside: Option<L2SetAside>,
    /// Sweeps replayed from CUDA graphs (the default), or launched one by one.
    use_graph: bool,
}

impl<T: Scalar> GroupedSweeps<T> {
    pub(crate) fn new(gpu: &Gpu, copy: GroupedCopy<T>) -> Result<Self> {
        let n = copy.new_to_old.len();
        let carried = gpu.zeros(n.max(1))?;
        let x_copy = gpu.zeros(if copy.x_in_copy_order { n } else { 0 })?;
        Ok(GroupedSweeps {
            copy,
            carried,
            x_copy,
            graphs: Default::default(),
            set_aside: None,
            use_graph: true,
        })
    }

    /// Drops the captured sweeps (the copy's launches changed).
    fn forget_graphs(&mut self) {
        self.graphs = Default::default();
    }

    /// A symmetric sweep, x updated in place (from zero: see [`GroupedCopy::queue_sweep`]).
    pub(crate) fn run(
        &mut self,
        gpu: &Gpu,
        r: &CudaSlice<T>,
        x: &mut CudaSlice<T>,
        from_zero: bool,
    ) -> Result<()> {
        self.run_kind(gpu, r, x, SweepKind::alone(from_zero))
    }

    /// `count` symmetric sweeps, each but the first taking over the upper sums of the one
    /// before: the values of `count` calls of [`GroupedSweeps::run`], to the bit.
    pub(crate) fn run_chain(
        &mut self,
        gpu: &Gpu,
        r: &CudaSlice<T>,
        x: &mut CudaSlice<T>,
        count: usize,
    ) -> Result<()> {
        (0..count).try_for_each(|s| self.run_kind(gpu, r, x, SweepKind::in_chain(s, count)))
    }

    /// A sweep of kind `kind`, replayed from a CUDA graph, or launched without `use_graph`.
    fn run_kind(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>, kind: SweepKind) -> Result<()> {
        let rows = self.copy.new_to_old.len();
        check_lengths(rows, r.len(), x.len())?;
        if rows == 0 {
            return Ok(());
        }
        // Each group gathers x at random while its rows stream past: x (or the copy's x) is
        // kept in L2.
        L2SetAside::hold(&mut self.set_aside, gpu, x.len() * size_of::<T>())?;
        let (copy, carried, x_copy) = (&self.copy, &mut self.carried, &mut self.x_copy);
        let mut queue = |queue: Queue<'_>, x: &mut CudaSlice<T>| {
            if copy.x_in_copy_order {
                keep_in_l2(queue, x_copy, |x_copy| copy.queue_sweep(queue, carried, r, x, x_copy, kind))
            } else {
                keep_in_l2(queue, x, |x| copy.queue_sweep(queue, carried, r, x, x_copy, kind))
            }
        };
        if !self.use_graph {
            return queue(gpu.into(), x);
        }
        let key = (device_ptr(gpu, r) as u64, device_ptr(gpu, x) as u64);
        self.graphs[kind.slot()].run(gpu, key, |stream| queue(gpu.on(stream), x))
    }
}

/// The multicolor smoother on the GPU: its own copy of the matrix with the rows in color
/// order (`GroupedCopy`). The forward sweep keeps each row's r minus its sum over its lower
/// colors, which no launch changes before the row's backward update, so the backward sweep
/// reads only the upper parts.
pub struct MulticolorSmoother<T> {
    sweeps: GroupedSweeps<T>,
    method: Option<ColoringMethod>,
    /// The form asked for ([`MulticolorSmoother::from_matrix_as`]), if any.
    chosen_form: Option<CopyForm>,
    /// Lanes per row set by [`MulticolorSmoother::with_lanes_per_row`].
    fixed_lanes: Option<u32>,
}

impl<T: Scalar> MulticolorSmoother<T> {
    fn with_copy(
        gpu: &Gpu,
        copy: GroupedCopy<T>,
        method: Option<ColoringMethod>,
        form: Option<CopyForm>,
    ) -> Result<Self> {
        Ok(MulticolorSmoother {
            sweeps: GroupedSweeps::new(gpu, copy.with_form(gpu, form)?)?,
            method,
            chosen_form: form,
            fixed_lanes: None,
        })
    }

    /// From a host-renumbered order (uploaded).
    pub fn new(gpu: &Gpu, order: &MulticolorOrder<T>) -> Result<Self> {
        Self::with_copy(gpu, GroupedCopy::from_order(gpu, order)?, order.method, None)
    }

    /// Colors the matrix with `method` and sorts its rows by color on the GPU, from the copy
    /// the exact-order smoothers and PCG use (`GroupedCopy::sorted`); the greedy coloring is
    /// computed on the host from the downloaded pattern. The sweep reads the copy in sliced-ELL
    /// form where its padding is small ([`CopyForm`]), else in CSR.
    ///
    /// Where the matrix is made of node blocks (every row sharing its pattern with the same
    /// number k - 1 of others, 2 <= k <= 4: the unknowns of a mesh node), the Jones-Plassmann
    /// methods color the blocks instead of the rows, and the sweep relaxes each block's rows in
    /// turn ([`MulticolorSmoother::block_rows`]): k times fewer colors, and x read once per
    /// block entry. The greedy coloring, and [`MulticolorSmoother::from_matrix_as`], color rows.
    pub fn from_matrix(gpu: &Gpu, m: &SymgsMatrix<T>, method: ColoringMethod) -> Result<Self> {
        if method != ColoringMethod::Greedy
            && let Some(blocks) = node_blocks(gpu, m)?
        {
            // The graph of the blocks is symmetric, as A's pattern is.
            let (block_ptr, block_col) = (&blocks.block_ptr, &blocks.block_col);
            let (mut state, colors) =
                jones_plassmann_states::<f32>(gpu, blocks.count, block_ptr, block_col, method, None)?;
            // A matrix in no row order: its blocks in breadth-first order within each color.
            let unordered =
                mean_distance(gpu, m.rows, &m.csr.row_ptr, &m.csr.col_idx)? > UNORDERED_MEAN_DISTANCE;
            let order = if unordered { Some(breadth_first_blocks(gpu, m, &blocks)?) } else { None };
            let copy = GroupedCopy::sorted_blocks(gpu, m, &blocks, &mut state, colors, order.as_ref())?;
            return Self::with_copy(gpu, copy, Some(method), None);
        }
        let (mut state, colors) = color_states(gpu, m, method)?;
        let copy = GroupedCopy::sorted(gpu, m, &mut state, colors, GroupOrder::LargestLast)?;
        Self::with_copy(gpu, copy, Some(method), None)
    }

    /// As [`Self::from_matrix`], the sweep reading the copy in `form` whatever its padding.
    pub fn from_matrix_as(
        gpu: &Gpu,
        m: &SymgsMatrix<T>,
        method: ColoringMethod,
        form: CopyForm,
    ) -> Result<Self> {
        let (mut state, colors) = color_states(gpu, m, method)?;
        let copy = GroupedCopy::sorted(gpu, m, &mut state, colors, GroupOrder::LargestLast)?;
        Self::with_copy(gpu, copy, Some(method), Some(form))
    }

    /// Rows per node block: 1 where rows are colored one by one.
    pub fn block_rows(&self) -> usize {
        self.sweeps.copy.block_rows as usize
    }

    /// Whether the sweeps run on x in the copy's order (node blocks of a matrix in no row
    /// order), gathered from x at the start of each call and written back by the backward
    /// launches.
    pub fn x_in_copy_order(&self) -> bool {
        self.sweeps.copy.x_in_copy_order
    }

    /// Colors read in sliced-ELL form ([`CopyForm`]); the others are read in CSR.
    pub fn ell_colors(&self) -> usize {
        self.sweeps.copy.ell_groups()
    }

    /// Entries of the sliced-ELL form, padding included, per nonzero of the copy, over all
    /// colors (not worked out when the CSR form was asked for).
    pub fn ell_padding(&self) -> Option<f64> {
        self.sweeps.copy.ell_padding
    }

    /// Row k of the colored copy is row `new_to_old[k]` of A.
    pub fn new_to_old(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.download(&self.sweeps.copy.new_to_old)
    }

    /// Uploads `a`, colors it on the GPU (the default [`ColoringMethod`]) and sorts it by color there.
    pub fn from_csr(gpu: &Gpu, a: &Csr<T>) -> Result<Self> {
        Self::with_coloring(gpu, a, ColoringMethod::default())
    }

    /// Uploads `a`, colors it with `method` and sorts it by color on the GPU.
    pub fn with_coloring(gpu: &Gpu, a: &Csr<T>, method: ColoringMethod) -> Result<Self> {
        Self::from_matrix(gpu, &SymgsMatrix::upload(gpu, a)?, method)
    }

    /// Replays each sweep from a CUDA graph (the default; captured at the first sweep with
    /// given r and x) or launches every kernel each time.
    pub fn use_graph(mut self, yes: bool) -> Self {
        self.sweeps.use_graph = yes;
        self
    }

    /// Gives every color's rows `lanes` lanes each (2, 4, 8, 16 or 32) instead of the width
    /// its mean row length calls for, in the CSR form; with node blocks, every block `lanes`
    /// lanes, at least its rows. Any width gives the same result.
    pub fn with_lanes_per_row(mut self, lanes: u32) -> Result<Self> {
        if !lanes.is_power_of_two() || !(2..=32).contains(&lanes) {
            return Err(Error::InvalidInput(format!(
                "multicolor lanes per row must be 2, 4, 8, 16 or 32, got {lanes}"
            )));
        }
        if self.ell_colors() > 0 {
            return Err(Error::InvalidInput(
                "multicolor lanes per row apply to the CSR form (the sliced-ELL form has a thread per row)"
                    .into(),
            ));
        }
        let k = self.sweeps.copy.block_rows;
        if lanes < k {
            return Err(Error::InvalidInput(format!(
                "multicolor lanes per block must be at least the block's {k} rows, got {lanes}"
            )));
        }
        self.sweeps.copy.groups.iter_mut().for_each(|c| c.width = lanes);
        self.fixed_lanes = Some(lanes);
        self.sweeps.forget_graphs();
        Ok(self)
    }

    /// Colors (nonempty ones; launches per half-sweep).
    pub fn colors(&self) -> usize {
        self.sweeps.copy.groups.len()
    }

    /// Rows of each color, in sweep order.
    pub fn color_rows(&self) -> Vec<u32> {
        self.sweeps.copy.groups.iter().map(|c| c.count).collect()
    }

    /// Lanes per row of each color's launch.
    pub fn widths(&self) -> Vec<u32> {
        self.sweeps.copy.groups.iter().map(|c| c.width).collect()
    }
}

impl<T: Scalar> Smoother<T> for MulticolorSmoother<T> {
    fn name(&self) -> String {
        let method = match self.method {
            None | Some(ColoringMethod::Auto) => String::new(),
            Some(m) => format!("-{}", m.name()),
        };
        let form = match self.chosen_form {
            None => "",
            Some(CopyForm::Csr) => "-csr",
            Some(CopyForm::SlicedEll) => "-ell",
        };
        let lanes = self.fixed_lanes.map_or(String::new(), |l| format!("-{l}lanes"));
        let graph = if self.sweeps.use_graph { "" } else { "-launches" };
        format!("multicolor{method}{form}{lanes}{graph}")
    }

    fn exact_order(&self) -> bool {
        false
    }

    fn row_order(&self, gpu: &Gpu) -> Result<Option<Vec<u32>>> {
        self.new_to_old(gpu).map(Some)
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.sweeps.run(gpu, r, x, false)
    }

    fn sweep_from_zero(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.sweeps.run(gpu, r, x, true)
    }

    fn sweeps(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>, count: usize) -> Result<()> {
        self.sweeps.run_chain(gpu, r, x, count)
    }
}

#[cfg(test)]
mod tests {
    use super::largest_last;

    #[test]
    fn the_largest_color_goes_last_and_the_others_keep_their_order() {
        assert_eq!(largest_last(&[5, 9, 2, 1]), Some(vec![0, 3, 1, 2]));
        assert_eq!(largest_last(&[9, 5, 2]), Some(vec![2, 0, 1]));
        // Already last, or the last of equal ones: no change.
        assert_eq!(largest_last(&[5, 2, 9]), None);
        assert_eq!(largest_last(&[4, 4, 4]), None);
        assert_eq!(largest_last(&[4, 1, 4, 2]), Some(vec![0, 1, 3, 2]));
        assert_eq!(largest_last(&[7]), None);
        assert_eq!(largest_last(&[]), None);
    }
}
