//! SymGS on the GPU: every exact-order smoother (the GPU101 report's ready/done flags, level
//! scheduling with and without a CUDA graph and on level copies, sync-free, cuSPARSE SpSV) against the sequential
//! CPU sweep, f64 and f32, also over a second sweep and in the report's variant; the GPU level
//! analysis against the CPU one; the GPU coloring (proper, compact, the greedy coloring in its
//! priority order); multicolor against its CPU reference (a CUDA graph or plain launches, and
//! the CPU sweep in its row order) and by residual reduction; PCG; the vector kernels PCG
//! uses; the sync-free timeout; level lists that do not fit the matrix.

mod common;

use common::{gpu, overflowed, random_vec, real_matrices};
use rgla::gpu::CudaSlice;
use rgla::sparse::{Csr, GenSpec, generate};
use rgla::symgs::cpu::{CpuSymgs, checked_diagonal, residual_norm};
use rgla::symgs::level_copies::{LevelCopySmoother, MAX_LEVELS};
use rgla::symgs::levels::{LevelSmoother, levels_cpu, levels_gpu};
use rgla::symgs::multicolor::{
    ColoringMethod, CopyForm, MulticolorOrder, MulticolorSmoother, ROW_ORDER_ROUNDS, color, greedy_coloring,
    greedy_coloring_in_order,
};
use rgla::symgs::pcg::{PcgOptions, pcg_cpu, pcg_gpu};
use rgla::symgs::ready_done::ReadyDoneSmoother;
use rgla::symgs::sync_free::{Signal, SyncFreeSmoother};
use rgla::symgs::{Direction, Smoother, SymgsMatrix};
use rgla::vendor::cusparse::Cusparse;
use rgla::vendor::cusparse_spsv::CusparseSymgs;
use rgla::verify::compare;
use rgla::{Gpu, Scalar};

/// The matrices every smoother is checked on (as in tests/symgs_cpu.rs, plus a larger stencil
/// that keeps thousands of warps waiting on each other).
fn corpus<T: Scalar>() -> Vec<(String, Csr<T>)> {
    let mut all: Vec<(String, Csr<T>)> = vec![
        ("stencil27 16^3".into(), generate::stencil27(16, 16, 16).unwrap()),
        ("stencil27 48x40x36".into(), generate::stencil27(48, 40, 36).unwrap()),
        ("poisson3d 9x10x11".into(), generate::poisson3d(9, 10, 11).unwrap()),
        ("random spd 3000 27/row".into(), generate::random_spd(3000, 27, 1).unwrap()),
        (
            "banded 4000 bw 60, 9/row, unsymmetric".into(),
            generate::banded(4000, 60, Some(9), true, 2).unwrap(),
        ),
        ("road 5000".into(), generate::road(5000, 100, 3).unwrap()),
        ("fem 4^3 dof 3".into(), generate::fem(4, 4, 4, 3, 4).unwrap()),
        // Unordered matrices: no locality, levels unlike the stencil's.
        ("shuffle:stencil27:14".into(), spec("shuffle:stencil27:14")),
        ("shuffle:poisson3d:24".into(), spec("shuffle:poisson3d:24")),
        ("delaunay 6000".into(), spec("delaunay:n=6000,seed=3")),
        ("shuffle:fem:6".into(), spec("shuffle:fem:6,seed=5")),
        ("1x1".into(), Csr::new(1, 1, vec![0, 1], vec![0], vec![T::from_f64(2.0)]).unwrap()),
    ];
    all.extend(real_matrices::<T>().into_iter().filter(|(_, a)| checked_diagonal(a).is_ok()));
    all
}

fn spec<T: Scalar>(spec: &str) -> Csr<T> {
    spec.parse::<GenSpec>().unwrap().generate().unwrap()
}

/// Rounding of one row's sum with room for its propagation through the sweep (checked against
/// an emulation of the GPU's arithmetic in tests/symgs_cpu.rs, which stays 100x below it).
fn tolerance<T: Scalar>(a: &Csr<T>) -> f64 {
    4.0 * T::tolerance(a.row_stats().max)
}

/// The exact-order smoothers on one matrix, by name.
fn exact_order_smoothers<'a, T: Scalar>(
    gpu: &Gpu,
    lib: &'a Cusparse,
    a: &Csr<T>,
    m: &'a SymgsMatrix<T>,
) -> Vec<Box<dyn Smoother<T> + 'a>> {
    let host_levels = || {
        (
            levels_cpu(a, Direction::Forward).upload(gpu).unwrap(),
            levels_cpu(a, Direction::Backward).upload(gpu).unwrap(),
        )
    };
    let (forward, backward) = host_levels();
    let levels_from_host = LevelSmoother::with_levels(gpu, m, forward, backward).unwrap();
    let (forward, backward) = host_levels();
    let sync_free_from_host = SyncFreeSmoother::with_levels(gpu, m, forward, backward).unwrap();
    // The value-signalled sweep at `lanes` lanes a row.
    let values_at = |lanes| {
        SyncFreeSmoother::new(gpu, m)
            .unwrap()
            .with_signal(Signal::Value)
            .with_lanes_per_row(gpu, lanes)
            .unwrap()
    };
    let mut smoothers: Vec<Box<dyn Smoother<T> + 'a>> = vec![
        Box::new(ReadyDoneSmoother::new(gpu, m).unwrap()),
        Box::new(LevelSmoother::new(gpu, m).unwrap()),
        Box::new(LevelSmoother::new(gpu, m).unwrap().use_graph(true)),
        Box::new(levels_from_host),
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap()),
        Box::new(sync_free_from_host),
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_backoff_ns(100).with_warps_per_sm(16)),
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_signal(Signal::Value)),
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_signal(Signal::Value).with_warps_per_sm(8)),
        // Several rows of a level per warp at once, and few warps (many slots each).
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_lanes_per_row(gpu, 32).unwrap()),
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_lanes_per_row(gpu, 8).unwrap()),
        Box::new(values_at(16)),
        Box::new(values_at(4).with_warps_per_sm(4)),
        Box::new(values_at(1)),
        // Whole rows and half rows (the entries a row waits on, the rest from the sums before),
        // both signals, whatever the default for the matrix.
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_half_rows(true)),
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_half_rows(false)),
        Box::new(values_at(32).with_half_rows(true)),
        Box::new(values_at(4).with_half_rows(false)),
        // The rows copied in sweep order, or the matrix read in place, whatever the default.
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_row_copies(gpu, true).unwrap()),
        Box::new(SyncFreeSmoother::new(gpu, m).unwrap().with_row_copies(gpu, false).unwrap()),
        Box::new(values_at(8).with_half_rows(true).with_row_copies(gpu, false).unwrap()),
        Box::new(values_at(4).with_half_rows(false).with_row_copies(gpu, true).unwrap()),
        Box::new(CusparseSymgs::new(gpu, lib, m, a).unwrap()),
    ];
    // Level copies refuse matrices of too many levels and unsymmetric patterns, with an error
    // that says so.
    match LevelCopySmoother::new(gpu, m) {
        Ok(s) => smoothers.push(Box::new(s)),
        Err(e) => {
            let message = e.to_string();
            let refused = message.contains(&format!("(at most {MAX_LEVELS})"))
                || message.contains("need a structurally symmetric matrix");
            assert!(refused, "{message}");
        }
    }
    smoothers
}

