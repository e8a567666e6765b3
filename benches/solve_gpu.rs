//! Dense solve benchmark: the Milan report's table (n = 1000..7000: the report's kernels with
//! either back substitution, the blocked LU, cuSOLVER and the CPU) and, at n = 4096, 8192 and
//! 16384, the blocked LU and the mixed-precision solve against cuSOLVER (getrf + getrs, and
//! its TF32 refinement solver). Each result is a solve of A x = b from A and b in memory
//! to x (getrf + getrs for the LUs, the copy of A the in-place factorisations need included),
//! checked by its backward error before it is recorded (operation "solve").

mod common;

use common::Session;
use rgla::Scalar;
use rgla::bench::{Record, bench_sizes, gpu_iters, gpu_median_ms, quick, record_copy_bandwidth, save};
use rgla::dense::DenseMatrix;
use rgla::gemm::update::UpdateKernel;
use rgla::gpu::{CudaSlice, as_f64, as_f64_mut};
use rgla::solve::blocked::{self, BlockedLu};
use rgla::solve::classic::{BackSubstitution, ClassicSolver};
use rgla::solve::mixed::MixedSolver;
use rgla::solve::{
    backward_error, backward_error_bound, check_system, cpu, dominant_system, manufactured_system,
};
use rgla::vendor::cusolver::{CusolverIrs, CusolverLu};

fn main() {
    let mut session = Session::start();
    if let Some(gpu) = &session.gpu {
        println!("device: {}", gpu.props());
        // The report's header names the device from this record.
        record_copy_bandwidth(gpu).unwrap();
    }
    let (report_sizes, vendor_sizes) = if quick() {
        (vec![1000, 2000], vec![8192])
    } else {
        ((1..=7).map(|i| 1000 * i).collect(), vec![4096, 8192, 16384])
    };
    let mut table = Vec::new();
    let (report_sizes, vendor_sizes) = bench_sizes(&report_sizes, &vendor_sizes).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    for &n in report_sizes.iter().chain(&vendor_sizes) {
        // At the cuSOLVER comparison sizes, the fast solvers only; and there a diagonally
        // dominant system too, the case the mixed-precision solvers are made for.
        let vendor_size = vendor_sizes.contains(&n);
        run::<f64>(&mut session, &mut table, n, vendor_size, false);
        if vendor_size {
            run::<f64>(&mut session, &mut table, n, vendor_size, true);
        }
    }
    print_table(&table);
    session.finish();
}

