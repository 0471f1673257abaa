/* Every libs3 4.x call IOR, mdtest and md-workbench make (and the rest of
 * the data path), compiled against include/libs3.h and linked against
 * libs3.so.4, on the host given on the command line. Failures included:
 * missing bucket, missing key, aborting callbacks, wrong host strings.
 *
 * Usage: calls4 HOST ACCESS_KEY SECRET_KEY
 * Prints one line per failed check and a closing "calls4: N passed,
 * N failed" line; exits 1 if any check failed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libs3.h"

static int passed, failed;

static void check(int ok, int line, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL calls4.c:%d: ", line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
#define CHECK(cond, ...) check((cond), __LINE__, __VA_ARGS__)
#define NAME(s) S3_get_status_name(s)
#define CHECK_STATUS(call, want) \
    CHECK((call).status == (want), "status %s, want %s (%s)", NAME((call).status), \
          NAME(want), (call).message)

enum { MAX_ITEMS = 32, NAME_LEN = 128 };

/* What one request's callbacks saw, and what a put feeds. */
typedef struct {
    S3Status status;
    int completions;
    char message[512];
    /* properties */
    int has_props;
    uint64_t length;
    int64_t last_modified;
    char etag[NAME_LEN];
    char content_type[NAME_LEN];
    int meta_count;
    char meta[4][2][NAME_LEN];
    /* put source: `chunk` bytes per callback; -1 after `abort_put_at` */
    const char *src;
    size_t src_len, pos, chunk, abort_put_at;
    /* get sink; abort after `abort_get_after` chunks when set */
    char *got;
    size_t got_len, got_cap;
    int chunks, abort_get_after;
    /* listings */
    int n, truncated, nprefixes;
    char items[MAX_ITEMS][NAME_LEN];
    uint64_t sizes[MAX_ITEMS];
    char prefixes[MAX_ITEMS][NAME_LEN];
    char next[NAME_LEN], next2[NAME_LEN];
    /* multipart */
    char upload_id[NAME_LEN];
    char commit_etag[NAME_LEN];
} Call;

static void copy_str(char *dst, const char *src)
{
    snprintf(dst, NAME_LEN, "%s", src ? src : "");
}

static void reset(Call *c)
{
    free(c->got);
    memset(c, 0, sizeof(*c));
    c->status = S3StatusInterrupted; /* "never completed" */
}

static S3Status on_props(const S3ResponseProperties *p, void *data)
{
    Call *c = data;
    c->has_props = 1;
    c->length = p->contentLength;
    c->last_modified = p->lastModified;
    copy_str(c->etag, p->eTag);
    copy_str(c->content_type, p->contentType);
    c->meta_count = p->metaDataCount;
    for (int i = 0; i < p->metaDataCount && i < 4; i++) {
        copy_str(c->meta[i][0], p->metaData[i].name);
        copy_str(c->meta[i][1], p->metaData[i].value);
    }
    return S3StatusOK;
}

static void on_complete(S3Status status, const S3ErrorDetails *d, void *data)
{
    Call *c = data;
    c->status = status;
    c->completions++;
    if (d && d->message)
        snprintf(c->message, sizeof(c->message), "%s", d->message);
}

static int on_put(int size, char *buf, void *data)
{
    Call *c = data;
    if (c->abort_put_at && c->pos >= c->abort_put_at)
        return -1;
    size_t n = c->src_len - c->pos;
    if (n > (size_t)size)
        n = size;
    if (c->chunk && n > c->chunk)
        n = c->chunk;
    memcpy(buf, c->src + c->pos, n);
    c->pos += n;
    return (int)n;
}

static S3Status on_get(int size, const char *buf, void *data)
{
    Call *c = data;
    if (c->abort_get_after && c->chunks >= c->abort_get_after)
        return S3StatusAbortedByCallback;
    c->chunks++;
    if (c->got_len + size > c->got_cap) {
        c->got_cap = (c->got_len + size) * 2;
        c->got = realloc(c->got, c->got_cap);
    }
    memcpy(c->got + c->got_len, buf, size);
    c->got_len += size;
    return S3StatusOK;
}

static S3Status on_service(const char *owner, const char *display, const char *bucket,
                           int64_t created, void *data)
{
    (void)owner, (void)display, (void)created;
    Call *c = data;
    if (c->n < MAX_ITEMS)
        copy_str(c->items[c->n++], bucket);
    return S3StatusOK;
}

