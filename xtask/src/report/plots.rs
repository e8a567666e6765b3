//! The report's SVG plots, per operation and precision, in the order the summary shows them:
//!
//! - `<op>-vs-vendor-<precision>.svg`: are we faster? The vendor's time / ours per input (log
//!   axis, a line at 1.0) for the default kernel, the best of ours and the CPU, inputs grouped
//!   by family; reference rows as labelled ticks;
//! - `<op>-gflops-<precision>.svg`: every kernel per input, the default kernel, the best of
//!   ours, the vendor and the CPU highlighted, our other kernels grey;
//! - `<op>-bandwidth-<precision>.svg` (memory-bound operations): effective GB/s against the
//!   measured copy bandwidth, one byte count per input, inputs that fit in the L2 apart;
//! - `<op>-throughput-<precision>.svg` (inputs named `n=<size>`: GEMM, LU): TFLOPS against n
//!   with the vendor line and the device's peak.
//!
//! Inputs are rows (names on the left, with their sizes), values run left to right: long input
//! names stay readable, and nothing joins unrelated inputs. In a row, the vendor sits above,
//! ours in the middle, the CPU below.

use std::path::Path;

use anyhow::{Context, Result};

use super::rows::{
    BEST_OF_OURS, Copy, Family, Headline, MEMORY_BOUND, ROOFLINE_SHARE, Row, baselines, bytes, distinct,
    fastest_of_ours, is_baseline, is_solver, operation_title, operations, ordered_inputs, precisions,
    size_label, size_of_input,
};
use super::svg::{
    BEST, CPU, DEFAULT, Entry, GREY, GRID, INK, MUTED, PEAK, REFERENCE, ROOFLINE, SMALL_SIZE, STRIPE, Scale,
    Shape, Stroke, Svg, TEXT_SIZE, TITLE_SIZE, Text, VENDOR, WIDTH, axis_label, legend, linear_range,
    log_range, text_width,
};
use super::tables::{number, percent, ratio};

/// A plot written next to the summary.
pub struct Plot {
    pub operation: String,
    pub precision: String,
    /// The file name, relative to the report folder.
    pub file: String,
    pub title: String,
    /// Sentences for the summary under the plot (points above the copy roofline).
    pub notes: Vec<String>,
}

/// Peak rates of the devices the report knows, dense TFLOPS, by the words of the device's
/// name and the precision. NVIDIA H100 SXM5 (named "NVIDIA H100 80GB HBM3"): FP64 on tensor
/// cores 67 (34 without), FP32 67 (H100 datasheet). Unknown devices get no peak line.
const PEAKS: [(&[&str], &str, f64, &str); 4] = [
    (&["H100", "80GB HBM3"], "f64", 67.0, "FP64 tensor-core peak"),
    (&["H100", "SXM"], "f64", 67.0, "FP64 tensor-core peak"),
    (&["H100", "80GB HBM3"], "f32", 67.0, "FP32 peak"),
    (&["H100", "SXM"], "f32", 67.0, "FP32 peak"),
];

/// The device's peak at a precision: (TFLOPS, what it is).
pub fn peak_tflops(device: &str, precision: &str) -> Option<(f64, &'static str)> {
    PEAKS
        .iter()
        .find(|(words, p, _, _)| *p == precision && words.iter().all(|w| device.contains(w)))
        .map(|(_, _, tflops, what)| (*tflops, *what))
}

/// The vendor library of a kernel name, as the library spells itself.
pub fn vendor_library(kernel: &str) -> String {
    match kernel.split('-').next().unwrap_or(kernel) {
        "cusparse" => "cuSPARSE".into(),
        "cublas" => "cuBLAS".into(),
        "cusolver" => "cuSOLVER".into(),
        other => other.to_string(),
    }
}

/// A vendor kernel with its library: "cuBLAS", "cuSPARSE (cusparse-spsv)".
pub fn vendor_name(kernel: &str) -> String {
    let library = vendor_library(kernel);
    if library.eq_ignore_ascii_case(kernel) { library } else { format!("{library} ({kernel})") }
}

/// One operation at one precision: what the plots of a case share.
struct Case<'a> {
    operation: &'a str,
    precision: &'a str,
    rows: Vec<&'a Row>,
    inputs: Vec<&'a str>,
    /// The kernel highlighted as ours: the default kernel, else our best by geometric mean.
    default: Option<&'a str>,
    /// What `default` is, for the legend.
    default_role: &'static str,
    baselines: Vec<&'a str>,
}

impl<'a> Case<'a> {
    fn find(&self, input: &str, kernel: &str) -> Option<&'a Row> {
        self.rows.iter().copied().find(|r| r.record.input == input && r.record.kernel == kernel)
    }

    fn of_input(&self, input: &str) -> impl Iterator<Item = &'a Row> + '_ {
        let input = input.to_string();
        self.rows.iter().copied().filter(move |r| r.record.input == input)
    }

    fn best(&self, input: &str) -> Option<&'a Row> {
        fastest_of_ours(&self.of_input(input).collect::<Vec<_>>()).first().copied()
    }

    fn fastest_cpu(&self, input: &str) -> Option<&'a Row> {
        self.of_input(input)
            .filter(|r| r.record.kind == "cpu")
            .min_by(|a, b| a.record.time_ms.total_cmp(&b.record.time_ms))
    }

    fn vendor(&self, input: &str) -> Option<&'a Row> {
        let kernel = self.of_input(input).find_map(|r| r.vendor_kernel.clone())?;
        self.find(input, &kernel)
    }

    fn kernels_of_kind(&self, kind: &str) -> Vec<&'a str> {
        distinct(self.rows.iter().filter(|r| r.record.kind == kind).map(|r| r.record.kernel.as_str()))
    }

    fn references(&self) -> Vec<&'a str> {
        self.kernels_of_kind(rgla::bench::REFERENCE)
    }

    fn title(&self) -> String {
        format!("{}, {}", operation_title(self.operation), self.precision)
    }

    /// "cuSPARSE (the faster of cusparse-alg1 and cusparse-alg2 on each input)".
    fn vendor_phrase(&self) -> String {
        match self.baselines.as_slice() {
            [] => "the vendor".into(),
            [one] => vendor_name(one),
            many => {
                format!("{} (the faster of {} on each input)", vendor_library(many[0]), many.join(" and "))
            }
        }
    }

    fn input_row(&self, input: &str) -> (String, Option<String>) {
        let size = self.of_input(input).find_map(|r| size_label(&r.record));
        (input.to_string(), size)
    }
}

