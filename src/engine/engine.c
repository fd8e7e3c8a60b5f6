/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's lifecycle (include/cuzk/engine.h, DESIGN.md section 3): the default
 * configuration, making the engine and its threads, shutdown, free, and the stats. The
 * other files of src/engine are listed in engine_internal.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_internal.h"

void cuzk_engine_config_default(cuzk_engine_config *c)
{
    memset(c, 0, sizeof *c);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : (uint64_t)4 << 30;
    c->loader_threads = ncpu >= 8 ? (unsigned)(ncpu / 4) : 1;
    /* two per device: one loads its next partition while the other holds the device */
    c->workers_per_device = 2;
    c->lookahead = 0; /* auto: one per device worker (at least 2), set when devices are known */
    c->finalizers = ncpu >= 4 ? 2 : 1;
    c->prove_threads = 0;
    c->memory_budget = phys / 2;      /* half of physical memory */
    c->verify = true;
    c->job_timeout_s = 3600;
    c->max_queued_jobs = 1024;
    c->result_ttl_s = 600;
    c->max_partitions = 1024;
    c->priority_aging_s = 60;
    c->log_level = CUZK_LOG_INFO;
    cuzk_gpu_opts_default(&c->gpu);
}

/* ---- threads ---- */

typedef enum { THREAD_LOADER, THREAD_DEVICE, THREAD_FINALIZER } thread_kind;

typedef struct {
    cuzk_engine *e;
    thread_kind kind;
    device *d;
    unsigned widx;
} thread_arg;

static void *thread_main(void *arg)
{
    thread_arg a = *(thread_arg *)arg;
    free(arg);
    if (a.kind == THREAD_LOADER)
        loader_main(a.e);
    else if (a.kind == THREAD_DEVICE)
        device_worker_main(a.e, a.d, a.widx);
    else
        finalizer_main(a.e);
    return NULL;
}

static cuzk_err spawn(cuzk_engine *e, thread_kind kind, device *d, unsigned widx)
{
    thread_arg *a = malloc(sizeof *a);
    if (!a)
        return cuzk_error_set(CUZK_ENOMEM, "engine: out of memory");
    *a = (thread_arg){e, kind, d, widx};
    if (pthread_create(&e->threads[e->n_threads], NULL, thread_main, a) != 0) {
        free(a);
        return cuzk_error_set(CUZK_ENOMEM, "engine: cannot create a thread");
    }
    e->n_threads++;
    return CUZK_OK;
}

/* ---- new, shutdown, free ---- */

