//! ceph-fuse's own settings and counters, asked on its admin socket. The
//! size of its inode cache (`client_cache_size`) decides what a stat in key
//! order costs in a directory larger than it (see
//! `super::client_inode_cache`); its count of metadata requests tells what
//! each S3 call cost the MDS (`super::MdsRequestCounter`).

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `client_cache_size` of the ceph-fuse daemon `pid`, asked on its admin
/// socket. None where it has none this process may reach (another user's
/// daemon: its /proc entries and socket are closed to us), or no answer
/// within a second.
pub(super) fn client_cache_size(pid: u32) -> Option<u64> {
    let sock = admin_socket(pid)?;
    let answer = ask(
        &sock,
        r#"{"prefix":"config get","var":"client_cache_size"}"#,
    )?;
    config_value(&answer, "client_cache_size")
}

/// The requests ceph-fuse `pid` has sent its metadata servers, and their
/// summed latency in seconds (`perf dump client reply`: one sample per
/// reply). None where its admin socket cannot be reached.
pub(super) fn mds_replies(sock: &Path) -> Option<(u64, f64)> {
    let answer = ask(
        sock,
        r#"{"prefix":"perf dump","logger":"client","counter":"reply"}"#,
    )?;
    let count = number_after(&answer, "avgcount")?;
    let sum = number_after(&answer, "sum")?;
    Some((count as u64, sum))
}

/// The number after `"key":` in a JSON answer.
fn number_after(answer: &str, key: &str) -> Option<f64> {
    let rest = &answer[answer.find(&format!("\"{key}\""))? + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The admin socket of process `pid`: the one of its sockets bound to a
/// path ending in `.asok` (Ceph's default `$run_dir/$cluster-$name.asok`,
/// and any `admin socket` setting that keeps the suffix). The path is the
/// daemon's; the caller made sure it shares this process's mount namespace.
pub(super) fn admin_socket(pid: u32) -> Option<PathBuf> {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let inodes: HashSet<String> = std::fs::read_dir(proc.join("fd"))
        .ok()?
        .flatten()
        .filter_map(|e| {
            let link = std::fs::read_link(e.path()).ok()?;
            let ino = link.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?;
            Some(ino.to_owned())
        })
        .collect();
    let table = std::fs::read_to_string(proc.join("net/unix")).ok()?;
    table.lines().skip(1).find_map(|line| {
        // Num RefCount Protocol Flags Type St Inode Path
        let f: Vec<&str> = line.split_whitespace().collect();
        let (ino, path) = (f.get(6)?, f.get(7)?);
        (path.ends_with(".asok") && inodes.contains(*ino)).then(|| PathBuf::from(path))
    })
}

/// One command on a Ceph admin socket: the command and a NUL out; back a
/// big-endian u32 length and that many bytes.
fn ask(sock: &Path, command: &str) -> Option<String> {
    let mut s = UnixStream::connect(sock).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    s.set_write_timeout(Some(Duration::from_secs(1))).ok()?;
    s.write_all(command.as_bytes()).ok()?;
    s.write_all(b"\0").ok()?;
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let len = u32::from_be_bytes(len) as usize;
    if len > 1 << 16 {
        return None;
    }
    let mut body = vec![0; len];
    s.read_exact(&mut body).ok()?;
    String::from_utf8(body).ok()
}

/// The number of `"var": "N"` in a `config get` answer, which is that one
/// pair in braces (so no JSON parser is pulled in for it).
fn config_value(answer: &str, var: &str) -> Option<u64> {
    let rest = &answer[answer.find(&format!("\"{var}\""))? + var.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let digits = rest.strip_prefix('"').unwrap_or(rest);
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_config_get_answer() {
        // As ceph-fuse 16.2 answered here.
        let answer = "{\n    \"client_cache_size\": \"1100000\"\n}\n";
        assert_eq!(config_value(answer, "client_cache_size"), Some(1_100_000));
        assert_eq!(
            config_value("{\"client_cache_size\": 16384}", "client_cache_size"),
            Some(16384)
        );
        assert_eq!(
            config_value("{\"error\": \"x\"}", "client_cache_size"),
            None
        );
        assert_eq!(
            config_value("{\"client_cache_size\": \"\"}", "client_cache_size"),
            None
        );
    }

    #[test]
    fn reads_the_client_reply_counter() {
        // As ceph-fuse 16.2 answered `perf dump client reply` here.
        let answer = "{\n    \"client\": {\n        \"reply\": {\n            \"avgcount\": 1727,\n            \"sum\": 4.943822944,\n            \"avgtime\": 0.002862665\n        }\n    }\n}\n";
        assert_eq!(number_after(answer, "avgcount"), Some(1727.0));
        assert_eq!(number_after(answer, "sum"), Some(4.943822944));
        assert_eq!(number_after("{\"error\": \"x\"}", "sum"), None);
    }

    #[test]
    fn a_ceph_admin_socket_answers_with_its_length_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("client.x.asok");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut b = [0u8; 1];
            while c.read_exact(&mut b).is_ok() && b[0] != 0 {
                got.push(b[0]);
            }
            let body = b"{\"client_cache_size\": \"16384\"}";
            c.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
            c.write_all(body).unwrap();
            String::from_utf8(got).unwrap()
        });
        let answer = ask(
            &path,
            r#"{"prefix":"config get","var":"client_cache_size"}"#,
        )
        .unwrap();
        assert_eq!(config_value(&answer, "client_cache_size"), Some(16384));
        assert!(server.join().unwrap().contains("config get"));
        // This process's own socket is found by its inode among its fds.
        let _keep = std::os::unix::net::UnixListener::bind(dir.path().join("own.asok")).unwrap();
        assert_eq!(
            admin_socket(std::process::id()),
            Some(dir.path().join("own.asok"))
        );
    }
}
