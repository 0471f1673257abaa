//! Bucket policies as a view of the file system's permissions, as ACLs
//! are (`acl.rs`): a policy is accepted only when the bucket directory's
//! mode bits and POSIX ACL entries can hold it exactly, and is then written
//! as those permissions, so the kernel decides every access and nothing
//! keeps a second set of rules that could disagree with it.
//!
//! What POSIX holds exactly: `Allow` statements whose principal is
//! everyone (`"*"`, `{"AWS": "*"}`: the other class, which includes
//! `--anonymous-user`; the owning group and every named entry get it too,
//! as POSIX applies their bits instead of other's to them) or mapped users
//! (an access key or `uid:N`, the Owner IDs s3hpc answers, or
//! `arn:aws:iam::ID:root` and `arn:aws:iam::ID:user/NAME`: named `user:`
//! entries), and whose actions are `s3:ListBucket` on the bucket (`r-x` on
//! the directory) and `s3:PutObject` with `s3:DeleteObject` on every object
//! (`BUCKET/*`: `-wx`, which lets its holder create and remove any name, so
//! one without the other cannot be held). Resources may use `*` and `?`; an
//! action that applies to none of a statement's resources is ignored, as
//! AWS does. Everything else is refused with the reason, and a document is
//! either held whole or refused whole.

use crate::owners::Owners;
use s3hpc_store::{AclEntry, AclTag, PermissionChange, Permissions};
use s3s::{s3_error, S3Result};
use s3s_policy::model::{
    ActionRule, Effect, Policy, Principal, PrincipalRule, ResourceRule, WildcardOneOrMore,
};
use s3s_policy::pattern::PatternSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const R: u8 = 4;
const W: u8 = 2;
const X: u8 = 1;

/// AWS's limit on a bucket policy's size.
const MAX_POLICY: usize = 20 * 1024;

/// What a policy grants: `everyone` to the other class (and with it every
/// user), `users` to named users (uid → `rwx` bits).
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grants {
    pub everyone: u8,
    pub users: BTreeMap<u32, u8>,
}

/// The bits a policy added to the directory when it was put (what was
/// there before stays when it is deleted), and the user entries it made.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Added {
    pub group: u8,
    pub other: u8,
    pub users: BTreeMap<u32, u8>,
    pub groups: BTreeMap<u32, u8>,
    pub created: Vec<u32>,
}

/// What is stored on the bucket's directory: the document as it was sent
/// (GetBucketPolicy answers it verbatim) and what it stands for.
#[derive(Debug, Serialize, Deserialize)]
pub struct Record {
    pub document: String,
    pub grants: Grants,
    pub added: Added,
}

impl Record {
    pub fn decode(raw: &[u8]) -> Option<Record> {
        serde_json::from_slice(raw).ok()
    }

    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a record serializes")
    }
}

fn malformed(why: impl std::fmt::Display) -> s3s::S3Error {
    s3_error!(MalformedPolicy, "{why}")
}

fn refuse(what: &str, why: &str) -> s3s::S3Error {
    s3_error!(
        NotImplemented,
        "{what}: {why}. s3hpc's bucket policies are the bucket directory's permissions (mode \
         bits and POSIX ACL entries); it accepts Allow statements for everyone or mapped users \
         with s3:ListBucket on the bucket and s3:PutObject with s3:DeleteObject on BUCKET/*"
    )
}

const TOP_FIELDS: [&str; 3] = ["Version", "Id", "Statement"];
const STATEMENT_FIELDS: [&str; 9] = [
    "Sid",
    "Effect",
    "Principal",
    "NotPrincipal",
    "Action",
    "NotAction",
    "Resource",
    "NotResource",
    "Condition",
];

