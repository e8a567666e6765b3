//! The figures derived from the records: rates, the share of the copy bandwidth, the ratios to
//! the vendor library and to the CPU, and the per-kernel summaries of the headline.

use rgla::bench::{REFERENCE, Record};
use serde::Serialize;

use super::tables::number;

/// Operations bounded by memory traffic: reported against the measured copy bandwidth.
pub const MEMORY_BOUND: [&str; 2] = ["spmv", "symgs"];

/// Where an operation's kernels are compared with some vendor rows only: SpMV with cuSPARSE's
/// CSR algorithms (`cusparse-bsr` works on another format), GEMM with cuBLAS in its default
/// math mode, the dense solve with cuSOLVER's getrf + getrs (its TF32 refinement solver is a
/// row of its own). Elsewhere, every vendor row.
const VENDOR_BASELINES: [(&str, &[&str]); 3] =
    [("spmv", &["cusparse-alg1", "cusparse-alg2"]), ("gemm", &["cublas"]), ("solve", &["cusolver"])];

/// Kernels that round below their precision, each compared with the vendor's row that does
/// the same: (operation, kernel, its baseline).
const REDUCED_PRECISION: [(&str, &str, &str); 2] =
    [("gemm", "tf32", "cublas-tf32"), ("gemm", "tf32-wgmma", "cublas-tf32")];

/// Each operation's default kernel, the one a user gets or is pointed to, by precision ("" for
/// any); the first of the names that the run has. The headline sentence is about it.
/// - spmv: `csr-adaptive`, the one call that picks the kernel per matrix;
/// - symgs: `sync-free-values`, the fastest smoother in the sequential order (the one
///   `examples/pcg.rs` uses; multicolor is faster but a different smoother);
/// - pcg: the same smoother (the bench runs it with 16 warps per SM where not at full width);
/// - gemm: `dmma-tma` (f64 tensor cores; `dmma-pipelined` in runs from before it),
///   `blocked-wide` (f32, SIMT; `blocked` in runs from before it);
/// - solve: `blocked`, the blocked LU with getrs.
const DEFAULT_KERNELS: [(&str, &str, &[&str]); 6] = [
    ("spmv", "", &["csr-adaptive"]),
    ("symgs", "", &["sync-free-values"]),
    ("pcg", "", &["sync-free-values", "sync-free-values-16warps-per-sm"]),
    ("gemm", "f64", &["dmma-tma", "dmma-pipelined"]),
    ("gemm", "f32", &["blocked-wide", "blocked"]),
    ("solve", "", &["blocked"]),
];

/// The share of the copy bandwidth that counts as "at the roofline".
pub const ROOFLINE_SHARE: f64 = 0.8;

/// Generated inputs with regular rows (first word of the input's name): rows of about the same
/// length, near the diagonal. A good SpMV kernel runs them at the roofline, so the headline
/// counts how many do.
pub const REGULAR_INPUTS: [&str; 5] = ["stencil27", "poisson3d", "poisson2d", "fem", "banded"];

/// The label of the headline's pseudo-kernel: the fastest of our kernels on each input.
pub const BEST_OF_OURS: &str = "best of ours";

/// The device-to-device copy measurement: the roofline, and the device's description.
#[derive(Clone, Debug, PartialEq)]
pub struct Copy {
    /// Bytes read + written per second, GB/s: the best of the measurements.
    pub gbps: f64,
    pub device: String,
    pub measurements: usize,
    /// The L2 cache's size in bytes, from the device's description ("L2 50 MiB").
    pub l2_bytes: Option<f64>,
}

/// The copy bandwidth of a run (operation "copy"); the best where benches measured it more
/// than once.
pub fn copy_bandwidth(records: &[Record]) -> Option<Copy> {
    let copies: Vec<&Record> = records.iter().filter(|r| r.operation == "copy").collect();
    let best = copies.iter().max_by(|a, b| a.gbps().total_cmp(&b.gbps()))?;
    Some(Copy {
        gbps: best.gbps(),
        device: best.notes.clone(),
        measurements: copies.len(),
        l2_bytes: l2_bytes(&best.notes),
    })
}

