/* SPDX-License-Identifier: Apache-2.0 */
/* The job journal in PostgreSQL (store.h), through libpq: jobs, their witness sources and
 * their partitions' results are rows of cuzk_jobs, cuzk_witnesses and cuzk_results. Every
 * write is one transaction, committed (synchronous_commit as the server sets it: on by
 * default, so durable) when the call returns. The schema is created at open and carries its
 * version in cuzk_schema_version; a database of a newer version is refused. One connection,
 * one mutex; a connection lost is reset and the operation tried again (PG_TRIES, about
 * 10 s), so a server restart or a short outage costs callers a wait, not an error. */
#define _GNU_SOURCE
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"

#define PG_SCHEMA_VERSION 2

typedef struct {
    store base;
    PGconn *db;
    pthread_mutex_t mu;
    char where[200];   /* the URL without its password, for messages */
    char sqlstate[6];  /* of the latest failed statement ("" when none was given) */
    bool sole;         /* holds the database's lock of a single daemon (PG_SOLE_LOCK) */
    bool unlocked;     /* sole, and the session after a reset could not take the lock */
} pg_store;

/* The advisory lock a daemon holds on its session while it is the database's only one. */
#define PG_SOLE_LOCK "7377170332"
#define PG_MIGRATE_LOCK "7377170331"

/* Tries of one operation when the connection is lost (the server restarted, the network
 * cut): the connection is reset between tries, after 50 ms, doubling up to 2 s (about 10 s
 * in all); a statement that fails on a live connection is not tried again. */
#define PG_TRIES 9

/* Each step of the schema, index = the version it brings the database to, minus one. */
static const char *const migrations[PG_SCHEMA_VERSION] = {
    "CREATE TABLE cuzk_jobs(id TEXT PRIMARY KEY, key TEXT NOT NULL, prio INTEGER NOT NULL,"
    " state INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '', n INTEGER NOT NULL,"
    " n_public INTEGER NOT NULL, submitted DOUBLE PRECISION NOT NULL,"
    " finished DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " seq BIGINT GENERATED ALWAYS AS IDENTITY);"
    "CREATE INDEX cuzk_jobs_seq ON cuzk_jobs(seq);"
    "CREATE INDEX cuzk_jobs_open ON cuzk_jobs(state, finished);"
    "CREATE TABLE cuzk_witnesses(job TEXT NOT NULL REFERENCES cuzk_jobs(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, spooled BOOLEAN NOT NULL, src TEXT NOT NULL,"
    " PRIMARY KEY(job, idx));"
    "CREATE TABLE cuzk_results(job TEXT NOT NULL REFERENCES cuzk_jobs(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, proof BYTEA NOT NULL, public BYTEA NOT NULL,"
    " PRIMARY KEY(job, idx));",
    /* 2: partitions claimed under leases (owner, until on the server's clock) */
    "ALTER TABLE cuzk_witnesses ADD COLUMN owner TEXT NOT NULL DEFAULT '',"
    " ADD COLUMN lease_until DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX cuzk_jobs_queue ON cuzk_jobs(prio DESC, seq) WHERE state = 0;"
    "CREATE INDEX cuzk_witnesses_owner ON cuzk_witnesses(owner) WHERE owner <> '';",
};

/* The server's clock, seconds since the epoch: leases are timed by it alone. */
#define PG_NOW "extract(epoch FROM clock_timestamp())::float8"


static cuzk_err pg_fail(pg_store *s, const char *what, const PGresult *res)
{
    const char *code = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    snprintf(s->sqlstate, sizeof s->sqlstate, "%s", code ? code : "");
    const char *m = res ? PQresultErrorMessage(res) : "";
    if (!m || !*m)
        m = PQerrorMessage(s->db);
    char msg[400];
    snprintf(msg, sizeof msg, "%s", m && *m ? m : "unknown error");
    for (char *c = msg; *c; c++)   /* libpq's messages span lines: one line here */
        if (*c == '\n' || *c == '\t')
            *c = ' ';
    size_t l = strlen(msg);
    while (l && (msg[l - 1] == '\n' || msg[l - 1] == ' '))
        msg[--l] = 0;
    return cuzk_error_set(CUZK_EIO, "store %s: %s: %s", s->where, what, msg);
}

