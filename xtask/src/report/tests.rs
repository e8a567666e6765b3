//! The report writer on fixed data: a subset of a real H100 run (`testdata/h100-spmv.jsonl`:
//! the copy record and three inputs, one of them without vendor rows), and small made-up
//! records whose figures can be checked by hand.
//!
//! What a reader must be able to trust: a reference row never becomes a headline or the best
//! of ours, every operation with vendor rows has its "are we faster?" plot, and summary.md
//! shows no path of the machine that wrote it.

use std::collections::BTreeSet;

use serde_json::Value;

use super::rows::{self, BEST_OF_OURS};
use super::tables::anchor;
use super::tables::{DASH, device_rows, number, percent, ratio};
use super::*;

const H100: &str = include_str!("testdata/h100-spmv.jsonl");
const NO_DRIVER: &str = "GPU benchmarks skipped: no CUDA driver: libcuda.so could not be loaded";

fn parse(jsonl: &str) -> Vec<Record> {
    jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[allow(clippy::too_many_arguments)]
fn record(
    operation: &str,
    input: &str,
    kernel: &str,
    kind: &str,
    time_ms: f64,
    flops: f64,
    min_bytes: f64,
) -> Record {
    Record {
        operation: operation.into(),
        input: input.into(),
        kernel: kernel.into(),
        kind: kind.into(),
        precision: "f64".into(),
        time_ms,
        runs: 10,
        flops,
        min_bytes,
        error: 0.0,
        notes: String::new(),
    }
}

/// A fresh folder under the system's temporary folder.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-report-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A results folder holding `records` as `<operation>.jsonl`, and `log` as a bench's log.
fn results_dir(name: &str, records: &[Record], log: Option<&str>) -> PathBuf {
    let dir = temp_dir(name).join("bench-results");
    fs::create_dir_all(&dir).unwrap();
    for r in records {
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(format!("{}.jsonl", r.operation)))
            .unwrap();
        std::io::Write::write_all(&mut file, (serde_json::to_string(r).unwrap() + "\n").as_bytes()).unwrap();
    }
    if let Some(log) = log {
        fs::write(dir.join("spmv_gpu.log"), log).unwrap();
    }
    dir
}

fn report_of(name: &str, records: &[Record], log: Option<&str>) -> (PathBuf, String) {
    let results = results_dir(name, records, log);
    let out = results.parent().unwrap().join("bench-report");
    let summary = write(&results, &out).unwrap();
    let md = fs::read_to_string(&summary.path).unwrap();
    (out, md)
}

/// The cells of a Markdown table's rows under `heading`, by first cell.
fn table_under(md: &str, heading: &str) -> Vec<Vec<String>> {
    table_with_header(md, heading).1
}

/// The header and the rows of the first Markdown table under `heading`.
fn table_with_header(md: &str, heading: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let section =
        md.split(&format!("\n{heading}\n")).nth(1).unwrap_or_else(|| panic!("no `{heading}` in\n{md}"));
    let cells = |l: &str| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect::<Vec<_>>();
    let lines: Vec<&str> =
        section.lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')).collect();
    (cells(lines[0]), lines[2..].iter().map(|l| cells(l)).collect())
}

/// A kernel's name in a table, without its marks ("csr-adaptive (default)").
fn kernel_of(cell: &str) -> &str {
    cell.split(" (").next().unwrap()
}

/// The heading of stencil27 160^3's table.
const STENCIL_F64: &str = "#### stencil27 160^3 (4.10 M rows, 109 M nnz), f64";

/// A CSV line's fields (RFC 4180 quoting).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[test]
fn vendor_ratio_is_against_the_faster_csr_algorithm() {
    let records = vec![
        record("copy", "1 GiB", "memcpy-dtod", "vendor", 1.0, 0.0, 2e9),
        record("spmv", "a", "cusparse-alg1", "vendor", 2.0, 1e6, 1e9),
        record("spmv", "a", "cusparse-alg2", "vendor", 1.0, 1e6, 1e9),
        // Faster, but on another format: not the baseline.
        record("spmv", "a", "cusparse-bsr", "vendor", 0.25, 1e6, 1e9),
        record("spmv", "a", "ours", "gpu", 0.5, 1e6, 1e9),
        record("spmv", "a", "cpu-serial", "cpu", 100.0, 1e6, 1e9),
        record("spmv", "a", "cpu-rayon", "cpu", 10.0, 1e6, 1e9),
    ];
    let copy = rows::copy_bandwidth(&records).unwrap();
    assert_eq!(copy.gbps, 2000.0);
    let rows = rows::derive(&records, Some(&copy));
    let ours = rows.iter().find(|r| r.record.kernel == "ours").unwrap();
    assert_eq!(ours.vendor_kernel.as_deref(), Some("cusparse-alg2"));
    assert_eq!(ours.vs_vendor, Some(2.0));
    assert_eq!(ours.vs_cpu_serial, Some(200.0));
    assert_eq!(ours.vs_cpu_rayon, Some(20.0));
    assert_eq!(ours.gflops, 2.0);
    assert_eq!(ours.gbps, Some(2000.0));
    assert_eq!(ours.percent_of_copy, Some(100.0));
    let alg1 = rows.iter().find(|r| r.record.kernel == "cusparse-alg1").unwrap();
    assert_eq!(alg1.vs_vendor, Some(0.5));
}

