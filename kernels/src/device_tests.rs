//! Test kernels: one per device-layer primitive, each writing what it saw so that the host
//! (`tests/device_layer.rs`) can check it. Launch shapes are documented per kernel.

use crate::device::memory::{self, LoadNc};
#[cfg(target_feature = "sm_90")]
use crate::device::mma;
use crate::device::shared;
use crate::device::thread::{
    block_dim_x, block_idx_x, grid_dim_x, index_1d, index_2d, lane_id, sync_threads, thread_idx_x,
};
use crate::device::warp::{self, Shuffle};
use crate::device::{atomic, block, pipeline};

/// out[4 * i..] = (index_1d, thread_idx_x, block_idx_x, block_dim_x * grid_dim_x), any 1D launch.
#[gpu::kernel]
pub unsafe fn indices_1d(out: *mut u32, n: u32) {
    let i = index_1d();
    if i < n {
        let values = [i, thread_idx_x(), block_idx_x(), block_dim_x() * grid_dim_x()];
        for (k, v) in values.into_iter().enumerate() {
            // SAFETY: out holds 4 * n values and i < n.
            unsafe { *out.add(4 * i as usize + k) = v };
        }
    }
}

/// out[y * width + x] = y * 65536 + x over a 2D launch covering width x height.
#[gpu::kernel]
pub unsafe fn indices_2d(out: *mut u32, width: u32, height: u32) {
    let (x, y) = index_2d();
    if x < width && y < height {
        // SAFETY: bounds checked against the sizes passed in.
        unsafe { *out.add((y * width + x) as usize) = y * 65536 + x };
    }
}

/// Shuffles of each type: out[4 * lane + k] for k = xor 5, down 3, up 3, idx 7 of `input[lane]`.
/// One warp.
#[gpu::kernel(T = u32 | i32 | f32 | f64)]
pub unsafe fn shuffles<T: Shuffle>(input: *const T, out: *mut T) {
    let lane = lane_id();
    // SAFETY: one warp, input has 32 values, out 128.
    let v = unsafe { *input.add(lane as usize) };
    let results =
        [warp::shuffle_xor(v, 5), warp::shuffle_down(v, 3), warp::shuffle_up(v, 3), warp::shuffle_idx(v, 7)];
    for (k, r) in results.into_iter().enumerate() {
        unsafe { *out.add(4 * lane as usize + k) = r };
    }
}

/// Votes on `input[lane] != 0`: out[0] = ballot, out[1] = any, out[2] = all. One warp.
#[gpu::kernel]
pub unsafe fn vote(input: *const u32, out: *mut u32) {
    // SAFETY: one warp, input has 32 values, out 3.
    let p = unsafe { *input.add(lane_id() as usize) } != 0;
    let (ballot, any, all) = (warp::ballot(p), warp::any(p), warp::all(p));
    if lane_id() == 0 {
        unsafe {
            *out = ballot;
            *out.add(1) = any as u32;
            *out.add(2) = all as u32;
        }
    }
}

/// `warp::append` of the inputs divisible by 3 to `list` at `*tail`, and `warp::reduce_or_groups`
/// of `1 << (input % 64)` over each warp into `or[w]`. Any number of whole warps covering `input`.
#[gpu::kernel]
pub unsafe fn warp_append(input: *const u32, tail: *mut u32, list: *mut u32, or: *mut u64) {
    let i = index_1d();
    // SAFETY: the launch covers exactly the input, a whole number of warps; the list has room
    // for every input.
    let v = unsafe { *input.add(i as usize) };
    unsafe { warp::append(v % 3 == 0, v, tail, list) };
    let bits = warp::reduce_or_groups(1u64 << (v % 64), 32);
    if lane_id() == 0 {
        unsafe { *or.add((i / 32) as usize) = bits };
    }
}

/// Warp reductions: out[2 * w] = sum, out[2 * w + 1] = max of warp w's inputs; out2[w] = the
/// `reduce_sum_down` total as lane 0 holds it. Any number of whole warps covering `input`.
#[gpu::kernel]
pub unsafe fn warp_reduce(input: *const f64, out: *mut f64, down: *mut f64) {
    let i = index_1d();
    // SAFETY: the launch covers exactly the input, a whole number of warps.
    let v = unsafe { *input.add(i as usize) };
    let (sum, max, sum_down) = (warp::reduce_sum(v), warp::reduce_max(v), warp::reduce_sum_down(v, 32));
    if lane_id() == 0 {
        let w = (i / 32) as usize;
        unsafe {
            *out.add(2 * w) = sum;
            *out.add(2 * w + 1) = max;
            *down.add(w) = sum_down;
        }
    }
}

