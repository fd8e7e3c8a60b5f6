/* SPDX-License-Identifier: Apache-2.0 */
/* The engine in a farm (cfg.store a PostgreSQL URL): several daemons share the store's
 * queue. A job accepted by any of them is only rows there; each daemon's claimer takes the
 * next free partitions (store take: FOR UPDATE SKIP LOCKED, the most urgent and oldest job
 * first) as its pipeline has room for them, only of the keys it holds, under a lease its
 * heartbeat renews; each claim becomes a shadow job of this engine (its other partitions
 * marked done, as a recovered job's), proved by the usual loaders, devices and finalisers,
 * and its proof recorded with store put_claimed, which completes the job exactly once. A
 * lease that runs out (a daemon gone) puts its partition back for any daemon. The listener
 * thread LISTENs: new work wakes the claimer, an ended job wakes long polls and stops the
 * shadows of a job cancelled or failed elsewhere. Queries and cancels read and write the
 * store. Shadow jobs are local: they never count as jobs of this engine's own. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cuzk/params.h"
#include "engine/engine_internal.h"

#define CLUSTER_TAKE_MAX 64     /* partitions one claim takes at most */
#define CLUSTER_POLL_S 2.0      /* an idle claimer looks again (leases that ran out) */
#define CLUSTER_KEYS_S 10.0     /* the key table read again at least this often */

/* ---- the key table ---- */

cuzk_err cluster_key_put(cuzk_engine *e, const char *id)
{
    const store_cluster_ops *cl = store_cluster(e->st);
    if (!cl)
        return CUZK_OK;
    store_key k;
    memset(&k, 0, sizeof k);
    pthread_mutex_lock(&e->mu);
    key_entry *ke = key_find(e, id);
    if (ke) {
        snprintf(k.id, sizeof k.id, "%s", ke->id);
        snprintf(k.path, sizeof k.path, "%s", ke->path);
        snprintf(k.r1cs, sizeof k.r1cs, "%s", ke->r1cs);
        k.flags = (ke->pflags & CUZK_PARAMS_TRUSTED ? STORE_KEY_TRUSTED : 0) |
                  (ke->pflags & CUZK_PARAMS_CACHE ? STORE_KEY_CACHE : 0);
    }
    pthread_mutex_unlock(&e->mu);
    if (!ke)
        return CUZK_OK;
    return cl->key_put(e->st, &k);
}

cuzk_err cluster_key_del(cuzk_engine *e, const char *id)
{
    const store_cluster_ops *cl = store_cluster(e->st);
    return cl ? cl->key_del(e->st, id) : CUZK_OK;
}

void cluster_keys_sync(cuzk_engine *e)
{
    const store_cluster_ops *cl = store_cluster(e->st);
    store_key *ks = NULL;
    unsigned n = 0;
    if (cl->keys(e->st, &ks, &n) != CUZK_OK) {
        LOG(e, CUZK_LOG_WARN, "event=cluster_keys_failed reason=\"%s\"", cuzk_error_detail());
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        cuzk_engine_key_info info;
        if (cuzk_engine_key_get(e, &info, ks[i].id) == CUZK_OK && !strcmp(info.path, ks[i].path))
            continue;
        cuzk_engine_key_opts o = {ks[i].r1cs[0] ? ks[i].r1cs : NULL,
                                  (ks[i].flags & STORE_KEY_TRUSTED) != 0,
                                  (ks[i].flags & STORE_KEY_CACHE) != 0};
        cuzk_err r = key_add_local(e, &info, ks[i].id, ks[i].path, &o);
        LOG(e, r == CUZK_OK ? CUZK_LOG_INFO : CUZK_LOG_WARN,
            "event=cluster_key key=%s path=%s%s%s%s", ks[i].id, ks[i].path,
            r == CUZK_OK ? "" : " error=\"", r == CUZK_OK ? "" : cuzk_error_detail(),
            r == CUZK_OK ? "" : "\"");
    }
    /* keys the table no longer has (removed on another daemon) */
    char gone[64][128];
    unsigned n_gone = 0;
    pthread_mutex_lock(&e->mu);
    for (key_entry *k = e->keys; k && n_gone < 64; k = k->next) {
        if (!k->registered)
            continue;
        bool there = false;
        for (unsigned i = 0; i < n && !there; i++)
            there = !strcmp(ks[i].id, k->id);
        if (!there)
            snprintf(gone[n_gone++], sizeof gone[0], "%s", k->id);
    }
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < n_gone; i++)
        if (key_remove_local(e, gone[i]) == CUZK_OK)
            LOG(e, CUZK_LOG_INFO, "event=cluster_key_removed key=%s", gone[i]);
    free(ks);
}