#[test]
fn other_operations_compare_with_every_vendor_row_and_no_roofline() {
    let records = vec![
        record("copy", "1 GiB", "memcpy-dtod", "vendor", 1.0, 0.0, 2e9),
        record("gemm", "n=1024", "cublas", "vendor", 1.0, 2e9, 0.0),
        record("gemm", "n=1024", "tiled", "gpu", 4.0, 2e9, 0.0),
    ];
    let rows = rows::derive(&records, rows::copy_bandwidth(&records).as_ref());
    let tiled = &rows[2];
    assert_eq!((tiled.vendor_kernel.as_deref(), tiled.vs_vendor), (Some("cublas"), Some(0.25)));
    assert_eq!((tiled.gbps, tiled.percent_of_copy, tiled.vs_cpu_serial), (None, None, None));
}

#[test]
fn geometric_means_and_extremes() {
    assert_eq!(rows::geometric_mean(&[]), None);
    assert!((rows::geometric_mean(&[4.0, 1.0]).unwrap() - 2.0).abs() < 1e-12);
    let mut records = Vec::new();
    for (input, ours_ms) in [("stencil27 a", 0.5), ("banded b", 2.0), ("random c", 1.0)] {
        records.push(record("spmv", input, "cusparse-alg1", "vendor", 1.0, 1e6, 1e6));
        records.push(record("spmv", input, "ours", "gpu", ours_ms, 1e6, 1e6));
        records.push(record("spmv", input, "slow", "gpu", 4.0, 1e6, 1e6));
    }
    let headlines = rows::headlines(&rows::derive(&records, None));
    assert_eq!(headlines.len(), 1);
    let h = &headlines[0];
    let names: Vec<&str> = h.kernels.iter().map(|k| k.kernel.as_str()).collect();
    assert_eq!(names, [BEST_OF_OURS, "ours", "slow"], "best of ours first, then by geometric mean");
    let ours = h.kernels[1].vs_vendor.as_ref().unwrap();
    assert!((ours.geomean - 1.0).abs() < 1e-12, "geomean of 2, 0.5, 1 is 1: {}", ours.geomean);
    assert_eq!((ours.min, ours.min_input.as_str(), ours.max, ours.inputs), (0.5, "banded b", 2.0, 3));
    let slow = h.kernels[2].vs_vendor.as_ref().unwrap();
    assert!((slow.geomean - 0.25).abs() < 1e-12);
    // No copy record: no roofline counts.
    assert_eq!(h.kernels[1].at_roofline, None);
}

#[test]
fn roofline_counts_regular_inputs_apart() {
    let mut records = vec![record("copy", "1 GiB", "memcpy-dtod", "vendor", 1.0, 0.0, 1e9)];
    // 1000 GB/s copy; ours at 900 (90%) on a stencil, 500 on a random matrix.
    records.push(record("spmv", "stencil27 8^3", "csr-adaptive", "gpu", 1.0, 1e6, 0.9e9));
    records.push(record("spmv", "random 8 16/row", "csr-adaptive", "gpu", 1.0, 1e6, 0.5e9));
    let rows = rows::derive(&records, rows::copy_bandwidth(&records).as_ref());
    let h = &rows::headlines(&rows)[0];
    assert_eq!(h.default_kernel.as_deref(), Some("csr-adaptive"));
    let k = h.kernels.iter().find(|k| k.kernel == "csr-adaptive").unwrap();
    assert_eq!((k.at_roofline, k.regular_at_roofline), (Some(1), Some((1, 1))));
}

