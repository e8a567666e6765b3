//! The sync-free smoother: one launch per sweep direction, its blocks all resident at once.
//! Each warp takes every W-th warp slot of the row order (W warps in the grid; a slot is a
//! row, or in wide levels 2 rows of 16 lanes, or 4 of 8 lanes on short rows) and waits on the
//! rows they depend on, so a sweep costs the longest dependency chain instead of a launch per
//! level. A finished row signals through a done flag (release store; waiters poll, then
//! acquire), as specified, or through its value itself ([`Signal::Value`]: one load per
//! hand-over, no fence). Waits are bounded: one that lasts [`SyncFreeSmoother::timeout_ns`]
//! makes the sweep an error, never a hang (see `kernels/src/symgs/sync_free.rs` for why no
//! valid run can deadlock).
//!
//! The rows are handed out level by level (the order of the level analysis), not in row
//! order: in row order the rows in flight (a few thousand consecutive ones) hold the stencil's
//! chains of neighbours along x, and the sweep crawls; in level order the rows in flight are
//! whole levels of independent rows.
//!
//! Where a warp reads several short rows at once or halves of rows, each direction keeps a
//! copy of the matrix's rows in its order ([`default_row_copies`], where the device has
//! room), so that the rows in flight lie together in memory rather than scattered over the
//! matrix, and the sweep's loads coalesce across them.
//!
//! Where a row is longer than its lanes, rows are read in halves ([`default_half_rows`]): a
//! sweep's first half reads whole rows and keeps each row's r_i less its sum over the entries
//! it waited on; the next half reads only the entries it waits on and starts from what was
//! kept, so a lane makes one round of loads fewer and the half reads half the matrix. Sweeps
//! in one call and sweeps from zero read half rows throughout. PERF.md has the figures behind
//! these choices.

use super::levels::{DeviceLevels, levels_gpu};
use super::{Direction, Smoother, SymgsMatrix, forward_flag, rhs_of};
use crate::Scalar;
use crate::error::{Error, Result, unless_out_of_memory};
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::symgs::sync_free as kernels;
use abi::symgs::SYNC_FREE_WARPS_PER_BLOCK as WARPS_PER_BLOCK;

/// How long one wait may last before the sweep is abandoned: far beyond any valid wait (a
/// warp waits at most for the rows that the other running warps hold, microseconds each).
pub const DEFAULT_TIMEOUT_NS: u64 = 2_000_000_000;

/// Warps per SM of a persistent launch by default: the H100's 64 resident warps per SM.
pub const FULL_WARPS_PER_SM: u32 = 64;

/// A grid of `warps_per_sm` warps per SM (a multiple of [`WARPS_PER_BLOCK`]) in blocks of
/// [`WARPS_PER_BLOCK`], or about one warp per row when there are fewer rows.
pub(crate) fn persistent_launch(gpu: &Gpu, rows: usize, warps_per_sm: u32) -> Launch {
    let warps = rows.min((gpu.props().sm_count * warps_per_sm) as usize);
    Launch::warp_per_item(warps.max(1), WARPS_PER_BLOCK)
}

/// How a finished row tells the rows that wait on it (see `kernels/src/symgs/sync_free.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// A per-row done flag, release store / acquire load: the scheme as specified.
    DoneFlags,
    /// The value itself, polled until it is no longer the "unset" NaN: one load per hand-over.
    Value,
}

/// The error of a wait that timed out at `row`.
pub(crate) fn timeout_error(what: &'static str, row: u32, timeout_ns: u64) -> Error {
    Error::Library {
        library: "SymGS",
        what,
        message: format!(
            "row {row} waited more than {:.3} s for a row it depends on; the sweep was abandoned and its output is not valid",
            timeout_ns as f64 * 1e-9
        ),
    }
}

/// Lanes in a warp.
const WARP_SIZE: u32 = 32;

