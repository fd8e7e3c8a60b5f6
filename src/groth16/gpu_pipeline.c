/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU backend's batch pipeline (the contract with the prover: gpu_pipeline.h). Per
 * device, a worker whose helper thread prepares the next partition (synthesis or the given
 * a, b, c, or the witness for the device's synthesis; the split MSMs' bit vectors and
 * gathered scalars) while the device works on the present one: two buffer sets from the
 * resident key. A slot is handed over input by input: with a, b, c given, the device starts
 * on a partition once its a is in the slot (the copies of b and c and the splits' preparation
 * go on meanwhile, cuzk_gpu_inputs), so a batch's first partition does not wait for its whole
 * CPU side. With several devices each worker claims the batch's partitions from a shared
 * counter as it frees up, so a faster or less loaded device takes more.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groth16/gpu_pipeline.h"
#include "groth16/gpu_prover.h"
#include "util/parallel.h"
#include "util/timing.h"

cuzk_err cuzk_gpu_batch_open(cuzk_gpu_batch *b, const cuzk_pk_view *pk, size_t n_wit,
                             const cuzk_prove_opts *opts)
{
    memset(b, 0, sizeof *b);
    b->one = opts ? opts->gpu_key : NULL;
    b->keys = opts && opts->n_gpu_keys ? opts->gpu_keys : &b->one;
    b->n_keys = opts && opts->n_gpu_keys ? opts->n_gpu_keys : 1;
    b->lock = opts ? opts->device_lock : NULL;
    if (!b->keys[0]) {
        /* one-shot: a resident key on each device the batch can use */
        unsigned nk = cuzk_gpu_prover_devices();
        if (nk > n_wit)
            nk = n_wit ? (unsigned)n_wit : 1;
        if (nk > CUZK_MAX_GPUS)
            nk = CUZK_MAX_GPUS;
        nk = nk ? nk : 1;
        /* keys of this batch alone: no precomputed multiples unless asked for */
        cuzk_gpu_opts go;
        if (opts && opts->gpu)
            go = *opts->gpu;
        else
            cuzk_gpu_opts_default(&go);
        if (go.precompute == CUZK_GPU_PRECOMPUTE_AUTO)
            go.precompute = CUZK_GPU_PRECOMPUTE_OFF;
        for (unsigned d = 0; d < nk; d++) {
            cuzk_err e = cuzk_gpu_key_from_view(&b->owned[d], pk, (int)d, &go);
            if (e == CUZK_OK)
                continue;
            if (d == 0)
                return e;
            nk = d; /* a device that cannot hold the key: the others share the batch */
            cuzk_error_clear();
        }
        b->keys = b->owned;
        b->n_keys = nk;
    }
    /* B_G2 is the pipeline's when every key computes it on its device; else it runs beside
     * the device work on the prover's CPU thread. */
    b->b2_on_device = true;
    for (unsigned d = 0; d < b->n_keys; d++)
        b->b2_on_device = b->b2_on_device && cuzk_gpu_key_b_g2(b->keys[d]);
    return CUZK_OK;
}

void cuzk_gpu_batch_close(cuzk_gpu_batch *b)
{
    for (unsigned d = 0; d < CUZK_MAX_GPUS; d++) {
        cuzk_groth16_gpu_key_free(b->owned[d]);
        b->owned[d] = NULL;
    }
}

/* One device's worker. */
typedef struct {
    const cuzk_gpu_batch_io *io;
    cuzk_gpu_key *gk;
    pthread_mutex_t *lock;
    atomic_size_t *next;       /* the next unclaimed partition of the batch */
    bool dev_synth;            /* a, b, c synthesised on the device */
    cuzk_gpu_bufs *slot[2];
    size_t job[2];             /* the partition in each slot; n_wit: none left */
    bool busy[2];              /* the slot holds a claimed partition the device has not done */
    int stage[2];              /* its inputs ready so far: 1 a, 2 b, 3 c, 4 all (and err) */
    bool abort;
    cuzk_err err[2];           /* the CPU side's result for the partition in each slot */
    char why[2][256];          /* and its detail (error details are per thread) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double synth_ms;
    cuzk_prove_timings t;      /* this device's figures, merged after the join */
    cuzk_err result;
    char result_why[256];
} gpu_pipe;

