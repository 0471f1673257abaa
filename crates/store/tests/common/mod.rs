//! Helpers shared by the engine's integration tests: a store in a fresh
//! temporary directory, short forms of the common calls, error assertions,
//! a paging lister, a reference model of S3 listing, and a seeded PRNG.
#![allow(dead_code)] // each test file uses a different subset

use md5::{Digest, Md5};
use s3hpc_store::*;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

pub const BUCKET: &str = "bkt";

/// A store over a fresh temporary data root (removed on drop), with bucket
/// [`BUCKET`] created. `outside` is a sibling directory beside the data root,
/// for symlink targets and "nothing leaks out" sentinels.
pub struct Env {
    pub tmp: tempfile::TempDir,
    pub store: Store,
}

/// A fresh directory for one test, under `S3HPC_TEST_DIR` if set: the
/// engine takes file-system-specific paths (rename-exchange on ext4, the
/// directory-size check on tmpfs), so the suite runs on more than one.
pub fn test_dir() -> tempfile::TempDir {
    match std::env::var_os("S3HPC_TEST_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

impl Env {
    pub fn new() -> Env {
        Env::with(EtagPolicy::Md5, Durability::None)
    }

    pub fn with(etag: EtagPolicy, durability: Durability) -> Env {
        let tmp = test_dir();
        std::fs::create_dir(tmp.path().join("outside")).unwrap();
        let store = Store::open(tmp.path().join("root"), StoreConfig { etag, durability }).unwrap();
        store.create_bucket(BUCKET).unwrap();
        Env { tmp, store }
    }

    /// The data root.
    pub fn root(&self) -> PathBuf {
        self.tmp.path().join("root")
    }

    /// A path inside the bucket directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(BUCKET).join(rel)
    }

    /// A directory outside the data root.
    pub fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }

    pub fn put(&self, key: &str, data: &[u8]) -> String {
        put(&self.store, BUCKET, key, data)
    }

    pub fn get(&self, key: &str) -> Vec<u8> {
        get(&self.store, BUCKET, key)
    }

    pub fn keys(&self) -> Vec<String> {
        list_all(&self.store, BUCKET, &ListRequest::default(), 1000).0
    }

    /// The bucket's first page with delimiter `/`: its top-level objects and prefixes.
    pub fn top_level(&self) -> ListPage {
        self.store
            .list_objects(
                BUCKET,
                &ListRequest {
                    delimiter: Some("/".into()),
                    ..Default::default()
                },
            )
            .unwrap()
    }
}

pub fn put(store: &Store, bucket: &str, key: &str, data: &[u8]) -> String {
    store
        .put_object(bucket, key, PutBody::Bytes(data), &PutOptions::default())
        .unwrap_or_else(|e| panic!("PUT {bucket}/{key}: {e}"))
}

pub fn get(store: &Store, bucket: &str, key: &str) -> Vec<u8> {
    let mut r = store
        .get_object(bucket, key, None)
        .unwrap_or_else(|e| panic!("GET {bucket}/{key}: {e}"));
    let mut v = Vec::new();
    r.body.read_to_end(&mut v).unwrap();
    assert_eq!(
        v.len() as u64,
        r.length,
        "GET {bucket}/{key}: body vs length"
    );
    v
}

/// Asserts that `r` failed with `code` and that the message names every one
/// of `mentions` (the key, the bucket ...), so errors are actionable.
#[track_caller]
pub fn expect_err<T>(r: Result<T>, code: ErrorCode, mentions: &[&str]) -> S3Error {
    let e = match r {
        Ok(_) => panic!("expected {code:?}, got success"),
        Err(e) => e,
    };
    assert_eq!(e.code, code, "wrong code for error: {e}");
    for m in mentions {
        assert!(
            e.message.contains(m),
            "error message {:?} does not name {m:?}",
            e.message
        );
    }
    e
}

/// The code of an error, failing the test if `r` succeeded.
#[track_caller]
pub fn code<T>(r: Result<T>) -> ErrorCode {
    match r {
        Ok(_) => panic!("expected an error, got success"),
        Err(e) => e.code,
    }
}

/// One item of a listing, in order: an object key or a common prefix.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Item {
    Key(String),
    Prefix(String),
}

impl Item {
    pub fn text(&self) -> &str {
        match self {
            Item::Key(s) | Item::Prefix(s) => s,
        }
    }
}

/// `page` without when its listing began, which its token carries (as
/// `k@MS:KEY`): two stores' first pages differ only in that.
pub fn timeless(mut page: ListPage) -> ListPage {
    page.next_token = page.next_token.map(|t| match t.split_once(':') {
        Some((head, rest)) if head.contains('@') => format!("{}:{rest}", &head[..1]),
        _ => t,
    });
    page
}

/// Merges a page's objects and common prefixes into one sequence in S3 order.
pub fn page_items(page: &ListPage) -> Vec<Item> {
    let mut items: Vec<Item> = page
        .objects
        .iter()
        .map(|o| Item::Key(o.key.clone()))
        .chain(page.common_prefixes.iter().cloned().map(Item::Prefix))
        .collect();
    items.sort_by(|a, b| a.text().as_bytes().cmp(b.text().as_bytes()));
    items
}

