//! SVG plots, drawn with plotters' SVG backend and no font files (text is SVG `<text>`, which
//! the viewer renders):
//!
//! - `<op>-gflops-<precision>.svg`: GFLOPS per input and kernel, with the vendor line;
//! - `<op>-bandwidth-<precision>.svg`: effective bandwidth per input against the measured
//!   copy bandwidth (the roofline), for memory-bound operations;
//! - `<op>-throughput-<precision>.svg`: GFLOPS against n, for inputs named `n=<size>` (GEMM, LU).
//!
//! Inputs lie on a categorical x axis (one slot each, names wrapped below); a legend panel
//! on the right names every series.

use std::path::Path;

use anyhow::Result;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::rows::{BEST_OF_OURS, Copy, Headline, MEMORY_BOUND, ROOFLINE_SHARE, Row, distinct, operations};
use super::tables::number;

/// A plot written next to the summary.
pub struct Plot {
    pub operation: String,
    /// The file name, relative to the report folder.
    pub file: String,
    pub title: String,
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

const FONT: &str = "sans-serif";
/// Plotters writes SVG font sizes as these / 1.24: 15 is about 12 px on the page.
const TEXT_SIZE: f64 = 15.0;
const TITLE_SIZE: f64 = 22.0;
const LEGEND_WIDTH: u32 = 250;
const HEIGHT: u32 = 620;
/// Space under the plot for input names of up to three lines.
const X_LABEL_AREA: u32 = 70;

/// Every plot the rows have data for.
pub fn draw_all(rows: &[Row], headlines: &[Headline], copy: Option<&Copy>, out: &Path) -> Result<Vec<Plot>> {
    let mut plots = Vec::new();
    for operation in operations(rows) {
        let of_op: Vec<&Row> = rows.iter().filter(|r| r.record.operation == operation).collect();
        for precision in distinct(of_op.iter().map(|r| r.record.precision.as_str())) {
            // Log axes: a rate of zero (a record without flops) has no place on them.
            let case: Vec<&Row> =
                of_op.iter().copied().filter(|r| r.record.precision == precision && r.gflops > 0.0).collect();
            if case.is_empty() {
                continue;
            }
            let plot = |kind: &str, title: String| Plot {
                operation: operation.to_string(),
                file: format!("{operation}-{kind}-{precision}.svg"),
                title,
            };
            if case.iter().all(|r| size_of_input(&r.record.input).is_some()) {
                let p = plot("throughput", format!("{operation} {precision}: GFLOPS against n"));
                throughput_against_n(&case, &p.title, &out.join(&p.file))?;
                plots.push(p);
                continue;
            }
            let p = plot("gflops", format!("{operation} {precision}: GFLOPS per input and kernel"));
            gflops_per_input(&case, &p.title, &out.join(&p.file))?;
            plots.push(p);
            let headline = headlines.iter().find(|h| h.operation == operation && h.precision == precision);
            let has_gpu_rates = case.iter().any(|r| r.record.kind != "cpu" && r.gbps.is_some());
            if let (true, Some(copy), true) = (MEMORY_BOUND.contains(&operation), copy, has_gpu_rates) {
                let p = plot(
                    "bandwidth",
                    format!("{operation} {precision}: effective bandwidth against the copy roofline"),
                );
                let highlight = headline.and_then(|h| h.headline_kernel.as_deref());
                bandwidth_per_input(&case, copy, highlight, &p.title, &out.join(&p.file))?;
                plots.push(p);
            }
        }
    }
    Ok(plots)
}

/// The matrix size of inputs named like `n=4096`.
pub fn size_of_input(input: &str) -> Option<f64> {
    input.split_whitespace().find_map(|w| w.strip_prefix("n="))?.parse().ok()
}

/// How a series looks.
#[derive(Clone, Copy, PartialEq)]
enum Mark {
    Circle(RGBColor),
    Triangle(RGBColor),
    Square(RGBColor),
    Cross(RGBColor),
    /// A line, dashed or not, for lines that are not one kernel's points.
    Line(RGBColor, bool),
}

impl Mark {
    fn color(self) -> RGBColor {
        match self {
            Mark::Circle(c) | Mark::Triangle(c) | Mark::Square(c) | Mark::Cross(c) | Mark::Line(c, _) => c,
        }
    }