/// Block reductions with dynamic shared scratch (32 f32): out[2 * b] = sum, out[2 * b + 1] =
/// max over block b; elements past `n` count as 0 (sum) and -inf (max).
#[gpu::kernel]
pub unsafe fn block_reduce(input: *const f32, n: u32, out: *mut f32) {
    let i = index_1d();
    // SAFETY: guarded by n.
    let v = if i < n { unsafe { *input.add(i as usize) } } else { 0.0 };
    let scratch = shared::dynamic::<f32>();
    let sum = block::reduce_sum(v, 0.0, scratch);
    let m = if i < n { v } else { f32::NEG_INFINITY };
    let max = block::reduce_max(m, f32::NEG_INFINITY, scratch);
    if thread_idx_x() == 0 {
        let b = block_idx_x() as usize;
        unsafe {
            *out.add(2 * b) = sum;
            *out.add(2 * b + 1) = max;
        }
    }
}

/// Dynamic shared memory: each block writes input through shared memory reversed into out,
/// with a second carved array holding the same values doubled (out2). Shared bytes: 2 arrays
/// of block_dim f64 (carving rounds to 16 bytes).
#[gpu::kernel]
pub unsafe fn shared_reverse(input: *const f64, out: *mut f64, out2: *mut f64, n: u32) {
    let t = thread_idx_x();
    let b = block_dim_x();
    let i = index_1d();
    let first = shared::dynamic::<f64>();
    let second = first.after::<f64>(b);
    let v = if i < n { unsafe { *input.add(i as usize) } } else { 0.0 };
    // SAFETY: t < block_dim, the documented size of each array.
    unsafe {
        first.set(t, v);
        second.set(t, 2.0 * v);
    }
    sync_threads();
    let base = block_idx_x() * b;
    let j = base + (b - 1 - t);
    if j < n {
        unsafe {
            *out.add(j as usize) = first.get(t);
            *out2.add(j as usize) = second.get(t);
        }
    }
}

/// Atomics: every thread i < n adds input[i] into sums (f32 [0], f64 [1] via the f64 view),
/// counts into counter[0], maxes i into counter[1] (u32) and counter[2] (i32, as -i), maxes
/// input into fmax[0], and thread i takes a CAS ticket: counter[3] counts successful CAS
/// increments done in a retry loop.
#[gpu::kernel]
pub unsafe fn atomics(
    input: *const f32,
    n: u32,
    sum_f32: *mut f32,
    sum_f64: *mut f64,
    counter: *mut u32,
    fmax: *mut f32,
) {
    let i = index_1d();
    if i >= n {
        return;
    }
    // SAFETY: all pointers are valid device buffers of the documented sizes; i < n.
    unsafe {
        let v = *input.add(i as usize);
        atomic::add(sum_f32, v);
        atomic::add(sum_f64, v as f64);
        atomic::add(counter, 1u32);
        atomic::max_u32(counter.add(1), i);
        atomic::max_i32(counter.add(2).cast::<i32>(), -(i as i32));
        atomic::max_f32(fmax, v);
        let ticket = counter.add(3);
        let mut seen = memory::load_volatile(ticket);
        loop {
            let old = atomic::compare_and_swap(ticket, seen, seen + 1);
            if old == seen {
                break;
            }
            seen = old;
        }
    }
}

/// Message passing across blocks with release/acquire flags: block b > 0 waits for block
/// b - 1's flag, reads its value, and publishes value + 1. Launch one thread per block with
/// at most as many blocks as fit on the GPU at once; values[0] is seeded by block 0 with 1.
#[gpu::kernel]
pub unsafe fn flags(values: *mut u32, flags: *mut u32, spin_limit: u32) {
    let b = block_idx_x() as usize;
    // SAFETY: values and flags have grid_dim entries; b indexes this block's own pair.
    unsafe {
        let previous = if b == 0 {
            0
        } else {
            let mut spins = 0;
            while memory::load_acquire(flags.add(b - 1)) == 0 {
                spins += 1;
                if spins > spin_limit {
                    memory::store_volatile(values.add(b), u32::MAX); // timed out: visible error
                    return;
                }
            }
            memory::load_volatile(values.add(b - 1))
        };
        memory::store_volatile(values.add(b), previous + 1);
        memory::fence_gpu();
        memory::store_release(flags.add(b), 1);
    }
}