/* The single daemon's lock, taken on the session; false when another session holds it. */
static bool pg_lock_sole(pg_store *s)
{
    PGresult *r = PQexec(s->db, "SELECT pg_try_advisory_lock(" PG_SOLE_LOCK ")");
    bool ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
              !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    return ok;
}

/* A broken connection is reset before an operation uses it, and the single daemon's lock
 * taken again; until it is (the session before the break may still hold it, for as long as
 * the server has not seen that session end), every statement fails and is tried again. */
static void pg_ready(pg_store *s)
{
    if (PQstatus(s->db) != CONNECTION_OK) {
        PQreset(s->db);
        s->unlocked = s->sole;
    }
    if (s->unlocked && PQstatus(s->db) == CONNECTION_OK && pg_lock_sole(s))
        s->unlocked = false;
}

/* After a failed try: true (the error cleared, the connection reset) when the connection is
 * what failed and tries remain. */
static bool pg_again(pg_store *s, int *tries)
{
    if ((PQstatus(s->db) == CONNECTION_OK && !s->unlocked) || ++*tries >= PG_TRIES)
        return false;
    unsigned ms = 50u << (*tries - 1);
    if (ms > 2000)
        ms = 2000;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    cuzk_error_clear();
    return true;   /* (pg_ready resets the connection) */
}

static bool pg_cmd(pg_store *s, const char *sql)
{
    if (s->unlocked)
        return false;
    PGresult *r = PQexec(s->db, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
    return ok;
}

/* Runs sql with n text parameters (a length > 0 in lens marks a binary one); the result
 * (NULL on failure, *err set) is the caller's to clear. */
static PGresult *pg_run(pg_store *s, const char *sql, int n, const char *const *v,
                        const int *lens, const char *what, cuzk_err *err)
{
    if (s->unlocked) {
        *err = cuzk_error_set(CUZK_EIO, "store %s: %s: another cuzk-daemon holds the database",
                              s->where, what);
        return NULL;
    }
    int fmts[8] = {0};
    for (int i = 0; lens && i < n; i++)
        fmts[i] = lens[i] > 0;
    PGresult *r = PQexecParams(s->db, sql, n, NULL, v, lens, lens ? fmts : NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        *err = pg_fail(s, what, r);
        PQclear(r);
        return NULL;
    }
    return r;
}

static void pg_rollback(pg_store *s)
{
    PGresult *r = PQexec(s->db, "ROLLBACK");
    PQclear(r);
}

static cuzk_err pg_put_job_once(pg_store *s, const store_job *j)
{
    cuzk_err r = CUZK_OK;
    char prio[16], n[16], np[16], sub[40];
    snprintf(prio, sizeof prio, "%d", j->prio);
    snprintf(n, sizeof n, "%u", j->n);
    snprintf(np, sizeof np, "%u", j->n_public);
    snprintf(sub, sizeof sub, "%.17g", j->submitted);
    const char *v[5] = {j->id, j->key, prio, n, np};
    const char *vj[6] = {v[0], v[1], v[2], v[3], v[4], sub};
    PGresult *res = NULL;
    bool ok = pg_cmd(s, "BEGIN");
    if (!ok)
        r = pg_fail(s, "recording a job", NULL);
    ok = ok && (res = pg_run(s,
                             "INSERT INTO cuzk_jobs(id, key, prio, state, n, n_public, submitted)"
                             " VALUES($1, $2, $3, 0, $4, $5, $6)",
                             6, vj, NULL, "recording a job", &r)) != NULL;
    PQclear(res);
    for (uint32_t i = 0; ok && i < j->n; i++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%u", i);
        const char *vw[4] = {j->id, idx, j->spooled[i] ? "t" : "f", j->src[i]};
        ok = (res = pg_run(s,
                           "INSERT INTO cuzk_witnesses(job, idx, spooled, src)"
                           " VALUES($1, $2, $3, $4)",
                           4, vw, NULL, "recording a job's witnesses", &r)) != NULL;
        PQclear(res);
    }
    /* idle daemons LISTENing are woken when the job commits */
    if (ok && !(ok = pg_cmd(s, "NOTIFY cuzk_work")))
        r = pg_fail(s, "recording a job", NULL);
    if (ok && !pg_cmd(s, "COMMIT")) {
        r = pg_fail(s, "committing a job", NULL);
        ok = false;
    }
    if (!ok)
        pg_rollback(s);
    return r;
}

static cuzk_err pg_put_job(store *base, const store_job *j)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = pg_put_job_once(s, j);
        /* a commit that reached the server before the connection broke: the job is there */
        if (r != CUZK_OK && tries > 0 && !strcmp(s->sqlstate, "23505")) {
            cuzk_error_clear();
            r = CUZK_OK;
        }
    } while (r != CUZK_OK && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    return r;
}

