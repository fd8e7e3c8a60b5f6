/* SPDX-License-Identifier: Apache-2.0 */
/* The job journal's PostgreSQL backend (src/store/postgres.c) against a real server
 * (test_pg.h): the cases every backend passes (store_cases.h), the schema's version (a newer
 * one refused, naming it), URLs refused or unreachable (the password never in the message),
 * the server killed and restarted under an open store (what was committed is there, the
 * connection comes back; a write during a short outage waits for the server), writers on
 * several threads, and workers on connections of their own racing to claim partitions.
 * Exit 77 without PostgreSQL. */
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "store_cases.h"
#include "test.h"
#include "test_pg.h"

static test_pg pg;

static cuzk_err open_pg(store **s)
{
    return store_postgres_open(s, pg.url, false);
}

static int psql(const char *sql)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s/psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p %d -U cuzk -d"
             " cuzk_test -c \"%s\" >&2", pg.bin, pg.port, sql);
    return test_pg_sh(cmd);
}

static void test_schema_version(void)
{
    store *s = NULL;
    CHECK(psql("UPDATE cuzk_schema_version SET version = 99") == 0);
    cuzk_err r = open_pg(&s);
    CHECK(r == CUZK_EFORMAT && s == NULL && strstr(cuzk_error_detail(), "schema version 99"));
    cuzk_error_clear();
    CHECK(psql("UPDATE cuzk_schema_version SET version = 3") == 0);
    CHECK_OK(open_pg(&s));
    store_close(s);
    /* a database without the tables gets them (and its version) at open */
    CHECK(psql("DROP TABLE cuzk_results, cuzk_witnesses, cuzk_jobs, cuzk_keys, cuzk_hosts, cuzk_schema_version") == 0);
    s = NULL;
    CHECK_OK(open_pg(&s));
    unsigned all = 9, open_ = 9;
    CHECK(s && store_count(s, &all, &open_) == CUZK_OK && all == 0 && open_ == 0);
    store_close(s);
}

static void test_bad_urls(void)
{
    store *s = NULL;
    CHECK(store_postgres_open(&s, "mysql://x@127.0.0.1/y", true) == CUZK_EINVAL && s == NULL);
    cuzk_error_clear();
    char url[200];
    snprintf(url, sizeof url, "postgresql://cuzk:hunter2secret@127.0.0.1:%d/cuzk_test"
             "?connect_timeout=5", test_pg_free_port());
    cuzk_err r = store_postgres_open(&s, url, false);
    CHECK(r == CUZK_EIO && s == NULL);
    CHECK(strstr(cuzk_error_detail(), "127.0.0.1") && !strstr(cuzk_error_detail(), "hunter2"));
    cuzk_error_clear();
    /* a database that does not exist */
    snprintf(url, sizeof url, "postgresql://cuzk@127.0.0.1:%d/no_such_db", pg.port);
    CHECK(store_postgres_open(&s, url, false) == CUZK_EIO && s == NULL &&
          strstr(cuzk_error_detail(), "no_such_db"));
    cuzk_error_clear();
}

static int restarted = -1;

static void *restart_later(void *arg)
{
    (void)arg;
    usleep(1000 * 1000);
    restarted = test_pg_restart(&pg);
    return NULL;
}

static void test_server_restart(void)
{
    store *s = NULL;
    CHECK_OK(open_pg(&s));
    if (!s)
        return;
    char *src[1] = {"/w/r.wtns"};
    bool sp[1] = {false};
    store_job j;
    job_make(&j, src, sp, "1111111111111111111111111111111a", 1, 5000.0);
    CHECK_OK(store_put_job(s, &j));
    CHECK(test_pg_restart(&pg) == 0);
    /* the connection is gone; the next operation reconnects (same port: same URL) */
    job_make(&j, src, sp, "1111111111111111111111111111111b", 1, 5001.0);
    CHECK_OK(store_put_job(s, &j));
    /* the server down for a second while a proof is written: the write waits for it */
    test_pg_halt(&pg, "immediate");
    pthread_t th;
    pthread_create(&th, NULL, restart_later, NULL);
    cuzk_proof proof;
    memset(&proof, 7, sizeof proof);
    cuzk_fr pub[2];
    memset(pub, 8, sizeof pub);
    CHECK_OK(store_put_part(s, "1111111111111111111111111111111b", 0, &proof, pub, 2, 0));
    pthread_join(th, NULL);
    CHECK(restarted == 0);
    unsigned all = 0, open_ = 0;
    CHECK_OK(store_count(s, &all, &open_));
    CHECK(all == 2 && open_ == 2);
    CHECK_OK(store_finish(s, "1111111111111111111111111111111a", CUZK_JOB_CANCELLED, "", 5002));
    CHECK_OK(store_finish(s, "1111111111111111111111111111111b", CUZK_JOB_CANCELLED, "", 5002));
    unsigned gone = 0;
    CHECK_OK(store_expire(s, 1e12, NULL, NULL, &gone));
    CHECK(gone == 2);
    store_close(s);
}

