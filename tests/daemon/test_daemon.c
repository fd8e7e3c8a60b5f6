/*
 * cuzk-daemon tests (label "daemon"): each scenario starts its own daemon on a free port
 * (--listen 127.0.0.1:0 --address-file), talks HTTP with libcurl, and kills the daemon at
 * the end (also on a crash of the test: atexit and fatal signals).
 *
 *   test_daemon batch     50 jobs from 8 concurrent clients, mixed priorities and witness
 *                         kinds; every proof passes snarkjs verify; higher priorities end
 *                         earlier on average
 *   test_daemon cancel    cancel a queued job and a running one
 *   test_daemon errors    corrupt witness, unknown key, oversized body, malformed JSON ... get
 *                         a 4xx with a reason while other jobs complete; token, allow-dir,
 *                         Unix socket mode
 *   test_daemon limits    queue full gives 503 + Retry-After; clients that disconnect
 *                         mid-request harm nothing; per-job timeout
 *   test_daemon sigterm   SIGTERM during a batch: every accepted job has exactly one final
 *                         state; exit 0; a restarted daemon serves again
 *   test_daemon budget    budget below one job: clear rejections; LRU eviction and reload
 *   test_daemon params    bellman .params keys (made by cuzk setup, registered with their
 *                         .r1cs through the INI file and POST /v1/keys) mixed with .zkey
 *                         jobs: every proof passes snarkjs verify; missing, wrong or
 *                         mismatched r1cs, corrupt .params and wrong witnesses get a 4xx
 *                         while other jobs complete; eviction and reload (decoded cache)
 *
 * Environment: CUZK_BIN (build dir with cuzk-daemon), CUZK_SRC (source dir).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "test_files.h"

#define SKIP 77   /* CTest's skip code for this test */

static const char *bin_dir, *src_dir;
static char tmp_dir[256];

/* ---- daemon process ---- */

typedef struct {
    pid_t pid;
    char addr[256];      /* first listener */
    char addr2[256];     /* second listener (e.g. unix:PATH) */
    char log[300];
} daemon_proc;

static pid_t live_pids[8];

static void kill_all(void)
{
    for (int i = 0; i < 8; i++)
        if (live_pids[i] > 0) {
            kill(live_pids[i], SIGKILL);
            waitpid(live_pids[i], NULL, 0);
            live_pids[i] = 0;
        }
}

static void on_fatal(int sig)
{
    kill_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track(pid_t p, bool add)
{
    for (int i = 0; i < 8; i++)
        if (add ? live_pids[i] == 0 : live_pids[i] == p) {
            live_pids[i] = add ? p : 0;
            return;
        }
}

/* Starts cuzk-daemon with the given flags (NULL-terminated) plus a free loopback port, an
 * address file and a log file. Returns false when it does not come up within 20 s. */
static bool daemon_start(daemon_proc *d, const char *tag, ...)
{
    const char *argv[64];
    int n = 0;
    char exe[512], addrf[300];
    snprintf(exe, sizeof exe, "%s/cuzk-daemon", bin_dir);
    snprintf(addrf, sizeof addrf, "%s/%s.addr", tmp_dir, tag);
    snprintf(d->log, sizeof d->log, "%s/%s.log", tmp_dir, tag);
    unlink(addrf);
    argv[n++] = exe;
    va_list ap;
    va_start(ap, tag);
    bool listen_given = false;
    for (const char *a; (a = va_arg(ap, const char *)) && n < 56;) {
        if (!strcmp(a, "--listen"))
            listen_given = true;
        argv[n++] = a;
    }
    va_end(ap);
    if (!listen_given) {
        argv[n++] = "--listen";
        argv[n++] = "127.0.0.1:0";
    }
    argv[n++] = "--address-file";
    argv[n++] = addrf;
    argv[n++] = "--log-file";
    argv[n++] = d->log;
    argv[n] = NULL;
    pid_t p = fork();
    if (p < 0)
        return false;
    if (p == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    d->pid = p;
    track(p, true);
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(addrf, "r");
        if (f) {
            bool ok = fgets(d->addr, sizeof d->addr, f) != NULL;
            if (!fgets(d->addr2, sizeof d->addr2, f))
                d->addr2[0] = 0;
            fclose(f);
            d->addr[strcspn(d->addr, "\n")] = 0;
            d->addr2[strcspn(d->addr2, "\n")] = 0;
            if (ok)
                return true;
        }
        int st;
        if (waitpid(p, &st, WNOHANG) == p) {
            track(p, false);
            d->pid = 0;
            fprintf(stderr, "cuzk-daemon exited at start (log %s)\n", d->log);
            return false;
        }
        usleep(100000);
    }
    fprintf(stderr, "cuzk-daemon did not come up (log %s)\n", d->log);
    return false;
}

/* SIGTERM and wait up to timeout_s; returns the exit status, or -1 after a SIGKILL. */
static int daemon_stop(daemon_proc *d, double timeout_s)
{
    if (d->pid <= 0)
        return -1;
    kill(d->pid, SIGTERM);
    int st = 0;
    for (int i = 0; i < (int)(timeout_s * 20); i++) {
        if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
            track(d->pid, false);
            d->pid = 0;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        usleep(50000);
    }
    kill(d->pid, SIGKILL);
    waitpid(d->pid, &st, 0);
    track(d->pid, false);
    d->pid = 0;
    fprintf(stderr, "cuzk-daemon did not exit %.0f s after SIGTERM\n", timeout_s);
    return -1;
}

/* ---- HTTP ---- */

typedef struct {
    long status;
    char *body;
    size_t len;
    char retry_after[32];
    json_t *json;    /* body parsed when it is JSON */
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *u)
{
    resp *r = u;
    char *b = realloc(r->body, r->len + sz * n + 1);
    if (!b)
        return 0;
    memcpy(b + r->len, p, sz * n);
    r->body = b;
    r->len += sz * n;
    b[r->len] = 0;
    return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *u)
{
    resp *r = u;
    if (sz * n > 12 && strncasecmp(p, "Retry-After:", 12) == 0)
        snprintf(r->retry_after, sizeof r->retry_after, "%.*s", (int)strcspn(p + 12, "\r\n"), p + 12);
    return sz * n;
}

static void resp_free(resp *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

/* One request. addr is HOST:PORT or unix:PATH. extra_header may be NULL. */
static bool http_ex(resp *r, const char *addr, const char *method, const char *path,
                    const char *ctype, const void *body, size_t len, const char *extra_header)
{
    memset(r, 0, sizeof *r);
    CURL *c = curl_easy_init();
    if (!c)
        return false;
    char url[1024];
    if (strncmp(addr, "unix:", 5) == 0) {
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, addr + 5);
        snprintf(url, sizeof url, "http://localhost%s", path);
    } else {
        snprintf(url, sizeof url, "http://%s%s", addr, path);
    }
    struct curl_slist *h = NULL;
    char ct[128];
    if (ctype) {
        snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
        h = curl_slist_append(h, ct);
    }
    if (extra_header)
        h = curl_slist_append(h, extra_header);
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK) {
        fprintf(stderr, "%s %s: %s\n", method, path, curl_easy_strerror(rc));
        return false;
    }
    if (r->body)
        r->json = json_loads(r->body, 0, NULL);
    return true;
}

static bool http(resp *r, const char *addr, const char *method, const char *path, const char *json)
{
    return http_ex(r, addr, method, path, json ? "application/json" : NULL, json,
                   json ? strlen(json) : 0, NULL);
}

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static char *fixture(const char *circuit, const char *file)
{
    char *p = NULL;
    if (asprintf(&p, "%s/tests/data/circuits/%s/%s", src_dir, circuit, file) < 0)
        abort();
    return p;
}

