//! The key store: a directory on the shared file system that every server
//! of a cluster reads, private to the servers' user.
//!
//! ```text
//! DIR/signing-key          32 random bytes (hex): signs session credentials
//! DIR/keys/AK.json         one long-lived key: its secret, uid, gid, times
//! DIR/revoked/UID          sessions of UID issued up to this second are void
//! DIR/used/AK@HOST         when HOST last served a request signed with AK
//! ```
//!
//! A key file is written once, under a temporary name, and published with
//! `link` (which never replaces: two nodes creating keys at once both
//! land); revoking unlinks it. Servers never read the store per request:
//! they keep a snapshot, and a thread stats the two directories every
//! second and reads what changed (a full rescan every few seconds covers
//! clients whose directory times lag), so a new key or a revocation is
//! seen everywhere within [`SEEN_WITHIN`].

use crate::session::{self, Claims, Origin};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often a server looks at the store's directories.
const POLL: Duration = Duration::from_secs(1);
/// How often it reads them whole, whatever their times say.
const FULL_SCAN: Duration = Duration::from_secs(5);
/// How often last uses are written to the store.
const FLUSH_USES: Duration = Duration::from_secs(30);
/// The longest a change takes to reach every server: a full scan, plus a
/// poll's slack.
pub const SEEN_WITHIN: Duration = Duration::from_secs(7);
/// The longest session a server grants.
pub const MAX_SESSION: Duration = Duration::from_secs(7 * 24 * 3600);
/// Long-lived access keys start with this (sessions with `S3HS`).
pub const KEY_PREFIX: &str = "S3HK";

/// What a long-lived key's file holds. The secret is kept because SigV4
/// is symmetric: verifying a signature means computing it again, with
/// the secret (docs: the guide's "Users and keys").
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    access_key: String,
    secret: String,
    uid: u32,
    gid: u32,
    created: u64,
    expires: Option<u64>,
}

/// A key as `keys list` shows it: never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyInfo {
    pub access_key: String,
    pub uid: u32,
    pub created: u64,
    pub expires: Option<u64>,
    /// The latest request any server answered with it, as far as the
    /// servers have written down (they do every 30 s).
    pub last_used: Option<u64>,
}

/// A key just made: the only time its secret is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewKey {
    pub access_key: String,
    pub secret: String,
    pub expires: Option<u64>,
}

/// Temporary credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCredentials {
    pub access_key: String,
    pub secret: String,
    pub token: String,
    pub expires: u64,
}

/// The kind of key a request was signed with, for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A user's own key from the store.
    LongLived,
    /// Temporary credentials from `s3hpc creds`.
    Session,
    /// Temporary credentials for an OIDC login.
    Oidc,
}

impl KeyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::LongLived => "key",
            KeyKind::Session => "session",
            KeyKind::Oidc => "oidc",
        }
    }
}

/// A known key: what to verify the signature with and whom it acts as.
#[derive(Debug, Clone)]
pub struct Found {
    pub secret: String,
    pub uid: u32,
    pub gid: u32,
    pub kind: KeyKind,
    /// The session token a request with this key must carry.
    pub token: Option<String>,
}

/// Why a key is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    Unknown,
    Expired,
    /// A session of a user whose keys were all revoked after it was issued.
    Revoked,
}

/// What servers hold in memory: swapped whole when the store changes.
#[derive(Default)]
struct Snapshot {
    keys: HashMap<String, Arc<Loaded>>,
    not_before: HashMap<u32, u64>,
}

struct Loaded {
    entry: Entry,
    last_used: AtomicU64,
    flushed: AtomicU64,
}

impl Loaded {
    fn info(&self, last_used: Option<u64>) -> KeyInfo {
        KeyInfo {
            access_key: self.entry.access_key.clone(),
            uid: self.entry.uid,
            created: self.entry.created,
            expires: self.entry.expires,
            last_used,
        }
    }
}

struct Scan {
    stamps: (i64, i64, i64, i64),
    full_at: std::time::Instant,
    flushed_at: std::time::Instant,
    /// Files already reported unreadable, so each is logged once.
    reported: HashSet<String>,
}

