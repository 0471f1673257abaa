use s3hpc_store::*;
use std::io::Read;

#[test]
fn smoke() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), StoreConfig::default()).unwrap();
    s.create_bucket("bkt").unwrap();
    let e = s
        .put_object(
            "bkt",
            "a/b/c",
            PutBody::Bytes(b"hello"),
            &PutOptions::default(),
        )
        .unwrap();
    assert_eq!(e, "\"5d41402abc4b2a76b9719d911017c592\"");
    let h = s.head_object("bkt", "a/b/c").unwrap();
    assert_eq!(h.size, 5);
    assert_eq!(h.etag, e);
    let mut g = s.get_object("bkt", "a/b/c", None).unwrap();
    let mut v = Vec::new();
    g.body.read_to_end(&mut v).unwrap();
    assert_eq!(v, b"hello");
    for k in ["a-b", "a.b", "a0", "a/b/d", "z"] {
        s.put_object("bkt", k, PutBody::Bytes(b""), &PutOptions::default())
            .unwrap();
    }
    let l = s.list_objects("bkt", &ListRequest::default()).unwrap();
    let keys: Vec<_> = l.objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(keys, ["a-b", "a.b", "a/b/c", "a/b/d", "a0", "z"]);
    let l = s
        .list_objects(
            "bkt",
            &ListRequest {
                delimiter: Some("/".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(l.common_prefixes, ["a/"]);
    s.delete_object("bkt", "a/b/c").unwrap();
    s.delete_object("bkt", "a/b/d").unwrap();
    assert!(!dir.path().join("bkt/a").exists());
    assert_eq!(
        s.get_object("bkt", "a/b/c", None).err().unwrap().code,
        ErrorCode::NoSuchKey
    );
}
