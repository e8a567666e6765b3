//! Level scheduling: a row's level is one more than the highest level among the rows it
//! depends on in a sweep direction (the columns updated earlier: below the diagonal going
//! forward, above it going backward), 0 for none. The rows of a level are independent, so one
//! launch per level, a warp per row, runs a sweep in the sequential order's results.
//!
//! The levels are computed once per matrix, on the GPU ([`levels_gpu`]: the sync-free
//! kernel's wait-on-flags scheme, then a counting sort by level) or on the host
//! ([`levels_cpu`], the reference the GPU analysis is tested against). A sweep is one launch
//! per level and direction; [`LevelSmoother::use_graph`] captures them in one CUDA graph (per
//! pair of r and x buffers) and replays it on the GPU's stream, which saves most of the
//! per-launch overhead (PERF.md has the figures). The GPU analysis is slow where rows in
//! sequence form chains (its kernel takes rows in row order; see `sync_free`).

use super::sync_free::{DEFAULT_TIMEOUT_NS, FULL_WARPS_PER_SM, persistent_launch, timeout_error};
use super::{Direction, Smoother, SymgsMatrix, forward_flag, rhs_of};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, GraphReplay, Launch, Queue};
use crate::kernels::symgs::{levels as kernels, sync_free};
use crate::sparse::Csr;
use crate::vendor::device_ptr;
use rayon::prelude::*;

/// The rows of each level of one sweep direction: level k is `rows[offsets[k]..offsets[k + 1]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Levels {
    pub offsets: Vec<u32>,
    pub rows: Vec<u32>,
}

