//! S3 ACLs as a view of the file system's permissions, never a second
//! store that could disagree with it.
//!
//! Reading (GetBucketAcl, GetObjectAcl): the owner (the file's uid, see
//! `owners.rs`) has FULL_CONTROL; the owning group's bits are grants to the
//! mapped users in that group; named ACL entries (`user:`, `group:`, cut by
//! the mask) are grants to those users; the other bits are AllUsers when
//! unsigned requests act as someone (`--anonymous-user`), else
//! AuthenticatedUsers (every request is signed, so "everyone else" is every
//! key). On an object `r` is READ; on a bucket `r-x` is READ (list) and
//! `-wx` WRITE (create, overwrite and delete objects).
//!
//! Writing (PutBucketAcl, PutObjectAcl, `x-amz-acl` and `x-amz-grant-*` on
//! CreateBucket, PutObject, CopyObject and CreateMultipartUpload) replaces
//! the group, other and named-entry permissions; the owner's bits stay.
//! Given with a write, they are checked here before anything is written
//! and set by the engine on the temporary before it is published
//! (`PutOptions::access`), so the object never has other permissions and
//! a refused ACL leaves the object it would replace as it was. Canned ACLs:
//! `private` nothing for anyone else; `public-read` and (without an
//! anonymous user) `authenticated-read` other `r` (buckets `r-x`);
//! `public-read-write` on a bucket other `rwx`, which is what S3 grants
//! (anyone may create, overwrite and delete objects in it), on an object
//! other `r` (S3 gives an object's WRITE no meaning); `bucket-owner-read`
//! and `bucket-owner-full-control` a `user:` entry `r` for the bucket's
//! owner. The owning group gets at least what others get (in POSIX its
//! bits, not other's, apply to its members). What POSIX cannot express is
//! refused, saying why: READ_ACP and WRITE_ACP (POSIX has no right to read
//! or change permissions apart from the data: the owner alone changes
//! them), FULL_CONTROL for anyone but the owner, and WRITE on an object;
//! grants by e-mail are UnresolvableGrantByEmailAddress (no user has one)
//! and unknown ids InvalidArgument.

use crate::owners::Owners;
use s3hpc_store::{AclEntry, AclTag, PermissionChange, Permissions};
use s3s::dto::*;
use s3s::{s3_error, S3Result};
use std::collections::BTreeMap;

const ALL_USERS: &str = "http://acs.amazonaws.com/groups/global/AllUsers";
const AUTHENTICATED_USERS: &str = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";

const R: u8 = 4;
const W: u8 = 2;
const X: u8 = 1;

/// The owner and grants that `p` amounts to.
pub fn view(p: &Permissions, bucket: bool, owners: &Owners) -> (Owner, Grants) {
    // Everyone's grants first, then the owner's, then named users', the
    // order Ceph answers in (and s3-tests compares in, where groups appear).
    let everyone = if owners.anonymous {
        ALL_USERS
    } else {
        AUTHENTICATED_USERS
    };
    let mut grants: Grants = s3_permissions((p.mode & 7) as u8, bucket)
        .into_iter()
        .map(|s3| grant(group_grantee(everyone), s3))
        .collect();
    let owner = owners.of(p.uid);
    grants.push(grant(user_grantee(owner.clone()), Permission::FULL_CONTROL));
    let has_acl = !p.acl.is_empty();
    let mask = p.mask();
    let entry = |tag| p.acl.iter().find(|e| e.tag == tag).map(|e| e.perm);
    let group = match entry(AclTag::GroupObj) {
        Some(g) if has_acl => g & mask,
        _ => ((p.mode >> 3) & 7) as u8,
    };
    // A named user entry decides for that user; groups add up for the rest.
    let mut named: BTreeMap<u32, u8> = BTreeMap::new();
    for e in p.acl.iter().filter(|e| e.tag == AclTag::User) {
        named.insert(e.id, e.perm & mask);
    }
    let mut by_group: BTreeMap<u32, u8> = BTreeMap::new();
    let groups = std::iter::once((p.gid, group)).chain(
        p.acl
            .iter()
            .filter(|e| e.tag == AclTag::Group)
            .map(|e| (e.id, e.perm & mask)),
    );
    for (gid, perm) in groups {
        for k in owners.members(gid) {
            *by_group.entry(k.uid).or_default() |= perm;
        }
    }
    for (uid, perm) in by_group {
        named.entry(uid).or_insert(perm);
    }
    named.remove(&p.uid);
    for (uid, perm) in named {
        for s3 in s3_permissions(perm, bucket) {
            grants.push(grant(user_grantee(owners.of(uid)), s3));
        }
    }
    (owner, grants)
}

