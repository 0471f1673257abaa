//! Server access logs delivered into a bucket (PutBucketLogging): each
//! request to a bucket whose owner switched logging on becomes one record
//! in S3's server access log format, and the records bound for one target
//! bucket and prefix (and, for partitioned keys, from one source bucket)
//! are written as one object there once the oldest is `roll` old. They are written as the user who switched logging on, so a log
//! lands only where that user may write: no one gains access by it.
//!
//! The roll comes at the first request to the bucket after it is due
//! (before that request is served, so a client that waited a roll period
//! sees the log object of what it did), or from the server's ticker a
//! minute later when no request comes, and at shutdown. Each server keeps its own records: several gateways
//! on one file system each write their own log objects.

use crate::owners::Owners;
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use s3hpc_store::{identity, Acting, Identity, PerBucket, PutBody, PutOptions, Store};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// The bucket document that holds the configuration.
pub(crate) const CONFIG: &str = "logging";
/// Records whose roll is due and that no request rolled are written this
/// much later by the ticker.
const IDLE_ROLL: Duration = Duration::from_secs(60);
/// A bucket's records wait for at most this many bytes before a roll.
const MAX_BUFFER: usize = 8 << 20;

/// Where a bucket's logs go, and who writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LogConfig {
    pub target_bucket: String,
    pub target_prefix: String,
    /// `PartitionedPrefix` keys (else `SimplePrefix`).
    pub partitioned: bool,
    /// The partitions' date, as configured (`DeliveryTime` or
    /// `EventTime`: the time a log object is written, for both).
    #[serde(default)]
    pub date_source: Option<String>,
    /// The user who switched logging on, as whom logs are written; None:
    /// the server's own identity (an administrator's key).
    pub writer: Option<(u32, u32)>,
}

impl LogConfig {
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a configuration serializes")
    }

    pub fn decode(raw: &[u8]) -> Option<LogConfig> {
        serde_json::from_slice(raw).ok()
    }
}

/// One request, as a log record tells it.
pub(crate) struct Request<'a> {
    pub time: SystemTime,
    pub client: &'a str,
    pub requester: Option<&'a str>,
    pub request_id: Option<&'a str>,
    /// The S3 operation (`PutObject`).
    pub operation: &'a str,
    pub method: &'a str,
    pub key: Option<&'a str>,
    pub uri: &'a str,
    pub status: u16,
    pub bytes_sent: u64,
    pub object_size: Option<u64>,
    pub millis: u64,
    pub user_agent: Option<&'a str>,
    pub version_id: Option<&'a str>,
    pub signed: bool,
    pub host: Option<&'a str>,
}

/// The records bound for one log object.
struct Buffer {
    since: Instant,
    lines: String,
    /// The source bucket whose record came first, and its configuration
    /// (the target, prefix and writer all records share).
    source: String,
    config: Arc<LogConfig>,
}

/// Which log object a source's records go to.
fn buffer_key(source: &str, config: &LogConfig) -> String {
    let partition = if config.partitioned { source } else { "" };
    format!(
        "{}\0{}\0{partition}",
        config.target_bucket, config.target_prefix
    )
}

pub struct BucketLogs {
    store: Arc<Store>,
    owners: Arc<Owners>,
    /// Milliseconds.
    roll: AtomicU64,
    /// Each bucket's configuration (None: logging off).
    configs: PerBucket<Option<Arc<LogConfig>>>,
    buffers: Mutex<HashMap<String, Buffer>>,
    /// Held while a roll writes, so that a request that finds its bucket's
    /// roll due waits for one under way.
    rolling: Mutex<()>,
}

impl BucketLogs {
    pub(crate) fn new(store: Arc<Store>, owners: Arc<Owners>, roll: Duration) -> BucketLogs {
        BucketLogs {
            store,
            owners,
            roll: AtomicU64::new(roll.as_millis() as u64),
            configs: PerBucket::default(),
            buffers: Mutex::default(),
            rolling: Mutex::new(()),
        }
    }

