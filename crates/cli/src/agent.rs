//! `s3hpc agent` (hidden): one S3 client, driven line by line on stdin, for
//! the cross-node tests (`scripts/cluster test`). A test driver starts one
//! agent per node and transport and sends it requests; each answers one line:
//! `ok ...` or `err CODE message`.
//!
//! Bodies are made from a tag: `TAG|TAG|TAG|...` cut to the size, so a GET
//! can tell which PUT it sees, whether the body is whole (one tag from end
//! to end, not two PUTs mixed), and whether its ETag is the body's MD5.
//!
//! Commands (words separated by spaces):
//! - `mkb B`, `del B K`, `head B K` → `ok SIZE ETAG`
//! - `put B K SIZE TAG` → `ok ETAG`
//! - `slowput B K SIZE TAG MS` → like put, streamed in 64 KiB chunks with
//!   MS milliseconds between them (a writer that stays mid-upload)
//! - `get B K` → `ok TAG SIZE ETAG MD5MATCH(0|1) INTACT(0|1) MD5` (MD5: the
//!   body's, in hex, for bodies of several tags such as multipart objects)
//! - `list B PREFIX` (PREFIX `-` for none) → `ok N KEY...`
//! - `mpc B K` → `ok ID`; `mpp B K ID N SIZE TAG` → `ok ETAG`;
//!   `mpd B K ID N:ETAG,...` → `ok ETAG`
//! - `sweep AGE_SECS` (embedded only) → `ok REMOVED`
//! - `versioning B enabled|suspended` → `ok`; `versions B K` → `ok N
//!   ID[*][!]...` (the latest first, `*` the latest, `!` a delete marker);
//!   `getv B K ID` → `ok TAG SIZE INTACT(0|1)`

use anyhow::Context;
use clap::Args;
use md5::{Digest, Md5};
use s3hpc_client::{EmbeddedClient, HttpClient, S3Client};
use s3hpc_store::{
    ListRequest, PutBody, PutOptions, S3Error, Store, StoreConfig, Versioning, VersionsRequest,
};
use std::io::{BufRead, Read, Write};
use std::sync::Arc;
use std::time::Duration;

#[derive(Args)]
pub struct AgentArgs {
    /// embedded:DATA_DIR, unix:///SOCKET or s3hpc://HOST:PORT (a gateway),
    /// or http://HOST:PORT (an S3 server; requests signed with
    /// S3HPC_ACCESS_KEY and S3HPC_SECRET_KEY when both are set, else
    /// unsigned).
    #[arg(long)]
    target: String,
}

/// The body of a PUT tagged `tag`.
pub fn body(tag: &str, size: usize) -> Vec<u8> {
    let unit = format!("{tag}|");
    unit.bytes().cycle().take(size).collect()
}

/// `(tag, intact)` of a body made by [`body`].
fn check(data: &[u8]) -> (String, bool) {
    let Some(end) = data.iter().position(|&b| b == b'|') else {
        return (String::from_utf8_lossy(data).into_owned(), false);
    };
    let tag = String::from_utf8_lossy(&data[..end]).into_owned();
    let unit = &data[..=end];
    let intact = data.chunks(unit.len()).all(|c| c == &unit[..c.len()]);
    (tag, intact)
}

