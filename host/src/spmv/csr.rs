//! GPU CSR SpMV: the device copy of a matrix, the kernels of `kernels/src/spmv/csr.rs`, and
//! the adaptive kernel with its one-time analysis ([`CsrPlan`]): vectors of lanes per row,
//! merge-path tiles of equal work where rows are skewed or often empty (with the x values of a
//! graph's most popular columns gathered side by side), or vectors over 16-bit column gaps
//! where they fit, or over a few repeated row patterns where the rows have them (fewer bytes
//! to move); on a large matrix with no row order of its own, any of these on a copy
//! renumbered in breadth-first order, where that is faster.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use std::time::Instant;

use super::gpu::{BlockWarps, check_vectors, to_u32};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::blas1;
use crate::kernels::spmv::csr as kernels;
use crate::memory::Footprint;
use crate::sparse::{Csr, UNORDERED_MEAN_DISTANCE, inverse_permutation, split_at_bounds};

/// A CSR matrix in device memory, with the analysis the adaptive kernel uses.
pub struct DeviceCsr<T> {
    pub rows: usize,
    pub cols: usize,
    pub nnz: usize,
    pub row_ptr: CudaSlice<u32>,
    pub col_idx: CudaSlice<u32>,
    pub values: CudaSlice<T>,
    pub plan: CsrPlan,
    /// The plan's chunks of long rows on the device.
    long_chunks: LongRowChunks<T>,
    /// The merge-path partition: the row in progress where each tile starts (tiles + 1).
    merge_tile_rows: CudaSlice<u32>,
    /// Each block's open sum, scratch written by every merge-path SpMV. The lock only lends the
    /// launch its `&mut` while the SpMV is queued: SpMVs of one matrix on two streams at once
    /// would share it.
    merge_carries: Mutex<CudaSlice<T>>,
    /// The nonzero-split partition: the row open where each chunk starts (chunks + 1).
    split_chunk_rows: CudaSlice<u32>,
    /// Each chunk's open sum, scratch written by every nonzero-split SpMV, lent as
    /// `merge_carries` is.
    split_carries: Mutex<CudaSlice<T>>,
    /// The column indices as 16-bit gaps, where every gap fits: (each row's first column,
    /// the gaps).
    gaps16: Option<(CudaSlice<u32>, CudaSlice<u16>)>,
    /// Each row's pattern of columns, where the rows repeat a few ([`row_patterns`]).
    patterns: Option<DevicePatterns>,
    /// The most popular columns, where a few columns hold many of the nonzeros.
    hot: Option<HotColumns<T>>,
    /// The matrix in a breadth-first numbering, where it has no row order of its own and the
    /// upload's timing chose it: the adaptive kernel then runs on this copy.
    renumbered: Option<Box<Renumbered<T>>>,
    /// Milliseconds the analysis took at upload (partition, statistics and timings), the
    /// counterpart of cuSPARSE's preprocessing.
    pub analysis_ms: f64,
}

/// The plan's chunks of long rows on the device (a word each where there are none, so that
/// the vector kernel always has its arguments), with the plan's `long_row` they were cut at
/// (kept here, as the device arrays are, whatever a caller later does to the plan).
struct LongRowChunks<T> {
    long_row: u32,
    count: u32,
    rows: CudaSlice<u32>,
    starts: CudaSlice<u32>,
    /// The chunks' partial sums and, at each row's first chunk, how many of its chunks are
    /// done (zero between products): scratch of every product, lent as `merge_carries` is.
    sums: Mutex<(CudaSlice<T>, CudaSlice<u32>)>,
}

impl<T: Scalar> LongRowChunks<T> {
    fn upload(gpu: &Gpu, plan: &CsrPlan) -> Result<Self> {
        let count = to_u32(plan.chunk_rows.len(), "long-row chunks")?;
        let (rows, starts) =
            if count == 0 { (&[0][..], &[0][..]) } else { (&plan.chunk_rows[..], &plan.chunk_starts[..]) };
        let len = rows.len();
        Ok(LongRowChunks {
            long_row: plan.long_row,
            count,
            rows: gpu.upload(rows)?,
            starts: gpu.upload(starts)?,
            sums: Mutex::new((gpu.zeros(len)?, gpu.zeros(len)?)),
        })
    }
}

/// [`RowPatterns`] on the device.
struct DevicePatterns {
    pattern_of: CudaSlice<u8>,
    pattern_start: CudaSlice<u32>,
    offsets: CudaSlice<u32>,
}

/// A graph's most popular columns ([`hot_columns`]), numbered 0.. in their order, the others
/// the hot columns' count + their column: the merge kernel reads the hot ones from a copy of their x
/// values side by side, which share cache lines and stay in L1, and a row's hot entries come
/// first, so a warp's reads of them share lines too (PERF.md). Kept only where the upload's
/// timing chooses them.
struct HotColumns<T> {
    /// The matrix's entries so numbered, each row's hot entries first ([`hot_first`]; A's row
    /// pointers).
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    /// The hot columns, most popular first.
    columns: CudaSlice<u32>,
    /// Their x values: scratch gathered by every product, lent as `merge_carries` is.
    x: Mutex<CudaSlice<T>>,
}

/// A square matrix with its rows and columns renumbered in breadth-first order (P A P^T,
/// [`Csr::breadth_first_order`]), uploaded with a plan of its own: neighbours get near
/// numbers, so the product's x gathers share cache lines, where the matrix came in an order
/// without locality (an unordered mesh). Each product gathers x into the new numbering and y
/// back out of it (PERF.md).
struct Renumbered<T> {
    matrix: DeviceCsr<T>,
    /// Row k of `matrix` is row `order[k]` of A, and row i of A is row `position[i]` of
    /// `matrix`.
    order: CudaSlice<u32>,
    position: CudaSlice<u32>,
    /// x and y in the new numbering: scratch written by every product, lent as
    /// `merge_carries` is.
    scratch: Mutex<(CudaSlice<T>, CudaSlice<T>)>,
}

/// How many times nearer the diagonal the breadth-first order must bring the entries to be
/// tried: it does so 10-40 times on renumbered meshes, not at all on random graphs.
const RENUMBER_GAIN: f64 = 4.0;

impl<T: Scalar> Renumbered<T> {
    /// `a` renumbered where it is square, unordered ([`UNORDERED_MEAN_DISTANCE`]), its breadth-first
    /// order brings the entries [`RENUMBER_GAIN`] times nearer the diagonal and the device has
    /// room for the copy; None otherwise.
    fn new(gpu: &Gpu, a: &Csr<T>) -> Result<Option<Self>> {
        if a.rows() != a.cols() || a.nnz() == 0 {
            return Ok(None);
        }
        let before = a.mean_diagonal_distance(None);
        if before < UNORDERED_MEAN_DISTANCE {
            return Ok(None);
        }
        // Levels wider than twice the wanted distance: refused before the order is complete.
        let widest = (2.0 * before / RENUMBER_GAIN * a.rows() as f64) as usize;
        let Some(order) = a.breadth_first_order_within(widest) else { return Ok(None) };
        let new_of_old = inverse_permutation(&order);
        if a.mean_diagonal_distance(Some(&new_of_old)) * RENUMBER_GAIN > before {
            return Ok(None);
        }
        // The copy, its two permutations and its two scratch vectors.
        let (rows, elem) = (a.rows() as u128, size_of::<T>() as u128);
        let copy = Footprint::new("the matrix renumbered in breadth-first order")
            .device::<u8>(device_bytes::<T>(a.rows(), a.nnz()) + rows * (8 + 2 * elem))
            .check_device(gpu);
        if copy.is_err() {
            return Ok(None);
        }
        let renumbered = a.permute_symmetric(&order, &new_of_old);
        Ok(Some(Renumbered {
            matrix: DeviceCsr::upload_numbered(gpu, &renumbered, false)?,
            order: gpu.upload(&order)?,
            position: gpu.upload(&new_of_old)?,
            scratch: Mutex::new((gpu.zeros(a.rows())?, gpu.zeros(a.rows())?)),
        }))
    }
}