    pub(crate) fn set_roll(&self, roll: Duration) {
        self.roll.store(roll.as_millis() as u64, Ordering::Relaxed);
    }

    fn roll(&self) -> Duration {
        Duration::from_millis(self.roll.load(Ordering::Relaxed))
    }

    /// Whether `bucket` has logging on (None: off), and if so the buffer
    /// a request to it rolls first, if that roll is due.
    pub(crate) fn logged(&self, bucket: &str) -> Option<Option<String>> {
        let key = buffer_key(bucket, &*self.config(bucket)?);
        let buffers = self.buffers.lock().unwrap();
        let due = buffers
            .get(&key)
            .is_some_and(|b| b.since.elapsed() >= self.roll());
        Some(due.then_some(key))
    }

    /// The bucket's configuration, read as the server at most once a second.
    fn config(&self, bucket: &str) -> Option<Arc<LogConfig>> {
        if let Some((config, true)) = self.configs.get(bucket) {
            return config;
        }
        // Held, as every engine use of the server's threads (see `Acting::held`).
        let engine = Acting::held(self.store.clone(), Identity::server());
        let config = match engine.bucket_config(bucket, CONFIG) {
            Ok(Some(raw)) => LogConfig::decode(&raw).map(Arc::new),
            _ => None,
        };
        self.configs.put(bucket, config.clone());
        config
    }

    /// Forgets what was read of the bucket's configuration (it changed).
    pub(crate) fn forget(&self, bucket: &str) {
        self.configs.forget(bucket);
    }

    /// Adds a record of `req` to `bucket`'s logs, if it has logging on.
    pub(crate) fn record(&self, bucket: &str, req: &Request<'_>) {
        let Some(config) = self.config(bucket) else {
            return;
        };
        let owner = match config.writer {
            Some((uid, _)) => self.owners.of(uid).id,
            None => self.owners.of(identity::server_uid()).id,
        };
        let line = standard_record(owner.as_deref().unwrap_or("-"), bucket, req);
        let mut buffers = self.buffers.lock().unwrap();
        let buffer = buffers
            .entry(buffer_key(bucket, &config))
            .or_insert_with(|| Buffer {
                since: Instant::now(),
                lines: String::new(),
                source: bucket.to_string(),
                config: config.clone(),
            });
        if buffer.lines.len() + line.len() <= MAX_BUFFER {
            buffer.lines.push_str(&line);
        }
    }

    /// Writes buffer `key`'s records if its roll is due (a request whose
    /// records go there is about to be served, `due`).
    pub(crate) fn roll_if_due(&self, key: &str) {
        let _rolling = self.rolling.lock().unwrap();
        let due = {
            let mut buffers = self.buffers.lock().unwrap();
            match buffers.get(key) {
                Some(b) if b.since.elapsed() >= self.roll() => buffers.remove(key),
                _ => None,
            }
        };
        if let Some(b) = due {
            self.deliver(&b);
        }
    }

    /// Writes the records no request rolled within `IDLE_ROLL` of their
    /// roll (`all`: every record, as the server stops). A request rolls
    /// what is due first, so that logs come in the order of the requests
    /// that cause them; this catches the buckets no request comes to.
    pub(crate) fn roll_due(&self, all: bool) {
        let _rolling = self.rolling.lock().unwrap();
        let due: Vec<Buffer> = {
            let mut buffers = self.buffers.lock().unwrap();
            let names: Vec<String> = buffers
                .iter()
                .filter(|(_, b)| all || b.since.elapsed() >= self.roll() + IDLE_ROLL)
                .map(|(n, _)| n.clone())
                .collect();
            names
                .into_iter()
                .filter_map(|n| buffers.remove(&n))
                .collect()
        };
        for b in due {
            self.deliver(&b);
        }
    }

