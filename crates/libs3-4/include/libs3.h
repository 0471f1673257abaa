/*
 * libs3.h for s3hpc's libs3.so.4: the C interface of the libs3 4.x line
 * (the one IOR, mdtest and md-workbench build their S3-libs3 backend
 * against), written for s3hpc. Names, enum values, struct layouts and
 * function signatures follow that interface so programs built against it
 * run on s3hpc's library unchanged, and programs built against this file
 * run on any libs3 4.x.
 *
 * How s3hpc serves the calls:
 *   - the host name (from S3_initialize or the bucket context) picks the
 *     transport: file:///dir runs in-process on a POSIX tree under dir;
 *     unix:///path.sock and s3hpc://host:port go to an s3hpc gateway over
 *     its binary RPC; anything else is S3 over HTTP(S), signed with SigV4.
 *     The environment variable S3HPC_LIBS3_HOST overrides every host.
 *   - requests run to completion inside the call; a request context only
 *     has to exist, and running it finds nothing left to do.
 *   - calls outside the data path (ACLs, lifecycle, access logging, copy
 *     of a range into a part) finish with S3StatusNotSupported.
 *   - timeouts are accepted but not applied; a security token and an auth
 *     region are used on HTTP hosts only.
 */
#ifndef LIBS3_H
#define LIBS3_H

#include <stdint.h>
#include <sys/select.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits and defaults -------------------------------------------- */

#define S3_MAX_HOSTNAME_SIZE               255
#define S3_DEFAULT_HOSTNAME                "s3.amazonaws.com"
#define S3_MAX_BUCKET_NAME_SIZE            255
#define S3_MAX_KEY_SIZE                    1024
#define S3_MAX_METADATA_SIZE               2048
#define S3_METADATA_HEADER_NAME_PREFIX     "x-amz-meta-"
#define S3_MAX_METADATA_COUNT \
    (S3_MAX_METADATA_SIZE / (sizeof(S3_METADATA_HEADER_NAME_PREFIX "nv") - 1))
#define S3_MAX_ACL_GRANT_COUNT             100
#define S3_MAX_GRANTEE_EMAIL_ADDRESS_SIZE  128
#define S3_MAX_GRANTEE_USER_ID_SIZE        128
#define S3_MAX_GRANTEE_DISPLAY_NAME_SIZE   128
/* Size of the buffer S3_generate_authenticated_query_string fills. */
#define S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE \
    (sizeof("https:///") + S3_MAX_HOSTNAME_SIZE + (S3_MAX_KEY_SIZE * 3) + \
     sizeof("?AWSAccessKeyId=") + 32 + sizeof("&Expires=") + 32 + \
     sizeof("&Signature=") + 28 + 1)

/* Flags of S3_initialize (accepted; nothing here needs them). */
#define S3_INIT_WINSOCK                    1
#define S3_INIT_VERIFY_PEER                2
#define S3_INIT_ALL                        (S3_INIT_WINSOCK)

#define S3_DEFAULT_REGION                  "us-east-1"

/* ---- status ----------------------------------------------------------
 * Every request ends with one of these. The values are positional: the
 * order is part of the ABI. */