static S3Status on_list(int truncated, const char *next, int count,
                        const S3ListBucketContent *contents, int nprefixes,
                        const char **prefixes, void *data)
{
    Call *c = data;
    c->truncated = truncated;
    copy_str(c->next, next);
    for (int i = 0; i < count && c->n < MAX_ITEMS; i++, c->n++) {
        copy_str(c->items[c->n], contents[i].key);
        c->sizes[c->n] = contents[i].size;
    }
    for (int i = 0; i < nprefixes && c->nprefixes < MAX_ITEMS; i++)
        copy_str(c->prefixes[c->nprefixes++], prefixes[i]);
    return S3StatusOK;
}

static S3Status on_initiated(const char *upload_id, void *data)
{
    copy_str(((Call *)data)->upload_id, upload_id);
    return S3StatusOK;
}

static S3Status on_commit(const char *location, const char *etag, void *data)
{
    (void)location;
    copy_str(((Call *)data)->commit_etag, etag);
    return S3StatusOK;
}

static S3Status on_parts(int truncated, const char *next, const char *initiator_id,
                         const char *initiator_name, const char *owner_id,
                         const char *owner_name, const char *storage_class, int count,
                         int last, const S3ListPart *parts, void *data)
{
    (void)initiator_id, (void)initiator_name, (void)owner_id, (void)owner_name;
    (void)storage_class, (void)last;
    Call *c = data;
    c->truncated = truncated;
    copy_str(c->next, next);
    for (int i = 0; i < count && c->n < MAX_ITEMS; i++, c->n++) {
        copy_str(c->items[c->n], parts[i].eTag);
        c->sizes[c->n] = parts[i].partNumber;
    }
    return S3StatusOK;
}

static S3Status on_uploads(int truncated, const char *next_key, const char *next_id,
                           int count, const S3ListMultipartUpload *uploads,
                           int nprefixes, const char **prefixes, void *data)
{
    Call *c = data;
    c->truncated = truncated;
    copy_str(c->next, next_key);
    copy_str(c->next2, next_id);
    for (int i = 0; i < count && c->n < MAX_ITEMS; i++, c->n++)
        copy_str(c->items[c->n], uploads[i].uploadId);
    for (int i = 0; i < nprefixes && c->nprefixes < MAX_ITEMS; i++)
        copy_str(c->prefixes[c->nprefixes++], prefixes[i]);
    return S3StatusOK;
}

/* Abort completions carry no callback data: record them here. */
static S3Status abort_status = S3StatusInterrupted;
static void on_abort_complete(S3Status status, const S3ErrorDetails *d, void *data)
{
    (void)d, (void)data;
    abort_status = status;
}

static const S3ResponseHandler response = {on_props, on_complete};
static const S3ListServiceHandler service_handler = {{on_props, on_complete}, on_service};
static const S3ListBucketHandler list_handler = {{on_props, on_complete}, on_list};
static S3PutObjectHandler put_handler = {{on_props, on_complete}, on_put};
static const S3GetObjectHandler get_handler = {{on_props, on_complete}, on_get};
static S3MultipartInitialHandler initial_handler = {{on_props, on_complete}, on_initiated};
static S3MultipartCommitHandler commit_handler = {{on_props, on_complete}, on_put, on_commit};
static const S3ListPartsHandler parts_handler = {{on_props, on_complete}, on_parts};
static const S3ListMultipartUploadsHandler uploads_handler = {{on_props, on_complete},
                                                              on_uploads};
static S3AbortMultipartUploadHandler abort_handler = {{NULL, on_abort_complete}};

static const char *host, *access_key, *secret_key;
static S3BucketContext ctx;
static char *data;
static const size_t DATA_LEN = (5 << 20) + 12345;

static void put(Call *c, const char *key, const char *src, size_t len, size_t chunk,
                const S3PutProperties *props)
{
    reset(c);
    c->src = src;
    c->src_len = len;
    c->chunk = chunk;
    S3_put_object(&ctx, key, len, props, NULL, 0, &put_handler, c);
}

static void get(Call *c, const char *key, uint64_t start, uint64_t count)
{
    reset(c);
    S3_get_object(&ctx, key, NULL, start, count, NULL, 0, &get_handler, c);
}

static void head(Call *c, const char *key)
{
    reset(c);
    S3_head_object(&ctx, key, NULL, 0, &response, c);
}

static void del(Call *c, const char *key)
{
    reset(c);
    S3_delete_object(&ctx, key, NULL, 0, &response, c);
}

