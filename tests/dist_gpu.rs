//! Distributed SpMV and PCG on one GPU (parts exchanging halos by device copies), against the
//! CPU product and the single-GPU solve, for 1..8 parts; and NCCL on the GPUs present
//! (skipped, visibly, where NCCL cannot be loaded and `RGLA_REQUIRE_NCCL` is unset).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{gpu, random_vec, real_matrices};
use rgla::dist::partition::{Partition, block_diagonal, split};
use rgla::dist::pcg::{PartSmoothers, pcg};
use rgla::dist::{DistCsr, NcclId, run_on_gpus};
use rgla::error::Error;
use rgla::sparse::{Csr, GenSpec};
use rgla::spmv::cpu::csr_serial;
use rgla::symgs::pcg::{PcgOptions, pcg_gpu};
use rgla::symgs::sync_free::SyncFreeSmoother;
use rgla::symgs::{Smoother, SymgsMatrix};
use rgla::verify::{Tolerance, compare};
use rgla::{Gpu, Scalar};

fn spec<T: Scalar>(spec: &str) -> Csr<T> {
    spec.parse::<GenSpec>().unwrap().generate().unwrap()
}

/// Square matrices of every shape the partition meets: stencils (a halo on each side),
/// unordered meshes (halos everywhere), empty rows, a row holding most nonzeros, a dense
/// column, more parts than rows, and the real files.
fn corpus<T: Scalar>() -> Vec<(String, Csr<T>)> {
    let mut all: Vec<(String, Csr<T>)> = [
        "stencil27:20",
        "shuffle:poisson3d:16",
        "random:rows=5000,nnz_per_row=7,seed=3",
        "web:n=6000,seed=2",
        "circuit:n=5000,dense_rows=3,dense_len=2000",
        "powerlaw:n=3000",
        "delaunay:n=4000,seed=1",
    ]
    .iter()
    .map(|s| (s.to_string(), spec(s)))
    .collect();
    // One row holding most nonzeros, and a single dense column.
    let n = 700;
    let mut coo = rgla::sparse::Coo::new(n, n);
    for j in 0..n as u32 {
        coo.push(3, j, T::from_f64(1.0 + j as f64 * 1e-3));
        coo.push(j, 5, T::from_f64(0.5));
    }
    all.push(("a dense row and column".into(), coo.to_csr().unwrap()));
    all.push((
        "3x3 with an empty row".into(),
        Csr::new(3, 3, vec![0, 1, 1, 3], vec![0, 0, 2], vec![T::ONE; 3]).unwrap(),
    ));
    all.extend(real_matrices::<T>().into_iter().filter(|(_, a)| a.rows() == a.cols()));
    all
}