typedef enum
{
    S3StatusOK,

    /* Failures inside the library or its arguments. */
    S3StatusInternalError,
    S3StatusOutOfMemory,
    S3StatusInterrupted,
    S3StatusInvalidBucketNameTooLong,
    S3StatusInvalidBucketNameFirstCharacter,
    S3StatusInvalidBucketNameCharacter,
    S3StatusInvalidBucketNameCharacterSequence,
    S3StatusInvalidBucketNameTooShort,
    S3StatusInvalidBucketNameDotQuadNotation,
    S3StatusQueryParamsTooLong,
    S3StatusFailedToInitializeRequest,
    S3StatusMetaDataHeadersTooLong,
    S3StatusBadMetaData,
    S3StatusBadContentType,
    S3StatusContentTypeTooLong,
    S3StatusBadMD5,
    S3StatusMD5TooLong,
    S3StatusBadCacheControl,
    S3StatusCacheControlTooLong,
    S3StatusBadContentDispositionFilename,
    S3StatusContentDispositionFilenameTooLong,
    S3StatusBadContentEncoding,
    S3StatusContentEncodingTooLong,
    S3StatusBadIfMatchETag,
    S3StatusIfMatchETagTooLong,
    S3StatusBadIfNotMatchETag,
    S3StatusIfNotMatchETagTooLong,
    S3StatusHeadersTooLong,
    S3StatusKeyTooLong,
    S3StatusUriTooLong,
    S3StatusXmlParseFailure,
    S3StatusEmailAddressTooLong,
    S3StatusUserIdTooLong,
    S3StatusUserDisplayNameTooLong,
    S3StatusGroupUriTooLong,
    S3StatusPermissionTooLong,
    S3StatusTargetBucketTooLong,
    S3StatusTargetPrefixTooLong,
    S3StatusTooManyGrants,
    S3StatusBadGrantee,
    S3StatusBadPermission,
    S3StatusXmlDocumentTooLarge,
    S3StatusNameLookupError,
    S3StatusFailedToConnect,
    S3StatusServerFailedVerification,
    S3StatusConnectionFailed,
    S3StatusAbortedByCallback,
    S3StatusNotSupported,

    /* Errors the S3 service reported, by its error code. */
    S3StatusErrorAccessDenied,
    S3StatusErrorAccountProblem,
    S3StatusErrorAmbiguousGrantByEmailAddress,
    S3StatusErrorBadDigest,
    S3StatusErrorBucketAlreadyExists,
    S3StatusErrorBucketAlreadyOwnedByYou,
    S3StatusErrorBucketNotEmpty,
    S3StatusErrorCredentialsNotSupported,
    S3StatusErrorCrossLocationLoggingProhibited,
    S3StatusErrorEntityTooSmall,
    S3StatusErrorEntityTooLarge,
    S3StatusErrorExpiredToken,
    S3StatusErrorIllegalVersioningConfigurationException,
    S3StatusErrorIncompleteBody,
    S3StatusErrorIncorrectNumberOfFilesInPostRequest,
    S3StatusErrorInlineDataTooLarge,
    S3StatusErrorInternalError,
    S3StatusErrorInvalidAccessKeyId,
    S3StatusErrorInvalidAddressingHeader,
    S3StatusErrorInvalidArgument,
    S3StatusErrorInvalidBucketName,
    S3StatusErrorInvalidBucketState,
    S3StatusErrorInvalidDigest,
    S3StatusErrorInvalidEncryptionAlgorithmError,
    S3StatusErrorInvalidLocationConstraint,
    S3StatusErrorInvalidObjectState,
    S3StatusErrorInvalidPart,
    S3StatusErrorInvalidPartOrder,
    S3StatusErrorInvalidPayer,
    S3StatusErrorInvalidPolicyDocument,
    S3StatusErrorInvalidRange,
    S3StatusErrorInvalidRequest,
    S3StatusErrorInvalidSecurity,
    S3StatusErrorInvalidSOAPRequest,
    S3StatusErrorInvalidStorageClass,
    S3StatusErrorInvalidTargetBucketForLogging,
    S3StatusErrorInvalidToken,
    S3StatusErrorInvalidURI,
    S3StatusErrorKeyTooLong,
    S3StatusErrorMalformedACLError,
    S3StatusErrorMalformedPOSTRequest,
    S3StatusErrorMalformedXML,
    S3StatusErrorMaxMessageLengthExceeded,
    S3StatusErrorMaxPostPreDataLengthExceededError,
    S3StatusErrorMetadataTooLarge,
    S3StatusErrorMethodNotAllowed,
    S3StatusErrorMissingAttachment,
    S3StatusErrorMissingContentLength,
    S3StatusErrorMissingRequestBodyError,
    S3StatusErrorMissingSecurityElement,
    S3StatusErrorMissingSecurityHeader,
    S3StatusErrorNoLoggingStatusForKey,
    S3StatusErrorNoSuchBucket,
    S3StatusErrorNoSuchKey,
    S3StatusErrorNoSuchLifecycleConfiguration,
    S3StatusErrorNoSuchUpload,
    S3StatusErrorNoSuchVersion,
    S3StatusErrorNotImplemented,
    S3StatusErrorNotSignedUp,
    S3StatusErrorNoSuchBucketPolicy,
    S3StatusErrorOperationAborted,
    S3StatusErrorPermanentRedirect,
    S3StatusErrorPreconditionFailed,
    S3StatusErrorRedirect,
    S3StatusErrorRestoreAlreadyInProgress,
    S3StatusErrorRequestIsNotMultiPartContent,
    S3StatusErrorRequestTimeout,
    S3StatusErrorRequestTimeTooSkewed,
    S3StatusErrorRequestTorrentOfBucketError,
    S3StatusErrorSignatureDoesNotMatch,
    S3StatusErrorServiceUnavailable,
    S3StatusErrorSlowDown,
    S3StatusErrorTemporaryRedirect,
    S3StatusErrorTokenRefreshRequired,
    S3StatusErrorTooManyBuckets,
    S3StatusErrorUnexpectedContent,
    S3StatusErrorUnresolvableGrantByEmailAddress,
    S3StatusErrorUserKeyMustBeSpecified,
    S3StatusErrorQuotaExceeded,
    S3StatusErrorUnknown,

    /* HTTP failures without an S3 error document. */
    S3StatusHttpErrorMovedTemporarily,
    S3StatusHttpErrorBadRequest,
    S3StatusHttpErrorForbidden,
    S3StatusHttpErrorNotFound,
    S3StatusHttpErrorConflict,
    S3StatusHttpErrorUnknown
} S3Status;

