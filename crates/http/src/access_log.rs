//! The access log: one line per request, written in batches by a thread of
//! its own so that no tokio worker (or gateway thread) waits on the disk, and
//! reopened on demand (SIGHUP in `s3hpc serve`) so logrotate can move it.
//!
//! A line is fourteen fields separated by single spaces:
//!
//! ```text
//! TIME TRANSPORT CLIENT ACCESS_KEY UID OPERATION BUCKET KEY STATUS BYTES_IN BYTES_OUT MICROS REQUEST_ID KEY_KIND
//! ```
//!
//! KEY_KIND says where the access key came from: `file` (the credentials
//! file), `key` (a user's own, from the key store), `session` (`s3hpc
//! creds`), `oidc` (an OIDC login).
//!
//! `-` stands for a field that does not apply (an anonymous request's key,
//! a request without bucket). Every text field is percent-encoded outside
//! the printable ASCII range and for space and `%` (and a value that is
//! `-` itself is written `%2D`), so a hostile key cannot break a line or
//! forge one, and the original bytes can be recovered.

use percent_encoding::{AsciiSet, CONTROLS};
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

/// What a line says about one request.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    /// When the request arrived.
    pub time: SystemTime,
    /// `http`, `https` or `rpc`.
    pub transport: &'a str,
    /// The peer: `IP:PORT`, or what the RPC socket says of it.
    pub client: &'a str,
    /// The access key whose signature was verified; None: anonymous (or
    /// refused before its signature was checked).
    pub access_key: Option<&'a str>,
    /// The uid the request acted as, when it is known.
    pub uid: Option<u32>,
    /// The S3 operation (`PutObject`), `-` when it could not be told.
    pub operation: &'a str,
    pub bucket: Option<&'a str>,
    pub key: Option<&'a str>,
    /// The HTTP status answered (499: the client left before the answer).
    pub status: u16,
    /// Body bytes read from the client and sent to it.
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// From arrival to the last byte of the answer handed to the socket.
    pub micros: u64,
    pub request_id: Option<&'a str>,
    /// Where the access key came from (`file`, `key`, `session`, `oidc`).
    pub key_kind: Option<&'a str>,
}

/// Bytes written as `%XX` in a text field: controls, space, `%`, and
/// (by `percent-encoding`'s rule) everything outside ASCII.
const ESCAPED: &AsciiSet = &CONTROLS.add(b' ').add(b'%');

impl Record<'_> {
    /// The line, with its newline.
    pub fn line(&self) -> String {
        let mut s = String::with_capacity(160);
        let t = time::OffsetDateTime::from(self.time);
        let _ = write!(
            s,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second(),
            t.microsecond()
        );
        for field in [Some(self.transport), Some(self.client), self.access_key] {
            push_text(&mut s, field);
        }
        match self.uid {
            Some(uid) => {
                let _ = write!(s, " {uid}");
            }
            None => s.push_str(" -"),
        }
        for field in [Some(self.operation), self.bucket, self.key] {
            push_text(&mut s, field);
        }
        let _ = write!(
            s,
            " {} {} {} {}",
            self.status, self.bytes_in, self.bytes_out, self.micros
        );
        push_text(&mut s, self.request_id);
        push_text(&mut s, self.key_kind);
        s.push('\n');
        s
    }
}

fn push_text(s: &mut String, field: Option<&str>) {
    s.push(' ');
    match field {
        None => s.push('-'),
        Some("-") => s.push_str("%2D"),
        Some("") => s.push_str("\"\""),
        Some(v) => {
            let _ = write!(s, "{}", percent_encoding::utf8_percent_encode(v, ESCAPED));
        }
    }
}

/// The writer writes when this much is waiting, else every `FLUSH_EVERY`.
const WRITE_AT: usize = 64 << 10;
/// The longest a line waits in memory on a quiet server.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// When the disk stalls this long behind, requests wait for room rather
/// than the server's memory growing or lines being dropped.
const MAX_PENDING: usize = 16 << 20;

/// An open access log: cheap to share (`Arc`), `record` from any thread.
///
/// A request appends its line to a buffer under a mutex held for the
/// copy alone; a thread of its own writes the buffer out. Handing each
/// line to the writer instead (a channel) woke that thread and wrote once
/// per request: 12-15 µs more per small request on 2 cores
/// (docs/src/results/per-request.md, "Access log and metrics").
pub struct AccessLog {
    path: PathBuf,
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer early: a full buffer, a reopen, a sync, the end.
    wake: Condvar,
    /// Tells requests waiting for room, and `sync`, that bytes went out.
    written: Condvar,
}

