//! `rgla`: inspect a Matrix Market file, run one SpMV or GEMM kernel (CPU, ours on the GPU, or
//! the vendor library's) and print its time, GFLOPS and error against the CPU reference.
//! Errors go to stderr with a non-zero exit code.

/// `println!` that ends the program quietly once stdout is closed (`rgla ... | head`), where
/// std's panics with a backtrace.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            crate::stdout_failed(e)
        }
    }};
}

mod dist;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use rgla::gemm::{self, GemmKernel};
use rgla::gpu::CudaSlice;
use rgla::memory::Footprint;
use rgla::sparse::{Csr, GenSpec, HllLayout};
use rgla::spmv::bsr::{BsrKernel, DeviceBsr};
use rgla::spmv::csr::{CsrKernel, DeviceCsr};
use rgla::spmv::hll::{DeviceHll, HllKernel};
use rgla::spmv::{BlockWarps, bsr, cpu, csr, hll};
use rgla::symgs::{Smoother, SymgsMatrix};
use rgla::vendor::cublas::{Cublas, CublasGemm};
use rgla::vendor::cusparse::{Cusparse, CusparseSpmv, SpmvAlg};
use rgla::verify::compare;
use rgla::{Error, Gpu, Result, Scalar};

#[derive(Parser)]
#[command(name = "rgla", version, about = "GPU sparse and dense linear algebra with kernels written in Rust")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rows, columns, nonzeros (after symmetric expansion and summing duplicates), field and
    /// symmetry as read, nonzeros per row.
    Inspect {
        file: PathBuf,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// y = A x with one kernel.
    Spmv(SpmvArgs),
    /// C = A B for random m x k and k x n matrices with one kernel.
    Gemm(GemmArgs),
    /// Symmetric Gauss-Seidel sweeps on A x = b from x = 0, with one smoother (b: integers 1 to
    /// 5, the bench's right-hand side).
    Symgs(SymgsArgs),
    /// Conjugate gradients on A x = b (as for symgs), preconditioned by one sweep of a smoother.
    Pcg(SymgsArgs),
    /// A x = b by Gaussian elimination with partial pivoting (manufactured solution).
    Solve(SolveArgs),
}

#[derive(clap::Args)]
pub(crate) struct SymgsArgs {
    /// A Matrix Market file (square, with a full nonzero diagonal).
    #[arg(long, conflicts_with = "generate", required_unless_present = "generate")]
    matrix: Option<PathBuf>,
    /// A generator spec, e.g. `stencil27:64x64x64`, `random:rows=100000,nnz_per_row=9,spd=true`.
    #[arg(long)]
    generate: Option<String>,
    /// `cpu`, `ready-done` (the GPU101 report), `levels`, `levels-graph`, `level-copies` (few
    /// wide levels, symmetric patterns), `sync-free`, `sync-free-values`, `multicolor` (a different smoother, replayed from a CUDA graph),
    /// `multicolor-launches` (the same, launched kernel by kernel), `multicolor-csr` and
    /// `multicolor-ell` (rows colored one by one, not by node blocks, the copy read in that
    /// form whatever its padding), `cusparse`; for pcg
    /// also `none`.
    #[arg(long, default_value = "levels-graph")]
    variant: String,
    /// multicolor: how the rows are colored: `auto` (2 colors by breadth-first level parity
    /// where the matrix is bipartite, else `jp`, but `jp-sl` on a matrix whose row order has
    /// no locality),
    /// `jp` (Jones-Plassmann on the GPU, larger degree first, ties in row order), `jp-random`
    /// (Jones-Plassmann with hashed priorities), `jp-sl` (Jones-Plassmann in smallest-last
    /// order: fewer colors on unstructured meshes, a longer setup), `greedy` (first fit in row
    /// order, on the host).
    #[arg(long, default_value = "auto")]
    coloring: String,
    /// multicolor: lanes per row (per block of rows where the matrix has node blocks), 2, 4,
    /// 8, 16 or 32, instead of the width each color's mean row length calls for.
    #[arg(long)]
    lanes: Option<u32>,
    /// Symmetric sweeps (symgs) in one call (multicolor and level copies carry work from one
    /// sweep to the next), timed together after an untimed call.
    #[arg(long, default_value_t = 1)]
    sweeps: usize,
    /// Relative residual at which PCG stops.
    #[arg(long, default_value_t = 1e-8)]
    tolerance: f64,
    #[arg(long, default_value_t = 1000)]
    max_iterations: usize,
    #[arg(long, value_enum, default_value = "f64")]
    precision: Precision,
    /// symgs: compare with the CPU sweeps (multicolor: in its row order, by color); pcg: fail
    /// unless it converges.
    #[arg(long)]
    verify: bool,
    #[command(flatten)]
    dist: dist::DistArgs,
}

