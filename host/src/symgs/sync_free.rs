//! The sync-free smoother: one launch per sweep direction. Blocks take rows from an atomic
//! ticket, eight at a time (a warp each), and wait on the rows they depend on, so a sweep costs
//! the longest dependency chain instead of a launch per level. A finished row signals through
//! a done flag (release store; waiters poll, then acquire), as specified, or through its value
//! itself ([`Signal::Value`]: one load per hand-over, no fence). Waits are bounded: one
//! that lasts [`SyncFreeSmoother::timeout_ns`] makes the sweep an error, never a hang (see
//! `kernels/src/symgs/sync_free.rs` for why no valid run can deadlock).
//!
//! The rows are handed out level by level (the order of the level analysis), not in row
//! order: in row order the rows in flight (a few thousand consecutive ones) hold the stencil's
//! chains of neighbours along x, and the sweep crawled (400 ms a sweep on the 27-point stencil
//! 128^3 on an H100, against 7 ms on a random matrix of the same size); in level order the
//! rows in flight are whole levels of independent rows.
//!
//! Measured on an H100 at 95d3f95, f64, ms per symmetric sweep (stencil27 128^3 / random SPD
//! 2 M rows): done flags 4.43 / 4.29 (16 warps per SM: 7.2 / 8.6), value as the signal 2.45 /
//! 2.39 (16 warps per SM: 5.4 / 6.3; 8: 10.4 / 11.9); cuSPARSE's SpSV-based sweep 4.14 / 3.19.

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
/// warps, and the one ticket counter serves every block. Measured on an H100 (ms per sweep,
/// stencil / random SPD of the benchmark): 2 warps 3.08 / 3.17, 4 warps 2.44-2.46 / 2.53, 8
/// warps 2.45 / 2.44, 16 warps 2.49 / 2.47: fewer atomics on the counter, against more warps
/// held up at each block's barrier.
const WARPS_PER_BLOCK: u32 = 8;

/// Warps per SM of a persistent launch by default: the H100's 64 resident warps per SM.
pub const FULL_WARPS_PER_SM: u32 = 64;

/// A grid of `warps_per_sm` warps per SM (a multiple of 8) in blocks of 8, or about one warp
/// per row when there are fewer rows.
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

/// The rows of `levels` in order, each as `[row, first nonzero, end nonzero, 0]` (`row_ptr`:
/// the matrix's, on the host).
fn order_entries(gpu: &Gpu, row_ptr: &[u32], levels: &DeviceLevels) -> Result<CudaSlice<u32>> {
    let rows = row_ptr.len().saturating_sub(1);
    let mut entries = Vec::with_capacity(4 * rows);
    for row in gpu.download(&levels.rows)? {
        let r = row as usize;
        if r >= rows {
            return Err(Error::InvalidInput(format!("level lists name row {row} of a matrix of {rows}")));
        }
        entries.extend([row, row_ptr[r], row_ptr[r + 1], 0]);
    }
    gpu.upload(&entries)
}

/// The sync-free smoother on one matrix.
pub struct SyncFreeSmoother<'a, T> {
    matrix: &'a SymgsMatrix<T>,
    /// The order rows are handed out in, per direction, level by level: each entry the row,
    /// its first and its end nonzero, and padding (see `kernels/src/symgs/sync_free.rs`).
    forward_order: CudaSlice<u32>,
    backward_order: CudaSlice<u32>,
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
        let row_ptr = gpu.download(&matrix.csr.row_ptr)?;
        Ok(SyncFreeSmoother {
            matrix,
            forward_order: order_entries(gpu, &row_ptr, &forward)?,
            backward_order: order_entries(gpu, &row_ptr, &backward)?,
            tmp: gpu.zeros(matrix.rows)?,
            done: gpu.zeros(matrix.rows)?,
            tickets: gpu.zeros(2)?,
            error: gpu.zeros(1)?,
            epoch: 0,
            signal: Signal::DoneFlags,
            warps_per_sm: FULL_WARPS_PER_SM,
            timeout_ns: DEFAULT_TIMEOUT_NS,
            backoff_ns: 0,
            first_ticket: 0,
        })
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

    /// Runs `warps` warps per SM (rounded down to a multiple of 8, 8..=64, default 64): fewer
    /// warps in flight, fewer polls competing with the rows being computed.
    pub fn with_warps_per_sm(mut self, warps: u32) -> Self {
        self.warps_per_sm =
            (warps / WARPS_PER_BLOCK * WARPS_PER_BLOCK).clamp(WARPS_PER_BLOCK, FULL_WARPS_PER_SM);
        self
    }

    /// Test hook: hands out tickets from `first` instead of 0, so that the first rows of the
    /// order (8 per ticket) are never computed and the rows depending on them must time out
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
            let (order, rhs, old, new): (&CudaSlice<u32>, &CudaSlice<T>, &CudaSlice<T>, &mut CudaSlice<T>) =
                match direction {
                    Direction::Forward => (&self.forward_order, rhs_of(r, x), x, &mut self.tmp),
                    Direction::Backward => (&self.backward_order, rhs_of(r, &self.tmp), &self.tmp, x),
                };
            // SAFETY (every launch): the arguments of the entry points named, on a checked
            // square matrix, `order` a dependency order of its `rows` rows with their extents;
            // flags and vectors of `rows`; the 4 bytes of shared memory the sweep kernels use.
            unsafe {
                match self.signal {
                    // symgs_relax_sync_free_T(lanes_per_row, order_len, order, forward, epoch, timeout_ns,
                    // backoff_ns, ticket, done, error, col_idx, values, diagonal, rhs, old, new)
                    Signal::DoneFlags => gpu.launch(&kernel, launch, |a| {
                        a.arg(&LANES_PER_ROW).arg(&rows).arg(order).arg(&forward).arg(&self.epoch);
                        a.arg(&self.timeout_ns).arg(&self.backoff_ns);
                        a.arg(&ticket).arg(&self.done).arg(&self.error);
                        a.arg(&m.csr.col_idx).arg(&m.csr.values).arg(&m.diagonal);
                        a.arg(rhs).arg(old).arg(new);
                    })?,
                    // symgs_mark_unset_T(n, v), then symgs_relax_sync_free_values_T(lanes_per_row, order_len,
                    // order, forward, timeout_ns, backoff_ns, ticket, error, col_idx, values,
                    // diagonal, rhs, old, new)
                    Signal::Value => {
                        gpu.launch(&mark_unset, Launch::linear(m.rows, 256), |a| {
                            a.arg(&rows).arg(&mut *new);
                        })?;
                        gpu.launch(&kernel, launch, |a| {
                            a.arg(&LANES_PER_ROW).arg(&rows).arg(order).arg(&forward);
                            a.arg(&self.timeout_ns).arg(&self.backoff_ns);
                            a.arg(&ticket).arg(&self.error);
                            a.arg(&m.csr.col_idx).arg(&m.csr.values).arg(&m.diagonal);
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
        name
    }

    fn exact_order(&self) -> bool {
        true
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, Some(r), x)
    }
}
