//! Who a signed request is: the keys of the credentials file (reloaded on
//! SIGHUP) and, with `--key-store`, the users' own keys and sessions.
//!
//! The file's keys sit in one table swapped whole on a reload; the store
//! keeps its own snapshot ([`KeyStore::lookup`]). A request costs a read
//! lock and a hash lookup, or for a session an HMAC: no file-system call.

use crate::auth::AuthConfig;
use crate::owners::Owners;
use s3hpc_keys::{KeyStore, Refused};
use s3hpc_store::Identity;
use s3s::auth::{S3Auth, SecretKey};
use s3s::{s3_error, S3Result};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// What one table of the credentials file gives: each key's secret and
/// identity, and the S3 owners they make.
struct Table {
    keys: HashMap<String, (String, Identity)>,
    owners: Arc<Owners>,
}

pub struct Keyring {
    table: RwLock<Arc<Table>>,
    store: Option<Arc<KeyStore>>,
    /// Whom unsigned requests act as; None refuses them.
    pub(crate) anonymous: Option<Identity>,
    /// Requests of every file key act as the server (no USER column).
    all_server: bool,
}

/// A request's sender, as the keyring knows it.
pub(crate) struct Sender {
    pub who: Identity,
    pub owners: Arc<Owners>,
    /// For the access log: `file` (the credentials file), `key`,
    /// `session` or `oidc`.
    pub kind: &'static str,
}

impl Keyring {
    /// The keyring of a server that checks signatures (None for an
    /// anonymous server).
    pub fn new(auth: &AuthConfig) -> Option<Arc<Keyring>> {
        let (table, store, anonymous, all_server) = match auth {
            AuthConfig::Anonymous => return None,
            AuthConfig::Users(_) => (table_of(auth), None, None, true),
            AuthConfig::Mapped(m) => (table_of(auth), m.store.clone(), m.anonymous.clone(), false),
        };
        Some(Arc::new(Keyring {
            table: RwLock::new(Arc::new(table)),
            store,
            anonymous,
            all_server,
        }))
    }

    /// Takes the keys of a re-read credentials file (SIGHUP). The store,
    /// the anonymous user and the server's mode stay as started.
    pub fn reload(&self, auth: &AuthConfig) -> Result<usize, String> {
        match auth {
            AuthConfig::Anonymous => return Err("an anonymous server has no keys".into()),
            AuthConfig::Mapped(_) if self.all_server => {
                return Err(
                    "the credentials file now maps keys to users (a USER column); that needs \
                     a restart of the server, which started with administrator keys only"
                        .into(),
                )
            }
            _ => {}
        }
        let table = table_of(auth);
        let n = table.keys.len();
        *self.table.write().expect("not poisoned") = Arc::new(table);
        Ok(n)
    }

    pub fn store(&self) -> Option<&Arc<KeyStore>> {
        self.store.as_ref()
    }

    /// The sender of a request signed with `access_key`, carrying `token`
    /// (x-amz-security-token); the signature was checked with
    /// [`Keyring::secret`]'s answer.
    pub(crate) fn sender(&self, access_key: &str, token: Option<&str>) -> S3Result<Sender> {
        let table = self.table.read().expect("not poisoned").clone();
        if let Some((_, who)) = table.keys.get(access_key) {
            return Ok(Sender {
                who: if self.all_server {
                    Identity::server()
                } else {
                    who.clone()
                },
                owners: table.owners.clone(),
                kind: "file",
            });
        }
        let found = self.found(access_key)?;
        if let Some(want) = &found.token {
            match token {
                Some(t) if s3hpc_keys::session::same(t, want) => {}
                Some(_) => {
                    return Err(s3_error!(
                        InvalidToken,
                        "The provided token is malformed or otherwise invalid: it is not the \
                         session token of access key {access_key}"
                    ))
                }
                None => {
                    return Err(s3_error!(
                        InvalidToken,
                        "access key {access_key} is temporary: send its session token \
                         (x-amz-security-token, AWS_SESSION_TOKEN)"
                    ))
                }
            }
        }
        Ok(Sender {
            who: Identity::of_peer(found.uid, found.gid),
            owners: table.owners.clone(),
            kind: found.kind.as_str(),
        })
    }

    fn found(&self, access_key: &str) -> S3Result<s3hpc_keys::Found> {
        let unknown = || {
            s3_error!(
                InvalidAccessKeyId,
                "the access key {access_key} is not known to this server"
            )
        };
        let store = self.store.as_ref().ok_or_else(unknown)?;
        store.lookup(access_key).map_err(|r| match r {
            Refused::Unknown => unknown(),
            Refused::Expired if access_key.starts_with(s3hpc_keys::session::PREFIX) => s3_error!(
                ExpiredToken,
                "The provided token has expired: get new credentials with `s3hpc creds`"
            ),
            Refused::Expired => s3_error!(
                InvalidAccessKeyId,
                "the access key {access_key} has expired; make a new one with `s3hpc keys create`"
            ),
            Refused::Revoked => s3_error!(
                InvalidToken,
                "The provided token has been revoked (every key of its user was revoked after \
                 it was issued)"
            ),
        })
    }
}

fn table_of(auth: &AuthConfig) -> Table {
    let keys = match auth {
        AuthConfig::Users(u) => u
            .iter()
            .map(|(a, s)| (a.clone(), (s.clone(), Identity::server())))
            .collect(),
        AuthConfig::Mapped(m) => m.keys.clone(),
        AuthConfig::Anonymous => HashMap::new(),
    };
    Table {
        keys,
        owners: Arc::new(Owners::new(auth)),
    }
}

/// The s3s key lookup. Unlike s3s's `SimpleAuth`, an unknown key answers
/// InvalidAccessKeyId, as S3 does.
pub(crate) struct KeyringAuth(pub Arc<Keyring>);

#[async_trait::async_trait]
impl S3Auth for KeyringAuth {
    async fn get_secret_key(&self, access_key: &str) -> S3Result<SecretKey> {
        let table = self.0.table.read().expect("not poisoned").clone();
        if let Some((secret, _)) = table.keys.get(access_key) {
            return Ok(SecretKey::from(secret.as_str()));
        }
        Ok(SecretKey::from(self.0.found(access_key)?.secret))
    }
}