cuzk_err cuzk_engine_new(cuzk_engine **out, const cuzk_engine_config *c)
{
    *out = NULL;
    cuzk_engine_config cfg;
    if (c)
        cfg = *c;
    else
        cuzk_engine_config_default(&cfg);
    if (cfg.loader_threads == 0 || cfg.workers_per_device == 0 || cfg.finalizers == 0 ||
        cfg.max_queued_jobs == 0 || cfg.max_partitions == 0 ||
        cfg.memory_budget == 0)
        return cuzk_error_set(CUZK_EINVAL,
                              "engine: loader_threads, workers_per_device, finalizers, "
                              "max_queued_jobs, max_partitions and memory_budget must be > 0");
    cuzk_engine *e = calloc(1, sizeof *e);
    if (!e)
        return cuzk_error_set(CUZK_ENOMEM, "engine: out of memory");
    e->cfg = cfg;
    e->t0 = engine_mono_s();
    e->next_seq = 1;
    e->accepting = true;
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->log_mu, NULL);
    pthread_cond_init(&e->cv_load, NULL);
    pthread_cond_init(&e->cv_ready, NULL);
    pthread_cond_init(&e->cv_fin, NULL);
    pthread_cond_init(&e->cv_job, NULL);
    e->spool_fd = -1;
    cuzk_err jr = witness_dirs_open(e);
    if (jr != CUZK_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        cuzk_engine_free(e);
        return cuzk_error_set(jr, "%s", why);
    }
    jr = journal_open(e);
    if (jr != CUZK_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        cuzk_engine_free(e);
        return cuzk_error_set(jr, "job journal: %s", why);
    }

    devices_init(e);
    /* Lookahead 0 (the default): one loaded partition per device worker, so that a worker
     * finishing its partition always finds the next one ready (with a fixed 2, the daemon
     * on two H200s with 2 workers each kept the devices 71-78 % busy). Memory is still
     * bounded by the budget (sched_reserve). */
    if (cfg.lookahead == 0) {
        cfg.lookahead = e->n_devices * cfg.workers_per_device;
        if (cfg.lookahead < 2)
            cfg.lookahead = 2;
        e->cfg.lookahead = cfg.lookahead;
    }
    for (unsigned i = 0; i < e->n_devices; i++) {
        pthread_mutex_init(&e->devices[i].lock, NULL);
        e->devices[i].workers = cfg.workers_per_device;
    }
    unsigned total = cfg.loader_threads + cfg.finalizers + e->n_devices * cfg.workers_per_device;
    e->threads = calloc(total, sizeof(pthread_t));
    cuzk_err r = e->threads ? CUZK_OK : cuzk_error_set(CUZK_ENOMEM, "engine: out of memory");
    for (unsigned i = 0; r == CUZK_OK && i < cfg.loader_threads; i++)
        r = spawn(e, THREAD_LOADER, NULL, i);
    for (unsigned d = 0; r == CUZK_OK && d < e->n_devices; d++)
        for (unsigned i = 0; r == CUZK_OK && i < cfg.workers_per_device; i++)
            r = spawn(e, THREAD_DEVICE, &e->devices[d], i);
    for (unsigned i = 0; r == CUZK_OK && i < cfg.finalizers; i++)
        r = spawn(e, THREAD_FINALIZER, NULL, i);
    if (r == CUZK_OK) {
        if (pthread_create(&e->reaper, NULL, reaper_main, e) == 0)
            e->reaper_started = true;
        else
            r = cuzk_error_set(CUZK_ENOMEM, "engine: cannot create a thread");
    }
    if (r == CUZK_OK)
        r = cluster_start(e);
    if (r != CUZK_OK) {
        cuzk_engine_free(e);
        return r;
    }
    LOG(e, CUZK_LOG_INFO,
        "event=engine_start loader_threads=%u lookahead=%u devices=%u workers_per_device=%u "
        "finalizers=%u memory_budget=%llu verify=%d journal=%s",
        cfg.loader_threads, cfg.lookahead, e->n_devices, cfg.workers_per_device, cfg.finalizers,
        (unsigned long long)cfg.memory_budget, cfg.verify, e->st ? e->state_dir : "off");
    *out = e;
    return CUZK_OK;
}

void cuzk_engine_shutdown(cuzk_engine *e, double grace_s)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->mu);
    if (e->shut_done) {
        pthread_mutex_unlock(&e->mu);
        return;
    }
    e->accepting = false;
    LOG(e, CUZK_LOG_INFO, "event=shutdown_start open_jobs=%u grace_s=%.3g", e->jobs_open, grace_s);
    for (job *j = e->jobs; j; j = j->next)
        if (j->state == CUZK_JOB_QUEUED)
            job_finish_ex(e, j, CUZK_JOB_FAILED, "daemon shutting down (job had not started)",
                          false);
    /* Running jobs: no new job starts, their remaining partitions still run. */
    struct timespec dl;
    engine_deadline(&dl, grace_s > 0 ? grace_s : 0);
    while (e->jobs_open > 0 && grace_s > 0)
        if (pthread_cond_timedwait(&e->cv_job, &e->mu, &dl) == ETIMEDOUT)
            break;
    for (job *j = e->jobs; j; j = j->next)
        if (!is_final(j->state))
            job_finish_ex(e, j, CUZK_JOB_FAILED, "daemon shutting down (grace period over)",
                          false);
    /* Let partitions on the way drain (their results are dropped), then stop the threads. */
    for (;;) {
        unsigned busy = 0;
        for (job *j = e->jobs; j; j = j->next)
            busy += (unsigned)j->outstanding;
        if (busy == 0)
            break;
        pthread_cond_wait(&e->cv_job, &e->mu);
    }
    e->stop = true;
    e->shut_done = true;
    pthread_cond_broadcast(&e->cv_load);
    pthread_cond_broadcast(&e->cv_ready);
    pthread_cond_broadcast(&e->cv_fin);
    pthread_cond_broadcast(&e->cv_job);
    LOG(e, CUZK_LOG_INFO, "event=shutdown_end done=%llu failed=%llu cancelled=%llu",
        (unsigned long long)e->c_done, (unsigned long long)e->c_failed,
        (unsigned long long)e->c_cancelled);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < e->n_threads; i++)
        pthread_join(e->threads[i], NULL);
    e->n_threads = 0;
    if (e->reaper_started) {
        pthread_join(e->reaper, NULL);
        e->reaper_started = false;
    }
    cluster_stop(e);
}

