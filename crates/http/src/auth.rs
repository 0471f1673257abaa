//! Who may use the server: access keys with their secrets, or anonymous
//! access when explicitly asked for; and how long a signature stays valid.

use s3hpc_store::Identity;
use s3s::access::{S3Access, S3AccessContext};
use s3s::{s3_error, S3Error, S3ErrorCode, S3Result};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Environment variables that give one user's credentials.
pub const ACCESS_KEY_ENV: &str = "S3HPC_ACCESS_KEY";
pub const SECRET_KEY_ENV: &str = "S3HPC_SECRET_KEY";

/// How requests are authenticated.
#[derive(Clone)]
pub enum AuthConfig {
    /// Every request must be signed (SigV4 or SigV2, header or presigned)
    /// by one of these users, and acts as the server itself.
    Users(HashMap<String, String>),
    /// No signature is checked; every request is served, as the server
    /// itself. Only on request.
    Anonymous,
    /// Many users: each key acts as the POSIX user it is mapped to, and
    /// the file system decides every access.
    Mapped(MappedUsers),
}

/// The keys of a server with many users: each with its secret and the
/// identity its requests act as ([`Identity::server`] for an administrator
/// key), and whom unsigned requests act as, if anyone.
#[derive(Clone, Default)]
pub struct MappedUsers {
    pub keys: HashMap<String, (String, Identity)>,
    pub anonymous: Option<Identity>,
    /// The access keys in the credentials file's order: the first key of a
    /// uid names that uid as an owner (keys not listed follow, by name).
    pub order: Vec<String>,
    /// ListBuckets shows a user only the buckets it owns, as S3 does,
    /// instead of every bucket it may enter (`--list-buckets owned`).
    pub list_owned_buckets: bool,
    /// The users' own keys and sessions (`--key-store`), beside these.
    pub store: Option<Arc<s3hpc_keys::KeyStore>>,
    /// OIDC logins (AssumeRoleWithWebIdentity), which need the store.
    pub oidc: Option<crate::oidc::OidcConfig>,
}

impl std::fmt::Debug for AuthConfig {
    // Never print secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthConfig::Users(u) => write!(f, "Users({} access keys)", u.len()),
            AuthConfig::Anonymous => f.write_str("Anonymous"),
            AuthConfig::Mapped(m) => write!(
                f,
                "Mapped({} access keys, anonymous as {})",
                m.keys.len(),
                m.anonymous
                    .as_ref()
                    .map_or("no one".into(), Identity::describe)
            ),
        }
    }
}

impl AuthConfig {
    pub fn single(access_key: impl Into<String>, secret_key: impl Into<String>) -> AuthConfig {
        AuthConfig::Users(HashMap::from([(access_key.into(), secret_key.into())]))
    }

    /// The users from `S3HPC_ACCESS_KEY`/`S3HPC_SECRET_KEY`, if both are set.
    pub fn from_env() -> Result<Option<AuthConfig>, String> {
        let get = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        match (get(ACCESS_KEY_ENV), get(SECRET_KEY_ENV)) {
            (Some(a), Some(s)) => Ok(Some(AuthConfig::single(a, s))),
            (None, None) => Ok(None),
            _ => Err(format!(
                "set both {ACCESS_KEY_ENV} and {SECRET_KEY_ENV}, or neither"
            )),
        }
    }

