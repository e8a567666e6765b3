//! The figures derived from the records: rates, the share of the copy bandwidth, the ratios to
//! the vendor library and to the CPU, and the per-kernel summaries of the headline.

use rgla::bench::Record;
use serde::Serialize;

/// Operations bounded by memory traffic: reported against the measured copy bandwidth.
pub const MEMORY_BOUND: [&str; 2] = ["spmv", "symgs"];

/// Where an operation's kernels are compared with some vendor rows only: SpMV with cuSPARSE's
/// CSR algorithms (`cusparse-bsr` works on another format). Elsewhere, every vendor row.
const VENDOR_BASELINES: [(&str, &[&str]); 1] = [("spmv", &["cusparse-alg1", "cusparse-alg2"])];

/// The kernel each operation's headline sentence is about; without one, the best by
/// geometric mean.
const HEADLINE_KERNELS: [(&str, &str); 1] = [("spmv", "csr-adaptive")];

/// The share of the copy bandwidth that counts as "at the roofline".
pub const ROOFLINE_SHARE: f64 = 0.8;

/// Generated inputs with regular rows (first word of the input's name): a good SpMV kernel
/// runs them at the roofline, so the headline counts how many do.
const REGULAR_INPUTS: [&str; 5] = ["stencil27", "poisson3d", "poisson2d", "fem", "banded"];

/// The label of the headline's pseudo-kernel: the fastest of our kernels on each input.
pub const BEST_OF_OURS: &str = "best of ours";

/// The device-to-device copy measurement: the roofline, and the device's description.
#[derive(Clone, Debug, PartialEq)]
pub struct Copy {
    /// Bytes read + written per second, GB/s: the best of the measurements.
    pub gbps: f64,
    pub device: String,
    pub measurements: usize,
}

/// The copy bandwidth of a run (operation "copy"); the best where benches measured it more
/// than once.
pub fn copy_bandwidth(records: &[Record]) -> Option<Copy> {
    let copies: Vec<&Record> = records.iter().filter(|r| r.operation == "copy").collect();
    let best = copies.iter().max_by(|a, b| a.gbps().total_cmp(&b.gbps()))?;
    Some(Copy { gbps: best.gbps(), device: best.notes.clone(), measurements: copies.len() })
}

/// A record with its derived figures: a row of the tables, of results.csv and results.json.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub record: Record,
    /// Useful floating-point operations per second, 1e9/s.
    pub gflops: f64,
    /// The bytes a run must move at least, per second, GB/s (where the record has them).
    pub gbps: Option<f64>,
    /// `gbps` as a percentage of the copy bandwidth (memory-bound operations).
    pub percent_of_copy: Option<f64>,
    /// The vendor row compared with: the fastest baseline of the same input and precision.
    pub vendor_kernel: Option<String>,
    /// Vendor time / this time: above 1 is faster than the vendor library.
    pub vs_vendor: Option<f64>,
    /// `cpu-serial` time / this time.
    pub vs_cpu_serial: Option<f64>,
    /// `cpu-rayon` time / this time.
    pub vs_cpu_rayon: Option<f64>,
}

/// Derives every record's figures, in the records' order.
pub fn derive(records: &[Record], copy: Option<&Copy>) -> Vec<Row> {
    records
        .iter()
        .map(|r| {
            let same_case =
                |o: &&Record| o.operation == r.operation && o.input == r.input && o.precision == r.precision;
            let time_of = |kernel: &str| {
                records.iter().filter(same_case).find(|o| o.kernel == kernel).map(|o| o.time_ms)
            };
            let vendor = records
                .iter()
                .filter(same_case)
                .filter(|o| o.kind == "vendor" && is_baseline(&o.operation, &o.kernel))
                .min_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
            let gbps = (r.min_bytes > 0.0).then(|| r.gbps());
            let memory_bound = MEMORY_BOUND.contains(&r.operation.as_str());
            Row {
                record: r.clone(),
                gflops: r.gflops(),
                gbps,
                percent_of_copy: gbps.zip(copy).filter(|_| memory_bound).map(|(g, c)| 100.0 * g / c.gbps),
                vendor_kernel: vendor.map(|v| v.kernel.clone()),
                vs_vendor: vendor.map(|v| v.time_ms / r.time_ms),
                vs_cpu_serial: time_of("cpu-serial").map(|t| t / r.time_ms),
                vs_cpu_rayon: time_of("cpu-rayon").map(|t| t / r.time_ms),
            }
        })
        .collect()
}