/* ---- claims become shadow jobs ---- */

/* Leases this engine holds for partitions it still proves: claimed, not yet recorded, of
 * shadow jobs still open (lock held). */
static unsigned cluster_held(cuzk_engine *e)
{
    unsigned n = 0;
    for (job *j = e->jobs; j; j = j->next)
        if (j->shadow && !is_final(j->state) && j->n_claimed > j->n_recorded)
            n += (unsigned)(j->n_claimed - j->n_recorded);
    return n;
}

/* Partitions claimed but not yet taken by a loader (lock held). */
static unsigned cluster_waiting(cuzk_engine *e)
{
    unsigned w = 0;
    for (int pr = 0; pr < CUZK_PRIO_COUNT; pr++)
        for (job *j = e->qhead[pr]; j; j = j->qnext)
            for (size_t i = j->next_part; j->pdone && i < j->n; i++)
                w += !j->pdone[i];
    return w;
}

/* Gives a claim back at once (the partition is free for any daemon). */
static void cluster_unclaim(cuzk_engine *e, const store_work *w, const char *why)
{
    LOG(e, CUZK_LOG_WARN, "event=claim_released job=%s part=%u reason=\"%s\"", w->id, w->idx,
        why);
    if (store_release(e->st, e->owner, w->id, w->idx) != CUZK_OK)
        LOG(e, CUZK_LOG_WARN, "event=claim_release_failed job=%s part=%u reason=\"%s\"", w->id,
            w->idx, cuzk_error_detail());
}

