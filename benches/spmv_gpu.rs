//! GPU SpMV benchmark: every kernel and cuSPARSE on a matrix set that resembles SuiteSparse's
//! variety, f64 and f32, plus the CPU (serial and rayon). Each result is verified against
//! the serial CPU reference before it is recorded; a wrong result fails the run.
//!
//! Timing: CUDA events, after warm-up, median of many runs, each queued behind a hold so that it
//! times the GPU and not the host's submission (`Gpu::time_once`; our record) and criterion's
//! `iter_custom` statistics. The generated inputs are far larger than the L2 cache (50 MiB on
//! the H100); the real SuiteSparse files shipped in `benches/data/` (the largest of the
//! project's set) and any in `RGLA_BENCH_MATRICES` follow them. `RGLA_BENCH_INPUTS=generated`
//! or `=files` runs one group only.

mod common;

use common::Session;
use rgla::bench::{Record, cpu_median_ms, gpu_iters, gpu_median_ms, quick, save};
use rgla::gpu::CudaSlice;
use rgla::sparse::{Bsr, Csr, Hll, HllLayout, generate};
use rgla::spmv::bsr::{BsrKernel, DeviceBsr};
use rgla::spmv::csr::{CsrKernel, DeviceCsr};
use rgla::spmv::hll::{DeviceHll, HllKernel};
use rgla::spmv::{BlockWarps, bsr, cpu, csr, hll};
use rgla::vendor::cusparse::{Cusparse, CusparseSpmv, SpmvAlg};
use rgla::verify::compare;
use rgla::{Result, Scalar};

type Generator = Box<dyn Fn() -> Result<Csr<f64>>>;

/// The matrix set: (name, generator). `scale` divides the sizes for a quick run.
fn matrices(scale: usize) -> Vec<(String, Generator)> {
    let s = |n: usize| (n / scale).max(8);
    let c = |n: f64| ((n / (scale as f64).cbrt()) as usize).max(4);
    let q = |n: f64| ((n / (scale as f64).sqrt()) as usize).max(4);
    let (n27, n7, nfem, n2d) = (c(160.0), c(200.0), c(64.0), q(3000.0));
    let (nb, nr, np, nroad) = (s(4_194_304), s(2_000_000), s(4_000_000), s(16_000_000));
    // The irregular families, 14 M to 32 M nonzeros at full size.
    let rmat_scale = 21 - (scale as f64).log2().round() as u32;
    let (nweb, ncircuit, dense_len, nmesh, n_shuffled) =
        (s(6_000_000), s(5_000_000), s(20_000), s(2_000_000), c(128.0));
    vec![
        (format!("stencil27 {n27}^3"), Box::new(move || generate::stencil27(n27, n27, n27))),
        (format!("poisson3d {n7}^3"), Box::new(move || generate::poisson3d(n7, n7, n7))),
        (format!("poisson2d {n2d}^2"), Box::new(move || generate::poisson2d(n2d, n2d))),
        (format!("fem {nfem}^3 dof3"), Box::new(move || generate::fem(nfem, nfem, nfem, 3, 1))),
        (format!("banded {nb} bw64 27/row"), Box::new(move || generate::banded(nb, 64, Some(27), false, 2))),
        (format!("random {nr} 16/row"), Box::new(move || generate::random_uniform(nr, nr, 16, 3))),
        (format!("powerlaw {np}"), Box::new(move || generate::power_law(np, 1, 100_000, 1.6, 4))),
        (format!("road {nroad}"), Box::new(move || generate::road(nroad, 100, 5))),
        (
            format!("rmat scale {rmat_scale} ef 16"),
            Box::new(move || generate::rmat(rmat_scale, 16, 0.57, 0.19, 0.19, 6)),
        ),
        (format!("web {nweb}"), Box::new(move || generate::web(nweb, 7))),
        (format!("circuit {ncircuit}"), Box::new(move || generate::circuit(ncircuit, 20, dense_len, 8))),
        (format!("delaunay {nmesh}"), Box::new(move || generate::delaunay(nmesh, 9))),
        (
            format!("shuffle poisson3d {n_shuffled}^3"),
            Box::new(move || {
                generate::shuffle(&generate::poisson3d(n_shuffled, n_shuffled, n_shuffled)?, 10)
            }),
        ),
    ]
}