typedef enum
{
    S3ProtocolHTTPS = 0,
    S3ProtocolHTTP  = 1
} S3Protocol;

typedef enum
{
    S3UriStyleVirtualHost = 0,
    S3UriStylePath        = 1
} S3UriStyle;

typedef enum
{
    S3GranteeTypeAmazonCustomerByEmail = 0,
    S3GranteeTypeCanonicalUser         = 1,
    S3GranteeTypeAllAwsUsers           = 2,
    S3GranteeTypeAllUsers              = 3,
    S3GranteeTypeLogDelivery           = 4
} S3GranteeType;

typedef enum
{
    S3PermissionRead        = 0,
    S3PermissionWrite       = 1,
    S3PermissionReadACP     = 2,
    S3PermissionWriteACP    = 3,
    S3PermissionFullControl = 4
} S3Permission;

typedef enum
{
    S3CannedAclPrivate                = 0,
    S3CannedAclPublicRead             = 1,
    S3CannedAclPublicReadWrite        = 2,
    S3CannedAclAuthenticatedRead      = 3,
    S3CannedAclBucketOwnerFullControl = 4
} S3CannedAcl;

/* ---- data structures -------------------------------------------------- */

/* Opaque; made by S3_create_request_context. */
typedef struct S3RequestContext S3RequestContext;

/* One metadata entry (name without the x-amz-meta- prefix). */
typedef struct S3NameValue
{
    const char *name;
    const char *value;
} S3NameValue;

/* What a response told about the object, valid during the callback only.
 * Unknown strings are NULL, an unknown time is -1. */
typedef struct S3ResponseProperties
{
    const char *requestId;
    const char *requestId2;
    const char *contentType;
    uint64_t contentLength;
    const char *server;
    const char *eTag;
    int64_t lastModified;           /* seconds since the epoch */
    int metaDataCount;
    const S3NameValue *metaData;
    char usesServerSideEncryption;
} S3ResponseProperties;

typedef struct S3AclGrant
{
    S3GranteeType granteeType;
    union
    {
        struct
        {
            char emailAddress[S3_MAX_GRANTEE_EMAIL_ADDRESS_SIZE];
        } amazonCustomerByEmail;
        struct
        {
            char id[S3_MAX_GRANTEE_USER_ID_SIZE];
            char displayName[S3_MAX_GRANTEE_DISPLAY_NAME_SIZE];
        } canonicalUser;
    } grantee;
    S3Permission permission;
} S3AclGrant;

/* Where a bucket lives and who is asking. hostName NULL means the
 * default given to S3_initialize; securityToken and authRegion may be
 * NULL. */
