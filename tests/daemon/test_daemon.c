/* SPDX-License-Identifier: Apache-2.0 */
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
 *   test_daemon fuzz      hostile requests from the seed: wrong methods on every endpoint,
 *                         malformed, mistyped, nested, oversized bodies, bad base64, corrupt
 *                         .wtns, hostile key paths (FIFO, device, traversal), odd ids, bad
 *                         tokens, raw sockets (garbage, lying lengths, idle clients): each a
 *                         4xx with a reason; a good job proves after every batch; exit 0
 *   test_daemon config    the INI file's [gpu] section and --gpu: docs/cuzk-daemon.ini and
 *                         every option set are accepted (a job proves); a bad value, an
 *                         unknown name, another section's setting refuse the start (exit 2)
 *                         naming the file, the line and what the option takes
 *
 * Environment: CUZK_BIN (build dir with cuzk-daemon), CUZK_SRC (source dir).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/daemon_lib.h"
#include "test.h"
#include "test_files.h"
#include "util/timing.h"


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
        char *w = test_fixture_dup(circ, "witness.wtns");
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
    if (!daemon_start(&d, "batch", "--gpu-workers", "1", "--loader-threads", "2", "--lookahead", "2",
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
        static const char *const tk[] = {"queue_ms", "srs_ms", "load_ms", "prove_ms", "finalize_ms",
                                         "verify_ms", "total_ms"};
        for (int k = 0; k < 7; k++)
            CHECK(json_is_number(json_object_get(tm, tk[k])));
        double total = json_number_value(json_object_get(tm, "total_ms"));
        CHECK(json_number_value(json_object_get(tm, "prove_ms")) >= 25);   /* the added delay */
        CHECK(json_number_value(json_object_get(tm, "gpu_ms")) ==
              json_number_value(json_object_get(tm, "prove_ms")));   /* the earlier name */
        CHECK(json_number_value(json_object_get(tm, "verify_ms")) > 0);   /* verified by default */
        CHECK(total >= json_number_value(json_object_get(tm, "prove_ms")));
        sum[bc.prio[i]] += total;
        cnt[bc.prio[i]]++;
        char pp[400], up[400];
        snprintf(pp, sizeof pp, "%s/proof_%d.json", tmp_dir, i);
        snprintf(up, sizeof up, "%s/public_%d.json", tmp_dir, i);
        CHECK(json_dump_file(json_array_get(proofs, 0), pp, JSON_INDENT(1)) == 0);
        CHECK(json_dump_file(json_array_get(pubs, 0), up, JSON_INDENT(1)) == 0);
        /* public inputs are the fixture's (snarkjs's public.json) */
        char *fp = test_fixture_dup(circuits[bc.circ[i]], "public.json");
        json_t *want = json_load_file(fp, 0, NULL);
        CHECK(want && json_equal(want, json_array_get(pubs, 0)));
        json_decref(want);
        free(fp);
        char *vk = test_fixture_dup(circuits[bc.circ[i]], "verification_key.json");
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
    /* 50 partitions of one key: after the first few, witnesses load into kept buffers */
    {
        const char *m = r.body ? strstr(r.body, "\ncuzk_witness_buffers_reused_total ") : NULL;
        long reused = m ? atol(m + strlen("\ncuzk_witness_buffers_reused_total ")) : -1;
        CHECK(reused >= BATCH_JOBS / 2 && reused < BATCH_JOBS);
        if (!(reused >= BATCH_JOBS / 2 && reused < BATCH_JOBS))
            fprintf(stderr, "witness buffers reused: %ld of %d\n", reused, BATCH_JOBS);
    }
    resp_free(&r);
    /* One timeline line per pipeline event. */
    CHECK(count_in_file(d.log, "event=load_start") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=prove_pickup") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=prove_start") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=prove_end") == BATCH_JOBS);
    CHECK(count_in_file(d.log, "event=gpu_") == 0);   /* the stage is named by what it is */
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
    CHECK(count_in_file(d.log, "event=prove_start") <= 3);
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

    char *w_chain = test_fixture_dup("chain", "witness.wtns");
    char *w_mult = test_fixture_dup("multiplier", "witness.wtns");
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
        CHECK(http_ex(&r, d.addr, "GET", "/v1/status", NULL, NULL, 0, "Authorization:") &&
              r.status == 401);
        resp_free(&r);
        CHECK(http_ex(&r, d.addr, "GET", "/v1/status", NULL, NULL, 0, "Authorization: Bearer wrong") &&
              r.status == 401);
        resp_free(&r);
        const char *auth = "Authorization: Bearer s3cret";
        CHECK(http_ex(&r, d.addr, "GET", "/v1/status", NULL, NULL, 0, auth) && r.status == 200);
        resp_free(&r);
        char admin[600];   /* keys are registered with the operator's token */
        snprintf(admin, sizeof admin, "Authorization: Bearer %s", d.admin);
        char *zk = test_fixture_dup("chain", "circuit.zkey");
        char *zm = test_fixture_dup("multiplier", "circuit.zkey");
        snprintf(body, sizeof body, "{\"id\": \"chain\", \"path\": \"%s\"}", zk);
        CHECK(http_ex(&r, d.addr, "POST", "/v1/keys", "application/json", body, strlen(body), admin) &&
              r.status == 201);
        resp_free(&r);
        snprintf(body, sizeof body, "{\"id\": \"mult\", \"path\": \"%s\"}", zm);
        CHECK(http_ex(&r, d.addr, "POST", "/v1/keys", "application/json", body, strlen(body), admin) &&
              r.status == 403 && strstr(jstr(r.json, "error"), "allow"));
        resp_free(&r);
        snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s\"]}", w_mult);
        CHECK(http_ex(&r, d.addr, "POST", "/v1/proofs", "application/json", body, strlen(body), auth) &&
              r.status == 403);
        resp_free(&r);
        /* a ".." leaving the allowed directory is refused even when it comes back in */
        snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s/../chain/witness.wtns\"]}", allow);
        CHECK(http_ex(&r, d.addr, "POST", "/v1/proofs", "application/json", body, strlen(body), auth) &&
              r.status == 403);
        resp_free(&r);
        snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s/./witness.wtns\"]}", allow);
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

static void test_body_budget(void);

