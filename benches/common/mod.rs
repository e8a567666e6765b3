//! What the GPU benchmarks share: one [`Session`] per executable.

use std::time::Duration;

use criterion::Criterion;
use rgla::Gpu;

/// Criterion, the GPU (None: the GPU benchmarks are skipped, and the run says why), and the
/// results that were wrong: never recorded, listed at the end, and the run fails.
pub struct Session {
    pub criterion: Criterion,
    pub gpu: Option<Gpu>,
    pub failures: Vec<String>,
}

impl Session {
    /// Criterion settings for the GPU benchmarks: a short warm-up and measurement, because the
    /// records' medians come from our own CUDA-event timing; no plots.
    pub fn start() -> Session {
        let criterion = Criterion::default()
            .configure_from_args()
            .warm_up_time(Duration::from_millis(50))
            .measurement_time(Duration::from_millis(300))
            .sample_size(10)
            .without_plots();
        Session { criterion, gpu: rgla::bench::gpu_or_skip(), failures: Vec::new() }
    }

    /// Criterion's summary, then the wrong results, if any, with a failing exit status.
    pub fn finish(self) {
        self.criterion.final_summary();
        if !self.failures.is_empty() {
            eprintln!("WRONG RESULTS (not recorded):\n  {}", self.failures.join("\n  "));
            std::process::exit(1);
        }
    }
}
