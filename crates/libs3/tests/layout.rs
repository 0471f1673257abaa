//! The Rust mirrors of libs3 2.0's types against the real header: every
//! size, alignment, field offset and status value that `c/layout2.c`
//! (compiled by build.rs against /usr/include/libs3.h) exports.
#![cfg(libs3_h)]

use s3::abi2::*;
use s3hpc_libs3_core::check_layout as layout;
use s3hpc_libs3_core::layout::{c_table as table, Entry};
use std::ffi::CStr;
use std::mem::size_of;

extern "C" {
    static s3hpc_layout2: [Entry; 0];
    static s3hpc_status2: [Entry; 0];
}

#[test]
fn every_struct_matches_the_header() {
    // SAFETY: a static C table.
    let entries = unsafe { table(s3hpc_layout2.as_ptr()) };
    let map: std::collections::HashMap<&str, i64> =
        entries.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let mut fields = 0;
    fields += layout!(map, "S3NameValue", S3NameValue { "name": name, "value": value });
    fields += layout!(map, "S3ResponseProperties", S3ResponseProperties {
        "requestId": request_id, "requestId2": request_id2, "contentType": content_type,
        "contentLength": content_length, "server": server, "eTag": e_tag,
        "lastModified": last_modified, "metaDataCount": meta_data_count, "metaData": meta_data });
    fields += layout!(map, "S3AclGrant", S3AclGrant {
        "granteeType": grantee_type, "grantee": grantee, "permission": permission });
    fields += layout!(map, "S3BucketContext", S3BucketContext {
        "hostName": host_name, "bucketName": bucket_name, "protocol": protocol,
        "uriStyle": uri_style, "accessKeyId": access_key_id, "secretAccessKey": secret_access_key });
    fields += layout!(map, "S3ListBucketContent", S3ListBucketContent {
        "key": key, "lastModified": last_modified, "eTag": e_tag, "size": size,
        "ownerId": owner_id, "ownerDisplayName": owner_display_name });
    fields += layout!(map, "S3PutProperties", S3PutProperties {
        "contentType": content_type, "md5": md5, "cacheControl": cache_control,
        "contentDispositionFilename": content_disposition_filename,
        "contentEncoding": content_encoding, "expires": expires, "cannedAcl": canned_acl,
        "metaDataCount": meta_data_count, "metaData": meta_data });
    fields += layout!(map, "S3GetConditions", S3GetConditions {
        "ifModifiedSince": if_modified_since, "ifNotModifiedSince": if_not_modified_since,
        "ifMatchETag": if_match_e_tag, "ifNotMatchETag": if_not_match_e_tag });
    fields += layout!(map, "S3ErrorDetails", S3ErrorDetails {
        "message": message, "resource": resource, "furtherDetails": further_details,
        "extraDetailsCount": extra_details_count, "extraDetails": extra_details });
    fields += layout!(map, "S3ResponseHandler", S3ResponseHandler {
        "propertiesCallback": properties_callback, "completeCallback": complete_callback });
    fields += layout!(map, "S3ListServiceHandler", S3ListServiceHandler {
        "responseHandler": response_handler, "listServiceCallback": list_service_callback });
    fields += layout!(map, "S3ListBucketHandler", S3ListBucketHandler {
        "responseHandler": response_handler, "listBucketCallback": list_bucket_callback });
    fields += layout!(map, "S3PutObjectHandler", S3PutObjectHandler {
        "responseHandler": response_handler, "putObjectDataCallback": put_object_data_callback });
    fields += layout!(map, "S3GetObjectHandler", S3GetObjectHandler {
        "responseHandler": response_handler, "getObjectDataCallback": get_object_data_callback });
    // Every struct entry of the C table was compared (13 structs, each
    // with size and align).
    let struct_entries = entries
        .iter()
        .filter(|(k, _)| k.starts_with("S3") && (k.contains(".") || k.contains("#")))
        .count();
    assert_eq!(struct_entries, fields + 13 * 2);
    assert_eq!(map["S3ProtocolHTTPS"], S3_PROTOCOL_HTTPS as i64);
    assert_eq!(
        map["S3UriStyleVirtualHost"],
        S3_URI_STYLE_VIRTUAL_HOST as i64
    );
    assert_eq!(
        map["S3_MAX_GRANTEE_USER_ID_SIZE"],
        S3_MAX_GRANTEE_USER_ID_SIZE as i64
    );
    assert_eq!(size_of::<S3Status>(), 4);
}

#[test]
fn every_status_value_and_name_matches_the_header() {
    // SAFETY: a static C table.
    let c = unsafe { table(s3hpc_status2.as_ptr()) };
    assert_eq!(c.len(), ALL_STATUSES.len(), "status count");
    for ((c_name, c_value), (status, name)) in c.iter().zip(ALL_STATUSES) {
        assert_eq!(&name[..name.len() - 1], c_name, "status order");
        assert_eq!(status.0 as i64, *c_value, "value of S3Status{c_name}");
        // SAFETY: returns a static NUL-terminated string.
        let got = unsafe { CStr::from_ptr(s3::abi2::S3_get_status_name(*status)) };
        assert_eq!(got.to_str().unwrap(), c_name);
    }
    // SAFETY: as above.
    let unknown = unsafe { CStr::from_ptr(s3::abi2::S3_get_status_name(S3Status(9999))) };
    assert_eq!(unknown.to_str().unwrap(), "Unknown");
}
