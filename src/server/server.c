/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk-daemon's HTTP API (docs/API.md): libmicrohttpd, one thread per connection (so a
 * long poll blocks only its own connection), JSON with jansson. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/server.h"

/* Status codes counted for /metrics. */
static const unsigned http_codes[] = {200, 201, 202, 400, 401, 403, 404, 405, 409, 413, 422, 500, 503};
#define N_CODES (sizeof http_codes / sizeof http_codes[0])

struct server {
    cuzk_engine *e;
    server_config cfg;
    char *allow_real[SERVER_MAX_ALLOW];   /* realpath of each allowed directory */
    unsigned n_listen;
    struct MHD_Daemon *mhd[SERVER_MAX_LISTEN];
    int fd[SERVER_MAX_LISTEN];
    char addr[SERVER_MAX_LISTEN][300];
    char unix_path[SERVER_MAX_LISTEN][sizeof(((struct sockaddr_un *)0)->sun_path)];
    _Atomic uint64_t counts[N_CODES];
    _Atomic size_t body_bytes;   /* buffered request bodies (their capacity), all connections */
};

void server_config_default(server_config *c)
{
    memset(c, 0, sizeof *c);
    c->max_body = (size_t)256 << 20;   /* 256 MiB: room for uploaded witnesses */
    c->max_body_total = (size_t)1 << 30; /* 4 such bodies at once, not one per connection */
    c->max_wait_s = 60;
    c->connection_limit = 256;
    c->connection_timeout_s = 120;
    c->retry_after_s = 1;
}

/* ---- responses ---- */

typedef struct {
    char *body;
    size_t len, cap;
    bool too_large;
    bool busy;       /* the bodies being received at once would pass max_body_total */
    bool answered;   /* a response was queued before the body was read */
} req;

/* Gives back what rq's body held of the server's body budget. */
static void body_release(server *s, req *rq)
{
    atomic_fetch_sub(&s->body_bytes, rq->cap);
    free(rq->body);
    rq->body = NULL;
    rq->len = rq->cap = 0;
}

static void count(server *s, unsigned code)
{
    for (size_t i = 0; i < N_CODES; i++)
        if (http_codes[i] == code) {
            atomic_fetch_add(&s->counts[i], 1);
            return;
        }
}

static enum MHD_Result send_text(server *s, struct MHD_Connection *c, unsigned code, char *text,
                                 const char *ctype)
{
    size_t n = text ? strlen(text) : 0;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(n, text ? text : (char *)"", text ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", ctype);
    if (code == 503) {
        char ra[16];
        snprintf(ra, sizeof ra, "%u", s->cfg.retry_after_s);
        MHD_add_response_header(r, "Retry-After", ra);
    }
    if (code == 401)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    count(s, code);
    return ret;
}

/* Sends obj (stolen) as JSON. */
static enum MHD_Result send_json(server *s, struct MHD_Connection *c, unsigned code, json_t *obj)
{
    char *text = obj ? json_dumps(obj, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(obj);
    if (!text)
        return send_text(s, c, 500, strdup("{\"error\": \"out of memory\"}\n"), "application/json");
    size_t n = strlen(text);
    char *t2 = realloc(text, n + 2);
    if (t2) {
        t2[n] = '\n';
        t2[n + 1] = 0;
        text = t2;
    }
    return send_text(s, c, code, text, "application/json");
}

/* Replaces each byte of an invalid UTF-8 sequence with '?'. Error texts quote what the client
 * sent (a URL, an id, a query value) or cut it short, and jansson refuses a string that is not
 * UTF-8: the answer would be a 500 instead of the error. */
static void utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        unsigned c = *p, n = c < 0x80                ? 0
                             : c >= 0xc2 && c <= 0xdf ? 1
                             : c >= 0xe0 && c <= 0xef ? 2
                             : c >= 0xf0 && c <= 0xf4 ? 3
                                                      : 4;
        uint32_t v = n == 0 ? c : c & (0x3fu >> n);
        unsigned i = 1;
        for (; n < 4 && i <= n && (p[i] & 0xc0) == 0x80; i++)
            v = v << 6 | (p[i] & 0x3fu);
        bool ok = n < 4 && i == n + 1 && !(n == 2 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) &&
                  !(n == 3 && (v < 0x10000 || v > 0x10ffff));
        if (ok)
            p += n + 1;
        else
            *p++ = '?';
    }
}