    /// Reads a credentials file: one key per line, `ACCESS_KEY SECRET_KEY
    /// [USER]` (blank-separated; `ACCESS_KEY:SECRET_KEY` also works for a
    /// line without USER); blank lines and `#` comments skipped. USER is a
    /// name from the user database or `UID:GID`, and uid 0 only written
    /// with a `!` (`root!`, `0:0!`). Any USER makes the server one of many
    /// users ([`AuthConfig::Mapped`]), where a line without USER is an
    /// administrator key: it acts as the server itself.
    pub fn from_file(path: &Path) -> Result<AuthConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading credentials file {}: {e}", path.display()))?;
        Self::parse_users(&text).map_err(|e| format!("credentials file {}: {e}", path.display()))
    }

    fn parse_users(text: &str) -> Result<AuthConfig, String> {
        let mut keys = HashMap::new();
        let mut order = Vec::new();
        let mut mapped = false;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = if line.contains(char::is_whitespace) {
                // `KEY: SECRET` too, as before USER was added.
                line.split_whitespace()
                    .map(|f| f.trim_matches(':'))
                    .filter(|f| !f.is_empty())
                    .collect()
            } else {
                line.split(':').filter(|f| !f.is_empty()).collect()
            };
            let (a, s, user) = match fields[..] {
                [a, s] => (a, s, Identity::server()),
                [a, s, user] => {
                    mapped = true;
                    let who = Identity::parse(user).map_err(|e| format!("line {}: {e}", i + 1))?;
                    (a, s, who)
                }
                _ => {
                    return Err(format!(
                        "line {}: expected `ACCESS_KEY SECRET_KEY [USER]`, got {} fields",
                        i + 1,
                        fields.len()
                    ))
                }
            };
            if keys.insert(a.to_string(), (s.to_string(), user)).is_some() {
                return Err(format!("line {}: access key {a} is listed twice", i + 1));
            }
            order.push(a.to_string());
        }
        if keys.is_empty() {
            return Err("no users: add lines of `ACCESS_KEY SECRET_KEY [USER]`".into());
        }
        Ok(if mapped {
            AuthConfig::Mapped(MappedUsers {
                keys,
                order,
                ..Default::default()
            })
        } else {
            AuthConfig::Users(keys.into_iter().map(|(a, (s, _))| (a, s)).collect())
        })
    }

    /// Makes unsigned requests act as `who` (`--anonymous-user`): a server
    /// of many users from then on.
    pub fn with_anonymous_user(self, who: Identity) -> AuthConfig {
        let mut m = self.into_mapped();
        m.anonymous = Some(who);
        AuthConfig::Mapped(m)
    }

    /// Adds the users' own keys and sessions from `store`: a server of
    /// many users from then on (the file's keys without USER stay
    /// administrator keys).
    pub fn with_key_store(self, store: Arc<s3hpc_keys::KeyStore>) -> AuthConfig {
        let mut m = self.into_mapped();
        m.store = Some(store);
        AuthConfig::Mapped(m)
    }

    /// Answers AssumeRoleWithWebIdentity for tokens of this issuer
    /// (sessions signed with the key store's key).
    pub fn with_oidc(self, config: crate::oidc::OidcConfig) -> AuthConfig {
        let mut m = self.into_mapped();
        m.oidc = Some(config);
        AuthConfig::Mapped(m)
    }

    /// The keys as a server of many users holds them: keys without a user
    /// act as the server.
    fn into_mapped(self) -> MappedUsers {
        match self {
            AuthConfig::Mapped(m) => m,
            AuthConfig::Users(u) => MappedUsers {
                keys: u
                    .into_iter()
                    .map(|(a, s)| (a, (s, Identity::server())))
                    .collect(),
                ..Default::default()
            },
            AuthConfig::Anonymous => MappedUsers::default(),
        }
    }

    /// ListBuckets answers each user the buckets it owns (S3's meaning)
    /// rather than those it may enter. Only with users: an administrator
    /// key sees every bucket in either case.
    pub fn with_owned_bucket_listing(self) -> AuthConfig {
        match self {
            AuthConfig::Mapped(mut m) => {
                m.list_owned_buckets = true;
                AuthConfig::Mapped(m)
            }
            other => other,
        }
    }

    /// Whether keys act as users other than the server (the server then
    /// needs the capabilities to switch, see `identity::check_can_switch`).
    pub fn maps_users(&self) -> bool {
        match self {
            AuthConfig::Mapped(m) => {
                m.store.is_some()
                    || m.keys.values().any(|(_, who)| !who.is_server())
                    || m.anonymous.as_ref().is_some_and(|w| !w.is_server())
            }
            _ => false,
        }
    }
}

/// How far a SigV2 header signature's `Date` may be from the server's
/// clock (AWS's limit, and s3s's for SigV4 headers).
const MAX_SKEW: time::Duration = time::Duration::minutes(15);
/// The longest a SigV4 presigned URL may be valid: 7 days.
const MAX_PRESIGNED_EXPIRES: i64 = 604_800;