/// The L2 size of a device description: "... L2 50 MiB ..." is 50 * 2^20.
pub fn l2_bytes(device: &str) -> Option<f64> {
    let words: Vec<&str> = device.split([' ', ',', '(', ')']).filter(|w| !w.is_empty()).collect();
    let at = words.iter().position(|w| *w == "L2")?;
    let value: f64 = words.get(at + 1)?.parse().ok()?;
    let unit = match *words.get(at + 2)? {
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(value * unit)
}

/// Marks the reference rows of records written before references were marked: the one SpMV
/// of the SymGS bench (`spmv-...`) and plain CG in PCG.
pub fn mark_references(records: &mut [Record]) {
    for r in records.iter_mut().filter(|r| r.kind == "gpu") {
        let for_scale = (r.operation == "symgs" && r.kernel.starts_with("spmv-"))
            || (r.operation == "pcg" && r.kernel == "none (plain CG)");
        if for_scale {
            r.kind = REFERENCE.into();
        }
    }
}

/// A record with its derived figures: a row of the tables, of results.csv and results.json.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub record: Record,
    /// Useful floating-point operations per second, 1e9/s.
    pub gflops: f64,
    /// The bytes the GB/s are of: for SpMV the input's CSR minimum, the same for every format
    /// (so that a faster kernel is always higher); otherwise the record's own count.
    pub bytes: Option<f64>,
    /// `bytes` per second, GB/s (where there are bytes).
    pub gbps: Option<f64>,
    /// `gbps` as a percentage of the copy bandwidth (memory-bound operations).
    pub percent_of_copy: Option<f64>,
    /// Iterations to converge (solvers: `time_ms` is the time to solution).
    pub iterations: Option<u64>,
    /// The vendor row compared with: the fastest baseline of the same input and precision.
    pub vendor_kernel: Option<String>,
    /// Vendor time / this time: above 1 is faster than the vendor library.
    pub vs_vendor: Option<f64>,
    /// `cpu-serial` time / this time.
    pub vs_cpu_serial: Option<f64>,
    /// `cpu-rayon` time / this time.
    pub vs_cpu_rayon: Option<f64>,
}

impl Row {
    pub fn is_ours(&self) -> bool {
        self.record.kind == "gpu"
    }
}

/// The CSR minimum of an input's SpMV: values and 32-bit column indices once, the row pointers,
/// x and y once: nnz (elem + 4) + (rows + 1) 4 + (rows + cols) elem, from the notes.
pub fn csr_bytes(r: &Record) -> Option<f64> {
    let elem = match r.precision.as_str() {
        "f64" => 8.0,
        "f32" => 4.0,
        "f16" | "bf16" => 2.0,
        _ => return None,
    };
    let rows = r.note_as::<f64>("rows")?;
    let cols = r.note_as::<f64>("cols").unwrap_or(rows);
    let nnz = r.note_as::<f64>("nnz")?;
    Some(nnz * (elem + 4.0) + (rows + 1.0) * 4.0 + (rows + cols) * elem)
}