#[test]
fn tables_csv_and_json_hold_the_same_numbers() {
    let (out, md) = report_of("agree", &parse(H100), None);
    let json_text = fs::read_to_string(out.join(RESULTS_JSON)).unwrap();
    let json: Value = serde_json::from_str(&json_text).unwrap();
    let json_rows = json["rows"].as_array().unwrap();
    let csv = fs::read_to_string(out.join(RESULTS_CSV)).unwrap();
    let mut lines = csv.lines();
    let header = csv_fields(lines.next().unwrap());
    let csv_rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert_eq!(csv_rows.len(), json_rows.len());
    assert_eq!(csv_rows.len(), H100.lines().count(), "one row per record");
    for (csv_row, json_row) in csv_rows.iter().zip(json_rows) {
        for (column, cell) in header.iter().zip(csv_row) {
            match &json_row[column] {
                Value::Null => assert_eq!(cell, "", "{column}"),
                Value::String(s) => assert_eq!(cell, s, "{column}"),
                Value::Number(n) => {
                    // The same digits in both files; serde_json's fast float parsing may be
                    // off by an ulp, so the parsed values are compared to rounding.
                    assert!(json_text.contains(&format!("\"{column}\": {cell}")), "{column}: {cell}");
                    let (a, b) = (cell.parse::<f64>().unwrap(), n.as_f64().unwrap());
                    assert!((a - b).abs() <= 4.0 * f64::EPSILON * a.abs(), "{column}: {a} != {b}");
                }
                other => panic!("{column}: unexpected {other}"),
            }
        }
    }
    // Every row of one input's table shows the JSON's figures, rounded.
    let (header, table) = table_with_header(&md, STENCIL_F64);
    assert_eq!(
        header,
        ["kernel", "time (ms)", "GFLOPS", "GB/s", "% of copy", "vs vendor", "vs cpu-serial", "vs cpu-rayon"]
    );
    let of_input: Vec<&Value> =
        json_rows.iter().filter(|r| r["input"] == "stencil27 160^3" && r["precision"] == "f64").collect();
    assert_eq!(table.len(), of_input.len());
    for row in of_input {
        let kernel = row["kernel"].as_str().unwrap();
        let cells = table
            .iter()
            .find(|c| kernel_of(&c[0]) == kernel)
            .unwrap_or_else(|| panic!("no row for {kernel}"));
        if row["kind"] == "vendor" {
            assert_eq!(cells[0], format!("{kernel} (vendor)"));
        }
        let f = |key: &str| row[key].as_f64();
        let expected = [
            number(f("time_ms").unwrap()),
            number(f("gflops").unwrap()),
            f("gbps").map_or(DASH.into(), number),
            f("percent_of_copy").map_or(DASH.into(), percent),
            f("vs_vendor").map_or(DASH.into(), ratio),
            f("vs_cpu_serial").map_or(DASH.into(), ratio),
            f("vs_cpu_rayon").map_or(DASH.into(), ratio),
        ];
        assert_eq!(cells[1..], expected, "{kernel}");
    }
    // The fastest row comes first, marked as the best of ours; the default kernel is marked.
    assert_eq!(table[0][0], "hll-sell (best of ours)");
    assert!(table.iter().any(|c| c[0] == "csr-adaptive (default)"), "{table:?}");
}

#[test]
fn csv_columns_are_exactly_the_json_fields() {
    let records = parse(H100);
    let rows = rows::derive(&records, rows::copy_bandwidth(&records).as_ref());
    let value = serde_json::to_value(&rows[1]).unwrap();
    let fields: BTreeSet<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(fields, COLUMNS.into_iter().collect::<BTreeSet<_>>());
}

#[test]
fn header_names_the_device_the_copy_bandwidth_and_the_run() {
    let results = results_dir("header", &parse(H100), None);
    let info = RunInfo {
        commit: Some("abc1234".into()),
        date: Some("2026-11-22 08:00 UTC".into()),
        mode: Some("quick".into()),
        failed: vec![],
    };
    info.write(&results).unwrap();
    let md =
        fs::read_to_string(write(&results, &results.with_file_name("bench-report")).unwrap().path).unwrap();
    for line in [
        "| Device | NVIDIA H100 80GB HBM3 (sm_90, 1980 MHz) |",
        "| SMs | 132 |",
        "| Memory | 79 GiB, L2 50 MiB |",
        "| Driver | CUDA 13.0 |",
        "| Copy bandwidth | 2980 GB/s device-to-device",
        "| Commit | abc1234 |",
        "| Date | 2026-11-22 08:00 UTC |",
        "| Run | quick",
    ] {
        assert!(md.contains(line), "missing `{line}` in\n{md}");
    }
    assert!(!md.contains("skipped"), "{md}");
}

#[test]
fn missing_vendor_rows_leave_gaps_not_errors() {
    let (_, md) = report_of("no-vendor", &parse(H100), None);
    // road 16000000 (f64) has no cuSPARSE rows in the fixture: no vs vendor column, and why.
    let heading = "#### road 16000000 (16.0 M rows, 48.0 M nnz), f64";
    let (header, table) = table_with_header(&md, heading);
    assert!(!header.iter().any(|c| c == "vs vendor"), "{header:?}");
    assert!(md.contains(&format!("{heading}\n\nNo vendor row for this input.")), "{md}");
    let adaptive = table.iter().find(|c| kernel_of(&c[0]) == "csr-adaptive").unwrap();
    let serial = header.iter().position(|c| c == "vs cpu-serial").unwrap();
    assert_ne!(adaptive[serial], DASH, "vs cpu-serial is still there");
    assert!(
        md.contains("geometric mean over 2 of 3 inputs; the others have no vendor row"),
        "the headline says what it is taken over:\n{md}"
    );
}