#[derive(clap::Args)]
struct SolveArgs {
    /// Size of a random system with a known solution (b = A x).
    #[arg(long, required_unless_present = "matrix")]
    n: Option<usize>,
    /// A Matrix Market file (array or coordinate) for A instead; b = A x for a random x.
    #[arg(long)]
    matrix: Option<PathBuf>,
    /// `classic` (the Milan report), `classic-parallel`, `blocked`, `mixed` (f64: an f32 LU on
    /// TF32 tensor cores, refined in f64), `cusolver`, `cusolver-irs` (cuSOLVER's TF32
    /// refinement solver, f64), `cpu-serial`, `cpu-blocked`.
    #[arg(long, default_value = "blocked")]
    kernel: String,
    #[arg(long, value_enum, default_value = "f64")]
    precision: Precision,
    /// Fail unless the backward error ||Ax - b|| / (||A|| ||x|| + ||b||) is near rounding.
    #[arg(long)]
    verify: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Precision {
    F32,
    F64,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Format {
    Csr,
    Bsr,
    Hll,
}

#[derive(clap::Args)]
struct SpmvArgs {
    /// A Matrix Market file.
    #[arg(long, conflicts_with = "generate", required_unless_present_any = ["generate", "list"])]
    matrix: Option<PathBuf>,
    /// A generator spec, e.g. `stencil27:64x64x64`, `rmat:scale=20,edge_factor=16`, `shuffle:poisson3d:128`.
    #[arg(long)]
    generate: Option<String>,
    #[arg(long, value_enum, default_value = "csr")]
    format: Format,
    /// `cpu-serial`, `cpu-rayon`, a GPU kernel of the format or a cuSPARSE baseline (`--list`).
    #[arg(long, default_value = "cpu-serial")]
    kernel: String,
    #[arg(long, value_enum, default_value = "f64")]
    precision: Precision,
    /// Warps per block for the GPU kernels that take one (1..=5 in the reports).
    #[arg(long, default_value_t = 4)]
    block_size: u32,
    /// BSR block size.
    #[arg(long, default_value_t = 8)]
    bsr_block: usize,
    /// HLL hack size.
    #[arg(long, default_value_t = 32)]
    hack: usize,
    /// Timed runs (the median is printed).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Compare the result with the serial CSR reference and fail if it is off.
    #[arg(long)]
    verify: bool,
    /// List the kernel names and exit.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    dist: dist::DistArgs,
}

#[derive(clap::Args)]
struct GemmArgs {
    #[arg(long)]
    m: usize,
    #[arg(long)]
    k: usize,
    #[arg(long)]
    n: usize,
    /// `tiled`, `blocked`, `blocked-wide` (f32), `dmma`, `dmma16`, `dmma-pipelined`, `dmma-tma` (f64),
    /// `tf32` (f32 on TF32 tensor cores), `tf32-wgmma` (the same through Hopper's warpgroup
    /// MMA, H100 and H200), `cublas`, `cublas-tf32`, `cpu-serial` or `cpu-rayon`.
    #[arg(long, default_value = "blocked")]
    kernel: String,
    #[arg(long, value_enum, default_value = "f32")]
    precision: Precision,
    /// Tile size of the `tiled` kernel: 2, 4, 8, 16 or 32.
    #[arg(long)]
    tile: Option<u32>,
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Compare with the f64 CPU reference and fail if it is off.
    #[arg(long)]
    verify: bool,
}

/// One CPU SpMV into y.
type CpuRun<'a, T> = dyn FnMut(&mut [T]) -> Result<()> + 'a;
/// One GPU SpMV y = A x.
type GpuRun<'a, T> = dyn FnMut(&CudaSlice<T>, &mut CudaSlice<T>) -> Result<()> + 'a;

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Inspect { file, json } => inspect(&file, json),
        Command::Spmv(args) if args.list => {
            list_spmv_kernels();
            Ok(())
        }
        Command::Spmv(args) => match args.precision {
            Precision::F32 => spmv::<f32>(&args),
            Precision::F64 => spmv::<f64>(&args),
        },
        Command::Gemm(args) => match args.precision {
            Precision::F32 => run_gemm::<f32>(&args),
            Precision::F64 => run_gemm::<f64>(&args),
        },
        Command::Symgs(args) => match args.precision {
            Precision::F32 => symgs::<f32>(&args, false),
            Precision::F64 => symgs::<f64>(&args, false),
        },
        Command::Pcg(args) => match args.precision {
            Precision::F32 => symgs::<f32>(&args, true),
            Precision::F64 => symgs::<f64>(&args, true),
        },
        Command::Solve(args) => match args.precision {
            Precision::F32 => solve::<f32>(&args),
            Precision::F64 => solve::<f64>(&args),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Exits quietly when the reader of stdout has gone (a closed pipe); any other write error
/// ends the program with it.
fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing to stdout: {e}");
    std::process::exit(1);
}

fn inspect(file: &PathBuf, json: bool) -> Result<()> {
    let read = rgla::mm::read_coo::<f64>(file)?;
    let header = read.header;
    let a = read.coo.to_csr()?;
    let stats = a.row_stats();
    if json {
        let object = serde_json::json!({
            "file": file.display().to_string(),
            "rows": a.rows(),
            "cols": a.cols(),
            "nnz": a.nnz(),
            "entries_in_file": header.entries,
            "field": header.field.name(),
            "symmetry": header.symmetry.name(),
            "nnz_per_row": stats,
        });
        println!("{object}");
    } else {
        println!("{}", file.display());
        println!(
            "  {} x {}, {} nonzeros ({} entries in the file)",
            a.rows(),
            a.cols(),
            a.nnz(),
            header.entries
        );
        println!("  field {}, symmetry {}", header.field.name(), header.symmetry.name());
        println!(
            "  nonzeros per row: min {}, mean {:.2}, max {} ({} empty rows)",
            stats.min, stats.mean, stats.max, stats.empty_rows
        );
    }
    Ok(())
}

/// The matrix named by `--matrix` or `--generate`.
fn load<T: Scalar>(args: &SpmvArgs) -> Result<(String, Csr<T>)> {
    if let Some(spec) = &args.generate {
        let spec: GenSpec = spec.parse()?;
        return Ok((spec.to_string(), spec.generate()?));
    }
    let path = args.matrix.as_ref().expect("clap requires --matrix or --generate");
    let read = rgla::mm::read_coo::<T>(path)?;
    Ok((path.display().to_string(), read.coo.to_csr()?))
}

fn list_spmv_kernels() {
    let csr: Vec<String> =
        CsrKernel::ALL.iter().map(|k| k.name()).chain(["csr-vector{2,4,16,32}".into()]).collect();
    println!("every format:  cpu-serial cpu-rayon");
    println!("--format csr:  {} cusparse-alg1 cusparse-alg2", csr.join(" "));
    println!("--format bsr:  {} cusparse-bsr", BsrKernel::ALL.map(|k| k.name()).join(" "));
    println!("--format hll:  {}", HllKernel::ALL.map(|k| k.name()).join(" "));
}

fn spmv<T: Scalar>(args: &SpmvArgs) -> Result<()> {
    let (name, a) = load::<T>(args)?;
    let x = rgla::sparse::generate::vector_1_to_5::<T>(a.cols(), 1);
    let mut reference = vec![T::ZERO; a.rows()];
    cpu::csr_serial(&a, &x, &mut reference)?;
    if args.dist.active() {
        return dist::spmv(&args.dist, &name, &a, &x, &reference, args.runs, args.verify);
    }
    let (time_ms, y) =
        if args.kernel.starts_with("cpu-") { spmv_cpu(args, &a, &x)? } else { spmv_gpu(args, &a, &x)? };
    let gflops = 2.0 * a.nnz() as f64 / (time_ms * 1e6);
    println!(
        "{name}: {} x {}, {} nnz; {} {} {}: {time_ms:.4} ms (median of {}), {gflops:.2} GFLOPS",
        a.rows(),
        a.cols(),
        a.nnz(),
        args.kernel,
        format_name(args.format),
        T::NAME,
        args.runs.max(1)
    );
    report_error(args.verify, &y, &reference, T::tolerance(a.row_stats().max))
}

fn format_name(format: Format) -> &'static str {
    match format {
        Format::Csr => "csr",
        Format::Bsr => "bsr",
        Format::Hll => "hll",
    }
}

/// Prints the error against the reference; with `verify`, an error when it is out of tolerance.
pub(crate) fn report_error<T: Scalar, U: Into<f64> + Copy>(
    verify: bool,
    y: &[T],
    reference: &[U],
    tolerance: f64,
) -> Result<()> {
    let c = compare(y, reference, 1e-3);
    println!(
        "  error vs CPU reference: relative {:.3e}, max abs {:.3e}, {} entries off by more than 1e-3",
        c.relative_error, c.max_abs_error, c.count_over_threshold
    );
    if verify { c.check("result", tolerance) } else { Ok(()) }
}

fn spmv_cpu<T: Scalar>(args: &SpmvArgs, a: &Csr<T>, x: &[T]) -> Result<(f64, Vec<T>)> {
    let parallel = match args.kernel.as_str() {
        "cpu-serial" => false,
        "cpu-rayon" => true,
        other => {
            return Err(Error::InvalidInput(format!("unknown CPU kernel `{other}` (cpu-serial, cpu-rayon)")));
        }
    };
    let mut y = vec![T::ZERO; a.rows()];
    let mut run: Box<CpuRun<T>> = match args.format {
        Format::Csr => {
            Box::new(|y| if parallel { cpu::csr_rayon(a, x, y) } else { cpu::csr_serial(a, x, y) })
        }
        Format::Bsr => {
            let b = a.to_bsr(args.bsr_block)?;
            Box::new(move |y| if parallel { cpu::bsr_rayon(&b, x, y) } else { cpu::bsr_serial(&b, x, y) })
        }
        Format::Hll => {
            let h = a.to_hll(args.hack, HllLayout::RowMajor)?;
            Box::new(move |y| if parallel { cpu::hll_rayon(&h, x, y) } else { cpu::hll_serial(&h, x, y) })
        }
    };
    run(&mut y)?;
    let mut error = None;
    let ms = rgla::bench::cpu_median_ms(args.runs, || error = run(&mut y).err().or(error.take()));
    match error {
        Some(e) => Err(e),
        None => Ok((ms, y)),
    }
}

fn spmv_gpu<T: Scalar>(args: &SpmvArgs, a: &Csr<T>, x: &[T]) -> Result<(f64, Vec<T>)> {
    let gpu = Gpu::new()?;
    let warps = BlockWarps::new(args.block_size)?;
    let kernel = args.kernel.as_str();
    let wrong_format = |expected: &str| {
        Error::InvalidInput(format!(
            "kernel `{kernel}` runs on --format {expected}, not {}",
            format_name(args.format)
        ))
    };
    let dx = gpu.upload(x)?;
    let mut dy = gpu.filled(a.rows(), T::from_f64(f64::NAN))?;
    let ms = match args.format {
        Format::Csr => {
            let da = DeviceCsr::upload(&gpu, a)?;
            if kernel == "csr-adaptive" {
                println!("csr-adaptive: {} (analysis at upload {:.1} ms)", da.choice(), da.analysis_ms);
            }
            if let Some(alg) = [("cusparse-alg1", SpmvAlg::CsrAlg1), ("cusparse-alg2", SpmvAlg::CsrAlg2)]
                .into_iter()
                .find_map(|(name, alg)| (name == kernel).then_some(alg))
            {
                let lib = Cusparse::new(&gpu)?;
                let plan = CusparseSpmv::csr(&gpu, &lib, &da, alg)?;
                time(&gpu, args.runs, &dx, &mut dy, &mut |x, y| plan.run(&gpu, x, y))?
            } else {
                let k =
                    CsrKernel::from_name(kernel).ok_or_else(|| unknown_or(kernel, "csr", &wrong_format))?;
                time(&gpu, args.runs, &dx, &mut dy, &mut |x, y| csr::spmv(&gpu, &da, k, warps, x, y))?
            }
        }
        Format::Bsr => {
            let db = DeviceBsr::upload(&gpu, &a.to_bsr(args.bsr_block)?)?;
            if kernel == "cusparse-bsr" {
                let lib = Cusparse::new(&gpu)?;
                let plan = CusparseSpmv::bsr(&gpu, &lib, &db)?;
                time(&gpu, args.runs, &dx, &mut dy, &mut |x, y| plan.run(&gpu, x, y))?
            } else {
                let k =
                    BsrKernel::from_name(kernel).ok_or_else(|| unknown_or(kernel, "bsr", &wrong_format))?;
                time(&gpu, args.runs, &dx, &mut dy, &mut |x, y| bsr::spmv(&gpu, &db, k, warps, x, y))?
            }
        }
        Format::Hll => {
            let k = HllKernel::from_name(kernel).ok_or_else(|| unknown_or(kernel, "hll", &wrong_format))?;
            let dh = DeviceHll::upload(&gpu, &a.to_hll(args.hack, k.layout())?)?;
            time(&gpu, args.runs, &dx, &mut dy, &mut |x, y| hll::spmv(&gpu, &dh, k, warps, x, y))?
        }
    };
    Ok((ms, gpu.download(&dy)?))
}

/// A kernel of another format is named as such; anything else is unknown.
fn unknown_or(kernel: &str, format: &str, wrong_format: &dyn Fn(&str) -> Error) -> Error {
    let prefix = kernel.split('-').next().unwrap_or_default();
    if ["csr", "bsr", "hll"].contains(&prefix) && prefix != format {
        wrong_format(prefix)
    } else {
        Error::InvalidInput(format!("unknown kernel `{kernel}` for --format {format} (rgla spmv --list)"))
    }
}

/// Runs once (the checked result), then times `runs` more with CUDA events.
fn time<T: Scalar>(
    gpu: &Gpu,
    runs: usize,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
    run: &mut GpuRun<T>,
) -> Result<f64> {
    run(x, y)?;
    let ms = rgla::bench::gpu_median_ms(gpu, 2, runs.max(1), || run(x, y))?;
    // The last run's y is what we return: recompute it cleanly after the timed runs.
    run(x, y)?;
    Ok(ms)
}

fn run_gemm<T: Scalar + CublasGemm>(args: &GemmArgs) -> Result<()> {
    let (m, n, k) = (args.m, args.n, args.k);
    // Memory first: the inputs, the output and (with --verify) the f64 reference on the host;
    // the three matrices on the GPU for a GPU kernel.
    let on_gpu = !args.kernel.starts_with("cpu-");
    let (mk, kn, mn) = (m as u128 * k as u128, k as u128 * n as u128, m as u128 * n as u128);
    let what = format!("gemm {m} x {k} x {n} ({} {})", args.kernel, T::NAME);
    let mut needs = Footprint::new(what).host::<T>(mk + kn + mn).device::<T>(mk + kn + mn);
    if args.verify {
        needs = needs.host::<f64>(mk + kn + mn);
    }
    needs.check_host()?;
    let gpu = if on_gpu { Some(Gpu::new()?) } else { None };
    if let Some(gpu) = &gpu {
        needs.check_device(gpu)?;
    }
    let a = rgla::sparse::generate::vector_1_to_5::<T>(m * k, 1);
    let b = rgla::sparse::generate::vector_1_to_5::<T>(k * n, 2);
    let mut c = vec![T::ZERO; m * n];
    let time_ms = match args.kernel.as_str() {
        "cpu-serial" => {
            rgla::bench::cpu_median_ms(args.runs, || gemm::cpu::serial(m, n, k, &a, &b, &mut c).unwrap())
        }
        "cpu-rayon" => {
            rgla::bench::cpu_median_ms(args.runs, || gemm::cpu::rayon(m, n, k, &a, &b, &mut c).unwrap())
        }
        name => {
            let gpu = gpu.expect("created above for a GPU kernel");
            let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
            let mut dc = gpu.filled(m * n, T::from_f64(f64::NAN))?;
            let ms = if name == "cublas" || name == "cublas-tf32" {
                let blas = if name == "cublas" {
                    Cublas::new(&gpu)?
                } else if T::NAME == "f32" {
                    Cublas::new_tf32(&gpu)?
                } else {
                    return Err(Error::InvalidInput(
                        "cublas-tf32 multiplies f32 matrices (--precision f32)".into(),
                    ));
                };
                blas.gemm(m, n, k, &da, &db, &mut dc)?;
                rgla::bench::gpu_median_ms(&gpu, 1, args.runs.max(1), || {
                    blas.gemm(m, n, k, &da, &db, &mut dc)
                })?
            } else {
                let kernel = GemmKernel::from_name(name, args.tile).ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "unknown GEMM kernel `{name}` (tiled --tile 2|4|8|16|32, blocked, blocked-wide (f32), dmma, dmma16, dmma-pipelined, dmma-tma, tf32, tf32-wgmma, cublas, cublas-tf32, cpu-serial, cpu-rayon)"
                    ))
                })?;
                gemm::gemm(&gpu, kernel, m, n, k, &da, &db, &mut dc)?;
                rgla::bench::gpu_median_ms(&gpu, 1, args.runs.max(1), || {
                    gemm::gemm(&gpu, kernel, m, n, k, &da, &db, &mut dc)
                })?
            };
            c = gpu.download(&dc)?;
            ms
        }
    };
    let tflops = 2.0 * (m * n * k) as f64 / (time_ms * 1e9);
    println!(
        "gemm {m} x {k} x {n} {} {}: {time_ms:.3} ms (median of {}), {tflops:.2} TFLOPS",
        args.kernel,
        T::NAME,
        args.runs
    );
    // The inputs are positive, so the TF32 bound on |A| |B| bounds the relative error too.
    let tolerance = if let Some(bound) = gemm::reduced_precision_bound_of(&args.kernel, k) {
        bound
    } else if T::NAME == "f64" {
        1e-12
    } else {
        1e-5
    };
    if args.verify {
        report_error(true, &c, &gemm::cpu::reference(m, n, k, &a, &b), tolerance)?;
    }
    Ok(())
}