impl Levels {
    /// How many levels (launches per half-sweep).
    pub fn count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The rows of level `k`.
    pub fn level(&self, k: usize) -> &[u32] {
        &self.rows[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// The level of every row.
    pub fn level_of_rows(&self) -> Vec<u32> {
        let mut level = vec![0; self.rows.len()];
        for k in 0..self.count() {
            for &row in self.level(k) {
                level[row as usize] = k as u32;
            }
        }
        level
    }

    /// The same lists on the device.
    pub fn upload(&self, gpu: &Gpu) -> Result<DeviceLevels> {
        Ok(DeviceLevels { offsets: self.offsets.clone(), rows: gpu.upload(&self.rows)? })
    }

    /// Groups rows by their level (rows in increasing order within a level).
    fn from_level_of_rows(level: &[u32]) -> Levels {
        let count = level.iter().max().map_or(0, |&l| l as usize + 1);
        let mut offsets = vec![0u32; count + 1];
        for &l in level {
            offsets[l as usize + 1] += 1;
        }
        for k in 0..count {
            offsets[k + 1] += offsets[k];
        }
        let mut next = offsets.clone();
        let mut rows = vec![0u32; level.len()];
        for (row, &l) in level.iter().enumerate() {
            rows[next[l as usize] as usize] = row as u32;
            next[l as usize] += 1;
        }
        Levels { offsets, rows }
    }
}

/// The levels of one direction on the device: the host keeps the offsets (one launch each).
pub struct DeviceLevels {
    pub offsets: Vec<u32>,
    pub rows: CudaSlice<u32>,
}

impl DeviceLevels {
    pub fn count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Checks that these are level lists of `matrix`'s rows (what every smoother built on given
    /// levels checks first).
    pub fn check_for<T>(&self, matrix: &SymgsMatrix<T>) -> Result<()> {
        if self.rows.len() != matrix.rows || self.offsets.last().copied().unwrap_or(0) as usize != matrix.rows
        {
            return Err(Error::InvalidInput(format!(
                "level lists of {} rows for a matrix of {}",
                self.rows.len(),
                matrix.rows
            )));
        }
        if self.offsets.first() != Some(&0) || self.offsets.windows(2).any(|level| level[0] > level[1]) {
            return Err(Error::InvalidInput("level offsets must rise from 0 to the number of rows".into()));
        }
        Ok(())
    }

    /// Back to the host, each level's rows sorted (the GPU lists them in any order), the
    /// levels in parallel.
    pub fn to_host(&self, gpu: &Gpu) -> Result<Levels> {
        let mut rows = gpu.download(&self.rows)?;
        let mut levels = Vec::with_capacity(self.count());
        let mut rest = &mut rows[..];
        for bounds in self.offsets.windows(2) {
            let (level, after) = rest.split_at_mut((bounds[1] - bounds[0]) as usize);
            levels.push(level);
            rest = after;
        }
        levels.into_par_iter().for_each(|level| level.sort_unstable());
        Ok(Levels { offsets: self.offsets.clone(), rows })
    }
}

/// The levels of `direction`, computed on the host in one pass over the rows.
pub fn levels_cpu<T>(a: &Csr<T>, direction: Direction) -> Levels {
    let n = a.rows();
    let mut level = vec![0u32; n];
    let mut assign = |i: usize| {
        let deps = a.row(i).0.iter().filter(|&&j| match direction {
            Direction::Forward => (j as usize) < i,
            Direction::Backward => (j as usize) > i,
        });
        level[i] = deps.map(|&j| level[j as usize] + 1).max().unwrap_or(0);
    };
    match direction {
        Direction::Forward => (0..n).for_each(&mut assign),
        Direction::Backward => (0..n).rev().for_each(&mut assign),
    }
    Levels::from_level_of_rows(&level)
}

/// The levels of `direction`, computed on the GPU: every row's level by the sync-free
/// kernel (`sync_free::levels`), then a counting sort by level (`level_counts`, prefix sums on
/// the host, `level_scatter`); each level's rows in ascending order.
pub fn levels_gpu<T: Scalar>(gpu: &Gpu, m: &SymgsMatrix<T>, direction: Direction) -> Result<DeviceLevels> {
    if m.rows == 0 {
        return Ok(DeviceLevels { offsets: vec![0], rows: gpu.zeros(0)? });
    }
    let rows = m.rows as u32;
    let forward = forward_flag(direction);
    let mut ticket = gpu.zeros::<u32>(1)?;
    let mut error = gpu.zeros::<u32>(1)?;
    let mut level_plus_one = gpu.zeros::<u32>(m.rows)?;
    let mut depth = gpu.zeros::<u32>(1)?;
    // SAFETY: a checked square matrix; flags of `rows`, zeroed.
    unsafe {
        sync_free::levels(
            gpu,
            persistent_launch(gpu, m.rows, FULL_WARPS_PER_SM),
            rows,
            forward,
            DEFAULT_TIMEOUT_NS,
            LEVELS_BACKOFF_NS,
            &mut ticket,
            &mut error,
            &m.csr.row_ptr,
            &m.csr.col_idx,
            &mut level_plus_one,
            &mut depth,
        )?;
    }
    let stuck = gpu.download(&error)?[0];
    if stuck != 0 {
        return Err(timeout_error("level analysis", stuck - 1, DEFAULT_TIMEOUT_NS));
    }
    let levels = gpu.download(&depth)?[0];
    let mut counts = gpu.zeros::<u32>(levels as usize)?;
    // SAFETY: level_plus_one of `rows`, counts of `levels`.
    unsafe {
        sync_free::level_counts(gpu, Launch::linear(m.rows, 256), rows, levels, &level_plus_one, &mut counts)?
    };
    let mut offsets = vec![0u32];
    for c in gpu.download(&counts)? {
        offsets.push(offsets.last().unwrap() + c);
    }
    if *offsets.last().unwrap() != rows {
        return Err(Error::Library {
            library: "SymGS",
            what: "level analysis",
            message: format!("the levels hold {} rows of {rows}", offsets.last().unwrap()),
        });
    }
    let mut cursor = gpu.upload(&offsets[..levels as usize])?;
    let mut level_rows = gpu.zeros::<u32>(m.rows)?;
    // SAFETY: the cursors start at the prefix sums of the counts, so every slot is < rows.
    unsafe {
        let launch = Launch::linear(m.rows, 256);
        sync_free::level_scatter(gpu, launch, rows, levels, &level_plus_one, &mut cursor, &mut level_rows)?;
    }
    // The scatter lists a level's rows in any order; sorted, every run hands the rows out in
    // the same order (reproducible timings).
    DeviceLevels { offsets, rows: level_rows }.to_host(gpu)?.upload(gpu)
}

/// Nanoseconds between two polls of a flag in the level analysis (0: spin; it runs once).
const LEVELS_BACKOFF_NS: u32 = 0;

/// The level-scheduled smoother on one matrix.
pub struct LevelSmoother<'a, T> {
    matrix: &'a SymgsMatrix<T>,
    forward: DeviceLevels,
    backward: DeviceLevels,
    tmp: CudaSlice<T>,
    use_graph: bool,
    /// The captured sweep, keyed by the buffers it was captured with (r, or none for the
    /// report's variant; x).
    graph: GraphReplay<(Option<u64>, u64)>,
}

impl<'a, T: Scalar> LevelSmoother<'a, T> {
    /// With the levels computed on the GPU.
    pub fn new(gpu: &Gpu, matrix: &'a SymgsMatrix<T>) -> Result<Self> {
        let forward = levels_gpu(gpu, matrix, Direction::Forward)?;
        let backward = levels_gpu(gpu, matrix, Direction::Backward)?;
        Self::with_levels(gpu, matrix, forward, backward)
    }