static int test_limits(void)
{
    daemon_proc d;
    /* --allow-host x: the raw requests' Host */
    if (!daemon_start(&d, "limits", "--allow-host", "x", "--gpu-workers", "1", "--max-queued", "3",
                      "--debug-device-delay-ms", "300", NULL)) {
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
    char *w = test_fixture_dup("chain", "witness.wtns"), body[1024];
    snprintf(body, sizeof body, "{\"key\": \"chain\", \"witnesses\": [\"%s\"]}", w);
    resp r;
    CHECK(http(&r, d.addr, "POST", "/v1/proofs", body) && r.status == 503 && r.retry_after[0] &&
          atoi(r.retry_after) >= 1 && strstr(jstr(r.json, "error"), "queue full"));
    resp_free(&r);

    /* clients that disconnect mid-request: a body cut short, headers cut short, a long poll */
    char partial[1024];
    snprintf(partial, sizeof partial, "POST /v1/proofs HTTP/1.1\r\nHost: x\r\nAuthorization: "
             "Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
             "{\"key\": \"chain\", \"witn", d.token);
    for (int i = 0; i < 5; i++)
        send_and_vanish(d.addr, partial, strlen(partial));
    send_and_vanish(d.addr, "GET /v1/sta", 11);
    char lp[1024];
    snprintf(lp, sizeof lp, "GET /v1/proofs/%s?wait=30 HTTP/1.1\r\nHost: x\r\nAuthorization: "
             "Bearer %s\r\n\r\n", ids[2], d.token);
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

    test_body_budget();

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
        /* the default lookahead: one loaded partition per device worker, at least 2 */
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
        char *w = test_fixture_dup("chain", "witness.wtns"), body[1024];
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
        char *zk = test_fixture_dup("chain", "circuit.zkey"), body[1024];
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
    char *r1cs = test_fixture_dup("chain", "circuit.r1cs");
    char *mr1cs = test_fixture_dup("multiplier", "circuit.r1cs");
    char *czk = test_fixture_dup("chain", "circuit.zkey");
    char *cw = test_fixture_dup("chain", "witness.wtns");
    char *mw = test_fixture_dup("multiplier", "witness.wtns");
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
    if (!daemon_start(&d, "params", "--config", ini, "--gpu-workers", "1", "--loader-threads", "2",
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
    char cache[420];   /* in STATE_DIR/cache (authenticated), not beside the key */
    snprintf(cache, sizeof cache, "%s.cuzkcache", cp);
    CHECK(access(cache, F_OK) != 0);
    snprintf(cache, sizeof cache, "%s/cache/secret", d.state);
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
        char *want_pub = test_fixture_dup(i % 4 == 3 ? "multiplier" : "chain", "public.json");
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
                              : test_fixture_dup(i % 4 == 3 ? "multiplier" : "chain",
                                                 "verification_key.json");
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
        char *zvk = test_fixture_dup("chain", "verification_key.json");
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

/* ---- config: the INI file's [gpu] section and the --gpu flag ---- */

/* Writes ini to tmp/TAG.ini and runs cuzk-daemon --config on it with flags (a shell
 * fragment): it must refuse to start (exit status 2) with "FILE:LINE: " (line > 0) and
 * both needles on stderr. */
static void expect_refusal(const char *tag, const char *ini, const char *flags, int line,
                           const char *n1, const char *n2)
{
    char path[400], err[400], where[440];
    snprintf(path, sizeof path, "%s/%s.ini", tmp_dir, tag);
    snprintf(err, sizeof err, "%s/%s.err", tmp_dir, tag);
    snprintf(where, sizeof where, "%s:%d: ", path, line);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(ini, f) >= 0);
    if (f)
        fclose(f);
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "timeout 30 %s/cuzk-daemon --config %s --listen 127.0.0.1:0 %s > %s 2>&1 < /dev/null",
             bin_dir, path, flags, err);
    int rc = system(cmd);
    CHECK(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
    size_t n;
    char *t = read_file(err, &n);
    bool ok = t && (line <= 0 || strstr(t, where)) && strstr(t, n1) && (!n2 || strstr(t, n2));
    CHECK(ok);
    if (!ok || rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 2)
        fprintf(stderr, "%s: status %d, stderr: %s\n", tag, rc, t ? t : "(none)");
    free(t);
}

/* Starts a daemon with the given flags (and the example key), proves one job, stops it. */
static void expect_start(const char *tag, const char *f1, const char *f2, const char *f3,
                         const char *f4)
{
    daemon_proc d;
    if (!daemon_start(&d, tag, "--example", f1, f2, f3, f4, NULL)) {
        CHECK(0);
        return;
    }
    long st = 0;
    char *id = submit(d.addr, "example", "chain", "normal", 1, &st);
    CHECK(id && st == 202);
    json_t *fj = id ? wait_final(d.addr, id, 60) : NULL;
    CHECK(fj && !strcmp(jstr(fj, "state"), "done"));
    json_decref(fj);
    free(id);
    CHECK(daemon_stop(&d, 20) == 0);
}

/* Runs cuzk-daemon --state-dir dir (and a free port): it must exit with status 1 and both
 * needles on stderr. */
static void expect_state_refusal(const char *tag, const char *dir, const char *n1, const char *n2)
{
    char err[400], cmd[1400];
    snprintf(err, sizeof err, "%s/%s.err", tmp_dir, tag);
    snprintf(cmd, sizeof cmd,
             "timeout 30 %s/cuzk-daemon --example --listen 127.0.0.1:0 --state-dir '%s' > %s 2>&1 "
             "< /dev/null",
             bin_dir, dir, err);
    int rc = system(cmd);
    size_t n;
    char *t = read_file(err, &n);
    bool ok = rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 1 && t && strstr(t, n1) &&
              (!n2 || strstr(t, n2));
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "%s: status %d, stderr: %s\n", tag, rc, t ? t : "(none)");
    free(t);
}

/* The state directory: made 0700 (parents too), one daemon at a time, refused when others
 * may write it or when it is a symbolic link. */
static void test_state_dir(void)
{
    char dir[400], link[400], pid[32];
    snprintf(dir, sizeof dir, "%s/state-one/deeper", tmp_dir);
    daemon_proc d;
    if (!daemon_start(&d, "state-one", "--example", "--state-dir", dir, NULL)) {
        CHECK(0);
        return;
    }
    struct stat st;
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    snprintf(pid, sizeof pid, "(pid %ld)", (long)d.pid);
    expect_state_refusal("state-twice", dir, "is in use by another cuzk-daemon", pid);
    CHECK(daemon_stop(&d, 20) == 0);
    CHECK(chmod(dir, 0770) == 0);
    expect_state_refusal("state-mode", dir, "not writable by group or others", "mode 0770");
    CHECK(chmod(dir, 0700) == 0);
    snprintf(link, sizeof link, "%s/state-link", tmp_dir);
    CHECK(symlink(dir, link) == 0);
    expect_state_refusal("state-link", link, "state-link: not a directory", NULL);
    /* the directory back in order: a daemon starts on it again */
    expect_start("state-again", "--state-dir", dir, NULL, NULL);
}

static int test_config(void)
{
    /* the documented example file, as it is */
    char docs[600];
    snprintf(docs, sizeof docs, "%s/docs/cuzk-daemon.ini", src_dir);
    expect_start("config-docs", "--config", docs, NULL, NULL);
    /* every [gpu] option away from its default, beside the other sections */
    char good[400];
    snprintf(good, sizeof good, "%s/good.ini", tmp_dir);
    FILE *f = fopen(good, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("[engine]\nverify = true\n\n[gpu]\n; every option\nsynth = off\nbases = stream\n"
              "msm_chunk = 1024\nwitness = copy\nb_g2 = cpu\nparams_check_min = 1\n\n"
              "[log]\nlog_level = info\n", f);
        fclose(f);
    }
    expect_start("config-good", "--config", good, NULL, NULL);
    expect_start("config-flags", "--gpu", "synth=dedup", "--gpu", "b_g2=cpu");

    /* refusals: the file, the line, the setting and what it takes */
    expect_refusal("gpu-value", "[engine]\nverify = true\n[gpu]\nsynth = bogus\n", "", 4,
                   "[gpu] synth = bogus", "'bogus' is not one of auto, full, dedup or off");
    expect_refusal("gpu-name", "[gpu]\nbases = auto\nsynthesis = full\n", "", 3,
                   "[gpu] synthesis = full", "gpu option 'synthesis' is unknown");
    expect_refusal("gpu-count", "[gpu]\nmsm_chunk = 0\n", "", 2, "[gpu] msm_chunk = 0",
                   "not a positive count");
    /* [gpu] takes only its own names, not the other sections' */
    expect_refusal("gpu-other", "[gpu]\nverify = true\n", "", 2, "[gpu] verify = true",
                   "is unknown");
    expect_refusal("engine-name", "[engine]\nverify = true\nverfy = false\n", "", 3,
                   "[engine] verfy = false", "unknown setting");
    expect_refusal("gpu-flag", "", "--gpu witness=sometimes", 0, "--gpu witness=sometimes",
                   "auto, copy or register");
    expect_refusal("gpu-flag-form", "", "--gpu synth", 0, "--gpu synth", "NAME=VALUE");
    test_state_dir();
    return test_finish();
}

/* ---- fuzz: hostile requests ---- */

#define FZ_TOKEN "fuzz-t0ken"
#define FZ_AUTH "Authorization: Bearer " FZ_TOKEN
#define FZ_MAX_BODY 65536   /* --max-body 64K */

static const char *fz_addr;
static char *fz_wpath;           /* the chain fixture's witness (a copy in phase 2) */
static unsigned char *fz_wtns;   /* its bytes */
static size_t fz_wlen;
static char *fz_wb64;            /* and in base64 */
static char fz_fifo[440], fz_sock[300], fz_loop[300];
static unsigned long fz_requests;

/* A growing string. */
typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const void *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char *t = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&t, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort();
    sb_put(b, t, (size_t)n);
    free(t);
}

static size_t fz_below(size_t n) { return (size_t)(test_rand64() % n); }

/* One request with the token, unless auth names another Authorization header; status 0 when
 * no answer came. */
static void fz_http(resp *r, const char *method, const char *path, const char *ctype,
                    const void *body, size_t len, const char *auth)
{
    if (!http_ex(r, fz_addr, method, path, ctype, body, len, auth))
        r->status = 0;
    fz_requests++;
}

/* The request must get status want (any 4xx when want is 4) and {"error": REASON}, REASON
 * naming needle when given. what names the case in a failure's message. */
static void fz_expect_ex(const char *what, long want, const char *needle, const char *method,
                         const char *path, const char *ctype, const void *body, size_t len,
                         const char *auth)
{
    resp r;
    fz_http(&r, method, path, ctype, body, len, auth);
    const char *err = json_string_value(json_object_get(r.json, "error"));
    bool ok = (want == 4 ? r.status / 100 == 4 : r.status == want) && err && err[0] &&
              (!needle || strstr(err, needle));
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "fuzz %s: %s %.80s: expected %ld /%s/, got %ld %.300s\n", what, method,
                path, want, needle ? needle : "", r.status, r.body ? r.body : "(no answer)");
    resp_free(&r);
}

static void fz_expect(const char *what, long want, const char *needle, const char *method,
                      const char *path, const char *json)
{
    fz_expect_ex(what, want, needle, method, path, json ? "application/json" : NULL, json,
                 json ? strlen(json) : 0, NULL);
}

/* A reader the daemon left blocked on the FIFO (the bug this scenario guards against) gets
 * its end of file, so that a failure does not also hang the daemon's exit. */
static void fz_unblock_fifo(void)
{
    int fd = open(fz_fifo, O_WRONLY | O_NONBLOCK);
    if (fd >= 0)
        close(fd);
}

/* Waits for an accepted job: it must end done or failed (with a reason), never hang. */
static void fz_job_final(const char *what, const char *id)
{
    json_t *f = wait_final(fz_addr, id, 60);
    const char *st = f ? jstr(f, "state") : "";
    bool ok = !strcmp(st, "done") || (!strcmp(st, "failed") && jstr(f, "error")[0]);
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "fuzz %s: job %s: %s %s\n", what, id, f ? st : "(no answer)",
                f ? jstr(f, "error") : "");
    json_decref(f);
}

/* After each batch: a good job (the chain fixture's witness on the example key, by path,
 * uploaded in JSON or raw, in turn) ends done, its public inputs are the fixture's and its
 * proof passes cuzk verify with the fixture's verification key; status and metrics answer.
 * A job of 4 partitions submitted at the end runs while the next batch comes, and must be done
 * at the next call (NULL after: the last call, which submits none). */
static char fz_first_id[64];   /* the first good job's id */

static void fz_good_job(const char *after)
{
    static int n;
    static char *background;
    int kind = n++ % 3;
    resp r;
    if (background) {
        json_t *f = wait_final(fz_addr, background, 60);
        bool done = f && !strcmp(jstr(f, "state"), "done") &&
                    json_array_size(json_object_get(f, "proofs")) == 4;
        CHECK(done);
        if (!done)
            fprintf(stderr, "fuzz: job %s during the batch before %s: %s %s\n", background,
                    after ? after : "the end", f ? jstr(f, "state") : "(no answer)",
                    f ? jstr(f, "error") : "");
        json_decref(f);
        free(background);
        background = NULL;
    }
    if (!after)
        return;
    if (kind == 0) {
        char body[1024];
        snprintf(body, sizeof body, "{\"key\": \"example\", \"witnesses\": [\"%s\"]}", fz_wpath);
        fz_http(&r, "POST", "/v1/proofs", "application/json", body, strlen(body), NULL);
    } else if (kind == 1) {
        sbuf b = {0};
        sb_printf(&b, "{\"key\": \"example\", \"priority\": \"high\", "
                      "\"witnesses\": [{\"wtns_base64\": \"%s\"}]}", fz_wb64);
        fz_http(&r, "POST", "/v1/proofs", "application/json", b.p, b.n, NULL);
        free(b.p);
    } else {
        fz_http(&r, "POST", "/v1/proofs?key=example&priority=low", "application/octet-stream",
                fz_wtns, fz_wlen, NULL);
    }
    char *id = r.status == 202 ? strdup(jstr(r.json, "id")) : NULL;
    if (id && !fz_first_id[0])
        snprintf(fz_first_id, sizeof fz_first_id, "%s", id);
    if (!id)
        fprintf(stderr, "fuzz: good job after %s: %ld %s\n", after, r.status,
                r.body ? r.body : "(no answer)");
    resp_free(&r);
    json_t *f = id ? wait_final(fz_addr, id, 60) : NULL;
    bool done = f && !strcmp(jstr(f, "state"), "done");
    CHECK(done);
    if (id && !done)
        fprintf(stderr, "fuzz: good job %s after %s: %s %s\n", id, after,
                f ? jstr(f, "state") : "(no answer)", f ? jstr(f, "error") : "");
    if (done) {
        char pp[400], up[400];
        snprintf(pp, sizeof pp, "%s/fuzz_proof.json", tmp_dir);
        snprintf(up, sizeof up, "%s/fuzz_public.json", tmp_dir);
        json_t *pub = json_array_get(json_object_get(f, "public"), 0);
        char *fp = test_fixture_dup("chain", "public.json");
        char *vk = test_fixture_dup("chain", "verification_key.json");
        json_t *want = json_load_file(fp, 0, NULL);
        CHECK(want && json_equal(want, pub));
        CHECK(json_dump_file(json_array_get(json_object_get(f, "proofs"), 0), pp, 0) == 0 &&
              json_dump_file(pub, up, 0) == 0);
        CHECK(run_cmd("%s/cuzk verify %s %s %s > /dev/null", bin_dir, vk, up, pp));
        json_decref(want);
        free(fp);
        free(vk);
    }
    json_decref(f);
    free(id);
    CHECK(http(&r, fz_addr, "GET", "/v1/status", NULL) && r.status == 200 &&
          json_object_get(r.json, "jobs"));
    resp_free(&r);
    CHECK(http(&r, fz_addr, "GET", "/metrics", NULL) && r.status == 200 && r.body &&
          strstr(r.body, "cuzk_jobs_total"));
    resp_free(&r);
    sbuf b = {0};
    sb_printf(&b, "{\"key\": \"example\", \"priority\": \"low\", \"witnesses\": [");
    for (int i = 0; i < 4; i++)
        sb_printf(&b, "%s\"%s\"", i ? ", " : "", fz_wpath);
    sb_printf(&b, "]}");
    fz_http(&r, "POST", "/v1/proofs", "application/json", b.p, b.n, NULL);
    background = r.status == 202 ? strdup(jstr(r.json, "id")) : NULL;
    CHECK(background != NULL);
    resp_free(&r);
    free(b.p);
}