/// The vendor kernels an operation's kernels are compared with, at one precision.
pub fn baselines<'a>(rows: &'a [Row], operation: &str, precision: &str) -> Vec<&'a str> {
    distinct(
        rows.iter()
            .map(|r| &r.record)
            .filter(|r| r.operation == operation && r.precision == precision && r.kind == "vendor")
            .filter(|r| is_baseline(operation, &r.kernel))
            .map(|r| r.kernel.as_str()),
    )
}

fn is_baseline(operation: &str, kernel: &str) -> bool {
    match VENDOR_BASELINES.iter().find(|(op, _)| *op == operation) {
        Some((_, kernels)) => kernels.contains(&kernel),
        None => true,
    }
}

pub fn is_regular(input: &str) -> bool {
    REGULAR_INPUTS.contains(&input.split_whitespace().next().unwrap_or_default())
}

/// The distinct values in order of first appearance.
pub fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen
}

pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// A ratio over several inputs.
#[derive(Clone, Debug, Serialize)]
pub struct Spread {
    pub geomean: f64,
    pub min: f64,
    pub min_input: String,
    pub max: f64,
    /// How many inputs it is taken over.
    pub inputs: usize,
}

impl Spread {
    fn of(values: &[(f64, &str)]) -> Option<Spread> {
        let ratios: Vec<f64> = values.iter().map(|(v, _)| *v).collect();
        let (min, min_input) = values.iter().min_by(|a, b| a.0.total_cmp(&b.0))?;
        Some(Spread {
            geomean: geometric_mean(&ratios)?,
            min: *min,
            min_input: min_input.to_string(),
            max: ratios.iter().copied().fold(f64::MIN, f64::max),
            inputs: values.len(),
        })
    }
}

/// How one kernel does over the inputs of an operation at one precision.
#[derive(Clone, Debug, Serialize)]
pub struct KernelSummary {
    pub kernel: String,
    /// The inputs it ran on.
    pub inputs: usize,
    /// Its ratio to the vendor, over the inputs that have a vendor row.
    pub vs_vendor: Option<Spread>,
    /// Its speedup over `cpu-rayon` (geometric mean).
    pub vs_cpu_rayon: Option<f64>,
    /// Inputs where it reaches `ROOFLINE_SHARE` of the copy bandwidth (memory-bound operations).
    pub at_roofline: Option<usize>,
    /// The same over the regular inputs: (how many reach it, how many regular inputs it ran on).
    pub regular_at_roofline: Option<(usize, usize)>,
}

impl KernelSummary {
    fn of(kernel: &str, rows: &[&Row]) -> KernelSummary {
        let vs_vendor: Vec<(f64, &str)> =
            rows.iter().filter_map(|r| Some((r.vs_vendor?, r.record.input.as_str()))).collect();
        let rayon: Vec<f64> = rows.iter().filter_map(|r| r.vs_cpu_rayon).collect();
        let at_roofline = |rows: &mut dyn Iterator<Item = &&Row>| -> Option<usize> {
            let shares: Vec<f64> = rows.filter_map(|r| r.percent_of_copy).collect();
            (!shares.is_empty()).then(|| shares.iter().filter(|p| **p >= 100.0 * ROOFLINE_SHARE).count())
        };
        let regular: Vec<&Row> = rows.iter().copied().filter(|r| is_regular(&r.record.input)).collect();
        KernelSummary {
            kernel: kernel.to_string(),
            inputs: rows.len(),
            vs_vendor: Spread::of(&vs_vendor),
            vs_cpu_rayon: geometric_mean(&rayon),
            at_roofline: at_roofline(&mut rows.iter()),
            regular_at_roofline: at_roofline(&mut regular.iter()).map(|n| (n, regular.len())),
        }
    }
}

