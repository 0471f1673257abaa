//! S3 users are POSIX users: real Linux users and groups, made
//! for the test (as root; skipped, saying so, otherwise), and the kernel's
//! own checks, through HTTP (a key per user) and the RPC Unix socket (each
//! connection acts as its peer). Users a and b share a group, c does not;
//! the data root is sticky and world-writable, like /tmp.

use s3hpc_client::{EmbeddedClient, HttpClient, HttpClientConfig, S3Client};
use s3hpc_http::{AuthConfig, HttpServer, MappedUsers};
use s3hpc_rpc::{ClientFor, Gateway, GatewayOptions, Peer, RemoteClient};
use s3hpc_store::{
    AclEntry, AclTag, ErrorCode, Identity, ListRequest, PermissionChange, PutBody, PutOptions,
    Result, Store, StoreConfig,
};
use s3hpc_test_users::{chmod, data_root, Users};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

fn put(c: &dyn S3Client, b: &str, k: &str, body: &[u8]) -> Result<String> {
    c.put_object(b, k, PutBody::Bytes(body), &PutOptions::default())
}

fn get(c: &dyn S3Client, b: &str, k: &str) -> Result<Vec<u8>> {
    let mut got = c.get_object(b, k, None)?;
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut got.body, &mut out).unwrap();
    Ok(out)
}

fn list(c: &dyn S3Client, b: &str) -> Result<Vec<String>> {
    let page = c.list_objects(b, &ListRequest::default())?;
    Ok(page.objects.into_iter().map(|o| o.key).collect())
}

/// Asserts the kernel refused, as AccessDenied.
#[track_caller]
fn denied<T: std::fmt::Debug>(r: Result<T>, what: &str) {
    match r {
        Err(e) if e.code == ErrorCode::AccessDenied => {}
        other => panic!("{what}: expected AccessDenied, got {other:?}"),
    }
}

/// What a transport gives the test: a client acting as user `u` (0-2),
/// or as the administrator (`None`).
type ClientOf<'a> = &'a dyn Fn(Option<usize>) -> Box<dyn S3Client>;

