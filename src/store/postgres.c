/* SPDX-License-Identifier: Apache-2.0 */
/* The job journal in PostgreSQL (store.h), through libpq: jobs, their witness sources and
 * their partitions' results are rows of cuzk_jobs, cuzk_witnesses and cuzk_results. Every
 * write is one transaction, committed (synchronous_commit as the server sets it: on by
 * default, so durable) when the call returns. The schema is created at open and carries its
 * version in cuzk_schema_version; a database of a newer version is refused. One connection,
 * one mutex; a connection lost is reset and the operation tried again (PG_TRIES, about
 * 10 s), so a server restart or a short outage costs callers a wait, not an error. */
#define _GNU_SOURCE
#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"

#define PG_SCHEMA_VERSION 3

typedef struct pg_store {
    store base;
    PGconn *db;
    pthread_mutex_t mu;
    char where[200];   /* the URL without its password, for messages */
    char sqlstate[6];  /* of the latest failed statement ("" when none was given) */
    bool sole;         /* holds the database's lock of a single daemon (PG_SOLE_LOCK) */
    bool unlocked;     /* sole, and the session after a reset could not take the lock */
    char *url;         /* for the listening connection */
    PGconn *ln;        /* LISTENing (wait), made on first use; only wait's thread uses it */
    /* The claims' connection (take, renew, heartbeats, give-backs): a session whose commits
     * need not be durable (synchronous_commit off), beside the journal's; NULL in itself. */
    struct pg_store *lease;
    unsigned prepared; /* statements prepared on this session (PG_PREP_* bits) */
} pg_store;

#define PG_PREP_TAKE 1u
#define PG_PREP_RENEW 2u

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
    /* 3: several daemons: uploads kept in the row, the time of a claim, each partition's
     * place in the queue (its job's priority, order and key: the free partitions are an
     * index scan in claim order), the shared key table, the daemons' heartbeats */
    "ALTER TABLE cuzk_witnesses ADD COLUMN data BYTEA,"
    " ADD COLUMN claimed_at DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " ADD COLUMN prio INTEGER NOT NULL DEFAULT 0, ADD COLUMN seq BIGINT NOT NULL DEFAULT 0,"
    " ADD COLUMN key TEXT NOT NULL DEFAULT '';"
    "UPDATE cuzk_witnesses w SET prio = j.prio, seq = j.seq, key = j.key FROM cuzk_jobs j"
    " WHERE j.id = w.job;"
    "UPDATE cuzk_witnesses w SET lease_until = 'Infinity' FROM cuzk_jobs j"
    " WHERE j.id = w.job AND (j.state >= 2 OR EXISTS (SELECT 1 FROM cuzk_results r"
    " WHERE r.job = w.job AND r.idx = w.idx));"
    "CREATE INDEX cuzk_witnesses_free ON cuzk_witnesses(prio DESC, seq, idx)"
    " WHERE lease_until <> 'Infinity';"
    "CREATE TABLE cuzk_keys(id TEXT PRIMARY KEY, path TEXT NOT NULL,"
    " r1cs TEXT NOT NULL DEFAULT '', flags INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE cuzk_hosts(owner TEXT PRIMARY KEY, host TEXT NOT NULL,"
    " started DOUBLE PRECISION NOT NULL, seen DOUBLE PRECISION NOT NULL,"
    " parts BIGINT NOT NULL DEFAULT 0, rate DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " held INTEGER NOT NULL DEFAULT 0);",
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

static void pg_notice_quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
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
        s->prepared = 0;   /* a new session: its prepared statements went with the old */
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

/* pg_run of a statement prepared once per session (named name, bit of PG_PREP_*): no
 * planning at each call. */
