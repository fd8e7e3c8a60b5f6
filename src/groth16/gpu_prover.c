/* SPDX-License-Identifier: Apache-2.0 */
/* The prover's GPU stages: H (NTT step) and the G1 MSMs on a resident key. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "groth16/csr_dedup.h"
#include "groth16/gpu_prover.h"
#include "util/timing.h"

#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#include "cuzk/poly.h"

struct cuzk_gpu_key {
    int device;
    pthread_mutex_t lock;         /* one proof at a time on this resident copy */
    cuzk_gpu_domain *dom;         /* H on the device, in the key's root family */
    cuzk_gpu_msm *h, *a, *b1, *l; /* resident G1 bases */
    cuzk_gpu_msm *b2;             /* resident G2 bases when B_G2 runs on the device */
    cuzk_gpu_r1cs *synth;         /* resident matrices when a, b, c are synthesised there */
    size_t n_a, n_b, n_l, n_h;
    size_t n, n_vars;              /* domain size and witness length, for the buffers */
    pthread_mutex_t bufs_mu;
    cuzk_gpu_bufs *free_bufs;
    unsigned n_free_bufs;
    cuzk_gpu_opts opts;
};

#define BUFS_KEPT 2

static void bufs_free(cuzk_gpu_bufs *b)
{
    if (!b)
        return;
    if (b->pinned)
        cuzk_gpu_host_free(b->abc);
    else
        free(b->abc);
    cuzk_gpu_bufs_splits_free(b);
    free(b);
}

cuzk_err cuzk_gpu_bufs_reserve(cuzk_gpu_bufs *b, size_t vals)
{
    if (b->abc && b->abc_cap >= vals)
        return CUZK_OK;
    if (b->pinned)
        cuzk_gpu_host_free(b->abc);
    else
        free(b->abc);
    b->abc_cap = 0;
    size_t bytes = sizeof(cuzk_fr) * (vals ? vals : 1);
    b->pinned = cuzk_gpu_host_alloc((void **)&b->abc, bytes) == CUZK_OK;
    if (!b->pinned) {
        cuzk_error_clear();
        b->abc = malloc(bytes); /* page-locked memory ran out: ordinary memory works */
    }
    if (!b->abc)
        return cuzk_error_set(CUZK_ENOMEM, "prove: out of host memory for %zu values", vals);
    b->abc_cap = vals;
    return CUZK_OK;
}

cuzk_err cuzk_gpu_bufs_get(cuzk_gpu_key *gk, cuzk_gpu_bufs **out)
{
    pthread_mutex_lock(&gk->bufs_mu);
    cuzk_gpu_bufs *b = gk->free_bufs;
    if (b) {
        gk->free_bufs = b->next;
        gk->n_free_bufs--;
    }
    pthread_mutex_unlock(&gk->bufs_mu);
    if (!b) {
        /* a, b, c synthesised on the host (3n values); with synthesis on the device only
         * the witness on its way up, and only when it is not page-locked in place
         * (cuzk_gpu_bufs_witness reserves it then) */
        b = calloc(1, sizeof *b);
        if (b && !gk->synth && cuzk_gpu_bufs_reserve(b, 3 * gk->n) != CUZK_OK)
            cuzk_error_clear(); /* reported below */
        bool ok = b && (gk->synth || b->abc) && cuzk_gpu_bufs_splits_alloc(b, gk->n_vars);
        if (!ok) {
            bufs_free(b);
            *out = NULL;
            return cuzk_error_set(CUZK_ENOMEM, "prove: out of host memory for the work buffers "
                                               "of a 2^%zu-domain partition", (size_t)__builtin_ctzll(gk->n));
        }
    }
    b->next = NULL;
    b->witness_mode = gk->opts.witness;
    *out = b;
    return CUZK_OK;
}

/* Witnesses from this size up (2^25 values) are page-locked in place rather than copied,
 * for the host memory it saves (4 GiB a partition at 2^27); glibc serves them with mmap, so
 * two never share a page (registering a page twice fails). Below it the copy is faster:
 * page-locking takes the driver's lock and pins every page at each partition (2^22 daemon
 * jobs: 497.6 against 447.9 proofs/min on one H200, bench/RESULTS.md). */
#define WITNESS_REGISTER_MIN ((size_t)1 << 30)

cuzk_err cuzk_gpu_bufs_witness(cuzk_gpu_bufs *b, const cuzk_fr *w, size_t nv)
{
    const size_t bytes = sizeof(cuzk_fr) * nv;
    const cuzk_gpu_witness mode = b->witness_mode;
    b->wreg = false;
    b->wcopy = NULL;
    if ((bytes >= WITNESS_REGISTER_MIN || mode == CUZK_GPU_WITNESS_REGISTER) &&
        mode != CUZK_GPU_WITNESS_COPY) {
        if (cuzk_gpu_host_register((void *)(uintptr_t)w, bytes) == CUZK_OK) {
            b->wsrc = w;
            b->wreg = true;
            return CUZK_OK;
        }
        cuzk_error_clear(); /* the copy below works */
    }
    cuzk_err e = cuzk_gpu_bufs_reserve(b, nv);
    if (e != CUZK_OK)
        return e;
    b->wsrc = b->abc;
    b->wcopy = b->abc; /* filled by cuzk_gpu_prep_splits's classification pass */
    return CUZK_OK;
}

