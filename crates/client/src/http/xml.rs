//! S3's XML documents, read and written with quick-xml's serde support
//! (the parser s3s already links, so no crate is added): one typed struct
//! per document, fields named as S3 names its elements. Elements a struct
//! does not name are skipped, so answers from newer servers still read.
//! Cost against the hand-written scanner this replaced: docs/src/design/costs.md,
//! "S3 XML and SigV4 in the client".

use s3hpc_store::{ErrorCode, Result, S3Error};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// `doc` read as the document `T`.
pub fn read<T: DeserializeOwned>(doc: &str) -> std::result::Result<T, quick_xml::DeError> {
    quick_xml::de::from_str(doc)
}

/// An answer read as the document `T`; `what` names the request in the
/// error.
pub fn parse<T: DeserializeOwned>(doc: &str, what: std::fmt::Arguments<'_>) -> Result<T> {
    read(doc).map_err(|e| {
        S3Error::new(
            ErrorCode::InternalError,
            format!("{what}: the answer is not the XML S3 sends: {e}"),
        )
    })
}

/// `doc` written as XML with `root` as its element.
fn write(doc: &impl Serialize, root: &str) -> String {
    let mut out = String::new();
    let ser = quick_xml::se::Serializer::with_root(&mut out, Some(root))
        .expect("S3's element names are valid XML names");
    doc.serialize(ser)
        .expect("S3 documents of strings and numbers always serialize");
    out
}

/// Decodes `%XX` escapes (S3's `encoding-type=url`); `+` stays as is, as
/// S3 encodes a space as `%20`.
pub fn url_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// An error answer (`<Error>`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ErrorDoc {
    pub code: Option<String>,
    pub message: Option<String>,
}

/// ListBuckets (`<ListAllMyBucketsResult>`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListAllMyBuckets {
    #[serde(default)]
    pub buckets: Buckets,
}

