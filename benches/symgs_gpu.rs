//! SymGS benchmark, FP64: time per symmetric sweep of every GPU smoother, the sequential CPU
//! sweep, the cuSPARSE SpSV-based sweep and one SpMV of the same matrix, on SPD matrices of
//! five families ([`inputs`]: the HPCG 27-point stencil at 128^3, a random SPD matrix of 2 M
//! rows, a randomly renumbered 7-point Laplacian, a 2-D Delaunay mesh and a renumbered FEM
//! matrix, each over 10 M nonzeros) and the stencil at 256^3; then PCG to 1e-8 with each
//! smoother on each input but the largest, the smoother's setup included in its time.
//!
//! Every record is verified first: each smoother against the CPU sweep in its row order
//! (relative error at rounding level; multicolor, a different smoother, sweeps its rows by
//! color), the SpMV against the CPU product, PCG by convergence. A failure is listed at the
//! end and fails the run. Timing: CUDA events, median of repeated sweeps after warm-up, and
//! criterion's `iter_custom` (not for the GPU101 baseline: most of a second a sweep).
//!
//! `RGLA_BENCH_SYMGS=multicolor,cusparse` (names or prefixes, comma-separated) runs only the
//! smoothers whose names start with one of them, in the sweeps and in PCG (`cpu` for the CPU
//! sweep's timing); the SpMV yardstick always runs. `RGLA_BENCH_SYMGS_INPUTS=stencil27,shuffle`
//! runs only the inputs whose specs start so.

mod common;

use common::Session;
use rgla::Gpu;
use rgla::bench::{
    REFERENCE, Record, cpu_median_ms, gpu_iters, gpu_median_ms, quick, record_copy_bandwidth, save,
};
use rgla::sparse::{Csr, GenSpec, generate};
use rgla::spmv::BlockWarps;
use rgla::spmv::cpu::csr_serial;
use rgla::spmv::csr::{CsrKernel, spmv};
use rgla::symgs::cpu::{CpuSymgs, residual_norm};
use rgla::symgs::level_copies::LevelCopySmoother;
use rgla::symgs::levels::LevelSmoother;
use rgla::symgs::multicolor::{ColoringMethod, CopyForm, MulticolorSmoother};
use rgla::symgs::pcg::{PcgOptions, pcg_cpu, pcg_gpu};
use rgla::symgs::ready_done::ReadyDoneSmoother;
use rgla::symgs::sync_free::{Signal, SyncFreeSmoother};
use rgla::symgs::{Smoother, SymgsMatrix};
use rgla::vendor::cusparse::{Cusparse, CusparseSpmv, SpmvAlg};
use rgla::vendor::cusparse_spsv::CusparseSymgs;
use rgla::verify::{Tolerance, compare};

/// The inputs: (spec, whether it is large: past the CPU timing and the GPU101 baseline, which
/// take seconds per sweep there). Quick runs take smaller members of the same families.
fn inputs() -> Vec<(&'static str, bool)> {
    if quick() {
        return vec![
            ("stencil27:48", false),
            ("random:rows=100000,nnz_per_row=27,spd=true", false),
            ("shuffle:poisson3d:48", false),
            ("delaunay:n=100000", false),
            ("shuffle:fem:16", false),
        ];
    }
    vec![
        ("stencil27:128", false),
        ("random:rows=2000000,nnz_per_row=27,spd=true", false),
        ("shuffle:poisson3d:128", false),
        ("delaunay:n=2000000", false),
        ("shuffle:fem:48", false),
        ("stencil27:256", true),
    ]
}

fn main() {
    let mut session = Session::start();
    let Some(gpu) = session.gpu.take() else { return };
    let gbps = record_copy_bandwidth(&gpu).unwrap();
    eprintln!("{}: device-to-device copy {gbps:.0} GB/s", gpu.props());
    // The short table printed last.
    let mut table = Vec::new();
    for (spec, large) in inputs() {
        if !rgla::bench::selected("RGLA_BENCH_SYMGS_INPUTS", spec) {
            continue;
        }
        let a: Csr<f64> =
            spec.parse::<GenSpec>().and_then(|g| g.generate()).unwrap_or_else(|e| panic!("{spec}: {e}"));
        eprintln!("symgs: {spec}: {} rows, {} nnz", a.rows(), a.nnz());
        sweeps(&mut session, &gpu, &mut table, spec, &a, large);
        if !large {
            pcg(&mut session, &gpu, &mut table, spec, &a);
        }
    }
    eprintln!("\n{}", gpu.props());
    for line in &table {
        eprintln!("{line}");
    }
    session.finish();
}