void cuzk_gpu_bufs_witness_done(cuzk_gpu_bufs *b)
{
    if (b && b->wreg)
        cuzk_gpu_host_unregister((void *)(uintptr_t)b->wsrc);
    if (b) {
        b->wreg = false;
        b->wsrc = NULL;
        b->wcopy = NULL;
    }
}

void cuzk_gpu_bufs_put(cuzk_gpu_key *gk, cuzk_gpu_bufs *b)
{
    if (!b)
        return;
    cuzk_gpu_bufs_witness_done(b);
    pthread_mutex_lock(&gk->bufs_mu);
    if (gk->n_free_bufs < BUFS_KEPT) {
        b->next = gk->free_bufs;
        gk->free_bufs = b;
        gk->n_free_bufs++;
        b = NULL;
    }
    pthread_mutex_unlock(&gk->bufs_mu);
    bufs_free(b);
}

static size_t density_count(const uint64_t *bits, size_t n)
{
    return bits ? cuzk_msm_bitvec_count(bits, n) : n;
}

void cuzk_groth16_gpu_key_free(cuzk_gpu_key *k)
{
    if (!k)
        return;
    cuzk_gpu_domain_free(k->dom);
    cuzk_gpu_r1cs_free(k->synth);
    cuzk_gpu_msm_free(k->b2);
    cuzk_gpu_msm_free(k->h);
    cuzk_gpu_msm_free(k->a);
    cuzk_gpu_msm_free(k->b1);
    cuzk_gpu_msm_free(k->l);
    while (k->free_bufs) {
        cuzk_gpu_bufs *b = k->free_bufs;
        k->free_bufs = b->next;
        bufs_free(b);
    }
    pthread_mutex_destroy(&k->bufs_mu);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

/* The key's matrices resident with deduplicated coefficients (indices into a table of the
 * distinct values: 8 instead of 36 bytes a term; PoRep-like circuits have few distinct
 * coefficients) when they fit; false (and nothing resident) otherwise. */
static bool synth_resident_dedup(cuzk_gpu_key *k, const cuzk_pk_view *pk, size_t reserve,
                                 size_t free_mem)
{
    const cuzk_csr *ms[3] = {pk->ma, pk->mb, pk->mc};
    uint32_t *idx[3];
    cuzk_fr *tab = NULL;
    size_t nt = 0;
    if (cuzk_csr_dedup(ms, 3, pk->n_rows, (size_t)1 << 20, idx, &tab, &nt) != CUZK_OK) {
        cuzk_error_clear(); /* too many distinct values */
        return false;
    }
    size_t need = cuzk_gpu_r1cs_bytes_dedup(pk->ma, pk->mb, pk->mc, pk->n_rows, pk->n_vars, nt);
    const uint32_t *const cidx[3] = {idx[0], idx[1], idx[2]};
    if (need + reserve <= free_mem &&
        cuzk_gpu_r1cs_new_dedup(&k->synth, k->device, pk->ma, pk->mb, pk->mc, pk->n_rows,
                                pk->n_vars, cidx, tab, nt) != CUZK_OK) {
        k->synth = NULL;
        cuzk_error_clear();
    }
    for (int i = 0; i < 3; i++)
        free(idx[i]);
    free(tab);
    return k->synth != NULL;
}

/* Device memory a proof needs per domain element (reserved when a key is made): the
 * domain's three slots; the MSMs' work (the H MSM's sort pairs, 16 bytes per pair and 11-13
 * windows, about 210; the split MSMs' pairs, about 50; buckets; with some room). */
#define DOMAIN_SLOT_BYTES 96
#define PROOF_WORK_BYTES 352

/* Synthesis on the device: the key's matrices go resident when they fit beside what the
 * proofs need there (DOMAIN_SLOT_BYTES + PROOF_WORK_BYTES per element): whole (36 bytes a
 * term) when they fit, else with deduplicated coefficients (8 bytes a term; at 2^27 only
 * these fit beside the key on an H200), else the CPU synthesises; k->opts.synth forces
 * one. */
static void synth_resident(cuzk_gpu_key *k, const cuzk_pk_view *pk)
{
    const bool force_full = k->opts.synth == CUZK_GPU_SYNTH_FULL;
    const bool force_dedup = k->opts.synth == CUZK_GPU_SYNTH_DEDUP;
    if (k->opts.synth == CUZK_GPU_SYNTH_OFF || !pk->ma || !pk->mb)
        return;
    cuzk_gpu_device_info info;
    if (cuzk_gpu_device_query(&info, k->device) != CUZK_OK) {
        cuzk_error_clear();
        return;
    }
    const size_t reserve = (size_t)(DOMAIN_SLOT_BYTES + PROOF_WORK_BYTES) * k->n;
    if (!force_dedup) {
        size_t need = cuzk_gpu_r1cs_bytes(pk->ma, pk->mb, pk->mc, pk->n_rows, pk->n_vars);
        if (need + reserve <= info.free_mem &&
            cuzk_gpu_r1cs_new(&k->synth, k->device, pk->ma, pk->mb, pk->mc, pk->n_rows,
                              pk->n_vars) != CUZK_OK) {
            k->synth = NULL;
            cuzk_error_clear();
        }
        if (k->synth || force_full)
            return;
    }
    (void)synth_resident_dedup(k, pk, reserve, info.free_mem);
}

bool cuzk_gpu_key_synth(const cuzk_gpu_key *gk) { return gk && gk->synth; }

/* One set of bases on the device (group 1: G1, 2: G2). CUZK_GPU_BASES_AUTO keeps it
 * resident when it fits with `reserve` bytes to spare, else streams it from host memory
 * o->msm_chunk bases at a time (cuzk_gpu_msm_new_streamed); RESIDENT or STREAM forces one. */
static cuzk_err key_msm(cuzk_gpu_msm **out, const cuzk_gpu_opts *o, int device, int group,
                        const void *pts, size_t n, size_t reserve)
{
    bool stream = o->bases == CUZK_GPU_BASES_STREAM;
    if (o->bases == CUZK_GPU_BASES_AUTO) {
        cuzk_gpu_device_info info;
        if (cuzk_gpu_device_query(&info, device) == CUZK_OK)
            stream = cuzk_gpu_msm_bytes(group, n) + reserve > info.free_mem;
        else
            cuzk_error_clear(); /* the constructor below reports it */
    }
    if (stream)
        return cuzk_gpu_msm_new_streamed(out, device, group, pts, n, o->msm_chunk);
    return group == 1 ? cuzk_gpu_msm_new(out, device, pts, n)
                      : cuzk_gpu_msm_new_g2(out, device, pts, n);
}

/* The bits (0 H, 1 A, 2 B1, 3 L, 4 B2) of the key's base sets for which has() is true. */
static unsigned key_sets(const cuzk_gpu_key *gk, bool (*has)(const cuzk_gpu_msm *))
{
    if (!gk)
        return 0;
    const cuzk_gpu_msm *m[5] = {gk->h, gk->a, gk->b1, gk->l, gk->b2};
    unsigned r = 0;
    for (int i = 0; i < 5; i++)
        if (has(m[i]))
            r |= 1u << i;
    return r;
}

unsigned cuzk_gpu_key_streamed(const cuzk_gpu_key *gk)
{
    return key_sets(gk, cuzk_gpu_msm_streamed);
}

unsigned cuzk_gpu_key_precomputed(const cuzk_gpu_key *gk)
{
    return key_sets(gk, cuzk_gpu_msm_precomputed);
}

/* CUZK_GPU_PRECOMPUTE_AUTO: the resident G1 base sets of 2^16 points or more (ON: of any
 * size), H first, get precomputed multiples while the device keeps `reserve` bytes and a
 * quarter of its memory free beside them (their buffers: W n 96 bytes at the window chosen
 * for n). A failure leaves the set as it was. B2's G2 set keeps its bases alone: its
 * multiples measured no faster on the H200 (session 14: porep-22 x10 device 635.0 against
 * 637.7 ms with G1's alone, porep-24 x4 843.9 against 829.6, the daemon 718.7 against
 * 723.6 partitions/min) for 12 x 192 bytes a point. */
static void key_precompute(cuzk_gpu_key *k, size_t reserve)
{
    if (k->opts.precompute == CUZK_GPU_PRECOMPUTE_OFF)
        return;
    cuzk_gpu_msm *m[4] = {k->h, k->a, k->b1, k->l};
    const size_t n[4] = {k->n_h, k->n_a, k->n_b, k->n_l};
    const size_t min_n = k->opts.precompute == CUZK_GPU_PRECOMPUTE_ON ? 1 : (size_t)1 << 16;
    for (int i = 0; i < 4; i++) {
        if (!m[i] || cuzk_gpu_msm_streamed(m[i]) || n[i] < min_n)
            continue;
        cuzk_gpu_device_info info;
        if (cuzk_gpu_device_query(&info, k->device) != CUZK_OK) {
            cuzk_error_clear();
            return;
        }
        const unsigned c = cuzk_gpu_msm_window_precomputed(n[i]);
        const size_t bytes = (size_t)((256 + c - 1) / c) * n[i] * sizeof(cuzk_g1_affine);
        if (bytes + reserve + info.total_mem / 4 > info.free_mem)
            continue;
        if (cuzk_gpu_msm_precompute(m[i], c) != CUZK_OK)
            cuzk_error_clear();
    }
}

bool cuzk_gpu_key_h_affine(const cuzk_gpu_key *gk)
{
    return gk && gk->h && cuzk_gpu_msm_accumulation_used(gk->h) == CUZK_GPU_MSM_ACC_AFFINE;
}

cuzk_err cuzk_gpu_key_from_view(cuzk_gpu_key **out, const cuzk_pk_view *pk, int device,
                                const cuzk_gpu_opts *opts)
{
    *out = NULL;
    if (!cuzk_gpu_available())
        return CUZK_EGPU; /* detail set by cuzk_gpu_available */
    cuzk_gpu_key *k = calloc(1, sizeof *k);
    if (!k)
        return cuzk_error_set(CUZK_ENOMEM, "gpu key: out of memory");
    pthread_mutex_init(&k->lock, NULL);
    pthread_mutex_init(&k->bufs_mu, NULL);
    k->device = device;
    if (opts)
        k->opts = *opts;
    else
        cuzk_gpu_opts_default(&k->opts);
    k->n = (size_t)1 << pk->log2_domain;
    k->n_vars = pk->n_vars;
    k->n_a = density_count(pk->a_density, pk->n_vars);
    k->n_b = density_count(pk->b_density, pk->n_vars);
    k->n_l = pk->n_vars - pk->n_public - 1;
    k->n_h = pk->h_count;
    cuzk_err e = cuzk_gpu_domain_new(&k->dom, device, pk->log2_domain,
                                     pk->conv == CUZK_CONV_SNARKJS ? CUZK_ROOTS_SNARKJS
                                                                   : CUZK_ROOTS_BELLMAN);
    /* room left for what the proofs allocate (the domain's slots are allocated by now) */
    const size_t reserve = (size_t)PROOF_WORK_BYTES * k->n;
    if (e == CUZK_OK)
        e = key_msm(&k->h, &k->opts, device, 1, pk->h_pts, k->n_h, reserve);
    if (e == CUZK_OK)
        e = key_msm(&k->a, &k->opts, device, 1, pk->a_pts, k->n_a, reserve);
    if (e == CUZK_OK)
        e = key_msm(&k->b1, &k->opts, device, 1, pk->b1_pts, k->n_b, reserve);
    if (e == CUZK_OK)
        e = key_msm(&k->l, &k->opts, device, 1, pk->l_pts, k->n_l, reserve);
    /* B_G2 on the device (resident or streamed) unless that fails: then the CPU thread. */
    if (e == CUZK_OK && k->opts.b_g2 == CUZK_GPU_B_G2_DEVICE &&
        key_msm(&k->b2, &k->opts, device, 2, pk->b2_pts, k->n_b, reserve) != CUZK_OK) {
        k->b2 = NULL;
        cuzk_error_clear();
    }
    if (e == CUZK_OK)
        synth_resident(k, pk);
    if (e == CUZK_OK)
        key_precompute(k, reserve);
    if (e != CUZK_OK) {
        cuzk_groth16_gpu_key_free(k);
        return e;
    }
    *out = k;
    return CUZK_OK;
}

/* The Groth16 split on the key's bases from a prepared split: the ones batch-added, then
 * the significant scalars through Pippenger, on the device (only those scalars and the two
 * bit vectors are uploaded); two calls so that each is timed (*t_ones, *t_tail), or with
 * streamed bases one (one pass of copies; all of it counts as tail). */
static cuzk_err msm_split(cuzk_gpu_msm *m, bool g2, void *r, const cuzk_gpu_split_in *sp,
                          double *t_ones, double *t_tail)
{
    const unsigned f = CUZK_GPU_SCALARS_GATHERED;
    double t0 = cuzk_now_ms();
    if (cuzk_gpu_msm_streamed(m)) { /* one pass over the bases: both parts in one call */
        cuzk_err e = g2 ? cuzk_gpu_g2_msm_split(m, r, sp->s, f, sp->one, sp->sig, sp->n, 0)
                        : cuzk_gpu_g1_msm_split(m, r, sp->s, f, sp->one, sp->sig, sp->n, 0);
        *t_tail += cuzk_now_ms() - t0;
        return e;
    }
    union {
        cuzk_g1_jac g1;
        cuzk_g2_jac g2;
    } ones, tail;
    cuzk_err e = g2 ? cuzk_gpu_g2_batch_add(m, &ones.g2, sp->one, sp->n)
                    : cuzk_gpu_g1_batch_add(m, &ones.g1, sp->one, sp->n);
    double t1 = cuzk_now_ms();
    if (e == CUZK_OK)
        e = g2 ? cuzk_gpu_g2_msm_split(m, &tail.g2, sp->s, f, NULL, sp->sig, sp->n, 0)
               : cuzk_gpu_g1_msm_split(m, &tail.g1, sp->s, f, NULL, sp->sig, sp->n, 0);
    *t_ones += t1 - t0;
    *t_tail += cuzk_now_ms() - t1;
    if (e != CUZK_OK)
        return e;
    if (g2)
        cuzk_g2_jac_add_var((cuzk_g2_jac *)r, &ones.g2, &tail.g2);
    else
        cuzk_g1_jac_add_var((cuzk_g1_jac *)r, &ones.g1, &tail.g1);
    return CUZK_OK;
}

bool cuzk_gpu_key_b_g2(const cuzk_gpu_key *gk) { return gk && gk->b2; }

/* One split MSM of a partition (A, B1, L or B2) on its own host thread: each context has
 * its own stream and buffers, so the four and the H step share the device, the kernels of
 * one filling what the others leave idle (their synchronisations, the window sums on the
 * host, the small kernels of the smaller MSMs). The detail of an error is per thread: it
 * is copied into why. */
typedef struct {
    cuzk_gpu_msm *m;
    bool g2;
    void *r;
    const cuzk_gpu_split_in *sp;
    const cuzk_gpu_inputs *in; /* wait for the splits' preparation first (input 3) */
    double ones, tail, wait;
    cuzk_err err;
    char why[256];
} split_task;

static void *split_main(void *arg)
{
    split_task *t = arg;
    const double t0 = cuzk_now_ms();
    t->err = t->in ? t->in->ready(t->in->ctx, 3) : CUZK_OK;
    t->wait = cuzk_now_ms() - t0;
    if (t->err == CUZK_OK)
        t->err = msm_split(t->m, t->g2, t->r, t->sp, &t->ones, &t->tail);
    if (t->err != CUZK_OK)
        snprintf(t->why, sizeof t->why, "%s", cuzk_error_detail());
    return NULL;
}

cuzk_err cuzk_gpu_prove_one(cuzk_gpu_key *gk, pthread_mutex_t *lock, const cuzk_pk_view *pk,
                            const cuzk_fr *a, const cuzk_fr *b, const cuzk_fr *c, const cuzk_fr *buf,
                            const cuzk_gpu_bufs *bufs, const cuzk_gpu_inputs *in,
                            cuzk_g1_jac *h, cuzk_g1_jac *ra, cuzk_g1_jac *rb1, cuzk_g1_jac *rl,
                            cuzk_g2_jac *rb2, cuzk_prove_timings *t)
{
    cuzk_err e = CUZK_OK;
    if (!lock)
        lock = &gk->lock;
    pthread_mutex_lock(lock);
    double t0 = cuzk_now_ms(); /* the device is ours from here */
    /* the split MSMs start at once, beside the H step, each on its own thread (one that
     * cannot be started runs here after the H MSM) */
    split_task st[4] = {
        {.m = gk->a, .r = ra, .sp = &bufs->sp[0], .in = in},
        {.m = gk->b1, .r = rb1, .sp = &bufs->sp[1], .in = in},
        {.m = gk->l, .r = rl, .sp = &bufs->sp[2], .in = in},
        {.m = gk->b2, .g2 = true, .r = rb2, .sp = &bufs->sp[1], .in = in},
    };
    const unsigned nst = rb2 && gk->b2 ? 4 : 3;
    pthread_t th[4];
    bool started[4] = {false, false, false, false};
    for (unsigned i = 0; i < nst; i++)
        started[i] = pthread_create(&th[i], NULL, split_main, &st[i]) == 0;
    double t_abc;
    if (a) { /* the copies (and the waits for b and c) overlap the transforms: their time
              * counts with the NTTs */
        t_abc = cuzk_now_ms();
        e = cuzk_gpu_domain_h_host_ready(gk->dom, a, b, c, in ? in->ready : NULL,
                                         in ? in->ctx : NULL);
    } else {
        if (gk->synth)
            e = cuzk_gpu_synthesize(gk->synth, gk->dom, buf); /* buf: the witness */
        else
            e = cuzk_error_set(CUZK_EINVAL, "prove: no a, b, c and no synthesis on the device");
        t_abc = cuzk_now_ms();
        if (e == CUZK_OK)
            e = pk->conv == CUZK_CONV_SNARKJS ? cuzk_gpu_domain_h_snarkjs(gk->dom)
                                              : cuzk_gpu_domain_h_bellman(gk->dom);
    }
    double t_ntt = cuzk_now_ms();
    /* the H MSM reads H's coefficients where the H step left them */
    void *hd = NULL;
    if (e == CUZK_OK)
        e = cuzk_gpu_domain_slot_dev(gk->dom, 0, &hd, NULL);
    if (e == CUZK_OK)
        e = cuzk_gpu_g1_msm_fr_dev(gk->h, h, hd, gk->n_h, 0);
    double t1 = cuzk_now_ms();
    char why[256] = "";
    if (e != CUZK_OK)
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
    for (unsigned i = 0; i < nst; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            split_main(&st[i]);
    }
    double t2 = cuzk_now_ms();
    pthread_mutex_unlock(lock);
    for (unsigned i = 0; e == CUZK_OK && i < nst; i++)
        if (st[i].err != CUZK_OK) {
            e = st[i].err;
            snprintf(why, sizeof why, "%s", st[i].why);
        }
    if (e != CUZK_OK)
        return cuzk_error_set(e, "%s", why);
    t->h_ms += t1 - t0;
    t->msm_ms += t2 - t1;
    t->device_ms += t2 - t0;
    t->dev_abc_ms += t_abc - t0;
    t->dev_ntt_ms += t_ntt - t_abc;
    t->dev_h_msm_ms += t1 - t_ntt;
    double wait = 0;
    for (unsigned i = 0; i < nst; i++)
        wait = st[i].wait > wait ? st[i].wait : wait;
    t->dev_split_wait_ms += wait;
    for (unsigned i = 0; i < 3; i++) {
        t->dev_batch_add_ms += st[i].ones;
        t->dev_tail_ms += st[i].tail;
    }
    if (nst == 4)
        t->dev_b2_ms += st[3].ones + st[3].tail;
    if (t->device_first_ms == 0 || t0 < t->device_first_ms)
        t->device_first_ms = t0;
    if (t2 > t->device_last_ms)
        t->device_last_ms = t2;
    return CUZK_OK;
}

unsigned cuzk_gpu_prover_devices(void)
{
    int n = cuzk_gpu_device_count();
    return n > 0 ? (unsigned)n : 1;
}

cuzk_err cuzk_groth16_gpu_key_new(cuzk_gpu_key **out, const cuzk_zkey *pk, int device,
                                  const cuzk_gpu_opts *opts)
{
    cuzk_pk_view v;
    cuzk_pk_view_from_zkey(&v, pk);
    return cuzk_gpu_key_from_view(out, &v, device, opts);
}

#else /* no CUDA in this build */

cuzk_err cuzk_groth16_gpu_key_new(cuzk_gpu_key **out, const cuzk_zkey *pk, int device,
                                  const cuzk_gpu_opts *opts)
{
    (void)pk, (void)device, (void)opts;
    *out = NULL;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}

void cuzk_groth16_gpu_key_free(cuzk_gpu_key *k) { (void)k; }

unsigned cuzk_gpu_prover_devices(void) { return 1; }

cuzk_err cuzk_gpu_key_from_view(cuzk_gpu_key **out, const cuzk_pk_view *pk, int device,
                                const cuzk_gpu_opts *opts)
{
    (void)pk, (void)device, (void)opts;
    *out = NULL;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}

bool cuzk_gpu_key_b_g2(const cuzk_gpu_key *gk)
{
    (void)gk;
    return false;
}

unsigned cuzk_gpu_key_streamed(const cuzk_gpu_key *gk)
{
    (void)gk;
    return 0;
}

unsigned cuzk_gpu_key_precomputed(const cuzk_gpu_key *gk)
{
    (void)gk;
    return 0;
}

bool cuzk_gpu_key_h_affine(const cuzk_gpu_key *gk)
{
    (void)gk;
    return false;
}

bool cuzk_gpu_key_synth(const cuzk_gpu_key *gk)
{
    (void)gk;
    return false;
}

cuzk_err cuzk_gpu_prove_one(cuzk_gpu_key *gk, pthread_mutex_t *lock, const cuzk_pk_view *pk,
                            const cuzk_fr *a, const cuzk_fr *b, const cuzk_fr *c, const cuzk_fr *buf,
                            const cuzk_gpu_bufs *bufs, const cuzk_gpu_inputs *in,
                            cuzk_g1_jac *h, cuzk_g1_jac *ra, cuzk_g1_jac *rb1, cuzk_g1_jac *rl,
                            cuzk_g2_jac *rb2, cuzk_prove_timings *t)
{
    (void)gk, (void)lock, (void)pk, (void)a, (void)b, (void)c, (void)buf, (void)bufs, (void)in;
    (void)h, (void)ra, (void)rb1, (void)rl, (void)rb2, (void)t;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}

cuzk_err cuzk_gpu_bufs_get(cuzk_gpu_key *gk, cuzk_gpu_bufs **out)
{
    (void)gk;
    *out = NULL;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}

void cuzk_gpu_bufs_put(cuzk_gpu_key *gk, cuzk_gpu_bufs *b)
{
    (void)gk;
    (void)b;
}

cuzk_err cuzk_gpu_bufs_reserve(cuzk_gpu_bufs *b, size_t vals)
{
    (void)b, (void)vals;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}

cuzk_err cuzk_gpu_bufs_witness(cuzk_gpu_bufs *b, const cuzk_fr *w, size_t nv)
{
    (void)b, (void)w, (void)nv;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}

void cuzk_gpu_bufs_witness_done(cuzk_gpu_bufs *b) { (void)b; }
#endif

/* ---- the CPU side of the split MSMs (plain C: tested in every build) ---- */

/* The eight bit vectors: the witness's ones and significant values, and each split's. */
static void splits_vectors(cuzk_gpu_bufs *b, uint64_t **v[8])
{
    uint64_t **all[8] = {&b->w_one, &b->w_sig, &b->sp[0].one, &b->sp[0].sig,
                         &b->sp[1].one, &b->sp[1].sig, &b->sp[2].one, &b->sp[2].sig};
    memcpy(v, all, sizeof all);
}

bool cuzk_gpu_bufs_splits_alloc(cuzk_gpu_bufs *b, size_t n_vars)
{
    size_t bv = 8 * CUZK_MSM_BITVEC_WORDS(n_vars);
    uint64_t **v[8];
    splits_vectors(b, v);
    bool ok = true;
    for (int i = 0; i < 8; i++)
        ok = (*v[i] = malloc(bv ? bv : 8)) != NULL && ok;
    return ok;
}

void cuzk_gpu_bufs_splits_free(cuzk_gpu_bufs *b)
{
    uint64_t **v[8];
    splits_vectors(b, v);
    for (int i = 0; i < 8; i++) {
        free(*v[i]);
        *v[i] = NULL;
    }
    for (int k = 0; k < 3; k++)
        cuzk_gpu_split_free_scalars(&b->sp[k]);
}
/* sp->s with room for cnt scalars (grown by a quarter more than asked, kept across proofs). */
void cuzk_gpu_split_free_scalars(cuzk_gpu_split_in *sp)
{
#ifdef CUZK_HAVE_CUDA
    if (sp->s_pinned)
        cuzk_gpu_host_free(sp->s);
    else
#endif
        free(sp->s);
    sp->s = NULL;
    sp->s_cap = 0;
    sp->s_pinned = false;
}

/* sp->s with room for cnt scalars (grown by a quarter more than asked, kept across proofs;
 * page-locked in CUDA builds when possible, for the upload). */
static cuzk_err split_room(cuzk_gpu_split_in *sp, size_t cnt)
{
    if (cnt <= sp->s_cap && sp->s)
        return CUZK_OK;
    size_t cap = cnt + cnt / 4 + 64;
    cuzk_gpu_split_free_scalars(sp);
#ifdef CUZK_HAVE_CUDA
    sp->s_pinned = cuzk_gpu_host_alloc((void **)&sp->s, sizeof(cuzk_msm_scalar) * cap) == CUZK_OK;
    if (!sp->s_pinned) {
        cuzk_error_clear(); /* no device, or page-locked memory ran out: ordinary memory */
        sp->s = NULL;
    }
#endif
    if (!sp->s && !(sp->s = malloc(sizeof(cuzk_msm_scalar) * cap)))
        return cuzk_error_set(CUZK_ENOMEM, "prove: out of host memory for %zu scalars", cap);
    sp->s_cap = cap;
    return CUZK_OK;
}

/* One split's bit vectors in the positions of the bases density selects (all when NULL),
 * from the witness classification in b, and room for its significant scalars. */
static cuzk_err prep_density(cuzk_gpu_split_in *sp, cuzk_gpu_bufs *b, const uint64_t *density,
                             size_t nv, unsigned T)
{
    sp->n = cuzk_msm_bitvec_compress(sp->one, b->w_one, density, nv, T);
    (void)cuzk_msm_bitvec_compress(sp->sig, b->w_sig, density, nv, T);
    return split_room(sp, cuzk_msm_bitvec_count(sp->sig, sp->n));
}

cuzk_err cuzk_gpu_prep_splits(const cuzk_pk_view *pk, const cuzk_fr *w, cuzk_gpu_bufs *b,
                              unsigned T)
{
    size_t nv = pk->n_vars, off = pk->n_public + 1;
    /* the witness's copy into the upload buffer, when one is due, rides on this pass */
    cuzk_msm_classify_fr_copy(b->w_one, b->w_sig, NULL, w, nv, T, b->wcopy);
    b->wcopy = NULL;
    cuzk_err e = prep_density(&b->sp[0], b, pk->a_density, nv, T);
    if (e == CUZK_OK)
        e = prep_density(&b->sp[1], b, pk->b_density, nv, T);
    /* L: the wires after the public inputs, no density */
    cuzk_gpu_split_in *sp = &b->sp[2];
    sp->n = nv - off;
    cuzk_msm_bitvec_extract(sp->one, b->w_one, off, sp->n);
    cuzk_msm_bitvec_extract(sp->sig, b->w_sig, off, sp->n);
    if (e == CUZK_OK)
        e = split_room(sp, cuzk_msm_bitvec_count(sp->sig, sp->n));
    if (e != CUZK_OK)
        return e;
    /* The three gathers in one pass over the significant values: a PoRep witness's are
     * nearly all in A and in L, so each is read and converted once instead of up to three
     * times. */
    cuzk_msm_gather_out g[3] = {{.out = b->sp[0].s, .mask = pk->a_density},
                                {.out = b->sp[1].s, .mask = pk->b_density},
                                {.out = b->sp[2].s, .lo = off}};
    if ((e = cuzk_msm_gather_fr_multi(g, 3, w, nv, b->w_sig, T)) != CUZK_OK)
        return e;
    for (int k = 0; k < 3; k++)
        b->sp[k].n_sig = g[k].count;
    return CUZK_OK;
}

/* dst bits [off, off + n) |= src bits [0, n) (src's bits past n are 0; dst holds
 * CUZK_MSM_BITVEC_WORDS(off + n) words). */
static void bits_place(uint64_t *dst, size_t off, const uint64_t *src, size_t n)
{
    size_t q = off / 64, words = CUZK_MSM_BITVEC_WORDS(n), end = CUZK_MSM_BITVEC_WORDS(off + n);
    unsigned sh = (unsigned)(off % 64);
    for (size_t i = 0; i < words; i++) {
        dst[q + i] |= src[i] << sh;
        if (sh && q + i + 1 < end)
            dst[q + i + 1] |= src[i] >> (64 - sh);
    }
}

cuzk_err cuzk_gpu_prep_splits_parts(const cuzk_pk_view *pk, const cuzk_fr *inp,
                                    const cuzk_fr *aux, cuzk_gpu_bufs *b, unsigned T)
{
    size_t nv = pk->n_vars, off = pk->n_public + 1, n_aux = nv - off;
    size_t wi = CUZK_MSM_BITVEC_WORDS(off), wa = CUZK_MSM_BITVEC_WORDS(n_aux) + 1;
    uint64_t *t = calloc(2 * wi + 4 * wa, sizeof(uint64_t));
    if (!t)
        return cuzk_error_set(CUZK_ENOMEM, "prove: out of memory for the witness's bit vectors");
    uint64_t *in_one = t, *in_sig = t + wi, *ax_one = t + 2 * wi, *ax_sig = ax_one + wa;
    uint64_t *a_aux = ax_sig + wa, *b_aux = a_aux + wa;
    /* the classification of each part, placed into the whole witness's vectors */
    cuzk_msm_classify_fr(in_one, in_sig, NULL, inp, off, 1);
    cuzk_msm_classify_fr(ax_one, ax_sig, NULL, aux, n_aux, T);
    size_t ww = CUZK_MSM_BITVEC_WORDS(nv);
    memset(b->w_one, 0, ww * sizeof(uint64_t));
    memset(b->w_sig, 0, ww * sizeof(uint64_t));
    memcpy(b->w_one, in_one, wi * sizeof(uint64_t));
    memcpy(b->w_sig, in_sig, wi * sizeof(uint64_t));
    bits_place(b->w_one, off, ax_one, n_aux);
    bits_place(b->w_sig, off, ax_sig, n_aux);
    /* the splits' bit vectors and room, as cuzk_gpu_prep_splits makes them */
    cuzk_err e = prep_density(&b->sp[0], b, pk->a_density, nv, T);
    if (e == CUZK_OK)
        e = prep_density(&b->sp[1], b, pk->b_density, nv, T);
    cuzk_gpu_split_in *sp = &b->sp[2];
    sp->n = n_aux;
    cuzk_msm_bitvec_extract(sp->one, b->w_one, off, sp->n);
    cuzk_msm_bitvec_extract(sp->sig, b->w_sig, off, sp->n);
    if (e == CUZK_OK)
        e = split_room(sp, cuzk_msm_bitvec_count(sp->sig, sp->n));
    /* the gathers: the inputs' significant values first, then the aux part's */
    cuzk_msm_gather_out gi[2] = {{.out = b->sp[0].s, .mask = pk->a_density},
                                 {.out = b->sp[1].s, .mask = pk->b_density}};
    if (e == CUZK_OK)
        e = cuzk_msm_gather_fr_multi(gi, 2, inp, off, in_sig, 1);
    if (e == CUZK_OK) {
        cuzk_msm_bitvec_extract(a_aux, pk->a_density, off, n_aux);
        cuzk_msm_bitvec_extract(b_aux, pk->b_density, off, n_aux);
        cuzk_msm_gather_out ga[3] = {{.out = b->sp[0].s + gi[0].count, .mask = a_aux},
                                     {.out = b->sp[1].s + gi[1].count, .mask = b_aux},
                                     {.out = b->sp[2].s}};
        e = cuzk_msm_gather_fr_multi(ga, 3, aux, n_aux, ax_sig, T);
        b->sp[0].n_sig = gi[0].count + ga[0].count;
        b->sp[1].n_sig = gi[1].count + ga[1].count;
        b->sp[2].n_sig = ga[2].count;
    }
    free(t);
    return e;
}

/* Where B_G2 runs with the GPU backend: on the device by default (measured on an H200 with
 * 16 host cores, porep-24 x2: 4.2 s with B_G2 on the device against 6.4 s with it on 16 CPU
 * threads; bench/RESULTS.md), falling back to the CPU thread when its G2 bases do not fit
 * in device memory; cuzk_gpu_opts.b_g2 = CUZK_GPU_B_G2_CPU keeps it on the CPU (key_new). */

cuzk_backend cuzk_groth16_backend(const cuzk_prove_opts *opts)
{
    cuzk_backend b = opts ? opts->backend : CUZK_BACKEND_AUTO;
    if (b != CUZK_BACKEND_AUTO)
        return b;
#ifdef CUZK_HAVE_CUDA
    return cuzk_gpu_available() ? CUZK_BACKEND_GPU : CUZK_BACKEND_CPU;
#else
    return CUZK_BACKEND_CPU;
#endif
}
