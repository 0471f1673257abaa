//! ACLs as s3hpc answers them: it does not model them. A bucket behaves as
//! AWS's default since 2023, ObjectOwnership `BucketOwnerEnforced`: one
//! owner with FULL_CONTROL of everything, access decided by the server's
//! credentials (and the file system's permissions). So the canned ACLs that
//! mean exactly that (`private`, `bucket-owner-full-control`) are accepted,
//! and anything granting others access is refused with AWS's own answer for
//! such buckets, AccessControlListNotSupported, saying why.

use s3s::dto::*;
use s3s::{S3ErrorCode, S3Result};

const OWNER_ID: &str = "s3hpc";

pub fn owner() -> Owner {
    Owner {
        display_name: Some(OWNER_ID.into()),
        id: Some(OWNER_ID.into()),
    }
}

/// What Get{Bucket,Object}Acl answer: the owner has FULL_CONTROL.
pub fn owner_full_control() -> Grants {
    vec![Grant {
        grantee: Some(Grantee {
            display_name: Some(OWNER_ID.into()),
            id: Some(OWNER_ID.into()),
            type_: Type::from_static(Type::CANONICAL_USER),
            email_address: None,
            uri: None,
        }),
        permission: Some(Permission::from_static(Permission::FULL_CONTROL)),
    }]
}

fn not_supported(what: &str) -> s3s::S3Error {
    let mut e = s3s::S3Error::with_message(
        S3ErrorCode::AccessControlListNotSupported,
        format!(
            "{what}: s3hpc does not model ACLs. Every bucket is BucketOwnerEnforced: the \
             owner has FULL_CONTROL and access is decided by the server's credentials, so \
             only the canned ACL private (or bucket-owner-full-control) is accepted; omit \
             the ACL or send private"
        ),
    );
    e.set_status_code(hyper::StatusCode::BAD_REQUEST);
    e
}

pub fn check_bucket_canned(acl: Option<&BucketCannedACL>) -> S3Result<()> {
    match acl.map(|a| a.as_str()) {
        None | Some(BucketCannedACL::PRIVATE) => Ok(()),
        Some(other) => Err(not_supported(&format!("canned ACL {other:?}"))),
    }
}

pub fn check_object_canned(acl: Option<&ObjectCannedACL>) -> S3Result<()> {
    match acl.map(|a| a.as_str()) {
        None | Some(ObjectCannedACL::PRIVATE | ObjectCannedACL::BUCKET_OWNER_FULL_CONTROL) => {
            Ok(())
        }
        Some(other) => Err(not_supported(&format!("canned ACL {other:?}"))),
    }
}

/// Explicit grants: accepted only when they say what is already true (the
/// owner, and only the owner, with FULL_CONTROL).
pub fn check_grants(
    policy: Option<&AccessControlPolicy>,
    headers: [&Option<String>; 5],
) -> S3Result<()> {
    if let Some(h) = headers.iter().find_map(|h| h.as_ref()) {
        return Err(not_supported(&format!("grant header {h:?}")));
    }
    let Some(grants) = policy.and_then(|p| p.grants.as_ref()) else {
        return Ok(());
    };
    let owner_only = grants.iter().all(|g| {
        g.permission.as_ref().map(|p| p.as_str()) == Some(Permission::FULL_CONTROL)
            && g.grantee
                .as_ref()
                .is_some_and(|e| e.id.as_deref() == Some(OWNER_ID))
    });
    if owner_only {
        Ok(())
    } else {
        Err(not_supported("an access control policy granting others"))
    }
}
