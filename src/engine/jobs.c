/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's jobs: admission (submit), cancel, queries, and the one final state of each. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "engine/engine_internal.h"

/* ---- the job list (engine lock held) ---- */

bool cuzk_job_id_valid(const char *s)
{
    if (!s)
        return false;
    for (size_t i = 0; i < CUZK_JOB_ID_CHARS; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return s[CUZK_JOB_ID_CHARS] == '\0';
}

/* A fresh id: 16 bytes of getrandom as hex. */
static cuzk_err job_id_new(cuzk_job_id *id)
{
    unsigned char b[CUZK_JOB_ID_CHARS / 2];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t r = getrandom(b + got, sizeof b - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return cuzk_error_set(CUZK_ERANDOM, "job id: getrandom: %s", strerror(errno));
        got += (size_t)r;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof b; i++) {
        id->s[2 * i] = hex[b[i] >> 4];
        id->s[2 * i + 1] = hex[b[i] & 15];
    }
    id->s[CUZK_JOB_ID_CHARS] = '\0';
    return CUZK_OK;
}

job *job_find(cuzk_engine *e, const char *id)
{
    if (!cuzk_job_id_valid(id))
        return NULL;
    for (job *j = e->jobs; j; j = j->next)
        if (!memcmp(j->id, id, CUZK_JOB_ID_CHARS))
            return j;
    return NULL;
}

void job_retire_inputs(cuzk_engine *e, job *j)
{
    if (!is_final(j->state) || j->outstanding > 0 || j->inputs_freed)
        return;
    journal_unspool(e, j);
    for (size_t i = 0; i < j->n; i++) {
        free(j->paths[i]);
        free(j->data[i]);
        if (j->fds && j->fds[i] >= 0)
            close(j->fds[i]);
    }
    free(j->fds);
    j->fds = NULL;
    free(j->paths);
    free(j->data);
    free(j->len);
    free(j->spool);
    free(j->pdone);
    j->paths = NULL;
    j->data = NULL;
    j->len = NULL;
    j->spool = NULL;
    j->pdone = NULL;
    j->inputs_freed = true;
    if (j->key)
        key_unref(e, j->key);
    j->key = NULL;
}

void job_free(cuzk_engine *e, job *j)
{
    job_retire_inputs(e, j); /* a no-op when they went already */
    free(j->proofs);
    free(j->publics);
    free(j);
}

bool job_finish(cuzk_engine *e, job *j, cuzk_job_state st, const char *reason)
{
    return job_finish_ex(e, j, st, reason, true);
}

bool job_finish_ex(cuzk_engine *e, job *j, cuzk_job_state st, const char *reason, bool journal)
{
    if (is_final(j->state))
        return false;
    j->state = st;
    snprintf(j->error, sizeof j->error, "%s", reason ? reason : "");
    /* done: recorded with the last partition's proof (finalizer.c) */
    if (journal && st != CUZK_JOB_DONE)
        journal_finish(e, j);
    j->finished = engine_now(e);
    j->t.total_ms = (j->finished - j->submitted) * 1e3;
    sched_queue_remove(e, j);
    e->jobs_open--;
    if (j->shadow) {
        /* partitions of the farm's job: the job's own end is the store's */
    } else if (st == CUZK_JOB_DONE) {
        e->c_done++;
        e->stage_s[STAGE_TOTAL] += j->t.total_ms * 1e-3;
    } else if (st == CUZK_JOB_FAILED) {
        e->c_failed++;
    } else {
        e->c_cancelled++;
    }
    if (st != CUZK_JOB_DONE) {
        free(j->proofs);
        free(j->publics);
        j->proofs = NULL;
        j->publics = NULL;
    }
    LOG(e, j->shadow ? CUZK_LOG_DEBUG : st == CUZK_JOB_FAILED ? CUZK_LOG_WARN : CUZK_LOG_INFO,
        "event=%s job=%s state=%s total_ms=%.3f queue_ms=%.3f srs_ms=%.3f load_ms=%.3f "
        "prove_ms=%.3f finalize_ms=%.3f verify_ms=%.3f%s%s%s",
        j->shadow ? "claims_end" : "job_final", j->id, cuzk_job_state_name(st), j->t.total_ms,
        j->t.queue_ms, j->t.srs_ms, j->t.load_ms, j->t.prove_ms, j->t.finalize_ms, j->t.verify_ms,
        reason ? " reason=\"" : "", reason ? reason : "", reason ? "\"" : "");
    job_retire_inputs(e, j);
    pthread_cond_broadcast(&e->cv_job);
    pthread_cond_broadcast(&e->cv_load);
    return true;
}

/* ---- the API ---- */

/* A job refused before it entered the list (its arrays allocated or not). */
static void job_drop(job *j)
{
    for (size_t i = 0; i < j->n && j->paths && j->data; i++) {
        free(j->paths[i]);
        free(j->data[i]);
        if (j->spool)
            free(j->spool[i]);
        if (j->fds && j->fds[i] >= 0)
            close(j->fds[i]);
    }
    free(j->spool);
    free(j->fds);
    free(j->paths);
    free(j->data);
    free(j->len);
    free(j->proofs);
    free(j->publics);
    free(j);
}

/* A job of n witnesses from w (paths duplicated; uploads copied unless they go to the
 * spool); NULL when out of memory. */
static job *job_new(const cuzk_witness_src *w, const int *fds, size_t n, bool spool)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->n = n;
    j->paths = calloc(n, sizeof(char *));
    j->data = calloc(n, sizeof(unsigned char *));
    j->len = calloc(n, sizeof(size_t));
    j->spool = calloc(n, sizeof(char *));
    j->fds = malloc(n * sizeof(int));
    j->proofs = calloc(n, sizeof(cuzk_proof));
    bool ok = j->paths && j->data && j->len && j->spool && j->fds && j->proofs;
    for (size_t i = 0; j->fds && i < n; i++)
        j->fds[i] = fds[i];
    for (size_t i = 0; ok && i < n; i++) {
        if (w[i].path) {
            ok = (j->paths[i] = strdup(w[i].path)) != NULL;
        } else if (spool) {
            j->len[i] = w[i].len;
        } else {
            ok = (j->data[i] = malloc(w[i].len ? w[i].len : 1)) != NULL;
            if (ok && w[i].len)
                memcpy(j->data[i], w[i].data, w[i].len);
            j->len[i] = w[i].len;
        }
    }
    if (!ok) {
        job_drop(j);
        return NULL;
    }
    return j;
}

