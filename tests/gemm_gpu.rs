//! Every GEMM kernel and tile size against the f64 CPU reference, on square and odd shapes;
//! the trailing-update kernels (C -= A B on blocks with leading dimensions) against the CPU.

mod common;

use common::{gpu, random_vec};
use rgla::gemm::update::{UpdateKernel, update};
use rgla::gemm::{self, GemmKernel};
use rgla::gpu::{MatrixView, MatrixViewMut};
use rgla::vendor::cublas::{Cublas, CublasGemm};
use rgla::verify::compare;
use rgla::{Gpu, Scalar};

/// (m, k, n): one element, sizes off every tile, k = 1 and tall and skinny, a wide short
/// product, a square one, and one just past the tiles; more k-tiles than `dmma-tma`'s stages,
/// the last one partial, with n a multiple of its column groups but not of its tile. On 132
/// SMs the last tiles are split along k: `dmma-tma` splits the one tile of 2 x 3000 x 7 in
/// 16 pieces, the 42 past 2100 x 1100's first wave in 4 pieces of 8 or 9 k-tiles and the 33
/// past 4097 x 4099's eighth in 8; `blocked-wide` splits 2 x 3000 x 7 in 16, 2100 x 1100 in 3
/// and 1000 x 1000 in 4 (all their tiles; the last piece with a partial k-tile in the last
/// two), and 4097 x 4099's last row of tiles in 4 (A and B read from aligned copies).
const SHAPES: [(usize, usize, usize); 10] = [
    (1, 1, 1),
    (31, 33, 17),
    (129, 83, 72),
    (1000, 7, 513),
    (5000, 1, 3),
    (2, 3000, 7),
    (256, 256, 256),
    (2100, 515, 1100),
    (4097, 4095, 4099),
    (1000, 1004, 1000),
];