typedef struct {
    store *s;
    int t;
    int fails;
} writer;

static void *write_jobs(void *arg)
{
    writer *w = arg;
    char *src[2] = {"/w/t0.wtns", "spool-t1"};
    bool sp[2] = {false, true};
    cuzk_proof proof;
    memset(&proof, w->t, sizeof proof);
    cuzk_fr pub[2];
    memset(pub, 0x11, sizeof pub);
    for (int i = 0; i < 40; i++) {
        char id[40];
        snprintf(id, sizeof id, "%016x%016x", w->t + 1, i + 1);
        store_job j;
        job_make(&j, src, sp, id, 2, 6000.0 + i);
        w->fails += store_put_job(w->s, &j) != CUZK_OK;
        w->fails += store_put_part(w->s, id, 0, &proof, pub, 2, 0) != CUZK_OK;
        w->fails += store_put_part(w->s, id, 1, &proof, pub, 2, 7000.0) != CUZK_OK;
    }
    return NULL;
}

static int count_done(void *arg, const store_job *j)
{
    unsigned *n = arg;
    *n += j->state == CUZK_JOB_DONE && j->part_done[0] && j->part_done[1];
    return 0;
}

static void test_threads(void)
{
    store *s = NULL;
    CHECK_OK(open_pg(&s));
    if (!s)
        return;
    writer w[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        w[t] = (writer){s, t, 0};
        pthread_create(&th[t], NULL, write_jobs, &w[t]);
    }
    int fails = 0;
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        fails += w[t].fails;
    }
    CHECK(fails == 0);
    unsigned done = 0, all = 0, open_ = 0;
    CHECK_OK(store_list(s, count_done, &done));
    CHECK_OK(store_count(s, &all, &open_));
    CHECK(done == 160 && all == 160 && open_ == 0);
    unsigned gone = 0;
    CHECK_OK(store_expire(s, 1e12, NULL, NULL, &gone));
    CHECK(gone == 160);
    store_close(s);
}

/* One daemon per database while engines do not claim: a second sole store is refused while
 * the first lives, and admitted once it is closed; after a server restart the
 * open store takes the lock again. */
static void test_sole(void)
{
    store *a = NULL, *b = NULL;
    CHECK_OK(store_postgres_open(&a, pg.url, true));
    CHECK(store_postgres_open(&b, pg.url, true) == CUZK_EINVAL && b == NULL &&
          strstr(cuzk_error_detail(), "another cuzk-daemon"));
    cuzk_error_clear();
    CHECK_OK(store_postgres_open(&b, pg.url, false));
    store_close(b);
    b = NULL;
    CHECK(test_pg_restart(&pg) == 0);
    unsigned all = 9, open_ = 9;
    CHECK(a && store_count(a, &all, &open_) == CUZK_OK);   /* reconnected, the lock again */
    CHECK(store_postgres_open(&b, pg.url, true) == CUZK_EINVAL && b == NULL);
    cuzk_error_clear();
    store_close(a);
    CHECK_OK(store_postgres_open(&b, pg.url, true));
    store_close(b);
}

/* Daemons racing for one queue: each worker its own connection (as each daemon is),
 * claiming a few partitions at a time. Every partition is claimed exactly once (no lease
 * runs out here), every job completed by exactly one proof. */