/// The time limits of signatures that s3s does not check itself: a SigV2
/// header signature's `Date`/`x-amz-date` within 15 minutes of the server's
/// clock (else it could be replayed for ever), a SigV4 presigned URL's
/// `X-Amz-Expires` at most 7 days. s3s checks SigV4 header dates, presigned
/// URL expiry and SigV2 query `Expires`. It runs after s3s has checked the
/// signature, as its access hook, and refuses unsigned requests as s3s's
/// default hook does.
/// `anonymous`: unsigned requests pass (they act as the anonymous user).
pub(crate) struct SignatureTimeLimits {
    pub anonymous: bool,
}

#[async_trait::async_trait]
impl S3Access for SignatureTimeLimits {
    async fn check(&self, cx: &mut S3AccessContext<'_>) -> S3Result<()> {
        crate::observe::note_access(cx);
        if cx.credentials().is_none() {
            if self.anonymous {
                return Ok(());
            }
            return Err(s3_error!(AccessDenied, "Signature is required"));
        }
        check_time_limits(cx.headers(), cx.uri(), time::OffsetDateTime::now_utc())
    }
}

fn check_time_limits(
    headers: &hyper::HeaderMap,
    uri: &hyper::Uri,
    now: time::OffsetDateTime,
) -> S3Result<()> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let sigv2_header =
        header("authorization").is_some_and(|a| a.starts_with("AWS ") && !a.starts_with("AWS4-"));
    if sigv2_header {
        // In SigV2, x-amz-date takes the place of Date when both are sent.
        let date = header("x-amz-date")
            .or_else(|| header("date"))
            .and_then(parse_http_date)
            .ok_or_else(|| {
                s3_error!(
                    AccessDenied,
                    "AWS authentication requires a valid Date or x-amz-date header"
                )
            })?;
        if (now - date).abs() > MAX_SKEW {
            return Err(s3_error!(
                RequestTimeTooSkewed,
                "The difference between the request time and the current time is too large."
            ));
        }
    }
    let query = uri.query().unwrap_or("");
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    if param("X-Amz-Signature").is_some() {
        if let Some(expires) = param("X-Amz-Expires") {
            let bad = |m: &'static str| s3_error!(AuthorizationQueryParametersError, "{m}");
            let secs: i64 = expires
                .parse()
                .map_err(|_| bad("X-Amz-Expires should be a number"))?;
            if secs < 0 {
                return Err(bad("X-Amz-Expires must be non-negative"));
            }
            if secs > MAX_PRESIGNED_EXPIRES {
                return Err(bad(
                    "X-Amz-Expires must be less than a week (in seconds) that is 604800",
                ));
            }
        }
    }
    Ok(())
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, what SigV2 clients send)
/// or an ISO 8601 basic one (`19941106T084937Z`, which some send as
/// x-amz-date).
fn parse_http_date(s: &str) -> Option<time::OffsetDateTime> {
    use time::macros::format_description;
    let s = s.trim();
    let http = format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let basic = format_description!("[year][month][day]T[hour][minute][second]Z");
    time::PrimitiveDateTime::parse(s, http)
        .or_else(|_| time::PrimitiveDateTime::parse(s, basic))
        .ok()
        .map(time::PrimitiveDateTime::assume_utc)
}

