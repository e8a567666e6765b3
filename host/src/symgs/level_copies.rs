//! Level scheduling on a copy of the matrix whose rows are grouped by their level in the
//! forward sweep (the `GroupedCopy` the multicolor smoother uses, with levels for colors),
//! one launch per level, x updated in place. The rows of a level never neighbour each other;
//! a row's neighbours in earlier levels are exactly those before it in row order, which the
//! sequential sweep has already updated, and those in later levels the ones after it. So each
//! launch computes what the sequential sweep computes for its rows (to rounding). The
//! backward sweep runs the levels in reverse order: a row's later neighbours are then the
//! updated ones, and its earlier ones still hold their forward values, whose sum (r minus it)
//! the forward sweep kept, so it reads only the row's entries after the diagonal, and no r.
//! Sweeps in one call ([`Smoother::sweeps`]) carry the sums over the later levels from each
//! backward sweep to the next forward one, as multicolor does.
//!
//! Against [`super::levels::LevelSmoother`] (a warp per listed row of A): a level's rows are
//! read in sequence, with the lanes per row their mean length calls for (or in sliced-ELL
//! form, as multicolor reads a color), and no out-of-place copy of x. It costs a copy of the
//! matrix and a launch per level, so it pays only where the levels are few and wide (a
//! randomly renumbered mesh: 21 levels for 2 M rows); it refuses matrices of more than
//! [`MAX_LEVELS`] levels, and unsymmetric patterns (where the in-place update is not the
//! sequential one).

use super::levels::{DeviceLevels, levels_gpu};
use super::multicolor::{GroupOrder, GroupedCopy, GroupedSweeps};
use super::{Direction, Smoother, SymgsMatrix};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu};

/// Levels at most: a launch each way per sweep.
pub const MAX_LEVELS: usize = 2048;

/// The level-copies smoother: exact sequential order, one launch per level and direction,
/// replayed from a CUDA graph.
pub struct LevelCopySmoother<T> {
    /// The rows grouped by forward level.
    sweeps: GroupedSweeps<T>,
}

impl<T: Scalar> LevelCopySmoother<T> {
    /// Computes the forward levels on the GPU and builds the copy grouped by them.
    pub fn new(gpu: &Gpu, m: &SymgsMatrix<T>) -> Result<Self> {
        // In place, a row of an unsymmetric pattern could read a later row's new value: that
        // row need not wait for it, so it may share its level or come before.
        if !m.pattern_symmetric(gpu)? {
            return Err(Error::InvalidInput(
                "level copies need a structurally symmetric matrix (a_ij stored iff a_ji is); \
                 the sync-free smoother takes any pattern"
                    .into(),
            ));
        }
        let levels = levels_gpu(gpu, m, Direction::Forward)?;
        if levels.count() > MAX_LEVELS {
            return Err(Error::InvalidInput(format!(
                "level copies: {} levels, a launch each way (at most {MAX_LEVELS}); \
                 the sync-free smoother suits such matrices",
                levels.count()
            )));
        }
        let mut states = level_states(gpu, &levels)?;
        let copy = GroupedCopy::sorted(gpu, m, &mut states, levels.count(), GroupOrder::AsNumbered)?
            .with_form(gpu, None)?;
        Ok(LevelCopySmoother { sweeps: GroupedSweeps::new(gpu, copy)? })
    }

    /// Launches per half-sweep: (forward, backward).
    pub fn level_counts(&self) -> (usize, usize) {
        let levels = self.sweeps.copy.groups().len();
        (levels, levels.saturating_sub(1))
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
        self.sweeps.run(gpu, r, x, false)
    }

    fn sweep_from_zero(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.sweeps.run(gpu, r, x, true)
    }

    fn sweeps(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>, count: usize) -> Result<()> {
        self.sweeps.run_chain(gpu, r, x, count)
    }
}