/// The Matrix Market files of `benches/data/` and of `RGLA_BENCH_MATRICES`, as generators
/// (read when their turn comes; complex and dense files are then skipped with a message).
fn files() -> Vec<(String, Generator)> {
    let shipped =
        [std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data"), "benches/data".into()]
            .into_iter()
            .find(|dir| dir.is_dir());
    let extra = std::env::var_os("RGLA_BENCH_MATRICES").map(std::path::PathBuf::from);
    let mut paths: Vec<std::path::PathBuf> = shipped
        .into_iter()
        .chain(extra)
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".mtx") || p.to_string_lossy().ends_with(".mtx.gz"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let make: Generator = Box::new(move || rgla::mm::read_coo::<f64>(&path)?.coo.to_csr());
            (name, make)
        })
        .collect()
}

fn main() {
    let mut session = Session::start();
    if let Some(gpu) = &session.gpu {
        let gbps = rgla::bench::record_copy_bandwidth(gpu).unwrap();
        eprintln!("{}: device-to-device copy {gbps:.0} GB/s", gpu.props());
    }
    let scale = if quick() { 16 } else { 1 };
    let group = std::env::var("RGLA_BENCH_INPUTS").unwrap_or_default();
    let mut inputs = Vec::new();
    if group != "files" {
        inputs.extend(matrices(scale));
    }
    if group != "generated" {
        inputs.extend(files());
    }
    for (name, make) in inputs {
        let a64 = match make() {
            Ok(a) => a,
            Err(rgla::Error::MatrixMarket(e)) => {
                eprintln!("spmv: {name} skipped: {e}");
                continue;
            }
            Err(e) => panic!("generating {name}: {e}"),
        };
        let a32 = a64.cast::<f32>();
        eprintln!("spmv: {name}: {} rows, {} nnz", a64.rows(), a64.nnz());
        matrix(&mut session, &name, &a64);
        matrix(&mut session, &name, &a32);
    }
    session.finish();
}

/// Whether `RGLA_BENCH_KERNELS` selects the kernel named `name`.
fn selected(name: &str) -> bool {
    rgla::bench::selected("RGLA_BENCH_KERNELS", name)
}

type Run<'r, T> = &'r mut dyn FnMut(&CudaSlice<T>, &mut CudaSlice<T>) -> Result<()>;