static enum MHD_Result send_error(server *s, struct MHD_Connection *c, unsigned code, const char *fmt,
                                  ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result send_error(server *s, struct MHD_Connection *c, unsigned code, const char *fmt,
                                  ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    utf8_scrub(msg);
    return send_json(s, c, code, json_pack("{s:s}", "error", msg));
}

/* ---- checks ---- */

/* Constant-time comparison of the Authorization header with "Bearer TOKEN" (the scheme's
 * name is case-insensitive, RFC 7235). */
static bool auth_ok(const server *s, struct MHD_Connection *c)
{
    const char *tok = s->cfg.token;
    if (!tok || !tok[0])
        return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    size_t a = strlen(h), b = strlen(tok);
    unsigned char diff = (unsigned char)(a != b);
    for (size_t i = 0; i < b; i++)
        diff |= (unsigned char)(tok[i] ^ (i < a ? h[i] : 0));
    return diff == 0;
}

/* With --allow-dir: path must resolve inside an allowed directory. Writes the reason. */
static bool path_allowed(const server *s, const char *path, char *why, size_t wlen)
{
    if (s->cfg.n_allow == 0)
        return true;
    char *rp = realpath(path, NULL);
    if (!rp) {
        snprintf(why, wlen, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = false;
    for (unsigned i = 0; i < s->cfg.n_allow && !ok; i++) {
        const char *d = s->allow_real[i];
        size_t n = strlen(d);
        ok = strncmp(rp, d, n) == 0 && (rp[n] == '/' || (n == 1 && d[0] == '/'));
    }
    if (!ok)
        snprintf(why, wlen, "%s is outside the allowed directories (--allow-dir)", path);
    free(rp);
    return ok;
}

/* ---- URLs ---- */

static int hex_val(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
        return (ch | 0x20) - 'a' + 10;
    return -1;
}

/* Unescapes the path and the query values in place, as libmicrohttpd does, except that "%00"
 * stays as it is: the handlers see C strings, where a decoded NUL would cut "example%00x"
 * short to the key "example" (and DELETE it). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *r = s; *r; r++) {
        int hi = r[0] == '%' ? hex_val((unsigned char)r[1]) : -1;
        int lo = hi >= 0 ? hex_val((unsigned char)r[2]) : -1;
        if (lo >= 0 && (hi | lo) != 0) {
            *w++ = (char)(hi << 4 | lo);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return (size_t)(w - s);
}

/* ---- base64 (RFC 4648, padding optional, whitespace ignored) ---- */

static int b64_val(int ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

static unsigned char *b64_decode(const char *in, size_t *out_len)
{
    size_t n = strlen(in);
    unsigned char *out = malloc(n / 4 * 3 + 3);
    if (!out)
        return NULL;
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    bool pad = false;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)in[i];
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (ch == '=') {
            pad = true;
            continue;
        }
        int v = b64_val(ch);
        if (v < 0 || pad) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    if (bits >= 6) {   /* one dangling sextet: not valid base64 */
        free(out);
        return NULL;
    }
    *out_len = o;
    return out;
}

/* ---- witnesses checked at submission ---- */

/* Loads witness i (path or uploaded bytes) and checks it against the key: the same reader the
 * engine's loaders use, so a corrupt or mismatched witness is refused with a 4xx. */
static cuzk_err check_witness(const cuzk_witness_src *w, const cuzk_engine_key_info *k, size_t i,
                              char *why, size_t wlen)
{
    const char *wname = w->path ? w->path : "uploaded .wtns";
    cuzk_wtns *wt = NULL;
    /* a FIFO or a directory is refused, not waited on */
    cuzk_err r = w->path ? cuzk_wtns_load(&wt, w->path)
                         : cuzk_wtns_load_mem(&wt, wname, w->data, w->len);
    if (r != CUZK_OK) {
        const char *d = cuzk_error_detail();
        snprintf(why, wlen, "witness %zu: %s", i, d[0] ? d : cuzk_strerror(r));
        return r;
    }
    if (wt->n != k->n_vars)
        r = CUZK_ESIZE,
        snprintf(why, wlen, "witness %zu (%.300s): %u values, key %s (%.300s%s%.300s) expects %u",
                 i, wname, wt->n, k->id, k->path, k->r1cs[0] ? " for " : "", k->r1cs, k->n_vars);
    else if (!cuzk_fr_is_one(&wt->w[0]))
        r = CUZK_EFORMAT,
        snprintf(why, wlen, "witness %zu (%s): its first value is not 1", i, wname);
    cuzk_wtns_free(wt);
    return r;
}

/* ---- handlers ---- */

/* An unknown id from the engine's calls */
static bool id_unknown(cuzk_err r) { return r == CUZK_ENOTFOUND; }

/* The name of the first member of obj not in known (NULL-terminated), or NULL: a misspelt
 * field ("priorty") is an error rather than silently ignored. */
static const char *unknown_field(json_t *obj, const char *const *known)
{
    const char *name;
    json_t *v;
    json_object_foreach(obj, name, v) {
        size_t i = 0;
        while (known[i] && strcmp(known[i], name) != 0)
            i++;
        if (!known[i])
            return name;
    }
    return NULL;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return true;
}

static json_t *job_json(const cuzk_job_info *ji)
{
    char id[24];
    snprintf(id, sizeof id, "%llu", (unsigned long long)ji->id);
    char err[sizeof ji->error];
    snprintf(err, sizeof err, "%s", ji->error);   /* a reason cut short may end mid-character */
    utf8_scrub(err);
    const cuzk_job_timings *t = &ji->timings;
    json_t *tj = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "queue_ms", t->queue_ms, "srs_ms",
                           t->srs_ms, "load_ms", t->load_ms, "gpu_ms", t->gpu_ms, "finalize_ms",
                           t->finalize_ms, "verify_ms", t->verify_ms, "total_ms", t->total_ms);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:o}", "id", id, "key", ji->key,
                          "priority", cuzk_priority_name(ji->priority), "state",
                          cuzk_job_state_name(ji->state), "error",
                          err[0] ? json_string(err) : json_null(), "partitions",
                          (json_int_t)ji->n_partitions, "partitions_done", (json_int_t)ji->n_done,
                          "timings", tj);
    if (!o)
        return NULL;
    if (ji->state == CUZK_JOB_DONE && ji->proofs) {
        json_t *pa = json_array(), *pu = json_array();
        bool ok = pa && pu;
        for (size_t i = 0; ok && i < ji->n_partitions; i++)
            ok = json_array_append_new(pa, cuzk_proof_json(&ji->proofs[i])) == 0 &&
                 json_array_append_new(pu, cuzk_public_json(ji->publics + i * ji->n_public,
                                                            ji->n_public)) == 0;
        ok = ok && json_object_set(o, "proofs", pa) == 0 && json_object_set(o, "public", pu) == 0;
        json_decref(pa);
        json_decref(pu);
        if (!ok) {   /* out of memory: a 500 rather than an answer without its proofs */
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static enum MHD_Result h_submit(server *s, struct MHD_Connection *c, const req *rq)
{
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    const char *key = NULL, *prio_s = NULL;
    json_t *root = NULL;
    cuzk_witness_src *ws = NULL;
    unsigned char **bufs = NULL;
    size_t n = 0;
    enum MHD_Result ret;
    char why[1200];

    if (ctype && strncasecmp(ctype, "application/octet-stream", 24) == 0) {
        key = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key");
        prio_s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "priority");
        if (!key)
            return send_error(s, c, 400, "a raw .wtns upload needs ?key=ID in the URL");
        if (rq->len == 0)
            return send_error(s, c, 400, "empty body: expected the bytes of a .wtns file");
        n = 1;
        ws = calloc(1, sizeof *ws);
        if (!ws)
            return send_error(s, c, 500, "out of memory");
        ws[0].data = rq->body;
        ws[0].len = rq->len;
    } else {
        json_error_t jerr;
        root = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
            return send_error(s, c, 400, "malformed JSON: line %d column %d: %s", jerr.line,
                              jerr.column, jerr.text);
        if (!json_is_object(root)) {
            ret = send_error(s, c, 400, "the body must be a JSON object");
            goto out;
        }
        static const char *const fields[] = {"key", "priority", "witnesses", NULL};
        const char *unknown = unknown_field(root, fields);
        if (unknown) {
            ret = send_error(s, c, 400,
                             "unknown field \"%.60s\": expected key, priority, witnesses", unknown);
            goto out;
        }
        json_t *jk = json_object_get(root, "key"), *jp = json_object_get(root, "priority");
        json_t *jw = json_object_get(root, "witnesses");
        if (!json_is_string(jk)) {
            ret = send_error(s, c, 400, "\"key\" must be a string (the key id)");
            goto out;
        }
        key = json_string_value(jk);
        if (jp && !json_is_null(jp)) {
            if (!json_is_string(jp)) {
                ret = send_error(s, c, 400, "\"priority\" must be a string: low, normal, high or critical");
                goto out;
            }
            prio_s = json_string_value(jp);
        }
        if (!json_is_array(jw) || json_array_size(jw) == 0) {
            ret = send_error(s, c, 400, "\"witnesses\" must be a non-empty array (one per partition)");
            goto out;
        }
        n = json_array_size(jw);
        ws = calloc(n, sizeof *ws);
        bufs = calloc(n, sizeof *bufs);
        if (!ws || !bufs) {
            ret = send_error(s, c, 500, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *w = json_array_get(jw, i), *x;
            bool one = json_is_object(w) && json_object_size(w) == 1;   /* path or upload */
            if (json_is_string(w)) {
                ws[i].path = json_string_value(w);
            } else if (one && json_is_string(x = json_object_get(w, "path"))) {
                ws[i].path = json_string_value(x);
            } else if (one && json_is_string(x = json_object_get(w, "wtns_base64"))) {
                bufs[i] = b64_decode(json_string_value(x), &ws[i].len);
                if (!bufs[i]) {
                    ret = send_error(s, c, 400, "witnesses[%zu].wtns_base64: not valid base64", i);
                    goto out;
                }
                ws[i].data = bufs[i];
            } else {
                ret = send_error(s, c, 400,
                                 "witnesses[%zu]: expected a path string, {\"path\": P} or "
                                 "{\"wtns_base64\": B}",
                                 i);
                goto out;
            }
        }
    }
    cuzk_priority prio = CUZK_PRIO_NORMAL;
    if (prio_s && !cuzk_priority_parse(&prio, prio_s)) {
        ret = send_error(s, c, 400, "unknown priority \"%.40s\": use low, normal, high or critical",
                         prio_s);
        goto out;
    }
    cuzk_engine_key_info ki;
    if (cuzk_engine_key_get(s->e, &ki, key) != CUZK_OK) {
        cuzk_engine_count_rejected(s->e);
        ret = send_error(s, c, 404, "unknown key \"%.100s\" (register it with POST /v1/keys)", key);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (ws[i].path && !path_allowed(s, ws[i].path, why, sizeof why)) {
            cuzk_engine_count_rejected(s->e);
            ret = send_error(s, c, 403, "witness %zu: %s", i, why);
            goto out;
        }
        if (check_witness(&ws[i], &ki, i, why, sizeof why) != CUZK_OK) {
            cuzk_engine_count_rejected(s->e);
            ret = send_error(s, c, 422, "%s", why);
            goto out;
        }
    }
    uint64_t id;
    cuzk_err r = cuzk_engine_submit(s->e, &id, key, prio, ws, n);
    if (r == CUZK_OK) {
        char ids[24];
        snprintf(ids, sizeof ids, "%llu", (unsigned long long)id);
        ret = send_json(s, c, 202, json_pack("{s:s, s:s, s:I}", "id", ids, "state", "queued",
                                             "partitions", (json_int_t)n));
    } else {
        unsigned code = r == CUZK_EBUSY ? 503 : r == CUZK_ESIZE ? 422 : r == CUZK_ENOMEM ? 500 : 400;
        if (id_unknown(r)) /* the key unregistered since it was looked up above */
            code = 404;
        ret = send_error(s, c, code, "%s", cuzk_error_detail());
    }
out:
    for (size_t i = 0; bufs && i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(ws);
    json_decref(root);
    return ret;
}

static enum MHD_Result h_key_add(server *s, struct MHD_Connection *c, const req *rq)
{
    json_error_t jerr;
    json_t *root = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return send_error(s, c, 400, "malformed JSON: line %d column %d: %s", jerr.line,
                          jerr.column, jerr.text);
    json_t *ji = json_object_get(root, "id"), *jp = json_object_get(root, "path");
    json_t *jr = json_object_get(root, "r1cs"), *jt = json_object_get(root, "trusted");
    json_t *jc = json_object_get(root, "cache");
    enum MHD_Result ret;
    char why[1200];
    cuzk_engine_stats st;
    cuzk_engine_get_stats(s->e, &st);
    static const char *const fields[] = {"id", "path", "r1cs", "trusted", "cache", NULL};
    const char *unknown = json_is_object(root) ? unknown_field(root, fields) : NULL;
    if (!json_is_object(root) || !json_is_string(ji) || !json_is_string(jp)) {
        ret = send_error(s, c, 400, "expected {\"id\": ID, \"path\": PATH} with two strings");
    } else if (unknown) {
        ret = send_error(s, c, 400,
                         "unknown field \"%.60s\": expected id, path, r1cs, trusted, cache",
                         unknown);
    } else if ((jr && !json_is_string(jr)) || (jt && !json_is_boolean(jt)) ||
               (jc && !json_is_boolean(jc))) {
        ret = send_error(s, c, 400,
                         "\"r1cs\" must be a string (the circuit's .r1cs), \"trusted\" and "
                         "\"cache\" booleans");
    } else if (st.shutting_down) {
        ret = send_error(s, c, 503, "shutting down");
    } else if (!path_allowed(s, json_string_value(jp), why, sizeof why) ||
               (jr && !path_allowed(s, json_string_value(jr), why, sizeof why))) {
        ret = send_error(s, c, 403, "%s", why);
    } else {
        cuzk_engine_key_info ki;
        cuzk_engine_key_opts ko = {.r1cs = jr ? json_string_value(jr) : NULL,
                                   .trusted = jt && json_is_true(jt),
                                   .cache = jc && json_is_true(jc)};
        cuzk_err r = cuzk_engine_key_add_ex(s->e, &ki, json_string_value(ji),
                                            json_string_value(jp), &ko);
        /* a key or r1cs file that does not exist (CUZK_ENOTFOUND) is, like one that cannot be
         * read, a 422: the request names it, it is not the resource addressed */
        if (r == CUZK_OK)
            ret = send_json(s, c, ki.existed ? 200 : 201, server_key_json(&ki));
        else
            ret = send_error(s, c, r == CUZK_EINVAL ? 400 : r == CUZK_ENOMEM ? 500 : 422, "%s",
                             cuzk_error_detail());
    }
    json_decref(root);
    return ret;
}

static enum MHD_Result route(server *s, struct MHD_Connection *c, const char *url,
                             const char *method, const req *rq)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0, del = strcmp(method, "DELETE") == 0;

    if (strcmp(url, "/healthz") == 0) {
        if (!get)
            return send_error(s, c, 405, "use GET");
        cuzk_engine_stats st;
        cuzk_engine_get_stats(s->e, &st);
        return send_json(s, c, st.shutting_down ? 503 : 200,
                         json_pack("{s:s}", "status", st.shutting_down ? "shutting down" : "ok"));
    }
    if (strcmp(url, "/v1/status") == 0) {
        if (!get)
            return send_error(s, c, 405, "use GET");
        return send_json(s, c, 200, server_status_json(s->e));
    }
    if (strcmp(url, "/metrics") == 0) {
        if (!get)
            return send_error(s, c, 405, "use GET");
        uint64_t counts[N_CODES];
        for (size_t i = 0; i < N_CODES; i++)
            counts[i] = atomic_load(&s->counts[i]);
        char *t = server_metrics_text(s->e, http_codes, counts, N_CODES,
                                      (uint64_t)atomic_load(&s->body_bytes));
        if (!t)
            return send_error(s, c, 500, "out of memory");
        return send_text(s, c, 200, t, "text/plain; version=0.0.4");
    }
    if (strcmp(url, "/v1/keys") == 0) {
        if (post)
            return h_key_add(s, c, rq);
        if (get) {
            json_t *st = server_status_json(s->e);
            json_t *keys = json_incref(json_object_get(st, "keys"));
            json_decref(st);
            return send_json(s, c, 200, json_pack("{s:o}", "keys", keys ? keys : json_array()));
        }
        return send_error(s, c, 405, "use POST or GET");
    }
    if (strncmp(url, "/v1/keys/", 9) == 0) {
        const char *id = url + 9;
        if (get) {
            cuzk_engine_key_info ki;
            if (cuzk_engine_key_get(s->e, &ki, id) != CUZK_OK)
                return send_error(s, c, 404, "unknown key \"%.100s\"", id);
            return send_json(s, c, 200, server_key_json(&ki));
        }
        if (!del)
            return send_error(s, c, 405, "use GET or DELETE");
        if (cuzk_engine_key_remove(s->e, id) != CUZK_OK)
            return send_error(s, c, 404, "unknown key \"%.100s\"", id);
        return send_json(s, c, 200, json_pack("{s:s, s:b}", "id", id, "removed", 1));
    }
    if (strcmp(url, "/v1/proofs") == 0) {
        if (!post)
            return send_error(s, c, 405, "use POST");
        return h_submit(s, c, rq);
    }
    if (strncmp(url, "/v1/proofs/", 11) == 0) {
        uint64_t id;
        if (!parse_u64(url + 11, &id))
            return send_error(s, c, 404, "unknown job \"%.40s\"", url + 11);
        if (del) {
            cuzk_err r = cuzk_engine_cancel(s->e, id);
            if (id_unknown(r))
                return send_error(s, c, 404, "unknown job %llu", (unsigned long long)id);
            if (r == CUZK_EBUSY)
                return send_error(s, c, 409, "%s", cuzk_error_detail());
            if (r != CUZK_OK)
                return send_error(s, c, 500, "%s", cuzk_error_detail());
            char ids[24];
            snprintf(ids, sizeof ids, "%llu", (unsigned long long)id);
            return send_json(s, c, 200, json_pack("{s:s, s:s}", "id", ids, "state", "cancelled"));
        }
        if (!get)
            return send_error(s, c, 405, "use GET or DELETE");
        double wait = 0;
        const char *w = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "wait");
        if (w) {
            char *end;
            wait = strtod(w, &end);
            if (*end || !(wait >= 0))
                return send_error(s, c, 400, "wait=%.40s: expected seconds (a number >= 0)", w);
            if (wait > s->cfg.max_wait_s)
                wait = s->cfg.max_wait_s;
        }
        cuzk_job_info ji;
        cuzk_err r = cuzk_engine_job_get(s->e, &ji, id, wait, true);
        if (id_unknown(r))
            return send_error(s, c, 404, "unknown job %llu", (unsigned long long)id);
        if (r != CUZK_OK)
            return send_error(s, c, 500, "%s", cuzk_error_detail());
        json_t *o = job_json(&ji);
        cuzk_job_info_release(&ji);
        return send_json(s, c, 200, o);
    }
    return send_error(s, c, 404, "no such endpoint: %s %.200s", method, url);
}

/* Counts the headers that frame a request body. */
typedef struct {
    unsigned content_length, transfer_encoding;
} framing_ctx;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    (void)value;
    framing_ctx *f = cls;
    if (!strcasecmp(key, "Content-Length"))
        f->content_length++;
    else if (!strcasecmp(key, "Transfer-Encoding"))
        f->transfer_encoding++;
    return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)version;
    server *s = cls;
    req *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        *con_cls = rq;
        /* Checks that need no body: answered before it is read. */
        if (strcmp(url, "/healthz") != 0 && !auth_ok(s, c)) {
            rq->answered = true;
            return send_error(s, c, 401, "missing or wrong bearer token");
        }
        /* Framing a proxy in front could read otherwise than this server does (request
         * smuggling): two Content-Length headers, or one beside Transfer-Encoding. */
        framing_ctx fr = {0, 0};
        MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &fr);
        if (fr.content_length > 1 || (fr.content_length && fr.transfer_encoding)) {
            rq->answered = true;
            return send_error(s, c, 400, "ambiguous body framing: %s",
                              fr.content_length > 1 ? "more than one Content-Length header"
                                                    : "Content-Length with Transfer-Encoding");
        }
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        uint64_t n;
        if (cl && parse_u64(cl, &n) && n > s->cfg.max_body) {
            rq->answered = true;
            return send_error(s, c, 413, "request body of %llu bytes exceeds max_body (%zu bytes)",
                              (unsigned long long)n, s->cfg.max_body);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->answered && !rq->too_large && !rq->busy) {
            if (rq->len + *upload_size > s->cfg.max_body) {
                rq->too_large = true;
                body_release(s, rq);
            } else {
                if (rq->len + *upload_size + 1 > rq->cap) {
                    size_t cap = (rq->len + *upload_size + 1) * 2;
                    if (cap > s->cfg.max_body + 1)
                        cap = s->cfg.max_body + 1;
                    /* the growth against the budget of all connections' bodies: many slow
                     * uploads at once must not take max_body each */
                    size_t more = cap - rq->cap;
                    if (atomic_fetch_add(&s->body_bytes, more) + more > s->cfg.max_body_total) {
                        atomic_fetch_sub(&s->body_bytes, more);
                        rq->busy = true;
                        body_release(s, rq);
                        *upload_size = 0;
                        return MHD_YES;
                    }
                    char *b = realloc(rq->body, cap);
                    if (!b) {
                        atomic_fetch_sub(&s->body_bytes, more);
                        return MHD_NO;
                    }
                    rq->body = b;
                    rq->cap = cap;
                }
                memcpy(rq->body + rq->len, upload, *upload_size);
                rq->len += *upload_size;
                rq->body[rq->len] = 0;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->answered)
        return MHD_YES;
    rq->answered = true;
    if (rq->too_large)
        return send_error(s, c, 413, "request body exceeds max_body (%zu bytes)", s->cfg.max_body);
    if (rq->busy)
        return send_error(s, c, 503, "busy: the request bodies being received exceed "
                                     "max_body_total (%zu bytes); retry",
                          s->cfg.max_body_total);
    return route(s, c, url, method, rq);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)c;
    server *s = cls;
    req *rq = *con_cls;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && toe != MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN)
        cuzk_engine_log(s->e, CUZK_LOG_DEBUG, "event=http_abort code=%d", (int)toe);
    if (rq) {
        body_release(s, rq);
        free(rq);
    }
    *con_cls = NULL;
}

