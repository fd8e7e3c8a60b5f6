/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench's daemon client: HTTP/1.1 with JSON bodies over TCP or a Unix socket (libcurl),
 * following the shapes of docs/API.md: POST /v1/keys, POST /v1/proofs, GET /v1/proofs/JOB
 * with ?wait= long polls, DELETE /v1/proofs/JOB.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

/* Seconds one long poll asks the daemon to wait for the job to finish. */
#define BENCH_POLL_WAIT_S 20
/* Seconds allowed to open a connection before the daemon counts as unreachable. */
#define BENCH_CONNECT_TIMEOUT_S 5

struct bench_conn {
    CURL *curl;
    struct curl_slist *headers;
    char base[512];      /* http://HOST:PORT (no trailing slash) */
    char unix_path[256]; /* "" for TCP */
    char addr[512];      /* as the user wrote it, for messages */
};

int bench_http_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1; }

const char *bench_conn_addr(const bench_conn *c) { return c->addr; }

bench_conn *bench_conn_new(const bench_opts *o)
{
    bench_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    const char *a = o->addr;
    bench_copy(c->addr, sizeof c->addr, a);
    if (!strncmp(a, "unix:", 5)) {
        bench_copy(c->unix_path, sizeof c->unix_path, a + 5);
        snprintf(c->base, sizeof c->base, "http://localhost");
    } else if (!strncmp(a, "http://", 7)) {
        bench_copy(c->base, sizeof c->base, a);
        size_t n = strlen(c->base);
        while (n > 7 && c->base[n - 1] == '/')
            c->base[--n] = 0;
    } else {
        snprintf(c->base, sizeof c->base, "http://%s", a);
    }
    c->curl = curl_easy_init();
    if (!c->curl) {
        free(c);
        return NULL;
    }
    c->headers = curl_slist_append(NULL, "Content-Type: application/json");
    c->headers = curl_slist_append(c->headers, "Expect:"); /* no 100-continue round trip */
    if (o->token && o->token[0]) {
        char h[600];
        snprintf(h, sizeof h, "Authorization: Bearer %s", o->token);
        c->headers = curl_slist_append(c->headers, h);
    }
    return c;
}

void bench_conn_free(bench_conn *c)
{
    if (!c)
        return;
    curl_slist_free_all(c->headers);
    curl_easy_cleanup(c->curl);
    free(c);
}

typedef struct {
    char *p;
    size_t n, cap;
} buf;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    buf *b = ud;
    size_t k = size * nmemb;
    if (b->n + k + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + k + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return 0; /* aborts the transfer */
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, ptr, k);
    b->n += k;
    b->p[b->n] = 0;
    return k;
}

int bench_http(bench_conn *c, const char *method, const char *path, const char *req_json,
               long *status, char **body, char *err, size_t errlen)
{
    char url[1200];
    snprintf(url, sizeof url, "%s%s", c->base, path);
    CURL *h = c->curl;
    buf b = {0};
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (c->unix_path[0])
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->unix_path);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (req_json) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req_json);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(req_json));
    } else if (!strcmp(method, "GET")) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)BENCH_CONNECT_TIMEOUT_S);
    /* A long poll may take BENCH_POLL_WAIT_S; allow a generous margin beyond it. */
    curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)(BENCH_POLL_WAIT_S + 60));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
        free(b.p);
        long oserr = 0;
        curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr);
        if (c->unix_path[0] && rc == CURLE_COULDNT_CONNECT)
            snprintf(err, errlen, "cannot reach the daemon at %s (%s %s): socket %s: %s", c->addr, method, path,
                     c->unix_path, oserr ? strerror((int)oserr) : "cannot connect");
        else
            snprintf(err, errlen, "cannot reach the daemon at %s (%s %s): %s", c->addr, method, path,
                     cerr[0] ? cerr : curl_easy_strerror(rc));
        return -1;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    if (!b.p) {
        b.p = calloc(1, 1);
        if (!b.p) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    *body = b.p;
    return 0;
}

void bench_http_error_text(char *out, size_t outlen, long status, const char *body)
{
    json_t *r = json_loads(body, 0, NULL);
    const char *e = NULL;
    if (r && json_is_object(r)) {
        json_t *v = json_object_get(r, "error");
        if (json_is_string(v))
            e = json_string_value(v);
        else if (json_is_object(v) && json_is_string(json_object_get(v, "message")))
            e = json_string_value(json_object_get(v, "message"));
    }
    if (e)
        snprintf(out, outlen, "HTTP %ld: %s", status, e);
    else
        snprintf(out, outlen, "HTTP %ld: %.200s", status, body);
    /* one line */
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    json_decref(r);
}