#define RACE_JOBS 120
#define RACE_WORKERS 6

static int race_claimed[RACE_JOBS][2];
static int race_completed[RACE_JOBS];
static pthread_mutex_t race_mu = PTHREAD_MUTEX_INITIALIZER;

static void *race_worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    store *s = NULL;
    if (open_pg(&s) != CUZK_OK)
        return (void *)1;
    char owner[32];
    snprintf(owner, sizeof owner, "host%d", w);
    cuzk_proof proof;
    memset(&proof, w, sizeof proof);
    cuzk_fr pub[2];
    memset(pub, 0x22, sizeof pub);
    intptr_t fails = 0;
    for (int idle = 0; idle < 3;) {
        store_claim c[3];
        unsigned n = 0;
        fails += store_claim_parts(s, owner, 60, c, 3, &n) != CUZK_OK;
        idle = n ? 0 : idle + 1;
        for (unsigned i = 0; i < n; i++) {
            unsigned k = (unsigned)strtoul(c[i].id + 16, NULL, 16) - 1;
            bool completed = false;
            if (k >= RACE_JOBS || c[i].idx > 1) {
                fails++;
                continue;
            }
            pthread_mutex_lock(&race_mu);
            race_claimed[k][c[i].idx]++;
            pthread_mutex_unlock(&race_mu);
            fails += store_put_claimed(s, owner, c[i].id, c[i].idx, &proof, pub, 2, 9000.0,
                                       &completed) != CUZK_OK;
            if (completed) {
                pthread_mutex_lock(&race_mu);
                race_completed[k]++;
                pthread_mutex_unlock(&race_mu);
            }
        }
    }
    store_close(s);
    return (void *)fails;
}

static void test_claim_race(void)
{
    store *s = NULL;
    CHECK_OK(open_pg(&s));
    if (!s)
        return;
    char *src[2] = {"/w/0.wtns", "/w/1.wtns"};
    bool sp[2] = {false, false};
    for (int k = 0; k < RACE_JOBS; k++) {
        char id[40];
        snprintf(id, sizeof id, "%016x%016x", 0xcafe, k + 1);
        store_job j;
        job_make(&j, src, sp, id, 1 + (uint32_t)(k % 2), 8000.0 + k);
        j.prio = k % CUZK_PRIO_COUNT;
        CHECK_OK(store_put_job(s, &j));
    }
    pthread_t th[RACE_WORKERS];
    for (int w = 0; w < RACE_WORKERS; w++)
        pthread_create(&th[w], NULL, race_worker, (void *)(intptr_t)w);
    intptr_t fails = 0;
    for (int w = 0; w < RACE_WORKERS; w++) {
        void *f;
        pthread_join(th[w], &f);
        fails += (intptr_t)f;
    }
    CHECK(fails == 0);
    int twice = 0, missed = 0, not_once = 0;
    for (int k = 0; k < RACE_JOBS; k++) {
        for (int i = 0; i < 1 + k % 2; i++) {
            twice += race_claimed[k][i] > 1;
            missed += race_claimed[k][i] == 0;
        }
        not_once += race_completed[k] != 1;
    }
    CHECK(twice == 0 && missed == 0 && not_once == 0);
    if (twice || missed || not_once)
        fprintf(stderr, "claim race: %d claimed twice, %d never, %d jobs not completed once\n",
                twice, missed, not_once);
    unsigned all = 0, open_ = 0, gone = 0;
    CHECK_OK(store_count(s, &all, &open_));
    CHECK(all == RACE_JOBS && open_ == 0);
    CHECK_OK(store_expire(s, 1e12, NULL, NULL, &gone));
    CHECK(gone == RACE_JOBS);
    store_close(s);
}

int main(void)
{
    test_init("test_store_pg");
    int rc = test_pg_start(&pg);
    if (rc != 0)
        return rc == 77 ? 77 : 2;
    test_roundtrip(open_pg);
    test_claims(open_pg);
    test_schema_version();
    test_bad_urls();
    test_server_restart();
    test_threads();
    test_claim_race();
    test_sole();
    test_pg_stop(&pg);
    return test_finish();
}
