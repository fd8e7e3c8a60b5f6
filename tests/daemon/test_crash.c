/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk-daemon killed and restarted: no accepted job is lost.
 *
 *   crash   100 jobs (uploads and paths, one or two partitions, mixed priorities) submitted
 *           over four runs of one daemon (one state directory); the first three runs are
 *           ended by SIGKILL at a random moment (while jobs are submitted or proved). After
 *           each restart every job accepted so far answers under its id (finished ones with
 *           their proofs); in the end every job is done exactly once (one job_final event per
 *           id across the runs' log), every proof verifies (cuzk verify; a sample with
 *           snarkjs too), no id was given twice; after the retention the journal and the
 *           spool are empty.
 *   paths   witness paths: refused without --allow-dir; beneath one, never through a link or
 *           ".."; a file swapped for a link after acceptance is not read; after a crash, a
 *           job whose key or witness file is gone fails with that reason.
 *   cancel_commit  a cancel that meets the job's last proof being journaled (the window
 *           widened by --debug-journal-delay-ms): the job ends done (409 to the cancel), and is
 *           done with its proofs after a SIGKILL and a restart. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon_lib.h"
#include "store/store.h"
#include "test.h"
#include "test_files.h"

#define N_JOBS 100
#define N_KILLS 3

typedef struct {
    char *id;
    int parts;
    int prio;
    bool upload;
    long done_log_at;   /* seen done after a restart: the log's length then (else -1) */
} cjob;

static cjob jobs[N_JOBS];
static int n_jobs;
static char *wpath, *wb64;
static unsigned char *wbytes;
static size_t wlen;

/* Submits job i (its kind drawn at random); false when the daemon did not answer. */
static bool submit_one(const char *addr, int i)
{
    static const char *const prios[4] = {"low", "normal", "high", "critical"};
    cjob *j = &jobs[i];
    j->parts = 1 + (int)(test_rand64() % 2);
    j->prio = (int)(test_rand64() % 4);
    j->upload = test_rand64() % 2;
    resp r;
    bool answered;
    if (j->upload && j->parts == 1) {   /* a raw .wtns body */
        char path[128];
        snprintf(path, sizeof path, "/v1/proofs?key=example&priority=%s", prios[j->prio]);
        answered = http_ex(&r, addr, "POST", path, "application/octet-stream", wbytes, wlen, NULL);
    } else {
        size_t cap = 256 + 2 * (strlen(wb64) + strlen(wpath) + 32);
        char *body = malloc(cap);
        int o = snprintf(body, cap, "{\"key\": \"example\", \"priority\": \"%s\", \"witnesses\": [",
                         prios[j->prio]);
        for (int p = 0; p < j->parts; p++) {
            if (j->upload)
                o += snprintf(body + o, cap - (size_t)o, "%s{\"wtns_base64\": \"%s\"}", p ? ", " : "",
                              wb64);
            else
                o += snprintf(body + o, cap - (size_t)o, "%s{\"path\": \"%s\"}", p ? ", " : "", wpath);
        }
        snprintf(body + o, cap - (size_t)o, "]}");
        answered = http(&r, addr, "POST", "/v1/proofs", body);
        free(body);
    }
    if (answered && r.status == 202 && jstr(r.json, "id"))
        j->id = strdup(jstr(r.json, "id"));
    else if (answered && r.status != 0)
        fprintf(stderr, "crash: submit %d: %ld %s\n", i, r.status, r.body ? r.body : "");
    resp_free(&r);
    return j->id != NULL;
}