/// Lanes per row by default: a warp per row, unless most rows (`wide_fraction`) lie in levels
/// at least as wide as the warps in flight and rows are not long (`mean` nonzeros up to 28):
/// then 8 lanes up to 11 nonzeros (4 rows of a level per warp at once), 16 above (2 rows).
/// In wide levels the sweep is bound by how many rows are in flight, and a narrower row
/// takes one or two more rounds of loads; in thin levels it waits on hand-overs whatever the
/// width, and padding each level to whole warps costs more than narrow rows gain (PERF.md has
/// the measurements behind the thresholds).
pub fn default_lanes_per_row(mean: f64, wide_fraction: f64) -> u32 {
    if wide_fraction < 0.5 || mean > 28.0 {
        32
    } else if mean > 11.0 {
        16
    } else {
        8
    }
}

/// Whether rows read only the entries they wait on after a sweep's first half (half rows: the
/// half before kept the rest of their sums) rather than whole rows: where that takes a round
/// of loads off a lane at `lanes` lanes a row, for rows of `mean` entries. Where it does not
/// (a row fits its lanes either way), whole rows were faster (PERF.md).
pub fn default_half_rows(mean: f64, lanes: u32) -> bool {
    let rounds = |entries: f64| (entries / lanes as f64).ceil();
    rounds(mean) > rounds((mean - 1.0).max(0.0) / 2.0)
}

/// Whether each direction keeps a copy of the matrix's rows in its order: where a warp reads
/// several rows at once (fewer than 32 lanes a row) or halves of rows, whose entries then
/// lie together instead of scattered over the matrix. Whole rows at a warp each read one
/// contiguous row either way, and gained nothing from the copy (PERF.md).
pub fn default_row_copies(lanes: u32, half_rows: bool) -> bool {
    lanes < WARP_SIZE || half_rows
}

/// The fraction of the rows in levels (`offsets`: where each starts, and the end) of at
/// least `wide` rows.
fn wide_fraction(offsets: &[u32], wide: usize) -> f64 {
    let rows = offsets.last().copied().unwrap_or(0).max(1);
    let in_wide: u32 = offsets.windows(2).map(|l| l[1] - l[0]).filter(|&n| n as usize >= wide).sum();
    in_wide as f64 / rows as f64
}

/// The mean number of entries a row of `matrix` holds.
fn mean_row<T>(matrix: &SymgsMatrix<T>) -> f64 {
    matrix.csr.nnz as f64 / matrix.rows.max(1) as f64
}

/// The rows of one direction in the order they are handed out, level by level, each level
/// padded to whole warp slots (`32 / lanes_per_row` rows each) so that the rows a warp holds
/// at once never wait on each other. Built on the GPU from the level lists, with the matrix's
/// rows copied in the same order where the device has room for the copy.
struct SweepOrder<T> {
    /// Each row as `[row, first nonzero, diagonal nonzero, end]`, padding as row `u32::MAX`;
    /// the nonzeros the copy's where there is one, else the matrix's.
    entries: CudaSlice<u32>,
    /// The rows' 1 / a_ii in the same order (0 for padding): read in sequence rather than
    /// gathered (one scattered load fewer per row), and no division in the sweep.
    inverse_diagonal: CudaSlice<T>,
    /// The rows' column indices and values in this order: the rows of a warp, and those of
    /// the warps after it, lie together in memory (see [`default_row_copies`]).
    copy: Option<(CudaSlice<u32>, CudaSlice<T>)>,
}