/// Two sweeps on the GPU against two on the CPU, checked after each (the second reuses the
/// flags, tickets and graphs of the first), to the tolerance of `CpuSymgs::tolerance`.
fn exact_order_matches_cpu<T: Scalar>() {
    let gpu = gpu();
    let lib = Cusparse::new(&gpu).unwrap();
    for (name, a) in corpus::<T>() {
        let m = SymgsMatrix::upload(&gpu, &a).unwrap();
        let cpu = CpuSymgs::new(&a).unwrap();
        let r = random_vec::<T>(a.rows(), 1);
        let x0 = random_vec::<T>(a.rows(), 2);
        let what = format!("{name} {}", T::NAME);
        let Some((expect, two_sweeps)) = cpu_sweeps(&cpu, None, 2, &r, &x0, &what) else { continue };
        let zero = vec![T::ZERO; a.rows()];
        let Some((mut from_zero, one_sweep)) = cpu_sweeps(&cpu, None, 1, &r, &zero, &what) else { continue };
        let (from_zero, tolerance) = (from_zero.pop().unwrap(), two_sweeps.max(one_sweep));
        let dr = gpu.upload(&r).unwrap();
        for mut smoother in exact_order_smoothers(&gpu, &lib, &a, &m) {
            assert!(smoother.exact_order());
            let mut dx = gpu.upload(&x0).unwrap();
            for (sweep, expect) in expect.iter().enumerate().skip(1) {
                let what = format!("{} {} sweep {sweep} on {name}", smoother.name(), T::NAME);
                smoother.sweep(&gpu, &dr, &mut dx).unwrap_or_else(|e| panic!("{what}: {e}"));
                let got = gpu.download(&dx).unwrap();
                compare(&got, expect, 1e-3).check(&what, tolerance).unwrap();
            }
            // Both sweeps in one call (level copies carry work from one to the next).
            let what = format!("{} {} two sweeps in one call on {name}", smoother.name(), T::NAME);
            let mut dx = gpu.upload(&x0).unwrap();
            smoother.sweeps(&gpu, &dr, &mut dx, 2).unwrap_or_else(|e| panic!("{what}: {e}"));
            compare(&gpu.download(&dx).unwrap(), &expect[2], 1e-3).check(&what, tolerance).unwrap();
            // A preconditioner's sweep: from zero, whatever x holds.
            let what = format!("{} {} sweep from zero on {name}", smoother.name(), T::NAME);
            smoother.sweep_from_zero(&gpu, &dr, &mut dx).unwrap_or_else(|e| panic!("{what}: {e}"));
            compare(&gpu.download(&dx).unwrap(), &from_zero, 1e-3).check(&what, tolerance).unwrap();
        }
    }
}

