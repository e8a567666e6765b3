//! Shared by the GPU benchmarks.

use std::time::Duration;

use criterion::Criterion;

/// Criterion settings for the GPU benchmarks: a short warm-up and measurement, because the
/// records' medians come from our own CUDA-event timing; no plots.
pub fn gpu_criterion() -> Criterion {
    Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(50))
        .measurement_time(Duration::from_millis(300))
        .sample_size(10)
        .without_plots()
}
