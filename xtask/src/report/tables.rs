//! `summary.md`: the header (device, copy bandwidth, commit, date), the headline of each
//! operation, its plots, and a table per input and precision.

use std::fmt::Write;

use super::plots::Plot;
use super::rows::{
    BEST_OF_OURS, Copy, Headline, KernelSummary, MEMORY_BOUND, ROOFLINE_SHARE, Row, baselines, distinct,
    operations,
};
use super::{RESULTS_CSV, RESULTS_JSON, RunInfo};

/// Everything the summary shows.
pub struct Report<'a> {
    pub info: &'a RunInfo,
    pub gpu_skipped: &'a [String],
    pub copy: Option<&'a Copy>,
    pub rows: &'a [Row],
    pub headlines: &'a [Headline],
    pub plots: &'a [Plot],
    /// Where criterion's output is, as a Markdown sentence.
    pub criterion: String,
    /// Where the results folder (records and logs) is.
    pub results_dir: String,
}

/// The whole `summary.md`.
pub fn summary(report: &Report) -> String {
    let mut md = String::from("# Benchmark report\n\n");
    md += &status_lines(report);
    md += &header(report);
    md += &headline(report);
    for operation in operations(report.rows) {
        md += &operation_section(report, operation);
    }
    md
}

/// The lines a reader must not miss: GPU benchmarks skipped, benchmarks that failed.
pub fn status_lines(report: &Report) -> String {
    let mut md = String::new();
    for reason in report.gpu_skipped {
        let _ = writeln!(md, "> **GPU benchmarks skipped**: {reason}. Only the CPU rows were measured.\n");
    }
    for failed in &report.info.failed {
        let _ = writeln!(
            md,
            "> **Failed**: {failed}: its log is in {}; wrong results are never recorded.\n",
            report.results_dir
        );
    }
    md
}

fn header(report: &Report) -> String {
    let mut table = vec![];
    match report.copy {
        Some(copy) => {
            table.extend(device_rows(&copy.device));
            let best_of = if copy.measurements > 1 {
                format!(", best of {}", copy.measurements)
            } else {
                String::new()
            };
            table.push((
                "Copy bandwidth",
                format!(
                    "{} GB/s device-to-device (bytes read + written, 1 GiB buffers{best_of})",
                    number(copy.gbps)
                ),
            ));
        }
        None if !report.gpu_skipped.is_empty() => {
            table.push(("Device", "none: GPU benchmarks skipped".into()))
        }
        None => table.push(("Device", "unknown: no copy-bandwidth record in the results".into())),
    }
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "not recorded".into());
    table.push(("Commit", or_unknown(&report.info.commit)));
    table.push(("Date", or_unknown(&report.info.date)));
    let mode = match report.info.mode.as_deref() {
        Some("quick") => "quick (`--quick`: smaller inputs, fewer runs)".to_string(),
        other => or_unknown(&other.map(String::from)),
    };
    table.push(("Run", mode));

    let mut md = String::from("| | |\n| --- | --- |\n");
    for (key, value) in table {
        let _ = writeln!(md, "| {key} | {value} |");
    }
    let _ = write!(
        md,
        "\nEvery row was verified against the CPU reference before it was recorded. GFLOPS: useful \
         floating-point operations / time. GB/s: the bytes a run must move at least / time, and its \
         percentage of the copy bandwidth (memory-bound operations). vs vendor: the vendor library's \
         time / this time (above 1: faster than the vendor; SpMV compares with the faster of cuSPARSE's \
         CSR algorithms 1 and 2). vs cpu-serial, vs cpu-rayon: the CPU reference's time / this time. \
         Times are medians of the runs.\n\n\
         Every figure: [{RESULTS_CSV}]({RESULTS_CSV}), [{RESULTS_JSON}]({RESULTS_JSON}). Records and \
         the benches' logs: {}. {}\n\n",
        report.results_dir, report.criterion
    );
    md
}