/* Every endpoint of docs/API.md with each method it does not serve, unknown and lower-case
 * ones too: 405, naming the methods it serves. */
static void fz_methods(void)
{
    static const struct {
        const char *path, *served;
    } eps[] = {
        {"/healthz", " GET "},          {"/v1/status", " GET "},
        {"/metrics", " GET "},          {"/v1/keys", " GET POST "},
        {"/v1/keys/example", " GET DELETE "}, {"/v1/proofs", " POST "},
        {"/v1/proofs/1", " GET DELETE "},
    };
    static const char *const methods[] = {"GET",   "POST",  "DELETE", "PUT", "PATCH",
                                          "OPTIONS", "TRACE", "FOO",  "get", "Post"};
    for (size_t e = 0; e < sizeof eps / sizeof eps[0]; e++)
        for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
            char word[16];
            snprintf(word, sizeof word, " %s ", methods[m]);
            if (strstr(eps[e].served, word))
                continue;
            /* with a body half of the time: a good submission, which must not be taken */
            char body[1024];
            snprintf(body, sizeof body, "{\"key\": \"example\", \"witnesses\": [\"%s\"]}",
                     fz_wpath);
            bool with = fz_below(2);
            fz_expect_ex("wrong method", 405, "use ", methods[m], eps[e].path,
                         with ? "application/json" : NULL, with ? body : NULL,
                         with ? strlen(body) : 0, NULL);
        }
}

/* ---- random JSON ---- */

/* A random JSON string literal: short, or long now and then; ASCII, escapes and UTF-8.
 * *bad is set when jansson must refuse it (an escaped NUL, a lone surrogate). */
static void fz_string(sbuf *b, bool *bad)
{
    static const char *const pieces[] = {"\\n", "\\\"", "\\\\", "\\/", "\\t", "\\u00e9", "\\u20ac",
                                         "\\ud83d\\ude00", "\xc3\xa9", "\xe2\x82\xac",
                                         "\xf0\x9f\x98\x80", "../", "%00", "%ff"};
    size_t len = fz_below(10) == 0 ? 500 + fz_below(6000) : fz_below(24);
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        size_t k = fz_below(40);
        if (k < sizeof pieces / sizeof pieces[0]) {
            sb_printf(b, "%s", pieces[k]);
        } else if (k == 39 && fz_below(20) == 0) {
            sb_printf(b, "%s", fz_below(2) ? "\\u0000" : "\\udc00");
            *bad = true;
        } else {
            char c = (char)(0x20 + fz_below(0x5f));
            if (c == '"' || c == '\\')
                c = '_';
            sb_put(b, &c, 1);
        }
    }
    sb_put(b, "\"", 1);
}

/* A random JSON value of at most depth levels of arrays and objects; returns its kind: 'n'
 * null, 'b' boolean, 'i' number, 's' string, 'a' array, 'o' object. *bad as above, also for
 * an integer beyond 64 bits. Object members are named m0..., so never a field of the API. */
static char fz_value(sbuf *b, int depth, bool *bad)
{
    static const char *const nums[] = {"0",   "-1",  "7",    "-9223372036854775808",
                                       "9223372036854775807", "1e308", "-1e-308", "0.5",
                                       "-0",  "2.5e-3"};
    static const char *const big[] = {"18446744073709551616", "123456789012345678901234567890",
                                      "-99999999999999999999"};
    switch (fz_below(depth > 0 ? 7 : 5)) {
    case 0:
        sb_printf(b, "null");
        return 'n';
    case 1:
        sb_printf(b, fz_below(2) ? "true" : "false");
        return 'b';
    case 2:
        if (fz_below(8) == 0) {
            sb_printf(b, "%s", big[fz_below(3)]);
            *bad = true;
        } else {
            sb_printf(b, "%s", nums[fz_below(10)]);
        }
        return 'i';
    case 3:
    case 4:
        fz_string(b, bad);
        return 's';
    case 5: {
        size_t n = fz_below(4);
        sb_put(b, "[", 1);
        for (size_t i = 0; i < n; i++) {
            if (i)
                sb_put(b, ", ", 2);
            fz_value(b, depth - 1, bad);
        }
        sb_put(b, "]", 1);
        return 'a';
    }
    default: {
        size_t n = fz_below(4);
        sb_put(b, "{", 1);
        for (size_t i = 0; i < n; i++) {
            sb_printf(b, "%s\"m%zu", i ? ", " : "", i);
            sbuf name = {0};
            fz_string(&name, bad);
            sb_put(b, name.p + 1, name.n - 1);   /* its opening quote dropped */
            free(name.p);
            sb_put(b, ": ", 2);
            fz_value(b, depth - 1, bad);
        }
        sb_put(b, "}", 1);
        return 'o';
    }
    }
}

/* A random value that is not of kind not_kind (nor null when no_null). */
static void fz_value_not(sbuf *b, char not_kind, bool no_null, bool *bad)
{
    for (;;) {
        sbuf t = {0};
        bool tb = false;
        char k = fz_value(&t, 2, &tb);
        if (k != not_kind && !(no_null && k == 'n')) {
            sb_put(b, t.p, t.n);
            *bad |= tb;
            free(t.p);
            return;
        }
        free(t.p);
    }
}

/* Paths to refuse (JSON string contents): missing, a directory, devices, a FIFO, a socket, a
 * symlink loop, traversal, empty, too long, a newline that would forge a log line. */
static void fz_hostile_path(sbuf *b, size_t i)
{
    switch (i) {
    case 0:
        sb_printf(b, "/nonexistent/fuzz.wtns");
        break;
    case 1:
        sb_printf(b, "%s", tmp_dir);
        break;
    case 2:
        sb_printf(b, "/dev/zero");
        break;
    case 3:
        sb_printf(b, "/dev/null");
        break;
    case 4:
        sb_printf(b, "%s", fz_fifo);
        break;
    case 5:
        sb_printf(b, "%s", fz_sock);
        break;
    case 6:
        sb_printf(b, "%s", fz_loop);
        break;
    case 7:
        sb_printf(b, "../../../../../../../../etc/passwd");
        break;
    case 8:
        sb_printf(b, "/etc/passwd/../passwd");
        break;
    case 9:
        sb_printf(b, "/proc/self/fd/0");   /* the daemon's stdin: /dev/null */
        break;
    case 10:
        sb_printf(b, "/proc/self/environ");   /* a regular file of size 0 */
        break;
    case 11:
        break;   /* empty */
    case 12:
        sb_printf(b, "%s/x\\nevent=job_final job=999999 state=done", tmp_dir);
        break;
    default:
        sb_put(b, "/", 1);
        for (int k = 0; k < 5000; k++)
            sb_put(b, "a", 1);
        break;
    }
}
#define FZ_N_HOSTILE 14
#define FZ_HOSTILE_LONG 13   /* the one longer than the engine's paths */

static const char *const fz_bad_b64[] = {"@@@@", "AAA-", "AAA_", "AA=A", "A", "AAAAA", "=A==",
                                         "d3Ruc\\u00e9", "AAAA AAA!", "d3Ru\\nZA=="};
#define FZ_N_BAD_B64 9   /* the last one is valid (whitespace is skipped): 4 bytes */

/* A good witness element: a path string, {"path": P} or {"wtns_base64": B}. */
static void fz_good_witness(sbuf *b)
{
    switch (fz_below(3)) {
    case 0:
        sb_printf(b, "\"%s\"", fz_wpath);
        break;
    case 1:
        sb_printf(b, "{\"path\": \"%s\"}", fz_wpath);
        break;
    default:
        sb_printf(b, "{\"wtns_base64\": \"%s\"}", fz_wb64);
        break;
    }
}

/* A witness element the API does not know: not a string, an object with other members. */
static void fz_bad_witness(sbuf *b, bool *bad)
{
    switch (fz_below(6)) {
    case 0:
        fz_value_not(b, 's', false, bad);
        break;
    case 1:
        sb_printf(b, "{}");
        break;
    case 2:
        sb_printf(b, "{\"path\": ");
        fz_value_not(b, 's', false, bad);
        sb_printf(b, "}");
        break;
    case 3:
        sb_printf(b, "{\"wtns_base64\": ");
        fz_value_not(b, 's', false, bad);
        sb_printf(b, "}");
        break;
    case 4:
        sb_printf(b, "{\"path\": \"%s\", \"wtns_base64\": \"%s\"}", fz_wpath, fz_wb64);
        break;
    default:
        sb_printf(b, "{\"path\": \"%s\", \"mode\": 1}", fz_wpath);
        break;
    }
}

/* POST /v1/proofs bodies with one thing wrong each (a field's type or value, a missing,
 * unknown or repeated field, a bad witness), fields in random order; then truncated JSON,
 * random bytes, deep nesting and other shapes. */