static bool add_key(const char *addr, const char *id, const char *circuit)
{
    char *zk = fixture(circuit, "circuit.zkey"), body[1024];
    snprintf(body, sizeof body, "{\"id\": \"%s\", \"path\": \"%s\"}", id, zk);
    free(zk);
    resp r;
    bool ok = http(&r, addr, "POST", "/v1/keys", body) && (r.status == 201 || r.status == 200);
    if (!ok)
        fprintf(stderr, "POST /v1/keys %s: %ld %s\n", id, r.status, r.body ? r.body : "");
    resp_free(&r);
    return ok;
}

/* Submits a job of n copies of the circuit's fixture witness. Returns the job id (a
 * malloc'd string) or NULL; *status gets the HTTP status. */
static char *submit(const char *addr, const char *key, const char *circuit, const char *prio,
                    int n, long *status)
{
    char *w = fixture(circuit, "witness.wtns");
    size_t cap = 256 + (size_t)n * (strlen(w) + 4);
    char *body = malloc(cap);
    int o = snprintf(body, cap, "{\"key\": \"%s\", \"priority\": \"%s\", \"witnesses\": [", key, prio);
    for (int i = 0; i < n; i++)
        o += snprintf(body + o, cap - (size_t)o, "%s\"%s\"", i ? ", " : "", w);
    snprintf(body + o, cap - (size_t)o, "]}");
    resp r;
    char *id = NULL;
    if (http(&r, addr, "POST", "/v1/proofs", body) && r.status == 202)
        id = strdup(jstr(r.json, "id"));
    if (status)
        *status = r.status;
    if (!id && (!status || r.status == 0))
        fprintf(stderr, "submit: %ld %s\n", r.status, r.body ? r.body : "");
    resp_free(&r);
    free(body);
    free(w);
    return id;
}

/* Long-polls a job until it is final (up to timeout_s); returns its JSON (owned) or NULL. */
static json_t *wait_final(const char *addr, const char *id, double timeout_s)
{
    char path[128];
    for (double waited = 0; waited <= timeout_s; waited += 5) {
        snprintf(path, sizeof path, "/v1/proofs/%s?wait=5", id);
        resp r;
        if (!http(&r, addr, "GET", path, NULL) || r.status != 200 || !r.json) {
            resp_free(&r);
            return NULL;
        }
        const char *st = jstr(r.json, "state");
        if (!strcmp(st, "done") || !strcmp(st, "failed") || !strcmp(st, "cancelled")) {
            json_t *j = json_incref(r.json);
            resp_free(&r);
            return j;
        }
        resp_free(&r);
    }
    return NULL;
}

/* The file's bytes, 0-terminated (the test reads JSON as text too); NULL when unreadable. */
static char *read_file(const char *path, size_t *len)
{
    size_t n;
    char *b = (char *)read_all_or_null(path, &n);
    if (len)
        *len = n;
    return b;
}

static char *b64(const unsigned char *p, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(4 * ((n + 2) / 3) + 1), *q = o;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *q++ = t[v >> 18 & 63];
        *q++ = t[v >> 12 & 63];
        *q++ = i + 1 < n ? t[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? t[v & 63] : '=';
    }
    *q = 0;
    return o;
}

static int count_in_file(const char *path, const char *needle)
{
    size_t n;
    char *t = read_file(path, &n);
    int c = 0;
    for (char *p = t; p && (p = strstr(p, needle)); p += strlen(needle))
        c++;
    free(t);
    return c;
}

static bool snarkjs_present(void)
{
    char p[512];
    snprintf(p, sizeof p, "%s/tests/js/node_modules/snarkjs/package.json", src_dir);
    return access(p, R_OK) == 0;
}

/* ---- batch ---- */

static const char *const prios[4] = {"low", "normal", "high", "critical"};
static const char *const circuits[3] = {"chain", "multiplier", "nopub"};

#define BATCH_JOBS 50
#define BATCH_CLIENTS 8

typedef struct {
    const char *addr;
    int first, step;
    /* per job results */
    int prio[BATCH_JOBS], circ[BATCH_JOBS];
    char *id[BATCH_JOBS];
    json_t *final[BATCH_JOBS];
    long status[BATCH_JOBS];
} batch_ctx;

static batch_ctx bc;
static pthread_barrier_t batch_barrier;

/* Client t submits jobs t, t+8, ...: path, {"wtns_base64"} or a raw octet-stream upload. */
static void *batch_client(void *arg)
{
    int t = (int)(intptr_t)arg;
    pthread_barrier_wait(&batch_barrier);
    for (int i = t; i < BATCH_JOBS; i += BATCH_CLIENTS) {
        const char *circ = circuits[bc.circ[i]], *prio = prios[bc.prio[i]];
        char *w = fixture(circ, "witness.wtns");
        resp r;
        int kind = i % 3;
        bool ok;
        if (kind == 0) {
            char body[1024];
            snprintf(body, sizeof body, "{\"key\": \"%s\", \"priority\": \"%s\", \"witnesses\": [\"%s\"]}",
                     circ, prio, w);
            ok = http(&r, bc.addr, "POST", "/v1/proofs", body);
        } else {
            size_t n;
            char *bytes = read_file(w, &n);
            if (kind == 1) {
                char *enc = b64((unsigned char *)bytes, n);
                size_t cap = strlen(enc) + 256;
                char *body = malloc(cap);
                snprintf(body, cap,
                         "{\"key\": \"%s\", \"priority\": \"%s\", \"witnesses\": [{\"wtns_base64\": \"%s\"}]}",
                         circ, prio, enc);
                ok = http(&r, bc.addr, "POST", "/v1/proofs", body);
                free(body);
                free(enc);
            } else {
                char path[128];
                snprintf(path, sizeof path, "/v1/proofs?key=%s&priority=%s", circ, prio);
                ok = http_ex(&r, bc.addr, "POST", path, "application/octet-stream", bytes, n, NULL);
            }
            free(bytes);
        }
        bc.status[i] = ok ? r.status : 0;
        if (ok && r.status == 202)
            bc.id[i] = strdup(jstr(r.json, "id"));
        resp_free(&r);
        free(w);
    }
    for (int i = t; i < BATCH_JOBS; i += BATCH_CLIENTS)
        if (bc.id[i])
            bc.final[i] = wait_final(bc.addr, bc.id[i], 120);
    return NULL;
}

