//! GEMM benchmark: the Naples report's table (n = 1000..10000, each tile size, GFLOPS and
//! speedup over the CPU) and, at n = 4096 and 8192 and on one shape that is neither square nor
//! a multiple of any tile (m = 5000, k = 7001, n = 3000, run beside the cuBLAS sizes), the fast
//! kernels against cuBLAS (the TF32 kernel against cuBLAS in TF32 mode). Every result is
//! checked against the f64 CPU reference before it is recorded (TF32 within its error bound).

mod common;

use common::Session;
use rgla::Scalar;
use rgla::bench::{
    Record, bench_sizes, cpu_median_ms, gpu_iters, gpu_median_ms, quick, record_copy_bandwidth, save,
};
use rgla::gemm::{self, GemmKernel, TILES};
use rgla::vendor::cublas::{Cublas, CublasGemm};
use rgla::verify::compare;

fn main() {
    let mut session = common::Session::start();
    if let Some(gpu) = &session.gpu {
        record_copy_bandwidth(gpu).unwrap();
    }
    let (report_sizes, vendor_sizes) = if quick() {
        (vec![1000, 2000], vec![4096])
    } else {
        ((1..=10).map(|i| 1000 * i).collect(), vec![4096, 8192])
    };
    let (report_sizes, vendor_sizes) = bench_sizes(&report_sizes, &vendor_sizes).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let square = report_sizes.iter().chain(&vendor_sizes).map(|&n| Shape { m: n, k: n, n });
    let shapes: Vec<Shape> =
        square.chain(NON_SQUARE.into_iter().filter(|_| !vendor_sizes.is_empty())).collect();
    for shape in shapes {
        // At the cuBLAS comparison sizes, the fast kernels only.
        let vendor_size = shape.m != shape.n || vendor_sizes.contains(&shape.n);
        run::<f64>(&mut session, shape, vendor_size);
        run::<f32>(&mut session, shape, vendor_size);
    }
    session.finish();
}

/// C (m x n) = A (m x k) B (k x n).
#[derive(Clone, Copy)]
struct Shape {
    m: usize,
    k: usize,
    n: usize,
}

/// Issue 17's shape that is neither square nor a multiple of any tile.
const NON_SQUARE: [Shape; 1] = [Shape { m: 5000, k: 7001, n: 3000 }];

impl Shape {
    /// The input's name: `n=4096` where square (the report plots those against n),
    /// `5000x7001x3000` (m x k x n) where not.
    fn input(self) -> String {
        let Shape { m, k, n } = self;
        if m == n && k == n { format!("n={n}") } else { format!("{m}x{k}x{n}") }
    }
}

fn run<T: Scalar + CublasGemm>(s: &mut Session, shape: Shape, vendor_size: bool) {
    let Shape { m, k, n } = shape;
    let input = shape.input();
    eprintln!("gemm: {input} {}", T::NAME);
    let a = rgla::sparse::generate::vector_1_to_5::<T>(m * k, 1);
    let b = rgla::sparse::generate::vector_1_to_5::<T>(k * n, 2);
    let started = std::time::Instant::now();
    let expect = gemm::cpu::reference(m, n, k, &a, &b);
    let reference_ms = started.elapsed().as_secs_f64() * 1e3;
    let record = |kernel: &str, kind: &str, time_ms: f64, error: f64| Record {
        operation: "gemm".into(),
        input: input.clone(),
        kernel: kernel.into(),
        kind: kind.into(),
        precision: T::NAME.into(),
        time_ms,
        runs: 3,
        flops: 2.0 * (m * n * k) as f64,
        min_bytes: ((m * k + k * n + m * n) * size_of::<T>()) as f64,
        error,
        notes: format!("m={m} k={k} n={n}"),
    };
    let mut c = vec![T::ZERO; m * n];
    // The CPU rows: the report's serial loop and our rayon kernel where they finish in
    // seconds; the multithreaded matrixmultiply reference (f64) at every size.
    if T::NAME == "f64" {
        save(&record("cpu-matrixmultiply", "cpu", reference_ms, 0.0)).unwrap();
    }
    if n <= 1000 {
        let ms = cpu_median_ms(1, || gemm::cpu::serial(m, n, k, &a, &b, &mut c).unwrap());
        save(&record("cpu-serial", "cpu", ms, compare(&c, &expect, 1e-3).relative_error)).unwrap();
    }
    if n <= 2000 {
        let ms = cpu_median_ms(1, || gemm::cpu::rayon(m, n, k, &a, &b, &mut c).unwrap());
        save(&record("cpu-rayon", "cpu", ms, compare(&c, &expect, 1e-3).relative_error)).unwrap();
    }
    let Some(gpu) = s.gpu.as_ref() else { return };
    let tolerance = if T::NAME == "f64" { 1e-12 } else { 1e-5 };
    let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
    let mut dc = gpu.zeros::<T>(m * n).unwrap();
    let poison = vec![T::from_f64(f64::NAN); m * n];
    let mut measure =
        |kernel: &str, kind: &str, run: &mut dyn FnMut(&mut rgla::gpu::CudaSlice<T>) -> rgla::Result<()>| {
            let what = format!("{kernel} {} {input}", T::NAME);
            // TF32 rounds or truncates the inputs: its bound on |A| |B|, which is A B here
            // (positive inputs).
            let tolerance = gemm::reduced_precision_bound_of(kernel, k).unwrap_or(tolerance);
            gpu.upload_into(&poison, &mut dc).unwrap();
            let checked =
                run(&mut dc).and_then(|()| gpu.download(&dc)).map(|got| compare(&got, &expect, 1e-3));
            let error = match checked {
                Ok(c) if c.passes(tolerance) => c.relative_error,
                Ok(c) => return s.failures.push(c.check(&what, tolerance).unwrap_err().to_string()),
                Err(e) => return s.failures.push(format!("{what}: {e}")),
            };
            let ms = gpu_median_ms(gpu, 1, 3, || run(&mut dc)).unwrap();
            save(&record(kernel, kind, ms, error)).unwrap();
            if vendor_size {
                let id = format!("gemm/{input}/{kernel}/{}", T::NAME);
                s.criterion.bench_function(&id, |bch| {
                    bch.iter_custom(|iters| gpu_iters(gpu, iters, || run(&mut dc)))
                });
            }
        };
    let cublas = Cublas::new(gpu).unwrap();
    measure("cublas", "vendor", &mut |dc| cublas.gemm(m, n, k, &da, &db, dc));
    if T::NAME == "f32" {
        let cublas = Cublas::new_tf32(gpu).unwrap();
        measure("cublas-tf32", "vendor", &mut |dc| cublas.gemm(m, n, k, &da, &db, dc));
    }
    let mut kernels = vec![
        GemmKernel::Blocked,
        GemmKernel::BlockedWide,
        GemmKernel::Dmma,
        GemmKernel::Dmma16,
        GemmKernel::DmmaPipelined,
        GemmKernel::DmmaTma,
        GemmKernel::Tf32,
        GemmKernel::Tf32Wgmma,
    ];
    if !vendor_size {
        // The report's table: small tiles only where a run takes seconds at most.
        kernels.extend(TILES.into_iter().filter(|&t| t >= 8 || n <= 4000).map(GemmKernel::Tiled));
    }
    for kernel in kernels.into_iter().filter(|k| k.supports::<T>(gpu)) {
        measure(&kernel.name(), "gpu", &mut |dc| gemm::gemm(gpu, kernel, m, n, k, &da, &db, dc));
    }
}