static void list(Call *c, const char *prefix, const char *marker, const char *delim, int max)
{
    reset(c);
    S3_list_bucket(&ctx, prefix, marker, delim, max, NULL, 0, &list_handler, c);
}

static int has(const Call *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->items[i], name))
            return 1;
    return 0;
}

static void bucket_call(Call *c, const char *op, const char *bucket)
{
    reset(c);
    if (!strcmp(op, "create"))
        S3_create_bucket(S3ProtocolHTTP, access_key, secret_key, NULL, host, bucket,
                         "us-east-1", S3CannedAclPrivate, NULL, NULL, 0, &response, c);
    else if (!strcmp(op, "delete"))
        S3_delete_bucket(S3ProtocolHTTP, S3UriStylePath, access_key, secret_key, NULL, host,
                         bucket, "us-east-1", NULL, 0, &response, c);
    else {
        char location[64] = "x";
        S3_test_bucket(S3ProtocolHTTP, S3UriStylePath, access_key, secret_key, NULL, host,
                       bucket, "us-east-1", sizeof(location), location, NULL, 0, &response, c);
        if (c->status == S3StatusOK)
            CHECK(location[0] == 0, "test bucket: location %s", location);
    }
}

static void helpers(void)
{
    CHECK(!strcmp(NAME(S3StatusErrorNoSuchKey), "ErrorNoSuchKey"), "status name");
    CHECK(!strcmp(NAME(S3StatusNotSupported), "NotSupported"), "status name");
    CHECK(S3_status_is_retryable(S3StatusFailedToConnect), "retryable");
    CHECK(!S3_status_is_retryable(S3StatusErrorNoSuchKey), "not retryable");
    CHECK(S3_validate_bucket_name("ab", S3UriStylePath) == S3StatusInvalidBucketNameTooShort,
          "short bucket name");
    CHECK(S3_validate_bucket_name("a..b", S3UriStyleVirtualHost) ==
              S3StatusInvalidBucketNameCharacterSequence, "bucket name sequence");
    CHECK(S3_validate_bucket_name("my-bucket", S3UriStyleVirtualHost) == S3StatusOK,
          "good bucket name");
}

static void buckets(void)
{
    Call c = {0};
    bucket_call(&c, "create", ctx.bucketName);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(c.completions == 1, "one completion, got %d", c.completions);
    bucket_call(&c, "test", ctx.bucketName);
    CHECK_STATUS(c, S3StatusOK);
    bucket_call(&c, "test", "abi4-missing");
    CHECK_STATUS(c, S3StatusErrorNoSuchBucket);
    reset(&c);
    S3_list_service(S3ProtocolHTTP, access_key, secret_key, NULL, host, "us-east-1", NULL, 0,
                    &service_handler, &c);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(has(&c, ctx.bucketName), "list service shows the bucket (%d buckets)", c.n);
    reset(&c);
}

