//! The GPU dense solvers (the Milan report's kernels with either back substitution, the blocked
//! LU, cuSOLVER) on manufactured systems (backward error, and the solution against the CPU's),
//! on matrices that need pivoting, and on singular and invalid input.

mod common;

use common::gpu;
use rgla::dense::DenseMatrix;
use rgla::gemm::update::UpdateKernel;
use rgla::solve::blocked::{BlockedLu, PANEL_WIDTHS, PanelExchange};
use rgla::solve::{
    self, SolveKernel, backward_error, backward_error_bound, check_system, cpu, manufactured_system,
};
use rgla::vendor::cusolver::CusolverLu;
use rgla::verify::compare;
use rgla::{Error, Gpu, Scalar};

const SIZES: [usize; 6] = [1, 2, 31, 33, 1000, 4097];

/// A GPU solver: one of ours, or cuSOLVER.
#[derive(Clone, Copy, Debug)]
enum Method {
    Ours(SolveKernel),
    Cusolver,
}

const METHODS: [Method; 4] = [
    Method::Ours(SolveKernel::Classic),
    Method::Ours(SolveKernel::ClassicParallel),
    Method::Ours(SolveKernel::Blocked),
    Method::Cusolver,
];

fn solve<T: Scalar>(gpu: &Gpu, method: Method, a: &DenseMatrix<T>, b: &[T]) -> rgla::Result<Vec<T>> {
    match method {
        Method::Ours(kernel) => solve::solve(gpu, kernel, a, b),
        Method::Cusolver => cusolver_solve(gpu, a, b, 1),
    }
}

fn cusolver_solve<T: Scalar>(gpu: &Gpu, a: &DenseMatrix<T>, b: &[T], nrhs: usize) -> rgla::Result<Vec<T>> {
    let tolerance = check_system(a, b, nrhs)?;
    let (da, db) = (gpu.upload(&a.data)?, gpu.upload(b)?);
    let mut dx = gpu.filled(b.len(), T::from_f64(f64::NAN))?;
    let mut lu = CusolverLu::new(gpu, a.rows, tolerance)?;
    lu.factor(gpu, &da)?;
    lu.check(gpu)?;
    lu.solve(gpu, nrhs, &db, &mut dx)?;
    gpu.download(&dx)
}

/// Backward error within the bound, and the solution within `forward` of the CPU's.
fn check_solution<T: Scalar>(
    what: &str,
    a: &DenseMatrix<T>,
    x: &[T],
    b: &[T],
    nrhs: usize,
    cpu_x: &[T],
    forward: f64,
) {
    let n = a.rows;
    let error = backward_error(a, x, b, nrhs);
    assert!(error <= backward_error_bound::<T>(n), "{what}: backward error {error:.3e}");
    compare(x, cpu_x, 0.0).check(what, forward).unwrap();
}