#[derive(Default)]
struct State {
    pending: Vec<u8>,
    /// Bytes ever appended, and ever taken by the writer and written.
    appended: u64,
    done: u64,
    reopen: bool,
    hurry: bool,
    closing: bool,
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AccessLog({})", self.path.display())
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl AccessLog {
    /// Opens `path` for appending (created 0640 if missing) and starts the
    /// writer thread.
    pub fn open(path: &Path) -> io::Result<AccessLog> {
        let file = open_append(path)?;
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            wake: Condvar::new(),
            written: Condvar::new(),
        });
        let (shown, theirs) = (path.to_path_buf(), shared.clone());
        let writer = std::thread::Builder::new()
            .name("s3hpc-access-log".into())
            .spawn(move || write_out(&shown, file, &theirs))?;
        Ok(AccessLog {
            path: path.to_path_buf(),
            shared,
            writer: Mutex::new(Some(writer)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues the line of `r`.
    pub fn record(&self, r: &Record<'_>) {
        let line = r.line();
        let mut s = self.shared.lock();
        while s.pending.len() >= MAX_PENDING && !s.closing {
            s = self
                .shared
                .written
                .wait(s)
                .unwrap_or_else(|e| e.into_inner());
        }
        let before = s.pending.len();
        s.pending.extend_from_slice(line.as_bytes());
        s.appended += line.len() as u64;
        if before < WRITE_AT && s.pending.len() >= WRITE_AT {
            self.shared.wake.notify_one();
        }
    }

    /// Closes the file and opens `path` again: after logrotate renamed it,
    /// lines go to a new file of that name (those queued before, to the
    /// renamed one).
    pub fn reopen(&self) {
        self.shared.lock().reopen = true;
        self.shared.wake.notify_one();
    }

    /// Waits until every line queued so far is written to the file.
    pub fn sync(&self) {
        let mut s = self.shared.lock();
        let target = s.appended;
        s.hurry = true;
        self.shared.wake.notify_one();
        while s.done < target && !s.closing {
            s = self
                .shared
                .written
                .wait(s)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for AccessLog {
    /// Writes what is queued and stops the writer.
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
        if let Some(w) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = w.join();
        }
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o640)
        .open(path)
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("opening the access log {}: {e}", path.display()),
            )
        })
}

/// The writer thread: takes what is pending when there is 64 KiB of it,
/// when asked, or every 100 ms, and writes it with one `write`.
fn write_out(path: &Path, mut file: File, shared: &Shared) {
    let mut batch = Vec::with_capacity(2 * WRITE_AT);
    let mut failing = false;
    loop {
        let mut s = shared.lock();
        let due = |s: &State| s.pending.len() >= WRITE_AT || s.reopen || s.hurry || s.closing;
        if !due(&s) {
            s = shared
                .wake
                .wait_timeout(s, FLUSH_EVERY)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        std::mem::swap(&mut s.pending, &mut batch);
        let (upto, reopen, closing) = (s.appended, std::mem::take(&mut s.reopen), s.closing);
        s.hurry = false;
        drop(s);
        if !batch.is_empty() {
            match file.write_all(&batch) {
                Ok(()) => failing = false,
                // Once per failure streak, not once per batch.
                Err(e) if !std::mem::replace(&mut failing, true) => {
                    eprintln!("s3hpc: writing the access log {}: {e}", path.display())
                }
                Err(_) => {}
            }
            batch.clear();
        }
        if reopen {
            match open_append(path) {
                Ok(f) => file = f,
                // Keep writing to the old file rather than nowhere.
                Err(e) => eprintln!("s3hpc: {e}; still writing to the old file"),
            }
        }
        shared.lock().done = upto;
        shared.written.notify_all();
        if closing {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record<'a>(key: Option<&'a str>) -> Record<'a> {
        Record {
            time: SystemTime::UNIX_EPOCH + Duration::from_micros(1_764_120_000_123_456),
            transport: "http",
            client: "127.0.0.1:5000",
            access_key: Some("AKID"),
            uid: Some(1000),
            operation: "PutObject",
            bucket: Some("bkt"),
            key,
            status: 200,
            bytes_in: 5,
            bytes_out: 0,
            micros: 81,
            request_id: Some("0123456789ABCDEF"),
            key_kind: Some("key"),
        }
    }

    #[test]
    fn one_line_with_hostile_keys_escaped() {
        assert_eq!(
            record(Some("a b/c%d")).line(),
            "2025-11-26T01:20:00.123456Z http 127.0.0.1:5000 AKID 1000 PutObject bkt \
             a%20b/c%25d 200 5 0 81 0123456789ABCDEF key\n"
        );
        let line = record(Some("x\n2025-01-01T00:00:00Z forged\r\t\u{7f}é\u{2028}")).line();
        assert_eq!(line.matches('\n').count(), 1, "{line}");
        assert!(line.ends_with('\n'));
        assert!(
            line.contains(" x%0A2025-01-01T00:00:00Z%20forged%0D%09%7F%C3%A9%E2%80%A8 "),
            "{line}"
        );
        assert_eq!(line.split(' ').count(), 14, "{line}");
        // `-` alone is a key, not an absent one; nor is an empty one absent.
        assert!(record(Some("-")).line().contains(" bkt %2D 200 "));
        assert!(record(Some("")).line().contains(" bkt \"\" 200 "));
        let anonymous = Record {
            access_key: None,
            uid: None,
            key: None,
            request_id: None,
            key_kind: None,
            ..record(None)
        };
        assert!(anonymous
            .line()
            .ends_with(" 127.0.0.1:5000 - - PutObject bkt - 200 5 0 81 - -\n"));
    }
}