static void objects(void)
{
    Call c = {0};
    /* Streaming put: 1000 bytes per callback. */
    put(&c, "dir/a", data, DATA_LEN, 1000, NULL);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(c.pos == DATA_LEN, "put pulled %zu of %zu bytes", c.pos, DATA_LEN);
    CHECK(c.has_props && c.etag[0], "put: ETag in properties");
    /* Put with content type and metadata; head returns them. */
    S3NameValue meta[] = {{"color", "blue"}};
    S3PutProperties props = {"text/plain", NULL, NULL, NULL, NULL, -1, S3CannedAclPrivate,
                             1, meta, 0};
    put(&c, "dir/b", data, 100, 0, &props);
    CHECK_STATUS(c, S3StatusOK);
    head(&c, "dir/b");
    CHECK_STATUS(c, S3StatusOK);
    CHECK(c.length == 100, "head size %llu", (unsigned long long)c.length);
    CHECK(c.etag[0] && c.last_modified > 0, "head ETag and mtime");
    CHECK(!strcmp(c.content_type, "text/plain"), "content type %s", c.content_type);
    CHECK(c.meta_count == 1 && !strcmp(c.meta[0][0], "color") &&
              !strcmp(c.meta[0][1], "blue"), "metadata (%d)", c.meta_count);
    /* Whole get, pushed in several chunks. */
    get(&c, "dir/a", 0, 0);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(c.got_len == DATA_LEN && !memcmp(c.got, data, DATA_LEN), "get bytes (%zu)",
          c.got_len);
    CHECK(c.chunks > 1, "get in chunks (%d)", c.chunks);
    /* Range get, as IOR reads: startByte and byteCount. */
    get(&c, "dir/a", 4096, 70000);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(c.got_len == 70000 && !memcmp(c.got, data + 4096, 70000), "range bytes (%zu)",
          c.got_len);
    /* Conditions. */
    S3GetConditions cond = {-1, -1, "\"no-such-etag\"", NULL};
    reset(&c);
    S3_get_object(&ctx, "dir/a", &cond, 0, 0, NULL, 0, &get_handler, &c);
    CHECK_STATUS(c, S3StatusErrorPreconditionFailed);
    /* Copy. */
    int64_t mtime = 0;
    char etag[64] = "";
    reset(&c);
    S3_copy_object(&ctx, "dir/b", NULL, "copy", NULL, &mtime, sizeof(etag), etag, NULL, 0,
                   &response, &c);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(mtime > 0 && etag[0], "copy returns mtime and ETag");
    get(&c, "copy", 0, 0);
    CHECK(c.got_len == 100 && !memcmp(c.got, data, 100), "copied bytes");
    /* Missing key, missing bucket. */
    head(&c, "nope");
    CHECK_STATUS(c, S3StatusErrorNoSuchKey);
    get(&c, "nope", 0, 0);
    CHECK_STATUS(c, S3StatusErrorNoSuchKey);
    S3BucketContext missing = ctx;
    missing.bucketName = "abi4-missing";
    reset(&c);
    S3_get_object(&missing, "dir/a", NULL, 0, 0, NULL, 0, &get_handler, &c);
    CHECK_STATUS(c, S3StatusErrorNoSuchBucket);
    /* Aborting callbacks: a put source returning -1, a get sink refusing. */
    reset(&c);
    c.src = data;
    c.src_len = DATA_LEN;
    c.chunk = 4096;
    c.abort_put_at = 8192;
    S3_put_object(&ctx, "aborted", DATA_LEN, NULL, NULL, 0, &put_handler, &c);
    CHECK_STATUS(c, S3StatusAbortedByCallback);
    head(&c, "aborted");
    CHECK_STATUS(c, S3StatusErrorNoSuchKey);
    reset(&c);
    c.abort_get_after = 1;
    S3_get_object(&ctx, "dir/a", NULL, 0, 0, NULL, 0, &get_handler, &c);
    CHECK_STATUS(c, S3StatusAbortedByCallback);
    CHECK(c.completions == 1, "one completion after an abort");
    reset(&c);
}

static void listing(void)
{
    Call c = {0};
    put(&c, "top", data, 10, 0, NULL);
    CHECK_STATUS(c, S3StatusOK);
    list(&c, "dir/", NULL, NULL, 0);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(c.n == 2 && has(&c, "dir/a") && has(&c, "dir/b") && !c.truncated,
          "prefix listing (%d)", c.n);
    CHECK(c.sizes[0] == DATA_LEN, "listed size");
    list(&c, NULL, NULL, "/", 0);
    CHECK(c.nprefixes == 1 && !strcmp(c.prefixes[0], "dir/") && has(&c, "top") &&
              has(&c, "copy") && c.n == 2, "delimiter listing (%d keys, %d prefixes)",
          c.n, c.nprefixes);
    /* Pages of two, continued from nextMarker, as IOR deletes a bucket. */
    int pages = 0, total = 0;
    char marker[NAME_LEN] = "";
    do {
        list(&c, NULL, marker[0] ? marker : NULL, NULL, 2);
        CHECK_STATUS(c, S3StatusOK);
        total += c.n;
        copy_str(marker, c.next);
        pages++;
    } while (c.truncated && pages < 10);
    CHECK(total == 4 && pages == 2, "paged listing: %d keys in %d pages", total, pages);
    reset(&c);
}