/* The shadow job of the claims w[0..n) (one job's), linked and queued. Lock not held. */
static void cluster_shadow(cuzk_engine *e, store_work *w, unsigned n)
{
    job *j = calloc(1, sizeof *j);
    size_t jn = w[0].n;
    bool ok = j != NULL;
    if (ok) {
        j->shadow = true;
        memcpy(j->id, w[0].id, sizeof j->id);
        snprintf(j->key_id, sizeof j->key_id, "%s", w[0].key);
        j->prio = (cuzk_priority)w[0].prio;
        j->n = jn;
        j->n_public = w[0].n_public;
        j->paths = calloc(jn, sizeof *j->paths);
        j->data = calloc(jn, sizeof *j->data);
        j->len = calloc(jn, sizeof *j->len);
        j->spool = calloc(jn, sizeof *j->spool);
        j->pdone = malloc(jn * sizeof *j->pdone);
        j->fds = malloc(jn * sizeof *j->fds);
        j->proofs = calloc(jn, sizeof *j->proofs);
        ok = j->paths && j->data && j->len && j->spool && j->pdone && j->fds && j->proofs;
    }
    for (size_t i = 0; ok && i < jn; i++) {
        j->pdone[i] = true;
        j->fds[i] = -1;
    }
    char werr[420] = "";
    for (unsigned c = 0; ok && c < n; c++) {
        uint32_t i = w[c].idx;
        if (w[c].n != jn || i >= jn || !j->pdone[i])
            continue;
        j->pdone[i] = false;
        j->n_claimed++;
        if (w[c].attempt > 1)
            j->reclaimed++;
        if (w[c].data) {
            j->data[i] = w[c].data;   /* taken */
            j->len[i] = w[c].len;
            w[c].data = NULL;
        } else if (w[c].spooled) {
            ok = (j->spool[i] = strdup(w[c].src)) != NULL;
        } else {
            ok = (j->paths[i] = strdup(w[c].src)) != NULL;
            /* a path on storage every host sees, opened here as confined as at submission */
            if (ok && !werr[0] && witness_open(e, j->paths[i], &j->fds[i]) != CUZK_OK)
                snprintf(werr, sizeof werr, "witness %u on %.64s: %.300s", i, e->node,
                         cuzk_error_detail());
        }
    }
    if (!ok) {
        for (unsigned c = 0; c < n; c++)
            cluster_unclaim(e, &w[c], "out of memory");
        if (j) {
            j->state = CUZK_JOB_CANCELLED;
            job_free(e, j);
        }
        return;
    }
    pthread_mutex_lock(&e->mu);
    key_entry *k = key_find(e, j->key_id);
    j->submitted = engine_time_of(e, w[0].submitted);
    j->seq = e->next_seq++;
    e->c_claims += j->n_claimed;
    e->c_reclaims += j->reclaimed;
    if (!k || k->n_public != j->n_public || !e->accepting) {
        pthread_mutex_unlock(&e->mu);
        for (unsigned c = 0; c < n; c++)
            cluster_unclaim(e, &w[c], !e->accepting ? "shutting down"
                                      : !k          ? "the key is not registered here"
                                                    : "the key has another number of public "
                                                      "inputs here");
        j->state = CUZK_JOB_CANCELLED;
        job_free(e, j);
        return;
    }
    if (j->n_public && !(j->publics = calloc(jn * j->n_public, sizeof(cuzk_fr))))
        snprintf(werr, sizeof werr, "out of memory");
    j->key = k;
    k->refs++;
    j->state = CUZK_JOB_QUEUED;
    e->jobs_open++;
    job_link(e, j);
    for (unsigned c = 0; c < n; c++)
        LOG(e, CUZK_LOG_INFO, "event=claim job=%s part=%u attempt=%u", w[c].id, w[c].idx,
            w[c].attempt);
    if (werr[0])   /* the whole job fails: this witness cannot be read by this host */
        job_finish(e, j, CUZK_JOB_FAILED, werr);
    pthread_cond_broadcast(&e->cv_load);
    pthread_mutex_unlock(&e->mu);
}

/* The ids of the keys whose partitions this engine may take (lock held); *n of them. */
static unsigned cluster_key_ids(cuzk_engine *e, const char **ids, unsigned cap)
{
    unsigned n = 0;
    for (key_entry *k = e->keys; k && n < cap; k = k->next)
        if (k->registered && k->key_bytes + k->part_bytes <= e->cfg.memory_budget)
            ids[n++] = k->id;
    return n;
}

