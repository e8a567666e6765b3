//! The benchmark report, from a results folder (the benches' `<operation>.jsonl` records, their
//! logs, and `run.txt`) to `summary.md`, `results.csv`, `results.json` and SVG plots.
//!
//! `cargo xtask report` writes it from results already recorded; `cargo xtask bench` after its
//! run; on a GPU machine without Rust, `bundle/run-bench.sh` through `bundle/bin/xtask report`.
//! A folder without records but with a report's `results.json` (the committed `reports/*`) is
//! read from that file's rows, run and device: `cargo xtask report --results DIR --out DIR`
//! writes such a report again with the current code.

mod plots;
mod rows;
mod svg;
mod tables;
#[cfg(test)]
mod tests;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rgla::bench::Record;
use serde::Serialize;

use crate::util::repo_root;
use rows::{Copy, Headline, Row};

pub const SUMMARY: &str = "summary.md";
pub const RESULTS_CSV: &str = "results.csv";
pub const RESULTS_JSON: &str = "results.json";
const RUN_INFO: &str = "run.txt";
/// The line a bench prints when it finds no GPU; the reason follows.
const GPU_SKIPPED: &str = "GPU benchmarks skipped: ";

#[derive(clap::Args)]
pub struct Options {
    /// The results folder to read [default: target/bench-results]
    #[arg(long, value_name = "DIR")]
    results: Option<PathBuf>,
    /// Where the report goes [default: target/bench-report]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(options: Options) -> Result<()> {
    let results = options.results.unwrap_or_else(|| repo_root().join("target/bench-results"));
    let out = options.out.unwrap_or_else(|| repo_root().join("target/bench-report"));
    let summary = write(&results, &out)?;
    println!("{}", summary.headline);
    println!("report: {}", summary.path.display());
    Ok(())
}

/// What the runner knows about a run, as `key=value` lines in `<results>/run.txt`: written by
/// `cargo xtask bench` and by `bundle/run-bench.sh` (keep the two in step).
#[derive(Debug, Default, PartialEq)]
pub struct RunInfo {
    pub commit: Option<String>,
    pub date: Option<String>,
    /// "quick" or "full".
    pub mode: Option<String>,
    /// Benchmarks that exited with an error, with their status (`failed=` lines).
    pub failed: Vec<String>,
}

impl RunInfo {
    pub fn read(dir: &Path) -> RunInfo {
        let mut info = RunInfo::default();
        let text = fs::read_to_string(dir.join(RUN_INFO)).unwrap_or_default();
        for (key, value) in text.lines().filter_map(|l| l.split_once('=')) {
            let value = value.trim().to_string();
            match key.trim() {
                "commit" => info.commit = Some(value),
                "date" => info.date = Some(value),
                "mode" => info.mode = Some(value),
                "failed" => info.failed.push(value),
                _ => {}
            }
        }
        info
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let mut text = String::new();
        for (key, value) in [("commit", &self.commit), ("date", &self.date), ("mode", &self.mode)] {
            if let Some(value) = value {
                text += &format!("{key}={value}\n");
            }
        }
        for failed in &self.failed {
            text += &format!("failed={failed}\n");
        }
        fs::write(dir.join(RUN_INFO), text)
            .with_context(|| format!("writing {}", dir.join(RUN_INFO).display()))
    }

    /// Empties `dir` of an earlier run's records, logs and run info (nothing else), creating it.
    pub fn clear(dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for entry in fs::read_dir(dir)?.flatten() {
            let path = entry.path();
            let ours =
                path.extension().is_some_and(|x| x == "jsonl" || x == "log") || path.ends_with(RUN_INFO);
            if ours && path.is_file() {
                fs::remove_file(&path)?;
            }
        }
        Ok(())
    }
}

/// Where criterion's output goes for a results folder: beside it (`CRITERION_HOME`).
pub fn criterion_dir(results: &Path) -> PathBuf {
    results.parent().unwrap_or(results).join("criterion")
}

/// What a results folder holds.
pub struct Results {
    pub records: Vec<Record>,
    pub info: RunInfo,
    /// Why benches skipped the GPU, from their logs (one line per distinct reason).
    pub gpu_skipped: Vec<String>,
    /// Whether the records came from a report's `results.json` rather than the benches' files.
    pub from_report: bool,
}