/* Opens (paths) and reads each witness once, checked against the key: its size, its first
 * value 1. fds[i]: the opened file of a path witness, else -1 (all closed on failure). */
static cuzk_err witnesses_check(cuzk_engine *e, const char *key_id, const cuzk_witness_src *w,
                                int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fds[i] = -1;
    pthread_mutex_lock(&e->mu);
    key_entry *k = key_find(e, key_id);
    uint32_t n_vars = k ? k->n_vars : 0;
    char kid[128], kpath[4096], kr1cs[4096];
    if (k) {
        snprintf(kid, sizeof kid, "%s", k->id);
        snprintf(kpath, sizeof kpath, "%s", k->path);
        snprintf(kr1cs, sizeof kr1cs, "%s", k->r1cs);
    }
    pthread_mutex_unlock(&e->mu);
    if (!k)
        return cuzk_error_set(CUZK_ENOTFOUND, "unknown key \"%.100s\"", key_id);
    cuzk_err r = CUZK_OK;
    for (size_t i = 0; r == CUZK_OK && i < n; i++) {
        const char *wname = w[i].path ? w[i].path : "uploaded .wtns";
        cuzk_wtns *wt = NULL;
        if (w[i].path) {
            r = witness_open(e, w[i].path, &fds[i]);
            if (r == CUZK_OK)
                r = witness_check_fd(&wt, fds[i], w[i].path);
        } else {
            r = cuzk_wtns_load_mem(&wt, wname, w[i].data, w[i].len);
        }
        if (r != CUZK_OK) {
            char d[700];
            snprintf(d, sizeof d, "%s", cuzk_error_detail()[0] ? cuzk_error_detail()
                                                                 : cuzk_strerror(r));
            if (r == CUZK_ENOTFOUND)   /* a missing file, not an unknown key */
                r = CUZK_EIO;
            r = cuzk_error_set(r, "witness %zu: %s", i, d);
        } else if (wt->n != n_vars) {
            r = cuzk_error_set(CUZK_ESIZE,
                               "witness %zu (%.300s): %u values, key %s (%.300s%s%.300s) expects %u",
                               i, wname, wt->n, kid, kpath, kr1cs[0] ? " for " : "", kr1cs,
                               n_vars);
        } else if (!cuzk_fr_is_one(&wt->w[0])) {
            r = cuzk_error_set(CUZK_EFORMAT, "witness %zu (%.300s): its first value is not 1", i,
                               wname);
        }
        cuzk_wtns_free(wt);
    }
    if (r != CUZK_OK)
        for (size_t i = 0; i < n; i++)
            if (fds[i] >= 0) {
                close(fds[i]);
                fds[i] = -1;
            }
    return r;
}