impl<T: Scalar> SweepOrder<T> {
    fn new(
        gpu: &Gpu,
        matrix: &SymgsMatrix<T>,
        levels: &DeviceLevels,
        lanes_per_row: u32,
        copy_rows: bool,
    ) -> Result<Self> {
        let rows_per_slot = WARP_SIZE / lanes_per_row;
        let mut padded_offsets = vec![0u32];
        for level in levels.offsets.windows(2) {
            let padded = (level[1] - level[0]).div_ceil(rows_per_slot) * rows_per_slot;
            let end = padded_offsets.last().unwrap().checked_add(padded).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "{} rows in {} levels, padded to whole warp slots, overflow the sweep order's 32-bit indices",
                    matrix.rows,
                    levels.count()
                ))
            })?;
            padded_offsets.push(end);
        }
        let len = *padded_offsets.last().unwrap() as usize;
        let mut order =
            SweepOrder { entries: gpu.zeros(4 * len)?, inverse_diagonal: gpu.zeros(len)?, copy: None };
        if len == 0 {
            if copy_rows {
                order.copy = Some((gpu.zeros(0)?, gpu.zeros(0)?));
            }
            return Ok(order);
        }
        let mut error = gpu.zeros::<u32>(1)?;
        let mut lengths = gpu.zeros::<u32>(len)?;
        // SAFETY: level lists checked against the matrix (`check_for`): offsets rising from 0
        // to its rows, padded offsets rising from 0 to `len`, entries for `len`; a checked
        // square matrix, rows sorted, each holding its diagonal entry.
        unsafe {
            kernels::order_entries(
                gpu,
                Launch::linear(len, 256),
                len as u32,
                levels.count() as u32,
                &gpu.upload(&levels.offsets)?,
                &gpu.upload(&padded_offsets)?,
                &levels.rows,
                matrix.rows as u32,
                &matrix.csr.row_ptr,
                &matrix.csr.col_idx,
                &matrix.diagonal,
                &mut error,
                &mut order.entries,
                &mut order.inverse_diagonal,
                &mut lengths,
            )?
        };
        if let bad @ 1.. = gpu.download(&error)?[0] {
            return Err(Error::InvalidInput(format!(
                "level lists name row {} of a matrix of {}",
                bad - 1,
                matrix.rows
            )));
        }
        if copy_rows {
            order.copy_rows(gpu, matrix, &lengths)?;
        }
        Ok(order)
    }

    /// Copies the matrix's rows in this order (entries of `lengths` nonzeros each) and points
    /// the entries at the copy; without a copy where the device has no room for one.
    fn copy_rows(&mut self, gpu: &Gpu, matrix: &SymgsMatrix<T>, lengths: &CudaSlice<u32>) -> Result<()> {
        let mut offsets = gpu.download(lengths)?;
        let mut nnz = 0u32;
        for at in &mut offsets {
            let end = nnz.checked_add(*at).ok_or_else(|| {
                Error::InvalidInput("the level lists' rows hold more than 2^32 nonzeros".into())
            })?;
            (*at, nnz) = (nnz, end);
        }
        let copy = gpu.zeros(nnz as usize).and_then(|cols| Ok((cols, gpu.zeros(nnz as usize)?)));
        let Some((mut cols, mut values)) = unless_out_of_memory(copy)? else {
            return Ok(());
        };
        // SAFETY: an entry per offset, each a row of a checked matrix or padding; offsets
        // leaving each row its length.
        unsafe {
            kernels::copy_rows_in_order(
                gpu,
                Launch::warp_per_item(offsets.len(), WARPS_PER_BLOCK),
                offsets.len() as u32,
                &gpu.upload(&offsets)?,
                &matrix.csr.col_idx,
                &matrix.csr.values,
                &mut self.entries,
                &mut cols,
                &mut values,
            )?
        };
        self.copy = Some((cols, values));
        Ok(())
    }

    /// The column indices and values the entries point into: the copy's, or `matrix`'s.
    fn nonzeros<'m>(&'m self, matrix: &'m SymgsMatrix<T>) -> (&'m CudaSlice<u32>, &'m CudaSlice<T>) {
        match &self.copy {
            Some((cols, values)) => (cols, values),
            None => (&matrix.csr.col_idx, &matrix.csr.values),
        }
    }

    /// Entries in the order, padding included.
    fn len(&self) -> u32 {
        self.inverse_diagonal.len() as u32
    }
}

