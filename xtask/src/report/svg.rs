//! A small SVG writer for the report's plots: text, lines, markers and axes, in pixels of an
//! image meant to be shown at its own width (the summary embeds it at most 880 px wide), so
//! that a font size here is the size on the page. No font files: text is SVG `<text>`.

use std::fmt::Write;

use super::tables::number;

/// The page's width: what Markdown viewers show without scaling down.
pub const WIDTH: f64 = 860.0;
pub const FONT: &str = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif";
pub const TITLE_SIZE: f64 = 17.0;
pub const TEXT_SIZE: f64 = 13.0;
pub const SMALL_SIZE: f64 = 12.0;

pub const INK: &str = "#222222";
pub const MUTED: &str = "#666666";
pub const GRID: &str = "#e4e4e4";
pub const STRIPE: &str = "#f5f5f5";
/// Our kernels that are neither the default nor the best.
pub const GREY: &str = "#b4b4b4";
pub const DEFAULT: &str = "#1f63b4";
pub const BEST: &str = "#e8710a";
pub const REFERENCE: &str = "#c0392b";
pub const ROOFLINE: &str = "#d62728";
pub const PEAK: &str = "#7b3294";
/// Vendor kernels: black first, then dark distinct colours.
pub const VENDOR: [&str; 3] = ["#000000", "#8c564b", "#7f3c8d"];
/// CPU kernels: greens and teals, distinct from ours and the vendor's.
pub const CPU: [&str; 4] = ["#2ca02c", "#17a2b8", "#6b8e23", "#20b2aa"];

/// A text's look.
#[derive(Clone, Copy)]
pub struct Text<'a> {
    pub size: f64,
    pub anchor: &'a str,
    pub bold: bool,
    pub color: &'a str,
}

impl<'a> Text<'a> {
    pub fn new(size: f64) -> Text<'a> {
        Text { size, anchor: "start", bold: false, color: INK }
    }
    pub fn anchor(self, anchor: &'a str) -> Text<'a> {
        Text { anchor, ..self }
    }
    pub fn bold(self) -> Text<'a> {
        Text { bold: true, ..self }
    }
    pub fn color(self, color: &'a str) -> Text<'a> {
        Text { color, ..self }
    }
}

/// A line's look.
#[derive(Clone, Copy)]
pub struct Stroke<'a> {
    pub color: &'a str,
    pub width: f64,
    /// An SVG dash array, e.g. "6 4".
    pub dash: Option<&'a str>,
}

impl<'a> Stroke<'a> {
    pub fn new(color: &'a str, width: f64) -> Stroke<'a> {
        Stroke { color, width, dash: None }
    }
    pub fn dashed(self, dash: &'a str) -> Stroke<'a> {
        Stroke { dash: Some(dash), ..self }
    }
}

/// A marker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Dot,
    Diamond,
    /// An outline, drawn over a filled mark of the same place (the best of ours around the
    /// default kernel where they are the same).
    HollowDiamond,
    Square,
    Triangle,
    TriangleDown,
    Cross,
    Plus,
    /// A point beyond the axis's left end.
    LeftArrow,
    /// A vertical dashed tick across a row: a reference value.
    Tick,
    /// A short horizontal line (legend entries of lines).
    Line,
    DashedLine,
}

/// Width estimate of a text: DejaVu Sans averages about 0.6 em a character.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.6
}

