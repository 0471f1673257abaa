//! Tables: built once as cells, rendered as aligned text (stdout), Markdown
//! (files people paste into papers) and HTML (the page).

pub mod benchmarks;
pub mod comparison;
pub mod roofline;

/// A titled grid of cells. Columns of numbers are right-aligned, the
/// others (and always the first) left-aligned.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Said under the table (units, what a range means).
    pub note: Option<String>,
}

impl Table {
    /// Whether column `c` holds numbers (each cell starts with one, or is
    /// `-`), so it aligns right.
    fn numeric(&self, c: usize) -> bool {
        c > 0
            && self.rows.iter().all(|r| {
                let cell = r.get(c).map_or("-", String::as_str);
                cell == "-"
                    || cell
                        .split_whitespace()
                        .next()
                        .is_some_and(|w| w.parse::<f64>().is_ok())
            })
    }

    pub fn to_text(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                std::iter::once(&self.headers)
                    .chain(&self.rows)
                    .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(c, w)| {
                    let s = cells.get(c).map_or("", String::as_str);
                    if self.numeric(c) {
                        format!("{s:>w$}")
                    } else {
                        format!("{s:<w$}")
                    }
                })
                .collect();
            padded.join("  ").trim_end().to_owned()
        };
        let mut out = format!("{}\n{}\n", self.title, line(&self.headers));
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        if let Some(n) = &self.note {
            out.push_str(n);
            out.push('\n');
        }
        out
    }

    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let row = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            )
        };
        let mut out = format!("### {}\n\n{}", self.title, row(&self.headers));
        let align: Vec<String> = (0..self.headers.len())
            .map(|c| {
                if self.numeric(c) {
                    "--:".into()
                } else {
                    ":--".into()
                }
            })
            .collect();
        out.push_str(&row(&align));
        for r in &self.rows {
            out.push_str(&row(r));
        }
        if let Some(n) = &self.note {
            out.push_str(&format!("\n{n}\n"));
        }
        out
    }

    pub fn to_html(&self) -> String {
        let mut out = format!(
            "<table>\n<caption>{}</caption>\n<thead><tr>",
            escape_html(&self.title)
        );
        let class = |c: usize| if self.numeric(c) { "" } else { " class=\"t\"" };
        for (c, h) in self.headers.iter().enumerate() {
            out.push_str(&format!("<th{}>{}</th>", class(c), escape_html(h)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for r in &self.rows {
            out.push_str("<tr>");
            for (c, cell) in r.iter().enumerate() {
                let tag = if c == 0 { "th" } else { "td" };
                let scope = if c == 0 { " scope=\"row\"" } else { "" };
                out.push_str(&format!(
                    "<{tag}{scope}{}>{}</{tag}>",
                    class(c),
                    escape_html(cell)
                ));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        if let Some(n) = &self.note {
            out.push_str(&format!("<p class=\"note\">{}</p>\n", escape_html(n)));
        }
        out
    }
}

pub fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Four significant digits, without exponent for everyday magnitudes, so
/// tables stay narrow and parse back as numbers.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let a = x.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e9).contains(&a) {
        return format!("{x:.3e}");
    }
    let digits = if a == 0.0 {
        0
    } else {
        a.log10().floor() as i32
    };
    let decimals = (3 - digits).clamp(0, 6) as usize;
    format!("{x:.decimals$}")
}

/// A ratio as a percentage with one decimal.
pub fn pct(r: f64) -> String {
    format!("{:.1}", r * 100.0)
}

/// Seconds in a readable unit (latency cells).
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s >= 1.0 {
        format!("{} s", num(s))
    } else if s >= 1e-3 {
        format!("{} ms", num(s * 1e3))
    } else {
        format!("{} µs", num(s * 1e6))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(num(1234.5678), "1235");
        assert_eq!(num(12.345678), "12.35");
        assert_eq!(num(0.0123456), "0.01235");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(3.2e10), "3.200e10");
        assert_eq!(pct(0.9312), "93.1");
        assert_eq!(seconds(0.0000123), "12.30 µs");
    }

    #[test]
    fn renders_all_formats() {
        let t = Table {
            title: "T".into(),
            headers: vec!["a".into(), "b|c".into()],
            rows: vec![vec!["x<y".into(), "1".into()]],
            note: Some("n".into()),
        };
        assert_eq!(t.to_text(), "T\na    b|c\nx<y    1\nn\n");
        assert!(t
            .to_markdown()
            .contains("| a | b\\|c |\n| :-- | --: |\n| x<y | 1 |\n"));
        assert!(t
            .to_html()
            .contains("<th scope=\"row\" class=\"t\">x&lt;y</th><td>1</td>"));
        // Words align left.
        let words = Table {
            rows: vec![vec!["x".into(), "IOPS-bound".into()]],
            ..t
        };
        assert_eq!(words.to_text(), "T\na  b|c\nx  IOPS-bound\nn\n");
        assert!(words.to_markdown().contains("| :-- | :-- |"));
    }
}