/// The adaptive kernel's choices for one matrix, made once when it is uploaded (as cuSPARSE's
/// analysis step does): the [`CsrPath`] and `width` lanes per row; on the vector and gaps
/// paths, the rows each group takes (`rows_per_group`); on the vector path, whether the
/// entries are read first out of L2 (`evict_first`), and rows longer than `long_row` cut into
/// chunks of `LONG_ROW_CHUNK` nonzeros, a warp each. A first guess from the row statistics,
/// then the fastest choice on this matrix ([`DeviceCsr::upload`] times them).
#[derive(Clone, Debug, PartialEq)]
pub struct CsrPlan {
    pub path: CsrPath,
    pub width: u32,
    pub rows_per_group: u32,
    pub evict_first: bool,
    pub long_row: u32,
    pub long_rows: Vec<u32>,
    /// (row, first nonzero) of each chunk of the long rows.
    pub chunk_rows: Vec<u32>,
    pub chunk_starts: Vec<u32>,
}

/// The choice as the bench and CLI name it: path and width, then `-rows2`/`-rows4` and
/// `-evict-first` where the path takes them (e.g. `vector2-rows4-evict-first`, `gaps162-rows2`).
impl std::fmt::Display for CsrPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = format!("{:?}", self.path).to_lowercase();
        match self.path {
            // Tiles and chunks of equal work take no lanes a row.
            CsrPath::Merge | CsrPath::MergeHot | CsrPath::Split | CsrPath::SplitHot => write!(f, "{path}")?,
            CsrPath::Vector | CsrPath::Gaps16 | CsrPath::Patterns => write!(f, "{path}{}", self.width)?,
        }
        if self.rows_per_group > 1 {
            write!(f, "-rows{}", self.rows_per_group)?;
        }
        if self.evict_first {
            write!(f, "-evict-first")?;
        }
        Ok(())
    }
}

/// How the adaptive kernel runs a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrPath {
    /// `width` lanes per row, long rows in chunks.
    Vector,
    /// Merge-path tiles: the same work per warp whatever the row lengths.
    Merge,
    /// `width` lanes per row over the 16-bit column gaps.
    Gaps16,
    /// `width` lanes per row, each row's columns from its pattern.
    Patterns,
    /// Merge-path tiles, the x values of the hot columns gathered first.
    MergeHot,
    /// Chunks of equal nonzeros, empty rows skipped.
    Split,
    /// Chunks of equal nonzeros, the x values of the hot columns gathered first.
    SplitHot,
}

/// Nonzeros per warp on a long row: 8 per lane.
pub const LONG_ROW_CHUNK: u32 = abi::spmv::LONG_ROW_CHUNK;

/// Threads per block of the vector kernel.
const VECTOR_BLOCK: u32 = 128;

/// The widths the vector kernel is built for.
pub const WIDTHS: [u32; 5] = kernels::vector::W;

/// The rows per group the vector kernel is built for.
pub const ROWS_PER_GROUP: [u32; 3] = kernels::vector::R;

/// The rows per group the row-pattern kernel is built for.
pub const PATTERNS_ROWS_PER_GROUP: [u32; 3] = kernels::patterns::R;

/// The rows per group the 16-bit gaps kernel is built for (four rows took it past 64
/// registers and were slower everywhere: PERF.md).
pub const GAPS16_ROWS_PER_GROUP: [u32; 2] = kernels::gaps16::R;

/// Nonzeros from which a matrix is large: its copies for the hot columns and in breadth-first
/// order are kept only where they are the fastest choice.
const LARGE_NNZ: usize = 1 << 20;

/// The choices [`DeviceCsr::tune`] times again, with more runs.
const FINALISTS: usize = 3;

/// What [`DeviceCsr::tune`] times: (path, width, rows per group, evict first).
type Choice = (CsrPath, u32, u32, bool);

impl CsrPlan {
    pub fn new(row_ptr: &[u32]) -> CsrPlan {
        let rows = row_ptr.len().saturating_sub(1);
        let lengths = row_ptr.windows(2).map(|w| w[1] - w[0]);
        let mean = if rows == 0 { 0.0 } else { row_ptr[rows] as f64 / rows as f64 };
        // A row far above the mean would keep its group busy while the warp's other groups
        // idle: past 8x the mean (and at least two warp-loads) it goes to the chunk kernel.
        let long_row = (8.0 * mean).max(64.0) as u32;
        let long_rows: Vec<u32> =
            lengths.enumerate().filter(|&(_, len)| len > long_row).map(|(r, _)| r as u32).collect();
        let long_nnz: u64 =
            long_rows.iter().map(|&r| (row_ptr[r as usize + 1] - row_ptr[r as usize]) as u64).sum();
        let short_rows = rows - long_rows.len();
        let short_mean =
            if short_rows == 0 { 0.0 } else { (row_ptr[rows] as u64 - long_nnz) as f64 / short_rows as f64 };
        let (mut chunk_rows, mut chunk_starts) = (Vec::new(), Vec::new());
        for &r in &long_rows {
            let (start, end) = (row_ptr[r as usize], row_ptr[r as usize + 1]);
            for first in (start..end).step_by(LONG_ROW_CHUNK as usize) {
                chunk_rows.push(r);
                chunk_starts.push(first);
            }
        }
        // Many empty rows, or a few very long ones: equal work per block pays (a first guess:
        // the upload times every choice).
        let empty = row_ptr.windows(2).filter(|w| w[0] == w[1]).count();
        let longest = row_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        let path = if empty * 5 > rows || longest as f64 > 64.0 * mean.max(1.0) {
            CsrPath::Split
        } else {
            CsrPath::Vector
        };
        CsrPlan {
            path,
            width: Self::width_for(short_mean),
            rows_per_group: 1,
            evict_first: false,
            long_row,
            long_rows,
            chunk_rows,
            chunk_starts,
        }
    }

    fn set_choice(&mut self, choice: Choice) {
        (self.path, self.width, self.rows_per_group, self.evict_first) = choice;
    }

    /// Lanes per row for rows of `mean` nonzeros: the power of two nearest mean / 4, so each
    /// lane does about four products, two loads in flight at a time (narrower groups beat one
    /// product per lane: PERF.md), within 2..=32.
    pub fn width_for(mean: f64) -> u32 {
        let target = (mean / 4.0).max(1.0);
        let w = 2f64.powf(target.log2().round()) as u32;
        w.clamp(2, 32)
    }
}

/// Device bytes of an uploaded matrix of `rows` rows and `nnz` entries: the matrix, its 16-bit
/// gaps, its row patterns (a byte a row and a small table) and the merge-path partition.
fn device_bytes<T>(rows: usize, nnz: usize) -> u128 {
    let elem = size_of::<T>() as u128;
    let tiles = (rows + nnz).div_ceil(abi::spmv::merge_tile(size_of::<T>()) as usize) as u128;
    let chunks = split_chunks(nnz, abi::spmv::split_chunk(abi::spmv::SPLIT_WARPS)) as u128;
    let patterns = rows as u128 + 4 * (MAX_ROW_PATTERNS * (MAX_PATTERN_LEN + 1)) as u128;
    nnz as u128 * (6 + elem) + (rows as u128 + 1) * 8 + patterns + (tiles + chunks) * (4 + elem)
}

