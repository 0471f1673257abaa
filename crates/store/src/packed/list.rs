//! ListObjects of a packed bucket: the index's keys merged, in key order,
//! with the bucket's plain files.

use super::*;

impl Store {
    /// ListObjects of a packed bucket: the index's objects merged, in key
    /// order, with the plain listing of the bucket's files (those no
    /// record names).
    pub(crate) fn packed_list(
        &self,
        set: &PackSet,
        bucket: &str,
        req: &ListRequest,
    ) -> Result<ListPage> {
        set.refresh(Instant::now())?;
        let max = match req.max_keys {
            0 => 1000,
            n => n.min(1000),
        };
        let delimiter = req.delimiter.as_deref().filter(|d| !d.is_empty());
        let after: Option<String> = match (&req.continuation_token, &req.start_after) {
            (Some(t), _) if !t.is_empty() => Some(
                t.strip_prefix(TOKEN)
                    .ok_or_else(|| {
                        s3err!(
                            InvalidArgument,
                            "the continuation token is not one this packed bucket's listing gave"
                        )
                    })?
                    .to_string(),
            ),
            (_, Some(a)) if !a.is_empty() => Some(a.clone()),
            _ => None,
        };
        let packed = self.packed_items(set, &req.prefix, delimiter, after.as_deref(), max + 1);
        let mut items: Vec<Item> = Vec::new();
        let mut files: Vec<Item> = Vec::new();
        let mut file_after = after.clone();
        let mut files_done = false;
        let mut p = packed.into_iter().peekable();
        while items.len() <= max {
            if files.is_empty() && !files_done {
                let page = self.list_files(
                    bucket,
                    &ListRequest {
                        prefix: req.prefix.clone(),
                        delimiter: req.delimiter.clone(),
                        start_after: file_after.clone(),
                        continuation_token: None,
                        max_keys: max,
                    },
                )?;
                files_done = !page.is_truncated;
                let index = set.index.read().unwrap();
                let mut got: Vec<Item> = page
                    .objects
                    .into_iter()
                    .map(|o| Item::Object(Box::new(o)))
                    .chain(page.common_prefixes.into_iter().map(Item::Prefix))
                    .collect();
                got.sort_by(|a, b| a.name().cmp(b.name()));
                file_after = got.last().map(|i| i.name().to_string()).or(file_after);
                // A file a record names is that record's to show.
                files = got
                    .into_iter()
                    .filter(|i| match i {
                        Item::Object(o) => index.get(&o.key).is_none_or(|e| e.kind == Kind::Plain),
                        Item::Prefix(_) => true,
                    })
                    .rev()
                    .collect();
                if files.is_empty() && !files_done {
                    continue;
                }
            }
            let next = match (p.peek(), files.last()) {
                (None, None) => break,
                (Some(_), None) => p.next().unwrap(),
                (None, Some(_)) => files.pop().unwrap(),
                (Some(a), Some(b)) => match a.name().cmp(b.name()) {
                    std::cmp::Ordering::Less => p.next().unwrap(),
                    std::cmp::Ordering::Greater => files.pop().unwrap(),
                    std::cmp::Ordering::Equal => {
                        files.pop();
                        p.next().unwrap()
                    }
                },
            };
            if items.last().is_some_and(|l| l.name() == next.name()) {
                continue;
            }
            items.push(next);
        }
        let is_truncated = items.len() > max;
        items.truncate(max);
        let next_token = is_truncated
            .then(|| items.last().map(|i| format!("{TOKEN}{}", i.name())))
            .flatten();
        let mut page = ListPage {
            is_truncated,
            next_token,
            ..Default::default()
        };
        for i in items {
            match i {
                Item::Object(o) => page.objects.push(*o),
                Item::Prefix(p) => page.common_prefixes.push(p),
            }
        }
        Ok(page)
    }

    /// Up to `want` of the index's objects and common prefixes after
    /// `after`, in order.
    fn packed_items(
        &self,
        set: &PackSet,
        prefix: &str,
        delimiter: Option<&str>,
        after: Option<&str>,
        want: usize,
    ) -> Vec<Item> {
        let index = set.index.read().unwrap();
        let mut out: Vec<Item> = Vec::new();
        let mut from: Bound<String> = match after {
            Some(a) if a >= prefix => Bound::Excluded(a.to_string()),
            _ => Bound::Included(prefix.to_string()),
        };
        'scan: while out.len() < want {
            for (k, e) in index.range((from.clone(), Bound::Unbounded)) {
                if !k.starts_with(prefix) {
                    break 'scan;
                }
                if e.kind != Kind::Object {
                    continue;
                }
                if let Some(d) = delimiter {
                    if let Some(i) = k[prefix.len()..].find(d) {
                        let cp = &k[..prefix.len() + i + d.len()];
                        if after.is_none_or(|a| cp > a) {
                            out.push(Item::Prefix(cp.to_string()));
                        }
                        // Past every key the prefix rolls up.
                        from = Bound::Excluded(format!("{cp}{}", char::MAX));
                        continue 'scan;
                    }
                }
                out.push(Item::Object(Box::new(self.info_of(set, k, e))));
                if out.len() >= want {
                    break 'scan;
                }
            }
            break;
        }
        out
    }
}

/// A listing's continuation tokens in a packed bucket: the last name given.
const TOKEN: &str = "packed:";

enum Item {
    Object(Box<ObjectInfo>),
    Prefix(String),
}

impl Item {
    fn name(&self) -> &str {
        match self {
            Item::Object(o) => &o.key,
            Item::Prefix(p) => p,
        }
    }
}