/// The device's description as `rgla::gpu::DeviceProps` prints it, split into table rows:
/// "NAME (sm_90, 132 SMs, 79 GiB, L2 50 MiB, 1980 MHz, driver CUDA 13.0)".
pub fn device_rows(notes: &str) -> Vec<(&'static str, String)> {
    let Some((name, details)) = notes.strip_suffix(')').and_then(|n| n.rsplit_once(" (")) else {
        return vec![("Device", notes.to_string())];
    };
    let details: Vec<&str> = details.split(", ").collect();
    let find = |test: &dyn Fn(&str) -> bool| details.iter().find(|d| test(d)).map(|d| d.to_string());
    let arch = find(&|d| d.starts_with("sm_"));
    let clock = find(&|d| d.ends_with(" MHz"));
    let sms = find(&|d| d.ends_with(" SMs")).map(|d| d.trim_end_matches(" SMs").to_string());
    let memory = find(&|d| d.ends_with(" GiB") && !d.starts_with("L2"));
    let l2 = find(&|d| d.starts_with("L2 "));
    let driver = find(&|d| d.starts_with("driver ")).map(|d| d.trim_start_matches("driver ").to_string());
    let joined = |parts: &[Option<String>]| parts.iter().flatten().cloned().collect::<Vec<_>>().join(", ");
    let mut rows = vec![("Device", format!("{name} ({})", joined(&[arch, clock])))];
    rows.extend(sms.map(|s| ("SMs", s)));
    rows.extend(
        memory.map(|m| ("Memory", format!("{m}{}", l2.map(|l| format!(", {l}")).unwrap_or_default()))),
    );
    rows.extend(driver.map(|d| ("Driver", d)));
    rows
}

/// The headline section: a sentence and a kernel table per operation and precision.
pub fn headline(report: &Report) -> String {
    let mut md = String::from("## Headline\n\n");
    if report.headlines.is_empty() {
        md += "No results were recorded.\n\n";
    }
    for h in report.headlines {
        let _ = writeln!(md, "### {}, {}\n\n{}\n", h.operation, h.precision, headline_sentence(report, h));
        let ours: Vec<&KernelSummary> = h.kernels.iter().filter(|k| k.kernel != BEST_OF_OURS).collect();
        if ours.is_empty() {
            continue;
        }
        let memory_bound = MEMORY_BOUND.contains(&h.operation.as_str());
        let roofline = format!("≥{:.0}% of copy", 100.0 * ROOFLINE_SHARE);
        let mut columns = vec!["kernel", "inputs", "vs vendor (geomean)", "lowest (input)", "highest"];
        if memory_bound {
            columns.push(&roofline);
        }
        columns.push("vs cpu-rayon (geomean)");
        md += &table_head(&columns);
        for k in &h.kernels {
            let name = if k.kernel == BEST_OF_OURS { format!("*{BEST_OF_OURS}*") } else { k.kernel.clone() };
            let vendor = k.vs_vendor.as_ref();
            let mut cells = vec![
                name,
                k.inputs.to_string(),
                vendor.map_or(DASH.into(), |s| ratio(s.geomean)),
                vendor.map_or(DASH.into(), |s| format!("{} ({})", ratio(s.min), s.min_input)),
                vendor.map_or(DASH.into(), |s| ratio(s.max)),
            ];
            if memory_bound {
                cells.push(k.at_roofline.map_or(DASH.into(), |n| format!("{n} of {}", k.inputs)));
            }
            cells.push(k.vs_cpu_rayon.map_or(DASH.into(), ratio));
            md += &table_row(&cells);
        }
        md += "\n";
    }
    md
}