static bool id_ok(const char *id)
{
    if (!id || strlen(id) != 32)
        return false;
    for (int i = 0; i < 32; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
            return false;
    return true;
}

/* The log's length now. */
static long log_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* Occurrences of needle in the file from offset on. */
static int count_from(const char *path, long offset, const char *needle)
{
    size_t n;
    char *t = read_file(path, &n);
    int c = 0;
    if (t && (size_t)offset <= n)
        for (char *p = t + offset; (p = strstr(p, needle)); p += strlen(needle))
            c++;
    free(t);
    return c;
}

/* Every job accepted so far answers under its id; a done one with its proofs. */
static void check_known(const char *addr, const char *log, int *n_done_seen)
{
    *n_done_seen = 0;
    for (int i = 0; i < n_jobs; i++) {
        char path[128];
        snprintf(path, sizeof path, "/v1/proofs/%s", jobs[i].id);
        resp r;
        bool ok = http(&r, addr, "GET", path, NULL) && r.status == 200 && r.json &&
                  !strcmp(jstr(r.json, "id"), jobs[i].id);
        long log_at = log_size(log);   /* what the log held when the answer was made, at least */
        CHECK(ok);
        if (!ok) {
            fprintf(stderr, "crash: job %s after a restart: %ld %s\n", jobs[i].id, r.status,
                    r.body ? r.body : "");
        } else {
            const char *st = jstr(r.json, "state");
            CHECK(strcmp(st, "failed") != 0 && strcmp(st, "cancelled") != 0);
            if (!strcmp(st, "done")) {
                (*n_done_seen)++;
                if (jobs[i].done_log_at < 0)
                    jobs[i].done_log_at = log_at;
                CHECK(json_array_size(json_object_get(r.json, "proofs")) == (size_t)jobs[i].parts);
            }
        }
        resp_free(&r);
    }
}

static int scenario_crash(void)
{
    wpath = test_fixture_dup("chain", "witness.wtns");
    wbytes = read_all(wpath, &wlen);
    wb64 = b64(wbytes, wlen);
    char allow[512];
    snprintf(allow, sizeof allow, "%s/tests/data/circuits", src_dir);
    daemon_proc d;
    memset(&d, 0, sizeof d);
    int done_before_last = 0;
    /* runs 0 .. N_KILLS-1 end with SIGKILL; each submits a quarter of the jobs */
    for (int i = 0; i < N_JOBS; i++)
        jobs[i].done_log_at = -1;
    for (int run = 0; run <= N_KILLS; run++) {
        if (!daemon_start(&d, "crash", "--example", "--allow-dir", allow,
                          "--debug-device-delay-ms", "30", "--result-ttl", "600", NULL)) {
            CHECK(0);
            return 1;
        }
        if (run > 0) {
            int seen;
            check_known(d.addr, d.log, &seen);
            CHECK(seen >= done_before_last);   /* finished results outlive the crash */
            printf("crash: restart %d: %d jobs known, %d done\n", run, n_jobs, seen);
            done_before_last = seen;
        }
        kill_later ka = {d.pid, 300 + (unsigned)(test_rand64() % 1200), 0};
        if (run < N_KILLS)
            kill_later_start(&ka);
        int target = N_JOBS * (run + 1) / (N_KILLS + 1);
        while (n_jobs < target) {
            if (!submit_one(d.addr, n_jobs)) {
                if (kill(d.pid, 0) == 0 && waitpid(d.pid, NULL, WNOHANG) == 0)
                    continue;   /* refused for now (queue full): try again */
                break;          /* killed meanwhile */
            }
            n_jobs++;
            usleep((useconds_t)(test_rand64() % 20000));
        }
        if (run < N_KILLS) {
            kill_later_join(&ka);
            daemon_kill(&d);
            printf("crash: run %d killed after %u ms with %d jobs accepted\n", run, ka.delay_ms,
                   n_jobs);
        }
    }
    /* the last run: submissions it lost to the kills are made up here */
    while (n_jobs < N_JOBS && submit_one(d.addr, n_jobs))
        n_jobs++;
    CHECK(n_jobs == N_JOBS);

    /* every job done, once; its proofs verify */
    char sample[400];
    snprintf(sample, sizeof sample, "%s/sample.txt", tmp_dir);
    FILE *ms = fopen(sample, "w");
    char *vk = test_fixture_dup("chain", "verification_key.json");
    int n_proofs = 0, n_verified = 0;
    for (int i = 0; i < n_jobs; i++) {
        CHECK(id_ok(jobs[i].id));
        for (int k = 0; k < i; k++)
            CHECK(strcmp(jobs[k].id, jobs[i].id) != 0);
        json_t *f = wait_final(d.addr, jobs[i].id, 120);
        bool done = f && !strcmp(jstr(f, "state"), "done");
        CHECK(done);
        if (!done)
            fprintf(stderr, "crash: job %s: %s %s\n", jobs[i].id, f ? jstr(f, "state") : "(none)",
                    f ? jstr(f, "error") : "");
        n_verified += verify_job_proofs(f, vk, "crash", i, jobs[i].parts, &n_proofs, ms);
        json_decref(f);
        /* done exactly once: at most one final event for the id across every run's log; none
         * only when it was done in the journal at a restart (the kill came between its
         * commit and the log line); once seen done, it never runs again */
        char needle[128];
        snprintf(needle, sizeof needle, "event=job_final job=%s ", jobs[i].id);
        int finals = count_in_file(d.log, needle);
        CHECK(finals == 1 || (finals == 0 && jobs[i].done_log_at >= 0));
        if (finals > 1 || (finals == 0 && jobs[i].done_log_at < 0))
            fprintf(stderr, "crash: job %s: %d final events\n", jobs[i].id, finals);
        if (jobs[i].done_log_at >= 0) {
            snprintf(needle, sizeof needle, "job=%s ", jobs[i].id);
            int again = count_from(d.log, jobs[i].done_log_at, needle);
            CHECK(again == 0);
            if (again)
                fprintf(stderr, "crash: job %s ran again after it was done\n", jobs[i].id);
        }
    }
    if (ms)
        fclose(ms);
    printf("crash: %d jobs, %d proofs, %d verified (cuzk verify)\n", n_jobs, n_proofs, n_verified);
    CHECK(n_verified == n_proofs && n_proofs >= N_JOBS);
    CHECK(count_in_file(d.log, "event=job_recovered") >= 1);
    if (snarkjs_present()) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "node %s/tests/daemon/verify_all.mjs %s", src_dir, sample);
        CHECK(system(cmd) == 0);
    } else {
        printf("crash: snarkjs not installed: the sample is not checked with it\n");
    }

    /* after the retention: the jobs are gone, from the API, the journal and the spool */
    CHECK(daemon_stop(&d, 30) == 0);
    CHECK(daemon_start(&d, "crash", "--example", "--allow-dir", allow, "--result-ttl", "1",
                       NULL));
    sleep(3);
    char path[128];
    snprintf(path, sizeof path, "/v1/proofs/%s", jobs[0].id);
    resp r;
    CHECK(http(&r, d.addr, "GET", path, NULL) && r.status == 404);
    resp_free(&r);
    CHECK(daemon_stop(&d, 30) == 0);
    char spool[400];
    snprintf(spool, sizeof spool, "%s/spool", d.state);
    CHECK(dir_entries(spool) == 0);
    store *st = NULL;
    CHECK(store_sqlite_open(&st, d.state) == CUZK_OK);
    unsigned all = 99, open_ = 99;
    CHECK(st && store_count(st, &all, &open_) == CUZK_OK && all == 0 && open_ == 0);
    store_close(st);
    free(vk);
    free(wpath);
    free(wbytes);
    free(wb64);
    for (int i = 0; i < n_jobs; i++)
        free(jobs[i].id);
    return test_finish();
}

