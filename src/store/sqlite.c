/* SPDX-License-Identifier: Apache-2.0 */
/* The job journal in SQLite (store.h): DIR/journal.db in WAL mode with synchronous=FULL,
 * so that each write below is on disk when it returns. One connection, one mutex. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

#define SCHEMA_VERSION 1

typedef struct {
    store base;
    sqlite3 *db;
    pthread_mutex_t mu;
    char path[4200];
} sq_store;

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, key TEXT NOT NULL,"
    " prio INTEGER NOT NULL, state INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '',"
    " n INTEGER NOT NULL, n_public INTEGER NOT NULL, submitted REAL NOT NULL,"
    " finished REAL NOT NULL DEFAULT 0, seq INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS jobs_seq ON jobs(seq);"
    "CREATE TABLE IF NOT EXISTS witnesses(job TEXT NOT NULL, idx INTEGER NOT NULL,"
    " spooled INTEGER NOT NULL, src TEXT NOT NULL, PRIMARY KEY(job, idx)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS results(job TEXT NOT NULL, idx INTEGER NOT NULL,"
    " proof BLOB NOT NULL, public BLOB NOT NULL, PRIMARY KEY(job, idx)) WITHOUT ROWID;";

static cuzk_err sq_fail(sq_store *s, const char *what)
{
    return cuzk_error_set(CUZK_EIO, "journal %s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static bool exec(sq_store *s, const char *sql)
{
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK;
}

/* Runs a statement with text/int/real/blob arguments bound by the caller; true when done. */
static bool step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW;
}

static cuzk_err sq_put_job(store *base, const store_job *j)
{
    sq_store *s = (sq_store *)base;
    cuzk_err r = CUZK_OK;
    sqlite3_stmt *st = NULL, *sw = NULL;
    pthread_mutex_lock(&s->mu);
    bool ok = exec(s, "BEGIN IMMEDIATE") &&
              sqlite3_prepare_v2(s->db,
                                 "INSERT INTO jobs(id, key, prio, state, n, n_public, submitted,"
                                 " seq) VALUES(?1, ?2, ?3, 0, ?4, ?5, ?6,"
                                 " (SELECT IFNULL(MAX(seq), 0) + 1 FROM jobs))",
                                 -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, j->id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, j->key, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, j->prio);
        sqlite3_bind_int64(st, 4, j->n);
        sqlite3_bind_int64(st, 5, j->n_public);
        sqlite3_bind_double(st, 6, j->submitted);
        ok = step_done(st);
    }
    ok = ok && sqlite3_prepare_v2(s->db,
                                  "INSERT INTO witnesses(job, idx, spooled, src)"
                                  " VALUES(?1, ?2, ?3, ?4)",
                                  -1, &sw, NULL) == SQLITE_OK;
    for (uint32_t i = 0; ok && i < j->n; i++) {
        sqlite3_reset(sw);
        sqlite3_bind_text(sw, 1, j->id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(sw, 2, i);
        sqlite3_bind_int(sw, 3, j->spooled[i]);
        sqlite3_bind_text(sw, 4, j->src[i], -1, SQLITE_STATIC);
        ok = step_done(sw);
    }
    ok = ok && exec(s, "COMMIT");
    if (!ok) {
        r = sq_fail(s, "recording a job");
        exec(s, "ROLLBACK");
    }
    sqlite3_finalize(st);
    sqlite3_finalize(sw);
    pthread_mutex_unlock(&s->mu);
    return r;
}

static bool set_final(sq_store *s, const char *id, int state, const char *error, double fin)
{
    sqlite3_stmt *st = NULL;
    bool ok = sqlite3_prepare_v2(s->db,
                                 "UPDATE jobs SET state = ?2, error = ?3, finished = ?4"
                                 " WHERE id = ?1 AND state < 2",
                                 -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, state);
        sqlite3_bind_text(st, 3, error ? error : "", -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 4, fin);
        ok = step_done(st);
    }
    sqlite3_finalize(st);
    return ok;
}