static void multipart(void)
{
    Call c = {0};
    reset(&c);
    S3_initiate_multipart(&ctx, "mp", NULL, &initial_handler, NULL, 0, &c);
    CHECK_STATUS(c, S3StatusOK);
    char upload_id[NAME_LEN];
    copy_str(upload_id, c.upload_id);
    CHECK(upload_id[0], "upload id");
    const size_t part1 = 5 << 20, part2 = DATA_LEN - part1;
    char etags[2][NAME_LEN];
    for (int i = 0; i < 2; i++) {
        reset(&c);
        c.src = data + (i ? part1 : 0);
        c.src_len = i ? part2 : part1;
        c.chunk = 65536;
        S3_upload_part(&ctx, "mp", NULL, &put_handler, i + 1, upload_id, (int)c.src_len,
                       NULL, 0, &c);
        CHECK_STATUS(c, S3StatusOK);
        copy_str(etags[i], c.etag);
        CHECK(etags[i][0], "part ETag");
    }
    reset(&c);
    S3_list_parts(&ctx, "mp", NULL, upload_id, NULL, 0, NULL, 0, &parts_handler, &c);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(c.n == 2 && c.sizes[0] == 1 && c.sizes[1] == 2 && !c.truncated, "list parts (%d)",
          c.n);
    reset(&c);
    S3_list_parts(&ctx, "mp", NULL, upload_id, NULL, 1, NULL, 0, &parts_handler, &c);
    CHECK(c.n == 1 && c.truncated && !strcmp(c.next, "1"), "list parts, max 1");
    reset(&c);
    S3_list_parts(&ctx, "mp", "1", upload_id, NULL, 0, NULL, 0, &parts_handler, &c);
    CHECK(c.n == 1 && c.sizes[0] == 2, "list parts after marker 1");
    reset(&c);
    S3_list_multipart_uploads(&ctx, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0,
                              &uploads_handler, &c);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(has(&c, upload_id), "list uploads shows the upload (%d)", c.n);
    /* Complete: the caller streams the XML document. */
    char xml[1024];
    int len = snprintf(xml, sizeof(xml),
                       "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
                       "<ETag>%s</ETag></Part><Part><PartNumber>2</PartNumber>"
                       "<ETag>%s</ETag></Part></CompleteMultipartUpload>",
                       etags[0], etags[1]);
    reset(&c);
    c.src = xml;
    c.src_len = len;
    c.chunk = 50;
    S3_complete_multipart_upload(&ctx, "mp", &commit_handler, upload_id, len, NULL, 0, &c);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(c.commit_etag[0], "commit ETag");
    get(&c, "mp", 0, 0);
    CHECK(c.got_len == DATA_LEN && !memcmp(c.got, data, DATA_LEN), "multipart bytes");
    /* A ranged copy into a part, then abort that upload. */
    reset(&c);
    S3_initiate_multipart(&ctx, "mp2", NULL, &initial_handler, NULL, 0, &c);
    copy_str(upload_id, c.upload_id);
    char etag[NAME_LEN] = "";
    reset(&c);
    S3_copy_object_range(&ctx, "dir/a", NULL, "mp2", 1, upload_id, 10, 1000, NULL, NULL,
                         sizeof(etag), etag, NULL, 0, &response, &c);
    CHECK_STATUS(c, S3StatusOK);
    CHECK(etag[0], "copied part ETag");
    S3_abort_multipart_upload(&ctx, "mp2", upload_id, 0, &abort_handler);
    CHECK(abort_status == S3StatusOK, "abort: %s", NAME(abort_status));
    reset(&c);
    S3_list_parts(&ctx, "mp2", NULL, upload_id, NULL, 0, NULL, 0, &parts_handler, &c);
    CHECK_STATUS(c, S3StatusErrorNoSuchUpload);
    S3_abort_multipart_upload(&ctx, "mp2", upload_id, 0, &abort_handler);
    CHECK(abort_status == S3StatusErrorNoSuchUpload, "second abort: %s", NAME(abort_status));
    reset(&c);
    S3_list_multipart_uploads(&ctx, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0,
                              &uploads_handler, &c);
    CHECK(c.n == 0, "no upload left (%d)", c.n);
    /* A broken document. */
    reset(&c);
    S3_initiate_multipart(&ctx, "mp3", NULL, &initial_handler, NULL, 0, &c);
    copy_str(upload_id, c.upload_id);
    reset(&c);
    c.src = "<Complete";
    c.src_len = 9;
    S3_complete_multipart_upload(&ctx, "mp3", &commit_handler, upload_id, 9, NULL, 0, &c);
    CHECK(c.status != S3StatusOK && c.completions == 1, "bad document: %s", NAME(c.status));
    S3_abort_multipart_upload(&ctx, "mp3", upload_id, 0, &abort_handler);
    reset(&c);
}

