//! The sync-free smoother: one launch per sweep direction. Blocks take rows from an atomic
//! ticket, four at a time (a warp each, or two rows a warp in wide levels), and wait on the
//! rows they depend on, so a sweep costs the longest dependency chain instead of a launch per
//! level. A finished row signals through a done flag (release store; waiters poll, then
//! acquire), as specified, or through its value itself ([`Signal::Value`]: one load per
//! hand-over, no fence). Waits are bounded: one that lasts [`SyncFreeSmoother::timeout_ns`]
//! makes the sweep an error, never a hang (see `kernels/src/symgs/sync_free.rs` for why no
//! valid run can deadlock).
//!
//! The rows are handed out level by level (the order of the level analysis), not in row
//! order: in row order the rows in flight (a few thousand consecutive ones) hold the stencil's
//! chains of neighbours along x, and the sweep crawled (400 ms a sweep on the 27-point stencil
//! 128^3 on an H100, against 7 ms on a random matrix of the same size); in level order the
//! rows in flight are whole levels of independent rows.
//!
//! Measured on an H100 at 989618d, f64, ms per symmetric sweep (stencil27 128^3 / random SPD
//! 2 M rows): done flags 4.43 / 3.91 (16 warps per SM: 7.2 / 7.4), value as the signal 2.42 /
//! 2.11 (a row per warp: 2.42 / 2.30; 16 warps per SM: 5.1 / 5.2; 8: 9.5 / 9.8); cuSPARSE's
//! SpSV-based sweep 4.12 / 3.18 (PERF.md).

use super::levels::{DeviceLevels, levels_gpu};
use super::{Direction, Smoother, SymgsMatrix, forward_flag, rhs_of};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch, PushKernelArg};

/// How long one wait may last before the sweep is abandoned: far beyond any valid wait (a
/// warp waits at most for the rows that the other running warps hold, microseconds each).
pub const DEFAULT_TIMEOUT_NS: u64 = 2_000_000_000;

/// Lanes per row of the sweep kernels: a warp per row (see `kernels/src/symgs/sync_free.rs`
/// for why it is passed at all).
const LANES_PER_ROW: u32 = 32;

/// Warps per block of the persistent launches: a sweep's block takes one ticket for all its
/// warps, and the one ticket counter serves every block: fewer atomics on the counter, against
/// more warps held up at each block's barrier. Measured on an H100 (ms per sweep, stencil /
/// random SPD of the benchmark), at 95d3f95: 2 warps 3.08 / 3.17, 4 warps 2.44-2.46 / 2.53, 8
/// warps 2.45 / 2.44, 16 warps 2.49 / 2.47; since batches halve the tickets of the wide levels
/// (see [`TicketPlan`]): 4 warps 2.43 / 2.20, 8 warps 2.47 / 2.21, 16 warps 2.24 on random.
const WARPS_PER_BLOCK: u32 = 4;

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

/// Rows per warp in a block ticket over the wide levels (see [`TicketPlan`]). Measured on an
/// H100 at the default width (ms per symmetric sweep, random SPD of 2 M rows, one run): 1
/// row 2.32, 2 rows 2.20, 3 rows 2.20, 4 rows 2.33, 8 rows 2.98 (with 4 and 8, levels of at
/// least 20 000 rows: 2.24 and 2.43).
const WIDE_BATCH: u32 = 2;

/// Which block tickets hand each warp a batch of consecutive rows instead of one: tickets
/// `wide_first .. wide_first + wide_tickets` (the kernel's `TicketPlan`). A batch saves the
/// ticket and the block barrier before each row but its second; it only pays where the rows
/// do not wait on each other, so the plan covers the longest run of levels at least as wide
/// as the warps in flight (the random matrix's first levels: 5% faster, 2.32 against 2.20 ms
/// a sweep on an H100). The 27-point stencil has no such run (at most 4096 rows a level).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TicketPlan {
    wide_first: u32,
    wide_tickets: u32,
    batch: u32,
}