static void fz_submit_bodies(unsigned iters)
{
    static const char *const unknown[] = {"priorty", "Key", "witness", "timeout", "key ", "", "m"};
    for (unsigned it = 0; it < iters; it++) {
        sbuf v[5] = {{0}};
        const char *name[5] = {"key", "priority", "witnesses", NULL, NULL};
        bool has[5] = {true, fz_below(2) == 1, true, false, false}, bad = false;
        int fault = (int)fz_below(12);
        size_t nw = 1 + fz_below(3), badw = fz_below(nw);
        sb_printf(&v[0], "\"example\"");
        if (fz_below(5))
            sb_printf(&v[1], "\"%s\"", prios[fz_below(4)]);
        else
            sb_printf(&v[1], "null");
        sb_put(&v[2], "[", 1);
        for (size_t i = 0; i < nw; i++) {
            if (i)
                sb_put(&v[2], ", ", 2);
            if (fault == 6 && i == badw) {
                fz_bad_witness(&v[2], &bad);
            } else if (fault == 10 && i == badw) {
                sb_put(&v[2], "\"", 1);
                fz_hostile_path(&v[2], fz_below(FZ_N_HOSTILE));
                sb_put(&v[2], "\"", 1);
            } else if (fault == 11 && i == badw) {
                sb_printf(&v[2], "{\"wtns_base64\": \"%s\"}", fz_bad_b64[fz_below(FZ_N_BAD_B64)]);
            } else {
                fz_good_witness(&v[2]);
            }
        }
        sb_put(&v[2], "]", 1);
        long want = 400;
        char needle[64];
        snprintf(needle, sizeof needle, "\"key\"");
        switch (fault) {
        case 0:
            v[0].n = 0;
            fz_value_not(&v[0], 's', false, &bad);
            break;
        case 1:
            v[0].n = 0;
            fz_string(&v[0], &bad);
            want = 404;
            snprintf(needle, sizeof needle, "unknown key");
            break;
        case 2:
            has[0] = false;
            break;
        case 3:
            has[1] = true;
            v[1].n = 0;
            fz_value_not(&v[1], 's', true, &bad);
            snprintf(needle, sizeof needle, "\"priority\"");
            break;
        case 4:
            has[1] = true;
            v[1].n = 0;
            fz_string(&v[1], &bad);
            snprintf(needle, sizeof needle, "priority");
            break;
        case 5:
            v[2].n = 0;
            if (fz_below(4) == 0)
                sb_printf(&v[2], "[]");
            else
                fz_value_not(&v[2], 'a', false, &bad);
            snprintf(needle, sizeof needle, "\"witnesses\"");
            break;
        case 6:
            snprintf(needle, sizeof needle, "witnesses[%zu]", badw);
            break;
        case 7:
            has[2] = false;
            snprintf(needle, sizeof needle, "\"witnesses\"");
            break;
        case 8:
            has[3] = true;
            name[3] = unknown[fz_below(sizeof unknown / sizeof unknown[0])];
            fz_value(&v[3], 2, &bad);
            snprintf(needle, sizeof needle, "unknown field");
            break;
        case 9: {
            size_t d = has[1] ? fz_below(3) : 2 * fz_below(2);
            has[4] = true;
            name[4] = name[d];
            sb_put(&v[4], v[d].p, v[d].n);
            snprintf(needle, sizeof needle, "duplicate");
            break;
        }
        case 10:
            want = 422;
            snprintf(needle, sizeof needle, "witness %zu", badw);
            break;
        default:
            snprintf(needle, sizeof needle, "base64");
            break;
        }
        if (bad) {   /* no JSON for jansson: refused before any field is looked at */
            want = 400;
            snprintf(needle, sizeof needle, "malformed JSON");
        }
        /* the members in a random order */
        int order[5] = {0, 1, 2, 3, 4};
        for (int i = 4; i > 0; i--) {
            int j = (int)fz_below((size_t)i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        sbuf body = {0};
        sb_put(&body, "{", 1);
        for (int i = 0, first = 1; i < 5; i++)
            if (has[order[i]]) {
                sb_printf(&body, "%s\"%s\": ", first ? "" : ", ", name[order[i]]);
                sb_put(&body, v[order[i]].p, v[order[i]].n);
                first = 0;
            }
        sb_put(&body, "}", 1);
        if (body.n > FZ_MAX_BODY) {
            want = 413;
            snprintf(needle, sizeof needle, "max_body");
        }
        char what[64];
        snprintf(what, sizeof what, "submit body %u (fault %d)", it, fault);
        fz_expect_ex(what, want, needle, "POST", "/v1/proofs", "application/json", body.p, body.n,
                     NULL);
        if (fault == 10)
            fz_unblock_fifo();
        for (int i = 0; i < 5; i++)
            free(v[i].p);
        free(body.p);
    }

    /* truncated JSON: every cut of a good body is malformed */
    char good[1024];
    int glen = snprintf(good, sizeof good,
                        "{\"key\": \"example\", \"priority\": \"high\", \"witnesses\": [\"%s\", "
                        "{\"path\": \"%s\"}]}", fz_wpath, fz_wpath);
    for (unsigned it = 0; it < iters / 2; it++)
        fz_expect_ex("truncated JSON", 400, "malformed JSON", "POST", "/v1/proofs",
                     "application/json", good, fz_below((size_t)glen), NULL);
    /* random bytes, as JSON, as a form, without a type */
    static const char *const ctypes[] = {"application/json", "application/x-www-form-urlencoded",
                                         "text/plain", NULL};
    for (unsigned it = 0; it < iters / 2; it++) {
        uint8_t junk[400];
        size_t n = 1 + fz_below(sizeof junk);
        test_rand_bytes(junk, n);
        fz_expect_ex("random bytes", 400, NULL, "POST", "/v1/proofs", ctypes[fz_below(4)], junk,
                     n, NULL);
    }
    /* deep nesting: beyond jansson's depth limit, or within it where a field is expected */
    sbuf d = {0};
    for (int i = 0; i < 5000; i++)
        sb_put(&d, "[", 1);
    for (int i = 0; i < 5000; i++)
        sb_put(&d, "]", 1);
    fz_expect("nested arrays", 400, "malformed JSON", "POST", "/v1/proofs", d.p);
    d.n = 0;
    sb_printf(&d, "{\"key\": \"example\", \"witnesses\": [");
    for (int i = 0; i < 1000; i++)
        sb_put(&d, "[", 1);
    for (int i = 0; i < 1000; i++)
        sb_put(&d, "]", 1);
    sb_printf(&d, "]}");
    fz_expect("nested witness", 400, "witnesses[0]", "POST", "/v1/proofs", d.p);
    d.n = 0;
    sb_printf(&d, "{\"key\": \"example\", \"witnesses\": [\"%s\"], \"priority\": ", fz_wpath);
    for (int i = 0; i < 1000; i++)
        sb_printf(&d, "{\"a\": ");
    sb_printf(&d, "1");
    for (int i = 0; i < 1000; i++)
        sb_printf(&d, "}");
    sb_printf(&d, "}");
    fz_expect("nested priority", 400, "\"priority\"", "POST", "/v1/proofs", d.p);
    d.n = 0;
    for (int i = 0; i < 3000; i++)
        sb_printf(&d, "{\"a\": ");
    for (int i = 0; i < 3000; i++)
        sb_printf(&d, "}");
    fz_expect("nested objects", 400, "malformed JSON", "POST", "/v1/proofs", d.p);
    /* many witnesses: more than --max-partitions, or thousands of numbers */
    d.n = 0;
    sb_printf(&d, "{\"key\": \"example\", \"witnesses\": [");
    for (int i = 0; i < 17; i++)
        sb_printf(&d, "%s\"%s\"", i ? ", " : "", fz_wpath);
    sb_printf(&d, "]}");
    fz_expect("17 witnesses", 400, "witnesses", "POST", "/v1/proofs", d.p);
    d.n = 0;
    sb_printf(&d, "{\"key\": \"example\", \"witnesses\": [");
    for (int i = 0; i < 5000; i++)
        sb_printf(&d, "%s%d", i ? "," : "", i);
    sb_printf(&d, "]}");
    fz_expect("5000 numbers", 400, "witnesses[0]", "POST", "/v1/proofs", d.p);
    /* a key id cut short by the error text in the middle of a 3-byte character (a 500 once) */
    d.n = 0;
    sb_printf(&d, "{\"key\": \"");
    for (int i = 0; i < 40; i++)
        sb_printf(&d, "\xe2\x82\xac");
    sb_printf(&d, "\", \"witnesses\": [\"%s\"]}", fz_wpath);
    fz_expect("euro key", 404, "unknown key", "POST", "/v1/proofs", d.p);
    free(d.p);
    /* other shapes */
    static const char *const shapes[] = {"[]", "1", "\"str\"", "null", "true", "{}"};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        fz_expect("not an object", 400, i == 0 ? "JSON object" : i < 5 ? "malformed" : "\"key\"",
                  "POST", "/v1/proofs", shapes[i]);
    snprintf(good, sizeof good, "{\"key\": \"example\", \"witnesses\": [\"%s\"]} x", fz_wpath);
    fz_expect("trailing text", 400, "malformed JSON", "POST", "/v1/proofs", good);
    snprintf(good, sizeof good, "{\"key\": \"example\", \"witnesses\": [\"%s\"]}{}", fz_wpath);
    fz_expect("two objects", 400, "malformed JSON", "POST", "/v1/proofs", good);
    snprintf(good, sizeof good, "// c\n{\"key\": \"example\", \"witnesses\": [\"%s\"]}", fz_wpath);
    fz_expect("a comment", 400, "malformed JSON", "POST", "/v1/proofs", good);
    snprintf(good, sizeof good, "{\"key\": \"example\", \"witnesses\": [\"%s\",]}", fz_wpath);
    fz_expect("trailing comma", 400, "malformed JSON", "POST", "/v1/proofs", good);
    snprintf(good, sizeof good, "{'key': 'example', 'witnesses': ['%s']}", fz_wpath);
    fz_expect("single quotes", 400, "malformed JSON", "POST", "/v1/proofs", good);
}

/* ---- fuzz: witnesses ---- */

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Offsets in the chain fixture's .wtns (snarkjs v2): magic, version, section count; section 1
 * (type, size, n8, the prime, the number of values); section 2 (type, size, the values). */
#define W_VERSION 4
#define W_NSECT 8
#define W_S1_TYPE 12
#define W_N8 24
#define W_PRIME 28
#define W_N 60
#define W_S2_SIZE 68
#define W_VALUES 76

/* Submits witness bytes w[0..n) as route 0 (raw upload), 1 (base64 in JSON) or 2 (a file, by
 * path). want: the status (0: any 4xx, or 202 when the job then ends done or failed). */
static void fz_submit_wtns(const char *what, int route, const unsigned char *w, size_t n, long want,
                           const char *needle)
{
    resp r;
    char path[400];
    snprintf(path, sizeof path, "%s/fuzz_mutant.wtns", tmp_dir);
    if (route == 0) {
        fz_http(&r, "POST", "/v1/proofs?key=example", "application/octet-stream", w, n, NULL);
    } else {
        sbuf b = {0};
        if (route == 1) {
            char *enc = b64(w, n);
            sb_printf(&b, "{\"key\": \"example\", \"witnesses\": [{\"wtns_base64\": \"%s\"}]}",
                      enc);
            free(enc);
        } else {
            write_all(path, w, n);
            sb_printf(&b, "{\"key\": \"example\", \"witnesses\": [{\"path\": \"%s\"}]}", path);
        }
        fz_http(&r, "POST", "/v1/proofs", "application/json", b.p, b.n, NULL);
        free(b.p);
    }
    /* the reason names the witness: "uploaded .wtns" or its file */
    const char *err = json_string_value(json_object_get(r.json, "error"));
    bool named = err && strstr(err, "witness 0") && strstr(err, route == 2 ? path : "uploaded");
    bool ok;
    if (route == 0 && n == 0)
        ok = r.status == 400 && err && strstr(err, "empty body");
    else if (want == 0 && r.status == 202)
        ok = true;
    else
        ok = (want ? r.status == want : r.status / 100 == 4) && named &&
             (!needle || strstr(err, needle));
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "fuzz %s (route %d, %zu bytes): expected %ld /%s/, got %ld %.300s\n", what,
                route, n, want, needle ? needle : "", r.status, r.body ? r.body : "(no answer)");
    if (r.status == 202)
        fz_job_final(what, jstr(r.json, "id"));
    resp_free(&r);
}

/* Bad base64 and corrupt .wtns files (the chain fixture's, truncated, with flipped bytes,
 * wrong counts), by every route; then random mutations. */
static void fz_witnesses(unsigned iters)
{
    for (size_t i = 0; i < sizeof fz_bad_b64 / sizeof fz_bad_b64[0]; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "{\"key\": \"example\", \"witnesses\": [{\"wtns_base64\": \"%s\"}]}",
                 fz_bad_b64[i]);
        bool bad = i < FZ_N_BAD_B64;
        fz_expect("bad base64", bad ? 400 : 422, bad ? "base64" : "uploaded", "POST", "/v1/proofs",
                  body);
    }
    /* the good base64 cut short: a dangling character (400) or a truncated file (422) */
    size_t blen = strlen(fz_wb64);
    for (size_t cut = 1; cut <= 6; cut++) {
        sbuf b = {0};
        sb_printf(&b, "{\"key\": \"example\", \"witnesses\": [{\"wtns_base64\": \"%.*s\"}]}",
                  (int)(blen - cut), fz_wb64);
        fz_expect("truncated base64", 4, NULL, "POST", "/v1/proofs", b.p);
        free(b.p);
    }
    fz_expect("empty base64", 422, "uploaded", "POST", "/v1/proofs",
              "{\"key\": \"example\", \"witnesses\": [{\"wtns_base64\": \"\"}]}");

    size_t n = fz_wlen;
    unsigned char *m = malloc(n + 64);
    static const struct {
        const char *what, *needle;
    } cases[] = {
        {"truncated to 0", NULL},       {"truncated to 11", NULL},   {"truncated to 40", NULL},
        {"truncated to 76", NULL},      {"truncated by 1", NULL},    {"truncated by half", NULL},
        {"magic", "magic"},             {"version 3", "version"},    {"1 section", NULL},
        {"2^32-1 sections", NULL},      {"n8 48", NULL},             {"prime", NULL},
        {"141 values", "section 2"},    {"143 values", "expects 142"}, {"0 values", "expects 142"},
        {"2^32-1 values", NULL},        {"section 2 of 2^64-1 bytes", NULL},
        {"first value 2", "first value is not 1"}, {"value 5 not below r", "not below r"},
        {"section 1 typed 3", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(m, fz_wtns, n);
        size_t len = n;
        switch (c) {
        case 0: len = 0; break;
        case 1: len = 11; break;
        case 2: len = 40; break;
        case 3: len = W_VALUES; break;
        case 4: len = n - 1; break;
        case 5: len = n / 2; break;
        case 6: m[1] ^= 0x20; break;
        case 7: put32(m + W_VERSION, 3); break;
        case 8: put32(m + W_NSECT, 1); break;
        case 9: put32(m + W_NSECT, 0xffffffffu); break;
        case 10: put32(m + W_N8, 48); break;
        case 11: m[W_PRIME + 5] ^= 0x01; break;
        case 12: put32(m + W_N, 141); break;
        case 13:   /* one value more, counted consistently */
            put32(m + W_N, 143);
            put32(m + W_S2_SIZE, 143 * 32);
            memset(m + n, 0, 32);
            len = n + 32;
            break;
        case 14:
            put32(m + W_N, 0);
            put32(m + W_S2_SIZE, 0);
            len = W_VALUES;
            break;
        case 15: put32(m + W_N, 0xffffffffu); break;
        case 16:
            put32(m + W_S2_SIZE, 0xffffffffu);
            put32(m + W_S2_SIZE + 4, 0xffffffffu);
            break;
        case 17: m[W_VALUES] = 2; break;
        case 18: memset(m + W_VALUES + 5 * 32, 0xff, 32); break;
        default: put32(m + W_S1_TYPE, 3); break;
        }
        for (int route = 0; route < 3; route++)
            fz_submit_wtns(cases[c].what, route, m, len, 422, cases[c].needle);
    }
    /* random mutations: mostly of the header; a flipped value may pass the checks, and its
     * job then ends (failed: the proof does not verify) */
    for (unsigned it = 0; it < iters; it++) {
        memcpy(m, fz_wtns, n);
        size_t len = n;
        size_t kind = fz_below(4);
        if (kind == 0) {
            len = fz_below(n);
        } else if (kind == 1) {
            len = n + 1 + fz_below(63);
            test_rand_bytes(m + n, len - n);
        } else {
            for (size_t k = 1 + fz_below(3); k > 0; k--) {
                size_t at = fz_below(4) ? fz_below(W_VALUES) : fz_below(n);
                m[at] ^= (unsigned char)(1 + fz_below(255));
            }
        }
        fz_submit_wtns("random mutation", (int)fz_below(3), m, len, 0, NULL);
    }
    free(m);
}

/* Wrong content types, query values and bodies over max_body. */
static void fz_types_sizes(void)
{
    fz_expect_ex("wtns as JSON", 400, "malformed JSON", "POST", "/v1/proofs", "application/json",
                 fz_wtns, fz_wlen, NULL);
    fz_expect_ex("wtns as text", 400, "malformed JSON", "POST", "/v1/proofs", "text/plain", fz_wtns,
                 fz_wlen, NULL);
    char good[1024];
    snprintf(good, sizeof good, "{\"key\": \"example\", \"witnesses\": [\"%s\"]}", fz_wpath);
    fz_expect_ex("JSON as wtns", 422, "uploaded", "POST", "/v1/proofs?key=example",
                 "application/octet-stream", good, strlen(good), NULL);
    fz_expect_ex("raw without key", 400, "key=ID", "POST", "/v1/proofs", "application/octet-stream",
                 fz_wtns, fz_wlen, NULL);
    static const char *const raw_bad[][3] = {
        {"/v1/proofs?key=nosuch", "404", "unknown key"},
        {"/v1/proofs?key=%FF%FE", "404", "unknown key"},   /* not UTF-8: a 500 once */
        {"/v1/proofs?key=example%00x", "404", "unknown key"},   /* not the key example */
        {"/v1/proofs?key=example&priority=urgent", "400", "priority"},
        {"/v1/proofs?key=example&priority=%C3", "400", "priority"},
        {"/v1/proofs?key=example&priority=", "400", "priority"},
        {"/v1/proofs?key=", "404", "unknown key"},
    };
    for (size_t i = 0; i < sizeof raw_bad / sizeof raw_bad[0]; i++)
        fz_expect_ex("raw query", atol(raw_bad[i][1]), raw_bad[i][2], "POST", raw_bad[i][0],
                     "application/octet-stream", fz_wtns, fz_wlen, NULL);
    fz_expect_ex("raw empty", 400, "empty body", "POST", "/v1/proofs?key=example",
                 "application/octet-stream", "", 0, NULL);
    /* media types are case-insensitive: an upload still (was taken for JSON) */
    resp r;
    fz_http(&r, "POST", "/v1/proofs?key=example", "Application/Octet-Stream", fz_wtns, fz_wlen,
            NULL);
    CHECK(r.status == 202);
    if (r.status == 202)
        fz_job_final("octet-stream in capitals", jstr(r.json, "id"));
    else
        fprintf(stderr, "fuzz: Application/Octet-Stream: %ld %s\n", r.status, r.body ? r.body : "");
    resp_free(&r);

    /* max_body: exactly the limit is served, one byte more is 413 (before the body is read
     * when Content-Length says so) */
    char *big = malloc(FZ_MAX_BODY + 2);
    size_t glen = strlen(good);
    memset(big, ' ', FZ_MAX_BODY + 1);
    memcpy(big, good, glen);
    fz_http(&r, "POST", "/v1/proofs", "application/json", big, FZ_MAX_BODY, NULL);
    CHECK(r.status == 202);
    if (r.status == 202)
        fz_job_final("body of max_body", jstr(r.json, "id"));
    else
        fprintf(stderr, "fuzz: body of max_body: %ld %s\n", r.status, r.body ? r.body : "");
    resp_free(&r);
    fz_expect_ex("body over max_body", 413, "max_body", "POST", "/v1/proofs", "application/json",
                 big, FZ_MAX_BODY + 1, NULL);
    fz_expect_ex("key body over max_body", 413, "max_body", "POST", "/v1/keys",
                 "application/json", big, FZ_MAX_BODY + 1, NULL);
    memset(big, 'A', FZ_MAX_BODY + 1);
    fz_expect_ex("raw over max_body", 413, "max_body", "POST", "/v1/proofs?key=example",
                 "application/octet-stream", big, FZ_MAX_BODY + 1, NULL);
    free(big);
    size_t mb = (size_t)1 << 20;
    big = calloc(1, mb);
    fz_expect_ex("1 MiB body", 413, "max_body", "POST", "/v1/proofs", "application/json", big, mb,
                 NULL);
    free(big);
}

/* ---- fuzz: keys, job ids, tokens ---- */

/* POST /v1/keys bodies with one thing wrong each, hostile paths for the key and its r1cs,
 * conflicting registrations; GET and DELETE of ids that are not registered. None may leave a
 * key behind. */
static void fz_keys(unsigned iters)
{
    static const char *const unknown[] = {"trused", "ID", "format", "r1cs_path", ""};
    char *zk = test_fixture_dup("chain", "circuit.zkey");
    char *r1cs = test_fixture_dup("chain", "circuit.r1cs");
    for (unsigned it = 0; it < iters; it++) {
        /* the base body loads nothing: its path is a witness, not a key (422) */
        sbuf v[6] = {{0}};
        const char *name[6] = {"id", "path", "r1cs", "trusted", "cache", NULL};
        bool has[6] = {true, true, false, false, false, false}, bad = false;
        sb_printf(&v[0], "\"fz%u\"", it);
        sb_printf(&v[1], "\"%s\"", fz_wpath);
        int fault = (int)fz_below(10);
        long want = 400;
        char needle[64];
        snprintf(needle, sizeof needle, "\"id\"");
        switch (fault) {
        case 0:
            v[0].n = 0;
            fz_value_not(&v[0], 's', false, &bad);
            break;
        case 1:
            has[fz_below(2)] = false;
            break;
        case 2:
            v[1].n = 0;
            fz_value_not(&v[1], 's', false, &bad);
            break;
        case 3: {   /* an id outside [A-Za-z0-9._-]{1,127} */
            static const char *const ids[] = {"", "a/b", "..", "a b", "\\u00e9", "x\\n"};
            size_t k = fz_below(7);
            v[0].n = 0;
            if (k < 6) {
                sb_printf(&v[0], "\"%s\"", ids[k]);
            } else {
                sb_put(&v[0], "\"", 1);
                for (int i = 0; i < 128; i++)
                    sb_put(&v[0], "k", 1);
                sb_put(&v[0], "\"", 1);
            }
            /* ".." is a valid id: its path is then refused as a key (422) */
            if (k == 2) {
                want = 422;
                snprintf(needle, sizeof needle, "key ..");
            } else {
                snprintf(needle, sizeof needle, "key id");
            }
            break;
        }
        case 4:
            has[2] = true;
            fz_value_not(&v[2], 's', false, &bad);
            snprintf(needle, sizeof needle, "\"r1cs\"");
            break;
        case 5: {
            size_t f = 3 + fz_below(2);
            has[f] = true;
            for (;;) {
                sbuf t = {0};
                bool tb = false;
                char k = fz_value(&t, 1, &tb);
                if (k != 'b') {
                    sb_put(&v[f], t.p, t.n);
                    bad |= tb;
                    free(t.p);
                    break;
                }
                free(t.p);
            }
            snprintf(needle, sizeof needle, "booleans");
            break;
        }
        case 6:   /* flags without r1cs, for a .zkey */
            has[3 + fz_below(2)] = true;
            sb_printf(&v[3], "true");
            sb_printf(&v[4], "true");
            v[1].n = 0;
            sb_printf(&v[1], "\"%s\"", zk);
            snprintf(needle, sizeof needle, "trusted");
            break;
        case 7:
            has[5] = true;
            name[5] = unknown[fz_below(sizeof unknown / sizeof unknown[0])];
            fz_value(&v[5], 1, &bad);
            snprintf(needle, sizeof needle, "unknown field");
            break;
        case 8:
            has[5] = true;
            name[5] = name[fz_below(2)];
            sb_printf(&v[5], "\"%s\"", zk);
            snprintf(needle, sizeof needle, "duplicate");
            break;
        default:
            want = 422;
            snprintf(needle, sizeof needle, "key fz%u", it);
            break;
        }
        if (bad) {
            want = 400;
            snprintf(needle, sizeof needle, "malformed JSON");
        }
        sbuf body = {0};
        sb_put(&body, "{", 1);
        for (int i = 0, first = 1; i < 6; i++)
            if (has[i]) {
                sb_printf(&body, "%s\"%s\": ", first ? "" : ", ", name[i]);
                sb_put(&body, v[i].p, v[i].n);
                first = 0;
            }
        sb_put(&body, "}", 1);
        if (body.n > FZ_MAX_BODY) {
            want = 413;
            snprintf(needle, sizeof needle, "max_body");
        }
        char what[64];
        snprintf(what, sizeof what, "key body %u (fault %d)", it, fault);
        fz_expect_ex(what, want, needle, "POST", "/v1/keys", "application/json", body.p, body.n,
                     NULL);
        for (int i = 0; i < 6; i++)
            free(v[i].p);
        free(body.p);
    }
    /* hostile paths, as the key and as its r1cs: a 4xx at once naming the key, never a hang */
    for (size_t i = 0; i < FZ_N_HOSTILE; i++) {
        sbuf b = {0}, p = {0};
        fz_hostile_path(&p, i);
        char what[64], needle[64];
        snprintf(what, sizeof what, "hostile key path %zu", i);
        snprintf(needle, sizeof needle, "key fzp%zu", i);
        sb_printf(&b, "{\"id\": \"fzp%zu\", \"path\": \"%s\"}", i, p.p ? p.p : "");
        bool lng = i == FZ_HOSTILE_LONG;
        fz_expect(what, lng ? 400 : 422, lng ? "too long" : needle, "POST", "/v1/keys", b.p);
        fz_unblock_fifo();
        b.n = 0;
        snprintf(what, sizeof what, "hostile r1cs %zu", i);
        snprintf(needle, sizeof needle, "key fzr%zu", i);
        sb_printf(&b, "{\"id\": \"fzr%zu\", \"path\": \"%s\", \"r1cs\": \"%s\"}", i, fz_wpath,
                  p.p ? p.p : "");
        fz_expect(what, lng ? 400 : i == 11 ? 4 : 422, lng ? "too long" : i == 11 ? NULL : needle,
                  "POST", "/v1/keys", b.p);
        fz_unblock_fifo();
        free(b.p);
        free(p.p);
    }
    {
        /* a FIFO, a directory, a device, as the key: refused at once (a FIFO hung the request,
         * and the daemon's exit with it) */
        char body[1024];
        snprintf(body, sizeof body, "{\"id\": \"fifo\", \"path\": \"%s\"}", fz_fifo);
        fz_expect("FIFO key", 422, "not a regular file (a FIFO)", "POST", "/v1/keys", body);
        fz_unblock_fifo();
        snprintf(body, sizeof body, "{\"id\": \"fifo\", \"path\": \"%s\", \"r1cs\": \"%s\"}", zk,
                 fz_fifo);
        fz_expect("FIFO r1cs", 4, NULL, "POST", "/v1/keys", body);
        snprintf(body, sizeof body, "{\"id\": \"fifo\", \"path\": \"%s\", \"r1cs\": \"%s\"}", r1cs,
                 fz_fifo);
        fz_expect("FIFO r1cs of a params", 422, "not a regular file (a FIFO)", "POST", "/v1/keys",
                  body);
        fz_unblock_fifo();
        snprintf(body, sizeof body, "{\"id\": \"dir\", \"path\": \"%s\"}", tmp_dir);
        fz_expect("directory key", 422, "a directory", "POST", "/v1/keys", body);
        fz_expect("device key", 422, "a device", "POST", "/v1/keys",
                  "{\"id\": \"dev\", \"path\": \"/dev/zero\"}");
        /* conflicts */
        snprintf(body, sizeof body, "{\"id\": \"example\", \"path\": \"%s\"}", fz_wpath);
        fz_expect("id taken", 400, "another path", "POST", "/v1/keys", body);
        fz_expect("params without r1cs", 400, ".r1cs", "POST", "/v1/keys",
                  "{\"id\": \"pp\", \"path\": \"/nonexistent/k.params\"}");
        snprintf(body, sizeof body, "{\"id\": \"zr\", \"path\": \"%s\", \"r1cs\": \"%s\"}", zk,
                 r1cs);
        fz_expect("r1cs for a zkey", 400, ".zkey", "POST", "/v1/keys", body);
    }
    /* malformed bodies */
    fz_expect("key: not an object", 400, "two strings", "POST", "/v1/keys", "[\"id\", \"path\"]");
    fz_expect("key: truncated", 400, "malformed JSON", "POST", "/v1/keys", "{\"id\": \"x\", \"pa");
    fz_expect("key: empty", 400, "malformed JSON", "POST", "/v1/keys", "");
    fz_expect_ex("key: no body", 400, "malformed JSON", "POST", "/v1/keys", NULL, NULL, 0, NULL);
    /* ids that are not registered, odd ones included */
    static const char *const ids[] = {"nosuch", "%FF", "%C3%28", "..%2F..%2Fetc%2Fpasswd",
                                      "../../etc/passwd", "%00", "", "example%00x", "example/x",
                                      "EXAMPLE", "example%20", "%2e%2e"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0] + 1; i++) {
        char path[4200];
        if (i < sizeof ids / sizeof ids[0]) {
            snprintf(path, sizeof path, "/v1/keys/%s", ids[i]);
        } else {
            int o = snprintf(path, sizeof path, "/v1/keys/");
            memset(path + o, 'k', 3000);
            path[o + 3000] = 0;
        }
        fz_expect("unknown key id", 404, "unknown key", "GET", path, NULL);
        fz_expect("unknown key id", 404, "unknown key", "DELETE", path, NULL);
    }
    /* nothing was registered; the example key is still there */
    resp r;
    CHECK(http(&r, fz_addr, "GET", "/v1/keys", NULL) && r.status == 200 &&
          json_array_size(json_object_get(r.json, "keys")) == 1);
    resp_free(&r);
    CHECK(http(&r, fz_addr, "GET", "/v1/keys/example", NULL) && r.status == 200);
    resp_free(&r);
    free(zk);
    free(r1cs);
}

