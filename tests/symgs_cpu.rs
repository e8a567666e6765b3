//! SymGS on the CPU: the references by hand and against each other, the input errors, the
//! level and color analyses, and the tolerance the GPU tests use (checked here by emulating
//! the GPU's summation order), plus PCG.

mod common;

use common::{overflowed, random_vec, real_matrices};
use rgla::sparse::{Csr, generate};
use rgla::symgs::Direction;
use rgla::symgs::cpu::{CpuSymgs, checked_diagonal, residual_norm, symgs, symgs_report_variant};
use rgla::symgs::levels::levels_cpu;
use rgla::symgs::multicolor::{
    Coloring, ColoringMethod, MulticolorOrder, greedy_coloring, greedy_coloring_in_order,
};
use rgla::symgs::pcg::{PcgOptions, pcg_cpu};
use rgla::verify::compare;
use rgla::{Error, Scalar};

/// The matrices every smoother is checked on: the HPCG stencil, SPD and unsymmetric random
/// matrices with a full diagonal, and the real test files SymGS accepts.
fn corpus<T: Scalar>() -> Vec<(String, Csr<T>)> {
    let mut all: Vec<(String, Csr<T>)> = vec![
        ("stencil27 16^3".into(), generate::stencil27(16, 16, 16).unwrap()),
        ("poisson3d 9x10x11".into(), generate::poisson3d(9, 10, 11).unwrap()),
        ("random spd 3000 27/row".into(), generate::random_spd(3000, 27, 1).unwrap()),
        (
            "banded 4000 bw 60, 9/row, unsymmetric".into(),
            generate::banded(4000, 60, Some(9), true, 2).unwrap(),
        ),
        ("road 5000".into(), generate::road(5000, 100, 3).unwrap()),
        ("fem 4^3 dof 3".into(), generate::fem(4, 4, 4, 3, 4).unwrap()),
    ];
    all.extend(real_matrices::<T>().into_iter().filter(|(_, a)| checked_diagonal(a).is_ok()));
    all
}

/// The GPU kernels' arithmetic for one row, emulated: 32 lanes each sum their strided share
/// with fused multiply-adds, a butterfly reduction adds the lanes, then
/// `(rhs - sum + a_ii old) / a_ii`.
fn warp_row<T: Scalar>(cols: &[u32], values: &[T], value_of: impl Fn(usize) -> T) -> T {
    let mut lanes = [T::ZERO; 32];
    for (k, (&c, &v)) in cols.iter().zip(values).enumerate() {
        lanes[k % 32] = v.mul_add(value_of(c as usize), lanes[k % 32]);
    }
    let mut offset = 16;
    while offset > 0 {
        let before = lanes;
        for (l, lane) in lanes.iter_mut().enumerate() {
            *lane = before[l] + before[l ^ offset];
        }
        offset /= 2;
    }
    lanes[0]
}

/// One symmetric sweep in the GPU's arithmetic and the exact-order variants' dataflow (out of
/// place: forward x -> tmp, backward tmp -> x).
fn sweep_gpu_arithmetic<T: Scalar>(a: &Csr<T>, r: &[T], x: &mut [T]) {
    let d = a.diagonal();
    let n = a.rows();
    let mut tmp = vec![T::ZERO; n];
    for i in 0..n {
        let (cols, values) = a.row(i);
        let sum = warp_row(cols, values, |j| if j < i { tmp[j] } else { x[j] });
        tmp[i] = (r[i] - sum + d[i] * x[i]) / d[i];
    }
    for i in (0..n).rev() {
        let (cols, values) = a.row(i);
        let sum = warp_row(cols, values, |j| if j > i { x[j] } else { tmp[j] });
        x[i] = (r[i] - sum + d[i] * tmp[i]) / d[i];
    }
}

/// The tolerance the GPU tests use for the exact-order variants (keep in step with
/// tests/symgs_gpu.rs): rounding of one row's sum, with room for its propagation.
fn exact_order_tolerance<T: Scalar>(a: &Csr<T>) -> f64 {
    4.0 * T::tolerance(a.row_stats().max)
}

