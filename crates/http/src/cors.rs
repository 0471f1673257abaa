//! CORS, so that browser applications (web consoles, notebooks in a
//! browser, upload forms) may call the server from another origin: a
//! bucket's rules (PutBucketCors, kept by the engine as the bucket's `cors`
//! document), the preflight `OPTIONS` they answer, and the
//! `Access-Control-*` headers on the answers to a request with an `Origin`.
//!
//! A preflight carries no credentials by design, so the rules are read as
//! the server, as S3 reads them whoever asks; what a request may then do is
//! still decided by the file system as its sender.

use crate::convert::coded;
use hyper::header::{HeaderName, HeaderValue};
use hyper::StatusCode;
use s3hpc_store::{Acting, Identity, Store};
use s3s::dto::{CORSConfiguration, CORSRule};
use s3s::{s3_error, HttpResponse, S3Result};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The engine's name for the document.
pub const CONFIG: &str = "cors";
/// S3's limits.
const MAX_RULES: usize = 100;
const METHODS: [&str; 5] = ["GET", "PUT", "HEAD", "POST", "DELETE"];
const REQUEST_METHOD: &str = "access-control-request-method";
const REQUEST_HEADERS: &str = "access-control-request-headers";

/// One rule as kept (JSON: a fraction of the XML's size, which matters
/// where the file system keeps 4 KiB of attributes per inode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    methods: Vec<String>,
    origins: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    headers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    expose: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_age: Option<i32>,
}

/// The rules of a PutBucketCors, validated as S3 validates them.
pub fn rules_from(c: CORSConfiguration) -> S3Result<Vec<Rule>> {
    let n = c.cors_rules.len();
    if n == 0 || n > MAX_RULES {
        return Err(s3_error!(
            MalformedXML,
            "a CORS configuration has 1 to {MAX_RULES} CORSRule elements, not {n}"
        ));
    }
    c.cors_rules.into_iter().map(rule_from).collect()
}

fn rule_from(r: CORSRule) -> S3Result<Rule> {
    if let Some(m) = r
        .allowed_methods
        .iter()
        .find(|m| !METHODS.contains(&m.as_str()))
    {
        return Err(s3_error!(
            InvalidRequest,
            "Found unsupported HTTP method in CORS config. Unsupported method is {m}; \
             AllowedMethod is one of {METHODS:?}"
        ));
    }
    if r.allowed_methods.is_empty() || r.allowed_origins.is_empty() {
        return Err(s3_error!(
            MalformedXML,
            "every CORSRule needs at least one AllowedMethod and one AllowedOrigin"
        ));
    }
    let headers = r.allowed_headers.unwrap_or_default();
    for (what, values) in [
        ("AllowedOrigin", &r.allowed_origins),
        ("AllowedHeader", &headers),
    ] {
        if let Some(v) = values.iter().find(|v| v.matches('*').count() > 1) {
            return Err(s3_error!(
                InvalidRequest,
                "{what} {v:?} can not have more than one wildcard"
            ));
        }
    }
    if r.id.as_ref().is_some_and(|id| id.len() > 255) {
        return Err(s3_error!(
            InvalidArgument,
            "a CORSRule ID is at most 255 characters"
        ));
    }
    if let Some(age) = r.max_age_seconds.filter(|a| *a < 0) {
        return Err(s3_error!(
            InvalidArgument,
            "MaxAgeSeconds {age} is negative"
        ));
    }
    Ok(Rule {
        id: r.id,
        methods: r.allowed_methods,
        origins: r.allowed_origins,
        headers,
        expose: r.expose_headers.unwrap_or_default(),
        max_age: r.max_age_seconds,
    })
}

/// The rules as GetBucketCors answers them.
pub fn to_dto(rules: Vec<Rule>) -> Vec<CORSRule> {
    rules
        .into_iter()
        .map(|r| CORSRule {
            id: r.id,
            allowed_methods: r.methods,
            allowed_origins: r.origins,
            allowed_headers: (!r.headers.is_empty()).then_some(r.headers),
            expose_headers: (!r.expose.is_empty()).then_some(r.expose),
            max_age_seconds: r.max_age,
        })
        .collect()
}

