//! The distributed SpMV and PCG behind `--gpus`, `--parts` and `--world`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rgla::dist::pcg::{PartSmoothers, pcg as dist_pcg};
use rgla::dist::{DistCsr, NcclId, partition, run_on_gpus};
use rgla::sparse::Csr;
use rgla::symgs::SymgsMatrix;
use rgla::symgs::pcg::PcgOptions;
use rgla::vendor::cusparse::Cusparse;
use rgla::{Gpu, Result, Scalar};

use crate::SymgsArgs;

#[derive(clap::Args)]
pub(crate) struct DistArgs {
    /// Spread the matrix over the first N GPUs, one part each, in this process (NCCL).
    #[arg(long, conflicts_with_all = ["parts", "world"])]
    gpus: Option<usize>,
    /// Cut the matrix into N parts on one GPU, halos moved by device copies: the distributed
    /// code without several GPUs.
    #[arg(long, conflicts_with = "world")]
    parts: Option<usize>,
    /// One process per GPU: this one is rank --rank of --world, on GPU (rank mod GPUs present);
    /// rank 0 writes the NCCL id to the file --nccl-id, the others wait for it there.
    #[arg(long, requires_all = ["rank", "nccl_id"])]
    world: Option<usize>,
    /// This process's rank, 0..world (with --world).
    #[arg(long, requires = "world")]
    rank: Option<usize>,
    /// The file the NCCL id is shared through, on a file system every rank sees, at a path
    /// no earlier run left behind (with --world).
    #[arg(long, requires = "world")]
    nccl_id: Option<PathBuf>,
}

impl DistArgs {
    pub(crate) fn active(&self) -> bool {
        self.gpus.is_some() || self.parts.is_some() || self.world.is_some()
    }

    /// "2 GPUs (NCCL)", "4 parts on one GPU", "rank 1 of 8 (NCCL)".
    fn describe(&self) -> String {
        match (self.gpus, self.parts, self.world, self.rank) {
            (Some(n), ..) => format!("{n} GPUs (NCCL, a thread each)"),
            (_, Some(n), ..) => format!("{n} parts on one GPU"),
            (.., Some(world), Some(rank)) => format!("rank {rank} of {world} (NCCL)"),
            _ => unreachable!("a distributed run"),
        }
    }
}

/// Runs `work` on each part the arguments name, held by this process (a thread per GPU with
/// --gpus); the results by rank.
fn on_parts<T: Scalar, R: Send>(
    args: &DistArgs,
    a: &Csr<T>,
    work: impl Fn(&mut DistCsr<T>) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    if let Some(n) = args.gpus {
        return run_on_gpus(a, n, work);
    }
    let mut d = if let (Some(world), Some(rank), Some(path)) = (args.world, args.rank, &args.nccl_id) {
        let id = NcclId::share(path, rank, Duration::from_secs(120))?;
        let gpu = Gpu::with_ordinal(rank % rgla::gpu::device_count()?)?;
        DistCsr::on_rank(Arc::new(gpu), a, rank, world, &id)?
    } else {
        DistCsr::local(Arc::new(Gpu::new()?), a, args.parts.unwrap_or(1))?
    };
    Ok(vec![work(&mut d)?])
}

/// The rows the parts of `d` hold, of a global vector.
fn held<T: Copy>(d: &DistCsr<T>, global: &[T]) -> Vec<T> {
    d.parts.iter().flat_map(|p| global[p.rows.clone()].iter().copied()).collect()
}

/// What one holder of parts measured.
struct Measured<T> {
    setup_ms: f64,
    ms: f64,
    halo: usize,
    /// The result's rows held there, and the reference's.
    y: Vec<T>,
    expect: Vec<T>,
}