impl<T: Scalar> DeviceCsr<T> {
    /// Copies `a` to the device and analyses it for the adaptive kernel, timing its choices.
    /// A large square matrix with no row order of its own may keep a second copy, renumbered in
    /// breadth-first order, where the product through it is faster: as much device memory as
    /// the matrix again, and the order's time in `analysis_ms`.
    pub fn upload(gpu: &Gpu, a: &Csr<T>) -> Result<DeviceCsr<T>> {
        Self::upload_numbered(gpu, a, true)
    }

    /// [`Self::upload`], trying a breadth-first numbering of the matrix where `renumber`.
    fn upload_numbered(gpu: &Gpu, a: &Csr<T>, renumber: bool) -> Result<DeviceCsr<T>> {
        to_u32(a.rows(), "rows")?;
        to_u32(a.cols(), "cols")?;
        to_u32(a.rows() + a.nnz(), "rows + nnz")?;
        let chunk = abi::spmv::split_chunk(abi::spmv::SPLIT_WARPS);
        to_u32((split_chunks(a.nnz(), chunk) + 1) * chunk as usize, "nonzeros rounded up to whole chunks")?;
        let (nnz, elem) = (a.nnz() as u128, size_of::<T>() as u128);
        let tile = abi::spmv::merge_tile(size_of::<T>());
        let matrix_bytes = device_bytes::<T>(a.rows(), a.nnz());
        Footprint::new(format!("a {} x {} CSR matrix with {nnz} nonzeros", a.rows(), a.cols()))
            .device::<u8>(matrix_bytes)
            .check_device(gpu)?;
        let started = Instant::now();
        let plan = CsrPlan::new(a.row_ptr());
        let tile_rows = merge_partition(a.row_ptr(), tile);
        let chunk_rows = split_partition(a.row_ptr(), chunk);
        let gaps = column_gaps(a.row_ptr(), a.col_indices());
        let patterns = row_patterns(a.row_ptr(), a.col_indices());
        // The hot columns' copy of the matrix only where the device has room for it too.
        let hot = hot_columns(a.cols(), a.col_indices()).filter(|hot| {
            Footprint::new("the matrix with its entries numbered for its hot columns")
                .device::<u8>(matrix_bytes + nnz * (4 + elem) + hot.len() as u128 * (4 + elem))
                .check_device(gpu)
                .is_ok()
        });
        let hot_entries = hot.as_ref().map(|hot| hot_first(a, hot));
        let analysis_ms = started.elapsed().as_secs_f64() * 1e3;
        let long_chunks = LongRowChunks::upload(gpu, &plan)?;
        let mut device = DeviceCsr {
            rows: a.rows(),
            cols: a.cols(),
            nnz: a.nnz(),
            row_ptr: gpu.upload(a.row_ptr())?,
            col_idx: gpu.upload(a.col_indices())?,
            values: gpu.upload(a.values())?,
            plan,
            long_chunks,
            merge_carries: Mutex::new(gpu.zeros((tile_rows.len() - 1).div_ceil(MERGE_BLOCK_WARPS as usize))?),
            merge_tile_rows: gpu.upload(&tile_rows)?,
            split_carries: Mutex::new(gpu.zeros(chunk_rows.len() - 1)?),
            split_chunk_rows: gpu.upload(&chunk_rows)?,
            gaps16: match gaps {
                Some((base, gaps)) => Some((gpu.upload(&base)?, gpu.upload(&gaps)?)),
                None => None,
            },
            patterns: match patterns {
                Some(p) => Some(DevicePatterns {
                    pattern_of: gpu.upload(&p.pattern_of)?,
                    pattern_start: gpu.upload(&p.pattern_start)?,
                    offsets: gpu.upload(&p.offsets)?,
                }),
                None => None,
            },
            hot: match (hot, hot_entries) {
                (Some(columns), Some((col_idx, values))) => Some(HotColumns {
                    col_idx: gpu.upload(&col_idx)?,
                    values: gpu.upload(&values)?,
                    x: Mutex::new(gpu.zeros(columns.len())?),
                    columns: gpu.upload(&columns)?,
                }),
                _ => None,
            },
            renumbered: None,
            analysis_ms,
        };
        let started = Instant::now();
        device.tune(gpu, renumber.then_some(a))?;
        device.analysis_ms += started.elapsed().as_secs_f64() * 1e3;
        Ok(device)
    }

    /// Times the adaptive kernel's choices on this matrix (vector kernels of each width, rows
    /// per group and load policy; merge-path tiles; the 16-bit gaps and the row patterns at
    /// each width and rows per group; x of ones, median of five runs each, then of
    /// [`FINALISTS`] fastest again over 25 runs) and keeps the fastest; then, on a large
    /// matrix with no row order of its own (`a`, where given), the product in a breadth-first
    /// numbering, kept where it is faster still.
    /// Small matrices are timed too: there the launches are most of the time, and the paths
    /// launch one kernel or two.
    fn tune(&mut self, gpu: &Gpu, a: Option<&Csr<T>>) -> Result<()> {
        if self.nnz == 0 {
            return Ok(());
        }
        let large = self.nnz >= LARGE_NNZ;
        let x = gpu.filled(self.cols, T::ONE)?;
        let mut y = gpu.zeros::<T>(self.rows)?;
        let width = self.plan.width;
        let mut choices: Vec<Choice> = Vec::new();
        for w in WIDTHS {
            for r in ROWS_PER_GROUP {
                choices.extend([(CsrPath::Vector, w, r, false), (CsrPath::Vector, w, r, true)]);
            }
            if self.gaps16.is_some() {
                choices.extend(GAPS16_ROWS_PER_GROUP.map(|r| (CsrPath::Gaps16, w, r, false)));
            }
            if self.patterns.is_some() {
                choices.extend(PATTERNS_ROWS_PER_GROUP.map(|r| (CsrPath::Patterns, w, r, false)));
            }
        }
        choices.push((CsrPath::Merge, width, 1, false));
        choices.push((CsrPath::Split, width, 1, false));
        if self.hot.is_some() {
            choices.extend([(CsrPath::MergeHot, width, 1, false), (CsrPath::SplitHot, width, 1, false)]);
        }
        let mut time = |device: &mut Self, choice: Choice, runs: usize| -> Result<(f64, Choice)> {
            device.plan.set_choice(choice);
            let timing = gpu
                .time(1, runs, || spmv(gpu, device, CsrKernel::Adaptive, BlockWarps::DEFAULT, &x, &mut y))?;
            Ok((timing.median_ms(), choice))
        };
        let mut timed =
            choices.into_iter().map(|choice| time(self, choice, 5)).collect::<Result<Vec<_>>>()?;
        // The fastest few again, with more runs: five can misorder choices a few percent apart.
        timed.sort_by(|a, b| a.0.total_cmp(&b.0));
        let finalists = timed.iter().take(FINALISTS).map(|&(_, choice)| time(self, choice, 25));
        let best = finalists.collect::<Result<Vec<_>>>()?.into_iter().min_by(|a, b| a.0.total_cmp(&b.0));
        let Some((best_ms, choice)) = best else { return Ok(()) };
        self.plan.set_choice(choice);
        // The hot columns' copy of a large matrix costs as much memory as the matrix: kept
        // only where it is the choice; so is the renumbered copy, which pays on large
        // matrices only (a small one's x stays in cache whatever its order).
        if large && !matches!(self.plan.path, CsrPath::MergeHot | CsrPath::SplitHot) {
            self.hot = None;
        }
        if let Some(a) = a.filter(|_| large)
            && self.renumber(gpu, a)?
        {
            let timing =
                gpu.time(1, 25, || spmv(gpu, self, CsrKernel::Adaptive, BlockWarps::DEFAULT, &x, &mut y))?;
            if timing.median_ms() >= best_ms {
                self.renumbered = None;
            }
        }
        Ok(())
    }

