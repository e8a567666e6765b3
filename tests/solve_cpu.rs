//! The CPU dense solvers: the Milan report's serial elimination and the blocked LU, on
//! manufactured systems (backward error), against nalgebra's LU, on matrices that need
//! pivoting, and on singular and invalid input.

use rgla::Error;
use rgla::Scalar;
use rgla::dense::DenseMatrix;
use rgla::solve::{self, backward_error, backward_error_bound, cpu, manufactured_system};

/// A CPU solver of A x = b for one right-hand side.
type Solve<T> = fn(&DenseMatrix<T>, &[T]) -> rgla::Result<Vec<T>>;

/// Both CPU solvers.
fn solvers<T: Scalar>() -> [(&'static str, Solve<T>); 2] {
    [("serial", cpu::solve_serial), ("blocked", |a, b| cpu::solve(a, b, 1))]
}

fn check_manufactured<T: Scalar>(sizes: &[usize]) {
    for &n in sizes {
        let (a, x_true, b) = manufactured_system::<T>(n, 1, n as u64).unwrap();
        for (name, solve) in solvers::<T>() {
            let x = solve(&a, &b).unwrap_or_else(|e| panic!("{name} n={n}: {e}"));
            let error = backward_error(&a, &x, &b, 1);
            assert!(
                error <= backward_error_bound::<T>(n),
                "{name} {} n={n}: backward error {error:.3e}",
                T::NAME
            );
            // Random matrices are well conditioned enough for the solution itself to be close.
            let forward = rgla::verify::compare(&x, &x_true, 0.0).relative_error;
            assert!(forward < 1e4 * n as f64 * T::EPSILON, "{name} n={n}: forward error {forward:.3e}");
        }
    }
}

#[test]
fn manufactured_solutions_f64() {
    check_manufactured::<f64>(&[1, 2, 31, 33, 1000]);
}

#[test]
fn manufactured_solutions_f32() {
    check_manufactured::<f32>(&[1, 2, 31, 33, 200]);
}

#[test]
fn several_right_hand_sides() {
    let (n, nrhs) = (130, 3);
    let (a, _, b) = manufactured_system::<f64>(n, nrhs, 5).unwrap();
    let x = cpu::solve(&a, &b, nrhs).unwrap();
    assert!(backward_error(&a, &x, &b, nrhs) <= backward_error_bound::<f64>(n));
}

#[test]
fn agrees_with_nalgebra() {
    for n in [33, 200] {
        let (a, _, b) = manufactured_system::<f64>(n, 1, 11).unwrap();
        let reference = nalgebra::DMatrix::from_row_slice(n, n, &a.data)
            .lu()
            .solve(&nalgebra::DVector::from_column_slice(&b))
            .expect("nonsingular");
        for (name, solve) in solvers::<f64>() {
            let x = solve(&a, &b).unwrap();
            let c = rgla::verify::compare(&x, reference.as_slice(), 0.0);
            assert!(c.relative_error < 1e-11, "{name} n={n}: {:.3e} from nalgebra", c.relative_error);
        }
    }
}

#[test]
fn report_example_and_zero_diagonals_need_pivoting() {
    // The report's 3 x 3 example (its solution: 3, 4, -2) and a swap of two unknowns.
    let report = DenseMatrix::new(3, 3, vec![1.0, 1.0, 1.0, 2.0, 3.0, 5.0, 4.0, 0.0, 5.0]).unwrap();
    let swap = DenseMatrix::new(2, 2, vec![0.0, 1.0, 1.0, 0.0]).unwrap();
    for (name, solve) in solvers::<f64>() {
        let x = solve(&report, &[5.0, 8.0, 2.0]).unwrap();
        assert!(x.iter().zip([3.0, 4.0, -2.0]).all(|(g, w)| (g - w).abs() < 1e-14), "{name}: {x:?}");
        assert_eq!(solve(&swap, &[2.0, 3.0]).unwrap(), vec![3.0, 2.0], "{name}");
    }
    // Every diagonal entry zero: no step can go without a row swap.
    let n = 97;
    let (mut a, _, _) = manufactured_system::<f64>(n, 1, 3).unwrap();
    (0..n).for_each(|i| a.set(i, i, 0.0));
    let x_true: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a.get(i, j) * x_true[j]).sum()).collect();
    for (name, solve) in solvers::<f64>() {
        let x = solve(&a, &b).unwrap();
        assert!(backward_error(&a, &x, &b, 1) <= backward_error_bound::<f64>(n), "{name}");
    }
}

