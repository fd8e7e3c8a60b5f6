/*
 * cuzk-bench's in-process back end: the library proves in this process, with no daemon,
 * reporting the daemon's stages. The key is loaded once before the batch (as a daemon's
 * preload would: srs is 0 per job and the load time is reported on its own line). Per job:
 *   synth    = reading the witness files + the prover's prep (checks, a, b, c, bit vectors)
 *   gpu      = the rest of cuzk_groth16_prove_start (H step and the G1 MSMs; CPU backend)
 *   finalize = cuzk_groth16_prove_finish (joins B_G2, randomisation, affine conversion)
 *   verify   = checking every proof against the key's own verification key, as the
 *              daemon does before it returns a proof
 *   queue    = 0 (a client thread proves its job as soon as it takes it)
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct bench_inproc {
    cuzk_zkey *zk;
    cuzk_vk *vk; /* from the key: the engine's self-check */
};

int bench_inproc_open(bench_inproc **out, const bench_opts *o, double *load_ms, char *err, size_t errlen)
{
    *out = NULL;
    bench_inproc *ip = calloc(1, sizeof *ip);
    if (!ip) {
        snprintf(err, errlen, "out of memory");
        return -1;
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

    cuzk_prove_opts popts = {.nthreads = o->threads};
    cuzk_prove_timings pt;
    double t1 = bench_now_ms();
    cuzk_err e = cuzk_groth16_prove_start(&pend, zk, w, n, wt[0]->n, &popts);
    if (e != CUZK_OK) {
        fail(j, "prove", e);
        goto out;
    }
    double t2 = bench_now_ms();
    e = cuzk_groth16_prove_finish(j->proofs, &pt, pend);
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
    j->t[BENCH_SYNTH] = t_read + pt.prep_ms;
    j->t[BENCH_GPU] = (t2 - t1) - pt.prep_ms;
    if (j->t[BENCH_GPU] < 0)
        j->t[BENCH_GPU] = 0;
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