#[test]
fn cpu_only_results_say_gpu_benchmarks_were_skipped() {
    let cpu_only: Vec<Record> = parse(H100).into_iter().filter(|r| r.kind == "cpu").collect();
    let log = format!("spmv: stencil27 160^3: 4096000 rows\n{NO_DRIVER}\n");
    let (out, md) = report_of("cpu-only", &cpu_only, Some(&log));
    let reason = NO_DRIVER.strip_prefix(GPU_SKIPPED).unwrap();
    assert!(md.contains(&format!("> **GPU benchmarks skipped**: {reason}.")), "{md}");
    assert!(md.contains("| Device | none: GPU benchmarks skipped |"), "{md}");
    assert!(md.contains("No GPU results; cpu-rayon is"), "{md}");
    let (header, table) = table_with_header(&md, STENCIL_F64);
    assert_eq!(table.len(), 2);
    assert!(
        !header.iter().any(|c| c == "% of copy" || c == "vs vendor"),
        "no copy bandwidth, no vendor: {header:?}"
    );
    assert!(out.join("spmv-gflops-f64.svg").exists());
    assert!(!out.join("spmv-bandwidth-f64.svg").exists(), "no roofline without a GPU");
    assert!(!out.join("spmv-vs-vendor-f64.svg").exists(), "no ratio without a vendor");
    let json: Value = serde_json::from_str(&fs::read_to_string(out.join(RESULTS_JSON)).unwrap()).unwrap();
    assert_eq!(json["gpu_skipped"][0], reason);
}

#[test]
fn plots_are_svg_and_linked() {
    let (out, md) = report_of("plots", &parse(H100), None);
    for precision in ["f64", "f32"] {
        for (kind, text) in
            [("vs-vendor", "1.0 = vendor"), ("gflops", "GFLOPS"), ("bandwidth", "copy 2980 GB/s")]
        {
            let file = format!("spmv-{kind}-{precision}.svg");
            let svg = fs::read_to_string(out.join(&file)).unwrap();
            assert!(svg.starts_with("<svg"), "{file}");
            // Inputs with their sizes, the default kernel named as such, the plot's own label.
            for text in ["stencil27 160^3", "4.10 M rows, 109 M nnz", "csr-adaptive (default kernel)", text] {
                assert!(svg.contains(text), "{file} lacks `{text}`");
            }
            assert!(md.contains(&format!("]({file})")), "summary links {file}");
        }
    }
    // Shown at their own width (what the summary's page shows unscaled), in legible text.
    let svg = fs::read_to_string(out.join("spmv-gflops-f64.svg")).unwrap();
    assert!(svg.contains("width=\"860\""), "{}", &svg[..200]);
    assert!(!svg.contains("font-size=\"9") && !svg.contains("font-size=\"8"), "no text under 10 px");
    // The ratio plot comes first: it answers the question the reader came with.
    let position = |file: &str| md.find(&format!("]({file})")).unwrap();
    assert!(position("spmv-vs-vendor-f64.svg") < position("spmv-gflops-f64.svg"));
}

#[test]
fn sized_inputs_get_a_throughput_plot() {
    let mut records = Vec::new();
    for n in [1024.0, 2048.0, 4096.0] {
        let input = format!("n={n}");
        let flops = 2.0 * n * n * n;
        records.push(record("gemm", &input, "cublas", "vendor", flops / 5e10, flops, 0.0));
        records.push(record("gemm", &input, "tiled", "gpu", flops / 1e10, flops, 0.0));
    }
    // A shape that is not square: beside the square n, not on the throughput plot's axis.
    let flops = 2.0 * 5000.0 * 7001.0 * 3000.0;
    records.push(record("gemm", "5000x7001x3000", "cublas", "vendor", flops / 4e10, flops, 0.0));
    records.push(record("gemm", "5000x7001x3000", "tiled", "gpu", flops / 1e10, flops, 0.0));
    let (out, md) = report_of("gemm", &records, None);
    assert!(out.join("gemm-throughput-f64.svg").exists());
    assert!(!out.join("gemm-gflops-f64.svg").exists());
    let (header, table) = table_with_header(&md, "#### n=4096, f64");
    assert_eq!(header, ["kernel", "time (ms)", "TFLOPS", "vs vendor"], "no GB/s or CPU columns for GEMM");
    assert_eq!(table[1], ["tiled (best of ours)", "13.7", "10.0", "0.20x"]);
    let (header, table) = table_with_header(&md, "#### 5000x7001x3000, f64");
    assert_eq!(header, ["kernel", "time (ms)", "TFLOPS", "vs vendor"]);
    assert_eq!(table[1], ["tiled (best of ours)", "21.0", "10.0", "0.25x"]);
    // The default kernel (dmma-tma, or dmma-pipelined) did not run: the headline says so.
    assert!(md.contains("**tiled** (our best by geometric mean; the default kernel did not run)"), "{md}");
    // Without a known device, no peak line; ticks at the measured n.
    let svg = fs::read_to_string(out.join("gemm-throughput-f64.svg")).unwrap();
    assert!(!svg.contains("peak"), "no peak line for an unknown device");
    for n in ["1024", "2048", "4096"] {
        assert!(svg.contains(&format!(">{n}</text>")), "a tick at n = {n}");
    }
    assert!(svg.contains("GEMM C = A B, f64: TFLOPS against n"));
    assert_eq!(rows::size_of_input("n=4096"), Some(4096.0));
    assert_eq!(rows::size_of_input("stencil27 160^3"), None);
    assert_eq!(rows::size_of_input("5000x7001x3000"), None);
    assert!(rows::is_dense_shape("5000x7001x3000") && !rows::is_dense_shape("rmat:scale=20"));
    assert!(!rows::is_dense_shape("shuffle:stencil7:128x128x128"));
}

