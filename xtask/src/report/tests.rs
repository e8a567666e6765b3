//! The report writer on fixed data: a subset of a real H100 run (`testdata/h100-spmv.jsonl`:
//! the copy record and three inputs, one of them without vendor rows), and small made-up
//! records whose figures can be checked by hand.

use std::collections::BTreeSet;

use serde_json::Value;

use super::rows::{self, BEST_OF_OURS};
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
    let section = md.split(&format!("\n{heading}\n")).nth(1).unwrap_or_else(|| panic!("no `{heading}`"));
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect()
}

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
    assert_eq!(h.headline_kernel.as_deref(), Some("csr-adaptive"));
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
    let table = table_under(&md, "### stencil27 160^3, f64");
    let of_input: Vec<&Value> =
        json_rows.iter().filter(|r| r["input"] == "stencil27 160^3" && r["precision"] == "f64").collect();
    assert_eq!(table.len(), of_input.len());
    for row in of_input {
        let kernel = row["kernel"].as_str().unwrap();
        let shown = if row["kind"] == "vendor" { format!("{kernel} (vendor)") } else { kernel.to_string() };
        let cells = table.iter().find(|c| c[0] == shown).unwrap_or_else(|| panic!("no row for {kernel}"));
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
    // The fastest row comes first.
    assert_eq!(table[0][0], "hll-sell");
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
    // road 16000000 (f64) has no cuSPARSE rows in the fixture.
    let table = table_under(&md, "### road 16000000, f64");
    let adaptive = table.iter().find(|c| c[0] == "csr-adaptive").unwrap();
    assert_eq!(adaptive[5], DASH, "vs vendor");
    assert_ne!(adaptive[6], DASH, "vs cpu-serial is still there");
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
    let table = table_under(&md, "### stencil27 160^3, f64");
    assert_eq!(table.len(), 2);
    assert!(table.iter().all(|c| c[4] == DASH && c[5] == DASH), "no copy bandwidth, no vendor: {table:?}");
    assert!(out.join("spmv-gflops-f64.svg").exists());
    assert!(!out.join("spmv-bandwidth-f64.svg").exists(), "no roofline without a GPU");
    let json: Value = serde_json::from_str(&fs::read_to_string(out.join(RESULTS_JSON)).unwrap()).unwrap();
    assert_eq!(json["gpu_skipped"][0], reason);
}

#[test]
fn plots_are_svg_and_linked() {
    let (out, md) = report_of("plots", &parse(H100), None);
    for file in
        ["spmv-gflops-f64.svg", "spmv-gflops-f32.svg", "spmv-bandwidth-f64.svg", "spmv-bandwidth-f32.svg"]
    {
        let svg = fs::read_to_string(out.join(file)).unwrap();
        assert!(svg.starts_with("<svg"), "{file}");
        for text in ["stencil27", "csr-adaptive", "GFLOPS"] {
            if !(file.contains("bandwidth") && text == "GFLOPS") {
                assert!(svg.contains(text), "{file} lacks `{text}`");
            }
        }
        assert!(md.contains(&format!("]({file})")), "summary links {file}");
    }
    let bandwidth = fs::read_to_string(out.join("spmv-bandwidth-f64.svg")).unwrap();
    assert!(bandwidth.contains("copy 2980 GB/s"), "the roofline is labelled");
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
    let (out, md) = report_of("gemm", &records, None);
    assert!(out.join("gemm-throughput-f64.svg").exists());
    assert!(!out.join("gemm-gflops-f64.svg").exists());
    let table = table_under(&md, "### n=4096, f64");
    assert_eq!(table[1], ["tiled", "13.7", "10000", "0.20x", DASH, DASH], "no GB/s columns for GEMM");
    assert_eq!(plots::size_of_input("n=4096"), Some(4096.0));
    assert_eq!(plots::size_of_input("stencil27 160^3"), None);
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