/// Every plot the rows have data for.
pub fn draw_all(rows: &[Row], headlines: &[Headline], copy: Option<&Copy>, out: &Path) -> Result<Vec<Plot>> {
    let mut plots = Vec::new();
    for operation in operations(rows) {
        let of_op: Vec<&Row> = rows.iter().filter(|r| r.record.operation == operation).collect();
        for precision in precisions(&of_op) {
            let case_rows: Vec<&Row> =
                of_op.iter().copied().filter(|r| r.record.precision == precision).collect();
            let headline = headlines.iter().find(|h| h.operation == operation && h.precision == precision);
            let case = Case {
                operation,
                precision,
                inputs: ordered_inputs(&case_rows),
                rows: case_rows,
                default: headline.and_then(|h| h.headline_kernel.as_deref()),
                default_role: if headline.is_some_and(|h| h.default_kernel.is_some()) {
                    "default kernel"
                } else {
                    "our best by geometric mean"
                },
                baselines: baselines(rows, operation, precision),
            };
            let mut plot = |kind: &str, title: String, (svg, notes): (String, Vec<String>)| {
                let file = format!("{operation}-{kind}-{precision}.svg");
                let path = out.join(&file);
                std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
                let (operation, precision) = (operation.to_string(), precision.to_string());
                plots.push(Plot { operation, precision, file, title, notes });
                Ok::<(), anyhow::Error>(())
            };
            let has_vendor = case.rows.iter().any(|r| r.vs_vendor.is_some() && r.record.kind != "vendor");
            if has_vendor && !case.baselines.is_empty() {
                let title = format!("{}: speed-up over {}", case.title(), vendor_library(case.baselines[0]));
                let drawn = (vs_vendor(&case, &title), vec![]);
                plot("vs-vendor", title, drawn)?;
            }
            let rated = case.rows.iter().any(|r| r.gflops > 0.0);
            // Square inputs against n (every input is in the speed-up plot).
            let sized = case.inputs.iter().any(|i| size_of_input(i).is_some());
            if rated && sized {
                let device = copy.map(|c| c.device.as_str()).unwrap_or_default();
                let title = format!("{}: TFLOPS against n", case.title());
                let drawn = (throughput(&case, &title, device), vec![]);
                plot("throughput", title, drawn)?;
            } else if rated {
                let title = format!("{}: GFLOPS of every kernel, per input", case.title());
                let drawn = (gflops(&case, &title), vec![]);
                plot("gflops", title, drawn)?;
            }
            let gpu_rates = case.rows.iter().any(|r| r.record.kind != "cpu" && r.gbps.is_some());
            if let (true, Some(copy), true) = (MEMORY_BOUND.contains(&operation), copy, gpu_rates) {
                let title = format!("{}: effective bandwidth against the copy roofline", case.title());
                let drawn = bandwidth(&case, &title, copy);
                plot("bandwidth", title, drawn)?;
            }
        }
    }
    Ok(plots)
}

// ---------------------------------------------------------------------------------------
// Dot plots: a row per input, values left to right.

/// A point of a row.
struct Point {
    value: f64,
    /// -1 above the middle (vendor), 0 the middle (ours), 1 below (CPU).
    lane: i32,
    shape: Shape,
    color: &'static str,
    size: f64,
    /// Written beside the point where it is off the axis.
    off_axis_label: Option<String>,
    /// Written beside the point (reference ticks).
    label: Option<String>,
}

impl Point {
    fn new(value: f64, lane: i32, shape: Shape, color: &'static str, size: f64) -> Point {
        Point { value, lane, shape, color, size, off_axis_label: None, label: None }
    }
}

struct DotRow {
    label: String,
    sub: Option<String>,
    points: Vec<Point>,
    /// Texts of the right-hand columns.
    texts: Vec<String>,
}

struct Group {
    label: Option<String>,
    rows: Vec<DotRow>,
}

/// A vertical line across a panel, labelled above it.
struct VLine {
    at: f64,
    color: &'static str,
    dash: Option<&'static str>,
    label: String,
}

struct Panel {
    heading: Option<String>,
    scale: Scale,
    axis: String,
    lines: Vec<VLine>,
    groups: Vec<Group>,
}

