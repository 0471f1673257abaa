//! ListObjectVersions over a bucket: every key that has a current object
//! or a version, in key order, each key's versions the latest first, then
//! newest first; paged by an exact (key, version id) position.
//!
//! A page merges two walks from its marker, each stopping after a page:
//! one page of ListObjectsV2 (the current objects, with its cached windows
//! and lookups) and a walk of the same directories for the keys that have
//! versions (subdirectories through the same windows, each
//! `.s3hpc-versions` through its cached, sorted index, `index`). Both are
//! complete up to the lower of the two ends, so the page lists the keys up
//! to there, each key's versions from its directory's index. A page's
//! cost thus hardly grows with the bucket (docs/src/results/listings.md).

use super::index::DirVersions;
use super::read::history_of;
use super::*;
use crate::list::Flow;
use crate::names::{dir_rel, split_key, validate_path, DIR_ENTRY};
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, OwnedFd};
use std::rc::Rc;

/// What ListObjectVersions asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VersionsRequest {
    pub prefix: String,
    pub delimiter: Option<String>,
    /// Only keys after it (and, with `version_id_marker`, this key's
    /// versions after that one).
    pub key_marker: Option<String>,
    pub version_id_marker: Option<String>,
    /// Capped at 1000; 0 means 1000.
    pub max_keys: usize,
}

/// One page of ListObjectVersions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VersionsPage {
    /// (key, version), in order.
    pub versions: Vec<(String, KeyVersion)>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    pub next_key_marker: Option<String>,
    pub next_version_id_marker: Option<String>,
}

/// What a page lists at a position.
enum Item {
    /// A key, with its object as the listing gave it, if it did.
    Key(Option<Box<ObjectInfo>>),
    /// A common prefix.
    Prefix,
}

impl Store {
    pub fn list_object_versions(
        &self,
        bucket: &str,
        req: &VersionsRequest,
    ) -> Result<VersionsPage> {
        validate_bucket_name(bucket)?;
        let max = match req.max_keys {
            0 => 1000,
            n => n.min(1000),
        };
        let scope = Scope::of(req);
        // The current objects (and their common prefixes) after the marker.
        let listed = self.list_objects(
            bucket,
            &ListRequest {
                prefix: req.prefix.clone(),
                delimiter: scope.delimiter.map(str::to_string),
                start_after: req.key_marker.clone(),
                max_keys: max,
                ..Default::default()
            },
        )?;
        let mut items = BTreeMap::new();
        for o in listed.objects {
            items.insert(o.key.clone(), Item::Key(Some(Box::new(o))));
        }
        for cp in listed.common_prefixes {
            items.insert(cp, Item::Prefix);
        }
        // Where the page's items are known to be complete.
        let mut upper = match listed.is_truncated {
            true => items.keys().next_back().cloned(),
            false => None,
        };
        // A packed bucket keeps one version of each key: its objects; so
        // does a bucket that never had versioning (no versions directory
        // is made before it is enabled).
        let one_each = self.packed(bucket).is_some()
            || self.versioning_of(bucket).unwrap_or(Versioning::Enabled) == Versioning::Off;
        let mut dirs = Dirs::default();
        if !one_each {
            let mut walk = VersionedKeys {
                store: self,
                scope: &scope,
                upper: upper.clone(),
                limit: max,
                found: Vec::new(),
                dirs: &mut dirs,
            };
            walk.run(bucket);
            if walk.found.len() >= max {
                // It stopped there: what lies beyond waits for a page.
                let last = walk.found.last().map(|(k, _)| k.clone());
                upper = match (upper, last) {
                    (Some(u), Some(l)) => Some(u.min(l)),
                    (u, l) => u.or(l),
                };
            }
            for (key, is_prefix) in walk.found {
                let item = if is_prefix {
                    Item::Prefix
                } else {
                    Item::Key(None)
                };
                items.entry(key).or_insert(item);
            }
        }
        if let Some(u) = &upper {
            // Items beyond the bound are not yet known to be complete.
            items.retain(|k, _| k <= u);
        }

        let mut page = VersionsPage::default();
        let mut count = 0;
        let mut emit = |page: &mut VersionsPage, key: &str, v: Option<KeyVersion>| {
            if count == max {
                page.is_truncated = true;
                return false;
            }
            page.next_key_marker = Some(key.to_string());
            match v {
                Some(v) => {
                    page.next_version_id_marker = Some(v.version_id.clone());
                    page.versions.push((key.to_string(), v));
                }
                None => {
                    page.next_version_id_marker = None;
                    page.common_prefixes.push(key.to_string());
                }
            }
            count += 1;
            true
        };
        // The rest of the marker's own key: its versions after the marker's.
        if let (Some(key), Some(id), false) = (&req.key_marker, &req.version_id_marker, one_each) {
            if scope.in_scope(key) && scope.rollup(key).is_none() && validate_key(key).is_ok() {
                let mut versions = self.versions_at(bucket, key, None, &mut dirs)?;
                match versions.iter().position(|v| &v.version_id == id) {
                    Some(i) => drop(versions.drain(..=i)),
                    None => versions.clear(),
                }
                for v in versions {
                    if !emit(&mut page, key, Some(v)) {
                        break;
                    }
                }
            }
        }
        for (key, item) in items {
            if page.is_truncated {
                break;
            }
            match item {
                Item::Prefix => {
                    emit(&mut page, &key, None);
                }
                Item::Key(listed) => {
                    let listed = listed.map(|o| *o);
                    let versions = match one_each {
                        true => listed.map(KeyVersion::null_latest).into_iter().collect(),
                        false => self.versions_at(bucket, &key, listed, &mut dirs)?,
                    };
                    for v in versions {
                        if !emit(&mut page, &key, Some(v)) {
                            break;
                        }
                    }
                }
            }
        }
        match upper {
            // Stopped at the bound with more beyond it: the next page
            // starts after the bound's item, whatever it listed of it.
            Some(u) if !page.is_truncated => {
                page.is_truncated = true;
                if page.next_key_marker.as_deref() != Some(u.as_str()) {
                    page.next_key_marker = Some(u);
                    page.next_version_id_marker = None;
                }
            }
            _ if !page.is_truncated => {
                page.next_key_marker = None;
                page.next_version_id_marker = None;
            }
            _ => {}
        }
        Ok(page)
    }

