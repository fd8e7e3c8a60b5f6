/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench's in-process back ends: no daemon, no HTTP.
 *
 * Engine (default, --in-process): the daemon's engine (include/cuzk/engine.h) runs in this
 * process; jobs go through its queue, loaders, device workers and finalisers exactly
 * as they would behind cuzk-daemon, and report its timings. The key is registered (loaded)
 * before the batch, as `cuzk-bench preload` would.
 *
 * Direct (--in-process --direct): the prover's calls without the engine, one job per client
 * thread, reporting the daemon's stages, so the engine's overhead can be seen. The key is
 * loaded once before the batch (srs is 0 per job; the load time has its own line). Per job:
 *   load     = reading the witness files
 *   gpu      = cuzk_groth16_prove_start: the prover's CPU side (checks, a, b, c, bit
 *              vectors), the H step and the G1 MSMs
 *   finalize = cuzk_groth16_prove_finish (joins B_G2, randomisation, affine conversion)
 *   verify   = checking every proof against the key's own verification key, as the
 *              daemon does before it returns a proof
 *   queue    = 0 (a client thread proves its job as soon as it takes it)
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "config.h"
#include "cuzk/engine.h"

struct bench_inproc {
    cuzk_engine *eng; /* engine mode */
    cuzk_zkey *zk;    /* direct mode */
    cuzk_vk *vk;      /* direct mode: from the key, the engine's self-check */
};