/// The parts of a report's `results.json` that a report is written from again.
#[derive(serde::Deserialize)]
struct Written {
    commit: Option<String>,
    date: Option<String>,
    mode: Option<String>,
    #[serde(default)]
    failed: Vec<String>,
    #[serde(default)]
    gpu_skipped: Vec<String>,
    /// The rows: each a record with its derived figures, which are derived again.
    rows: Vec<Record>,
}

impl Results {
    pub fn read(dir: &Path) -> Result<Results> {
        let mut records = rgla::bench::load_from(dir, None).map_err(|e| anyhow::anyhow!("{e}"))?;
        let written = dir.join(RESULTS_JSON);
        let from_report = records.is_empty() && written.is_file();
        let (info, gpu_skipped) = if from_report {
            let text =
                fs::read_to_string(&written).with_context(|| format!("reading {}", written.display()))?;
            let report: Written = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a report's results", written.display()))?;
            records = report.rows;
            let info = RunInfo {
                commit: report.commit,
                date: report.date,
                mode: report.mode,
                failed: report.failed,
            };
            (info, report.gpu_skipped)
        } else {
            (RunInfo::read(dir), skipped_reasons(dir))
        };
        rows::mark_references(&mut records);
        Ok(Results { records, info, gpu_skipped, from_report })
    }
}

/// Why the GPU benchmarks were skipped, as the benchmark logs of `dir` say (each reason once).
fn skipped_reasons(dir: &Path) -> Vec<String> {
    let mut logs: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "log"))
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    let mut gpu_skipped: Vec<String> = Vec::new();
    for log in logs {
        let text = fs::read_to_string(&log).unwrap_or_default();
        for reason in text.lines().filter_map(|l| l.strip_prefix(GPU_SKIPPED)) {
            if !gpu_skipped.iter().any(|r| r == reason) {
                gpu_skipped.push(reason.to_string());
            }
        }
    }
    gpu_skipped
}

/// A written report: where its summary is, and the headline to print.
pub struct Summary {
    pub path: PathBuf,
    pub headline: String,
}

/// Writes the report of the results in `results_dir` into `out`.
pub fn write(results_dir: &Path, out: &Path) -> Result<Summary> {
    let results = Results::read(results_dir)?;
    let has_run_info = results_dir.join(RUN_INFO).exists() || results.from_report;
    if results.records.is_empty() && results.gpu_skipped.is_empty() && !has_run_info {
        bail!("no benchmark results in {}: run `cargo xtask bench` first", results_dir.display());
    }
    let copy = rows::copy_bandwidth(&results.records);
    let rows = rows::derive(&results.records, copy.as_ref());
    let headlines = rows::headlines(&rows);

    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    // Plots of an earlier run that this one has no data for must not linger.
    for entry in fs::read_dir(out)?.flatten() {
        if entry.path().extension().is_some_and(|x| x == "svg") {
            fs::remove_file(entry.path())?;
        }
    }
    let plots = plots::draw_all(&rows, &headlines, copy.as_ref(), out)?;
    let report = tables::Report {
        info: &results.info,
        gpu_skipped: &results.gpu_skipped,
        copy: copy.as_ref(),
        rows: &rows,
        headlines: &headlines,
        plots: &plots,
        criterion: criterion_sentence(&criterion_dir(results_dir), out),
        records: records_sentence(results_dir, out, results.from_report),
    };
    let path = out.join(SUMMARY);
    fs::write(&path, tables::summary(&report))?;
    fs::write(out.join(RESULTS_CSV), csv(&rows))?;
    fs::write(out.join(RESULTS_JSON), json(&results, copy.as_ref(), &rows, &headlines)?)?;
    Ok(Summary { path, headline: tables::status_lines(&report) + &tables::headline(&report) })
}

/// `target` relative to the folder `from` where they are close (one inside the other, or
/// siblings), so that a link survives copying both; None where only a machine's absolute path
/// would do, which a report never shows.
fn relative(target: &Path, from: &Path) -> Option<PathBuf> {
    let normal = |p: &Path| -> Option<Vec<std::ffi::OsString>> {
        let mut parts: Vec<std::ffi::OsString> = Vec::new();
        for c in std::path::absolute(p).ok()?.components() {
            match c {
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir => {
                    parts.pop();
                }
                other => parts.push(other.as_os_str().to_os_string()),
            }
        }
        Some(parts)
    };
    let (target, from) = (normal(target)?, normal(from)?);
    let common = target.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let ups = from.len() - common;
    // Past the root alone, or up more than one level, the two are not kept together.
    if common <= 1 || ups > 1 {
        return None;
    }
    let mut path = PathBuf::new();
    for _ in 0..ups {
        path.push("..");
    }
    for part in &target[common..] {
        path.push(part);
    }
    Some(if path.as_os_str().is_empty() { PathBuf::from(".") } else { path })
}