int bench_daemon_register_key(bench_conn *c, const bench_opts *o, char *err, size_t errlen)
{
    char *abs = realpath(o->zkey, NULL);
    if (!abs) {
        snprintf(err, errlen, "%s: cannot open", o->zkey);
        return -1;
    }
    json_t *req = json_pack("{s:s, s:s}", "id", o->key, "path", abs);
    free(abs);
    char *txt = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!txt) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    long status = 0;
    char *body = NULL;
    int rc = bench_http(c, "POST", "/v1/keys", txt, &status, &body, err, errlen);
    free(txt);
    if (rc)
        return -1;
    /* 409: the id is registered already, which is what we want. */
    if (status / 100 != 2 && status != 409) {
        char why[400];
        bench_http_error_text(why, sizeof why, status, body);
        snprintf(err, errlen, "the daemon at %s refused key '%s' (%s): %s", c->addr, o->key, o->zkey, why);
        free(body);
        return -1;
    }
    free(body);
    return 0;
}

/* A number of milliseconds: "queue" or "queue_ms", number or numeric string. */
static double stage_ms(json_t *t, const char *name)
{
    char k[32];
    json_t *v = json_object_get(t, name);
    if (!v) {
        snprintf(k, sizeof k, "%s_ms", name);
        v = json_object_get(t, k);
    }
    if (json_is_number(v))
        return json_number_value(v);
    if (json_is_string(v))
        return strtod(json_string_value(v), NULL);
    return -1;
}

/* proof.json object to a cuzk_proof through the library's own strict reader (which takes a
 * path): the text goes into an anonymous memory file named by /proc/self/fd. */