fn check_all<T: Scalar + CublasGemm>(tolerance: f64) {
    let gpu = gpu();
    let cublas = Cublas::new(&gpu).unwrap();
    for (m, k, n) in SHAPES {
        let a = random_vec::<T>(m * k, 1);
        let b = random_vec::<T>(k * n, 2);
        let expect = gemm::cpu::reference(m, n, k, &a, &b);
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        let run = |what: String, f: &dyn Fn(&Gpu, &mut rgla::gpu::CudaSlice<T>) -> rgla::Result<()>| {
            let mut dc = gpu.filled(m * n, T::from_f64(f64::NAN)).unwrap();
            f(&gpu, &mut dc).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = gpu.download(&dc).unwrap();
            compare(&got, &expect, 1e-3).check(&what, tolerance).unwrap();
        };
        let exact = |k: &GemmKernel| k.supports::<T>(&gpu) && !k.is_reduced_precision();
        for kernel in GemmKernel::all().into_iter().filter(exact) {
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
    // The tensor-core kernels exist for this GPU in f64 (dmma16 and dmma-pipelined on sm_90 only,
    // dmma-tma in the sm_90a module).
    assert!(GemmKernel::Dmma.supports::<f64>(&gpu));
    assert_eq!(GemmKernel::Dmma16.supports::<f64>(&gpu), gpu.ptx_arch() >= 90);
    assert_eq!(GemmKernel::DmmaPipelined.supports::<f64>(&gpu), gpu.ptx_arch() >= 90);
    assert!(!GemmKernel::DmmaPipelined.supports::<f32>(&gpu));
    assert_eq!(GemmKernel::DmmaTma.supports::<f64>(&gpu), gpu.ptx_name() == "sm_90a");
    assert!(!GemmKernel::DmmaTma.supports::<f32>(&gpu));
    let err = gemm::gemm(&gpu, GemmKernel::DmmaTma, 2, 2, 3, &a, &a, &mut c).unwrap_err().to_string();
    assert!(err.contains("f64 only"), "{err}");
    assert!(!GemmKernel::Tf32.supports::<f64>(&gpu));
    let (a, b) = (gpu.zeros::<f64>(6).unwrap(), gpu.zeros::<f64>(6).unwrap());
    let mut c = gpu.zeros::<f64>(4).unwrap();
    let err = gemm::gemm(&gpu, GemmKernel::Tf32, 2, 2, 3, &a, &b, &mut c).unwrap_err().to_string();
    assert!(err.contains("f32 only"), "{err}");
}

/// The TF32 kernels and cuBLAS in TF32 mode against the f64 reference, entry by entry within
/// their TF32 bound on |A| |B| (inputs rounded, or truncated: `tf32-wgmma` and cuBLAS); and
/// less accurate than f32 (so the tensor cores did round). Where k or n is not a multiple of 4,
/// both run on copies of A or B in aligned rows (the shapes added for the
/// warpgroup-MMA kernel: edges of its 256 x 128 x 32 tiles).
#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn tf32_gemm_within_its_error_bound() {
    let gpu = gpu();
    if !GemmKernel::Tf32.supports::<f32>(&gpu) {
        eprintln!("SKIPPED: the TF32 kernel needs an sm_90 GPU");
        return;
    }
    let wgmma = GemmKernel::Tf32Wgmma.supports::<f32>(&gpu);
    if !wgmma {
        eprintln!("SKIPPED: tf32-wgmma needs the sm_90a module (H100, H200); {} loaded", gpu.ptx_name());
    }
    // Ours, then cuBLAS (None).
    let ours = [GemmKernel::Tf32].into_iter().chain(wgmma.then_some(GemmKernel::Tf32Wgmma));
    let kernels: Vec<Option<GemmKernel>> = ours.map(Some).chain([None]).collect();
    let cublas = Cublas::new_tf32(&gpu).unwrap();
    // (m, k, n): one k-tile or several, even and odd counts (the kernel runs them in pairs),
    // more k-tiles than stages; m and n at, below and past the 256 x 128 tile.
    let wgmma_shapes = [
        (1, 4, 4),
        (100, 36, 68),
        (129, 1000, 132),
        (257, 4100, 260),
        (640, 96, 384),
        (256, 32, 128),
        (513, 256, 388),
        (600, 200, 700),
    ];
    for (m, k, n) in SHAPES.into_iter().chain([(1, 300, 1), (129, 1001, 65)]).chain(wgmma_shapes) {
        let a = random_vec::<f32>(m * k, 1);
        let b = random_vec::<f32>(k * n, 2);
        let expect = gemm::cpu::reference(m, n, k, &a, &b);
        let abs = |v: &[f32]| v.iter().map(|x| x.abs()).collect::<Vec<f32>>();
        let magnitude = gemm::cpu::reference(m, n, k, &abs(&a), &abs(&b));
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        for &kernel in &kernels {
            let vendor = kernel.is_none();
            let what = format!("{} {m}x{k}x{n}", kernel.map_or("cuBLAS TF32".into(), |k| k.name()));
            let mut dc = gpu.filled(m * n, f32::NAN).unwrap();
            match kernel {
                None => cublas.gemm(m, n, k, &da, &db, &mut dc).unwrap(),
                Some(kernel) => gemm::gemm(&gpu, kernel, m, n, k, &da, &db, &mut dc).unwrap(),
            }
            let got = gpu.download(&dc).unwrap();
            let name = kernel.map_or("cublas-tf32".into(), |kernel| kernel.name());
            let bound = gemm::reduced_precision_bound_of(&name, k).expect("a TF32 kernel");
            let mut worst = 0.0f64;
            for ((&g, &e), &mag) in got.iter().zip(&expect).zip(&magnitude) {
                let error = (g as f64 - e).abs();
                assert!(error <= bound * mag, "{what}: {g} against {e} (bound {:.3e})", bound * mag);
                worst = worst.max(error / mag.max(f64::MIN_POSITIVE));
            }
            // (cuBLAS may pick a non-tensor-core kernel for some shapes, which TF32 mode allows.)
            if k >= 256 && !vendor {
                assert!(worst > 2.0 * f32::EPSILON as f64, "{what}: error {worst:.2e} is f32's, not TF32's");
            }
        }
    }
}

/// C -= A B on blocks inside larger buffers, against the same on the CPU.
fn check_update<T: Scalar>(kernel: UpdateKernel, tolerance: f64) {
    let gpu = gpu();
    // (m, n, k, offset): offsets of 0 keep the rows 16-byte aligned (vector loads, the copy
    // engine's tiles), 1 does not. 600 x 300 x 256: the LU's k, several tiles each way. n not a
    // multiple of 8 (70, 513, 300) leaves `DmmaTma` columns past its last group of 8; 200 x 128
    // x 100 has none, and more k-tiles than its stages.
    for (m, n, k, offset) in [
        (1usize, 1usize, 1usize, 0usize),
        (31, 33, 17, 1),
        (130, 70, 64, 0),
        (1000, 513, 64, 0),
        (257, 300, 64, 1),
        (600, 300, 256, 0),
        (200, 128, 100, 0),
    ] {
        // Every block a part of wider rows, their starts as aligned as the block's first.
        let ld = (n.max(k) + 4).next_multiple_of(4) + offset;
        let (a_rows, b_rows, c_rows) = (m, k, m);
        let a = random_vec::<T>(offset + a_rows * ld, 1);
        let b = random_vec::<T>(offset + b_rows * ld, 2);
        let c = random_vec::<T>(offset + c_rows * ld, 3);
        let mut expect: Vec<f64> = c.iter().map(|&v| v.into()).collect();
        for i in 0..m {
            for j in 0..n {
                let sum: f64 =
                    (0..k).map(|p| a[offset + i * ld + p].into() * b[offset + p * ld + j].into()).sum();
                expect[offset + i * ld + j] -= sum;
            }
        }
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        let mut dc = gpu.upload(&c).unwrap();
        let a = MatrixView::new(&da, offset, m, k, ld).unwrap();
        let b = MatrixView::new(&db, offset, k, n, ld).unwrap();
        let c = MatrixViewMut::new(&mut dc, offset, m, n, ld).unwrap();
        update(&gpu, kernel, a, b, c).unwrap();
        let got = gpu.download(&dc).unwrap();
        // Everything outside the block is untouched; inside it matches.
        compare(&got, &expect, 0.0)
            .check(&format!("update {kernel:?} {} {m}x{n}x{k}+{offset}", T::NAME), tolerance)
            .unwrap();
    }
    // Blocks that do not fit their buffers, or each other, are errors before any launch.
    let small = gpu.zeros::<T>(4).unwrap();
    let err = MatrixView::new(&small, 0, 2, 3, 2).unwrap_err().to_string();
    assert!(err.contains("does not fit a buffer of 4 elements"), "{err}");
    let mut out = gpu.zeros::<T>(4).unwrap();
    let (a, b) = (MatrixView::full(&small, 2, 2).unwrap(), MatrixView::full(&small, 1, 4).unwrap());
    let err =
        update(&gpu, kernel, a, b, MatrixViewMut::full(&mut out, 2, 2).unwrap()).unwrap_err().to_string();
    assert!(err.contains("A is 2 x 2, B 1 x 4"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn trailing_update_kernels() {
    check_update::<f64>(UpdateKernel::Dmma, 1e-13);
    check_update::<f64>(UpdateKernel::Simt, 1e-13);
    check_update::<f32>(UpdateKernel::Simt, 1e-5);
    if gpu().ptx_arch() >= 90 {
        check_update::<f64>(UpdateKernel::Pipelined, 1e-13);
        check_update::<f32>(UpdateKernel::Pipelined, gemm::tf32_error_bound(256));
    } else {
        eprintln!("SKIPPED: the pipelined update kernel needs an sm_90 GPU");
    }
    if gpu().ptx_name() == "sm_90a" {
        check_update::<f64>(UpdateKernel::DmmaTma, 1e-13);
        check_update::<f32>(UpdateKernel::Wgmma, gemm::tf32_truncated_error_bound(256));
        // f32 only, and only on the GPU's own stream (where its tensor maps are kept).
        let gpu = gpu();
        let (a, mut c) = (gpu.zeros::<f64>(16).unwrap(), gpu.zeros::<f64>(16).unwrap());
        let (a, c) = (MatrixView::full(&a, 4, 4).unwrap(), MatrixViewMut::full(&mut c, 4, 4).unwrap());
        let err = update(&gpu, UpdateKernel::Wgmma, a, a, c).unwrap_err().to_string();
        assert!(err.contains("f32 only"), "{err}");
        let (a, mut c) = (gpu.zeros::<f32>(16).unwrap(), gpu.zeros::<f32>(16).unwrap());
        let (a, c) = (MatrixView::full(&a, 4, 4).unwrap(), MatrixViewMut::full(&mut c, 4, 4).unwrap());
        let stream = gpu.urgent_stream().unwrap();
        let err = update(gpu.on(&stream), UpdateKernel::Wgmma, a, a, c).unwrap_err().to_string();
        assert!(err.contains("the GPU's own stream"), "{err}");
        let mut c = gpu.zeros::<f32>(16).unwrap();
        let c = MatrixViewMut::full(&mut c, 4, 4).unwrap();
        let err = update(&gpu, UpdateKernel::DmmaTma, a, a, c).unwrap_err().to_string();
        assert!(err.contains("f64 only"), "{err}");
    } else {
        eprintln!("SKIPPED: the wgmma and dmma-tma update kernels need an H100 or H200 (the sm_90a module)");
    }
}