static bool pg_set_final(pg_store *s, const char *id, int state, const char *error, double fin,
                         cuzk_err *r)
{
    char st[16], f[40];
    snprintf(st, sizeof st, "%d", state);
    snprintf(f, sizeof f, "%.17g", fin);
    const char *v[4] = {id, st, error ? error : "", f};
    PGresult *res = pg_run(s,
                           "UPDATE cuzk_jobs SET state = $2, error = $3, finished = $4"
                           " WHERE id = $1 AND state < 2",
                           4, v, NULL, "recording a final state", r);
    PQclear(res);
    return res != NULL;
}

static cuzk_err pg_put_part_once(pg_store *s, const char *id, uint32_t idx,
                                 const cuzk_proof *proof, const cuzk_fr *pub, uint32_t n_public,
                                 double done_at)
{
    cuzk_err r = CUZK_OK;
    char ix[16];
    snprintf(ix, sizeof ix, "%u", idx);
    /* an empty bytea goes as text (a binary parameter needs a length > 0) */
    const char *v[4] = {id, ix, (const char *)proof, n_public ? (const char *)pub : ""};
    int lens[4] = {0, 0, (int)sizeof *proof, (int)(sizeof(cuzk_fr) * n_public)};
    bool ok = pg_cmd(s, "BEGIN");
    if (!ok)
        r = pg_fail(s, "recording a proof", NULL);
    PGresult *res = NULL;
    ok = ok && (res = pg_run(s,
                             "INSERT INTO cuzk_results(job, idx, proof, public)"
                             " VALUES($1, $2, $3, $4) ON CONFLICT (job, idx) DO UPDATE"
                             " SET proof = EXCLUDED.proof, public = EXCLUDED.public",
                             4, v, lens, "recording a proof", &r)) != NULL;
    PQclear(res);
    if (ok && done_at > 0)
        ok = pg_set_final(s, id, CUZK_JOB_DONE, "", done_at, &r);
    if (ok && !pg_cmd(s, "COMMIT")) {
        r = pg_fail(s, "committing a proof", NULL);
        ok = false;
    }
    if (!ok)
        pg_rollback(s);
    return r;
}

/* (the result's row is replaced when it is there: a retry writes the same bytes) */
static cuzk_err pg_put_part(store *base, const char *id, uint32_t idx, const cuzk_proof *proof,
                            const cuzk_fr *pub, uint32_t n_public, double done_at)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = pg_put_part_once(s, id, idx, proof, pub, n_public, done_at);
    } while (r != CUZK_OK && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    return r;
}

static cuzk_err pg_finish(store *base, const char *id, int state, const char *error,
                          double finished)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = CUZK_OK;
        pg_set_final(s, id, state, error, finished, &r);
    } while (r != CUZK_OK && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    return r;
}

static void job_release(store_job *j)
{
    for (uint32_t i = 0; j->src && i < j->n; i++)
        free(j->src[i]);
    free(j->src);
    free(j->spooled);
    free(j->part_done);
    free(j->proofs);
    free(j->publics);
    memset(j, 0, sizeof *j);
}