static void contexts_and_the_rest(int http)
{
    Call c = {0};
    S3RequestContext *rc = NULL;
    CHECK(S3_create_request_context(&rc) == S3StatusOK && rc, "create request context");
    reset(&c);
    S3_head_object(&ctx, "dir/b", rc, 0, &response, &c);
    CHECK(S3_runall_request_context(rc) == S3StatusOK, "runall");
    CHECK_STATUS(c, S3StatusOK);
    int remaining = 7, max_fd = 7;
    CHECK(S3_runonce_request_context(rc, &remaining) == S3StatusOK && remaining == 0,
          "runonce");
    fd_set r, w, e;
    CHECK(S3_get_request_context_fdsets(rc, &r, &w, &e, &max_fd) == S3StatusOK &&
              max_fd == -1, "fdsets");
    S3_destroy_request_context(rc);
    /* Outside the data path: NotSupported through the callback. */
    reset(&c);
    S3_get_acl(&ctx, "dir/b", NULL, NULL, NULL, NULL, NULL, 0, &response, &c);
    CHECK_STATUS(c, S3StatusNotSupported);
    reset(&c);
    S3_set_lifecycle(&ctx, "<LifecycleConfiguration/>", NULL, 0, &response, &c);
    CHECK_STATUS(c, S3StatusNotSupported);
    CHECK(c.completions == 1 && c.message[0], "not supported says why");
    /* Presigned URLs exist for HTTP hosts only. */
    char url[S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE];
    S3Status s = S3_generate_authenticated_query_string(url, &ctx, "dir/b", 600, NULL, "GET");
    if (http) {
        CHECK(s == S3StatusOK && strstr(url, "X-Amz-Signature=") &&
                  strstr(url, "/dir/b?"), "presigned URL: %s %s", NAME(s), url);
        printf("presigned %s\n", url);
    } else
        CHECK(s == S3StatusNotSupported && !url[0], "presign on %s: %s", host, NAME(s));
    reset(&c);
}

static void cleanup(void)
{
    Call c = {0};
    bucket_call(&c, "delete", ctx.bucketName);
    CHECK_STATUS(c, S3StatusErrorBucketNotEmpty);
    const char *keys[] = {"dir/a", "dir/b", "top", "copy", "mp"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
        del(&c, keys[i]);
        CHECK_STATUS(c, S3StatusOK);
    }
    bucket_call(&c, "delete", ctx.bucketName);
    CHECK_STATUS(c, S3StatusOK);
    bucket_call(&c, "test", ctx.bucketName);
    CHECK_STATUS(c, S3StatusErrorNoSuchBucket);
    reset(&c);
}

static void wrong_hosts(void)
{
    Call c = {0};
    struct { const char *host; S3Status want; } cases[] = {
        {"file://relative/path", S3StatusNameLookupError},
        {"ftp://somewhere", S3StatusNameLookupError},
        {"unix:///nonexistent/dir/gw.sock", S3StatusFailedToConnect},
        {"127.0.0.1:1", S3StatusFailedToConnect},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        S3BucketContext bad = ctx;
        bad.hostName = cases[i].host;
        reset(&c);
        S3_head_object(&bad, "k", NULL, 0, &response, &c);
        CHECK(c.status == cases[i].want && c.message[0] && c.completions == 1,
              "host %s: %s (%s)", cases[i].host, NAME(c.status), c.message);
    }
    /* NULL context, NULL key, NULL handler: a status or nothing, no crash. */
    reset(&c);
    S3_head_object(NULL, "k", NULL, 0, &response, &c);
    CHECK_STATUS(c, S3StatusErrorInvalidArgument);
    reset(&c);
    S3_head_object(&ctx, NULL, NULL, 0, &response, &c);
    CHECK_STATUS(c, S3StatusErrorInvalidArgument);
    S3_delete_object(&ctx, "k", NULL, 0, NULL, NULL);
    reset(&c);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s HOST ACCESS_KEY SECRET_KEY\n", argv[0]);
        return 2;
    }
    host = argv[1];
    access_key = argv[2];
    secret_key = argv[3];
    int http = strstr(host, "://") == NULL;
    data = malloc(DATA_LEN);
    for (size_t i = 0; i < DATA_LEN; i++)
        data[i] = (char)(i * 7 + i / 251);
    S3Status s = S3_initialize("calls4", S3_INIT_ALL, host);
    CHECK(s == S3StatusOK, "initialize: %s", NAME(s));
    ctx = (S3BucketContext){NULL, "abi4-bucket", S3ProtocolHTTP, S3UriStylePath,
                            access_key, secret_key, NULL, "us-east-1"};
    helpers();
    buckets();
    objects();
    listing();
    multipart();
    contexts_and_the_rest(http);
    cleanup();
    wrong_hosts();
    S3_deinitialize();
    free(data);
    printf("calls4: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