static int proof_from_json(cuzk_proof *p, json_t *obj, char *err, size_t errlen)
{
    char *txt = json_dumps(obj, JSON_COMPACT);
    if (!txt) {
        snprintf(err, errlen, "proof is not JSON");
        return -1;
    }
    int fd = memfd_create("cuzk-bench-proof", MFD_CLOEXEC);
    int rc = -1;
    if (fd < 0) {
        snprintf(err, errlen, "memfd_create failed");
    } else {
        size_t n = strlen(txt), off = 0;
        while (off < n) {
            ssize_t w = write(fd, txt + off, n - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (off != n) {
            snprintf(err, errlen, "memfd write failed");
        } else {
            cuzk_err e = cuzk_proof_read_json(p, path);
            if (e == CUZK_OK)
                rc = 0;
            else
                snprintf(err, errlen, "%s", cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
        }
        close(fd);
    }
    free(txt);
    return rc;
}

/* Fills j from a GET /v1/proofs/JOB answer; returns 1 when the job is in a final state. */
static int parse_job(bench_job *j, json_t *r)
{
    const char *state = json_string_value(json_object_get(r, "state"));
    bench_copy(j->state, sizeof j->state, state ? state : "?");
    if (strcmp(j->state, "done") && strcmp(j->state, "failed") && strcmp(j->state, "cancelled"))
        return 0;
    json_t *e = json_object_get(r, "error");
    if (json_is_string(e))
        bench_copy(j->error, sizeof j->error, json_string_value(e));
    json_t *t = json_object_get(r, "timings");
    for (int s = 0; s < BENCH_NSTAGES; s++)
        j->t[s] = json_is_object(t) ? stage_ms(t, bench_stage_names[s]) : -1;
    if (strcmp(j->state, "done"))
        return 1;

    json_t *proofs = json_object_get(r, "proofs"), *pubs = json_object_get(r, "public");
    size_t n = json_array_size(proofs);
    if (!json_is_array(proofs) || n == 0 || !json_is_array(pubs) || json_array_size(pubs) != n) {
        snprintf(j->state, sizeof j->state, "error");
        snprintf(j->error, sizeof j->error, "job %s is done but its answer lacks proofs/public arrays of one length", j->id);
        return 1;
    }
    size_t npub = json_array_size(json_array_get(pubs, 0));
    j->proofs = calloc(n, sizeof *j->proofs);
    j->pub = calloc(n * npub + 1, sizeof *j->pub);
    if (!j->proofs || !j->pub) {
        snprintf(j->state, sizeof j->state, "error");
        snprintf(j->error, sizeof j->error, "out of memory");
        return 1;
    }
    j->n_proofs = n;
    j->n_pub = npub;
    for (size_t i = 0; i < n; i++) {
        char why[300];
        if (proof_from_json(&j->proofs[i], json_array_get(proofs, i), why, sizeof why)) {
            snprintf(j->state, sizeof j->state, "error");
            snprintf(j->error, sizeof j->error, "job %s: proofs[%zu] is not a valid proof: %s", j->id, i, why);
            return 1;
        }
        json_t *pa = json_array_get(pubs, i);
        if (!json_is_array(pa) || json_array_size(pa) != npub) {
            snprintf(j->state, sizeof j->state, "error");
            snprintf(j->error, sizeof j->error, "job %s: public[%zu] is not an array of %zu values", j->id, i, npub);
            return 1;
        }
        for (size_t k = 0; k < npub; k++) {
            const char *d = json_string_value(json_array_get(pa, k));
            if (!d || cuzk_fr_from_dec(&j->pub[i * npub + k], d) != CUZK_OK) {
                snprintf(j->state, sizeof j->state, "error");
                snprintf(j->error, sizeof j->error, "job %s: public[%zu][%zu] is not a decimal below r", j->id, i, k);
                return 1;
            }
        }
    }
    return 1;
}

static int job_error(bench_job *j, const char *state, const char *msg)
{
    bench_copy(j->state, sizeof j->state, state);
    bench_copy(j->error, sizeof j->error, msg);
    return -1;
}

/* Witnesses go as paths; a daemon that refuses path witnesses (no allow_dir: "path
 * witnesses are off") gets them uploaded instead, for the rest of the run. */
static atomic_bool upload_witnesses;
static pthread_mutex_t upload_mu = PTHREAD_MUTEX_INITIALIZER;
static char **upload_b64;   /* per witness file, made once */

static char *b64_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    for (size_t got; b && (got = fread(b + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            unsigned char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            } else {
                b = nb;
            }
        }
    }
    fclose(f);
    if (!b)
        return NULL;
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(4 * ((n + 2) / 3) + 1), *q = o;
    for (size_t i = 0; o && i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        *q++ = t[v >> 18 & 63];
        *q++ = t[v >> 12 & 63];
        *q++ = i + 1 < n ? t[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? t[v & 63] : '=';
    }
    if (q)
        *q = 0;
    free(b);
    return o;
}

static json_t *witness_list(const bench_opts *o, char *err, size_t elen)
{
    json_t *w = json_array();
    bool up = atomic_load(&upload_witnesses);
    if (up) {
        pthread_mutex_lock(&upload_mu);
        if (!upload_b64)
            upload_b64 = calloc(o->n_witness, sizeof *upload_b64);
        for (size_t i = 0; upload_b64 && i < o->n_witness; i++)
            if (!upload_b64[i])
                upload_b64[i] = b64_file(o->witness[i]);
        pthread_mutex_unlock(&upload_mu);
    }
    for (size_t i = 0; i < o->n_witness; i++) {
        if (up && upload_b64 && upload_b64[i]) {
            json_array_append_new(w, json_pack("{s:s}", "wtns_base64", upload_b64[i]));
            continue;
        }
        if (up) {
            snprintf(err, elen, "witness %s: cannot read it to upload: %s", o->witness[i],
                     upload_b64 ? strerror(errno) : "out of memory");
            json_decref(w);
            return NULL;
        }
        char *abs = realpath(o->witness[i], NULL);
        json_array_append_new(w, json_string(abs ? abs : o->witness[i]));
        free(abs);
    }
    return w;
}

int bench_daemon_run_job(bench_conn *c, const bench_opts *o, bench_job *j)
{
    char err[700];
    double t0 = bench_now_ms();
again:;
    bool sent_paths = !atomic_load(&upload_witnesses);
    json_t *w = witness_list(o, err, sizeof err);
    if (!w) {
        j->latency_ms = bench_now_ms() - t0;
        job_error(j, "failed", err);
        return 0;
    }
    json_t *req = json_pack("{s:s, s:s, s:o}", "key", o->key, "priority", bench_prio_names[j->priority],
                            "witnesses", w);
    char *txt = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!txt)
        return job_error(j, "error", "out of memory");
    long status = 0;
    char *body = NULL;
    int rc = bench_http(c, "POST", "/v1/proofs", txt, &status, &body, err, sizeof err);
    free(txt);
    if (rc)
        return job_error(j, "error", err);
    if (status == 403 && sent_paths && body && strstr(body, "path witnesses are off")) {
        if (!atomic_exchange(&upload_witnesses, true))
            fprintf(stderr, "cuzk-bench: the daemon takes no witness paths: uploading them\n");
        free(body);
        goto again;
    }
    if (status / 100 != 2) {
        char why[600];
        bench_http_error_text(why, sizeof why, status, body);
        snprintf(err, sizeof err, "POST /v1/proofs refused: %s", why);
        free(body);
        snprintf(j->state, sizeof j->state, "rejected");
        bench_copy(j->error, sizeof j->error, err);
        j->latency_ms = bench_now_ms() - t0;
        return 0;
    }
    json_t *r = json_loads(body, 0, NULL);
    const char *id = json_string_value(json_object_get(r, "id"));
    if (!id && json_is_integer(json_object_get(r, "id")))
        snprintf(j->id, sizeof j->id, "%lld", (long long)json_integer_value(json_object_get(r, "id")));
    else if (id)
        bench_copy(j->id, sizeof j->id, id);
    json_decref(r);
    if (!j->id[0]) {
        snprintf(err, sizeof err, "POST /v1/proofs answered %ld without a job id: %.200s", status, body);
        free(body);
        return job_error(j, "error", err);
    }
    free(body);

    for (;;) {
        double left_s = o->timeout_s - (bench_now_ms() - t0) / 1e3;
        if (left_s <= 0) {
            char path[128];
            snprintf(path, sizeof path, "/v1/proofs/%s", j->id);
            if (bench_http(c, "DELETE", path, NULL, &status, &body, err, sizeof err) == 0)
                free(body);
            j->latency_ms = bench_now_ms() - t0;
            snprintf(err, sizeof err, "job %s: no final state after %.0f s (cancelled)", j->id, o->timeout_s);
            job_error(j, "timeout", err);
            return 0;
        }
        int wait = left_s < BENCH_POLL_WAIT_S ? (int)left_s + 1 : BENCH_POLL_WAIT_S;
        char path[160];
        snprintf(path, sizeof path, "/v1/proofs/%s?wait=%d", j->id, wait);
        double tp = bench_now_ms();
        if (bench_http(c, "GET", path, NULL, &status, &body, err, sizeof err))
            return job_error(j, "error", err);
        if (status / 100 != 2) {
            char why[500];
            bench_http_error_text(why, sizeof why, status, body);
            free(body);
            snprintf(err, sizeof err, "GET /v1/proofs/%s: %s", j->id, why);
            return job_error(j, "error", err);
        }
        r = json_loads(body, 0, NULL);
        if (!json_is_object(r)) {
            snprintf(err, sizeof err, "GET /v1/proofs/%s answered with something that is not a JSON object: %.200s",
                     j->id, body);
            free(body);
            json_decref(r);
            return job_error(j, "error", err);
        }
        free(body);
        int fin = parse_job(j, r);
        json_decref(r);
        if (fin) {
            j->latency_ms = bench_now_ms() - t0;
            return strcmp(j->state, "error") ? 0 : -1;
        }
        /* A daemon that ignores ?wait answers at once: do not spin. */
        if (bench_now_ms() - tp < 5)
            usleep(20000);
    }
}

int bench_daemon_devices(bench_conn *c, bench_devices *d)
{
    char err[700];
    long status = 0;
    char *body = NULL;
    memset(d, 0, sizeof *d);
    if (bench_http(c, "GET", "/v1/status", NULL, &status, &body, err, sizeof err))
        return -1;
    json_t *r = status / 100 == 2 ? json_loads(body, 0, NULL) : NULL;
    free(body);
    json_t *devs = json_object_get(r, "devices");
    if (!json_is_array(devs)) {
        json_decref(r);
        return -1;
    }
    for (size_t i = 0; i < json_array_size(devs) && d->n < BENCH_MAX_DEVICES; i++) {
        json_t *v = json_array_get(devs, i);
        const char *name = json_string_value(json_object_get(v, "name"));
        bench_copy(d->name[d->n], sizeof d->name[d->n], name ? name : "?");
        d->workers[d->n] = (unsigned)json_integer_value(json_object_get(v, "workers"));
        d->busy_s[d->n] = json_number_value(json_object_get(v, "busy_s"));
        d->partitions[d->n] = json_number_value(json_object_get(v, "partitions"));
        d->gap_s[d->n] = json_number_value(json_object_get(v, "gap_s"));
        d->gaps[d->n] = json_number_value(json_object_get(v, "gaps"));
        d->gap_max_s[d->n] = json_number_value(json_object_get(v, "gap_max_s"));
        d->n++;
    }
    json_decref(r);
    return 0;
}