/// Read-only cached loads: out[i] = input[i] * 2 for f32 and f64, through `ld.global.nc`.
#[gpu::kernel]
pub unsafe fn load_nc(in32: *const f32, out32: *mut f32, in64: *const f64, out64: *mut f64, n: u32) {
    let i = index_1d();
    if i < n {
        // SAFETY: guarded by n; the inputs are read-only during the kernel.
        unsafe {
            *out32.add(i as usize) = 2.0 * f32::load_nc(in32.add(i as usize));
            *out64.add(i as usize) = 2.0 * memory::load_nc(in64.add(i as usize));
        }
    }
}

/// The other loads and stores: out32[i] = 2 in32[i] through `load_stream` and
/// `store_relaxed`, out64[i] = 3 in64[i] through `load_relaxed` and `store_relaxed`.
#[gpu::kernel]
pub unsafe fn load_stream_relaxed(
    in32: *const f32,
    out32: *mut f32,
    in64: *const f64,
    out64: *mut f64,
    n: u32,
) {
    let i = index_1d() as usize;
    if i < n as usize {
        // SAFETY: guarded by n; the inputs are read-only during the kernel.
        unsafe {
            memory::store_relaxed(out32.add(i), 2.0 * memory::load_stream(in32.add(i)));
            memory::store_relaxed(out64.add(i), 3.0 * memory::load_relaxed(in64.add(i)));
        }
    }
}

/// Asynchronous copies: thread t copies the first `valid[t]` bytes of `src[4 t..4 t + 4]` to
/// shared memory with a 16-byte and with an 8-byte `cp.async` (the 8-byte one at most 8
/// bytes), in two groups, waits for both, and writes both shared arrays out: `out[..128]` the
/// 16-byte copies, `out[128..192]` the 8-byte ones; zero past the valid bytes. One block of 32
/// threads; shared bytes: 768.
#[gpu::kernel]
pub unsafe fn cp_async(src: *const f32, valid: *const u32, out: *mut f32) {
    let t = thread_idx_x();
    let wide = shared::dynamic::<f32>();
    let narrow = wide.after::<f32>(128);
    // SAFETY: t < 32; src holds 128 values, valid 32; the shared arrays 128 and 64 values,
    // 16-byte aligned, read only after the wait and the barrier.
    unsafe {
        let bytes = *valid.add(t as usize);
        pipeline::copy_16(wide, 4 * t, src.add(4 * t as usize), bytes);
        pipeline::commit();
        pipeline::copy_8(narrow, 2 * t, src.add(4 * t as usize), bytes.min(8));
        pipeline::commit();
        pipeline::wait_pending(1); // a partial wait (the older group), then the rest
        pipeline::wait_pending(0);
        sync_threads();
        for k in 0..4 {
            *out.add((4 * t + k) as usize) = wide.get(4 * t + k);
        }
        for k in 0..2 {
            *out.add((128 + 2 * t + k) as usize) = narrow.get(2 * t + k);
        }
    }
}

/// One `dmma_m16n8k8`: D = A B + C for row-major A (16 x 8), B (8 x 8), C and D (16 x 8),
/// through the fragment layout the primitive documents. One warp; sm_90 only.
#[cfg(target_feature = "sm_90")]
#[gpu::kernel]
pub unsafe fn dmma_m16n8k8(a: *const f64, b: *const f64, c: *const f64, d: *mut f64) {
    let (g, t) = ((lane_id() / 4) as usize, (lane_id() % 4) as usize);
    // SAFETY: g < 8, t < 4: every index below is inside the 16 x 8 and 8 x 8 matrices.
    unsafe {
        let a_at = |row: usize, col: usize| *a.add(row * 8 + col);
        let c_at = |row: usize, col: usize| *c.add(row * 8 + col);
        let fa = [a_at(g, t), a_at(g + 8, t), a_at(g, t + 4), a_at(g + 8, t + 4)];
        let fb = [*b.add(t * 8 + g), *b.add((t + 4) * 8 + g)];
        let fc = [c_at(g, 2 * t), c_at(g, 2 * t + 1), c_at(g + 8, 2 * t), c_at(g + 8, 2 * t + 1)];
        let [d0, d1, d2, d3] = mma::dmma_m16n8k8(fa, fb, fc);
        *d.add(g * 8 + 2 * t) = d0;
        *d.add(g * 8 + 2 * t + 1) = d1;
        *d.add((g + 8) * 8 + 2 * t) = d2;
        *d.add((g + 8) * 8 + 2 * t + 1) = d3;
    }
}

/// Traps (the panic handler's path): the host must see a launch failure naming this kernel.
#[gpu::kernel]
pub unsafe fn trap(out: *mut u32, index: u32) {
    let table = [1u32, 2, 3];
    // An out-of-range index panics on the device, which traps.
    unsafe { *out = table[index as usize] };
}