static int test_batch(void)
{
    if (!snarkjs_present()) {
        printf("SKIP: snarkjs is not installed (run scripts/deps.sh)\n");
        return SKIP;
    }
    daemon_proc d;
    /* One device worker and 25 ms more per partition on the device: a backlog builds up, so
     * the order of service is the scheduler's. */
    if (!daemon_start(&d, "batch", "--gpu-workers", "1", "--synth-threads", "2", "--lookahead", "2",
                      "--debug-device-delay-ms", "25", NULL)) {
        CHECK(0);
        return test_finish();
    }
    for (int c = 0; c < 3; c++)
        CHECK(add_key(d.addr, circuits[c], circuits[c]));
    bc.addr = d.addr;
    for (int i = 0; i < BATCH_JOBS; i++) {
        bc.prio[i] = (int)(test_rand64() % 4);
        bc.circ[i] = (int)(test_rand64() % 3);
    }
    pthread_barrier_init(&batch_barrier, NULL, BATCH_CLIENTS);
    pthread_t th[BATCH_CLIENTS];
    for (int t = 0; t < BATCH_CLIENTS; t++)
        pthread_create(&th[t], NULL, batch_client, (void *)(intptr_t)t);
    for (int t = 0; t < BATCH_CLIENTS; t++)
        pthread_join(th[t], NULL);

    /* Every job accepted and done; proofs and publics written for snarkjs. */
    char manifest[400];
    snprintf(manifest, sizeof manifest, "%s/manifest.txt", tmp_dir);
    FILE *mf = fopen(manifest, "w");
    double sum[4] = {0}, cnt[4] = {0};
    int done = 0;
    for (int i = 0; i < BATCH_JOBS; i++) {
        CHECK(bc.status[i] == 202);
        json_t *f = bc.final[i];
        if (!f) {
            CHECK(0);
            continue;
        }
        bool is_done = !strcmp(jstr(f, "state"), "done");
        CHECK(is_done);
        if (!is_done) {
            fprintf(stderr, "job %s: %s %s\n", bc.id[i], jstr(f, "state"), jstr(f, "error"));
            continue;
        }
        done++;
        json_t *proofs = json_object_get(f, "proofs"), *pubs = json_object_get(f, "public");
        CHECK(json_array_size(proofs) == 1 && json_array_size(pubs) == 1);
        json_t *tm = json_object_get(f, "timings");
        static const char *const tk[] = {"queue_ms", "srs_ms", "synth_ms", "gpu_ms", "finalize_ms",
                                         "verify_ms", "total_ms"};
        for (int k = 0; k < 7; k++)
            CHECK(json_is_number(json_object_get(tm, tk[k])));
        double total = json_number_value(json_object_get(tm, "total_ms"));
        CHECK(json_number_value(json_object_get(tm, "gpu_ms")) >= 25);   /* the added delay */
        CHECK(json_number_value(json_object_get(tm, "verify_ms")) > 0);   /* verified by default */
        CHECK(total >= json_number_value(json_object_get(tm, "gpu_ms")));
        sum[bc.prio[i]] += total;
        cnt[bc.prio[i]]++;
        char pp[400], up[400];
        snprintf(pp, sizeof pp, "%s/proof_%d.json", tmp_dir, i);
        snprintf(up, sizeof up, "%s/public_%d.json", tmp_dir, i);
        CHECK(json_dump_file(json_array_get(proofs, 0), pp, JSON_INDENT(1)) == 0);
        CHECK(json_dump_file(json_array_get(pubs, 0), up, JSON_INDENT(1)) == 0);
        /* public inputs are the fixture's (snarkjs's public.json) */
        char *fp = fixture(circuits[bc.circ[i]], "public.json");
        json_t *want = json_load_file(fp, 0, NULL);
        CHECK(want && json_equal(want, json_array_get(pubs, 0)));
        json_decref(want);
        free(fp);
        char *vk = fixture(circuits[bc.circ[i]], "verification_key.json");
        if (mf)
            fprintf(mf, "%s\t%s\t%s\n", vk, up, pp);
        free(vk);
    }
    if (mf)
        fclose(mf);
    CHECK(done == BATCH_JOBS);
    printf("batch: %d of %d done; mean latency ms: low %.0f normal %.0f high %.0f critical %.0f\n",
           done, BATCH_JOBS, cnt[0] ? sum[0] / cnt[0] : -1, cnt[1] ? sum[1] / cnt[1] : -1,
           cnt[2] ? sum[2] / cnt[2] : -1, cnt[3] ? sum[3] / cnt[3] : -1);
    /* Higher priorities end earlier on average. */
    if (cnt[0] && cnt[3])
        CHECK(sum[3] / cnt[3] < sum[0] / cnt[0]);
    if (cnt[0] && cnt[2])
        CHECK(sum[2] / cnt[2] < sum[0] / cnt[0]);
    if (cnt[1] && cnt[3])
        CHECK(sum[3] / cnt[3] < sum[1] / cnt[1]);
    if (cnt[0] + cnt[1] > 0 && cnt[2] + cnt[3] > 0)
        CHECK((sum[2] + sum[3]) / (cnt[2] + cnt[3]) < (sum[0] + sum[1]) / (cnt[0] + cnt[1]));

    /* Every proof through snarkjs's verifier (one node process for all). */
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "node %s/tests/daemon/verify_all.mjs %s", src_dir, manifest);
    int rc = system(cmd);
    CHECK(rc == 0);

    /* Status and metrics agree. */
    resp r;
    CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200 && r.json);
    json_t *jobs = json_object_get(r.json, "jobs");
    CHECK(json_integer_value(json_object_get(jobs, "done")) == BATCH_JOBS);
    CHECK(json_array_size(json_object_get(r.json, "keys")) == 3);
    CHECK(json_array_size(json_object_get(r.json, "devices")) >= 1);
    {
        /* Device occupancy: one gap between each pair of consecutive partitions on the
         * device, none negative, the longest no larger than their sum. */
        json_t *d0 = json_array_get(json_object_get(r.json, "devices"), 0);
        json_int_t parts = json_integer_value(json_object_get(d0, "partitions"));
        json_int_t gaps = json_integer_value(json_object_get(d0, "gaps"));
        double gap_s = json_number_value(json_object_get(d0, "gap_s"));
        double gap_max = json_number_value(json_object_get(d0, "gap_max_s"));
        double busy = json_number_value(json_object_get(d0, "busy_s"));
        CHECK(parts == BATCH_JOBS && gaps == parts - 1);
        CHECK(gap_s >= 0 && gap_max >= 0 && gap_max <= gap_s + 1e-9 && busy > 0);
    }
    resp_free(&r);
    CHECK(http(&r, d.addr, "GET", "/metrics", NULL) && r.status == 200 && r.body &&
          strstr(r.body, "cuzk_device_gap_seconds_total{device=") &&
          strstr(r.body, "cuzk_jobs_total{state=\"done\"} 50\n") &&
          strstr(r.body, "cuzk_partitions_proved_total 50\n"));
    resp_free(&r);
    /* One timeline line per pipeline event. */
    CHECK(count_in_file(d.log, "event=synth_start") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=gpu_pickup") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=gpu_start") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=gpu_end") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=finalize_end") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=job_final") == BATCH_JOBS);
    CHECK(daemon_stop(&d, 30) == 0);
    for (int i = 0; i < BATCH_JOBS; i++) {
        free(bc.id[i]);
        json_decref(bc.final[i]);
    }
    return test_finish();
}

/* ---- cancel ---- */

static int test_cancel(void)
{
    daemon_proc d;
    /* 400 ms per partition on the device: a 4-partition job runs for over 1.5 s. */
    if (!daemon_start(&d, "cancel", "--gpu-workers", "1", "--debug-device-delay-ms", "400", NULL)) {
        CHECK(0);
        return test_finish();
    }
    CHECK(add_key(d.addr, "chain", "chain"));
    long st;
    char *run = submit(d.addr, "chain", "chain", "normal", 4, &st);
    char *queued = submit(d.addr, "chain", "chain", "low", 1, &st);
    char *after = submit(d.addr, "chain", "chain", "low", 1, &st);
    CHECK(run && queued && after);
    if (!run || !queued || !after)
        return daemon_stop(&d, 10), test_finish();
    /* wait until the first job runs */
    char path[128];
    bool running = false;
    for (int i = 0; i < 100 && !running; i++) {
        resp r;
        snprintf(path, sizeof path, "/v1/proofs/%s", run);
        if (http(&r, d.addr, "GET", path, NULL))
            running = !strcmp(jstr(r.json, "state"), "running");
        resp_free(&r);
        if (!running)
            usleep(20000);
    }
    CHECK(running);
    /* the second is still queued behind it */
    resp r;
    snprintf(path, sizeof path, "/v1/proofs/%s", queued);
    CHECK(http(&r, d.addr, "GET", path, NULL) && !strcmp(jstr(r.json, "state"), "queued"));
    resp_free(&r);
    CHECK(http(&r, d.addr, "DELETE", path, NULL) && r.status == 200 &&
          !strcmp(jstr(r.json, "state"), "cancelled"));
    resp_free(&r);
    snprintf(path, sizeof path, "/v1/proofs/%s", run);
    CHECK(http(&r, d.addr, "DELETE", path, NULL) && r.status == 200);
    resp_free(&r);
    /* both end cancelled (no proofs), the third job still completes */
    json_t *f1 = wait_final(d.addr, run, 30), *f2 = wait_final(d.addr, queued, 30);
    json_t *f3 = wait_final(d.addr, after, 30);
    CHECK(f1 && !strcmp(jstr(f1, "state"), "cancelled") && !json_object_get(f1, "proofs"));
    CHECK(f1 && json_integer_value(json_object_get(f1, "partitions_done")) < 4);
    CHECK(f2 && !strcmp(jstr(f2, "state"), "cancelled"));
    CHECK(f3 && !strcmp(jstr(f3, "state"), "done"));
    /* cancelling a done job: 409; an unknown job: 404; cancelling twice: still cancelled */
    snprintf(path, sizeof path, "/v1/proofs/%s", after);
    CHECK(http(&r, d.addr, "DELETE", path, NULL) && r.status == 409 && strstr(jstr(r.json, "error"), "done"));
    resp_free(&r);
    CHECK(http(&r, d.addr, "DELETE", "/v1/proofs/999999", NULL) && r.status == 404);
    resp_free(&r);
    CHECK(http(&r, d.addr, "GET", "/v1/proofs/999999", NULL) && r.status == 404 && json_object_get(r.json, "error"));
    resp_free(&r);
    snprintf(path, sizeof path, "/v1/proofs/%s", queued);
    CHECK(http(&r, d.addr, "DELETE", path, NULL) && r.status == 200);
    resp_free(&r);
    /* the partitions of the cancelled job that never reached the device were dropped */
    CHECK(count_in_file(d.log, "event=gpu_start") <= 3);
    CHECK(count_in_file(d.log, "state=cancelled") == 2);
    json_decref(f1);
    json_decref(f2);
    json_decref(f3);
    free(run);
    free(queued);
    free(after);
    CHECK(daemon_stop(&d, 20) == 0);
    return test_finish();
}