/// The sync-free smoother on one matrix.
pub struct SyncFreeSmoother<'a, T> {
    matrix: &'a SymgsMatrix<T>,
    /// The levels of each direction, for orders built again at another width.
    levels: [DeviceLevels; 2],
    lanes_per_row: u32,
    /// What [`default_lanes_per_row`] chose for this matrix (names show other widths).
    default_lanes: u32,
    /// What [`default_row_copies`] chose for this matrix.
    default_copies: bool,
    /// Whether rows read only the entries they wait on (see [`default_half_rows`]).
    half_rows: bool,
    /// The order rows are handed out in, per direction.
    forward_order: SweepOrder<T>,
    backward_order: SweepOrder<T>,
    tmp: CudaSlice<T>,
    /// Each row's r_i less the sum the half before waited on: where half rows start (see
    /// the kernel).
    starts: CudaSlice<T>,
    /// The half-sweep that finished each row (so the flags are never cleared).
    done: CudaSlice<u32>,
    /// 0, or 1 + the first row whose wait timed out.
    error: CudaSlice<u32>,
    /// The number of the last half-sweep run.
    epoch: u32,
    signal: Signal,
    warps_per_sm: u32,
    timeout_ns: u64,
    backoff_ns: u32,
    /// The first warp slot computed: 0 but in the test of stuck waits.
    first_slot: u32,
}

impl<'a, T: Scalar> SyncFreeSmoother<'a, T> {
    /// With the levels computed on the GPU.
    pub fn new(gpu: &Gpu, matrix: &'a SymgsMatrix<T>) -> Result<Self> {
        let forward = levels_gpu(gpu, matrix, Direction::Forward)?;
        let backward = levels_gpu(gpu, matrix, Direction::Backward)?;
        Self::with_levels(gpu, matrix, forward, backward)
    }

    /// With given levels (e.g. from [`super::levels::levels_cpu`]); they must be `matrix`'s.
    pub fn with_levels(
        gpu: &Gpu,
        matrix: &'a SymgsMatrix<T>,
        forward: DeviceLevels,
        backward: DeviceLevels,
    ) -> Result<Self> {
        forward.check_for(matrix)?;
        backward.check_for(matrix)?;
        let in_flight = (gpu.props().sm_count * FULL_WARPS_PER_SM) as usize;
        let lanes_per_row =
            default_lanes_per_row(mean_row(matrix), wide_fraction(&forward.offsets, in_flight));
        let half_rows = default_half_rows(mean_row(matrix), lanes_per_row);
        let copy_rows = default_row_copies(lanes_per_row, half_rows);
        let (forward_order, backward_order) =
            Self::orders(gpu, matrix, [&forward, &backward], lanes_per_row, copy_rows)?;
        Ok(SyncFreeSmoother {
            matrix,
            levels: [forward, backward],
            lanes_per_row,
            default_lanes: lanes_per_row,
            default_copies: copy_rows,
            half_rows,
            forward_order,
            backward_order,
            tmp: gpu.zeros(matrix.rows)?,
            starts: gpu.zeros(matrix.rows)?,
            done: gpu.zeros(matrix.rows)?,
            error: gpu.zeros(1)?,
            epoch: 0,
            signal: Signal::DoneFlags,
            warps_per_sm: FULL_WARPS_PER_SM,
            timeout_ns: DEFAULT_TIMEOUT_NS,
            backoff_ns: 0,
            first_slot: 0,
        })
    }

    /// Both directions' orders at `lanes_per_row` lanes per row.
    fn orders(
        gpu: &Gpu,
        matrix: &SymgsMatrix<T>,
        [forward, backward]: [&DeviceLevels; 2],
        lanes_per_row: u32,
        copy_rows: bool,
    ) -> Result<(SweepOrder<T>, SweepOrder<T>)> {
        Ok((
            SweepOrder::new(gpu, matrix, forward, lanes_per_row, copy_rows)?,
            SweepOrder::new(gpu, matrix, backward, lanes_per_row, copy_rows)?,
        ))
    }