/// Derives every record's figures, in the records' order.
pub fn derive(records: &[Record], copy: Option<&Copy>) -> Vec<Row> {
    records
        .iter()
        .map(|r| {
            let same_case =
                |o: &&Record| o.operation == r.operation && o.input == r.input && o.precision == r.precision;
            let time_of = |kernel: &str| {
                records
                    .iter()
                    .filter(same_case)
                    .find(|o| o.kind == "cpu" && o.kernel.split_whitespace().next() == Some(kernel))
                    .map(|o| o.time_ms)
            };
            let vendor = records
                .iter()
                .filter(same_case)
                .filter(|o| o.kind == "vendor" && is_baseline_of(&o.operation, &r.kernel, &o.kernel))
                .min_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
            let bytes = if r.operation == "spmv" {
                // One count per input: the CSR minimum, whatever the format moves.
                csr_bytes(r).or(vendor.map(|v| v.min_bytes)).or(Some(r.min_bytes))
            } else {
                Some(r.min_bytes)
            }
            .filter(|b| *b > 0.0);
            let gbps = bytes.map(|b| b / (r.time_ms * 1e6));
            let memory_bound = MEMORY_BOUND.contains(&r.operation.as_str());
            Row {
                record: r.clone(),
                gflops: r.gflops(),
                bytes,
                gbps,
                percent_of_copy: gbps.zip(copy).filter(|_| memory_bound).map(|(g, c)| 100.0 * g / c.gbps),
                iterations: r.note_as("iterations"),
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

/// Whether vendor row `vendor` is the baseline of our `kernel`.
fn is_baseline_of(operation: &str, kernel: &str, vendor: &str) -> bool {
    let reduced =
        |&&(op, ours, theirs): &&(&str, &str, &str)| op == operation && (ours == kernel || theirs == kernel);
    match REDUCED_PRECISION.iter().find(reduced) {
        Some(&(_, _, theirs)) => vendor == theirs,
        None => is_baseline(operation, vendor),
    }
}

pub fn is_baseline(operation: &str, kernel: &str) -> bool {
    match VENDOR_BASELINES.iter().find(|(op, _)| *op == operation) {
        Some((_, kernels)) => kernels.contains(&kernel),
        None => true,
    }
}

pub fn is_regular(input: &str) -> bool {
    REGULAR_INPUTS.contains(&input.split_whitespace().next().unwrap_or_default())
}

/// The matrix size of inputs named like `n=4096`.
pub fn size_of_input(input: &str) -> Option<f64> {
    input.split_whitespace().find_map(|w| w.strip_prefix("n="))?.parse().ok()
}

/// Whether `input` names a dense shape `MxKxN` (a GEMM that is not square, as `5000x7001x3000`).
pub fn is_dense_shape(input: &str) -> bool {
    let dims: Vec<&str> = input.split('x').collect();
    dims.len() == 3 && dims.iter().all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The families inputs are grouped by, in the order they are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    Regular,
    Irregular,
    SuiteSparse,
    Dense,
    DenseShape,
}

impl Family {
    pub fn of(input: &str) -> Family {
        if input.ends_with(".mtx") {
            Family::SuiteSparse
        } else if size_of_input(input).is_some() {
            Family::Dense
        } else if is_dense_shape(input) {
            Family::DenseShape
        } else if is_regular(input) {
            Family::Regular
        } else {
            Family::Irregular
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Family::Regular => "regular (generated)",
            Family::Irregular => "irregular (generated)",
            Family::SuiteSparse => "SuiteSparse files",
            Family::Dense => "square n",
            Family::DenseShape => "m x k x n",
        }
    }

    /// Dense matrices (square or not).
    pub fn is_dense(self) -> bool {
        match self {
            Family::Dense | Family::DenseShape => true,
            Family::Regular | Family::Irregular | Family::SuiteSparse => false,
        }
    }
}

/// The inputs of `rows`, by family (regular, irregular, files; sized ones by n), then in
/// the order of the records.
pub fn ordered_inputs<'a>(rows: &[&'a Row]) -> Vec<&'a str> {
    let mut inputs = distinct(rows.iter().map(|r| r.record.input.as_str()));
    inputs.sort_by(|a, b| {
        let key = |i: &str| (Family::of(i), size_of_input(i).unwrap_or(0.0));
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    inputs
}

/// A count in three significant digits: 1813, 83.9 k, 4.10 M, 1.20 G.
pub fn count(x: f64) -> String {
    match x {
        x if x < 1e4 => format!("{x:.0}"),
        x if x < 1e6 => format!("{} k", number(x / 1e3)),
        x if x < 1e9 => format!("{} M", number(x / 1e6)),
        x => format!("{} G", number(x / 1e9)),
    }
}

/// Bytes in binary units: 912 KiB, 50 MiB, 1.3 GiB.
pub fn bytes(x: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = x;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    let shown = number(value);
    let shown = if shown.contains('.') { shown.trim_end_matches('0').trim_end_matches('.') } else { &shown };
    format!("{shown} {}", units[unit])
}

/// The size of an input from its records' notes: "4.10 M rows, 109 M nnz".
pub fn size_label(r: &Record) -> Option<String> {
    let (rows, nnz) = (r.note_as::<f64>("rows")?, r.note_as::<f64>("nnz")?);
    Some(format!("{} rows, {} nnz", count(rows), count(nnz)))
}

/// The name of an input with its size where the records have it.
pub fn input_label(rows: &[Row], input: &str) -> String {
    let size = rows.iter().filter(|r| r.record.input == input).find_map(|r| size_label(&r.record));
    match size {
        Some(size) => format!("{input} ({size})"),
        None => input.to_string(),
    }
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
    /// Its speedup over `cpu-serial` (geometric mean).
    pub vs_cpu_serial: Option<f64>,
    /// Inputs where it reaches `ROOFLINE_SHARE` of the copy bandwidth (memory-bound operations).
    pub at_roofline: Option<usize>,
    /// The same over the regular inputs: (how many reach it, how many regular inputs it ran on).
    pub regular_at_roofline: Option<(usize, usize)>,
}

impl KernelSummary {
    fn of(kernel: &str, rows: &[&Row]) -> KernelSummary {
        let vs_vendor: Vec<(f64, &str)> =
            rows.iter().filter_map(|r| Some((r.vs_vendor?, r.record.input.as_str()))).collect();
        let mean = |f: fn(&Row) -> Option<f64>| {
            geometric_mean(&rows.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
        };
        let at_roofline = |rows: &mut dyn Iterator<Item = &&Row>| -> Option<usize> {
            let shares: Vec<f64> = rows.filter_map(|r| r.percent_of_copy).collect();
            (!shares.is_empty()).then(|| shares.iter().filter(|p| **p >= 100.0 * ROOFLINE_SHARE).count())
        };
        let regular: Vec<&Row> = rows.iter().copied().filter(|r| is_regular(&r.record.input)).collect();
        KernelSummary {
            kernel: kernel.to_string(),
            inputs: rows.len(),
            vs_vendor: Spread::of(&vs_vendor),
            vs_cpu_rayon: mean(|r| r.vs_cpu_rayon),
            vs_cpu_serial: mean(|r| r.vs_cpu_serial),
            at_roofline: at_roofline(&mut rows.iter()),
            regular_at_roofline: at_roofline(&mut regular.iter()).map(|n| (n, regular.len())),
        }
    }
}

/// A reference row's relation to the default kernel.
#[derive(Clone, Debug, Serialize)]
pub struct Reference {
    pub kernel: String,
    /// The headline kernel's time / the reference's (geometric mean over the inputs of both).
    pub default_over_reference: Option<f64>,
}

/// The headline of one operation at one precision.
#[derive(Clone, Debug, Serialize)]
pub struct Headline {
    pub operation: String,
    pub precision: String,
    /// The operation's default kernel, where the run has it. Never a reference row.
    pub default_kernel: Option<String>,
    /// The kernel the headline sentence is about: the default kernel, else our best by geometric
    /// mean. Never a reference row.
    pub headline_kernel: Option<String>,
    /// The best of our kernels on each input first, then our kernels by their geometric mean
    /// ratio to the vendor, best first. Reference rows are not among them.
    pub kernels: Vec<KernelSummary>,
    /// The rows measured for scale, with the headline kernel's time against theirs.
    pub references: Vec<Reference>,
    /// `cpu-rayon`'s speedup over `cpu-serial` (geometric mean): the figure left when no GPU ran.
    pub rayon_vs_serial: Option<f64>,
}

impl Headline {
    pub fn summary_of(&self, kernel: &str) -> Option<&KernelSummary> {
        self.kernels.iter().find(|k| k.kernel == kernel)
    }

    pub fn headline_summary(&self) -> Option<&KernelSummary> {
        self.summary_of(self.headline_kernel.as_deref()?)
    }

    pub fn best(&self) -> Option<&KernelSummary> {
        self.summary_of(BEST_OF_OURS)
    }
}

/// The default kernel of an operation at a precision, among the kernels a run has.
pub fn default_kernel<'a>(operation: &str, precision: &str, ours: &[&'a str]) -> Option<&'a str> {
    DEFAULT_KERNELS
        .iter()
        .filter(|(op, p, _)| *op == operation && (p.is_empty() || *p == precision))
        .flat_map(|(_, _, names)| names.iter())
        .find_map(|name| ours.iter().copied().find(|k| k == name))
}

/// The fastest of our kernels on each input (never a reference row).
pub fn fastest_of_ours<'a>(case: &[&'a Row]) -> Vec<&'a Row> {
    let ours: Vec<&Row> = case.iter().copied().filter(|r| r.is_ours()).collect();
    distinct(ours.iter().map(|r| r.record.input.as_str()))
        .into_iter()
        .filter_map(|input| {
            ours.iter()
                .copied()
                .filter(|r| r.record.input == input)
                .min_by(|a, b| a.record.time_ms.total_cmp(&b.record.time_ms))
        })
        .collect()
}