/// The headline of one operation at one precision.
#[derive(Clone, Debug, Serialize)]
pub struct Headline {
    pub operation: String,
    pub precision: String,
    /// The kernel the headline sentence is about.
    pub headline_kernel: Option<String>,
    /// The best of our kernels on each input first, then our kernels by their geometric mean
    /// ratio to the vendor, best first.
    pub kernels: Vec<KernelSummary>,
    /// `cpu-rayon`'s speedup over `cpu-serial` (geometric mean): the figure left when no GPU ran.
    pub rayon_vs_serial: Option<f64>,
}

/// A headline per operation and precision (not for the copy measurement).
pub fn headlines(rows: &[Row]) -> Vec<Headline> {
    let mut out = Vec::new();
    for operation in operations(rows) {
        let of_op: Vec<&Row> = rows.iter().filter(|r| r.record.operation == operation).collect();
        for precision in distinct(of_op.iter().map(|r| r.record.precision.as_str())) {
            let case: Vec<&Row> = of_op.iter().copied().filter(|r| r.record.precision == precision).collect();
            let ours: Vec<&Row> = case.iter().copied().filter(|r| r.record.kind == "gpu").collect();
            let mut kernels: Vec<KernelSummary> = distinct(ours.iter().map(|r| r.record.kernel.as_str()))
                .into_iter()
                .map(|k| {
                    KernelSummary::of(
                        k,
                        &ours.iter().copied().filter(|r| r.record.kernel == k).collect::<Vec<_>>(),
                    )
                })
                .collect();
            kernels.sort_by(|a, b| {
                let key = |k: &KernelSummary| k.vs_vendor.as_ref().map_or(f64::MIN, |s| s.geomean);
                key(b).total_cmp(&key(a))
            });
            let fastest_per_input: Vec<&Row> = distinct(ours.iter().map(|r| r.record.input.as_str()))
                .into_iter()
                .filter_map(|input| {
                    ours.iter()
                        .copied()
                        .filter(|r| r.record.input == input)
                        .min_by(|a, b| a.record.time_ms.total_cmp(&b.record.time_ms))
                })
                .collect();
            let headline_kernel = HEADLINE_KERNELS
                .iter()
                .find(|(op, k)| *op == operation && kernels.iter().any(|s| s.kernel == *k))
                .map(|(_, k)| k.to_string())
                .or_else(|| kernels.first().map(|k| k.kernel.clone()));
            if !fastest_per_input.is_empty() {
                kernels.insert(0, KernelSummary::of(BEST_OF_OURS, &fastest_per_input));
            }
            let rayon: Vec<f64> = case
                .iter()
                .filter(|r| r.record.kernel == "cpu-rayon")
                .filter_map(|r| r.vs_cpu_serial)
                .collect();
            out.push(Headline {
                operation: operation.to_string(),
                precision: precision.to_string(),
                headline_kernel,
                kernels,
                rayon_vs_serial: geometric_mean(&rayon),
            });
        }
    }
    out
}

/// The operations of a run, the known ones first in their usual order, never "copy".
pub fn operations(rows: &[Row]) -> Vec<&str> {
    let mut ops = distinct(rows.iter().map(|r| r.record.operation.as_str()));
    ops.retain(|op| *op != "copy");
    let rank = |op: &&str| crate::bench::OPERATIONS.iter().position(|o| o == op).unwrap_or(usize::MAX);
    ops.sort_by_key(rank);
    ops
}