fn matrix<T: Scalar>(s: &mut Session, name: &str, a: &Csr<T>) {
    let x = generate::vector_1_to_5::<T>(a.cols(), 9);
    let mut expect = vec![T::ZERO; a.rows()];
    let serial_ms =
        cpu_median_ms(if quick() { 1 } else { 3 }, || cpu::csr_serial(a, &x, &mut expect).unwrap());
    let mut y = vec![T::ZERO; a.rows()];
    let rayon_ms = cpu_median_ms(if quick() { 2 } else { 5 }, || cpu::csr_rayon(a, &x, &mut y).unwrap());
    let flops = 2.0 * a.nnz() as f64;
    let elem = size_of::<T>();
    let csr_bytes = (a.nnz() * (elem + 4) + (a.rows() + 1) * 4 + (a.rows() + a.cols()) * elem) as f64;
    // The GPU copy first: its analysis (the adaptive kernel's choice) is timed and noted apart.
    let da = s.gpu.as_ref().map(|gpu| DeviceCsr::upload(gpu, a).unwrap());
    let mut notes = format!("rows={} cols={} nnz={}", a.rows(), a.cols(), a.nnz());
    if let Some(da) = &da {
        notes += &format!(" analysis_ms={:.2} adaptive={}", da.analysis_ms, da.choice());
    }
    let record = |kernel: &str, kind: &str, time_ms: f64, runs: usize, error: f64, bytes: f64| Record {
        operation: "spmv".into(),
        input: name.into(),
        kernel: kernel.into(),
        kind: kind.into(),
        precision: T::NAME.into(),
        time_ms,
        runs,
        flops,
        min_bytes: bytes,
        error,
        notes: notes.clone(),
    };
    save(&record("cpu-serial", "cpu", serial_ms, 3, 0.0, csr_bytes)).unwrap();
    let rayon_error = compare(&y, &expect, 1e-3).relative_error;
    save(&record("cpu-rayon", "cpu", rayon_ms, 5, rayon_error, csr_bytes)).unwrap();
    let Some(gpu) = s.gpu.as_ref() else { return };

    let dx = gpu.upload(&x).unwrap();
    let mut dy = gpu.zeros::<T>(a.rows()).unwrap();
    let poison = vec![T::from_f64(f64::NAN); a.rows()];
    let longest_row = a.row_stats().max;
    let tolerance = T::tolerance(longest_row);
    let mut measure = |kernel: &str, kind: &str, bytes: f64, run: Run<T>| {
        if !selected(kernel) {
            return;
        }
        let what = format!("{kernel} {} on {name}", T::NAME);
        gpu.upload_into(&poison, &mut dy).unwrap();
        let checked =
            run(&dx, &mut dy).and_then(|()| gpu.download(&dy)).map(|got| compare(&got, &expect, 1e-3));
        let error = match checked {
            Ok(c) if c.passes(tolerance) => c.relative_error,
            Ok(c) => return s.failures.push(c.check(&what, tolerance).unwrap_err().to_string()),
            Err(e) => return s.failures.push(format!("{what}: {e}")),
        };
        let runs = if quick() { 10 } else { 30 };
        let ms = gpu_median_ms(gpu, 3, runs, || run(&dx, &mut dy)).unwrap();
        save(&record(kernel, kind, ms, runs, error, bytes)).unwrap();
        let id = format!("spmv/{name}/{kernel}/{}", T::NAME);
        s.criterion
            .bench_function(&id, |b| b.iter_custom(|iters| gpu_iters(gpu, iters, || run(&dx, &mut dy))));
    };

    // cuSPARSE first: the line every kernel is compared with.
    let da = da.expect("uploaded above where there is a GPU");
    let lib = Cusparse::new(gpu).unwrap();
    for (alg, label) in [(SpmvAlg::CsrAlg1, "cusparse-alg1"), (SpmvAlg::CsrAlg2, "cusparse-alg2")] {
        let plan = CusparseSpmv::csr(gpu, &lib, &da, alg).unwrap();
        measure(label, "vendor", csr_bytes, &mut |x, y| plan.run(gpu, x, y));
    }
    let mut kernels: Vec<CsrKernel> = CsrKernel::ALL.to_vec();
    kernels.extend([2, 4, 16, 32].map(CsrKernel::Vector));
    for kernel in kernels {
        // The thread-per-row kernel is hopeless on rows of thousands: skip it there; the
        // 16-bit gaps exist only where every gap fits, hot columns only where a few
        // columns hold many nonzeros, row patterns only where the rows repeat a few.
        if kernel == CsrKernel::Scalar && longest_row > 10_000
            || kernel == CsrKernel::Gaps16 && !da.has_gaps16()
            || matches!(kernel, CsrKernel::MergeHot | CsrKernel::SplitHot) && !da.has_hot_columns()
            || kernel == CsrKernel::Patterns && !da.has_patterns()
        {
            continue;
        }
        let warps = BlockWarps::new(4).unwrap();
        measure(&kernel.name(), "gpu", csr_bytes, &mut |x, y| csr::spmv(gpu, &da, kernel, warps, x, y));
    }
    drop(da);

    // HLL where its padding is moderate (power-law rows would pad it to many times nnz).
    let layouts =
        if selected("hll-") { vec![HllLayout::RowMajor, HllLayout::ColumnMajor] } else { Vec::new() };
    for layout in layouts {
        let h = Hll::from_csr(a, 32, layout).unwrap();
        if h.padding_ratio() > 1.0 {
            eprintln!("  HLL {layout:?}: padding ratio {:.2}, skipped", h.padding_ratio());
            continue;
        }
        let dh = DeviceHll::upload(gpu, &h).unwrap();
        let bytes = dh.min_traffic_bytes() as f64;
        for kernel in HllKernel::ALL.into_iter().filter(|k| k.layout() == layout) {
            let warps = BlockWarps::new(4).unwrap();
            measure(kernel.name(), "gpu", bytes, &mut |x, y| hll::spmv(gpu, &dh, kernel, warps, x, y));
        }
    }

    // BSR on the block-structured input only.
    if name.starts_with("fem") && (selected("bsr-") || selected("cusparse-bsr")) {
        let b = Bsr::from_csr(a, 3).unwrap();
        let db = DeviceBsr::upload(gpu, &b).unwrap();
        let bytes = db.min_traffic_bytes() as f64;
        for kernel in BsrKernel::ALL {
            let warps = BlockWarps::new(4).unwrap();
            measure(kernel.name(), "gpu", bytes, &mut |x, y| bsr::spmv(gpu, &db, kernel, warps, x, y));
        }
        match CusparseSpmv::bsr(gpu, &lib, &db) {
            Ok(plan) => measure("cusparse-bsr", "vendor", bytes, &mut |x, y| plan.run(gpu, x, y)),
            Err(e) => eprintln!("  cuSPARSE BSR: {e}"),
        }
    }
}