static bool parse_i64(const char *t, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(t, &end, 10);
    if (end == t || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* The rows of job j (id, n, n_public read) in rw (witnesses: job, idx, spooled, src) and rr
 * (results: job, idx, proof, public) from rows *iw and *ir on, both ordered by job. */
static bool load_parts(store_job *j, PGresult *rw, int *iw, PGresult *rr, int *ir, char *why,
                       size_t wlen)
{
    j->src = calloc(j->n, sizeof *j->src);
    j->spooled = calloc(j->n, sizeof *j->spooled);
    j->part_done = calloc(j->n, sizeof *j->part_done);
    j->proofs = calloc(j->n, sizeof *j->proofs);
    j->publics = calloc((size_t)j->n * j->n_public + 1, sizeof *j->publics);
    if (!j->src || !j->spooled || !j->part_done || !j->proofs || !j->publics) {
        snprintf(why, wlen, "out of memory");
        return false;
    }
    for (; *iw < PQntuples(rw) && !strcmp(PQgetvalue(rw, *iw, 0), j->id); (*iw)++) {
        long long idx;
        if (!parse_i64(PQgetvalue(rw, *iw, 1), 0, (long long)j->n - 1, &idx) || j->src[idx]) {
            snprintf(why, wlen, "job %s: a bad witness row", j->id);
            return false;
        }
        j->spooled[idx] = PQgetvalue(rw, *iw, 2)[0] == 't';
        if (!(j->src[idx] = strdup(PQgetvalue(rw, *iw, 3)))) {
            snprintf(why, wlen, "out of memory");
            return false;
        }
    }
    for (uint32_t i = 0; i < j->n; i++)
        if (!j->src[i]) {
            snprintf(why, wlen, "job %s: witness %u is missing", j->id, i);
            return false;
        }
    for (; *ir < PQntuples(rr) && !strcmp(PQgetvalue(rr, *ir, 0), j->id); (*ir)++) {
        long long idx;
        size_t plen = 0, ulen = 0;
        unsigned char *pp = NULL, *up = NULL;
        bool ok = parse_i64(PQgetvalue(rr, *ir, 1), 0, (long long)j->n - 1, &idx) &&
                  (pp = PQunescapeBytea((const unsigned char *)PQgetvalue(rr, *ir, 2), &plen)) &&
                  (up = PQunescapeBytea((const unsigned char *)PQgetvalue(rr, *ir, 3), &ulen)) &&
                  plen == sizeof(cuzk_proof) && ulen == sizeof(cuzk_fr) * j->n_public;
        if (ok) {
            memcpy(&j->proofs[idx], pp, sizeof(cuzk_proof));
            if (ulen)
                memcpy(j->publics + (size_t)idx * j->n_public, up, ulen);
            j->part_done[idx] = true;
        }
        PQfreemem(pp);
        PQfreemem(up);
        if (!ok) {
            snprintf(why, wlen, "job %s: a bad result row", j->id);
            return false;
        }
    }
    return true;
}

static cuzk_err pg_list(store *base, store_list_fn fn, void *arg)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r = CUZK_OK;
    char why[600] = "";
    PGresult *rj = NULL, *rw = NULL, *rr = NULL;
    int tries = 0;
    bool ok;
    pthread_mutex_lock(&s->mu);
again:
    pg_ready(s);
    r = CUZK_OK;
    /* one snapshot for the three reads */
    ok = pg_cmd(s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    if (!ok)
        r = pg_fail(s, "listing jobs", NULL);
    ok = ok && (rj = pg_run(s,
                            "SELECT id, key, prio, state, error, n, n_public, submitted, finished"
                            " FROM cuzk_jobs ORDER BY seq",
                            0, NULL, NULL, "listing jobs", &r));
    ok = ok && (rw = pg_run(s,
                            "SELECT w.job, w.idx, w.spooled, w.src FROM cuzk_witnesses w"
                            " JOIN cuzk_jobs j ON j.id = w.job ORDER BY j.seq, w.idx",
                            0, NULL, NULL, "listing witnesses", &r));
    ok = ok && (rr = pg_run(s,
                            "SELECT r.job, r.idx, r.proof, r.public FROM cuzk_results r"
                            " JOIN cuzk_jobs j ON j.id = r.job ORDER BY j.seq, r.idx",
                            0, NULL, NULL, "listing results", &r));
    if (ok)
        pg_cmd(s, "COMMIT");
    else
        pg_rollback(s);
    if (!ok && pg_again(s, &tries)) {
        PQclear(rj);
        PQclear(rw);
        PQclear(rr);
        rj = rw = rr = NULL;
        goto again;
    }
    pthread_mutex_unlock(&s->mu);
    bool bad = false;
    int iw = 0, ir = 0;
    for (int i = 0; ok && i < PQntuples(rj); i++) {
        store_job j;
        memset(&j, 0, sizeof j);
        const char *id = PQgetvalue(rj, i, 0), *key = PQgetvalue(rj, i, 1);
        long long prio, state, n, np;
        if (!cuzk_job_id_valid(id) || strlen(key) >= sizeof j.key ||
            !parse_i64(PQgetvalue(rj, i, 2), 0, CUZK_PRIO_COUNT - 1, &prio) ||
            !parse_i64(PQgetvalue(rj, i, 3), 0, CUZK_JOB_CANCELLED, &state) ||
            !parse_i64(PQgetvalue(rj, i, 5), 1, 1 << 24, &n) ||
            !parse_i64(PQgetvalue(rj, i, 6), 0, 1 << 24, &np)) {
            snprintf(why, sizeof why, "a bad job row (id \"%.40s\")", id);
            bad = true;
            break;
        }
        memcpy(j.id, id, sizeof j.id);
        snprintf(j.key, sizeof j.key, "%s", key);
        snprintf(j.error, sizeof j.error, "%s", PQgetvalue(rj, i, 4));
        j.prio = (int)prio;
        j.state = (int)state;
        j.n = (uint32_t)n;
        j.n_public = (uint32_t)np;
        j.submitted = strtod(PQgetvalue(rj, i, 7), NULL);
        j.finished = strtod(PQgetvalue(rj, i, 8), NULL);
        /* rows of jobs skipped over (none: same snapshot, same order) are passed by */
        bad = !load_parts(&j, rw, &iw, rr, &ir, why, sizeof why);
        int stop = bad ? 0 : fn(arg, &j);
        job_release(&j);
        if (bad || stop)
            break;
    }
    PQclear(rj);
    PQclear(rw);
    PQclear(rr);
    if (bad)
        return cuzk_error_set(CUZK_EFORMAT, "store %s: %s", s->where, why);
    return r;
}

static cuzk_err pg_expire(store *base, double before, store_spool_fn fn, void *arg,
                          unsigned *n_expired)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r = CUZK_OK;
    if (n_expired)
        *n_expired = 0;
    char b[40];
    snprintf(b, sizeof b, "%.17g", before);
    const char *v[1] = {b};
    PGresult *rs = NULL, *rd = NULL;
    int tries = 0;
    bool ok;
    pthread_mutex_lock(&s->mu);
again:
    pg_ready(s);
    r = CUZK_OK;
    ok = pg_cmd(s, "BEGIN");
    if (!ok)
        r = pg_fail(s, "expiring jobs", NULL);
    /* the rows locked first, so that the spool names read are those deleted */
    ok = ok && (rs = pg_run(s,
                            "SELECT w.src FROM cuzk_witnesses w WHERE w.spooled AND w.job IN"
                            " (SELECT id FROM cuzk_jobs WHERE state >= 2 AND finished < $1"
                            " FOR UPDATE)",
                            1, v, NULL, "expiring jobs", &r));
    ok = ok && (rd = pg_run(s, "DELETE FROM cuzk_jobs WHERE state >= 2 AND finished < $1", 1, v,
                            NULL, "expiring jobs", &r));
    if (ok && !pg_cmd(s, "COMMIT")) {
        r = pg_fail(s, "committing an expiry", NULL);
        ok = false;
    }
    if (!ok)
        pg_rollback(s);
    if (!ok && pg_again(s, &tries)) {
        PQclear(rs);
        PQclear(rd);
        rs = rd = NULL;
        goto again;
    }
    pthread_mutex_unlock(&s->mu);
    if (ok) {
        for (int i = 0; fn && i < PQntuples(rs); i++)
            fn(arg, PQgetvalue(rs, i, 0));
        if (n_expired)
            *n_expired = (unsigned)strtoul(PQcmdTuples(rd), NULL, 10);
    }
    PQclear(rs);
    PQclear(rd);
    return r;
}

static cuzk_err pg_count(store *base, unsigned *all, unsigned *open)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r = CUZK_OK;
    PGresult *res;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = CUZK_OK;
        res = pg_run(s, "SELECT COUNT(*), COUNT(*) FILTER (WHERE state < 2) FROM cuzk_jobs", 0,
                     NULL, NULL, "counting jobs", &r);
    } while (!res && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    if (res) {
        *all = (unsigned)strtoul(PQgetvalue(res, 0, 0), NULL, 10);
        *open = (unsigned)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
    }
    PQclear(res);
    return r;
}