cuzk_err cuzk_engine_submit(cuzk_engine *e, cuzk_job_id *job_id, const char *key_id,
                            cuzk_priority prio, const cuzk_witness_src *w, size_t n)
{
    memset(job_id, 0, sizeof *job_id);
    if ((unsigned)prio >= CUZK_PRIO_COUNT)
        return cuzk_error_set(CUZK_EINVAL, "bad priority %d", (int)prio);
    if (n == 0 || n > e->cfg.max_partitions)
        return cuzk_error_set(CUZK_EINVAL, "a job needs 1 to %u witnesses, got %zu",
                              e->cfg.max_partitions, n);
    int *fds = malloc(n * sizeof(int));
    if (!fds)
        return cuzk_error_set(CUZK_ENOMEM, "out of memory");
    cuzk_err wr = witnesses_check(e, key_id, w, fds, n);
    if (wr != CUZK_OK) {
        free(fds);
        pthread_mutex_lock(&e->mu);
        e->c_rejected++;
        pthread_mutex_unlock(&e->mu);
        LOG(e, CUZK_LOG_INFO, "event=job_rejected key=%.100s reason=\"%s\"", key_id,
            cuzk_error_detail());
        return wr;
    }
    job *j = job_new(w, fds, n, e->st != NULL);
    if (!j)
        for (size_t i = 0; i < n; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    free(fds);   /* the job holds the descriptors now */
    cuzk_job_id id;
    cuzk_err r = j ? job_id_new(&id) : cuzk_error_set(CUZK_ENOMEM, "out of memory");

    pthread_mutex_lock(&e->mu);
    key_entry *k = r == CUZK_OK ? key_find(e, key_id) : NULL;
    if (r != CUZK_OK) {
    } else if (!e->accepting) {
        r = cuzk_error_set(CUZK_EBUSY, "shutting down: not accepting jobs");
    } else if (!k) {
        r = cuzk_error_set(CUZK_ENOTFOUND, "unknown key \"%.100s\"", key_id);
    } else if (k->key_bytes + k->part_bytes > e->cfg.memory_budget) {
        r = cuzk_error_set(CUZK_ESIZE,
                           "memory budget too small: key %s needs %llu bytes resident plus %llu "
                           "bytes per partition (%llu), the budget is %llu bytes",
                           k->id, (unsigned long long)k->key_bytes,
                           (unsigned long long)k->part_bytes,
                           (unsigned long long)(k->key_bytes + k->part_bytes),
                           (unsigned long long)e->cfg.memory_budget);
    } else if (!e->cluster && e->jobs_open >= e->cfg.max_queued_jobs) {
        r = cuzk_error_set(CUZK_EBUSY, "queue full: %u unfinished jobs (max_queued_jobs)",
                           e->jobs_open);
    } else if (k->n_public && !(j->publics = calloc(n * k->n_public, sizeof(cuzk_fr)))) {
        r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
    }
    if (r == CUZK_OK) {
        memcpy(j->id, id.s, sizeof j->id);
        j->key = k;
        snprintf(j->key_id, sizeof j->key_id, "%s", k->id);
        k->refs++;
        j->n_public = k->n_public;
        j->prio = prio;
        j->state = CUZK_JOB_QUEUED;
        j->submitted = engine_now(e);
        e->jobs_open++;   /* its place in the queue, held while it is journaled */
        if (e->cluster) {
            /* a row of the farm's queue: any daemon's claimer takes its partitions */
            pthread_mutex_unlock(&e->mu);
            r = cluster_submit(e, j, w);
            pthread_mutex_lock(&e->mu);
            e->jobs_open--;
            key_unref(e, k);
            j->key = NULL;
            if (r == CUZK_OK) {
                e->c_submitted++;
                pthread_mutex_unlock(&e->mu);
                *job_id = id;
                LOG(e, CUZK_LOG_INFO,
                    "event=job_submit job=%s key=%s priority=%s partitions=%zu store=shared",
                    id.s, key_id, cuzk_priority_name(prio), n);
                job_drop(j);
                return CUZK_OK;
            }
        } else if (e->st) {
            /* durable before the answer: spooled and committed outside the lock */
            pthread_mutex_unlock(&e->mu);
            r = journal_put(e, j, w);
            pthread_mutex_lock(&e->mu);
            if (r != CUZK_OK) {
                e->jobs_open--;
                key_unref(e, k);
                j->key = NULL;
            }
        }
    }
    if (r != CUZK_OK) {
        e->c_rejected++;
        pthread_mutex_unlock(&e->mu);
        LOG(e, CUZK_LOG_INFO, "event=job_rejected key=%.100s reason=\"%s\"", key_id,
            cuzk_error_detail());
        if (j)
            job_drop(j);
        return r;
    }
    j->seq = e->next_seq++;
    job_link(e, j);
    e->c_submitted++;
    *job_id = id;
    LOG(e, CUZK_LOG_INFO, "event=job_submit job=%s key=%s priority=%s partitions=%zu",
        j->id, k->id, cuzk_priority_name(prio), n);
    if (!e->accepting) /* the shutdown began while it was journaled: the next start runs it */
        job_finish_ex(e, j, CUZK_JOB_FAILED, "daemon shutting down (job had not started)", false);
    pthread_cond_broadcast(&e->cv_load);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

void job_link(cuzk_engine *e, job *j)
{
    if (e->jobs_tail)
        e->jobs_tail->next = j;
    else
        e->jobs = j;
    e->jobs_tail = j;
    if (is_final(j->state) || !j->key)
        return;
    cuzk_priority prio = j->prio;
    if (e->qtail[prio])
        e->qtail[prio]->qnext = j;
    else
        e->qhead[prio] = j;
    e->qtail[prio] = j;
    j->in_queue = true;
}

void cuzk_engine_count_rejected(cuzk_engine *e)
{
    pthread_mutex_lock(&e->mu);
    e->c_rejected++;
    pthread_mutex_unlock(&e->mu);
}

cuzk_err cuzk_engine_cancel(cuzk_engine *e, const char *job_id)
{
    if (e->cluster)
        return cluster_cancel(e, job_id);
    pthread_mutex_lock(&e->mu);
    job *j;
    /* a job whose done is being journaled ends done: the journal's word, also after a
     * restart, is the answer's */
    while ((j = job_find(e, job_id)) && j->committing_done)
        pthread_cond_wait(&e->cv_job, &e->mu);
    cuzk_err r = CUZK_OK;
    if (!j)
        r = cuzk_error_set(CUZK_ENOTFOUND, "unknown job \"%.40s\"", job_id);
    else if (j->state == CUZK_JOB_DONE || j->state == CUZK_JOB_FAILED)
        r = cuzk_error_set(CUZK_EBUSY, "job %s already ended: %s", j->id,
                           cuzk_job_state_name(j->state));
    else
        job_finish(e, j, CUZK_JOB_CANCELLED, "cancelled");
    pthread_mutex_unlock(&e->mu);
    return r;
}

cuzk_err cuzk_engine_job_get(cuzk_engine *e, cuzk_job_info *info, const char *job_id,
                             double timeout_s, bool want_results)
{
    memset(info, 0, sizeof *info);
    if (e->cluster)
        return cluster_job_get(e, info, job_id, timeout_s, want_results);
    pthread_mutex_lock(&e->mu);
    job *j = job_find(e, job_id);
    if (j && timeout_s != 0) {
        struct timespec dl;
        engine_deadline(&dl, timeout_s > 0 ? timeout_s : 0);
        while (!is_final(j->state) && !e->stop) {
            int rc = timeout_s < 0 ? pthread_cond_wait(&e->cv_job, &e->mu)
                                   : pthread_cond_timedwait(&e->cv_job, &e->mu, &dl);
            if (rc == ETIMEDOUT)
                break;
        }
        j = job_find(e, job_id);   /* the reaper may have expired it meanwhile */
    }
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_error_set(CUZK_ENOTFOUND, "unknown job \"%.40s\"", job_id);
    }
    memcpy(info->id, j->id, sizeof info->id);
    snprintf(info->key, sizeof info->key, "%s", j->key_id);
    info->priority = j->prio;
    info->state = j->state;
    snprintf(info->error, sizeof info->error, "%s", j->error);
    info->n_partitions = j->n;
    info->n_done = j->n_done;
    info->timings = j->t;
    if (!is_final(j->state))
        info->timings.total_ms = (engine_now(e) - j->submitted) * 1e3;
    info->submitted_s = j->submitted;
    info->finished_s = is_final(j->state) ? j->finished : 0;
    info->n_public = j->n_public;
    cuzk_err r = CUZK_OK;
    if (want_results && j->state == CUZK_JOB_DONE) {
        info->proofs = malloc(sizeof(cuzk_proof) * j->n);
        info->publics = malloc(sizeof(cuzk_fr) * (j->n * j->n_public + 1));
        if (!info->proofs || !info->publics) {
            cuzk_job_info_release(info);
            r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
        } else {
            memcpy(info->proofs, j->proofs, sizeof(cuzk_proof) * j->n);
            if (j->n_public)
                memcpy(info->publics, j->publics, sizeof(cuzk_fr) * j->n * j->n_public);
        }
    }
    pthread_mutex_unlock(&e->mu);
    return r;
}

void cuzk_job_info_release(cuzk_job_info *info)
{
    free(info->proofs);
    free(info->publics);
    info->proofs = NULL;
    info->publics = NULL;
}
