//! Level scheduling on copies of the matrix: for each sweep direction, a copy whose rows are
//! grouped by their level in that direction (the [`GroupedCopy`] the multicolor smoother
//! uses, with levels for colors), one launch per level, x updated in place. The rows of a
//! level never neighbour each other, their neighbours in earlier levels are the rows the
//! sequential sweep has already updated and those in later levels the ones it has not, so each
//! launch computes exactly what the sequential sweep computes for its rows (to rounding).
//!
//! Against [`super::levels::LevelSmoother`] (a warp per listed row of A): a level's rows are
//! read in sequence, with the lanes per row their mean length calls for, and no out-of-place
//! copy of x. It costs two copies of the matrix and a launch per level, so it pays only where
//! the levels are few and wide (a randomly renumbered mesh: 21 levels for 2 M rows); it
//! refuses matrices of more than [`MAX_LEVELS`] levels in a direction, and unsymmetric
//! patterns (where the in-place update is not the sequential one).

use super::levels::{DeviceLevels, levels_gpu};
use super::multicolor::{GroupedCopy, pattern_symmetric};
use super::{Direction, Smoother, SymgsMatrix, check_lengths};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, GraphReplay, L2SetAside, Queue, keep_in_l2};
use crate::vendor::device_ptr;

/// Levels per direction at most: one launch each per sweep.
pub const MAX_LEVELS: usize = 2048;

/// The level-copies smoother: exact sequential order, one launch per level and direction,
/// replayed from a CUDA graph.
pub struct LevelCopySmoother<T> {
    rows: usize,
    forward: GroupedCopy<T>,
    backward: GroupedCopy<T>,
    /// The relax kernel's sums over lower groups (not needed here: both parts are summed).
    scratch: CudaSlice<T>,
    /// The captured sweep, keyed by the addresses of r and x.
    graph: GraphReplay<(u64, u64)>,
    /// L2 set aside for x from the first sweep on, while the smoother lives ([`keep_in_l2`]).
    set_aside: Option<L2SetAside>,
}

impl<T: Scalar> LevelCopySmoother<T> {
    /// Computes both directions' levels on the GPU and builds a copy for each.
    pub fn new(gpu: &Gpu, m: &SymgsMatrix<T>) -> Result<Self> {
        // In place, a row of an unsymmetric pattern could read a later row's new value: that
        // row need not wait for it, so it may share its level or come before.
        if !pattern_symmetric(gpu, m.rows, &m.csr.row_ptr, &m.csr.col_idx)? {
            return Err(Error::InvalidInput(
                "level copies need a structurally symmetric matrix (a_ij stored iff a_ji is); \
                 the sync-free smoother takes any pattern"
                    .into(),
            ));
        }
        let copy = |direction| -> Result<GroupedCopy<T>> {
            let levels = levels_gpu(gpu, m, direction)?;
            if levels.count() > MAX_LEVELS {
                return Err(Error::InvalidInput(format!(
                    "level copies: {} levels in the {direction:?} sweep, a launch each (at most {MAX_LEVELS}); \
                     the sync-free smoother suits such matrices",
                    levels.count()
                )));
            }
            GroupedCopy::sorted(gpu, m, &level_states(gpu, &levels)?, levels.count())
        };
        Ok(LevelCopySmoother {
            rows: m.rows,
            forward: copy(Direction::Forward)?,
            backward: copy(Direction::Backward)?,
            scratch: gpu.zeros(m.rows)?,
            graph: GraphReplay::default(),
            set_aside: None,
        })
    }

    /// Levels of the (forward, backward) sweeps: launches per half-sweep.
    pub fn level_counts(&self) -> (usize, usize) {
        (self.forward.groups().len(), self.backward.groups().len())
    }

    /// Queues a whole sweep: the forward copy's levels in order, then the backward copy's.
    fn queue(&mut self, queue: Queue<'_>, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        for copy in [&self.forward, &self.backward] {
            for level in 0..copy.groups().len() {
                copy.queue_group(queue, level, 1, &mut self.scratch, r, x)?;
            }
        }
        Ok(())
    }
}

/// Each row's level as a sort key on the device (the level in the low 32 bits).
fn level_states(gpu: &Gpu, levels: &DeviceLevels) -> Result<CudaSlice<u64>> {
    let rows = gpu.download(&levels.rows)?;
    let mut state = vec![0u64; rows.len()];
    for (level, bounds) in levels.offsets.windows(2).enumerate() {
        for &row in &rows[bounds[0] as usize..bounds[1] as usize] {
            state[row as usize] = level as u64;
        }
    }
    gpu.upload(&state)
}

impl<T: Scalar> Smoother<T> for LevelCopySmoother<T> {
    fn name(&self) -> String {
        "level-copies".into()
    }

    fn exact_order(&self) -> bool {
        true
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        check_lengths(self.rows, r.len(), x.len())?;
        if self.rows == 0 {
            return Ok(());
        }
        // Each level gathers x at random while its rows stream past: x is kept in L2.
        L2SetAside::hold(&mut self.set_aside, gpu, x.len() * size_of::<T>())?;
        let key = (device_ptr(gpu, r) as u64, device_ptr(gpu, x) as u64);
        let mut graph = std::mem::take(&mut self.graph);
        let replayed =
            graph.run(gpu, key, |stream| keep_in_l2(gpu.on(stream), x, |x| self.queue(gpu.on(stream), r, x)));
        self.graph = graph;
        replayed
    }
}
