//! `summary.md`: the header (device, copy bandwidth, commit, date), a contents list, the terms,
//! the headline of each operation and precision, then per operation its inputs and, f64 then
//! f32, its headline, plots, kernel table and a table per input.

use std::fmt::Write;

use super::plots::{Plot, peak_tflops, vendor_library, vendor_name};
use super::rows::{
    BEST_OF_OURS, Copy, Family, Headline, MEMORY_BOUND, REGULAR_INPUTS, ROOFLINE_SHARE, Row, baselines,
    bytes, count, csr_bytes, distinct, fastest_of_ours, input_label, is_solver, operation_title, operations,
    ordered_inputs, precisions, size_of_input,
};
use super::svg::axis_label;
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
    /// Where the records and logs are, as a Markdown sentence (relative paths only).
    pub records: String,
}

/// The whole `summary.md`.
pub fn summary(report: &Report) -> String {
    let mut md = String::from("# Benchmark report\n\n");
    md += &status_lines(report);
    md += &header(report);
    md += &contents(report);
    md += &terms(report);
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
        let bench = failed.split_whitespace().next().unwrap_or(failed);
        let _ = writeln!(
            md,
            "> **Failed**: {failed}: its log is `{bench}.log` in the results folder; wrong results are never \
             recorded.\n"
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
    md + "\n"
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

/// The anchor a Markdown viewer (GitHub's rules) gives a heading: lower case, punctuation
/// dropped, spaces to hyphens.
pub fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The heading of an operation's section at one precision.
fn case_heading(operation: &str, precision: &str) -> String {
    format!("{operation}, {precision}")
}

fn contents(report: &Report) -> String {
    let mut md = String::from("## Contents\n\n");
    md += "- [How to read this report](#how-to-read-this-report)\n- [Headline](#headline)\n";
    for operation in operations(report.rows) {
        let title = operation_title(operation);
        let of_op: Vec<&Row> = report.rows.iter().filter(|r| r.record.operation == operation).collect();
        let cases: Vec<String> = precisions(&of_op)
            .iter()
            .map(|p| format!("[{p}](#{})", anchor(&case_heading(operation, p))))
            .collect();
        let _ = writeln!(md, "- [{title}](#{}): {}", anchor(&title), cases.join(", "));
    }
    md + "\n"
}

/// The terms of the tables and plots, before they are used.
fn terms(report: &Report) -> String {
    let ops = operations(report.rows);
    let has = |op: &str| ops.contains(&op);
    let mut md = String::from("## How to read this report\n\n");
    let vendors: Vec<String> = ops
        .iter()
        .filter_map(|op| {
            let of_op: Vec<&Row> = report.rows.iter().filter(|r| r.record.operation == *op).collect();
            let names = distinct(precisions(&of_op).iter().flat_map(|p| baselines(report.rows, op, p)));
            let what = match names.as_slice() {
                [] => return None,
                ["cusparse-alg1", "cusparse-alg2"] => {
                    "the faster of cuSPARSE's CSR algorithms 1 and 2, not `cusparse-bsr`, which works on \
                     another format"
                        .to_string()
                }
                ["cusparse-spsv"] if *op == "symgs" => {
                    "the sweep built from cuSPARSE's triangular solves".into()
                }
                ["cusparse-spsv"] if *op == "pcg" => "PCG with that cuSPARSE-based sweep".into(),
                ["cusolver"] => "cuSOLVER's getrf + getrs".into(),
                many => many.iter().map(|k| vendor_name(k)).collect::<Vec<_>>().join(", "),
            };
            Some(format!("{op}: {what}"))
        })
        .collect();
    md += "- **vs vendor**: the vendor library's time / this time on the same input; above 1 is faster \
           than the vendor. Against the fastest vendor kernel of each input";
    if !vendors.is_empty() {
        let _ = write!(md, " ({})", vendors.join("; "));
    }
    md += ".";
    if report.rows.iter().any(|r| r.record.kernel == "cublas-tf32") {
        md += " The TF32 kernel against cuBLAS in its TF32 mode.";
    }
    md += "\n";
    md += "- **default kernel**: the kernel the library uses or points to for the operation; the \
           headline is about it. **best of ours**: on each input, the fastest of our GPU kernels \
           (which kernel that is varies by input).\n";
    if report.rows.iter().any(|r| r.record.is_reference()) {
        md += "- **reference rows**: measured for scale, not as competitors (one SpMV of the matrix beside \
               the SymGS sweeps, plain CG beside PCG). Plots draw them as red dashed ticks; they never \
               count as ours, as the best of ours, or in a headline.\n";
    }
    md += "- **GFLOPS**, **TFLOPS**: useful floating-point operations / time.";
    if ops.iter().any(|op| MEMORY_BOUND.contains(op)) {
        md += " **GB/s** (memory-bound operations): the bytes a run must move at least / time";
        if has("spmv") {
            md += "; for SpMV, the input's CSR minimum, nnz (s + 4) + (rows + 1) 4 + (rows + cols) s bytes \
                   for values of s bytes, counted the same for every format";
        }
        let _ = write!(
            md,
            ". **% of copy**: that against the copy bandwidth above; at least {:.0}% counts as at the \
             roofline.",
            100.0 * ROOFLINE_SHARE
        );
    }
    md += "\n";
    if let Some(solved) = report.rows.iter().find(|r| r.iterations.is_some()) {
        let to = solved
            .record
            .note("tolerance")
            .map_or("convergence".to_string(), |t| format!("a relative residual of {t}"));
        let _ = writeln!(
            md,
            "- **time to solution** ({}): from x = 0 to {to}, and the **iterations** it takes.",
            solved.record.operation
        );
    }
    md += "- **vs cpu-serial**, **vs cpu-rayon**: the CPU reference's time / this time. Times are medians of \
           the runs; every row was verified against the CPU reference before it was recorded.\n\n";
    let _ = write!(
        md,
        "Every figure: [{RESULTS_CSV}]({RESULTS_CSV}), [{RESULTS_JSON}]({RESULTS_JSON}). {} {}\n\n",
        report.records, report.criterion
    );
    md
}

/// The headline section: a sentence per operation and precision.
pub fn headline(report: &Report) -> String {
    let mut md = String::from("## Headline\n\n");
    if report.headlines.is_empty() {
        md += "No results were recorded.\n\n";
    }
    let mut regular_defined = false;
    for h in report.headlines {
        let heading = case_heading(&h.operation, &h.precision);
        let _ = writeln!(
            md,
            "- **{heading}** ([details](#{})): {}",
            anchor(&heading),
            headline_sentence(report, h, &mut regular_defined)
        );
    }
    md + "\n"
}

/// What the default kernel does: against the vendor, the roofline, the best of ours, the
/// reference and the device's peak. "Regular inputs" is explained the first time.
pub fn headline_sentence(report: &Report, h: &Headline, regular_defined: &mut bool) -> String {
    let Some(k) = h.headline_summary() else {
        let rayon =
            h.rayon_vs_serial.map(|r| format!("; cpu-rayon is {} cpu-serial (geometric mean)", ratio(r)));
        return format!("No GPU results{}.", rayon.unwrap_or_default());
    };
    let case: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.record.operation == h.operation && r.record.precision == h.precision)
        .collect();
    let mut parts = Vec::new();
    let vendors = baselines(report.rows, &h.operation, &h.precision);
    let vendor = match vendors.as_slice() {
        [] => String::new(),
        [one] => vendor_name(one),
        many => format!("{} (the faster of {})", vendor_library(many[0]), many.join(" and ")),
    };
    let role = if h.default_kernel.is_some() {
        "default kernel"
    } else {
        "our best by geometric mean; the default kernel did not run"
    };
    let mut first = format!("**{}** ({role})", k.kernel);
    match &k.vs_vendor {
        Some(s) => {
            let over = if s.inputs == k.inputs {
                format!("{} input{}", s.inputs, if s.inputs == 1 { "" } else { "s" })
            } else {
                format!("{} of {} inputs; the others have no vendor row", s.inputs, k.inputs)
            };
            if s.inputs == 1 {
                let _ = write!(first, " is **{}** {vendor}", ratio(s.geomean));
            } else {
                let _ = write!(
                    first,
                    " is **{}** {vendor}, geometric mean over {over}; lowest {} on {}, highest {}",
                    ratio(s.geomean),
                    ratio(s.min),
                    input_label(report.rows, &s.min_input),
                    ratio(s.max)
                );
            }
        }
        None => first += ": no vendor rows to compare with",
    }
    parts.push(first);
    // Solvers: the time to solution itself, on a single input.
    let default_rows: Vec<&&Row> = case.iter().filter(|r| r.record.kernel == k.kernel).collect();
    if let [row] = default_rows.as_slice()
        && let Some(iterations) = row.iterations
    {
        parts.push(format!("time to solution {} ms in {iterations} iterations", number(row.record.time_ms)));
    }
    let share = 100.0 * ROOFLINE_SHARE;
    let highest_share = default_rows
        .iter()
        .filter_map(|r| r.percent_of_copy)
        .fold(None, |m: Option<f64>, p| Some(m.map_or(p, |m| m.max(p))));
    match (k.regular_at_roofline, k.at_roofline) {
        // Nowhere near the roofline (a latency-bound sweep): how far, not a count of zeros.
        (_, Some(0)) => {
            if let Some(highest) = highest_share {
                parts.push(format!("at most {} of the copy bandwidth", percent(highest)));
            }
        }
        (Some((n, regular)), Some(all)) if regular > 0 => {
            let definition = if *regular_defined {
                String::new()
            } else {
                *regular_defined = true;
                format!(
                    " (regular: generated matrices whose rows have about the same number of nonzeros, near \
                     the diagonal: {})",
                    REGULAR_INPUTS.join(", ")
                )
            };
            parts.push(format!(
                "at least {share:.0}% of the copy bandwidth on {n} of {regular} regular inputs{definition} and \
                 {all} of {} in all",
                k.inputs
            ));
        }
        (_, Some(all)) => {
            parts.push(format!("at least {share:.0}% of the copy bandwidth on {all} of {} inputs", k.inputs))
        }
        _ => {}
    }
    // Dense: the rate at the largest n, against the vendor and the peak.
    let largest = default_rows
        .iter()
        .filter_map(|r| Some((size_of_input(&r.record.input)?, **r)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((n, row)) = largest {
        let mut text = format!("at n = {n:.0}: {} TFLOPS", number(row.gflops / 1e3));
        let vendor_row = row
            .vendor_kernel
            .as_ref()
            .and_then(|v| case.iter().find(|r| &r.record.kernel == v && r.record.input == row.record.input));
        if let Some(v) = vendor_row {
            let _ =
                write!(text, " against {}'s {}", vendor_library(&v.record.kernel), number(v.gflops / 1e3));
        }
        if let Some((peak, what)) = report.copy.and_then(|c| peak_tflops(&c.device, &h.precision)) {
            let share = percent(100.0 * row.gflops / 1e3 / peak);
            let _ = write!(text, ", {share} of the {what} ({} TFLOPS)", axis_label(peak));
        }
        parts.push(text);
    }
    // The best of ours, where it is not the headline kernel on every input.
    if let Some(best) = h.best()
        && let Some(s) = &best.vs_vendor
        && k.vs_vendor.as_ref().is_none_or(|d| (s.geomean / d.geomean - 1.0).abs() > 1e-9)
    {
        // Named where it is the same kernel on every input.
        let fastest = distinct(fastest_of_ours(&case).iter().map(|r| r.record.kernel.as_str()));
        let name = match fastest.as_slice() {
            [one] => format!(", {one},"),
            _ => String::new(),
        };
        parts.push(format!("the best of ours{name} is {} the vendor (geometric mean)", ratio(s.geomean)));
    }
    for reference in &h.references {
        if let Some(r) = reference.default_over_reference {
            parts.push(format!(
                "for scale, {} takes {} the time of `{}` (a reference row)",
                k.kernel,
                ratio(r),
                reference.kernel
            ));
        }
    }
    parts.join("; ") + "."
}

fn operation_section(report: &Report, operation: &str) -> String {
    let title = operation_title(operation);
    let mut md = format!("## {title}\n\n");
    let rows: Vec<&Row> = report.rows.iter().filter(|r| r.record.operation == operation).collect();
    md += &inputs_table(report, &rows);
    let mut regular_defined = true;
    for precision in precisions(&rows) {
        let _ = writeln!(md, "### {}\n", case_heading(operation, precision));
        let case: Vec<&Row> = rows.iter().copied().filter(|r| r.record.precision == precision).collect();
        let h = report.headlines.iter().find(|h| h.operation == operation && h.precision == precision);
        if let Some(h) = h {
            let _ = writeln!(md, "{}\n", headline_sentence(report, h, &mut regular_defined));
        }
        for plot in report.plots.iter().filter(|p| p.operation == operation && p.precision == precision) {
            let _ = writeln!(md, "![{}]({})\n", plot.title, plot.file);
            for note in &plot.notes {
                let _ = writeln!(md, "{note}\n");
            }
        }
        if let Some(h) = h {
            md += &kernel_table(h, &case);
        }
        let memory_bound = MEMORY_BOUND.contains(&operation);
        for input in ordered_inputs(&case) {
            let mut of_input: Vec<&Row> = case.iter().copied().filter(|r| r.record.input == input).collect();
            of_input.sort_by(|a, b| a.record.time_ms.total_cmp(&b.record.time_ms));
            let _ = writeln!(md, "#### {}, {precision}\n", input_label(report.rows, input));
            if !of_input.iter().any(|r| r.vendor_kernel.is_some())
                && case.iter().any(|r| r.record.kind == "vendor")
            {
                md += "No vendor row for this input.\n\n";
            }
            md += &input_table(&of_input, memory_bound, h.and_then(|h| h.default_kernel.as_deref()));
            md += "\n";
        }
    }
    md
}

/// The inputs of an operation with their sizes, where the records have them.
fn inputs_table(report: &Report, rows: &[&Row]) -> String {
    let inputs = ordered_inputs(rows);
    let sized: Vec<(&str, &Row)> = inputs
        .iter()
        .filter_map(|i| {
            Some((*i, *rows.iter().find(|r| r.record.input == *i && r.record.note("nnz").is_some())?))
        })
        .collect();
    if sized.is_empty() {
        return String::new();
    }
    let with_bytes = rows.first().is_some_and(|r| r.record.operation == "spmv");
    let l2 = report.copy.and_then(|c| c.l2_bytes);
    let mut columns = vec!["input", "family", "rows", "nnz", "nnz per row"];
    if with_bytes {
        columns.push("CSR bytes, f64");
    }
    let mut table = Table::new(&columns);
    for (input, row) in sized {
        let (n_rows, nnz) = (row.record.note_as::<f64>("rows"), row.record.note_as::<f64>("nnz"));
        let mut cells = vec![
            input.to_string(),
            Family::of(input).label().to_string(),
            n_rows.map_or(DASH.into(), count),
            nnz.map_or(DASH.into(), count),
            n_rows.zip(nnz).map_or(DASH.into(), |(r, n)| number(n / r)),
        ];
        if with_bytes {
            let b = csr_bytes(&rgla::bench::Record { precision: "f64".into(), ..row.record.clone() });
            cells.push(b.map_or(DASH.into(), |b| {
                let fits = l2.is_some_and(|l2| b < l2);
                format!("{}{}", bytes(b), if fits { " (fits in L2)" } else { "" })
            }));
        }
        table.push(cells);
    }
    format!("Inputs:\n\n{}\n", table.render())
}

/// Our kernels over the inputs, the best of ours first: against the vendor, the roofline and
/// the CPU. Reference rows are not among them.
fn kernel_table(h: &Headline, case: &[&Row]) -> String {
    if h.kernels.iter().all(|k| k.kernel == BEST_OF_OURS) || h.kernels.is_empty() {
        return String::new();
    }
    let memory_bound = MEMORY_BOUND.contains(&h.operation.as_str());
    let single = h.kernels.iter().all(|k| k.inputs <= 1);
    let roofline = format!("≥{:.0}% of copy", 100.0 * ROOFLINE_SHARE);
    let mut columns = vec!["our kernel", "inputs", "vs vendor (geomean)", "lowest (input)", "highest"];
    if single {
        columns = vec!["our kernel", "vs vendor"];
    }
    if memory_bound {
        columns.push(&roofline);
    }
    if single {
        columns.extend(["vs cpu-serial", "vs cpu-rayon"]);
    } else {
        columns.extend(["vs cpu-serial (geomean)", "vs cpu-rayon (geomean)"]);
    }
    let mut table = Table::new(&columns);
    for k in &h.kernels {
        let name = if k.kernel == BEST_OF_OURS {
            format!("*{BEST_OF_OURS}*")
        } else if Some(&k.kernel) == h.default_kernel.as_ref() {
            format!("**{}** (default)", k.kernel)
        } else {
            k.kernel.clone()
        };
        let vendor = k.vs_vendor.as_ref();
        let mut cells = vec![name];
        if single {
            cells.push(vendor.map_or(DASH.into(), |s| ratio(s.geomean)));
        } else {
            cells.extend([
                k.inputs.to_string(),
                vendor.map_or(DASH.into(), |s| ratio(s.geomean)),
                vendor.map_or(DASH.into(), |s| format!("{} ({})", ratio(s.min), s.min_input)),
                vendor.map_or(DASH.into(), |s| ratio(s.max)),
            ]);
        }
        if memory_bound {
            cells.push(k.at_roofline.map_or(DASH.into(), |n| format!("{n} of {}", k.inputs)));
        }
        cells.push(k.vs_cpu_serial.map_or(DASH.into(), ratio));
        cells.push(k.vs_cpu_rayon.map_or(DASH.into(), ratio));
        table.push(cells);
    }
    let references =
        distinct(case.iter().filter(|r| r.record.is_reference()).map(|r| r.record.kernel.as_str()));
    let mut md = table.render();
    if !references.is_empty() {
        let _ = writeln!(
            md,
            "\nNot in this table, measured for scale: {} (reference rows, in the tables per input).",
            references.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        );
    }
    md + "\n"
}

/// The notes of a row without the size words the heading already shows.
fn own_notes(row: &Row) -> String {
    row.record
        .notes
        .split_whitespace()
        .filter(|w| !["rows=", "cols=", "nnz=", "iterations=", "tolerance="].iter().any(|k| w.starts_with(k)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One input's table, fastest first. Columns without a figure are left out.
pub fn input_table(rows: &[&Row], memory_bound: bool, default: Option<&str>) -> String {
    let solver = is_solver(rows);
    let dense = rows.iter().all(|r| Family::of(&r.record.input).is_dense());
    let best = fastest_of_ours(rows).first().map(|r| r.record.kernel.clone());
    let notes: Vec<String> = rows.iter().map(|r| own_notes(r)).collect();
    let with_notes =
        notes.iter().any(|n| !n.is_empty()) && distinct(notes.iter().map(String::as_str)).len() > 1;
    let mut columns = vec!["kernel", if solver { "time to solution (ms)" } else { "time (ms)" }];
    if solver {
        columns.extend(["iterations", "ms per iteration"]);
    }
    columns.push(if dense { "TFLOPS" } else { "GFLOPS" });
    if memory_bound {
        columns.extend(["GB/s", "% of copy"]);
    }
    columns.extend(["vs vendor", "vs cpu-serial", "vs cpu-rayon"]);
    if with_notes {
        columns.push("notes");
    }
    let mut table = Table::new(&columns);
    for (r, note) in rows.iter().zip(&notes) {
        let kernel = &r.record.kernel;
        let mut marks = Vec::new();
        match r.record.kind.as_str() {
            "vendor" => marks.push("vendor"),
            "reference" => marks.push("reference, for scale"),
            _ => {}
        }
        if Some(kernel.as_str()) == default {
            marks.push("default");
        }
        if Some(kernel) == best.as_ref() {
            marks.push(BEST_OF_OURS);
        }
        let name = if marks.is_empty() { kernel.clone() } else { format!("{kernel} ({})", marks.join(", ")) };
        let mut cells = vec![name, number(r.record.time_ms)];
        if solver {
            cells.push(r.iterations.map_or(DASH.into(), |i| i.to_string()));
            cells.push(
                r.iterations.filter(|i| *i > 0).map_or(DASH.into(), |i| number(r.record.time_ms / i as f64)),
            );
        }
        let rate = if dense { r.gflops / 1e3 } else { r.gflops };
        cells.push(if r.gflops > 0.0 { number(rate) } else { DASH.into() });
        if memory_bound {
            cells.push(r.gbps.map_or(DASH.into(), number));
            cells.push(r.percent_of_copy.map_or(DASH.into(), percent));
        }
        for value in [r.vs_vendor, r.vs_cpu_serial, r.vs_cpu_rayon] {
            cells.push(value.map_or(DASH.into(), ratio));
        }
        if with_notes {
            cells.push(note.replace('|', "\\|"));
        }
        table.push(cells);
    }
    table.render()
}

/// A Markdown table that leaves out the columns with no figure in any row.
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(columns: &[&str]) -> Table {
        Table { columns: columns.iter().map(|c| c.to_string()).collect(), rows: Vec::new() }
    }

    fn push(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn render(&self) -> String {
        let keep: Vec<usize> = (0..self.columns.len())
            .filter(|&c| {
                c == 0 || self.rows.iter().any(|r| r.get(c).is_some_and(|v| v != DASH && !v.is_empty()))
            })
            .collect();
        let pick = |cells: &[String]| {
            keep.iter().map(|&c| cells.get(c).cloned().unwrap_or_default()).collect::<Vec<_>>()
        };
        // Figures to the right, words to the left.
        let numeric = |c: usize| {
            self.rows
                .iter()
                .filter_map(|r| r.get(c))
                .filter(|v| *v != DASH && !v.is_empty())
                .all(|v| v.starts_with(|ch: char| ch.is_ascii_digit() || ch == '≥'))
        };
        let aligns: Vec<String> =
            keep.iter().map(|&c| if c == 0 || !numeric(c) { "---" } else { "---:" }.to_string()).collect();
        let mut md = format!("| {} |\n| {} |\n", pick(&self.columns).join(" | "), aligns.join(" | "));
        for row in &self.rows {
            md += &format!("| {} |\n", pick(row).join(" | "));
        }
        md
    }
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
