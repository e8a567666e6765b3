//! CPU SpMV, serial against rayon, CSR and HLL (f64), on a few million nonzeros: the HPCG
//! stencil (regular rows) and power-law rows (a load-balance stress). Every kernel's result
//! is checked against serial CSR before it is timed.
//!
//! `cargo bench --bench spmv_cpu`; throughput is in nonzeros per second (GFLOPS = 2 x that).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rgla::Result;
use rgla::sparse::generate::{self, GenSpec};
use rgla::sparse::{Csr, DEFAULT_HACK_SIZE, HllLayout};
use rgla::spmv::cpu;
use rgla::verify::{Tolerance, compare};

/// y = A x for one matrix in one format: (x, y).
type Kernel<'a> = dyn Fn(&[f64], &mut [f64]) -> Result<()> + 'a;

const MATRICES: [&str; 2] = ["stencil27:50x50x50", "powerlaw:n=1000000,seed=1"];
/// Rounds of the best-of summary printed after each matrix.
const ROUNDS: usize = 10;

fn spmv_cpu(c: &mut Criterion) {
    for spec in MATRICES {
        let a: Csr<f64> = spec.parse::<GenSpec>().unwrap().generate().unwrap();
        let hll = a.to_hll(DEFAULT_HACK_SIZE, HllLayout::RowMajor).unwrap();
        let x = generate::vector_1_to_5::<f64>(a.cols(), 1);
        let mut reference = vec![0.0; a.rows()];
        cpu::csr_serial(&a, &x, &mut reference).unwrap();
        let stats = a.row_stats();
        println!(
            "{spec}: {} rows, {} nonzeros, per row {}/{:.1}/{}; HLL padding {:.1}%; {} threads",
            a.rows(),
            a.nnz(),
            stats.min,
            stats.mean,
            stats.max,
            100.0 * hll.padding_ratio(),
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );

        let formats: [(&str, Box<Kernel>, Box<Kernel>); 2] = [
            ("csr", Box::new(|x, y| cpu::csr_serial(&a, x, y)), Box::new(|x, y| cpu::csr_rayon(&a, x, y))),
            (
                "hll",
                Box::new(|x, y| cpu::hll_serial(&hll, x, y)),
                Box::new(|x, y| cpu::hll_rayon(&hll, x, y)),
            ),
        ];
        let mut group = c.benchmark_group(format!("spmv_cpu/{spec}"));
        group.throughput(Throughput::Elements(a.nnz() as u64));
        for (format, serial, rayon) in &formats {
            for (variant, kernel) in [("serial", serial), ("rayon", rayon)] {
                let name = format!("{format}_{variant}");
                let mut y = vec![f64::NAN; a.rows()];
                kernel(&x, &mut y).unwrap();
                compare(&y, &reference, 1e-3).check(&name, f64::tolerance(stats.max)).unwrap();
                group.bench_function(BenchmarkId::from_parameter(&name), |b| {
                    b.iter(|| kernel(black_box(&x), &mut y))
                });
            }
        }
        group.finish();

        // Criterion's estimates move with whatever else runs on a shared machine; the best of
        // interleaved rounds is what the kernel can do, and serial and rayon see the same load.
        for (format, serial, rayon) in &formats {
            let [serial_s, rayon_s] = best_of_rounds(&[serial.as_ref(), rayon.as_ref()], &x, a.rows());
            let gflops = |seconds: f64| 2.0 * a.nnz() as f64 / seconds / 1e9;
            println!(
                "{spec} {format}: best of {ROUNDS}: serial {:.2} ms ({:.2} GFLOPS), rayon {:.2} ms ({:.2} GFLOPS), speedup {:.2}x",
                serial_s * 1e3,
                gflops(serial_s),
                rayon_s * 1e3,
                gflops(rayon_s),
                serial_s / rayon_s
            );
        }
    }
}

/// The best time of each kernel over `ROUNDS` rounds, the kernels taking turns in each.
fn best_of_rounds<const N: usize>(kernels: &[&Kernel; N], x: &[f64], rows: usize) -> [f64; N] {
    let mut best = [f64::INFINITY; N];
    let mut y = vec![0.0; rows];
    for _ in 0..ROUNDS {
        for (kernel, best) in kernels.iter().zip(&mut best) {
            let start = Instant::now();
            kernel(x, &mut y).unwrap();
            *best = best.min(start.elapsed().as_secs_f64());
        }
    }
    best
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = spmv_cpu
}
criterion_main!(benches);
