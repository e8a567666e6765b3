//! The CPU GEMMs every GPU result is checked against: the f64 reference (`matrixmultiply`),
//! the Naples report's loop and a rayon version.

use rayon::prelude::*;

use super::check_shapes;
use crate::Scalar;
use crate::error::Result;

/// f64 reference (the oracle for both precisions): `matrixmultiply`'s blocked, multithreaded
/// DGEMM on inputs widened to f64.
pub fn reference<T: Scalar>(m: usize, n: usize, k: usize, a: &[T], b: &[T]) -> Vec<f64> {
    let a: Vec<f64> = a.iter().map(|&v| v.into()).collect();
    let b: Vec<f64> = b.iter().map(|&v| v.into()).collect();
    let mut c = vec![0.0; m * n];
    if m > 0 && n > 0 {
        // SAFETY: row-major strides of the m x k, k x n and m x n buffers just built.
        unsafe {
            matrixmultiply::dgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            );
        }
    }
    c
}

/// The Naples report's CPU loop: `C[i][j] = sum_k A[i][k] B[k][j]`, one element at a time.
pub fn serial<T: Scalar>(m: usize, n: usize, k: usize, a: &[T], b: &[T], c: &mut [T]) -> Result<()> {
    check_shapes(m, n, k, a.len(), b.len(), c.len())?;
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).fold(T::ZERO, |sum, p| a[i * k + p].mul_add(b[p * n + j], sum));
        }
    }
    Ok(())
}

/// Rayon CPU GEMM: rows of C in parallel, the i-k-j order so the inner loop streams a row of
/// B into a row of C, and k blocked to keep B's rows in cache.
pub fn rayon<T: Scalar>(m: usize, n: usize, k: usize, a: &[T], b: &[T], c: &mut [T]) -> Result<()> {
    check_shapes(m, n, k, a.len(), b.len(), c.len())?;
    const KB: usize = 256;
    if n == 0 {
        return Ok(());
    }
    c.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
        row.fill(T::ZERO);
        for k0 in (0..k).step_by(KB) {
            for p in k0..(k0 + KB).min(k) {
                let aip = a[i * k + p];
                for (cj, &bj) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                    *cj = aip.mul_add(bj, *cj);
                }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_kernels_agree_with_the_reference() {
        let (m, n, k) = (7, 5, 9);
        let a: Vec<f64> = (0..m * k).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..k * n).map(|i| (i as f64 * 0.11).cos()).collect();
        let expect = reference(m, n, k, &a, &b);
        let mut c = vec![f64::NAN; m * n];
        serial(m, n, k, &a, &b, &mut c).unwrap();
        assert!(crate::verify::compare(&c, &expect, 0.0).passes(1e-14));
        let mut c = vec![f64::NAN; m * n];
        rayon(m, n, k, &a, &b, &mut c).unwrap();
        assert!(crate::verify::compare(&c, &expect, 0.0).passes(1e-14));
    }
}