static void *claimer_main(void *arg)
{
    cuzk_engine *e = arg;
    const store_cluster_ops *cl = store_cluster(e->st);
    store_work *w = calloc(CLUSTER_TAKE_MAX, sizeof *w);
    char (*kid)[128] = calloc(256, sizeof *kid);
    const char **kp = calloc(256, sizeof *kp);
    double looked = -1e9;
    pthread_mutex_lock(&e->mu);
    while (!e->stop && w && kid && kp) {
        unsigned room = e->cfg.lookahead + e->cfg.loader_threads;
        unsigned have = cluster_waiting(e) + e->n_load + e->n_ready;
        unsigned want = have < room ? room - have : 0;
        double now = engine_now(e);
        if (want == 0 || !e->accepting || (!e->work_hint && now - looked < CLUSTER_POLL_S)) {
            struct timespec ts;
            double left = want == 0 || !e->accepting ? 1.0 : CLUSTER_POLL_S - (now - looked);
            engine_deadline(&ts, left > 0.01 ? left : 0.01);
            pthread_cond_timedwait(want == 0 ? &e->cv_load : &e->cv_claim, &e->mu, &ts);
            continue;
        }
        e->work_hint = false;
        if (want > CLUSTER_TAKE_MAX)
            want = CLUSTER_TAKE_MAX;
        const char *ids[256];
        unsigned nk = cluster_key_ids(e, ids, 256);
        for (unsigned i = 0; i < nk; i++) {
            snprintf(kid[i], sizeof kid[i], "%s", ids[i]);
            kp[i] = kid[i];
        }
        pthread_mutex_unlock(&e->mu);
        unsigned got = 0;
        double t0 = engine_mono_s();
        cuzk_err r = nk ? cl->take(e->st, e->owner, e->lease_s, kp, nk, w, want, &got)
                        : CUZK_OK;
        double t1 = engine_mono_s();
        char why[300];
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        pthread_mutex_lock(&e->mu);
        looked = engine_now(e);
        if (nk) {
            e->c_claim_calls++;
            e->claim_s += t1 - t0;
        }
        if (r != CUZK_OK) {
            e->c_store_errors++;
            cluster_store_state(e, false, why);
        } else if (nk) {
            cluster_store_state(e, true, NULL);
        }
        if (got == 0)
            continue;
        pthread_mutex_unlock(&e->mu);
        /* one shadow job per job among the claims (they come ordered by job) */
        for (unsigned a = 0; a < got;) {
            unsigned b = a + 1;
            while (b < got && !strcmp(w[b].id, w[a].id))
                b++;
            cluster_shadow(e, w + a, b - a);
            a = b;
        }
        for (unsigned i = 0; i < got; i++)
            store_work_release(&w[i]);
        pthread_mutex_lock(&e->mu);
        looked = -1e9;   /* there was work: look again at once */
    }
    pthread_mutex_unlock(&e->mu);
    free(w);
    free(kid);
    free(kp);
    return NULL;
}

/* ---- the state of the store ---- */

void cluster_store_state(cuzk_engine *e, bool up, const char *why)
{
    if (up && e->store_down)
        LOG(e, CUZK_LOG_INFO, "event=store_up");
    else if (!up && !e->store_down)
        LOG(e, CUZK_LOG_WARN, "event=store_down reason=\"%s\"", why ? why : "");
    if (!up)
        snprintf(e->store_why, sizeof e->store_why, "%.290s", why ? why : "");
    e->store_down = !up;
}

/* ---- the heartbeat: leases renewed, the host's row, jobs ended elsewhere ---- */

/* Shadow jobs still open whose job ended in the store (cancelled, failed, done by others)
 * stop here: their partitions are not needed. Lock held; released inside. */
static void cluster_drop_ended(cuzk_engine *e, const char (*ids)[CUZK_JOB_ID_CHARS + 1],
                               unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        for (job *j = e->jobs; j; j = j->next)
            if (j->shadow && !is_final(j->state) && !j->committing_done &&
                !memcmp(j->id, ids[i], CUZK_JOB_ID_CHARS))
                job_finish_ex(e, j, CUZK_JOB_CANCELLED, "ended in the store", false);
}

/* Partitions per minute over the last minute (the ring of completion times). Lock held. */
static double cluster_rate(cuzk_engine *e)
{
    double now = engine_now(e);
    unsigned n = 0;
    for (unsigned i = 0; i < CLUSTER_RING; i++)
        n += e->cl_ring[i] > 0 && now - e->cl_ring[i] <= 60.0;
    double span = now < 60.0 ? (now > 1.0 ? now : 1.0) : 60.0;
    return n * 60.0 / span;
}

void cluster_part_done(cuzk_engine *e)
{
    e->cl_ring[e->cl_ring_i++ % CLUSTER_RING] = engine_now(e);
}