/* ---- errors ---- */

/* POST body to /v1/proofs: wants `want` and an error text containing `needle`. */
static void expect_error(const char *addr, const char *ctype, const char *body, size_t len,
                         long want, const char *needle)
{
    resp r;
    bool ok = http_ex(&r, addr, "POST", "/v1/proofs", ctype, body, len, NULL);
    bool good = ok && r.status == want && r.json && strstr(jstr(r.json, "error"), needle);
    CHECK(good);
    if (!good)
        fprintf(stderr, "expected %ld /%s/, got %ld %s\n", want, needle, r.status, r.body ? r.body : "");
    resp_free(&r);
}

static int test_errors(void)
{
    daemon_proc d;
    char sock[300];
    snprintf(sock, sizeof sock, "unix:%s/cuzk.sock", tmp_dir);
    if (!daemon_start(&d, "errors", "--listen", "127.0.0.1:0", "--listen", sock, "--max-body", "64K",
                      "--debug-device-delay-ms", "30", NULL)) {
        CHECK(0);
        return test_finish();
    }
    CHECK(add_key(d.addr, "chain", "chain"));
    CHECK(add_key(d.addr, "mult", "multiplier"));
    /* good jobs in flight while the bad requests come */
    char *good[6];
    for (int i = 0; i < 6; i++)
        good[i] = submit(d.addr, "chain", "chain", i % 2 ? "high" : "low", 2, NULL);

    char *w_chain = fixture("chain", "witness.wtns"), *w_mult = fixture("multiplier", "witness.wtns");
    size_t n;
    char *bytes = read_file(w_chain, &n);
    char bad[400], body[2048];
    /* corrupt witness: truncated copy on disk */
    snprintf(bad, sizeof bad, "%s/truncated.wtns", tmp_dir);
    FILE *f = fopen(bad, "wb");
    fwrite(bytes, 1, n / 2, f);
    fclose(f);
    snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s\"]}", bad);
    expect_error(d.addr, "application/json", body, strlen(body), 422, "truncated.wtns");
    /* corrupt witness: a flipped magic, uploaded */
    char *flipped = malloc(n);
    memcpy(flipped, bytes, n);
    flipped[0] ^= 0x20;
    expect_error(d.addr, "application/octet-stream", flipped, n, 400, "key=ID");
    {
        resp r;
        CHECK(http_ex(&r, d.addr, "POST", "/v1/proofs?key=chain", "application/octet-stream", flipped,
                      n, NULL) && r.status == 422 && strstr(jstr(r.json, "error"), "uploaded"));
        resp_free(&r);
    }
    /* a witness of another circuit */
    snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s\"]}", w_mult);
    expect_error(d.addr, "application/json", body, strlen(body), 422, "expects 142");
    /* a missing witness file */
    snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s/nope.wtns\"]}", tmp_dir);
    expect_error(d.addr, "application/json", body, strlen(body), 422, "nope.wtns");
    /* unknown key */
    snprintf(body, sizeof body, "{\"key\": \"nokey\", \"witnesses\": [\"%s\"]}", w_chain);
    expect_error(d.addr, "application/json", body, strlen(body), 404, "unknown key");
    /* malformed JSON, wrong shapes */
    expect_error(d.addr, "application/json", "{\"key\": \"chain\", ", 17, 400, "malformed JSON");
    expect_error(d.addr, "application/json", "[1, 2]", 6, 400, "object");
    expect_error(d.addr, "application/json", "{\"key\": \"chain\", \"witnesses\": []}", 33, 400, "witnesses");
    snprintf(body, sizeof body, "{\"key\": \"chain\", \"priority\": \"urgent\", \"witnesses\": [\"%s\"]}", w_chain);
    expect_error(d.addr, "application/json", body, strlen(body), 400, "priority");
    const char *bad64 = "{\"key\": \"chain\", \"witnesses\": [{\"wtns_base64\": \"@@\"}]}";
    expect_error(d.addr, "application/json", bad64, strlen(bad64), 400, "base64");
    /* oversized body (max_body 64 KiB) */
    size_t big = 100 * 1024;
    char *huge = malloc(big);
    memset(huge, ' ', big);
    memcpy(huge, "{\"key\": \"chain\"", 15);
    expect_error(d.addr, "application/json", huge, big, 413, "max_body");
    /* bad keys */
    {
        resp r;
        CHECK(http(&r, d.addr, "POST", "/v1/keys", "{\"id\": \"x\"}") && r.status == 400);
        resp_free(&r);
        snprintf(body, sizeof body, "{\"id\": \"bad\", \"path\": \"%s\"}", w_chain);
        CHECK(http(&r, d.addr, "POST", "/v1/keys", body) && r.status == 422 &&
              strstr(jstr(r.json, "error"), "witness.wtns"));
        resp_free(&r);
        CHECK(http(&r, d.addr, "GET", "/v1/nothing", NULL) && r.status == 404);
        resp_free(&r);
        CHECK(http(&r, d.addr, "PUT", "/v1/proofs", NULL) && r.status == 405);
        resp_free(&r);
    }
    /* the good jobs all completed */
    for (int i = 0; i < 6; i++) {
        json_t *fj = good[i] ? wait_final(d.addr, good[i], 60) : NULL;
        CHECK(fj && !strcmp(jstr(fj, "state"), "done"));
        json_decref(fj);
        free(good[i]);
    }
    /* the Unix socket serves and is owner-only */
    struct stat sb;
    CHECK(!strcmp(d.addr2, sock));
    CHECK(stat(sock + 5, &sb) == 0 && S_ISSOCK(sb.st_mode) && (sb.st_mode & 0077) == 0);
    char *viaunix = submit(sock, "chain", "chain", "normal", 1, NULL);
    json_t *fu = viaunix ? wait_final(sock, viaunix, 30) : NULL;
    CHECK(fu && !strcmp(jstr(fu, "state"), "done"));
    json_decref(fu);
    free(viaunix);
    CHECK(daemon_stop(&d, 20) == 0);
    CHECK(access(sock + 5, F_OK) != 0);   /* removed at exit */

    /* bearer token and --allow-dir */
    char allow[400];
    snprintf(allow, sizeof allow, "%s/tests/data/circuits/chain", src_dir);
    if (daemon_start(&d, "token", "--token", "s3cret", "--allow-dir", allow, NULL)) {
        resp r;
        CHECK(http(&r, d.addr, "GET", "/healthz", NULL) && r.status == 200);
        resp_free(&r);
        CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 401);
        resp_free(&r);
        CHECK(http_ex(&r, d.addr, "GET", "/v1/status", NULL, NULL, 0, "Authorization: Bearer wrong") &&
              r.status == 401);
        resp_free(&r);
        const char *auth = "Authorization: Bearer s3cret";
        CHECK(http_ex(&r, d.addr, "GET", "/v1/status", NULL, NULL, 0, auth) && r.status == 200);
        resp_free(&r);
        char *zk = fixture("chain", "circuit.zkey"), *zm = fixture("multiplier", "circuit.zkey");
        snprintf(body, sizeof body, "{\"id\": \"chain\", \"path\": \"%s\"}", zk);
        CHECK(http_ex(&r, d.addr, "POST", "/v1/keys", "application/json", body, strlen(body), auth) &&
              r.status == 201);
        resp_free(&r);
        snprintf(body, sizeof body, "{\"id\": \"mult\", \"path\": \"%s\"}", zm);
        CHECK(http_ex(&r, d.addr, "POST", "/v1/keys", "application/json", body, strlen(body), auth) &&
              r.status == 403 && strstr(jstr(r.json, "error"), "allow"));
        resp_free(&r);
        snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s\"]}", w_mult);
        CHECK(http_ex(&r, d.addr, "POST", "/v1/proofs", "application/json", body, strlen(body), auth) &&
              r.status == 403);
        resp_free(&r);
        snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s/../chain/witness.wtns\"]}", allow);
        CHECK(http_ex(&r, d.addr, "POST", "/v1/proofs", "application/json", body, strlen(body), auth) &&
              r.status == 202);
        resp_free(&r);
        free(zk);
        free(zm);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    free(w_chain);
    free(w_mult);
    free(bytes);
    free(flipped);
    free(huge);
    return test_finish();
}