/// Splits text into lines of at most `width` pixels at spaces.
pub fn wrap(text: &str, width: f64, size: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), size) <= width => {
                *line += &format!(" {word}")
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub struct Svg {
    pub width: f64,
    body: String,
}

impl Svg {
    pub fn new(width: f64) -> Svg {
        Svg { width, body: String::new() }
    }

    pub fn text(&mut self, (x, y): (f64, f64), text: &str, style: Text) {
        let weight = if style.bold { " font-weight=\"bold\"" } else { "" };
        let _ = writeln!(
            self.body,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\"{weight}>{}</text>",
            style.size,
            style.anchor,
            style.color,
            escape(text)
        );
    }

    /// Text turned a quarter to the left, reading upwards (a vertical axis's title).
    pub fn vertical_text(&mut self, (x, y): (f64, f64), text: &str, style: Text) {
        let _ = writeln!(
            self.body,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\" \
             transform=\"rotate(-90 {x:.1} {y:.1})\">{}</text>",
            style.size,
            style.anchor,
            style.color,
            escape(text)
        );
    }

    /// Text in lines of at most `width` pixels; returns the y below the last line.
    pub fn paragraph(&mut self, (x, y): (f64, f64), text: &str, width: f64, style: Text) -> f64 {
        let step = style.size * 1.35;
        let mut y = y;
        for line in wrap(text, width, style.size) {
            self.text((x, y), &line, style);
            y += step;
        }
        y
    }

    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: Stroke) {
        self.polyline(&[(x1, y1), (x2, y2)], stroke);
    }

    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: Stroke) {
        if points.len() < 2 {
            return;
        }
        let points: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let dash = stroke.dash.map(|d| format!(" stroke-dasharray=\"{d}\"")).unwrap_or_default();
        let _ = writeln!(
            self.body,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{dash}/>",
            points.join(" "),
            stroke.color,
            stroke.width
        );
    }

    pub fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), fill: &str) {
        let _ = writeln!(
            self.body,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{fill}\"/>"
        );
    }

    /// A marker centred at (x, y), `size` about its radius.
    pub fn mark(&mut self, shape: Shape, (x, y): (f64, f64), size: f64, color: &str) {
        let s = size;
        let polygon = |points: &[(f64, f64)], fill: &str, stroke: &str| {
            let points: Vec<String> =
                points.iter().map(|(px, py)| format!("{:.1},{:.1}", x + px, y + py)).collect();
            format!(
                "<polygon points=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"1.6\"/>\n",
                points.join(" ")
            )
        };
        let element = match shape {
            Shape::Dot => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{s:.1}\" fill=\"{color}\"/>\n"),
            Shape::Diamond => {
                polygon(&[(0.0, -s * 1.3), (s * 1.3, 0.0), (0.0, s * 1.3), (-s * 1.3, 0.0)], color, "none")
            }
            Shape::HollowDiamond => {
                polygon(&[(0.0, -s * 1.3), (s * 1.3, 0.0), (0.0, s * 1.3), (-s * 1.3, 0.0)], "none", color)
            }
            Shape::Square => polygon(&[(-s, -s), (s, -s), (s, s), (-s, s)], color, "none"),
            Shape::Triangle => {
                polygon(&[(0.0, -s * 1.25), (s * 1.15, s * 0.85), (-s * 1.15, s * 0.85)], color, "none")
            }
            Shape::TriangleDown => {
                polygon(&[(0.0, s * 1.25), (s * 1.15, -s * 0.85), (-s * 1.15, -s * 0.85)], color, "none")
            }
            Shape::LeftArrow => polygon(&[(-s * 1.2, 0.0), (s * 0.8, -s), (s * 0.8, s)], color, "none"),
            Shape::Cross | Shape::Plus => {
                let (a, b) =
                    if shape == Shape::Cross { ((s, s), (s, -s)) } else { ((s * 1.3, 0.0), (0.0, s * 1.3)) };
                format!(
                    "<path d=\"M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}\" stroke=\"{color}\" stroke-width=\"2.2\"/>\n",
                    x - a.0,
                    y - a.1,
                    x + a.0,
                    y + a.1,
                    x - b.0,
                    y - b.1,
                    x + b.0,
                    y + b.1
                )
            }
            Shape::Tick => format!(
                "<path d=\"M{x:.1},{:.1}L{x:.1},{:.1}\" stroke=\"{color}\" stroke-width=\"2.5\" stroke-dasharray=\"4 2\"/>\n",
                y - s * 1.6,
                y + s * 1.6
            ),
            Shape::Line | Shape::DashedLine => {
                let dash = if shape == Shape::DashedLine { " stroke-dasharray=\"6 3\"" } else { "" };
                format!(
                    "<path d=\"M{:.1},{y:.1}L{:.1},{y:.1}\" stroke=\"{color}\" stroke-width=\"2.5\"{dash}/>\n",
                    x - 11.0,
                    x + 11.0
                )
            }
        };
        self.body += &element;
    }

    /// The document, `height` pixels tall.
    pub fn finish(self, height: f64, title: &str) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{height:.0}\" \
             viewBox=\"0 0 {w:.0} {height:.0}\" font-family=\"{FONT}\">\n<title>{}</title>\n\
             <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{}</svg>\n",
            escape(title),
            self.body,
            w = self.width,
        )
    }
}

/// An axis: values to pixels, linear or logarithmic.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    /// The pixels of `lo` and `hi`.
    pub from: f64,
    pub to: f64,
}