fn singular_column<T: Scalar>(
    a: &DenseMatrix<T>,
    solve: fn(&DenseMatrix<T>, &[T]) -> rgla::Result<Vec<T>>,
) -> usize {
    match solve(a, &vec![T::ONE; a.rows]) {
        Err(Error::Singular { column, .. }) => column,
        other => panic!("expected a singular-matrix error, got {other:?}"),
    }
}

#[test]
fn singular_matrices_name_the_column() {
    for (name, solve) in solvers::<f64>() {
        // A zero column: nothing to pivot on at that step.
        let (mut a, _, _) = manufactured_system::<f64>(10, 1, 1).unwrap();
        (0..10).for_each(|i| a.set(i, 3, 0.0));
        assert_eq!(singular_column(&a, solve), 3, "{name}: zero column");
        // Column 4 repeats column 1: after step 1 it has nothing left but rounding.
        let (mut a, _, _) = manufactured_system::<f64>(33, 1, 2).unwrap();
        (0..33).for_each(|i| a.set(i, 4, a.get(i, 1)));
        assert_eq!(singular_column(&a, solve), 4, "{name}: repeated column");
        // The classic [1 2 3; 4 5 6; 7 8 9]: column 2 = 2 column 1 - column 0.
        let a = DenseMatrix::new(3, 3, (1..=9).map(f64::from).collect()).unwrap();
        assert_eq!(singular_column(&a, solve), 2, "{name}: 1..9");
        let zero = DenseMatrix::new(1, 1, vec![0.0]).unwrap();
        assert_eq!(singular_column(&zero, solve), 0, "{name}: 1 x 1 zero");
        let err = solve(&zero, &[1.0]).unwrap_err().to_string();
        assert!(err.contains("singular") && err.contains("column 0"), "{err}");
    }
}

#[test]
fn invalid_input_is_an_error() {
    for (name, solve) in solvers::<f64>() {
        let wide = DenseMatrix::new(2, 3, vec![1.0; 6]).unwrap();
        let err = solve(&wide, &[1.0, 1.0]).unwrap_err().to_string();
        assert!(err.contains("square") && err.contains("2 x 3"), "{name}: {err}");
        let eye = DenseMatrix::new(2, 2, vec![1.0, 0.0, 0.0, 1.0]).unwrap();
        let err = solve(&eye, &[1.0]).unwrap_err().to_string();
        assert!(err.contains("needs 2 values"), "{name}: {err}");
        let mut nan = eye.clone();
        nan.set(1, 0, f64::NAN);
        let err = solve(&nan, &[1.0, 1.0]).unwrap_err().to_string();
        assert!(err.contains("A[1][0] is NaN"), "{name}: {err}");
        let err = solve(&eye, &[1.0, f64::INFINITY]).unwrap_err().to_string();
        assert!(err.contains("b[1][0] is inf"), "{name}: {err}");
        assert!(matches!(solve(&nan, &[1.0, 1.0]), Err(Error::InvalidInput(_))));
    }
    // The empty system has the empty solution.
    let empty = DenseMatrix::<f64>::new(0, 0, vec![]).unwrap();
    assert_eq!(cpu::solve(&empty, &[], 1).unwrap(), Vec::<f64>::new());
    assert_eq!(solve::check_system(&empty, &[], 1).unwrap(), 0.0);
}