/// `symgs` (sweeps) or, with `pcg`, a preconditioned CG solve, on A x = r from x = 0. r is the
/// bench's right-hand side, not A 1: on a graph Laplacian plus the identity A 1 = 1, an
/// eigenvector, which CG solves in one iteration.
fn symgs<T: Scalar>(args: &SymgsArgs, pcg: bool) -> Result<()> {
    use rgla::symgs::cpu::{CpuSymgs, residual_norm};
    use rgla::symgs::pcg::{PcgOptions, pcg_cpu, pcg_gpu};

    let (name, a) = match (&args.generate, &args.matrix) {
        (Some(spec), _) => {
            let spec: GenSpec = spec.parse()?;
            (spec.to_string(), spec.generate::<T>()?)
        }
        (None, Some(path)) => (path.display().to_string(), rgla::mm::read_coo::<T>(path)?.coo.to_csr()?),
        (None, None) => unreachable!("clap requires --matrix or --generate"),
    };
    let cpu = CpuSymgs::new(&a)?; // checks square, full nonzero diagonal, finite values
    let r = rgla::sparse::generate::vector_1_to_5::<T>(a.rows(), 3);
    println!("{name}: {} x {}, {} nnz; {} {}", a.rows(), a.cols(), a.nnz(), args.variant, T::NAME);
    let options = PcgOptions { tolerance: args.tolerance, max_iterations: args.max_iterations };

    if args.variant == "cpu" {
        let mut x = vec![T::ZERO; a.rows()];
        if pcg {
            return print_pcg(&pcg_cpu(&a, true, &r, &mut x, options)?, args.verify);
        }
        let started = std::time::Instant::now();
        for _ in 0..args.sweeps {
            cpu.sweep(&r, &mut x)?;
        }
        let ms = started.elapsed().as_secs_f64() * 1e3 / args.sweeps.max(1) as f64;
        println!("  {ms:.3} ms per sweep; residual {:.3e}", residual_norm(&a, &r, &x));
        return Ok(());
    }

    if args.dist.active() {
        if !pcg {
            return Err(Error::InvalidInput("--gpus, --parts and --world apply to spmv and pcg".into()));
        }
        return dist::pcg(&args.dist, &a, &r, args, options);
    }
    let gpu = Gpu::new()?;
    let matrix = SymgsMatrix::upload(&gpu, &a)?;
    let lib = Cusparse::new(&gpu)?;
    let mut smoother = smoother(&gpu, &lib, &matrix, &a, args, pcg)?;
    let dr = gpu.upload(&r)?;
    let mut dx = gpu.zeros::<T>(a.rows())?;
    if pcg {
        let report = pcg_gpu(&gpu, &matrix.csr, smoother.as_deref_mut(), &dr, &mut dx, options)?;
        return print_pcg(&report, args.verify);
    }
    let smoother = smoother.as_mut().expect("a smoother for symgs");
    // An untimed call first, on the same buffers (graphs are captured for them, cuSPARSE sets
    // up its buffers), then x back to zero.
    smoother.sweeps(&gpu, &dr, &mut dx, args.sweeps.min(3))?;
    gpu.memset_zeros(&mut dx)?;
    let ms = gpu.time_once(|| smoother.sweeps(&gpu, &dr, &mut dx, args.sweeps))?;
    let x = gpu.download(&dx)?;
    let (start, end) = (residual_norm(&a, &r, &vec![T::ZERO; a.rows()]), residual_norm(&a, &r, &x));
    println!("  {:.3} ms per sweep; residual {start:.3e} -> {end:.3e}", ms / args.sweeps.max(1) as f64);
    if !args.verify {
        return Ok(());
    }
    // A reordered smoother (multicolor) against the CPU sweep in its own row order.
    let order = smoother.row_order(&gpu)?;
    let zero = vec![T::ZERO; a.rows()];
    let mut expect = zero.clone();
    cpu.sweep_in(order.as_deref(), args.sweeps, &r, &mut expect)?;
    // A reference that overflowed is named as such by the comparison, whatever the tolerance.
    let tolerance = if expect.iter().all(|v| v.is_finite()) {
        cpu.tolerance(order.as_deref(), args.sweeps, &r, &zero, &expect)?
    } else {
        0.0
    };
    report_error(true, &x, &expect, tolerance)
}