typedef struct S3BucketContext
{
    const char *hostName;
    const char *bucketName;
    S3Protocol protocol;
    S3UriStyle uriStyle;
    const char *accessKeyId;
    const char *secretAccessKey;
    const char *securityToken;
    const char *authRegion;
} S3BucketContext;

/* One object of a bucket listing. */
typedef struct S3ListBucketContent
{
    const char *key;
    int64_t lastModified;
    const char *eTag;
    uint64_t size;
    const char *ownerId;
    const char *ownerDisplayName;
} S3ListBucketContent;

/* One upload of a multipart-uploads listing. */
typedef struct S3ListMultipartUpload
{
    const char *key;
    const char *uploadId;
    const char *initiatorId;
    const char *initiatorDisplayName;
    const char *ownerId;
    const char *ownerDisplayName;
    const char *storageClass;
    int64_t initiated;
} S3ListMultipartUpload;

/* One part of a parts listing. */
typedef struct S3ListPart
{
    const char *eTag;
    int64_t lastModified;
    uint64_t partNumber;
    uint64_t size;
} S3ListPart;

/* Optional properties of an object being written (contentType and
 * metaData are stored; the rest is accepted). */
typedef struct S3PutProperties
{
    const char *contentType;
    const char *md5;
    const char *cacheControl;
    const char *contentDispositionFilename;
    const char *contentEncoding;
    int64_t expires;                /* -1: none */
    S3CannedAcl cannedAcl;
    int metaDataCount;
    const S3NameValue *metaData;
    char useServerSideEncryption;
} S3PutProperties;

/* Conditions a GET checks before sending data (-1 / NULL: none). */
typedef struct S3GetConditions
{
    int64_t ifModifiedSince;
    int64_t ifNotModifiedSince;
    const char *ifMatchETag;
    const char *ifNotMatchETag;
} S3GetConditions;

/* Explanation passed with a failed request's status. */
typedef struct S3ErrorDetails
{
    const char *message;
    const char *resource;
    const char *furtherDetails;
    int extraDetailsCount;
    S3NameValue *extraDetails;
} S3ErrorDetails;

/* ---- callbacks ---------------------------------------------------------
 * A callback returning anything but S3StatusOK stops its request, which
 * then completes with that status. */

typedef S3Status (S3ResponsePropertiesCallback)
    (const S3ResponseProperties *properties, void *callbackData);

/* Called exactly once per request, last. */
typedef void (S3ResponseCompleteCallback)(S3Status status,
                                          const S3ErrorDetails *errorDetails,
                                          void *callbackData);

typedef S3Status (S3ListServiceCallback)(const char *ownerId,
                                         const char *ownerDisplayName,
                                         const char *bucketName,
                                         int64_t creationDateSeconds,
                                         void *callbackData);

typedef S3Status (S3ListBucketCallback)(int isTruncated,
                                        const char *nextMarker,
                                        int contentsCount,
                                        const S3ListBucketContent *contents,
                                        int commonPrefixesCount,
                                        const char **commonPrefixes,
                                        void *callbackData);

/* Fills up to bufferSize bytes; returns the count, 0 at the end, or a
 * negative number to abort the request. */
typedef int (S3PutObjectDataCallback)(int bufferSize, char *buffer,
                                      void *callbackData);

/* Receives the next bufferSize bytes of the object. */
typedef S3Status (S3GetObjectDataCallback)(int bufferSize, const char *buffer,
                                           void *callbackData);

typedef S3Status (S3MultipartInitialResponseCallback)(const char *upload_id,
                                                      void *callbackData);

typedef S3Status (S3ListMultipartUploadsResponseCallback)
    (int isTruncated, const char *nextKeyMarker,
     const char *nextUploadIdMarker, int uploadsCount,
     const S3ListMultipartUpload *uploads, int commonPrefixesCount,
     const char **commonPrefixes, void *callbackData);

typedef S3Status (S3ListPartsResponseCallback)
    (int isTruncated, const char *nextPartNumberMarker,
     const char *initiatorId, const char *initiatorDisplayName,
     const char *ownerId, const char *ownerDisplayName,
     const char *storageClass, int partsCount, int lastPartNumber,
     const S3ListPart *parts, void *callbackData);

