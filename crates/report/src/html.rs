//! The page: one self-contained HTML file. Figures are inlined as SVG data
//! URIs (an `<img>` each, so no figure's markup can clash with another's),
//! styles are inline, and nothing is fetched from the network.

use crate::figures::Figure;
use crate::model::Dataset;
use crate::tables::{escape_html, Table};
use base64::Engine;
use serde_json::Value;

/// One part of the page, in order.
pub enum Section {
    Table(Table),
    Figure(Figure),
    /// A figure or table whose data is absent: what, and why.
    Skipped {
        what: String,
        why: String,
    },
}

const STYLE: &str = "body{font-family:'DejaVu Sans',sans-serif;margin:2em auto;max-width:1700px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}caption{text-align:left;font-weight:bold;padding:.3em 0}
th,td{border:1px solid #ccc;padding:.2em .6em;text-align:right;font-variant-numeric:tabular-nums}
th.t,td.t{text-align:left}thead th{background:#f3f3f3}
figure{margin:1.5em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
.note{color:#555;font-size:.9em}.skipped{color:#8a4b00}";

pub fn page(data: &Dataset, sections: &[Section]) -> String {
    let mut body = String::new();
    body.push_str("<h1>s3hpc report</h1>\n");
    body.push_str(&runs_table(data).to_html());
    let skipped: Vec<_> = sections
        .iter()
        .filter_map(|s| match s {
            Section::Skipped { what, why } => Some((what, why)),
            _ => None,
        })
        .collect();
    if !skipped.is_empty() {
        body.push_str("<h2>Not in this report</h2>\n<ul class=\"skipped\">\n");
        for (what, why) in skipped {
            body.push_str(&format!(
                "<li><b>{}</b> skipped: {}</li>\n",
                escape_html(what),
                escape_html(why)
            ));
        }
        body.push_str("</ul>\n");
    }
    body.push_str("<nav><h2>Contents</h2>\n<ul>\n");
    for s in sections {
        let (id, title) = match s {
            Section::Table(t) => (slug(&t.title), &t.title),
            Section::Figure(f) => (f.name.clone(), &f.title),
            Section::Skipped { .. } => continue,
        };
        body.push_str(&format!(
            "<li><a href=\"#{}\">{}</a></li>\n",
            escape_html(&id),
            escape_html(title)
        ));
    }
    body.push_str("</ul>\n</nav>\n");
    for s in sections {
        match s {
            Section::Table(t) => body.push_str(&format!(
                "<section id=\"{}\">\n{}</section>\n",
                escape_html(&slug(&t.title)),
                t.to_html()
            )),
            Section::Figure(f) => body.push_str(&figure(f)),
            Section::Skipped { .. } => {}
        }
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>s3hpc report</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )
}

/// An id from a title: lower-case letters and digits, `-` between words.
fn slug(title: &str) -> String {
    let words: Vec<String> = title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    format!("table-{}", words.join("-"))
}

fn figure(f: &Figure) -> String {
    let uri = base64::engine::general_purpose::STANDARD.encode(f.svg.as_bytes());
    format!(
        "<figure id=\"{name}\">\n<h2>{title}</h2>\n<img alt=\"{title}\" src=\"data:image/svg+xml;base64,{uri}\">\n\
         <figcaption class=\"note\">{caption} Files: <a href=\"{name}.png\">{name}.png</a>, <a href=\"{name}.svg\">{name}.svg</a>.</figcaption>\n</figure>\n",
        name = escape_html(&f.name),
        title = escape_html(&f.title),
        caption = escape_html(&f.caption),
    )
}

/// The files of the report and what each run was: where, when, and the
/// settings a reader needs before comparing two runs.
pub fn runs_table(data: &Dataset) -> Table {
    let get = |v: &Value, k: &str| match v.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".into(),
        Some(x) => x.to_string(),
    };
    let rows = data
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let backends: Vec<&str> = data
                .series
                .iter()
                .filter(|s| s.run == i)
                .map(|s| s.name.as_str())
                .collect();
            vec![
                r.label.clone(),
                r.path.display().to_string(),
                get(&r.meta, "host"),
                get(&r.meta, "start_time"),
                get(&r.meta, "filesystem"),
                get(&r.meta, "ranks"),
                get(&r.meta, "stonewall_seconds"),
                get(&r.meta, "repeat"),
                format!("{} / {}", get(&r.meta, "durability"), get(&r.meta, "etag")),
                backends.join(", "),
                r.rows.len().to_string(),
            ]
        })
        .collect();
    Table {
        title: "Runs".into(),
        headers: [
            "label",
            "file",
            "host",
            "start",
            "file system",
            "ranks",
            "stonewall (s)",
            "repetitions",
            "durability / ETag",
            "backends",
            "rows",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: None,
    }
}