/// The smoother `--variant` names, on `matrix` (uploaded from `a`); None for `none` in pcg.
pub(crate) fn smoother<'m, T: Scalar>(
    gpu: &Gpu,
    lib: &'m Cusparse,
    matrix: &'m SymgsMatrix<T>,
    a: &Csr<T>,
    args: &SymgsArgs,
    pcg: bool,
) -> Result<Option<Box<dyn Smoother<T> + 'm>>> {
    use rgla::symgs::level_copies::LevelCopySmoother;
    use rgla::symgs::levels::LevelSmoother;
    use rgla::symgs::multicolor::{ColoringMethod, CopyForm, MulticolorSmoother};
    use rgla::symgs::ready_done::ReadyDoneSmoother;
    use rgla::symgs::sync_free::{Signal, SyncFreeSmoother};
    use rgla::vendor::cusparse_spsv::CusparseSymgs;

    Ok(match args.variant.as_str() {
        "none" if pcg => None,
        "ready-done" => Some(Box::new(ReadyDoneSmoother::new(gpu, matrix)?)),
        "levels" => Some(Box::new(LevelSmoother::new(gpu, matrix)?)),
        "levels-graph" => Some(Box::new(LevelSmoother::new(gpu, matrix)?.use_graph(true))),
        "level-copies" => Some(Box::new(LevelCopySmoother::new(gpu, matrix)?)),
        "sync-free" => Some(Box::new(SyncFreeSmoother::new(gpu, matrix)?)),
        "sync-free-values" => Some(Box::new(SyncFreeSmoother::new(gpu, matrix)?.with_signal(Signal::Value))),
        "multicolor" | "multicolor-launches" | "multicolor-csr" | "multicolor-ell" => {
            let method = ColoringMethod::from_name(&args.coloring).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown coloring `{}` (auto, jp, jp-random, jp-sl, greedy)",
                    args.coloring
                ))
            })?;
            let started = std::time::Instant::now();
            let smoother = match args.variant.as_str() {
                "multicolor-csr" => MulticolorSmoother::from_matrix_as(gpu, matrix, method, CopyForm::Csr)?,
                "multicolor-ell" => {
                    MulticolorSmoother::from_matrix_as(gpu, matrix, method, CopyForm::SlicedEll)?
                }
                _ => MulticolorSmoother::from_matrix(gpu, matrix, method)?,
            };
            gpu.synchronize()?;
            println!(
                "  {} colors ({}{}), colored and sorted by color in {:.1} ms, {} read as sliced ELL (its entries per nonzero: {})",
                smoother.colors(),
                method.name(),
                match smoother.block_rows() {
                    1 => String::new(),
                    k if smoother.x_in_copy_order() =>
                        format!(", of node blocks of {k} rows, x in the copy's order"),
                    k => format!(", of node blocks of {k} rows"),
                },
                started.elapsed().as_secs_f64() * 1e3,
                smoother.ell_colors(),
                smoother.ell_padding().map_or("not worked out".into(), |p| format!("{p:.3}"))
            );
            let rows = smoother.color_rows().iter().map(u32::to_string).collect::<Vec<_>>();
            println!("  rows per color: {}", rows.join(" "));
            let smoother = match args.lanes {
                Some(lanes) => smoother.with_lanes_per_row(lanes)?,
                None => smoother,
            };
            Some(Box::new(smoother.use_graph(args.variant != "multicolor-launches")))
        }
        "cusparse" => Some(Box::new(CusparseSymgs::new(gpu, lib, matrix, a)?)),
        other => {
            return Err(Error::InvalidInput(format!("unknown SymGS variant `{other}` (rgla symgs --help)")));
        }
    })
}