/// A headline per operation and precision (not for the copy measurement).
pub fn headlines(rows: &[Row]) -> Vec<Headline> {
    let mut out = Vec::new();
    for operation in operations(rows) {
        let of_op: Vec<&Row> = rows.iter().filter(|r| r.record.operation == operation).collect();
        for precision in precisions(&of_op) {
            let case: Vec<&Row> = of_op.iter().copied().filter(|r| r.record.precision == precision).collect();
            let ours: Vec<&Row> = case.iter().copied().filter(|r| r.is_ours()).collect();
            let names = distinct(ours.iter().map(|r| r.record.kernel.as_str()));
            let of_kernel =
                |k: &str| case.iter().copied().filter(|r| r.record.kernel == k).collect::<Vec<&Row>>();
            let mut kernels: Vec<KernelSummary> =
                names.iter().map(|k| KernelSummary::of(k, &of_kernel(k))).collect();
            kernels.sort_by(|a, b| {
                let key = |k: &KernelSummary| k.vs_vendor.as_ref().map_or(f64::MIN, |s| s.geomean);
                key(b).total_cmp(&key(a))
            });
            let default_kernel = default_kernel(operation, precision, &names).map(str::to_string);
            let headline_kernel =
                default_kernel.clone().or_else(|| kernels.first().map(|k| k.kernel.clone()));
            let fastest = fastest_of_ours(&case);
            if !fastest.is_empty() {
                kernels.insert(0, KernelSummary::of(BEST_OF_OURS, &fastest));
            }
            let references =
                distinct(case.iter().filter(|r| r.record.is_reference()).map(|r| r.record.kernel.as_str()))
                    .into_iter()
                    .map(|reference| {
                        let ratios: Vec<f64> = of_kernel(reference)
                            .iter()
                            .filter_map(|r| {
                                let default = headline_kernel.as_deref()?;
                                let d = case.iter().find(|o| {
                                    o.record.kernel == default && o.record.input == r.record.input
                                })?;
                                Some(d.record.time_ms / r.record.time_ms)
                            })
                            .collect();
                        Reference {
                            kernel: reference.to_string(),
                            default_over_reference: geometric_mean(&ratios),
                        }
                    })
                    .collect();
            let rayon: Vec<f64> = case
                .iter()
                .filter(|r| r.record.kernel == "cpu-rayon")
                .filter_map(|r| r.vs_cpu_serial)
                .collect();
            out.push(Headline {
                operation: operation.to_string(),
                precision: precision.to_string(),
                default_kernel,
                headline_kernel,
                kernels,
                references,
                rayon_vs_serial: geometric_mean(&rayon),
            });
        }
    }
    out
}