impl TicketPlan {
    /// Batches of `batch` rows per warp over the longest run of levels (`offsets`) of at
    /// least `wide_rows` rows each, in whole tickets.
    fn new(offsets: &[u32], wide_rows: usize, batch: u32) -> Self {
        let (mut run, mut run_start) = ((0, 0), None);
        for (level, bounds) in offsets.windows(2).enumerate() {
            if ((bounds[1] - bounds[0]) as usize) < wide_rows {
                run_start = None;
                continue;
            }
            let start = offsets[*run_start.get_or_insert(level)];
            if bounds[1] - start > run.1 - run.0 {
                run = (start, bounds[1]);
            }
        }
        // A single ticket is a row per warp (LANES_PER_ROW = 32).
        let wide_first = run.0.div_ceil(WARPS_PER_BLOCK);
        let wide_tickets = run.1.saturating_sub(wide_first * WARPS_PER_BLOCK) / (WARPS_PER_BLOCK * batch);
        TicketPlan { wide_first, wide_tickets, batch }
    }
}

/// The rows of one direction in the order they are handed out, level by level.
struct SweepOrder<T> {
    /// Each row as `[row, first nonzero, end nonzero, 0]`.
    entries: CudaSlice<u32>,
    /// The rows' 1 / a_ii in the same order: read in sequence rather than gathered (one
    /// scattered load fewer per row; the done-flag sweep of the random matrix 5% faster), and
    /// no division in the kernel.
    inverse_diagonal: CudaSlice<T>,
    /// Where each level starts in the order, and the end.
    level_offsets: Vec<u32>,
    /// Which tickets hand out batches (set by [`SyncFreeSmoother::replan`]).
    plan: TicketPlan,
}

impl<T: Scalar> SweepOrder<T> {
    /// `row_ptr` and `diagonal`: the matrix's, on the host.
    fn new(gpu: &Gpu, row_ptr: &[u32], diagonal: &[T], levels: &DeviceLevels) -> Result<Self> {
        let rows = row_ptr.len().saturating_sub(1);
        let mut entries = Vec::with_capacity(4 * rows);
        let mut inverse = Vec::with_capacity(rows);
        for row in gpu.download(&levels.rows)? {
            let r = row as usize;
            if r >= rows {
                return Err(Error::InvalidInput(format!("level lists name row {row} of a matrix of {rows}")));
            }
            entries.extend([row, row_ptr[r], row_ptr[r + 1], 0]);
            inverse.push(T::ONE / diagonal[r]);
        }
        Ok(SweepOrder {
            entries: gpu.upload(&entries)?,
            inverse_diagonal: gpu.upload(&inverse)?,
            level_offsets: levels.offsets.clone(),
            plan: TicketPlan { wide_first: 0, wide_tickets: 0, batch: 1 }, // no batches
        })
    }
}