fn spmv_matches_the_cpu<T: Scalar>() {
    let gpu = Arc::new(gpu());
    for (name, a) in corpus::<T>() {
        let x = random_vec::<T>(a.cols(), 7);
        let mut expect = vec![T::ZERO; a.rows()];
        csr_serial(&a, &x, &mut expect).unwrap();
        let longest = a.row_stats().max;
        for parts in [1, 2, 3, 5, 8] {
            let what = format!("{name}, {parts} parts");
            let mut d = DistCsr::local(gpu.clone(), &a, parts).unwrap_or_else(|e| panic!("{what}: {e}"));
            let dx = d.scatter(&x).unwrap();
            let mut dy = d.zeros().unwrap();
            // Twice: the second product reuses the send and halo buffers.
            for _ in 0..2 {
                d.spmv(&dx, &mut dy).unwrap_or_else(|e| panic!("{what}: {e}"));
                let got = d.gather(&dy).unwrap();
                compare(&got, &expect, 1e-3).check(&what, T::tolerance(longest)).unwrap();
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn dist_spmv_matches_the_cpu_f64() {
    spmv_matches_the_cpu::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn dist_spmv_matches_the_cpu_f32() {
    spmv_matches_the_cpu::<f32>();
}

/// Sync-free smoothers on each part's local block.
fn part_smoothers<'m>(gpu: &Gpu, blocks: &'m [SymgsMatrix<f64>]) -> PartSmoothers<'m, f64> {
    blocks
        .iter()
        .map(|m| Box::new(SyncFreeSmoother::new(gpu, m).unwrap()) as Box<dyn Smoother<f64>>)
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn dist_pcg_matches_the_single_gpu_block_jacobi_solve() {
    let gpu = Arc::new(gpu());
    let options = PcgOptions { tolerance: 1e-8, max_iterations: 1000 };
    for name in ["stencil27:24", "shuffle:poisson3d:20", "delaunay:n=20000,seed=4"] {
        let a = spec::<f64>(name);
        let b = random_vec::<f64>(a.rows(), 11);
        let whole = SymgsMatrix::upload(&gpu, &a).unwrap();
        let db = gpu.upload(&b).unwrap();
        for parts in [1, 2, 3, 5, 8] {
            let what = format!("{name}, {parts} parts");
            let partition = Partition::balanced(&a, parts).unwrap();
            // The single-GPU run of the same preconditioner: SymGS on A's diagonal blocks.
            let blocks = SymgsMatrix::upload(&gpu, &block_diagonal(&a, &partition)).unwrap();
            let mut smoother = SyncFreeSmoother::new(&gpu, &blocks).unwrap();
            let mut x1 = gpu.zeros::<f64>(a.rows()).unwrap();
            let single = pcg_gpu(&gpu, &whole.csr, Some(&mut smoother), &db, &mut x1, options).unwrap();
            let x1 = gpu.download(&x1).unwrap();

            let mut d = DistCsr::local(gpu.clone(), &a, parts).unwrap();
            assert_eq!(d.partition, partition);
            let locals: Vec<SymgsMatrix<f64>> =
                split(&a, &partition).iter().map(|p| SymgsMatrix::upload(&gpu, &p.local).unwrap()).collect();
            let mut smoothers = part_smoothers(&gpu, &locals);
            let (db_d, mut dx) = (d.scatter(&b).unwrap(), d.zeros().unwrap());
            let report = pcg(&mut d, Some(&mut smoothers), &db_d, &mut dx, options)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(report.converged && single.converged, "{what}: {report:?} / single GPU {single:?}");
            assert!(
                report.iterations.abs_diff(single.iterations) <= 1,
                "{what}: {} iterations, {} on one GPU",
                report.iterations,
                single.iterations
            );
            let x = d.gather(&dx).unwrap();
            compare(&x, &x1, 0.0).check(&format!("{what}: x against one GPU"), 1e-6).unwrap();

            let mut x0 = d.zeros().unwrap();
            let plain = pcg(&mut d, None, &db_d, &mut x0, options).unwrap();
            let plain1 =
                pcg_gpu(&gpu, &whole.csr, None, &db, &mut gpu.zeros(a.rows()).unwrap(), options).unwrap();
            assert!(
                plain.converged && plain.iterations.abs_diff(plain1.iterations) <= 1,
                "{what}: plain CG {plain:?} / {plain1:?}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn dist_bad_input_is_an_error() {
    let gpu = Arc::new(gpu());
    let rect = Csr::<f64>::empty(4, 5).unwrap();
    assert!(DistCsr::local(gpu.clone(), &rect, 2).err().unwrap().to_string().contains("square"));
    let a = spec::<f64>("stencil27:6");
    let mut d = DistCsr::local(gpu.clone(), &a, 3).unwrap();
    assert!(d.scatter(&[1.0; 5]).err().unwrap().to_string().contains("5 values"));
    let (b, mut x) = (d.scatter(&vec![1.0; a.rows()]).unwrap(), d.zeros().unwrap());
    let locals: Vec<_> =
        split(&a, &d.partition).iter().map(|p| SymgsMatrix::upload(&gpu, &p.local).unwrap()).collect();
    let mut two = part_smoothers(&gpu, &locals[..2]);
    let e = pcg(&mut d, Some(&mut two), &b, &mut x, PcgOptions::default()).unwrap_err();
    assert!(e.to_string().contains("2 smoothers for 3 parts"), "{e}");
    let wrong = DistCsr::local(gpu.clone(), &a, 2).unwrap().zeros().unwrap();
    assert!(d.spmv(&wrong, &mut x).unwrap_err().to_string().contains("not distributed"));
}

/// NCCL's communicator, or None (the test skipped, visibly) where NCCL cannot be loaded and
/// `RGLA_REQUIRE_NCCL` (set by the bundle's script) is unset.
fn nccl_or_skip<T>(made: rgla::Result<T>, what: &str) -> Option<T> {
    match made {
        Err(Error::Library { library: "NCCL", what: "loading libnccl.so", .. })
            if std::env::var_os("RGLA_REQUIRE_NCCL").is_none() =>
        {
            eprintln!("SKIPPED {what}: NCCL not found (set LD_LIBRARY_PATH, or RGLA_REQUIRE_NCCL=1 to fail)");
            None
        }
        made => Some(made.unwrap_or_else(|e| panic!("{what}: {e}"))),
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn dist_nccl_matches_the_cpu_on_the_gpus_present() {
    let count = rgla::gpu::device_count().unwrap();
    let a = spec::<f64>("shuffle:stencil27:24");
    let x = random_vec::<f64>(a.rows(), 5);
    let mut expect = vec![0.0; a.rows()];
    csr_serial(&a, &x, &mut expect).unwrap();
    let tolerance = f64::tolerance(a.row_stats().max);
    // One process, one part per GPU.
    let gpus: Vec<Arc<Gpu>> = (0..count).map(|i| Arc::new(Gpu::with_ordinal(i).unwrap())).collect();
    let Some(mut d) = nccl_or_skip(DistCsr::on_gpus(gpus.clone(), &a), "NCCL SpMV") else { return };
    let (dx, mut dy) = (d.scatter(&x).unwrap(), d.zeros().unwrap());
    d.spmv(&dx, &mut dy).unwrap();
    compare(&d.gather(&dy).unwrap(), &expect, 0.0)
        .check(&format!("NCCL SpMV on {count} GPUs"), tolerance)
        .unwrap();
    let b = d.scatter(&expect).unwrap();
    let mut x0 = d.zeros().unwrap();
    let report = pcg(&mut d, None, &b, &mut x0, PcgOptions::default()).unwrap();
    assert!(report.converged, "NCCL CG on {count} GPUs: {report:?}");
    drop(d);
    // A thread per GPU.
    let rows = run_on_gpus(&a, count, |d| {
        let (dx, mut dy) = (d.scatter(&x)?, d.zeros()?);
        d.spmv(&dx, &mut dy)?;
        Ok((d.parts[0].rows.clone(), d.gather(&dy)?))
    })
    .unwrap();
    for (range, y) in rows {
        compare(&y, &expect[range.clone()], 0.0)
            .check(&format!("NCCL SpMV, thread of rows {range:?}"), tolerance)
            .unwrap();
    }
    // One process per GPU, here a world of one bootstrapped from an id file.
    let dir = tempfile::tempdir().unwrap();
    let id = NcclId::share(&dir.path().join("nccl-id"), 0, Duration::from_secs(5)).unwrap();
    let mut d = DistCsr::on_rank(gpus[0].clone(), &a, 0, 1, &id).unwrap();
    assert_eq!(d.agree(Ok(3)).unwrap(), 3);
    let own = d.agree::<()>(Err(Error::InvalidInput("this rank's own failure".into()))).unwrap_err();
    assert!(own.to_string().contains("own failure"), "{own}");
    let (dx, mut dy) = (d.scatter(&x).unwrap(), d.zeros().unwrap());
    d.spmv(&dx, &mut dy).unwrap();
    compare(&d.gather(&dy).unwrap(), &expect, 0.0).check("NCCL SpMV, rank 0 of 1", tolerance).unwrap();
}
