//! Each device-layer primitive (kernels/src/device) exercised by a test kernel
//! (kernels/src/device_tests.rs) whose output is checked here.

mod common;

use common::{gpu, random_vec, sm90_gpu};
use rgla::kernels::device_tests as kernels;
use rgla::{Error, Launch};

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn thread_indices_1d_and_2d() {
    let gpu = gpu();
    let n = 1000usize; // not a multiple of the block
    let mut out = gpu.filled(4 * n, u32::MAX).unwrap();
    // SAFETY (every launch in this file): the buffers hold what the test kernel indexes.
    unsafe { kernels::indices_1d(&gpu, Launch::linear(n, 96), &mut out, n as u32) }.unwrap();
    let got = gpu.download(&out).unwrap();
    let blocks = n.div_ceil(96) as u32;
    for i in 0..n {
        let expect = [i as u32, (i % 96) as u32, (i / 96) as u32, 96 * blocks];
        assert_eq!(&got[4 * i..4 * i + 4], &expect, "thread {i}");
    }

    let (w, h) = (37u32, 21u32);
    let mut out = gpu.filled((w * h) as usize, u32::MAX).unwrap();
    let launch = Launch::grid_2d((w.div_ceil(8), h.div_ceil(4)), (8, 4));
    unsafe { kernels::indices_2d(&gpu, launch, &mut out, w, h) }.unwrap();
    let got = gpu.download(&out).unwrap();
    for y in 0..h {
        for x in 0..w {
            assert_eq!(got[(y * w + x) as usize], y * 65536 + x);
        }
    }
}

/// What lane `lane` of the shuffles kernel must write: xor 5, down 3, up 3, idx 7.
fn expected_shuffles<T: Copy>(input: &[T]) -> Vec<T> {
    (0..32)
        .flat_map(|lane: usize| {
            let down = if lane + 3 < 32 { lane + 3 } else { lane };
            let up = if lane >= 3 { lane - 3 } else { lane };
            [input[lane ^ 5], input[down], input[up], input[7]]
        })
        .collect()
}