fn s3_permissions(perm: u8, bucket: bool) -> Vec<&'static str> {
    let mut out = Vec::new();
    if bucket {
        if perm & (R | X) == R | X {
            out.push(Permission::READ);
        }
        if perm & (W | X) == W | X {
            out.push(Permission::WRITE);
        }
    } else if perm & R != 0 {
        out.push(Permission::READ);
    }
    out
}

fn grant(grantee: Grantee, permission: &'static str) -> Grant {
    Grant {
        grantee: Some(grantee),
        permission: Some(Permission::from_static(permission)),
    }
}

fn user_grantee(o: Owner) -> Grantee {
    Grantee {
        display_name: o.display_name,
        id: o.id,
        type_: Type::from_static(Type::CANONICAL_USER),
        email_address: None,
        uri: None,
    }
}

fn group_grantee(uri: &str) -> Grantee {
    Grantee {
        display_name: None,
        id: None,
        type_: Type::from_static(Type::GROUP),
        email_address: None,
        uri: Some(uri.into()),
    }
}

/// What a request asks for: a canned ACL, an access control policy, and
/// the grant headers (full-control, read, read-acp, write, write-acp).
pub struct Asked<'a> {
    pub canned: Option<&'a str>,
    pub policy: Option<&'a AccessControlPolicy>,
    pub headers: [&'a Option<String>; 5],
}

impl Asked<'_> {
    pub fn is_empty(&self) -> bool {
        self.canned.is_none() && self.policy.is_none() && self.headers.iter().all(|h| h.is_none())
    }
}

/// Who is asking to change what: the file's owner (grants naming it are
/// already true). The bucket-owner canned ACLs name the bucket's owner,
/// whom the engine looks up where it writes.
pub struct Target {
    pub bucket: bool,
    pub owner: u32,
}

fn refuse(what: &str, why: &str) -> s3s::S3Error {
    s3_error!(
        NotImplemented,
        "{what}: {why}. s3hpc's ACLs are the file system's permissions (mode bits and POSIX \
         ACL entries), which cannot express it"
    )
}