    /// With given levels (e.g. [`levels_cpu`] uploaded); they must be `matrix`'s.
    pub fn with_levels(
        gpu: &Gpu,
        matrix: &'a SymgsMatrix<T>,
        forward: DeviceLevels,
        backward: DeviceLevels,
    ) -> Result<Self> {
        forward.check_for(matrix)?;
        backward.check_for(matrix)?;
        Ok(LevelSmoother {
            matrix,
            forward,
            backward,
            tmp: gpu.zeros(matrix.rows)?,
            use_graph: false,
            graph: GraphReplay::default(),
        })
    }

    /// Replays each sweep from a CUDA graph (captured at the first sweep with given r and x).
    pub fn use_graph(mut self, yes: bool) -> Self {
        self.use_graph = yes;
        self
    }

    /// Levels of the (forward, backward) sweeps: launches per half-sweep.
    pub fn level_counts(&self) -> (usize, usize) {
        (self.forward.count(), self.backward.count())
    }

    /// The GPU101 report's variant (see [`super::cpu::CpuSymgs::sweep_report_variant`]).
    pub fn sweep_report_variant(&mut self, gpu: &Gpu, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, None, x)
    }

    fn run(&mut self, gpu: &Gpu, r: Option<&CudaSlice<T>>, x: &mut CudaSlice<T>) -> Result<()> {
        self.matrix.check_vectors(r, x)?;
        if self.matrix.rows == 0 {
            return Ok(());
        }
        if !self.use_graph {
            return self.queue(gpu.into(), r, x);
        }
        let key = (r.map(|r| device_ptr(gpu, r) as u64), device_ptr(gpu, x) as u64);
        let mut graph = std::mem::take(&mut self.graph);
        let replayed = graph.run(gpu, key, |stream| self.queue(gpu.on(stream), r, x));
        self.graph = graph;
        replayed
    }

    /// Queues a whole sweep: forward levels x -> tmp, backward levels tmp -> x.
    fn queue(&mut self, queue: Queue<'_>, r: Option<&CudaSlice<T>>, x: &mut CudaSlice<T>) -> Result<()> {
        let m = self.matrix;
        queue_half_sweep(queue, m, &self.forward, Direction::Forward, rhs_of(r, x), x, &mut self.tmp)?;
        let tmp = &self.tmp;
        queue_half_sweep(queue, m, &self.backward, Direction::Backward, rhs_of(r, tmp), tmp, x)
    }
}

impl<T: Scalar> Smoother<T> for LevelSmoother<'_, T> {
    fn name(&self) -> String {
        if self.use_graph { "level-schedule-graph".into() } else { "level-schedule".into() }
    }

    fn exact_order(&self) -> bool {
        true
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, Some(r), x)
    }
}

/// One launch per level, in order.
fn queue_half_sweep<T: Scalar>(
    queue: Queue<'_>,
    m: &SymgsMatrix<T>,
    levels: &DeviceLevels,
    direction: Direction,
    rhs: &CudaSlice<T>,
    old: &CudaSlice<T>,
    new: &mut CudaSlice<T>,
) -> Result<()> {
    let forward = forward_flag(direction);
    for k in 0..levels.count() {
        let (start, end) = (levels.offsets[k], levels.offsets[k + 1]);
        let count = end - start;
        let level_rows = levels.rows.slice(start as usize..end as usize);
        // SAFETY: `count` rows listed, all < rows, each level after the levels it depends on;
        // vectors of `rows`.
        unsafe {
            let (csr, launch) = (&m.csr, Launch::warp_per_item(count as usize, 4));
            let (row_ptr, col_idx, values) = (&csr.row_ptr, &csr.col_idx, &csr.values);
            kernels::relax_level(
                queue,
                launch,
                count,
                &level_rows,
                forward,
                row_ptr,
                col_idx,
                values,
                &m.diagonal,
                rhs,
                old,
                new,
            )?;
        }
    }
    Ok(())
}