static cuzk_err pg_claim(store *base, const char *owner, double lease_s, store_claim *out,
                         unsigned max, unsigned *n)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r;
    *n = 0;
    char ls[40], mx[16];
    snprintf(ls, sizeof ls, "%.17g", lease_s);
    snprintf(mx, sizeof mx, "%u", max);
    const char *v[3] = {owner, ls, mx};
    PGresult *res;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = CUZK_OK;
        /* the rows locked as they are taken; rows another claim holds are skipped, and one
         * it has just leased fails the lease test when it is read again */
        res = pg_run(s,
                     "WITH c AS (SELECT w.job, w.idx FROM cuzk_witnesses w"
                     " JOIN cuzk_jobs j ON j.id = w.job"
                     " WHERE j.state = 0 AND w.lease_until < " PG_NOW
                     " AND NOT EXISTS (SELECT 1 FROM cuzk_results r"
                     "  WHERE r.job = w.job AND r.idx = w.idx)"
                     " ORDER BY j.prio DESC, j.seq, w.idx LIMIT $3::integer"
                     " FOR UPDATE OF w SKIP LOCKED)"
                     " UPDATE cuzk_witnesses w SET owner = $1, attempts = w.attempts + 1,"
                     " lease_until = " PG_NOW " + $2::float8"
                     " FROM c WHERE w.job = c.job AND w.idx = c.idx"
                     " RETURNING w.job, w.idx, w.attempts",
                     3, v, NULL, "claiming partitions", &r);
    } while (!res && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; res && i < PQntuples(res) && *n < max; i++) {
        long long idx, att;
        const char *id = PQgetvalue(res, i, 0);
        if (!cuzk_job_id_valid(id) || !parse_i64(PQgetvalue(res, i, 1), 0, 1 << 24, &idx) ||
            !parse_i64(PQgetvalue(res, i, 2), 0, 1LL << 31, &att))
            continue;
        store_claim *c = &out[(*n)++];
        memcpy(c->id, id, sizeof c->id);
        c->idx = (uint32_t)idx;
        c->attempt = (uint32_t)att;
    }
    PQclear(res);
    return r;
}