#[test]
fn rejects_what_symgs_cannot_run_on() {
    let message = |e: Error| e.to_string();
    let non_square = generate::random_uniform::<f64>(4, 5, 2, 1).unwrap();
    assert!(message(checked_diagonal(&non_square).unwrap_err()).contains("square matrix, got 4 x 5"));

    // Row 1 has no diagonal entry.
    let missing = Csr::new(3, 3, vec![0, 1, 2, 3], vec![0, 0, 2], vec![1.0, 1.0, 1.0]).unwrap();
    assert!(
        message(checked_diagonal(&missing).unwrap_err())
            .contains("row 1 (counting from 0) has no diagonal entry")
    );

    let zero = Csr::new(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, 0.0]).unwrap();
    assert!(
        message(checked_diagonal(&zero).unwrap_err())
            .contains("diagonal entry of row 1 (counting from 0) is zero")
    );

    let nan = Csr::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, f64::NAN, 1.0]).unwrap();
    assert!(
        message(checked_diagonal(&nan).unwrap_err()).contains("row 0, column 1 (counting from 0) is NaN")
    );

    let a = generate::stencil27::<f64>(3, 3, 3).unwrap();
    let mut x = vec![0.0; 27];
    let mut r = vec![1.0; 27];
    r[5] = f64::INFINITY;
    assert!(message(symgs(&a, &r, &mut x).unwrap_err()).contains("r[5] is inf"));
    x[2] = f64::NAN;
    assert!(message(symgs_report_variant(&a, &mut x).unwrap_err()).contains("x[2] is NaN"));
    let mut short = vec![0.0; 26];
    assert!(message(symgs(&a, &[1.0; 27], &mut short).unwrap_err()).contains("x has 26 values"));
}

#[test]
fn report_variant_is_the_general_sweep_with_x_as_right_hand_side() {
    let a = generate::stencil27::<f64>(6, 5, 4).unwrap();
    let smoother = CpuSymgs::new(&a).unwrap();
    let mut x = random_vec::<f64>(a.rows(), 1);
    let mut expect = x.clone();
    smoother.sweep_report_variant(&mut x).unwrap();
    for direction in [Direction::Forward, Direction::Backward] {
        let rhs = expect.clone();
        smoother.half_sweep(direction, &rhs, &mut expect);
    }
    assert_eq!(x, expect);
}

#[test]
fn sweeps_reduce_the_residual() {
    for (name, a) in corpus::<f64>().into_iter().filter(|(name, _)| !name.ends_with(".mtx")) {
        let smoother = CpuSymgs::new(&a).unwrap();
        let r = random_vec::<f64>(a.rows(), 2);
        let mut x = vec![0.0; a.rows()];
        let mut before = residual_norm(&a, &r, &x);
        for sweep in 0..3 {
            smoother.sweep(&r, &mut x).unwrap();
            let after = residual_norm(&a, &r, &x);
            assert!(after < 0.9 * before, "{name}: sweep {sweep}: residual {before:e} -> {after:e}");
            before = after;
        }
    }
}

/// The GPU's summation order changes a sweep by rounding only, well within the tolerance the
/// GPU tests use: what makes that tolerance trustworthy before any GPU run.
fn gpu_arithmetic_is_within_tolerance<T: Scalar>() {
    for (name, a) in corpus::<T>() {
        let r = random_vec::<T>(a.rows(), 3);
        let x0 = random_vec::<T>(a.rows(), 4);
        let mut expect = x0.clone();
        symgs(&a, &r, &mut expect).unwrap();
        if overflowed(&format!("{name} {}", T::NAME), &expect) {
            continue;
        }
        let mut got = x0.clone();
        sweep_gpu_arithmetic(&a, &r, &mut got);
        let c = compare(&got, &expect, 1e-3);
        let tolerance = exact_order_tolerance(&a);
        println!("{name} {}: relative error {:.2e} (tolerance {tolerance:.1e})", T::NAME, c.relative_error);
        // A tenth of the tolerance: the margin the GPU tests keep.
        c.check(&format!("{name} {}", T::NAME), tolerance / 10.0).unwrap();
    }
}

#[test]
fn gpu_arithmetic_is_within_tolerance_f64() {
    gpu_arithmetic_is_within_tolerance::<f64>();
}

#[test]
fn gpu_arithmetic_is_within_tolerance_f32() {
    gpu_arithmetic_is_within_tolerance::<f32>();
}

#[test]
fn levels_order_every_dependency() {
    for (name, a) in corpus::<f64>() {
        for direction in [Direction::Forward, Direction::Backward] {
            let levels = levels_cpu(&a, direction);
            let level = levels.level_of_rows();
            let mut listed = levels.rows.clone();
            listed.sort_unstable();
            assert_eq!(listed, (0..a.rows() as u32).collect::<Vec<_>>(), "{name}: each row listed once");
            for i in 0..a.rows() {
                for &j in a.row(i).0 {
                    let earlier = match direction {
                        Direction::Forward => (j as usize) < i,
                        Direction::Backward => (j as usize) > i,
                    };
                    if earlier {
                        assert!(level[j as usize] < level[i], "{name} {direction:?}: row {i} before row {j}");
                    }
                }
            }
        }
    }
    // The 27-point stencil on nx x ny x nz: level i + 2j + 4k, so nx + 2 ny + 4 nz - 6 levels.
    let a = generate::stencil27::<f64>(16, 16, 16).unwrap();
    assert_eq!(levels_cpu(&a, Direction::Forward).count(), 16 + 32 + 64 - 6);
}

