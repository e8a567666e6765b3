//! A 3-D Poisson problem (7-point stencil, 64^3 unknowns) solved by conjugate gradients
//! preconditioned with one symmetric Gauss-Seidel sweep (the sync-free smoother, exact
//! sequential order), next to plain CG; the answer checked on the CPU.
//!
//! Run: `cargo run --release --example pcg`

use std::process::ExitCode;

use rgla::sparse::GenSpec;
use rgla::spmv::cpu;
use rgla::symgs::SymgsMatrix;
use rgla::symgs::pcg::{PcgOptions, pcg_gpu};
use rgla::symgs::sync_free::{Signal, SyncFreeSmoother};
use rgla::{Error, Gpu, Result};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pcg: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let spec: GenSpec = "poisson3d:64".parse()?;
    let a = spec.generate::<f64>()?;
    let n = a.rows();
    // b = A 1, so the exact solution is all ones.
    let mut b = vec![0.0; n];
    cpu::csr_serial(&a, &vec![1.0; n], &mut b)?;
    println!("{spec}: {n} unknowns, {} nonzeros", a.nnz());

    let gpu = Gpu::new()?;
    let matrix = SymgsMatrix::upload(&gpu, &a)?;
    let b_gpu = gpu.upload(&b)?;
    let options = PcgOptions { tolerance: 1e-8, max_iterations: 1000 };
    let mut smoother = SyncFreeSmoother::new(&gpu, &matrix)?.with_signal(Signal::Value);
    for preconditioned in [true, false] {
        let mut x = gpu.zeros::<f64>(n)?;
        let smoother = preconditioned.then_some(&mut smoother as &mut dyn rgla::symgs::Smoother<f64>);
        let report = pcg_gpu(&gpu, &matrix.csr, smoother, &b_gpu, &mut x, options)?;
        // The true residual, on the CPU.
        let x = gpu.download(&x)?;
        let mut ax = vec![0.0; n];
        cpu::csr_serial(&a, &x, &mut ax)?;
        let norm = |v: &mut dyn Iterator<Item = f64>| v.map(|e| e * e).sum::<f64>().sqrt();
        let residual = norm(&mut ax.iter().zip(&b).map(|(ax, b)| b - ax)) / norm(&mut b.iter().copied());
        if !report.converged || residual > 1e-7 {
            return Err(Error::Verification(format!(
                "did not converge: ||b - A x|| / ||b|| = {residual:.1e}"
            )));
        }
        let name = if preconditioned { "SymGS-preconditioned CG" } else { "plain CG" };
        println!(
            "  {name:<24} {:>4} iterations {:>8.2} ms   ||b - A x|| / ||b|| = {residual:.1e}: verified",
            report.iterations, report.time_ms
        );
    }
    Ok(())
}
