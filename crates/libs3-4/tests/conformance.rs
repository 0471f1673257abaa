//! The shared S3 conformance suite through the libs3 4.x ABI: the bench's
//! `libs3` client loads this crate's `libs3_4.so` by dlopen and calls its C
//! functions, which serve them on each transport. Every check passes
//! C strings, handlers and callbacks both ways, as a C program would.

use s3hpc_bench::libs3::{Libs3Client, Libs3Target};
use s3hpc_conformance::{run_all_except, Fixture};
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_rpc::{Address, Gateway, GatewayOptions};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const ACCESS: &str = "conformance4-user";
const SECRET: &str = "conformance4-secret";

/// target/<profile>/deps/<this test> → target/<profile>/libs3_4.so
fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().parent().unwrap().join("libs3_4.so");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

fn client(host: String) -> Libs3Client {
    client_of(&library(), host)
}

fn client_of(library: &Path, host: String) -> Libs3Client {
    let target = Libs3Target {
        host,
        access_key: ACCESS.into(),
        secret_key: SECRET.into(),
        region: "us-east-1".into(),
    };
    Libs3Client::open(library, &target).unwrap()
}

/// What the libs3 API cannot say, whatever the library behind it.
const LIBS3_LIMITS: &[(&str, &str)] = &[
    (
        "acl_refused_changes_nothing",
        "libs3's put properties carry canned ACLs only, and the file system takes every one",
    ),
    (
        "put_checksum_verified",
        "libs3's put properties carry no S3 checksum (and the bench's libs3 client no MD5)",
    ),
    (
        "ranged_get",
        "a ranged GET's properties give the response's length, not the object's size",
    ),
    (
        "standard_headers",
        "libs3's response properties carry no Cache-Control, Content-Disposition, \
         Content-Encoding, Content-Language or Expires (its put properties no Content-Language)",
    ),
    (
        "invalid_range",
        "a range from byte 0 to the end is libs3's 'whole object' (0, 0), which an empty object satisfies",
    ),
];

/// What libs3 4.1 itself does differently (measured against s3hpc's
/// server; each is the library's behaviour, not the server's).
const REAL_LIBS3_LIMITS: &[(&str, &str)] = &[
    (
        "missing_bucket",
        "a HEAD has no body, so libs3 reports any 404 as HttpErrorNotFound",
    ),
    (
        "max_length_key",
        "libs3 4.1 cuts 1024-byte keys in listings to 1023 (its buffer counts the NUL)",
    ),
    (
        "put_stream_short_is_incomplete",
        "libs3 sends the short body as it is; the server waits for the rest, then answers RequestTimeout",
    ),
    (
        "hostile_keys",
        "curl removes the '..' of \"../x\" from the URL, so the request names another bucket (refused, but not as InvalidKey)",
    ),
    (
        "multipart_abort",
        "libs3 4.1 prints an abort's status instead of passing it to the caller",
    ),
    (
        "multipart_invalid_part_order",
        "with no parts, libs3 4.1 sends no body, which the server calls MalformedXML",
    ),
];

fn store(dir: &tempfile::TempDir) -> Arc<Store> {
    let config = StoreConfig {
        etag: EtagPolicy::Md5,
        durability: Durability::None,
    };
    Arc::new(Store::open(dir.path().join("root"), config).unwrap())
}

#[test]
fn libs3_on_file() {
    run_all_except(
        "file",
        &|| {
            let dir = tempfile::tempdir().unwrap();
            let host = format!("file://{}?etag=md5", dir.path().join("root").display());
            Fixture::new(client(host), dir)
        },
        LIBS3_LIMITS,
    );
}

#[test]
fn libs3_on_file_packed() {
    run_all_except(
        "file, packed",
        &|| {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("root");
            let host = format!("file://{}?etag=md5&layout=packed", root.display());
            Fixture::new(client(host), dir)
        },
        LIBS3_LIMITS,
    );
}