typedef S3Status (S3MultipartCommitResponseCallback)(const char *location,
                                                     const char *etag,
                                                     void *callbackData);

/* Part of the interface; never called here (there is no curl). */
typedef S3Status (*S3SetupCurlCallback)(void *curlMulti, void *curlEasy,
                                        void *setupData);

/* ---- handlers: the callbacks of one kind of request ------------------- */

typedef struct S3ResponseHandler
{
    S3ResponsePropertiesCallback *propertiesCallback;
    S3ResponseCompleteCallback *completeCallback;
} S3ResponseHandler;

typedef struct S3ListServiceHandler
{
    S3ResponseHandler responseHandler;
    S3ListServiceCallback *listServiceCallback;
} S3ListServiceHandler;

typedef struct S3ListBucketHandler
{
    S3ResponseHandler responseHandler;
    S3ListBucketCallback *listBucketCallback;
} S3ListBucketHandler;

typedef struct S3PutObjectHandler
{
    S3ResponseHandler responseHandler;
    S3PutObjectDataCallback *putObjectDataCallback;
} S3PutObjectHandler;

typedef struct S3GetObjectHandler
{
    S3ResponseHandler responseHandler;
    S3GetObjectDataCallback *getObjectDataCallback;
} S3GetObjectHandler;

typedef struct S3MultipartInitialHandler {
    S3ResponseHandler responseHandler;
    S3MultipartInitialResponseCallback *responseXmlCallback;
} S3MultipartInitialHandler;

/* putObjectDataCallback supplies the CompleteMultipartUpload document
 * (<Part><PartNumber>n</PartNumber><ETag>e</ETag></Part>...). */
typedef struct S3MultipartCommitHandler
{
    S3ResponseHandler responseHandler;
    S3PutObjectDataCallback *putObjectDataCallback;
    S3MultipartCommitResponseCallback *responseXmlCallback;
} S3MultipartCommitHandler;

typedef struct S3ListMultipartUploadsHandler
{
    S3ResponseHandler responseHandler;
    S3ListMultipartUploadsResponseCallback *responseXmlCallback;
} S3ListMultipartUploadsHandler;

typedef struct S3ListPartsHandler
{
    S3ResponseHandler responseHandler;
    S3ListPartsResponseCallback *responseXmlCallback;
} S3ListPartsHandler;

typedef struct S3AbortMultipartUploadHandler
{
    S3ResponseHandler responseHandler;
} S3AbortMultipartUploadHandler;

/* ---- library setup and helpers ---------------------------------------- */

S3Status S3_initialize(const char *userAgentInfo, int flags,
                       const char *defaultS3HostName);

void S3_deinitialize();

const char *S3_get_status_name(S3Status status);

S3Status S3_validate_bucket_name(const char *bucketName, S3UriStyle uriStyle);

S3Status S3_convert_acl(char *aclXml, char *ownerId, char *ownerDisplayName,
                        int *aclGrantCountReturn, S3AclGrant *aclGrants);

int S3_status_is_retryable(S3Status status);

/* ---- request contexts -------------------------------------------------- */

S3Status S3_create_request_context(S3RequestContext **requestContextReturn);

S3Status S3_create_request_context_ex(S3RequestContext **requestContextReturn,
                                      void *curlMulti,
                                      S3SetupCurlCallback setupCurlCallback,
                                      void *setupCurlCallbackData);

void S3_destroy_request_context(S3RequestContext *requestContext);

S3Status S3_runall_request_context(S3RequestContext *requestContext);

S3Status S3_runonce_request_context(S3RequestContext *requestContext,
                                    int *requestsRemainingReturn);

S3Status S3_process_request_context(S3RequestContext *requestContext);

S3Status S3_get_request_context_fdsets(S3RequestContext *requestContext,
                                       fd_set *readFdSet, fd_set *writeFdSet,
                                       fd_set *exceptFdSet, int *maxFd);

int64_t S3_get_request_context_timeout(S3RequestContext *requestContext);

void S3_set_request_context_verify_peer(S3RequestContext *requestContext,
                                        int verifyPeer);