    /// Makes the adaptive kernel run on `a` (this matrix, on the host) renumbered in
    /// breadth-first order, where `a` has no row order of its own and that order brings its
    /// entries near the diagonal; says whether it did. The upload does this itself where the
    /// renumbered product is faster.
    pub fn renumber(&mut self, gpu: &Gpu, a: &Csr<T>) -> Result<bool> {
        if (a.rows(), a.cols(), a.nnz()) != (self.rows, self.cols, self.nnz) {
            return Err(Error::InvalidInput(format!(
                "renumber: a {} x {} matrix with {} nonzeros is not this {} x {} one with {}",
                a.rows(),
                a.cols(),
                a.nnz(),
                self.rows,
                self.cols,
                self.nnz
            )));
        }
        self.renumbered = Renumbered::new(gpu, a)?.map(Box::new);
        Ok(self.renumbered.is_some())
    }

    /// The rows in breadth-first order (`new_to_old`, [`Csr::breadth_first_order`]) where the
    /// product runs on a renumbered copy: the multicolor smoother numbers its node blocks by it.
    pub(crate) fn breadth_first_order(&self) -> Option<&CudaSlice<u32>> {
        self.renumbered.as_ref().map(|r| &r.order)
    }

    /// The adaptive kernel's choice, as the bench and CLI name it: the plan's
    /// ([`CsrPlan`]'s display), or `renumbered-` and the renumbered copy's.
    pub fn choice(&self) -> String {
        match &self.renumbered {
            Some(r) => format!("renumbered-{}", r.matrix.plan),
            None => self.plan.to_string(),
        }
    }

    /// Whether the column gaps fit 16 bits, so that [`CsrKernel::Gaps16`] can run.
    pub fn has_gaps16(&self) -> bool {
        self.gaps16.is_some()
    }

    /// Whether the rows repeat few enough column patterns for [`CsrKernel::Patterns`] to run.
    pub fn has_patterns(&self) -> bool {
        self.patterns.is_some()
    }

    /// Whether the matrix keeps hot columns, so that [`CsrKernel::MergeHot`] can run: where a
    /// few columns hold many of the nonzeros, and on a large matrix (2^20 nonzeros or more),
    /// only where they were the fastest choice.
    pub fn has_hot_columns(&self) -> bool {
        self.hot.is_some()
    }

    /// Bytes a kernel must move at least: the matrix once, x once, y written once.
    pub fn min_traffic_bytes(&self) -> usize {
        let elem = size_of::<T>();
        self.nnz * (elem + 4) + (self.rows + 1) * 4 + self.cols * elem + self.rows * elem
    }
}

/// The CSR kernels, from the reports' classics to the fast adaptive one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrKernel {
    /// One thread per row.
    Scalar,
    /// One thread per nonzero, block-level sums, atomics into y (Uruguay).
    NnzAtomic,
    /// Warp per row, shuffle reduction.
    WarpShuffle,
    /// Warp per row, shared-memory reduction (Tor Vergata kernel 3).
    WarpShared,
    /// Warp per row, read-only cached loads (Tor Vergata kernel 4).
    WarpLdg,
    /// `w` lanes per row (2, 4, 8, 16, 32), no long-row split: for benchmarking the widths.
    Vector(u32),
    /// Merge-path tiles: every warp the same number of row ends and nonzeros (Merrill and
    /// Garland), whatever the row lengths.
    Merge,
    /// The vector kernel at the plan's width over 16-bit column gaps (where they fit), with the
    /// plan's rows per group where the upload chose this path. Long rows are not cut into
    /// chunks: a row of thousands is walked by one group of lanes (the adaptive kernel only
    /// takes this path where the upload's timing chose it).
    Gaps16,
    /// Merge-path tiles, the x values of the most popular columns gathered side by side first
    /// (where a few columns hold many of the nonzeros).
    MergeHot,
    /// Chunks of equal nonzeros: every block the same number of products, empty rows
    /// skipped, each row's end marked in shared memory.
    Split,
    /// Chunks of equal nonzeros, the hot columns' x values gathered first (as `MergeHot`).
    SplitHot,
    /// The vector kernel at the plan's width with each row's columns rebuilt from its pattern
    /// (where the rows repeat at most 256 patterns: stencils, structured meshes), so no column
    /// index is read; the plan's rows per group where the upload chose this path.
    Patterns,
    /// The fast kernel: lanes per row from the analysis, long rows in chunks of a warp each.
    Adaptive,
}

impl CsrKernel {
    pub const ALL: [CsrKernel; 13] = [
        CsrKernel::Scalar,
        CsrKernel::NnzAtomic,
        CsrKernel::WarpShuffle,
        CsrKernel::WarpShared,
        CsrKernel::WarpLdg,
        CsrKernel::Vector(8),
        CsrKernel::Merge,
        CsrKernel::Gaps16,
        CsrKernel::MergeHot,
        CsrKernel::Split,
        CsrKernel::SplitHot,
        CsrKernel::Patterns,
        CsrKernel::Adaptive,
    ];

    pub fn name(self) -> String {
        match self {
            CsrKernel::Scalar => "csr-scalar".into(),
            CsrKernel::NnzAtomic => "csr-nnz-atomic".into(),
            CsrKernel::WarpShuffle => "csr-warp-shuffle".into(),
            CsrKernel::WarpShared => "csr-warp-shared".into(),
            CsrKernel::WarpLdg => "csr-warp-ldg".into(),
            CsrKernel::Vector(w) => format!("csr-vector{w}"),
            CsrKernel::Merge => "csr-merge".into(),
            CsrKernel::Gaps16 => "csr-gaps16".into(),
            CsrKernel::MergeHot => "csr-merge-hot".into(),
            CsrKernel::Split => "csr-split".into(),
            CsrKernel::SplitHot => "csr-split-hot".into(),
            CsrKernel::Patterns => "csr-patterns".into(),
            CsrKernel::Adaptive => "csr-adaptive".into(),
        }
    }