static cuzk_err pg_renew(store *base, const char *owner, double lease_s, unsigned *held)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r;
    char ls[40];
    snprintf(ls, sizeof ls, "%.17g", lease_s);
    const char *v[2] = {owner, ls};
    PGresult *res;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = CUZK_OK;
        /* a lease that has run out is not brought back: another daemon may hold it now */
        res = pg_run(s,
                     "UPDATE cuzk_witnesses SET lease_until = " PG_NOW " + $2::float8"
                     " WHERE owner = $1 AND lease_until >= " PG_NOW,
                     2, v, NULL, "renewing leases", &r);
    } while (!res && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    if (res && held)
        *held = (unsigned)strtoul(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    return r;
}

static cuzk_err pg_release(store *base, const char *owner, const char *id, uint32_t idx)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r;
    char ix[16];
    snprintf(ix, sizeof ix, "%u", idx);
    const char *v[3] = {owner, id, ix};
    PGresult *res;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = CUZK_OK;
        res = pg_run(s,
                     "UPDATE cuzk_witnesses SET owner = '', lease_until = 0"
                     " WHERE job = $2 AND idx = $3::integer AND owner = $1",
                     3, v, NULL, "releasing a partition", &r);
        if (res)
            pg_cmd(s, "NOTIFY cuzk_work");
    } while (!res && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    PQclear(res);
    return r;
}

