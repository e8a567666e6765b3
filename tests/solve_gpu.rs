//! The GPU dense solvers (the Milan report's kernels with either back substitution, the blocked
//! LU, the mixed-precision solve, cuSOLVER and its TF32 refinement solver) on manufactured
//! systems (backward error, and the solution against the CPU's), on matrices that need
//! pivoting, on ill-conditioned ones, and on singular and invalid input.

mod common;

use common::{gpu, sm90_gpu};
use rgla::dense::DenseMatrix;
use rgla::gemm::update::UpdateKernel;
use rgla::gpu::CudaSlice;
use rgla::solve::blocked::{BLOCK_COLUMNS, BlockedLu, PANEL_WIDTHS, PanelExchange, default_block_column};
use rgla::solve::mixed::{MixedSolver, Path, Refinement};
use rgla::solve::{
    self, SolveKernel, backward_error, backward_error_bound, check_system, cpu, manufactured_system,
};
use rgla::vendor::cusolver::{CusolverIrs, CusolverLu};
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
/// The f64 methods: the above and the mixed-precision solve.
const METHODS_F64: [Method; 5] =
    [METHODS[0], METHODS[1], METHODS[2], METHODS[3], Method::Ours(SolveKernel::Mixed)];

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

/// A x, each entry summed in order.
fn times(a: &DenseMatrix<f64>, x: &[f64]) -> Vec<f64> {
    (0..a.rows).map(|i| (0..a.cols).map(|j| a.get(i, j) * x[j]).sum()).collect()
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

fn manufactured<T: Scalar>(sizes: &[usize], methods: &[Method], forward: f64) {
    let gpu = gpu();
    for &n in sizes {
        let (a, _, b) = manufactured_system::<T>(n, 1, 100 + n as u64).unwrap();
        let cpu_x = cpu::solve(&a, &b, 1).unwrap();
        for &method in methods {
            let what = format!("{method:?} {} n={n}", T::NAME);
            let x = solve(&gpu, method, &a, &b).unwrap_or_else(|e| panic!("{what}: {e}"));
            check_solution(&what, &a, &x, &b, 1, &cpu_x, forward);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn manufactured_solutions_f64() {
    manufactured::<f64>(&SIZES, &METHODS_F64, 1e-8);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn manufactured_solutions_f32() {
    manufactured::<f32>(&SIZES[..5], &METHODS, 5e-2);
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn blocked_lu_at_panel_boundaries_with_every_update() {
    let gpu = gpu();
    for n in [63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 513, 1000] {
        let (a, _, b) = manufactured_system::<f64>(n, 1, n as u64).unwrap();
        let tolerance = check_system(&a, &b, 1).unwrap();
        let cpu_x = cpu::solve(&a, &b, 1).unwrap();
        let [narrow, wide, widest] = BLOCK_COLUMNS;
        let mut variants = vec![(64, UpdateKernel::Simt, PanelExchange::Tagged, narrow)];
        if gpu.ptx_arch() >= 90 {
            variants.push((64, UpdateKernel::Pipelined, PanelExchange::Barrier, narrow));
        }
        if gpu.ptx_name() == "sm_90a" {
            variants.extend([
                (64, UpdateKernel::DmmaTma, PanelExchange::Tagged, narrow),
                (128, UpdateKernel::DmmaTma, PanelExchange::Barrier, narrow),
                (64, UpdateKernel::DmmaTma, PanelExchange::Tagged, wide),
                (128, UpdateKernel::DmmaTma, PanelExchange::Tagged, widest),
            ]);
        }
        for width in PANEL_WIDTHS {
            variants.extend(
                [PanelExchange::Tagged, PanelExchange::Barrier]
                    .map(|e| (width, UpdateKernel::Dmma, e, narrow)),
            );
            variants.push((width, UpdateKernel::Dmma, PanelExchange::Tagged, wide));
            variants.push((width, UpdateKernel::Dmma, PanelExchange::Barrier, widest));
        }
        for (width, update, exchange, block_column) in variants {
            let what =
                format!("blocked panel {width} {update:?} {exchange:?} block column {block_column} n={n}");
            let (da, db) = (gpu.upload(&a.data).unwrap(), gpu.upload(&b).unwrap());
            let mut dx = gpu.filled(n, f64::NAN).unwrap();
            let lu = BlockedLu::new(&gpu, n, tolerance).unwrap().with_update(update).with_exchange(exchange);
            let mut lu =
                lu.with_panel_width(&gpu, width).and_then(|lu| lu.with_block_column(block_column)).unwrap();
            lu.factor(&gpu, &da).unwrap();
            lu.check(&gpu).unwrap();
            lu.solve(&gpu, 1, &db, &mut dx).unwrap();
            check_solution(&what, &a, &gpu.download(&dx).unwrap(), &b, 1, &cpu_x, 1e-9);
            // The factors themselves: P A = L U.
            let (f, pivots) = lu.download_factors(&gpu).unwrap();
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

/// Real matrices whose U is ill-conditioned (FIDAP's ex2, plat362): every GPU solve is
/// backward stable, as LAPACK's and cuSOLVER's are (multiplying by the inverses of the
/// triangles' 32 x 32 diagonal blocks was not: PERF.md).
#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn solves_of_real_ill_conditioned_matrices_are_backward_stable() {
    let gpu = gpu();
    for name in ["ex2.mtx", "plat362.mtx"] {
        let coo = rgla::mm::read_coo::<f64>(common::data_dir().join("dense").join(name)).unwrap().coo;
        let a = DenseMatrix::from_coo(&coo).unwrap();
        let b = times(&a, &rgla::sparse::generate::vector_1_to_5::<f64>(a.rows, 1));
        let tolerance = check_system(&a, &b, 1).unwrap();
        let bound = backward_error_bound::<f64>(a.rows);
        let mut solves: Vec<(String, Vec<f64>)> = METHODS_F64
            .iter()
            .map(|&method| (format!("{method:?}"), solve(&gpu, method, &a, &b).unwrap()))
            .collect();
        for width in PANEL_WIDTHS {
            let (da, db) = (gpu.upload(&a.data).unwrap(), gpu.upload(&b).unwrap());
            let mut dx = gpu.filled(a.rows, f64::NAN).unwrap();
            let mut lu =
                BlockedLu::new(&gpu, a.rows, tolerance).unwrap().with_panel_width(&gpu, width).unwrap();
            lu.factor(&gpu, &da).unwrap();
            lu.solve(&gpu, 1, &db, &mut dx).unwrap();
            solves.push((format!("blocked, panel {width}"), gpu.download(&dx).unwrap()));
        }
        for (what, x) in solves {
            let error = backward_error(&a, &x, &b, 1);
            assert!(error <= bound, "{name}: {what}: backward error {error:.3e} above {bound:.1e}");
        }
    }
}

/// A race between the copies into shared memory and the reads from it shows as factors that
/// differ from run to run (one did, in the `DmmaTma` update's k-loop, PERF.md): the LU has no
/// atomics in its arithmetic, so every run must give the same bits.
#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn blocked_lu_factors_are_the_same_bits_every_run() {
    let gpu = gpu();
    // Trailing updates of widths both multiples of 8 and not (3001 - 256 j).
    for n in [2048, 3001] {
        let (a, _, _) = manufactured_system::<f64>(n, 1, 7).unwrap();
        let da = gpu.upload(&a.data).unwrap();
        let mut lu = BlockedLu::<f64>::new(&gpu, n, 0.0).unwrap();
        lu.factor(&gpu, &da).unwrap();
        let first = lu.download_factors(&gpu).unwrap();
        for run in 1..6 {
            lu.factor(&gpu, &da).unwrap();
            let again = lu.download_factors(&gpu).unwrap();
            assert!(again == first, "n={n}: run {run}'s factors differ from the first run's");
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
        let b = times(&a, &x_true);
        let cpu_x = cpu::solve(&a, &b, 1).unwrap();
        for method in METHODS_F64 {
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
        for method in METHODS_F64 {
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
    for method in METHODS_F64 {
        let err = solve(&gpu, method, &wide, &[1.0, 1.0]).unwrap_err().to_string();
        assert!(err.contains("square"), "{method:?}: {err}");
        let err = solve(&gpu, method, &nan, &[1.0, 1.0]).unwrap_err().to_string();
        assert!(err.contains("A[0][1] is NaN"), "{method:?}: {err}");
    }
    let err =
        BlockedLu::<f64>::new(&gpu, 8, 1e-300).unwrap().with_block_column(320).err().unwrap().to_string();
    assert!(err.contains("block column of 320 columns (256, 384 or 512)"), "{err}");
}

/// The mixed solve and cuSOLVER's TF32 solver on one system: A and b uploaded, x downloaded.
fn mixed_and_irs(gpu: &Gpu, a: &DenseMatrix<f64>, b: &[f64]) -> ((Vec<f64>, Refinement), Vec<f64>) {
    let n = a.rows;
    let (da, db) = (gpu.upload(&a.data).unwrap(), gpu.upload(b).unwrap());
    let mixed = mixed_solve(gpu, a, b, (&da, &db), default_block_column::<f32>(n));
    let mut dx = gpu.filled(n, f64::NAN).unwrap();
    CusolverIrs::new(gpu, n).unwrap().solve(gpu, &da, &db, &mut dx).unwrap();
    (mixed, gpu.download(&dx).unwrap())
}

/// The mixed solve of A x = b (`uploaded`: A and b on the device), its f32 LU taking
/// `block_column`: x downloaded.
fn mixed_solve(
    gpu: &Gpu,
    a: &DenseMatrix<f64>,
    b: &[f64],
    (da, db): (&CudaSlice<f64>, &CudaSlice<f64>),
    block_column: usize,
) -> (Vec<f64>, Refinement) {
    let tolerance = check_system(a, b, 1).unwrap();
    let mut dx = gpu.filled(a.rows, f64::NAN).unwrap();
    let mut solver =
        MixedSolver::new(gpu, a.rows, tolerance).unwrap().with_block_column(block_column).unwrap();
    let refinement = solver.solve(gpu, da, db, &mut dx).unwrap();
    (gpu.download(&dx).unwrap(), refinement)
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn mixed_solve_refines_to_the_f64_threshold() {
    let Some(gpu) = sm90_gpu("mixed_solve_refines_to_the_f64_threshold (the mixed solve's TF32 update)")
    else {
        return;
    };
    // Sizes around the panel width and not multiples of it (multiples of 4 from 1000 on: the
    // trailing updates on the copy engine's tiles; 2049 and 4097 fall back to `Pipelined`);
    // random and diagonally dominant.
    for n in [1, 2, 63, 64, 65, 129, 1000, 2049, 2052, 4097] {
        for dominant in [false, true] {
            let (mut a, _, _) = manufactured_system::<f64>(n, 1, 500 + n as u64).unwrap();
            if dominant {
                (0..n).for_each(|i| a.set(i, i, a.get(i, i) + n as f64));
            }
            let x_true: Vec<f64> = (0..n).map(|i| ((i + 1) as f64).sqrt().sin()).collect();
            let b = times(&a, &x_true);
            let what = format!("n={n}{}", if dominant { " dominant" } else { "" });
            let ((x, refinement), irs) = mixed_and_irs(&gpu, &a, &b);
            // Random matrices grow harder with n: beyond the smallest, the TF32 factors may no
            // longer refine (a step shrinking the error by less than half) and the solver falls
            // back, which must still give the f64 answer.
            if dominant {
                assert_eq!(refinement.path, Path::Refined, "mixed {what}: {refinement}");
            }
            let bound = backward_error_bound::<f64>(n);
            let error = backward_error(&a, &x, &b, 1);
            assert!(error <= bound, "mixed {what}: backward error {error:.3e} ({refinement})");
            assert!(refinement.backward_error <= bound, "mixed {what}: {refinement:?}");
            // The error reported is the returned x's (its residual computed beside the last
            // correction): the two residuals differ by their roundings, n eps ||A|| ||x|| each.
            let reported = (refinement.backward_error - error).abs();
            assert!(reported <= 2.0 * n as f64 * f64::EPSILON, "mixed {what}: {refinement:?}, {error:.3e}");
            // cuSOLVER's solver returned a backward error of 3e-9 at n = 1, above its
            // documented tolerance: it is held to the bound from the panel width on.
            let error = backward_error(&a, &irs, &b, 1);
            assert!(n < 64 || error <= bound, "cuSOLVER IRS {what}: backward error {error:.3e}");
            eprintln!("mixed {what}: {refinement}, backward error {:.2e}", refinement.backward_error);
            // The f32 LU with the wider block columns (it takes 384 from n = 16384 on), A and
            // b uploaded once for them.
            if dominant && n >= 1000 {
                let (da, db) = (gpu.upload(&a.data).unwrap(), gpu.upload(&b).unwrap());
                for block_column in BLOCK_COLUMNS[1..].iter().copied() {
                    let (x, refinement) = mixed_solve(&gpu, &a, &b, (&da, &db), block_column);
                    let what = format!("mixed {what}, block column {block_column}");
                    assert_eq!(refinement.path, Path::Refined, "{what}: {refinement}");
                    let error = backward_error(&a, &x, &b, 1);
                    assert!(error <= bound, "{what}: backward error {error:.3e}");
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn refinement_norms_are_the_largest_magnitudes_with_nan_first() {
    let gpu = gpu();
    // Lengths below, at and past one block's batch (16 x 1024), and not multiples of it.
    for n in [1usize, 1000, 16384, 16389, 40000] {
        let mut u = common::random_vec::<f64>(n, n as u64);
        let mut v = common::random_vec::<f64>(n, n as u64 + 1);
        u[n / 2] = -7.5;
        let expected_v = if n == 1 {
            v[0].abs()
        } else {
            (v[n - 1], v[n / 3]) = (f64::NEG_INFINITY, f64::NAN);
            f64::NAN
        };
        let (du, dv, mut norms) =
            (gpu.upload(&u).unwrap(), gpu.upload(&v).unwrap(), gpu.zeros::<f64>(2).unwrap());
        let launch = rgla::Launch::linear(1024, 1024).shared(32 * 8);
        // SAFETY: u and v hold n values, norms two.
        unsafe {
            rgla::kernels::solve::refine::max_abs_pair(&gpu, launch, n as u32, &du, &dv, &mut norms).unwrap()
        };
        let norms = gpu.download(&norms).unwrap();
        assert_eq!(norms[0], 7.5, "n={n}");
        assert!(norms[1] == expected_v || (norms[1].is_nan() && expected_v.is_nan()), "n={n}: {norms:?}");
    }
}

/// A = H1 diag(s) H2 with Householder reflections and singular values from 1 down to
/// 1 / condition (log-spaced): a dense matrix of known condition number.
fn conditioned(n: usize, condition: f64, seed: u64) -> DenseMatrix<f64> {
    let (_, v, w) = manufactured_system::<f64>(n, 2, seed).unwrap();
    let (v, w): (Vec<f64>, Vec<f64>) =
        ((0..n).map(|i| v[2 * i]).collect(), (0..n).map(|i| w[2 * i + 1]).collect());
    let (vv, ww) = (v.iter().map(|x| x * x).sum::<f64>(), w.iter().map(|x| x * x).sum::<f64>());
    let s: Vec<f64> = (0..n).map(|i| condition.powf(-(i as f64) / (n - 1) as f64)).collect();
    // (I - 2 v v^T / vv) diag(s) (I - 2 w w^T / ww), entry by entry.
    let sw: Vec<f64> = (0..n).map(|j| s[j] * w[j]).collect(); // diag(s) w
    let vsw: f64 = v.iter().zip(&sw).map(|(a, b)| a * b).sum(); // v^T diag(s) w
    let vs: Vec<f64> = (0..n).map(|j| v[j] * s[j]).collect(); // v^T diag(s)
    let mut a = DenseMatrix::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let d = if i == j { s[i] } else { 0.0 };
            let value =
                d - 2.0 * v[i] * vs[j] / vv - 2.0 * sw[i] * w[j] / ww + 4.0 * v[i] * vsw * w[j] / (vv * ww);
            a.set(i, j, value);
        }
    }
    a
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn mixed_solve_falls_back_on_ill_conditioned_matrices() {
    let Some(gpu) =
        sm90_gpu("mixed_solve_falls_back_on_ill_conditioned_matrices (the mixed solve's TF32 update)")
    else {
        return;
    };
    for n in [300, 1000] {
        let a = conditioned(n, 1e12, n as u64);
        let x_true: Vec<f64> = (0..n).map(|i| (i as f64).cos()).collect();
        let b = times(&a, &x_true);
        let ((x, refinement), irs) = mixed_and_irs(&gpu, &a, &b);
        assert!(matches!(refinement.path, Path::FellBack { .. }), "n={n}: {refinement}");
        let bound = backward_error_bound::<f64>(n);
        let error = backward_error(&a, &x, &b, 1);
        assert!(error <= bound, "mixed n={n}: backward error {error:.3e} ({refinement})");
        let error = backward_error(&a, &irs, &b, 1);
        assert!(error <= bound, "cuSOLVER IRS n={n}: backward error {error:.3e}");
        eprintln!("mixed ill-conditioned n={n}: {refinement}");
        // A well-conditioned matrix of the same construction refines.
        let a = conditioned(n, 10.0, n as u64);
        let ((_, refinement), _) = mixed_and_irs(&gpu, &a, &b);
        assert_eq!(refinement.path, Path::Refined, "n={n}, condition 10: {refinement}");
    }
}