fn run<T: Scalar>(s: &mut Session, table: &mut Vec<Record>, n: usize, vendor_size: bool, dominant: bool) {
    eprintln!("solve: n={n} {}{}", T::NAME, if dominant { " dominant" } else { "" });
    let (a, _, b) = if dominant {
        dominant_system::<T>(n, n as u64).unwrap()
    } else {
        manufactured_system::<T>(n, 1, n as u64).unwrap()
    };
    let tolerance = check_system(&a, &b, 1).expect("a valid system");
    let bound = backward_error_bound::<T>(n);
    let input = if dominant { format!("n={n} dominant") } else { format!("n={n}") };
    let record = |kernel: &str, kind: &str, time_ms: f64, runs: usize, error: f64, notes: &str| Record {
        operation: "solve".into(),
        input: input.clone(),
        kernel: kernel.into(),
        kind: kind.into(),
        precision: T::NAME.into(),
        time_ms,
        runs,
        // getrf + getrs: 2/3 n^3 for the factorisation, 2 n^2 for the two triangular solves.
        flops: 2.0 / 3.0 * (n as f64).powi(3) + 2.0 * (n as f64).powi(2),
        min_bytes: 0.0,
        error,
        notes: notes.into(),
    };

    // The CPU rows: the report's serial elimination and nalgebra where a run takes seconds,
    // the blocked LU (rayon + matrixmultiply) through the report's sizes.
    if !vendor_size {
        let mut cpu_row = |kernel: &str, notes: &str, solve: &dyn Fn() -> Vec<T>| {
            let started = std::time::Instant::now();
            let x = solve();
            let ms = started.elapsed().as_secs_f64() * 1e3;
            let error = backward_error(&a, &x, &b, 1);
            if error <= bound {
                let r = record(kernel, "cpu", ms, 1, error, notes);
                save(&r).unwrap();
                table.push(r);
            } else {
                s.failures.push(format!("{kernel} n={n}: backward error {error:.3e}"));
            }
        };
        if n <= 2000 {
            cpu_row("cpu-serial", "the report's elimination on [A | b], one thread", &|| {
                cpu::solve_serial(&a, &b).unwrap()
            });
            cpu_row("cpu-nalgebra", "nalgebra 0.34 LU, one thread", &|| nalgebra_solve(&a, &b));
        }
        cpu_row("cpu-blocked", "blocked LU: rayon panels, matrixmultiply updates", &|| {
            cpu::solve(&a, &b, 1).unwrap()
        });
    }

    let Some(gpu) = s.gpu.as_ref() else { return };
    let (da, db) = (gpu.upload(&a.data).unwrap(), gpu.upload(&b).unwrap());
    let mut dx = gpu.zeros::<T>(n).unwrap();
    let poison = vec![T::from_f64(f64::NAN); n];
    // The report timed single runs; the slow kernels at large n get one timed run too.
    let runs = if n >= 4000 && !vendor_size { 1 } else { 3 };
    let mut measure =
        |kernel: &str,
         kind: &str,
         runs: usize,
         notes: &str,
         solve: &mut dyn FnMut(&mut CudaSlice<T>, bool) -> rgla::Result<String>| {
            let what = format!("{kernel} {} n={n}", T::NAME);
            gpu.upload_into(&poison, &mut dx).unwrap();
            // The checked run (which also warms up): x must be finite with a small backward error.
            // What the solver says of it goes into the notes.
            let (error, said) = match solve(&mut dx, true).and_then(|said| Ok((gpu.download(&dx)?, said))) {
                Ok((x, said)) => (backward_error(&a, &x, &b, 1), said),
                Err(e) => return s.failures.push(format!("{what}: {e}")),
            };
            let notes = if said.is_empty() { notes.to_string() } else { format!("{said}; {notes}") };
            let within = error <= bound; // false for NaN too
            if !within {
                return s.failures.push(format!("{what}: backward error {error:.3e} (bound {bound:.1e})"));
            }
            let ms = gpu_median_ms(gpu, 0, runs, || solve(&mut dx, false).map(drop)).unwrap();
            let r = record(kernel, kind, ms, runs, error, &notes);
            save(&r).unwrap();
            table.push(r);
            if vendor_size {
                let id = format!("solve/{}/{kernel}/{}", input.replace(' ', "-"), T::NAME);
                s.criterion.bench_function(&id, |bch| {
                    bch.iter_custom(|iters| gpu_iters(gpu, iters, || solve(&mut dx, false).map(drop)))
                });
            }
        };

    let mut cusolver = CusolverLu::<T>::new(gpu, n, tolerance).unwrap();
    measure("cusolver", "vendor", runs, "getrf + getrs (A transposed into the factor)", &mut |dx, check| {
        cusolver.factor(gpu, &da)?;
        if check {
            cusolver.check(gpu)?;
        }
        cusolver.solve(gpu, 1, &db, dx)?;
        Ok(String::new())
    });
    // The default panel width, exchange and update; at the cuSOLVER sizes the other ones too.
    let exchanges = [blocked::PanelExchange::Tagged, blocked::PanelExchange::Barrier];
    let default_update = UpdateKernel::default_for::<T>(gpu);
    let mut variants: Vec<_> =
        blocked::PANEL_WIDTHS.into_iter().flat_map(|w| exchanges.map(|e| (w, e, default_update))).collect();
    let other_update =
        [UpdateKernel::Pipelined, UpdateKernel::Dmma].into_iter().find(|&u| u != default_update);
    if let Some(update) = other_update.filter(|_| T::NAME == "f64" && gpu.ptx_arch() >= 90) {
        variants.push((blocked::DEFAULT_PANEL_WIDTH, blocked::DEFAULT_EXCHANGE, update));
    }
    for (width, exchange, update) in variants {
        let default = width == blocked::DEFAULT_PANEL_WIDTH
            && exchange == blocked::DEFAULT_EXCHANGE
            && update == default_update;
        if !default && (!vendor_size || dominant) {
            continue;
        }
        let kernel = if default {
            "blocked".to_string()
        } else if update != default_update {
            format!("blocked-{}", format!("{update:?}").to_lowercase())
        } else {
            format!("blocked-nb{width}-{}", format!("{exchange:?}").to_lowercase())
        };
        let lu = BlockedLu::<T>::new(gpu, n, tolerance)
            .and_then(|lu| lu.with_panel_width(gpu, width))
            .map(|lu| lu.with_exchange(exchange).with_update(update));
        // Another panel width may not fit the device at this size (its rows in shared memory).
        let mut lu = match lu {
            Ok(lu) => lu,
            Err(e) if !default => {
                println!("solve: {kernel} n={n} skipped: {e}");
                continue;
            }
            Err(e) => panic!("{kernel} n={n}: {e}"),
        };
        let block_column = lu.block_column();
        let notes = format!(
            "panel {width} ({exchange:?}), block column {block_column}, {update:?} trailing update, getrs"
        );
        measure(&kernel, "gpu", runs, &notes, &mut |dx, check| {
            lu.factor(gpu, &da)?;
            if check {
                lu.check(gpu)?;
            }
            lu.solve(gpu, 1, &db, dx)?;
            Ok(String::new())
        });
    }
    // The f64 mixed-precision rows: cuSOLVER's TF32 refinement solver and ours.
    if let (Some(a64), Some(b64)) = (as_f64(&da), as_f64(&db)) {
        let mut irs = CusolverIrs::new(gpu, n).unwrap();
        let notes = "cusolverDnDXgesv: TF32 LU refined in f64 (A transposed in)";
        measure("cusolver-irs", "vendor", runs, notes, &mut |dx, _| {
            let steps = irs.solve(gpu, a64, b64, as_f64_mut(dx).expect("T is f64 here"))?;
            Ok(format!("iterations={steps}"))
        });
        let mut mixed = MixedSolver::new(gpu, n, tolerance).unwrap();
        measure("mixed", "gpu", runs, "f32 LU with TF32 updates, refined in f64", &mut |dx, _| {
            let refinement = mixed.solve(gpu, a64, b64, as_f64_mut(dx).expect("T is f64 here"))?;
            Ok(format!("iterations={} ({refinement})", refinement.iterations))
        });
    }
    if vendor_size {
        return;
    }
    let mut classic = ClassicSolver::<T>::new(gpu, n, tolerance).unwrap();
    for (kernel, back, notes) in [
        (
            "classic",
            BackSubstitution::Serial,
            "the report's 4 kernels per column, 1-thread back substitution",
        ),
        (
            "classic-parallel",
            BackSubstitution::Parallel,
            "the report's 4 kernels per column, parallel back substitution",
        ),
    ] {
        measure(kernel, "gpu", runs, notes, &mut |dx, check| {
            classic.solve(gpu, back, &da, &db, dx)?;
            if check {
                classic.check(gpu)?;
            }
            Ok(String::new())
        });
    }
}

