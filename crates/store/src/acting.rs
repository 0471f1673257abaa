//! The one place where a request's identity is applied: [`Acting`] is a
//! view of the engine whose every call runs, on the calling thread,
//! as that identity (see `identity.rs`), and whose refusals name it. Every
//! transport reaches the engine through it (the HTTP server per access
//! key, the gateway per Unix-socket peer, the embedded client as the
//! process itself), so no S3 handler decides access: the kernel does.

use crate::identity::{self, Identity};
use crate::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The engine acting as one identity: every call switches the calling
/// thread to that identity for its duration (nothing to switch for the
/// server's own). Cheap to clone (two reference counts).
#[derive(Clone)]
pub struct Acting {
    store: Arc<Store>,
    who: Identity,
    /// Leave the thread as `who` after each call (see [`Acting::held`]).
    hold: bool,
}

impl Acting {
    pub fn new(store: Arc<Store>, who: Identity) -> Acting {
        Acting {
            store,
            who,
            hold: false,
        }
    }

    /// Like [`Acting::new`], but the calling thread stays `who` after a
    /// call, until a call as someone else switches it: one switch per run
    /// of calls by one user instead of two system calls each way per call.
    /// Only for threads whose file-system work all goes through `Acting`
    /// (the gateway's sessions, the HTTP server's workers: between calls
    /// they parse, sign and move bytes on open sockets and files, which no
    /// permission check sees); a thread that does file-system work of its
    /// own calls [`crate::identity::release_held`] first.
    pub fn held(store: Arc<Store>, who: Identity) -> Acting {
        Acting {
            hold: true,
            ..Acting::new(store, who)
        }
    }

    /// What the data root's file system can do (no file-system call).
    pub fn profile(&self) -> &FsProfile {
        self.store.profile()
    }
}

impl Acting {
    pub fn identity(&self) -> &Identity {
        &self.who
    }

    /// Runs `f` as this identity; a refusal by the kernel names who was
    /// refused.
    fn run<T>(&self, f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        let cannot = |e| {
            s3err!(
                InternalError,
                "cannot act as {}: {e}; the server needs CAP_SETUID and CAP_SETGID",
                self.who.describe()
            )
        };
        if self.hold {
            let _held = identity::hold(&self.who).map_err(cannot)?;
            return f(&self.store).map_err(|e| self.refused(e));
        }
        let _switched = identity::enter(&self.who).map_err(cannot)?;
        f(&self.store).map_err(|e| self.refused(e))
    }

    fn refused(&self, mut e: S3Error) -> S3Error {
        if e.code == ErrorCode::AccessDenied && !self.who.is_server() {
            e.message = format!(
                "{} is not allowed this by the file system: {}",
                self.who.describe(),
                e.message
            );
        }
        e
    }

    /// Whether this identity may do `access` to bucket `bucket`'s
    /// directory, asked of the kernel (`faccessat` with the effective ids,
    /// as the thread acts now). Only for a user: the server's answer is
    /// whatever its calls get. The calls that need it are those whose
    /// first file-system call would not be refused by itself: a bucket's
    /// handle is opened with `O_PATH`, which needs no right on the bucket.
    fn check_bucket(&self, bucket: &str, access: rustix::fs::Access) -> Result<()> {
        if self.who.is_server() {
            return Ok(());
        }
        validate_bucket_name(bucket)?;
        match rustix::fs::accessat(
            &self.store.root_fd,
            bucket,
            access,
            rustix::fs::AtFlags::EACCESS,
        ) {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => Err(s3err!(
                AccessDenied,
                "bucket {bucket:?}: its directory {} does not let in {}",
                self.store.root.join(bucket).display(),
                self.who.describe()
            )),
            // Missing, or not a directory: the engine's own call says so.
            Err(_) => Ok(()),
        }
    }

    /// Whether this identity may create `key` in `bucket`: write and
    /// search on the deepest directory of the key's path that exists,
    /// asked of the kernel. For a PUT with `Expect: 100-continue`, so a
    /// refused client is told before it sends its body. Advisory: the
    /// write itself still decides; this refuses early only what the
    /// kernel would refuse it.
    pub fn may_create(&self, bucket: &str, key: &str) -> Result<()> {
        if self.who.is_server() {
            return Ok(());
        }
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        let wx = rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK;
        self.run(|s| {
            let mut dir = key.rsplit_once('/').map(|(d, _)| d);
            loop {
                let path = match dir {
                    Some(d) => format!("{bucket}/{d}"),
                    None => bucket.to_string(),
                };
                match rustix::fs::accessat(&s.root_fd, &path, wx, rustix::fs::AtFlags::EACCESS) {
                    // Refused on a directory (an object's file in the way,
                    // `foo/bar` under `foo/bar/x`, is the write's to judge).
                    Err(rustix::io::Errno::ACCESS | rustix::io::Errno::PERM)
                        if is_dir(s, &path) =>
                    {
                        return Err(s3err!(
                            AccessDenied,
                            "{path:?}: {} may not create {key:?} there (it needs write and \
                             search permission on {})",
                            self.who.describe(),
                            s.root.join(&path).display()
                        ))
                    }
                    Err(rustix::io::Errno::NOENT) if dir.is_some() => {
                        dir = dir.and_then(|d| d.rsplit_once('/').map(|(p, _)| p));
                    }
                    // Allowed, or something the write itself will name.
                    _ => return Ok(()),
                }
            }
        })
    }