/// The sync-free smoother on one matrix.
pub struct SyncFreeSmoother<'a, T> {
    matrix: &'a SymgsMatrix<T>,
    /// The order rows are handed out in, per direction.
    forward_order: SweepOrder<T>,
    backward_order: SweepOrder<T>,
    tmp: CudaSlice<T>,
    /// The half-sweep that finished each row (so the flags are never cleared).
    done: CudaSlice<u32>,
    /// One ticket counter per direction, zeroed before each sweep.
    tickets: CudaSlice<u32>,
    /// 0, or 1 + the first row whose wait timed out.
    error: CudaSlice<u32>,
    /// The number of the last half-sweep run.
    epoch: u32,
    signal: Signal,
    warps_per_sm: u32,
    timeout_ns: u64,
    backoff_ns: u32,
    /// Batches: levels of at least this many rows, rows per warp; None: the default.
    batches: Option<(usize, u32)>,
    sm_count: u32,
    first_ticket: u32,
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
        for levels in [&forward, &backward] {
            if levels.rows.len() != matrix.rows {
                return Err(Error::InvalidInput(format!(
                    "level lists of {} rows for a matrix of {}",
                    levels.rows.len(),
                    matrix.rows
                )));
            }
        }
        let (row_ptr, diagonal) = (gpu.download(&matrix.csr.row_ptr)?, gpu.download(&matrix.diagonal)?);
        let mut smoother = SyncFreeSmoother {
            matrix,
            forward_order: SweepOrder::new(gpu, &row_ptr, &diagonal, &forward)?,
            backward_order: SweepOrder::new(gpu, &row_ptr, &diagonal, &backward)?,
            tmp: gpu.zeros(matrix.rows)?,
            done: gpu.zeros(matrix.rows)?,
            tickets: gpu.zeros(2)?,
            error: gpu.zeros(1)?,
            epoch: 0,
            signal: Signal::DoneFlags,
            warps_per_sm: FULL_WARPS_PER_SM,
            timeout_ns: DEFAULT_TIMEOUT_NS,
            backoff_ns: 0,
            batches: None,
            sm_count: gpu.props().sm_count,
            first_ticket: 0,
        };
        smoother.replan();
        Ok(smoother)
    }

    /// Sets each direction's ticket plan from the batch setting and the warps in flight.
    fn replan(&mut self) {
        let in_flight = (self.sm_count * self.warps_per_sm) as usize;
        let (wide_rows, batch) = self.batches.unwrap_or((in_flight, WIDE_BATCH));
        for order in [&mut self.forward_order, &mut self.backward_order] {
            order.plan = TicketPlan::new(&order.level_offsets, wide_rows, batch);
        }
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

    /// Hands each warp `batch` consecutive rows per ticket over the longest run of levels of
    /// at least `wide_rows` rows (default: [`WIDE_BATCH`] rows, levels at least as wide as the
    /// warps in flight); `batch` 1 turns batches off. Any setting gives the same result.
    pub fn with_batches(mut self, wide_rows: usize, batch: u32) -> Self {
        self.batches = Some((wide_rows, batch.max(1)));
        self.replan();
        self
    }

    /// Signals finished rows by `signal` (default: done flags).
    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.signal = signal;
        self
    }

    /// Runs `warps` warps per SM (rounded down to a multiple of 4, 4..=64, default 64): fewer
    /// warps in flight, fewer polls competing with the rows being computed.
    pub fn with_warps_per_sm(mut self, warps: u32) -> Self {
        self.warps_per_sm =
            (warps / WARPS_PER_BLOCK * WARPS_PER_BLOCK).clamp(WARPS_PER_BLOCK, FULL_WARPS_PER_SM);
        self.replan();
        self
    }

    /// Test hook: hands out tickets from `first` instead of 0, so that the first rows of the
    /// order (4 per ticket) are never computed and the rows depending on them must time out
    /// (how the tests check that a stuck wait ends in an error, not a hang).
    #[doc(hidden)]
    pub fn start_tickets_at(&mut self, first: u32) {
        self.first_ticket = first;
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
        if self.epoch > u32::MAX - 2 {
            // Flags would wrap around: start again from zeroed flags.
            gpu.memset_zeros(&mut self.done)?;
            self.epoch = 0;
        }
        if self.first_ticket == 0 {
            gpu.memset_zeros(&mut self.tickets)?;
        } else {
            gpu.upload_into(&[self.first_ticket; 2], &mut self.tickets)?;
        }
        let kernel = match self.signal {
            Signal::DoneFlags => ("symgs_relax_sync_free_f32", "symgs_relax_sync_free_f64"),
            Signal::Value => ("symgs_relax_sync_free_values_f32", "symgs_relax_sync_free_values_f64"),
        };
        let kernel = gpu.kernel(T::pick(kernel))?;
        let mark_unset = gpu.kernel(T::pick(("symgs_mark_unset_f32", "symgs_mark_unset_f64")))?;
        let m = self.matrix;
        let rows = m.rows as u32;
        let launch = persistent_launch(gpu, m.rows, self.warps_per_sm).shared(16);
        for (k, direction) in [Direction::Forward, Direction::Backward].into_iter().enumerate() {
            self.epoch += 1;
            let forward = forward_flag(direction);
            let ticket = self.tickets.slice(k..k + 1);
            let (order, rhs, old, new): (&SweepOrder<T>, &CudaSlice<T>, &CudaSlice<T>, &mut CudaSlice<T>) =
                match direction {
                    Direction::Forward => (&self.forward_order, rhs_of(r, x), x, &mut self.tmp),
                    Direction::Backward => (&self.backward_order, rhs_of(r, &self.tmp), &self.tmp, x),
                };
            let plan = &order.plan;
            // SAFETY (every launch): the arguments of the entry points named, on a checked
            // square matrix, `order` a dependency order of its `rows` rows with their extents
            // and inverse diagonal; flags and vectors of `rows`; the 4 bytes of shared memory
            // the sweep kernels use.
            unsafe {
                match self.signal {
                    // symgs_relax_sync_free_T(lanes_per_row, order_len, order, wide_first, wide_tickets,
                    // batch, forward, epoch, timeout_ns, backoff_ns, ticket, done, error, col_idx,
                    // values, inverse_diagonal, rhs, old, new)
                    Signal::DoneFlags => gpu.launch(&kernel, launch, |a| {
                        a.arg(&LANES_PER_ROW).arg(&rows).arg(&order.entries);
                        a.arg(&plan.wide_first)
                            .arg(&plan.wide_tickets)
                            .arg(&plan.batch)
                            .arg(&forward)
                            .arg(&self.epoch);
                        a.arg(&self.timeout_ns).arg(&self.backoff_ns);
                        a.arg(&ticket).arg(&self.done).arg(&self.error);
                        a.arg(&m.csr.col_idx).arg(&m.csr.values).arg(&order.inverse_diagonal);
                        a.arg(rhs).arg(old).arg(new);
                    })?,
                    // symgs_mark_unset_T(n, v), then symgs_relax_sync_free_values_T(lanes_per_row, order_len,
                    // order, wide_first, wide_tickets, batch, forward, timeout_ns, backoff_ns, ticket,
                    // error, col_idx, values, inverse_diagonal, rhs, old, new)
                    Signal::Value => {
                        gpu.launch(&mark_unset, Launch::linear(m.rows, 256), |a| {
                            a.arg(&rows).arg(&mut *new);
                        })?;
                        gpu.launch(&kernel, launch, |a| {
                            a.arg(&LANES_PER_ROW).arg(&rows).arg(&order.entries);
                            a.arg(&plan.wide_first).arg(&plan.wide_tickets).arg(&plan.batch).arg(&forward);
                            a.arg(&self.timeout_ns).arg(&self.backoff_ns);
                            a.arg(&ticket).arg(&self.error);
                            a.arg(&m.csr.col_idx).arg(&m.csr.values).arg(&order.inverse_diagonal);
                            a.arg(rhs).arg(old).arg(new);
                        })?
                    }
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
        if self.warps_per_sm != FULL_WARPS_PER_SM {
            name += &format!("-{}warps-per-sm", self.warps_per_sm);
        }
        if self.backoff_ns != 0 {
            name += &format!("-backoff{}ns", self.backoff_ns);
        }
        match self.batches {
            Some((_, 1)) => name += "-row-per-warp",
            Some((wide_rows, batch)) => name += &format!("-batch{batch}-from{wide_rows}rows"),
            None => {}
        }
        name
    }

    fn exact_order(&self) -> bool {
        true
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, Some(r), x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows a plan hands out in batches.
    fn batched_rows(plan: TicketPlan) -> (u32, u32) {
        let start = plan.wide_first * WARPS_PER_BLOCK;
        (start, start + plan.wide_tickets * WARPS_PER_BLOCK * plan.batch)
    }

    #[test]
    fn ticket_plan_covers_the_longest_run_of_wide_levels_in_whole_tickets() {
        // Levels of 1, 9, 20, 20, 2, 8 rows: the run of levels of at least 10 rows is 10..50.
        let offsets = [0, 1, 10, 30, 50, 52, 60];
        for batch in [1, 2, 3] {
            let plan = TicketPlan::new(&offsets, 10, batch);
            assert_eq!(plan.batch, batch);
            // Inside the run, short of it at each end by less than a ticket.
            let (start, end) = batched_rows(plan);
            assert!((10..10 + WARPS_PER_BLOCK).contains(&start), "{plan:?}");
            assert!(end <= 50 && 50 - end < WARPS_PER_BLOCK * batch, "{plan:?}");
        }
        // Every level wide: the whole order.
        let (start, end) = batched_rows(TicketPlan::new(&offsets, 1, 1));
        assert_eq!((start, end), (0, 60 / WARPS_PER_BLOCK * WARPS_PER_BLOCK));
        // No level wide enough, or no levels: no batches.
        assert_eq!(TicketPlan::new(&offsets, 21, 2).wide_tickets, 0);
        assert_eq!(TicketPlan::new(&[0], 1, 2).wide_tickets, 0);
    }
}