impl Scale {
    pub fn px(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.from + t * (self.to - self.from)
    }

    pub fn contains(&self, v: f64) -> bool {
        v >= self.lo * (1.0 - 1e-9) && v <= self.hi * (1.0 + 1e-9)
    }

    /// Tick values: for a log axis the densest of 1, 1-2-5, 1-2-3-5-7 and 1..9 per decade
    /// that keeps at most `most` ticks; for a linear one, steps of 1, 2, 2.5 or 5 tens.
    pub fn ticks(&self, most: usize) -> Vec<f64> {
        if self.log {
            let sets: [&[f64]; 4] = [
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
                &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
                &[1.0, 2.0, 5.0],
                &[1.0],
            ];
            let in_range = |set: &[f64]| -> Vec<f64> {
                let (first, last) = (self.lo.log10().floor() as i32, self.hi.log10().ceil() as i32);
                (first..=last)
                    .flat_map(|e| set.iter().map(move |m| m * 10f64.powi(e)))
                    .filter(|v| self.contains(*v))
                    .collect()
            };
            for set in sets {
                let ticks = in_range(set);
                if ticks.len() <= most {
                    return ticks;
                }
            }
            // Many decades: every other power of ten.
            let mut ticks = in_range(&[1.0]);
            let step = ticks.len().div_ceil(most);
            ticks = ticks.into_iter().step_by(step.max(1)).collect();
            ticks
        } else {
            let step = nice_step((self.hi - self.lo) / most.max(2) as f64);
            let first = (self.lo / step).ceil() as i64;
            let last = (self.hi / step + 1e-9).floor() as i64;
            (first..=last).map(|i| i as f64 * step).collect()
        }
    }
}

/// 1, 2, 2.5 or 5 times a power of ten, at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// A log range with some room around `low`..`high`, its ends on 1, 1.5, 2, 3, 5, 7 times a
/// power of ten.
pub fn log_range(low: f64, high: f64) -> (f64, f64) {
    const STEPS: [f64; 7] = [1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0];
    let (low, high) = (low.max(f64::MIN_POSITIVE), high.max(low));
    let down = |v: f64| {
        let power = 10f64.powf(v.log10().floor());
        STEPS.iter().rev().map(|m| m * power).find(|s| *s <= v * (1.0 + 1e-9)).unwrap_or(power)
    };
    let up = |v: f64| {
        let power = 10f64.powf(v.log10().floor());
        STEPS.iter().map(|m| m * power).find(|s| *s >= v * (1.0 - 1e-9)).unwrap_or(10.0 * power)
    };
    (down(low / 1.12), up(high * 1.12))
}

/// A linear range from zero to a whole step above `high`.
pub fn linear_range(high: f64) -> (f64, f64) {
    let step = nice_step(high.max(1e-12) / 6.0);
    (0.0, (high / step).ceil() * step)
}

/// An axis label: 0.1, 1, 2.5, 10, 2500 (no trailing zeros).
pub fn axis_label(v: f64) -> String {
    let text = number(v);
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

/// A legend entry: how a series looks and what it is.
#[derive(Clone, Debug)]
pub struct Entry {
    pub shape: Shape,
    pub color: &'static str,
    pub label: String,
}

/// A legend: groups of entries (ours, vendor, CPU, reference, lines), one line per group,
/// entries flowing and wrapping. Returns the y below it.
pub fn legend(svg: &mut Svg, top: f64, groups: &[(&str, Vec<Entry>)]) -> f64 {
    let (left, indent, right) = (14.0, 96.0, svg.width - 14.0);
    let mut y = top;
    for (group, entries) in groups.iter().filter(|(_, e)| !e.is_empty()) {
        svg.text((left, y + 4.5), group, Text::new(TEXT_SIZE).bold());
        let mut x = indent;
        for entry in entries {
            let width = 30.0 + text_width(&entry.label, TEXT_SIZE) + 18.0;
            if x > indent && x + width > right {
                x = indent;
                y += 20.0;
            }
            let size = if matches!(entry.shape, Shape::Dot | Shape::Square) { 4.5 } else { 5.0 };
            svg.mark(entry.shape, (x + 11.0, y), size, entry.color);
            svg.text((x + 28.0, y + 4.5), &entry.label, Text::new(TEXT_SIZE));
            x += width;
        }
        y += 22.0;
    }
    y
}
