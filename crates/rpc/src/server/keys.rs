//! The key operations of the gateway: a user makes, lists and revokes its
//! own keys, and gets temporary credentials, over the node's Unix socket,
//! where the kernel names the caller (`SO_PEERCRED`). Nothing in the
//! request says who the caller is, so no framing of it can act for
//! another uid. Root and the server's own user may act for anyone.

use crate::message::{Request, Response};
use crate::server::Peer;
use s3hpc_client::{ErrorCode, S3Error};
use s3hpc_keys::session::Origin;
use s3hpc_keys::KeyStore;
use std::time::Duration;

pub(super) fn serve(
    store: Option<&KeyStore>,
    peer: Peer,
    req: &Request<'_>,
    log: impl Fn(std::fmt::Arguments<'_>),
) -> Result<Response, S3Error> {
    let store = store.ok_or_else(|| {
        S3Error::new(
            ErrorCode::NotImplemented,
            "this gateway has no key store: its administrator starts it with \
             `s3hpc serve --key-store DIR`",
        )
    })?;
    let Peer::Unix { uid, gid, .. } = peer else {
        return Err(S3Error::new(
            ErrorCode::AccessDenied,
            "keys are made over the node's Unix socket, where the kernel names the caller; \
             not over TCP",
        ));
    };
    let privileged = uid == 0 || uid == s3hpc_store::identity::server_uid();
    let for_whom = |asked: Option<u32>| match asked {
        Some(other) if other != uid && !privileged => Err(S3Error::new(
            ErrorCode::AccessDenied,
            format!("uid {uid} may not act on the keys of uid {other}; only on its own"),
        )),
        Some(other) => Ok(other),
        None => Ok(uid),
    };
    let failed = |e: String| S3Error::new(ErrorCode::InternalError, e);
    // The key store is the server's: the thread may still hold the last
    // request's user.
    s3hpc_store::identity::release_held();
    match req {
        Request::KeyCreate { valid_secs } => {
            let k = store
                .create(uid, gid, valid_secs.map(Duration::from_secs))
                .map_err(failed)?;
            log(format_args!("uid {uid} made key {}", k.access_key));
            Ok(Response::NewKey(k))
        }
        Request::KeyList { uid: asked } => {
            let filter = match asked {
                None if privileged => None,
                other => Some(for_whom(*other)?),
            };
            Ok(Response::Keys(store.list(filter)))
        }
        Request::KeyRevoke { access_key } => {
            let k = store
                .revoke(access_key, uid, privileged)
                .map_err(|e| S3Error::new(ErrorCode::InvalidArgument, e))?;
            log(format_args!(
                "uid {uid} revoked key {} of uid {}",
                k.access_key, k.uid
            ));
            Ok(Response::Done)
        }
        Request::KeyRevokeAll { uid: asked } => {
            let target = for_whom(*asked)?;
            let removed = store.revoke_all(target).map_err(failed)?;
            log(format_args!(
                "uid {uid} revoked all {} keys and the sessions of uid {target}",
                removed.len()
            ));
            Ok(Response::Keys(removed))
        }
        Request::SessionCreate { valid_secs } => store
            .session(Origin::Socket, uid, gid, Duration::from_secs(*valid_secs))
            .map(Response::Session)
            .map_err(|e| S3Error::new(ErrorCode::InvalidArgument, e)),
        other => Err(S3Error::new(
            ErrorCode::InvalidRequest,
            format!("{} is not a key operation", other.name()),
        )),
    }
}
