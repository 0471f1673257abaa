//! The Rust mirrors of the 4.x types against include/libs3.h: every size,
//! alignment, field offset, constant and status value that `c/layout4.c`
//! (compiled by build.rs against that header) exports.

use s3_4::*;
use s3hpc_libs3_core::check_layout as layout;
use s3hpc_libs3_core::layout::{c_table as table, Entry};
use std::collections::HashMap;
use std::ffi::CStr;

extern "C" {
    static s3hpc_layout4: [Entry; 0];
    static s3hpc_status4: [Entry; 0];
}

#[test]
fn every_struct_matches_the_header() {
    // SAFETY: a static C table.
    let entries = unsafe { table(s3hpc_layout4.as_ptr()) };
    let map: HashMap<&str, i64> = entries.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let mut fields = 0;
    fields += layout!(map, "S3NameValue", S3NameValue { "name": name, "value": value });
    fields += layout!(map, "S3ResponseProperties", S3ResponseProperties {
        "requestId": base.request_id, "requestId2": base.request_id2,
        "contentType": base.content_type, "contentLength": base.content_length,
        "server": base.server, "eTag": base.e_tag, "lastModified": base.last_modified,
        "metaDataCount": base.meta_data_count, "metaData": base.meta_data,
        "usesServerSideEncryption": uses_server_side_encryption });
    fields += layout!(map, "S3AclGrant", S3AclGrant {
        "granteeType": grantee_type, "grantee": grantee, "permission": permission });
    fields += layout!(map, "S3BucketContext", S3BucketContext {
        "hostName": base.host_name, "bucketName": base.bucket_name, "protocol": base.protocol,
        "uriStyle": base.uri_style, "accessKeyId": base.access_key_id,
        "secretAccessKey": base.secret_access_key, "securityToken": security_token,
        "authRegion": auth_region });
    fields += layout!(map, "S3ListBucketContent", S3ListBucketContent {
        "key": key, "lastModified": last_modified, "eTag": e_tag, "size": size,
        "ownerId": owner_id, "ownerDisplayName": owner_display_name });
    fields += layout!(map, "S3ListMultipartUpload", S3ListMultipartUpload {
        "key": key, "uploadId": upload_id, "initiatorId": initiator_id,
        "initiatorDisplayName": initiator_display_name, "ownerId": owner_id,
        "ownerDisplayName": owner_display_name, "storageClass": storage_class,
        "initiated": initiated });
    fields += layout!(map, "S3ListPart", S3ListPart {
        "eTag": e_tag, "lastModified": last_modified, "partNumber": part_number, "size": size });
    fields += layout!(map, "S3PutProperties", S3PutProperties {
        "contentType": base.content_type, "md5": base.md5, "cacheControl": base.cache_control,
        "contentDispositionFilename": base.content_disposition_filename,
        "contentEncoding": base.content_encoding, "expires": base.expires,
        "cannedAcl": base.canned_acl, "metaDataCount": base.meta_data_count,
        "metaData": base.meta_data, "useServerSideEncryption": use_server_side_encryption });
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
    fields += layout!(map, "S3MultipartInitialHandler", S3MultipartInitialHandler {
        "responseHandler": response_handler, "responseXmlCallback": response_xml_callback });
    fields += layout!(map, "S3MultipartCommitHandler", S3MultipartCommitHandler {
        "responseHandler": response_handler, "putObjectDataCallback": put_object_data_callback,
        "responseXmlCallback": response_xml_callback });
    fields += layout!(map, "S3ListMultipartUploadsHandler", S3ListMultipartUploadsHandler {
        "responseHandler": response_handler, "responseXmlCallback": response_xml_callback });
    fields += layout!(map, "S3ListPartsHandler", S3ListPartsHandler {
        "responseHandler": response_handler, "responseXmlCallback": response_xml_callback });
    fields += layout!(map, "S3AbortMultipartUploadHandler", S3AbortMultipartUploadHandler {
        "responseHandler": response_handler });
    // Every struct entry of the C table was compared (20 structs, each
    // with size and align).
    let struct_entries = entries
        .iter()
        .filter(|(k, _)| k.contains('.') || k.contains('#'))
        .count();
    assert_eq!(struct_entries, fields + 20 * 2);
    assert_eq!(map["S3ProtocolHTTPS"], S3_PROTOCOL_HTTPS as i64);
    assert_eq!(
        map["S3UriStyleVirtualHost"],
        S3_URI_STYLE_VIRTUAL_HOST as i64
    );
    assert_eq!(
        map["S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE"],
        S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE as i64
    );
    assert_eq!(std::mem::size_of::<S3Status>(), 4);
}

#[test]
fn every_status_value_and_name_matches_the_header() {
    // SAFETY: a static C table.
    let c = unsafe { table(s3hpc_status4.as_ptr()) };
    assert_eq!(c.len(), ALL_STATUSES.len(), "status count");
    for ((c_name, c_value), (status, name)) in c.iter().zip(ALL_STATUSES) {
        assert_eq!(&name[..name.len() - 1], c_name, "status order");
        assert_eq!(status.0 as i64, *c_value, "value of S3Status{c_name}");
        // SAFETY: returns a static NUL-terminated string.
        let got = unsafe { CStr::from_ptr(S3_get_status_name(*status)) };
        assert_eq!(got.to_str().unwrap(), c_name);
    }
    // SAFETY: as above.
    let unknown = unsafe { CStr::from_ptr(S3_get_status_name(S3Status(-1))) };
    assert_eq!(unknown.to_str().unwrap(), "Unknown");
}
