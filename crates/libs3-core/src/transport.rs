//! Which `S3Client` a host string names, created once per (host, keys) and
//! shared by every later call: opening a store or a connection pool per
//! request would cost more than the request.

use super::Failure;
use s3hpc_client::{EmbeddedClient, HttpClient, HttpClientConfig, S3Client};
use s3hpc_rpc::RemoteClient;
use s3hpc_store::{Layout, Store, StoreConfig};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Overrides every host a program passes, for programs whose host option
/// is fixed or missing.
pub const HOST_ENV: &str = "S3HPC_LIBS3_HOST";

/// libs3's own default when neither the call nor `S3_initialize` names one.
const FALLBACK_HOST: &str = "s3.amazonaws.com";

static DEFAULT_HOST: Mutex<Option<String>> = Mutex::new(None);

/// Host, keys, token and region: what makes two targets share a client.
type Key = (String, String, String, Option<String>, Option<String>);
static CLIENTS: Mutex<Option<HashMap<Key, Arc<dyn S3Client>>>> = Mutex::new(None);

/// Where one request goes, as the caller's arguments describe it.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// The call's host name; `None` means the default from `S3_initialize`.
    pub host: Option<String>,
    /// The call asked for HTTPS (used only for plain HTTP host names).
    pub https: bool,
    pub access_key: String,
    pub secret_key: String,
    /// libs3 4.x: a temporary credential's token (HTTP only).
    pub security_token: Option<String>,
    /// libs3 4.x: the SigV4 signing region (HTTP only; `us-east-1` if
    /// unset).
    pub region: Option<String>,
}

/// A target as the caller's strings, borrowed: what a request compares to
/// find its client without allocating.
#[derive(Debug, Clone, Copy)]
pub struct TargetRef<'a> {
    pub host: Option<&'a str>,
    pub https: bool,
    pub access_key: &'a str,
    pub secret_key: &'a str,
    pub security_token: Option<&'a str>,
    pub region: Option<&'a str>,
}

impl TargetRef<'_> {
    pub fn to_owned(&self) -> Target {
        Target {
            host: self.host.map(str::to_string),
            https: self.https,
            access_key: self.access_key.to_string(),
            secret_key: self.secret_key.to_string(),
            security_token: self.security_token.map(str::to_string),
            region: self.region.map(str::to_string),
        }
    }

    fn is(&self, t: &Target) -> bool {
        self.host == t.host.as_deref()
            && self.https == t.https
            && self.access_key == t.access_key
            && self.secret_key == t.secret_key
            && self.security_token == t.security_token.as_deref()
            && self.region == t.region.as_deref()
    }
}

/// Bumped whenever what a cached client stands for may change (a new
/// default host, `S3_deinitialize`): per-thread caches then miss.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// A target, the generation it was opened in, and its client.
type Cached = (Target, u64, Arc<dyn S3Client>);

thread_local! {
    /// The last target this thread used: a program calls with the same
    /// host and keys over and over.
    static LAST: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// Sets (or with `None` clears) the default host, as `S3_initialize` does.
pub fn set_default_host(host: Option<String>) {
    *DEFAULT_HOST.lock().unwrap_or_else(|e| e.into_inner()) = host;
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Drops every cached client (`S3_deinitialize`).
pub fn forget_clients() {
    *CLIENTS.lock().unwrap_or_else(|e| e.into_inner()) = None;
    GENERATION.fetch_add(1, Ordering::Relaxed);
    // From inside a request's callback the cache is in use: the new
    // generation already turns it into a miss.
    let _ = LAST.try_with(|l| l.try_borrow_mut().map(|mut l| l.take()));
}

/// Runs `f` with the client for `target`: this thread's last one, borrowed
/// (no lock, no allocation, and no reference count touched: one shared by
/// the threads of a program bounces between their cores on every call),
/// else [`client_for_ref`]'s.
pub fn with_client<R>(
    target: &TargetRef,
    f: impl FnOnce(&dyn S3Client) -> R,
) -> Result<R, Failure> {
    let generation = GENERATION.load(Ordering::Relaxed);
    // The cached client runs `f`, or `f` comes back for the slow path.
    let missed = LAST.with(|l| match l.try_borrow().as_deref() {
        Ok(Some((t, g, c))) if *g == generation && target.is(t) => Ok(f(&**c)),
        _ => Err(f),
    });
    match missed {
        Ok(r) => Ok(r),
        Err(f) => Ok(f(&*client_for_ref(target)?)),
    }
}

/// The client for `target`: this thread's last one when the target is the
/// same (no lock, no allocation), else [`client_for`]. The host override
/// (`S3HPC_LIBS3_HOST`) is read when a target is first seen.
pub fn client_for_ref(target: &TargetRef) -> Result<Arc<dyn S3Client>, Failure> {
    let generation = GENERATION.load(Ordering::Relaxed);
    let hit = LAST.with(|l| match l.try_borrow().as_deref() {
        Ok(Some((t, g, c))) if *g == generation && target.is(t) => Some(c.clone()),
        _ => None,
    });
    if let Some(c) = hit {
        return Ok(c);
    }
    let owned = target.to_owned();
    let client = client_for(&owned)?;
    // A request running on this thread (this is its callback) holds the
    // cache: it stays as it is.
    LAST.with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            *l = Some((owned, generation, client.clone()));
        }
    });
    Ok(client)
}

impl Target {
    /// The host string in effect: the override, else the call's, else the
    /// default.
    pub fn effective_host(&self) -> String {
        if let Ok(h) = std::env::var(HOST_ENV) {
            if !h.is_empty() {
                return h;
            }
        }
        if let Some(h) = self.host.as_deref().filter(|h| !h.is_empty()) {
            return h.to_string();
        }
        DEFAULT_HOST
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| FALLBACK_HOST.to_string())
    }
}