    /// Writes a buffer's records as one object into its target, as the
    /// user who switched logging on. A write that fails is reported on the
    /// server's standard error and its records are dropped.
    fn deliver(&self, b: &Buffer) {
        let (bucket, config, lines) = (&b.source, &b.config, &b.lines);
        let who = match config.writer {
            None => Identity::server(),
            Some((uid, gid)) => {
                let spec = match identity::user_name(uid) {
                    Some(name) if uid != 0 => name,
                    _ => format!("{uid}:{gid}!"),
                };
                match Identity::parse(&spec) {
                    Ok(who) => who,
                    Err(e) => {
                        eprintln!("s3hpc serve: bucket logs of {bucket:?}: user {uid}: {e}");
                        return;
                    }
                }
            }
        };
        let key = log_key(config, bucket, &self.owners, SystemTime::now());
        let engine = Acting::held(self.store.clone(), who);
        let opts = PutOptions {
            content_type: Some("text/plain".into()),
            ..Default::default()
        };
        let body = PutBody::Bytes(lines.as_bytes());
        if let Err(e) = engine.put_object(&config.target_bucket, &key, body, &opts) {
            eprintln!(
                "s3hpc serve: bucket logs of {bucket:?} into {:?}: {e}; {} bytes of records dropped",
                config.target_bucket,
                lines.len()
            );
        }
    }
}

/// The key of a log object: `PREFIX` and the time and a unique part
/// (`SimplePrefix`), or `PREFIX` and the source's owner, region and
/// bucket, then the date (`PartitionedPrefix`), as S3 names them.
fn log_key(config: &LogConfig, bucket: &str, owners: &Owners, now: SystemTime) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let t = time::OffsetDateTime::from(now);
    let stamp = format!(
        "{:04}-{:02}-{:02}-{:02}-{:02}-{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let unique = format!(
        "{:08X}{:08X}",
        std::process::id(),
        (SEQ.fetch_add(1, Ordering::Relaxed) as u32) ^ t.nanosecond()
    );
    let prefix = &config.target_prefix;
    if !config.partitioned {
        return format!("{prefix}{stamp}-{unique}");
    }
    let owner = match config.writer {
        Some((uid, _)) => owners.of(uid).id,
        None => owners.of(identity::server_uid()).id,
    };
    format!(
        "{prefix}{}/us-east-1/{bucket}/{:04}/{:02}/{:02}/{stamp}-{unique}",
        owner.as_deref().unwrap_or("-"),
        t.year(),
        u8::from(t.month()),
        t.day()
    )
}

/// S3's name of an operation in a log record: `REST.METHOD.RESOURCE`.
fn operation_name(operation: &str, method: &str) -> String {
    let resource = match operation {
        "PutObject" | "CopyObject" | "GetObject" | "HeadObject" | "DeleteObject" => "OBJECT",
        "DeleteObjects" => "DELETE_MULTI_OBJECT",
        "CreateMultipartUpload" => "UPLOADS",
        "CompleteMultipartUpload" | "AbortMultipartUpload" | "ListParts" => "UPLOAD",
        "UploadPart" | "UploadPartCopy" => "PART",
        "ListObjects" | "ListObjectsV2" => "BUCKET",
        "ListObjectVersions" => "BUCKETVERSIONS",
        "PutBucketLogging" | "GetBucketLogging" => "LOGGING_STATUS",
        other => return format!("REST.{method}.{}", upper_snake(other)),
    };
    format!("REST.{method}.{resource}")
}

/// `GetObjectTagging` as `OBJECT_TAGGING` (the operation's verb dropped).
fn upper_snake(operation: &str) -> String {
    let mut out = String::new();
    let rest = ["Get", "Put", "Delete", "Head", "List", "Create", "Post"]
        .iter()
        .find_map(|v| operation.strip_prefix(v))
        .unwrap_or(operation);
    for (i, c) in rest.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Bytes written as `%XX` in a field: as the access log's (controls,
/// space, `%`, everything outside ASCII), and the quotes, brackets and
/// backslash that delimit a record's fields.
const ESCAPED: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'%')
    .add(b'"')
    .add(b'[')
    .add(b']')
    .add(b'\\');