/* ---- listeners ---- */

static cuzk_err listen_unix(server *s, unsigned i, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return cuzk_error_set(CUZK_EINVAL, "unix:%s: path too long", path);
    strcpy(sa.sun_path, path);
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (!S_ISSOCK(sb.st_mode))
            return cuzk_error_set(CUZK_EINVAL, "unix:%s: exists and is not a socket", path);
        unlink(path);   /* a stale socket from an earlier run */
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cuzk_error_set(CUZK_EIO, "unix:%s: socket: %s", path, strerror(errno));
    mode_t old = umask(0177);   /* the socket is created 0600: owner only */
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || chmod(path, 0600) != 0 || listen(fd, 128) != 0) {
        int er = errno;
        close(fd);
        return cuzk_error_set(CUZK_EIO, "unix:%s: %s", path, strerror(er));
    }
    s->fd[i] = fd;
    snprintf(s->unix_path[i], sizeof s->unix_path[i], "%s", path);
    snprintf(s->addr[i], sizeof s->addr[i], "unix:%s", path);
    return CUZK_OK;
}

static cuzk_err listen_tcp(server *s, unsigned i, const char *spec)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {   /* [v6]:port */
        const char *rb = strchr(spec, ']');
        if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof host)
            return cuzk_error_set(CUZK_EINVAL, "listen %s: expected [ADDR]:PORT", spec);
        memcpy(host, spec + 1, (size_t)(rb - spec - 1));
        host[rb - spec - 1] = 0;
        port = rb + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon || (size_t)(colon - spec) >= sizeof host)
            return cuzk_error_set(CUZK_EINVAL, "listen %s: expected HOST:PORT or unix:PATH", spec);
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = 0;
        port = colon + 1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (g != 0)
        return cuzk_error_set(CUZK_EINVAL, "listen %s: %s", spec, gai_strerror(g));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    int one = 1;
    int rc = fd < 0 ? -1 : 0;
    if (rc == 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        rc = bind(fd, ai->ai_addr, ai->ai_addrlen);
    }
    if (rc == 0)
        rc = listen(fd, 128);
    int er = errno;
    freeaddrinfo(ai);
    if (rc != 0) {
        if (fd >= 0)
            close(fd);
        return cuzk_error_set(CUZK_EIO, "listen %s: %s", spec, strerror(er));
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char hb[NI_MAXHOST], pb[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, hb, sizeof hb, pb, sizeof pb,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(s->addr[i], sizeof s->addr[i], ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", hb, pb);
    else
        snprintf(s->addr[i], sizeof s->addr[i], "%s", spec);
    s->fd[i] = fd;
    return CUZK_OK;
}

cuzk_err server_start(server **out, cuzk_engine *e, const server_config *c)
{
    *out = NULL;
    server *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_error_set(CUZK_ENOMEM, "server: out of memory");
    s->e = e;
    s->cfg = *c;
    if (s->cfg.n_listen == 0) {
        s->cfg.listen[0] = "127.0.0.1:9820";
        s->cfg.n_listen = 1;
    }
    for (unsigned i = 0; i < SERVER_MAX_LISTEN; i++)
        s->fd[i] = -1;
    cuzk_err r = CUZK_OK;
    for (unsigned i = 0; i < s->cfg.n_allow && r == CUZK_OK; i++) {
        s->allow_real[i] = realpath(s->cfg.allow_dirs[i], NULL);
        if (!s->allow_real[i])
            r = cuzk_error_set(CUZK_EINVAL, "--allow-dir %s: %s", s->cfg.allow_dirs[i], strerror(errno));
    }
    for (unsigned i = 0; i < s->cfg.n_listen && r == CUZK_OK; i++) {
        const char *l = s->cfg.listen[i];
        r = strncmp(l, "unix:", 5) == 0 ? listen_unix(s, i, l + 5) : listen_tcp(s, i, l);
        if (r != CUZK_OK)
            break;
        s->n_listen = i + 1;
        s->mhd[i] = MHD_start_daemon(
            MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
            NULL, NULL, handler, s, MHD_OPTION_LISTEN_SOCKET, s->fd[i], MHD_OPTION_CONNECTION_LIMIT,
            s->cfg.connection_limit, MHD_OPTION_CONNECTION_TIMEOUT, s->cfg.connection_timeout_s,
            MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape,
            NULL, MHD_OPTION_END);
        if (!s->mhd[i])
            r = cuzk_error_set(CUZK_EIO, "%s: libmicrohttpd could not start", s->addr[i]);
        else
            cuzk_engine_log(e, CUZK_LOG_INFO, "event=listen addr=%s", s->addr[i]);
    }
    if (r != CUZK_OK) {
        server_stop(s);
        return r;
    }
    *out = s;
    return CUZK_OK;
}

const char *server_address(const server *s, unsigned i) { return i < s->n_listen ? s->addr[i] : ""; }
unsigned server_n_listeners(const server *s) { return s->n_listen; }

void server_stop(server *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->n_listen; i++) {
        if (s->mhd[i])
            MHD_stop_daemon(s->mhd[i]);   /* closes the listening socket it was given */
        else if (s->fd[i] >= 0)
            close(s->fd[i]);
        if (s->unix_path[i][0])
            unlink(s->unix_path[i]);
    }
    for (unsigned i = 0; i < SERVER_MAX_ALLOW; i++)
        free(s->allow_real[i]);
    free(s);
}