#[test]
fn run_info_round_trips_and_clear_keeps_other_files() {
    let dir = temp_dir("run-info");
    let info = RunInfo {
        commit: Some("abc1234-dirty".into()),
        date: Some("2026-11-22 08:00 UTC".into()),
        mode: Some("full".into()),
        failed: vec!["spmv_gpu (exit status: 1)".into()],
    };
    info.write(&dir).unwrap();
    assert_eq!(RunInfo::read(&dir), info);
    fs::write(dir.join("spmv.jsonl"), "").unwrap();
    fs::write(dir.join("spmv_gpu.log"), "").unwrap();
    fs::write(dir.join("notes.txt"), "mine").unwrap();
    RunInfo::clear(&dir).unwrap();
    let left: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(left, ["notes.txt"]);
}

#[test]
fn device_description_is_split_into_rows() {
    let rows = device_rows("NVIDIA H200 (sm_90, 132 SMs, 140 GiB, L2 60 MiB, 1980 MHz, driver CUDA 12.8)");
    assert_eq!(
        rows,
        [
            ("Device", "NVIDIA H200 (sm_90, 1980 MHz)".to_string()),
            ("SMs", "132".into()),
            ("Memory", "140 GiB, L2 60 MiB".into()),
            ("Driver", "CUDA 12.8".into())
        ]
    );
    assert_eq!(device_rows("some GPU"), [("Device", "some GPU".to_string())]);
}

#[test]
fn numbers_keep_three_significant_digits() {
    assert_eq!(number(0.60192), "0.602");
    assert_eq!(number(15.443), "15.4");
    assert_eq!(number(183.78), "184");
    assert_eq!(number(2980.43), "2980");
    assert_eq!(ratio(1.234), "1.23x");
    assert_eq!(ratio(0.00412), "0.00412x");
    assert_eq!(ratio(305.2), "305x");
    assert_eq!(percent(0.26), "0.3%");
    assert_eq!(percent(92.4), "92%");
}

#[test]
fn an_empty_results_folder_is_an_error() {
    let dir = temp_dir("empty");
    let err = write(&dir, &dir.join("report")).err().unwrap();
    assert!(err.to_string().contains("run `cargo xtask bench` first"), "{err}");
}

/// A SymGS and PCG run as the bench records it before reference rows were marked: the one
/// SpMV and plain CG are the fastest rows, with kind "gpu".
fn symgs_and_pcg() -> Vec<Record> {
    let mut records = vec![record("copy", "1 GiB", "memcpy-dtod", "vendor", 1.0, 0.0, 2e9)];
    for (input, scale) in [("stencil27 8^3", 1.0), ("random spd 100 27/row", 2.0)] {
        let mut sweep = |kernel: &str, kind: &str, ms: f64| {
            let mut r = record("symgs", input, kernel, kind, ms * scale, 4e6, 2e6);
            r.notes = "rows=512 nnz=13824".into();
            records.push(r);
        };
        sweep("cpu-serial", "cpu", 100.0);
        sweep("cusparse-spsv", "vendor", 4.0);
        sweep("sync-free-values", "gpu", 2.0);
        sweep("multicolor", "gpu", 1.0);
        // Written before references were marked.
        sweep("spmv-csr-adaptive", "gpu", 0.25);
    }
    for (kernel, kind, ms, iterations) in [
        ("cpu-serial sweep", "cpu", 2000.0, 59),
        ("cusparse-spsv", "vendor", 110.0, 59),
        ("sync-free-values", "gpu", 60.0, 59),
        ("none (plain CG)", "gpu", 15.0, 128),
    ] {
        let mut r = record("pcg", "stencil27 4^3", kernel, kind, ms, 0.0, 0.0);
        r.runs = 1;
        r.notes = format!("iterations={iterations} tolerance=1e-8 rows=64 nnz=1000");
        records.push(r);
    }
    records
}

