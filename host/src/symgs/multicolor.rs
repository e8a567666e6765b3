//! Multicolor SymGS: a *different* smoother from the sequential one. Rows are colored so that
//! no two neighbours (a_ij or a_ji stored: the graph of A + A^T, so unsymmetric patterns are
//! fine) share a color, and the matrix is renumbered color by color (P A P^T, rows of a color
//! contiguous, in their original order within the color). A sweep runs the colors in order,
//! one launch each, then back in reverse order (from the second-to-last color): the
//! sequential sweep of the renumbered matrix to rounding, so it converges like Gauss-Seidel
//! (verified by residual reduction), but its iterates differ from the original order's.
//!
//! The coloring ([`ColoringMethod`]) is by default computed on the GPU: Jones-Plassmann rounds
//! (`kernels/src/symgs/multicolor.rs`), each uncolored row whose priority beats all its
//! uncolored neighbours' taking the smallest color none of its neighbours holds. Priority:
//! larger degree first, ties in row order (the Welsh-Powell greedy order: 8 colors on the
//! 27-point stencil, its 2x2x2 parity classes, in about 900 rounds at 128^3; 16 on the random
//! SPD matrix of 2 M rows and 27 per row, whose late rows have up to 200 neighbours), ties by a
//! hash of the row after [`ROW_ORDER_ROUNDS`] rounds so that long chains of equal-degree rows
//! (a tridiagonal matrix) cannot make the rounds as many as the rows. The host's greedy
//! coloring in row order stays as the reference (47 colors on the random matrix: its
//! high-degree late rows come last). Hashed priorities alone (Jones-Plassmann-Luby) take the
//! fewest rounds but 18 colors on the stencil, whose sweep then takes 1.5 times as long.
//!
//! The GPU copy keeps the diagonal apart (a row's update reads neither a_ii from the matrix
//! nor its own old value). A sweep is replayed from a CUDA graph by default (the gather of r
//! and x into color order, 2c - 1 color launches, the scatter of x back); each color's launch
//! gives each row the lanes its color's mean row length calls for ([`CsrPlan::width_for`]).

use rayon::prelude::*;

use super::Smoother;
use super::cpu::{CpuSymgs, check_vector, checked_diagonal};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, GraphReplay, Launch, Queue};
use crate::kernels::symgs::multicolor as kernels;
use crate::sparse::Csr;
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
    /// Jones-Plassmann on the GPU, larger degree first, ties in row order (then hashed).
    #[default]
    JonesPlassmann,
    /// Jones-Plassmann on the GPU with hashed priorities only (Jones-Plassmann-Luby).
    JonesPlassmannRandom,
    /// First fit in row order on the host.
    Greedy,
}

impl ColoringMethod {
    pub const ALL: [ColoringMethod; 3] =
        [ColoringMethod::JonesPlassmann, ColoringMethod::JonesPlassmannRandom, ColoringMethod::Greedy];