/// The scenario of the issue's done-when, through any transport.
fn scenario(label: &str, users: &Users, root: &Path, client: ClientOf<'_>) {
    let p = label;
    let (a, b, c) = (client(Some(0)), client(Some(1)), client(Some(2)));
    let admin = client(None);
    let (privb, grp, publ, empty) = (
        format!("{p}-priv"),
        format!("{p}-grp"),
        format!("{p}-pub"),
        format!("{p}-empty"),
    );
    // a's buckets: made by a (mkdir as a in the sticky root), then given
    // the modes the case needs, as `chmod` would.
    for bk in [&privb, &grp, &publ, &empty] {
        a.create_bucket(bk).unwrap();
        put(a.as_ref(), bk, "k", b"of a").unwrap();
    }
    a.delete_object(&empty, "k").unwrap();
    put(a.as_ref(), &privb, "d/nested", b"deep").unwrap();
    put(a.as_ref(), &publ, "mine", b"private in public").unwrap();
    chmod(&root.join(&privb), 0o700);
    chmod(&root.join(&grp), 0o750);
    std::os::unix::fs::chown(root.join(&grp), None, Some(users.shared_gid())).unwrap();
    chmod(&root.join(&publ).join("mine"), 0o600);
    let upload = a
        .create_multipart_upload(&publ, "big", &PutOptions::default())
        .unwrap();
    let part = a
        .upload_part(&publ, "big", &upload, 1, PutBody::Bytes(b"part"))
        .unwrap();

    // Everything a wrote is a's, made by a.
    for rel in [
        privb.clone(),
        format!("{privb}/k"),
        format!("{privb}/d"),
        format!("{privb}/d/nested"),
        format!("{publ}/k"),
    ] {
        let m = std::fs::symlink_metadata(root.join(&rel)).unwrap();
        assert_eq!(
            (m.uid(), m.gid()),
            (users.uid(0), users.gid(0)),
            "{label}: {rel}"
        );
    }

    // The private bucket: nothing for b or c.
    for (who, u) in [("b", &b), ("c", &c)] {
        let u = u.as_ref();
        let w = format!("{label}: {who} on {privb}");
        denied(u.head_bucket(&privb), &w);
        denied(list(u, &privb), &w);
        denied(get(u, &privb, "k"), &w);
        denied(get(u, &privb, "d/nested"), &w);
        denied(u.head_object(&privb, "k"), &w);
        denied(put(u, &privb, "k", b"overwritten"), &w);
        denied(put(u, &privb, "new", b"x"), &w);
        denied(u.delete_object(&privb, "k"), &w);
        denied(u.get_object_tagging(&privb, "k"), &w);
        denied(
            u.create_multipart_upload(&privb, "m", &PutOptions::default()),
            &w,
        );
        denied(u.list_multipart_uploads(&privb, ""), &w);
        denied(u.delete_bucket(&privb), &w);
    }
    assert_eq!(get(a.as_ref(), &privb, "k").unwrap(), b"of a");

    // The group's bucket: b reads, c does not; neither writes.
    assert_eq!(get(b.as_ref(), &grp, "k").unwrap(), b"of a", "{label}");
    assert_eq!(list(b.as_ref(), &grp).unwrap(), ["k"], "{label}");
    b.head_object(&grp, "k").unwrap();
    denied(put(b.as_ref(), &grp, "k", b"b was here"), label);
    denied(b.delete_object(&grp, "k"), label);
    denied(get(c.as_ref(), &grp, "k"), label);
    denied(list(c.as_ref(), &grp), label);

    // The world-readable bucket: everyone reads k, no one else writes,
    // and a's 0600 object in it stays a's.
    for u in [&b, &c] {
        let u = u.as_ref();
        assert_eq!(get(u, &publ, "k").unwrap(), b"of a", "{label}");
        assert_eq!(list(u, &publ).unwrap(), ["k", "mine"], "{label}");
        denied(get(u, &publ, "mine"), label);
        denied(u.head_object(&publ, "mine"), label);
        denied(put(u, &publ, "k", b"x"), label);
        denied(u.delete_object(&publ, "mine"), label);
        // Copies read the source as the user.
        denied(u.copy_object(&publ, "mine", &publ, "stolen", None), label);
        denied(u.copy_object(&privb, "k", &publ, "stolen", None), label);
        // a's upload is a's alone.
        denied(u.list_parts(&publ, "big", &upload), label);
        denied(
            u.upload_part(&publ, "big", &upload, 2, PutBody::Bytes(b"b")),
            label,
        );
        denied(
            u.complete_multipart_upload(&publ, "big", &upload, &[(1, part.clone())]),
            label,
        );
        denied(u.abort_multipart_upload(&publ, "big", &upload), label);
        let seen = u.list_multipart_uploads(&publ, "").unwrap();
        assert!(seen.is_empty(), "{label}: {seen:?}");
        denied(u.delete_bucket(&empty), label);
    }
    a.complete_multipart_upload(&publ, "big", &upload, &[(1, part)])
        .unwrap();
    assert_eq!(get(b.as_ref(), &publ, "big").unwrap(), b"part", "{label}");

    // The refusal names the user.
    let e = get(c.as_ref(), &privb, "k").unwrap_err();
    assert!(e.message.contains(&users.names[2]), "{label}: {e}");

    // Buckets: c makes its own in the sticky root; ListBuckets shows
    // what each may enter, the administrator everything.
    let cb = format!("{p}-c");
    c.create_bucket(&cb).unwrap();
    let m = std::fs::metadata(root.join(&cb)).unwrap();
    assert_eq!(m.uid(), users.uid(2), "{label}");
    let names = |u: &dyn S3Client| -> Vec<String> {
        let all = u.list_buckets().unwrap().into_iter().map(|b| b.name);
        all.filter(|n| n.starts_with(p)).collect()
    };
    assert_eq!(names(admin.as_ref()).len(), 5, "{label}");
    assert!(!names(b.as_ref()).contains(&privb), "{label}");
    assert!(names(b.as_ref()).contains(&grp), "{label}");
    let seen_by_c = names(c.as_ref());
    assert!(!seen_by_c.contains(&privb) && !seen_by_c.contains(&grp));
    assert!(seen_by_c.contains(&cb) && seen_by_c.contains(&publ));

    // A symlink c plants in its own bucket reaches nothing: not a's
    // private object, not even a's world-readable one.
    let link = root.join(&cb).join("link");
    std::os::unix::fs::symlink(root.join(&privb).join("k"), &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(users.uid(2)), Some(users.gid(2))).unwrap();
    let dlink = root.join(&cb).join("dir");
    std::os::unix::fs::symlink(root.join(&publ), &dlink).unwrap();
    assert!(get(c.as_ref(), &cb, "link").is_err(), "{label}");
    assert!(get(c.as_ref(), &cb, "dir/k").is_err(), "{label}");
    assert!(get(c.as_ref(), &cb, "dir/mine").is_err(), "{label}");
    assert!(
        put(c.as_ref(), &cb, "dir/planted", b"x").is_err(),
        "{label}"
    );
    assert!(!root.join(&publ).join("planted").exists(), "{label}");
    c.delete_bucket(&cb).unwrap_err(); // the symlinks stay; c removes them
    std::fs::remove_file(&link).unwrap();
    std::fs::remove_file(&dlink).unwrap();
    c.delete_bucket(&cb).unwrap();

    // Three users writing at once, into a shared sticky bucket: every
    // object and directory is its writer's.
    let shared = format!("{p}-shared");
    admin.create_bucket(&shared).unwrap();
    chmod(&root.join(&shared), 0o1777);
    std::thread::scope(|s| {
        for (i, u) in [&a, &b, &c].into_iter().enumerate() {
            let name = &users.names[i];
            let shared = &shared;
            s.spawn(move || {
                for n in 0..20 {
                    put(u.as_ref(), shared, &format!("{name}/{n}"), b"x").unwrap();
                    put(u.as_ref(), shared, &format!("{name}-{n}"), b"x").unwrap();
                }
            });
        }
    });
    for (i, name) in users.names.iter().enumerate() {
        let owner = (users.uid(i), users.gid(i));
        let dir = root.join(&shared).join(name);
        let m = std::fs::metadata(&dir).unwrap();
        assert_eq!((m.uid(), m.gid()), owner, "{label}: {name}/");
        for n in 0..20 {
            for f in [
                dir.join(n.to_string()),
                root.join(&shared).join(format!("{name}-{n}")),
            ] {
                let m = std::fs::metadata(&f).unwrap();
                assert_eq!((m.uid(), m.gid()), owner, "{label}: {}", f.display());
                assert_eq!(
                    m.mode() & 0o7777 & !0o1000,
                    0o666 & !umask(),
                    "{}",
                    f.display()
                );
            }
        }
    }
    // The sticky bucket keeps b from removing c's objects.
    denied(
        b.delete_object(&shared, &format!("{}-0", users.names[2])),
        label,
    );

    // An ACL given with the write: read for b alone, set by a's own call
    // on the temporary before it is published.
    let grant = PutOptions {
        access: Some(PermissionChange {
            named: vec![AclEntry {
                tag: AclTag::User,
                id: users.uid(1),
                perm: 4,
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    a.put_object(&publ, "granted", PutBody::Bytes(b"for b"), &grant)
        .unwrap();
    let m = std::fs::metadata(root.join(&publ).join("granted")).unwrap();
    assert_eq!(m.mode() & 0o007, 0, "{label}: others lost their read");
    assert_eq!(get(b.as_ref(), &publ, "granted").unwrap(), b"for b");
    denied(get(c.as_ref(), &publ, "granted"), label);
}

fn umask() -> u32 {
    // SAFETY: umask is always valid to call; set back at once.
    unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m
    }
}

fn store(root: &Path) -> Arc<Store> {
    Arc::new(Store::open(root, StoreConfig::default()).unwrap())
}

#[test]
fn users_over_http() {
    let Some(users) = Users::make("h") else {
        return;
    };
    let (_dir, root) = data_root();
    let mut keys = std::collections::HashMap::new();
    keys.insert("admin".into(), ("admin-secret".into(), Identity::server()));
    for (i, id) in users.ids.iter().enumerate() {
        keys.insert(format!("key{i}"), (format!("secret{i}"), id.clone()));
    }
    let auth = AuthConfig::Mapped(MappedUsers {
        keys,
        anonymous: Some(users.ids[2].clone()),
        ..Default::default()
    });
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), store(&root), auth, &[])
        .unwrap()
        .spawn()
        .unwrap();
    let endpoint = server.endpoint();
    let http = |key: Option<(String, String)>| -> Box<dyn S3Client> {
        Box::new(
            HttpClient::new(HttpClientConfig {
                endpoint: endpoint.clone(),
                credentials: key,
                ..Default::default()
            })
            .unwrap(),
        )
    };
    let client = |u: Option<usize>| match u {
        Some(i) => http(Some((format!("key{i}"), format!("secret{i}")))),
        None => http(Some(("admin".into(), "admin-secret".into()))),
    };
    scenario("http", &users, &root, &client);
    // Unsigned requests act as the anonymous user (c here): the public
    // bucket's object, nothing private.
    let anonymous = http(None);
    assert_eq!(get(anonymous.as_ref(), "http-pub", "k").unwrap(), b"of a");
    denied(get(anonymous.as_ref(), "http-priv", "k"), "anonymous");
    denied(
        put(anonymous.as_ref(), "http-pub", "anon", b"x"),
        "anonymous",
    );
    server.shutdown().unwrap();
}

#[test]
fn users_over_rpc_unix_socket() {
    let Some(users) = Users::make("r") else {
        return;
    };
    let (dir, root) = data_root();
    let store = store(&root);
    let sock = dir.path().join("gw.sock");
    let s = store.clone();
    let client_for: ClientFor = Arc::new(move |peer| {
        let who = match peer {
            Peer::Unix { uid, gid, .. } => Identity::of_peer(uid, gid),
            Peer::Tcp => panic!("no TCP here"),
        };
        Arc::new(EmbeddedClient::held_as(s.clone(), who))
    });
    let addr = format!("unix:{}", sock.display());
    let gw = Gateway::start_per_peer(
        client_for,
        &[addr.parse().unwrap()],
        GatewayOptions::default(),
    )
    .unwrap();
    chmod(&sock, 0o777);
    // Each user's client connects as that user (the socket's peer
    // credentials are the connecting thread's); the test thread then acts
    // as root again, and the connection stays the user's.
    let client = |u: Option<usize>| -> Box<dyn S3Client> {
        let connect = || RemoteClient::connect(&addr).unwrap();
        Box::new(match u {
            Some(i) => users.ids[i].act(connect).unwrap(),
            None => connect(),
        })
    };
    scenario("rpc", &users, &root, &client);
    gw.stop();
}

/// The embedded transport (and libs3 over `file://`, which is it) acts as
/// the calling process: a thread running as c can do what c can, no more.
#[test]
fn embedded_acts_as_the_calling_process() {
    let Some(users) = Users::make("e") else {
        return;
    };
    let (_dir, root) = data_root();
    let store = store(&root);
    let admin = EmbeddedClient::new(store.clone());
    admin.create_bucket("priv").unwrap();
    put(&admin, "priv", "k", b"root's").unwrap();
    chmod(&root.join("priv"), 0o700);
    let c = &users.ids[2];
    c.act(|| {
        denied(get(&admin, "priv", "k"), "embedded as c");
        admin.create_bucket("mine").unwrap();
        put(&admin, "mine", "d/k", b"c's").unwrap();
    })
    .unwrap();
    for rel in ["mine", "mine/d", "mine/d/k"] {
        let m = std::fs::metadata(root.join(rel)).unwrap();
        assert_eq!((m.uid(), m.gid()), (users.uid(2), users.gid(2)), "{rel}");
    }
}

/// What one user's call opened or read on a thread never serves another's
/// on that thread: the directory handle (an `O_PATH` handle passes the
/// checks of the directories above it) and the listing cache.
#[test]
fn caches_are_per_user() {
    let Some(users) = Users::make("k") else {
        return;
    };
    let (_dir, root) = data_root();
    let store = store(&root);
    let a = EmbeddedClient::acting_as(store.clone(), users.ids[0].clone());
    let b = EmbeddedClient::acting_as(store.clone(), users.ids[1].clone());
    a.create_bucket("pub").unwrap();
    put(&a, "pub", "x/k", b"a's").unwrap();
    put(&a, "pub", "closed/d/k", b"a's").unwrap();
    // b may pass x (search) but not read it; nobody but a passes closed.
    chmod(&root.join("pub/x"), 0o711);
    chmod(&root.join("pub/closed"), 0o700);
    std::thread::sleep(std::time::Duration::from_millis(60));
    let in_x = ListRequest {
        prefix: "x/".into(),
        ..Default::default()
    };
    for _ in 0..2 {
        assert_eq!(get(&a, "pub", "closed/d/k").unwrap(), b"a's");
        let page = a.list_objects("pub", &in_x).unwrap();
        assert_eq!(page.objects.len(), 1);
        denied(get(&b, "pub", "closed/d/k"), "b through a's handle");
        let page = b.list_objects("pub", &in_x).unwrap();
        assert!(page.objects.is_empty(), "b saw a's listing: {page:?}");
        // b reads x/k by name (it may: x is 0711, k 0644).
        assert_eq!(get(&b, "pub", "x/k").unwrap(), b"a's");
    }
}

/// In a bucket its group may write, both members start uploads (the
/// uploads directory the first made takes the bucket's mode, sticky), and
/// neither touches the other's.
#[test]
fn uploads_in_a_group_writable_bucket() {
    let Some(users) = Users::make("u") else {
        return;
    };
    let (_dir, root) = data_root();
    let store = store(&root);
    let a = EmbeddedClient::acting_as(store.clone(), users.ids[0].clone());
    let b = EmbeddedClient::acting_as(store.clone(), users.ids[1].clone());
    a.create_bucket("team").unwrap();
    std::os::unix::fs::chown(root.join("team"), None, Some(users.shared_gid())).unwrap();
    chmod(&root.join("team"), 0o2770);
    let opts = PutOptions::default();
    let ua = a.create_multipart_upload("team", "x", &opts).unwrap();
    let ub = b.create_multipart_upload("team", "y", &opts).unwrap();
    let mode = std::fs::metadata(root.join("team/.s3hpc-uploads"))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o7777, 0o1770, "{mode:o}");
    denied(b.abort_multipart_upload("team", "x", &ua), "b aborts a's");
    denied(a.list_parts("team", "y", &ub), "a lists b's");
    let pa = a
        .upload_part("team", "x", &ua, 1, PutBody::Bytes(b"a"))
        .unwrap();
    let pb = b
        .upload_part("team", "y", &ub, 1, PutBody::Bytes(b"b"))
        .unwrap();
    a.complete_multipart_upload("team", "x", &ua, &[(1, pa)])
        .unwrap();
    b.complete_multipart_upload("team", "y", &ub, &[(1, pb)])
        .unwrap();
    let m = std::fs::metadata(root.join("team/y")).unwrap();
    assert_eq!(m.uid(), users.uid(1));
    assert_eq!(get(&a, "team", "y").unwrap(), b"b");
}