/* Input `stage` of the partition in slot s is ready (1, 2, 3: a, b, c; see gpu_pipe). */
static void gpu_stage(gpu_pipe *g, unsigned s, int stage)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->stage[s] = stage;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* The CPU side of partition j into slot s: a, b, c (synthesised here, or copied when
 * given), or for synthesis on the device the witness, into the slot's page-locked buffer;
 * and the prepared splits of the MSMs. Given a, b, c are announced one by one (g NULL:
 * not). */
static cuzk_err gpu_cpu_side(const cuzk_gpu_batch_io *io, size_t j, cuzk_gpu_bufs *slot,
                             bool dev_synth, gpu_pipe *g, unsigned s)
{
    size_t n = (size_t)1 << io->pk->log2_domain;
    const cuzk_fr *wj = io->wit_inp ? NULL : io->w[j];
    if (io->abc) { /* given: into page-locked memory, so the upload runs at full speed */
        cuzk_err e = cuzk_gpu_bufs_reserve(slot, 3 * n);
        if (e != CUZK_OK)
            return e;
        for (int v = 0; v < 3; v++) {
            cuzk_parallel_memcpy(slot->abc + v * n, io->abc[j] + v * n, sizeof(cuzk_fr) * n,
                                 io->nthreads);
            gpu_stage(g, s, v + 1);
        }
    } else if (io->abc_split) {
        cuzk_err e = cuzk_gpu_bufs_reserve(slot, 3 * n);
        if (e != CUZK_OK)
            return e;
        cuzk_abc_split_copy(slot->abc, io->abc_split, j, io->abc_len, n, io->nthreads);
    } else if (dev_synth) {
        cuzk_err e = cuzk_gpu_bufs_witness(slot, wj, io->pk->n_vars);
        if (e != CUZK_OK)
            return e;
    } else {
        cuzk_pk_view_synth_abc(io->pk, wj, slot->abc, io->nthreads);
    }
    if (io->wit_inp) /* dev_synth is off: the witness is read here only */
        return cuzk_gpu_prep_splits_parts(io->pk, io->wit_inp[j], io->wit_aux[j], slot,
                                          io->nthreads);
    return cuzk_gpu_prep_splits(io->pk, wj, slot, io->nthreads);
}

static size_t gpu_claim(gpu_pipe *g)
{
    size_t j = atomic_fetch_add(g->next, 1);
    return j < g->io->n_wit ? j : g->io->n_wit;
}

/* The helper thread: the CPU side of the next partition into the free slot. */
static void *gpu_prep_main(void *arg)
{
    gpu_pipe *g = arg;
    const size_t n_wit = g->io->n_wit;
    for (unsigned s = 0;; s ^= 1) {
        pthread_mutex_lock(&g->mu);
        while (g->busy[s] && !g->abort)
            pthread_cond_wait(&g->cv, &g->mu);
        bool stop = g->abort;
        pthread_mutex_unlock(&g->mu);
        size_t j = stop ? n_wit : gpu_claim(g);
        pthread_mutex_lock(&g->mu);
        g->job[s] = j;
        g->stage[s] = 0;
        g->err[s] = CUZK_OK;
        g->busy[s] = true;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
        double t0 = cuzk_now_ms();
        cuzk_err e = j < n_wit ? gpu_cpu_side(g->io, j, g->slot[s], g->dev_synth, g, s) : CUZK_OK;
        pthread_mutex_lock(&g->mu);
        g->synth_ms += cuzk_now_ms() - t0;
        g->err[s] = e;
        if (e != CUZK_OK)
            snprintf(g->why[s], sizeof g->why[s], "%s", cuzk_error_detail());
        g->stage[s] = 4;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
        if (j >= n_wit)
            return NULL;
    }
}