/// Refuses fields the grammar does not have: the typed model would skip
/// them, and a misspelt `Condition` skipped would grant more than meant.
fn check_fields(doc: &serde_json::Value) -> S3Result<()> {
    let top = doc
        .as_object()
        .ok_or_else(|| malformed("Policies must be valid JSON and the first byte must be '{'"))?;
    let unknown = |o: &serde_json::Map<String, serde_json::Value>, known: &[&str]| {
        o.keys().find(|k| !known.contains(&k.as_str())).cloned()
    };
    if let Some(k) = unknown(top, &TOP_FIELDS) {
        return Err(malformed(format!("Unknown field {k}")));
    }
    let statements = match top.get("Statement") {
        Some(serde_json::Value::Array(a)) => a.iter().collect(),
        Some(one) => vec![one],
        None => return Err(malformed("Missing required field Statement")),
    };
    for s in statements {
        let s = s
            .as_object()
            .ok_or_else(|| malformed("a Statement must be a JSON object"))?;
        if let Some(k) = unknown(s, &STATEMENT_FIELDS) {
            return Err(malformed(format!("Unknown field {k}")));
        }
    }
    Ok(())
}

/// Who a principal names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Who {
    Everyone,
    User(u32),
}

/// The uid a principal id names: an Owner ID (access key or `uid:N`), or
/// `arn:aws:iam::ID:root` / `arn:aws:iam::ID:user/NAME` (NAME the Linux
/// name of ID's user).
fn principal_uid(id: &str, owners: &Owners) -> Option<u32> {
    let Some(rest) = id.strip_prefix("arn:aws:iam::") else {
        return owners.uid_of(id);
    };
    let (account, resource) = rest.split_once(':')?;
    let uid = owners.uid_of(account)?;
    match resource {
        "root" => Some(uid),
        r => {
            let name = r.strip_prefix("user/")?;
            (owners.of(uid).display_name.as_deref() == Some(name)).then_some(uid)
        }
    }
}

fn principals(p: &Principal, owners: &Owners) -> S3Result<Vec<Who>> {
    let map = match p {
        Principal::Wildcard => return Ok(vec![Who::Everyone]),
        Principal::Map(m) => m,
    };
    let mut out = Vec::new();
    for (kind, ids) in map {
        if kind != "AWS" && kind != "CanonicalUser" {
            return Err(refuse(
                &format!("principal type {kind:?}"),
                "it names no POSIX user (only AWS and CanonicalUser principals map to users)",
            ));
        }
        for id in ids.as_slice() {
            if id == "*" && kind == "AWS" {
                out.push(Who::Everyone);
                continue;
            }
            let uid = principal_uid(id, owners).ok_or_else(|| {
                malformed(format!(
                    "Invalid principal in policy: {id:?} is no user of this server (principals \
                     are access keys of its credentials, uid:N, arn:aws:iam::KEY:root or \
                     arn:aws:iam::KEY:user/NAME)"
                ))
            })?;
            out.push(Who::User(uid));
        }
    }
    Ok(out)
}

/// The service principal S3 delivers server access logs as.
const LOG_DELIVERY: &str = "logging.s3.amazonaws.com";

/// Whether statement `s` only lets S3's log delivery put objects (what a
/// target bucket of PutBucketLogging is given).
fn log_delivery(s: &s3s_policy::model::Statement) -> bool {
    let service_only = match &s.principal {
        Some(PrincipalRule::Principal(Principal::Map(m))) => {
            m.len() == 1
                && m.get("Service")
                    .is_some_and(|ids| ids.as_slice() == [LOG_DELIVERY.to_string()])
        }
        _ => false,
    };
    let put_only = match &s.action {
        ActionRule::Action(a) => a
            .as_slice()
            .is_some_and(|a| a.iter().all(|a| a.eq_ignore_ascii_case("s3:PutObject"))),
        ActionRule::NotAction(_) => false,
    };
    s.effect == Effect::Allow && service_only && put_only
}

const LIST: u8 = 1;
const PUT: u8 = 2;
const DELETE: u8 = 4;