/// Whether `RGLA_BENCH_SYMGS` selects the smoother named `name`.
fn selected(name: &str) -> bool {
    rgla::bench::selected("RGLA_BENCH_SYMGS", name)
}

/// The yardsticks' names: our SpMV (`csr-adaptive`) and cuSPARSE's.
const ONE_SPMV: &str = "spmv-csr-adaptive";
const VENDOR_SPMV: &str = "spmv-cusparse";

/// Sweeps per call in the chained rows (multicolor and level copies).
const CHAIN: usize = 10;

fn sweeps(s: &mut Session, gpu: &Gpu, table: &mut Vec<String>, name: &str, a: &Csr<f64>, large: bool) {
    let rows = a.rows();
    let r = generate::vector_1_to_5::<f64>(rows, 1);
    let x0 = generate::vector_1_to_5::<f64>(rows, 2);
    let cpu = CpuSymgs::new(a).unwrap();
    let mut expect = x0.clone();
    cpu.sweep(&r, &mut expect).unwrap();

    let csr_bytes = (a.nnz() * 12 + (rows + 1) * 4 + 2 * rows * 8) as f64;
    let notes = |extra: &str| format!("rows={rows} nnz={} {extra}", a.nnz()).trim_end().to_string();
    let sweep_record =
        |kernel: &str, kind: &str, time_ms: f64, runs: usize, error: f64, extra: &str| Record {
            operation: "symgs".into(),
            input: name.into(),
            kernel: kernel.into(),
            kind: kind.into(),
            precision: "f64".into(),
            time_ms,
            runs,
            // Forward and backward: each nonzero multiplied and added twice; the matrix read twice.
            flops: 4.0 * a.nnz() as f64,
            min_bytes: 2.0 * csr_bytes,
            error,
            notes: notes(extra),
        };
    let mut rows_of_table = Vec::new();
    if selected("cpu-serial") && !large {
        let mut x = x0.clone();
        let cpu_ms = cpu_median_ms(3, || cpu.sweep(&r, &mut x).unwrap());
        save(&sweep_record("cpu-serial", "cpu", cpu_ms, 3, 0.0, "")).unwrap();
        rows_of_table.push(("cpu-serial".to_string(), cpu_ms));
    }

    let m = SymgsMatrix::upload(gpu, a).unwrap();
    let dr = gpu.upload(&r).unwrap();
    let mut dx = gpu.upload(&x0).unwrap();

    // One SpMV of the same matrix, the yardstick of the sweeps: ours, and cuSPARSE's, the one a
    // user would otherwise call.
    let lib = Cusparse::new(gpu).unwrap();
    let vendor_spmv = CusparseSpmv::csr(gpu, &lib, &m.csr, SpmvAlg::Default).unwrap();
    let mut y = vec![0.0; rows];
    csr_serial(a, &x0, &mut y).unwrap();
    let warps = BlockWarps::DEFAULT;
    type Run<'r> = &'r dyn Fn(&mut rgla::gpu::CudaSlice<f64>) -> rgla::Result<()>;
    let yardsticks: [(&str, &str, Run); 2] = [
        (ONE_SPMV, "one SpMV, for scale", &|dy| spmv(gpu, &m.csr, CsrKernel::Adaptive, warps, &dx, dy)),
        (VENDOR_SPMV, "cuSPARSE's SpMV, for scale", &|dy| vendor_spmv.run(gpu, &dx, dy)),
    ];
    for (kernel, note, run) in yardsticks {
        let mut dy = gpu.filled(rows, f64::NAN).unwrap();
        let checked = run(&mut dy).and_then(|()| gpu.download(&dy)).map(|got| compare(&got, &y, 1e-3));
        match checked {
            Ok(c) if c.passes(f64::tolerance(a.row_stats().max)) => {
                let ms = gpu_median_ms(gpu, 3, 30, || run(&mut dy)).unwrap();
                let record = Record {
                    kernel: kernel.into(),
                    flops: 2.0 * a.nnz() as f64,
                    min_bytes: csr_bytes,
                    runs: 30,
                    error: c.relative_error,
                    // For scale, not a smoother: the report draws it as a reference line.
                    ..sweep_record("", REFERENCE, ms, 30, 0.0, note)
                };
                save(&record).unwrap();
                rows_of_table.push((format!("{kernel} (one SpMV)"), ms));
            }
            Ok(c) => s.failures.push(c.check(&format!("{kernel} on {name}"), 0.0).unwrap_err().to_string()),
            Err(e) => s.failures.push(format!("{kernel} on {name}: {e}")),
        }
    }

    let tolerance = 4.0 * f64::tolerance(a.row_stats().max);
    let mut smoothers: Vec<(Box<dyn Smoother<f64> + '_>, String)> = Vec::new();
    if selected("gpu101-ready-done") && !large {
        smoothers.push((Box::new(ReadyDoneSmoother::new(gpu, &m).unwrap()), String::new()));
    }
    if selected("level-schedule") {
        let started = std::time::Instant::now();
        let levels = LevelSmoother::new(gpu, &m).unwrap();
        let (forward, backward) = levels.level_counts();
        let level_notes = format!(
            "levels={forward}+{backward} (analysis on the GPU: {:.1} ms)",
            started.elapsed().as_secs_f64() * 1e3
        );
        smoothers.push((Box::new(levels), level_notes.clone()));
        smoothers.push((Box::new(LevelSmoother::new(gpu, &m).unwrap().use_graph(true)), level_notes));
        // Level copies only where the levels are few enough (they say so otherwise).
        match LevelCopySmoother::new(gpu, &m) {
            Ok(copies) => {
                let notes = format!(
                    "levels={}+{}, rows copied level by level",
                    copies.level_counts().0,
                    copies.level_counts().1
                );
                smoothers.push((Box::new(copies), notes));
            }
            Err(e) => eprintln!("symgs: level-copies on {name}: {e}"),
        }
    }
    // The sync-free smoother: done flags (as specified) or the value as the signal, with
    // 64 warps per SM (full) or fewer in flight, rows of 32 lanes or fewer (several rows of a
    // level per warp), whole rows or half rows, the rows copied in sweep order or read in
    // place.
    if selected("sync-free") {
        // (signal, warps per SM, lanes per row (None: the default), half rows (None: the
        // default), the rows copied in sweep order or not, whichever the default is not)
        for (signal, warps_per_sm, lanes, half_rows, other_copies) in [
            (Signal::DoneFlags, 64, None, None, false),
            (Signal::Value, 64, Some(32), None, false),
            (Signal::Value, 64, Some(16), None, false),
            (Signal::Value, 64, Some(8), None, false),
            (Signal::Value, 64, Some(4), None, false),
            (Signal::Value, 48, None, None, false),
            (Signal::Value, 16, None, None, false),
            (Signal::Value, 64, None, Some(false), false),
            (Signal::Value, 64, None, Some(true), false),
            (Signal::Value, 64, None, None, true),
        ] {
            let mut smoother =
                SyncFreeSmoother::new(gpu, &m).unwrap().with_signal(signal).with_warps_per_sm(warps_per_sm);
            if other_copies {
                let copied = smoother.copies_rows();
                smoother = smoother.with_row_copies(gpu, !copied).unwrap();
            }
            let default_lanes = smoother.lanes_per_row();
            if let Some(lanes) = lanes {
                smoother = smoother.with_lanes_per_row(gpu, lanes).unwrap();
            }
            if let Some(half_rows) = half_rows {
                if half_rows == smoother.half_rows() {
                    continue; // the default, timed above
                }
                smoother = smoother.with_half_rows(half_rows);
            }
            let lanes = smoother.lanes_per_row();
            let notes = format!(
                "signal={signal:?}, {warps_per_sm} warps per SM, {lanes} lanes per row{}, {} rows, rows in level \
                 order, {}",
                if lanes == default_lanes { " (the default)" } else { "" },
                if smoother.half_rows() { "half" } else { "whole" },
                if smoother.copies_rows() { "rows copied in that order" } else { "rows read in place" },
            );
            smoothers.push((Box::new(smoother), notes));
        }
    }
    // Multicolor: the default (Jones-Plassmann on the GPU, or the 2 colors of a bipartite
    // matrix in no row order; a CUDA graph per sweep), the same launched kernel by kernel, and
    // the other colorings; colored and renumbered on the GPU from the uploaded matrix (the
    // greedy coloring on the host).
    for (method, graph) in [
        (ColoringMethod::Auto, true),
        (ColoringMethod::Auto, false),
        (ColoringMethod::JonesPlassmann, true),
        (ColoringMethod::Greedy, true),
        (ColoringMethod::JonesPlassmannRandom, true),
        (ColoringMethod::SmallestLast, true),
    ] {
        let label = match (method, graph) {
            (ColoringMethod::Auto, true) => "multicolor".to_string(),
            (ColoringMethod::Auto, false) => "multicolor-launches".to_string(),
            _ => format!("multicolor-{}", method.name()),
        };
        // Large inputs: the default and the hashed coloring (each copy holds the matrix again).
        let variant = (method, graph) != (ColoringMethod::Auto, true);
        if !selected(&label) || (large && variant && method != ColoringMethod::JonesPlassmannRandom) {
            continue;
        }
        let started = std::time::Instant::now();
        let smoother = MulticolorSmoother::from_matrix(gpu, &m, method).unwrap().use_graph(graph);
        gpu.synchronize().unwrap();
        let setup_ms = started.elapsed().as_secs_f64() * 1e3;
        let form = match smoother.block_rows() {
            1 => format!(
                "{} colors in sliced ELL ({:.3} entries per nonzero), CSR lanes per row {:?}",
                smoother.ell_colors(),
                smoother.ell_padding().unwrap_or(f64::NAN),
                smoother.widths()
            ),
            k => format!(
                "node blocks of {k} rows, lanes per block {:?}{}",
                smoother.widths(),
                if smoother.x_in_copy_order() { ", x in the copy's order" } else { "" }
            ),
        };
        let notes = format!(
            "colors={} setup_ms={setup_ms:.1} ({} coloring{}, renumbering on the GPU), {form}; \
             a different smoother",
            smoother.colors(),
            method.name(),
            if method == ColoringMethod::Greedy { " on the host" } else { " on the GPU" },
        );
        smoothers.push((Box::new(smoother), notes));
    }
    // Multicolor in each form whatever the padding, and the CSR form at fixed widths against
    // the width from each color's mean row length.
    // Large inputs: the CSR form only (each copy holds the matrix again).
    for (form, label) in [(CopyForm::Csr, "multicolor-csr"), (CopyForm::SlicedEll, "multicolor-ell")] {
        if selected(label) && !(large && form == CopyForm::SlicedEll) {
            let smoother =
                MulticolorSmoother::from_matrix_as(gpu, &m, ColoringMethod::default(), form).unwrap();
            smoothers
                .push((Box::new(smoother), format!("{form:?} whatever the padding; a different smoother")));
        }
    }
    if selected("multicolor-") && !large {
        for lanes in [4, 8, 16, 32] {
            let smoother =
                MulticolorSmoother::from_matrix_as(gpu, &m, ColoringMethod::default(), CopyForm::Csr)
                    .and_then(|s| s.with_lanes_per_row(lanes))
                    .unwrap();
            smoothers.push((Box::new(smoother), format!("{lanes} lanes per row; a different smoother")));
        }
    }
    if selected("cusparse-spsv") {
        let started = std::time::Instant::now();
        let spsv = CusparseSymgs::new(gpu, &lib, &m, a).unwrap();
        let spsv_notes = format!("analysis {:.0} ms", started.elapsed().as_secs_f64() * 1e3);
        smoothers.push((Box::new(spsv), spsv_notes));
    }

    for (mut smoother, extra) in smoothers {
        let kernel = smoother.name();
        let what = format!("{kernel} on {name}");
        gpu.upload_into(&x0, &mut dx).unwrap();
        let checked = smoother.sweep(gpu, &dr, &mut dx).and_then(|()| gpu.download(&dx));
        let got = match checked {
            Ok(got) => got,
            Err(e) => {
                s.failures.push(format!("{what}: {e}"));
                continue;
            }
        };
        // A reordered smoother (multicolor) against the CPU sweep in its own row order.
        let reordered = smoother.row_order(gpu).and_then(|order| {
            let Some(order) = order else { return Ok(None) };
            let mut reordered = x0.clone();
            cpu.sweep_in(Some(&order), 1, &r, &mut reordered).map(|()| Some(reordered))
        });
        let c = match reordered {
            Ok(reordered) => compare(&got, reordered.as_ref().unwrap_or(&expect), 1e-3),
            Err(e) => {
                s.failures.push(format!("{what}: {e}"));
                continue;
            }
        };
        if let Err(e) = c.check(&what, tolerance) {
            s.failures.push(e.to_string());
            continue;
        }
        // Sweeps repeat on the evolving x: their cost does not depend on its values.
        let slow = kernel.starts_with("gpu101");
        let (warmup, runs) = if slow { (1, 3) } else { (3, 20) };
        let ms = gpu_median_ms(gpu, warmup, runs, || smoother.sweep(gpu, &dr, &mut dx)).unwrap();
        let kind = if kernel.starts_with("cusparse") { "vendor" } else { "gpu" };
        save(&sweep_record(&kernel, kind, ms, runs, c.relative_error, &extra)).unwrap();
        rows_of_table.push((kernel.clone(), ms));
        if kernel == "multicolor" || kernel == "level-copies" {
            // Sweeps that follow each other in one call carry work over (`Smoother::sweeps`);
            // they must give what separate calls give, to the bit.
            let chained = format!("{kernel}-chained");
            let mut separate = gpu.upload(&x0).unwrap();
            let mut together = gpu.upload(&x0).unwrap();
            let same = (0..CHAIN)
                .try_for_each(|_| smoother.sweep(gpu, &dr, &mut separate))
                .and_then(|()| smoother.sweeps(gpu, &dr, &mut together, CHAIN))
                .and_then(|()| Ok(gpu.download(&separate)? == gpu.download(&together)?));
            if !matches!(same, Ok(true)) {
                s.failures.push(format!("{chained} on {name}: {CHAIN} sweeps in one call differ ({same:?})"));
            } else {
                let ms = gpu_median_ms(gpu, 1, 10, || smoother.sweeps(gpu, &dr, &mut dx, CHAIN)).unwrap()
                    / CHAIN as f64;
                let extra = format!("{extra}; ms per sweep of {CHAIN} in one call");
                save(&sweep_record(&chained, kind, ms, 10, c.relative_error, &extra)).unwrap();
                rows_of_table.push((chained, ms));
            }
        }
        if !slow {
            let id = format!("symgs/{name}/{kernel}/f64");
            s.criterion.bench_function(&id, |b| {
                b.iter_custom(|iters| gpu_iters(gpu, iters, || smoother.sweep(gpu, &dr, &mut dx)))
            });
        }
    }

    let ms_of = |k: &str| rows_of_table.iter().find(|(n, _)| n.starts_with(k)).map(|&(_, ms)| ms);
    let (cpu, spsv) = (ms_of("cpu-serial"), ms_of("cusparse-spsv"));
    let (one_spmv, vendor_spmv) = (ms_of(ONE_SPMV), ms_of(VENDOR_SPMV));
    table.push(format!("\nSymGS f64, {name} ({rows} rows, {} nnz): ms per symmetric sweep", a.nnz()));
    table.push(format!(
        "{:<30} {:>10} {:>10} {:>12} {:>10} {:>16}",
        "variant", "ms", "x CPU", "x cuSPARSE", "/ SpMV", "/ cuSPARSE SpMV"
    ));
    for (kernel, ms) in &rows_of_table {
        let ratio = |base: Option<f64>| base.map_or("-".to_string(), |b| format!("{:.2}", b / ms));
        let per = |spmv: Option<f64>| spmv.map_or("-".to_string(), |s| format!("{:.2}", ms / s));
        table.push(format!(
            "{kernel:<30} {ms:>10.3} {:>10} {:>12} {:>10} {:>16}",
            ratio(cpu),
            ratio(spsv),
            per(one_spmv),
            per(vendor_spmv)
        ));
    }
}

/// PCG (tolerance 1e-8) with each smoother but the GPU101 baseline (a second per sweep),
/// plain CG, and the CPU with the sequential sweep.
fn pcg(s: &mut Session, gpu: &Gpu, table: &mut Vec<String>, name: &str, a: &Csr<f64>) {
    let options = PcgOptions { tolerance: 1e-8, max_iterations: 1000 };
    let b = generate::vector_1_to_5::<f64>(a.rows(), 3);
    let zero_residual = residual_norm(a, &b, &vec![0.0; a.rows()]);
    let record = |kernel: &str, kind: &str, time_ms: f64, iterations: usize, error: f64| Record {
        operation: "pcg".into(),
        input: name.into(),
        kernel: kernel.into(),
        kind: kind.into(),
        precision: "f64".into(),
        time_ms,
        runs: 1,
        flops: 0.0,
        min_bytes: 0.0,
        error,
        // time_ms is the time to solution; the report reads iterations= back.
        notes: format!("iterations={iterations} tolerance=1e-8 rows={} nnz={}", a.rows(), a.nnz()),
    };
    table.push(format!("\nPCG f64 to 1e-8, {name}, from x = 0"));
    table.push(format!("{:<30} {:>10} {:>10} {:>10}", "preconditioner", "iterations", "ms", "setup ms"));
    if selected("cpu-serial") {
        let mut x = vec![0.0; a.rows()];
        match pcg_cpu(a, true, &b, &mut x, options) {
            Ok(report) if report.converged => {
                let error = residual_norm(a, &b, &x) / zero_residual;
                save(&record("cpu-serial sweep", "cpu", report.time_ms, report.iterations, error)).unwrap();
                table.push(format!(
                    "{:<30} {:>10} {:>10.1}",
                    "cpu sweep (CPU)", report.iterations, report.time_ms
                ));
            }
            other => s.failures.push(format!("CPU PCG on {name}: {other:?}")),
        }
    }
    let m = SymgsMatrix::upload(gpu, a).unwrap();
    let lib = Cusparse::new(gpu).unwrap();
    let db = gpu.upload(&b).unwrap();
    type Build<'a> = Box<dyn Fn() -> rgla::Result<Option<Box<dyn Smoother<f64> + 'a>>> + 'a>;
    let (m, lib) = (&m, &lib);
    let mut builders: Vec<(&str, Build)> = vec![("none (plain CG)", Box::new(|| Ok(None)))];
    if selected("level-schedule") {
        builders.push((
            "level-schedule-graph",
            Box::new(|| {
                Ok(Some(Box::new(LevelSmoother::new(gpu, m)?.use_graph(true)) as Box<dyn Smoother<f64>>))
            }),
        ));
    }
    if selected("sync-free") {
        builders.push(("sync-free", Box::new(|| Ok(Some(Box::new(SyncFreeSmoother::new(gpu, m)?) as _)))));
        builders.push((
            "sync-free-values",
            Box::new(|| Ok(Some(Box::new(SyncFreeSmoother::new(gpu, m)?.with_signal(Signal::Value)) as _))),
        ));
    }
    if selected("multicolor") {
        for (label, method) in
            [("multicolor", ColoringMethod::default()), ("multicolor-jp-sl", ColoringMethod::SmallestLast)]
        {
            builders.push((
                label,
                Box::new(move || Ok(Some(Box::new(MulticolorSmoother::from_matrix(gpu, m, method)?) as _))),
            ));
        }
    }
    if selected("cusparse-spsv") {
        builders.push((
            "cusparse-spsv",
            Box::new(|| Ok(Some(Box::new(CusparseSymgs::new(gpu, lib, m, a)?) as _))),
        ));
    }
    for (label, build) in &builders {
        let mut dx = gpu.zeros::<f64>(a.rows()).unwrap();
        // The smoother's setup and the solve, timed together; a first round warms up.
        let solve = |dx: &mut rgla::gpu::CudaSlice<f64>| -> rgla::Result<_> {
            gpu.memset_zeros(dx)?;
            gpu.synchronize()?;
            let started = std::time::Instant::now();
            let mut smoother = build()?;
            gpu.synchronize()?;
            let setup_ms = started.elapsed().as_secs_f64() * 1e3;
            let report = pcg_gpu(gpu, &m.csr, smoother.as_deref_mut(), &db, dx, options)?;
            Ok((report, setup_ms, smoother.map_or("none (plain CG)".to_string(), |s| s.name())))
        };
        let report = solve(&mut dx).and_then(|_| solve(&mut dx));
        match report {
            Ok((report, setup_ms, name)) if report.converged => {
                let error = residual_norm(a, &b, &gpu.download(&dx).unwrap()) / zero_residual;
                // Plain CG is there for scale: a reference, not one of the preconditioners.
                let kind = match *label {
                    "none (plain CG)" => REFERENCE,
                    l if l.starts_with("cusparse") => "vendor",
                    _ => "gpu",
                };
                let total_ms = setup_ms + report.time_ms;
                let mut record = record(&name, kind, total_ms, report.iterations, error);
                record.notes += &format!(" setup_ms={setup_ms:.1} solve_ms={:.1}", report.time_ms);
                save(&record).unwrap();
                table.push(format!("{name:<30} {:>10} {total_ms:>10.1} {setup_ms:>10.1}", report.iterations));
            }
            other => s.failures.push(format!("PCG with {label} on {name}: {:?}", other.map(|r| r.0))),
        }
    }
}
