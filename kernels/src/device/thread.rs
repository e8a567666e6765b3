//! Thread, block and grid indices, and block-wide barriers.

use core::arch::nvptx;

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;

// SAFETY (every function here): reading a special register has no preconditions.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    unsafe { nvptx::_thread_idx_x() as u32 }
}
#[inline(always)]
pub fn thread_idx_y() -> u32 {
    unsafe { nvptx::_thread_idx_y() as u32 }
}
#[inline(always)]
pub fn block_idx_x() -> u32 {
    unsafe { nvptx::_block_idx_x() as u32 }
}
#[inline(always)]
pub fn block_idx_y() -> u32 {
    unsafe { nvptx::_block_idx_y() as u32 }
}
#[inline(always)]
pub fn block_dim_x() -> u32 {
    unsafe { nvptx::_block_dim_x() as u32 }
}
#[inline(always)]
pub fn block_dim_y() -> u32 {
    unsafe { nvptx::_block_dim_y() as u32 }
}
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    unsafe { nvptx::_grid_dim_x() as u32 }
}
#[inline(always)]
pub fn grid_dim_y() -> u32 {
    unsafe { nvptx::_grid_dim_y() as u32 }
}

/// Global index of this thread in a 1D launch.
#[inline(always)]
pub fn index_1d() -> u32 {
    block_idx_x() * block_dim_x() + thread_idx_x()
}

/// Global (x, y) index of this thread in a 2D launch: x is the column, y the row.
#[inline(always)]
pub fn index_2d() -> (u32, u32) {
    (block_idx_x() * block_dim_x() + thread_idx_x(), block_idx_y() * block_dim_y() + thread_idx_y())
}

/// Threads in the whole 1D grid (the stride of a grid-stride loop).
#[inline(always)]
pub fn grid_size_1d() -> u32 {
    grid_dim_x() * block_dim_x()
}

/// This thread's lane in its warp (0..32).
#[inline(always)]
pub fn lane_id() -> u32 {
    thread_idx_x() % WARP_SIZE
}

/// This thread's warp within its block (1D blocks).
#[inline(always)]
pub fn warp_id() -> u32 {
    thread_idx_x() / WARP_SIZE
}

/// Global warp index in a 1D launch.
#[inline(always)]
pub fn warp_index_1d() -> u32 {
    index_1d() / WARP_SIZE
}

/// Barrier for every thread of the block (`__syncthreads`).
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: a barrier; every thread of the block must reach it, which callers ensure.
    unsafe { nvptx::_syncthreads() }
}

/// The GPU's global nanosecond clock (`%globaltimer`): bounds spin waits in wall time.
#[inline(always)]
pub fn global_timer_ns() -> u64 {
    let ns: u64;
    // SAFETY: reads a special register; no memory is touched.
    unsafe { core::arch::asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) ns, options(nomem, nostack)) };
    ns
}

/// Suspends this thread for about `ns` nanoseconds (`__nanosleep`, sm_70+): a backoff for spin
/// waits, so that waiting warps leave the memory system to the ones doing work.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    // SAFETY: only delays the thread; no memory is touched.
    unsafe { core::arch::asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nomem, nostack)) };
}