fn md5_hex(data: &[u8]) -> String {
    Md5::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A reader of `body` in 64 KiB chunks with a pause before each.
struct Slow {
    data: Vec<u8>,
    pos: usize,
    pause: Duration,
}

impl Read for Slow {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.data.len() {
            return Ok(0);
        }
        std::thread::sleep(self.pause);
        let n = buf.len().min(64 << 10).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The client, and the store when it is embedded (for `sweep`).
type Connected = (Box<dyn S3Client>, Option<Arc<Store>>);

fn connect(target: &str) -> anyhow::Result<Connected> {
    if let Some(dir) = target.strip_prefix("embedded:") {
        let store =
            Arc::new(Store::open(dir, StoreConfig::default()).map_err(|e| anyhow::anyhow!("{e}"))?);
        return Ok((Box::new(EmbeddedClient::new(store.clone())), Some(store)));
    }
    if target.starts_with("http://") {
        let c = HttpClient::new(s3hpc_client::HttpClientConfig {
            endpoint: target.to_string(),
            max_connections: 4,
            credentials: std::env::var("S3HPC_ACCESS_KEY")
                .ok()
                .zip(std::env::var("S3HPC_SECRET_KEY").ok()),
            ..Default::default()
        })
        .map_err(anyhow::Error::msg)?;
        return Ok((Box::new(c), None));
    }
    let c = s3hpc_rpc::RemoteClient::connect(target)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("connecting to {target}"))?;
    Ok((Box::new(c), None))
}

fn err(e: S3Error) -> String {
    format!("err {} {}", e.code.as_str(), e.message.replace('\n', " "))
}

fn num<T: std::str::FromStr>(w: Option<&&str>) -> Result<T, String> {
    w.and_then(|s| s.parse().ok())
        .ok_or_else(|| "err BadCommand number expected".to_string())
}

fn run_one(c: &dyn S3Client, store: Option<&Store>, line: &str) -> Result<String, String> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let arg = |i: usize| {
        w.get(i)
            .copied()
            .ok_or_else(|| "err BadCommand missing argument".to_string())
    };
    let opts = PutOptions::default();
    Ok(match arg(0)? {
        "mkb" => c.create_bucket(arg(1)?).map(|_| "ok".into()).map_err(err)?,
        "del" => c
            .delete_object(arg(1)?, arg(2)?)
            .map(|_| "ok".into())
            .map_err(err)?,
        "head" => {
            let i = c.head_object(arg(1)?, arg(2)?).map_err(err)?;
            format!("ok {} {}", i.size, i.etag)
        }
        "put" => {
            let data = body(arg(4)?, num(w.get(3))?);
            let etag = c
                .put_object(arg(1)?, arg(2)?, PutBody::Bytes(&data), &opts)
                .map_err(err)?;
            format!("ok {etag}")
        }
        "slowput" => {
            let data = body(arg(4)?, num(w.get(3))?);
            let len = data.len() as u64;
            let mut r = Slow {
                data,
                pos: 0,
                pause: Duration::from_millis(num(w.get(5))?),
            };
            let etag = c
                .put_object(
                    arg(1)?,
                    arg(2)?,
                    PutBody::Stream {
                        reader: &mut r,
                        len: Some(len),
                    },
                    &opts,
                )
                .map_err(err)?;
            format!("ok {etag}")
        }
        "get" => {
            let mut g = c.get_object(arg(1)?, arg(2)?, None).map_err(err)?;
            let mut data = Vec::with_capacity(g.length as usize);
            g.body
                .read_to_end(&mut data)
                .map_err(|e| format!("err ReadFailed {e}"))?;
            let (tag, intact) = check(&data);
            let md5 = md5_hex(&data);
            let md5_match = g.info.etag.trim_matches('"') == md5;
            format!(
                "ok {tag} {} {} {} {} {md5}",
                data.len(),
                g.info.etag,
                md5_match as u8,
                intact as u8
            )
        }
        "versioning" => {
            let state = match arg(2)? {
                "enabled" => Versioning::Enabled,
                "suspended" => Versioning::Suspended,
                _ => return Err("err BadCommand enabled or suspended".into()),
            };
            c.put_bucket_versioning(arg(1)?, state).map_err(err)?;
            "ok".into()
        }
        "versions" => {
            let mut req = VersionsRequest {
                prefix: arg(2)?.to_string(),
                ..Default::default()
            };
            let mut ids = Vec::new();
            loop {
                let page = c.list_object_versions(arg(1)?, &req).map_err(err)?;
                for (key, v) in page.versions {
                    if key == arg(2)? {
                        let latest = if v.is_latest { "*" } else { "" };
                        let marker = if v.delete_marker { "!" } else { "" };
                        ids.push(format!("{}{latest}{marker}", v.version_id));
                    }
                }
                if !page.is_truncated {
                    break;
                }
                req.key_marker = page.next_key_marker;
                req.version_id_marker = page.next_version_id_marker;
            }
            format!("ok {} {}", ids.len(), ids.join(" "))
        }
        "getv" => {
            let mut g = c
                .get_object_version(arg(1)?, arg(2)?, arg(3)?, None)
                .map_err(err)?;
            let mut data = Vec::with_capacity(g.length as usize);
            g.body
                .read_to_end(&mut data)
                .map_err(|e| format!("err ReadFailed {e}"))?;
            let (tag, intact) = check(&data);
            format!("ok {tag} {} {}", data.len(), intact as u8)
        }
        "list" => {
            let prefix = match arg(2)? {
                "-" => String::new(),
                p => p.to_string(),
            };
            let mut keys = Vec::new();
            let mut token = None;
            loop {
                let page = c
                    .list_objects(
                        arg(1)?,
                        &ListRequest {
                            prefix: prefix.clone(),
                            continuation_token: token.take(),
                            ..Default::default()
                        },
                    )
                    .map_err(err)?;
                keys.extend(page.objects.into_iter().map(|o| o.key));
                match page.next_token {
                    Some(t) if page.is_truncated => token = Some(t),
                    _ => break,
                }
            }
            format!("ok {} {}", keys.len(), keys.join(" "))
        }
        "mpc" => {
            let id = c
                .create_multipart_upload(arg(1)?, arg(2)?, &opts)
                .map_err(err)?;
            format!("ok {id}")
        }
        "mpp" => {
            let data = body(arg(6)?, num(w.get(5))?);
            let etag = c
                .upload_part(
                    arg(1)?,
                    arg(2)?,
                    arg(3)?,
                    num(w.get(4))?,
                    PutBody::Bytes(&data),
                )
                .map_err(err)?;
            format!("ok {etag}")
        }
        "mpd" => {
            let mut parts = Vec::new();
            for p in arg(4)?.split(',') {
                let (n, e) = p
                    .split_once(':')
                    .ok_or_else(|| "err BadCommand N:ETAG expected".to_string())?;
                parts.push((n.parse().map_err(|_| "err BadCommand part")?, e.to_string()));
            }
            let i = c
                .complete_multipart_upload(arg(1)?, arg(2)?, arg(3)?, &parts)
                .map_err(err)?;
            format!("ok {}", i.etag)
        }
        "sweep" => {
            let store = store.ok_or_else(|| "err BadCommand sweep is embedded only".to_string())?;
            let n = store
                .sweep_temporaries(Duration::from_secs(num(w.get(1))?))
                .map_err(err)?;
            format!("ok {n}")
        }
        other => format!("err BadCommand unknown command {other}"),
    })
}

pub fn run(a: AgentArgs) -> anyhow::Result<()> {
    let (client, store) = connect(&a.target)?;
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready {}", client.transport())?;
    out.flush()?;
    for line in stdin.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = run_one(client.as_ref(), store.as_deref(), &line).unwrap_or_else(|e| e);
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    Ok(())
}