/// The error for a body that does not match the `x-amz-content-sha256`
/// its signature covers (it was changed on the way, or by the sender).
pub(crate) fn content_sha256_mismatch() -> S3Error {
    let code =
        S3ErrorCode::from_bytes(b"XAmzContentSHA256Mismatch").expect("any UTF-8 is an error code");
    let mut e = S3Error::with_message(
        code,
        "The provided 'x-amz-content-sha256' header does not match what was computed: \
         the request body does not match its signed hash",
    );
    e.set_status_code(hyper::StatusCode::BAD_REQUEST);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigv2_dates_within_fifteen_minutes() {
        let now = parse_http_date("Wed, 25 Nov 2026 08:30:00 GMT").unwrap();
        let v2 = |date: &str, header: &'static str| {
            let mut h = hyper::HeaderMap::new();
            h.insert("authorization", "AWS AKID:c2ln".parse().unwrap());
            h.insert(header, date.parse().unwrap());
            check_time_limits(&h, &"/b/k".parse().unwrap(), now)
        };
        assert!(v2("Wed, 25 Nov 2026 08:44:59 GMT", "date").is_ok());
        assert!(v2("Wed, 25 Nov 2026 08:15:01 GMT", "date").is_ok());
        assert!(v2("20261125T083000Z", "x-amz-date").is_ok());
        for (date, header) in [
            ("Wed, 25 Nov 2026 08:45:01 GMT", "date"),
            ("Tue, 25 Nov 2025 08:30:00 GMT", "date"),
            ("20261125T080000Z", "x-amz-date"),
        ] {
            let e = v2(date, header).unwrap_err();
            assert_eq!(e.code(), &S3ErrorCode::RequestTimeTooSkewed, "{date}");
        }
        let e = v2("yesterday", "date").unwrap_err();
        assert_eq!(e.code(), &S3ErrorCode::AccessDenied);
        // SigV4 header dates are s3s's to check.
        let mut h = hyper::HeaderMap::new();
        h.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=x".parse().unwrap(),
        );
        h.insert("date", "Tue, 25 Nov 2025 08:30:00 GMT".parse().unwrap());
        assert!(check_time_limits(&h, &"/b/k".parse().unwrap(), now).is_ok());
    }

    #[test]
    fn presigned_expiry_at_most_a_week() {
        let now = time::OffsetDateTime::now_utc();
        let get = |q: &str| {
            let uri = format!("/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&{q}&X-Amz-Signature=ab");
            check_time_limits(&hyper::HeaderMap::new(), &uri.parse().unwrap(), now)
        };
        assert!(get("X-Amz-Expires=604800").is_ok());
        let e = get("X-Amz-Expires=604801").unwrap_err();
        assert_eq!(e.code(), &S3ErrorCode::AuthorizationQueryParametersError);
        assert!(e.message().unwrap().contains("604800"));
        assert!(get("X-Amz-Expires=-1").is_err());
        // SigV2 query Expires is a time, not a duration: s3s checks it.
        let uri = "/b/k?AWSAccessKeyId=a&Expires=99999999999&Signature=x".parse();
        assert!(check_time_limits(&hyper::HeaderMap::new(), &uri.unwrap(), now).is_ok());
    }

    #[test]
    fn parses_several_users_and_rejects_bad_lines() {
        let AuthConfig::Users(u) =
            AuthConfig::parse_users("# users\nalice s1\n\nbob:s2\n").unwrap()
        else {
            panic!("expected users")
        };
        assert_eq!(u.get("alice").map(String::as_str), Some("s1"));
        assert_eq!(u.get("bob").map(String::as_str), Some("s2"));
        let err = AuthConfig::parse_users("alice\n").err().unwrap();
        assert!(err.contains("line 1"), "{err}");
        assert!(AuthConfig::parse_users("a x\na y\n")
            .err()
            .unwrap()
            .contains("twice"));
        assert!(AuthConfig::parse_users("# nothing\n").is_err());
    }

    #[test]
    fn a_third_field_maps_keys_to_users() {
        let AuthConfig::Mapped(m) =
            AuthConfig::parse_users("admin s0\nalice s1 4242:4343\n").unwrap()
        else {
            panic!("expected mapped users")
        };
        assert!(m.keys["admin"].1.is_server());
        let alice = m.keys["alice"].1.user().unwrap();
        assert_eq!((alice.uid, alice.gid), (4242, 4343));
        assert!(m.anonymous.is_none());
        let e = AuthConfig::parse_users("a s 0:0\n").err().unwrap();
        assert!(e.contains("line 1") && e.contains("0:0!"), "{e}");
        assert!(AuthConfig::parse_users("a s 0:0!\n").unwrap().maps_users());
        assert!(AuthConfig::parse_users("a s u x\n").is_err());
        let anon = AuthConfig::Anonymous.with_anonymous_user(Identity::parse("7:7").unwrap());
        assert!(anon.maps_users());
    }
}