    pub fn from_name(name: &str) -> Option<CsrKernel> {
        if let Some(w) = name.strip_prefix("csr-vector").and_then(|w| w.parse().ok()) {
            return WIDTHS.contains(&w).then_some(CsrKernel::Vector(w));
        }
        CsrKernel::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// y = A x with the chosen kernel, queued on the GPU's stream. `warps` sets the block size
/// of the classic kernels (scalar, nnz-atomic and the warp-per-row ones); the vector, merge,
/// gaps16, patterns and adaptive kernels have fixed blocks.
pub fn spmv<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    kernel: CsrKernel,
    warps: BlockWarps,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    check_vectors(a.rows, a.cols, x, y)?;
    if a.rows == 0 {
        return Ok(());
    }
    let rows = a.rows as u32;
    let threads = warps.threads();
    let (row_ptr, col_idx, values) = (&a.row_ptr, &a.col_idx, &a.values);
    // SAFETY (every launch below): the buffers hold an `a.rows x a.cols` CSR matrix with
    // `a.nnz` entries (checked at upload), x and y the checked lengths.
    unsafe {
        match kernel {
            CsrKernel::Scalar => {
                kernels::scalar(gpu, Launch::linear(a.rows, threads), rows, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::WarpShuffle => {
                let launch = Launch::warp_per_item(a.rows, warps.warps());
                kernels::warp_shuffle(gpu, launch, rows, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::WarpShared => {
                let launch =
                    Launch::warp_per_item(a.rows, warps.warps()).shared(threads as usize * size_of::<T>());
                kernels::warp_shared(gpu, launch, rows, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::WarpLdg => {
                let launch = Launch::warp_per_item(a.rows, warps.warps());
                kernels::warp_ldg(gpu, launch, rows, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::NnzAtomic => {
                gpu.memset_zeros(y)?;
                if a.nnz == 0 {
                    return Ok(());
                }
                let nnz = to_u32(a.nnz, "nnz")?;
                let launch = Launch::linear(a.nnz, threads)
                    .shared(abi::spmv::nnz_atomic_shared_bytes(threads, size_of::<T>()));
                kernels::nnz_atomic(gpu, launch, rows, nnz, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::Vector(width) => launch_vector(gpu, a, (width, 1, false), false, x, y),
            CsrKernel::Merge => launch_balanced(gpu, a, Balanced::Merge, (col_idx, values), x, None, y),
            CsrKernel::Gaps16 => launch_gaps16(gpu, a, x, y),
            CsrKernel::MergeHot => launch_hot(gpu, a, Balanced::Merge, x, y),
            CsrKernel::Split => launch_balanced(gpu, a, Balanced::Split, (col_idx, values), x, None, y),
            CsrKernel::SplitHot => launch_hot(gpu, a, Balanced::Split, x, y),
            CsrKernel::Patterns => launch_patterns(gpu, a, x, y),
            CsrKernel::Adaptive => match (&a.renumbered, a.plan.path) {
                (Some(renumbered), _) => launch_renumbered(gpu, renumbered, x, y),
                (None, CsrPath::Merge) => {
                    launch_balanced(gpu, a, Balanced::Merge, (col_idx, values), x, None, y)
                }
                (None, CsrPath::Gaps16) => launch_gaps16(gpu, a, x, y),
                (None, CsrPath::MergeHot) => launch_hot(gpu, a, Balanced::Merge, x, y),
                (None, CsrPath::Split) => {
                    launch_balanced(gpu, a, Balanced::Split, (col_idx, values), x, None, y)
                }
                (None, CsrPath::SplitHot) => launch_hot(gpu, a, Balanced::Split, x, y),
                (None, CsrPath::Patterns) => launch_patterns(gpu, a, x, y),
                (None, CsrPath::Vector) => {
                    let plan = &a.plan;
                    launch_vector(gpu, a, (plan.width, plan.rows_per_group, plan.evict_first), true, x, y)
                }
            },
        }
    }
}

/// Warps per block of the merge-path kernel: the tiles of one block are consecutive, so 16 of
/// them keep more of an SM's x reads near each other (in its L1) than 4 do (PERF.md).
const MERGE_BLOCK_WARPS: u32 = 16;

/// The kernels of equal work per block, each with its partition (computed at upload) and the
/// fix-up of the rows still open at the end of a block.
#[derive(Clone, Copy)]
enum Balanced {
    /// Merge-path tiles, [`MERGE_BLOCK_WARPS`] a block.
    Merge,
    /// Chunks of equal nonzeros, one a block.
    Split,
}

/// `kind`'s kernel over the entries `(col_idx, values)` of A's rows (A's own, or numbered as
/// [`HotColumns`] says with the hot columns' x values in `hot`), then the fix-up of the rows
/// still open at the end of a block.
fn launch_balanced<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    kind: Balanced,
    (col_idx, values): (&CudaSlice<u32>, &CudaSlice<T>),
    x: &CudaSlice<T>,
    hot: Option<&CudaSlice<T>>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    // Each kind's partition, carries, tiles a block, warps a tile and shared bytes.
    let (partition, carries, tiles_per_block, warps_per_tile, shared) = match kind {
        Balanced::Merge => (
            &a.merge_tile_rows,
            &a.merge_carries,
            MERGE_BLOCK_WARPS,
            1,
            abi::spmv::merge_shared_bytes(MERGE_BLOCK_WARPS, size_of::<T>()),
        ),
        Balanced::Split => (
            &a.split_chunk_rows,
            &a.split_carries,
            1,
            abi::spmv::SPLIT_WARPS,
            abi::spmv::split_shared_bytes(abi::spmv::SPLIT_WARPS, size_of::<T>()),
        ),
    };
    let tiles = partition.len() - 1;
    let launch = Launch::warp_per_item(tiles * warps_per_tile as usize, tiles_per_block * warps_per_tile)
        .shared(shared);
    let (rows, nnz, tiles32) = (a.rows as u32, a.nnz as u32, tiles as u32);
    let (hot, hot_count) = (hot.unwrap_or(x), hot.map_or(0, |hot| hot.len() as u32));
    let mut carries = carries.lock().unwrap();
    // The two kernels take the same arguments.
    macro_rules! product {
        ($kernel:path) => {
            $kernel(
                gpu,
                launch,
                rows,
                nnz,
                tiles32,
                partition,
                &a.row_ptr,
                col_idx,
                values,
                x,
                hot,
                hot_count,
                y,
                &mut *carries,
            )
        };
    }
    // SAFETY: the partition was computed from this matrix's row pointers (tiles + 1 entries, a
    // carry per block; the split's chunks within u32, as the upload checked); the entries are
    // whole device allocations (the split's vector loads need 16-byte alignment; allocations
    // are aligned far past it); x and y have the checked lengths; the fix-up runs after the
    // product.
    unsafe {
        match kind {
            Balanced::Merge => product!(kernels::merge)?,
            Balanced::Split => product!(kernels::split)?,
        }
        let fixup = Launch::linear(tiles.div_ceil(tiles_per_block as usize), 256);
        kernels::merge_fixup(gpu, fixup, rows, tiles32, tiles_per_block, partition, &*carries, y)
    }
}

/// The hot columns' x values gathered, then `kind`'s kernel over the entries numbered for
/// them.
fn launch_hot<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    kind: Balanced,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let Some(hot) = &a.hot else {
        return Err(Error::InvalidInput(
            "csr-merge-hot, csr-split-hot: this matrix keeps no hot columns (no few columns hold many of its nonzeros, or the hot columns lost to another kernel at upload)".into(),
        ));
    };
    let mut hot_x = hot.x.lock().unwrap();
    let count = hot.columns.len();
    // SAFETY: `columns` and `hot_x` hold `count` entries, each a column of A (below x's length).
    unsafe { blas1::gather(gpu, Launch::linear(count, 256), count as u32, &hot.columns, x, &mut *hot_x)? };
    launch_balanced(gpu, a, kind, (&hot.col_idx, &hot.values), x, Some(&hot_x), y)
}

/// x gathered into the renumbered copy's numbering, the adaptive kernel on the copy, y
/// gathered back (a gather's scattered reads cost less than a scatter's scattered writes).
fn launch_renumbered<T: Scalar>(
    gpu: &Gpu,
    renumbered: &Renumbered<T>,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let n = renumbered.matrix.rows;
    let mut scratch = renumbered.scratch.lock().unwrap();
    let (x_new, y_new) = &mut *scratch;
    let launch = Launch::linear(n, 256);
    // SAFETY (both): `order` and `position` are permutations of the n rows; x, y and the
    // scratch vectors hold n values.
    unsafe { blas1::gather(gpu, launch, n as u32, &renumbered.order, x, x_new)? };
    spmv(gpu, &renumbered.matrix, CsrKernel::Adaptive, BlockWarps::DEFAULT, x_new, y_new)?;
    unsafe { blas1::gather(gpu, launch, n as u32, &renumbered.position, y_new, y) }
}

/// The vector kernel over the 16-bit column gaps, at the plan's width, and its rows per group
/// where the plan chose this path (else one).
fn launch_gaps16<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let Some((row_base, gaps)) = &a.gaps16 else {
        return Err(Error::InvalidInput(
            "csr-gaps16: a gap between consecutive columns of a row exceeds 16 bits on this matrix".into(),
        ));
    };
    let (width, rows_per_group, launch) = group_shape(a, CsrPath::Gaps16);
    // SAFETY: the gaps were built from this matrix's rows; x and y have the checked lengths.
    unsafe {
        kernels::gaps16(
            gpu,
            launch,
            width,
            rows_per_group,
            a.rows as u32,
            &a.row_ptr,
            row_base,
            gaps,
            &a.values,
            x,
            y,
        )
    }
}

/// The vector kernel over the row patterns, at the plan's width, and its rows per group where
/// the plan chose this path (else one).
fn launch_patterns<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let Some(patterns) = &a.patterns else {
        return Err(Error::InvalidInput(format!(
            "csr-patterns: the rows of this matrix do not repeat at most {MAX_ROW_PATTERNS} column patterns of at most {MAX_PATTERN_LEN} entries"
        )));
    };
    let (width, rows_per_group, launch) = group_shape(a, CsrPath::Patterns);
    // SAFETY: the patterns were built from this matrix's rows; x and y have the checked lengths.
    unsafe {
        kernels::patterns(
            gpu,
            launch,
            width,
            rows_per_group,
            a.rows as u32,
            &a.row_ptr,
            &patterns.pattern_of,
            &patterns.pattern_start,
            &patterns.offsets,
            &a.values,
            x,
            y,
        )
    }
}

/// Rows per chunk of the analysis' passes over the entries, chunks in parallel.
const ROWS_PER_CHUNK: usize = 4096;

/// Where each chunk of [`ROWS_PER_CHUNK`] rows starts among the entries, and the end.
fn chunk_bounds(row_ptr: &[u32]) -> Vec<usize> {
    let rows = row_ptr.len().saturating_sub(1);
    (0..rows.div_ceil(ROWS_PER_CHUNK) + 1).map(|c| row_ptr[(c * ROWS_PER_CHUNK).min(rows)] as usize).collect()
}

/// Each row's first column and the gaps between its consecutive columns (the first 0), or
/// None when a gap does not fit in 16 bits. Rows in parallel, in chunks.
pub fn column_gaps(row_ptr: &[u32], col_idx: &[u32]) -> Option<(Vec<u32>, Vec<u16>)> {
    let rows = row_ptr.len().saturating_sub(1);
    let bounds = chunk_bounds(row_ptr);
    let mut gaps = vec![0u16; col_idx.len()];
    let fits = split_at_bounds(&mut gaps, &bounds).into_par_iter().enumerate().all(|(chunk, chunk_gaps)| {
        let first_row = chunk * ROWS_PER_CHUNK;
        let base = bounds[chunk];
        (first_row..(first_row + ROWS_PER_CHUNK).min(rows)).all(|row| {
            let (start, end) = (row_ptr[row] as usize, row_ptr[row + 1] as usize);
            (start + 1..end).all(|j| match u16::try_from(col_idx[j] - col_idx[j - 1]) {
                Ok(gap) => {
                    chunk_gaps[j - base] = gap;
                    true
                }
                Err(_) => false,
            })
        })
    });
    let first_columns = (0..rows)
        .into_par_iter()
        .map(|r| if row_ptr[r] < row_ptr[r + 1] { col_idx[row_ptr[r] as usize] } else { 0 });
    fits.then(|| (first_columns.collect(), gaps))
}

/// The most patterns [`row_patterns`] keeps (a byte a row names one).
pub const MAX_ROW_PATTERNS: usize = 256;

/// The longest row [`row_patterns`] takes.
pub const MAX_PATTERN_LEN: usize = 256;

/// Each row's columns as a pattern: row r's columns are r + `offsets[k]` (wrapping u32) for
/// k in `pattern_start[p]..pattern_start[p + 1]`, p = `pattern_of[r]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowPatterns {
    pub pattern_of: Vec<u8>,
    pub pattern_start: Vec<u32>,
    pub offsets: Vec<u32>,
}

/// The rows' column patterns (columns less the row), where all the rows have at most
/// [`MAX_ROW_PATTERNS`] of them, none longer than [`MAX_PATTERN_LEN`]: a stencil's or a
/// structured mesh's rows differ only at the boundaries. None otherwise, or for no rows.
/// Chunks of rows find their patterns in parallel, then one dictionary numbers them all.
pub fn row_patterns(row_ptr: &[u32], col_idx: &[u32]) -> Option<RowPatterns> {
    let rows = row_ptr.len().saturating_sub(1);
    if rows == 0 {
        return None;
    }
    // Each chunk: its patterns, and each row's number among them.
    let chunks: Vec<(Vec<Vec<u32>>, Vec<u8>)> = (0..rows.div_ceil(ROWS_PER_CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let (mut numbers, mut patterns, mut pattern_of) = (HashMap::new(), Vec::new(), Vec::new());
            let mut pattern = Vec::new();
            for row in chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(rows) {
                let cols = &col_idx[row_ptr[row] as usize..row_ptr[row + 1] as usize];
                if cols.len() > MAX_PATTERN_LEN {
                    return None;
                }
                pattern.clear();
                pattern.extend(cols.iter().map(|&c| c.wrapping_sub(row as u32)));
                let number = match numbers.get(&pattern) {
                    Some(&number) => number,
                    None if patterns.len() == MAX_ROW_PATTERNS => return None,
                    None => {
                        let number = patterns.len() as u8;
                        numbers.insert(pattern.clone(), number);
                        patterns.push(pattern.clone());
                        number
                    }
                };
                pattern_of.push(number);
            }
            Some((patterns, pattern_of))
        })
        .collect::<Option<_>>()?;
    // One dictionary: each chunk's numbers renumbered into it.
    let (mut numbers, mut pattern_start, mut offsets) = (HashMap::new(), vec![0u32], Vec::new());
    let mut renumber = Vec::with_capacity(chunks.len());
    for (patterns, _) in &chunks {
        let mut to_global = Vec::with_capacity(patterns.len());
        for pattern in patterns {
            let next = numbers.len();
            let number = *numbers.entry(pattern).or_insert(next);
            if number == next {
                if next == MAX_ROW_PATTERNS {
                    return None;
                }
                offsets.extend_from_slice(pattern);
                pattern_start.push(offsets.len() as u32);
            }
            to_global.push(number as u8);
        }
        renumber.push(to_global);
    }
    let pattern_of = chunks
        .par_iter()
        .zip(&renumber)
        .flat_map_iter(|((_, local), to_global)| local.iter().map(|&n| to_global[n as usize]))
        .collect();
    Some(RowPatterns { pattern_of, pattern_start, offsets })
}

/// How many hot columns [`hot_columns`] keeps at most.
pub const HOT_COLUMNS: usize = 1 << 18;

/// A graph's hot columns, most nonzeros first (ties in column order): the [`HOT_COLUMNS`] most
/// popular, at most a sixteenth of the columns, where the hundredth of the columns with the
/// most nonzeros holds at least a tenth of them (graphs with hubs); None otherwise.
pub fn hot_columns(cols: usize, col_idx: &[u32]) -> Option<Vec<u32>> {
    if cols < 16 || col_idx.is_empty() {
        return None;
    }
    let degree: Vec<AtomicU32> = (0..cols).map(|_| AtomicU32::new(0)).collect();
    col_idx.par_iter().for_each(|&c| {
        degree[c as usize].fetch_add(1, Ordering::Relaxed);
    });
    let degree: Vec<u32> = degree.into_iter().map(AtomicU32::into_inner).collect();
    // Most nonzeros first; the first `count` in that order after a linear-time selection.
    let more = |a: &u32, b: &u32| (degree[*b as usize], *a).cmp(&(degree[*a as usize], *b));
    let mut order: Vec<u32> = (0..cols as u32).collect();
    let top = cols.div_ceil(100);
    order.select_nth_unstable_by(top - 1, more);
    let top_nonzeros: u64 = order[..top].iter().map(|&c| degree[c as usize] as u64).sum();
    if top_nonzeros * 10 < col_idx.len() as u64 {
        return None;
    }
    let count = HOT_COLUMNS.min(cols / 16);
    if cols.checked_add(count).is_none_or(|n| n > u32::MAX as usize) {
        return None; // the new numbers would not fit u32
    }
    order.select_nth_unstable_by(count - 1, more);
    order.truncate(count);
    order.sort_unstable_by(more);
    Some(order)
}

/// A's entries with hot column `hot[r]` numbered r and any other column c numbered
/// `hot.len()` + c, each row's hot entries first, by number, then the others in their order
/// (A's row pointers hold).
fn hot_first<T: Scalar>(a: &Csr<T>, hot: &[u32]) -> (Vec<u32>, Vec<T>) {
    let cold = hot.len() as u32;
    let mut rank = vec![u32::MAX; a.cols()];
    for (r, &c) in hot.iter().enumerate() {
        rank[c as usize] = r as u32;
    }
    let bounds = chunk_bounds(a.row_ptr());
    let (mut col_idx, mut values) = (vec![0u32; a.nnz()], vec![T::ZERO; a.nnz()]);
    let chunks: Vec<_> = split_at_bounds(&mut col_idx, &bounds)
        .into_iter()
        .zip(split_at_bounds(&mut values, &bounds))
        .collect();
    chunks.into_par_iter().enumerate().for_each(|(chunk, (chunk_cols, chunk_values))| {
        let mut hot_entries: Vec<(u32, T)> = Vec::new();
        let mut cold_entries: Vec<(u32, T)> = Vec::new();
        let mut at = 0;
        for row in chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(a.rows()) {
            let (cols, row_values) = a.row(row);
            hot_entries.clear();
            cold_entries.clear();
            for (&c, &v) in cols.iter().zip(row_values) {
                match rank[c as usize] {
                    u32::MAX => cold_entries.push((cold + c, v)),
                    r => hot_entries.push((r, v)),
                }
            }
            hot_entries.sort_unstable_by_key(|&(r, _)| r);
            for &(c, v) in hot_entries.iter().chain(&cold_entries) {
                (chunk_cols[at], chunk_values[at]) = (c, v);
                at += 1;
            }
        }
    });
    (col_idx, values)
}

/// The nonzero-split chunks of `chunk` nonzeros for `nnz` of them: one more than fill whole
/// chunks, so that the last holds the matrix's end.
fn split_chunks(nnz: usize, chunk: u32) -> usize {
    nnz / chunk as usize + 1
}

/// Where each nonzero-split chunk of `chunk` nonzeros starts: for each of the nnz / chunk + 1
/// chunks (the last holds the matrix's end) and for the end, the row open at its first nonzero
/// b * chunk, the last row to start before it (`u32::MAX` for chunk 0, `rows - 1` for the
/// end).
pub fn split_partition(row_ptr: &[u32], chunk: u32) -> Vec<u32> {
    let rows = row_ptr.len().saturating_sub(1);
    let chunks = split_chunks(row_ptr.last().copied().unwrap_or(0) as usize, chunk);
    (0..=chunks)
        .into_par_iter()
        .map(|b| {
            let first = b * chunk as usize;
            (row_ptr[..rows].partition_point(|&start| (start as usize) < first) as u32).wrapping_sub(1)
        })
        .collect()
}

/// Where each merge-path tile of `tile` items starts: for every multiple d of `tile` (and the end,
/// `rows + nnz`), the row in progress at item d, the nonzero being d minus that row. The path
/// takes a row's end once all its nonzeros are taken.
pub fn merge_partition(row_ptr: &[u32], tile: u32) -> Vec<u32> {
    let rows = row_ptr.len().saturating_sub(1);
    let nnz = row_ptr.last().copied().unwrap_or(0) as usize;
    let total = rows + nnz;
    let tile = tile as usize;
    let tiles = total.div_ceil(tile).max(1);
    (0..=tiles)
        .into_par_iter()
        .map(|t| {
            let d = (t * tile).min(total);
            // The largest row count r with row_ptr[r] + r <= d: rows before r have ended.
            let (mut lo, mut hi) = (d.saturating_sub(nnz), d.min(rows));
            while lo < hi {
                let pivot = (lo + hi) / 2;
                if (row_ptr[pivot + 1] as usize) < d - pivot { lo = pivot + 1 } else { hi = pivot }
            }
            lo as u32
        })
        .collect()
}

/// The plan's width, its rows per group where it chose `path` (else one), and their launch:
/// the shape of the gaps and patterns kernels, which the plan can name or a caller can ask
/// for directly.
fn group_shape<T>(a: &DeviceCsr<T>, path: CsrPath) -> (u32, u32, Launch) {
    let rows_per_group = if a.plan.path == path { a.plan.rows_per_group } else { 1 };
    (a.plan.width, rows_per_group, group_launch(a.rows, a.plan.width, rows_per_group))
}

/// The launch of the vector and gaps kernels: a warp per `32 rows_per_group / width` rows.
fn group_launch(rows: usize, width: u32, rows_per_group: u32) -> Launch {
    Launch::warp_per_item(rows.div_ceil((32 / width * rows_per_group) as usize), VECTOR_BLOCK / 32)
}

/// The vector kernel at `width` lanes per row and `rows_per_group`, the entries read first
/// out of L2 where `evict_first`; where `split_long_rows`, the upload's long rows go to their
/// chunks, whose warps come before the rows' in the same launch. Without chunks the kernel
/// runs its instance for matrices with no long rows.
fn launch_vector<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    (width, rows_per_group, evict_first): (u32, u32, bool),
    split_long_rows: bool,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let mut launch = group_launch(a.rows, width, rows_per_group);
    let chunks = &a.long_chunks;
    let count = if split_long_rows { chunks.count } else { 0 };
    launch.grid.0 += count.div_ceil(VECTOR_BLOCK / 32);
    let long = (count > 0) as u32;
    let (rows, evict_first) = (a.rows as u32, evict_first as u32);
    let mut sums = chunks.sums.lock().unwrap();
    let (partials, arrivals) = &mut *sums;
    // SAFETY: as in `spmv`; the chunks were cut from this matrix's rows longer than
    // `chunks.long_row`, and their counts are zero between products.
    unsafe {
        kernels::vector(
            gpu,
            launch,
            width,
            rows_per_group,
            evict_first,
            long,
            rows,
            &a.row_ptr,
            &a.col_idx,
            &a.values,
            x,
            y,
            chunks.long_row,
            count,
            &chunks.rows,
            &chunks.starts,
            partials,
            arrivals,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_round_trip() {
        for k in CsrKernel::ALL.into_iter().chain([2, 4, 16, 32].map(CsrKernel::Vector)) {
            assert_eq!(CsrKernel::from_name(&k.name()), Some(k));
        }
        assert_eq!(CsrKernel::from_name("csr-vector3"), None);
    }

    #[test]
    fn merge_partition_starts_every_tile_on_the_merge_path() {
        let tile = abi::spmv::merge_tile(8) as usize;
        // Rows of 0, 300, 0, 0, 5 and 700 nonzeros, then 1000 empty rows.
        let mut row_ptr = vec![0u32];
        for len in [0, 300, 0, 0, 5, 700].into_iter().chain([0; 1000]) {
            row_ptr.push(row_ptr.last().unwrap() + len);
        }
        let (rows, nnz) = (row_ptr.len() - 1, *row_ptr.last().unwrap() as usize);
        let starts = merge_partition(&row_ptr, tile as u32);
        assert_eq!(starts.len(), (rows + nnz).div_ceil(tile) + 1);
        assert_eq!((starts[0], *starts.last().unwrap()), (0, rows as u32));
        for (t, &row) in starts.iter().enumerate() {
            let d = (t * tile).min(rows + nnz);
            let (row, nz) = (row as usize, d - row as usize);
            // Rows before `row` have ended by nonzero nz; row `row` has not.
            assert!(row == 0 || row_ptr[row] as usize <= nz, "tile {t}");
            assert!(row == rows || nz <= row_ptr[row + 1] as usize, "tile {t}");
        }
        assert_eq!(
            CsrPlan::new(&row_ptr).path,
            CsrPath::Split,
            "mostly empty rows: chunks of equal nonzeros"
        );
        assert_eq!(CsrPlan::new(&[0, 3, 6, 9]).path, CsrPath::Vector, "even rows: vectors");
    }

    #[test]
    fn split_partition_names_the_row_open_at_each_chunk() {
        let chunk = 100;
        // Rows of 0, 250, 0, 50, 50 and 3 nonzeros (353: four chunks, the last holding the end),
        // then 5 empty rows.
        let mut row_ptr = vec![0u32];
        for len in [0, 250, 0, 50, 50, 3].into_iter().chain([0; 5]) {
            row_ptr.push(row_ptr.last().unwrap() + len);
        }
        assert_eq!(split_partition(&row_ptr, chunk), [u32::MAX, 1, 1, 3, 10]);
        // Whole chunks: a last one of no nonzeros still takes the end; no nonzeros at all, one
        // chunk.
        assert_eq!(split_partition(&[0, 100, 200, 200], chunk), [u32::MAX, 0, 1, 2]);
        assert_eq!(split_partition(&[0, 0, 0], chunk), [u32::MAX, 1]);
    }

    #[test]
    fn column_gaps_where_they_fit() {
        // Rows {3, 5, 70000}, {}, {65536 + 7}.
        let (row_ptr, cols) = ([0, 3, 3, 4], [3, 5, 70_000, 65_543]);
        assert_eq!(column_gaps(&row_ptr, &cols), None, "5 -> 70000 does not fit");
        let cols = [3, 5, 65_000, 65_543];
        assert_eq!(column_gaps(&row_ptr, &cols), Some((vec![3, 0, 65_543], vec![0, 2, 64_995, 0])));
    }

    /// Row r's columns as its pattern says.
    fn pattern_columns(p: &RowPatterns, r: usize) -> Vec<u32> {
        let n = p.pattern_of[r] as usize;
        let offsets = &p.offsets[p.pattern_start[n] as usize..p.pattern_start[n + 1] as usize];
        offsets.iter().map(|&o| (r as u32).wrapping_add(o)).collect()
    }

    #[test]
    fn row_patterns_of_a_stencil_and_none_of_random_rows() {
        // A 27-point stencil over chunks of rows: 27 patterns (inside, faces, edges, corners),
        // numbered alike in every chunk.
        let a = crate::sparse::generate::stencil27::<f64>(20, 21, 22).unwrap();
        assert!(a.rows() > 2 * ROWS_PER_CHUNK);
        let p = row_patterns(a.row_ptr(), a.col_indices()).expect("a stencil's rows repeat");
        assert_eq!(p.pattern_start.len(), 28);
        for r in 0..a.rows() {
            assert_eq!(pattern_columns(&p, r), a.row(r).0, "row {r}");
        }
        // Columns left of the row (wrapping offsets), and empty rows.
        let (row_ptr, cols) = ([0, 0, 2, 3], [0, 1, 0]);
        let p = row_patterns(&row_ptr, &cols).unwrap();
        assert_eq!((p.pattern_of.clone(), p.pattern_start.clone()), (vec![0, 1, 2], vec![0, 0, 2, 3]));
        assert_eq!(pattern_columns(&p, 2), vec![0]);
        // Random columns: a new pattern a row, past 256 rows.
        let a = crate::sparse::generate::random_uniform::<f64>(3000, 3000, 8, 1).unwrap();
        assert_eq!(row_patterns(a.row_ptr(), a.col_indices()), None);
        // A row too long for a pattern; no rows.
        let long: Vec<u32> = (0..MAX_PATTERN_LEN as u32 + 1).collect();
        assert_eq!(row_patterns(&[0, long.len() as u32], &long), None);
        assert_eq!(row_patterns(&[0], &[]), None);
    }

    #[test]
    fn hot_columns_where_few_hold_many() {
        // 200 columns; column 7 in every row, column 3 in half of them, the rest once each.
        let (mut row_ptr, mut cols) = (vec![0u32], Vec::new());
        for r in 0..100u32 {
            cols.extend(if r % 2 == 0 { vec![3, 7, 10 + r] } else { vec![7, 10 + r] });
            row_ptr.push(cols.len() as u32);
        }
        let hot = hot_columns(200, &cols).expect("column 7 holds 40% of the nonzeros");
        assert_eq!(hot, vec![7, 3, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19], "a sixteenth, ties in order");
        let a = Csr::new(100, 200, row_ptr, cols, vec![1.0f64; 250]).unwrap();
        let (new_cols, _) = hot_first(&a, &hot);
        // Row 0: 3 -> 1, 7 -> 0, 10 -> 2 (hot); row 1: 7 -> 0, 11 -> 3; row 12: 22 -> 12 + 22.
        assert_eq!(&new_cols[..5], &[0, 1, 2, 0, 3]);
        assert_eq!(&new_cols[30..33], &[0, 1, 34]);
        // Every column once: the top hundredth holds 1%.
        assert_eq!(hot_columns(1000, &(0..1000).collect::<Vec<u32>>()), None);
        assert_eq!(hot_columns(0, &[]), None);
    }

    #[test]
    fn plan_picks_width_and_long_rows() {
        assert_eq!(CsrPlan::width_for(27.0), 8);
        assert_eq!(CsrPlan::width_for(7.0), 2);
        assert_eq!(CsrPlan::width_for(81.0), 16);
        assert_eq!(CsrPlan::width_for(1000.0), 32);
        // A thousand rows of 3 and one of 600: the long one is listed, the width comes from
        // the others.
        let mut row_ptr = vec![0u32];
        for len in (0..1000).map(|r| if r == 10 { 600 } else { 3 }) {
            row_ptr.push(row_ptr.last().unwrap() + len);
        }
        let plan = CsrPlan::new(&row_ptr);
        assert_eq!(plan.long_rows, vec![10]);
        // 600 nonzeros make three chunks of up to 256.
        assert_eq!(plan.chunk_rows, vec![10, 10, 10]);
        assert_eq!(plan.chunk_starts, vec![30, 30 + LONG_ROW_CHUNK, 30 + 2 * LONG_ROW_CHUNK]);
        assert_eq!(plan.width, 2);
    }
}
