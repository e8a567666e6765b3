//! y = A x for a Matrix Market file: this library's default CSR kernel against cuSPARSE's CSR
//! algorithms, each result checked against the CPU before its time is printed.
//!
//! Run: `cargo run --release --example spmv_file -- tests/data/cage4.mtx`

use std::process::ExitCode;

use rgla::spmv::csr::{CsrKernel, DeviceCsr, spmv};
use rgla::spmv::{BlockWarps, cpu};
use rgla::vendor::cusparse::{Cusparse, CusparseSpmv, SpmvAlg};
use rgla::verify::compare;
use rgla::{Error, Gpu, Result};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("spmv_file: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let path =
        std::env::args().nth(1).ok_or_else(|| Error::InvalidInput("usage: spmv_file FILE.mtx".into()))?;
    let a = rgla::mm::read_coo::<f64>(&path)?.coo.to_csr()?;
    println!("{path}: {} x {}, {} nonzeros", a.rows(), a.cols(), a.nnz());
    let x = rgla::sparse::generate::vector_1_to_5::<f64>(a.cols(), 1);
    let mut expect = vec![0.0; a.rows()];
    cpu::csr_serial(&a, &x, &mut expect)?;

    let gpu = Gpu::new()?;
    let a_gpu = DeviceCsr::upload(&gpu, &a)?; // also picks the adaptive kernel's width
    let x_gpu = gpu.upload(&x)?;
    let mut y = gpu.zeros::<f64>(a.rows())?;
    let cusparse = Cusparse::new(&gpu)?;
    let mut run = |name: &str, spmv_once: &mut dyn FnMut(&mut rgla::gpu::CudaSlice<f64>) -> Result<()>| {
        gpu.upload_into(&vec![f64::NAN; a.rows()], &mut y)?; // poisoned: every row must be written
        spmv_once(&mut y)?;
        let check = compare(&gpu.download(&y)?, &expect, 0.0);
        check.check(name, 1e-12)?;
        let ms = gpu.time(3, 50, || spmv_once(&mut y))?.median_ms();
        let gflops = 2.0 * a.nnz() as f64 / (ms * 1e6);
        println!(
            "  {name:<14} {ms:>9.4} ms {gflops:>8.1} GFLOPS   error {:.1e}: verified",
            check.relative_error
        );
        Ok::<f64, Error>(ms)
    };
    let ours = run("csr-adaptive", &mut |y| {
        spmv(&gpu, &a_gpu, CsrKernel::Adaptive, BlockWarps::DEFAULT, &x_gpu, y)
    })?;
    let mut vendor = f64::INFINITY;
    for (name, alg) in [("cusparse-alg1", SpmvAlg::CsrAlg1), ("cusparse-alg2", SpmvAlg::CsrAlg2)] {
        let plan = CusparseSpmv::csr(&gpu, &cusparse, &a_gpu, alg)?;
        vendor = vendor.min(run(name, &mut |y| plan.run(&gpu, &x_gpu, y))?);
    }
    println!("csr-adaptive: {:.2}x the faster cuSPARSE algorithm ({})", vendor / ours, gpu.props().name);
    Ok(())
}
