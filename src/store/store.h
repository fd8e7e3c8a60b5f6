/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's job journal: every accepted job, its witnesses' sources, the proofs of its
 * finished partitions and its final state, kept so that a restarted daemon re-queues what
 * was unfinished and still answers for what was finished until its retention ends.
 *
 * A store is an ops table behind a handle, so that backends can differ: sqlite.c keeps the
 * journal in a local SQLite file (WAL, synchronous=FULL: every call below that writes is
 * durable when it returns); postgres.c keeps it in a PostgreSQL database (each write one
 * committed transaction). Times are wall-clock seconds (CLOCK_REALTIME), so they span restarts.
 * Proofs and public inputs are stored in this host's in-memory layout (cuzk_proof, cuzk_fr:
 * little-endian limbs), checked by size when read back.
 * Thread safety: every operation may be called from any thread (a backend serialises). */
#ifndef CUZK_STORE_H
#define CUZK_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/engine.h"

/* One job as the journal holds it. */
typedef struct {
    char id[CUZK_JOB_ID_CHARS + 1];
    char key[128];
    int prio;                  /* cuzk_priority */
    int state;                 /* cuzk_job_state: QUEUED until final (RUNNING is not kept) */
    char error[512];           /* reason when failed */
    uint32_t n;                /* partitions */
    uint32_t n_public;
    double submitted, finished;  /* wall clock; finished 0 until final */
    /* n witness sources: src[i] is a path the client named, or (spooled[i]) the name of
     * the spool file holding the uploaded bytes. */
    char **src;
    bool *spooled;
    /* put_job only, may be NULL: data[i] (len[i] bytes) non-NULL for an upload the store
     * keeps itself (the cluster store: src[i] is then "" and spooled[i] false). */
    const unsigned char *const *data;
    const size_t *len;
    /* Read back by list only: which partitions finished, their proofs and public inputs. */
    bool *part_done;           /* n */
    cuzk_proof *proofs;        /* n */
    cuzk_fr *publics;          /* n * n_public */
} store_job;

/* Frees what a store read into j (src and its strings, spooled, part_done, proofs,
 * publics) and zeroes it; data and len are never the store's. */
static inline void store_job_release(store_job *j)
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

typedef struct store store;

/* Called by list for each job, oldest first; a non-zero return stops the listing. */
typedef int (*store_list_fn)(void *arg, const store_job *j);
/* Called by expire for each spool file name of each expired job. */
typedef void (*store_spool_fn)(void *arg, const char *spool_name);

/* One partition claimed by a daemon (claim): the job, the partition, and how many times it
 * has been claimed (1 the first time; more after a lease expired or was given back). */
typedef struct {
    char id[CUZK_JOB_ID_CHARS + 1];
    uint32_t idx;
    uint32_t attempt;
} store_claim;

typedef struct store_cluster_ops store_cluster_ops;

typedef struct {
    const char *name;   /* "sqlite", "postgresql" */
    /* The calls of daemons sharing the store (NULL: a store of one host, SQLite). */
    const store_cluster_ops *cluster;
    /* Records an accepted job (state QUEUED) with its witness sources. */
    cuzk_err (*put_job)(store *s, const store_job *j);
    /* Records partition idx's proof and public inputs; with done_at > 0 the job is also
     * done at that time, in the same commit (its last partition). */
    cuzk_err (*put_part)(store *s, const char *id, uint32_t idx, const cuzk_proof *proof,
                         const cuzk_fr *pub, uint32_t n_public, double done_at);
    /* Records a final state (failed, cancelled, or done without results) at time finished. */
    cuzk_err (*finish)(store *s, const char *id, int state, const char *error, double finished);
    /* Every job, oldest submission first, with its witness sources and results. */
    cuzk_err (*list)(store *s, store_list_fn fn, void *arg);
    /* Deletes the jobs that ended before `before`, calling fn for their spool files first
     * (fn may be NULL); *n_expired (may be NULL) counts the jobs deleted. */
    cuzk_err (*expire)(store *s, double before, store_spool_fn fn, void *arg,
                       unsigned *n_expired);
    /* Counts the jobs the journal holds: all, and those not final. */
    cuzk_err (*count)(store *s, unsigned *all, unsigned *open);
    /* Claims: the work of several daemons on one store. A partition of an open job without
     * a result is free unless a daemon holds a live lease on it; claim takes up to max free
     * ones for owner (a name unique per daemon process), the most urgent job first, then the
     * oldest, then by index, each leased for lease_s seconds of the store's clock, and
     * writes them to out (*n of them). Two claims never return the same partition while its
     * lease lives. renew extends every lease owner holds by lease_s from now (*held: how
     * many it holds, may be NULL); release gives one back (the partition is free at once).
     * The SQLite store serves one host: its leases live in memory and end with it. */
    cuzk_err (*claim)(store *s, const char *owner, double lease_s, store_claim *out,
                      unsigned max, unsigned *n);
    cuzk_err (*renew)(store *s, const char *owner, double lease_s, unsigned *held);
    cuzk_err (*release)(store *s, const char *owner, const char *id, uint32_t idx);
    /* Records the proof of a partition owner claimed (never claimed again); a result already
     * there is kept (the first proof wins). When every partition of the job then has a
     * result, the job is done (finished at done_at) in the same commit, and *completed is
     * true: of all the calls for one job, exactly one completes it. */
    cuzk_err (*put_claimed)(store *s, const char *owner, const char *id, uint32_t idx,
                            const cuzk_proof *proof, const cuzk_fr *pub, uint32_t n_public,
                            double done_at, bool *completed);
    void (*close)(store *s);
} store_ops;