    pub fn head_bucket(&self, bucket: &str) -> Result<()> {
        self.run(|s| {
            self.check_bucket(bucket, rustix::fs::Access::EXEC_OK)?;
            s.head_bucket(bucket)
        })
    }

    pub fn delete_bucket(&self, bucket: &str) -> Result<()> {
        let all = rustix::fs::Access::READ_OK | rustix::fs::Access::EXEC_OK;
        self.run(|s| {
            self.check_bucket(bucket, all)?;
            s.delete_bucket(bucket)
        })
    }

    pub fn list_objects(&self, bucket: &str, req: &ListRequest) -> Result<ListPage> {
        let all = rustix::fs::Access::READ_OK | rustix::fs::Access::EXEC_OK;
        self.run(|s| {
            self.check_bucket(bucket, all)?;
            s.list_objects(bucket, req)
        })
    }

    pub fn list_multipart_uploads(&self, bucket: &str, prefix: &str) -> Result<Vec<UploadInfo>> {
        let all = rustix::fs::Access::READ_OK | rustix::fs::Access::EXEC_OK;
        self.run(|s| {
            self.check_bucket(bucket, all)?;
            s.list_multipart_uploads(bucket, prefix)
        })
    }

    /// The buckets this identity may enter (the server: all).
    pub fn list_buckets(&self) -> Result<Vec<BucketInfo>> {
        self.run(|s| {
            let mut all = s.list_buckets()?;
            if !self.who.is_server() {
                all.retain(|b| {
                    self.check_bucket(&b.name, rustix::fs::Access::EXEC_OK)
                        .is_ok()
                });
            }
            Ok(all)
        })
    }
}

impl Acting {
    /// HEAD as a user opens the object, as a GET does, so that the kernel
    /// decides with the read permission; a `stat` needs only the right to
    /// pass the directories, and would show a private object's size, time
    /// and ETag to anyone who may list the directory.
    pub fn head_object(&self, bucket: &str, key: &str) -> Result<ObjectInfo> {
        if self.who.is_server() {
            return self.run(|s| s.head_object(bucket, key));
        }
        self.run(|s| s.get_object(bucket, key, None).map(|got| got.info))
    }
}

/// Forwards engine calls through [`Acting::run`].
macro_rules! forward {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        impl Acting {
            $(
                // As many as the engine's own call takes.
                #[allow(clippy::too_many_arguments)]
                pub fn $name(&self $(, $arg: $ty)*) -> $ret {
                    self.run(|s| s.$name($($arg),*))
                }
            )*
        }
    };
}