/// How to ask for the next page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// v2: continuation tokens.
    Token,
    /// v1: the last key or common prefix of a page as the next marker.
    Marker,
}

/// Pages through a whole listing `max_keys` at a time and returns every item
/// in order. Checks page invariants on the way: at most `max_keys` items, a
/// truncated page is full and has a token, the last page has none, and no
/// page is empty unless the whole listing is.
pub fn list_items(
    store: &Store,
    bucket: &str,
    req: &ListRequest,
    max_keys: usize,
    paging: Paging,
) -> Vec<Item> {
    let mut out = Vec::new();
    let mut req = ListRequest {
        max_keys,
        ..req.clone()
    };
    for round in 0.. {
        assert!(round < 100_000, "listing does not terminate");
        let page = store
            .list_objects(bucket, &req)
            .unwrap_or_else(|e| panic!("list {req:?}: {e}"));
        let items = page_items(&page);
        let cap = max_keys.clamp(1, 1000);
        assert!(items.len() <= cap, "page over max_keys {cap}: {req:?}");
        if !page.is_truncated {
            out.extend(items);
            return out;
        }
        assert_eq!(items.len(), cap, "truncated page not full: {req:?}");
        let token = page
            .next_token
            .clone()
            .expect("truncated page without token");
        let last = items.last().unwrap().text().to_string();
        out.extend(items);
        match paging {
            Paging::Token => req.continuation_token = Some(token),
            Paging::Marker => req.start_after = Some(last),
        }
    }
    unreachable!()
}

/// All keys and all common prefixes of a listing, paged by continuation token.
pub fn list_all(
    store: &Store,
    bucket: &str,
    req: &ListRequest,
    max_keys: usize,
) -> (Vec<String>, Vec<String>) {
    let mut keys = Vec::new();
    let mut prefixes = Vec::new();
    for item in list_items(store, bucket, req, max_keys, Paging::Token) {
        match item {
            Item::Key(k) => keys.push(k),
            Item::Prefix(p) => prefixes.push(p),
        }
    }
    (keys, prefixes)
}

/// The reference model of S3 ListObjects: keys sorted by bytes, filtered by
/// prefix and start-after, rolled up at the first delimiter after the prefix.
/// A start-after that is itself a common prefix (as a v1 NextMarker is) also
/// skips every key rolled up in it. It knows nothing of directories, so it
/// holds for any key set: keys that are also prefixes of others (`a/b` and
/// `a/b/c`: `a/b` is a key and, with delimiter `/` and prefix `a/`, `a/b/`
/// a common prefix) and keys ending in the delimiter (`a/b/`, a key of its
/// own under prefix `a/b/`, rolled into `a/b/` under prefix `a/`).
pub fn model_list(
    keys: &[String],
    prefix: &str,
    delimiter: Option<&str>,
    start_after: Option<&str>,
) -> Vec<Item> {
    let mut sorted: Vec<&String> = keys.iter().collect();
    sorted.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let skip_cp = start_after.filter(|a| {
        delimiter.is_some_and(|d| {
            a.strip_prefix(prefix)
                .and_then(|rest| rest.find(d))
                .is_some_and(|i| prefix.len() + i + d.len() == a.len())
        })
    });
    let mut out: Vec<Item> = Vec::new();
    for k in sorted {
        if !k.starts_with(prefix) {
            continue;
        }
        if start_after.is_some_and(|a| k.as_bytes() <= a.as_bytes()) {
            continue;
        }
        if skip_cp.is_some_and(|p| k.starts_with(p)) {
            continue;
        }
        let item = match delimiter.and_then(|d| k[prefix.len()..].find(d).map(|i| (i, d))) {
            Some((i, d)) => Item::Prefix(k[..prefix.len() + i + d.len()].to_string()),
            None => Item::Key(k.clone()),
        };
        if out.last() != Some(&item) {
            out.push(item);
        }
    }
    out
}

/// Keys sorted as S3 sorts them: by their UTF-8 bytes.
pub fn byte_sorted(keys: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
    v.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    v
}

/// splitmix64: a tiny deterministic PRNG, so failures replay exactly.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The S3 ETag of `data` under the md5 policy: the quoted hex MD5.
pub fn md5_etag(data: &[u8]) -> String {
    let digest = Md5::digest(data);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// Every entry below `dir` (relative paths, sorted), not following symlinks.
pub fn walk(dir: &Path) -> Vec<String> {
    fn go(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            if e.file_type().unwrap().is_dir() {
                go(base, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    go(dir, dir, &mut out);
    out.sort();
    out
}

/// A snapshot of a directory tree outside the root: paths with their content
/// (files) or `None` (directories), to check that nothing changed.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    walk(dir)
        .into_iter()
        .map(|rel| {
            let p = dir.join(&rel);
            let content = std::fs::symlink_metadata(&p)
                .unwrap()
                .is_file()
                .then(|| std::fs::read(&p).unwrap());
            (rel, content)
        })
        .collect()
}

pub fn opts(content_type: Option<&str>, meta: &[(&str, &str)]) -> PutOptions {
    PutOptions {
        content_type: content_type.map(str::to_string),
        metadata: meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}