struct DotPlot {
    title: String,
    subtitle: String,
    legend: Vec<(&'static str, Vec<Entry>)>,
    /// Right-hand text columns: header and colour.
    columns: Vec<(&'static str, &'static str)>,
    panels: Vec<Panel>,
    notes: Vec<String>,
}

const LABEL_LEFT: f64 = 14.0;
const PLOT_LEFT: f64 = 262.0;
const COLUMN_WIDTH: f64 = 100.0;
const LANE: f64 = 10.0;

/// Groups the inputs by family (no heading where there is one family).
fn grouped(inputs: &[&str], row: &dyn Fn(&str) -> DotRow) -> Vec<Group> {
    let families = distinct(inputs.iter().map(|i| Family::of(i).label()));
    families
        .iter()
        .map(|family| Group {
            label: (families.len() > 1).then(|| family.to_string()),
            rows: inputs.iter().filter(|i| Family::of(i).label() == *family).map(|i| row(i)).collect(),
        })
        .filter(|g| !g.rows.is_empty())
        .collect()
}

impl DotPlot {
    fn plot_right(&self) -> f64 {
        WIDTH - 22.0 - COLUMN_WIDTH * self.columns.len() as f64
    }

    fn draw(&self) -> String {
        let mut svg = Svg::new(WIDTH);
        let text_width_px = WIDTH - 2.0 * LABEL_LEFT;
        let mut y = title_and_subtitle(&mut svg, &self.title, &self.subtitle);
        y = legend(&mut svg, y + 8.0, &self.legend);
        let right = self.plot_right();
        for panel in &self.panels {
            let scale = Scale { from: PLOT_LEFT, to: right, ..panel.scale };
            y += 6.0;
            if let Some(heading) = &panel.heading {
                y += 12.0;
                svg.text((LABEL_LEFT, y), heading, Text::new(TEXT_SIZE + 1.0).bold());
                y += 8.0;
            }
            // Labels of the vertical lines and the column headers, above the rows.
            if !panel.lines.is_empty() || !self.columns.is_empty() {
                y += 18.0;
            }
            let mut taken: Vec<(f64, f64)> = Vec::new();
            for line in &panel.lines {
                let x = scale.px(line.at);
                let w = text_width(&line.label, SMALL_SIZE);
                let anchor = if x + w / 2.0 > right { "end" } else { "middle" };
                let span = if anchor == "end" { (x - w, x) } else { (x - w / 2.0, x + w / 2.0) };
                let mut row_y = y - 4.0;
                if taken.iter().any(|(a, b)| span.0 < *b + 6.0 && span.1 > *a - 6.0) {
                    row_y -= 14.0;
                }
                taken.push(span);
                svg.text((x, row_y), &line.label, Text::new(SMALL_SIZE).anchor(anchor).color(line.color));
            }
            for (i, (header, color)) in self.columns.iter().enumerate() {
                let x = right + COLUMN_WIDTH * (i as f64 + 1.0);
                svg.text((x, y - 4.0), header, Text::new(SMALL_SIZE).anchor("end").bold().color(color));
            }
            let top = y;
            let row_height =
                if panel.groups.iter().flat_map(|g| &g.rows).any(|r| r.sub.is_some()) { 40.0 } else { 30.0 };
            // Rows: stripes first, then grid and lines, then points.
            let mut layout: Vec<(f64, &DotRow)> = Vec::new();
            let mut heads: Vec<(f64, &str)> = Vec::new();
            for group in &panel.groups {
                if let Some(label) = &group.label {
                    heads.push((y, label));
                    y += 24.0;
                }
                for row in &group.rows {
                    layout.push((y, row));
                    y += row_height;
                }
            }
            let bottom = y;
            for (i, (row_y, _)) in layout.iter().enumerate() {
                if i % 2 == 0 {
                    svg.rect(
                        (LABEL_LEFT - 6.0, *row_y),
                        (WIDTH - 2.0 * LABEL_LEFT + 12.0, row_height),
                        STRIPE,
                    );
                }
            }
            for (head_y, label) in &heads {
                svg.text((LABEL_LEFT, head_y + 17.0), label, Text::new(TEXT_SIZE).bold().color(MUTED));
                svg.line(
                    (LABEL_LEFT, head_y + 22.0),
                    (WIDTH - LABEL_LEFT, head_y + 22.0),
                    Stroke::new(GRID, 1.0),
                );
            }
            let ticks = scale.ticks(9);
            for &t in &ticks {
                let x = scale.px(t);
                svg.line((x, top), (x, bottom), Stroke::new(GRID, 1.0));
            }
            for line in &panel.lines {
                let x = scale.px(line.at);
                let stroke = Stroke::new(line.color, 1.8);
                svg.line((x, top), (x, bottom), line.dash.map_or(stroke, |d| stroke.dashed(d)));
            }
            for (row_y, row) in &layout {
                let centre = row_y + row_height / 2.0;
                match &row.sub {
                    Some(sub) => {
                        svg.text((LABEL_LEFT, centre - 3.0), &row.label, Text::new(TEXT_SIZE));
                        svg.text((LABEL_LEFT, centre + 12.0), sub, Text::new(SMALL_SIZE).color(MUTED));
                    }
                    None => svg.text((LABEL_LEFT, centre + 4.5), &row.label, Text::new(TEXT_SIZE)),
                }
                for point in &row.points {
                    let y = centre + LANE * point.lane as f64;
                    if point.value < scale.lo * (1.0 - 1e-9) {
                        let x = PLOT_LEFT + 6.0;
                        svg.mark(Shape::LeftArrow, (x, y), 4.0, point.color);
                        if let Some(label) = &point.off_axis_label {
                            svg.text(
                                (x + 8.0, y + 4.0),
                                label,
                                Text::new(SMALL_SIZE - 1.0).color(point.color),
                            );
                        }
                    } else if scale.contains(point.value) {
                        let x = scale.px(point.value);
                        svg.mark(point.shape, (x, y), point.size, point.color);
                        if let Some(label) = &point.label {
                            let style = Text::new(SMALL_SIZE - 1.0).color(point.color);
                            let (lx, style) = if x + 8.0 + text_width(label, SMALL_SIZE - 1.0) > right {
                                (x - 6.0, style.anchor("end"))
                            } else {
                                (x + 6.0, style)
                            };
                            svg.text((lx, y - 11.0), label, style);
                        }
                    }
                }
                for (i, text) in row.texts.iter().enumerate() {
                    let x = right + COLUMN_WIDTH * (i as f64 + 1.0);
                    let color = self.columns.get(i).map_or(INK, |c| c.1);
                    svg.text((x, centre + 4.5), text, Text::new(TEXT_SIZE).anchor("end").color(color));
                }
            }
            // The axis.
            svg.line((PLOT_LEFT, bottom), (right, bottom), Stroke::new(MUTED, 1.0));
            for &t in &ticks {
                let x = scale.px(t);
                svg.line((x, bottom), (x, bottom + 4.0), Stroke::new(MUTED, 1.0));
                svg.text(
                    (x, bottom + 17.0),
                    &axis_label(t),
                    Text::new(SMALL_SIZE).anchor("middle").color(MUTED),
                );
            }
            svg.text(
                ((PLOT_LEFT + right) / 2.0, bottom + 35.0),
                &panel.axis,
                Text::new(TEXT_SIZE).anchor("middle"),
            );
            y = bottom + 44.0;
        }
        for note in &self.notes {
            y = svg.paragraph((LABEL_LEFT, y + 6.0), note, text_width_px, Text::new(SMALL_SIZE).color(MUTED));
        }
        svg.finish(y + 10.0, &self.title)
    }
}

/// The title, wrapped to the width, and the subtitle under it; returns the y below them.
fn title_and_subtitle(svg: &mut Svg, title: &str, subtitle: &str) -> f64 {
    let width = WIDTH - 2.0 * LABEL_LEFT;
    let y = svg.paragraph((LABEL_LEFT, 26.0), title, width, Text::new(TITLE_SIZE).bold());
    svg.paragraph((LABEL_LEFT, y - 2.0), subtitle, width, Text::new(TEXT_SIZE).color(MUTED))
}

fn default_entry(case: &Case) -> Option<Entry> {
    case.default.map(|k| Entry {
        shape: Shape::Dot,
        color: DEFAULT,
        label: format!("{k} ({})", case.default_role),
    })
}

fn best_entry() -> Entry {
    Entry {
        shape: Shape::HollowDiamond,
        color: BEST,
        label: format!("{BEST_OF_OURS} (fastest of ours on the input)"),
    }
}

fn reference_entries(case: &Case) -> Vec<Entry> {
    case.references()
        .into_iter()
        .map(|k| Entry {
            shape: Shape::Tick,
            color: REFERENCE,
            label: format!("{k}: for scale, not a competitor"),
        })
        .collect()
}

/// The default kernel's and the best of ours's points of a row (the best as an outline, around
/// the default's dot where they are the same kernel).
fn ours_points(case: &Case, input: &str, value: fn(&Row) -> Option<f64>) -> Vec<Point> {
    let mut points = Vec::new();
    if let Some(v) = case.default.and_then(|k| case.find(input, k)).and_then(value) {
        points.push(Point::new(v, 0, Shape::Dot, DEFAULT, 5.0));
    }
    if let Some(v) = case.best(input).and_then(value) {
        points.push(Point::new(v, 0, Shape::HollowDiamond, BEST, 6.5));
    }
    points
}

fn reference_points(case: &Case, input: &str, value: fn(&Row) -> Option<f64>) -> Vec<Point> {
    case.references()
        .iter()
        .filter_map(|k| Some((k, case.find(input, k).and_then(value)?)))
        .map(|(k, v)| Point { label: Some(k.to_string()), ..Point::new(v, 0, Shape::Tick, REFERENCE, 6.0) })
        .collect()
}

/// The range of the highlighted values, with 1.0 in it.
fn ratio_scale(values: &[f64]) -> Scale {
    let low = values.iter().copied().fold(1.0, f64::min);
    let high = values.iter().copied().fold(1.0, f64::max);
    let (lo, hi) = log_range(low.min(0.8), high.max(1.25));
    Scale { lo, hi, log: true, from: 0.0, to: 1.0 }
}

fn vs_vendor(case: &Case, title: &str) -> String {
    let inputs: Vec<&str> = case.inputs.iter().copied().filter(|i| case.vendor(i).is_some()).collect();
    let missing: Vec<&str> = case.inputs.iter().copied().filter(|i| case.vendor(i).is_none()).collect();
    let ratio_of = |r: &Row| r.vs_vendor;
    let highlighted: Vec<f64> = inputs
        .iter()
        .flat_map(|i| {
            let mut v: Vec<f64> = ours_points(case, i, ratio_of).iter().map(|p| p.value).collect();
            v.extend(reference_points(case, i, ratio_of).iter().map(|p| p.value));
            v
        })
        .collect();
    let scale = ratio_scale(&highlighted);
    let cpu_kernels = case.kernels_of_kind("cpu");
    let row = |input: &str| {
        let (label, sub) = case.input_row(input);
        let mut points = reference_points(case, input, ratio_of);
        if let Some(cpu) = case.fastest_cpu(input).and_then(|r| r.vs_vendor) {
            let mut point = Point::new(cpu, 1, Shape::Square, CPU[0], 4.5);
            point.off_axis_label = Some(ratio(cpu));
            points.push(point);
        }
        points.extend(ours_points(case, input, ratio_of));
        let text = |r: Option<&Row>| r.and_then(|r| r.vs_vendor).map_or("–".to_string(), ratio);
        DotRow {
            label,
            sub,
            points,
            texts: vec![text(case.default.and_then(|k| case.find(input, k))), text(case.best(input))],
        }
    };
    let cpu_label = match cpu_kernels.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        many => Some(format!("fastest CPU kernel ({})", many.join(", "))),
    };
    let mut notes = vec![];
    if !missing.is_empty() {
        notes.push(format!("Not shown, no vendor row: {}.", missing.join(", ")));
    }
    let vendor = case.vendor_phrase();
    let time = if is_solver(&case.rows) { "time to solution" } else { "time" };
    let plot = DotPlot {
        title: title.to_string(),
        subtitle: format!(
            "The vendor's {time} / ours, per input (log scale): right of the 1.0 line is faster than {vendor}. \
             Columns: the ratios of the default kernel and of the best of ours; CPU points left of the axis \
             carry their ratio."
        ),
        legend: vec![
            ("Ours", default_entry(case).into_iter().chain([best_entry()]).collect()),
            (
                "CPU",
                cpu_label
                    .map(|l| Entry { shape: Shape::Square, color: CPU[0], label: l })
                    .into_iter()
                    .collect(),
            ),
            ("Reference", reference_entries(case)),
            (
                "Lines",
                vec![Entry { shape: Shape::Line, color: INK, label: "1.0: as fast as the vendor".into() }],
            ),
        ],
        columns: vec![("default", DEFAULT), (BEST_OF_OURS, BEST)],
        panels: vec![Panel {
            heading: None,
            scale,
            axis: format!(
                "{} {time} / {time} (log scale; higher is faster)",
                vendor_library(case.baselines[0])
            ),
            lines: vec![VLine { at: 1.0, color: INK, dash: None, label: "1.0 = vendor".into() }],
            groups: grouped(&inputs, &row),
        }],
        notes,
    };
    plot.draw()
}