fn nalgebra_solve<T: Scalar>(a: &DenseMatrix<T>, b: &[T]) -> Vec<T> {
    let n = a.rows;
    let to_f64 = |v: &[T]| v.iter().map(|&x| x.into()).collect::<Vec<f64>>();
    let matrix = nalgebra::DMatrix::from_row_slice(n, n, &to_f64(&a.data));
    let x = matrix.lu().solve(&nalgebra::DVector::from_column_slice(&to_f64(b))).expect("nonsingular");
    x.iter().map(|&v| T::from_f64(v)).collect()
}

/// Per size: each solver's time, GFLOPS and throughput relative to cuSOLVER.
fn print_table(table: &[Record]) {
    println!(
        "\n{:<8} {:<18} {:>12} {:>10} {:>10} {:>10}",
        "n", "solver", "time ms", "GFLOPS", "vs cuSOLVER", "bwd error"
    );
    for r in table {
        let vendor = table.iter().find(|v| v.input == r.input && v.kernel == "cusolver");
        let ratio = vendor.map_or(String::from("-"), |v| format!("{:.2}", v.time_ms / r.time_ms));
        println!(
            "{:<8} {:<18} {:>12.3} {:>10.1} {:>10} {:>10.1e}",
            r.input.trim_start_matches("n="),
            r.kernel,
            r.time_ms,
            r.gflops(),
            ratio,
            r.error
        );
    }
}