/// y = A x on the parts: the median time of `runs` products (every GPU waited for; the
/// slowest holder's), checked against `reference` on every row held in this process.
pub(crate) fn spmv<T: Scalar>(
    args: &DistArgs,
    name: &str,
    a: &Csr<T>,
    x: &[T],
    reference: &[T],
    runs: usize,
    verify: bool,
) -> Result<()> {
    let started = Instant::now();
    let measured = on_parts(args, a, |d| {
        d.synchronize()?;
        let setup_ms = started.elapsed().as_secs_f64() * 1e3;
        let (dx, mut dy) = d.agree(d.scatter(x).and_then(|x| Ok((x, d.zeros()?))))?;
        let mut error = None;
        let ms = rgla::bench::cpu_median_ms(runs, || {
            if let Err(e) = d.spmv(&dx, &mut dy).and_then(|()| d.synchronize()) {
                error = Some(e);
            }
        });
        if let Some(e) = error {
            return Err(e);
        }
        let halo =
            d.parts.iter().map(|p| p.plan().receives.iter().map(|(_, r)| r.len()).sum::<usize>()).sum();
        Ok(Measured { setup_ms, ms, halo, y: d.gather(&dy)?, expect: held(d, reference) })
    })?;
    let slowest = |f: fn(&Measured<T>) -> f64| measured.iter().map(f).fold(0.0, f64::max);
    let ms = slowest(|m| m.ms);
    println!(
        "{name}: {} x {}, {} nnz; csr-adaptive on {} {}: {ms:.4} ms (median of {}, wall clock), {:.2} GFLOPS; \
         setup {:.1} ms; {} halo values received per product",
        a.rows(),
        a.cols(),
        a.nnz(),
        args.describe(),
        T::NAME,
        runs.max(1),
        2.0 * a.nnz() as f64 / (ms * 1e6),
        slowest(|m| m.setup_ms),
        measured.iter().map(|m| m.halo).sum::<usize>(),
    );
    let y: Vec<T> = measured.iter().flat_map(|m| m.y.iter().copied()).collect();
    let expect: Vec<T> = measured.iter().flat_map(|m| m.expect.iter().copied()).collect();
    crate::report_error(verify, &y, &expect, T::tolerance(a.row_stats().max))
}

/// PCG on the parts, each part preconditioned by `--variant` on its local block.
pub(crate) fn pcg<T: Scalar>(
    args: &DistArgs,
    a: &Csr<T>,
    b: &[T],
    symgs: &SymgsArgs,
    options: PcgOptions,
) -> Result<()> {
    let started = Instant::now();
    let reports = on_parts(args, a, |d| {
        let blocks: Vec<_> =
            d.parts.iter().map(|p| (partition::local_block(a, &d.partition, p.rank), p)).collect();
        // Each step agreed on, so that a failure on one rank stops them all.
        let locals = d.agree(
            blocks
                .iter()
                .map(|(block, p)| Ok((SymgsMatrix::upload(&p.gpu, block)?, Cusparse::new(&p.gpu)?)))
                .collect::<Result<Vec<_>>>(),
        )?;
        let built: Result<Vec<_>> = locals
            .iter()
            .zip(&blocks)
            .map(|((m, lib), (block, p))| crate::smoother(&p.gpu, lib, m, block, symgs, true))
            .collect();
        let mut smoothers: PartSmoothers<T> = d.agree(built)?.into_iter().flatten().collect();
        d.synchronize()?;
        let setup_ms = started.elapsed().as_secs_f64() * 1e3;
        let (db, mut dx) = d.agree(d.scatter(b).and_then(|b| Ok((b, d.zeros()?))))?;
        let preconditioned = !smoothers.is_empty();
        Ok((setup_ms, dist_pcg(d, preconditioned.then_some(&mut smoothers), &db, &mut dx, options)?))
    })?;
    // The slowest holder's times (every rank runs the same iterations).
    let mut report = reports[0].1;
    report.time_ms = reports.iter().map(|(_, r)| r.time_ms).fold(0.0, f64::max);
    let setup_ms = reports.iter().map(|(setup, _)| *setup).fold(0.0, f64::max);
    println!(
        "  {}, {} per part (block Jacobi between parts): setup {setup_ms:.1} ms, {:.3} ms per iteration",
        args.describe(),
        symgs.variant,
        report.time_ms / report.iterations.max(1) as f64
    );
    crate::print_pcg(&report, symgs.verify)
}