/// The permissions `asked` amounts to on `target`; None when nothing is
/// asked.
pub fn change(
    asked: &Asked<'_>,
    target: &Target,
    owners: &Owners,
) -> S3Result<Option<PermissionChange>> {
    if asked.is_empty() {
        return Ok(None);
    }
    let mut other = 0u8;
    let mut named: BTreeMap<u32, u8> = BTreeMap::new();
    let read = if target.bucket { R | X } else { R };
    let authenticated = |what: &str| -> S3Result<u8> {
        if owners.anonymous {
            Err(refuse(
                what,
                "this server lets unsigned requests in as --anonymous-user, so the only class \
                 of \"everyone else\" the mode bits have includes anonymous requests; use \
                 public-read, or grant named users",
            ))
        } else {
            Ok(read)
        }
    };
    let mut bucket_owner = 0;
    if let Some(c) = asked.canned {
        if c == "authenticated-read" {
            authenticated("canned ACL authenticated-read")?;
        }
        let canned = PermissionChange::canned(c, target.bucket).ok_or_else(|| {
            refuse(
                &format!("canned ACL {c:?}"),
                "it grants to a service group s3hpc does not have",
            )
        })?;
        other = canned.other;
        bucket_owner = canned.bucket_owner;
    }
    let mut grants: Vec<(String, &str)> = Vec::new();
    let names = [
        Permission::FULL_CONTROL,
        Permission::READ,
        Permission::READ_ACP,
        Permission::WRITE,
        Permission::WRITE_ACP,
    ];
    for (h, perm) in asked.headers.iter().zip(names) {
        if let Some(h) = h {
            for g in h.split(',').map(str::trim).filter(|g| !g.is_empty()) {
                grants.push((g.to_string(), perm));
            }
        }
    }
    if let Some(list) = asked.policy.and_then(|p| p.grants.as_ref()) {
        for g in list {
            let perm = g.permission.as_ref().map_or("", |p| p.as_str());
            let perm = names.into_iter().find(|n| *n == perm).ok_or_else(|| {
                s3_error!(MalformedACLError, "unknown permission {perm:?} in a grant")
            })?;
            let e = g.grantee.as_ref();
            let who = match (
                e.and_then(|e| e.id.as_deref()),
                e.and_then(|e| e.uri.as_deref()),
                e.and_then(|e| e.email_address.as_deref()),
            ) {
                (Some(id), _, _) => format!("id={id}"),
                (_, Some(uri), _) => format!("uri={uri}"),
                (_, _, Some(mail)) => format!("emailAddress={mail}"),
                _ => return Err(s3_error!(MalformedACLError, "a grant names no grantee")),
            };
            grants.push((who, perm));
        }
    }
    for (who, perm) in grants {
        let (kind, value) = who
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim().trim_matches('"')))
            .ok_or_else(|| {
                s3_error!(
                    InvalidArgument,
                    "grant {who:?}: expected id=\"...\", uri=\"...\" or emailAddress=\"...\""
                )
            })?;
        let uid = match kind {
            "id" => Some(owners.uid_of(value).ok_or_else(|| {
                s3_error!(
                    InvalidArgument,
                    "grant to id {value:?}: no such user; grantee ids are access keys of this \
                     server's credentials, or uid:N"
                )
            })?),
            "uri" if value == ALL_USERS => None,
            "uri" if value == AUTHENTICATED_USERS => {
                authenticated("a grant to AuthenticatedUsers")?;
                None
            }
            "emailAddress" => {
                return Err(s3_error!(
                    UnresolvableGrantByEmailAddress,
                    "grant to {value:?}: no user has that e-mail address (users here have \
                     none); grant by id, the user's access key or uid:N"
                ))
            }
            _ => {
                return Err(s3_error!(
                    InvalidArgument,
                    "grantee {who:?} is not a user id or a known group URI"
                ))
            }
        };
        if uid == Some(target.owner) {
            // The owner has every right already.
            continue;
        }
        let bits = match perm {
            Permission::READ => read,
            Permission::WRITE if target.bucket => W | X,
            Permission::WRITE => {
                return Err(refuse(
                    "WRITE on an object",
                    "whether an object may be overwritten or deleted is its bucket's WRITE \
                     (the directory's w bit), as in S3, where an object's WRITE means nothing",
                ))
            }
            Permission::FULL_CONTROL => {
                return Err(refuse(
                    "FULL_CONTROL for someone other than the owner",
                    "only the owner (or root) may change permissions; grant READ (and WRITE \
                     on a bucket) instead",
                ))
            }
            _ => {
                return Err(refuse(
                    &format!("{perm} grant"),
                    "POSIX has no right to read or change permissions apart from the data: \
                     the owner alone changes them, and whoever may read the data sees them",
                ))
            }
        };
        match uid {
            Some(uid) => *named.entry(uid).or_default() |= bits,
            None => other |= bits,
        }
    }
    Ok(Some(PermissionChange {
        group: other,
        other,
        named: named
            .into_iter()
            .map(|(id, perm)| AclEntry {
                tag: AclTag::User,
                id,
                perm: perm | other,
            })
            .collect(),
        bucket_owner,
    }))
}

/// The permissions `p` has, as a change would set them: to tell whether a
/// re-created bucket asks for what it has.
pub fn current(p: &Permissions) -> PermissionChange {
    let has_acl = !p.acl.is_empty();
    let group = p
        .acl
        .iter()
        .find(|e| e.tag == AclTag::GroupObj && has_acl)
        .map_or(((p.mode >> 3) & 7) as u8, |e| e.perm);
    PermissionChange {
        group,
        other: (p.mode & 7) as u8,
        named: p
            .acl
            .iter()
            .filter(|e| matches!(e.tag, AclTag::User | AclTag::Group))
            .copied()
            .collect(),
        bucket_owner: 0,
    }
}
