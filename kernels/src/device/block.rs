//! Block-wide reductions: each warp reduces with shuffles, then warp 0 reduces the partials
//! staged in shared memory. Every thread of the block must call them.

use crate::device::shared::SharedArray;
use crate::device::thread::{WARP_SIZE, block_dim_x, lane_id, sync_threads, warp_id};
use crate::device::warp;

/// Sum over the block; every thread gets the total. `scratch` holds at least 32 `T`s and may
/// be reused after the call.
#[inline(always)]
pub fn reduce_sum<T: warp::Shuffle + core::ops::Add<Output = T>>(
    value: T,
    zero: T,
    scratch: SharedArray<T>,
) -> T {
    reduce(value, zero, scratch, warp::reduce_sum)
}

/// Maximum over the block; every thread gets it. `lowest` is the identity (e.g. `f32::MIN`).
#[inline(always)]
pub fn reduce_max<T: warp::Shuffle + PartialOrd>(value: T, lowest: T, scratch: SharedArray<T>) -> T {
    reduce(value, lowest, scratch, warp::reduce_max)
}

#[inline(always)]
fn reduce<T: warp::Shuffle>(
    value: T,
    identity: T,
    scratch: SharedArray<T>,
    warp_reduce: impl Fn(T) -> T,
) -> T {
    let warps = block_dim_x().div_ceil(WARP_SIZE);
    let partial = warp_reduce(value);
    // SAFETY (shared accesses): indices are below 32, the documented scratch size.
    if lane_id() == 0 {
        unsafe { scratch.set(warp_id(), partial) };
    }
    sync_threads();
    let staged = if lane_id() < warps { unsafe { scratch.get(lane_id()) } } else { identity };
    let total = warp_reduce(staged);
    sync_threads(); // scratch may be reused by the caller
    total
}