fn action(a: &str) -> S3Result<u8> {
    let lower = a.to_ascii_lowercase();
    let Some(name) = lower.strip_prefix("s3:") else {
        return Err(malformed(format!(
            "Policy has invalid action: {a:?} (bucket policies name s3: actions)"
        )));
    };
    match name {
        "listbucket" => Ok(LIST),
        "putobject" => Ok(PUT),
        "deleteobject" => Ok(DELETE),
        n if n.contains(['*', '?']) => Err(refuse(
            &format!("action {a:?}"),
            "a wildcard takes in actions POSIX cannot grant on their own (reading objects, \
             changing permissions and policies); name the actions",
        )),
        "getobject" => Err(refuse(
            "s3:GetObject",
            "reading is each object file's own mode bits, which a bucket policy would have to \
             rewrite on every object (and every new one); make objects readable with object \
             ACLs (PutObjectAcl public-read, x-amz-acl on PUT) or chmod",
        )),
        _ => Err(refuse(
            &format!("action {a:?}"),
            "it has no POSIX permission of its own",
        )),
    }
}

/// How a resource pattern meets the bucket: the bucket itself, every
/// object in it, or some object in it.
struct Reach {
    bucket: bool,
    all_objects: bool,
    some_objects: bool,
}

fn reach(pattern: &str, bucket: &str) -> S3Result<Reach> {
    if !pattern.starts_with("arn:aws:s3:::") && pattern != "*" {
        return Err(malformed(format!(
            "Policy has invalid resource: {pattern:?} (resources are arn:aws:s3:::BUCKET and \
             arn:aws:s3:::BUCKET/KEY)"
        )));
    }
    let set = PatternSet::new([pattern]).map_err(|_| malformed("Policy has invalid resource"))?;
    let bucket_arn = format!("arn:aws:s3:::{bucket}");
    let objects = format!("{bucket_arn}/");
    // A pattern matches every name that begins with `objects` when it
    // ends in `*` and matches `objects` itself (that `*` takes the rest);
    // it matches some such name when a head of it matches `objects`.
    let some_objects = pattern
        .char_indices()
        .map(|(i, c)| &pattern[..i + c.len_utf8()])
        .any(|head| PatternSet::new([head]).is_ok_and(|h| h.is_match(&objects)));
    Ok(Reach {
        bucket: set.is_match(&bucket_arn),
        all_objects: pattern.ends_with('*') && set.is_match(&objects),
        some_objects,
    })
}