    /// Draws the mark centred at a pixel.
    fn draw(self, area: &Area, (x, y): (i32, i32), size: i32) -> Result<()> {
        let color = self.color();
        match self {
            Mark::Circle(_) => area.draw(&Circle::new((x, y), size, color.filled()))?,
            Mark::Triangle(_) => area.draw(&TriangleMarker::new((x, y), size + 1, color.filled()))?,
            Mark::Square(_) => {
                area.draw(&Rectangle::new([(x - size, y - size), (x + size, y + size)], color.filled()))?
            }
            Mark::Cross(_) => area.draw(&Cross::new((x, y), size, color.stroke_width(2)))?,
            Mark::Line(_, dashed) => {
                let points = [(x - 12, y), (x + 12, y)];
                if dashed {
                    area.draw(&DashedPathElement::new(points, 5, 3, color.stroke_width(2)))?
                } else {
                    area.draw(&PathElement::new(points, color.stroke_width(2)))?
                }
            }
        }
        Ok(())
    }
}

/// Distinct colours for our kernels (Tableau 20, dark shades first).
const PALETTE: [RGBColor; 18] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(174, 199, 232),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
    RGBColor(196, 156, 148),
    RGBColor(247, 182, 210),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
];
const VENDOR_COLORS: [RGBColor; 3] = [RGBColor(0, 0, 0), RGBColor(110, 110, 110), RGBColor(150, 40, 40)];
const CPU_COLORS: [RGBColor; 2] = [RGBColor(120, 120, 120), RGBColor(180, 180, 180)];
const ROOFLINE: RGBColor = RGBColor(200, 30, 30);

/// Each kernel's mark: ours by family (the name's first word sets the shape, colours cycle),
/// then the vendor's (crosses), then the CPU's (grey circles). Legend order.
fn kernel_marks(rows: &[&Row]) -> Vec<(String, Mark)> {
    let of_kind = |kind: &str| {
        distinct(rows.iter().filter(|r| r.record.kind == kind).map(|r| r.record.kernel.as_str()))
    };
    let ours = of_kind("gpu");
    let families = distinct(ours.iter().map(|k| k.split('-').next().unwrap_or(k)));
    let mut marks = Vec::new();
    for (i, kernel) in ours.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let family = families.iter().position(|f| kernel.starts_with(f)).unwrap_or(0);
        let mark = [Mark::Circle(color), Mark::Triangle(color), Mark::Square(color)][family % 3];
        marks.push((kernel.to_string(), mark));
    }
    for (i, kernel) in of_kind("vendor").iter().enumerate() {
        marks.push((kernel.to_string(), Mark::Cross(VENDOR_COLORS[i % VENDOR_COLORS.len()])));
    }
    for (i, kernel) in of_kind("cpu").iter().enumerate() {
        marks.push((kernel.to_string(), Mark::Circle(CPU_COLORS[i % CPU_COLORS.len()])));
    }
    marks
}

/// A chart's canvas: the whole image, the plotting part and the legend panel.
struct Canvas<'a> {
    root: Area<'a>,
    chart: Area<'a>,
    legend: Area<'a>,
}