static void *beat_main(void *arg)
{
    cuzk_engine *e = arg;
    const store_cluster_ops *cl = store_cluster(e->st);
    double period = e->lease_s / 3 > 0.2 ? e->lease_s / 3 : 0.2;
    double keys_at = engine_now(e);
    char (*ids)[CUZK_JOB_ID_CHARS + 1] = calloc(1024, sizeof *ids);
    const char **idp = calloc(1024, sizeof *idp);
    bool *ended = calloc(1024, sizeof *ended);
    pthread_mutex_lock(&e->mu);
    while (!e->stop && ids && idp && ended) {
        struct timespec ts;
        engine_deadline(&ts, period);
        pthread_cond_timedwait(&e->cv_beat, &e->mu, &ts);
        if (e->stop)
            break;
        store_host h;
        memset(&h, 0, sizeof h);
        snprintf(h.owner, sizeof h.owner, "%s", e->owner);
        snprintf(h.host, sizeof h.host, "%s", e->node);
        h.started = e->started_wall;
        h.parts = e->c_parts;
        h.rate = cluster_rate(e);
        h.held = cluster_held(e);
        unsigned n = 0;
        for (job *j = e->jobs; j && n < 1024; j = j->next)
            if (j->shadow && !is_final(j->state)) {
                memcpy(ids[n], j->id, sizeof ids[n]);
                idp[n] = ids[n];
                n++;
            }
        bool sync = e->keys_hint || engine_now(e) - keys_at >= CLUSTER_KEYS_S;
        e->keys_hint = false;
        unsigned local_held = h.held;
        pthread_mutex_unlock(&e->mu);

        unsigned held = 0;
        cuzk_err r = store_renew(e->st, e->owner, e->lease_s, &held);
        if (r == CUZK_OK)
            r = cl->beat(e->st, &h);
        if (r == CUZK_OK && n)
            r = cl->ended(e->st, idp, n, ended);
        char why[300];
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        if (r == CUZK_OK && sync) {
            cluster_keys_sync(e);
            keys_at = engine_now(e);
        }
        pthread_mutex_lock(&e->mu);
        if (r != CUZK_OK) {
            e->c_store_errors++;
            cluster_store_state(e, false, why);
            continue;
        }
        cluster_store_state(e, true, NULL);
        /* leases that ran out under this daemon (a long outage, a stall): another daemon
         * may prove those partitions too; the first proof recorded wins */
        unsigned now_held = cluster_held(e);
        if (held < local_held && held < now_held) {
            unsigned lost = (local_held < now_held ? local_held : now_held) - held;
            e->c_lease_lost += lost;
            LOG(e, CUZK_LOG_WARN, "event=lease_lost partitions=%u held=%u", lost, held);
        }
        unsigned m = 0;
        for (unsigned i = 0; i < n; i++)
            if (ended[i])
                memmove(ids[m++], ids[i], sizeof ids[0]);
        cluster_drop_ended(e, (const char (*)[CUZK_JOB_ID_CHARS + 1])ids, m);
    }
    pthread_mutex_unlock(&e->mu);
    free(ids);
    free(idp);
    free(ended);
    return NULL;
}

/* ---- the listener: LISTEN cuzk_work, cuzk_done, cuzk_keys ---- */

static void *listen_main(void *arg)
{
    cuzk_engine *e = arg;
    const store_cluster_ops *cl = store_cluster(e->st);
    char done[64][CUZK_JOB_ID_CHARS + 1];
    for (;;) {
        pthread_mutex_lock(&e->mu);
        bool stop = e->stop;
        pthread_mutex_unlock(&e->mu);
        if (stop)
            break;
        unsigned ev = 0, n_done = 0;
        cuzk_err r = cl->wait(e->st, 0.5, &ev, done, 64, &n_done);
        char why[300];
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        pthread_mutex_lock(&e->mu);
        if (r != CUZK_OK) {   /* (the store's state is the other calls' to say) */
            e->c_store_errors++;
            if (!e->store_down)
                LOG(e, CUZK_LOG_DEBUG, "event=listen_failed reason=\"%s\"", why);
        }
        if (ev & STORE_EV_WORK) {
            e->work_hint = true;
            pthread_cond_broadcast(&e->cv_claim);
        }
        if (ev & STORE_EV_KEYS)
            e->keys_hint = true;
        if (ev & STORE_EV_DONE) {
            e->c_ended_seen++;
            cluster_drop_ended(e, (const char (*)[CUZK_JOB_ID_CHARS + 1])done, n_done);
            pthread_cond_broadcast(&e->cv_job);
        }
        pthread_mutex_unlock(&e->mu);
    }
    return NULL;
}

