/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk-daemon with its journal on PostgreSQL (--store postgresql://...), against a real
 * server the test starts (tests/test_pg.h; skipped without Debian's postgresql package).
 *
 *   pg_crash   60 jobs (uploads and paths, one or two partitions) submitted over four runs of
 *              one daemon on one database; the first three runs end by SIGKILL at a random
 *              moment, and PostgreSQL itself is stopped as by a crash and started again once
 *              under the running daemon. After each restart every job accepted so far
 *              answers under its id; in the end every job is done exactly once (one
 *              job_final event per id across the runs' log), every proof verifies (cuzk
 *              verify); after the retention the database holds no job and the spool is
 *              empty.
 *   farm       a farm: three daemons on one database, 300 jobs (80 in the sanitizers' build,
 *              every 4th job's proofs verified there) of 1 to 4 partitions (paths
 *              and uploads) submitted by 8 clients to random daemons; one daemon SIGKILLed
 *              while it proves (its leases run out, other daemons prove those partitions
 *              again), a fourth started later, PostgreSQL restarted once under them: every
 *              job done, exactly one daemon logs each job's completion, every proof
 *              verifies (cuzk verify), the results are read from a daemon other than the
 *              one that accepted the job, a partition whose lease ran out is claimed again
 *              (attempt 2) and never while the lease before could live (from the daemons'
 *              logs), the status names every daemon, a key added on one daemon reaches the
 *              others and one removed on any leaves them all, nothing left in the queue.
 *   outage     the database stopped for 15 s under a daemon proving a job: new work and
 *              reads answer 503 (at once once the daemon knows), the status says the store
 *              is down, the job held goes on and is recorded when the database is back;
 *              then new work is accepted again. */
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
#include "test_pg.h"

#define N_JOBS 60
#define N_KILLS 3

typedef struct {
    char *id;
    int parts;
} cjob;

static cjob jobs[N_JOBS];
static int n_jobs;
static char *wpath, *wb64;
static test_pg pg;

static bool submit_one(const char *addr, int i)
{
    cjob *j = &jobs[i];
    j->parts = 1 + (int)(test_rand64() % 2);
    bool upload = test_rand64() % 2;
    size_t cap = 256 + 2 * (strlen(wb64) + strlen(wpath) + 32);
    char *body = malloc(cap);
    int o = snprintf(body, cap, "{\"key\": \"example\", \"priority\": \"%s\", \"witnesses\": [",
                     test_rand64() % 2 ? "high" : "normal");
    for (int p = 0; p < j->parts; p++)
        o += snprintf(body + o, cap - (size_t)o, upload ? "%s{\"wtns_base64\": \"%s\"}"
                                                        : "%s{\"path\": \"%s\"}",
                      p ? ", " : "", upload ? wb64 : wpath);
    snprintf(body + o, cap - (size_t)o, "]}");
    resp r;
    bool answered = http(&r, addr, "POST", "/v1/proofs", body);
    free(body);
    if (answered && r.status == 202 && jstr(r.json, "id"))
        j->id = strdup(jstr(r.json, "id"));
    else if (answered && r.status != 0)
        fprintf(stderr, "pg_crash: submit %d: %ld %s\n", i, r.status, r.body ? r.body : "");
    resp_free(&r);
    return j->id != NULL;
}

static void check_known(const char *addr)
{
    for (int i = 0; i < n_jobs; i++) {
        char path[128];
        snprintf(path, sizeof path, "/v1/proofs/%s", jobs[i].id);
        resp r;
        /* 503 while the database recovers (the daemon says so at once), then the job */
        bool answered = false;
        for (int t = 0; t < 200; t++) {
            answered = http(&r, addr, "GET", path, NULL);
            if (!answered || r.status != 503)
                break;
            resp_free(&r);
            usleep(100000);
        }
        bool ok = answered && r.status == 200 && r.json &&
                  strcmp(jstr(r.json, "state"), "failed") != 0;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "pg_crash: job %s after a restart: %ld %s\n", jobs[i].id, r.status,
                    r.body ? r.body : "");
        resp_free(&r);
    }
}

static void pg_cleanup(void)
{
    test_pg_stop(&pg);   /* (a no-op once stopped) */
}

/* The daemons' --allow-dir: the fixtures' directory. */
static char allow[512];

/* Each scenario's start: the server (SKIP without one), the fixture's witness by path
 * (wpath) and as base64 (wb64), allow. */
static int cluster_setup(void)
{
    snprintf(allow, sizeof allow, "%s/tests/data/circuits", src_dir);
    int rc = test_pg_start(&pg);
    if (rc != 0)
        return rc == 77 ? SKIP : 1;
    atexit(pg_cleanup);
    wpath = test_fixture_dup("chain", "witness.wtns");
    size_t wlen;
    unsigned char *wbytes = read_all(wpath, &wlen);
    wb64 = b64(wbytes, wlen);
    free(wbytes);
    return 0;
}

static int scenario_pg_crash(void)
{
    int rc = cluster_setup();
    if (rc != 0)
        return rc;
    daemon_proc d;
    memset(&d, 0, sizeof d);
    for (int run = 0; run <= N_KILLS; run++) {
        if (!daemon_start(&d, "pg", "--example", "--allow-dir", allow, "--store", pg.url,
                          "--debug-device-delay-ms", "30", "--result-ttl", "600", "--lease", "1",
                          NULL)) {
            CHECK(0);
            test_pg_stop(&pg);
            return 1;
        }
        if (run > 0)
            check_known(d.addr);
        if (run == 1) {
            /* PostgreSQL crashes and comes back under the running daemon, which waits for it */
            CHECK(test_pg_restart(&pg) == 0);
            check_known(d.addr);
        }
        kill_later ka = {d.pid, 300 + (unsigned)(test_rand64() % 1000), 0};
        if (run < N_KILLS)
            kill_later_start(&ka);
        int target = N_JOBS * (run + 1) / (N_KILLS + 1);
        while (n_jobs < target) {
            if (!submit_one(d.addr, n_jobs)) {
                if (kill(d.pid, 0) == 0 && waitpid(d.pid, NULL, WNOHANG) == 0)
                    continue;
                break;
            }
            n_jobs++;
            usleep((useconds_t)(test_rand64() % 20000));
        }
        if (run < N_KILLS) {
            kill_later_join(&ka);
            daemon_kill(&d);
            printf("pg_crash: run %d killed after %u ms with %d jobs accepted\n", run,
                   ka.delay_ms, n_jobs);
        }
    }
    while (n_jobs < N_JOBS && submit_one(d.addr, n_jobs))
        n_jobs++;
    CHECK(n_jobs == N_JOBS);

    char *vk = test_fixture_dup("chain", "verification_key.json");
    int n_proofs = 0, n_verified = 0;
    for (int i = 0; i < n_jobs; i++) {
        for (int k = 0; k < i; k++)
            CHECK(strcmp(jobs[k].id, jobs[i].id) != 0);
        json_t *f = wait_final(d.addr, jobs[i].id, 120);
        bool done = f && !strcmp(jstr(f, "state"), "done");
        CHECK(done);
        if (!done)
            fprintf(stderr, "pg_crash: job %s: %s %s\n", jobs[i].id, f ? jstr(f, "state") : "-",
                    f ? jstr(f, "error") : "");
        n_verified += verify_job_proofs(f, vk, "pg", i, jobs[i].parts, &n_proofs, NULL);
        json_decref(f);
        /* done exactly once: at most one final event for the id across the runs (none only
         * when the kill came between its commit and the log line) */
        char needle[128];
        snprintf(needle, sizeof needle, "event=job_done job=%s ", jobs[i].id);
        int finals = count_in_file(d.log, needle);
        CHECK(finals <= 1);
        if (finals > 1)
            fprintf(stderr, "pg_crash: job %s: %d final events\n", jobs[i].id, finals);
    }
    printf("pg_crash: %d jobs, %d proofs, %d verified (cuzk verify)\n", n_jobs, n_proofs,
           n_verified);
    CHECK(n_verified == n_proofs && n_proofs >= N_JOBS);
    /* partitions of a killed daemon, claimed again once their lease ran out */
    CHECK(count_in_file(d.log, "attempt=2") >= 1);
    /* the jobs are rows of the database, not of a local file */
    char local[400];
    struct stat st;
    snprintf(local, sizeof local, "%s/journal.db", d.state);
    CHECK(stat(local, &st) != 0);

    /* after the retention: no job in the database, none in the spool */
    CHECK(daemon_stop(&d, 30) == 0);
    CHECK(daemon_start(&d, "pg", "--example", "--allow-dir", allow, "--store", pg.url,
                       "--result-ttl", "1", NULL));
    sleep(3);
    CHECK(daemon_stop(&d, 30) == 0);
    char spool[400];
    snprintf(spool, sizeof spool, "%s/spool", d.state);
    CHECK(dir_entries(spool) == 0);
    store *s = NULL;
    CHECK(store_postgres_open(&s, pg.url, false) == CUZK_OK);
    unsigned all = 99, open_ = 99;
    CHECK(s && store_count(s, &all, &open_) == CUZK_OK && all == 0 && open_ == 0);
    store_close(s);
    /* a database the daemon cannot reach: it does not start (its reason on stderr) */
    char bad[200];
    snprintf(bad, sizeof bad, "postgresql://cuzk@127.0.0.1:%d/cuzk_test?connect_timeout=3",
             test_pg_free_port());
    CHECK(!daemon_start(&d, "nodb", "--example", "--store", bad, NULL));
    /* a store without the journal, or one that is not PostgreSQL's: refused */
    CHECK(!daemon_start(&d, "nojournal", "--example", "--no-journal", "--store", pg.url, NULL));
    CHECK(!daemon_start(&d, "mysql", "--example", "--store", "mysql://cuzk@127.0.0.1/x", NULL));
    test_pg_stop(&pg);
    free(vk);
    free(wpath);
    free(wb64);
    for (int i = 0; i < n_jobs; i++)
        free(jobs[i].id);
    return test_finish();
}

/* ---- farm ---- */

#ifdef __SANITIZE_ADDRESS__
/* the sanitizers' build: every daemon and every cuzk verify runs several times slower */
#define FARM_JOBS 80
#define FARM_VERIFY_EVERY 4   /* the proofs of every 4th job checked with cuzk verify */
#else
#define FARM_JOBS 300
#define FARM_VERIFY_EVERY 1
#endif
#define FARM_CLIENTS 8
#define FARM_DAEMONS 4

static daemon_proc farm[FARM_DAEMONS];
static _Atomic bool farm_alive[FARM_DAEMONS];
static cjob fjobs[FARM_JOBS];
static int fjob_by[FARM_JOBS];   /* the daemon that accepted it */
static _Atomic int farm_next;
static _Atomic int farm_retries;

/* A daemon alive now, at random (-1: none). */
static int farm_pick(void)
{
    for (int t = 0; t < 64; t++) {
        int d = (int)(test_rand64() % FARM_DAEMONS);
        if (farm_alive[d])
            return d;
    }
    return -1;
}

static bool farm_submit(int i)
{
    cjob *j = &fjobs[i];
    j->parts = 1 + (int)(test_rand64() % 4);
    bool upload = test_rand64() % 3 == 0;
    size_t cap = 256 + 4 * (strlen(wb64) + strlen(wpath) + 32);
    char *body = malloc(cap);
    int o = snprintf(body, cap, "{\"key\": \"example\", \"priority\": \"%s\", \"witnesses\": [",
                     test_rand64() % 4 == 0 ? "high" : "normal");
    for (int p = 0; p < j->parts; p++)
        o += snprintf(body + o, cap - (size_t)o, upload ? "%s{\"wtns_base64\": \"%s\"}"
                                                        : "%s{\"path\": \"%s\"}",
                      p ? ", " : "", upload ? wb64 : wpath);
    snprintf(body + o, cap - (size_t)o, "]}");
    /* refused (503 while the database restarts) or not answered (a daemon killed): the
     * client tries again, on any daemon */
    for (int t = 0; t < 400 && !j->id; t++) {
        int d = farm_pick();
        resp r;
        bool answered = d >= 0 && http(&r, farm[d].addr, "POST", "/v1/proofs", body);
        if (answered && r.status == 202 && jstr(r.json, "id")) {
            j->id = strdup(jstr(r.json, "id"));
            fjob_by[i] = d;
        } else {
            if (answered && r.status != 503 && r.status != 0)
                fprintf(stderr, "farm: submit %d: %ld %s\n", i, r.status, r.body ? r.body : "");
            farm_retries++;
            usleep(50000);
        }
        if (answered)
            resp_free(&r);
    }
    free(body);
    return j->id != NULL;
}

static void *farm_client(void *arg)
{
    (void)arg;
    for (int i; (i = farm_next++) < FARM_JOBS;) {
        CHECK(farm_submit(i));
        usleep((useconds_t)(test_rand64() % 8000));
    }
    return NULL;
}

/* Every daemon has the farm's spool directory; daemons 0 and 2 keep uploads there (their
 * db_upload_max below the witness's size), 1 and 3 in the database: every daemon claims
 * both kinds. */
static char farm_spool[400];

static bool farm_daemon(int k)
{
    char tag[16], node[16];
    snprintf(tag, sizeof tag, "farm%d", k);
    snprintf(node, sizeof node, "node%d", k);
    if (!farm_spool[0]) {
        snprintf(farm_spool, sizeof farm_spool, "%s/farm-spool", tmp_dir);
        CHECK(mkdir(farm_spool, 0700) == 0);
    }
    bool ok = k % 2 == 0
                  ? daemon_start(&farm[k], tag, "--example", "--allow-dir", allow, "--store",
                                 pg.url, "--debug-device-delay-ms", "15", "--lease", "1.5",
                                 "--node-name", node, "--spool-dir", farm_spool,
                                 "--db-upload-max", "1000", NULL)
                  : daemon_start(&farm[k], tag, "--example", "--allow-dir", allow, "--store",
                                 pg.url, "--debug-device-delay-ms", "15", "--lease", "1.5",
                                 "--node-name", node, "--spool-dir", farm_spool, NULL);
    farm_alive[k] = ok;
    return ok;
}

/* The daemon's status JSON (owned) or NULL. */
static json_t *farm_status(int k)
{
    resp r;
    json_t *o = NULL;
    if (http(&r, farm[k].addr, "GET", "/v1/status", NULL) && r.status == 200 && r.json)
        o = json_incref(r.json);
    resp_free(&r);
    return o;
}

/* Seconds of the day of a log line's ISO time (2026-12-01T18:25:16.123456Z ...). */
static double log_time(const char *line)
{
    int h, m;
    double sec;
    return sscanf(line + 11, "%d:%d:%lf", &h, &m, &sec) == 3 ? h * 3600.0 + m * 60 + sec : -1;
}

typedef struct {
    char id[CUZK_JOB_ID_CHARS + 1];
    unsigned part, attempt;
    double t;
    int daemon;
} farm_claim;

static int claim_cmp(const void *a, const void *b)
{
    const farm_claim *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c)
        return c;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return x->attempt < y->attempt ? -1 : x->attempt > y->attempt;
}

