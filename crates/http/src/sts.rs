//! The STS endpoint on the S3 port: `AssumeRoleWithWebIdentity`, which
//! turns an OIDC ID token into temporary S3 credentials for the POSIX
//! user the token names (as MinIO and Ceph RGW answer it). The request is
//! unsigned (the token is the proof), a form POST to `/` or a GET with the
//! parameters in the query, as the AWS SDKs send it.

use crate::oidc::{Oidc, Refusal};
use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::{Method, StatusCode};
use s3hpc_keys::session::Origin;
use s3hpc_keys::KeyStore;
use s3s::HttpResponse;
use std::sync::Arc;
use std::time::Duration;

/// The request bodies STS takes are a token and a few names.
const MAX_BODY: usize = 64 << 10;
/// AWS's range for DurationSeconds, and its default.
const MIN_DURATION: u64 = 900;
const MAX_DURATION: u64 = 43_200;
const DEFAULT_DURATION: u64 = 3_600;
const XMLNS: &str = "https://sts.amazonaws.com/doc/2011-06-15/";

/// What answers STS requests: the verifier and where sessions are signed.
pub struct Sts {
    pub oidc: Option<Arc<Oidc>>,
    pub keys: Option<Arc<KeyStore>>,
}

/// Whether a request is for STS rather than S3: `Action=` at the
/// service's root (a form POST, or a GET's query).
pub fn asked<B>(req: &hyper::Request<B>) -> bool {
    if req.uri().path() != "/" {
        return false;
    }
    let form = req
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
    match *req.method() {
        Method::POST => form,
        Method::GET => req
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|p| p.starts_with("Action="))),
        _ => false,
    }
}

impl Sts {
    pub async fn answer(
        self: Arc<Self>,
        req: hyper::Request<s3s::Body>,
        request_id: &str,
    ) -> HttpResponse {
        let query = req.uri().query().unwrap_or("").to_owned();
        let body = if req.method() == Method::POST {
            match read_body(req.into_body()).await {
                Ok(b) => b,
                Err(e) => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        "Sender",
                        "InvalidParameterValue",
                        &e,
                        request_id,
                    )
                }
            }
        } else {
            Bytes::new()
        };
        let params: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .chain(form_urlencoded::parse(&body))
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let param = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        match param("Action") {
            Some("AssumeRoleWithWebIdentity") => {}
            other => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "Sender",
                    "InvalidAction",
                    &format!(
                        "STS action {:?} is not offered: s3hpc answers AssumeRoleWithWebIdentity \
                         (users get keys with `s3hpc keys create` and `s3hpc creds`)",
                        other.unwrap_or("")
                    ),
                    request_id,
                )
            }
        }
        let (Some(oidc), Some(keys)) = (self.oidc.clone(), self.keys.clone()) else {
            return error(
                StatusCode::BAD_REQUEST,
                "Sender",
                "InvalidAction",
                "AssumeRoleWithWebIdentity needs an OIDC issuer and a key store: the \
                 administrator starts the server with --oidc-issuer URL and --key-store DIR",
                request_id,
            );
        };
        let Some(token) = param("WebIdentityToken").map(str::to_owned) else {
            return error(
                StatusCode::BAD_REQUEST,
                "Sender",
                "MissingParameter",
                "WebIdentityToken is required: the ID token from the identity provider",
                request_id,
            );
        };
        let duration = match param("DurationSeconds").map(str::parse::<u64>) {
            None => DEFAULT_DURATION,
            Some(Ok(d)) if (MIN_DURATION..=MAX_DURATION).contains(&d) => d,
            Some(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "Sender",
                    "ValidationError",
                    &format!(
                        "DurationSeconds must be a number from {MIN_DURATION} to {MAX_DURATION}"
                    ),
                    request_id,
                )
            }
        };
        let session_name = param("RoleSessionName").unwrap_or("s3hpc").to_owned();
        // The token check may fetch the issuer's keys: off the worker.
        let verified = tokio::task::spawn_blocking(move || {
            let login = oidc.login(&token)?;
            let user = login.who.user().ok_or_else(|| Refusal {
                code: "AccessDenied",
                message: "the token names the server's own user".into(),
            })?;
            let user = (user.name.clone(), user.uid, user.gid);
            let creds = keys
                .session(Origin::Oidc, user.1, user.2, Duration::from_secs(duration))
                .map_err(|e| Refusal {
                    code: "InternalError",
                    message: e,
                })?;
            Ok::<_, Refusal>((login, user, creds, oidc.config().issuer.clone()))
        })
        .await;
        let (login, user, creds, issuer) = match verified {
            Ok(Ok(v)) => v,
            Ok(Err(r)) => {
                let status = match r.code {
                    "AccessDenied" | "IDPRejectedClaim" => StatusCode::FORBIDDEN,
                    "InternalError" => StatusCode::INTERNAL_SERVER_ERROR,
                    _ => StatusCode::BAD_REQUEST,
                };
                return error(status, "Sender", r.code, &r.message, request_id);
            }
            Err(e) => {
                return error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Receiver",
                    "InternalError",
                    &e.to_string(),
                    request_id,
                )
            }
        };
        let expiration = time::OffsetDateTime::from_unix_timestamp(creds.expires as i64)
            .ok()
            .and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            })
            .unwrap_or_default();
        let body = format!(
            "<AssumeRoleWithWebIdentityResponse xmlns=\"{XMLNS}\"><AssumeRoleWithWebIdentityResult>\
             <SubjectFromWebIdentityToken>{}</SubjectFromWebIdentityToken><Audience>{}</Audience>\
             <AssumedRoleUser><Arn>arn:aws:sts::s3hpc:assumed-role/{}/{}</Arn>\
             <AssumedRoleId>{}:{}</AssumedRoleId></AssumedRoleUser>\
             <Credentials><AccessKeyId>{}</AccessKeyId><SecretAccessKey>{}</SecretAccessKey>\
             <SessionToken>{}</SessionToken><Expiration>{expiration}</Expiration></Credentials>\
             <Provider>{}</Provider></AssumeRoleWithWebIdentityResult>\
             <ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>\
             </AssumeRoleWithWebIdentityResponse>",
            xml(&login.subject),
            xml(&login.audience),
            xml(&user.0),
            xml(&session_name),
            user.1,
            xml(&session_name),
            creds.access_key,
            creds.secret,
            creds.token,
            xml(&issuer),
        );
        respond(StatusCode::OK, body, request_id)
    }
}

async fn read_body(body: s3s::Body) -> Result<Bytes, String> {
    let limited = http_body_util::Limited::new(body, MAX_BODY);
    limited.collect().await.map(|c| c.to_bytes()).map_err(|e| {
        format!("the request body could not be read, or is over {MAX_BODY} bytes: {e}")
    })
}

fn error(
    status: StatusCode,
    kind: &str,
    code: &str,
    message: &str,
    request_id: &str,
) -> HttpResponse {
    let body = format!(
        "<ErrorResponse xmlns=\"{XMLNS}\"><Error><Type>{kind}</Type><Code>{code}</Code>\
         <Message>{}</Message></Error><RequestId>{request_id}</RequestId></ErrorResponse>",
        xml(message)
    );
    respond(status, body, request_id)
}

fn respond(status: StatusCode, body: String, request_id: &str) -> HttpResponse {
    let mut resp = hyper::Response::new(s3s::Body::from(body));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/xml"),
    );
    if let Ok(v) = hyper::header::HeaderValue::from_str(request_id) {
        h.insert("x-amzn-requestid", v);
    }
    resp
}

/// Text escaped for an XML element.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