pub(crate) fn print_pcg(report: &rgla::symgs::pcg::PcgReport, verify: bool) -> Result<()> {
    let rgla::symgs::pcg::PcgReport { iterations, relative_residual, converged, time_ms } = *report;
    println!(
        "  {iterations} iterations, relative residual {relative_residual:.3e}, {time_ms:.2} ms, converged: {converged}"
    );
    if verify && !converged {
        return Err(Error::Verification(format!("PCG did not converge in {iterations} iterations")));
    }
    Ok(())
}

/// A x = b with a manufactured solution: the backward error tells how right x is.
fn solve<T: Scalar>(args: &SolveArgs) -> Result<()> {
    use rgla::dense::DenseMatrix;
    use rgla::solve::{self, SolveKernel};

    let (a, b, _x) = match (&args.matrix, args.n) {
        (Some(path), _) => {
            let a: DenseMatrix<T> = match rgla::mm::read_dense::<T>(path) {
                Ok(dense) => dense,
                Err(e) if matches!(e.kind, rgla::mm::MmErrorKind::WrongFormat { .. }) => {
                    DenseMatrix::from_coo(&rgla::mm::read_coo::<T>(path)?.coo)?
                }
                Err(e) => return Err(e.into()),
            };
            let x = rgla::sparse::generate::vector_1_to_5::<T>(a.cols, 1);
            let mut b = vec![T::ZERO; a.rows];
            gemm::cpu::rayon(a.rows, 1, a.cols, &a.data, &x, &mut b)?;
            (a, b, x)
        }
        (None, Some(n)) => solve::manufactured_system::<T>(n, 1, 1)?,
        (None, None) => unreachable!("clap requires --n or --matrix"),
    };
    let n = a.rows;
    let started = std::time::Instant::now();
    let x = match args.kernel.as_str() {
        "cpu-serial" => solve::cpu::solve_serial(&a, &b)?,
        "cpu-blocked" => solve::cpu::solve(&a, &b, 1)?,
        "cusolver" => {
            let gpu = Gpu::new()?;
            let tolerance = solve::check_system(&a, &b, 1)?;
            let mut solver = rgla::vendor::cusolver::CusolverLu::<T>::new(&gpu, a.rows, tolerance)?;
            let (da, db) = (gpu.upload(&a.data)?, gpu.upload(&b)?);
            let mut dx = gpu.filled(a.rows, T::from_f64(f64::NAN))?;
            solver.factor(&gpu, &da)?;
            solver.check(&gpu)?;
            solver.solve(&gpu, 1, &db, &mut dx)?;
            gpu.download(&dx)?
        }
        "mixed" | "cusolver-irs" => {
            use std::any::Any;
            let a64 = (&a as &dyn Any).downcast_ref::<DenseMatrix<f64>>();
            let (Some(a), Some(b)) = (a64, (&b as &dyn Any).downcast_ref::<Vec<f64>>()) else {
                return Err(Error::InvalidInput(format!(
                    "`{}` solves f64 systems (--precision f64)",
                    args.kernel
                )));
            };
            let gpu = Gpu::new()?;
            let tolerance = solve::check_system(a, b, 1)?;
            let (da, db) = (gpu.upload(&a.data)?, gpu.upload(b)?);
            let mut dx = gpu.filled(n, f64::NAN)?;
            if args.kernel == "mixed" {
                let refinement =
                    solve::mixed::MixedSolver::new(&gpu, n, tolerance)?.solve(&gpu, &da, &db, &mut dx)?;
                println!("mixed: {refinement}");
            } else {
                let steps =
                    rgla::vendor::cusolver::CusolverIrs::new(&gpu, n)?.solve(&gpu, &da, &db, &mut dx)?;
                println!("cusolver-irs: {steps} refinement step(s) (negative: fell back to f64)");
            }
            gpu.download(&dx)?.into_iter().map(T::from_f64).collect()
        }
        name => {
            let kernel = SolveKernel::from_name(name).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown solver `{name}` (classic, classic-parallel, blocked, mixed, cusolver, cusolver-irs, cpu-serial, cpu-blocked)"
                ))
            })?;
            solve::solve(&Gpu::new()?, kernel, &a, &b)?
        }
    };
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let error = solve::backward_error(&a, &x, &b, 1);
    println!(
        "solve n={} {} {}: {ms:.2} ms (wall, uploads included); backward error {error:.3e}",
        a.rows,
        args.kernel,
        T::NAME
    );
    let bound = solve::backward_error_bound::<T>(a.rows);
    if args.verify && (error.is_nan() || error > bound) {
        return Err(Error::Verification(format!("backward error {error:.3e} above {bound:.1e}")));
    }
    Ok(())
}