#[test]
fn libs3_on_unix_gateway() {
    run_all_except(
        "unix",
        &|| {
            let dir = tempfile::tempdir().unwrap();
            let embedded = Arc::new(s3hpc_client::EmbeddedClient::new(store(&dir)));
            let sock = Address::Unix(dir.path().join("gw.sock"));
            let gw = Gateway::start(embedded, &[sock], GatewayOptions::default()).unwrap();
            let host = format!("unix://{}", dir.path().join("gw.sock").display());
            // The gateway stops when the fixture (and its guard) goes.
            Fixture::new(client(host), (gw, dir))
        },
        LIBS3_LIMITS,
    );
}

#[test]
fn libs3_on_http() {
    http_suite("http", &library(), LIBS3_LIMITS);
}

/// The real libs3 4.x (built beside the project: it is not part of it)
/// against s3hpc's HTTP server, through the same client:
/// `S3HPC_REAL_LIBS3=/path/to/libs3.so.4 cargo test --release -p
/// s3hpc-libs3-4 --test conformance -- --ignored`.
#[test]
#[ignore = "needs a libs3 4.x build named by S3HPC_REAL_LIBS3"]
fn real_libs3_on_http() {
    let lib = std::env::var_os("S3HPC_REAL_LIBS3").expect("S3HPC_REAL_LIBS3=/path/to/libs3.so.4");
    let limits = [LIBS3_LIMITS, REAL_LIBS3_LIMITS].concat();
    http_suite("real libs3, http", Path::new(&lib), &limits);
}

fn http_suite(label: &str, library: &Path, limits: &[(&str, &str)]) {
    let make = || {
        let dir = tempfile::tempdir().unwrap();
        let server = HttpServer::bind(
            "127.0.0.1:0".parse().unwrap(),
            store(&dir),
            AuthConfig::single(ACCESS, SECRET),
            &[],
        )
        .and_then(HttpServer::spawn)
        .unwrap();
        let host = server.endpoint();
        Fixture::new(client_of(library, host), (server, dir))
    };
    run_all_except(label, &make, limits);
}

/// libs3's `cannedAcl` reaches the engine on every libs3 transport and is
/// the object's from its first moment: bucket-owner-full-control by the
/// bucket's owner is `go-rwx` (the owner's entry is the owner's bits),
/// where a new file gets 0644 under umask 022. PUT, copy and multipart.
#[test]
fn libs3_carries_canned_acls() {
    use s3hpc_client::{PermissionChange, PutBody, PutOptions, S3Client};
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: umask is always valid; 022 is what the expected modes assume.
    unsafe { libc::umask(0o022) };
    let canned = PutOptions {
        access: PermissionChange::canned("bucket-owner-full-control", false),
        ..Default::default()
    };
    for transport in ["file", "unix"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let (host, _gw) = match transport {
            "file" => (format!("file://{}", root.display()), None),
            _ => {
                let embedded = Arc::new(s3hpc_client::EmbeddedClient::new(store(&dir)));
                let sock = Address::Unix(dir.path().join("gw.sock"));
                let gw = Gateway::start(embedded, &[sock], GatewayOptions::default()).unwrap();
                (
                    format!("unix://{}", dir.path().join("gw.sock").display()),
                    Some(gw),
                )
            }
        };
        let c = client(host);
        c.create_bucket("acl").unwrap();
        let mode = |k: &str| {
            std::fs::metadata(root.join("acl").join(k))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        c.put_object("acl", "plain", PutBody::Bytes(b"x"), &PutOptions::default())
            .unwrap();
        assert_eq!(mode("plain"), 0o644, "{transport}: a new file's mode");
        c.put_object("acl", "k", PutBody::Bytes(b"x"), &canned)
            .unwrap();
        assert_eq!(mode("k"), 0o600, "{transport}: PUT");
        c.copy_object("acl", "plain", "acl", "c", Some(&canned))
            .unwrap();
        assert_eq!(mode("c"), 0o600, "{transport}: copy");
        let id = c.create_multipart_upload("acl", "m", &canned).unwrap();
        let etag = c
            .upload_part("acl", "m", &id, 1, PutBody::Bytes(b"p"))
            .unwrap();
        c.complete_multipart_upload("acl", "m", &id, &[(1, etag)])
            .unwrap();
        assert_eq!(mode("m"), 0o600, "{transport}: multipart");
    }
}
