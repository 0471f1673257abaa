//! Owners as S3 shows them: a file's uid mapped back to an S3 identity.
//! The Owner ID is the access key of the first credentials line mapped to
//! that uid (administrator keys map to the server's own uid), else
//! `uid:N`; the DisplayName is the user's name in the user database, else
//! the uid. Looked up once per uid and cached, so a listing pays a map
//! lookup per key, no system call.

use crate::auth::AuthConfig;
use s3hpc_store::identity;
use s3s::dto::Owner;
use std::collections::HashMap;
use std::sync::RwLock;

/// A mapped access key, as grants name it.
#[derive(Debug, Clone)]
pub(crate) struct KeyUser {
    pub access_key: String,
    pub uid: u32,
    pub groups: Vec<u32>,
}

pub(crate) struct Owners {
    /// The first key of each uid, in the credentials' order.
    keys: Vec<KeyUser>,
    /// Every key's uid.
    by_key: HashMap<String, u32>,
    /// Whether unsigned requests act as someone: then the "other" class
    /// of the mode bits is S3's AllUsers, else AuthenticatedUsers.
    pub anonymous: bool,
    /// ListBuckets shows a user only its own buckets (`MappedUsers`).
    pub list_owned_buckets: bool,
    cache: RwLock<HashMap<u32, Owner>>,
}

impl Owners {
    pub fn new(auth: &AuthConfig) -> Owners {
        let server = identity::server_uid();
        let mut pairs: Vec<(String, u32, Vec<u32>)> = Vec::new();
        let anonymous = match auth {
            AuthConfig::Mapped(m) => {
                let mut order = m.order.clone();
                let mut rest: Vec<&String> = m.keys.keys().filter(|k| !order.contains(k)).collect();
                rest.sort();
                order.extend(rest.into_iter().cloned());
                for key in order {
                    let Some((_, who)) = m.keys.get(&key) else {
                        continue;
                    };
                    let (uid, groups) = who
                        .user()
                        .map_or((server, Vec::new()), |u| (u.uid, u.groups.clone()));
                    pairs.push((key, uid, groups));
                }
                m.anonymous.is_some()
            }
            AuthConfig::Users(u) => {
                let mut keys: Vec<&String> = u.keys().collect();
                keys.sort();
                pairs.extend(keys.into_iter().map(|k| (k.clone(), server, Vec::new())));
                false
            }
            AuthConfig::Anonymous => true,
        };
        let by_key = pairs.iter().map(|(k, u, _)| (k.clone(), *u)).collect();
        let mut keys: Vec<KeyUser> = Vec::new();
        for (access_key, uid, groups) in pairs {
            if !keys.iter().any(|k| k.uid == uid) {
                keys.push(KeyUser {
                    access_key,
                    uid,
                    groups,
                });
            }
        }
        Owners {
            keys,
            by_key,
            anonymous,
            list_owned_buckets: matches!(auth, AuthConfig::Mapped(m) if m.list_owned_buckets),
            cache: RwLock::default(),
        }
    }

    /// The S3 owner of files owned by `uid`.
    pub fn of(&self, uid: u32) -> Owner {
        if let Some(o) = self.cache.read().expect("not poisoned").get(&uid) {
            return o.clone();
        }
        let id = self
            .keys
            .iter()
            .find(|k| k.uid == uid)
            .map_or_else(|| format!("uid:{uid}"), |k| k.access_key.clone());
        let owner = Owner {
            display_name: Some(identity::user_name(uid).unwrap_or_else(|| uid.to_string())),
            id: Some(id),
        };
        let mut cache = self.cache.write().expect("not poisoned");
        if cache.len() >= 65536 {
            cache.clear();
        }
        cache.insert(uid, owner.clone());
        owner
    }

    /// The uid an Owner ID names: a mapped key (or any key of the
    /// credentials), or `uid:N`.
    pub fn uid_of(&self, id: &str) -> Option<u32> {
        if let Some(n) = id.strip_prefix("uid:") {
            return n.parse().ok();
        }
        self.by_key.get(id).copied()
    }

    /// The mapped keys (one per uid) whose user is in group `gid`.
    pub fn members(&self, gid: u32) -> impl Iterator<Item = &KeyUser> {
        self.keys.iter().filter(move |k| k.groups.contains(&gid))
    }
}

/// The uid whose rights `who` acts with (the server's for an administrator).
pub(crate) fn uid(who: &s3hpc_store::Identity) -> u32 {
    who.user().map_or_else(identity::server_uid, |u| u.uid)
}