    /// The versions of `key` (`listed`: its object as a listing gave it),
    /// from its directory's index.
    fn versions_at(
        &self,
        bucket: &str,
        key: &str,
        listed: Option<ObjectInfo>,
        dirs: &mut Dirs,
    ) -> Result<Vec<KeyVersion>> {
        let kp = split_key(key);
        let Some(dir) = dirs.get(self, &dir_rel(bucket, kp.dir)) else {
            return Ok(listed.map(KeyVersion::null_latest).into_iter().collect());
        };
        let history = match &dir.versions {
            Some(v) => {
                let found = v
                    .index
                    .of_name(kp.name)
                    .iter()
                    .map(|e| (e.id.to_string(), e.marker));
                Some((&v.versions, history_of(&v.versions, kp.name, found)?))
            }
            None => None,
        };
        let history = history.as_ref().map(|(v, e)| (*v, e.as_slice()));
        self.key_versions(bucket, key, dir.fd.as_fd(), history, listed)
    }
}

/// What a page covers: the prefix, the delimiter and where it starts.
struct Scope<'r> {
    prefix: &'r str,
    delimiter: Option<&'r str>,
    /// Only keys after this one.
    after: &'r str,
    /// Nothing under this common prefix (a marker that is one).
    skip_prefix: Option<&'r str>,
}

impl<'r> Scope<'r> {
    fn of(req: &'r VersionsRequest) -> Scope<'r> {
        let delimiter = req.delimiter.as_deref().filter(|d| !d.is_empty());
        let after = req.key_marker.as_deref().unwrap_or("");
        let mut scope = Scope {
            prefix: &req.prefix,
            delimiter,
            after,
            skip_prefix: None,
        };
        scope.skip_prefix =
            (!after.is_empty() && scope.rollup(after) == Some(after)).then_some(after);
        scope
    }

    fn in_scope(&self, key: &str) -> bool {
        key.starts_with(self.prefix)
    }

    /// Whether the page may list `key` (or the prefix it rolls up into).
    fn admits(&self, key: &str) -> bool {
        self.in_scope(key)
            && key > self.after
            && !self.skip_prefix.is_some_and(|p| key.starts_with(p))
    }

    /// The common prefix `key` rolls up into, if the delimiter occurs in
    /// it after the prefix.
    fn rollup<'k>(&self, key: &'k str) -> Option<&'k str> {
        let d = self.delimiter?;
        let rest = key.get(self.prefix.len()..)?;
        rest.find(d)
            .map(|i| &key[..self.prefix.len() + i + d.len()])
    }
}