/// What the document `doc` for `bucket` (owned by `owner`) grants, or why
/// it cannot be held.
pub fn grants(doc: &str, bucket: &str, owner: u32, owners: &Owners) -> S3Result<Grants> {
    if doc.len() > MAX_POLICY {
        return Err(malformed(format!(
            "Policies must be less than 20 KB; this one is {} bytes",
            doc.len()
        )));
    }
    let value: serde_json::Value = serde_json::from_str(doc)
        .map_err(|e| malformed(format!("Policies must be valid JSON: {e}")))?;
    check_fields(&value)?;
    let policy: Policy = serde_json::from_value(value)
        .map_err(|e| malformed(format!("Invalid policy document: {e}")))?;
    let statements = policy.statement.as_slice();
    if statements.is_empty() {
        return Err(malformed("the policy has no Statement"));
    }
    let mut flags: BTreeMap<Option<u32>, u8> = BTreeMap::new();
    for (i, s) in statements.iter().enumerate() {
        let label = s.sid.as_deref().map_or_else(
            || format!("statement {}", i + 1),
            |sid| format!("statement {sid:?}"),
        );
        if s.effect == Effect::Deny {
            return Err(refuse(
                &format!("{label}: Deny"),
                "POSIX permissions only grant; keep someone out by granting them nothing (a \
                 bucket is private to its owner unless granted)",
            ));
        }
        if log_delivery(s) {
            // Bucket logs are written as the user who switched logging on
            // (`bucket_logs`): the file system lets them land where that
            // user may write, and the grant adds nothing.
            continue;
        }
        let who = match &s.principal {
            Some(PrincipalRule::Principal(p)) => principals(p, owners)?,
            Some(PrincipalRule::NotPrincipal(_)) => {
                return Err(malformed(format!(
                    "{label}: NotPrincipal cannot be used with Allow"
                )))
            }
            None => {
                return Err(malformed(format!(
                    "{label}: missing required field Principal"
                )))
            }
        };
        if s.condition.is_some() {
            return Err(refuse(
                &format!("{label}: Condition"),
                "the kernel's permission check knows the user only, not the request (address, \
                 time, headers, TLS)",
            ));
        }
        let actions = match &s.action {
            ActionRule::Action(WildcardOneOrMore::Wildcard) => {
                return Err(refuse(
                    &format!("{label}: action \"*\""),
                    "it takes in actions POSIX cannot grant on their own (reading objects, \
                     changing permissions and policies); name the actions",
                ))
            }
            ActionRule::Action(a) => a.as_slice().unwrap_or_default(),
            ActionRule::NotAction(_) => {
                return Err(refuse(
                    &format!("{label}: NotAction"),
                    "it grants every other action, most of which POSIX cannot grant",
                ))
            }
        };
        let mut asked = 0;
        for a in actions {
            asked |= action(a)?;
        }
        let resources: Vec<&str> = match &s.resource {
            ResourceRule::Resource(WildcardOneOrMore::Wildcard) => vec!["*"],
            ResourceRule::Resource(r) => r
                .as_slice()
                .unwrap_or_default()
                .iter()
                .map(String::as_str)
                .collect(),
            ResourceRule::NotResource(_) => {
                return Err(refuse(
                    &format!("{label}: NotResource"),
                    "name the bucket and BUCKET/* instead",
                ))
            }
        };
        let mut applies = 0;
        for r in resources {
            let reach = reach(r, bucket)?;
            if !reach.bucket && !reach.some_objects {
                return Err(malformed(format!(
                    "Policy has invalid resource: {r:?} is not bucket {bucket:?} nor its objects"
                )));
            }
            if reach.bucket {
                applies |= asked & LIST;
            }
            if asked & (PUT | DELETE) != 0 && reach.some_objects {
                if !reach.all_objects {
                    return Err(refuse(
                        &format!("{label}: resource {r:?}"),
                        "it names some of the bucket's objects, and the directory's write \
                         permission covers every name in it; name BUCKET/*",
                    ));
                }
                applies |= asked & (PUT | DELETE);
            }
        }
        if applies == 0 {
            return Err(malformed(format!(
                "{label}: Action does not apply to any resource(s) in statement"
            )));
        }
        for w in who {
            match w {
                Who::User(uid) if uid == owner => {} // The owner has every right already.
                Who::User(uid) => *flags.entry(Some(uid)).or_default() |= applies,
                Who::Everyone => *flags.entry(None).or_default() |= applies,
            }
        }
    }
    let everyone = flags.get(&None).copied().unwrap_or(0);
    let mut out = Grants::default();
    for (who, f) in &flags {
        let effective = f | everyone;
        if effective & (PUT | DELETE) != 0 && effective & (PUT | DELETE) != PUT | DELETE {
            let (has, lacks) = if effective & PUT != 0 {
                ("s3:PutObject", "s3:DeleteObject")
            } else {
                ("s3:DeleteObject", "s3:PutObject")
            };
            return Err(refuse(
                &format!("{has} without {lacks}"),
                "the directory's write permission lets its holder both create and remove \
                 names; grant both, or neither",
            ));
        }
        let bits = if f & LIST != 0 { R | X } else { 0 } | if f & PUT != 0 { W | X } else { 0 };
        match who {
            None => out.everyone = bits,
            Some(uid) => {
                out.users.insert(*uid, bits);
            }
        }
    }
    Ok(out)
}

/// The permissions `p` has, without what a policy `added` (the user
/// entries it made go once they grant nothing).
pub fn without(p: &Permissions, added: &Added) -> PermissionChange {
    let mut c = crate::acl::current(p);
    c.group &= !added.group;
    c.other &= !added.other;
    c.named.retain_mut(|e| {
        let bits = match e.tag {
            AclTag::User => added.users.get(&e.id),
            _ => added.groups.get(&e.id),
        };
        e.perm &= !bits.copied().unwrap_or(0);
        !(e.tag == AclTag::User && e.perm == 0 && added.created.contains(&e.id))
    });
    c
}