#[test]
fn greedy_coloring_is_proper_and_eight_colors_the_stencil() {
    for (name, a) in corpus::<f64>() {
        let coloring = greedy_coloring(&a);
        assert_eq!(coloring.conflict(&a), None, "{name}");
        // Any order gives a proper coloring (the GPU's Jones-Plassmann is one such order).
        let reversed = greedy_coloring_in_order(&a, (0..a.rows()).rev());
        assert_eq!(reversed.conflict(&a), None, "{name}, rows in reverse order");
    }
    assert_eq!(greedy_coloring(&generate::stencil27::<f64>(16, 16, 16).unwrap()).count, 8);
    // The GPU's default order (larger degree first, then row order) keeps the 8 colors.
    let stencil = generate::stencil27::<f64>(24, 20, 16).unwrap();
    let mut order: Vec<usize> = (0..stencil.rows()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(stencil.row_len(i)), i));
    assert_eq!(greedy_coloring_in_order(&stencil, order).count, 8);
    // The GPU test's dense case needs a second window of 64 colors.
    assert!(greedy_coloring(&generate::random_uniform::<f64>(300, 300, 150, 6).unwrap()).count > 64);
}

#[test]
fn a_coloring_is_checked() {
    let a = generate::poisson2d::<f64>(4, 4).unwrap();
    let mut coloring = greedy_coloring(&a);
    let mut wrong = coloring.clone();
    wrong.colors[1] = wrong.colors[0]; // rows 0 and 1 are neighbours
    let err = MulticolorOrder::new(&a, wrong).err().unwrap();
    assert!(err.to_string().contains("rows 0 and 1 are neighbours"), "{err}");
    let short = Coloring { colors: coloring.colors[1..].to_vec(), count: coloring.count };
    assert!(MulticolorOrder::new(&a, short).is_err());
    coloring.count -= 1;
    assert!(MulticolorOrder::new(&a, coloring).is_err(), "a color past the count");
    for method in ColoringMethod::ALL {
        assert_eq!(ColoringMethod::from_name(method.name()), Some(method));
    }
    assert_eq!(ColoringMethod::default(), ColoringMethod::Auto);
}

/// The multicolor smoother reduces the residual per sweep comparably to the sequential one:
/// over 5 sweeps from x = 0, its mean reduction per sweep (in orders of magnitude) is at
/// least half the sequential sweep's (0.69 to 0.98 of it on this corpus). The check a
/// reordered smoother gets.
#[test]
fn multicolor_reduces_the_residual_like_the_sequential_sweep() {
    for (name, a) in corpus::<f64>() {
        let order = MulticolorOrder::greedy(&a).unwrap();
        let sequential = CpuSymgs::new(&a).unwrap();
        let r = random_vec::<f64>(a.rows(), 5);
        let (mut x_colored, mut x_sequential) = (vec![0.0; a.rows()], vec![0.0; a.rows()]);
        let start = residual_norm(&a, &r, &x_colored);
        for _ in 0..5 {
            order.sweep_cpu(&r, &mut x_colored).unwrap();
        }
        sequential.sweep_in(None, 5, &r, &mut x_sequential).unwrap();
        let colored = (residual_norm(&a, &r, &x_colored) / start).log10() / 5.0;
        let plain = (residual_norm(&a, &r, &x_sequential) / start).log10() / 5.0;
        println!(
            "{name}: {} colors, log10 reduction per sweep {colored:.3} (sequential {plain:.3})",
            order.colors()
        );
        if plain.is_nan() || plain >= 0.0 {
            // Gauss-Seidel diverges on it (the all-ones values of pattern files such as
            // dwt_419), perhaps past overflow: nothing to compare.
            continue;
        }
        assert!(colored < 0.0 && colored <= 0.5 * plain, "{name}: {colored:.3} against {plain:.3} per sweep");
    }
}

