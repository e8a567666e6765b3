//! Level scheduling on a copy of the matrix whose rows are grouped by their level in the
//! forward sweep (the [`GroupedCopy`] the multicolor smoother uses, with levels for colors),
//! one launch per level, x updated in place. The rows of a level never neighbour each other;
//! a row's neighbours in earlier levels are exactly those before it in row order, which the
//! sequential sweep has already updated, and those in later levels the ones after it. So each
//! launch computes what the sequential sweep computes for its rows (to rounding). The
//! backward sweep runs the levels in reverse order: a row's later neighbours are then the
//! updated ones, and its earlier ones still hold their forward values, whose sum (r minus it)
//! the forward sweep kept, so it reads only the row's entries after the diagonal, and no r.
//!
//! Against [`super::levels::LevelSmoother`] (a warp per listed row of A): a level's rows are
//! read in sequence, with the lanes per row their mean length calls for (or in sliced-ELL
//! form, as multicolor reads a color), and no out-of-place copy of x. It costs a copy of the
//! matrix and a launch per level, so it pays only where the levels are few and wide (a
//! randomly renumbered mesh: 21 levels for 2 M rows); it refuses matrices of more than
//! [`MAX_LEVELS`] levels, and unsymmetric patterns (where the in-place update is not the
//! sequential one).

use super::levels::{DeviceLevels, levels_gpu};
use super::multicolor::{GroupedCopy, pattern_symmetric};
use super::{Direction, Smoother, SymgsMatrix, check_lengths};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, GraphReplay, L2SetAside, keep_in_l2};
use crate::vendor::device_ptr;

/// Levels at most: a launch each way per sweep.
pub const MAX_LEVELS: usize = 2048;

/// The level-copies smoother: exact sequential order, one launch per level and direction,
/// replayed from a CUDA graph.
pub struct LevelCopySmoother<T> {
    rows: usize,
    /// The rows grouped by forward level.
    copy: GroupedCopy<T>,
    /// Each row's r minus its sum over earlier levels, from the forward sweep to the backward
    /// one.
    r_minus_lower: CudaSlice<T>,
    /// The captured sweeps, from any x and from zero, keyed by the addresses of r and x.
    graphs: [GraphReplay<(u64, u64)>; 2],
    /// L2 set aside for x from the first sweep on, while the smoother lives ([`keep_in_l2`]).
    set_aside: Option<L2SetAside>,
}

impl<T: Scalar> LevelCopySmoother<T> {
    /// Computes the forward levels on the GPU and builds the copy grouped by them.
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
        let levels = levels_gpu(gpu, m, Direction::Forward)?;
        if levels.count() > MAX_LEVELS {
            return Err(Error::InvalidInput(format!(
                "level copies: {} levels, a launch each way (at most {MAX_LEVELS}); \
                 the sync-free smoother suits such matrices",
                levels.count()
            )));
        }
        let copy = GroupedCopy::sorted(gpu, m, &level_states(gpu, &levels)?, levels.count())?
            .with_form(gpu, None)?;
        Ok(LevelCopySmoother {
            rows: m.rows,
            copy,
            r_minus_lower: gpu.zeros(m.rows.max(1))?,
            graphs: Default::default(),
            set_aside: None,
        })
    }

    /// Launches per half-sweep: (forward, backward).
    pub fn level_counts(&self) -> (usize, usize) {
        let levels = self.copy.groups().len();
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
        self.run(gpu, r, x, false)
    }

    fn sweep_from_zero(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, r, x, true)
    }
}

impl<T: Scalar> LevelCopySmoother<T> {
    /// A whole sweep, replayed from a CUDA graph (from zero: see `GroupedCopy::queue_sweep`).
    fn run(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>, from_zero: bool) -> Result<()> {
        check_lengths(self.rows, r.len(), x.len())?;
        if self.rows == 0 {
            return Ok(());
        }
        // Each level gathers x at random while its rows stream past: x is kept in L2.
        L2SetAside::hold(&mut self.set_aside, gpu, x.len() * size_of::<T>())?;
        let key = (device_ptr(gpu, r) as u64, device_ptr(gpu, x) as u64);
        let (copy, r_minus_lower) = (&self.copy, &mut self.r_minus_lower);
        self.graphs[from_zero as usize].run(gpu, key, |stream| {
            keep_in_l2(gpu.on(stream), x, |x| {
                copy.queue_sweep(gpu.on(stream), r_minus_lower, r, x, from_zero)
            })
        })
    }
}