/* ---- limits ---- */

/* Opens a TCP connection to HOST:PORT, writes text, and closes without reading. */
static void send_and_vanish(const char *addr, const char *text, size_t len)
{
    char host[64];
    const char *colon = strrchr(addr, ':');
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, host, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        ssize_t w = write(fd, text, len);
        (void)w;
        usleep(50000);
    }
    close(fd);
}

static int test_limits(void)
{
    daemon_proc d;
    if (!daemon_start(&d, "limits", "--gpu-workers", "1", "--max-queued", "3", "--debug-device-delay-ms",
                      "300", NULL)) {
        CHECK(0);
        return test_finish();
    }
    CHECK(add_key(d.addr, "chain", "chain"));
    {
        /* one worker per device: the default lookahead is still 2 */
        resp r;
        CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200 && r.json);
        json_t *w = json_object_get(r.json, "workers");
        size_t nd = json_array_size(json_object_get(r.json, "devices"));
        json_int_t want = nd < 2 ? 2 : (json_int_t)nd;
        CHECK(json_integer_value(json_object_get(w, "lookahead")) == want);
        resp_free(&r);
    }
    char *ids[3];
    long st;
    for (int i = 0; i < 3; i++)
        ids[i] = submit(d.addr, "chain", "chain", "normal", 1, &st);
    CHECK(ids[0] && ids[1] && ids[2]);
    /* the 4th unfinished job: 503 with Retry-After and a reason */
    char *w = fixture("chain", "witness.wtns"), body[1024];
    snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s\"]}", w);
    resp r;
    CHECK(http(&r, d.addr, "POST", "/v1/proofs", body) && r.status == 503 && r.retry_after[0] &&
          atoi(r.retry_after) >= 1 && strstr(jstr(r.json, "error"), "queue full"));
    resp_free(&r);

    /* clients that disconnect mid-request: a body cut short, headers cut short, a long poll */
    const char *partial = "POST /v1/proofs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          "Content-Length: 100000\r\n\r\n{\"key\": \"chain\", \"witn";
    for (int i = 0; i < 5; i++)
        send_and_vanish(d.addr, partial, strlen(partial));
    send_and_vanish(d.addr, "GET /v1/sta", 11);
    char lp[256];
    snprintf(lp, sizeof lp, "GET /v1/proofs/%s?wait=30 HTTP/1.1\r\nHost: x\r\n\r\n", ids[2]);
    send_and_vanish(d.addr, lp, strlen(lp));
    /* nothing was harmed: the jobs complete, and the daemon answers */
    for (int i = 0; i < 3; i++) {
        json_t *f = ids[i] ? wait_final(d.addr, ids[i], 30) : NULL;
        CHECK(f && !strcmp(jstr(f, "state"), "done"));
        json_decref(f);
        free(ids[i]);
    }
    CHECK(http(&r, d.addr, "GET", "/healthz", NULL) && r.status == 200);
    resp_free(&r);
    char *again = submit(d.addr, "chain", "chain", "normal", 1, &st);
    CHECK(again != NULL);
    json_t *f = again ? wait_final(d.addr, again, 30) : NULL;
    CHECK(f && !strcmp(jstr(f, "state"), "done"));
    json_decref(f);
    free(again);
    CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200);
    CHECK(json_integer_value(json_object_get(json_object_get(r.json, "jobs"), "submitted")) == 4);
    resp_free(&r);
    CHECK(daemon_stop(&d, 20) == 0);

    /* per-job timeout: 1 s of device time per partition against a 0.4 s limit */
    if (daemon_start(&d, "timeout", "--gpu-workers", "1", "--job-timeout", "0.4",
                     "--debug-device-delay-ms", "1000", NULL)) {
        CHECK(add_key(d.addr, "chain", "chain"));
        char *id = submit(d.addr, "chain", "chain", "normal", 2, &st);
        f = id ? wait_final(d.addr, id, 30) : NULL;
        CHECK(f && !strcmp(jstr(f, "state"), "failed") && strstr(jstr(f, "error"), "timed out"));
        json_decref(f);
        free(id);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    free(w);
    return test_finish();
}

/* ---- sigterm ---- */

static int test_sigterm(void)
{
    daemon_proc d;
    if (!daemon_start(&d, "sigterm", "--gpu-workers", "1", "--debug-device-delay-ms", "60",
                      "--shutdown-grace", "0.5", NULL)) {
        CHECK(0);
        return test_finish();
    }
    CHECK(add_key(d.addr, "chain", "chain"));
    enum { N = 20 };
    char *ids[N];
    int accepted = 0;
    for (int i = 0; i < N; i++) {
        ids[i] = submit(d.addr, "chain", "chain", prios[i % 4], 2, NULL);
        accepted += ids[i] != NULL;
    }
    CHECK(accepted == N);
    /* a couple of jobs are done, one runs, the rest wait */
    for (int i = 0; i < 600; i++) {
        resp r;
        long long ndone = -1;
        if (http(&r, d.addr, "GET", "/v1/status", NULL))
            ndone = json_integer_value(json_object_get(json_object_get(r.json, "jobs"), "done"));
        resp_free(&r);
        if (ndone >= 2)
            break;
        usleep(50000);
    }
    kill(d.pid, SIGTERM);
    /* draining: /healthz says so (or the daemon is already gone), new jobs get 503 */
    bool draining = false;
    for (int i = 0; i < 100 && !draining; i++) {
        resp r;
        bool ok = http(&r, d.addr, "GET", "/healthz", NULL);
        draining = !ok || r.status == 503;
        resp_free(&r);
        if (!draining)
            usleep(10000);
    }
    CHECK(draining);
    long st = 0;
    char *late = submit(d.addr, "chain", "chain", "normal", 1, &st);
    CHECK(late == NULL && (st == 503 || st == 0));
    free(late);
    int rc = daemon_stop(&d, 30);
    CHECK(rc == 0);
    /* exactly one final state per accepted job, in the log */
    int done = 0, failed = 0;
    for (int i = 0; i < N; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "event=job_final job=%s ", ids[i] ? ids[i] : "x");
        int c = count_in_file(d.log, needle);
        CHECK(c == 1);
        if (c != 1)
            fprintf(stderr, "job %s: %d final states\n", ids[i], c);
        snprintf(needle, sizeof needle, "event=job_final job=%s state=done", ids[i] ? ids[i] : "x");
        done += count_in_file(d.log, needle);
        snprintf(needle, sizeof needle, "event=job_final job=%s state=failed", ids[i] ? ids[i] : "x");
        failed += count_in_file(d.log, needle);
        free(ids[i]);
    }
    printf("sigterm: %d done, %d failed at shutdown\n", done, failed);
    CHECK(done + failed == N);
    CHECK(done >= 1 && failed >= 1);
    CHECK(count_in_file(d.log, "daemon shutting down") == failed);
    CHECK(count_in_file(d.log, "event=exit") == 1);

    /* the daemon restarts and serves again */
    if (daemon_start(&d, "restart", NULL)) {
        CHECK(add_key(d.addr, "chain", "chain"));
        char *id = submit(d.addr, "chain", "chain", "high", 1, NULL);
        json_t *f = id ? wait_final(d.addr, id, 30) : NULL;
        CHECK(f && !strcmp(jstr(f, "state"), "done"));
        json_decref(f);
        free(id);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    return test_finish();
}

