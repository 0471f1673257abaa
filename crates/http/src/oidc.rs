//! OIDC logins: an ID token from the centre's identity provider (Keycloak,
//! Hydra, ...) verified against the keys the issuer publishes, and one of
//! its claims mapped to a POSIX user through the user database.
//!
//! The issuer's keys are fetched from its discovery document
//! (`ISSUER/.well-known/openid-configuration`, then `jwks_uri`) and kept;
//! a token signed with a key id not among them fetches them again (the
//! issuer rotated its keys), at most once a minute.

use s3hpc_store::Identity;
use serde::Deserialize;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How `--oidc-issuer`, `--oidc-audience` and `--oidc-user-claim` set it.
#[derive(Debug, Clone)]
pub struct OidcConfig {
    /// The `iss` every token must carry, and where its keys are published.
    pub issuer: String,
    /// The `aud` a token must carry one of (the client id s3hpc is
    /// registered as at the provider).
    pub audiences: Vec<String>,
    /// The claim that names the POSIX user: a user name
    /// (`preferred_username`) or a uid.
    pub user_claim: String,
}

/// Why a token is refused, with STS's code for it.
#[derive(Debug)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

fn refused(code: &'static str, message: impl Into<String>) -> Refusal {
    Refusal {
        code,
        message: message.into(),
    }
}

/// A verified login.
#[derive(Debug)]
pub struct Login {
    pub who: Identity,
    pub subject: String,
    pub audience: String,
}

/// Refetching unknown keys at most this often: a token with a made-up key
/// id must not make the server hammer the issuer.
const REFETCH: Duration = Duration::from_secs(60);
/// Discovery and key requests to the issuer give up after this long.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Oidc {
    config: OidcConfig,
    keys: Mutex<Option<(Instant, jsonwebtoken::jwk::JwkSet)>>,
}

#[derive(Deserialize)]
struct Discovery {
    issuer: String,
    jwks_uri: String,
}