fn manufactured<T: Scalar>(sizes: &[usize], forward: f64) {
    let gpu = gpu();
    for &n in sizes {
        let (a, _, b) = manufactured_system::<T>(n, 1, 100 + n as u64).unwrap();
        let cpu_x = cpu::solve(&a, &b, 1).unwrap();
        for method in METHODS {
            let what = format!("{method:?} {} n={n}", T::NAME);
            let x = solve(&gpu, method, &a, &b).unwrap_or_else(|e| panic!("{what}: {e}"));
            check_solution(&what, &a, &x, &b, 1, &cpu_x, forward);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn manufactured_solutions_f64() {
    manufactured::<f64>(&SIZES, 1e-8);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn manufactured_solutions_f32() {
    manufactured::<f32>(&SIZES[..5], 5e-2);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn blocked_lu_at_panel_boundaries_with_either_update() {
    let gpu = gpu();
    for n in [63, 64, 65, 127, 128, 129, 255, 256, 257, 1000] {
        let (a, _, b) = manufactured_system::<f64>(n, 1, n as u64).unwrap();
        let tolerance = check_system(&a, &b, 1).unwrap();
        let cpu_x = cpu::solve(&a, &b, 1).unwrap();
        let mut variants = vec![(64, UpdateKernel::Simt, PanelExchange::Flags)];
        for width in PANEL_WIDTHS {
            variants.extend(
                [PanelExchange::Flags, PanelExchange::Barrier].map(|e| (width, UpdateKernel::Dmma, e)),
            );
        }
        for (width, update, exchange) in variants {
            let what = format!("blocked panel {width} {update:?} {exchange:?} n={n}");
            let (da, db) = (gpu.upload(&a.data).unwrap(), gpu.upload(&b).unwrap());
            let mut dx = gpu.filled(n, f64::NAN).unwrap();
            let lu = BlockedLu::new(&gpu, n, tolerance).unwrap().with_update(update).with_exchange(exchange);
            let mut lu = lu.with_panel_width(&gpu, width).unwrap();
            lu.factor(&gpu, &da).unwrap();
            lu.check(&gpu).unwrap();
            lu.solve(&gpu, 1, &db, &mut dx).unwrap();
            check_solution(&what, &a, &gpu.download(&dx).unwrap(), &b, 1, &cpu_x, 1e-9);
            // The factors themselves: P A = L U.
            let (factors, pivots) = lu.factors();
            let (f, pivots) = (gpu.download(factors).unwrap(), gpu.download(pivots).unwrap());
            let mut pa = a.data.clone();
            for (i, &p) in pivots.iter().enumerate() {
                for j in 0..n {
                    pa.swap(i * n + j, p as usize * n + j);
                }
            }
            let mut product = vec![0.0; n * n];
            for i in 0..n {
                for s in 0..n {
                    let l = if s < i {
                        f[i * n + s]
                    } else if s == i {
                        1.0
                    } else {
                        continue;
                    };
                    for j in s..n {
                        product[i * n + j] += l * f[s * n + j];
                    }
                }
            }
            compare(&product, &pa, 0.0).check(&format!("{what}: L U against P A"), 1e-13).unwrap();
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn several_right_hand_sides() {
    let gpu = gpu();
    for (n, nrhs) in [(33, 3), (1000, 5)] {
        let (a, _, b) = manufactured_system::<f64>(n, nrhs, 7).unwrap();
        let cpu_x = cpu::solve(&a, &b, nrhs).unwrap();
        let x = solve::solve_many(&gpu, &a, &b, nrhs).unwrap();
        check_solution(&format!("blocked n={n} nrhs={nrhs}"), &a, &x, &b, nrhs, &cpu_x, 1e-9);
        let x = cusolver_solve(&gpu, &a, &b, nrhs).unwrap();
        check_solution(&format!("cuSOLVER n={n} nrhs={nrhs}"), &a, &x, &b, nrhs, &cpu_x, 1e-9);
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn zero_diagonals_need_pivoting() {
    let gpu = gpu();
    let swap = DenseMatrix::new(2, 2, vec![0.0, 1.0, 1.0, 0.0]).unwrap();
    let report = DenseMatrix::new(3, 3, vec![1.0, 1.0, 1.0, 2.0, 3.0, 5.0, 4.0, 0.0, 5.0]).unwrap();
    for n in [97, 300] {
        let (mut a, _, _) = manufactured_system::<f64>(n, 1, 3).unwrap();
        (0..n).for_each(|i| a.set(i, i, 0.0));
        let x_true: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a.get(i, j) * x_true[j]).sum()).collect();
        let cpu_x = cpu::solve(&a, &b, 1).unwrap();
        for method in METHODS {
            let what = format!("{method:?} zero diagonal n={n}");
            check_solution(&what, &a, &solve(&gpu, method, &a, &b).unwrap(), &b, 1, &cpu_x, 1e-9);
            let x = solve(&gpu, method, &swap, &[2.0, 3.0]).unwrap();
            assert_eq!(x, vec![3.0, 2.0], "{method:?}");
            let x = solve(&gpu, method, &report, &[5.0, 8.0, 2.0]).unwrap();
            assert!(x.iter().zip([3.0, 4.0, -2.0]).all(|(g, w)| (g - w).abs() < 1e-13), "{method:?}: {x:?}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn singular_matrices_name_the_column() {
    let gpu = gpu();
    // (n, which column, made how): a zero column, a repeated column (in a later panel of the
    // blocked LU too), and the classic [1 2 3; 4 5 6; 7 8 9].
    let mut cases: Vec<(DenseMatrix<f64>, usize)> = Vec::new();
    for (n, column, copy_of) in [(10, 3, None), (300, 200, None), (33, 4, Some(1)), (300, 130, Some(2))] {
        let (mut a, _, _) = manufactured_system::<f64>(n, 1, n as u64 + column as u64).unwrap();
        (0..n).for_each(|i| a.set(i, column, copy_of.map_or(0.0, |c| a.get(i, c))));
        cases.push((a, column));
    }
    cases.push((DenseMatrix::new(3, 3, (1..=9).map(f64::from).collect()).unwrap(), 2));
    cases.push((DenseMatrix::new(1, 1, vec![0.0]).unwrap(), 0));
    for (a, column) in &cases {
        let b = vec![1.0; a.rows];
        for method in METHODS {
            match solve(&gpu, method, a, &b) {
                Err(Error::Singular { column: found, .. }) => {
                    assert_eq!(found, *column, "{method:?} n={}", a.rows)
                }
                other => panic!("{method:?} n={}: expected a singular-matrix error, got {other:?}", a.rows),
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn invalid_input_is_an_error() {
    let gpu = gpu();
    let wide = DenseMatrix::new(2, 3, vec![1.0; 6]).unwrap();
    let mut nan = DenseMatrix::new(2, 2, vec![1.0, 0.0, 0.0, 1.0]).unwrap();
    nan.set(0, 1, f64::NAN);
    for method in METHODS {
        let err = solve(&gpu, method, &wide, &[1.0, 1.0]).unwrap_err().to_string();
        assert!(err.contains("square"), "{method:?}: {err}");
        let err = solve(&gpu, method, &nan, &[1.0, 1.0]).unwrap_err().to_string();
        assert!(err.contains("A[0][1] is NaN"), "{method:?}: {err}");
    }
}