/* ---- budget ---- */

static bool key_sizes(const char *addr, const char *id, long long *kb, long long *pb)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/keys/%s", id);
    resp r;
    bool ok = http(&r, addr, "GET", path, NULL) && r.status == 200;
    *kb = json_integer_value(json_object_get(r.json, "key_bytes"));
    *pb = json_integer_value(json_object_get(r.json, "partition_bytes"));
    resp_free(&r);
    return ok && *kb > 0 && *pb > 0;
}

static int test_budget(void)
{
    daemon_proc d;
    long long kc = 0, pc = 0, km = 0, pm = 0;
    /* sizes from a daemon with the default budget */
    if (!daemon_start(&d, "sizes", NULL)) {
        CHECK(0);
        return test_finish();
    }
    CHECK(add_key(d.addr, "chain", "chain") && add_key(d.addr, "mult", "multiplier"));
    CHECK(key_sizes(d.addr, "chain", &kc, &pc) && key_sizes(d.addr, "mult", &km, &pm));
    {
        /* the default lookahead: one synthesised partition per device worker, at least 2 */
        resp r;
        CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200 && r.json);
        json_t *w = json_object_get(r.json, "workers");
        json_int_t la = json_integer_value(json_object_get(w, "lookahead"));
        json_int_t wpd = json_integer_value(json_object_get(w, "workers_per_device"));
        size_t nd = json_array_size(json_object_get(r.json, "devices"));
        CHECK(nd >= 1 && wpd == 2);
        CHECK(la == (json_int_t)nd * wpd);
        resp_free(&r);
    }
    CHECK(daemon_stop(&d, 20) == 0);
    char b[64];

    /* the key fits, key + one partition does not: a clear 422 at submission */
    snprintf(b, sizeof b, "%lld", kc + pc - 1);
    if (daemon_start(&d, "budget1", "--memory-budget", b, NULL)) {
        CHECK(add_key(d.addr, "chain", "chain"));
        long st;
        resp r;
        char *w = fixture("chain", "witness.wtns"), body[1024];
        snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s\"]}", w);
        CHECK(http(&r, d.addr, "POST", "/v1/proofs", body) && r.status == 422 &&
              strstr(jstr(r.json, "error"), "memory budget") && strstr(jstr(r.json, "error"), b));
        resp_free(&r);
        free(w);
        CHECK(submit(d.addr, "chain", "chain", "normal", 1, &st) == NULL && st == 422);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    /* the key alone exceeds the budget: 422 at registration */
    snprintf(b, sizeof b, "%lld", kc - 1);
    if (daemon_start(&d, "budget2", "--memory-budget", b, NULL)) {
        char *zk = fixture("chain", "circuit.zkey"), body[1024];
        snprintf(body, sizeof body, "{\"id\": \"chain\", \"path\": \"%s\"}", zk);
        resp r;
        CHECK(http(&r, d.addr, "POST", "/v1/keys", body) && r.status == 422 &&
              strstr(jstr(r.json, "error"), "memory budget"));
        resp_free(&r);
        free(zk);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    /* room for one key and one partition, not two keys: jobs alternate between keys, each
     * evicts the other (least recently used) and reloads its own; all complete */
    long long need = (kc + pc > km + pm ? kc + pc : km + pm);
    if (need + (kc < km ? kc : km) <= need) {
        CHECK(0);
    }
    snprintf(b, sizeof b, "%lld", need + (kc < km ? kc : km) / 2);
    if (daemon_start(&d, "budget3", "--memory-budget", b, "--lookahead", "1", NULL)) {
        CHECK(add_key(d.addr, "chain", "chain"));
        CHECK(add_key(d.addr, "mult", "multiplier"));
        for (int i = 0; i < 4; i++) {
            const char *k = i % 2 ? "mult" : "chain", *c = i % 2 ? "multiplier" : "chain";
            char *id = submit(d.addr, k, c, "normal", 2, NULL);
            json_t *f = id ? wait_final(d.addr, id, 30) : NULL;
            CHECK(f && !strcmp(jstr(f, "state"), "done"));
            if (f && i >= 1)
                CHECK(json_number_value(json_object_get(json_object_get(f, "timings"), "srs_ms")) > 0);
            json_decref(f);
            free(id);
        }
        resp r;
        CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200);
        json_t *mem = json_object_get(r.json, "memory");
        CHECK(json_integer_value(json_object_get(mem, "used_bytes")) <=
              json_integer_value(json_object_get(mem, "budget_bytes")));
        resp_free(&r);
        CHECK(count_in_file(d.log, "event=key_evict") >= 3);
        CHECK(http(&r, d.addr, "GET", "/metrics", NULL) && r.body &&
              !strstr(r.body, "cuzk_key_evictions_total 0\n"));
        resp_free(&r);
        /* DELETE /v1/keys: gone for new jobs */
        CHECK(http(&r, d.addr, "DELETE", "/v1/keys/mult", NULL) && r.status == 200);
        resp_free(&r);
        long st;
        CHECK(submit(d.addr, "mult", "multiplier", "normal", 1, &st) == NULL && st == 404);
        CHECK(http(&r, d.addr, "DELETE", "/v1/keys/mult", NULL) && r.status == 404);
        resp_free(&r);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    return test_finish();
}

/* ---- params: bellman/bellperson keys ---- */

/* Runs a shell command; true when it exits 0. */
static bool run_cmd(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
    return rc == 0;
}

/* POST /v1/keys with body; returns the status, the error text copied into err. */
static long post_key(const char *addr, const char *body, char *err, size_t errlen)
{
    resp r;
    long st = http(&r, addr, "POST", "/v1/keys", body) ? r.status : 0;
    if (err)
        snprintf(err, errlen, "%s", r.json ? jstr(r.json, "error") : "");
    resp_free(&r);
    return st;
}

#define PARAMS_JOBS 12   /* jobs of the mixed batch, cycling over the keys below */