impl Oidc {
    pub fn new(config: OidcConfig) -> Oidc {
        Oidc {
            config,
            keys: Mutex::new(None),
        }
    }

    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// Verifies `token` (signature, issuer, audience, expiry) and maps its
    /// user claim. Blocking: it may fetch the issuer's keys.
    pub fn login(&self, token: &str) -> Result<Login, Refusal> {
        use jsonwebtoken::{errors::ErrorKind, Algorithm};
        let invalid = |m: String| refused("InvalidIdentityToken", m);
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| invalid(format!("the web identity token is not a JWT: {e}")))?;
        // A shared-secret (HS*) token could be made by anyone who knows
        // the secret; an issuer signs with its private key.
        if matches!(
            header.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        ) {
            return Err(invalid(format!(
                "the token is signed with {:?}, a shared secret; an OIDC issuer signs ID \
                 tokens with its published keys",
                header.alg
            )));
        }
        let key = self.key(header.kid.as_deref())?;
        let decoding = jsonwebtoken::DecodingKey::from_jwk(&key).map_err(|e| {
            invalid(format!(
                "the issuer's key {:?} is unusable: {e}",
                header.kid
            ))
        })?;
        let mut v = jsonwebtoken::Validation::new(header.alg);
        v.set_issuer(&[&self.config.issuer]);
        v.set_audience(&self.config.audiences);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.leeway = 0;
        let data =
            jsonwebtoken::decode::<serde_json::Value>(token, &decoding, &v).map_err(|e| match e
                .kind()
            {
                ErrorKind::ExpiredSignature => refused(
                    "ExpiredTokenException",
                    "Token expired: the web identity token's exp has passed; log in again",
                ),
                ErrorKind::InvalidAudience => invalid(format!(
                    "Incorrect token audience: this server accepts {:?}",
                    self.config.audiences
                )),
                ErrorKind::InvalidIssuer => invalid(format!(
                    "the token was not issued by {}, the issuer this server trusts",
                    self.config.issuer
                )),
                ErrorKind::InvalidSignature => {
                    invalid("the token's signature does not verify with the issuer's key".into())
                }
                _ => invalid(format!("the web identity token is refused: {e}")),
            })?;
        let claims = data.claims;
        let text = |name: &str| match claims.get(name) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let subject = text("sub").unwrap_or_default();
        let audience = match claims.get("aud") {
            Some(serde_json::Value::Array(a)) => a
                .iter()
                .filter_map(|x| x.as_str())
                .find(|a| self.config.audiences.iter().any(|c| c == a))
                .unwrap_or_default()
                .to_owned(),
            _ => text("aud").unwrap_or_default(),
        };
        let name = text(&self.config.user_claim).ok_or_else(|| {
            refused(
                "IDPRejectedClaim",
                format!(
                    "the token has no {:?} claim to name a POSIX user (--oidc-user-claim)",
                    self.config.user_claim
                ),
            )
        })?;
        let who = user(&name).map_err(|why| refused("AccessDenied", why))?;
        Ok(Login {
            who,
            subject,
            audience,
        })
    }

    /// The issuer's key `kid` (or its only key), fetching the keys when
    /// none are held or `kid` is new to them.
    fn key(&self, kid: Option<&str>) -> Result<jsonwebtoken::jwk::Jwk, Refusal> {
        let pick = |set: &jsonwebtoken::jwk::JwkSet| match kid {
            Some(k) => set.find(k).cloned(),
            None if set.keys.len() == 1 => set.keys.first().cloned(),
            None => None,
        };
        let mut held = self.keys.lock().expect("not poisoned");
        if let Some((_, set)) = held.as_ref() {
            if let Some(k) = pick(set) {
                return Ok(k);
            }
        }
        let stale = held.as_ref().is_none_or(|(at, _)| at.elapsed() >= REFETCH);
        if stale {
            let set = self
                .fetch()
                .map_err(|e| refused("IDPCommunicationError", e))?;
            *held = Some((Instant::now(), set));
        }
        held.as_ref().and_then(|(_, set)| pick(set)).ok_or_else(|| {
            refused(
                "InvalidIdentityToken",
                format!("the issuer {} publishes no key {kid:?}", self.config.issuer),
            )
        })
    }

    fn fetch(&self) -> Result<jsonwebtoken::jwk::JwkSet, String> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(FETCH_TIMEOUT))
            .build()
            .into();
        let get = |url: &str| -> Result<String, String> {
            agent
                .get(url)
                .call()
                .map_err(|e| format!("fetching {url}: {e}"))?
                .body_mut()
                .read_to_string()
                .map_err(|e| format!("reading {url}: {e}"))
        };
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.config.issuer.trim_end_matches('/')
        );
        let d: Discovery = serde_json::from_str(&get(&url)?)
            .map_err(|e| format!("{url} is not an OpenID discovery document: {e}"))?;
        if d.issuer != self.config.issuer {
            return Err(format!(
                "{url} names issuer {:?}, not {:?} (--oidc-issuer must be exactly the \
                 issuer's)",
                d.issuer, self.config.issuer
            ));
        }
        serde_json::from_str(&get(&d.jwks_uri)?)
            .map_err(|e| format!("{} is not a JSON Web Key Set: {e}", d.jwks_uri))
    }
}

/// The POSIX user a claim names: a user name, or a uid. Root is never
/// reached by a login.
fn user(claim: &str) -> Result<Identity, String> {
    // Only a plain name or uid: not the credentials file's `UID:GID` or
    // `name!` (which is how uid 0 is allowed there).
    if claim.contains([':', '!']) || claim.is_empty() {
        return Err(format!(
            "{claim:?} (from the token) is not a user name or uid"
        ));
    }
    let name = match claim.parse::<u32>() {
        Ok(uid) => s3hpc_store::identity::user_name(uid)
            .ok_or_else(|| format!("uid {uid} (from the token) is not in the user database"))?,
        Err(_) => claim.to_owned(),
    };
    Identity::parse(&name).map_err(|e| format!("the token's user: {e}"))
}