static int engine_open(bench_inproc *ip, const bench_opts *o, double *load_ms, char *err, size_t errlen)
{
    cuzk_engine_config cfg;
    cuzk_engine_config_default(&cfg);
    if (o->threads)
        cfg.prove_threads = o->threads;
    cfg.log_level = o->engine_log ? CUZK_LOG_INFO : CUZK_LOG_ERROR; /* bench reports failures itself */
    cfg.gpu = o->gpu;
    cfg.backend = tool_env_get()->backend;
    cfg.witness_any_path = true;   /* its own witness files, named on its command line */
    cuzk_err e = cuzk_engine_new(&ip->eng, &cfg);
    if (e != CUZK_OK) {
        snprintf(err, errlen, "engine: %s", cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
        return -1;
    }
    cuzk_engine_key_info info;
    double t0 = bench_now_ms();
    e = cuzk_engine_key_add(ip->eng, &info, o->key, o->zkey);
    if (e != CUZK_OK) {
        snprintf(err, errlen, "%s", cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
        return -1;
    }
    *load_ms = bench_now_ms() - t0;
    return 0;
}

static int engine_run_job(bench_inproc *ip, const bench_opts *o, bench_job *j)
{
    size_t n = o->n_witness;
    cuzk_witness_src *w = calloc(n, sizeof *w);
    if (!w) {
        bench_copy(j->state, sizeof j->state, "failed");
        bench_copy(j->error, sizeof j->error, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        w[i].path = o->witness[i];
    double t0 = bench_now_ms();
    cuzk_job_id jid;
    cuzk_err e = cuzk_engine_submit(ip->eng, &jid, o->key, (cuzk_priority)j->priority, w, n);
    free(w);
    if (e != CUZK_OK) {
        bench_copy(j->state, sizeof j->state, "rejected");
        snprintf(j->error, sizeof j->error, "submit: %s",
                 cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
        j->latency_ms = bench_now_ms() - t0;
        return 0;
    }
    const char *id = jid.s;
    snprintf(j->id, sizeof j->id, "%s", id);
    cuzk_job_info ji;
    memset(&ji, 0, sizeof ji);
    e = cuzk_engine_job_get(ip->eng, &ji, id, o->timeout_s, true);
    j->latency_ms = bench_now_ms() - t0;
    if (e != CUZK_OK) {
        bench_copy(j->state, sizeof j->state, "error");
        snprintf(j->error, sizeof j->error, "job %s: %s", id,
                 cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
        return -1;
    }
    if (ji.state != CUZK_JOB_DONE && ji.state != CUZK_JOB_FAILED && ji.state != CUZK_JOB_CANCELLED) {
        if (cuzk_engine_cancel(ip->eng, id) != CUZK_OK)
            cuzk_error_clear();
        bench_copy(j->state, sizeof j->state, "timeout");
        snprintf(j->error, sizeof j->error, "job %s: no final state after %.0f s (cancelled)",
                 id, o->timeout_s);
        cuzk_job_info_release(&ji);
        return 0;
    }
    bench_copy(j->state, sizeof j->state, cuzk_job_state_name(ji.state));
    bench_copy(j->error, sizeof j->error, ji.error);
    const cuzk_job_timings *t = &ji.timings;
    j->t[BENCH_QUEUE] = t->queue_ms;
    j->t[BENCH_SRS] = t->srs_ms;
    j->t[BENCH_LOAD] = t->load_ms;
    j->t[BENCH_GPU] = t->prove_ms;
    j->t[BENCH_FINALIZE] = t->finalize_ms;
    j->t[BENCH_VERIFY] = t->verify_ms;
    j->t[BENCH_TOTAL] = t->total_ms;
    if (ji.state == CUZK_JOB_DONE) {
        j->proofs = calloc(ji.n_partitions, sizeof *j->proofs);
        j->pub = calloc(ji.n_partitions * ji.n_public + 1, sizeof *j->pub);
        if (!j->proofs || !j->pub || !ji.proofs || (ji.n_public && !ji.publics)) {
            bench_copy(j->state, sizeof j->state, "error");
            bench_copy(j->error, sizeof j->error, "a done job without its proofs (or out of memory)");
        } else {
            memcpy(j->proofs, ji.proofs, ji.n_partitions * sizeof *j->proofs);
            if (ji.n_public)
                memcpy(j->pub, ji.publics, ji.n_partitions * ji.n_public * sizeof *j->pub);
            j->n_proofs = ji.n_partitions;
            j->n_pub = ji.n_public;
        }
    }
    cuzk_job_info_release(&ji);
    return 0;
}

int bench_inproc_open(bench_inproc **out, const bench_opts *o, double *load_ms, char *err, size_t errlen)
{
    *out = NULL;
    bench_inproc *ip = calloc(1, sizeof *ip);
    if (!ip) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!o->direct) {
        if (engine_open(ip, o, load_ms, err, errlen)) {
            bench_inproc_close(ip);
            return -1;
        }
        *out = ip;
        return 0;
    }
    double t0 = bench_now_ms();
    cuzk_err e = cuzk_zkey_load(&ip->zk, o->zkey);
    if (e == CUZK_OK)
        e = cuzk_vk_from_zkey(&ip->vk, ip->zk);
    if (e != CUZK_OK) {
        snprintf(err, errlen, "%s", cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
        bench_inproc_close(ip);
        return -1;
    }
    *load_ms = bench_now_ms() - t0;
    *out = ip;
    return 0;
}

void bench_inproc_close(bench_inproc *ip)
{
    if (!ip)
        return;
    cuzk_engine_free(ip->eng);
    cuzk_vk_free(ip->vk);
    cuzk_zkey_free(ip->zk);
    free(ip);
}

static void fail(bench_job *j, const char *what, cuzk_err e)
{
    snprintf(j->state, sizeof j->state, "failed");
    snprintf(j->error, sizeof j->error, "%s: %s", what,
             cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
}

int bench_inproc_run_job(bench_inproc *ip, const bench_opts *o, bench_job *j)
{
    if (ip->eng)
        return engine_run_job(ip, o, j);
    size_t n = o->n_witness;
    const cuzk_zkey *zk = ip->zk;
    double t0 = bench_now_ms();
    for (int s = 0; s < BENCH_NSTAGES; s++)
        j->t[s] = 0;

    cuzk_wtns **wt = calloc(n, sizeof *wt);
    const cuzk_fr **w = calloc(n, sizeof *w);
    j->proofs = calloc(n, sizeof *j->proofs);
    j->pub = calloc(n * zk->n_public + 1, sizeof *j->pub);
    cuzk_pending *pend = NULL;
    if (!wt || !w || !j->proofs || !j->pub) {
        snprintf(j->state, sizeof j->state, "failed");
        snprintf(j->error, sizeof j->error, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        cuzk_err e = cuzk_wtns_load(&wt[i], o->witness[i]);
        if (e != CUZK_OK) {
            fail(j, o->witness[i], e);
            goto out;
        }
        if (wt[i]->n != wt[0]->n) {
            snprintf(j->state, sizeof j->state, "failed");
            snprintf(j->error, sizeof j->error, "%s: %u values, but %s has %u", o->witness[i], wt[i]->n,
                     o->witness[0], wt[0]->n);
            goto out;
        }
        w[i] = wt[i]->w;
    }
    double t_read = bench_now_ms() - t0;

    cuzk_prove_opts popts = {.nthreads = o->threads, .backend = tool_env_get()->backend,
                             .gpu = &o->gpu};
    double t1 = bench_now_ms();
    cuzk_err e = cuzk_groth16_prove_start(&pend, zk, w, n, wt[0]->n, &popts);
    if (e != CUZK_OK) {
        fail(j, "prove", e);
        goto out;
    }
    double t2 = bench_now_ms();
    e = cuzk_groth16_prove_finish(j->proofs, NULL, pend);
    double t3 = bench_now_ms();
    if (e != CUZK_OK) {
        fail(j, "prove", e);
        goto out;
    }
    j->n_proofs = n;
    j->n_pub = zk->n_public;
    for (size_t i = 0; i < n; i++)
        memcpy(&j->pub[i * zk->n_public], cuzk_groth16_public(zk, w[i]), zk->n_public * sizeof(cuzk_fr));
    for (size_t i = 0; i < n; i++) {
        e = cuzk_groth16_verify(ip->vk, &j->pub[i * zk->n_public], zk->n_public, &j->proofs[i]);
        if (e != CUZK_OK) {
            char what[64];
            snprintf(what, sizeof what, "self-check of proof %zu", i);
            fail(j, what, e);
            break;
        }
    }
    double t4 = bench_now_ms();
    if (!j->state[0])
        snprintf(j->state, sizeof j->state, "done");
    j->t[BENCH_LOAD] = t_read;
    j->t[BENCH_GPU] = t2 - t1;
    j->t[BENCH_FINALIZE] = t3 - t2;
    j->t[BENCH_VERIFY] = t4 - t3;
out:
    cuzk_groth16_pending_free(pend);
    if (wt)
        for (size_t i = 0; i < n; i++)
            cuzk_wtns_free(wt[i]);
    free(wt);
    free(w);
    j->t[BENCH_TOTAL] = bench_now_ms() - t0;
    j->latency_ms = j->t[BENCH_TOTAL];
    return 0;
}

int bench_inproc_devices(bench_inproc *ip, bench_devices *d)
{
    memset(d, 0, sizeof *d);
    if (!ip || !ip->eng)
        return -1;
    cuzk_engine_stats *st = calloc(1, sizeof *st);
    if (!st)
        return -1;
    cuzk_engine_get_stats(ip->eng, st);
    for (unsigned i = 0; i < st->n_devices && i < CUZK_ENGINE_MAX_DEVICES && d->n < BENCH_MAX_DEVICES; i++) {
        bench_copy(d->name[d->n], sizeof d->name[d->n], st->devices[i].name);
        d->workers[d->n] = st->devices[i].workers;
        d->busy_s[d->n] = st->devices[i].busy_s;
        d->partitions[d->n] = (double)st->devices[i].partitions;
        d->gap_s[d->n] = st->devices[i].gap_s;
        d->gaps[d->n] = (double)st->devices[i].gaps;
        d->gap_max_s[d->n] = st->devices[i].gap_max_s;
        d->n++;
    }
    free(st);
    return 0;
}