#[test]
fn a_reference_row_never_becomes_a_headline_or_the_best_of_ours() {
    let (out, md) = report_of("references", &symgs_and_pcg(), None);
    let json: Value = serde_json::from_str(&fs::read_to_string(out.join(RESULTS_JSON)).unwrap()).unwrap();
    // Old records are marked as they are read.
    for row in json["rows"].as_array().unwrap() {
        let reference = row["kernel"] == "spmv-csr-adaptive" || row["kernel"] == "none (plain CG)";
        assert_eq!(row["kind"] == "reference", reference, "{row}");
    }
    for h in json["headline"].as_array().unwrap() {
        assert_eq!(h["headline_kernel"], "sync-free-values", "{h}");
        let kernels: Vec<&str> =
            h["kernels"].as_array().unwrap().iter().map(|k| k["kernel"].as_str().unwrap()).collect();
        assert!(
            !kernels.contains(&"spmv-csr-adaptive") && !kernels.contains(&"none (plain CG)"),
            "{kernels:?}"
        );
        // The best of ours is multicolor (symgs: 4 / 1 = 4x the vendor) or sync-free-values
        // (pcg: 110 / 60), not the faster reference.
        let best = &h["kernels"][0];
        assert_eq!(best["kernel"], BEST_OF_OURS);
        let expected = if h["operation"] == "symgs" { 4.0 } else { 110.0 / 60.0 };
        assert!((best["vs_vendor"]["geomean"].as_f64().unwrap() - expected).abs() < 1e-9, "{best}");
        assert_eq!(
            h["references"][0]["kernel"],
            if h["operation"] == "symgs" { "spmv-csr-adaptive" } else { "none (plain CG)" }
        );
    }
    let headline = md.split("## Headline").nth(1).unwrap().split("\n## ").next().unwrap();
    assert!(
        headline.contains(
            "- **symgs, f64** ([details](#symgs-f64)): **sync-free-values** (default kernel) is **2.00x**"
        ),
        "{headline}"
    );
    assert!(headline.contains("**sync-free-values** (default kernel) is **1.83x** cuSPARSE (cusparse-spsv); time to solution 60.0 ms in 59 iterations"), "{headline}");
    assert!(
        headline.contains(
            "for scale, sync-free-values takes 8.00x the time of `spmv-csr-adaptive` (a reference row)"
        ),
        "{headline}"
    );
    assert!(
        !headline.contains("**spmv-csr-adaptive**") && !headline.contains("**none (plain CG)**"),
        "{headline}"
    );
    // The kernel tables leave the references out and say so; the input tables mark them.
    let (_, kernels) = table_with_header(&md, "### symgs, f64");
    assert!(kernels.iter().all(|c| !c[0].contains("spmv-csr-adaptive")), "{kernels:?}");
    assert!(md.contains("Not in this table, measured for scale: `spmv-csr-adaptive`"), "{md}");
    let table = table_under(&md, "#### stencil27 8^3 (512 rows, 13.8 k nnz), f64");
    assert_eq!(table[0][0], "spmv-csr-adaptive (reference, for scale)");
    assert_eq!(table[1][0], "multicolor (best of ours)");
    // PCG: time to solution and iterations, not a column of zeros.
    let (header, table) = table_with_header(&md, "#### stencil27 4^3 (64 rows, 1000 nnz), f64");
    assert_eq!(
        header,
        ["kernel", "time to solution (ms)", "iterations", "ms per iteration", "vs vendor", "vs cpu-serial"]
    );
    assert_eq!(table[0], ["none (plain CG) (reference, for scale)", "15.0", "128", "0.117", "7.33x", "133x"]);
    // The plots draw the references as labelled ticks, apart from ours.
    let svg = fs::read_to_string(out.join("symgs-vs-vendor-f64.svg")).unwrap();
    assert!(svg.contains("spmv-csr-adaptive: for scale, not a competitor"), "legend");
    assert!(svg.contains(">spmv-csr-adaptive</text>"), "the tick's own label");
    // Marked in the records too: a reference is never one of ours.
    let rows = rows::derive(&[record("symgs", "a", "spmv-x", rgla::bench::REFERENCE, 0.1, 1.0, 1.0)], None);
    let h = &rows::headlines(&rows)[0];
    assert_eq!((h.headline_kernel.as_deref(), h.kernels.len()), (None, 0));
}

#[test]
fn every_operation_with_vendor_rows_has_a_ratio_plot() {
    let mut records = symgs_and_pcg();
    for (operation, vendor, input) in [
        ("spmv", "cusparse-alg1", "banded 64 bw4 9/row"),
        ("gemm", "cublas", "n=1000"),
        ("solve", "cusolver", "n=1000"),
    ] {
        records.push(record(operation, input, vendor, "vendor", 1.0, 2e9, 1e6));
        records.push(record(operation, input, "ours", "gpu", 2.0, 2e9, 1e6));
    }
    // An operation without vendor rows gets no ratio plot.
    records.push(record("axpy", "n=1000", "ours", "gpu", 2.0, 2e3, 1e6));
    let (out, md) = report_of("ratio-plots", &records, None);
    for operation in ["spmv", "symgs", "pcg", "gemm", "solve"] {
        let file = format!("{operation}-vs-vendor-f64.svg");
        let svg = fs::read_to_string(out.join(&file)).unwrap_or_else(|_| panic!("no {file}"));
        assert!(svg.contains("1.0 = vendor") && svg.contains("log scale"), "{file}");
        assert!(md.contains(&format!("]({file})")), "summary links {file}");
    }
    assert!(!out.join("axpy-vs-vendor-f64.svg").exists());
    // Titles name the operation.
    let solve = fs::read_to_string(out.join("solve-throughput-f64.svg")).unwrap();
    assert!(solve.contains("dense LU solve: getrf + getrs, f64"), "{solve}");
}