/// The precisions of some rows: f64 first, then f32, then any other in order of appearance.
pub fn precisions<'a>(rows: &[&'a Row]) -> Vec<&'a str> {
    let mut precisions = distinct(rows.iter().map(|r| r.record.precision.as_str()));
    let rank = |p: &&str| ["f64", "f32"].iter().position(|q| q == p).unwrap_or(2);
    precisions.sort_by_key(rank);
    precisions
}

/// The operations of a run, the known ones first in their usual order, never "copy".
pub fn operations(rows: &[Row]) -> Vec<&str> {
    let mut ops = distinct(rows.iter().map(|r| r.record.operation.as_str()));
    ops.retain(|op| *op != "copy");
    let rank = |op: &&str| SECTIONS.iter().position(|(o, _)| o == op).unwrap_or(usize::MAX);
    ops.sort_by_key(rank);
    ops
}

/// The report's sections in order (pcg follows symgs, whose bench runs it), each with what
/// the operation computes, for titles.
const SECTIONS: [(&str, &str); 5] = [
    ("spmv", "SpMV y = A x"),
    ("symgs", "SymGS: one symmetric Gauss-Seidel sweep"),
    ("pcg", "PCG: conjugate gradients preconditioned by one SymGS sweep"),
    ("gemm", "GEMM C = A B"),
    ("solve", "dense LU solve: getrf + getrs"),
];

/// What an operation computes, for titles.
pub fn operation_title(operation: &str) -> String {
    SECTIONS.iter().find(|(op, _)| *op == operation).map_or(operation, |(_, title)| title).to_string()
}

/// Whether an operation's figure of merit is the time to solution (rows carry iterations).
pub fn is_solver(rows: &[&Row]) -> bool {
    rows.iter().any(|r| r.iterations.is_some())
}
