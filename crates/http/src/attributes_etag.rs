//! GetObjectAttributes gives the ETag without quotes (AWS's answer, which
//! SDKs pass through as is), where every other S3 answer quotes it; s3s
//! serializes every `ETag` quoted, so the one element is unquoted here.

use s3s::HttpResponse;

/// Whether a request's query asks for GetObjectAttributes (`?attributes`).
pub fn asks_attributes(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&')
            .any(|p| p == "attributes" || p.starts_with("attributes="))
    })
}

/// Unquotes the `<ETag>` of a successful GetObjectAttributes answer.
pub fn unquote_etag(resp: &mut HttpResponse) {
    const OPEN: &str = "<ETag>\"";
    let Some(text) = body_text(resp, hyper::StatusCode::OK) else {
        return;
    };
    if !text.contains("<GetObjectAttributesResponse") {
        return;
    }
    let Some(at) = text.find(OPEN) else { return };
    let value_at = at + OPEN.len();
    let Some(len) = text[value_at..].find("\"</ETag>") else {
        return;
    };
    let out = format!(
        "{}<ETag>{}</ETag>{}",
        &text[..at],
        &text[value_at..value_at + len],
        &text[value_at + len + "\"</ETag>".len()..]
    );
    let n = out.len();
    *resp.body_mut() = s3s::Body::from(out);
    resp.headers_mut().insert(
        hyper::header::CONTENT_LENGTH,
        hyper::header::HeaderValue::from(n),
    );
}

/// The whole body of an answer with this status, as text (answers of
/// s3s's XML are whole in memory); None for another status or a stream.
pub(crate) fn body_text(resp: &HttpResponse, status: hyper::StatusCode) -> Option<String> {
    if resp.status() != status {
        return None;
    }
    resp.body()
        .bytes()
        .and_then(|b| String::from_utf8(b.to_vec()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etag_unquoted_only_in_attributes() {
        let body = "<?xml version=\"1.0\"?><GetObjectAttributesResponse><ETag>\"abc-2\"</ETag>\
                    <ObjectSize>3</ObjectSize></GetObjectAttributesResponse>";
        let mut resp = HttpResponse::new(s3s::Body::from(body.to_string()));
        unquote_etag(&mut resp);
        let got = String::from_utf8(resp.body().bytes().unwrap().to_vec()).unwrap();
        assert!(
            got.contains("<ETag>abc-2</ETag><ObjectSize>3</ObjectSize>"),
            "{got}"
        );
        let other = "<CopyObjectResult><ETag>\"abc\"</ETag></CopyObjectResult>";
        let mut resp = HttpResponse::new(s3s::Body::from(other.to_string()));
        unquote_etag(&mut resp);
        let got = String::from_utf8(resp.body().bytes().unwrap().to_vec()).unwrap();
        assert_eq!(got, other);
        assert!(asks_attributes(Some("attributes")));
        assert!(asks_attributes(Some("versionId=null&attributes=")));
        assert!(!asks_attributes(Some("attributes-x=1")));
        assert!(!asks_attributes(None));
    }
}