/// A directory as a page found it: open, with its versions if it has any.
struct Dir {
    fd: OwnedFd,
    versions: Option<DirVersions>,
}

/// The directories a page opened, each once, by path below the data root.
#[derive(Default)]
struct Dirs(HashMap<String, Option<Rc<Dir>>>);

impl Dirs {
    /// Directory `rel`, None where it is missing or cannot be read (the
    /// listing passes it over too).
    fn get(&mut self, store: &Store, rel: &str) -> Option<Rc<Dir>> {
        if let Some(d) = self.0.get(rel) {
            return d.clone();
        }
        let dir = store.open_listing(rel).ok().map(|fd| {
            let versions = store
                .version_indexes
                .versions_of(&store.profile, fd.as_fd(), rel)
                .ok()
                .flatten();
            Rc::new(Dir { fd, versions })
        });
        self.0.insert(rel.to_string(), dir.clone());
        dir
    }
}

/// The walk for the keys that have versions (and the common prefixes they
/// roll up into) in a page's scope, in key order, up to `upper` and at
/// most `limit` of them.
struct VersionedKeys<'a> {
    store: &'a Store,
    scope: &'a Scope<'a>,
    upper: Option<String>,
    limit: usize,
    /// (key or common prefix, is a prefix), in order.
    found: Vec<(String, bool)>,
    dirs: &'a mut Dirs,
}

