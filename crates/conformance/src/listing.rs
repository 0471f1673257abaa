//! Checks of ListObjects: order, prefixes, delimiters, start-after, paging.

use crate::helpers::*;

/// Keys sort by their UTF-8 bytes as whole strings, whatever the directories.
pub(crate) fn list_byte_order(c: &dyn S3Client, b: &str) {
    let keys = [
        "a0", "a/b", "é", "a.b", "z", "B", "a-b", "a/c/d", "a/a", "a/-", "ab",
    ];
    put_keys(c, b, &keys);
    let mut want = strings(&keys);
    want.sort();
    assert_eq!(
        &want[..4],
        &strings(&["B", "a-b", "a.b", "a/-"]),
        "the model itself"
    );
    let (listed, prefixes) = list(c, b, &ListRequest::default());
    assert_eq!(listed, want, "LIST order");
    assert!(
        prefixes.is_empty(),
        "common prefixes without a delimiter: {prefixes:?}"
    );
    let page = ok(c.list_objects(b, &ListRequest::default()), "LIST");
    for o in &page.objects {
        let head = ok(c.head_object(b, &o.key), "HEAD");
        assert_eq!(
            (o.size, &o.etag),
            (head.size, &head.etag),
            "LIST entry {:?} against HEAD",
            o.key
        );
    }
}

/// A prefix selects keys by bytes, not by directory.
pub(crate) fn list_prefix(c: &dyn S3Client, b: &str) {
    put_keys(
        c,
        b,
        &["dir/x", "dir/sub/y", "dish", "di", "dir.txt", "other"],
    );
    for (prefix, want) in [
        ("dir/", &["dir/sub/y", "dir/x"][..]),
        ("di", &["di", "dir.txt", "dir/sub/y", "dir/x", "dish"]),
        ("dir", &["dir.txt", "dir/sub/y", "dir/x"]),
        ("dir/s", &["dir/sub/y"]),
        ("dir/sub/y", &["dir/sub/y"]),
        ("nothing", &[]),
        ("dir/sub/y/", &[]),
    ] {
        let (keys, _) = list(c, b, &req(prefix, None));
        assert_eq!(keys, strings(want), "LIST prefix {prefix:?}");
    }
}

/// A delimiter rolls keys up into common prefixes, for `/` and other strings.
pub(crate) fn list_delimiter(c: &dyn S3Client, b: &str) {
    put_keys(
        c,
        b,
        &[
            "a/1", "a/2", "b/c/d", "b/e", "b0", "top", "x-1", "x-2/y", "y--z",
        ],
    );
    for (prefix, delim, want_keys, want_prefixes) in [
        (
            "",
            "/",
            &["b0", "top", "x-1", "y--z"][..],
            &["a/", "b/", "x-2/"][..],
        ),
        ("b/", "/", &["b/e"], &["b/c/"]),
        ("b", "/", &["b0"], &["b/"]),
        ("a/", "/", &["a/1", "a/2"], &[]),
        (
            "",
            "-",
            &["a/1", "a/2", "b/c/d", "b/e", "b0", "top"],
            &["x-", "y-"],
        ),
        ("y-", "-", &[], &["y--"]),
        (
            "",
            "c/",
            &["a/1", "a/2", "b/e", "b0", "top", "x-1", "x-2/y", "y--z"],
            &["b/c/"],
        ),
        ("zzz", "/", &[], &[]),
    ] {
        let (keys, prefixes) = list(c, b, &req(prefix, Some(delim)));
        assert_eq!(
            (keys, prefixes),
            (strings(want_keys), strings(want_prefixes)),
            "LIST prefix {prefix:?} delimiter {delim:?}"
        );
    }
}