fn headline_sentence(report: &Report, h: &Headline) -> String {
    let summary = h.headline_kernel.as_ref().and_then(|name| h.kernels.iter().find(|k| &k.kernel == name));
    let Some(k) = summary else {
        let rayon =
            h.rayon_vs_serial.map(|r| format!("; cpu-rayon is {} cpu-serial (geometric mean)", ratio(r)));
        return format!("No GPU results{}.", rayon.unwrap_or_default());
    };
    let mut sentence = format!("**{}**: ", k.kernel);
    match &k.vs_vendor {
        Some(s) => {
            let vendors = baselines(report.rows, &h.operation, &h.precision);
            let over = if s.inputs == k.inputs {
                format!("{} inputs", s.inputs)
            } else {
                format!("{} of {} inputs; the others have no vendor row", s.inputs, k.inputs)
            };
            let vendor = match vendors.as_slice() {
                [one] => one.to_string(),
                many => format!("the faster of {}", many.join(" and ")),
            };
            let _ = write!(
                sentence,
                "{} {vendor}, geometric mean over {over}; lowest {} on {}, highest {}",
                ratio(s.geomean),
                ratio(s.min),
                s.min_input,
                ratio(s.max)
            );
        }
        None => sentence += "no vendor rows to compare with",
    }
    let share = 100.0 * ROOFLINE_SHARE;
    match (k.regular_at_roofline, k.at_roofline) {
        (Some((n, regular)), Some(all)) if regular > 0 => {
            let _ = write!(
                sentence,
                "; at least {share:.0}% of the copy bandwidth on {n} of {regular} regular inputs ({all} of {} in all)",
                k.inputs
            );
        }
        (_, Some(all)) => {
            let _ = write!(
                sentence,
                "; at least {share:.0}% of the copy bandwidth on {all} of {} inputs",
                k.inputs
            );
        }
        _ => {}
    }
    sentence + "."
}

fn operation_section(report: &Report, operation: &str) -> String {
    let mut md = format!("## {operation}\n\n");
    for plot in report.plots.iter().filter(|p| p.operation == operation) {
        let _ = writeln!(md, "![{}]({})\n", plot.title, plot.file);
    }
    let memory_bound = MEMORY_BOUND.contains(&operation);
    let rows: Vec<&Row> = report.rows.iter().filter(|r| r.record.operation == operation).collect();
    for input in distinct(rows.iter().map(|r| r.record.input.as_str())) {
        for precision in distinct(rows.iter().map(|r| r.record.precision.as_str())) {
            let mut case: Vec<&Row> = rows
                .iter()
                .copied()
                .filter(|r| r.record.input == input && r.record.precision == precision)
                .collect();
            if case.is_empty() {
                continue;
            }
            case.sort_by(|a, b| a.record.time_ms.total_cmp(&b.record.time_ms));
            let _ = writeln!(md, "### {input}, {precision}\n");
            if !case[0].record.notes.is_empty() {
                let _ = writeln!(md, "{}\n", case[0].record.notes);
            }
            md += &input_table(&case, memory_bound);
            md += "\n";
        }
    }
    md
}

/// One input's table, fastest first.
pub fn input_table(rows: &[&Row], memory_bound: bool) -> String {
    let mut columns = vec!["kernel", "time (ms)", "GFLOPS"];
    if memory_bound {
        columns.extend(["GB/s", "% of copy"]);
    }
    columns.extend(["vs vendor", "vs cpu-serial", "vs cpu-rayon"]);
    let mut md = table_head(&columns);
    for r in rows {
        let kernel = match r.record.kind.as_str() {
            "vendor" => format!("{} (vendor)", r.record.kernel),
            _ => r.record.kernel.clone(),
        };
        let mut cells = vec![kernel, number(r.record.time_ms), number(r.gflops)];
        if memory_bound {
            cells.push(r.gbps.map_or(DASH.into(), number));
            cells.push(r.percent_of_copy.map_or(DASH.into(), percent));
        }
        for value in [r.vs_vendor, r.vs_cpu_serial, r.vs_cpu_rayon] {
            cells.push(value.map_or(DASH.into(), ratio));
        }
        md += &table_row(&cells);
    }
    md
}

fn table_head(columns: &[&str]) -> String {
    let aligns: Vec<&str> =
        columns.iter().enumerate().map(|(i, _)| if i == 0 { "---" } else { "---:" }).collect();
    format!("| {} |\n| {} |\n", columns.join(" | "), aligns.join(" | "))
}

fn table_row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// A missing figure.
pub const DASH: &str = "–";

/// Three significant digits, without an exponent: 0.602, 15.4, 184, 2980.
pub fn number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.decimals$}")
}

/// A ratio: 0.0412x, 0.93x, 1.18x, 12.1x, 305x.
pub fn ratio(x: f64) -> String {
    if (0.1..10.0).contains(&x) { format!("{x:.2}x") } else { format!("{}x", number(x)) }
}

/// A percentage: 0.3%, 92%.
pub fn percent(x: f64) -> String {
    if x < 10.0 { format!("{x:.1}%") } else { format!("{x:.0}%") }
}