    /// Gives each row `lanes` lanes (a power of two, 1..=32; default from the row lengths and
    /// levels, [`default_lanes_per_row`]): a warp then holds `32 / lanes` rows of one level at
    /// once. Rows are then whole or halves as [`default_half_rows`] says at that width. Any
    /// width gives the same result.
    pub fn with_lanes_per_row(mut self, gpu: &Gpu, lanes: u32) -> Result<Self> {
        if !lanes.is_power_of_two() || lanes > WARP_SIZE {
            return Err(Error::InvalidInput(format!(
                "lanes per row must be a power of two up to 32, got {lanes}"
            )));
        }
        self.half_rows = default_half_rows(mean_row(self.matrix), lanes);
        if lanes == self.lanes_per_row {
            return Ok(self);
        }
        let copy_rows = self.copies_rows();
        self.rebuild_orders(gpu, lanes, copy_rows)?;
        Ok(self)
    }

    /// Both directions' orders built again at `lanes` lanes a row, with or without copies of
    /// the rows.
    fn rebuild_orders(&mut self, gpu: &Gpu, lanes: u32, copy_rows: bool) -> Result<()> {
        let [forward, backward] = &self.levels;
        (self.forward_order, self.backward_order) =
            Self::orders(gpu, self.matrix, [forward, backward], lanes, copy_rows)?;
        self.lanes_per_row = lanes;
        Ok(())
    }

    /// Keeps each direction's copy of the matrix's rows in its order (`true`) or reads the
    /// matrix in place (`false`: no copies, no memory beyond the matrix); by default as
    /// [`default_row_copies`] says at the default lanes and rows, a choice the other `with_`
    /// settings keep. Copies are made only where the device has room for them. Either gives
    /// the same result.
    pub fn with_row_copies(mut self, gpu: &Gpu, copy: bool) -> Result<Self> {
        if copy != self.copies_rows() {
            self.rebuild_orders(gpu, self.lanes_per_row, copy)?;
        }
        Ok(self)
    }

    /// Whether the sweeps read the copies of the rows in their orders (see
    /// [`Self::with_row_copies`]).
    pub fn copies_rows(&self) -> bool {
        self.forward_order.copy.is_some()
    }

    /// Rows read whole (`false`) or, after a sweep's first half, only the entries they wait
    /// on (`true`), whatever [`default_half_rows`] says. Either gives the same result, to
    /// rounding.
    pub fn with_half_rows(mut self, half_rows: bool) -> Self {
        self.half_rows = half_rows;
        self
    }

    pub fn lanes_per_row(&self) -> u32 {
        self.lanes_per_row
    }

    /// Whether rows read only the entries they wait on (see [`Self::with_half_rows`]).
    pub fn half_rows(&self) -> bool {
        self.half_rows
    }

    pub fn timeout_ns(&self) -> u64 {
        self.timeout_ns
    }

    /// Sets how long one wait may last before the sweep becomes an error.
    pub fn set_timeout_ns(&mut self, ns: u64) {
        self.timeout_ns = ns;
    }

    /// Polls a flag every `ns` nanoseconds (`nanosleep` between polls) instead of spinning:
    /// fewer loads from the warps that wait, at the price of a later wake-up.
    pub fn with_backoff_ns(mut self, ns: u32) -> Self {
        self.backoff_ns = ns;
        self
    }