static cuzk_err sq_put_part(store *base, const char *id, uint32_t idx, const cuzk_proof *proof,
                            const cuzk_fr *pub, uint32_t n_public, double done_at)
{
    sq_store *s = (sq_store *)base;
    cuzk_err r = CUZK_OK;
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&s->mu);
    bool ok = exec(s, "BEGIN IMMEDIATE") &&
              sqlite3_prepare_v2(s->db,
                                 "INSERT OR REPLACE INTO results(job, idx, proof, public)"
                                 " VALUES(?1, ?2, ?3, ?4)",
                                 -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, idx);
        sqlite3_bind_blob(st, 3, proof, (int)sizeof *proof, SQLITE_STATIC);
        sqlite3_bind_blob(st, 4, n_public ? (const void *)pub : "", (int)(sizeof(cuzk_fr) * n_public),
                          SQLITE_STATIC);
        ok = step_done(st);
    }
    if (ok && done_at > 0)
        ok = set_final(s, id, CUZK_JOB_DONE, "", done_at);
    ok = ok && exec(s, "COMMIT");
    if (!ok) {
        r = sq_fail(s, "recording a proof");
        exec(s, "ROLLBACK");
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return r;
}

static cuzk_err sq_finish(store *base, const char *id, int state, const char *error,
                          double finished)
{
    sq_store *s = (sq_store *)base;
    pthread_mutex_lock(&s->mu);
    cuzk_err r = set_final(s, id, state, error, finished) ? CUZK_OK
                                                          : sq_fail(s, "recording a final state");
    pthread_mutex_unlock(&s->mu);
    return r;
}

/* The witnesses and results of j (its id, n and n_public read); false on a bad row. */
static bool load_parts(sq_store *s, store_job *j, sqlite3_stmt *sw, sqlite3_stmt *sr, char *why,
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
    sqlite3_reset(sw);
    sqlite3_bind_text(sw, 1, j->id, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(sw)) == SQLITE_ROW) {
        sqlite3_int64 idx = sqlite3_column_int64(sw, 0);
        const char *src = (const char *)sqlite3_column_text(sw, 2);
        if (idx < 0 || idx >= j->n || !src || j->src[idx]) {
            snprintf(why, wlen, "job %s: a bad witness row (partition %lld)", j->id, (long long)idx);
            return false;
        }
        j->spooled[idx] = sqlite3_column_int(sw, 1) != 0;
        if (!(j->src[idx] = strdup(src))) {
            snprintf(why, wlen, "out of memory");
            return false;
        }
    }
    if (rc != SQLITE_DONE) {
        snprintf(why, wlen, "reading witnesses: %s", sqlite3_errmsg(s->db));
        return false;
    }
    for (uint32_t i = 0; i < j->n; i++)
        if (!j->src[i]) {
            snprintf(why, wlen, "job %s: witness %u is missing", j->id, i);
            return false;
        }
    sqlite3_reset(sr);
    sqlite3_bind_text(sr, 1, j->id, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(sr)) == SQLITE_ROW) {
        sqlite3_int64 idx = sqlite3_column_int64(sr, 0);
        int plen = sqlite3_column_bytes(sr, 1), ulen = sqlite3_column_bytes(sr, 2);
        const void *pp = sqlite3_column_blob(sr, 1), *up = sqlite3_column_blob(sr, 2);
        if (idx < 0 || idx >= j->n || plen != (int)sizeof(cuzk_proof) || !pp ||
            (size_t)ulen != sizeof(cuzk_fr) * j->n_public || (ulen && !up)) {
            snprintf(why, wlen, "job %s: a bad result row (partition %lld)", j->id, (long long)idx);
            return false;
        }
        memcpy(&j->proofs[idx], pp, sizeof(cuzk_proof));
        if (ulen)
            memcpy(j->publics + (size_t)idx * j->n_public, up, (size_t)ulen);
        j->part_done[idx] = true;
    }
    if (rc != SQLITE_DONE) {
        snprintf(why, wlen, "reading results: %s", sqlite3_errmsg(s->db));
        return false;
    }
    return true;
}