/// Where the records and the benches' logs are, as a sentence with a relative link.
fn records_sentence(results: &Path, out: &Path, from_report: bool) -> String {
    match relative(results, out) {
        Some(p) if p == Path::new(".") && from_report => format!(
            "This report was written again from the rows of its own [{RESULTS_JSON}]({RESULTS_JSON}) (the \
             benches' logs are not kept with it)."
        ),
        Some(p) if p == Path::new(".") => "Records and the benches' logs: in this folder.".into(),
        Some(p) => format!("Records and the benches' logs: [{}]({}).", p.display(), p.display()),
        None => format!(
            "Records and the benches' logs: the run's results folder (`{}`), not kept with this report.",
            results.file_name().map_or("?".into(), |n| n.to_string_lossy())
        ),
    }
}

/// Where criterion's output is, as a sentence with a link (relative where the report and
/// criterion's folder are kept together, as they are by default, so it survives a copy).
fn criterion_sentence(criterion: &Path, out: &Path) -> String {
    let link = |target: &str| {
        relative(&criterion.join(target), out).map(|p| {
            let shown = p.display().to_string();
            format!("[{shown}]({shown})")
        })
    };
    if criterion.join("report/index.html").exists() {
        match link("report/index.html") {
            Some(link) => format!("Criterion's HTML reports: {link}."),
            None => {
                "Criterion's HTML reports: beside the run's results folder, not kept with this report.".into()
            }
        }
    } else if criterion.is_dir() {
        match link("") {
            Some(link) => format!(
                "Criterion's statistics: {link} (no HTML reports: the benches run criterion without plots)."
            ),
            None => {
                "Criterion's statistics: beside the run's results folder, not kept with this report.".into()
            }
        }
    } else {
        "Criterion's statistics: not kept with this report.".into()
    }
}

/// The columns of results.csv: the record's fields, then the derived ones. A test checks that
/// they are exactly the JSON rows' fields.
const COLUMNS: [&str; 20] = [
    "operation",
    "input",
    "kernel",
    "kind",
    "precision",
    "time_ms",
    "runs",
    "flops",
    "min_bytes",
    "error",
    "notes",
    "gflops",
    "bytes",
    "gbps",
    "percent_of_copy",
    "iterations",
    "vendor_kernel",
    "vs_vendor",
    "vs_cpu_serial",
    "vs_cpu_rayon",
];

/// results.csv: one line per row. Cells are written from each row's JSON value, so the CSV
/// and the JSON hold the same numbers, digit for digit.
fn csv(rows: &[Row]) -> String {
    let mut out = COLUMNS.join(",") + "\n";
    for row in rows {
        let value = serde_json::to_value(row).expect("rows serialise");
        let cells: Vec<String> = COLUMNS
            .iter()
            .map(|c| match &value[c] {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => csv_field(s),
                other => other.to_string(),
            })
            .collect();
        out += &(cells.join(",") + "\n");
    }
    out
}

/// Quotes a field that holds a comma, a quote or a line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// results.json: the run, the rows and the headline figures.
fn json(results: &Results, copy: Option<&Copy>, rows: &[Row], headlines: &[Headline]) -> Result<String> {
    #[derive(Serialize)]
    struct Document<'a> {
        commit: &'a Option<String>,
        date: &'a Option<String>,
        mode: &'a Option<String>,
        failed: &'a [String],
        gpu_skipped: &'a [String],
        device: Option<&'a str>,
        copy_gbps: Option<f64>,
        rows: &'a [Row],
        headline: &'a [Headline],
    }
    let document = Document {
        commit: &results.info.commit,
        date: &results.info.date,
        mode: &results.info.mode,
        failed: &results.info.failed,
        gpu_skipped: &results.gpu_skipped,
        device: copy.map(|c| c.device.as_str()),
        copy_gbps: copy.map(|c| c.gbps),
        rows,
        headline: headlines,
    };
    Ok(serde_json::to_string_pretty(&document)? + "\n")
}