    /// The CLI's name: `jp`, `jp-random`, `greedy`.
    pub fn name(self) -> &'static str {
        match self {
            ColoringMethod::JonesPlassmann => "jp",
            ColoringMethod::JonesPlassmannRandom => "jp-random",
            ColoringMethod::Greedy => "greedy",
        }
    }

    pub fn from_name(name: &str) -> Option<ColoringMethod> {
        ColoringMethod::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Jones-Plassmann rounds that break degree ties by row order; later rounds use a hash.
pub const ROW_ORDER_ROUNDS: u32 = 2048;

/// Jones-Plassmann gives up (with an error) past this many rounds.
pub const MAX_ROUNDS: u32 = 16384;

/// Rounds queued between two checks of how many rows are colored (extra rounds are no-ops).
const ROUNDS_PER_CHECK: u32 = 16;

/// Colors `a` (square) with `method`: on the GPU for the Jones-Plassmann methods.
pub fn color<T: Scalar>(gpu: &Gpu, a: &Csr<T>, method: ColoringMethod) -> Result<Coloring> {
    match method {
        ColoringMethod::JonesPlassmann => jones_plassmann(gpu, a, true),
        ColoringMethod::JonesPlassmannRandom => jones_plassmann(gpu, a, false),
        ColoringMethod::Greedy => Ok(greedy_coloring(a)),
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

/// Jones-Plassmann on the GPU (see the module doc): the graph of A + A^T, A^T's pattern built
/// on the host only when the GPU finds the pattern unsymmetric.
fn jones_plassmann<T: Scalar>(gpu: &Gpu, a: &Csr<T>, degree_first: bool) -> Result<Coloring> {
    if a.rows() != a.cols() {
        return Err(Error::InvalidInput(format!(
            "coloring needs a square matrix, got {} x {}",
            a.rows(),
            a.cols()
        )));
    }
    let n = a.rows();
    if n == 0 {
        return Ok(Coloring { colors: Vec::new(), count: 0 });
    }
    let rows = n as u32;
    let launch = Launch::linear(n, 256);
    let row_ptr = gpu.upload(a.row_ptr())?;
    let col_idx = gpu.upload(a.col_indices())?;
    let mut unsymmetric = gpu.zeros::<u32>(1)?;
    // SAFETY: a valid square CSR pattern of `rows` rows, one flag.
    unsafe { kernels::pattern_unsymmetric(gpu, launch, rows, &row_ptr, &col_idx, &mut unsymmetric)? };
    let transpose = if gpu.download(&unsymmetric)?[0] != 0 {
        let t = a.transpose();
        Some((gpu.upload(t.row_ptr())?, gpu.upload(t.col_indices())?))
    } else {
        None
    };
    let transposed = transpose.is_some() as u32;
    // Without a transpose the kernels get A's pattern again and do not read it.
    let (t_row_ptr, t_col_idx) = transpose.as_ref().map_or((&row_ptr, &col_idx), |(p, c)| (p, c));
    let mut state = gpu.zeros::<u64>(n)?;
    // SAFETY: row pointers of rows + 1 entries, a state per row.
    unsafe { kernels::jp_init(gpu, launch, rows, transposed, &row_ptr, t_row_ptr, &mut state)? };
    let (degree_first, row_order_rounds) = if degree_first { (1u32, ROW_ORDER_ROUNDS) } else { (0, 0) };
    let mut colored = gpu.zeros::<u32>(1)?;
    let mut round = 0u32;
    loop {
        for _ in 0..ROUNDS_PER_CHECK {
            // SAFETY: valid square patterns (A, and A^T or A again), a state per row, one
            // counter; blocks of 256.
            unsafe {
                kernels::jp_round(
                    gpu,
                    launch,
                    rows,
                    round,
                    degree_first,
                    row_order_rounds,
                    transposed,
                    &row_ptr,
                    &col_idx,
                    t_row_ptr,
                    t_col_idx,
                    &mut state,
                    &mut colored,
                )?;
            }
            round += 1;
        }
        let done = gpu.download(&colored)?[0];
        if done >= rows {
            break;
        }
        if round >= MAX_ROUNDS {
            return Err(Error::Library {
                library: "SymGS",
                what: "Jones-Plassmann coloring",
                message: format!(
                    "{} of {rows} rows still uncolored after {round} rounds; color on the host \
                     instead (ColoringMethod::Greedy, `--coloring greedy`)",
                    rows - done
                ),
            });
        }
    }
    let colors: Vec<u32> = gpu.download(&state)?.into_iter().map(|s| s as u32).collect();
    let count = colors.iter().max().map_or(0, |&c| c as usize + 1);
    Ok(Coloring { colors, count })
}

/// A matrix renumbered color by color, with what it takes to go back and forth.
pub struct MulticolorOrder<T> {
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
    /// no two neighbours alike), and renumbers `a` by it.
    pub fn new(a: &Csr<T>, coloring: Coloring) -> Result<Self> {
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
        // A counting sort by color, rows in their original order within a color.
        let mut color_offsets = vec![0u32; coloring.count + 1];
        for &c in &coloring.colors {
            color_offsets[c as usize + 1] += 1;
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

/// `b` without its diagonal entries (the relax kernels take the diagonal apart).
fn without_diagonal<T: Scalar>(b: &Csr<T>) -> Csr<T> {
    let mut row_ptr = Vec::with_capacity(b.rows() + 1);
    row_ptr.push(0u32);
    let (mut col_indices, mut values) = (Vec::with_capacity(b.nnz()), Vec::with_capacity(b.nnz()));
    for i in 0..b.rows() {
        let (cols, vals) = b.row(i);
        for (&c, &v) in cols.iter().zip(vals).filter(|&(&c, _)| c as usize != i) {
            col_indices.push(c);
            values.push(v);
        }
        row_ptr.push(col_indices.len() as u32);
    }
    Csr::from_parts_unchecked(b.rows(), b.cols(), row_ptr, col_indices, values)
}

/// One color's launch: its rows of the renumbered matrix and lanes per row.
struct ColorLaunch {
    first: u32,
    count: u32,
    width: u32,
}

/// The multicolor smoother on the GPU: its own renumbered copy of the matrix, the diagonal
/// apart (a row's update then reads neither a_ii nor its own old value).
pub struct MulticolorSmoother<T> {
    rows: usize,
    /// The renumbered matrix without its diagonal: CSR arrays (the relax kernels need no
    /// SpMV analysis).
    off_diagonal: (CudaSlice<u32>, CudaSlice<u32>, CudaSlice<T>),
    diagonal: CudaSlice<T>,
    new_to_old: CudaSlice<u32>,
    colors: Vec<ColorLaunch>,
    method: Option<ColoringMethod>,
    r_colored: CudaSlice<T>,
    x_colored: CudaSlice<T>,
    use_graph: bool,
    /// The captured sweep, keyed by the addresses of r and x.
    graph: GraphReplay<(u64, u64)>,
}

impl<T: Scalar> MulticolorSmoother<T> {
    pub fn new(gpu: &Gpu, order: &MulticolorOrder<T>) -> Result<Self> {
        let b = without_diagonal(&order.permuted);
        let mut colors = Vec::new();
        for c in order.color_offsets.windows(2) {
            let (first, count) = (c[0], c[1] - c[0]);
            if count == 0 {
                continue;
            }
            let nnz = b.row_ptr()[c[1] as usize] - b.row_ptr()[c[0] as usize];
            let width = CsrPlan::width_for(nnz as f64 / count as f64);
            colors.push(ColorLaunch { first, count, width });
        }
        Ok(MulticolorSmoother {
            rows: b.rows(),
            off_diagonal: (gpu.upload(b.row_ptr())?, gpu.upload(b.col_indices())?, gpu.upload(b.values())?),
            diagonal: gpu.upload(&order.permuted.diagonal())?,
            new_to_old: gpu.upload(&order.new_to_old)?,
            colors,
            method: order.method,
            r_colored: gpu.zeros(b.rows())?,
            x_colored: gpu.zeros(b.rows())?,
            use_graph: true,
            graph: GraphReplay::default(),
        })
    }

    /// Colors `a` on the GPU (the default [`ColoringMethod`]), renumbers and uploads it.
    pub fn from_csr(gpu: &Gpu, a: &Csr<T>) -> Result<Self> {
        Self::with_coloring(gpu, a, ColoringMethod::default())
    }

    /// Colors `a` with `method`, renumbers and uploads it.
    pub fn with_coloring(gpu: &Gpu, a: &Csr<T>, method: ColoringMethod) -> Result<Self> {
        Self::new(gpu, &MulticolorOrder::colored(gpu, a, method)?)
    }

    /// Replays each sweep from a CUDA graph (the default; captured at the first sweep with
    /// given r and x) or launches every kernel each time.
    pub fn use_graph(mut self, yes: bool) -> Self {
        self.use_graph = yes;
        self
    }

    /// Colors (nonempty ones; launches per half-sweep).
    pub fn colors(&self) -> usize {
        self.colors.len()
    }

    /// Lanes per row of each color's launch.
    pub fn widths(&self) -> Vec<u32> {
        self.colors.iter().map(|c| c.width).collect()
    }

    /// Queues a whole sweep: r and x into color order, the colors forward and back, x back to
    /// the original order.
    fn queue(&mut self, queue: Queue<'_>, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        let n = self.rows as u32;
        let launch = Launch::linear(self.rows, 256);
        let index = &self.new_to_old;
        // SAFETY: index a permutation of 0..n, vectors of n.
        unsafe { kernels::gather2(queue, launch, n, index, r, &mut self.r_colored, x, &mut self.x_colored)? };
        // Backward from the second-to-last color: the rows of one color do not read each
        // other, so relaxing the last color again at once would recompute its rows from the
        // very values they were just computed from (the same result, to rounding).
        let last = self.colors.len() - 1;
        let (row_ptr, col_idx, values) = &self.off_diagonal;
        for color in self.colors.iter().chain(self.colors[..last].iter().rev()) {
            let launch = Launch::linear(color.count as usize * color.width as usize, 128);
            // SAFETY: rows first..first + count of the renumbered matrix without its diagonal;
            // vectors of `rows`; blocks a multiple of 32.
            unsafe {
                kernels::relax_color(
                    queue,
                    launch,
                    color.width,
                    color.first,
                    color.count,
                    row_ptr,
                    col_idx,
                    values,
                    &self.diagonal,
                    &self.r_colored,
                    &mut self.x_colored,
                )?;
            }
        }
        // SAFETY: as the gather.
        unsafe { kernels::scatter(queue, launch, n, index, &self.x_colored, x) }
    }
}

impl<T: Scalar> Smoother<T> for MulticolorSmoother<T> {
    fn name(&self) -> String {
        let method = match self.method {
            None | Some(ColoringMethod::JonesPlassmann) => String::new(),
            Some(m) => format!("-{}", m.name()),
        };
        let graph = if self.use_graph { "" } else { "-launches" };
        format!("multicolor{method}{graph}")
    }

    fn exact_order(&self) -> bool {
        false
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        if r.len() != self.rows || x.len() != self.rows {
            return Err(Error::InvalidInput(format!(
                "SymGS on {} rows needs r and x of {} values, got r {} and x {}",
                self.rows,
                self.rows,
                r.len(),
                x.len()
            )));
        }
        if self.rows == 0 {
            return Ok(());
        }
        if !self.use_graph {
            return self.queue(gpu.into(), r, x);
        }
        let key = (device_ptr(gpu, r) as u64, device_ptr(gpu, x) as u64);
        let mut graph = std::mem::take(&mut self.graph);
        let replayed = graph.run(gpu, key, |stream| self.queue(gpu.on(stream), r, x));
        self.graph = graph;
        replayed
    }
}