static PGresult *pg_runp(pg_store *s, unsigned bit, const char *name, const char *sql, int n,
                         const char *const *v, const char *what, cuzk_err *err)
{
    if (!(s->prepared & bit)) {
        PGresult *p = PQprepare(s->db, name, sql, n, NULL);
        bool ok = PQresultStatus(p) == PGRES_COMMAND_OK;
        if (!ok)
            *err = pg_fail(s, what, p);
        PQclear(p);
        if (!ok)
            return NULL;
        s->prepared |= bit;
    }
    PGresult *r = PQexecPrepared(s->db, name, n, v, NULL, NULL, 0);
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

/* ---- one transaction or one statement, tried again when the connection breaks ---- */

/* A transaction's statements: true when they ran (*r set when not). */
typedef bool (*pg_body)(pg_store *s, void *arg, cuzk_err *r);

/* Runs body between begin ("BEGIN" when NULL) and COMMIT, rolled back on failure, the
 * whole tried again (pg_again) while the connection is what failed. */
static cuzk_err pg_tx(pg_store *s, const char *what, const char *begin, pg_body body, void *arg)
{
    cuzk_err r;
    int tries = 0;
    bool ok;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        r = CUZK_OK;
        ok = pg_cmd(s, begin ? begin : "BEGIN");
        if (!ok)
            r = pg_fail(s, what, NULL);
        ok = ok && body(s, arg, &r);
        if (ok && !pg_cmd(s, "COMMIT")) {
            r = pg_fail(s, what, NULL);
            ok = false;
        }
        if (!ok)
            pg_rollback(s);
    } while (!ok && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    return ok ? CUZK_OK : r;
}

/* One statement on its own (pg_run), tried again as pg_tx does; NULL and *r on failure. */
static PGresult *pg_q(pg_store *s, const char *what, const char *sql, int n,
                      const char *const *v, const int *lens, cuzk_err *r)
{
    PGresult *res;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        *r = CUZK_OK;
        res = pg_run(s, sql, n, v, lens, what, r);
    } while (!res && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    return res;
}

/* pg_q of a prepared statement (pg_runp). */
static PGresult *pg_qp(pg_store *s, unsigned bit, const char *name, const char *what,
                       const char *sql, int n, const char *const *v, cuzk_err *r)
{
    PGresult *res;
    int tries = 0;
    pthread_mutex_lock(&s->mu);
    do {
        pg_ready(s);
        *r = CUZK_OK;
        res = pg_runp(s, bit, name, sql, n, v, what, r);
    } while (!res && pg_again(s, &tries));
    pthread_mutex_unlock(&s->mu);
    return res;
}

/* The connection of the claims (pg_store.lease), or s itself. */
static pg_store *pg_lease(store *base)
{
    pg_store *s = (pg_store *)base;
    return s->lease ? s->lease : s;
}

/* A statement of a transaction's body whose rows are not needed. */
static bool pg_do(pg_store *s, const char *sql, int n, const char *const *v, const int *lens,
                  const char *what, cuzk_err *r)
{
    PGresult *res = pg_run(s, sql, n, v, lens, what, r);
    PQclear(res);
    return res != NULL;
}

/* ---- the journal ---- */

static cuzk_err pg_put_job_once(pg_store *s, const store_job *j)
{
    cuzk_err r = CUZK_OK;
    char prio[16], n[16], np[16], sub[40];
    snprintf(prio, sizeof prio, "%d", j->prio);
    snprintf(n, sizeof n, "%u", j->n);
    snprintf(np, sizeof np, "%u", j->n_public);
    snprintf(sub, sizeof sub, "%.17g", j->submitted);
    const char *vj[6] = {j->id, j->key, prio, n, np, sub};
    bool ok = pg_cmd(s, "BEGIN");
    if (!ok)
        r = pg_fail(s, "recording a job", NULL);
    PGresult *rs = NULL;
    ok = ok && (rs = pg_run(s,
                            "INSERT INTO cuzk_jobs(id, key, prio, state, n, n_public, submitted)"
                            " VALUES($1, $2, $3, 0, $4, $5, $6) RETURNING seq",
                            6, vj, NULL, "recording a job", &r)) != NULL;
    char seq[32] = "0";
    if (ok)
        snprintf(seq, sizeof seq, "%s", PQgetvalue(rs, 0, 0));
    PQclear(rs);
    for (uint32_t i = 0; ok && i < j->n; i++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%u", i);
        const unsigned char *d = j->data ? j->data[i] : NULL;
        const char *vw[8] = {j->id, idx, j->spooled[i] ? "t" : "f", j->src[i],
                             d ? (const char *)d : NULL, prio, seq, j->key};
        int lens[8] = {0, 0, 0, 0, d ? (int)j->len[i] : 0, 0, 0, 0};
        ok = pg_do(s,
                   "INSERT INTO cuzk_witnesses(job, idx, spooled, src, data, prio, seq, key)"
                   " VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
                   8, vw, lens, "recording a job's witnesses", &r);
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
    for (uint32_t i = 0; j->data && i < j->n; i++)
        if (j->data[i] && (j->len[i] == 0 || j->len[i] > (size_t)INT32_MAX))
            return cuzk_error_set(CUZK_ESIZE, "store %s: witness %u: %zu bytes (1 to 2 GiB)",
                                  s->where, i, j->len[i]);
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

/* Sets a final state when the job is not final yet; *changed (may be NULL) whether it was
 * set. Daemons waiting for the job hear of it (NOTIFY cuzk_done, the id). */
static bool pg_set_final(pg_store *s, const char *id, int state, const char *error, double fin,
                         cuzk_err *r, bool *changed)
{
    char st[16], f[40];
    snprintf(st, sizeof st, "%d", state);
    snprintf(f, sizeof f, "%.17g", fin);
    const char *v[4] = {id, st, error ? error : "", f};
    PGresult *res = pg_run(s,
                           "UPDATE cuzk_jobs SET state = $2, error = $3, finished = $4"
                           " WHERE id = $1 AND state < 2",
                           4, v, NULL, "recording a final state", r);
    bool set = res && !strcmp(PQcmdTuples(res), "1");
    PQclear(res);
    if (changed)
        *changed = set;
    /* the partitions of a final job leave the queue (its index of free partitions) */
    return res && (!set || (pg_do(s, "UPDATE cuzk_witnesses SET lease_until = 'Infinity'"
                                     " WHERE job = $1 AND lease_until <> 'Infinity'",
                                  1, v, NULL, "recording a final state", r) &&
                            pg_do(s, "SELECT pg_notify('cuzk_done', $1)", 1, v, NULL,
                                  "recording a final state", r)));
}

typedef struct {
    const char *id, *owner;
    uint32_t idx, n_public;
    const cuzk_proof *proof;
    const cuzk_fr *pub;
    double done_at;
    bool claimed;        /* put_claimed: the first proof wins, the job done by its count */
    bool *completed;
} pg_part_arg;

static bool pg_put_part_body(pg_store *s, void *arg, cuzk_err *r)
{
    pg_part_arg *a = arg;
    char ix[16], da[40];
    snprintf(ix, sizeof ix, "%u", a->idx);
    snprintf(da, sizeof da, "%.17g", a->done_at);
    /* an empty bytea goes as text (a binary parameter needs a length > 0) */
    const char *v[4] = {a->id, ix, (const char *)a->proof,
                        a->n_public ? (const char *)a->pub : ""};
    int lens[4] = {0, 0, (int)sizeof *a->proof, (int)(sizeof(cuzk_fr) * a->n_public)};
    if (!a->claimed) {
        /* (the row replaced when it is there: a retry writes the same bytes) */
        return pg_do(s,
                     "INSERT INTO cuzk_results(job, idx, proof, public)"
                     " VALUES($1, $2, $3, $4) ON CONFLICT (job, idx) DO UPDATE"
                     " SET proof = EXCLUDED.proof, public = EXCLUDED.public",
                     4, v, lens, "recording a proof", r) &&
               (a->done_at <= 0 ||
                pg_set_final(s, a->id, CUZK_JOB_DONE, "", a->done_at, r, NULL));
    }
    *a->completed = false;
    /* the job's row locked: the last two results of a job, committed at once by two
     * daemons, are counted one after the other */
    PGresult *rj = pg_run(s, "SELECT n, state FROM cuzk_jobs WHERE id = $1 FOR UPDATE", 1, v,
                          NULL, "recording a proof", r);
    if (!rj)
        return false;
    bool ok = true;
    if (PQntuples(rj) != 1) {
        *r = cuzk_error_set(CUZK_EINVAL, "store %s: job %s: not in the store", s->where, a->id);
        ok = false;
    }
    /* the partition's lease made endless: a claim that read the row before this commit
     * (and no result yet) reads it again when it locks it, and leaves it */
    ok = ok &&
         pg_do(s,
               "INSERT INTO cuzk_results(job, idx, proof, public)"
               " VALUES($1, $2, $3, $4) ON CONFLICT (job, idx) DO NOTHING",
               4, v, lens, "recording a proof", r) &&
         pg_do(s,
               "UPDATE cuzk_witnesses SET owner = '', lease_until = 'Infinity'"
               " WHERE job = $1 AND idx = $2::integer",
               2, v, NULL, "recording a proof", r);
    if (ok && !strcmp(PQgetvalue(rj, 0, 1), "0")) {
        const char *vd[3] = {a->id, PQgetvalue(rj, 0, 0), da};
        PGresult *res = pg_run(s,
                               "UPDATE cuzk_jobs SET state = 2, finished = $3 WHERE id = $1"
                               " AND state = 0 AND (SELECT COUNT(*) FROM cuzk_results"
                               " WHERE job = $1) = $2::integer",
                               3, vd, NULL, "recording a proof", r);
        ok = res != NULL;
        *a->completed = ok && !strcmp(PQcmdTuples(res), "1");
        PQclear(res);
        if (*a->completed)
            ok = pg_do(s, "SELECT pg_notify('cuzk_done', $1)", 1, v, NULL, "recording a proof",
                       r);
    }
    PQclear(rj);
    if (!ok)
        *a->completed = false;
    return ok;
}

static cuzk_err pg_put_part(store *base, const char *id, uint32_t idx, const cuzk_proof *proof,
                            const cuzk_fr *pub, uint32_t n_public, double done_at)
{
    pg_part_arg a = {id, NULL, idx, n_public, proof, pub, done_at, false, NULL};
    return pg_tx((pg_store *)base, "recording a proof", NULL, pg_put_part_body, &a);
}

static cuzk_err pg_put_claimed(store *base, const char *owner, const char *id, uint32_t idx,
                               const cuzk_proof *proof, const cuzk_fr *pub, uint32_t n_public,
                               double done_at, bool *completed)
{
    bool done = false;
    pg_part_arg a = {id, owner, idx, n_public, proof, pub, done_at, true, &done};
    cuzk_err r = pg_tx((pg_store *)base, "recording a proof", NULL, pg_put_part_body, &a);
    *completed = r == CUZK_OK && done;
    return r;
}

typedef struct {
    const char *id, *error;
    int state;
    double finished;
    int *was;            /* end: the state before (-1: no such job); NULL for finish */
} pg_final_arg;

static bool pg_final_body(pg_store *s, void *arg, cuzk_err *r)
{
    pg_final_arg *a = arg;
    bool changed = false;
    if (!pg_set_final(s, a->id, a->state, a->error, a->finished, r, &changed))
        return false;
    if (!a->was || changed) {
        if (a->was)
            *a->was = 0;   /* open (queued or running) */
        return true;
    }
    const char *v[1] = {a->id};
    PGresult *res = pg_run(s, "SELECT state FROM cuzk_jobs WHERE id = $1", 1, v, NULL,
                           "reading a job's state", r);
    if (res)
        *a->was = PQntuples(res) == 1 ? atoi(PQgetvalue(res, 0, 0)) : -1;
    PQclear(res);
    return res != NULL;
}

static cuzk_err pg_finish(store *base, const char *id, int state, const char *error,
                          double finished)
{
    pg_final_arg a = {id, error, state, finished, NULL};
    return pg_tx((pg_store *)base, "recording a final state", NULL, pg_final_body, &a);
}

static cuzk_err pg_end(store *base, const char *id, int state, const char *error,
                       double finished, int *was)
{
    *was = -1;
    pg_final_arg a = {id, error, state, finished, was};
    return pg_tx((pg_store *)base, "ending a job", NULL, pg_final_body, &a);
}

/* ---- reading jobs ---- */

static bool parse_i64(const char *t, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(t, &end, 10);
    if (end == t || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* j's arrays for its n partitions (id, n, n_public read); false when out of memory. */
static bool load_arrays(store_job *j)
{
    j->src = calloc(j->n, sizeof *j->src);
    j->spooled = calloc(j->n, sizeof *j->spooled);
    j->part_done = calloc(j->n, sizeof *j->part_done);
    j->proofs = calloc(j->n, sizeof *j->proofs);
    j->publics = calloc((size_t)j->n * j->n_public + 1, sizeof *j->publics);
    return j->src && j->spooled && j->part_done && j->proofs && j->publics;
}

/* The results of job j in rr (job, idx, proof, public) from row *ir on, ordered by job. */
static bool load_results(store_job *j, PGresult *rr, int *ir, char *why, size_t wlen)
{
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

/* The rows of job j (id, n, n_public read) in rw (witnesses: job, idx, spooled, src) and rr
 * (results) from rows *iw and *ir on, both ordered by job. */
static bool load_parts(store_job *j, PGresult *rw, int *iw, PGresult *rr, int *ir, char *why,
                       size_t wlen)
{
    if (!load_arrays(j)) {
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
    return load_results(j, rr, ir, why, wlen);
}

typedef struct {
    const char *id;     /* one job (get), or every job (list) when NULL */
    bool results;
    PGresult *rj, *rw, *rr;
} pg_read_arg;

static void pg_read_clear(pg_read_arg *a)
{
    PQclear(a->rj);
    PQclear(a->rw);
    PQclear(a->rr);
    a->rj = a->rw = a->rr = NULL;
}

/* The rows of the jobs (all, or a->id's), their witnesses and results, in one snapshot. */
static bool pg_read_body(pg_store *s, void *arg, cuzk_err *r)
{
    pg_read_arg *a = arg;
    pg_read_clear(a);
    const char *v[1] = {a->id};
    int n = a->id ? 1 : 0;
    a->rj = pg_run(s,
                   a->id ? "SELECT id, key, prio, state, error, n, n_public, submitted, finished,"
                           " (SELECT COUNT(*) FROM cuzk_results r WHERE r.job = $1),"
                           " (SELECT COUNT(*) FROM cuzk_witnesses w WHERE w.job = $1 AND"
                           " w.owner <> '' AND w.lease_until >= " PG_NOW ")"
                           " FROM cuzk_jobs WHERE id = $1"
                         : "SELECT id, key, prio, state, error, n, n_public, submitted, finished"
                           " FROM cuzk_jobs ORDER BY seq",
                   n, v, NULL, "listing jobs", r);
    if (!a->rj)
        return false;
    if (!a->id)
        a->rw = pg_run(s,
                       "SELECT w.job, w.idx, w.spooled, w.src FROM cuzk_witnesses w"
                       " JOIN cuzk_jobs j ON j.id = w.job ORDER BY j.seq, w.idx",
                       0, NULL, NULL, "listing witnesses", r);
    if (!a->id && !a->rw)
        return false;
    if (a->results)
        a->rr = pg_run(s,
                       a->id ? "SELECT job, idx, proof, public FROM cuzk_results WHERE job = $1"
                               " ORDER BY idx"
                             : "SELECT r.job, r.idx, r.proof, r.public FROM cuzk_results r"
                               " JOIN cuzk_jobs j ON j.id = r.job ORDER BY j.seq, r.idx",
                       n, v, NULL, "listing results", r);
    return !a->results || a->rr;
}

/* Row i of a job listing into j (its arrays not yet made); false for a bad row. */
static bool pg_job_row(PGresult *rj, int i, store_job *j)
{
    memset(j, 0, sizeof *j);
    const char *id = PQgetvalue(rj, i, 0), *key = PQgetvalue(rj, i, 1);
    long long prio, state, n, np;
    if (!cuzk_job_id_valid(id) || strlen(key) >= sizeof j->key ||
        !parse_i64(PQgetvalue(rj, i, 2), 0, CUZK_PRIO_COUNT - 1, &prio) ||
        !parse_i64(PQgetvalue(rj, i, 3), 0, CUZK_JOB_CANCELLED, &state) ||
        !parse_i64(PQgetvalue(rj, i, 5), 1, 1 << 24, &n) ||
        !parse_i64(PQgetvalue(rj, i, 6), 0, 1 << 24, &np))
        return false;
    memcpy(j->id, id, sizeof j->id);
    snprintf(j->key, sizeof j->key, "%s", key);
    snprintf(j->error, sizeof j->error, "%s", PQgetvalue(rj, i, 4));
    j->prio = (int)prio;
    j->state = (int)state;
    j->n = (uint32_t)n;
    j->n_public = (uint32_t)np;
    j->submitted = strtod(PQgetvalue(rj, i, 7), NULL);
    j->finished = strtod(PQgetvalue(rj, i, 8), NULL);
    return true;
}

static cuzk_err pg_list(store *base, store_list_fn fn, void *arg)
{
    pg_store *s = (pg_store *)base;
    char why[600] = "";
    pg_read_arg a = {NULL, true, NULL, NULL, NULL};
    cuzk_err r = pg_tx(s, "listing jobs", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                       pg_read_body, &a);
    bool bad = false;
    int iw = 0, ir = 0;
    for (int i = 0; r == CUZK_OK && i < PQntuples(a.rj); i++) {
        store_job j;
        if (!pg_job_row(a.rj, i, &j)) {
            snprintf(why, sizeof why, "a bad job row (id \"%.40s\")", PQgetvalue(a.rj, i, 0));
            bad = true;
            break;
        }
        /* rows of jobs skipped over (none: same snapshot, same order) are passed by */
        bad = !load_parts(&j, a.rw, &iw, a.rr, &ir, why, sizeof why);
        int stop = bad ? 0 : fn(arg, &j);
        store_job_release(&j);
        if (bad || stop)
            break;
    }
    pg_read_clear(&a);
    if (bad)
        return cuzk_error_set(CUZK_EFORMAT, "store %s: %s", s->where, why);
    return r;
}

static cuzk_err pg_get(store *base, const char *id, bool results, store_job *out,
                       unsigned *n_done, unsigned *n_running)
{
    pg_store *s = (pg_store *)base;
    memset(out, 0, sizeof *out);
    *n_done = *n_running = 0;
    if (!cuzk_job_id_valid(id))
        return cuzk_error_set(CUZK_ENOTFOUND, "unknown job \"%.40s\"", id);
    pg_read_arg a = {id, false, NULL, NULL, NULL};
    cuzk_err r = pg_tx(s, "reading a job", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                       pg_read_body, &a);
    if (r == CUZK_OK && PQntuples(a.rj) != 1)
        r = cuzk_error_set(CUZK_ENOTFOUND, "unknown job %s", id);
    else if (r == CUZK_OK && !pg_job_row(a.rj, 0, out))
        r = cuzk_error_set(CUZK_EFORMAT, "store %s: a bad job row (id %s)", s->where, id);
    if (r == CUZK_OK) {
        *n_done = (unsigned)strtoul(PQgetvalue(a.rj, 0, 9), NULL, 10);
        *n_running = (unsigned)strtoul(PQgetvalue(a.rj, 0, 10), NULL, 10);
    }
    pg_read_clear(&a);
    if (r == CUZK_OK && results && out->state == CUZK_JOB_DONE) {
        /* the results of a done job never change: read on their own */
        a.results = true;
        r = pg_tx(s, "reading a job's results", NULL, pg_read_body, &a);
        char why[300] = "";
        int ir = 0;   /* (the witnesses' sources are not read here) */
        if (r == CUZK_OK && !load_arrays(out))
            r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
        if (r == CUZK_OK && !load_results(out, a.rr, &ir, why, sizeof why))
            r = cuzk_error_set(CUZK_EFORMAT, "store %s: %s", s->where, why);
        pg_read_clear(&a);
    }
    if (r != CUZK_OK)
        store_job_release(out);
    return r;
}

/* ---- expiry, counts ---- */

typedef struct {
    const char *before;
    PGresult *rs, *rd;
} pg_expire_arg;

static bool pg_expire_body(pg_store *s, void *arg, cuzk_err *r)
{
    pg_expire_arg *a = arg;
    PQclear(a->rs);
    PQclear(a->rd);
    a->rd = NULL;
    const char *v[1] = {a->before};
    /* the rows locked first, so that the spool names read are those deleted */
    a->rs = pg_run(s,
                   "SELECT w.src FROM cuzk_witnesses w WHERE w.spooled AND w.job IN"
                   " (SELECT id FROM cuzk_jobs WHERE state >= 2 AND finished < $1"
                   " FOR UPDATE)",
                   1, v, NULL, "expiring jobs", r);
    return a->rs && (a->rd = pg_run(s, "DELETE FROM cuzk_jobs WHERE state >= 2 AND finished < $1",
                                    1, v, NULL, "expiring jobs", r));
}

static cuzk_err pg_expire(store *base, double before, store_spool_fn fn, void *arg,
                          unsigned *n_expired)
{
    pg_store *s = (pg_store *)base;
    if (n_expired)
        *n_expired = 0;
    char b[40];
    snprintf(b, sizeof b, "%.17g", before);
    pg_expire_arg a = {b, NULL, NULL};
    cuzk_err r = pg_tx(s, "expiring jobs", NULL, pg_expire_body, &a);
    if (r == CUZK_OK) {
        for (int i = 0; fn && i < PQntuples(a.rs); i++)
            fn(arg, PQgetvalue(a.rs, i, 0));
        if (n_expired)
            *n_expired = (unsigned)strtoul(PQcmdTuples(a.rd), NULL, 10);
    }
    PQclear(a.rs);
    PQclear(a.rd);
    return r;
}

static cuzk_err pg_count(store *base, unsigned *all, unsigned *open)
{
    cuzk_err r;
    PGresult *res = pg_q((pg_store *)base, "counting jobs",
                         "SELECT COUNT(*), COUNT(*) FILTER (WHERE state < 2) FROM cuzk_jobs", 0,
                         NULL, NULL, &r);
    if (res) {
        *all = (unsigned)strtoul(PQgetvalue(res, 0, 0), NULL, 10);
        *open = (unsigned)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
    }
    PQclear(res);
    return r;
}

static cuzk_err pg_fail_older(store *base, double before, const char *reason, double finished,
                              unsigned *n)
{
    char b[40], f[40];
    snprintf(b, sizeof b, "%.17g", before);
    snprintf(f, sizeof f, "%.17g", finished);
    const char *v[3] = {b, reason, f};
    cuzk_err r;
    *n = 0;
    PGresult *res = pg_q((pg_store *)base, "failing jobs past their time",
                         "WITH f AS (UPDATE cuzk_jobs SET state = 3, error = $2, finished = $3"
                         " WHERE state < 2 AND submitted < $1 RETURNING id),"
                         " q AS (UPDATE cuzk_witnesses SET lease_until = 'Infinity'"
                         " WHERE job IN (SELECT id FROM f) AND lease_until <> 'Infinity')"
                         " SELECT pg_notify('cuzk_done', id) FROM f",
                         3, v, NULL, &r);
    if (res)
        *n = (unsigned)PQntuples(res);
    PQclear(res);
    return r;
}

static cuzk_err pg_age(store *base, double aging_s, unsigned *n)
{
    char a[40];
    snprintf(a, sizeof a, "%.17g", aging_s);
    const char *v[1] = {a};
    cuzk_err r;
    *n = 0;
    PGresult *res = pg_q(pg_lease(base), "aging the queue",
                         "UPDATE cuzk_witnesses w SET prio = LEAST(3, j.prio + floor(GREATEST(0, "
                         PG_NOW " - j.submitted) / $1::float8)::integer) FROM cuzk_jobs j"
                         " WHERE j.id = w.job AND j.state = 0 AND w.lease_until <> 'Infinity'"
                         " AND w.prio < LEAST(3, j.prio + floor(GREATEST(0, " PG_NOW
                         " - j.submitted) / $1::float8)::integer)",
                         1, v, NULL, &r);
    if (res)
        *n = (unsigned)strtoul(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    return r;
}

static cuzk_err pg_ended(store *base, const char *const *ids, unsigned n, bool *out)
{
    /* one array parameter: {id,id,...} (ids are hex: nothing to quote) */
    size_t len = 3 + (size_t)n * (CUZK_JOB_ID_CHARS + 1);
    char *arr = malloc(len);
    if (!arr)
        return cuzk_error_set(CUZK_ENOMEM, "out of memory");
    size_t o = 0;
    arr[o++] = '{';
    for (unsigned i = 0; i < n; i++) {
        out[i] = true;
        if (!cuzk_job_id_valid(ids[i]))
            continue;
        if (o > 1)
            arr[o++] = ',';
        memcpy(arr + o, ids[i], CUZK_JOB_ID_CHARS);
        o += CUZK_JOB_ID_CHARS;
    }
    arr[o++] = '}';
    arr[o] = 0;
    const char *v[1] = {arr};
    cuzk_err r;
    PGresult *res = pg_q((pg_store *)base, "reading jobs' states",
                         "SELECT id FROM cuzk_jobs WHERE id = ANY($1::text[]) AND state < 2", 1,
                         v, NULL, &r);
    for (int i = 0; res && i < PQntuples(res); i++)
        for (unsigned k = 0; k < n; k++)
            if (cuzk_job_id_valid(ids[k]) && !strcmp(ids[k], PQgetvalue(res, i, 0)))
                out[k] = false;
    PQclear(res);
    free(arr);
    return r;
}

/* ---- claims ---- */

/* keys as a text[] literal: {"a","b"} (quotes and backslashes escaped) */
static char *pg_text_array(const char *const *keys, unsigned n)
{
    size_t len = 3;
    for (unsigned i = 0; i < n; i++)
        len += 2 * strlen(keys[i]) + 3;
    char *a = malloc(len), *o = a;
    if (!a)
        return NULL;
    *o++ = '{';
    for (unsigned i = 0; i < n; i++) {
        if (i)
            *o++ = ',';
        *o++ = '"';
        for (const char *c = keys[i]; *c; c++) {
            if (*c == '"' || *c == '\\')
                *o++ = '\\';
            *o++ = *c;
        }
        *o++ = '"';
    }
    *o++ = '}';
    *o = 0;
    return a;
}

void store_work_release(store_work *w)
{
    free(w->src);
    free(w->data);
    w->src = NULL;
    w->data = NULL;
}

static cuzk_err pg_take(store *base, const char *owner, double lease_s, const char *const *keys,
                        unsigned n_keys, store_work *out, unsigned max, unsigned *n)
{
    *n = 0;
    if (max == 0 || (keys && n_keys == 0))
        return CUZK_OK;
    char ls[40], mx[16];
    snprintf(ls, sizeof ls, "%.17g", lease_s);
    snprintf(mx, sizeof mx, "%u", max);
    char *ka = keys ? pg_text_array(keys, n_keys) : NULL;
    if (keys && !ka)
        return cuzk_error_set(CUZK_ENOMEM, "out of memory");
    const char *v[4] = {owner, ls, mx, ka};
    cuzk_err r;
    /* the rows locked as they are taken; rows another claim holds are skipped, and one it
     * has just leased fails the lease test when it is read again */
    /* the free partitions in claim order are a scan of cuzk_witnesses_free (partitions of
     * open jobs without a result), which stops after max rows: leased ones are passed by */
    PGresult *res = pg_qp(pg_lease(base), PG_PREP_TAKE, "cuzk_take", "claiming partitions",
                         "WITH c AS (SELECT w.job, w.idx FROM cuzk_witnesses w"
                         " WHERE w.lease_until <> 'Infinity' AND w.lease_until < " PG_NOW
                         " AND ($4::text[] IS NULL OR w.key = ANY($4::text[]))"
                         " AND EXISTS (SELECT 1 FROM cuzk_jobs j WHERE j.id = w.job"
                         "  AND j.state = 0)"
                         " AND NOT EXISTS (SELECT 1 FROM cuzk_results r"
                         "  WHERE r.job = w.job AND r.idx = w.idx)"
                         " ORDER BY w.prio DESC, w.seq, w.idx LIMIT $3::integer"
                         " FOR UPDATE OF w SKIP LOCKED)"
                         " UPDATE cuzk_witnesses w SET owner = $1, attempts = w.attempts + 1,"
                         " lease_until = " PG_NOW " + $2::float8, claimed_at = " PG_NOW
                         " FROM c, cuzk_jobs j WHERE w.job = c.job AND w.idx = c.idx"
                         " AND j.id = w.job"
                         " RETURNING w.job, w.idx, w.attempts, j.key, j.prio, j.n, j.n_public,"
                         " j.submitted, w.src, w.spooled, w.data",
                         4, v, &r);
    free(ka);
    for (int i = 0; res && i < PQntuples(res) && *n < max; i++) {
        long long idx, att, prio, jn, np;
        const char *id = PQgetvalue(res, i, 0);
        if (!cuzk_job_id_valid(id) || !parse_i64(PQgetvalue(res, i, 1), 0, 1 << 24, &idx) ||
            !parse_i64(PQgetvalue(res, i, 2), 0, 1LL << 31, &att) ||
            !parse_i64(PQgetvalue(res, i, 4), 0, CUZK_PRIO_COUNT - 1, &prio) ||
            !parse_i64(PQgetvalue(res, i, 5), 1, 1 << 24, &jn) || idx >= jn ||
            !parse_i64(PQgetvalue(res, i, 6), 0, 1 << 24, &np) ||
            strlen(PQgetvalue(res, i, 3)) >= sizeof out->key)
            continue;   /* (a row damaged by hand: its lease runs out, nobody proves it) */
        store_work *w = &out[*n];
        memset(w, 0, sizeof *w);
        memcpy(w->id, id, sizeof w->id);
        w->idx = (uint32_t)idx;
        w->attempt = (uint32_t)att;
        snprintf(w->key, sizeof w->key, "%s", PQgetvalue(res, i, 3));
        w->prio = (int)prio;
        w->n = (uint32_t)jn;
        w->n_public = (uint32_t)np;
        w->submitted = strtod(PQgetvalue(res, i, 7), NULL);
        w->spooled = PQgetvalue(res, i, 9)[0] == 't';
        w->src = strdup(PQgetvalue(res, i, 8));
        if (!PQgetisnull(res, i, 10)) {
            size_t dl = 0;
            unsigned char *d = PQunescapeBytea((const unsigned char *)PQgetvalue(res, i, 10), &dl);
            if (d && (w->data = malloc(dl ? dl : 1))) {
                memcpy(w->data, d, dl);
                w->len = dl;
            }
            PQfreemem(d);
            if (!w->data) {
                free(w->src);
                w->src = NULL;
            }
        }
        if (!w->src) {
            store_work_release(w);
            r = cuzk_error_set(CUZK_ENOMEM, "claiming partitions: out of memory");
            continue;   /* (claimed: its lease runs out) */
        }
        (*n)++;
    }
    PQclear(res);
    return r;
}

static cuzk_err pg_claim(store *base, const char *owner, double lease_s, store_claim *out,
                         unsigned max, unsigned *n)
{
    *n = 0;
    store_work *w = calloc(max ? max : 1, sizeof *w);
    if (!w)
        return cuzk_error_set(CUZK_ENOMEM, "out of memory");
    unsigned got = 0;
    cuzk_err r = pg_take(base, owner, lease_s, NULL, 0, w, max, &got);
    for (unsigned i = 0; i < got; i++) {
        memcpy(out[i].id, w[i].id, sizeof out[i].id);
        out[i].idx = w[i].idx;
        out[i].attempt = w[i].attempt;
        store_work_release(&w[i]);
    }
    *n = got;
    free(w);
    return r;
}

static cuzk_err pg_renew(store *base, const char *owner, double lease_s, unsigned *held)
{
    char ls[40];
    snprintf(ls, sizeof ls, "%.17g", lease_s);
    const char *v[2] = {owner, ls};
    cuzk_err r;
    /* a lease that has run out is not brought back: another daemon may hold it now */
    PGresult *res = pg_qp(pg_lease(base), PG_PREP_RENEW, "cuzk_renew", "renewing leases",
                         "UPDATE cuzk_witnesses SET lease_until = " PG_NOW " + $2::float8"
                         " WHERE owner = $1 AND lease_until >= " PG_NOW
                         " AND job IN (SELECT id FROM cuzk_jobs WHERE state < 2)",
                         2, v, &r);
    if (res && held)
        *held = (unsigned)strtoul(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    return r;
}

typedef struct {
    const char *const *v;   /* owner, job (NULL: all of owner's), idx */
} pg_release_arg;

static bool pg_release_body(pg_store *s, void *arg, cuzk_err *r)
{
    pg_release_arg *a = arg;
    bool one = a->v[1] != NULL;
    return pg_do(s,
                 one ? "UPDATE cuzk_witnesses SET owner = '', lease_until = 0"
                       " WHERE job = $2 AND idx = $3::integer AND owner = $1"
                     : "UPDATE cuzk_witnesses SET owner = '', lease_until = 0"
                       " WHERE owner = $1 AND lease_until <> 'Infinity'",
                 one ? 3 : 1, a->v, NULL, "releasing partitions", r) &&
           (one || pg_do(s, "DELETE FROM cuzk_hosts WHERE owner = $1", 1, a->v, NULL,
                         "releasing partitions", r)) &&
           pg_cmd(s, "NOTIFY cuzk_work");
}

static cuzk_err pg_release(store *base, const char *owner, const char *id, uint32_t idx)
{
    char ix[16];
    snprintf(ix, sizeof ix, "%u", idx);
    const char *v[3] = {owner, id, ix};
    pg_release_arg a = {v};
    return pg_tx(pg_lease(base), "releasing a partition", NULL, pg_release_body, &a);
}

static cuzk_err pg_gone(store *base, const char *owner)
{
    const char *v[3] = {owner, NULL, NULL};
    pg_release_arg a = {v};
    return pg_tx(pg_lease(base), "leaving the farm", NULL, pg_release_body, &a);
}

/* ---- the key table, the daemons ---- */

static cuzk_err pg_key_put(store *base, const store_key *k)
{
    char fl[16];
    snprintf(fl, sizeof fl, "%u", k->flags);
    const char *v[4] = {k->id, k->path, k->r1cs, fl};
    cuzk_err r;
    PGresult *res = pg_q((pg_store *)base, "recording a key",
                         "WITH u AS (INSERT INTO cuzk_keys(id, path, r1cs, flags)"
                         " VALUES($1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET path = $2,"
                         " r1cs = $3, flags = $4 WHERE (cuzk_keys.path, cuzk_keys.r1cs,"
                         " cuzk_keys.flags) IS DISTINCT FROM ($2, $3, $4::integer) RETURNING 1)"
                         " SELECT pg_notify('cuzk_keys', '') FROM u",
                         4, v, NULL, &r);
    PQclear(res);
    return r;
}

static cuzk_err pg_key_del(store *base, const char *id)
{
    const char *v[1] = {id};
    cuzk_err r;
    PGresult *res = pg_q((pg_store *)base, "deleting a key",
                         "WITH d AS (DELETE FROM cuzk_keys WHERE id = $1 RETURNING 1)"
                         " SELECT pg_notify('cuzk_keys', '') FROM d",
                         1, v, NULL, &r);
    if (res && PQntuples(res) == 0)
        r = cuzk_error_set(CUZK_ENOTFOUND, "key %.100s is not in the farm's key table", id);
    PQclear(res);
    return r;
}

static cuzk_err pg_keys(store *base, store_key **out, unsigned *n)
{
    *out = NULL;
    *n = 0;
    cuzk_err r;
    PGresult *res = pg_q((pg_store *)base, "listing keys",
                         "SELECT id, path, r1cs, flags FROM cuzk_keys ORDER BY id", 0, NULL, NULL,
                         &r);
    if (!res)
        return r;
    int rows = PQntuples(res);
    store_key *k = calloc(rows ? (size_t)rows : 1, sizeof *k);
    if (!k) {
        PQclear(res);
        return cuzk_error_set(CUZK_ENOMEM, "out of memory");
    }
    unsigned m = 0;
    for (int i = 0; i < rows; i++) {
        if (strlen(PQgetvalue(res, i, 0)) >= sizeof k->id ||
            strlen(PQgetvalue(res, i, 1)) >= sizeof k->path ||
            strlen(PQgetvalue(res, i, 2)) >= sizeof k->r1cs)
            continue;
        snprintf(k[m].id, sizeof k[m].id, "%s", PQgetvalue(res, i, 0));
        snprintf(k[m].path, sizeof k[m].path, "%s", PQgetvalue(res, i, 1));
        snprintf(k[m].r1cs, sizeof k[m].r1cs, "%s", PQgetvalue(res, i, 2));
        k[m].flags = (unsigned)strtoul(PQgetvalue(res, i, 3), NULL, 10);
        m++;
    }
    PQclear(res);
    *out = k;
    *n = m;
    return CUZK_OK;
}

static cuzk_err pg_beat(store *base, const store_host *h)
{
    char st[40], parts[32], rate[40], held[16];
    snprintf(st, sizeof st, "%.17g", h->started);
    snprintf(parts, sizeof parts, "%llu", (unsigned long long)h->parts);
    snprintf(rate, sizeof rate, "%.6g", h->rate);
    snprintf(held, sizeof held, "%u", h->held);
    const char *v[6] = {h->owner, h->host, st, parts, rate, held};
    cuzk_err r;
    PGresult *res = pg_q(pg_lease(base), "a heartbeat",
                         "INSERT INTO cuzk_hosts(owner, host, started, seen, parts, rate, held)"
                         " VALUES($1, $2, $3, " PG_NOW ", $4, $5, $6) ON CONFLICT (owner) DO"
                         " UPDATE SET seen = " PG_NOW ", parts = $4, rate = $5, held = $6",
                         6, v, NULL, &r);
    PQclear(res);
    return r;
}

typedef struct {
    const char *within;
    PGresult *rh, *rl;
} pg_hosts_arg;

static bool pg_hosts_body(pg_store *s, void *arg, cuzk_err *r)
{
    pg_hosts_arg *a = arg;
    PQclear(a->rh);
    PQclear(a->rl);
    a->rl = NULL;
    const char *v[1] = {a->within};
    a->rh = pg_run(s,
                   "SELECT owner, host, started, " PG_NOW " - seen, parts, rate, held"
                   " FROM cuzk_hosts WHERE seen >= " PG_NOW " - $1::float8 ORDER BY host, owner",
                   1, v, NULL, "listing the daemons", r);
    return a->rh &&
           (a->rl = pg_run(s,
                           "SELECT job, idx, attempts, owner, " PG_NOW " - claimed_at,"
                           " lease_until - " PG_NOW " FROM cuzk_witnesses WHERE owner <> ''"
                           " AND lease_until >= " PG_NOW " AND lease_until <> 'Infinity'"
                           " AND job IN (SELECT id FROM cuzk_jobs WHERE state < 2)"
                           " ORDER BY claimed_at LIMIT 1000",
                           0, NULL, NULL, "listing the leases", r));
}

static cuzk_err pg_hosts(store *base, double within, store_host **h, unsigned *n_h,
                         store_lease **l, unsigned *n_l)
{
    *h = NULL;
    *l = NULL;
    *n_h = *n_l = 0;
    char w[40];
    snprintf(w, sizeof w, "%.17g", within);
    pg_hosts_arg a = {w, NULL, NULL};
    cuzk_err r = pg_tx((pg_store *)base, "listing the daemons",
                       "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", pg_hosts_body, &a);
    if (r == CUZK_OK) {
        int nh = PQntuples(a.rh), nl = PQntuples(a.rl);
        *h = calloc(nh ? (size_t)nh : 1, sizeof **h);
        *l = calloc(nl ? (size_t)nl : 1, sizeof **l);
        if (!*h || !*l) {
            free(*h);
            free(*l);
            *h = NULL;
            *l = NULL;
            r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
        }
        for (int i = 0; r == CUZK_OK && i < nh; i++) {
            store_host *o = &(*h)[i];
            snprintf(o->owner, sizeof o->owner, "%s", PQgetvalue(a.rh, i, 0));
            snprintf(o->host, sizeof o->host, "%s", PQgetvalue(a.rh, i, 1));
            o->started = strtod(PQgetvalue(a.rh, i, 2), NULL);
            o->seen_ago = strtod(PQgetvalue(a.rh, i, 3), NULL);
            o->parts = strtoull(PQgetvalue(a.rh, i, 4), NULL, 10);
            o->rate = strtod(PQgetvalue(a.rh, i, 5), NULL);
            o->held = (unsigned)strtoul(PQgetvalue(a.rh, i, 6), NULL, 10);
        }
        for (int i = 0; r == CUZK_OK && i < nl; i++) {
            store_lease *o = &(*l)[*n_l];
            const char *id = PQgetvalue(a.rl, i, 0);
            if (!cuzk_job_id_valid(id))
                continue;
            memcpy(o->id, id, sizeof o->id);
            o->idx = (uint32_t)strtoul(PQgetvalue(a.rl, i, 1), NULL, 10);
            o->attempt = (uint32_t)strtoul(PQgetvalue(a.rl, i, 2), NULL, 10);
            snprintf(o->owner, sizeof o->owner, "%s", PQgetvalue(a.rl, i, 3));
            o->age = strtod(PQgetvalue(a.rl, i, 4), NULL);
            o->left = strtod(PQgetvalue(a.rl, i, 5), NULL);
            (*n_l)++;
        }
        if (r == CUZK_OK)
            *n_h = (unsigned)nh;
    }
    PQclear(a.rh);
    PQclear(a.rl);
    return r;
}

/* ---- waking: LISTEN on a connection of its own ---- */

static cuzk_err pg_wait(store *base, double timeout_s, unsigned *events,
                        char (*done)[CUZK_JOB_ID_CHARS + 1], unsigned max_done, unsigned *n_done)
{
    pg_store *s = (pg_store *)base;
    *events = 0;
    *n_done = 0;
    if (s->ln && PQstatus(s->ln) != CONNECTION_OK) {
        PQfinish(s->ln);
        s->ln = NULL;
    }
    if (!s->ln) {
        PGconn *c = PQconnectdb(s->url);
        PGresult *res = c && PQstatus(c) == CONNECTION_OK
                            ? PQexec(c, "LISTEN cuzk_work; LISTEN cuzk_done; LISTEN cuzk_keys")
                            : NULL;
        bool ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
        if (!ok) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s", c ? PQerrorMessage(c) : "out of memory");
            for (char *p = msg; *p; p++)
                if (*p == '\n')
                    *p = ' ';
            PQfinish(c);
            struct timespec ts = {(time_t)timeout_s, (long)((timeout_s - (time_t)timeout_s) * 1e9)};
            nanosleep(&ts, NULL);   /* the caller's pace, not a tight loop */
            return cuzk_error_set(CUZK_EIO, "store %s: listening: %s", s->where, msg);
        }
        PQsetNoticeProcessor(c, pg_notice_quiet, NULL);
        s->ln = c;
        *events = STORE_EV_WORK | STORE_EV_KEYS;   /* whatever was sent meanwhile */
        return CUZK_OK;
    }
    int fd = PQsocket(s->ln);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (!PQconsumeInput(s->ln))
            return cuzk_error_set(CUZK_EIO, "store %s: listening: the connection broke",
                                  s->where);
        PGnotify *nt;
        while ((nt = PQnotifies(s->ln))) {
            if (!strcmp(nt->relname, "cuzk_work")) {
                *events |= STORE_EV_WORK;
            } else if (!strcmp(nt->relname, "cuzk_keys")) {
                *events |= STORE_EV_KEYS;
            } else if (!strcmp(nt->relname, "cuzk_done")) {
                *events |= STORE_EV_DONE;
                if (*n_done < max_done && cuzk_job_id_valid(nt->extra))
                    memcpy(done[(*n_done)++], nt->extra, CUZK_JOB_ID_CHARS + 1);
            }
            PQfreemem(nt);
        }
        if (*events)
            return CUZK_OK;
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double left = timeout_s - ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
        if (left <= 0)
            return CUZK_OK;
        struct pollfd pf = {fd, POLLIN, 0};
        int ms = (int)(left * 1e3) + 1;
        if (poll(&pf, 1, ms) < 0 && errno != EINTR)
            return cuzk_error_set(CUZK_EIO, "store %s: listening: %s", s->where, strerror(errno));
    }
}

static void pg_close(store *base)
{
    pg_store *s = (pg_store *)base;
    if (s->lease)
        pg_close(&s->lease->base);
    PQfinish(s->db);
    PQfinish(s->ln);
    free(s->url);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static const store_cluster_ops pg_cluster_ops = {
    .take = pg_take,       .get = pg_get,       .end = pg_end,     .fail_older = pg_fail_older,
    .age = pg_age,
    .ended = pg_ended,     .key_put = pg_key_put, .key_del = pg_key_del, .keys = pg_keys,
    .beat = pg_beat,       .gone = pg_gone,     .hosts = pg_hosts, .wait = pg_wait,
};

static const store_ops pg_ops = {
    .name = "postgresql", .cluster = &pg_cluster_ops, .put_job = pg_put_job,
    .put_part = pg_put_part, .finish = pg_finish, .list = pg_list, .expire = pg_expire,
    .count = pg_count, .claim = pg_claim, .renew = pg_renew, .release = pg_release,
    .put_claimed = pg_put_claimed, .close = pg_close,
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


/* The claims' own session beside s's (pg_store.lease), commits not flushed. */
static cuzk_err pg_lease_open(pg_store *s)
{
    pg_store *l = calloc(1, sizeof *l);
    if (!l)
        return cuzk_error_set(CUZK_ENOMEM, "store: out of memory");
    l->base.ops = s->base.ops;
    pthread_mutex_init(&l->mu, NULL);
    memcpy(l->where, s->where, sizeof l->where);
    static const char *const kw[] = {"dbname", "options", NULL};
    /* not flushed at commit; the prepared claim planned once (generic plan) */
    const char *val[] = {s->url, "-c synchronous_commit=off -c plan_cache_mode=force_generic_plan",
                         NULL};
    l->db = PQconnectdbParams(kw, val, 1);
    s->lease = l;
    if (!l->db)
        return cuzk_error_set(CUZK_ENOMEM, "store %s: out of memory", s->where);
    if (PQstatus(l->db) != CONNECTION_OK)
        return pg_fail(l, "cannot connect", NULL);
    PQsetNoticeProcessor(l->db, pg_notice_quiet, NULL);
    return CUZK_OK;
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
    s->url = strdup(url);
    s->db = s->url ? PQconnectdb(url) : NULL;
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
    if (r == CUZK_OK && !sole)
        r = pg_lease_open(s);
    if (r != CUZK_OK) {
        pg_close(&s->base);
        return r;
    }
    *out = &s->base;
    return CUZK_OK;
}