/// The client for `target`, opened on first use.
pub fn client_for(target: &Target) -> Result<Arc<dyn S3Client>, Failure> {
    let host = target.effective_host();
    let key = (
        host.clone(),
        target.access_key.clone(),
        target.secret_key.clone(),
        target.security_token.clone(),
        target.region.clone(),
    );
    if let Some(c) = CLIENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&key))
    {
        return Ok(c.clone());
    }
    // Opened outside the lock: a remote connect may take a while.
    let client = open(&host, target)?;
    let mut guard = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    Ok(guard
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert(client)
        .clone())
}

fn open(host: &str, target: &Target) -> Result<Arc<dyn S3Client>, Failure> {
    if let Some(rest) = host.strip_prefix("file://") {
        let (path, options) = rest.split_once('?').unwrap_or((rest, ""));
        if !path.starts_with('/') {
            return Err(Failure::BadHost(format!(
                "{host:?}: a file host needs an absolute path, as in file:///data/s3"
            )));
        }
        let (config, layout, pack_max) =
            store_config(options).map_err(|e| Failure::BadHost(format!("{host:?}: {e}")))?;
        let store =
            Store::open(path, config).map_err(|e| Failure::BadHost(format!("{host:?}: {e}")))?;
        store.set_default_layout(layout);
        if let Some(n) = pack_max {
            store
                .set_default_pack_max(n)
                .map_err(|e| Failure::BadHost(format!("{host:?}: {e}")))?;
        }
        return Ok(Arc::new(EmbeddedClient::new(Arc::new(store))));
    }
    if host.starts_with("unix:") || host.starts_with("s3hpc://") || host.starts_with("tcp:") {
        host.parse::<s3hpc_rpc::Address>()
            .map_err(Failure::BadHost)?;
        let client =
            RemoteClient::connect(host).map_err(|e| Failure::Connect(format!("{host:?}: {e}")))?;
        return Ok(Arc::new(client));
    }
    let endpoint = if host.starts_with("http://") || host.starts_with("https://") {
        host.to_string()
    } else if host.contains("://") || host.contains(char::is_whitespace) {
        return Err(Failure::BadHost(format!(
            "{host:?}: not a host name; use file:///path, unix:///path.sock, \
             s3hpc://host:port or host[:port]"
        )));
    } else {
        let scheme = if target.https { "https" } else { "http" };
        format!("{scheme}://{host}")
    };
    let mut config = HttpClientConfig {
        endpoint,
        credentials: Some((target.access_key.clone(), target.secret_key.clone())),
        session_token: target.security_token.clone(),
        ..Default::default()
    };
    if let Some(region) = &target.region {
        config.region = region.clone();
    }
    let client = HttpClient::new(config).map_err(|e| Failure::BadHost(format!("{host:?}: {e}")))?;
    Ok(Arc::new(client))
}

/// The engine settings of a `file://` host's query (`etag=md5|fast`,
/// `durability=none|fsync`, `layout=plain|packed` for new buckets and
/// `pack-max=BYTES` for new packed buckets, joined by `&`); unset ones keep
/// the engine's defaults (MD5 ETags, no fsync, plain buckets).
fn store_config(options: &str) -> Result<(StoreConfig, Layout, Option<u64>), String> {
    let mut config = StoreConfig::default();
    let mut layout = Layout::Plain;
    let mut pack_max = None;
    for pair in options.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("etag", v)) => config.etag = v.parse()?,
            Some(("durability", v)) => config.durability = v.parse()?,
            Some(("layout", v)) => layout = v.parse()?,
            Some(("pack-max", v)) => {
                let n = v
                    .parse()
                    .map_err(|_| format!("pack-max={v:?}: give the size in bytes"))?;
                pack_max = Some(n);
            }
            _ => {
                return Err(format!(
                    "unknown option {pair:?}: use etag=md5|fast, durability=none|fsync, \
                     layout=plain|packed, pack-max=BYTES"
                ))
            }
        }
    }
    Ok((config, layout, pack_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh `file://` host.
    fn host(name: &str) -> (std::path::PathBuf, String) {
        let dir = std::env::temp_dir().join(format!(
            "s3hpc-libs3-transport-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let host = format!("file://{}", dir.display());
        (dir, host)
    }

    fn target(host: &str) -> TargetRef<'_> {
        TargetRef {
            host: Some(host),
            https: false,
            access_key: "",
            secret_key: "",
            security_token: None,
            region: None,
        }
    }

    /// A callback may start another request (on another host) and even
    /// deinitialize while the outer request holds the thread's cache.
    #[test]
    fn a_request_inside_a_request_finds_its_own_client() {
        let ((dir_a, a), (dir_b, b)) = (host("a"), host("b"));
        let outer = with_client(&target(&a), |outer| {
            outer.create_bucket("outer")?;
            with_client(&target(&b), |inner| inner.create_bucket("inner")).unwrap()?;
            forget_clients();
            outer.head_bucket("outer")
        });
        assert!(matches!(outer, Ok(Ok(()))), "{outer:?}");
        // Each host kept its own bucket, and the cache serves both again.
        for (h, bucket, other) in [(&a, "outer", "inner"), (&b, "inner", "outer")] {
            with_client(&target(h), |c| {
                assert!(c.head_bucket(bucket).is_ok(), "{h}: {bucket}");
                assert!(c.head_bucket(other).is_err(), "{h}: {other}");
            })
            .unwrap();
        }
        forget_clients();
        for d in [dir_a, dir_b] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}