/// Marks of the vendor's and the CPU's kernels: distinct colours and shapes.
type Marks<'a> = Vec<(&'a str, Shape, &'static str)>;

fn other_marks<'a>(case: &Case<'a>) -> (Marks<'a>, Marks<'a>) {
    let vendor_shapes = [Shape::Cross, Shape::Plus, Shape::TriangleDown];
    let cpu_shapes = [Shape::Square, Shape::Triangle, Shape::Diamond, Shape::TriangleDown];
    let vendor = case
        .kernels_of_kind("vendor")
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, vendor_shapes[i % 3], VENDOR[i % VENDOR.len()]))
        .collect();
    let cpu = case
        .kernels_of_kind("cpu")
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, cpu_shapes[i % 4], CPU[i % CPU.len()]))
        .collect();
    (vendor, cpu)
}

fn gflops(case: &Case, title: &str) -> String {
    let (vendor, cpu) = other_marks(case);
    let rate = |r: &Row| (r.gflops > 0.0).then_some(r.gflops);
    let row = |input: &str| {
        let (label, sub) = case.input_row(input);
        let mut points: Vec<Point> = case
            .of_input(input)
            .filter(|r| r.is_ours() && Some(r.record.kernel.as_str()) != case.default)
            .filter_map(rate)
            .map(|v| Point::new(v, 0, Shape::Dot, GREY, 3.0))
            .collect();
        let others = vendor.iter().map(|m| (m, -1)).chain(cpu.iter().map(|m| (m, 1)));
        for (&(name, shape, color), lane) in others {
            if let Some(v) = case.find(input, name).and_then(rate) {
                points.push(Point::new(v, lane, shape, color, 4.5));
            }
        }
        points.extend(reference_points(case, input, rate));
        points.extend(ours_points(case, input, rate));
        DotRow { label, sub, points, texts: vec![] }
    };
    // The axis spans the highlighted kernels; our other kernels below it sit at its left end.
    let highlighted: Vec<f64> = case
        .rows
        .iter()
        .filter(|r| !r.is_ours() || Some(r.record.kernel.as_str()) == case.default)
        .filter_map(|r| rate(r))
        .chain(case.inputs.iter().filter_map(|i| case.best(i).and_then(rate)))
        .collect();
    let ours_all: Vec<f64> = case.rows.iter().filter(|r| r.is_ours()).filter_map(|r| rate(r)).collect();
    let low = highlighted.iter().copied().fold(f64::MAX, f64::min);
    let high = highlighted.iter().chain(&ours_all).copied().fold(0.0, f64::max);
    let (lo, hi) = log_range(low, high);
    let below = ours_all.iter().filter(|v| **v < lo).count();
    let mut ours = default_entry(case).into_iter().collect::<Vec<_>>();
    ours.push(best_entry());
    ours.push(Entry { shape: Shape::Dot, color: GREY, label: "our other kernels".into() });
    if below > 0 {
        ours.push(Entry { shape: Shape::LeftArrow, color: GREY, label: "off the axis, slower".into() });
    }
    let label_of = |k: &str| {
        if case.baselines.contains(&k) || case.baselines.is_empty() || is_baseline(case.operation, k) {
            k.to_string()
        } else {
            format!("{k} (not compared with)")
        }
    };
    let plot = DotPlot {
        title: title.to_string(),
        subtitle: "Useful floating-point operations / time (log scale; right is faster). In each row the \
                   vendor's kernels sit above the middle line, ours on it, the CPU's below."
            .into(),
        legend: vec![
            ("Ours", ours),
            (
                "Vendor",
                vendor
                    .iter()
                    .map(|(k, shape, color)| Entry { shape: *shape, color, label: label_of(k) })
                    .collect(),
            ),
            (
                "CPU",
                cpu.iter()
                    .map(|(k, shape, color)| Entry { shape: *shape, color, label: k.to_string() })
                    .collect(),
            ),
            ("Reference", reference_entries(case)),
        ],
        columns: vec![],
        panels: vec![Panel {
            heading: None,
            scale: Scale { lo, hi, log: true, from: 0.0, to: 1.0 },
            axis: "GFLOPS (log scale)".into(),
            lines: vec![],
            groups: grouped(&case.inputs, &row),
        }],
        notes: vec![],
    };
    plot.draw()
}

