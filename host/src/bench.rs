//! What the benchmarks share: one result record per (operation, input, kernel, precision),
//! appended as a JSON line to `$RGLA_BENCH_DIR/<operation>.jsonl` (default
//! `target/bench-results/`), where `cargo xtask bench` reads them to write the report.
//! A record exists only for a result that was verified against the CPU reference.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// One measured, verified result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// "spmv", "symgs", "gemm", "solve", "copy".
    pub operation: String,
    /// The input, e.g. "stencil27 160^3" or "n=4096".
    pub input: String,
    /// Our kernel's name, or the baseline's ("cusparse-alg1", "cpu-serial", ...).
    pub kernel: String,
    /// "gpu" (ours), "vendor", "cpu", or [`REFERENCE`]: a row measured for scale, not as a
    /// competitor (one SpMV beside the SymGS sweeps, plain CG beside PCG).
    pub kind: String,
    pub precision: String,
    /// Median time of one run, milliseconds.
    pub time_ms: f64,
    pub runs: usize,
    /// Useful floating-point operations of one run (2 nnz for SpMV).
    pub flops: f64,
    /// Bytes a run must move at least (0 where not memory-bound).
    pub min_bytes: f64,
    /// Relative error against the CPU reference.
    pub error: f64,
    /// Extra facts about the input and the run, as words; `key=value` words are read back by
    /// [`Record::note`]: `rows=`, `cols=`, `nnz=` (the input's size), `iterations=` (solvers,
    /// whose `time_ms` is then the time to solution).
    pub notes: String,
}

/// The `kind` of a reference row: measured for scale beside an operation's kernels (one SpMV
/// beside the SymGS sweeps, plain CG beside PCG), drawn as a labelled reference, and never
/// counted as one of ours, as the best of ours, or in a headline.
pub const REFERENCE: &str = "reference";

impl Record {
    /// Whether the row was measured for scale only (see [`REFERENCE`]).
    pub fn is_reference(&self) -> bool {
        self.kind == REFERENCE
    }

    /// The value of a `key=value` word of the notes: `note("nnz")` of "rows=10 nnz=28" is "28".
    pub fn note(&self, key: &str) -> Option<&str> {
        self.notes.split_whitespace().find_map(|w| {
            let value = w.strip_prefix(key)?.strip_prefix('=')?;
            Some(value.trim_end_matches([',', ';', ')']))
        })
    }

    /// [`note`](Self::note) parsed: `note_as::<f64>("nnz")` of "rows=10 nnz=28" is 28.0.
    pub fn note_as<V: std::str::FromStr>(&self, key: &str) -> Option<V> {
        self.note(key)?.parse().ok()
    }

    pub fn gflops(&self) -> f64 {
        self.flops / (self.time_ms * 1e6)
    }

    pub fn gbps(&self) -> f64 {
        self.min_bytes / (self.time_ms * 1e6)
    }
}

/// Where records go.
pub fn results_dir() -> PathBuf {
    std::env::var_os("RGLA_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-results"))
}

/// Appends `record` to `<results_dir>/<operation>.jsonl`.
pub fn save(record: &Record) -> Result<()> {
    let dir = results_dir();
    let io = |e: std::io::Error| Error::Io { path: dir.display().to_string(), source: e };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let path = dir.join(format!("{}.jsonl", record.operation));
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(io)?;
    let line = serde_json::to_string(record).expect("records serialise");
    writeln!(file, "{line}").map_err(io)
}

/// Reads every record of `operation` (or all of them) back.
pub fn load(operation: Option<&str>) -> Result<Vec<Record>> {
    load_from(&results_dir(), operation)
}

/// Reads every record of `operation` (or all of them) from `dir`, file by file in name order.
pub fn load_from(dir: &Path, operation: Option<&str>) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(records) };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        if path.extension().is_none_or(|x| x != "jsonl") || operation.is_some_and(|op| op != stem) {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::Io { path: path.display().to_string(), source: e })?;
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            records.push(serde_json::from_str(line).map_err(|e| {
                Error::InvalidInput(format!("{}:{}: not a bench record: {e}", path.display(), i + 1))
            })?);
        }
    }
    Ok(records)
}

/// Median of `runs` CUDA-event timings of `work` after `warmup` runs, in milliseconds.
pub fn gpu_median_ms(gpu: &Gpu, warmup: usize, runs: usize, work: impl FnMut() -> Result<()>) -> Result<f64> {
    Ok(gpu.time(warmup, runs, work)?.median_ms())
}