/* Job ids that do not exist, are malformed or overflow; bad waits; a final job again. */
static void fz_job_ids(const char *done_id)
{
    static const char *const ids[] = {
        "0", "999999", "-1", "+1", "1.5", "0x1", "1e3", "abc", "%FF", "%00", "1%00", "1%001",
        "18446744073709551615", "18446744073709551616", "99999999999999999999999999999", "1/2",
        "0123456789abcdef0123456789abcdef", "0123456789ABCDEF0123456789ABCDEF",
        "0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdef0",
        "0123456789abcdef0123456789abcdeg", "0123456789abcdef0123456789abcde%00",
        "%201", "1%20", "", "../1", "..%2F1", "%E2%82%AC"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0] + 1; i++) {
        char path[4200];
        if (i < sizeof ids / sizeof ids[0]) {
            snprintf(path, sizeof path, "/v1/proofs/%s", ids[i]);
        } else {
            int o = snprintf(path, sizeof path, "/v1/proofs/");
            memset(path + o, '9', 3000);
            path[o + 3000] = 0;
        }
        fz_expect("unknown job", 404, "unknown job", "GET", path, NULL);
        fz_expect("unknown job", 404, "unknown job", "DELETE", path, NULL);
        strcat(path, "?wait=1");
        fz_expect("unknown job", 404, "unknown job", "GET", path, NULL);
    }
    static const char *const waits[] = {"-1", "abc", "nan", "-inf", "%FF", "1e999x", "1s", "%00"};
    for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "/v1/proofs/%s?wait=%s", done_id, waits[i]);
        fz_expect("bad wait", 400, "wait=", "GET", path, NULL);
    }
    /* a huge wait on a final job answers at once */
    char path[256];
    snprintf(path, sizeof path, "/v1/proofs/%s?wait=1e999", done_id);
    resp r;
    fz_http(&r, "GET", path, NULL, NULL, 0, NULL);
    CHECK(r.status == 200 && !strcmp(jstr(r.json, "state"), "done"));
    resp_free(&r);
    snprintf(path, sizeof path, "/v1/proofs/%s", done_id);
    fz_expect("cancel a done job", 409, "done", "DELETE", path, NULL);
}