/// A sweep in a given row order is the reference of a reordered smoother (what the CLI and
/// the bench check multicolor against): in A's own order it is the sequential sweep to the
/// bit, in a coloring's order the sweep of the renumbered matrix P A P^T to rounding; an order
/// that is not a permutation of the rows is refused.
#[test]
fn a_sweep_in_a_row_order_is_the_sweep_of_the_renumbered_matrix() {
    for (name, a) in corpus::<f64>() {
        let cpu = CpuSymgs::new(&a).unwrap();
        let r = random_vec::<f64>(a.rows(), 7);
        let (mut expect, mut got) = (random_vec::<f64>(a.rows(), 8), random_vec::<f64>(a.rows(), 8));
        let own: Vec<u32> = (0..a.rows() as u32).collect();
        cpu.sweep(&r, &mut expect).unwrap();
        cpu.sweep_in(Some(&own), 1, &r, &mut got).unwrap();
        assert!(got.iter().zip(&expect).all(|(g, e)| g.to_bits() == e.to_bits()), "{name}: in its own order");
        let order = MulticolorOrder::greedy(&a).unwrap();
        let (mut expect, mut got) = (vec![0.0; a.rows()], vec![0.0; a.rows()]);
        for sweep in 0..2 {
            order.sweep_cpu(&r, &mut expect).unwrap();
            cpu.sweep_in(Some(&order.new_to_old), 1, &r, &mut got).unwrap();
            if overflowed(&format!("{name}: by color, sweep {sweep}"), &expect) {
                break;
            }
            compare(&got, &expect, 1e-3).check(&format!("{name}: by color, sweep {sweep}"), 1e-12).unwrap();
        }
    }
    let a = generate::poisson3d::<f64>(3, 3, 3).unwrap();
    let cpu = CpuSymgs::new(&a).unwrap();
    let (r, mut x) = (vec![1.0; 27], vec![0.0; 27]);
    let mut twice: Vec<u32> = (0..27).collect();
    twice[5] = 4;
    for bad in [(0..26).collect::<Vec<u32>>(), twice, (1..=27).collect()] {
        let err = cpu.sweep_in(Some(&bad), 1, &r, &mut x).unwrap_err();
        assert!(err.to_string().contains("each of the 27 rows once"), "{err}");
    }
}

#[test]
fn pcg_converges_and_the_sweep_preconditioner_helps() {
    let options = PcgOptions { tolerance: 1e-8, max_iterations: 500 };
    for (name, a) in [
        ("stencil27 16^3", generate::stencil27::<f64>(16, 16, 16).unwrap()),
        ("random spd 3000", generate::random_spd::<f64>(3000, 27, 1).unwrap()),
        ("poisson3d 12^3", generate::poisson3d::<f64>(12, 12, 12).unwrap()),
    ] {
        let b = random_vec::<f64>(a.rows(), 6);
        let mut x = vec![0.0; a.rows()];
        let preconditioned = pcg_cpu(&a, true, &b, &mut x, options).unwrap();
        assert!(preconditioned.converged, "{name}: {preconditioned:?}");
        // The recurrence's residual is the true one, to rounding.
        let true_residual = residual_norm(&a, &b, &x) / residual_norm(&a, &b, &vec![0.0; a.rows()]);
        assert!(true_residual < 1e-7, "{name}: true relative residual {true_residual:e}");
        let mut x = vec![0.0; a.rows()];
        let plain = pcg_cpu(&a, false, &b, &mut x, options).unwrap();
        assert!(plain.converged, "{name}: {plain:?}");
        assert!(
            preconditioned.iterations < plain.iterations,
            "{name}: {} iterations preconditioned, {} plain",
            preconditioned.iterations,
            plain.iterations
        );
    }
}

/// PCG judges convergence on b - A x, not on its recurrence's residual: in f32 on a badly
/// conditioned matrix the recurrence's falls to the tolerance while the true one stays far
/// above it, and the solve then says it did not converge, with the true residual.
#[test]
fn pcg_reports_the_true_residual() {
    let options = PcgOptions { tolerance: 1e-7, max_iterations: 3000 };
    let b = random_vec::<f64>(300 * 300, 3);
    let a = generate::poisson2d::<f32>(300, 300).unwrap();
    let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    let mut x = vec![0.0; b.len()];
    let report = pcg_cpu(&a, true, &b32, &mut x, options).unwrap();
    let true_residual = residual_norm(&a, &b32, &x) / residual_norm(&a, &b32, &vec![0.0; b.len()]);
    assert!(
        !report.converged && true_residual > options.tolerance,
        "f32: {report:?}, true {true_residual:e}"
    );
    // The solve's b - A x is summed in f32: within 10% of the same in f64.
    assert!(
        (report.relative_residual - true_residual).abs() <= 0.1 * true_residual,
        "{report:?}, {true_residual:e}"
    );
    let a = generate::poisson2d::<f64>(300, 300).unwrap();
    let mut x = vec![0.0; b.len()];
    let report = pcg_cpu(&a, true, &b, &mut x, options).unwrap();
    let true_residual = residual_norm(&a, &b, &x) / residual_norm(&a, &b, &vec![0.0; b.len()]);
    assert!(
        report.converged && true_residual <= options.tolerance,
        "f64: {report:?}, true {true_residual:e}"
    );
}