static cuzk_err sq_list(store *base, store_list_fn fn, void *arg)
{
    sq_store *s = (sq_store *)base;
    sqlite3_stmt *sj = NULL, *sw = NULL, *sr = NULL;
    char why[600] = "";
    pthread_mutex_lock(&s->mu);
    bool ok = sqlite3_prepare_v2(s->db,
                                 "SELECT id, key, prio, state, error, n, n_public, submitted,"
                                 " finished FROM jobs ORDER BY seq",
                                 -1, &sj, NULL) == SQLITE_OK &&
              sqlite3_prepare_v2(s->db,
                                 "SELECT idx, spooled, src FROM witnesses WHERE job = ?1", -1,
                                 &sw, NULL) == SQLITE_OK &&
              sqlite3_prepare_v2(s->db,
                                 "SELECT idx, proof, public FROM results WHERE job = ?1", -1,
                                 &sr, NULL) == SQLITE_OK;
    if (!ok)
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(s->db));
    int rc = SQLITE_DONE;
    while (ok && (rc = sqlite3_step(sj)) == SQLITE_ROW) {
        store_job j;
        memset(&j, 0, sizeof j);
        const char *id = (const char *)sqlite3_column_text(sj, 0);
        const char *key = (const char *)sqlite3_column_text(sj, 1);
        const char *err = (const char *)sqlite3_column_text(sj, 4);
        sqlite3_int64 n = sqlite3_column_int64(sj, 5), np = sqlite3_column_int64(sj, 6);
        j.prio = sqlite3_column_int(sj, 2);
        j.state = sqlite3_column_int(sj, 3);
        if (!id || !cuzk_job_id_valid(id) || !key || strlen(key) >= sizeof j.key || n < 1 ||
            n > (1 << 24) || np < 0 || np > (1 << 24) || j.prio < 0 || j.prio >= CUZK_PRIO_COUNT ||
            j.state < 0 || j.state > CUZK_JOB_CANCELLED) {
            snprintf(why, sizeof why, "a bad job row (id \"%.40s\")", id ? id : "");
            ok = false;
            break;
        }
        memcpy(j.id, id, sizeof j.id);
        snprintf(j.key, sizeof j.key, "%s", key);
        snprintf(j.error, sizeof j.error, "%s", err ? err : "");
        j.n = (uint32_t)n;
        j.n_public = (uint32_t)np;
        j.submitted = sqlite3_column_double(sj, 7);
        j.finished = sqlite3_column_double(sj, 8);
        ok = load_parts(s, &j, sw, sr, why, sizeof why);
        int stop = ok ? fn(arg, &j) : 0;
        store_job_release(&j);
        if (stop)
            break;
    }
    if (ok && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(s->db));
        ok = false;
    }
    sqlite3_finalize(sj);
    sqlite3_finalize(sw);
    sqlite3_finalize(sr);
    pthread_mutex_unlock(&s->mu);
    return ok ? CUZK_OK : cuzk_error_set(CUZK_EFORMAT, "journal %s: %s", s->path, why);
}

static cuzk_err sq_expire(store *base, double before, store_spool_fn fn, void *arg,
                          unsigned *n_expired)
{
    sq_store *s = (sq_store *)base;
    sqlite3_stmt *ss = NULL, *sd = NULL;
    if (n_expired)
        *n_expired = 0;
    pthread_mutex_lock(&s->mu);
    bool ok = exec(s, "BEGIN IMMEDIATE") &&
              exec(s, "CREATE TEMP TABLE IF NOT EXISTS gone(id TEXT PRIMARY KEY)") &&
              exec(s, "DELETE FROM temp.gone") &&
              sqlite3_prepare_v2(s->db,
                                 "INSERT INTO temp.gone SELECT id FROM jobs"
                                 " WHERE state >= 2 AND finished < ?1",
                                 -1, &sd, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_double(sd, 1, before);
        ok = step_done(sd);
    }
    int changes = ok ? sqlite3_changes(s->db) : 0;
    if (ok && changes > 0 && fn) {
        ok = sqlite3_prepare_v2(s->db,
                                "SELECT src FROM witnesses WHERE spooled != 0 AND job IN"
                                " (SELECT id FROM temp.gone)",
                                -1, &ss, NULL) == SQLITE_OK;
        int rc;
        while (ok && (rc = sqlite3_step(ss)) == SQLITE_ROW)
            fn(arg, (const char *)sqlite3_column_text(ss, 0));
        ok = ok && rc == SQLITE_DONE;
    }
    ok = ok && (changes == 0 ||
                (exec(s, "DELETE FROM witnesses WHERE job IN (SELECT id FROM temp.gone)") &&
                 exec(s, "DELETE FROM results WHERE job IN (SELECT id FROM temp.gone)") &&
                 exec(s, "DELETE FROM jobs WHERE id IN (SELECT id FROM temp.gone)")));
    ok = ok && exec(s, "COMMIT");
    cuzk_err r = CUZK_OK;
    if (!ok) {
        r = sq_fail(s, "expiring jobs");
        exec(s, "ROLLBACK");
    } else if (n_expired) {
        *n_expired = (unsigned)changes;
    }
    sqlite3_finalize(ss);
    sqlite3_finalize(sd);
    pthread_mutex_unlock(&s->mu);
    return r;
}