pub fn encode(rules: &[Rule]) -> Vec<u8> {
    serde_json::to_vec(rules).expect("rules are plain strings and numbers")
}

pub fn decode(bucket: &str, bytes: &[u8]) -> S3Result<Vec<Rule>> {
    serde_json::from_slice(bytes).map_err(|e| {
        s3_error!(
            InternalError,
            "the CORS configuration kept on bucket {bucket:?} (extended attribute \
             user.s3hpc.{CONFIG}) is not readable: {e}; set it again with PutBucketCors"
        )
    })
}

/// `pattern` with at most one `*` against `value`.
fn wildcard(pattern: &str, value: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == value,
        Some((pre, suf)) => {
            value.len() >= pre.len() + suf.len() && value.starts_with(pre) && value.ends_with(suf)
        }
    }
}

impl Rule {
    /// The origin pattern of this rule that lets `origin` send `method`
    /// with `headers` (lower case), if any.
    fn allows(&self, origin: &str, method: &str, headers: &[String]) -> Option<&str> {
        if !self.methods.iter().any(|m| m == method) {
            return None;
        }
        let headers_ok = headers.iter().all(|h| {
            self.headers
                .iter()
                .any(|p| wildcard(&p.to_ascii_lowercase(), h))
        });
        if !headers_ok {
            return None;
        }
        self.origins
            .iter()
            .find(|p| wildcard(p, origin))
            .map(String::as_str)
    }

    /// The headers that answer `origin` under this rule (matched by
    /// `pattern`).
    fn answer(&self, origin: &str, pattern: &str, resp: &mut HttpResponse) {
        let h = resp.headers_mut();
        let mut set = |name: &'static str, value: &str| {
            if let Ok(v) = HeaderValue::from_str(value) {
                h.insert(HeaderName::from_static(name), v);
            }
        };
        if pattern == "*" {
            set("access-control-allow-origin", "*");
        } else {
            set("access-control-allow-origin", origin);
            set("access-control-allow-credentials", "true");
        }
        set("access-control-allow-methods", &self.methods.join(", "));
        if !self.expose.is_empty() {
            set("access-control-expose-headers", &self.expose.join(", "));
        }
        set(
            "vary",
            "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
        );
    }
}

/// The engine, to read a bucket's rules from the server's outer layer.
#[derive(Clone)]
pub struct Cors {
    pub store: Arc<Store>,
}

/// What a request asks of CORS, taken before it is handed on.
pub struct Asked {
    bucket: String,
    origin: String,
    method: String,
}

impl Cors {
    /// The bucket's rules, read as the server; none when it has none.
    fn rules(&self, bucket: &str) -> S3Result<Option<Vec<Rule>>> {
        let engine = Acting::held(self.store.clone(), Identity::server());
        match engine.bucket_config(bucket, CONFIG) {
            Ok(Some(bytes)) => decode(bucket, &bytes).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(crate::convert::s3_error(e)),
        }
    }

    /// A request from a browser (with `Origin`) to a bucket: what its
    /// answer's headers depend on. The method is the request's, or the
    /// `Access-Control-Request-Method` it names, as Ceph RGW takes it.
    /// `domains`: the server's virtual-host domains.
    pub fn asked<B>(&self, req: &hyper::Request<B>, domains: &[String]) -> Option<Asked> {
        let origin = req.headers().get(hyper::header::ORIGIN)?.to_str().ok()?;
        let bucket = crate::sigv2_path::bucket_of(req, domains)?;
        let method = req
            .headers()
            .get(REQUEST_METHOD)
            .and_then(|m| m.to_str().ok())
            .unwrap_or(req.method().as_str());
        Some(Asked {
            bucket: bucket.to_string(),
            origin: origin.to_string(),
            method: method.to_string(),
        })
    }

    /// Adds the `Access-Control-*` headers of the first rule that allows
    /// the request to its answer (errors too: a browser shows a script the
    /// error only with them). Unreadable rules add nothing.
    pub fn answer(&self, asked: &Asked, resp: &mut HttpResponse) {
        let Ok(Some(rules)) = self.rules(&asked.bucket) else {
            return;
        };
        if let Some((rule, pattern)) = rules
            .iter()
            .find_map(|r| Some((r, r.allows(&asked.origin, &asked.method, &[])?)))
        {
            rule.answer(&asked.origin, pattern, resp);
        }
    }