fn check_shuffle<T>(gpu: &rgla::Gpu, input: Vec<T>, poison: T)
where
    T: kernels::shuffles::Type + Default + PartialEq + std::fmt::Debug,
{
    let d_in = gpu.upload(&input).unwrap();
    let mut d_out = gpu.filled(128, poison).unwrap();
    unsafe { kernels::shuffles(gpu, Launch::linear(32, 32), &d_in, &mut d_out) }.unwrap();
    assert_eq!(gpu.download(&d_out).unwrap(), expected_shuffles(&input), "{}", T::NAME);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn warp_shuffles_for_each_type() {
    let gpu = gpu();
    check_shuffle(&gpu, (0..32).map(|i| 1000 + i * 7).collect(), u32::MAX);
    check_shuffle(&gpu, (0..32).map(|i| -500 + i * 31).collect(), i32::MIN);
    check_shuffle(&gpu, random_vec::<f32>(32, 1), f32::NAN.to_bits() as f32);
    // f64 moves as two 32-bit halves: values whose halves both matter.
    let f64s: Vec<f64> = (0..32).map(|i| 1.0 / 3.0 + i as f64 * 1e10 + i as f64 * 1e-9).collect();
    check_shuffle(&gpu, f64s, -1.0);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn warp_votes() {
    let gpu = gpu();
    let cases: [Vec<u32>; 3] = [(0..32).map(|i| (i % 3 == 0) as u32).collect(), vec![0; 32], vec![5; 32]];
    for input in cases {
        let d_in = gpu.upload(&input).unwrap();
        let mut d_out = gpu.filled(3, 7u32).unwrap();
        unsafe { kernels::vote(&gpu, Launch::linear(32, 32), &d_in, &mut d_out) }.unwrap();
        let ballot: u32 = input.iter().enumerate().map(|(i, &v)| ((v != 0) as u32) << i).sum();
        let expect = [ballot, (ballot != 0) as u32, (ballot == u32::MAX) as u32];
        assert_eq!(gpu.download(&d_out).unwrap(), expect, "input {input:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn warp_appends_and_ors() {
    let gpu = gpu();
    let warps = 4;
    let input: Vec<u32> = (0..32 * warps as u32).map(|i| i.wrapping_mul(2_654_435_761) % 1000).collect();
    let d_in = gpu.upload(&input).unwrap();
    let mut tail = gpu.zeros::<u32>(1).unwrap();
    let mut list = gpu.filled(input.len(), u32::MAX).unwrap();
    let mut or = gpu.zeros::<u64>(warps).unwrap();
    unsafe {
        kernels::warp_append(&gpu, Launch::linear(input.len(), 64), &d_in, &mut tail, &mut list, &mut or)
    }
    .unwrap();
    let mut expect: Vec<u32> = input.iter().copied().filter(|v| v % 3 == 0).collect();
    let count = gpu.download(&tail).unwrap()[0] as usize;
    let mut got = gpu.download(&list).unwrap()[..count].to_vec();
    got.sort();
    expect.sort();
    assert_eq!(got, expect);
    for (w, &bits) in gpu.download(&or).unwrap().iter().enumerate() {
        let chunk = &input[32 * w..32 * (w + 1)];
        assert_eq!(bits, chunk.iter().fold(0u64, |acc, v| acc | 1 << (v % 64)), "warp {w}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn warp_reductions() {
    let gpu = gpu();
    let warps = 5;
    let input = random_vec::<f64>(32 * warps, 2);
    let d_in = gpu.upload(&input).unwrap();
    let mut d_out = gpu.filled(2 * warps, f64::NAN).unwrap();
    let mut d_down = gpu.filled(warps, f64::NAN).unwrap();
    unsafe { kernels::warp_reduce(&gpu, Launch::linear(32 * warps, 64), &d_in, &mut d_out, &mut d_down) }
        .unwrap();
    let out = gpu.download(&d_out).unwrap();
    let down = gpu.download(&d_down).unwrap();
    for w in 0..warps {
        let chunk = &input[32 * w..32 * (w + 1)];
        let sum: f64 = chunk.iter().sum();
        let max = chunk.iter().copied().fold(f64::MIN, f64::max);
        assert!((out[2 * w] - sum).abs() < 1e-13, "warp {w} sum {} vs {sum}", out[2 * w]);
        assert_eq!(out[2 * w + 1], max, "warp {w} max");
        assert!((down[w] - sum).abs() < 1e-13, "warp {w} shfl_down sum {} vs {sum}", down[w]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn block_reductions_with_dynamic_shared_scratch() {
    let gpu = gpu();
    for (n, block) in [(1000usize, 256u32), (1024, 1024), (77, 32), (5000, 160)] {
        let input = random_vec::<f32>(n, n as u64);
        let d_in = gpu.upload(&input).unwrap();
        let blocks = n.div_ceil(block as usize);
        let mut d_out = gpu.filled(2 * blocks, f32::NAN).unwrap();
        let n32 = n as u32;
        let launch = Launch::linear(n, block).shared(abi::block_reduction_bytes(4));
        unsafe { kernels::block_reduce(&gpu, launch, &d_in, n32, &mut d_out) }.unwrap();
        let out = gpu.download(&d_out).unwrap();
        for b in 0..blocks {
            let chunk = &input[b * block as usize..((b + 1) * block as usize).min(n)];
            let sum: f64 = chunk.iter().map(|&v| v as f64).sum();
            let max = chunk.iter().copied().fold(f32::MIN, f32::max);
            assert!((out[2 * b] as f64 - sum).abs() < 1e-4, "n={n} block {b}: sum {} vs {sum}", out[2 * b]);
            assert_eq!(out[2 * b + 1], max, "n={n} block {b} max");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn dynamic_shared_memory_carved_in_two() {
    let gpu = gpu();
    let (n, block) = (1000usize, 128u32);
    let input = random_vec::<f64>(n, 3);
    let d_in = gpu.upload(&input).unwrap();
    let mut out = gpu.filled(n, f64::NAN).unwrap();
    let mut out2 = gpu.filled(n, f64::NAN).unwrap();
    let n32 = n as u32;
    let launch = Launch::linear(n, block).shared(2 * 8 * block as usize);
    unsafe { kernels::shared_reverse(&gpu, launch, &d_in, &mut out, &mut out2, n32) }.unwrap();
    let (out, out2) = (gpu.download(&out).unwrap(), gpu.download(&out2).unwrap());
    let b = block as usize;
    for j in 0..n {
        let (base, t) = (j / b * b, b - 1 - j % b);
        let source = base + t;
        let expect = if source < n { input[source] } else { 0.0 };
        assert_eq!(out[j], expect, "element {j}");
        assert_eq!(out2[j], 2.0 * expect, "element {j} (second array)");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn atomics_add_cas_max() {
    let gpu = gpu();
    let n = 100_000usize;
    // Values that sum exactly in f32 regardless of order: multiples of 1/4 up to a few units.
    let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 17) as f32 * 0.25).collect();
    let d_in = gpu.upload(&input).unwrap();
    let mut sum32 = gpu.zeros::<f32>(1).unwrap();
    let mut sum64 = gpu.zeros::<f64>(1).unwrap();
    let mut counter = gpu.upload(&[0u32, 0, i32::MIN as u32, 0]).unwrap();
    let mut fmax = gpu.filled(1, f32::MIN).unwrap();
    let n32 = n as u32;
    let launch = Launch::linear(n, 256);
    unsafe { kernels::atomics(&gpu, launch, &d_in, n32, &mut sum32, &mut sum64, &mut counter, &mut fmax) }
        .unwrap();
    let total: f64 = input.iter().map(|&v| v as f64).sum();
    assert_eq!(gpu.download(&sum32).unwrap()[0] as f64, total);
    assert_eq!(gpu.download(&sum64).unwrap()[0], total);
    let c = gpu.download(&counter).unwrap();
    assert_eq!(c[0], n as u32, "atomic add count");
    assert_eq!(c[1], n as u32 - 1, "atomic max u32");
    assert_eq!(c[2] as i32, 0, "atomic max i32 of -i");
    assert_eq!(c[3], n as u32, "CAS loop increments");
    assert_eq!(gpu.download(&fmax).unwrap()[0], 4.0, "CAS-based f32 max");
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn release_acquire_flags_pass_values_between_blocks() {
    let gpu = gpu();
    let blocks = gpu.props().sm_count as usize; // one block per SM: all resident at once
    let mut values = gpu.zeros::<u32>(blocks).unwrap();
    let mut flags = gpu.zeros::<u32>(blocks).unwrap();
    let spin_limit = 100_000_000u32;
    unsafe { kernels::flags(&gpu, Launch::linear(blocks, 1), &mut values, &mut flags, spin_limit) }.unwrap();
    let values = gpu.download(&values).unwrap();
    assert_eq!(values, (1..=blocks as u32).collect::<Vec<_>>());
    assert!(gpu.download(&flags).unwrap().iter().all(|&f| f == 1));
}

/// Runs the load kernel (`load_nc`, or `load_stream_relaxed` when `streaming`) on 777 random
/// values of each type and checks out = factor * in.
fn check_scaled_copies(streaming: bool, factor32: f32, factor64: f64) {
    let gpu = gpu();
    let n = 777usize;
    let (a, b) = (random_vec::<f32>(n, 4), random_vec::<f64>(n, 5));
    let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
    let mut oa = gpu.filled(n, f32::NAN).unwrap();
    let mut ob = gpu.filled(n, f64::NAN).unwrap();
    let n32 = n as u32;
    let launch = Launch::linear(n, 128);
    unsafe {
        match streaming {
            false => kernels::load_nc(&gpu, launch, &da, &mut oa, &db, &mut ob, n32),
            true => kernels::load_stream_relaxed(&gpu, launch, &da, &mut oa, &db, &mut ob, n32),
        }
    }
    .unwrap();
    assert_eq!(gpu.download(&oa).unwrap(), a.iter().map(|v| factor32 * v).collect::<Vec<_>>());
    assert_eq!(gpu.download(&ob).unwrap(), b.iter().map(|v| factor64 * v).collect::<Vec<_>>());
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn read_only_cached_loads() {
    check_scaled_copies(false, 2.0, 2.0);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn streaming_and_relaxed_loads_and_stores() {
    check_scaled_copies(true, 2.0, 3.0);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn errors_name_the_problem() {
    let gpu = gpu();
    let err = gpu.kernel("no_such_kernel").err().unwrap();
    assert!(matches!(err, Error::KernelNotFound(_)) && err.to_string().contains("no_such_kernel"), "{err}");

    let (free, _) = gpu.memory_info().unwrap();
    let err = gpu.zeros::<u8>(free + (1 << 30)).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
    assert!(err.to_string().contains("out of device memory"), "{err}");

    let (d_in, mut d_out) = (gpu.zeros::<u32>(32).unwrap(), gpu.zeros::<u32>(3).unwrap());
    let err = unsafe { kernels::vote(&gpu, Launch::linear(32, 2048), &d_in, &mut d_out) }.unwrap_err();
    assert!(
        matches!(err, Error::LaunchConfig { .. }) && err.to_string().contains("device_tests_vote"),
        "{err}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn memory_the_pool_keeps_counts_as_free() {
    let gpu = gpu();
    let (before, total) = gpu.memory_info().unwrap();
    let buffer = gpu.zeros::<u8>(256 << 20).unwrap();
    let (during, _) = gpu.memory_info().unwrap();
    assert!(during + (256 << 20) <= before + (16 << 20), "free {before} -> {during} with 256 MiB taken");
    drop(buffer);
    gpu.synchronize().unwrap();
    // The pool keeps the freed memory for the next allocation, and says it is free.
    let (after, _) = gpu.memory_info().unwrap();
    assert!(
        after + (16 << 20) >= before && after <= total,
        "free {before} -> {after} after the buffer's release"
    );
    let again = gpu.zeros::<u8>(256 << 20).unwrap();
    assert_eq!(again.len(), 256 << 20);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn async_copies_land_with_zero_fill() {
    let gpu = gpu();
    let src: Vec<f32> = (0..128).map(|i| i as f32 + 1.0).collect();
    // 0, 4, 8, 12 or 16 valid bytes per thread: whole values copied, the rest zero.
    let valid: Vec<u32> = (0..32).map(|t| 4 * (t % 5)).collect();
    let (dsrc, dvalid) = (gpu.upload(&src).unwrap(), gpu.upload(&valid).unwrap());
    let mut out = gpu.filled(192, f32::NAN).unwrap();
    unsafe { kernels::cp_async(&gpu, Launch::linear(32, 32).shared(768), &dsrc, &dvalid, &mut out) }.unwrap();
    let out = gpu.download(&out).unwrap();
    for t in 0..32 {
        let values = |width: usize, valid_bytes: u32| -> Vec<f32> {
            (0..width).map(|k| if 4 * k < valid_bytes as usize { src[4 * t + k] } else { 0.0 }).collect()
        };
        assert_eq!(out[4 * t..4 * t + 4], values(4, valid[t])[..], "16-byte copy of thread {t}");
        assert_eq!(
            out[128 + 2 * t..128 + 2 * t + 2],
            values(2, valid[t].min(8))[..],
            "8-byte copy of thread {t}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn dmma_m16n8k8_fragments_multiply() {
    let Some(gpu) = sm90_gpu("dmma_m16n8k8_fragments_multiply") else { return };
    // Small integers: every product and sum is exact, so the check is equality.
    let a: Vec<f64> = (0..128).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
    let b: Vec<f64> = (0..64).map(|i| ((i * 5) % 9) as f64 - 4.0).collect();
    let c: Vec<f64> = (0..128).map(|i| (i % 13) as f64).collect();
    let mut expect = c.clone();
    for row in 0..16 {
        for col in 0..8 {
            expect[row * 8 + col] += (0..8).map(|kk| a[row * 8 + kk] * b[kk * 8 + col]).sum::<f64>();
        }
    }
    let (da, db, dc) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&c).unwrap());
    let mut d = gpu.filled(128, f64::NAN).unwrap();
    unsafe { kernels::dmma_m16n8k8(&gpu, Launch::linear(32, 32), &da, &db, &dc, &mut d) }.unwrap();
    assert_eq!(gpu.download(&d).unwrap(), expect);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn timing_counts_the_work_not_the_hold_before_it() {
    use rgla::gpu::HOLD_NS;
    let gpu = gpu();
    let hold_ms = HOLD_NS as f64 * 1e-6;
    // Nothing timed: the hold before the start event is not counted. The least of a few
    // timings: a host stall between the two event records longer than the hold shows as time.
    let empty = (0..5).map(|_| gpu.time_once(|| Ok(())).unwrap()).fold(f64::INFINITY, f64::min);
    assert!((0.0..0.5 * hold_ms).contains(&empty), "empty work timed at {empty} ms");
    // Work that keeps the GPU busy for a known time is timed at about that time.
    let work_ns = 1_000_000;
    // The least of a few timings, as above.
    let busy = (0..5)
        // SAFETY: a kernel of one thread that touches no memory.
        .map(|_| {
            gpu.time_once(|| unsafe { rgla::kernels::timing::hold(&gpu, Launch::linear(1, 1), work_ns) })
        })
        .map(|t| t.unwrap())
        .fold(f64::INFINITY, f64::min);
    let work_ms = work_ns as f64 * 1e-6;
    assert!((0.99 * work_ms..1.5 * work_ms).contains(&busy), "{work_ms} ms of work timed at {busy} ms");
}