/// `base` with `g` granted, and what that adds to it.
pub fn with(base: &PermissionChange, g: &Grants) -> (PermissionChange, Added) {
    let e = g.everyone;
    let mut c = PermissionChange {
        group: base.group | e,
        other: base.other | e,
        named: base.named.clone(),
        bucket_owner: 0,
    };
    let mut added = Added {
        group: c.group & !base.group,
        other: c.other & !base.other,
        ..Added::default()
    };
    for entry in &mut c.named {
        let more = e | if entry.tag == AclTag::User {
            g.users.get(&entry.id).copied().unwrap_or(0)
        } else {
            0
        };
        let new = more & !entry.perm;
        entry.perm |= more;
        if new != 0 {
            let to = if entry.tag == AclTag::User {
                &mut added.users
            } else {
                &mut added.groups
            };
            to.insert(entry.id, new);
        }
    }
    for (&uid, &bits) in &g.users {
        if !c.named.iter().any(|n| n.tag == AclTag::User && n.id == uid) {
            c.named.push(AclEntry {
                tag: AclTag::User,
                id: uid,
                perm: bits | e,
            });
            added.users.insert(uid, bits | e);
            added.created.push(uid);
        }
    }
    (c, added)
}

/// Whether `p` still grants everything `g` says (a chmod or setfacl since
/// may have taken some of it).
pub fn holds(p: &Permissions, g: &Grants) -> bool {
    let now = crate::acl::current(p);
    let mask = if p.acl.is_empty() { 7 } else { p.mask() };
    let has = |perm: u8, bits: u8| perm & bits == bits;
    let e = g.everyone;
    has(now.other, e)
        && has(now.group & mask, e)
        && now.named.iter().all(|n| has(n.perm & mask, e))
        && g.users.iter().all(|(uid, bits)| {
            *uid == p.uid
                || match now
                    .named
                    .iter()
                    .find(|n| n.tag == AclTag::User && n.id == *uid)
                {
                    Some(n) => has(n.perm & mask, bits | e),
                    None => has(now.other, bits | e),
                }
        })
}