void cuzk_engine_free(cuzk_engine *e)
{
    if (!e)
        return;
    if (!e->shut_done) {
        if (e->n_threads == 0 && !e->reaper_started) {
            e->shut_done = true;   /* failed construction: no threads */
        } else {
            cuzk_engine_shutdown(e, 0);
        }
    }
    pthread_mutex_lock(&e->mu);
    while (e->jobs) {
        job *j = e->jobs;
        e->jobs = j->next;
        job_free(e, j);
    }
    while (e->keys) {
        key_entry *k = e->keys;
        e->keys = k->next;
        key_unload(e, k);
        free(k);
    }
    while (wpool_drop(e))
        ;
    pthread_mutex_unlock(&e->mu);
    journal_close(e);
    witness_dirs_close(e);
    free(e->threads);
    for (unsigned i = 0; i < e->n_devices; i++)
        pthread_mutex_destroy(&e->devices[i].lock);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->log_mu);
    pthread_cond_destroy(&e->cv_load);
    pthread_cond_destroy(&e->cv_ready);
    pthread_cond_destroy(&e->cv_fin);
    pthread_cond_destroy(&e->cv_job);
    if (e->cv_claim_init) {
        pthread_cond_destroy(&e->cv_claim);
        pthread_cond_destroy(&e->cv_beat);
    }
    free(e);
}

/* ---- stats ---- */

void cuzk_engine_get_stats(cuzk_engine *e, cuzk_engine_stats *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&e->mu);
    s->uptime_s = engine_now(e);
    s->shutting_down = !e->accepting;
    for (job *j = e->jobs; j; j = j->next) {
        if (j->shadow)
            ;   /* partitions of the farm's jobs: counted by partitions below */
        else if (j->state == CUZK_JOB_QUEUED)
            s->jobs_queued++;
        else if (j->state == CUZK_JOB_RUNNING)
            s->jobs_running++;
        if (j->in_queue)
            s->partitions_queued += (unsigned)(j->n - j->next_part);
    }
    s->partitions_load = e->n_load;
    s->partitions_ready = e->n_ready;
    s->partitions_device = e->n_device;
    s->partitions_finalize = e->n_fin;
    for (part *p = e->fin_head; p; p = p->next)
        s->partitions_finalize++;
    s->jobs_submitted = e->c_submitted;
    s->jobs_done = e->c_done;
    s->jobs_failed = e->c_failed;
    s->jobs_cancelled = e->c_cancelled;
    s->jobs_rejected = e->c_rejected;
    s->partitions_proved = e->c_parts;
    s->proofs_verified = e->c_verified;
    s->key_loads = e->c_loads;
    s->key_evictions = e->c_evictions;
    s->witness_buffers_reused = e->c_wreuse;
    s->memory_budget = e->cfg.memory_budget;
    s->memory_used = e->mem_used;
    s->n_devices = e->n_devices;
    for (unsigned i = 0; i < e->n_devices; i++) {
        const device *d = &e->devices[i];
        snprintf(s->devices[i].name, sizeof s->devices[i].name, "%s", d->name);
        s->devices[i].workers = d->workers;
        s->devices[i].busy = d->busy;
        s->devices[i].busy_s = d->busy_s;
        s->devices[i].gap_s = d->gap_s;
        s->devices[i].gap_max_s = d->gap_max_s;
        s->devices[i].gaps = d->gaps;
        s->devices[i].partitions = d->partitions;
    }
    memcpy(s->stage_s, e->stage_s, sizeof s->stage_s);
    s->loader_threads = e->cfg.loader_threads;
    s->finalizers = e->cfg.finalizers;
    s->lookahead = e->cfg.lookahead;
    s->journal = e->st != NULL;
    s->journal_commits = e->c_commits;
    s->spool_files = e->spool_files;
    s->spool_bytes = e->spool_bytes;
    s->cluster = e->cluster;
    s->jobs_ended_seen = e->c_ended_seen;
    s->config = e->cfg;
    pthread_mutex_unlock(&e->mu);
}