/// A field of a record: `-` when empty, and no byte that would split it.
fn field(value: Option<&str>) -> String {
    match value {
        None | Some("") => "-".to_string(),
        Some(v) => utf8_percent_encode(v, ESCAPED).to_string(),
    }
}

/// One line of S3's server access log format (26 fields).
fn standard_record(owner: &str, bucket: &str, r: &Request<'_>) -> String {
    let t = time::OffsetDateTime::from(r.time);
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][usize::from(u8::from(t.month())) - 1];
    let when = format!(
        "[{:02}/{month}/{:04}:{:02}:{:02}:{:02} +0000]",
        t.day(),
        t.year(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let ip = r.client.rsplit_once(':').map_or(r.client, |(ip, _)| ip);
    let size = r.object_size.map(|n| n.to_string());
    format!(
        "{} {} {when} {} {} {} {} {} \"{} {} HTTP/1.1\" {} - {} {} {} - \"-\" \"{}\" {} - {} - {} {} - - -\n",
        field(Some(owner)),
        field(Some(bucket)),
        field(Some(ip)),
        field(r.requester),
        field(r.request_id),
        operation_name(r.operation, r.method),
        field(r.key),
        r.method,
        field(Some(r.uri)),
        r.status,
        r.bytes_sent,
        size.as_deref().unwrap_or("-"),
        r.millis,
        field(r.user_agent),
        field(r.version_id),
        if r.signed { "SigV4" } else { "-" },
        if r.signed { "AuthHeader" } else { "-" },
        field(r.host),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_has_s3s_26_fields_whatever_the_key() {
        let r = Request {
            time: SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_000_000),
            client: "127.0.0.1:5000",
            requester: Some("AKEY"),
            request_id: Some("abc"),
            operation: "PutObject",
            method: "PUT",
            key: Some("a \"b\" [c]\n%"),
            uri: "/bkt/a%20b",
            status: 200,
            bytes_sent: 0,
            object_size: Some(12),
            millis: 3,
            user_agent: Some("boto3/1.0 (x y)"),
            version_id: None,
            signed: true,
            host: Some("localhost:9000"),
        };
        let line = standard_record("OWNER", "bkt", &r);
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        // As the suite parses it: brackets to quotes, then shell words.
        let fields = shell_words(&line.replace(['[', ']'], "\""));
        assert_eq!(fields.len(), 26, "{line}");
        assert_eq!(fields[2], "24/Nov/2025:16:00:00 +0000");
        assert_eq!(fields[6], "REST.PUT.OBJECT");
        assert_eq!(fields[7], "a%20%22b%22%20%5Bc%5D%0A%25");
        assert_eq!(fields[8], "PUT /bkt/a%2520b HTTP/1.1");
        assert_eq!(fields[16], "boto3/1.0%20(x%20y)");
    }

    /// Words split at spaces outside double quotes.
    fn shell_words(line: &str) -> Vec<String> {
        let (mut words, mut cur, mut quoted) = (Vec::new(), String::new(), false);
        for c in line.trim_end().chars() {
            match c {
                '"' => quoted = !quoted,
                ' ' if !quoted => words.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        words.push(cur);
        words
    }

    #[test]
    fn operations_are_named_as_s3_logs_name_them() {
        assert_eq!(operation_name("GetObject", "GET"), "REST.GET.OBJECT");
        assert_eq!(operation_name("UploadPart", "PUT"), "REST.PUT.PART");
        assert_eq!(
            operation_name("CompleteMultipartUpload", "POST"),
            "REST.POST.UPLOAD"
        );
        assert_eq!(
            operation_name("DeleteObjects", "POST"),
            "REST.POST.DELETE_MULTI_OBJECT"
        );
        assert_eq!(
            operation_name("GetObjectTagging", "GET"),
            "REST.GET.OBJECT_TAGGING"
        );
        assert_eq!(operation_name("PutBucketAcl", "PUT"), "REST.PUT.BUCKET_ACL");
    }
}