#[derive(Deserialize, Default)]
pub struct Buckets {
    #[serde(rename = "Bucket", default)]
    pub list: Vec<Bucket>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Bucket {
    pub name: String,
    #[serde(default)]
    pub creation_date: String,
}

/// ListObjectsV2 (`<ListBucketResult>`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListBucket {
    #[serde(default)]
    pub contents: Vec<Contents>,
    #[serde(default)]
    pub common_prefixes: Vec<CommonPrefix>,
    #[serde(default)]
    pub is_truncated: bool,
    pub next_continuation_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Contents {
    pub key: String,
    #[serde(default)]
    pub size: u64,
    #[serde(default)]
    pub last_modified: String,
    #[serde(rename = "ETag", default)]
    pub etag: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CommonPrefix {
    #[serde(default)]
    pub prefix: String,
}

/// ListObjectVersions (`<ListVersionsResult>`): its children in document
/// order, so versions and delete markers keep their places.
#[derive(Deserialize)]
pub struct ListVersions {
    #[serde(rename = "$value", default)]
    pub children: Vec<VersionsChild>,
}

#[derive(Deserialize)]
pub enum VersionsChild {
    Version(VersionEntry),
    DeleteMarker(VersionEntry),
    CommonPrefixes(CommonPrefix),
    IsTruncated(bool),
    NextKeyMarker(String),
    NextVersionIdMarker(String),
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct VersionEntry {
    pub key: String,
    pub version_id: String,
    #[serde(default)]
    pub is_latest: bool,
    #[serde(default)]
    pub last_modified: String,
    #[serde(rename = "ETag", default)]
    pub etag: String,
    #[serde(default)]
    pub size: u64,
}

/// A bucket's versioning (`<VersioningConfiguration>`), both ways.
#[derive(Serialize, Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
pub struct VersioningConfiguration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

impl VersioningConfiguration {
    pub fn to_xml(&self) -> String {
        write(self, "VersioningConfiguration")
    }
}

/// An object's tags (`<Tagging>`), both ways.
#[derive(Serialize, Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
pub struct Tagging {
    #[serde(default)]
    pub tag_set: TagSet,
}

#[derive(Serialize, Deserialize, Default)]
pub struct TagSet {
    #[serde(rename = "Tag", default)]
    pub tags: Vec<Tag>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tag {
    pub key: String,
    #[serde(default)]
    pub value: String,
}

impl Tagging {
    pub fn of(tags: &crate::Tags) -> Tagging {
        let tags = tags
            .iter()
            .map(|(k, v)| Tag {
                key: k.clone(),
                value: v.clone(),
            })
            .collect();
        Tagging {
            tag_set: TagSet { tags },
        }
    }

    pub fn to_xml(&self) -> String {
        write(self, "Tagging")
    }
}

/// CreateMultipartUpload (`<InitiateMultipartUploadResult>`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InitiateMultipartUpload {
    pub upload_id: String,
}

/// The ETag of what CopyObject or CompleteMultipartUpload wrote
/// (`<CopyObjectResult>`, `<CompleteMultipartUploadResult>`).
#[derive(Deserialize)]
pub struct Written {
    #[serde(rename = "ETag", default)]
    pub etag: String,
}

/// ListParts (`<ListPartsResult>`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListParts {
    #[serde(rename = "Part", default)]
    pub parts: Vec<Part>,
    #[serde(default)]
    pub is_truncated: bool,
    pub next_part_number_marker: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Part {
    pub part_number: u32,
    #[serde(default)]
    pub size: u64,
    #[serde(rename = "ETag", default)]
    pub etag: String,
    #[serde(default)]
    pub last_modified: String,
}

/// ListMultipartUploads (`<ListMultipartUploadsResult>`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListUploads {
    #[serde(rename = "Upload", default)]
    pub uploads: Vec<Upload>,
    #[serde(default)]
    pub is_truncated: bool,
    pub next_key_marker: Option<String>,
    pub next_upload_id_marker: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Upload {
    pub key: String,
    pub upload_id: String,
    #[serde(default)]
    pub initiated: String,
}

/// The CompleteMultipartUpload request (`<CompleteMultipartUpload>`), as
/// every S3 client sends it and as the libs3 drop-in reads it from C
/// callers.
#[derive(Serialize, Deserialize, Default)]
pub struct CompleteMultipartUpload {
    #[serde(rename = "Part", default)]
    pub parts: Vec<CompletedPart>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CompletedPart {
    pub part_number: u32,
    #[serde(rename = "ETag")]
    pub etag: String,
}

/// The CompleteMultipartUpload document listing `parts` (number, ETag).
pub fn complete_multipart_document(parts: &[(u32, String)]) -> String {
    let doc = CompleteMultipartUpload {
        parts: parts
            .iter()
            .map(|(n, etag)| CompletedPart {
                part_number: *n,
                etag: etag.clone(),
            })
            .collect(),
    };
    write(&doc, "CompleteMultipartUpload")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_listings_with_entities_and_unknown_elements() {
        let doc = r#"<?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <Name>b</Name><Prefix/><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>
            <Contents><Key>a&amp;b</Key><LastModified>2026-11-21T22:29:55.000Z</LastModified>
              <ETag>&quot;e1&quot;</ETag><Size>3</Size><StorageClass>STANDARD</StorageClass>
              <Owner><ID>x</ID></Owner></Contents>
            <Contents><Key>&#x41;&lt;</Key><Size>0</Size></Contents>
            <CommonPrefixes><Prefix>d%2F</Prefix></CommonPrefixes>
            <NextContinuationToken>t</NextContinuationToken></ListBucketResult>"#;
        let page: ListBucket = parse(doc, format_args!("list")).unwrap();
        let keys: Vec<_> = page.contents.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["a&b", "A<"]);
        assert_eq!(page.contents[0].etag, "\"e1\"");
        assert_eq!(page.contents[0].size, 3);
        assert_eq!(url_decode(&page.common_prefixes[0].prefix), "d/");
        assert!(page.is_truncated);
        assert_eq!(page.next_continuation_token.as_deref(), Some("t"));
        let empty: ListBucket = parse("<ListBucketResult/>", format_args!("list")).unwrap();
        assert!(empty.contents.is_empty() && !empty.is_truncated);
        let Err(e) = parse::<ListBucket>("<html>proxy error", format_args!("GET b")) else {
            panic!("HTML read as a listing")
        };
        assert!(e.message.starts_with("GET b: the answer is not"), "{e}");
        assert_eq!(url_decode("a%20b%2Fc%C3%A9+%zz%4"), "a b/cé+%zz%4");
    }

    #[test]
    fn writes_what_it_reads() {
        let tags = Tagging {
            tag_set: TagSet {
                tags: vec![Tag {
                    key: "<a&'\">".into(),
                    value: " two  spaces ".into(),
                }],
            },
        };
        let doc = tags.to_xml();
        assert!(
            doc.starts_with("<Tagging><TagSet><Tag><Key>&lt;a&amp;"),
            "{doc}"
        );
        let back: Tagging = parse(&doc, format_args!("tags")).unwrap();
        assert_eq!(back.tag_set.tags[0].key, "<a&'\">");
        assert_eq!(back.tag_set.tags[0].value, " two  spaces ");
        let doc = complete_multipart_document(&[(1, "\"e\"".into()), (2, "f".into())]);
        let back: CompleteMultipartUpload = parse(&doc, format_args!("complete")).unwrap();
        let parts: Vec<_> = back
            .parts
            .iter()
            .map(|p| (p.part_number, &p.etag[..]))
            .collect();
        assert_eq!(parts, [(1, "\"e\""), (2, "f")]);
    }
}