static cuzk_err sq_count(store *base, unsigned *all, unsigned *open)
{
    sq_store *s = (sq_store *)base;
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&s->mu);
    bool ok = sqlite3_prepare_v2(s->db,
                                 "SELECT COUNT(*), IFNULL(SUM(state < 2), 0) FROM jobs", -1,
                                 &st, NULL) == SQLITE_OK &&
              sqlite3_step(st) == SQLITE_ROW;
    if (ok) {
        *all = (unsigned)sqlite3_column_int64(st, 0);
        *open = (unsigned)sqlite3_column_int64(st, 1);
    }
    cuzk_err r = ok ? CUZK_OK : sq_fail(s, "counting jobs");
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return r;
}

/* Claims on one host: the leases are a table of this connection's own (TEMP: in memory),
 * gone with the process, as are the workers that held them. */
static double sq_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool sq_leases(sq_store *s)
{
    return exec(s, "CREATE TEMP TABLE IF NOT EXISTS leases(job TEXT NOT NULL,"
                   " idx INTEGER NOT NULL, owner TEXT NOT NULL, until REAL NOT NULL,"
                   " attempts INTEGER NOT NULL, PRIMARY KEY(job, idx))");
}

static cuzk_err sq_claim(store *base, const char *owner, double lease_s, store_claim *out,
                         unsigned max, unsigned *n)
{
    sq_store *s = (sq_store *)base;
    sqlite3_stmt *sc = NULL, *sl = NULL;
    *n = 0;
    double now = sq_now();
    pthread_mutex_lock(&s->mu);
    bool ok = sq_leases(s) && exec(s, "BEGIN IMMEDIATE") &&
              sqlite3_prepare_v2(s->db,
                                 "SELECT w.job, w.idx FROM witnesses w JOIN jobs j ON j.id = w.job"
                                 " WHERE j.state = 0 AND NOT EXISTS (SELECT 1 FROM results r"
                                 " WHERE r.job = w.job AND r.idx = w.idx) AND NOT EXISTS"
                                 " (SELECT 1 FROM temp.leases l WHERE l.job = w.job AND"
                                 " l.idx = w.idx AND l.until >= ?1)"
                                 " ORDER BY j.prio DESC, j.seq, w.idx LIMIT ?2",
                                 -1, &sc, NULL) == SQLITE_OK &&
              sqlite3_prepare_v2(s->db,
                                 "INSERT INTO temp.leases(job, idx, owner, until, attempts)"
                                 " VALUES(?1, ?2, ?3, ?4, 1) ON CONFLICT(job, idx) DO UPDATE"
                                 " SET owner = ?3, until = ?4, attempts = attempts + 1"
                                 " RETURNING attempts",
                                 -1, &sl, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_double(sc, 1, now);
        sqlite3_bind_int64(sc, 2, max);
    }
    int rc = SQLITE_DONE;
    while (ok && *n < max && (rc = sqlite3_step(sc)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(sc, 0);
        if (!id || !cuzk_job_id_valid(id))
            continue;
        store_claim *c = &out[*n];
        memcpy(c->id, id, sizeof c->id);
        c->idx = (uint32_t)sqlite3_column_int64(sc, 1);
        sqlite3_reset(sl);
        sqlite3_bind_text(sl, 1, c->id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(sl, 2, c->idx);
        sqlite3_bind_text(sl, 3, owner, -1, SQLITE_STATIC);
        sqlite3_bind_double(sl, 4, now + lease_s);
        ok = sqlite3_step(sl) == SQLITE_ROW;
        if (ok) {
            c->attempt = (uint32_t)sqlite3_column_int64(sl, 0);
            (*n)++;
        }
        sqlite3_reset(sl);
    }
    ok = ok && (rc == SQLITE_DONE || rc == SQLITE_ROW) && exec(s, "COMMIT");
    cuzk_err r = CUZK_OK;
    if (!ok) {
        r = sq_fail(s, "claiming partitions");
        exec(s, "ROLLBACK");
        *n = 0;
    }
    sqlite3_finalize(sc);
    sqlite3_finalize(sl);
    pthread_mutex_unlock(&s->mu);
    return r;
}

static cuzk_err sq_renew(store *base, const char *owner, double lease_s, unsigned *held)
{
    sq_store *s = (sq_store *)base;
    sqlite3_stmt *st = NULL;
    double now = sq_now();
    pthread_mutex_lock(&s->mu);
    bool ok = sq_leases(s) &&
              sqlite3_prepare_v2(s->db,
                                 "UPDATE temp.leases SET until = ?2 WHERE owner = ?1 AND"
                                 " until >= ?3",
                                 -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 2, now + lease_s);
        sqlite3_bind_double(st, 3, now);
        ok = step_done(st);
    }
    if (ok && held)
        *held = (unsigned)sqlite3_changes(s->db);
    cuzk_err r = ok ? CUZK_OK : sq_fail(s, "renewing leases");
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return r;
}

/* (the caller holds the mutex) */
static bool sq_unlease(sq_store *s, const char *owner, const char *id, uint32_t idx)
{
    sqlite3_stmt *st = NULL;
    bool ok = sq_leases(s) &&
              sqlite3_prepare_v2(s->db,
                                 "UPDATE temp.leases SET owner = '', until = 0"
                                 " WHERE job = ?2 AND idx = ?3 AND owner = ?1",
                                 -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, idx);
        ok = step_done(st);
    }
    sqlite3_finalize(st);
    return ok;
}

