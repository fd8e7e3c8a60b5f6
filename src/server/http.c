/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk-daemon's HTTP API (docs/API.md): libmicrohttpd with its internal epoll thread pool
 * (a connection costs a descriptor and a little memory, not a thread; a long poll suspends
 * its connection: longpoll.c), deadlines for headers and bodies (conns.c), a limit per
 * client address, JSON with jansson. This file: requests and their bodies, responses, start
 * and stop. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "server/server_internal.h"

const unsigned server_http_codes[SERVER_N_CODES] = {200, 201, 202, 400, 401, 403, 404,
                                                    405, 409, 413, 422, 500, 503};

void server_config_default(server_config *c)
{
    memset(c, 0, sizeof *c);
    c->max_body = (size_t)256 << 20;   /* 256 MiB: room for uploaded witnesses */
    c->max_body_total = (size_t)1 << 30; /* 4 such bodies at once, not one per connection */
    c->max_wait_s = 60;
    c->connection_limit = 4096;   /* cuzk-daemon lowers it below the open files limit */
    c->per_ip_connection_limit = 64;
    c->connection_timeout_s = 120;
    c->header_timeout_s = 30;
    c->body_min_rate = 64 << 10;   /* 64 KiB/s: 256 MiB in 30 s + 68 min */
    c->http_threads = 8;
    c->retry_after_s = 1;
}


/* ---- responses ---- */

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
    for (size_t i = 0; i < SERVER_N_CODES; i++)
        if (server_http_codes[i] == code) {
            atomic_fetch_add(&s->counts[i], 1);
            return;
        }
}

enum MHD_Result send_text(server *s, struct MHD_Connection *c, unsigned code, char *text,
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
enum MHD_Result send_json(server *s, struct MHD_Connection *c, unsigned code, json_t *obj)
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
void utf8_scrub(char *s)
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

enum MHD_Result send_error(server *s, struct MHD_Connection *c, unsigned code, const char *fmt,
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
    conn_track *t = conns_of(c);
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        *con_cls = rq;
        conns_phase(t, CONN_BODY);   /* the headers are in: the body's deadline from now */
        /* Checks that need no body: answered before it is read. */
        char why[300];
        if (!auth_browser_ok(s, c, why, sizeof why)) {
            rq->answered = true;
            return send_error(s, c, 403, "%s", why);
        }
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
        if (cl && api_parse_u64(cl, &n) && n > s->cfg.max_body) {
            /* A body not far over the limit is read and dropped before the 413: answered
             * first, the connection would be closed under a client still sending, and the
             * reset that follows can lose the answer before the client reads it. A length
             * far beyond, or a client waiting for 100 Continue, is answered at once. */
            const char *ex = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Expect");
            bool waits = ex && !strcasecmp(ex, "100-continue");
            if (n - s->cfg.max_body <= SERVER_DRAIN_MAX && !waits) {
                rq->too_large = true;
                return MHD_YES;
            }
            rq->answered = true;
            return send_error(s, c, 413, "request body of %llu bytes exceeds max_body (%zu bytes)",
                              (unsigned long long)n, s->cfg.max_body);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        conns_body_bytes(t, *upload_size);
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
    if (rq->answered) {
        /* a long poll's wait is over (longpoll.c resumed it): its answer now */
        if (t && atomic_load(&t->poll) == LONGPOLL_RESUMED)
            return api_route(s, c, url, method, rq);
        return MHD_YES;
    }
    rq->answered = true;
    conns_phase(t, CONN_ANSWER);
    if (rq->too_large)
        return send_error(s, c, 413, "request body exceeds max_body (%zu bytes)", s->cfg.max_body);
    if (rq->busy)
        return send_error(s, c, 503, "busy: the request bodies being received exceed "
                                     "max_body_total (%zu bytes); retry",
                          s->cfg.max_body_total);
    return api_route(s, c, url, method, rq);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    server *s = cls;
    req *rq = *con_cls;
    conn_track *t = conns_of(c);
    if (t) {   /* kept open for the next request: its headers' deadline from now */
        atomic_store(&t->poll, LONGPOLL_NONE);
        conns_phase(t, CONN_HEADERS);
    }
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && toe != MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN)
        cuzk_engine_log(s->e, CUZK_LOG_DEBUG, "event=http_abort code=%d", (int)toe);
    if (rq) {
        body_release(s, rq);
        free(rq);
    }
    *con_cls = NULL;
}

/* libmicrohttpd's own messages (a connection refused at a limit, a reset): debug lines. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    server *s = cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    msg[strcspn(msg, "\r\n")] = 0;
    for (char *p = msg; *p; p++)
        if (*p == '"')
            *p = '\'';
    cuzk_engine_log(s->e, CUZK_LOG_DEBUG, "event=http_note msg=\"%s\"", msg);
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
        s->fd[i] = s->lock_fd[i] = -1;
    if (s->cfg.http_threads == 0)
        s->cfg.http_threads = 1;
    cuzk_err r = CUZK_OK;
    if (!s->cfg.no_auth && (!s->cfg.token || !s->cfg.token[0]))
        r = cuzk_error_set(CUZK_EINVAL, "server: no bearer token (and authentication not "
                                        "turned off)");
    if (r == CUZK_OK)
        r = conns_start(s);
    if (r == CUZK_OK)
        r = longpoll_start(s);
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
            MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                MHD_USE_ERROR_LOG,
            0, NULL, NULL, handler, s, MHD_OPTION_LISTEN_SOCKET, s->fd[i],
            MHD_OPTION_THREAD_POOL_SIZE, s->cfg.http_threads, MHD_OPTION_CONNECTION_LIMIT,
            s->cfg.connection_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
            s->cfg.per_ip_connection_limit, MHD_OPTION_CONNECTION_TIMEOUT,
            s->cfg.connection_timeout_s, MHD_OPTION_NOTIFY_COMPLETED, completed, s,
            MHD_OPTION_NOTIFY_CONNECTION, conns_notify, s, MHD_OPTION_UNESCAPE_CALLBACK,
            unescape, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_END);
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
    longpoll_stop(s);   /* libmicrohttpd stops only without suspended connections */
    conns_stop(s);
    for (unsigned i = 0; i < s->n_listen; i++) {
        if (s->mhd[i])
            MHD_stop_daemon(s->mhd[i]);   /* closes the listening socket it was given */
        else if (s->fd[i] >= 0)
            close(s->fd[i]);
        if (s->unix_path[i][0])
            unlink(s->unix_path[i]);
    }
    for (unsigned i = 0; i < SERVER_MAX_LISTEN; i++)
        listen_unlock(s, i);   /* after the socket is gone */
    longpoll_free(s);
    conns_free(s);   /* after the daemons: their close notifications take its lock */
    for (unsigned i = 0; i < SERVER_MAX_ALLOW; i++)
        free(s->allow_real[i]);
    free(s);
}