struct store {
    const store_ops *ops;
};

/* ---- several daemons on one store (store_ops.cluster) ---- */

/* A partition claimed with what its prover needs: the job's key, priority, size and time,
 * and the partition's witness source (a path, a spool file name, or the bytes). */
typedef struct {
    char id[CUZK_JOB_ID_CHARS + 1];
    uint32_t idx, attempt;
    char key[128];
    int prio;
    uint32_t n, n_public;
    double submitted;            /* wall clock */
    char *src;                   /* path or spool name ("" for bytes) */
    bool spooled;
    unsigned char *data;         /* the upload's bytes when the store holds them, else NULL */
    size_t len;
} store_work;
void store_work_release(store_work *w);

/* A daemon of the farm as its heartbeat left it. */
typedef struct {
    char owner[96];              /* unique per daemon process */
    char host[96];               /* its node name */
    double started;              /* wall clock */
    double seen_ago;             /* seconds since its last heartbeat (the store's clock) */
    uint64_t parts;              /* partitions it proved */
    double rate;                 /* partitions per minute over its last minute */
    unsigned held;               /* leases it holds */
} store_host;

/* A live lease: which daemon proves which partition, for how long already. */
typedef struct {
    char id[CUZK_JOB_ID_CHARS + 1];
    uint32_t idx, attempt;
    char owner[96];
    double age, left;            /* seconds since the claim, seconds of lease left */
} store_lease;

/* A key of the shared key table: every daemon registers it, by path. */
typedef struct {
    char id[128];
    char path[4096];
    char r1cs[4096];             /* "" for a .zkey */
    unsigned flags;              /* STORE_KEY_* */
} store_key;
#define STORE_KEY_TRUSTED 1u
#define STORE_KEY_CACHE 2u

/* Events wait reports (bits). */
#define STORE_EV_WORK 1u   /* a job or a partition became free */
#define STORE_EV_DONE 2u   /* a job reached a final state (ids in done) */
#define STORE_EV_KEYS 4u   /* the key table changed */