/* Seconds of the day (UTC) now, as the logs write them. */
static double day_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)(ts.tv_sec % 86400) + ts.tv_nsec * 1e-9;
}

/* No partition claimed twice while the first claim's lease could still live: from every
 * daemon's log, each later claim of a partition comes at least a lease after the one before
 * (renewed leases only run out once their daemon is gone, or stalled: it then logs
 * lease_lost), unless that one was given back, or it was made in the last second before
 * the database's crash at t_crash (claims are committed without flushing the server's log:
 * such a claim may be lost, and its partition claimed again at once, by design). Returns
 * the number of partitions claimed more than once. */
static int farm_check_claims(double lease_s, double t_crash)
{
    size_t cap = 4096, n = 0;
    farm_claim *c = malloc(cap * sizeof *c);
    for (int k = 0; k < FARM_DAEMONS && c; k++) {
        FILE *f = fopen(farm[k].log, "r");
        char line[1024];
        while (f && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, "event=claim job=");
            bool released = strstr(line, "event=claim_released job=") != NULL;
            if (!p && !released)
                continue;
            if (released)   /* given back at once: the next claim may follow at once */
                p = strstr(line, "event=claim_released job=") + 9;
            farm_claim x;
            memset(&x, 0, sizeof x);
            if (sscanf(p, "event=claim job=%32s part=%u attempt=%u", x.id, &x.part,
                       &x.attempt) != 3 &&
                !(released && sscanf(p, "released job=%32s part=%u", x.id, &x.part) == 2))
                continue;
            if (released)
                x.attempt = 0;   /* marks a give-back */
            x.t = log_time(line);
            x.daemon = k;
            if (n == cap)
                c = realloc(c, (cap *= 2) * sizeof *c);
            if (c)
                c[n++] = x;
        }
        if (f)
            fclose(f);
    }
    if (!c)
        return -1;
    qsort(c, n, sizeof *c, claim_cmp);
    int twice = 0;
    for (size_t i = 1; i < n; i++) {
        const farm_claim *a = &c[i - 1], *b = &c[i];
        if (strcmp(a->id, b->id) || a->part != b->part || b->attempt == 0)
            continue;
        bool given_back = false;   /* a give-back of the earlier claim's partition */
        for (size_t g = 0; g < n && !given_back; g++)
            given_back = c[g].attempt == 0 && !strcmp(c[g].id, b->id) && c[g].part == b->part &&
                         c[g].t >= a->t && c[g].t <= b->t;
        if (a->attempt == 0)
            continue;
        twice++;
        /* the claim before was the killed daemon's, or made just before the database's
         * crash, or its daemon said its leases ran out under it (a stall longer than a
         * lease: possible on a loaded machine, and then the first proof recorded stands) */
        bool lost = a->t <= t_crash + 0.05 && a->t >= t_crash - 1.0;
        bool expired = a->daemon == 1 || count_in_file(farm[a->daemon].log, "event=lease_lost") > 0;
        /* the later claim logged first: the earlier daemon stalled between its claim and its
         * log line, so the line's time says nothing of the claim's */
        expired = expired || b->t < a->t;
        bool ok = given_back || lost || expired || b->t - a->t >= lease_s - 0.05;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "farm: job %s part %u claimed by daemon %d at %.3f and by daemon %d "
                    "at %.3f, within a lease\n", a->id, a->part, a->daemon, a->t, b->daemon, b->t);
    }
    free(c);
    return twice;
}