static long post(const char *addr, const char *path_json)
{
    char body[1200];
    snprintf(body, sizeof body, "{\"key\": \"example\", \"priority\": \"low\", \"witnesses\": [%s]}",
             path_json);
    resp r;
    long st = http(&r, addr, "POST", "/v1/proofs", body) ? r.status : 0;
    if (st == 202) {   /* remembered for the caller: the last accepted id */
        free(jobs[0].id);
        jobs[0].id = strdup(jstr(r.json, "id"));
    }
    resp_free(&r);
    return st;
}

/* Witness paths: refused without --allow-dir; beneath one, never through a link or "..";
 * a file swapped for a link after its job was accepted is not what the job reads. */
static int scenario_paths(void)
{
    char *w = test_fixture_dup("chain", "witness.wtns");
    size_t wl;
    unsigned char *wb = read_all(w, &wl);
    char allow[400], p[600], q[600], one[800];
    snprintf(allow, sizeof allow, "%s/allow", tmp_dir);
    CHECK(mkdir(allow, 0700) == 0);
    snprintf(p, sizeof p, "%s/w.wtns", allow);
    write_all(p, wb, wl);
    snprintf(p, sizeof p, "%s/w2.wtns", allow);
    write_all(p, wb, wl);
    snprintf(p, sizeof p, "%s/out.wtns", tmp_dir);
    write_all(p, wb, wl);
    snprintf(p, sizeof p, "%s/secret", tmp_dir);
    write_all(p, "root:secret-bytes\n", 18);
    snprintf(p, sizeof p, "%s/link.wtns", allow);
    CHECK(symlink("../out.wtns", p) == 0);
    snprintf(p, sizeof p, "%s/sub", allow);
    CHECK(symlink(tmp_dir, p) == 0);

    /* no --allow-dir: path witnesses are off, uploads still work */
    daemon_default_any_path = false;
    daemon_proc d;
    CHECK(daemon_start(&d, "off", "--example", NULL));
    snprintf(one, sizeof one, "\"%s/w.wtns\"", allow);
    resp r;
    char body[1200];
    snprintf(body, sizeof body, "{\"key\": \"example\", \"witnesses\": [%s]}", one);
    CHECK(http(&r, d.addr, "POST", "/v1/proofs", body) && r.status == 403 &&
          strstr(jstr(r.json, "error"), "allow_dir"));
    resp_free(&r);
    CHECK(http_ex(&r, d.addr, "POST", "/v1/proofs?key=example", "application/octet-stream", wb, wl,
                  NULL) && r.status == 202);
    resp_free(&r);
    CHECK(daemon_stop(&d, 30) == 0);

    CHECK(daemon_start(&d, "allow", "--example", "--allow-dir", allow,
                       "--debug-device-delay-ms", "150", NULL));
    static const char *const refused[] = {"link.wtns", "sub/out.wtns", "../out.wtns",
                                          "sub/allow/w.wtns", "./../allow/w.wtns"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(one, sizeof one, "\"%s/%s\"", allow, refused[i]);
        long st = post(d.addr, one);
        CHECK(st == 403);
        if (st != 403)
            fprintf(stderr, "paths: %s: %ld, not 403\n", refused[i], st);
    }
    snprintf(one, sizeof one, "\"%s/out.wtns\"", tmp_dir);
    CHECK(post(d.addr, one) == 403);
    /* a slow job first, then the one whose file is swapped while it waits */
    char six[4000];
    int o = 0;
    for (int i = 0; i < 6; i++)
        o += snprintf(six + o, sizeof six - (size_t)o, "%s\"%s/w.wtns\"", i ? ", " : "", allow);
    char body6[4200];
    snprintf(body6, sizeof body6, "{\"key\": \"example\", \"priority\": \"critical\", "
             "\"witnesses\": [%s]}", six);
    CHECK(http(&r, d.addr, "POST", "/v1/proofs", body6) && r.status == 202);
    resp_free(&r);
    snprintf(one, sizeof one, "\"%s/w2.wtns\"", allow);
    CHECK(post(d.addr, one) == 202);
    char *swapped = jobs[0].id ? strdup(jobs[0].id) : NULL;
    snprintf(p, sizeof p, "%s/w2.wtns", allow);
    snprintf(q, sizeof q, "%s/w2.orig", allow);
    CHECK(rename(p, q) == 0);
    snprintf(q, sizeof q, "%s/secret", tmp_dir);
    CHECK(symlink(q, p) == 0);
    json_t *f = swapped ? wait_final(d.addr, swapped, 60) : NULL;
    CHECK(f && !strcmp(jstr(f, "state"), "done"));
    if (f && strcmp(jstr(f, "state"), "done"))
        fprintf(stderr, "paths: the swapped job: %s %s\n", jstr(f, "state"), jstr(f, "error"));
    CHECK(count_in_file(d.log, "secret-bytes") == 0);
    json_decref(f);
    /* the same name now refused: it is a link */
    CHECK(post(d.addr, one) == 403);
    CHECK(daemon_stop(&d, 30) == 0);

    /* killed with jobs unfinished; restarted without their key, or without a witness file:
     * those jobs fail with that reason, the others run */
    CHECK(daemon_start(&d, "again", "--example", "--allow-dir", allow,
                       "--debug-device-delay-ms", "400", NULL));
    CHECK(http(&r, d.addr, "POST", "/v1/proofs", body6) && r.status == 202);
    resp_free(&r);
    snprintf(one, sizeof one, "\"%s/w.wtns\"", allow);
    CHECK(post(d.addr, one) == 202);
    char *keyless = jobs[0].id ? strdup(jobs[0].id) : NULL;
    daemon_kill(&d);
    CHECK(daemon_start(&d, "again", "--allow-dir", allow, NULL));   /* no --example key */
    f = keyless ? wait_final(d.addr, keyless, 30) : NULL;
    CHECK(f && !strcmp(jstr(f, "state"), "failed") &&
          strstr(jstr(f, "error"), "not registered after the restart"));
    json_decref(f);
    CHECK(daemon_stop(&d, 30) == 0);
    CHECK(daemon_start(&d, "moved", "--example", "--allow-dir", allow,
                       "--debug-device-delay-ms", "400", NULL));
    CHECK(http(&r, d.addr, "POST", "/v1/proofs", body6) && r.status == 202);
    resp_free(&r);
    snprintf(one, sizeof one, "\"%s/w2.orig\"", allow);
    CHECK(post(d.addr, one) == 202);
    char *moved = jobs[0].id ? strdup(jobs[0].id) : NULL;
    daemon_kill(&d);
    snprintf(p, sizeof p, "%s/w2.orig", allow);
    CHECK(unlink(p) == 0);
    CHECK(daemon_start(&d, "moved", "--example", "--allow-dir", allow, NULL));
    f = moved ? wait_final(d.addr, moved, 30) : NULL;
    CHECK(f && !strcmp(jstr(f, "state"), "failed") && strstr(jstr(f, "error"), "after the restart"));
    json_decref(f);
    CHECK(daemon_stop(&d, 30) == 0);
    free(keyless);
    free(moved);
    free(swapped);
    free(jobs[0].id);
    jobs[0].id = NULL;
    free(wb);
    free(w);
    return test_finish();
}

