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

/// The largest `value` over the block with its `index` (the smallest index among equal
/// values); every thread gets the pair. `values` and `indices` hold at least 32 entries each
/// and may be reused after the call; `lowest` loses to every real value.
#[inline(always)]
pub fn reduce_max_index<T: warp::Shuffle + PartialOrd>(
    value: T,
    index: u32,
    lowest: T,
    values: SharedArray<T>,
    indices: SharedArray<u32>,
) -> (T, u32) {
    let warps = block_dim_x().div_ceil(WARP_SIZE);
    let (value, index) = warp::reduce_max_index(value, index);
    // SAFETY (shared accesses): indices are below 32, the documented scratch size.
    if lane_id() == 0 {
        unsafe {
            values.set(warp_id(), value);
            indices.set(warp_id(), index);
        }
    }
    sync_threads();
    let staged = if lane_id() < warps {
        unsafe { (values.get(lane_id()), indices.get(lane_id())) }
    } else {
        (lowest, u32::MAX)
    };
    let best = warp::reduce_max_index(staged.0, staged.1);
    sync_threads(); // the scratch may be reused by the caller
    best
}