    /// The answer to a preflight `OPTIONS`.
    pub fn preflight<B>(
        &self,
        req: &hyper::Request<B>,
        domains: &[String],
    ) -> S3Result<HttpResponse> {
        let get = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
        let (Some(origin), Some(method)) =
            (get(hyper::header::ORIGIN.as_str()), get(REQUEST_METHOD))
        else {
            return Err(coded(
                "BadRequest",
                StatusCode::BAD_REQUEST,
                "Insufficient information. Origin request header needed: a CORS preflight \
                 (OPTIONS) carries Origin and Access-Control-Request-Method",
            ));
        };
        let Some(bucket) = crate::sigv2_path::bucket_of(req, domains) else {
            return Err(coded(
                "BadRequest",
                StatusCode::BAD_REQUEST,
                "a CORS preflight (OPTIONS) is for a bucket or an object in one",
            ));
        };
        let headers: Vec<String> = get(REQUEST_HEADERS)
            .unwrap_or("")
            .split(',')
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        let Some(rules) = self.rules(bucket)? else {
            return Err(coded(
                "AccessForbidden",
                StatusCode::FORBIDDEN,
                format!(
                    "CORSResponse: CORS is not enabled for bucket {bucket:?}; its owner sets \
                     rules with PutBucketCors"
                ),
            ));
        };
        let Some((rule, pattern)) = rules
            .iter()
            .find_map(|r| Some((r, r.allows(origin, method, &headers)?)))
        else {
            return Err(coded(
                "AccessForbidden",
                StatusCode::FORBIDDEN,
                format!(
                    "CORSResponse: This CORS request is not allowed: no rule of bucket \
                     {bucket:?} allows origin {origin:?}, method {method:?} and headers \
                     {headers:?}"
                ),
            ));
        };
        let mut resp = HttpResponse::new(s3s::Body::empty());
        rule.answer(origin, pattern, &mut resp);
        let h = resp.headers_mut();
        if !headers.is_empty() {
            if let Ok(v) = HeaderValue::from_str(&headers.join(", ")) {
                h.insert("access-control-allow-headers", v);
            }
        }
        if let Some(age) = rule.max_age {
            h.insert("access-control-max-age", HeaderValue::from(age));
        }
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(methods: &[&str], origins: &[&str], headers: &[&str]) -> Rule {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Rule {
            id: None,
            methods: own(methods),
            origins: own(origins),
            headers: own(headers),
            expose: Vec::new(),
            max_age: None,
        }
    }

    #[test]
    fn one_wildcard_matches_any_middle() {
        assert!(wildcard("start*end", "startend"));
        assert!(wildcard("start*end", "start12end"));
        assert!(!wildcard("start*end", "0start12end"));
        assert!(!wildcard("*suffix", "foo.suffix.get"));
        assert!(wildcard("prefix*", "prefix"));
        assert!(!wildcard("ab*ba", "aba"));
        assert!(wildcard("*", ""));
        assert!(!wildcard("exact", "exactly"));
    }

    #[test]
    fn a_rule_needs_origin_method_and_every_header() {
        let r = rule(&["GET"], &["*.example"], &["x-amz-*"]);
        let h = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(r.allows("a.example", "GET", &[]), Some("*.example"));
        assert_eq!(r.allows("a.example", "PUT", &[]), None);
        assert_eq!(r.allows("a.other", "GET", &[]), None);
        assert!(r.allows("a.example", "GET", &h(&["x-amz-date"])).is_some());
        assert_eq!(r.allows("a.example", "GET", &h(&["authorization"])), None);
    }

    #[test]
    fn rules_round_trip_through_their_encoding() {
        let rules = vec![
            rule(&["GET", "PUT"], &["*"], &[]),
            rule(&["POST"], &["o"], &["*"]),
        ];
        assert_eq!(decode("b", &encode(&rules)).unwrap(), rules);
        assert!(decode("b", b"{not json").is_err());
    }
}
