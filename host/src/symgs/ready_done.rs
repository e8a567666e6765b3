//! The GPU101 report's algorithm, faithfully: for each sweep direction the host clears the
//! done flags, then repeats `ready` (the report's `fready`/`bready`: flag the rows whose
//! earlier-updated columns are all done) and `relax_ready` (`fdo`/`bdo`: compute the flagged
//! rows out of place, mark them done, count them) until the count, read back after every
//! pass, reaches the number of rows. Forward x -> tmp, backward tmp -> x, as in the report.
//!
//! Grid: a thread per row for `ready` (as the report), a warp per row for `relax_ready` (the
//! report launched a block of up to 1024 threads per row: a warp per row keeps the same grid
//! over all rows at a fraction of the idle threads). Every pass still covers every row and
//! ends with a read-back, which is what makes this the slow baseline: passes = the number of
//! dependency levels, twice per sweep: slower than the sequential CPU sweep, as in the
//! report (PERF.md).

use super::{Direction, Smoother, SymgsMatrix, forward_flag, rhs_of};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::symgs::ready_done as kernels;

/// The report's flag arrays and its counter of done rows.
struct Flags {
    ready: CudaSlice<u32>,
    done: CudaSlice<u32>,
    done_count: CudaSlice<u32>,
}

/// The ready/done-flag smoother on one matrix.
pub struct ReadyDoneSmoother<'a, T> {
    matrix: &'a SymgsMatrix<T>,
    tmp: CudaSlice<T>,
    flags: Flags,
    passes: usize,
}

impl<'a, T: Scalar> ReadyDoneSmoother<'a, T> {
    pub fn new(gpu: &Gpu, matrix: &'a SymgsMatrix<T>) -> Result<Self> {
        let rows = matrix.rows;
        Ok(ReadyDoneSmoother {
            matrix,
            tmp: gpu.zeros(rows)?,
            flags: Flags { ready: gpu.zeros(rows)?, done: gpu.zeros(rows)?, done_count: gpu.zeros(1)? },
            passes: 0,
        })
    }

    /// (ready, relax) passes of the last sweep, both directions together.
    pub fn passes(&self) -> usize {
        self.passes
    }

    /// The report's own sweep: each half-sweep's right-hand side is x as it stands when the
    /// half-sweep starts (see [`super::cpu::CpuSymgs::sweep_report_variant`]).
    pub fn sweep_report_variant(&mut self, gpu: &Gpu, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, None, x)
    }

    fn run(&mut self, gpu: &Gpu, r: Option<&CudaSlice<T>>, x: &mut CudaSlice<T>) -> Result<()> {
        self.matrix.check_vectors(r, x)?;
        if self.matrix.rows == 0 {
            return Ok(());
        }
        let m = self.matrix;
        let forward =
            half_sweep(gpu, m, &mut self.flags, Direction::Forward, rhs_of(r, x), x, &mut self.tmp)?;
        let backward =
            half_sweep(gpu, m, &mut self.flags, Direction::Backward, rhs_of(r, &self.tmp), &self.tmp, x)?;
        self.passes = forward + backward;
        Ok(())
    }
}

impl<T: Scalar> Smoother<T> for ReadyDoneSmoother<'_, T> {
    fn name(&self) -> String {
        "gpu101-ready-done".into()
    }

    fn exact_order(&self) -> bool {
        true
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, Some(r), x)
    }
}

/// One direction: the report's host loop. Returns the number of passes.
fn half_sweep<T: Scalar>(
    gpu: &Gpu,
    m: &SymgsMatrix<T>,
    flags: &mut Flags,
    direction: Direction,
    rhs: &CudaSlice<T>,
    old: &CudaSlice<T>,
    new: &mut CudaSlice<T>,
) -> Result<usize> {
    let rows = m.rows as u32;
    let forward = forward_flag(direction);
    gpu.memset_zeros(&mut flags.done)?;
    gpu.memset_zeros(&mut flags.done_count)?;
    let (mut passes, mut done_before) = (0, 0);
    loop {
        let (row_ptr, col_idx, values) = (&m.csr.row_ptr, &m.csr.col_idx, &m.csr.values);
        // SAFETY: a checked square matrix, vectors and flags of `rows`.
        unsafe {
            let launch = Launch::linear(m.rows, 256);
            kernels::ready(gpu, launch, rows, forward, row_ptr, col_idx, &flags.done, &mut flags.ready)?;
            kernels::relax_ready(
                gpu,
                Launch::warp_per_item(m.rows, 4),
                rows,
                forward,
                row_ptr,
                col_idx,
                values,
                &m.diagonal,
                rhs,
                old,
                new,
                &flags.ready,
                &mut flags.done,
                &mut flags.done_count,
            )?;
        }
        passes += 1;
        let done = gpu.download(&flags.done_count)?[0];
        if done >= rows {
            return Ok(passes);
        }
        if done == done_before {
            // Cannot happen on a valid matrix: the first row not done always has its
            // dependencies done. Stop rather than loop forever.
            return Err(Error::Library {
                library: "SymGS",
                what: "ready/done sweep",
                message: format!("no row became ready in pass {passes} ({done} of {rows} done)"),
            });
        }
        done_before = done;
    }
}