static cuzk_err pg_put_claimed_once(pg_store *s, const char *owner, const char *id,
                                    uint32_t idx, const cuzk_proof *proof, const cuzk_fr *pub,
                                    uint32_t n_public, double done_at, bool *completed)
{
    cuzk_err r = CUZK_OK;
    char ix[16], da[40];
    snprintf(ix, sizeof ix, "%u", idx);
    snprintf(da, sizeof da, "%.17g", done_at);
    const char *v[4] = {id, ix, (const char *)proof, n_public ? (const char *)pub : ""};
    int lens[4] = {0, 0, (int)sizeof *proof, (int)(sizeof(cuzk_fr) * n_public)};
    PGresult *rj = NULL, *res = NULL;
    bool ok = pg_cmd(s, "BEGIN");
    if (!ok)
        r = pg_fail(s, "recording a proof", NULL);
    /* the job's row locked: the last two results of a job, committed at once by two
     * daemons, are counted one after the other */
    ok = ok && (rj = pg_run(s, "SELECT n, state FROM cuzk_jobs WHERE id = $1 FOR UPDATE", 1, v,
                            NULL, "recording a proof", &r));
    if (ok && PQntuples(rj) != 1) {
        r = cuzk_error_set(CUZK_EINVAL, "store %s: job %s: not in the store", s->where, id);
        ok = false;
    }
    ok = ok && (res = pg_run(s,
                             "INSERT INTO cuzk_results(job, idx, proof, public)"
                             " VALUES($1, $2, $3, $4) ON CONFLICT (job, idx) DO NOTHING",
                             4, v, lens, "recording a proof", &r));
    PQclear(res);
    res = NULL;
    /* the partition's lease made endless: a claim that read the row before this commit
     * (and no result yet) reads it again when it locks it, and leaves it */
    (void)owner;
    ok = ok && (res = pg_run(s,
                             "UPDATE cuzk_witnesses SET owner = '', lease_until = 'Infinity'"
                             " WHERE job = $1 AND idx = $2::integer",
                             2, v, NULL, "recording a proof", &r));
    PQclear(res);
    res = NULL;
    if (ok && !strcmp(PQgetvalue(rj, 0, 1), "0")) {
        const char *vd[3] = {id, PQgetvalue(rj, 0, 0), da};
        ok = (res = pg_run(s,
                           "UPDATE cuzk_jobs SET state = 2, finished = $3 WHERE id = $1"
                           " AND state = 0 AND (SELECT COUNT(*) FROM cuzk_results"
                           " WHERE job = $1) = $2::integer",
                           3, vd, NULL, "recording a proof", &r)) != NULL;
        if (ok)
            *completed = !strcmp(PQcmdTuples(res), "1");
        PQclear(res);
    }
    PQclear(rj);
    if (ok && !pg_cmd(s, "COMMIT")) {
        r = pg_fail(s, "committing a proof", NULL);
        ok = false;
    }
    if (!ok) {
        pg_rollback(s);
        *completed = false;
    }
    return r;
}

static cuzk_err pg_put_claimed(store *base, const char *owner, const char *id, uint32_t idx,
                               const cuzk_proof *proof, const cuzk_fr *pub, uint32_t n_public,
                               double done_at, bool *completed)
{
    pg_store *s = (pg_store *)base;
    cuzk_err r;
    int tries = 0;
    *completed = false;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = pg_put_claimed_once(s, owner, id, idx, proof, pub, n_public, done_at, completed);
    } while (r != CUZK_OK && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    return r;
}