/* Requests without the token, with a wrong one, or another scheme: 401 everywhere but
 * /healthz, and nothing done (the example key is not deleted). */
static void fz_auth(const char *done_id)
{
    sbuf longtok = {0};
    sb_printf(&longtok, "Authorization: Bearer ");
    for (int i = 0; i < 8000; i++)
        sb_put(&longtok, "t", 1);
    const char *headers[] = {"Authorization:",
                             "Authorization: Bearer wrong",
                             "Authorization: Bearer",
                             "Authorization: Bearer ",
                             "Authorization: Basic Zm9vOmJhcg==",
                             "Authorization: Bearer " FZ_TOKEN "x",
                             "Authorization: Bearer fuzz-t0ke",
                             "Authorization: Bearer  " FZ_TOKEN,
                             "Authorization: Token " FZ_TOKEN,
                             "Authorization: Bearer FUZZ-T0KEN",
                             longtok.p};
    char body[1024], job[128];
    snprintf(body, sizeof body, "{\"key\": \"example\", \"witnesses\": [\"%s\"]}", fz_wpath);
    snprintf(job, sizeof job, "/v1/proofs/%s", done_id);
    const struct {
        const char *method, *path;
        bool body;
    } reqs[] = {{"GET", "/v1/status", false},  {"GET", "/metrics", false},
                {"GET", "/v1/keys", false},    {"POST", "/v1/keys", true},
                {"DELETE", "/v1/keys/example", false}, {"POST", "/v1/proofs", true},
                {"GET", job, false},           {"DELETE", job, false},
                {"GET", "/nosuch", false}};
    for (size_t h = 0; h < sizeof headers / sizeof headers[0]; h++)
        for (size_t q = 0; q < sizeof reqs / sizeof reqs[0]; q++)
            fz_expect_ex("token", 401, "bearer token", reqs[q].method, reqs[q].path,
                         reqs[q].body ? "application/json" : NULL, reqs[q].body ? body : NULL,
                         reqs[q].body ? strlen(body) : 0, headers[h]);
    free(longtok.p);
    resp r;
    CHECK(http_ex(&r, fz_addr, "GET", "/healthz", NULL, NULL, 0, "Authorization:") &&
          r.status == 200);
    resp_free(&r);
    /* the scheme's name in any case (RFC 7235); the token itself exactly */
    CHECK(http_ex(&r, fz_addr, "GET", "/v1/status", NULL, NULL, 0,
                  "Authorization: bEARER " FZ_TOKEN) && r.status == 200);
    resp_free(&r);
    CHECK(http(&r, fz_addr, "GET", "/v1/keys/example", NULL) && r.status == 200);
    resp_free(&r);
}