/// The CPU sweep in `order` (A's where None) from `x0`: x0 and x after each of `sweeps`
/// sweeps, and the tolerance of a GPU sweep against the last (`CpuSymgs::tolerance`: the
/// rounding of a row's sum, scaled where this input's sweeps amplify rounding, as olm500's
/// diverge); or None, said, where the reference overflows.
fn cpu_sweeps<T: Scalar>(
    cpu: &CpuSymgs<T>,
    order: Option<&[u32]>,
    sweeps: usize,
    r: &[T],
    x0: &[T],
    what: &str,
) -> Option<(Vec<Vec<T>>, f64)> {
    let mut expect = vec![x0.to_vec()];
    for count in 1..=sweeps {
        // From x0 each time: `sweep_in` refuses a non-finite x, and a sweep that overflows
        // carries on within one call, as a GPU sweep does.
        let mut x = x0.to_vec();
        cpu.sweep_in(order, count, r, &mut x).unwrap();
        expect.push(x);
    }
    if overflowed(what, expect.last().unwrap()) {
        return None;
    }
    let tolerance = cpu.tolerance(order, sweeps, r, x0, expect.last().unwrap()).unwrap();
    Some((expect, tolerance))
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_exact_order_smoothers_match_the_cpu_sweep_f64() {
    exact_order_matches_cpu::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_exact_order_smoothers_match_the_cpu_sweep_f32() {
    exact_order_matches_cpu::<f32>();
}

/// The report's variant (right-hand side = x at the start of each half-sweep), to the
/// tolerance of `CpuSymgs::tolerance_report_variant`.
fn report_variant_matches_cpu<T: Scalar>() {
    let gpu = gpu();
    for (name, a) in corpus::<T>() {
        let m = SymgsMatrix::upload(&gpu, &a).unwrap();
        let x0 = random_vec::<T>(a.rows(), 3);
        let mut expect = x0.clone();
        let cpu = CpuSymgs::new(&a).unwrap();
        cpu.sweep_report_variant(&mut expect).unwrap();
        if overflowed(&format!("report variant {} on {name}", T::NAME), &expect) {
            continue;
        }
        let tolerance = cpu.tolerance_report_variant(&x0, &expect).unwrap();
        type Run<'r, T> = Box<dyn FnMut(&Gpu, &mut CudaSlice<T>) -> rgla::Result<()> + 'r>;
        let mut ready_done = ReadyDoneSmoother::new(&gpu, &m).unwrap();
        let mut levels = LevelSmoother::new(&gpu, &m).unwrap();
        let mut graph = LevelSmoother::new(&gpu, &m).unwrap().use_graph(true);
        let mut sync_free = SyncFreeSmoother::new(&gpu, &m).unwrap();
        let mut sync_free_values = SyncFreeSmoother::new(&gpu, &m).unwrap().with_signal(Signal::Value);
        let mut half_rows = SyncFreeSmoother::new(&gpu, &m).unwrap().with_half_rows(true);
        let mut whole_rows = SyncFreeSmoother::new(&gpu, &m).unwrap().with_half_rows(false);
        let runs: Vec<(&str, Run<T>)> = vec![
            ("gpu101-ready-done", Box::new(|g, x| ready_done.sweep_report_variant(g, x))),
            ("level-schedule", Box::new(|g, x| levels.sweep_report_variant(g, x))),
            ("level-schedule-graph", Box::new(|g, x| graph.sweep_report_variant(g, x))),
            ("sync-free", Box::new(|g, x| sync_free.sweep_report_variant(g, x))),
            ("sync-free-values", Box::new(|g, x| sync_free_values.sweep_report_variant(g, x))),
            ("sync-free-half-rows", Box::new(|g, x| half_rows.sweep_report_variant(g, x))),
            ("sync-free-whole-rows", Box::new(|g, x| whole_rows.sweep_report_variant(g, x))),
        ];
        for (smoother, mut run) in runs {
            let what = format!("{smoother} report variant {} on {name}", T::NAME);
            let mut dx = gpu.upload(&x0).unwrap();
            run(&gpu, &mut dx).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = gpu.download(&dx).unwrap();
            compare(&got, &expect, 1e-3).check(&what, tolerance).unwrap();
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_report_variant_matches_the_cpu_f64() {
    report_variant_matches_cpu::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_report_variant_matches_the_cpu_f32() {
    report_variant_matches_cpu::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_gpu_level_analysis_matches_the_cpu() {
    let gpu = gpu();
    for (name, a) in corpus::<f64>() {
        let m = SymgsMatrix::upload(&gpu, &a).unwrap();
        for direction in [Direction::Forward, Direction::Backward] {
            let got = levels_gpu(&gpu, &m, direction).unwrap().to_host(&gpu).unwrap();
            assert_eq!(got, levels_cpu(&a, direction), "{name} {direction:?}");
        }
    }
}

/// The most neighbours a row has in the pattern of A + A^T, the diagonal aside.
fn largest_degree(a: &Csr<f64>) -> usize {
    let t = a.transpose();
    let degree = |i: usize| {
        let mut neighbours: Vec<u32> =
            a.row(i).0.iter().chain(t.row(i).0).copied().filter(|&j| j as usize != i).collect();
        neighbours.sort_unstable();
        neighbours.dedup();
        neighbours.len()
    };
    (0..a.rows()).map(degree).max().unwrap_or(0)
}

/// The GPU's smallest-last ranks, peeled round by round: every row left whose degree (its row
/// length, plus its length in A^T where given: the unsymmetric case) among the rows left is
/// the smallest takes the round as its rank; its neighbours then lose one for each entry.
fn smallest_last_ranks(a: &Csr<f64>, transpose: Option<&Csr<f64>>) -> Vec<u32> {
    let patterns: Vec<&Csr<f64>> = std::iter::once(a).chain(transpose).collect();
    let mut degree: Vec<usize> = (0..a.rows()).map(|i| patterns.iter().map(|p| p.row_len(i)).sum()).collect();
    let mut rank = vec![u32::MAX; a.rows()];
    for round in 0.. {
        let left = || (0..a.rows()).filter(|&i| rank[i] == u32::MAX);
        let Some(smallest) = left().map(|i| degree[i]).min() else { break };
        let peeled: Vec<usize> = left().filter(|&i| degree[i] == smallest).collect();
        peeled.iter().for_each(|&i| rank[i] = round);
        for &i in &peeled {
            for p in &patterns {
                for &j in p.row(i).0 {
                    if j as usize != i && rank[j as usize] == u32::MAX {
                        degree[j as usize] -= 1;
                    }
                }
            }
        }
    }
    rank
}

/// MurmurHash3's 32-bit finalizer, the GPU coloring's hash of a row for its ties.
fn murmur_finalizer(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The Laplacian (+ I) of a cycle of n rows: bipartite exactly where n is even.
fn cycle(n: usize) -> Csr<f64> {
    let mut row_ptr = vec![0u32];
    let (mut cols, mut values) = (Vec::new(), Vec::new());
    for i in 0..n {
        let mut row = [((i + n - 1) % n, -1.0), (i, 3.0), ((i + 1) % n, -1.0)];
        row.sort_by_key(|&(j, _)| j);
        cols.extend(row.iter().map(|&(j, _)| j as u32));
        values.extend(row.iter().map(|&(_, v)| v));
        row_ptr.push(cols.len() as u32);
    }
    Csr::new(n, n, row_ptr, cols, values).unwrap()
}

/// The GPU colorings are proper and cover every row, with at most one color more than a row
/// has neighbours (what a first fit guarantees) and, but for hashed priorities, about as many
/// colors as the host's greedy coloring (never more than twice as many, plus two; row order can
/// be lucky: it takes 3 colors on Trefethen's patterns, hashed priorities 8 or 9); Jones-Plassmann is exactly the
/// greedy coloring in its priority order (larger degree first, then row order) where every
/// round breaks ties by row order, i.e. on matrices of at most `ROW_ORDER_ROUNDS` rows; the
/// default picks the 2 colors of a bipartite pattern, and each of the others where it should.
#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_gpu_coloring_is_proper_and_compact() {
    let gpu = gpu();
    let mut matrices = corpus::<f64>();
    matrices.extend([
        ("random 3000, 9/row, unsymmetric".to_string(), generate::random_uniform(3000, 3000, 9, 5).unwrap()),
        // A + A^T holds about 225 of 300 columns a row: over 64 colors (a second window).
        ("random 300, 150/row".to_string(), generate::random_uniform(300, 300, 150, 6).unwrap()),
        ("power law 20000".to_string(), generate::power_law(20_000, 2, 2000, 1.5, 7).unwrap()),
        ("random spd 200000 27/row".to_string(), generate::random_spd(200_000, 27, 1).unwrap()),
        // A mesh, which peels for over a thousand rounds.
        (
            "delaunay 60000".to_string(),
            generate::shuffle(&generate::delaunay(60_000, 3).unwrap(), 2).unwrap(),
        ),
    ]);
    for (name, a) in &matrices {
        let greedy = greedy_coloring(a);
        let largest_degree = largest_degree(a);
        for method in ColoringMethod::ALL.into_iter().filter(|&m| m != ColoringMethod::Greedy) {
            let what = format!("{} coloring of {name}", method.name());
            let got = color(&gpu, a, method).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(got.colors.len(), a.rows(), "{what}");
            assert!(got.colors.iter().all(|&c| (c as usize) < got.count), "{what}: a row left uncolored");
            assert_eq!(got.conflict(a), None, "{what}: neighbours share a color");
            println!("{what}: {} colors, greedy {}", got.count, greedy.count);
            assert!(
                got.count <= largest_degree + 1,
                "{what}: {} colors, {largest_degree} neighbours at most",
                got.count
            );
            assert!(
                method == ColoringMethod::JonesPlassmannRandom || got.count <= 2 * greedy.count + 2,
                "{what}: {} colors, greedy {}",
                got.count,
                greedy.count
            );
        }
        let t = a.transpose();
        let symmetric = t.row_ptr() == a.row_ptr() && t.col_indices() == a.col_indices();
        if a.rows() <= ROW_ORDER_ROUNDS as usize {
            let degree = |i: usize| a.row_len(i) + if symmetric { 0 } else { t.row_len(i) };
            let mut order: Vec<usize> = (0..a.rows()).collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(degree(i)), i));
            let got = color(&gpu, a, ColoringMethod::JonesPlassmann).unwrap();
            assert_eq!(got, greedy_coloring_in_order(a, order), "{name}");
        }
        // Smallest-last: the greedy coloring by rank, ties by the rows' hash.
        let rank = smallest_last_ranks(a, (!symmetric).then_some(&t));
        let mut order: Vec<usize> = (0..a.rows()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse((rank[i] as u64) << 32 | murmur_finalizer(i as u32) as u64));
        let got = color(&gpu, a, ColoringMethod::SmallestLast).unwrap();
        assert_eq!(got, greedy_coloring_in_order(a, order), "smallest-last coloring of {name}");
    }
    // Bipartite patterns: the parity of their breadth-first levels 2-colors them, where
    // Jones-Plassmann takes more colors in a random row order (the renumbered 7-point
    // Laplacian: 6) or where its wavefront outlasts the rounds that follow the row order (a
    // 5-point Laplacian of more than ROW_ORDER_ROUNDS levels).
    for (name, a) in [
        (
            "renumbered 7-point",
            generate::shuffle(&generate::poisson3d::<f64>(24, 24, 24).unwrap(), 1).unwrap(),
        ),
        ("5-point, 1500 x 1500", generate::poisson2d::<f64>(1500, 1500).unwrap()),
        ("even cycle", cycle(6)),
    ] {
        let [jp, auto] =
            [ColoringMethod::JonesPlassmann, ColoringMethod::Auto].map(|m| color(&gpu, &a, m).unwrap());
        assert_eq!(auto.count, 2, "{name} by level parity ({} with Jones-Plassmann)", jp.count);
        assert_eq!(auto.conflict(&a), None, "{name}");
        assert!(jp.count > 2 || name == "even cycle", "{name}: {} colors with Jones-Plassmann", jp.count);
    }
    // Not bipartite: a renumbered 27-point stencil takes the smallest-last order's colors, a
    // mesh in its own order Jones-Plassmann's; an odd cycle is found in the last level too.
    for (a, expect) in [
        (
            generate::shuffle(&generate::stencil27::<f64>(12, 12, 12).unwrap(), 1).unwrap(),
            ColoringMethod::SmallestLast,
        ),
        (generate::stencil27::<f64>(12, 12, 12).unwrap(), ColoringMethod::JonesPlassmann),
    ] {
        let [expect, auto] = [expect, ColoringMethod::Auto].map(|m| color(&gpu, &a, m).unwrap());
        assert_eq!(auto, expect);
    }
    // Two components, the second searched from its lowest row after the first: 2 colors.
    let two = block_diagonal(&cycle(6), &generate::poisson2d::<f64>(30, 20).unwrap());
    let auto = color(&gpu, &two, ColoringMethod::Auto).unwrap();
    assert_eq!((auto.count, auto.conflict(&two)), (2, None), "two components: {:?}", auto.colors);
    let odd = color(&gpu, &cycle(7), ColoringMethod::Auto).unwrap();
    assert_eq!((odd.count, odd.conflict(&cycle(7))), (3, None), "an odd cycle: {:?}", odd.colors);
    // A renumbered band of even rows peels a few rows a round from its ends, past MAX_ROUNDS:
    // smallest-last order fails with an error that says so, the default colors by degree.
    let band = generate::shuffle(&generate::banded::<f64>(40_000, 4, None, true, 1).unwrap(), 1).unwrap();
    let err = color(&gpu, &band, ColoringMethod::SmallestLast).unwrap_err();
    assert!(err.to_string().contains("rounds"), "{err}");
    let [expect, auto] =
        [ColoringMethod::JonesPlassmann, ColoringMethod::Auto].map(|m| color(&gpu, &band, m).unwrap());
    assert_eq!(auto, expect);
    assert_eq!(auto.conflict(&band), None);
    // Smallest-last order on a renumbered 7-point Laplacian (bipartite; 6 colors by degree).
    let shuffled = generate::shuffle(&generate::poisson3d::<f64>(24, 24, 24).unwrap(), 1).unwrap();
    let count = color(&gpu, &shuffled, ColoringMethod::SmallestLast).unwrap().count;
    assert!(count <= 4, "{count} colors in smallest-last order on the renumbered Laplacian");
    // The stencil's 2x2x2 parity classes; fewer than the greedy row order on the random matrix.
    let stencil = generate::stencil27::<f64>(24, 20, 16).unwrap();
    assert_eq!(color(&gpu, &stencil, ColoringMethod::JonesPlassmann).unwrap().count, 8);
    let (_, spd) = matrices.last().unwrap();
    assert!(color(&gpu, spd, ColoringMethod::JonesPlassmann).unwrap().count < greedy_coloring(spd).count);
    let non_square = generate::random_uniform::<f64>(4, 5, 2, 1).unwrap();
    let err = color(&gpu, &non_square, ColoringMethod::JonesPlassmann).unwrap_err();
    assert!(err.to_string().contains("square"), "{err}");
}

/// The GPU sweep equals the CPU multicolor sweep for the same coloring (greedy on the host,
/// and the GPU's), over three sweeps, replayed from a CUDA graph, the copy read in either form
/// (CSR, sliced ELL); plain launches give the same values to the bit, also when x moves to
/// another buffer (the graph is captured again).
fn multicolor_matches_its_reference<T: Scalar>() {
    let gpu = gpu();
    for (name, a) in corpus::<T>() {
        let m = SymgsMatrix::upload(&gpu, &a).unwrap();
        let greedy = MulticolorOrder::greedy(&a).unwrap();
        let jp = MulticolorOrder::colored(&gpu, &a, ColoringMethod::JonesPlassmann).unwrap();
        let (cpu, zero) = (CpuSymgs::new(&a).unwrap(), vec![T::ZERO; a.rows()]);
        // Renumbered on the host (uploaded; the form its padding calls for), and on the GPU
        // from the uploaded matrix, in each form.
        let (csr, ell) = (Some(CopyForm::Csr), Some(CopyForm::SlicedEll));
        let cases = [(&greedy, None), (&jp, None), (&greedy, csr), (&greedy, ell), (&jp, csr), (&jp, ell)];
        for (order, form) in cases {
            let smoother = || match form {
                None => MulticolorSmoother::new(&gpu, order).unwrap(),
                Some(form) => {
                    MulticolorSmoother::from_matrix_as(&gpu, &m, order.method.unwrap(), form).unwrap()
                }
            };
            let where_ = if form.is_some() { "GPU" } else { "host" };
            let what = format!(
                "multicolor ({} colors, {:?}, renumbered on the {where_}, {} in sliced ELL) on {name}",
                order.colors(),
                order.method,
                smoother().ell_colors()
            );
            // The same stable order by color, wherever it was computed.
            let (mut smoother, mut launches) = (smoother(), smoother().use_graph(false));
            if form == Some(CopyForm::SlicedEll) && a.nnz() > a.rows() {
                assert_eq!(smoother.ell_colors(), smoother.colors(), "{what}");
            }
            assert_eq!(smoother.new_to_old(&gpu).unwrap(), order.new_to_old, "{what}");
            assert!(!smoother.exact_order());
            let r = random_vec::<T>(a.rows(), 4);
            // The multicolor sweep is the sequential sweep in the order of its colors.
            let reference =
                cpu_sweeps(&cpu, Some(&order.new_to_old), 3, &r, &zero, &format!("{what} {}", T::NAME));
            let Some((_, tolerance)) = reference else { continue };
            let mut expect = vec![T::ZERO; a.rows()];
            let dr = gpu.upload(&r).unwrap();
            let mut dx = gpu.zeros::<T>(a.rows()).unwrap();
            let mut dx_launches = gpu.zeros::<T>(a.rows()).unwrap();
            for sweep in 1..=3 {
                order.sweep_cpu(&r, &mut expect).unwrap();
                if sweep == 3 {
                    dx = gpu.upload(&gpu.download(&dx).unwrap()).unwrap(); // a new buffer
                }
                smoother.sweep(&gpu, &dr, &mut dx).unwrap();
                launches.sweep(&gpu, &dr, &mut dx_launches).unwrap();
                let got = gpu.download(&dx).unwrap();
                let what = format!("{what} {} sweep {sweep}", T::NAME);
                compare(&got, &expect, 1e-3).check(&what, tolerance).unwrap();
                let plain = gpu.download(&dx_launches).unwrap();
                assert!(got.iter().zip(&plain).all(|(g, p)| g == p), "{what}: graph and launches differ");
            }
            let smoothers = [&mut smoother, &mut launches];
            sweeps_in_one_call_and_from_zero(&gpu, smoothers, order, &r, tolerance, &what);
        }
    }
}

/// 1, 2 and 3 sweeps in one call, each after the first taking over the upper sums of the one
/// before: the values of as many calls, to the bit. From zero (a preconditioner's sweep),
/// whatever x holds: the CPU multicolor sweep of `order` from zero.
fn sweeps_in_one_call_and_from_zero<T: Scalar>(
    gpu: &Gpu,
    smoothers: [&mut MulticolorSmoother<T>; 2],
    order: &MulticolorOrder<T>,
    r: &[T],
    tolerance: f64,
    what: &str,
) {
    let n = r.len();
    let dr = gpu.upload(r).unwrap();
    let mut from_zero = vec![T::ZERO; n];
    order.sweep_cpu(r, &mut from_zero).unwrap();
    for s in smoothers {
        let what = format!("{what} {} ({})", T::NAME, s.name());
        let mut separate = gpu.zeros::<T>(n).unwrap();
        for count in 1..=3 {
            s.sweep(gpu, &dr, &mut separate).unwrap();
            let mut together = gpu.zeros::<T>(n).unwrap();
            s.sweeps(gpu, &dr, &mut together, count).unwrap();
            let (expect, got) = (gpu.download(&separate).unwrap(), gpu.download(&together).unwrap());
            assert!(expect == got, "{what}: {count} sweeps in one call");
        }
        let mut dx = gpu.upload(&random_vec::<T>(n, 9)).unwrap();
        s.sweep_from_zero(gpu, &dr, &mut dx).unwrap();
        let what = format!("{what} from zero");
        compare(&gpu.download(&dx).unwrap(), &from_zero, 1e-3).check(&what, tolerance).unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_multicolor_matches_its_cpu_reference_f64() {
    multicolor_matches_its_reference::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_multicolor_matches_its_cpu_reference_f32() {
    multicolor_matches_its_reference::<f32>();
}

/// Node blocks: FEM matrices of 2, 3 and 4 unknowns a node, in their own order and renumbered
/// (swept on x in the copy's order), are colored by blocks (fewer colors than their rows
/// take), and the sweep equals the sequential sweep of the matrix in the copy's order to
/// rounding, over three sweeps, with graphs or plain launches (the same values to the bit), in
/// one call (the values of as many calls, to the bit) and from zero whatever x holds. Matrices
/// whose rows do not all share their pattern with the same number of others keep a color per
/// row.
fn multicolor_blocks_match_the_sequential_sweep<T: Scalar>() {
    let gpu = gpu();
    let fem = |nodes: [usize; 3], dof| generate::fem::<T>(nodes[0], nodes[1], nodes[2], dof, 3).unwrap();
    let cases = [
        // Long in z, so that their own order keeps entries within 0.1 n of the diagonal.
        ("fem 7x6x13 dof 3", fem([7, 6, 13], 3), 3),
        ("fem 9x4x11 dof 2", fem([9, 4, 11], 2), 2),
        ("fem 5x3x11 dof 4", fem([5, 3, 11], 4), 4),
        ("shuffle:fem:8", generate::shuffle(&fem([8, 8, 8], 3), 7).unwrap(), 3),
        ("shuffle:fem:6x5x4 dof 2", generate::shuffle(&fem([6, 5, 4], 2), 8).unwrap(), 2),
        // Past the L2 cache: the SpMV renumbers it, and the smoother takes the SpMV's order.
        ("shuffle:fem:36", generate::shuffle(&fem([36, 36, 36], 3), 9).unwrap(), 3),
    ];
    for (name, a, dof) in cases {
        let m = SymgsMatrix::upload(&gpu, &a).unwrap();
        let mut smoother = MulticolorSmoother::from_matrix(&gpu, &m, ColoringMethod::Auto).unwrap();
        let mut launches =
            MulticolorSmoother::from_matrix(&gpu, &m, ColoringMethod::Auto).unwrap().use_graph(false);
        let rows = MulticolorSmoother::from_matrix_as(&gpu, &m, ColoringMethod::Auto, CopyForm::Csr).unwrap();
        let what = format!(
            "multicolor on {name} {} ({} colors of blocks, {} of rows; SpMV {})",
            T::NAME,
            smoother.colors(),
            rows.colors(),
            m.csr.choice()
        );
        assert_eq!(smoother.block_rows(), dof, "{what}");
        // Renumbered matrices sweep x in the copy's order, the others in A's.
        assert_eq!(smoother.x_in_copy_order(), name.starts_with("shuffle"), "{what}");
        assert_eq!(rows.block_rows(), 1, "{what}");
        assert!(smoother.colors() < rows.colors(), "{what}");
        // The sequential sweep of the matrix in the copy's order.
        let new_to_old = smoother.new_to_old(&gpu).unwrap();
        assert_eq!(new_to_old, launches.new_to_old(&gpu).unwrap(), "{what}");
        // Each color's blocks in the order of their lowest rows, or, renumbered by the SpMV,
        // of their first rows in its breadth-first order.
        let place = match name {
            "shuffle:fem:36" => Some(rgla::sparse::inverse_permutation(&a.breadth_first_order())),
            _ if !smoother.x_in_copy_order() => Some((0..a.rows() as u32).collect()),
            _ => None,
        };
        if let Some(place) = place {
            let mut first = 0;
            for rows in smoother.color_rows() {
                let blocks = new_to_old[first..first + rows as usize].chunks(dof);
                let keys: Vec<u32> =
                    blocks.map(|b| b.iter().map(|&i| place[i as usize]).min().unwrap()).collect();
                assert!(keys.is_sorted(), "{what}: a color's blocks out of order");
                first += rows as usize;
            }
        }
        let old_to_new = rgla::sparse::inverse_permutation(&new_to_old);
        let order = MulticolorOrder {
            coloring: greedy_coloring(&a),
            method: None,
            permuted: a.permute_symmetric(&new_to_old, &old_to_new),
            new_to_old,
            color_offsets: Vec::new(),
        };
        let r = random_vec::<T>(a.rows(), 4);
        let dr = gpu.upload(&r).unwrap();
        let (mut dx, mut dx_launches) =
            (gpu.zeros::<T>(a.rows()).unwrap(), gpu.zeros::<T>(a.rows()).unwrap());
        let mut expect = vec![T::ZERO; a.rows()];
        for sweep in 1..=3 {
            order.sweep_cpu(&r, &mut expect).unwrap();
            smoother.sweep(&gpu, &dr, &mut dx).unwrap();
            launches.sweep(&gpu, &dr, &mut dx_launches).unwrap();
            let got = gpu.download(&dx).unwrap();
            compare(&got, &expect, 1e-3).check(&format!("{what} sweep {sweep}"), tolerance(&a)).unwrap();
            assert!(
                got == gpu.download(&dx_launches).unwrap(),
                "{what} sweep {sweep}: graph and launches differ"
            );
        }
        sweeps_in_one_call_and_from_zero(
            &gpu,
            [&mut smoother, &mut launches],
            &order,
            &r,
            tolerance(&a),
            &what,
        );
        // Any lanes a block from its rows up: the same sweep to rounding; fewer are refused.
        let mut one_sweep = vec![T::ZERO; a.rows()];
        order.sweep_cpu(&r, &mut one_sweep).unwrap();
        for lanes in [dof.next_power_of_two() as u32, 32] {
            let mut s = MulticolorSmoother::from_matrix(&gpu, &m, ColoringMethod::Auto)
                .and_then(|s| s.with_lanes_per_row(lanes))
                .unwrap();
            let mut dx = gpu.zeros::<T>(a.rows()).unwrap();
            s.sweep(&gpu, &dr, &mut dx).unwrap();
            let what = format!("{what}, {lanes} lanes a block");
            compare(&gpu.download(&dx).unwrap(), &one_sweep, 1e-3).check(&what, tolerance(&a)).unwrap();
        }
        if dof > 2 {
            let err = MulticolorSmoother::from_matrix(&gpu, &m, ColoringMethod::Auto)
                .and_then(|s| s.with_lanes_per_row(2));
            assert!(err.is_err_and(|e| e.to_string().contains("at least")), "{what}: 2 lanes a block");
        }
    }
    // No shared patterns, or blocks of two sizes ([F3 0; 0 F2]), or one row set apart.
    let (f3, f2) = (fem([4, 4, 3], 3), fem([3, 3, 3], 2));
    // The last row's couplings to the others dropped: its pattern is its own.
    let full = fem([4, 4, 4], 3);
    let last = full.rows() as u32 - 1;
    let (mut row_ptr, mut col_idx, mut values) = (vec![0u32], Vec::new(), Vec::new());
    for i in 0..full.rows() {
        for (&j, &v) in full.row(i).0.iter().zip(full.row(i).1) {
            if (i as u32 == last) == (j == last) {
                col_idx.push(j);
                values.push(v);
            }
        }
        row_ptr.push(col_idx.len() as u32);
    }
    let cut = Csr::new(full.rows(), full.rows(), row_ptr, col_idx, values).unwrap();
    let no_blocks = [
        ("stencil27 12^3", generate::stencil27::<T>(12, 12, 12).unwrap()),
        ("fem dof 1", fem([6, 6, 6], 1)),
        ("[fem dof 3, fem dof 2]", block_diagonal(&f3, &f2)),
        ("fem dof 3, last row alone", cut),
    ];
    for (name, a) in no_blocks {
        let smoother = MulticolorSmoother::from_csr(&gpu, &a).unwrap();
        assert_eq!(smoother.block_rows(), 1, "{name}");
    }
}

/// The block-diagonal matrix [A 0; 0 B].
fn block_diagonal<T: Scalar>(a: &Csr<T>, b: &Csr<T>) -> Csr<T> {
    let (n, shift) = (a.rows() + b.rows(), a.rows() as u32);
    let mut row_ptr = a.row_ptr().to_vec();
    row_ptr.extend(b.row_ptr()[1..].iter().map(|&p| p + a.nnz() as u32));
    let col_idx: Vec<u32> =
        a.col_indices().iter().copied().chain(b.col_indices().iter().map(|&c| c + shift)).collect();
    let values: Vec<T> = a.values().iter().chain(b.values()).copied().collect();
    Csr::new(n, n, row_ptr, col_idx, values).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_multicolor_blocks_match_the_sequential_sweep_f64() {
    multicolor_blocks_match_the_sequential_sweep::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_multicolor_blocks_match_the_sequential_sweep_f32() {
    multicolor_blocks_match_the_sequential_sweep::<f32>();
}

/// Colors in both forms at once: the 27-point stencil (colors of 32 k rows, read in sliced
/// ELL) beside a random SPD block whose own colors are small (read in CSR). The sweep equals
/// the CPU multicolor sweep for the GPU's coloring.
#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_multicolor_mixes_forms_by_color() {
    let gpu = gpu();
    let (s, b) =
        (generate::stencil27::<f64>(64, 64, 64).unwrap(), generate::random_spd::<f64>(5000, 27, 3).unwrap());
    let (a, n) = (block_diagonal(&s, &b), s.rows() + b.rows());
    let order = MulticolorOrder::colored(&gpu, &a, ColoringMethod::JonesPlassmann).unwrap();
    let mut smoother = MulticolorSmoother::from_csr(&gpu, &a).unwrap();
    let (ell, colors) = (smoother.ell_colors(), smoother.colors());
    assert!(0 < ell && ell < colors, "{ell} of {colors} colors in sliced ELL");
    let r = random_vec::<f64>(n, 9);
    let (dr, mut dx) = (gpu.upload(&r).unwrap(), gpu.zeros::<f64>(n).unwrap());
    let mut expect = vec![0.0; n];
    for sweep in 1..=2 {
        order.sweep_cpu(&r, &mut expect).unwrap();
        smoother.sweep(&gpu, &dr, &mut dx).unwrap();
        let what = format!("multicolor, {ell} of {colors} colors in sliced ELL, sweep {sweep}");
        compare(&gpu.download(&dx).unwrap(), &expect, 1e-3).check(&what, tolerance(&a)).unwrap();
    }
}

/// A multicolor smoother sets L2 aside for x from its first sweep, where the device can, and
/// gives it back when it is dropped: other kernels lose what is set aside.
#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_multicolor_sets_l2_aside_while_it_lives() {
    use rgla::gpu::L2SetAside;
    let gpu = gpu();
    let a = generate::stencil27::<f64>(48, 48, 48).unwrap();
    let before = L2SetAside::current(&gpu).unwrap();
    {
        let mut smoother = MulticolorSmoother::from_csr(&gpu, &a).unwrap();
        let (dr, mut dx) =
            (gpu.upload(&random_vec::<f64>(a.rows(), 5)).unwrap(), gpu.zeros(a.rows()).unwrap());
        smoother.sweep(&gpu, &dr, &mut dx).unwrap();
        let during = L2SetAside::current(&gpu).unwrap();
        let x_bytes = a.rows() * size_of::<f64>();
        if gpu.props().max_persisting_l2_bytes > 0 && before < x_bytes {
            assert!(during > before, "set aside {during} bytes while the smoother lives, {before} before");
        } else {
            eprintln!("SKIPPED the set-aside check: the device sets no L2 aside, or enough was already");
        }
    }
    assert_eq!(L2SetAside::current(&gpu).unwrap(), before, "the set-aside after the smoother is dropped");
}

/// What the CLI's and the bench's checks rest on: the default multicolor smoother, in
/// whatever form it picks (sliced ELL, CSR, node blocks), through the `Smoother` trait, equals
/// the CPU sweep in its `row_order` over two sweeps, f64 and f32.
fn multicolor_matches_the_cpu_sweep_in_its_row_order<T: Scalar>() {
    let gpu = gpu();
    for (name, a) in corpus::<T>() {
        let mut smoother: Box<dyn Smoother<T>> = Box::new(MulticolorSmoother::from_csr(&gpu, &a).unwrap());
        let order = smoother.row_order(&gpu).unwrap().expect("multicolor reorders the rows");
        let cpu = CpuSymgs::new(&a).unwrap();
        let r = random_vec::<T>(a.rows(), 3);
        let x0 = random_vec::<T>(a.rows(), 4);
        let what = format!("{} on {name} {}", smoother.name(), T::NAME);
        let Some((expect, tolerance)) = cpu_sweeps(&cpu, Some(&order), 2, &r, &x0, &what) else { continue };
        let mut dx = gpu.upload(&x0).unwrap();
        let dr = gpu.upload(&r).unwrap();
        for (sweep, expect) in expect.iter().enumerate().skip(1) {
            smoother.sweep(&gpu, &dr, &mut dx).unwrap();
            let what = format!("{what} sweep {sweep}");
            compare(&gpu.download(&dx).unwrap(), expect, 1e-3).check(&what, tolerance).unwrap();
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_multicolor_matches_the_cpu_sweep_in_its_row_order() {
    multicolor_matches_the_cpu_sweep_in_its_row_order::<f64>();
    multicolor_matches_the_cpu_sweep_in_its_row_order::<f32>();
}

/// Residual reduction per sweep comparable to the sequential sweep's (as in symgs_cpu.rs).
#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_multicolor_reduces_the_residual() {
    let gpu = gpu();
    let a = generate::stencil27::<f64>(32, 32, 32).unwrap();
    let mut smoother = MulticolorSmoother::from_csr(&gpu, &a).unwrap();
    let cpu = CpuSymgs::new(&a).unwrap();
    let r = random_vec::<f64>(a.rows(), 5);
    let (dr, mut dx) = (gpu.upload(&r).unwrap(), gpu.zeros::<f64>(a.rows()).unwrap());
    let mut x_sequential = vec![0.0; a.rows()];
    let start = residual_norm(&a, &r, &x_sequential);
    let mut before = start;
    for sweep in 1..=5 {
        smoother.sweep(&gpu, &dr, &mut dx).unwrap();
        cpu.sweep(&r, &mut x_sequential).unwrap();
        let after = residual_norm(&a, &r, &gpu.download(&dx).unwrap());
        assert!(after < 0.9 * before, "sweep {sweep}: residual {before:e} -> {after:e}");
        before = after;
    }
    let colored = (before / start).log10() / 5.0;
    let plain = (residual_norm(&a, &r, &x_sequential) / start).log10() / 5.0;
    assert!(colored <= 0.5 * plain, "log10 reduction per sweep {colored:.3}, sequential {plain:.3}");
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_pcg_converges_with_every_smoother() {
    let gpu = gpu();
    let lib = Cusparse::new(&gpu).unwrap();
    let options = PcgOptions { tolerance: 1e-8, max_iterations: 500 };
    for (name, a) in [
        ("stencil27 24^3", generate::stencil27::<f64>(24, 24, 24).unwrap()),
        ("random spd 20000", generate::random_spd::<f64>(20_000, 27, 1).unwrap()),
        // Multicolor on node blocks.
        ("shuffle:fem:10", spec("shuffle:fem:10,seed=2")),
    ] {
        let m = SymgsMatrix::upload(&gpu, &a).unwrap();
        let b = random_vec::<f64>(a.rows(), 6);
        let db = gpu.upload(&b).unwrap();
        let reference = pcg_cpu(&a, true, &b, &mut vec![0.0; a.rows()], options).unwrap();
        let mut smoothers = exact_order_smoothers(&gpu, &lib, &a, &m);
        smoothers.push(Box::new(MulticolorSmoother::from_csr(&gpu, &a).unwrap()));
        for smoother in &mut smoothers {
            let exact = smoother.exact_order();
            let what = format!("PCG with {} on {name}", smoother.name());
            let mut dx = gpu.zeros::<f64>(a.rows()).unwrap();
            let report = pcg_gpu(&gpu, &m.csr, Some(smoother.as_mut()), &db, &mut dx, options)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(report.converged, "{what}: {report:?}");
            let x = gpu.download(&dx).unwrap();
            let true_residual = residual_norm(&a, &b, &x) / residual_norm(&a, &b, &vec![0.0; a.rows()]);
            assert!(true_residual < 1e-7, "{what}: true relative residual {true_residual:e}");
            if exact {
                // The same preconditioner as the CPU run, to rounding: the same iterations.
                assert!(
                    report.iterations.abs_diff(reference.iterations) <= 1,
                    "{what}: {} iterations, {} on the CPU",
                    report.iterations,
                    reference.iterations
                );
            }
        }
        let plain =
            pcg_gpu(&gpu, &m.csr, None, &db, &mut gpu.zeros::<f64>(a.rows()).unwrap(), options).unwrap();
        assert!(plain.converged && plain.iterations > reference.iterations, "plain CG on {name}: {plain:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_a_stuck_sync_free_wait_is_an_error_not_a_hang() {
    let gpu = gpu();
    let a = generate::stencil27::<f64>(20, 20, 20).unwrap();
    let m = SymgsMatrix::upload(&gpu, &a).unwrap();
    let r = gpu.upload(&random_vec::<f64>(a.rows(), 7)).unwrap();
    let x0 = random_vec::<f64>(a.rows(), 8);
    let mut expect = x0.clone();
    CpuSymgs::new(&a).unwrap().sweep(&gpu.download(&r).unwrap(), &mut expect).unwrap();
    for signal in [Signal::DoneFlags, Signal::Value] {
        let mut smoother = SyncFreeSmoother::new(&gpu, &m).unwrap().with_signal(signal);
        smoother.set_timeout_ns(50_000_000);
        // The first warp slot (the first rows of the order) is never computed: the rows that
        // depend on them wait in vain.
        smoother.start_at_slot(1);
        let mut x = gpu.upload(&x0).unwrap();
        let started = std::time::Instant::now();
        let err = smoother.sweep(&gpu, &r, &mut x).unwrap_err();
        assert!(err.to_string().contains("waited more than 0.050 s"), "{signal:?}: {err}");
        assert!(started.elapsed().as_secs_f64() < 10.0, "{signal:?}: the error took {:?}", started.elapsed());
        // The smoother recovers: a normal sweep afterwards is right.
        smoother.start_at_slot(0);
        let mut x = gpu.upload(&x0).unwrap();
        smoother.sweep(&gpu, &r, &mut x).unwrap();
        let what = format!("sync-free {signal:?} after a timeout");
        compare(&gpu.download(&x).unwrap(), &expect, 1e-3).check(&what, tolerance(&a)).unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_level_lists_that_do_not_fit_the_matrix_are_refused() {
    let gpu = gpu();
    let a = generate::stencil27::<f64>(6, 5, 4).unwrap();
    let m = SymgsMatrix::upload(&gpu, &a).unwrap();
    let levels = |direction| levels_cpu(&a, direction);
    let refusal = |forward: rgla::symgs::levels::Levels| {
        let (forward, backward) =
            (forward.upload(&gpu).unwrap(), levels(Direction::Backward).upload(&gpu).unwrap());
        match SyncFreeSmoother::with_levels(&gpu, &m, forward, backward) {
            Ok(_) => panic!("level lists that do not fit the matrix were taken"),
            Err(e) => e.to_string(),
        }
    };
    // A listed row past the matrix's rows (found on the GPU, while building the order).
    let mut bad_row = levels(Direction::Forward);
    bad_row.rows[3] = a.rows() as u32 + 5;
    let err = refusal(bad_row);
    assert!(err.contains(&format!("level lists name row {}", a.rows() + 5)), "{err}");
    // Offsets that fall.
    let mut falling = levels(Direction::Forward);
    falling.offsets.swap(1, 2);
    let err = refusal(falling);
    assert!(err.contains("level offsets must rise"), "{err}");
    // Lists of another matrix's size.
    let mut short = levels(Direction::Forward);
    short.rows.pop();
    *short.offsets.last_mut().unwrap() -= 1;
    let err = refusal(short);
    assert!(err.contains("level lists of"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_wrong_vector_lengths_are_errors() {
    let gpu = gpu();
    let a = generate::stencil27::<f64>(4, 4, 4).unwrap();
    let m = SymgsMatrix::upload(&gpu, &a).unwrap();
    let r = gpu.zeros::<f64>(64).unwrap();
    let mut x = gpu.zeros::<f64>(63).unwrap();
    let mut smoother = LevelSmoother::new(&gpu, &m).unwrap();
    let err = smoother.sweep(&gpu, &r, &mut x).unwrap_err();
    assert!(err.to_string().contains("needs r and x of 64 values"), "{err}");
    let err = SyncFreeSmoother::new(&gpu, &m).unwrap().with_lanes_per_row(&gpu, 3).err().unwrap();
    assert!(err.to_string().contains("power of two up to 32, got 3"), "{err}");
    let non_square = generate::random_uniform::<f64>(4, 5, 2, 1).unwrap();
    assert!(SymgsMatrix::upload(&gpu, &non_square).is_err());
}

fn vector_kernels<T: Scalar>() {
    use rgla::blas1::{CgStep, Dot, cg_step, cg_step_cpu, dot_cpu};
    let gpu = gpu();
    let mut dot = Dot::<T>::new(&gpu).unwrap();
    for n in [1usize, 31, 1000, 1 << 20, (1 << 20) + 13] {
        let x = random_vec::<T>(n, 9);
        let y = random_vec::<T>(n, 10);
        let (dx, dy) = (gpu.upload(&x).unwrap(), gpu.upload(&y).unwrap());
        let got: f64 = dot.run(&gpu, &dx, &dy).unwrap().into();
        let expect = dot_cpu(&x, &y);
        let scale = dot_cpu(&x, &x).sqrt() * dot_cpu(&y, &y).sqrt();
        assert!((got - expect).abs() <= T::tolerance(n) * scale, "dot n={n}: {got} vs {expect}");
        // Two queued together, side by side: each the same value as alone, to the bit.
        let together = gpu.download(&dot.queue(&gpu, &[(&dx, &dx), (&dx, &dy)]).unwrap()).unwrap();
        let alone = dot.run(&gpu, &dx, &dx).unwrap();
        assert_eq!(together, [alone, dot.run(&gpu, &dx, &dy).unwrap()], "dots queued together, n={n}");
        // CG's step, on the GPU and the CPU: both fused, equal to the bit.
        let (alpha, beta) = (T::from_f64(0.375), T::from_f64(0.75));
        let mut expect: [Vec<T>; 4] = std::array::from_fn(|k| random_vec::<T>(n, 11 + k as u64));
        let mut got = expect.each_ref().map(|v| gpu.upload(v).unwrap());
        let [p, s, x_, r] = expect.each_mut();
        cg_step_cpu(alpha, beta, &x, &y, CgStep { p, s, x: x_, r });
        let [p, s, x_, r] = got.each_mut();
        cg_step(&gpu, alpha, beta, &dx, &dy, CgStep { p, s, x: x_, r }).unwrap();
        for (name, (got, expect)) in ["p", "s", "x", "r"].iter().zip(got.iter().zip(&expect)) {
            let got = gpu.download(got).unwrap();
            assert_eq!(compare(&got, expect, 0.0).max_abs_error, 0.0, "cg_step's {name}, n={n}");
        }
    }
    let (empty, one) = (gpu.zeros::<T>(0).unwrap(), gpu.upload(&[T::from_f64(2.0)]).unwrap());
    let values = gpu.download(&dot.queue(&gpu, &[(&empty, &empty), (&one, &one)]).unwrap()).unwrap();
    assert_eq!(values, [T::ZERO, T::from_f64(4.0)], "an empty dot is zero");
    let err = dot.queue(&gpu, &[(&one, &one); 4]).err().unwrap();
    assert!(err.to_string().contains("4 dot products queued at once, at most 3"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_dot_and_cg_step_f32() {
    vector_kernels::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn symgs_dot_and_cg_step_f64() {
    vector_kernels::<f64>();
}
