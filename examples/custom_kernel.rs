//! A kernel of your own, written in Rust, declared once and launched typed from the host.
//!
//! The device side is one file, `kernels/src/examples.rs`: a generic function marked
//! `#[gpu::kernel(T = f32 | f64)]`. The build compiles it to PTX with an entry point per type
//! (`examples_row_norms_f32`, `examples_row_norms_f64`) and writes the host launcher
//! `rgla::kernels::examples::row_norms` from the same parameter list: buffers where the kernel
//! takes pointers, the entry point picked from `T`. A wrong argument does not compile.
//!
//! Run: `cargo run --release --example custom_kernel`

use std::process::ExitCode;

use rgla::kernels::examples::row_norms;
use rgla::verify::compare;
use rgla::{Gpu, Launch, Result, Scalar};

fn main() -> ExitCode {
    match run::<f32>().and_then(|()| run::<f64>()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("custom_kernel: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run<T: Scalar>() -> Result<()> {
    let (rows, cols) = (10_000, 1_000);
    let a: Vec<T> = rgla::sparse::generate::vector_1_to_5(rows * cols, 7);
    // The CPU reference, in f64.
    let expect: Vec<f64> = a.chunks(cols).map(|row| row.iter().map(|&v| v.into() * v.into()).sum()).collect();

    let gpu = Gpu::new()?;
    let a_gpu = gpu.upload(&a)?;
    let mut norms = gpu.filled(rows, T::from_f64(f64::NAN))?; // poisoned: every row must be written
    let launch = Launch::warp_per_item(rows, 4);
    // SAFETY: `a_gpu` holds rows x cols values and `norms` one per row, as the kernel indexes.
    let mut launch_once = || unsafe { row_norms(&gpu, launch, rows as u32, cols as u32, &a_gpu, &mut norms) };
    launch_once()?;
    let time = gpu.time(2, 20, &mut launch_once)?;

    let got = gpu.download(&norms)?;
    let tolerance = 1e2 * T::EPSILON;
    let check = compare(&got, &expect, 0.0);
    check.check(&format!("row_norms {}", T::NAME), tolerance)?;
    let gbps = (rows * cols * size_of::<T>()) as f64 / (time.median_ms() * 1e6);
    println!(
        "row_norms<{}> on {rows} x {cols}: {:.3} ms ({gbps:.0} GB/s), relative error {:.1e} against the CPU: verified",
        T::NAME,
        time.median_ms(),
        check.relative_error
    );
    Ok(())
}
