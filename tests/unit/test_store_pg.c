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
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "store_cases.h"
#include "test.h"
#include "test_pg.h"

static test_pg pg;

static double engine_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

/* The calls of a farm (store_cluster): take only of the keys named and with each witness's
 * source (a path, a spool name, the bytes kept in the row), get with counts and results, end
 * (the state before; a final job left as it is), fail_older, ended, the key table, the
 * heartbeat's rows and the live leases, gone (leases back at once), and wait's notices from
 * another connection. */
static void test_cluster_calls(void)
{
    store *s = NULL, *o = NULL;
    CHECK_OK(open_pg(&s));
    CHECK_OK(open_pg(&o));
    if (!s || !o)
        return;
    const store_cluster_ops *cl = store_cluster(s);
    CHECK(cl != NULL);
    if (!cl)
        return;
    /* a listener first: its first wait connects (and reports work, keys: maybe missed) */
    unsigned ev = 0, nd = 0;
    char done[8][CUZK_JOB_ID_CHARS + 1];
    CHECK_OK(cl->wait(o, 0.1, &ev, done, 8, &nd));
    CHECK(ev == (STORE_EV_WORK | STORE_EV_KEYS));
    CHECK_OK(cl->wait(o, 0.1, &ev, done, 8, &nd));
    CHECK(ev == 0);

    const char *ida = "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1", *idb = "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2";
    char *src[3] = {"/shared/w0.wtns", "c1.2.wtns", ""};
    bool sp[3] = {false, true, false};
    const unsigned char bytes[5] = {'w', 't', 'n', 's', 0};
    const unsigned char *data[3] = {NULL, NULL, bytes};
    size_t len[3] = {0, 0, sizeof bytes};
    store_job j;
    job_make(&j, src, sp, ida, 3, engine_wall_now() - 100);
    j.data = data;
    j.len = len;
    CHECK_OK(store_put_job(s, &j));
    CHECK_OK(cl->wait(o, 2, &ev, done, 8, &nd));
    CHECK(ev & STORE_EV_WORK);
    job_make(&j, src, sp, idb, 1, engine_wall_now());
    snprintf(j.key, sizeof j.key, "other");
    CHECK_OK(store_put_job(s, &j));

    /* only the keys named: none of "none", the three of "example" in order */
    const char *none[1] = {"none"}, *ex[1] = {"example"};
    store_work w[4];
    unsigned n = 9;
    CHECK_OK(cl->take(s, "h1", 60, none, 1, w, 4, &n));
    CHECK(n == 0);
    CHECK_OK(cl->take(s, "h1", 60, ex, 1, w, 4, &n));
    CHECK(n == 3);
    for (unsigned i = 0; i < n && n == 3; i++) {
        CHECK(!strcmp(w[i].id, ida) && w[i].idx == i && w[i].attempt == 1 && w[i].n == 3 &&
              w[i].n_public == 2 && !strcmp(w[i].key, "example") && w[i].prio == CUZK_PRIO_HIGH);
        CHECK(w[i].spooled == (i == 1));
        CHECK(!strcmp(w[i].src, src[i]));
        CHECK(i == 2 ? w[i].data && w[i].len == sizeof bytes && !memcmp(w[i].data, bytes, 5)
                     : w[i].data == NULL);
        store_work_release(&w[i]);
    }
    /* get: queued with none done, three running under live leases */
    store_job g;
    unsigned ndone = 9, nrun = 9;
    CHECK_OK(cl->get(s, ida, true, &g, &ndone, &nrun));
    CHECK(g.state == CUZK_JOB_QUEUED && g.n == 3 && ndone == 0 && nrun == 3 && !g.proofs);
    store_job_release(&g);
    CHECK(cl->get(s, "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3", false, &g, &ndone, &nrun) ==
          CUZK_ENOTFOUND);
    cuzk_error_clear();
    /* the leases in the status; a heartbeat row */
    store_host h = {.owner = "h1", .host = "node-a", .started = 1.0, .parts = 7, .rate = 3.5,
                    .held = 3};
    CHECK_OK(cl->beat(s, &h));
    store_host *hs = NULL;
    store_lease *ls = NULL;
    unsigned nh = 0, nl = 0;
    CHECK_OK(cl->hosts(s, 60, &hs, &nh, &ls, &nl));
    CHECK(nh == 1 && hs && !strcmp(hs[0].host, "node-a") && hs[0].parts == 7 && hs[0].held == 3 &&
          hs[0].seen_ago >= 0 && hs[0].seen_ago < 5);
    CHECK(nl == 3 && ls && !strcmp(ls[0].owner, "h1") && ls[0].left > 50 && ls[0].age >= 0);
    free(hs), free(ls);
    /* proofs: the job done by its last, with its results */
    cuzk_proof pr;
    memset(&pr, 5, sizeof pr);
    cuzk_fr pub[2];
    memset(pub, 6, sizeof pub);
    bool completed = true;
    CHECK_OK(store_put_claimed(s, "h1", ida, 0, &pr, pub, 2, 10.0, &completed));
    CHECK(!completed);
    CHECK_OK(store_put_claimed(s, "h1", ida, 1, &pr, pub, 2, 10.0, &completed));
    CHECK_OK(cl->get(s, ida, false, &g, &ndone, &nrun));
    CHECK(ndone == 2 && nrun == 1);
    store_job_release(&g);
    /* gone: the last lease back at once, the row deleted */
    CHECK_OK(cl->gone(s, "h1"));
    CHECK_OK(cl->hosts(s, 60, &hs, &nh, &ls, &nl));
    CHECK(nh == 0 && nl == 0);
    free(hs), free(ls);
    CHECK_OK(cl->take(s, "h2", 60, ex, 1, w, 4, &n));
    CHECK(n == 1 && w[0].idx == 2 && w[0].attempt == 2);
    if (n)
        store_work_release(&w[0]);
    CHECK_OK(store_put_claimed(s, "h2", ida, 2, &pr, pub, 2, 11.0, &completed));
    CHECK(completed);
    CHECK_OK(cl->get(s, ida, true, &g, &ndone, &nrun));
    CHECK(g.state == CUZK_JOB_DONE && ndone == 3 && g.proofs && g.part_done &&
          g.part_done[0] && g.part_done[2] && !memcmp(&g.proofs[2], &pr, sizeof pr) &&
          !memcmp(&g.publics[4], &pub[0], sizeof pub));
    store_job_release(&g);
    /* the listener hears of the job's end, by id */
    bool heard = false;
    for (int t = 0; t < 20 && !heard; t++) {
        CHECK_OK(cl->wait(o, 0.5, &ev, done, 8, &nd));
        for (unsigned i = 0; i < nd; i++)
            heard |= !strcmp(done[i], ida);
    }
    CHECK(heard);
    /* end: a done job is left done (was: done); an open one cancelled (was: open); unknown */
    int was = 9;
    CHECK_OK(cl->end(s, ida, CUZK_JOB_CANCELLED, "cancelled", 12.0, &was));
    CHECK(was == CUZK_JOB_DONE);
    CHECK_OK(cl->end(s, idb, CUZK_JOB_CANCELLED, "cancelled", 12.0, &was));
    CHECK(was == CUZK_JOB_QUEUED);
    CHECK_OK(cl->end(s, "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3", CUZK_JOB_CANCELLED, "", 12.0, &was));
    CHECK(was == -1);
    const char *ids[3] = {ida, idb, "c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4"};
    bool ended[3] = {false, false, false};
    CHECK_OK(cl->ended(s, ids, 3, ended));
    CHECK(ended[0] && ended[1] && ended[2]);
    /* fail_older: only open jobs submitted before the time */
    const char *idc = "c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5", *idd = "c6c6c6c6c6c6c6c6c6c6c6c6c6c6c6c6";
    job_make(&j, src, sp, idc, 1, 100.0);
    CHECK_OK(store_put_job(s, &j));
    job_make(&j, src, sp, idd, 1, 300.0);
    CHECK_OK(store_put_job(s, &j));
    unsigned nf = 0;
    CHECK_OK(cl->fail_older(s, 200.0, "timed out", 400.0, &nf));
    CHECK(nf == 1);
    const char *ids2[2] = {idc, idd};
    CHECK_OK(cl->ended(s, ids2, 2, ended));
    CHECK(ended[0] && !ended[1]);
    CHECK_OK(cl->get(s, idc, false, &g, &ndone, &nrun));
    CHECK(g.state == CUZK_JOB_FAILED && !strcmp(g.error, "timed out"));
    store_job_release(&g);
    /* the key table: put (replaced by id), list, delete; each change a notice */
    store_key k = {.id = "example", .path = "/keys/example.zkey", .flags = 0};
    CHECK_OK(cl->key_put(s, &k));
    store_key k2 = {.id = "p\"q", .path = "/keys/p.params", .r1cs = "/keys/p.r1cs",
                    .flags = STORE_KEY_TRUSTED | STORE_KEY_CACHE};
    CHECK_OK(cl->key_put(s, &k2));
    snprintf(k.path, sizeof k.path, "/keys/example2.zkey");
    CHECK_OK(cl->key_put(s, &k));
    store_key *ks = NULL;
    unsigned nk = 0;
    CHECK_OK(cl->keys(s, &ks, &nk));
    CHECK(nk == 2 && ks && !strcmp(ks[0].path, "/keys/example2.zkey") &&
          !strcmp(ks[1].id, "p\"q") && !strcmp(ks[1].r1cs, "/keys/p.r1cs") &&
          ks[1].flags == (STORE_KEY_TRUSTED | STORE_KEY_CACHE));
    free(ks);
    /* take with a key whose id needs quoting */
    const char *pq[2] = {"p\"q", "example"};
    CHECK_OK(cl->take(s, "h3", 60, pq, 2, w, 4, &n));
    CHECK(n == 1 && !strcmp(w[0].id, idd));
    if (n)
        store_work_release(&w[0]);
    CHECK_OK(cl->key_del(s, "p\"q"));
    CHECK(cl->key_del(s, "p\"q") == CUZK_ENOTFOUND);
    cuzk_error_clear();
    CHECK_OK(cl->keys(s, &ks, &nk));
    CHECK(nk == 1);
    free(ks);
    bool keys_heard = false;
    for (int t = 0; t < 20 && !keys_heard; t++) {
        CHECK_OK(cl->wait(o, 0.5, &ev, done, 8, &nd));
        keys_heard = ev & STORE_EV_KEYS;
    }
    CHECK(keys_heard);
    CHECK_OK(store_finish(s, idd, CUZK_JOB_CANCELLED, "", 500.0));
    /* aging: a low job waiting 1000 s (aging 60 s: critical now) goes before a newer high
     * one; without aging the high one would */
    const char *ide = "c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7", *idf = "c8c8c8c8c8c8c8c8c8c8c8c8c8c8c8c8";
    job_make(&j, src, sp, ide, 1, engine_wall_now() - 1000);
    j.prio = CUZK_PRIO_LOW;
    CHECK_OK(store_put_job(s, &j));
    job_make(&j, src, sp, idf, 1, engine_wall_now());
    CHECK_OK(store_put_job(s, &j));
    unsigned aged = 0;
    CHECK_OK(cl->age(s, 60, &aged));
    CHECK(aged == 1);
    CHECK_OK(cl->age(s, 60, &aged));
    CHECK(aged == 0);   /* (already there) */
    CHECK_OK(cl->take(s, "h4", 60, ex, 1, w, 1, &n));
    CHECK(n == 1 && !strcmp(w[0].id, ide));
    if (n)
        store_work_release(&w[0]);
    CHECK_OK(store_finish(s, ide, CUZK_JOB_CANCELLED, "", 500.0));
    CHECK_OK(store_finish(s, idf, CUZK_JOB_CANCELLED, "", 500.0));
    unsigned gone = 0;
    CHECK_OK(store_expire(s, 1e12, NULL, NULL, &gone));
    CHECK(gone == 6);
    store_close(o);
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
    test_cluster_calls();
    test_sole();
    test_pg_stop(&pg);
    return test_finish();
}
