//! Figures: each one is drawn by a [`Plot`] onto any plotters backend, so
//! the same code writes the SVG (inlined into the page) and the PNG.

pub mod copy;
pub mod density;
pub mod explain;
pub mod lines;
pub mod radar;
pub mod roofline;
pub mod sweep;

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// The family every text style names; the bundled font is registered under it.
pub const FONT: &str = "sans-serif";

/// DejaVu Sans (Bitstream Vera license, which permits bundling; see
/// `assets/DejaVuSans.LICENSE`): without a registered font, plotters' pure
/// Rust text path fails with `FontUnavailable`, and a system font would make
/// the output depend on the machine.
static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for style in [
            FontStyle::Normal,
            FontStyle::Bold,
            FontStyle::Italic,
            FontStyle::Oblique,
        ] {
            plotters::style::register_font(FONT, style, FONT_BYTES)
                .unwrap_or_else(|_| panic!("the bundled font is a valid TrueType font"));
        }
    });
}

/// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Any drawing failure, as text (plotters' errors are generic over the
/// backend).
#[derive(Debug)]
pub struct DrawError(pub String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawError(e.to_string())
    }
}

pub type DrawResult = Result<(), DrawError>;

pub trait Plot {
    /// Pixels (PNG) and user units (SVG).
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult;
}

/// A figure written to disk, for the page.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File stem: `DIR/<name>.png` and `.svg`.
    pub name: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
}

/// Draws `plot` as `dir/name.svg` and `dir/name.png`.
pub fn render<P: Plot>(
    plot: &P,
    dir: &Path,
    name: &str,
    title: &str,
    caption: &str,
) -> anyhow::Result<Figure> {
    register_font();
    let size = plot.size();
    let mut svg = String::new();
    draw_on(plot, SVGBackend::with_string(&mut svg, size)).map_err(fail(name))?;
    std::fs::write(dir.join(format!("{name}.svg")), &svg)
        .map_err(|e| anyhow::anyhow!("writing {name}.svg: {e}"))?;
    let png = dir.join(format!("{name}.png"));
    draw_on(plot, BitMapBackend::new(&png, size)).map_err(fail(name))?;
    Ok(Figure {
        name: name.into(),
        title: title.into(),
        caption: caption.into(),
        svg,
    })
}

/// One complete drawing on a white background.
fn draw_on<P: Plot, DB: DrawingBackend>(plot: &P, backend: DB) -> DrawResult {
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    plot.draw(&root)?;
    root.present()?;
    Ok(())
}

/// The legend, in one style for every figure.
pub fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .label_font((FONT, 12))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .position(at)
        .draw()?;
    Ok(())
}

fn fail(name: &str) -> impl Fn(DrawError) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("drawing {name}: {}", e.0)
}

/// Splits `root` into a grid for `n` panels, at most `cols` wide.
pub fn panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    n: usize,
    cols: usize,
) -> Vec<DrawingArea<DB, Shift>> {
    let cols = cols.min(n).max(1);
    let rows = n.div_ceil(cols).max(1);
    root.split_evenly((rows, cols))
}

/// Rows of `n` panels at `cols` per row.
pub fn grid_rows(n: usize, cols: usize) -> u32 {
    n.div_ceil(cols.max(1)).max(1) as u32
}

/// Bytes as `4 KiB`, `1 MiB`.
pub fn bytes_label(b: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round(), units[u])
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Bytes in decimal units (`10 kB`, `1 MB`): log axes tick at powers of
/// ten, which binary units would show as `9.8 KiB`.
pub fn si_bytes_label(b: f64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    format!("{} {}", (v * 100.0).round() / 100.0, units[u])
}

/// Seconds as `10 µs`, `1 ms` (log axes of time).
pub fn time_label(s: f64) -> String {
    let (v, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    let v = (v * 1000.0).round() / 1000.0;
    format!("{v} {unit}")
}

/// A number on a log axis: `1e5` rather than `100000.0`.
pub fn log_label(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if (1e-2..1e4).contains(&x.abs()) {
        format!("{}", (x * 1000.0).round() / 1000.0)
    } else {
        format!("{x:.0e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(bytes_label(4096.0), "4 KiB");
        assert_eq!(bytes_label(1536.0), "1.5 KiB");
        assert_eq!(time_label(1e-5), "10 µs");
        assert_eq!(log_label(100000.0), "1e5");
        assert_eq!(log_label(10.0), "10");
        assert_eq!(log_label(0.0), "0");
        assert_eq!(si_bytes_label(1e5), "100 kB");
    }
}