impl<'a> Canvas<'a> {
    /// A canvas tall enough for a legend of `series` lines.
    fn new(path: &'a Path, plot_width: u32, series: usize, title: &str) -> Result<Canvas<'a>> {
        let height = HEIGHT.max(90 + 20 * series as u32);
        let root = SVGBackend::new(path, (plot_width + LEGEND_WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let body = root.titled(title, (FONT, TITLE_SIZE))?;
        let (chart, legend) = body.split_horizontally(plot_width);
        Ok(Canvas { root, chart, legend })
    }

    /// The legend: a title, then one line per series, top down.
    fn legend(&self, title: &str, entries: &[(String, Mark)]) -> Result<()> {
        let bold = TextStyle::from((FONT, TEXT_SIZE).into_font().style(FontStyle::Bold))
            .pos(Pos::new(HPos::Left, VPos::Center));
        self.legend.draw(&Text::new(title.to_string(), (14, 30), bold))?;
        let top = if title.is_empty() { 30 } else { 52 };
        for (i, (label, mark)) in entries.iter().enumerate() {
            let y = top + 20 * i as i32;
            mark.draw(&self.legend, (24, y), 4)?;
            let style = TextStyle::from((FONT, TEXT_SIZE)).pos(Pos::new(HPos::Left, VPos::Center));
            self.legend.draw(&Text::new(label.clone(), (44, y), style))?;
        }
        Ok(())
    }

    fn finish(&self) -> Result<()> {
        self.root.present()?;
        Ok(())
    }
}

/// A chart (borrowing a canvas for `'c`) with one slot per input on the x axis.
type SlotChart<'c, 'a, Y> =
    ChartContext<'c, SVGBackend<'a>, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>;

/// Narrow enough that a report page shows the plot without shrinking its text much.
fn slot_width(kernels: usize) -> u32 {
    (4 * kernels as u32 + 24).max(100)
}

/// Splits a name into lines of at most `width` characters at spaces, three lines at most.
fn wrap(name: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in name.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= width => *line += &format!(" {word}"),
            _ => lines.push(word.to_string()),
        }
    }
    if lines.len() > 3 {
        let rest = lines.split_off(2).join(" ");
        lines.push(rest);
    }
    lines
}

/// A log axis over whole decades around `low`..`high`, with room so that no point sits on
/// an edge (and widened a hair, so that the end decades get their labels).
fn decades(low: f64, high: f64) -> std::ops::Range<f64> {
    let low = if low > 0.0 { low } else { high / 1e3 };
    let bottom = (low / 1.2).log10().floor();
    let top = (high * 1.2).log10().ceil().max(bottom + 1.0);
    10f64.powf(bottom) * 0.999..10f64.powf(top) * 1.001
}

/// An axis label: 0.1, 1, 10, 2500 (no trailing zeros).
fn axis_label(v: &f64) -> String {
    let text = number(*v);
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

/// The row of `kernel` on `input`.
fn find<'r>(rows: &[&'r Row], input: &str, kernel: &str) -> Option<&'r Row> {
    rows.iter().copied().find(|r| r.record.input == input && r.record.kernel == kernel)
}

/// The vendor row that `input`'s rows are compared with (the fastest baseline).
fn vendor_row<'r>(rows: &[&'r Row], input: &str) -> Option<&'r Row> {
    let vendor = rows.iter().find(|r| r.record.input == input)?.vendor_kernel.as_deref()?;
    find(rows, input, vendor)
}

/// The fastest of `rows` on `input`.
fn fastest<'r>(rows: &[&'r Row], input: &str) -> Option<&'r Row> {
    rows.iter()
        .copied()
        .filter(|r| r.record.input == input)
        .min_by(|a, b| a.record.time_ms.total_cmp(&b.record.time_ms))
}

/// A figure of the row `pick` chooses on each input, at the input's slot.
fn per_input<'r>(
    inputs: &[&str],
    pick: impl Fn(&str) -> Option<&'r Row>,
    figure: fn(&Row) -> Option<f64>,
) -> Vec<(f64, f64)> {
    inputs.iter().enumerate().filter_map(|(i, input)| Some((i as f64, figure(pick(input)?)?))).collect()
}

/// Where the `j`th of `m` kernels sits in its slot: each keeps its place in every slot, so
/// the eye can follow it.
fn slot_offset(j: usize, m: usize) -> f64 {
    -0.4 + 0.8 * (j as f64 + 0.5) / m as f64
}