/* ---- start, stop ---- */

cuzk_err cluster_start(cuzk_engine *e)
{
    if (!store_cluster(e->st))
        return CUZK_OK;
    e->cluster = true;
    e->lease_s = e->cfg.lease_s > 0 ? e->cfg.lease_s : 30;
    e->db_upload_max = e->cfg.db_upload_max ? e->cfg.db_upload_max : (uint64_t)16 << 20;
    e->started_wall = engine_wall();
    if (e->cfg.node_name && *e->cfg.node_name)
        snprintf(e->node, sizeof e->node, "%.64s", e->cfg.node_name);
    else if (gethostname(e->node, 64) != 0)
        snprintf(e->node, sizeof e->node, "unknown");
    e->node[64] = 0;
    unsigned char rb[4] = {0};
    if (getrandom(rb, sizeof rb, 0) != (ssize_t)sizeof rb)
        return cuzk_error_set(CUZK_ERANDOM, "engine: getrandom: %s", strerror(errno));
    snprintf(e->owner, sizeof e->owner, "%.64s:%ld:%02x%02x%02x%02x", e->node, (long)getpid(),
             rb[0], rb[1], rb[2], rb[3]);
    pthread_cond_init(&e->cv_claim, NULL);
    pthread_cond_init(&e->cv_beat, NULL);
    e->cv_claim_init = true;
    if (pthread_create(&e->cl_threads[0], NULL, listen_main, e) != 0)
        return cuzk_error_set(CUZK_ENOMEM, "engine: cannot create a thread");
    e->n_cl_threads = 1;
    if (pthread_create(&e->cl_threads[1], NULL, beat_main, e) != 0)
        return cuzk_error_set(CUZK_ENOMEM, "engine: cannot create a thread");
    e->n_cl_threads = 2;
    if (pthread_create(&e->cl_threads[2], NULL, claimer_main, e) != 0)
        return cuzk_error_set(CUZK_ENOMEM, "engine: cannot create a thread");
    e->n_cl_threads = 3;
    LOG(e, CUZK_LOG_INFO, "event=cluster_start owner=%s lease_s=%.3g db_upload_max=%llu",
        e->owner, e->lease_s, (unsigned long long)e->db_upload_max);
    return CUZK_OK;
}

void cluster_stop(cuzk_engine *e)
{
    if (!e->cluster)
        return;
    pthread_mutex_lock(&e->mu);
    e->stop = true;
    pthread_cond_broadcast(&e->cv_claim);
    pthread_cond_broadcast(&e->cv_beat);
    pthread_cond_broadcast(&e->cv_load);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < e->n_cl_threads; i++)
        pthread_join(e->cl_threads[i], NULL);
    e->n_cl_threads = 0;
    /* the leases still held go back at once, and the host leaves the status */
    if (e->st && store_cluster(e->st)->gone(e->st, e->owner) != CUZK_OK)
        LOG(e, CUZK_LOG_WARN, "event=cluster_leave_failed reason=\"%s\"", cuzk_error_detail());
    else
        LOG(e, CUZK_LOG_INFO, "event=cluster_leave owner=%s", e->owner);
}

/* ---- the API's calls on the store ---- */

/* A store error as the API gives it: the store unreachable is 503 (EBUSY). */
static cuzk_err cluster_err(cuzk_engine *e, cuzk_err r, const char *what)
{
    char why[400];
    snprintf(why, sizeof why, "%s", cuzk_error_detail());
    if (r == CUZK_EIO) {
        pthread_mutex_lock(&e->mu);
        e->c_store_errors++;
        cluster_store_state(e, false, why);
        pthread_mutex_unlock(&e->mu);
        return cuzk_error_set(CUZK_EUNAVAILABLE, "job store unavailable (%s): %s", what, why);
    }
    return cuzk_error_set(r, "%s", why);
}