/* ---- fuzz: raw sockets ---- */

/* A TCP connection to HOST:PORT, or -1. */
static int tcp_connect(const char *addr)
{
    char host[64];
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return -1;
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, host, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* max_body_total: a slow upload holding most of the budget makes a second large body get 503
 * with Retry-After (not the memory of max_body per connection); a small request is still
 * served meanwhile, and once the slow one goes the large body is taken again. */
static void test_body_budget(void)
{
    daemon_proc d;
    /* 70K: one 60 KB body fits alone (its buffer takes 64K+1), not beside the slow one's */
    if (!daemon_start(&d, "bodies", "--allow-host", "x", "--max-body", "64K", "--max-body-total",
                      "70K", NULL)) {
        CHECK(0);
        return;
    }
    char head[1024];
    snprintf(head, sizeof head, "POST /v1/proofs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
             "%s\r\nContent-Type: application/json\r\nContent-Length: 65000\r\n\r\n", d.token);
    static char junk[60000];
    memset(junk, ' ', sizeof junk);
    int fd = tcp_connect(d.addr);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(send(fd, head, strlen(head), MSG_NOSIGNAL) == (ssize_t)strlen(head));
        CHECK(send(fd, junk, sizeof junk, MSG_NOSIGNAL) == (ssize_t)sizeof junk);
    }
    static char body[60001];
    memset(body, ' ', sizeof body - 1);
    body[0] = '{';
    body[sizeof body - 2] = '}';
    /* until the daemon has taken in the slow upload (its buffer shows in the metrics; a
     * loaded machine may take a while), then the second body: 503 */
    resp r;
    long held = 0;
    for (int t = 0; t < 200 && held < 60000; t++) {
        bool ok = http(&r, d.addr, "GET", "/metrics", NULL);
        const char *m = ok && r.body ? strstr(r.body, "\ncuzk_http_body_bytes ") : NULL;
        held = m ? atol(m + strlen("\ncuzk_http_body_bytes ")) : 0;
        resp_free(&r);
        if (held < 60000)
            usleep(50000);
    }
    CHECK(held >= 60000);
    bool busy = false;
    for (int t = 0; t < 100 && !busy; t++) {
        bool ok = http(&r, d.addr, "POST", "/v1/proofs", body);
        busy = ok && r.status == 503 && r.retry_after[0] &&
               strstr(jstr(r.json, "error"), "max_body_total") != NULL;
        resp_free(&r);
        if (!busy)
            usleep(100000);
    }
    CHECK(busy);
    CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200);
    resp_free(&r);
    if (fd >= 0)
        close(fd);
    /* once the daemon sees the close, the budget is back: the body is read and judged (400:
     * no key) */
    bool taken = false;
    for (int t = 0; t < 100 && !taken; t++) {
        bool ok = http(&r, d.addr, "POST", "/v1/proofs", body);
        taken = ok && r.status == 400 && strstr(jstr(r.json, "error"), "key") != NULL;
        resp_free(&r);
        if (!taken)
            usleep(100000);
    }
    CHECK(taken);
    CHECK(daemon_stop(&d, 20) == 0);
}

/* Sends text on a new connection and reads the answer for up to timeout_s: the status of its
 * status line, 0 when the daemon closed the connection without one, -1 when none came in
 * time. The body of the answer goes to out (cap bytes at most, 0-terminated) when given. */
static int raw_exchange(const char *addr, const void *text, size_t len, double timeout_s,
                        char *out, size_t cap)
{
    int fd = tcp_connect(addr);
    if (fd < 0)
        return -1;
    fz_requests++;
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, (const char *)text + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;   /* the daemon may answer (413) and close before all is sent */
        off += (size_t)w;
    }
    char buf[65536];
    size_t got = 0;
    int status = -1;
    for (int waited_ms = 0; waited_ms < timeout_s * 1000 && got < sizeof buf - 1;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) == 0) {
            waited_ms += 100;
            continue;
        }
        ssize_t n = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (n <= 0) {
            status = got ? status : 0;
            break;
        }
        got += (size_t)n;
        buf[got] = 0;
        /* done once the headers and Content-Length bytes of body are in */
        char *end = strstr(buf, "\r\n\r\n");
        if (!end || strncmp(buf, "HTTP/1.", 7) != 0)
            continue;
        status = atoi(buf + 9);
        const char *cl = strcasestr(buf, "\r\nContent-Length:");
        size_t want = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
        if (got >= (size_t)(end + 4 - buf) + want)
            break;
    }
    if (out && cap) {
        char *end = got ? strstr(buf, "\r\n\r\n") : NULL;
        snprintf(out, cap, "%s", end ? end + 4 : "");
    }
    close(fd);
    return status;
}

/* Raw HTTP that libcurl would not send: no headers, garbage, lying lengths, bad chunks, and
 * clients that hold connections open doing nothing while others are served. */
