//! axpy: the end-to-end example, CPU reference and GPU kernel.

mod common;

use common::{gpu, random_vec};
use rgla::Scalar;
use rgla::blas1::{axpy, axpy_cpu};
use rgla::verify::compare;

#[test]
fn axpy_cpu_matches_hand_computation() {
    let mut y = vec![1.0f64, 2.0, 3.0];
    axpy_cpu(2.0, &[1.0, -1.0, 0.5], &mut y);
    assert_eq!(y, [3.0, 0.0, 4.0]);
}

fn check_axpy_gpu<T: Scalar>() {
    let gpu = gpu();
    for n in [0usize, 1, 31, 1000, 1 << 20, (1 << 20) + 13] {
        let x = random_vec::<T>(n, 10);
        let y0 = random_vec::<T>(n, 11);
        let a = T::from_f64(-1.75);
        let mut expect = y0.clone();
        axpy_cpu(a, &x, &mut expect);
        if n == 0 {
            continue; // zero-length device buffers are not allocated by the driver
        }
        let dx = gpu.upload(&x).unwrap();
        let mut dy = gpu.upload(&y0).unwrap();
        axpy(&gpu, a, &dx, &mut dy).unwrap();
        let got = gpu.download(&dy).unwrap();
        // Both sides use fused multiply-add, so they agree to the bit.
        let c = compare(&got, &expect, 0.0);
        assert_eq!(c.max_abs_error, 0.0, "n={n}: {c:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn axpy_gpu_f32() {
    check_axpy_gpu::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn axpy_gpu_f64() {
    check_axpy_gpu::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn axpy_rejects_mismatched_lengths() {
    let gpu = gpu();
    let x = gpu.upload(&[1.0f32; 4]).unwrap();
    let mut y = gpu.upload(&[1.0f32; 5]).unwrap();
    let err = axpy(&gpu, 1.0, &x, &mut y).unwrap_err();
    assert!(err.to_string().contains("x has 4 elements, y 5"), "{err}");
}