static int scenario_farm(void)
{
    int rc = cluster_setup();
    if (rc != 0)
        return rc;
    for (int k = 0; k < 3; k++)
        if (!farm_daemon(k)) {
            CHECK(0);
            return test_finish();
        }
    pthread_t cl[FARM_CLIENTS];
    for (int c = 0; c < FARM_CLIENTS; c++)
        pthread_create(&cl[c], NULL, farm_client, NULL);
    /* daemon 1 killed while it proves: wait until it holds leases */
    bool holding = false;
    for (int t = 0; t < 400 && !holding; t++) {
        json_t *st = farm_status(1);
        json_t *c = st ? json_object_get(st, "cluster") : NULL;
        holding = c && json_integer_value(json_object_get(c, "leases_held")) > 0 &&
                  farm_next > FARM_JOBS / 4;
        json_decref(st);
        if (!holding)
            usleep(10000);
    }
    CHECK(holding);
    farm_alive[1] = false;
    daemon_kill(&farm[1]);
    printf("farm: daemon 1 killed while holding leases, %d jobs handed out\n", (int)farm_next);
    /* PostgreSQL crashes and comes back under the daemons */
    usleep(300000);
    double t_crash = day_now();
    CHECK(test_pg_restart(&pg) == 0);
    printf("farm: PostgreSQL restarted, %d jobs handed out\n", (int)farm_next);
    /* a fourth daemon joins */
    CHECK(farm_daemon(3));
    for (int c = 0; c < FARM_CLIENTS; c++)
        pthread_join(cl[c], NULL);

    char *vk = test_fixture_dup("chain", "verification_key.json");
    int n_proofs = 0, n_verified = 0, n_done = 0, other = 0;
    for (int i = 0; i < FARM_JOBS; i++) {
        if (!fjobs[i].id)
            continue;
        /* read from a daemon other than the one that took it */
        int d = fjob_by[i];
        for (int t = 0; t < 8 && (d == fjob_by[i] || !farm_alive[d]); t++)
            d = (d + 1) % FARM_DAEMONS;
        other += d != fjob_by[i];
        json_t *f = wait_final(farm[d].addr, fjobs[i].id, 120);
        bool done = f && !strcmp(jstr(f, "state"), "done");
        n_done += done;
        CHECK(done);
        if (!done)
            fprintf(stderr, "farm: job %s: %s %s\n", fjobs[i].id, f ? jstr(f, "state") : "-",
                    f ? jstr(f, "error") : "");
        if (i % FARM_VERIFY_EVERY == 0)
            n_verified += verify_job_proofs(f, vk, "farm", i, fjobs[i].parts, &n_proofs, NULL);
        else
            CHECK(done && json_array_size(json_object_get(f, "proofs")) == (size_t)fjobs[i].parts);
        json_decref(f);
        /* completed exactly once: one daemon's log says so (none only for the killed one,
         * between its commit and its log line) */
        char needle[128];
        snprintf(needle, sizeof needle, "event=job_done job=%s ", fjobs[i].id);
        int finals = 0;
        for (int k = 0; k < FARM_DAEMONS; k++)
            finals += count_in_file(farm[k].log, needle);
        bool by_killed = count_in_file(farm[1].log, needle) > 0;
        CHECK(finals == 1 || (finals == 0 && !by_killed));
        if (finals != 1)
            fprintf(stderr, "farm: job %s: %d completions logged\n", fjobs[i].id, finals);
    }
    /* uploads kept in the spool by daemons 0 and 2 (one file per partition, until expiry) */
    unsigned spooled = dir_entries(farm_spool);
    printf("farm: %u uploaded witnesses in the shared spool\n", spooled);
    CHECK(spooled > 0);
    int twice = farm_check_claims(1.5, t_crash);
    printf("farm: %d partitions claimed again, none within the lease of the claim before\n", twice);
    CHECK(twice >= 1);
    int reclaimed = 0, claims = 0;
    for (int k = 0; k < FARM_DAEMONS; k++) {
        reclaimed += count_in_file(farm[k].log, "attempt=2");
        claims += count_in_file(farm[k].log, "event=claim job=");
    }
    printf("farm: %d jobs done, %d proofs, %d verified, %d read from another daemon, %d claims, "
           "%d claimed again after a lease ran out, %d submissions retried\n",
           n_done, n_proofs, n_verified, other, claims, reclaimed, (int)farm_retries);
    CHECK(n_done == FARM_JOBS && n_verified == n_proofs &&
          n_proofs >= FARM_JOBS / FARM_VERIFY_EVERY);
    CHECK(other >= FARM_JOBS / 2);
    CHECK(reclaimed >= 1);
    CHECK(claims >= n_proofs);
    /* each daemon proved some of it, and the status shows the three alive */
    for (int k = 0; k < FARM_DAEMONS; k++)
        CHECK(count_in_file(farm[k].log, "event=claim job=") > 0 || k == 3);
    json_t *st = farm_status(0);
    json_t *c = st ? json_object_get(st, "cluster") : NULL;
    json_t *hosts = c ? json_object_get(c, "hosts") : NULL;
    size_t alive = 0;
    for (size_t h = 0; h < json_array_size(hosts); h++) {
        const char *node = jstr(json_array_get(hosts, h), "node");
        alive += node && (!strcmp(node, "node0") || !strcmp(node, "node2") ||
                          !strcmp(node, "node3"));
    }
    CHECK(alive == 3);
    CHECK(c && json_integer_value(json_object_get(c, "claim_calls")) > 0);
    json_decref(st);
    /* the metrics name the claims */
    resp r;
    CHECK(http(&r, farm[0].addr, "GET", "/metrics", NULL) && r.status == 200 && r.body &&
          strstr(r.body, "cuzk_cluster_claims_total ") && strstr(r.body, "cuzk_cluster_hosts 3"));
    resp_free(&r);
    /* the shared key table: a key registered on one daemon reaches the others (a notice),
     * and one removed on any daemon leaves them all */
    CHECK(add_key(farm[0].addr, "k2", "multiplier"));
    long k2 = 0;
    for (int t = 0; t < 150 && k2 != 200; t++) {
        k2 = http(&r, farm[2].addr, "GET", "/v1/keys/k2", NULL) ? r.status : 0;
        resp_free(&r);
        if (k2 != 200)
            usleep(100000);
    }
    CHECK(k2 == 200);
    CHECK(http(&r, farm[3].addr, "DELETE", "/v1/keys/k2", NULL) && r.status == 200);
    resp_free(&r);
    for (int t = 0; t < 150 && k2 != 404; t++) {
        k2 = http(&r, farm[0].addr, "GET", "/v1/keys/k2", NULL) ? r.status : 0;
        resp_free(&r);
        if (k2 != 404)
            usleep(100000);
    }
    CHECK(k2 == 404);
    store *s = NULL;
    CHECK(store_postgres_open(&s, pg.url, false) == CUZK_OK);
    /* nothing left open; a submission whose answer a kill cut off (committed, then tried
     * again on another daemon) may add a job of its own, proved as well */
    unsigned all = 0, open_ = 99;
    for (int t = 0; t < 300 && s && store_count(s, &all, &open_) == CUZK_OK && open_; t++)
        usleep(100000);
    CHECK(all >= FARM_JOBS && all <= FARM_JOBS + (unsigned)farm_retries && open_ == 0);
    if (all != FARM_JOBS || open_ != 0)
        fprintf(stderr, "farm: the store holds %u jobs, %u open\n", all, open_);
    store_close(s);
    for (int k = 0; k < FARM_DAEMONS; k++)
        if (farm_alive[k])
            CHECK(daemon_stop(&farm[k], 30) == 0);
    test_pg_stop(&pg);
    free(vk);
    for (int i = 0; i < FARM_JOBS; i++)
        free(fjobs[i].id);
    return test_finish();
}