/* A presigned (SigV4) URL for httpMethod (NULL: GET) on key, valid for
 * expires seconds (negative: the seven-day maximum). HTTP hosts only. */
S3Status S3_generate_authenticated_query_string
    (char *buffer, const S3BucketContext *bucketContext,
     const char *key, int expires, const char *resource,
     const char *httpMethod);

/* ---- service and buckets ----------------------------------------------- */

void S3_list_service(S3Protocol protocol, const char *accessKeyId,
                     const char *secretAccessKey, const char *securityToken,
                     const char *hostName, const char *authRegion,
                     S3RequestContext *requestContext,
                     int timeoutMs,
                     const S3ListServiceHandler *handler, void *callbackData);

void S3_test_bucket(S3Protocol protocol, S3UriStyle uriStyle,
                    const char *accessKeyId, const char *secretAccessKey,
                    const char *securityToken, const char *hostName,
                    const char *bucketName, const char *authRegion,
                    int locationConstraintReturnSize,
                    char *locationConstraintReturn,
                    S3RequestContext *requestContext,
                    int timeoutMs,
                    const S3ResponseHandler *handler, void *callbackData);

void S3_create_bucket(S3Protocol protocol, const char *accessKeyId,
                      const char *secretAccessKey, const char *securityToken,
                      const char *hostName, const char *bucketName,
                      const char *authRegion, S3CannedAcl cannedAcl,
                      const char *locationConstraint,
                      S3RequestContext *requestContext,
                      int timeoutMs,
                      const S3ResponseHandler *handler, void *callbackData);

void S3_delete_bucket(S3Protocol protocol, S3UriStyle uriStyle,
                      const char *accessKeyId, const char *secretAccessKey,
                      const char *securityToken, const char *hostName,
                      const char *bucketName, const char *authRegion,
                      S3RequestContext *requestContext,
                      int timeoutMs,
                      const S3ResponseHandler *handler, void *callbackData);

void S3_list_bucket(const S3BucketContext *bucketContext,
                    const char *prefix, const char *marker,
                    const char *delimiter, int maxkeys,
                    S3RequestContext *requestContext,
                    int timeoutMs,
                    const S3ListBucketHandler *handler, void *callbackData);

/* ---- objects ------------------------------------------------------------ */

void S3_put_object(const S3BucketContext *bucketContext, const char *key,
                   uint64_t contentLength,
                   const S3PutProperties *putProperties,
                   S3RequestContext *requestContext,
                   int timeoutMs,
                   const S3PutObjectHandler *handler, void *callbackData);

void S3_copy_object(const S3BucketContext *bucketContext,
                    const char *key, const char *destinationBucket,
                    const char *destinationKey,
                    const S3PutProperties *putProperties,
                    int64_t *lastModifiedReturn, int eTagReturnSize,
                    char *eTagReturn, S3RequestContext *requestContext,
                    int timeoutMs,
                    const S3ResponseHandler *handler, void *callbackData);

void S3_copy_object_range(const S3BucketContext *bucketContext,
                          const char *key, const char *destinationBucket,
                          const char *destinationKey,
                          const int partNo, const char *uploadId,
                          const unsigned long startOffset, const unsigned long count,
                          const S3PutProperties *putProperties,
                          int64_t *lastModifiedReturn, int eTagReturnSize,
                          char *eTagReturn, S3RequestContext *requestContext,
                          int timeoutMs,
                          const S3ResponseHandler *handler, void *callbackData);

/* byteCount 0: from startByte to the end. */
void S3_get_object(const S3BucketContext *bucketContext, const char *key,
                   const S3GetConditions *getConditions,
                   uint64_t startByte, uint64_t byteCount,
                   S3RequestContext *requestContext,
                   int timeoutMs,
                   const S3GetObjectHandler *handler, void *callbackData);

void S3_head_object(const S3BucketContext *bucketContext, const char *key,
                    S3RequestContext *requestContext,
                    int timeoutMs,
                    const S3ResponseHandler *handler, void *callbackData);

void S3_delete_object(const S3BucketContext *bucketContext, const char *key,
                      S3RequestContext *requestContext,
                      int timeoutMs,
                      const S3ResponseHandler *handler, void *callbackData);