/* While the heartbeat or the claimer find the store down, the API's calls are answered at
 * once (503), not after the store's own retries; they come back with the store. */
static cuzk_err cluster_down(cuzk_engine *e)
{
    pthread_mutex_lock(&e->mu);
    bool down = e->store_down;
    char why[300];
    snprintf(why, sizeof why, "%s", e->store_why);
    pthread_mutex_unlock(&e->mu);
    return down ? cuzk_error_set(CUZK_EUNAVAILABLE, "job store unavailable: %s", why) : CUZK_OK;
}

cuzk_err cluster_submit(cuzk_engine *e, job *j, const cuzk_witness_src *w)
{
    cuzk_err r0 = cluster_down(e);
    if (r0 != CUZK_OK)
        return r0;
    unsigned all = 0, open = 0;
    cuzk_err r = store_count(e->st, &all, &open);
    if (r != CUZK_OK)
        return cluster_err(e, r, "counting jobs");
    if (open >= e->cfg.max_queued_jobs)
        return cuzk_error_set(CUZK_EBUSY, "queue full: %u unfinished jobs in the farm "
                              "(max_queued_jobs)", open);
    return journal_put(e, j, w);
}

cuzk_err cluster_cancel(cuzk_engine *e, const char *id)
{
    int was = -1;
    cuzk_err r = cluster_down(e);
    if (r != CUZK_OK)
        return r;
    r = store_cluster(e->st)->end(e->st, id, CUZK_JOB_CANCELLED, "cancelled",
                                           engine_wall(), &was);
    if (r != CUZK_OK)
        return cluster_err(e, r, "cancelling");
    if (was < 0)
        return cuzk_error_set(CUZK_ENOTFOUND, "unknown job \"%.40s\"", id);
    if (was == CUZK_JOB_DONE || was == CUZK_JOB_FAILED)
        return cuzk_error_set(CUZK_EBUSY, "job %s already ended: %s", id,
                              cuzk_job_state_name((cuzk_job_state)was));
    LOG(e, CUZK_LOG_INFO, "event=job_cancel job=%s", id);
    return CUZK_OK;
}

cuzk_err cluster_job_get(cuzk_engine *e, cuzk_job_info *info, const char *id, double timeout_s,
                         bool want_results)
{
    const store_cluster_ops *cl = store_cluster(e->st);
    double t_end = engine_mono_s() + (timeout_s > 0 ? timeout_s : 0);
    for (;;) {
        pthread_mutex_lock(&e->mu);
        uint64_t seen = e->c_ended_seen;
        pthread_mutex_unlock(&e->mu);
        store_job sj;
        unsigned nd = 0, nr = 0;
        cuzk_err r = cluster_down(e);
        if (r != CUZK_OK)
            return r;
        r = cl->get(e->st, id, want_results, &sj, &nd, &nr);
        if (r == CUZK_ENOTFOUND)
            return r;
        if (r != CUZK_OK)
            return cluster_err(e, r, "reading a job");
        bool final = is_final((cuzk_job_state)sj.state);
        double left = t_end - engine_mono_s();
        if (final || timeout_s == 0 || (timeout_s > 0 && left <= 0)) {
            memset(info, 0, sizeof *info);
            memcpy(info->id, sj.id, sizeof info->id);
            snprintf(info->key, sizeof info->key, "%s", sj.key);
            info->priority = (cuzk_priority)sj.prio;
            info->state = final ? (cuzk_job_state)sj.state
                                : nd + nr > 0 ? CUZK_JOB_RUNNING : CUZK_JOB_QUEUED;
            snprintf(info->error, sizeof info->error, "%s", sj.error);
            info->n_partitions = sj.n;
            info->n_done = final && sj.state == CUZK_JOB_DONE ? sj.n : nd;
            info->submitted_s = engine_time_of(e, sj.submitted);
            info->finished_s = final ? engine_time_of(e, sj.finished) : 0;
            info->timings.total_ms = ((final ? sj.finished : engine_wall()) - sj.submitted) * 1e3;
            info->n_public = sj.n_public;
            if (want_results && sj.state == CUZK_JOB_DONE && sj.proofs) {
                info->proofs = sj.proofs;
                info->publics = sj.publics;
                sj.proofs = NULL;
                sj.publics = NULL;
            }
            store_job_release(&sj);
            return CUZK_OK;
        }
        store_job_release(&sj);
        /* woken by the listener when any job ends; looked at again each second anyway */
        pthread_mutex_lock(&e->mu);
        if (e->c_ended_seen == seen && !e->stop) {
            struct timespec ts;
            double w = timeout_s < 0 || left > 1.0 ? 1.0 : left;
            engine_deadline(&ts, w);
            pthread_cond_timedwait(&e->cv_job, &e->mu, &ts);
        }
        bool stop = e->stop;
        pthread_mutex_unlock(&e->mu);
        if (stop)
            timeout_s = 0;
    }
}