/* cuzk_gpu_inputs of the partition in one slot: waits for its input i (stage i + 1). */
typedef struct {
    gpu_pipe *g;
    unsigned s;
} gpu_slot_ref;

static cuzk_err gpu_input_ready(void *ctx, int i)
{
    gpu_slot_ref *r = ctx;
    gpu_pipe *g = r->g;
    pthread_mutex_lock(&g->mu);
    while (g->stage[r->s] <= i && g->stage[r->s] < 4)
        pthread_cond_wait(&g->cv, &g->mu);
    cuzk_err e = CUZK_OK;
    if (g->stage[r->s] == 4 && g->err[r->s] != CUZK_OK)
        e = cuzk_error_set(g->err[r->s], "%s", g->why[r->s]);
    pthread_mutex_unlock(&g->mu);
    return e;
}

/* One device's share of the batch; the result and its detail land in g. */
static void *gpu_device_main(void *arg)
{
    gpu_pipe *g = arg;
    const cuzk_gpu_batch_io *io = g->io;
    size_t n = (size_t)1 << io->pk->log2_domain;
    cuzk_err e = cuzk_gpu_bufs_get(g->gk, &g->slot[0]);
    if (e == CUZK_OK && io->n_wit > 1 && (e = cuzk_gpu_bufs_get(g->gk, &g->slot[1])) != CUZK_OK)
        cuzk_gpu_bufs_put(g->gk, g->slot[0]);
    if (e != CUZK_OK) {
        atomic_store(g->next, io->n_wit);
        g->result = e;
        snprintf(g->result_why, sizeof g->result_why, "%s", cuzk_error_detail());
        return NULL;
    }
    if (!g->slot[1])
        g->slot[1] = g->slot[0]; /* one partition: one set (the second slot only ends it) */
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    pthread_t th;
    bool threaded = pthread_create(&th, NULL, gpu_prep_main, g) == 0;
    for (unsigned s = 0; e == CUZK_OK; s ^= 1) {
        size_t j;
        gpu_slot_ref ref = {g, s};
        const cuzk_gpu_inputs inputs = {gpu_input_ready, &ref};
        const cuzk_gpu_inputs *in = NULL;
        if (!threaded) { /* no thread to be had: prepare here */
            if ((j = gpu_claim(g)) >= io->n_wit)
                break;
            double t0 = cuzk_now_ms();
            e = gpu_cpu_side(io, j, g->slot[s], g->dev_synth, NULL, s);
            g->synth_ms += cuzk_now_ms() - t0;
        } else {
            /* the partition's first input (all of them but for given a, b, c) */
            pthread_mutex_lock(&g->mu);
            while (!(g->busy[s] && (g->job[s] >= io->n_wit || g->stage[s] >= 1)))
                pthread_cond_wait(&g->cv, &g->mu);
            j = g->job[s];
            e = g->stage[s] == 4 ? g->err[s] : CUZK_OK;
            if (e != CUZK_OK)
                cuzk_error_set(e, "%s", g->why[s]);
            pthread_mutex_unlock(&g->mu);
            if (j >= io->n_wit)
                break;
            in = &inputs;
        }
        /* a, b, c: given, synthesised here into the slot, or (NULL) on the device from the
         * witness the slot points at */
        const cuzk_fr *a = g->dev_synth ? NULL : g->slot[s]->abc;
        const cuzk_fr *buf = g->dev_synth ? g->slot[s]->wsrc : g->slot[s]->abc;
        if (e == CUZK_OK)
            e = cuzk_gpu_prove_one(g->gk, g->lock, io->pk, a, a ? a + n : NULL, a ? a + 2 * n : NULL,
                                   buf, g->slot[s], in, &io->h[j], &io->a[j], &io->b1[j],
                                   &io->l[j], io->b2 ? &io->b2[j] : NULL, &g->t);
        if (e == CUZK_OK && g->dev_synth && g->slot[s]->wreg)
            g->t.witness_in_place++;
        cuzk_gpu_bufs_witness_done(g->slot[s]);
        pthread_mutex_lock(&g->mu);
        g->busy[s] = false;
        if (e != CUZK_OK)
            g->abort = true;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
    }
    if (e != CUZK_OK) {
        atomic_store(g->next, io->n_wit); /* the other devices stop claiming */
        snprintf(g->result_why, sizeof g->result_why, "%s", cuzk_error_detail());
    }
    if (threaded)
        pthread_join(th, NULL);
    g->result = e;
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    if (g->slot[1] != g->slot[0])
        cuzk_gpu_bufs_put(g->gk, g->slot[1]);
    cuzk_gpu_bufs_put(g->gk, g->slot[0]);
    return NULL;
}