    /// Signals finished rows by `signal` (default: done flags).
    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.signal = signal;
        self
    }

    /// Runs `warps` warps per SM (rounded down to a multiple of 4, 4..=64, default 64, and at
    /// most what the kernel's registers let an SM hold): fewer warps in flight, fewer polls
    /// competing with the rows being computed.
    pub fn with_warps_per_sm(mut self, warps: u32) -> Self {
        self.warps_per_sm =
            (warps / WARPS_PER_BLOCK * WARPS_PER_BLOCK).clamp(WARPS_PER_BLOCK, FULL_WARPS_PER_SM);
        self
    }

    /// Test hook: starts the warps at warp slot `first` instead of 0, so that the first rows of
    /// the order are never computed and the rows depending on them must time out (how the
    /// tests check that a stuck wait ends in an error, not a hang).
    #[doc(hidden)]
    pub fn start_at_slot(&mut self, first: u32) {
        self.first_slot = first;
    }

    /// The GPU101 report's variant (see [`super::cpu::CpuSymgs::sweep_report_variant`]).
    pub fn sweep_report_variant(&mut self, gpu: &Gpu, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, None, x, false, 1)
    }

    /// `sweeps` symmetric sweeps on A x = r (r None: the report's variant, one sweep), from x
    /// as given or from zero. With half rows, each half keeps r_i less its rows' waited sums
    /// for the next, which reads only the entries it waits on; only a first forward half from
    /// x as given reads whole rows. The report's variant reads whole rows: its halves' right-
    /// hand sides differ.
    fn run(
        &mut self,
        gpu: &Gpu,
        r: Option<&CudaSlice<T>>,
        x: &mut CudaSlice<T>,
        from_zero: bool,
        sweeps: usize,
    ) -> Result<()> {
        self.matrix.check_vectors(r, x)?;
        if self.matrix.rows == 0 || sweeps == 0 {
            return Ok(());
        }
        let signal = match self.signal {
            Signal::DoneFlags => abi::symgs::DONE_FLAGS,
            Signal::Value => abi::symgs::VALUE,
        };
        let m = self.matrix;
        let rows = m.rows as u32;
        let halves = self.half_rows && r.is_some();
        if from_zero && !halves {
            gpu.memset_zeros(x)?;
        }
        // All resident: a warp waits on rows that other warps take by their place in the grid.
        let launch = persistent_launch(gpu, m.rows, self.warps_per_sm).all_resident();
        for sweep in 0..sweeps {
            if self.epoch > u32::MAX - 2 {
                // Flags would wrap around: start again from zeroed flags.
                gpu.memset_zeros(&mut self.done)?;
                self.epoch = 0;
            }
            for direction in [Direction::Forward, Direction::Backward] {
                self.epoch += 1;
                let forward = direction == Direction::Forward;
                let first_half = sweep == 0 && forward;
                // Half rows after the first half, which reads whole rows from x as given and
                // keeps r_i less its waited sums for the next; from zero, half rows throughout.
                let half_rows = halves && (from_zero || !first_half);
                let keep = halves && (forward || sweep + 1 < sweeps);
                let rows_read = match (half_rows, keep) {
                    (true, _) => abi::symgs::HALF_ROWS,
                    (false, true) => abi::symgs::WHOLE_ROWS_KEEPING,
                    (false, false) => abi::symgs::WHOLE_ROWS,
                };
                let (order, rhs, old, new): (
                    &SweepOrder<T>,
                    &CudaSlice<T>,
                    &CudaSlice<T>,
                    &mut CudaSlice<T>,
                ) = match direction {
                    Direction::Forward => (&self.forward_order, rhs_of(r, x), x, &mut self.tmp),
                    Direction::Backward => (&self.backward_order, rhs_of(r, &self.tmp), &self.tmp, x),
                };
                let (col_idx, values) = order.nonzeros(m);
                // SAFETY (both launches): a checked square matrix, `order` a dependency order
                // of its `rows` rows with their extents (whole, or the entries they wait on)
                // and their inverse diagonal; flags and vectors of `rows`.
                unsafe {
                    if self.signal == Signal::Value {
                        kernels::mark_unset(gpu, Launch::linear(m.rows, 256), rows, new)?;
                    }
                    kernels::sweep(
                        gpu,
                        launch,
                        signal,
                        rows_read,
                        self.lanes_per_row,
                        order.len(),
                        &order.entries,
                        self.first_slot,
                        forward_flag(direction),
                        self.epoch,
                        self.timeout_ns,
                        self.backoff_ns,
                        &mut self.done,
                        &mut self.error,
                        col_idx,
                        values,
                        &order.inverse_diagonal,
                        rhs,
                        old,
                        (from_zero && first_half) as u32,
                        keep as u32,
                        &mut self.starts,
                        new,
                    )?;
                }
            }
        }
        let stuck = gpu.download(&self.error)?[0];
        if stuck != 0 {
            gpu.memset_zeros(&mut self.error)?;
            gpu.memset_zeros(&mut self.done)?;
            self.epoch = 0;
            return Err(timeout_error("sync-free sweep", stuck - 1, self.timeout_ns));
        }
        Ok(())
    }
}