/// A chart with one slot per input on the x axis and `y` up: its mesh, the slot separators
/// and the input names (wrapped to the slot) under it.
fn slot_chart<'c, 'a, Y>(
    canvas: &'c Canvas<'a>,
    inputs: &[&str],
    slot: u32,
    y: Y,
    y_desc: &str,
) -> Result<SlotChart<'c, 'a, Y::CoordDescType>>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(&canvas.chart)
        .margin(15)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..inputs.len() as f64 - 0.5, y)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(y_desc)
        .y_label_formatter(&axis_label)
        .label_style((FONT, TEXT_SIZE))
        .axis_desc_style((FONT, TEXT_SIZE))
        .max_light_lines(4)
        .draw()?;
    let (y_low, y_high) = (chart.y_range().start, chart.y_range().end);
    for i in 1..inputs.len() {
        let x = i as f64 - 0.5;
        chart.plotting_area().draw(&PathElement::new([(x, y_low), (x, y_high)], RGBColor(225, 225, 225)))?;
    }
    let style = TextStyle::from((FONT, TEXT_SIZE)).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, input) in inputs.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64, y_low));
        for (line, text) in wrap(input, (slot / 8).max(8) as usize).into_iter().enumerate() {
            canvas.root.draw(&Text::new(text, (x, y + 8 + 15 * line as i32), style.clone()))?;
        }
    }
    Ok(chart)
}

fn gflops_per_input(rows: &[&Row], title: &str, path: &Path) -> Result<()> {
    let inputs = distinct(rows.iter().map(|r| r.record.input.as_str()));
    let marks = kernel_marks(rows);
    let slot = slot_width(marks.len());
    let canvas = Canvas::new(path, 100 + slot * inputs.len() as u32, marks.len() + 1, title)?;
    let low = rows.iter().map(|r| r.gflops).fold(f64::MAX, f64::min);
    let high = rows.iter().map(|r| r.gflops).fold(0.0, f64::max);
    let y = decades(low, high).log_scale();
    let mut chart = slot_chart(&canvas, &inputs, slot, y, "GFLOPS (log scale, higher is better)")?;

    let vendor = per_input(&inputs, |input| vendor_row(rows, input), |r| Some(r.gflops));
    chart.draw_series(LineSeries::new(vendor.iter().copied(), BLACK.stroke_width(1)))?;
    for &(x, y) in &vendor {
        chart.draw_series(LineSeries::new([(x - 0.45, y), (x + 0.45, y)], BLACK.stroke_width(2)))?;
    }
    for (j, (kernel, mark)) in marks.iter().enumerate() {
        for (i, input) in inputs.iter().enumerate() {
            if let Some(row) = find(rows, input, kernel) {
                let at = (i as f64 + slot_offset(j, marks.len()), row.gflops);
                mark.draw(&canvas.root, chart.backend_coord(&at), 4)?;
            }
        }
    }
    let mut legend = marks;
    if !vendor.is_empty() {
        legend.push(("line: fastest vendor baseline".to_string(), Mark::Line(BLACK, false)));
    }
    canvas.legend("in each slot, left to right:", &legend)?;
    canvas.finish()
}