#[test]
fn summary_md_shows_no_machine_path() {
    let absolute = |md: &str| -> Vec<String> {
        let mut found: Vec<String> = md
            .split(|c: char| c.is_whitespace() || "()[]`'\"".contains(c))
            .filter(|w| w.len() > 1 && (w.starts_with('/') || w.starts_with("~/") || w.contains(":\\")))
            .map(str::to_string)
            .collect();
        let temp = std::env::temp_dir().display().to_string();
        if md.contains(&temp) {
            found.push(temp);
        }
        found
    };
    // Results and report far apart (as `--results /tmp/res-spmv --out reports/...`), with a
    // failed bench and criterion's folder beside the results.
    let results = temp_dir("paths").join("deep/res-spmv");
    let records: Vec<Record> = parse(H100);
    fs::create_dir_all(&results).unwrap();
    for r in &records {
        let line = serde_json::to_string(r).unwrap() + "\n";
        let path = results.join("spmv.jsonl");
        let mut file = fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
        std::io::Write::write_all(&mut file, line.as_bytes()).unwrap();
    }
    fs::create_dir_all(criterion_dir(&results)).unwrap();
    let info = RunInfo { failed: vec!["symgs_gpu (exit status: 101)".into()], ..RunInfo::default() };
    info.write(&results).unwrap();
    let out = temp_dir("paths-out").join("reports/h100");
    let md = fs::read_to_string(write(&results, &out).unwrap().path).unwrap();
    assert_eq!(absolute(&md), Vec::<String>::new(), "{md}");
    assert!(md.contains("the run's results folder (`res-spmv`), not kept with this report"), "{md}");
    assert!(md.contains("its log is `symgs_gpu.log` in the results folder"), "{md}");

    // The default layout: siblings, linked relatively.
    let results = results_dir("paths-siblings", &records, None);
    fs::create_dir_all(criterion_dir(&results)).unwrap();
    let md =
        fs::read_to_string(write(&results, &results.with_file_name("bench-report")).unwrap().path).unwrap();
    assert_eq!(absolute(&md), Vec::<String>::new(), "{md}");
    assert!(
        md.contains("[../bench-results](../bench-results)") && md.contains("[../criterion](../criterion)"),
        "{md}"
    );
}

#[test]
fn a_report_is_written_again_from_its_results_json() {
    let results = results_dir("again", &symgs_and_pcg(), None);
    let info = RunInfo {
        commit: Some("989618d".into()),
        date: Some("2026-11-22 14:32 UTC".into()),
        mode: Some("full".into()),
        failed: vec![],
    };
    info.write(&results).unwrap();
    let first = results.with_file_name("first");
    write(&results, &first).unwrap();
    // A folder of a report only (as reports/* are): read from its results.json, into itself,
    // every recorded digit kept (serde_json alone reads this one an ulp off).
    let text = fs::read_to_string(first.join(RESULTS_JSON)).unwrap();
    let text = text.replacen("\"error\": 0.0", "\"error\": 2.1554316466229162e-16", 1);
    fs::write(first.join(RESULTS_JSON), text).unwrap();
    let summary = write(&first, &first).unwrap();
    assert!(
        fs::read_to_string(first.join(RESULTS_JSON)).unwrap().contains("\"error\": 2.1554316466229162e-16")
    );
    let md = fs::read_to_string(summary.path).unwrap();
    for line in [
        "| Commit | 989618d |",
        "| Date | 2026-11-22 14:32 UTC |",
        "| Run | full |",
        "| Copy bandwidth | 2000 GB/s",
    ] {
        assert!(md.contains(line), "missing `{line}` in\n{md}");
    }
    assert!(md.contains("written again from the rows of its own [results.json](results.json)"), "{md}");
    let json: Value = serde_json::from_str(&fs::read_to_string(first.join(RESULTS_JSON)).unwrap()).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), symgs_and_pcg().len());
    assert_eq!(json["commit"], "989618d");
    // Old records in a report's rows are marked as references too.
    let mut old: Value = json.clone();
    for row in old["rows"].as_array_mut().unwrap() {
        if row["kind"] == "reference" {
            row["kind"] = "gpu".into();
        }
    }
    let dir = temp_dir("again-old");
    fs::write(dir.join(RESULTS_JSON), serde_json::to_string(&old).unwrap()).unwrap();
    let records = Results::read(&dir).unwrap().records;
    assert_eq!(records.iter().filter(|r| r.is_reference()).count(), 3);
}