fn bandwidth(case: &Case, title: &str, copy: &Copy) -> (String, Vec<String>) {
    let gbps = |r: &Row| r.gbps;
    // The bytes of an input: its vendor row's, else any GPU row's (one count per input).
    let input_bytes = |input: &str| {
        case.vendor(input)
            .and_then(|r| r.bytes)
            .or_else(|| case.of_input(input).filter(|r| r.is_ours()).find_map(|r| r.bytes))
    };
    let gpu_inputs: Vec<&str> = case
        .inputs
        .iter()
        .copied()
        .filter(|i| case.of_input(i).any(|r| r.record.kind != "cpu" && r.gbps.is_some()))
        .collect();
    let fits = |input: &str| copy.l2_bytes.zip(input_bytes(input)).is_some_and(|(l2, b)| b < l2);
    let (small, large): (Vec<&str>, Vec<&str>) = gpu_inputs.iter().partition(|i| fits(i));

    let mut notes = Vec::new();
    let mut above: Vec<(String, String)> = Vec::new();
    let row = |input: &str| {
        let (label, sub) = case.input_row(input);
        let sub = match (sub, input_bytes(input)) {
            (Some(s), Some(b)) => Some(format!("{s}; {}", bytes(b))),
            (None, Some(b)) => Some(bytes(b)),
            (s, None) => s,
        };
        let mut points: Vec<Point> = case
            .of_input(input)
            .filter(|r| r.is_ours() && Some(r.record.kernel.as_str()) != case.default)
            .filter_map(gbps)
            .map(|v| Point::new(v, 0, Shape::Dot, GREY, 3.0))
            .collect();
        if let Some(v) = case.vendor(input).and_then(gbps) {
            points.push(Point::new(v, -1, Shape::Cross, VENDOR[0], 4.5));
        }
        points.extend(reference_points(case, input, gbps));
        points.extend(ours_points(case, input, gbps));
        for r in case.of_input(input).filter(|r| r.record.kind != "cpu") {
            if let Some(v) = r.gbps.filter(|v| *v > copy.gbps) {
                points.push(Point::new(v, 0, Shape::HollowDiamond, ROOFLINE, 9.0));
            }
        }
        let share = case
            .default
            .and_then(|k| case.find(input, k))
            .and_then(|r| r.percent_of_copy)
            .map_or("–".to_string(), percent);
        DotRow { label, sub, points, texts: vec![share] }
    };
    for input in &gpu_inputs {
        for r in case.of_input(input).filter(|r| r.record.kind != "cpu") {
            let Some(v) = r.gbps.filter(|v| *v > copy.gbps) else { continue };
            let share = percent(100.0 * v / copy.gbps);
            // The format's own count, where it moves fewer bytes than the CSR minimum.
            let own = r.record.min_bytes;
            let own_share = 100.0 * own / (r.record.time_ms * 1e6) / copy.gbps;
            let why = match (input_bytes(input), copy.l2_bytes) {
                (Some(b), _) if own > 0.0 && own < b && own_share <= 100.0 => format!(
                    "explained: its format moves fewer bytes than the CSR minimum ({} against {}), {} of \
                     copy by its own count",
                    bytes(own),
                    bytes(b),
                    percent(own_share)
                ),
                (Some(b), Some(l2)) if b < l2 => format!(
                    "explained: the input's {} fit in the {} L2, which serves repeated reads faster than DRAM",
                    bytes(b),
                    bytes(l2)
                ),
                (Some(b), _) => format!(
                    "FLAGGED: the input's {} do not fit in the L2, so the byte count or the timing is suspect",
                    bytes(b)
                ),
                _ => "FLAGGED: no byte count to check".into(),
            };
            above.push((
                format!("{} on {input}", r.record.kernel),
                format!("{} GB/s, {share} of copy: {why}", number(v)),
            ));
        }
    }
    if !above.is_empty() {
        let list: Vec<String> = above.iter().map(|(who, what)| format!("{who}: {what}")).collect();
        notes.push(format!("Above the copy roofline (red outline): {}.", list.join("; ")));
    }

    let copy_lines = |share: bool| {
        let mut lines = vec![VLine {
            at: copy.gbps,
            color: ROOFLINE,
            dash: None,
            label: format!("copy {} GB/s", number(copy.gbps)),
        }];
        if share {
            lines.push(VLine {
                at: copy.gbps * ROOFLINE_SHARE,
                color: ROOFLINE,
                dash: Some("6 4"),
                label: format!("{:.0}%", 100.0 * ROOFLINE_SHARE),
            });
        }
        lines
    };
    let high =
        case.rows.iter().filter(|r| r.record.kind != "cpu").filter_map(|r| r.gbps).fold(copy.gbps, f64::max);
    let mut panels = Vec::new();
    if !large.is_empty() {
        let (lo, hi) = linear_range(high * 1.04);
        panels.push(Panel {
            heading: (!small.is_empty())
                .then(|| format!("Inputs larger than the {} L2", copy.l2_bytes.map_or(String::new(), bytes))),
            scale: Scale { lo, hi, log: false, from: 0.0, to: 1.0 },
            axis: "effective GB/s (higher is faster)".into(),
            lines: copy_lines(true),
            groups: grouped(&large, &row),
        });
    }
    if !small.is_empty() {
        // From the highlighted points: our other kernels below sit at the axis's left end.
        let low = small
            .iter()
            .flat_map(|i| {
                let mut rows: Vec<&Row> = case.of_input(i).filter(|r| !r.is_ours()).collect();
                rows.extend(case.best(i));
                rows.extend(case.default.and_then(|k| case.find(i, k)));
                rows.into_iter().filter(|r| r.record.kind != "cpu").filter_map(|r| r.gbps).collect::<Vec<_>>()
            })
            .fold(f64::MAX, f64::min);
        let (lo, hi) = log_range(low, high);
        panels.push(Panel {
            heading: Some(format!(
                "Inputs that fit in the {} L2 (log scale): bound by launch latency, not by DRAM",
                copy.l2_bytes.map_or(String::new(), bytes)
            )),
            scale: Scale { lo, hi, log: true, from: 0.0, to: 1.0 },
            axis: "effective GB/s (log scale)".into(),
            lines: copy_lines(false),
            groups: grouped(&small, &row),
        });
    }
    let what = if case.operation == "spmv" {
        "the input's CSR minimum bytes (values and column indices, row pointers, x and y once; the same \
         count for every format, so a faster kernel is always further right)"
    } else {
        "the bytes a run must move at least"
    };
    let mut ours = default_entry(case).into_iter().collect::<Vec<_>>();
    ours.push(best_entry());
    ours.push(Entry { shape: Shape::Dot, color: GREY, label: "our other kernels".into() });
    let plot = DotPlot {
        title: title.to_string(),
        subtitle: format!(
            "GB/s = {what} / time. Red line: the measured device-to-device copy; dashed: {:.0}% of it. \
             Column: the default kernel's share of the copy bandwidth.",
            100.0 * ROOFLINE_SHARE
        ),
        legend: vec![
            ("Ours", ours),
            (
                "Vendor",
                vec![Entry {
                    shape: Shape::Cross,
                    color: VENDOR[0],
                    label: match case.baselines.as_slice() {
                        [one] => one.to_string(),
                        many => format!("the faster of {} on each input", many.join(" and ")),
                    },
                }],
            ),
            ("Reference", reference_entries(case)),
        ],
        columns: vec![("% of copy", DEFAULT)],
        panels,
        notes: notes.clone(),
    };
    (plot.draw(), notes)
}