pub struct KeyStore {
    dir: PathBuf,
    signing_key: Vec<u8>,
    host: String,
    snapshot: RwLock<Arc<Snapshot>>,
    scan: Mutex<Scan>,
    log: Box<dyn Fn(&str) + Send + Sync>,
}

impl std::fmt::Debug for KeyStore {
    // Never the signing key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyStore({})", self.dir.display())
    }
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).expect("the kernel's random numbers");
    b
}

impl KeyStore {
    /// Opens (or makes) the store at `dir`, which must be the server's
    /// alone: owned by its user, no access for group or others. `log`
    /// receives one line per unreadable entry.
    pub fn open(
        dir: &Path,
        log: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<Arc<KeyStore>, String> {
        let err =
            |what: &str, e: std::io::Error| format!("key store {}: {what}: {e}", dir.display());
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .map_err(|e| err("creating it", e))?;
        }
        let meta = std::fs::metadata(dir).map_err(|e| err("stat", e))?;
        let me = rustix::process::geteuid().as_raw();
        if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o077 != 0 {
            return Err(format!(
                "key store {} is mode {:o} and owned by uid {}: it holds every user's secret, \
                 so it must be the server's alone (uid {me}): chown {me} {0} && chmod 700 {0}",
                dir.display(),
                meta.mode() & 0o7777,
                meta.uid(),
            ));
        }
        for sub in ["keys", "revoked", "used"] {
            let p = dir.join(sub);
            if !p.exists() {
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .create(&p)
                    .or_else(|e| match e.kind() {
                        std::io::ErrorKind::AlreadyExists => Ok(()),
                        _ => Err(e),
                    })
                    .map_err(|e| err(&format!("creating {sub}/"), e))?;
            }
        }
        let signing_key = signing_key(dir).map_err(|e| err("the signing key", e))?;
        let host = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        let store = Arc::new(KeyStore {
            dir: dir.to_path_buf(),
            signing_key,
            host,
            snapshot: RwLock::default(),
            scan: Mutex::new(Scan {
                stamps: (0, 0, 0, 0),
                full_at: std::time::Instant::now(),
                flushed_at: std::time::Instant::now(),
                reported: HashSet::new(),
            }),
            log: Box::new(log),
        });
        store.reload();
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keeps this server's snapshot current and its last uses written,
    /// on a thread of its own, until the store is dropped.
    pub fn spawn_refresher(self: &Arc<Self>) -> std::io::Result<()> {
        let weak: Weak<KeyStore> = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("key-store".into())
            .spawn(move || loop {
                std::thread::sleep(POLL);
                let Some(store) = weak.upgrade() else { return };
                store.refresh();
            })
            .map(drop)
    }

    /// The poll: reloads when a directory changed or a full scan is due,
    /// and writes last uses when due.
    pub fn refresh(&self) {
        let stamps = self.stamps();
        let (changed, flush) = {
            let mut scan = self.scan.lock().expect("not poisoned");
            let due = scan.full_at.elapsed() >= FULL_SCAN;
            let changed = due || stamps != scan.stamps;
            let flush = scan.flushed_at.elapsed() >= FLUSH_USES;
            if flush {
                scan.flushed_at = std::time::Instant::now();
            }
            (changed, flush)
        };
        if changed {
            self.reload();
        }
        if flush {
            self.flush_uses();
        }
    }

    fn stamps(&self) -> (i64, i64, i64, i64) {
        let stamp = |sub: &str| {
            std::fs::metadata(self.dir.join(sub)).map_or((0, 0), |m| (m.mtime(), m.mtime_nsec()))
        };
        let (a, b) = stamp("keys");
        let (c, d) = stamp("revoked");
        (a, b, c, d)
    }

    /// Reads the store's keys and revocations into a new snapshot,
    /// keeping the loaded entries (and their last uses) that remain.
    fn reload(&self) {
        let stamps = self.stamps();
        let old = self.snapshot.read().expect("not poisoned").clone();
        let mut next = Snapshot::default();
        let mut bad = Vec::new();
        if let Ok(dir) = std::fs::read_dir(self.dir.join("keys")) {
            for e in dir.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(ak) = name.strip_suffix(".json") else {
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                if let Some(l) = old.keys.get(ak) {
                    next.keys.insert(ak.to_owned(), l.clone());
                    continue;
                }
                match read_entry(&e.path(), ak) {
                    Ok(entry) => {
                        next.keys.insert(
                            ak.to_owned(),
                            Arc::new(Loaded {
                                entry,
                                last_used: AtomicU64::new(0),
                                flushed: AtomicU64::new(0),
                            }),
                        );
                    }
                    Err(why) => bad.push((name, why)),
                }
            }
        }
        if let Ok(dir) = std::fs::read_dir(self.dir.join("revoked")) {
            for e in dir.flatten() {
                let uid = e.file_name().to_string_lossy().parse::<u32>();
                let at = std::fs::read_to_string(e.path())
                    .ok()
                    .and_then(|t| t.trim().parse::<u64>().ok());
                if let (Ok(uid), Some(at)) = (uid, at) {
                    next.not_before.insert(uid, at);
                }
            }
        }
        *self.snapshot.write().expect("not poisoned") = Arc::new(next);
        let mut scan = self.scan.lock().expect("not poisoned");
        scan.stamps = stamps;
        scan.full_at = std::time::Instant::now();
        for (name, why) in bad {
            if scan.reported.insert(name.clone()) {
                (self.log)(&format!(
                    "key store: keys/{name} is refused: {why} (its key works nowhere until the \
                     file is mended or removed)"
                ));
            }
        }
    }

    /// The key and whom it acts as. Long-lived keys come from the
    /// snapshot; session keys are verified from their claims alone.
    pub fn lookup(&self, access_key: &str) -> Result<Found, Refused> {
        let now = now_secs();
        let snap = self.snapshot.read().expect("not poisoned").clone();
        if let Some(claims) = Claims::parse(access_key) {
            if u64::from(claims.expires) <= now {
                return Err(Refused::Expired);
            }
            if snap
                .not_before
                .get(&claims.uid)
                .is_some_and(|&t| u64::from(claims.issued) <= t)
            {
                return Err(Refused::Revoked);
            }
            let (secret, token) = self.derived(access_key);
            return Ok(Found {
                secret,
                uid: claims.uid,
                gid: claims.gid,
                kind: match claims.origin {
                    Origin::Socket => KeyKind::Session,
                    Origin::Oidc => KeyKind::Oidc,
                },
                token: Some(token),
            });
        }
        let l = snap.keys.get(access_key).ok_or(Refused::Unknown)?;
        if l.entry.expires.is_some_and(|t| t <= now) {
            return Err(Refused::Expired);
        }
        // One store per second at most: the write is a cache line, not a
        // request's cost.
        if l.last_used.load(Ordering::Relaxed) != now {
            l.last_used.store(now, Ordering::Relaxed);
        }
        Ok(Found {
            secret: l.entry.secret.clone(),
            uid: l.entry.uid,
            gid: l.entry.gid,
            kind: KeyKind::LongLived,
            token: None,
        })
    }

    /// A session key's secret and token. A request looks its key up twice
    /// (the signature check, then its sender), on one thread: the last
    /// derivation is kept per thread, which halves the HMACs.
    fn derived(&self, access_key: &str) -> (String, String) {
        // Keyed by the signing key too: another store (a test's) signs
        // another secret for the same access key.
        type Last = Option<(Vec<u8>, String, (String, String))>;
        thread_local! {
            static LAST: std::cell::RefCell<Last> = const { std::cell::RefCell::new(None) };
        }
        LAST.with(|last| {
            if let Some((key, ak, d)) = &*last.borrow() {
                if *key == self.signing_key && ak == access_key {
                    return d.clone();
                }
            }
            let d = session::derive(&self.signing_key, access_key);
            *last.borrow_mut() = Some((self.signing_key.clone(), access_key.to_owned(), d.clone()));
            d
        })
    }

    /// A new long-lived key for `uid`, valid for `valid_for` (or until
    /// revoked).
    pub fn create(
        &self,
        uid: u32,
        gid: u32,
        valid_for: Option<Duration>,
    ) -> Result<NewKey, String> {
        let now = now_secs();
        let entry = Entry {
            access_key: format!(
                "{KEY_PREFIX}{}",
                data_encoding::BASE32_NOPAD.encode(&random::<10>())
            ),
            secret: data_encoding::BASE64URL_NOPAD.encode(&random::<30>()),
            uid,
            gid,
            created: now,
            expires: valid_for.map(|d| now + d.as_secs().max(1)),
        };
        let keys = self.dir.join("keys");
        let text = serde_json::to_vec(&entry).expect("plain data");
        publish(&keys, &format!("{}.json", entry.access_key), &text)
            .map_err(|e| format!("writing the key to {}: {e}", keys.display()))?;
        self.reload();
        Ok(NewKey {
            access_key: entry.access_key,
            secret: entry.secret,
            expires: entry.expires,
        })
    }

    /// Keys of `uid`, or all with None, oldest first, with last uses.
    pub fn list(&self, uid: Option<u32>) -> Vec<KeyInfo> {
        self.flush_uses();
        self.reload();
        let uses = self.last_uses();
        let snap = self.snapshot.read().expect("not poisoned").clone();
        let mut out: Vec<KeyInfo> = snap
            .keys
            .values()
            .filter(|l| uid.is_none_or(|u| l.entry.uid == u))
            .map(|l| l.info(uses.get(&l.entry.access_key).copied()))
            .collect();
        out.sort_by(|a, b| (a.created, &a.access_key).cmp(&(b.created, &b.access_key)));
        out
    }

    /// Revokes one key. `caller`: the uid asking, and whether it may act
    /// for everyone (root, the server's user).
    pub fn revoke(
        &self,
        access_key: &str,
        caller: u32,
        privileged: bool,
    ) -> Result<KeyInfo, String> {
        self.reload();
        let snap = self.snapshot.read().expect("not poisoned").clone();
        // Another user's key answers as an unknown one: no probing of
        // which keys exist.
        let l = snap
            .keys
            .get(access_key)
            .filter(|l| privileged || l.entry.uid == caller)
            .ok_or_else(|| {
                format!("no key {access_key} of yours (uid {caller}) in the key store")
            })?;
        self.remove(&[access_key])?;
        Ok(l.info(None))
    }

    /// Revokes every key of `uid` and voids its sessions issued so far
    /// (offboarding, or a leaked session). Returns the keys removed.
    pub fn revoke_all(&self, uid: u32) -> Result<Vec<KeyInfo>, String> {
        let now = now_secs();
        publish_replacing(
            &self.dir.join("revoked"),
            &uid.to_string(),
            now.to_string().as_bytes(),
        )
        .map_err(|e| format!("writing revoked/{uid}: {e}"))?;
        self.reload();
        let snap = self.snapshot.read().expect("not poisoned").clone();
        let mine: Vec<&Arc<Loaded>> = snap.keys.values().filter(|l| l.entry.uid == uid).collect();
        let names: Vec<&str> = mine.iter().map(|l| l.entry.access_key.as_str()).collect();
        self.remove(&names)?;
        Ok(mine.iter().map(|l| l.info(None)).collect())
    }

    /// Unlinks these keys' files and their last uses, then reloads.
    fn remove(&self, access_keys: &[&str]) -> Result<(), String> {
        let keys = self.dir.join("keys");
        for ak in access_keys {
            let path = keys.join(format!("{ak}.json"));
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("removing {}: {e}", path.display())),
            }
        }
        sync_dir(&keys);
        for e in std::fs::read_dir(self.dir.join("used"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name
                .split_once('@')
                .is_some_and(|(ak, _)| access_keys.contains(&ak))
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
        self.reload();
        Ok(())
    }

    /// Temporary credentials for `uid`, valid for `valid_for` (at most
    /// [`MAX_SESSION`]). Nothing is written: every server verifies them
    /// with the signing key.
    pub fn session(
        &self,
        origin: Origin,
        uid: u32,
        gid: u32,
        valid_for: Duration,
    ) -> Result<SessionCredentials, String> {
        if valid_for > MAX_SESSION {
            return Err(format!(
                "a session may last at most {} days; ask for less, or make a key with `s3hpc \
                 keys create --expires`",
                MAX_SESSION.as_secs() / 86400
            ));
        }
        let now = now_secs();
        let not_before = self
            .snapshot
            .read()
            .expect("not poisoned")
            .not_before
            .get(&uid)
            .copied()
            .unwrap_or(0);
        // Issued after any revocation, so a session made in the second of
        // a revocation stays valid.
        let issued = now.max(not_before + 1);
        let expires = now + valid_for.as_secs().max(1);
        let to32 = |t: u64| u32::try_from(t).map_err(|_| "a time past 2106".to_string());
        let claims = Claims {
            origin,
            uid,
            gid,
            issued: to32(issued)?,
            expires: to32(expires)?,
            nonce: u32::from_be_bytes(random::<4>()),
        };
        let access_key = claims.access_key();
        let (secret, token) = session::derive(&self.signing_key, &access_key);
        Ok(SessionCredentials {
            access_key,
            secret,
            token,
            expires,
        })
    }

    /// Writes down the keys this server used since it last did.
    fn flush_uses(&self) {
        let snap = self.snapshot.read().expect("not poisoned").clone();
        for l in snap.keys.values() {
            let used = l.last_used.load(Ordering::Relaxed);
            if used > l.flushed.load(Ordering::Relaxed) {
                let name = format!("{}@{}", l.entry.access_key, self.host);
                if publish_replacing(&self.dir.join("used"), &name, used.to_string().as_bytes())
                    .is_ok()
                {
                    l.flushed.store(used, Ordering::Relaxed);
                }
            }
        }
    }

    /// The latest use of each key over every server.
    fn last_uses(&self) -> HashMap<String, u64> {
        let mut uses: HashMap<String, u64> = HashMap::new();
        for e in std::fs::read_dir(self.dir.join("used"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some((ak, _host)) = name.split_once('@') else {
                continue;
            };
            if let Some(t) = std::fs::read_to_string(e.path())
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
            {
                let u = uses.entry(ak.to_owned()).or_default();
                *u = (*u).max(t);
            }
        }
        uses
    }
}

/// Reads and checks one key file: it must decode, and name the key its
/// file is named after (a copied or renamed file grants nothing).
fn read_entry(path: &Path, access_key: &str) -> Result<Entry, String> {
    let text = std::fs::read(path).map_err(|e| e.to_string())?;
    let entry: Entry =
        serde_json::from_slice(&text).map_err(|e| format!("it does not decode ({e})"))?;
    if entry.access_key != access_key {
        return Err(format!(
            "it holds key {} under the name of {access_key}",
            entry.access_key
        ));
    }
    if entry.secret.len() < 20 {
        return Err("its secret is shorter than 20 characters".into());
    }
    Ok(entry)
}

/// The store's signing key, made by the first server that opens it (two
/// at once: `link` lets one win, and both read the winner's).
fn signing_key(dir: &Path) -> std::io::Result<Vec<u8>> {
    let path = dir.join("signing-key");
    if !path.exists() {
        let hex = data_encoding::HEXLOWER.encode(&random::<32>());
        match publish(dir, "signing-key", hex.as_bytes()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    let text = std::fs::read_to_string(&path)?;
    let key = data_encoding::HEXLOWER
        .decode(text.trim().as_bytes())
        .ok()
        .filter(|k| k.len() >= 32)
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} is not 64 hex digits", path.display()),
            )
        })?;
    Ok(key)
}

/// A temporary file in `dir` with `bytes`, synced, private to the user.
fn write_temp(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let tmp = dir.join(format!(
        ".{name}.{}",
        data_encoding::HEXLOWER.encode(&random::<6>())
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    Ok(tmp)
}

/// Publishes `bytes` as `dir/name`, all or nothing, never replacing a
/// file of that name (EEXIST then).
fn publish(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = write_temp(dir, name, bytes)?;
    let linked = std::fs::hard_link(&tmp, dir.join(name));
    let _ = std::fs::remove_file(&tmp);
    linked?;
    sync_dir(dir);
    Ok(())
}

/// Publishes `bytes` as `dir/name`, all or nothing, replacing it.
fn publish_replacing(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = write_temp(dir, name, bytes)?;
    let renamed = std::fs::rename(&tmp, dir.join(name));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed?;
    sync_dir(dir);
    Ok(())
}

/// A created or removed name survives a crash once its directory is
/// synced.
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}