struct store_cluster_ops {
    /* claim's partitions, only of jobs of the given keys (n_keys 0: none are taken), with
     * their sources. out[0..*n) are the caller's to release (store_work_release). */
    cuzk_err (*take)(store *s, const char *owner, double lease_s, const char *const *keys,
                     unsigned n_keys, store_work *out, unsigned max, unsigned *n);
    /* One job (CUZK_ENOTFOUND when the store has none of that id), its results when
     * results and done (part_done, proofs, publics as list gives them; src not read);
     * *n_done its partitions with a result, *n_running those under a live lease. */
    cuzk_err (*get)(store *s, const char *id, bool results, store_job *out, unsigned *n_done,
                    unsigned *n_running);
    /* Ends a job that is not final (state, error, finished); *was its state before (-1: no
     * such job); a final job is left as it is. */
    cuzk_err (*end)(store *s, const char *id, int state, const char *error, double finished,
                    int *was);
    /* Fails the open jobs submitted before `before` with reason; *n how many. */
    cuzk_err (*fail_older)(store *s, double before, const char *reason, double finished,
                           unsigned *n);
    /* Aging: the free partitions of each open job take its priority raised one level per
     * aging_s seconds since its submission (up to critical), as claims order them; *n how
     * many rose. */
    cuzk_err (*age)(store *s, double aging_s, unsigned *n);
    /* out[i]: whether job ids[i] is final or gone. */
    cuzk_err (*ended)(store *s, const char *const *ids, unsigned n, bool *out);
    /* The shared key table: put (replacing the row of that id), delete (CUZK_ENOTFOUND when
     * the table has no such key), list (*out the caller's to free). */
    cuzk_err (*key_put)(store *s, const store_key *k);
    cuzk_err (*key_del)(store *s, const char *id);
    cuzk_err (*keys)(store *s, store_key **out, unsigned *n);
    /* A heartbeat: h's row written (seen: now, on the store's clock). */
    cuzk_err (*beat)(store *s, const store_host *h);
    /* A daemon leaving: its row deleted, its leases given back. */
    cuzk_err (*gone)(store *s, const char *owner);
    /* The daemons seen within the last `within` seconds and the live leases (each array
     * the caller's to free). */
    cuzk_err (*hosts)(store *s, double within, store_host **h, unsigned *n_h,
                      store_lease **l, unsigned *n_l);
    /* Waits up to timeout_s for events (on a connection of its own); *events the bits of
     * STORE_EV_*, done[0..*n_done) the ids of jobs that ended (at most max_done). Without
     * a connection it tries to make one and reports STORE_EV_WORK | STORE_EV_KEYS once it
     * has (events may have been missed). */
    cuzk_err (*wait)(store *s, double timeout_s, unsigned *events,
                     char (*done)[CUZK_JOB_ID_CHARS + 1], unsigned max_done, unsigned *n_done);
};

/* The SQLite journal in directory dir (dir/journal.db, created 0600 when missing). A file
 * that is not a journal, or a damaged one, is refused with an error naming it. */
cuzk_err store_sqlite_open(store **out, const char *dir) CUZK_WUR;
/* The journal in the PostgreSQL database at url (postgresql://... or postgres://..., libpq's
 * URL: user, password, host, port, database, parameters such as sslmode). The schema is
 * created, or migrated to this program's version, at open; a newer one is refused. With
 * sole, the store holds the database's single-daemon lock (a session advisory lock) and
 * is refused while another session holds it: a daemon whose engine does not claim (it
 * recovers every open job as its own) takes it. */
cuzk_err store_postgres_open(store **out, const char *url, bool sole) CUZK_WUR;

static inline cuzk_err store_put_job(store *s, const store_job *j)
{
    return s->ops->put_job(s, j);
}
static inline cuzk_err store_put_part(store *s, const char *id, uint32_t idx,
                                      const cuzk_proof *proof, const cuzk_fr *pub,
                                      uint32_t n_public, double done_at)
{
    return s->ops->put_part(s, id, idx, proof, pub, n_public, done_at);
}
static inline cuzk_err store_finish(store *s, const char *id, int state, const char *error,
                                    double finished)
{
    return s->ops->finish(s, id, state, error, finished);
}
static inline cuzk_err store_list(store *s, store_list_fn fn, void *arg)
{
    return s->ops->list(s, fn, arg);
}
static inline cuzk_err store_expire(store *s, double before, store_spool_fn fn, void *arg,
                                    unsigned *n_expired)
{
    return s->ops->expire(s, before, fn, arg, n_expired);
}
static inline cuzk_err store_count(store *s, unsigned *all, unsigned *open)
{
    return s->ops->count(s, all, open);
}
static inline cuzk_err store_claim_parts(store *s, const char *owner, double lease_s,
                                         store_claim *out, unsigned max, unsigned *n)
{
    return s->ops->claim(s, owner, lease_s, out, max, n);
}
static inline cuzk_err store_renew(store *s, const char *owner, double lease_s, unsigned *held)
{
    return s->ops->renew(s, owner, lease_s, held);
}
static inline cuzk_err store_release(store *s, const char *owner, const char *id, uint32_t idx)
{
    return s->ops->release(s, owner, id, idx);
}
static inline cuzk_err store_put_claimed(store *s, const char *owner, const char *id,
                                         uint32_t idx, const cuzk_proof *proof,
                                         const cuzk_fr *pub, uint32_t n_public, double done_at,
                                         bool *completed)
{
    return s->ops->put_claimed(s, owner, id, idx, proof, pub, n_public, done_at, completed);
}
static inline const store_cluster_ops *store_cluster(const store *s)
{
    return s ? s->ops->cluster : NULL;
}
static inline void store_close(store *s)
{
    if (s)
        s->ops->close(s);
}

#endif