// ---------------------------------------------------------------------------------------
// Dense operations: TFLOPS against n.

fn throughput(case: &Case, title: &str, device: &str) -> String {
    let mut svg = Svg::new(WIDTH);
    let (left, right) = (78.0, WIDTH - 200.0);
    let subtitle = "Useful floating-point operations / time (higher is faster), square matrices of order n; \
                    ticks at the measured n. The vendor's line is dashed.";
    let mut y = title_and_subtitle(&mut svg, title, subtitle);
    let tflops = |r: &Row| r.gflops / 1e3;
    let series_of = |kernel: &str| -> Vec<(f64, f64)> {
        let mut points: Vec<(f64, f64)> = case
            .rows
            .iter()
            .filter(|r| r.record.kernel == kernel && r.gflops > 0.0)
            .filter_map(|r| Some((size_of_input(&r.record.input)?, tflops(r))))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        points
    };
    let (vendor, cpu) = other_marks(case);
    let ours: Vec<&str> = case.kernels_of_kind("gpu");
    let best: Vec<(f64, f64)> =
        case.inputs.iter().filter_map(|i| Some((size_of_input(i)?, tflops(case.best(i)?)))).collect();
    let high = case.rows.iter().map(|r| tflops(r)).fold(0.0, f64::max);
    let peak = peak_tflops(device, case.precision);
    // The peak stretches the axis only where the data would still fill a good part of it.
    let peak_on_axis = peak.filter(|(p, _)| *p <= 2.5 * high);
    let (_, y_hi) = linear_range(peak_on_axis.map_or(high, |(p, _)| p.max(high)) * 1.06);

    let mut groups: Vec<(&str, Vec<Entry>)> = vec![(
        "Ours",
        default_entry(case)
            .into_iter()
            .chain([
                best_entry(),
                Entry { shape: Shape::Line, color: GREY, label: "our other kernels".into() },
            ])
            .collect(),
    )];
    groups.push((
        "Vendor",
        vendor
            .iter()
            .map(|(k, _, c)| Entry { shape: Shape::DashedLine, color: c, label: k.to_string() })
            .collect(),
    ));
    groups.push((
        "CPU",
        cpu.iter().map(|(k, s, c)| Entry { shape: *s, color: c, label: k.to_string() }).collect(),
    ));
    if let Some((p, what)) = peak_on_axis {
        let label = format!("{what} of the device, {} TFLOPS", axis_label(p));
        groups.push(("Lines", vec![Entry { shape: Shape::DashedLine, color: PEAK, label }]));
    }
    y = legend(&mut svg, y + 8.0, &groups);
    if let (Some((p, what)), None) = (peak, peak_on_axis) {
        y = svg.paragraph(
            (LABEL_LEFT, y + 4.0),
            &format!(
                "The {what} of this device, {} TFLOPS, is above this axis: the fastest here reaches {} TFLOPS ({}).",
                axis_label(p),
                number(high),
                percent(100.0 * high / p)
            ),
            WIDTH - 2.0 * LABEL_LEFT,
            Text::new(TEXT_SIZE).color(PEAK),
        );
    }
    let (top, bottom) = (y + 14.0, y + 14.0 + 380.0);
    let sizes: Vec<f64> = case.inputs.iter().filter_map(|i| size_of_input(i)).collect();
    let (n_lo, n_hi) =
        (sizes.iter().copied().fold(f64::MAX, f64::min), sizes.iter().copied().fold(0.0, f64::max));
    // A log axis where n spans more than a decade, so that the small n keep their room.
    let x = if n_hi > 12.0 * n_lo {
        Scale { lo: n_lo / 1.08, hi: n_hi * 1.08, log: true, from: left, to: right }
    } else {
        let pad = ((n_hi - n_lo) * 0.04).max(1.0);
        Scale { lo: n_lo - pad, hi: n_hi + pad, log: false, from: left, to: right }
    };
    let yscale = Scale { lo: 0.0, hi: y_hi, log: false, from: bottom, to: top };

    for t in yscale.ticks(8) {
        let py = yscale.px(t);
        svg.line((left, py), (right, py), Stroke::new(GRID, 1.0));
        svg.text((left - 8.0, py + 4.0), &axis_label(t), Text::new(SMALL_SIZE).anchor("end").color(MUTED));
    }
    let mut last_label_x = f64::MIN;
    let mut stagger = false;
    for &n in &sizes {
        let px = x.px(n);
        svg.line((px, top), (px, bottom), Stroke::new(GRID, 1.0));
        svg.line((px, bottom), (px, bottom + 4.0), Stroke::new(MUTED, 1.0));
        let label = format!("{n:.0}");
        stagger = px - last_label_x < text_width(&label, SMALL_SIZE) + 8.0 && !stagger;
        let ly = bottom + 17.0 + if stagger { 14.0 } else { 0.0 };
        svg.text((px, ly), &label, Text::new(SMALL_SIZE).anchor("middle").color(MUTED));
        if !stagger {
            last_label_x = px;
        }
    }
    svg.line((left, bottom), (right, bottom), Stroke::new(MUTED, 1.0));
    svg.line((left, top), (left, bottom), Stroke::new(MUTED, 1.0));
    let n_axis = if x.log { "n (log scale)" } else { "n" };
    svg.text(((left + right) / 2.0, bottom + 48.0), n_axis, Text::new(TEXT_SIZE).anchor("middle"));
    svg.vertical_text((26.0, (top + bottom) / 2.0), "TFLOPS", Text::new(TEXT_SIZE).anchor("middle"));

    // Lines: our other kernels, the CPU, the vendor, the default, then the best of ours.
    let to_px =
        |points: &[(f64, f64)]| points.iter().map(|(n, t)| (x.px(*n), yscale.px(*t))).collect::<Vec<_>>();
    for kernel in ours.iter().filter(|k| Some(**k) != case.default) {
        let points = to_px(&series_of(kernel));
        svg.polyline(&points, Stroke::new(GREY, 1.2));
        for p in &points {
            svg.mark(Shape::Dot, *p, 2.2, GREY);
        }
    }
    for (kernel, shape, color) in &cpu {
        let points = to_px(&series_of(kernel));
        svg.polyline(&points, Stroke::new(color, 1.2));
        for p in &points {
            svg.mark(*shape, *p, 3.5, color);
        }
    }
    let mut end_labels: Vec<(f64, String, &str)> = Vec::new();
    for (kernel, shape, color) in &vendor {
        let data = series_of(kernel);
        let points = to_px(&data);
        svg.polyline(&points, Stroke::new(color, 2.0).dashed("7 4"));
        for p in &points {
            svg.mark(*shape, *p, 4.5, color);
        }
        if let (Some(p), Some(d)) = (points.last(), data.last()) {
            end_labels.push((p.1, format!("{} {}", vendor_library(kernel), number(d.1)), color));
        }
    }
    if let Some(kernel) = case.default {
        let data = series_of(kernel);
        let points = to_px(&data);
        svg.polyline(&points, Stroke::new(DEFAULT, 2.8));
        for p in &points {
            svg.mark(Shape::Dot, *p, 4.5, DEFAULT);
        }
        if let (Some(p), Some(d)) = (points.last(), data.last()) {
            end_labels.push((p.1, format!("{kernel} {}", number(d.1)), DEFAULT));
        }
    }
    for p in to_px(&best) {
        svg.mark(Shape::HollowDiamond, p, 6.5, BEST);
    }
    if let Some((p, what)) = peak_on_axis {
        let py = yscale.px(p);
        svg.line((left, py), (right, py), Stroke::new(PEAK, 2.0).dashed("7 4"));
        svg.text(
            (left + 6.0, py - 6.0),
            &format!("{what}: {} TFLOPS", axis_label(p)),
            Text::new(TEXT_SIZE).color(PEAK),
        );
    }
    // End labels, nudged apart.
    end_labels.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut last = f64::MIN;
    for (py, label, color) in end_labels {
        let py = py.max(last + 16.0);
        svg.text((right + 10.0, py + 4.5), &label, Text::new(TEXT_SIZE).color(color));
        last = py;
    }
    svg.finish(bottom + 64.0, title)
}