forward! {
    fn create_bucket(&self, bucket: &str) -> Result<()>;
    fn bucket_versioning(&self, bucket: &str) -> Result<Versioning>;
    fn put_bucket_versioning(&self, bucket: &str, state: Versioning) -> Result<()>;
    fn put_object_versioned(
        &self,
        bucket: &str,
        key: &str,
        body: PutBody<'_>,
        opts: &PutOptions,
    ) -> Result<(String, Option<String>)>;
    fn delete_object_versioned(&self, bucket: &str, key: &str) -> Result<Option<String>>;
    fn delete_object_versioned_if(
        &self,
        bucket: &str,
        key: &str,
        cond: &DeleteCondition,
    ) -> Result<Option<String>>;
    fn get_object_version(
        &self,
        bucket: &str,
        key: &str,
        id: &str,
        range: Option<ByteRange>,
    ) -> Result<GetResult>;
    fn head_object_version(&self, bucket: &str, key: &str, id: &str) -> Result<ObjectInfo>;
    fn delete_object_version(&self, bucket: &str, key: &str, id: &str) -> Result<bool>;
    fn delete_object_version_if(
        &self,
        bucket: &str,
        key: &str,
        id: &str,
        cond: &DeleteCondition,
    ) -> Result<bool>;
    fn list_object_versions(&self, bucket: &str, req: &VersionsRequest) -> Result<VersionsPage>;
    fn version_permissions(&self, bucket: &str, key: &str, id: &str) -> Result<Permissions>;
    fn set_version_permissions(&self, bucket: &str, key: &str, id: &str, change: &PermissionChange) -> Result<()>;
    fn bucket_lifecycle(&self, bucket: &str) -> Result<Option<Vec<LifecycleRule>>>;
    fn put_bucket_lifecycle(&self, bucket: &str, rules: &[LifecycleRule]) -> Result<()>;
    fn delete_bucket_lifecycle(&self, bucket: &str) -> Result<()>;
    fn key_expiration(&self, bucket: &str, key: &str) -> Result<Option<(std::time::SystemTime, String)>>;
    fn object_expiration(&self, bucket: &str, info: &ObjectInfo) -> Result<Option<(std::time::SystemTime, String)>>;
    fn object_lock_configuration(&self, bucket: &str) -> Result<Option<ObjectLockConfig>>;
    fn put_object_lock_configuration(&self, bucket: &str, config: &ObjectLockConfig) -> Result<()>;
    fn object_lock_state(&self, bucket: &str, key: &str, id: Option<&str>) -> Result<ObjectLockState>;
    fn put_object_retention(
        &self,
        bucket: &str,
        key: &str,
        id: Option<&str>,
        retention: Option<Retention>,
        bypass: bool,
    ) -> Result<()>;
    fn put_object_legal_hold(&self, bucket: &str, key: &str, id: Option<&str>, on: bool) -> Result<()>;
    fn put_object(&self, bucket: &str, key: &str, body: PutBody<'_>, opts: &PutOptions) -> Result<String>;
    fn get_object(&self, bucket: &str, key: &str, range: Option<ByteRange>) -> Result<GetResult>;
    fn delete_object(&self, bucket: &str, key: &str) -> Result<()>;
    fn delete_object_if(&self, bucket: &str, key: &str, cond: &DeleteCondition) -> Result<()>;
    fn get_object_part(&self, bucket: &str, key: &str, part_number: u32) -> Result<PartGet<GetResult>>;
    fn head_object_part(&self, bucket: &str, key: &str, part_number: u32) -> Result<PartGet<ObjectInfo>>;
    fn object_parts(&self, bucket: &str, key: &str) -> Result<Option<Vec<ObjectPart>>>;
    fn copy_object(
        &self,
        src_bucket: &str,
        src_key: &str,
        dst_bucket: &str,
        dst_key: &str,
        opts: Option<&PutOptions>,
    ) -> Result<ObjectInfo>;
    fn copy_object_if(
        &self,
        src_bucket: &str,
        src_key: &str,
        dst_bucket: &str,
        dst_key: &str,
        opts: Option<&PutOptions>,
        cond: &WriteCondition,
    ) -> Result<ObjectInfo>;
    fn copy_object_with(
        &self,
        src: (&str, &str, Option<&str>),
        dst: (&str, &str),
        opts: Option<&PutOptions>,
        cond: &WriteCondition,
        access: Option<&PermissionChange>,
    ) -> Result<ObjectInfo>;
    fn get_object_tagging(&self, bucket: &str, key: &str) -> Result<BTreeMap<String, String>>;
    fn put_object_tagging(&self, bucket: &str, key: &str, tags: &BTreeMap<String, String>) -> Result<()>;
    fn delete_object_tagging(&self, bucket: &str, key: &str) -> Result<()>;
    fn create_multipart_upload(&self, bucket: &str, key: &str, opts: &PutOptions) -> Result<String>;
    fn upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        part_number: u32,
        body: PutBody<'_>,
    ) -> Result<String>;
    fn upload_part_checked(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        part_number: u32,
        body: PutBody<'_>,
        opts: &PutOptions,
    ) -> Result<(String, Option<ObjectChecksum>)>;
    fn complete_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
    ) -> Result<ObjectInfo>;
    fn complete_multipart_upload_if(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
        cond: &WriteCondition,
    ) -> Result<ObjectInfo>;
    fn complete_multipart_upload_checked(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
        part_checksums: &[Option<String>],
        whole: Option<&ChecksumRequest>,
        cond: &WriteCondition,
    ) -> Result<ObjectInfo>;
    fn abort_multipart_upload(&self, bucket: &str, key: &str, upload_id: &str) -> Result<()>;
    fn list_parts(&self, bucket: &str, key: &str, upload_id: &str) -> Result<Vec<PartInfo>>;
    fn permissions(&self, bucket: &str, key: Option<&str>) -> Result<Permissions>;
    fn bucket_owner(&self, bucket: &str) -> Result<u32>;
    fn set_permissions(&self, bucket: &str, key: Option<&str>, change: &PermissionChange) -> Result<()>;
    fn bucket_config(&self, bucket: &str, name: &str) -> Result<Option<Vec<u8>>>;
    fn put_bucket_config(&self, bucket: &str, name: &str, value: &[u8]) -> Result<()>;
    fn delete_bucket_config(&self, bucket: &str, name: &str) -> Result<()>;
    fn bucket_policy(&self, bucket: &str) -> Result<(Permissions, Option<Vec<u8>>)>;
    fn set_bucket_policy(
        &self,
        bucket: &str,
        change: Option<&PermissionChange>,
        record: Option<&[u8]>,
    ) -> Result<()>;
}

impl Acting {
    /// [`Store::latest_delete_marker`], as this identity.
    pub fn latest_delete_marker(&self, bucket: &str, key: &str) -> Option<String> {
        self.run(|s| Ok(s.latest_delete_marker(bucket, key)))
            .ok()
            .flatten()
    }
}

/// Whether `path` (under the data root) is a directory, not following a
/// symlink.
fn is_dir(s: &Store, path: &str) -> bool {
    crate::fscalls::statat(&s.root_fd, path, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)
}
