//! Server access logs delivered into a bucket (PutBucketLogging): what a
//! bucket's requests leave in its target once the roll is due, one record
//! per request, and nothing once logging is off.

mod common;

use common::request;
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_store::{ListRequest, Store, StoreConfig};
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

const ROLL: Duration = Duration::from_millis(1500);

fn logging(target: &str) -> Vec<u8> {
    format!(
        "<BucketLoggingStatus xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LoggingEnabled>\
         <TargetBucket>{target}</TargetBucket><TargetPrefix>l/</TargetPrefix></LoggingEnabled>\
         </BucketLoggingStatus>"
    )
    .into_bytes()
}

/// The log objects in `logs`, with their contents.
fn log_objects(store: &Store) -> Vec<(String, String)> {
    let page = store.list_objects("logs", &ListRequest::default()).unwrap();
    page.objects
        .iter()
        .map(|o| {
            let mut body = String::new();
            let mut got = store.get_object("logs", &o.key, None).unwrap();
            got.body.read_to_string(&mut body).unwrap();
            (o.key.clone(), body)
        })
        .collect()
}

#[test]
fn a_buckets_requests_land_in_its_target_once_the_roll_is_due() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), StoreConfig::default()).unwrap());
    store.create_bucket("bkt").unwrap();
    store.create_bucket("logs").unwrap();
    let server = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        store.clone(),
        AuthConfig::Anonymous,
        &[],
    )
    .unwrap()
    .with_bucket_log_roll(Some(ROLL))
    .spawn()
    .unwrap();
    let addr = server.addr();

    let (st, _, body) = request(addr, "PUT /bkt?logging HTTP/1.1\r\n", &logging("nowhere"));
    assert_eq!(st, 404, "{}", String::from_utf8_lossy(&body));
    let (st, _, _) = request(addr, "PUT /bkt?logging HTTP/1.1\r\n", &logging("logs"));
    assert_eq!(st, 200);
    let on = std::time::Instant::now();
    let (st, _, body) = request(addr, "GET /bkt?logging HTTP/1.1\r\n", b"");
    let body = String::from_utf8_lossy(&body);
    assert_eq!(st, 200);
    assert!(
        body.contains("<TargetBucket>logs</TargetBucket>")
            && body.contains("<TargetPrefix>l/</TargetPrefix>"),
        "{body}"
    );

    assert_eq!(request(addr, "PUT /bkt/a%20b HTTP/1.1\r\n", b"data").0, 200);
    assert_eq!(request(addr, "GET /bkt/a%20b HTTP/1.1\r\n", b"").0, 200);
    assert_eq!(request(addr, "GET /bkt/none HTTP/1.1\r\n", b"").0, 404);
    // (A machine that stalled a whole roll period since may have rolled.)
    assert!(
        log_objects(&store).is_empty() || on.elapsed() >= ROLL,
        "nothing before the roll"
    );
    std::thread::sleep(ROLL + Duration::from_millis(200));
    // The next request to the bucket finds its logs written.
    assert_eq!(request(addr, "HEAD /bkt/a%20b HTTP/1.1\r\n", b"").0, 200);
    let logs = log_objects(&store);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let (key, records) = &logs[0];
    assert!(key.starts_with("l/"), "{key}");
    let lines: Vec<&str> = records.lines().collect();
    let find = |op: &str, status: &str| {
        lines
            .iter()
            .find(|l| l.contains(op) && l.contains(&format!("HTTP/1.1\" {status} ")))
            .copied()
    };
    let put = find("REST.PUT.OBJECT a%20b", "200").unwrap_or_else(|| panic!("{records}"));
    assert!(put.starts_with("uid:") || put.contains(" bkt ["), "{put}");
    assert!(find("REST.GET.OBJECT a%20b", "200").is_some(), "{records}");
    assert!(find("REST.GET.OBJECT none", "404").is_some(), "{records}");
    // Records begin with the requests after PutBucketLogging's.
    assert!(!records.contains("\"PUT /bkt?logging"), "{records}");
    assert!(
        !records.contains("REST.HEAD.OBJECT"),
        "the rolling request comes later"
    );

    // Off: the configuration goes, and nothing more is written.
    let off = b"<BucketLoggingStatus xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>";
    assert_eq!(request(addr, "PUT /bkt?logging HTTP/1.1\r\n", off).0, 200);
    let (_, _, body) = request(addr, "GET /bkt?logging HTTP/1.1\r\n", b"");
    assert!(!String::from_utf8_lossy(&body).contains("LoggingEnabled"));
    // (Records from before, the HEAD's among them, may still be written.)
    std::thread::sleep(ROLL + Duration::from_millis(200));
    assert_eq!(request(addr, "GET /bkt/a%20b HTTP/1.1\r\n", b"").0, 200);
    let before = log_objects(&store).len();
    std::thread::sleep(ROLL + Duration::from_millis(200));
    assert_eq!(request(addr, "GET /bkt/a%20b HTTP/1.1\r\n", b"").0, 200);
    assert_eq!(log_objects(&store).len(), before);
}
