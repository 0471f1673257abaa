//! A server whose keys act as real Linux users (`s3hpc_test_users`, made
//! as root; the tests skip, saying so, otherwise) over a sticky data root,
//! and their SigV2-signed requests.

use super::request;
use s3hpc_http::{AuthConfig, HttpServer, MappedUsers, ServerHandle};
use s3hpc_store::{Identity, Store, StoreConfig};
use s3hpc_test_users::Users;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

/// The sub-resources SigV2 signs with the path.
const SUB_RESOURCES: [&str; 6] = ["acl", "uploads", "policy", "cors", "uploadId", "partNumber"];

/// A key's SigV2-signed requests (what s3s checks as any SigV2 client's).
pub struct Key<'a> {
    pub addr: SocketAddr,
    pub access: &'a str,
}

impl Key<'_> {
    /// `path` with its query; `amz`: `x-amz-*` headers (lower-case).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        amz: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, String) {
        let (status, _, body) = self.send_full(method, path, amz, body);
        (status, body)
    }

    /// As [`Key::send`], with the answer's header block.
    pub fn send_full(
        &self,
        method: &str,
        path: &str,
        amz: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, String, String) {
        let head = self.head(method, path, amz);
        let (status, headers, body) = request(self.addr, &head, body);
        (status, headers, String::from_utf8_lossy(&body).into_owned())
    }

    /// The first answer to a PUT of 3 bytes with `Expect: 100-continue`,
    /// before any of the body is sent: 100, or the refusal.
    pub fn put_expecting_continue(&self, path: &str) -> u16 {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let head = self.head("PUT", path, &[]);
        write!(
            s,
            "{head}Host: localhost\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
        )
        .unwrap();
        let mut first = [0u8; 12];
        s.read_exact(&mut first).unwrap();
        String::from_utf8_lossy(&first[9..12]).parse().unwrap()
    }

    /// A SigV2-signed request line and its headers.
    fn head(&self, method: &str, path: &str, amz: &[(&str, &str)]) -> String {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let mut amz = amz.to_vec();
        amz.sort();
        let amz_lines: String = amz.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
        // The canonical resource keeps only sub-resources (?acl, the
        // multipart ones), which the tests write sorted.
        let sub = |q: &str| {
            q.split('&')
                .all(|p| SUB_RESOURCES.contains(&p.split('=').next().unwrap_or("")))
        };
        let resource = match path.split_once('?') {
            Some((p, q)) if sub(q) => format!("{p}?{q}"),
            Some((p, _)) => p.to_string(),
            None => path.to_string(),
        };
        let to_sign = format!("{method}\n\n\n{date}\n{amz_lines}{resource}");
        let key = ring::hmac::Key::new(
            ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
            format!("{}-secret", self.access).as_bytes(),
        );
        use base64::Engine as _;
        let sig = base64::engine::general_purpose::STANDARD
            .encode(ring::hmac::sign(&key, to_sign.as_bytes()).as_ref());
        let extra: String = amz.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
        format!(
            "{method} {path} HTTP/1.1\r\nDate: {date}\r\nAuthorization: AWS {}:{sig}\r\n{extra}",
            self.access
        )
    }
}

/// Users a, b, c (keys ka, kb, kc) and a server acting as them over a
/// data root with mode 1777 (anyone makes buckets, each keeps its own).
pub struct World {
    // Dropped in this order: the server stops before its users go.
    pub server: ServerHandle,
    pub store: Arc<Store>,
    pub auth: AuthConfig,
    pub ids: Vec<Identity>,
    pub root: PathBuf,
    pub users: Users,
    _dir: tempfile::TempDir,
}

impl World {
    /// `tag`: as for [`Users::make`].
    pub fn make(tag: &str) -> Option<World> {
        let users = Users::make(tag)?;
        let (dir, root) = s3hpc_test_users::data_root();
        let ids = users.ids.clone();
        let keys: HashMap<String, (String, Identity)> = ["ka", "kb", "kc"]
            .iter()
            .zip(&ids)
            .map(|(k, id)| (k.to_string(), (format!("{k}-secret"), id.clone())))
            .collect();
        let auth = AuthConfig::Mapped(MappedUsers {
            keys,
            order: vec!["ka".into(), "kb".into(), "kc".into()],
            ..Default::default()
        });
        let store = Arc::new(Store::open(&root, StoreConfig::default()).unwrap());
        let server = HttpServer::bind(
            "127.0.0.1:0".parse().unwrap(),
            store.clone(),
            auth.clone(),
            &[],
        )
        .unwrap()
        .spawn()
        .unwrap();
        Some(World {
            users,
            ids,
            root,
            store,
            auth,
            server,
            _dir: dir,
        })
    }

    /// User `i`'s uid.
    pub fn uid(&self, i: usize) -> u32 {
        self.ids[i].user().unwrap().uid
    }

    /// The keys of a, b and c.
    pub fn keys(&self) -> [Key<'static>; 3] {
        let addr = self.server.addr();
        ["ka", "kb", "kc"].map(|access| Key { addr, access })
    }
}