static void fz_raw(unsigned iters)
{
    char out[4096];
    int st;
    /* a request line and no headers: 401 (no token) or 400 (no Host), at once */
    st = raw_exchange(fz_addr, "GET /v1/status HTTP/1.1\r\n\r\n", 27, 10, out, sizeof out);
    CHECK(st / 100 == 4);
    if (st / 100 != 4)
        fprintf(stderr, "fuzz raw: no headers: %d\n", st);
    st = raw_exchange(fz_addr, "GET /v1/status\r\n\r\n", 18, 10, NULL, 0);
    CHECK(st == 0 || st / 100 == 4);
    /* half a request line, garbage bytes: then the client goes away */
    send_and_vanish(fz_addr, "GET /v1/sta", 11);
    for (unsigned it = 0; it < iters; it++) {
        uint8_t junk[512];
        size_t n = 1 + fz_below(sizeof junk);
        test_rand_bytes(junk, n);
        send_and_vanish(fz_addr, (const char *)junk, n);
    }
    /* a Content-Length over max_body and no body: 413 before any body is read */
    static const char big[] = "POST /v1/proofs HTTP/1.1\r\nHost: x\r\n" FZ_AUTH "\r\n"
                              "Content-Type: application/json\r\n"
                              "Content-Length: 1000000000000\r\n\r\n";
    st = raw_exchange(fz_addr, big, sizeof big - 1, 10, out, sizeof out);
    CHECK(st == 413 && strstr(out, "max_body"));
    if (st != 413)
        fprintf(stderr, "fuzz raw: huge Content-Length: %d %s\n", st, out);
    /* the same, then the client goes away; a length within the limit and no body; a length
     * beyond 64 bits; a negative one; two that disagree */
    send_and_vanish(fz_addr, big, sizeof big - 1);
    static const char under[] = "POST /v1/proofs HTTP/1.1\r\nHost: x\r\n" FZ_AUTH "\r\n"
                                "Content-Type: application/json\r\n"
                                "Content-Length: 60000\r\n\r\n{\"ke";
    send_and_vanish(fz_addr, under, sizeof under - 1);
    static const char *const lengths[] = {"99999999999999999999999999", "-5", "12abc", "0x10"};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        char req[512];
        int n = snprintf(req, sizeof req, "POST /v1/proofs HTTP/1.1\r\nHost: x\r\n%s\r\n"
                         "Content-Length: %s\r\nConnection: close\r\n\r\n", FZ_AUTH, lengths[i]);
        st = raw_exchange(fz_addr, req, (size_t)n, 10, NULL, 0);
        CHECK(st == 0 || st / 100 == 4);
        if (!(st == 0 || st / 100 == 4))
            fprintf(stderr, "fuzz raw: Content-Length %s: %d\n", lengths[i], st);
    }
    /* chunked bodies: a bad chunk size; more than max_body in chunks */
    static const char badchunk[] = "POST /v1/proofs HTTP/1.1\r\nHost: x\r\n" FZ_AUTH "\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n";
    st = raw_exchange(fz_addr, badchunk, sizeof badchunk - 1, 10, NULL, 0);
    CHECK(st == 0 || st / 100 == 4);
    {
        sbuf b = {0};
        sb_printf(&b, "POST /v1/proofs HTTP/1.1\r\nHost: x\r\n%s\r\n"
                      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                      "Connection: close\r\n\r\n", FZ_AUTH);
        char chunk[16000];
        memset(chunk, ' ', sizeof chunk);
        for (int i = 0; i < 5; i++) {
            sb_printf(&b, "%zx\r\n", sizeof chunk);
            sb_put(&b, chunk, sizeof chunk);
            sb_put(&b, "\r\n", 2);
        }
        sb_printf(&b, "0\r\n\r\n");
        st = raw_exchange(fz_addr, b.p, b.n, 10, out, sizeof out);
        CHECK(st == 413 && strstr(out, "max_body"));
        if (st != 413)
            fprintf(stderr, "fuzz raw: chunked over max_body: %d %s\n", st, out);
        free(b.p);
    }
    /* idle clients: connected and silent, or stopped inside the headers or the body, while
     * a good job, status and metrics are served */
    int idle[12];
    for (int i = 0; i < 12; i++) {
        idle[i] = tcp_connect(fz_addr);
        const char *part = i < 8 ? "" : i < 10 ? "POST /v1/proofs HTTP/1.1\r\nHost: x\r\n"
                                              : "POST /v1/proofs HTTP/1.1\r\nHost: x\r\n"
                                                "Content-Length: 1000\r\n\r\n{\"key\"";
        if (idle[i] >= 0 && part[0] && send(idle[i], part, strlen(part), MSG_NOSIGNAL) < 0)
            fprintf(stderr, "fuzz raw: idle client %d: %s\n", i, strerror(errno));
    }
    double t0 = cuzk_now_ms();
    fz_good_job("idle clients");
    usleep(500000);   /* silent a while longer */
    resp r;
    CHECK(http(&r, fz_addr, "GET", "/v1/status", NULL) && r.status == 200);
    resp_free(&r);
    double took = (cuzk_now_ms() - t0) / 1e3;
    CHECK(took < 30);
    for (int i = 0; i < 12; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    /* ambiguous framing (a proxy could split it otherwise: request smuggling): two
     * Content-Length headers, or one beside Transfer-Encoding: 400 before any body */
    static const char *const framing[] = {"Content-Length: 5\r\nContent-Length: 40\r\n",
                                          "Content-Length: 5\r\nContent-Length: 5\r\n",
                                          "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"};
    for (size_t i = 0; i < sizeof framing / sizeof framing[0]; i++) {
        char req[512];
        int n = snprintf(req, sizeof req, "POST /v1/proofs HTTP/1.1\r\nHost: x\r\n%s\r\n"
                         "Content-Type: application/json\r\n%sConnection: close\r\n\r\n{}\r\n",
                         FZ_AUTH, framing[i]);
        st = raw_exchange(fz_addr, req, (size_t)n, 10, out, sizeof out);
        CHECK(st == 400 && strstr(out, "ambiguous body framing"));
        if (st != 400)
            fprintf(stderr, "fuzz raw: framing %zu: %d %s\n", i, st, out);
    }
    /* two requests in one write: both answered */
    static const char two[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                              "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    st = raw_exchange(fz_addr, two, sizeof two - 1, 10, out, sizeof out);
    CHECK(st == 200);
}

/* ---- fuzz ---- */

/* The daemon with its example key, a bearer token, max_body 64 KiB and at most 16 witnesses
 * a job, attacked batch after batch; a good job proves after each. Phase 2: --allow-dir. */
static int test_fuzz(void)
{
    double t0 = cuzk_now_ms();
    http_auth = FZ_AUTH;
    http_timeout_s = 20;   /* a hang fails the case, not the whole run's time */
    fz_wpath = test_fixture_dup("chain", "witness.wtns");
    fz_wtns = (unsigned char *)read_file(fz_wpath, &fz_wlen);
    CHECK(fz_wtns && fz_wlen > W_VALUES + 32 * 6);
    if (!fz_wtns)
        return test_finish();
    fz_wb64 = b64(fz_wtns, fz_wlen);
    /* a FIFO, a socket, a symlink loop to offer as files */
    snprintf(fz_fifo, sizeof fz_fifo, "%s/fuzz.fifo", tmp_dir);
    snprintf(fz_sock, sizeof fz_sock, "%s/fuzz.sock", tmp_dir);
    snprintf(fz_loop, sizeof fz_loop, "%s/fuzz.loop", tmp_dir);
    CHECK(mkfifo(fz_fifo, 0600) == 0);
    CHECK(symlink(fz_loop, fz_loop) == 0);
    {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        CHECK(strlen(fz_sock) < sizeof sa.sun_path);
        memcpy(sa.sun_path, fz_sock, strnlen(fz_sock, sizeof sa.sun_path - 1));
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
        if (fd >= 0)
            close(fd);
    }
    /* FZ_TOKEN is the operator's (it registers keys) */
    char admin_file[300];
    snprintf(admin_file, sizeof admin_file, "%s/fuzz-admin-token", tmp_dir);
    write_all(admin_file, (const unsigned char *)FZ_TOKEN "\n", strlen(FZ_TOKEN) + 1);
    daemon_proc d;
    if (!daemon_start(&d, "fuzz", "--example", "--allow-host", "x", "--token", "fuzz-client",
                      "--admin-token-file", admin_file,
                      "--max-body", "64K", "--max-partitions", "16", "--loader-threads", "1",
                      NULL)) {
        CHECK(0);
        return test_finish();
    }
    fz_addr = d.addr;
    unsigned iters = (unsigned)test_iters(100);

    fz_good_job("start");
    fz_methods();
    fz_good_job("wrong methods");
    fz_submit_bodies(iters);
    fz_good_job("submission bodies");
    fz_witnesses(iters / 2);
    fz_good_job("witnesses");
    fz_types_sizes();
    fz_good_job("content types and sizes");
    fz_keys(iters);
    fz_good_job("keys");
    fz_job_ids(fz_first_id);   /* the first good job, done */
    fz_good_job("job ids");
    fz_auth(fz_first_id);
    fz_good_job("tokens");
    fz_raw(iters / 2);
    fz_good_job("raw sockets");
    fz_good_job(NULL);

    /* still serving: nothing answered 500, no key was left behind, no forged log line */
    resp r;
    CHECK(http(&r, fz_addr, "GET", "/v1/status", NULL) && r.status == 200 && r.json);
    json_t *jobs = json_object_get(r.json, "jobs");
    printf("fuzz: %lu requests; jobs: %lld submitted, %lld done, %lld failed, %lld rejected\n",
           fz_requests, (long long)json_integer_value(json_object_get(jobs, "submitted")),
           (long long)json_integer_value(json_object_get(jobs, "done")),
           (long long)json_integer_value(json_object_get(jobs, "failed")),
           (long long)json_integer_value(json_object_get(jobs, "rejected")));
    CHECK(json_array_size(json_object_get(r.json, "keys")) == 1);
    resp_free(&r);
    CHECK(http(&r, fz_addr, "GET", "/metrics", NULL) && r.status == 200 && r.body &&
          strstr(r.body, "cuzk_http_requests_total{code=\"500\"} 0\n") &&
          !strstr(r.body, "cuzk_http_requests_total{code=\"400\"} 0\n"));
    resp_free(&r);
    CHECK(count_in_file(d.log, "\nevent=") == 0);
    CHECK(count_in_file(d.log, "job=999999") >= 1);   /* the attempt is there, on its own line */
    CHECK(kill(d.pid, 0) == 0 && waitpid(d.pid, NULL, WNOHANG) == 0);
    int rc = daemon_stop(&d, 30);
    CHECK(rc == 0);   /* a sanitizer report or a leak at exit makes it non-zero */
    if (rc != 0)
        fprintf(stderr, "fuzz: the daemon exited with %d (log %s)\n", rc, d.log);

    /* Phase 2: --allow-dir. Traversal and symlinks out are 403, a FIFO inside is 422 at once,
     * a good job by a path inside still proves. */
    char allow[400], inside[420], link[420], fifo[420], body[2048];
    snprintf(allow, sizeof allow, "%s/allowed", tmp_dir);
    snprintf(inside, sizeof inside, "%s/w.wtns", allow);
    snprintf(link, sizeof link, "%s/passwd", allow);
    snprintf(fifo, sizeof fifo, "%s/fifo", allow);
    CHECK(mkdir(allow, 0700) == 0);
    write_all(inside, fz_wtns, fz_wlen);
    CHECK(symlink("/etc/passwd", link) == 0 && mkfifo(fifo, 0600) == 0);
    snprintf(fz_fifo, sizeof fz_fifo, "%s", fifo);
    if (daemon_start(&d, "fuzz-allow", "--example", "--token", "fuzz-client",
                     "--admin-token-file", admin_file, "--allow-dir", allow,
                     NULL)) {
        fz_addr = d.addr;
        free(fz_wpath);
        fz_wpath = strdup(inside);
        const char *outside[] = {"/etc/passwd", link, NULL, NULL, NULL};
        char up[500], self[420];
        snprintf(up, sizeof up, "%s/../../../../../../../../etc/passwd", allow);
        snprintf(self, sizeof self, "%s/../allowed-not", allow);
        outside[2] = up;
        outside[3] = self;
        outside[4] = tmp_dir;
        for (int i = 0; i < 5; i++) {
            snprintf(body, sizeof body, "{\"id\": \"out%d\", \"path\": \"%s\"}", i, outside[i]);
            fz_expect("key outside --allow-dir", 403, NULL, "POST", "/v1/keys", body);
            snprintf(body, sizeof body, "{\"key\": \"example\", \"witnesses\": [\"%s\", \"%s\"]}",
                     inside, outside[i]);
            fz_expect("witness outside --allow-dir", 403, "witness 1", "POST", "/v1/proofs", body);
        }
        snprintf(body, sizeof body, "{\"id\": \"fifo\", \"path\": \"%s\"}", fifo);
        fz_expect("FIFO key inside --allow-dir", 422, "FIFO", "POST", "/v1/keys", body);
        fz_unblock_fifo();
        snprintf(body, sizeof body, "{\"key\": \"example\", \"witnesses\": [\"%s\"]}", fifo);
        fz_expect("FIFO witness inside --allow-dir", 422, "FIFO", "POST", "/v1/proofs", body);
        fz_unblock_fifo();
        fz_good_job("--allow-dir");
        fz_good_job(NULL);
        rc = daemon_stop(&d, 30);
        CHECK(rc == 0);
        if (rc != 0)
            fprintf(stderr, "fuzz: the daemon exited with %d (log %s)\n", rc, d.log);
    } else {
        CHECK(0);
    }
    printf("fuzz: %lu requests in %.1f s\n", fz_requests, (cuzk_now_ms() - t0) / 1e3);
    http_auth = NULL;
    free(fz_wpath);
    free(fz_wtns);
    free(fz_wb64);
    return test_finish();
}

int main(int argc, char **argv)
{
    static const daemon_scenario sc[] = {
        {"batch", test_batch},   {"cancel", test_cancel}, {"errors", test_errors},
        {"limits", test_limits}, {"sigterm", test_sigterm}, {"budget", test_budget},
        {"params", test_params}, {"fuzz", test_fuzz},     {"config", test_config},
    };
    return daemon_test_main(argc, argv, "test_daemon", sc, sizeof sc / sizeof sc[0]);
}