fn bandwidth_per_input(
    rows: &[&Row],
    copy: &Copy,
    highlight: Option<&str>,
    title: &str,
    path: &Path,
) -> Result<()> {
    let inputs = distinct(rows.iter().map(|r| r.record.input.as_str()));
    let ours: Vec<&Row> = rows.iter().copied().filter(|r| r.record.kind == "gpu").collect();
    let kernels = distinct(ours.iter().map(|r| r.record.kernel.as_str()));
    let slot = slot_width(kernels.len());
    let canvas = Canvas::new(path, 100 + slot * inputs.len() as u32, 6, title)?;
    let high = rows.iter().filter_map(|r| r.gbps).fold(copy.gbps, f64::max) * 1.12;
    let mut chart =
        slot_chart(&canvas, &inputs, slot, 0.0..high, "effective GB/s (minimum bytes moved / time)")?;

    // The roofline and the share that counts as reaching it.
    let (left, right) = (-0.5, inputs.len() as f64 - 0.5);
    let share = copy.gbps * ROOFLINE_SHARE;
    chart.draw_series(LineSeries::new([(left, copy.gbps), (right, copy.gbps)], ROOFLINE.stroke_width(2)))?;
    chart.draw_series(DashedLineSeries::new(
        [(left, share), (right, share)],
        6,
        4,
        ROOFLINE.stroke_width(1),
    ))?;

    // Every kernel of ours as a faint dot, at its place in the slot.
    let faint = Mark::Circle(RGBColor(200, 200, 200));
    for (j, kernel) in kernels.iter().enumerate() {
        for (i, input) in inputs.iter().enumerate() {
            if let Some(gbps) = find(&ours, input, kernel).and_then(|r| r.gbps) {
                let at = (i as f64 + slot_offset(j, kernels.len()), gbps);
                faint.draw(&canvas.root, chart.backend_coord(&at), 3)?;
            }
        }
    }
    // Then the lines that tell the story: the vendor, the best of ours, the headline kernel.
    let gbps = |r: &Row| r.gbps;
    let vendor = per_input(&inputs, |input| vendor_row(rows, input), gbps);
    let best = per_input(&inputs, |input| fastest(&ours, input), gbps);
    let mut series = vec![
        ("fastest vendor baseline".to_string(), Mark::Cross(BLACK), vendor),
        (format!("{BEST_OF_OURS} (fastest per input)"), Mark::Triangle(PALETTE[1]), best),
    ];
    if let Some(kernel) = highlight {
        series.push((
            kernel.to_string(),
            Mark::Circle(PALETTE[0]),
            per_input(&inputs, |input| find(&ours, input, kernel), gbps),
        ));
    }
    for (_, mark, points) in &series {
        chart.draw_series(LineSeries::new(points.iter().copied(), mark.color().stroke_width(1)))?;
        for point in points {
            mark.draw(&canvas.root, chart.backend_coord(point), 5)?;
        }
    }
    let roof_label =
        TextStyle::from((FONT, TEXT_SIZE)).color(&ROOFLINE).pos(Pos::new(HPos::Left, VPos::Bottom));
    let (x, y) = chart.backend_coord(&(left, copy.gbps));
    canvas.root.draw(&Text::new(format!("copy {} GB/s", number(copy.gbps)), (x + 6, y - 3), roof_label))?;

    let mut legend: Vec<(String, Mark)> = series.into_iter().map(|(label, mark, _)| (label, mark)).collect();
    legend.push(("other kernels of ours".to_string(), faint));
    legend.push(("device-to-device copy".to_string(), Mark::Line(ROOFLINE, false)));
    legend.push((format!("{:.0}% of copy", 100.0 * ROOFLINE_SHARE), Mark::Line(ROOFLINE, true)));
    canvas.legend("", &legend)?;
    canvas.finish()
}

fn throughput_against_n(rows: &[&Row], title: &str, path: &Path) -> Result<()> {
    let marks = kernel_marks(rows);
    let sizes: Vec<f64> = rows.iter().filter_map(|r| size_of_input(&r.record.input)).collect();
    let (n_low, n_high) =
        (sizes.iter().copied().fold(f64::MAX, f64::min), sizes.iter().copied().fold(0.0, f64::max));
    let low = rows.iter().map(|r| r.gflops).fold(f64::MAX, f64::min);
    let high = rows.iter().map(|r| r.gflops).fold(0.0, f64::max);
    let canvas = Canvas::new(path, 760, marks.len(), title)?;
    let mut chart = ChartBuilder::on(&canvas.chart)
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (n_low / 1.5..n_high * 1.5).log_scale().base(2.0),
            decades(low, high).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("n (log scale)")
        .x_max_light_lines(0)
        .y_desc("GFLOPS (log scale, higher is better)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&axis_label)
        .label_style((FONT, TEXT_SIZE))
        .axis_desc_style((FONT, TEXT_SIZE))
        .draw()?;
    for (kernel, mark) in &marks {
        let mut points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| &r.record.kernel == kernel)
            .filter_map(|r| Some((size_of_input(&r.record.input)?, r.gflops)))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let style = mark.color().stroke_width(2);
        if matches!(mark, Mark::Cross(_)) {
            chart.draw_series(DashedLineSeries::new(points.iter().copied(), 6, 4, style))?;
        } else {
            chart.draw_series(LineSeries::new(points.iter().copied(), style))?;
        }
        for point in &points {
            mark.draw(&canvas.root, chart.backend_coord(point), 4)?;
        }
    }
    canvas.legend("", &marks)?;
    canvas.finish()
}