static void pg_close(store *base)
{
    pg_store *s = (pg_store *)base;
    PQfinish(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static const store_ops pg_ops = {
    .name = "postgresql", .put_job = pg_put_job,   .put_part = pg_put_part,
    .finish = pg_finish,  .list = pg_list,         .expire = pg_expire,
    .count = pg_count,    .claim = pg_claim,       .renew = pg_renew,
    .release = pg_release, .put_claimed = pg_put_claimed, .close = pg_close,
};

/* Brings the schema to PG_SCHEMA_VERSION, one transaction per step, under an advisory lock
 * (several daemons may start at once on one database). */
static cuzk_err pg_migrate(pg_store *s)
{
    cuzk_err r = CUZK_OK;
    PGresult *res = NULL;
    bool ok = pg_cmd(s, "BEGIN") && pg_cmd(s, "SELECT pg_advisory_xact_lock(" PG_MIGRATE_LOCK ")") &&
              pg_cmd(s, "CREATE TABLE IF NOT EXISTS cuzk_schema_version(version INTEGER NOT NULL)");
    if (!ok)
        r = pg_fail(s, "making its schema", NULL);
    ok = ok && (res = pg_run(s, "SELECT COALESCE(MAX(version), 0) FROM cuzk_schema_version", 0,
                             NULL, NULL, "reading its schema version", &r));
    long long ver = 0;
    if (ok && !parse_i64(PQgetvalue(res, 0, 0), 0, 1 << 30, &ver))
        ok = false;
    PQclear(res);
    if (ok && ver > PG_SCHEMA_VERSION) {
        r = cuzk_error_set(CUZK_EFORMAT, "store %s: schema version %lld, this program reads %d",
                           s->where, ver, PG_SCHEMA_VERSION);
        ok = false;
    }
    for (long long v = ver; ok && v < PG_SCHEMA_VERSION; v++) {
        char up[128];
        snprintf(up, sizeof up, "DELETE FROM cuzk_schema_version; INSERT INTO"
                 " cuzk_schema_version VALUES(%lld)", v + 1);
        res = PQexec(s->db, migrations[v]);
        ok = PQresultStatus(res) == PGRES_COMMAND_OK;
        if (!ok)
            r = pg_fail(s, "migrating its schema", res);
        PQclear(res);
        if (ok && !(ok = pg_cmd(s, up)))
            r = pg_fail(s, "writing its schema version", NULL);
    }
    if (ok && !pg_cmd(s, "COMMIT")) {
        r = pg_fail(s, "committing its schema", NULL);
        ok = false;
    }
    if (!ok) {
        if (r == CUZK_OK)
            r = pg_fail(s, "reading its schema version", NULL);
        pg_rollback(s);
    }
    return r;
}

/* url without its password: scheme://user@host... (the part between ':' and '@' dropped) */
static void url_redact(char *out, size_t len, const char *url)
{
    const char *p = strstr(url, "://");
    const char *at = p ? strchr(p + 3, '@') : NULL;
    const char *colon = p ? strchr(p + 3, ':') : NULL;
    if (at && colon && colon < at)
        snprintf(out, len, "%.*s:***%s", (int)(colon - url), url, at);
    else
        snprintf(out, len, "%s", url);
}

static void pg_notice_quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

cuzk_err store_postgres_open(store **out, const char *url, bool sole)
{
    *out = NULL;
    if (strncmp(url, "postgresql://", 13) != 0 && strncmp(url, "postgres://", 11) != 0)
        return cuzk_error_set(CUZK_EINVAL, "store: \"%.80s\" is not a postgresql:// URL", url);
    pg_store *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_error_set(CUZK_ENOMEM, "store: out of memory");
    s->base.ops = &pg_ops;
    pthread_mutex_init(&s->mu, NULL);
    url_redact(s->where, sizeof s->where, url);
    s->db = PQconnectdb(url);
    cuzk_err r = CUZK_OK;
    if (!s->db)
        r = cuzk_error_set(CUZK_ENOMEM, "store %s: out of memory", s->where);
    else if (PQstatus(s->db) != CONNECTION_OK)
        r = pg_fail(s, "cannot connect", NULL);
    else {
        PQsetNoticeProcessor(s->db, pg_notice_quiet, NULL);
        r = pg_migrate(s);
        s->sole = sole;
        if (r == CUZK_OK && sole && !pg_lock_sole(s))
            r = cuzk_error_set(CUZK_EINVAL,
                               "store %s: another cuzk-daemon uses this database (one daemon "
                               "per database: docs/cluster.md)",
                               s->where);
    }
    if (r != CUZK_OK) {
        pg_close(&s->base);
        return r;
    }
    *out = &s->base;
    return CUZK_OK;
}