/* One device's figures into the batch's. */
static void timings_merge(cuzk_prove_timings *t, const gpu_pipe *g)
{
    const cuzk_prove_timings *d = &g->t;
    t->h_ms += d->h_ms;
    t->msm_ms += d->msm_ms;
    t->device_ms += d->device_ms;
    t->witness_in_place += d->witness_in_place;
    t->dev_abc_ms += d->dev_abc_ms;
    t->dev_ntt_ms += d->dev_ntt_ms;
    t->dev_h_msm_ms += d->dev_h_msm_ms;
    t->dev_batch_add_ms += d->dev_batch_add_ms;
    t->dev_tail_ms += d->dev_tail_ms;
    t->dev_b2_ms += d->dev_b2_ms;
    t->dev_split_wait_ms += d->dev_split_wait_ms;
    if (d->device_first_ms && (!t->device_first_ms || d->device_first_ms < t->device_first_ms))
        t->device_first_ms = d->device_first_ms;
    if (d->device_last_ms > t->device_last_ms)
        t->device_last_ms = d->device_last_ms;
    t->prep_ms += g->synth_ms;
}

cuzk_err cuzk_gpu_batch_prove(cuzk_gpu_batch *b, const cuzk_gpu_batch_io *io,
                              cuzk_prove_timings *t)
{
    atomic_size_t next;
    atomic_init(&next, 0);
    unsigned nk = b->n_keys;
    if (nk > io->n_wit)
        nk = io->n_wit ? (unsigned)io->n_wit : 1;
    gpu_pipe *g = calloc(nk, sizeof *g);
    pthread_t *th = calloc(nk, sizeof *th);
    bool *started = calloc(nk, sizeof *started);
    if (!g || !th || !started) {
        free(g), free(th), free(started);
        return cuzk_error_set(CUZK_ENOMEM, "prove: out of memory");
    }
    for (unsigned d = 0; d < nk; d++) {
        bool given = io->abc || io->abc_split || io->wit_inp;
        g[d] = (gpu_pipe){.io = io, .gk = b->keys[d], .lock = nk == 1 ? b->lock : NULL,
                          .next = &next, .dev_synth = !given && cuzk_gpu_key_synth(b->keys[d])};
        /* device 0 runs on this thread, the others on their own */
        if (d > 0)
            started[d] = pthread_create(&th[d], NULL, gpu_device_main, &g[d]) == 0;
    }
    gpu_device_main(&g[0]);
    cuzk_err e = CUZK_OK;
    for (unsigned d = 0; d < nk; d++) {
        if (d > 0 && started[d])
            pthread_join(th[d], NULL);
        else if (d > 0)
            gpu_device_main(&g[d]); /* no thread: runs after the others (claims what is left) */
        timings_merge(t, &g[d]);
        if (e == CUZK_OK && g[d].result != CUZK_OK) {
            e = g[d].result;
            cuzk_error_set(e, "%s", g[d].result_why);
        }
    }
    free(g), free(th), free(started);
    return e;
}