static cuzk_err sq_release(store *base, const char *owner, const char *id, uint32_t idx)
{
    sq_store *s = (sq_store *)base;
    pthread_mutex_lock(&s->mu);
    cuzk_err r = sq_unlease(s, owner, id, idx) ? CUZK_OK : sq_fail(s, "releasing a partition");
    pthread_mutex_unlock(&s->mu);
    return r;
}

static cuzk_err sq_put_claimed(store *base, const char *owner, const char *id, uint32_t idx,
                               const cuzk_proof *proof, const cuzk_fr *pub, uint32_t n_public,
                               double done_at, bool *completed)
{
    sq_store *s = (sq_store *)base;
    sqlite3_stmt *st = NULL, *sd = NULL;
    *completed = false;
    pthread_mutex_lock(&s->mu);
    bool ok = sq_leases(s) && exec(s, "BEGIN IMMEDIATE") &&
              sqlite3_prepare_v2(s->db,
                                 "INSERT OR IGNORE INTO results(job, idx, proof, public)"
                                 " SELECT ?1, ?2, ?3, ?4 WHERE EXISTS"
                                 " (SELECT 1 FROM jobs WHERE id = ?1)",
                                 -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, idx);
        sqlite3_bind_blob(st, 3, proof, (int)sizeof *proof, SQLITE_STATIC);
        sqlite3_bind_blob(st, 4, n_public ? (const void *)pub : "",
                          (int)(sizeof(cuzk_fr) * n_public), SQLITE_STATIC);
        ok = step_done(st);
    }
    ok = ok && sq_unlease(s, owner, id, idx) &&
         sqlite3_prepare_v2(s->db,
                            "UPDATE jobs SET state = 2, finished = ?2 WHERE id = ?1 AND"
                            " state = 0 AND (SELECT COUNT(*) FROM results WHERE job = ?1) = n",
                            -1, &sd, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(sd, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_double(sd, 2, done_at);
        ok = step_done(sd);
    }
    bool done = ok && sqlite3_changes(s->db) == 1;
    ok = ok && exec(s, "COMMIT");
    cuzk_err r = CUZK_OK;
    if (!ok) {
        r = sq_fail(s, "recording a proof");
        exec(s, "ROLLBACK");
    } else {
        *completed = done;
    }
    sqlite3_finalize(st);
    sqlite3_finalize(sd);
    pthread_mutex_unlock(&s->mu);
    return r;
}

