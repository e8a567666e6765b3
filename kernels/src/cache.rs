//! L2 residency: the release that `rgla::gpu::keep_in_l2` queues after the launches it kept a
//! buffer in L2 for.

use crate::device::Float;
use crate::device::memory::l2_evict_normal;
use crate::device::thread::index_1d;

/// Gives the L2 lines of the `n` values at `x` the normal eviction priority again, a thread
/// per 128-byte line. Launch: a thread per line, any block size.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn release_persisting<T: Float>(n: u32, x: *const T) {
    let per_line = 128 / size_of::<T>() as u32;
    let line = index_1d();
    if line < n.div_ceil(per_line) {
        // SAFETY: the line's first value is one of the n.
        unsafe { l2_evict_normal(x.add((line * per_line) as usize)) };
    }
}
