//! `PutOptions::access` as S3 ACL headers: what the server's mapping
//! (`http/src/acl.rs`) turns back into the same permissions. Everyone's
//! read is the canned `public-read` (the mode's other `r`, whatever class
//! of callers the server counts as everyone), the bucket owner's read
//! `bucket-owner-read`, a named user's read a grant to `uid:N`. What S3's
//! headers cannot say (write bits on an object, a group's own bits, named
//! groups) is refused, never sent as something else.

use s3hpc_store::{AclTag, PermissionChange, Result, S3Error};

const R: u8 = 4;

/// The headers that ask for `change` on a new object.
pub(super) fn headers(change: &PermissionChange) -> Result<Vec<(&'static str, String)>> {
    let other = change.other;
    let canned = match (other, change.bucket_owner) {
        (0, 0) => Some("private"),
        (R, 0) => Some("public-read"),
        (0, R) => Some("bucket-owner-read"),
        _ => None,
    };
    let expressible = change.group == other
        && change
            .named
            .iter()
            .all(|e| e.tag == AclTag::User && (e.perm & !other) == R);
    let Some(canned) = canned.filter(|_| expressible) else {
        return Err(S3Error::new(
            s3hpc_store::ErrorCode::NotImplemented,
            format!(
                "the permissions {change:?} have no S3 ACL headers that say them (S3 grants \
                 objects READ to users and everyone, nothing by group); give READ grants"
            ),
        ));
    };
    let mut out = vec![("x-amz-acl", canned.to_string())];
    let grants: Vec<String> = change
        .named
        .iter()
        .map(|e| format!("id=\"uid:{}\"", e.id))
        .collect();
    if !grants.is_empty() {
        out.push(("x-amz-grant-read", grants.join(", ")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use s3hpc_store::AclEntry;

    #[test]
    fn permissions_become_the_headers_that_ask_for_them() {
        let read = PermissionChange::canned("public-read", false).unwrap();
        assert_eq!(
            headers(&read).unwrap(),
            vec![("x-amz-acl", "public-read".to_string())]
        );
        let private = PermissionChange::canned("private", false).unwrap();
        assert_eq!(
            headers(&private).unwrap(),
            vec![("x-amz-acl", "private".to_string())]
        );
        let mut named = private.clone();
        named.named.push(AclEntry {
            tag: AclTag::User,
            id: 7,
            perm: R,
        });
        assert_eq!(
            headers(&named).unwrap(),
            vec![
                ("x-amz-acl", "private".to_string()),
                ("x-amz-grant-read", "id=\"uid:7\"".to_string())
            ]
        );
        named.named[0].perm = 6;
        assert!(headers(&named).is_err(), "no WRITE on an object");
        let owner = PermissionChange::canned("bucket-owner-full-control", false).unwrap();
        assert_eq!(
            headers(&owner).unwrap(),
            vec![("x-amz-acl", "bucket-owner-read".to_string())]
        );
    }
}