static int test_params(void)
{
    if (!snarkjs_present()) {
        printf("SKIP: snarkjs is not installed (run scripts/deps.sh)\n");
        return SKIP;
    }
    /* Keys: chain.params by cuzk setup (a fresh random setup), its vk for snarkjs, a corrupt
     * copy (one coordinate byte of ic[0] changed: off the curve or not canonical). */
    char cp[400], cvk[400], bad[400], ini[400];
    snprintf(cp, sizeof cp, "%s/chain.params", tmp_dir);
    snprintf(cvk, sizeof cvk, "%s/chain_params_vk.json", tmp_dir);
    snprintf(bad, sizeof bad, "%s/corrupt.params", tmp_dir);
    snprintf(ini, sizeof ini, "%s/params.ini", tmp_dir);
    char *r1cs = fixture("chain", "circuit.r1cs"), *mr1cs = fixture("multiplier", "circuit.r1cs");
    char *czk = fixture("chain", "circuit.zkey"), *cw = fixture("chain", "witness.wtns");
    char *mw = fixture("multiplier", "witness.wtns");
    CHECK(run_cmd("%s/cuzk setup %s %s > /dev/null", bin_dir, r1cs, cp));
    CHECK(run_cmd("%s/cuzk export vk %s %s", bin_dir, cp, cvk));
    size_t plen = 0;
    char *pbytes = read_file(cp, &plen);
    CHECK(pbytes && plen > 1000);
    if (!pbytes) {
        free(r1cs), free(mr1cs), free(czk), free(cw), free(mw);
        return test_finish();
    }
    /* the ic vector starts after 3 G1 + 3 G2 points and its u32 length: 3*96 + 3*192 + 4 */
    size_t ic0 = 3 * 96 + 3 * 192 + 4;
    pbytes[ic0 + 40] ^= 0x5a;
    FILE *f = fopen(bad, "wb");
    CHECK(f && fwrite(pbytes, 1, plen, f) == plen);
    if (f)
        fclose(f);
    free(pbytes);
    /* A second params key preloaded from the INI file ([key.ID] section, trusted load). */
    f = fopen(ini, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "[key.cp-ini]\npath = %s\nr1cs = %s\ntrusted = true\n", cp, r1cs);
        fclose(f);
    }

    daemon_proc d;
    if (!daemon_start(&d, "params", "--config", ini, "--gpu-workers", "1", "--synth-threads", "2",
                      NULL)) {
        CHECK(0);
        free(r1cs), free(mr1cs), free(czk), free(cw), free(mw);
        return test_finish();
    }
    char body[4096], err[1024];
    /* the API registration, with the decoded cache */
    snprintf(body, sizeof body, "{\"id\": \"cp\", \"path\": \"%s\", \"r1cs\": \"%s\", \"cache\": true}",
             cp, r1cs);
    CHECK(post_key(d.addr, body, err, sizeof err) == 201);
    CHECK(post_key(d.addr, body, err, sizeof err) == 200);   /* the same again: a no-op */
    char cache[420];
    snprintf(cache, sizeof cache, "%s.cuzkcache", cp);
    CHECK(access(cache, R_OK) == 0);
    CHECK(add_key(d.addr, "chain", "chain"));
    CHECK(add_key(d.addr, "mult", "multiplier"));
    resp r;
    CHECK(http(&r, d.addr, "GET", "/v1/keys/cp", NULL) && r.status == 200);
    CHECK(!strcmp(jstr(r.json, "format"), "params") && !strcmp(jstr(r.json, "r1cs"), r1cs));
    CHECK(json_integer_value(json_object_get(r.json, "n_vars")) == 142);   /* the fixture's */
    CHECK(json_integer_value(json_object_get(r.json, "n_public")) == 3);
    /* the memory estimate holds the decoded points: at least the file's size */
    CHECK(json_integer_value(json_object_get(r.json, "key_bytes")) >= (json_int_t)plen);
    CHECK(json_is_true(json_object_get(r.json, "cache")));
    resp_free(&r);
    CHECK(http(&r, d.addr, "GET", "/v1/keys/cp-ini", NULL) && r.status == 200);
    CHECK(json_is_true(json_object_get(r.json, "trusted")) && json_is_true(json_object_get(r.json, "loaded")));
    resp_free(&r);
    CHECK(http(&r, d.addr, "GET", "/v1/keys/chain", NULL) && r.status == 200);
    CHECK(!strcmp(jstr(r.json, "format"), "zkey") && !json_object_get(r.json, "r1cs"));
    resp_free(&r);

    /* Mixed jobs: params keys (1 or 2 partitions) and zkey jobs, submitted together. */
    static const char *const keys[4] = {"cp", "chain", "cp-ini", "mult"};
    char *ids[PARAMS_JOBS] = {0};
    for (int i = 0; i < PARAMS_JOBS; i++) {
        const char *k = keys[i % 4];
        long st;
        ids[i] = submit(d.addr, k, i % 4 == 3 ? "multiplier" : "chain", prios[i % 4], 1 + (i % 3 == 0), &st);
        CHECK(ids[i] && st == 202);
    }
    /* Error cases while those run: each a 4xx naming the file and the problem. */
    snprintf(body, sizeof body, "{\"id\": \"e1\", \"path\": \"%s\"}", cp);   /* no r1cs */
    CHECK(post_key(d.addr, body, err, sizeof err) == 400);
    CHECK(strstr(err, cp) && strstr(err, "r1cs"));
    snprintf(body, sizeof body, "{\"id\": \"e2\", \"path\": \"%s\", \"r1cs\": \"%s\"}", cp, mr1cs);
    CHECK(post_key(d.addr, body, err, sizeof err) == 422);   /* the wrong circuit */
    CHECK(strstr(err, cp) && strstr(err, mr1cs) && strstr(err, "does not fit"));
    snprintf(body, sizeof body, "{\"id\": \"e3\", \"path\": \"%s\", \"r1cs\": \"%s\"}", bad, r1cs);
    long st3 = post_key(d.addr, body, err, sizeof err);      /* corrupt .params */
    CHECK(st3 >= 400 && st3 < 500 && strstr(err, bad));
    printf("corrupt params: %ld %s\n", st3, err);
    snprintf(body, sizeof body, "{\"id\": \"e4\", \"path\": \"%s\", \"r1cs\": \"%s\"}", czk, r1cs);
    CHECK(post_key(d.addr, body, err, sizeof err) == 400);   /* r1cs with a .zkey */
    CHECK(strstr(err, czk) && strstr(err, ".zkey"));
    snprintf(body, sizeof body, "{\"id\": \"e5\", \"path\": \"%s\", \"trusted\": true}", czk);
    CHECK(post_key(d.addr, body, err, sizeof err) == 400);   /* flags without r1cs */
    snprintf(body, sizeof body, "{\"id\": \"e6\", \"path\": \"%s\", \"r1cs\": 7}", cp);
    CHECK(post_key(d.addr, body, err, sizeof err) == 400);   /* r1cs not a string */
    snprintf(body, sizeof body, "{\"id\": \"cp\", \"path\": \"%s\", \"r1cs\": \"%s\"}", cp, mr1cs);
    CHECK(post_key(d.addr, body, err, sizeof err) == 400);   /* id taken with another r1cs */
    snprintf(body, sizeof body, "{\"id\": \"e7\", \"path\": \"%s\", \"r1cs\": \"%s/nope.r1cs\"}", cp,
             tmp_dir);
    CHECK(post_key(d.addr, body, err, sizeof err) / 100 == 4 && strstr(err, "nope.r1cs"));
    /* a witness of another circuit for the params key: 4xx naming witness and key files */
    snprintf(body, sizeof body, "{\"key\": \"cp\", \"witnesses\": [\"%s\"]}", mw);
    CHECK(http(&r, d.addr, "POST", "/v1/proofs", body) && r.status / 100 == 4);
    CHECK(r.json && strstr(jstr(r.json, "error"), mw) && strstr(jstr(r.json, "error"), cp) &&
          strstr(jstr(r.json, "error"), "expects 142"));
    resp_free(&r);
    CHECK(http(&r, d.addr, "GET", "/v1/keys/e1", NULL) && r.status == 404);
    resp_free(&r);

    /* Every job done; every proof through snarkjs with the key's vk. */
    char manifest[400];
    snprintf(manifest, sizeof manifest, "%s/params_manifest.txt", tmp_dir);
    FILE *mf = fopen(manifest, "w");
    int done = 0, nproofs = 0;
    for (int i = 0; i < PARAMS_JOBS; i++) {
        json_t *fj = ids[i] ? wait_final(d.addr, ids[i], 120) : NULL;
        bool ok = fj && !strcmp(jstr(fj, "state"), "done");
        CHECK(ok);
        if (!ok) {
            fprintf(stderr, "job %s: %s %s\n", ids[i] ? ids[i] : "-", fj ? jstr(fj, "state") : "?",
                    fj ? jstr(fj, "error") : "");
            json_decref(fj);
            continue;
        }
        done++;
        const char *k = keys[i % 4];
        bool params = !strcmp(k, "cp") || !strcmp(k, "cp-ini");
        char *want_pub = fixture(i % 4 == 3 ? "multiplier" : "chain", "public.json");
        json_t *want = json_load_file(want_pub, 0, NULL);
        json_t *proofs = json_object_get(fj, "proofs"), *pubs = json_object_get(fj, "public");
        CHECK(json_array_size(proofs) == (size_t)(1 + (i % 3 == 0)));
        for (size_t q = 0; q < json_array_size(proofs); q++) {
            char pp[400], up[400];
            snprintf(pp, sizeof pp, "%s/pproof_%d_%zu.json", tmp_dir, i, q);
            snprintf(up, sizeof up, "%s/ppublic_%d_%zu.json", tmp_dir, i, q);
            CHECK(json_dump_file(json_array_get(proofs, q), pp, JSON_INDENT(1)) == 0);
            CHECK(json_dump_file(json_array_get(pubs, q), up, JSON_INDENT(1)) == 0);
            /* public inputs: witness values 1..n_public, as snarkjs's public.json */
            CHECK(want && json_equal(want, json_array_get(pubs, q)));
            char *vk = params ? strdup(cvk)
                              : fixture(i % 4 == 3 ? "multiplier" : "chain", "verification_key.json");
            if (mf)
                fprintf(mf, "%s\t%s\t%s\n", vk, up, pp);
            free(vk);
            nproofs++;
        }
        json_decref(want);
        free(want_pub);
        json_decref(fj);
    }
    /* A proof of the params key does not verify with the zkey's vk (the setups differ). */
    if (mf) {
        fclose(mf);
        mf = NULL;
    }
    CHECK(done == PARAMS_JOBS);
    printf("params: %d of %d jobs done, %d proofs\n", done, PARAMS_JOBS, nproofs);
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "node %s/tests/daemon/verify_all.mjs %s", src_dir, manifest);
    CHECK(system(cmd) == 0);
    char neg[400];
    snprintf(neg, sizeof neg, "%s/params_negative.txt", tmp_dir);
    mf = fopen(neg, "w");
    if (mf) {
        char *zvk = fixture("chain", "verification_key.json");
        fprintf(mf, "%s\t%s/ppublic_0_0.json\t%s/pproof_0_0.json\n", zvk, tmp_dir, tmp_dir);
        free(zvk);
        fclose(mf);
        snprintf(cmd, sizeof cmd, "node %s/tests/daemon/verify_all.mjs %s > /dev/null 2>&1", src_dir, neg);
        CHECK(system(cmd) != 0);
    }
    CHECK(count_in_file(d.log, "format=params") == 2);   /* cp-ini and cp loaded */
    CHECK(daemon_stop(&d, 20) == 0);

    /* Eviction and reload: room for one key and one partition, not two keys; jobs alternate
     * between the params key (reloaded from its cache) and the zkey. */
    long long kp = 0, pp = 0, kc = 0, pc = 0;
    if (daemon_start(&d, "params-sizes", NULL)) {
        snprintf(body, sizeof body, "{\"id\": \"cp\", \"path\": \"%s\", \"r1cs\": \"%s\", \"cache\": true}",
                 cp, r1cs);
        CHECK(post_key(d.addr, body, err, sizeof err) == 201);
        CHECK(add_key(d.addr, "chain", "chain"));
        CHECK(key_sizes(d.addr, "cp", &kp, &pp) && key_sizes(d.addr, "chain", &kc, &pc));
        CHECK(pp == pc);   /* same circuit, same domain: the same per-partition estimate */
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    char b[64];
    long long need = (kp + pp > kc + pc ? kp + pp : kc + pc);
    snprintf(b, sizeof b, "%lld", need + (kp < kc ? kp : kc) / 2);
    if (kp > 0 && kc > 0 && daemon_start(&d, "params-evict", "--memory-budget", b, "--lookahead", "1", NULL)) {
        snprintf(body, sizeof body, "{\"id\": \"cp\", \"path\": \"%s\", \"r1cs\": \"%s\", \"cache\": true}",
                 cp, r1cs);
        CHECK(post_key(d.addr, body, err, sizeof err) == 201);
        CHECK(add_key(d.addr, "chain", "chain"));
        for (int i = 0; i < 4; i++) {
            const char *k = i % 2 ? "chain" : "cp";
            char *id = submit(d.addr, k, "chain", "normal", 1, NULL);
            json_t *fj = id ? wait_final(d.addr, id, 30) : NULL;
            CHECK(fj && !strcmp(jstr(fj, "state"), "done"));
            json_decref(fj);
            free(id);
        }
        CHECK(count_in_file(d.log, "event=key_evict") >= 2);
        CHECK(http(&r, d.addr, "GET", "/v1/keys/cp", NULL) && r.status == 200);
        CHECK(json_integer_value(json_object_get(r.json, "loads")) >= 2);
        resp_free(&r);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    /* --key ID=PATH,r1cs=R1CS,trusted on the command line; a failing one stops the start */
    char kflag[1200];
    snprintf(kflag, sizeof kflag, "cpf=%s,r1cs=%s,trusted", cp, r1cs);
    if (daemon_start(&d, "params-flag", "--key", kflag, NULL)) {
        char *id = submit(d.addr, "cpf", "chain", "high", 1, NULL);
        json_t *fj = id ? wait_final(d.addr, id, 30) : NULL;
        CHECK(fj && !strcmp(jstr(fj, "state"), "done"));
        json_decref(fj);
        free(id);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    snprintf(kflag, sizeof kflag, "cpf=%s", cp);
    CHECK(!daemon_start(&d, "params-flag-bad", "--key", kflag, NULL));
    CHECK(count_in_file(d.log, "needs the circuit's .r1cs") >= 1);

    for (int i = 0; i < PARAMS_JOBS; i++)
        free(ids[i]);
    free(r1cs), free(mr1cs), free(czk), free(cw), free(mw);
    return test_finish();
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_daemon batch|cancel|errors|limits|sigterm|budget|params\n");
        return 2;
    }
    bin_dir = getenv("CUZK_BIN");
    src_dir = getenv("CUZK_SRC");
    if (!bin_dir || !src_dir) {
        fprintf(stderr, "CUZK_BIN and CUZK_SRC must be set\n");
        return 2;
    }
    char name[64];
    snprintf(name, sizeof name, "test_daemon %s", argv[1]);
    test_init(name);
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/cuzk-daemon-test-XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    atexit(kill_all);
    signal(SIGSEGV, on_fatal);
    signal(SIGABRT, on_fatal);
    signal(SIGINT, on_fatal);
    signal(SIGTERM, on_fatal);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc;
    if (!strcmp(argv[1], "batch"))
        rc = test_batch();
    else if (!strcmp(argv[1], "cancel"))
        rc = test_cancel();
    else if (!strcmp(argv[1], "errors"))
        rc = test_errors();
    else if (!strcmp(argv[1], "limits"))
        rc = test_limits();
    else if (!strcmp(argv[1], "sigterm"))
        rc = test_sigterm();
    else if (!strcmp(argv[1], "budget"))
        rc = test_budget();
    else if (!strcmp(argv[1], "params"))
        rc = test_params();
    else {
        fprintf(stderr, "unknown scenario %s\n", argv[1]);
        rc = 2;
    }
    kill_all();
    curl_global_cleanup();
    if (rc == 0) {   /* keep the logs of a failed run */
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_dir);
        if (system(cmd) != 0)
            rc = rc ? rc : 0;
    } else {
        printf("logs kept in %s\n", tmp_dir);
    }
    return rc;
}