/// start_after lists only keys strictly after it, present or not.
pub(crate) fn list_start_after(c: &dyn S3Client, b: &str) {
    // k05 is only a prefix: it has keys under it, and after it.
    for i in 0..10 {
        let key = match i {
            5 => "k05/sub".to_string(),
            _ => format!("k{i:02}"),
        };
        put(c, b, &key, b"x");
    }
    for (after, want) in [
        ("k05", &["k05/sub", "k06", "k07", "k08", "k09"][..]),
        ("k05/sub", &["k06", "k07", "k08", "k09"]),
        ("k055", &["k06", "k07", "k08", "k09"]),
        ("k09", &[]),
        ("zzz", &[]),
        (
            "a",
            &[
                "k00", "k01", "k02", "k03", "k04", "k05/sub", "k06", "k07", "k08", "k09",
            ],
        ),
    ] {
        let r = ListRequest {
            start_after: Some(after.to_string()),
            ..Default::default()
        };
        let (got, _) = list(c, b, &r);
        assert_eq!(got, strings(want), "LIST start_after {after:?}");
    }
    let r = ListRequest {
        start_after: Some("k05".into()),
        prefix: "k0".into(),
        delimiter: Some("/".into()),
        ..Default::default()
    };
    assert_eq!(
        list(c, b, &r),
        (strings(&["k06", "k07", "k08", "k09"]), strings(&["k05/"])),
        "start_after with delimiter"
    );
}

/// ~25 keys at different depths for the paging checks.
pub(crate) fn paging_keys() -> Vec<String> {
    let mut keys: Vec<String> = (0..25)
        .map(|i| match i % 5 {
            0 => format!("p{i:02}"),
            1 => format!("d/p{i:02}"),
            2 => format!("d/e/p{i:02}"),
            3 => format!("d-{i:02}/q"),
            _ => format!("p{i:02}/x/y"),
        })
        .collect();
    keys.sort();
    keys
}

/// Paging with max_keys 2 and continuation tokens yields exactly the full
/// listing, with prefix and start_after too.
pub(crate) fn list_paging(c: &dyn S3Client, b: &str) {
    let keys = paging_keys();
    for k in &keys {
        put(c, b, k, k.as_bytes());
    }
    let full = ListRequest::default();
    assert_eq!(list(c, b, &full), (keys.clone(), vec![]), "unpaged LIST");
    let paged = ListRequest {
        max_keys: 2,
        ..Default::default()
    };
    let pages = list_pages(c, b, &paged);
    assert_eq!(pages.len(), keys.len().div_ceil(2), "number of pages");
    assert!(pages.iter().all(|p| !p.objects.is_empty()), "an empty page");
    assert_eq!(
        list(c, b, &paged),
        (keys.clone(), vec![]),
        "LIST paged by 2"
    );
    let sub = ListRequest {
        prefix: "d/".into(),
        start_after: Some("d/e/p07".into()),
        max_keys: 2,
        ..Default::default()
    };
    let want: Vec<String> = keys
        .iter()
        .filter(|k| k.starts_with("d/") && k.as_str() > "d/e/p07")
        .cloned()
        .collect();
    assert_eq!(
        list(c, b, &sub),
        (want, vec![]),
        "LIST prefix d/ after d/e/p07 paged by 2"
    );
}

/// With a delimiter, keys and common prefixes share max_keys, and paging
/// yields each exactly once.
pub(crate) fn list_paging_with_delimiter(c: &dyn S3Client, b: &str) {
    for k in paging_keys() {
        put(c, b, &k, b"x");
    }
    for prefix in ["", "d/", "p"] {
        let whole = req(prefix, Some("/"));
        let want = list(c, b, &whole);
        assert!(
            !want.0.is_empty() || !want.1.is_empty(),
            "LIST {prefix:?}: nothing"
        );
        for max_keys in [1, 2, 3] {
            let paged = ListRequest {
                max_keys,
                ..whole.clone()
            };
            assert_eq!(
                list(c, b, &paged),
                want,
                "LIST prefix {prefix:?} delimiter / paged by {max_keys}"
            );
        }
    }
}
