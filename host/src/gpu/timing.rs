//! Timing with CUDA events: warm-up runs, then the median of many timed runs.

use crate::error::{Error, Result};
use crate::gpu::{Gpu, Launch};

/// How long [`Gpu::time_once`] holds the stream before the timed work: longer than the host
/// takes to queue one call of a kernel or a vendor routine (microseconds to tens of them).
pub const HOLD_NS: u64 = 100_000;

/// Timings of repeated runs, in milliseconds.
#[derive(Clone, Debug)]
pub struct Timing {
    pub runs_ms: Vec<f64>,
}

impl Timing {
    pub fn median_ms(&self) -> f64 {
        let mut sorted = self.runs_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        if n == 0 {
            return f64::NAN;
        }
        if n % 2 == 1 { sorted[n / 2] } else { 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]) }
    }

    pub fn min_ms(&self) -> f64 {
        self.runs_ms.iter().copied().fold(f64::INFINITY, f64::min)
    }
}

impl Gpu {
    /// Time of one run of `work` (the work it queues on this GPU's stream), by CUDA events.
    ///
    /// The stream is first held busy for [`HOLD_NS`], so that the work is queued before the GPU
    /// reaches the start event: the time is the GPU's from its first command to its last, not
    /// the host's time to submit them. Work that submits for longer than that (or waits on the
    /// GPU itself) still counts its host time beyond it.
    pub fn time_once(&self, work: impl FnOnce() -> Result<()>) -> Result<f64> {
        // cudarc's default events cannot time: ask for timing ones.
        let timed = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.context().new_event(timed).map_err(Error::driver("event creation"))?;
        let stop = self.context().new_event(timed).map_err(Error::driver("event creation"))?;
        // SAFETY: a kernel of one thread that reads and writes no memory.
        unsafe { crate::kernels::timing::hold(self, Launch::linear(1, 1), HOLD_NS)? };
        start.record(self.stream()).map_err(Error::driver("event record"))?;
        work()?;
        stop.record(self.stream()).map_err(Error::driver("event record"))?;
        self.synchronize()?;
        Ok(start.elapsed_ms(&stop).map_err(Error::driver("event timing"))? as f64)
    }

    /// `warmup` untimed runs, then `runs` timed runs of `work`.
    pub fn time(&self, warmup: usize, runs: usize, mut work: impl FnMut() -> Result<()>) -> Result<Timing> {
        for _ in 0..warmup {
            work()?;
        }
        self.synchronize()?;
        let runs_ms = (0..runs).map(|_| self.time_once(&mut work)).collect::<Result<_>>()?;
        Ok(Timing { runs_ms })
    }
}