/// Median wall time of `runs` runs of CPU work after one warm-up, in milliseconds.
pub fn cpu_median_ms(runs: usize, mut work: impl FnMut()) -> f64 {
    work();
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = std::time::Instant::now();
            work();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The time of `iters` back-to-back runs, by CUDA events: criterion's `iter_custom` body.
pub fn gpu_iters(gpu: &Gpu, iters: u64, mut work: impl FnMut() -> Result<()>) -> Duration {
    let ms = gpu
        .time_once(|| {
            for _ in 0..iters {
                work()?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("benchmark run failed: {e}"));
    Duration::from_secs_f64(ms / 1e3)
}

/// The GPU, or None after printing the skip line that the report and `run-bench.sh` look for.
pub fn gpu_or_skip() -> Option<Gpu> {
    Gpu::new().map_err(|e| println!("GPU benchmarks skipped: {e}")).ok()
}

/// Whether this is a short run (`RGLA_BENCH_QUICK=1`, set by `cargo xtask bench --quick`).
pub fn quick() -> bool {
    std::env::var("RGLA_BENCH_QUICK").is_ok_and(|v| v == "1")
}

/// Whether the environment variable `variable` (a comma-separated list of name prefixes;
/// unset: everything) selects the benchmark named `name`.
pub fn selected(variable: &str, name: &str) -> bool {
    std::env::var(variable)
        .map_or(true, |list| list.split(',').map(str::trim).any(|p| !p.is_empty() && name.starts_with(p)))
}

/// The dense benchmarks' sizes: of their own `report` sizes (every kernel) and `vendor` sizes
/// (the fast kernels against the vendor library), those `RGLA_BENCH_SIZES` lists (a
/// comma-separated list; unset: all). A listed size that is neither runs as a vendor size, so
/// that sizes never tuned on can be checked in the same benchmark.
pub fn bench_sizes(report: &[usize], vendor: &[usize]) -> Result<(Vec<usize>, Vec<usize>)> {
    pick_sizes(std::env::var("RGLA_BENCH_SIZES").ok().as_deref(), report, vendor)
}

fn pick_sizes(list: Option<&str>, report: &[usize], vendor: &[usize]) -> Result<(Vec<usize>, Vec<usize>)> {
    let Some(list) = list else {
        return Ok((report.to_vec(), vendor.to_vec()));
    };
    let mut listed = Vec::new();
    for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word.parse::<usize>() {
            Ok(n) if n > 0 => listed.push(n),
            _ => return Err(Error::InvalidInput(format!("RGLA_BENCH_SIZES: {word:?} is not a size"))),
        }
    }
    let report: Vec<usize> = report.iter().copied().filter(|n| listed.contains(n)).collect();
    let vendor = listed.into_iter().filter(|n| !report.contains(n)).collect();
    Ok((report, vendor))
}

/// Measures the device-to-device copy bandwidth (bytes read + written per second, GB/s) on
/// 1 GiB buffers: the roofline memory-bound kernels are reported against.
pub fn copy_bandwidth_gbps(gpu: &Gpu) -> Result<f64> {
    let len = 1usize << 27; // 2^27 f64 = 1 GiB
    let src = gpu.filled(len, 1.0f64)?;
    let mut dst = gpu.zeros::<f64>(len)?;
    let ms = gpu_median_ms(gpu, 3, 20, || gpu.copy(&src, &mut dst))?;
    Ok(2.0 * (len * 8) as f64 / (ms * 1e6))
}

/// Records the copy bandwidth (operation "copy") and returns it.
pub fn record_copy_bandwidth(gpu: &Gpu) -> Result<f64> {
    let gbps = copy_bandwidth_gbps(gpu)?;
    let bytes = 2.0 * (1u64 << 30) as f64;
    save(&Record {
        operation: "copy".into(),
        input: "1 GiB".into(),
        kernel: "memcpy-dtod".into(),
        kind: "vendor".into(),
        precision: "-".into(),
        time_ms: bytes / (gbps * 1e6),
        runs: 20,
        flops: 0.0,
        min_bytes: bytes,
        error: 0.0,
        notes: gpu.props().to_string(),
    })?;
    Ok(gbps)
}

#[cfg(test)]
mod tests {
    use super::pick_sizes;

    #[test]
    fn listed_sizes_run_and_others_as_vendor_sizes() {
        let (report, vendor) = ([1000, 2000, 3000], [4096, 8192]);
        assert_eq!(pick_sizes(None, &report, &vendor).unwrap(), (report.to_vec(), vendor.to_vec()));
        let picked = pick_sizes(Some("2000, 8192,12000"), &report, &vendor).unwrap();
        assert_eq!(picked, (vec![2000], vec![8192, 12000]));
        let err = pick_sizes(Some("4096,big"), &report, &vendor).unwrap_err().to_string();
        assert!(err.contains("\"big\" is not a size"), "{err}");
        assert!(pick_sizes(Some("0"), &report, &vendor).is_err());
    }
}