impl<T: Scalar> Smoother<T> for SyncFreeSmoother<'_, T> {
    fn name(&self) -> String {
        let mut name = match self.signal {
            Signal::DoneFlags => "sync-free".to_string(),
            Signal::Value => "sync-free-values".to_string(),
        };
        if self.lanes_per_row != self.default_lanes {
            name += &format!("-{}lanes", self.lanes_per_row);
        }
        if self.half_rows != default_half_rows(mean_row(self.matrix), self.lanes_per_row) {
            name += if self.half_rows { "-half-rows" } else { "-whole-rows" };
        }
        if self.warps_per_sm != FULL_WARPS_PER_SM {
            name += &format!("-{}warps-per-sm", self.warps_per_sm);
        }
        if self.copies_rows() != self.default_copies {
            name += if self.copies_rows() { "-row-copies" } else { "-no-row-copies" };
        }
        if self.backoff_ns != 0 {
            name += &format!("-backoff{}ns", self.backoff_ns);
        }
        name
    }

    fn exact_order(&self) -> bool {
        true
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, Some(r), x, false, 1)
    }

    fn sweeps(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>, count: usize) -> Result<()> {
        self.run(gpu, Some(r), x, false, count)
    }

    fn sweep_from_zero(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, Some(r), x, true, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::{default_half_rows, default_lanes_per_row, default_row_copies};

    #[test]
    fn lanes_follow_row_length_in_wide_levels_only() {
        // Thin levels: a warp per row whatever the length.
        assert_eq!(default_lanes_per_row(7.0, 0.0), 32);
        assert_eq!(default_lanes_per_row(27.0, 0.49), 32);
        // Wide levels: 8 lanes on short rows, 16 up to 28 nonzeros, then a warp.
        assert_eq!(default_lanes_per_row(7.0, 1.0), 8);
        assert_eq!(default_lanes_per_row(11.0, 0.9), 8);
        assert_eq!(default_lanes_per_row(13.0, 0.9), 16);
        assert_eq!(default_lanes_per_row(27.0, 0.62), 16);
        assert_eq!(default_lanes_per_row(32.0, 0.9), 32);
    }

    #[test]
    fn half_rows_where_they_take_a_round_of_loads_off() {
        // 27 entries: two rounds at 16 lanes, one as halves (13); one round at 32 either way.
        assert!(default_half_rows(27.0, 16));
        assert!(!default_half_rows(27.0, 32));
        // Long rows at a warp (78 -> 38.5: three rounds to two); short rows at 8 lanes.
        assert!(default_half_rows(78.0, 32));
        assert!(!default_half_rows(7.0, 8));
        assert!(default_half_rows(7.0, 4));
        assert!(!default_half_rows(9.0, 16));
    }

    #[test]
    fn rows_copied_where_a_warp_reads_several_rows_or_halves() {
        assert!(default_row_copies(8, false));
        assert!(default_row_copies(32, true));
        assert!(!default_row_copies(32, false));
    }
}
