//! Just enough XML reading for S3 responses: they are flat, machine-written
//! documents where every field we read is a leaf element, so finding
//! `<Tag>…</Tag>` and unescaping its text is exact for them.

/// The inner text of every `<tag>…</tag>` in `doc`, in order (not nested
/// in themselves, which S3 responses never are).
pub fn blocks<'a>(doc: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = doc;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        out.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    out
}

/// The unescaped text of the first `<tag>` in `doc`; `<tag/>` is empty.
pub fn text(doc: &str, tag: &str) -> Option<String> {
    if let Some(b) = blocks(doc, tag).first() {
        return Some(unescape(b));
    }
    doc.contains(&format!("<{tag}/>")).then(String::new)
}

fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';') else { break };
        let entity = &rest[1..end];
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Escapes text for an XML element.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The CompleteMultipartUpload document listing `parts` (number, ETag),
/// as every S3 client sends it.
pub fn complete_multipart_document(parts: &[(u32, String)]) -> String {
    let mut doc = String::from("<CompleteMultipartUpload>");
    for (n, etag) in parts {
        doc.push_str(&format!(
            "<Part><PartNumber>{n}</PartNumber><ETag>{}</ETag></Part>",
            escape(etag)
        ));
    }
    doc.push_str("</CompleteMultipartUpload>");
    doc
}

/// Decodes `%XX` escapes (S3's `encoding-type=url`); `+` stays as is, as
/// S3 encodes a space as `%20`.
pub fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_blocks_and_entities() {
        let doc = "<R><C><K>a&amp;b</K></C><C><K>&#x41;&lt;</K></C><E/></R>";
        let keys: Vec<_> = blocks(doc, "C")
            .iter()
            .map(|c| text(c, "K").unwrap())
            .collect();
        assert_eq!(keys, ["a&b", "A<"]);
        assert_eq!(text(doc, "E").as_deref(), Some(""));
        assert_eq!(text(doc, "Missing"), None);
        assert_eq!(escape("<a&'\">"), "&lt;a&amp;&apos;&quot;&gt;");
        assert_eq!(url_decode("a%20b%2Fc%C3%A9+%zz%4"), "a b/cé+%zz%4");
    }
}