/* The cancel_commit scenario (the file's comment). */
static int scenario_cancel_commit(void)
{
    char state[400], needle[160], path[128];
    snprintf(state, sizeof state, "%s/cc.state", tmp_dir);
    daemon_proc d;
    if (!daemon_start(&d, "cc", "--example", "--state-dir", state, "--debug-journal-delay-ms",
                      "1500", NULL)) {
        CHECK(0);
        return test_finish();
    }
    long st = 0;
    char *id = submit(d.addr, "example", "chain", "normal", 1, &st);
    CHECK(id && st == 202);
    if (!id)
        return test_finish();
    /* the proof made and verified: its journaling has begun (1.5 s of it) */
    snprintf(needle, sizeof needle, "event=finalize_end job=%s", id);
    bool seen = false;
    for (int i = 0; i < 300 && !seen; i++) {
        seen = count_in_file(d.log, needle) > 0;
        if (!seen)
            usleep(100000);
    }
    CHECK(seen);
    usleep(300000);
    snprintf(path, sizeof path, "/v1/proofs/%s", id);
    resp r;
    CHECK(http(&r, d.addr, "DELETE", path, NULL));
    CHECK(r.status == 409 && r.body && strstr(r.body, "done"));
    if (r.status != 409)
        fprintf(stderr, "cancel during the commit: %ld %s\n", r.status, r.body ? r.body : "");
    resp_free(&r);
    json_t *f = wait_final(d.addr, id, 30);
    CHECK(f && !strcmp(jstr(f, "state"), "done"));
    json_decref(f);
    /* /v1/status shows the journal: on, the job and its proof committed */
    CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200);
    json_t *jr = json_object_get(r.json, "journal");
    CHECK(json_is_true(json_object_get(jr, "on")) &&
          json_integer_value(json_object_get(jr, "commits")) >= 2);
    resp_free(&r);
    daemon_kill(&d);
    daemon_proc d2;
    if (!daemon_start(&d2, "cc2", "--example", "--state-dir", state, NULL)) {
        CHECK(0);
        free(id);
        return test_finish();
    }
    f = wait_final(d2.addr, id, 30);
    CHECK(f && !strcmp(jstr(f, "state"), "done") &&
          json_array_size(json_object_get(f, "proofs")) == 1);
    json_decref(f);
    CHECK(daemon_stop(&d2, 30) == 0);
    free(id);
    return test_finish();
}

int main(int argc, char **argv)
{
    static const daemon_scenario sc[] = {{"crash", scenario_crash}, {"paths", scenario_paths},
                                         {"cancel_commit", scenario_cancel_commit}};
    return daemon_test_main(argc, argv, "test_crash", sc, sizeof sc / sizeof sc[0]);
}
