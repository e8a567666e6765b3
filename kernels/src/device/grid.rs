//! Grid-wide synchronisation for persistent kernels, whose blocks must all be resident at once
//! (the host launches at most one block per SM, with resources that fit one).

use crate::device::atomic;
use crate::device::memory::{fence_gpu, load_acquire};
use crate::device::thread::{grid_dim_x, sync_threads, thread_idx_x};

/// Waits until every block of the (1D) grid has reached its `generation`-th barrier
/// (1, 2, ...) on `counter`, a word the host zeroed before the launch. What a block wrote
/// before the barrier is visible to every block after it (the pattern of cooperative groups'
/// `grid.sync()`: fence, arrive, spin, fence). Every thread of every block must call it.
///
/// # Safety
/// `counter` is a valid device word used by this grid only, zeroed at launch; all blocks of
/// the grid are resident (else the spin never ends).
#[inline(always)]
pub unsafe fn barrier(counter: *mut u32, generation: u32) {
    sync_threads();
    if thread_idx_x() == 0 {
        fence_gpu();
        // SAFETY: the caller's contract on `counter`.
        unsafe {
            atomic::add(counter, 1);
            let target = generation * grid_dim_x();
            while load_acquire(counter) < target {}
        }
        fence_gpu();
    }
    sync_threads();
}