#[test]
fn spmv_bandwidth_counts_the_csr_minimum_for_every_format() {
    // rows = cols = 1000, nnz = 10000, f64: 10000 * 12 + 1001 * 4 + 2000 * 8 = 140004 bytes.
    let notes = "rows=1000 cols=1000 nnz=10000";
    let mut records = vec![record("copy", "1 GiB", "memcpy-dtod", "vendor", 1.0, 0.0, 2e9)];
    // A big L2 would explain a rate above the copy's: none here.
    records[0].notes = "GPU (sm_90, 1 SMs, 1 GiB, L2 1 KiB, 1 MHz, driver CUDA 13.0)".into();
    for (kernel, kind, ms, own_bytes) in [
        ("cusparse-alg1", "vendor", 1e-4, 140004.0),
        ("csr-adaptive", "gpu", 1e-4, 140004.0),
        // Its format moves fewer bytes: faster, and above the copy by the CSR count.
        ("bsr-warp", "gpu", 0.5e-4, 90000.0),
        // Counts more bytes of its own (padding), yet is slower: lower, never higher.
        ("hll-v1", "gpu", 2e-4, 600000.0),
    ] {
        let mut r = record("spmv", "banded 1000", kernel, kind, ms, 2e4, own_bytes);
        r.notes = notes.into();
        records.push(r);
    }
    assert_eq!(rows::csr_bytes(&records[1]), Some(140004.0));
    let copy = rows::copy_bandwidth(&records).unwrap();
    assert_eq!(copy.l2_bytes, Some(1024.0));
    let rows = rows::derive(&records, Some(&copy));
    let gbps = |k: &str| rows.iter().find(|r| r.record.kernel == k).unwrap().gbps.unwrap();
    assert_eq!(gbps("csr-adaptive"), gbps("cusparse-alg1"));
    assert!((gbps("hll-v1") - 700.02).abs() < 1e-6, "{}", gbps("hll-v1"));
    assert!(gbps("bsr-warp") > copy.gbps);
    let (out, md) = report_of("csr-bytes", &records, None);
    let expected = "Above the copy roofline (red outline): bsr-warp on banded 1000: 2800 GB/s, 140% of copy: \
                    explained: its format moves fewer bytes than the CSR minimum (87.9 KiB against 137 KiB), 90% of \
                    copy by its own count.";
    assert!(md.contains(expected), "{md}");
    assert!(
        fs::read_to_string(out.join("spmv-bandwidth-f64.svg")).unwrap().contains("explained: its format")
    );
}

#[test]
fn dense_plots_show_the_peak_of_known_devices() {
    assert_eq!(
        plots::peak_tflops("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)", "f64"),
        Some((67.0, "FP64 tensor-core peak"))
    );
    assert_eq!(plots::peak_tflops("NVIDIA H100 80GB HBM3", "f32"), Some((67.0, "FP32 peak")));
    assert_eq!(plots::peak_tflops("NVIDIA H100 PCIe", "f64"), None);
    assert_eq!(plots::peak_tflops("some GPU", "f64"), None);
    let mut records: Vec<Record> = parse(H100).into_iter().take(1).collect();
    for n in [1000.0, 2000.0, 4096.0] {
        let input = format!("n={n}");
        let flops = 2.0 * n * n * n;
        // 60 and 50 TFLOPS.
        records.push(record("gemm", &input, "cublas", "vendor", flops / 6e10, flops, 0.0));
        records.push(record("gemm", &input, "dmma-pipelined", "gpu", flops / 5e10, flops, 0.0));
    }
    let (out, md) = report_of("peak", &records, None);
    let svg = fs::read_to_string(out.join("gemm-throughput-f64.svg")).unwrap();
    assert!(svg.contains("FP64 tensor-core peak: 67 TFLOPS"), "the peak line is labelled");
    assert!(svg.contains(">cuBLAS 60.0</text>"), "the vendor line is labelled");
    assert!(
        md.contains(
            "at n = 4096: 50.0 TFLOPS against cuBLAS's 60.0, 75% of the FP64 tensor-core peak (67 TFLOPS)"
        ),
        "{md}"
    );
}

#[test]
fn the_summary_has_contents_sections_in_order_and_inputs_with_sizes() {
    let (_, md) = report_of("contents", &parse(H100), None);
    for link in [
        "- [How to read this report](#how-to-read-this-report)",
        "- [SpMV y = A x](#spmv-y--a-x): [f64](#spmv-f64), [f32](#spmv-f32)",
    ] {
        assert!(md.contains(link), "missing `{link}` in\n{md}");
    }
    assert_eq!(anchor("SpMV y = A x"), "spmv-y--a-x");
    assert_eq!(anchor("spmv, f64"), "spmv-f64");
    // All of f64, then all of f32.
    let position = |text: &str| md.find(text).unwrap_or_else(|| panic!("no `{text}`"));
    assert!(position("### spmv, f64") < position("#### powerlaw 4000000 (4.00 M rows, 9.15 M nnz), f64"));
    assert!(position("#### powerlaw 4000000 (4.00 M rows, 9.15 M nnz), f64") < position("### spmv, f32"));
    assert!(position("### spmv, f32") < position("#### stencil27 160^3 (4.10 M rows, 109 M nnz), f32"));
    // Regular inputs are defined where they first appear, and only there.
    let definition =
        "regular inputs (regular: generated matrices whose rows have about the same number of nonzeros";
    assert_eq!(position(definition), position("regular inputs"), "{md}");
    assert_eq!(md.matches(definition).count(), 1);
    assert_eq!(rows::count(4194304.0), "4.19 M");
    assert_eq!(rows::count(113246208.0), "113 M");
    assert_eq!(rows::count(1813.0), "1813");
    assert_eq!(rows::bytes(50.0 * 1024.0 * 1024.0), "50 MiB");
}