/* ---- outage ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long submit_status(const char *addr, char **id)
{
    char body[1200];
    snprintf(body, sizeof body, "{\"key\": \"example\", \"witnesses\": [\"%s\", \"%s\", \"%s\", "
             "\"%s\"]}", wpath, wpath, wpath, wpath);
    resp r;
    long st = http(&r, addr, "POST", "/v1/proofs", body) ? r.status : 0;
    if (id)
        *id = st == 202 && jstr(r.json, "id") ? strdup(jstr(r.json, "id")) : NULL;
    if (st == 503)
        CHECK(r.retry_after[0] != 0);
    resp_free(&r);
    return st;
}

static int scenario_outage(void)
{
    int rc = cluster_setup();
    if (rc != 0)
        return rc;
    daemon_proc d;
    memset(&d, 0, sizeof d);
    if (!daemon_start(&d, "outage", "--example", "--allow-dir", allow, "--store", pg.url,
                      "--debug-device-delay-ms", "1500", "--lease", "3", "--db-upload-max", "1000",
                      NULL)) {
        CHECK(0);
        return test_finish();
    }
    /* an upload over db_upload_max with no spool_dir: refused, saying why */
    {
        size_t wl;
        unsigned char *wb = read_all(wpath, &wl);
        char *b = b64(wb, wl);
        free(wb);
        size_t cap = strlen(b) + 200;
        char *body = malloc(cap);
        snprintf(body, cap, "{\"key\": \"example\", \"witnesses\": [{\"wtns_base64\": \"%s\"}]}", b);
        resp r;
        CHECK(http(&r, d.addr, "POST", "/v1/proofs", body) && r.status == 422 && r.body &&
              strstr(r.body, "db_upload_max") && strstr(r.body, "spool_dir"));
        resp_free(&r);
        free(body);
        free(b);
    }
    char *j1 = NULL;
    CHECK(submit_status(d.addr, &j1) == 202 && j1);
    bool holding = false;
    for (int t = 0; t < 300 && !holding; t++) {
        json_t *st = NULL;
        resp r;
        if (http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200 && r.json)
            st = json_incref(r.json);
        resp_free(&r);
        json_t *c = st ? json_object_get(st, "cluster") : NULL;
        holding = c && json_integer_value(json_object_get(c, "leases_held")) > 0;
        json_decref(st);
        if (!holding)
            usleep(10000);
    }
    CHECK(holding);
    double t_stop = now_s();
    test_pg_halt(&pg, "immediate");
    /* new work: 503 (the first after the store's own retries), then at once */
    double t0 = now_s();
    long st1 = submit_status(d.addr, NULL);
    double t1 = now_s();
    long st2 = submit_status(d.addr, NULL);
    double t2 = now_s();
    printf("outage: submissions answered %ld after %.1f s, then %ld after %.2f s\n", st1, t1 - t0,
           st2, t2 - t1);
    CHECK(st1 == 503 && st2 == 503);
    CHECK(t2 - t1 < 3.0);
    /* reads too; the status says why */
    char path[128];
    snprintf(path, sizeof path, "/v1/proofs/%s", j1);
    resp r;
    CHECK(http(&r, d.addr, "GET", path, NULL) && r.status == 503);
    resp_free(&r);
    CHECK(http(&r, d.addr, "GET", "/v1/status", NULL) && r.status == 200 && r.json);
    json_t *c = r.json ? json_object_get(r.json, "cluster") : NULL;
    CHECK(c && json_is_false(json_object_get(c, "store_up")) &&
          strstr(jstr(c, "store_error"), "store"));
    resp_free(&r);
    while (now_s() - t_stop < 15)
        usleep(100000);
    CHECK(test_pg_restart(&pg) == 0);
    printf("outage: the database back after %.1f s\n", now_s() - t_stop);
    /* 503 until the daemon's next call to the store finds it back (a heartbeat: lease / 3) */
    double t_back = now_s();
    long gst = 0;
    for (int t = 0; t < 300 && gst != 200; t++) {
        gst = http(&r, d.addr, "GET", path, NULL) ? r.status : 0;
        resp_free(&r);
        if (gst != 200)
            usleep(50000);
    }
    CHECK(gst == 200);
    printf("outage: reads answered again %.2f s after the database came back\n", now_s() - t_back);
    json_t *f = wait_final(d.addr, j1, 120);
    CHECK(f && !strcmp(jstr(f, "state"), "done") &&
          json_array_size(json_object_get(f, "proofs")) == 4);
    json_decref(f);
    char *j3 = NULL;
    long st3 = 0;
    for (int t = 0; t < 100 && (st3 = submit_status(d.addr, &j3)) != 202; t++)
        usleep(100000);   /* the daemon learns the store is back at its next call */
    CHECK(st3 == 202 && j3);
    f = j3 ? wait_final(d.addr, j3, 120) : NULL;
    CHECK(f && !strcmp(jstr(f, "state"), "done"));
    json_decref(f);
    CHECK(count_in_file(d.log, "event=store_down") >= 1 && count_in_file(d.log, "event=store_up") >= 1);
    CHECK(daemon_stop(&d, 30) == 0);
    test_pg_stop(&pg);
    free(j1);
    free(j3);
    free(wpath);
    free(wb64);
    return test_finish();
}

int main(int argc, char **argv)
{
    static const daemon_scenario sc[] = {{"pg_crash", scenario_pg_crash},
                                         {"farm", scenario_farm},
                                         {"outage", scenario_outage}};
    return daemon_test_main(argc, argv, "test_cluster", sc, sizeof sc / sizeof sc[0]);
}