/// Whether everyone may list the bucket or write in it (GetBucketPolicyStatus).
pub fn is_public(p: &Permissions) -> bool {
    let other = (p.mode & 7) as u8;
    other & (R | X) == R | X || other & (W | X) == W | X
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthConfig;

    fn owners() -> Owners {
        Owners::new(&AuthConfig::Anonymous)
    }

    fn doc(statement: &str) -> String {
        format!(r#"{{"Version":"2012-10-17","Statement":[{statement}]}}"#)
    }

    fn code(e: s3s::S3Error) -> String {
        e.code().as_str().to_string()
    }

    const LIST_ALL: &str = r#"{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:ListBucket","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}"#;

    #[test]
    fn list_for_everyone_is_r_x_for_others() {
        let g = grants(&doc(LIST_ALL), "b", 1000, &owners()).unwrap();
        assert_eq!(
            g,
            Grants {
                everyone: R | X,
                users: BTreeMap::new()
            }
        );
        let any = r#"{"Effect":"Allow","Principal":"*","Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::*","arn:aws:s3:::*/*"]}"#;
        assert_eq!(
            grants(&doc(any), "b", 1000, &owners()).unwrap().everyone,
            R | X
        );
        let write = r#"{"Effect":"Allow","Principal":"*","Action":["s3:PutObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::b/*"}"#;
        assert_eq!(
            grants(&doc(write), "b", 1000, &owners()).unwrap().everyone,
            W | X
        );
    }

    #[test]
    fn what_posix_cannot_hold_is_refused_and_malformed_is_400() {
        let o = owners();
        let refused = [
            LIST_ALL.replace("Allow", "Deny"),
            LIST_ALL.replace("s3:ListBucket", "s3:GetObject"),
            LIST_ALL.replace("\"s3:ListBucket\"", "\"*\""),
            LIST_ALL.replace("s3:ListBucket", "s3:*"),
            LIST_ALL.replace("s3:ListBucket", "s3:PutObject"),
            LIST_ALL.replace(
                r#""Action""#,
                r#""Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/32"}},"Action""#,
            ),
            r#"{"Effect":"Allow","Principal":"*","Action":["s3:PutObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::b/k"}"#.to_string(),
        ];
        for d in refused {
            let e = grants(&doc(&d), "b", 1000, &o).unwrap_err();
            assert_eq!(code(e), "NotImplemented", "{d}");
        }
        let malformed = [
            "not json".to_string(),
            r#"{"Version":"2013-01-01","Statement":[]}"#.to_string(),
            r#"{"Version":"2012-10-17","Statement":[]}"#.to_string(),
            doc(&LIST_ALL.replace("Resource", "Resources")),
            doc(&LIST_ALL.replace("\"Principal\"", "\"NotPrincipal\"")),
            doc(&LIST_ALL.replace("arn:aws:s3:::b\"", "arn:aws:s3:::other\"")),
            doc(&LIST_ALL.replace("{\"AWS\":\"*\"}", "{\"AWS\":\"arn:aws:iam::nobody:root\"}")),
            doc(
                r#"{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::b/*"}"#,
            ),
        ];
        for d in malformed {
            let e = grants(&d, "b", 1000, &o).unwrap_err();
            assert_eq!(code(e), "MalformedPolicy", "{d}");
        }
    }

    #[test]
    fn log_delivery_grants_nothing_and_other_services_are_refused() {
        let delivery = r#"{"Sid":"S3ServerAccessLogsPolicy","Effect":"Allow","Principal":{"Service":"logging.s3.amazonaws.com"},"Action":["s3:PutObject"],"Resource":"arn:aws:s3:::b/log/","Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:s3:::src"}}}"#;
        let both = format!("{delivery},{LIST_ALL}");
        assert_eq!(
            grants(&doc(delivery), "b", 1000, &owners()).unwrap(),
            Grants::default()
        );
        assert_eq!(
            grants(&doc(&both), "b", 1000, &owners()).unwrap().everyone,
            R | X
        );
        for other in [
            delivery.replace("logging.s3", "cloudtrail"),
            delivery.replace("s3:PutObject", "s3:DeleteObject"),
            delivery.replace("Allow", "Deny"),
        ] {
            assert!(
                grants(&doc(&other), "b", 1000, &owners()).is_err(),
                "{other}"
            );
        }
    }

    #[test]
    fn delete_takes_back_only_what_was_added() {
        let p = Permissions {
            uid: 1000,
            gid: 1000,
            mode: 0o750,
            acl: Vec::new(),
        };
        let g = Grants {
            everyone: R | X,
            users: BTreeMap::from([(1001, W | X)]),
        };
        let (c, added) = with(&crate::acl::current(&p), &g);
        assert_eq!((c.group, c.other), (R | X, R | X));
        assert_eq!(
            c.named,
            vec![AclEntry {
                tag: AclTag::User,
                id: 1001,
                perm: 7
            }]
        );
        assert_eq!(
            (added.group, added.other, added.created.clone()),
            (0, R | X, vec![1001])
        );
        // As the file system then has it: an ACL, the mode's group bits the mask.
        let after = Permissions {
            uid: 1000,
            gid: 1000,
            mode: 0o775,
            acl: vec![
                AclEntry {
                    tag: AclTag::User,
                    id: 1001,
                    perm: 7,
                },
                AclEntry {
                    tag: AclTag::GroupObj,
                    id: u32::MAX,
                    perm: 5,
                },
                AclEntry {
                    tag: AclTag::Mask,
                    id: u32::MAX,
                    perm: 7,
                },
            ],
        };
        assert!(holds(&after, &g));
        let back = without(&after, &added);
        assert_eq!((back.group, back.other, back.named.len()), (R | X, 0, 0));
        let chmodded = Permissions {
            mode: 0o770,
            acl: Vec::new(),
            ..after
        };
        assert!(!holds(&chmodded, &g), "a chmod took the policy's grants");
    }
}