static void sq_close(store *base)
{
    sq_store *s = (sq_store *)base;
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static const store_ops sq_ops = {
    .name = "sqlite",     .put_job = sq_put_job,   .put_part = sq_put_part,
    .finish = sq_finish,  .list = sq_list,         .expire = sq_expire,
    .count = sq_count,    .claim = sq_claim,       .renew = sq_renew,
    .release = sq_release, .put_claimed = sq_put_claimed, .close = sq_close,
};

cuzk_err store_sqlite_open(store **out, const char *dir)
{
    *out = NULL;
    sq_store *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_error_set(CUZK_ENOMEM, "journal: out of memory");
    s->base.ops = &sq_ops;
    pthread_mutex_init(&s->mu, NULL);
    int w = snprintf(s->path, sizeof s->path, "%s/journal.db", dir);
    if (w < 0 || (size_t)w >= sizeof s->path) {
        free(s);
        return cuzk_error_set(CUZK_EINVAL, "journal: directory name too long");
    }
    /* created 0600 (and never through a symbolic link) before SQLite opens it */
    int fd = open(s->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        cuzk_err r = cuzk_error_set(CUZK_EIO, "journal %s: %s", s->path, strerror(errno));
        free(s);
        return r;
    }
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    close(fd);
    if (!regular) {
        free(s);
        return cuzk_error_set(CUZK_EIO, "journal %s: not a regular file", s->path);
    }
    cuzk_err r = CUZK_OK;
    if (sqlite3_open_v2(s->path, &s->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW,
                        NULL) != SQLITE_OK) {
        r = cuzk_error_set(CUZK_EIO, "journal %s: %s", s->path,
                           s->db ? sqlite3_errmsg(s->db) : "cannot open");
    } else {
        sqlite3_busy_timeout(s->db, 5000);
        sqlite3_stmt *qc = NULL;
        char res[200] = "";
        /* the journal mode first: it is where a file that is no database shows */
        bool ok = exec(s, "PRAGMA journal_mode=WAL") && exec(s, "PRAGMA synchronous=FULL") &&
                  sqlite3_prepare_v2(s->db, "PRAGMA quick_check", -1, &qc, NULL) == SQLITE_OK &&
                  sqlite3_step(qc) == SQLITE_ROW;
        if (ok)
            snprintf(res, sizeof res, "%s", (const char *)sqlite3_column_text(qc, 0));
        sqlite3_finalize(qc);
        if (!ok) {
            r = cuzk_error_set(CUZK_EFORMAT, "journal %s: not a usable journal: %s", s->path,
                               sqlite3_errmsg(s->db));
        } else if (strcmp(res, "ok") != 0) {
            r = cuzk_error_set(CUZK_EFORMAT, "journal %s: damaged: %.120s", s->path, res);
        } else if (!exec(s, schema)) {
            r = cuzk_error_set(CUZK_EFORMAT, "journal %s: cannot make its tables: %s", s->path,
                               sqlite3_errmsg(s->db));
        } else {
            sqlite3_stmt *sv = NULL;
            int ver = -1;
            if (sqlite3_prepare_v2(s->db, "SELECT v FROM meta WHERE k = 'schema'", -1, &sv,
                                   NULL) == SQLITE_OK &&
                sqlite3_step(sv) == SQLITE_ROW)
                ver = sqlite3_column_int(sv, 0);
            sqlite3_finalize(sv);
            if (ver == -1 && !exec(s, "INSERT INTO meta(k, v) VALUES('schema', 1)"))
                r = sq_fail(s, "writing its version");
            else if (ver != -1 && ver != SCHEMA_VERSION)
                r = cuzk_error_set(CUZK_EFORMAT,
                                   "journal %s: schema version %d, this program reads %d",
                                   s->path, ver, SCHEMA_VERSION);
        }
    }
    if (r != CUZK_OK) {
        sq_close(&s->base);
        return r;
    }
    *out = &s->base;
    return CUZK_OK;
}
