//! What timing with CUDA events needs on the device.

use crate::device::thread::{global_timer_ns, nanosleep};

/// Keeps the stream busy for `ns` nanoseconds (one thread sleeping in steps until the global
/// timer has moved on that far), so that the work queued after it is all on the GPU's queue
/// before the GPU reaches it: a timed run then measures the GPU's time, not the host's time to
/// submit (nvbench's blocking kernel does the same). Launch: one thread.
#[gpu::kernel]
pub unsafe fn hold(ns: u64) {
    let start = global_timer_ns();
    while global_timer_ns().wrapping_sub(start) < ns {
        nanosleep(1000);
    }
}