size_t cuzk_engine_cluster(cuzk_engine *e, cuzk_cluster_info *info)
{
    memset(info, 0, sizeof *info);
    if (!e->cluster)
        return 0;
    pthread_mutex_lock(&e->mu);
    snprintf(info->owner, sizeof info->owner, "%s", e->owner);
    snprintf(info->node, sizeof info->node, "%s", e->node);
    info->lease_s = e->lease_s;
    info->store_up = !e->store_down;
    snprintf(info->store_error, sizeof info->store_error, "%s", e->store_down ? e->store_why : "");
    info->leases_held = cluster_held(e);
    info->claims = e->c_claims;
    info->reclaims = e->c_reclaims;
    info->leases_lost = e->c_lease_lost;
    info->store_errors = e->c_store_errors;
    info->claim_calls = e->c_claim_calls;
    info->claim_s = e->claim_s;
    info->jobs_completed = e->c_cl_done;
    info->partitions_per_min = cluster_rate(e);
    bool down = e->store_down;
    pthread_mutex_unlock(&e->mu);
    store_host *h = NULL;
    store_lease *l = NULL;
    unsigned nh = 0, nl = 0;
    if (down) {   /* the status answers at once: the hosts and leases are the store's */
    } else if (store_cluster(e->st)->hosts(e->st, 3 * e->lease_s, &h, &nh, &l, &nl) == CUZK_OK) {
        info->hosts = calloc(nh ? nh : 1, sizeof *info->hosts);
        info->leases = calloc(nl ? nl : 1, sizeof *info->leases);
        for (unsigned i = 0; info->hosts && i < nh; i++) {
            cuzk_cluster_host *o = &info->hosts[i];
            snprintf(o->owner, sizeof o->owner, "%s", h[i].owner);
            snprintf(o->node, sizeof o->node, "%s", h[i].host);
            o->seen_ago_s = h[i].seen_ago;
            o->up_s = engine_wall() - h[i].started;
            o->partitions = h[i].parts;
            o->partitions_per_min = h[i].rate;
            o->leases = h[i].held;
            info->n_hosts++;
        }
        for (unsigned i = 0; info->leases && i < nl; i++) {
            cuzk_cluster_lease *o = &info->leases[i];
            memcpy(o->job, l[i].id, sizeof o->job);
            o->partition = l[i].idx;
            o->attempt = l[i].attempt;
            snprintf(o->owner, sizeof o->owner, "%s", l[i].owner);
            o->age_s = l[i].age;
            o->left_s = l[i].left;
            info->n_leases++;
        }
    } else {
        snprintf(info->store_error, sizeof info->store_error, "%s", cuzk_error_detail());
    }
    free(h);
    free(l);
    return info->n_hosts;
}

void cuzk_cluster_info_release(cuzk_cluster_info *info)
{
    free(info->hosts);
    free(info->leases);
    info->hosts = NULL;
    info->leases = NULL;
}
