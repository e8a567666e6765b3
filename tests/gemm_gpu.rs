//! Every GEMM kernel and tile size against the f64 CPU reference, on square and odd shapes.

mod common;

use common::{gpu, random_vec};
use host::dense::gemm::{self, GemmKernel};
use host::vendor::cublas::Cublas;
use host::verify::compare;
use host::{Gpu, Scalar};

/// (m, k, n): the shapes plus a square one.
const SHAPES: [(usize, usize, usize); 5] =
    [(1, 1, 1), (31, 33, 17), (1000, 7, 513), (256, 256, 256), (4097, 4095, 4099)];

fn check_all<T: Scalar>(tolerance: f64) {
    let gpu = gpu();
    let cublas = Cublas::new(&gpu).unwrap();
    for (m, k, n) in SHAPES {
        let a = random_vec::<T>(m * k, 1);
        let b = random_vec::<T>(k * n, 2);
        let expect = gemm::reference(m, n, k, &a, &b);
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        let run = |what: String, f: &dyn Fn(&Gpu, &mut host::gpu::CudaSlice<T>) -> host::Result<()>| {
            let mut dc = gpu.filled(m * n, T::from_f64(f64::NAN)).unwrap();
            f(&gpu, &mut dc).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = gpu.download(&dc).unwrap();
            compare(&got, &expect, 1e-3).check(&what, tolerance).unwrap();
        };
        for kernel in GemmKernel::all().into_iter().filter(|k| k.supports::<T>(&gpu)) {
            let what = format!("gemm {} {} {m}x{k}x{n}", kernel.name(), T::NAME);
            run(what, &|gpu, dc| gemm::gemm(gpu, kernel, m, n, k, &da, &db, dc));
        }
        run(format!("cuBLAS {} {m}x{k}x{n}", T::NAME), &|_, dc| cublas.gemm(m, n, k, &da, &db, dc));
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn gemm_kernels_f32() {
    check_all::<f32>(1e-5);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn gemm_kernels_f64() {
    check_all::<f64>(1e-12);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn gemm_errors_name_the_problem() {
    let gpu = gpu();
    let a = gpu.zeros::<f32>(6).unwrap();
    let mut c = gpu.zeros::<f32>(5).unwrap(); // 2 x 2 needs 4
    let err = gemm::gemm(&gpu, GemmKernel::Blocked, 2, 2, 3, &a, &a, &mut c).unwrap_err().to_string();
    assert!(err.contains("needs buffers"), "{err}");
    let mut c = gpu.zeros::<f32>(4).unwrap();
    let err = gemm::gemm(&gpu, GemmKernel::Dmma, 2, 2, 3, &a, &a, &mut c).unwrap_err().to_string();
    assert!(err.contains("f64 only"), "{err}");
    // The tensor-core kernels exist for this GPU in f64 (dmma16 and dmma-pipelined on sm_90 only).
    assert!(GemmKernel::Dmma.supports::<f64>(&gpu));
    assert_eq!(GemmKernel::Dmma16.supports::<f64>(&gpu), gpu.ptx_arch() >= 90);
    assert_eq!(GemmKernel::DmmaPipelined.supports::<f64>(&gpu), gpu.ptx_arch() >= 90);
    assert!(!GemmKernel::DmmaPipelined.supports::<f32>(&gpu));
}