impl VersionedKeys<'_> {
    fn run(&mut self, bucket: &str) {
        // Start in the deepest directory the prefix names entirely.
        let prefix = self.scope.prefix;
        let (dir, filter) = match prefix.rfind('/') {
            Some(i) => (&prefix[..i], &prefix[i + 1..]),
            None => ("", prefix),
        };
        if prefix.contains('/') && (dir.is_empty() || validate_path(dir, dir).is_err()) {
            return;
        }
        let key_prefix = match dir.is_empty() {
            true => String::new(),
            false => format!("{dir}/"),
        };
        let _ = self.visit(&dir_rel(bucket, dir), &key_prefix, filter);
    }

    /// Visits directory `rel`, whose keys start with `key_prefix`, for
    /// its entries whose names start with `filter`: its versions' names
    /// and its subdirectories, merged in key order.
    fn visit(&mut self, rel: &str, key_prefix: &str, filter: &str) -> Flow {
        let index = self
            .dirs
            .get(self.store, rel)
            .and_then(|d| d.versions.as_ref().map(|v| v.index.clone()));
        // The directory's own folder key (`a/`) sorts before its entries.
        if filter.is_empty() && !key_prefix.is_empty() {
            if let Some(ix) = &index {
                if !ix.of_name(DIR_ENTRY).is_empty() {
                    self.add(key_prefix, false)?;
                }
            }
        }
        // Where this directory's part of the scope starts.
        let rest = self.scope.after.strip_prefix(key_prefix).unwrap_or("");
        let name_from = filter.max(rest);
        let dir_from = filter.max(match rest.find('/') {
            Some(i) => &rest[..=i],
            None => rest,
        });
        let mut names = index
            .as_deref()
            .map(|ix| ix.names_from(name_from))
            .into_iter()
            .flatten()
            .filter(|n| *n != DIR_ENTRY)
            .take_while(|n| n.starts_with(filter))
            .peekable();
        // The subdirectories come through the listing's windows, and the
        // names before each are added on the way, so that the walk stops
        // as soon as it has a page or passes the bound, wherever in the
        // directory that is.
        let upper_here = self
            .upper
            .as_deref()
            .and_then(|u| u.strip_prefix(key_prefix))
            .map(str::to_string);
        let store = self.store;
        let mut flow = Flow::Continue(());
        store.each_entry(rel, dir_from, |sort, is_dir| {
            if !sort.starts_with(filter) || upper_here.as_deref().is_some_and(|u| sort > u) {
                return Flow::Break(()); // past the filter's entries, or the bound
            }
            while let Some(n) = names.next_if(|n| n.as_bytes() < sort.as_bytes()) {
                if self.add(&format!("{key_prefix}{n}"), false).is_break() {
                    flow = Flow::Break(());
                    return flow;
                }
            }
            if is_dir {
                let name = sort.strip_suffix('/').unwrap_or(sort);
                flow = self.visit_dir(rel, &format!("{key_prefix}{sort}"), name);
            }
            flow
        });
        flow?;
        for n in names {
            self.add(&format!("{key_prefix}{n}"), false)?;
        }
        Flow::Continue(())
    }

    /// Subdirectory `name` of `parent_rel`, whose keys start with
    /// `dir_key`: walked, or rolled up into one common prefix if the
    /// delimiter occurs in `dir_key`.
    fn visit_dir(&mut self, parent_rel: &str, dir_key: &str, name: &str) -> Flow {
        let scope = self.scope;
        if scope.skip_prefix.is_some_and(|p| dir_key.starts_with(p))
            || (dir_key < scope.after && !scope.after.starts_with(dir_key))
        {
            return Flow::Continue(()); // every key below is before the page
        }
        let rel = format!("{parent_rel}/{name}");
        if let Some(cp) = scope.rollup(dir_key) {
            if self.upper.as_deref().is_some_and(|u| cp > u) {
                return Flow::Break(());
            }
            if self.found.last().is_some_and(|(last, _)| last == cp)
                || !self.any_versions(&rel, dir_key)
            {
                return Flow::Continue(());
            }
            return self.add(cp, true);
        }
        if self.upper.as_deref().is_some_and(|u| dir_key > u) {
            return Flow::Break(());
        }
        crate::deep::grow(|| self.visit(&rel, dir_key, ""))
    }

    /// Whether the subtree at `rel` (keys starting with `key_prefix`) has
    /// a version of a key the page may list. Stops at the first.
    fn any_versions(&mut self, rel: &str, key_prefix: &str) -> bool {
        let index = self
            .dirs
            .get(self.store, rel)
            .and_then(|d| d.versions.as_ref().map(|v| v.index.clone()));
        if let Some(ix) = index {
            let admitted = ix.names_from("").any(|n| match n {
                DIR_ENTRY => self.scope.admits(key_prefix),
                n => self.scope.admits(&format!("{key_prefix}{n}")),
            });
            if admitted {
                return true;
            }
        }
        let mut found = false;
        let store = self.store;
        store.each_entry(rel, "", |sort, is_dir| {
            let Some(d) = sort.strip_suffix('/').filter(|_| is_dir) else {
                return Flow::Continue(());
            };
            found = crate::deep::grow(|| {
                self.any_versions(&format!("{rel}/{d}"), &format!("{key_prefix}{sort}"))
            });
            if found {
                Flow::Break(())
            } else {
                Flow::Continue(())
            }
        });
        found
    }

    /// Adds `key` (or the common prefix it rolls up into; `is_prefix`:
    /// it is one already) if the page may list it. Breaks past the bound,
    /// or when `limit` items are found and this one is another.
    fn add(&mut self, key: &str, is_prefix: bool) -> Flow {
        if !is_prefix && !self.scope.admits(key) {
            return Flow::Continue(());
        }
        let (item, is_prefix) = match (is_prefix, self.scope.rollup(key)) {
            (false, Some(cp)) => (cp, true),
            _ => (key, is_prefix),
        };
        if self.upper.as_deref().is_some_and(|u| item > u) {
            return Flow::Break(());
        }
        if self.found.last().is_some_and(|(last, _)| last == item) {
            return Flow::Continue(());
        }
        if self.found.len() == self.limit {
            return Flow::Break(());
        }
        self.found.push((item.to_string(), is_prefix));
        Flow::Continue(())
    }
}