/* ---- outside the data path: complete with S3StatusNotSupported -------- */

void S3_get_acl(const S3BucketContext *bucketContext, const char *key,
                char *ownerId, char *ownerDisplayName,
                int *aclGrantCountReturn, S3AclGrant *aclGrants,
                S3RequestContext *requestContext,
                int timeoutMs,
                const S3ResponseHandler *handler, void *callbackData);

void S3_set_acl(const S3BucketContext *bucketContext, const char *key,
                const char *ownerId, const char *ownerDisplayName,
                int aclGrantCount, const S3AclGrant *aclGrants,
                S3RequestContext *requestContext,
                int timeoutMs,
                const S3ResponseHandler *handler, void *callbackData);

void S3_get_lifecycle(const S3BucketContext *bucketContext,
                      char *lifecycleXmlDocumentReturn, int lifecycleXmlDocumentBufferSize,
                      S3RequestContext *requestContext,
                      int timeoutMs,
                      const S3ResponseHandler *handler, void *callbackData);

void S3_set_lifecycle(const S3BucketContext *bucketContext,
                      const char *lifecycleXmlDocument,
                      S3RequestContext *requestContext,
                      int timeoutMs,
                      const S3ResponseHandler *handler, void *callbackData);

void S3_get_server_access_logging(const S3BucketContext *bucketContext,
                                  char *targetBucketReturn,
                                  char *targetPrefixReturn,
                                  int *aclGrantCountReturn,
                                  S3AclGrant *aclGrants,
                                  S3RequestContext *requestContext,
                                  int timeoutMs,
                                  const S3ResponseHandler *handler,
                                  void *callbackData);

void S3_set_server_access_logging(const S3BucketContext *bucketContext,
                                  const char *targetBucket,
                                  const char *targetPrefix, int aclGrantCount,
                                  const S3AclGrant *aclGrants,
                                  S3RequestContext *requestContext,
                                  int timeoutMs,
                                  const S3ResponseHandler *handler,
                                  void *callbackData);

/* ---- multipart uploads -------------------------------------------------- */

void S3_initiate_multipart(S3BucketContext *bucketContext, const char *key,
                           S3PutProperties *putProperties,
                           S3MultipartInitialHandler *handler,
                           S3RequestContext *requestContext,
                           int timeoutMs,
                           void *callbackData);

/* seq is the part number (from 1); the part's ETag arrives in the
 * properties callback. */
void S3_upload_part(S3BucketContext *bucketContext, const char *key,
                    S3PutProperties * putProperties,
                    S3PutObjectHandler *handler,
                    int seq, const char *upload_id, int partContentLength,
                    S3RequestContext *requestContext,
                    int timeoutMs,
                    void *callbackData);

/* contentLength is the length of the document the commit handler's data
 * callback supplies. */
void S3_complete_multipart_upload(S3BucketContext *bucketContext,
                                  const char *key,
                                  S3MultipartCommitHandler *handler,
                                  const char *upload_id,
                                  int contentLength,
                                  S3RequestContext *requestContext,
                                  int timeoutMs,
                                  void *callbackData);

void S3_list_parts(S3BucketContext *bucketContext, const char *key,
                   const char *partnumbermarker,
                   const char *uploadid, const char *encodingtype,
                   int maxparts, S3RequestContext *requestContext,
                   int timeoutMs,
                   const S3ListPartsHandler *handler, void *callbackData);

/* The handler's callbacks receive NULL callback data. */
void S3_abort_multipart_upload(S3BucketContext *bucketContext, const char *key,
                               const char *uploadId,
                               int timeoutMs,
                               S3AbortMultipartUploadHandler *handler);

void S3_list_multipart_uploads(S3BucketContext *bucketContext,
                               const char *prefix, const char *keymarker,
                               const char *uploadidmarker,
                               const char *encodingtype, const char *delimiter,
                               int maxuploads, S3RequestContext *requestContext,
                               int timeoutMs,
                               const S3ListMultipartUploadsHandler *handler,
                               void *callbackData);

#ifdef __cplusplus
}
#endif

#endif /* LIBS3_H */
