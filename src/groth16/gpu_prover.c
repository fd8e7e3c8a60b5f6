/* The prover's GPU stages: H (NTT step) and the G1 MSMs on a resident key. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
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
    size_t n_a, n_b, n_l, n_h;
    size_t n, n_vars;              /* domain size and witness length, for the buffers */
    pthread_mutex_t bufs_mu;
    cuzk_gpu_bufs *free_bufs;
    unsigned n_free_bufs;
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
    free(b->scratch);
    free(b->one_bits);
    free(b->sig_bits);
    free(b);
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
        size_t bytes = sizeof(cuzk_fr) * 3 * gk->n;
        b = calloc(1, sizeof *b);
        if (b && cuzk_gpu_host_alloc((void **)&b->abc, bytes) == CUZK_OK) {
            b->pinned = true;
        } else if (b) {
            b->abc = malloc(bytes); /* page-locked memory ran out: ordinary memory works */
        }
        size_t m = gk->n > gk->n_vars ? gk->n : gk->n_vars;
        if (b) {
            b->scratch = malloc(sizeof(cuzk_msm_scalar) * m);
            b->one_bits = malloc(8 * CUZK_MSM_BITVEC_WORDS(m));
            b->sig_bits = malloc(8 * CUZK_MSM_BITVEC_WORDS(m));
        }
        if (!b || !b->abc || !b->scratch || !b->one_bits || !b->sig_bits) {
            bufs_free(b);
            *out = NULL;
            return cuzk_error_set(CUZK_ENOMEM, "prove: out of host memory for the work buffers "
                                               "of a 2^%zu-domain partition", (size_t)__builtin_ctzll(gk->n));
        }
    }
    b->next = NULL;
    *out = b;
    return CUZK_OK;
}

void cuzk_gpu_bufs_put(cuzk_gpu_key *gk, cuzk_gpu_bufs *b)
{
    if (!b)
        return;
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

cuzk_err cuzk_gpu_key_from_view(cuzk_gpu_key **out, const cuzk_pk_view *pk, int device)
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
    k->n = (size_t)1 << pk->log2_domain;
    k->n_vars = pk->n_vars;
    k->n_a = density_count(pk->a_density, pk->n_vars);
    k->n_b = density_count(pk->b_density, pk->n_vars);
    k->n_l = pk->n_vars - pk->n_public - 1;
    k->n_h = pk->h_count;
    cuzk_err e = cuzk_gpu_domain_new(&k->dom, device, pk->log2_domain,
                                     pk->conv == CUZK_CONV_SNARKJS ? CUZK_ROOTS_SNARKJS
                                                                   : CUZK_ROOTS_BELLMAN);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_new(&k->h, device, pk->h_pts, k->n_h);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_new(&k->a, device, pk->a_pts, k->n_a);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_new(&k->b1, device, pk->b1_pts, k->n_b);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_new(&k->l, device, pk->l_pts, k->n_l);
    /* B_G2 on the device when its G2 bases fit there (else the CPU thread does it). */
    if (e == CUZK_OK && cuzk_gpu_b_g2_on_device() &&
        cuzk_gpu_msm_new_g2(&k->b2, device, pk->b2_pts, k->n_b) != CUZK_OK) {
        k->b2 = NULL;
        cuzk_error_clear();
    }
    if (e != CUZK_OK) {
        cuzk_groth16_gpu_key_free(k);
        return e;
    }
    *out = k;
    return CUZK_OK;
}

/* Keeps, in order, the scalars whose bit is set; in place (each write lands at or before
 * its read). Returns the count. */
static size_t compact_in_place(cuzk_msm_scalar *x, size_t n, const uint64_t *bits)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (bits[i / 64] >> (i % 64) & 1)
            x[c++] = x[i];
    return c;
}

/* The Groth16 split on resident bases: the wires whose density bit is set (all when NULL)
 * are classified (0, 1, significant); the ones are batch-added and the significant ones go
 * through Pippenger, on the device. Only the significant scalars and two bit vectors are
 * uploaded. b: the key's buffers (scratch, bit vectors). */
static cuzk_err msm_split(cuzk_gpu_msm *m, bool g2, void *r, const uint64_t *density,
                          const cuzk_fr *w, size_t n, cuzk_gpu_bufs *b)
{
    size_t k = n;
    if (density) {
        k = cuzk_msm_gather_fr(b->scratch, w, n, density, 0);
        cuzk_msm_classify(b->one_bits, b->sig_bits, NULL, b->scratch, k, 0);
        compact_in_place(b->scratch, k, b->sig_bits);
    } else {
        cuzk_msm_classify_fr(b->one_bits, b->sig_bits, NULL, w, n, 0);
        cuzk_msm_gather_fr(b->scratch, w, n, b->sig_bits, 0);
    }
    unsigned f = CUZK_GPU_SCALARS_GATHERED;
    return g2 ? cuzk_gpu_g2_msm_split(m, r, b->scratch, f, b->one_bits, b->sig_bits, k, 0)
              : cuzk_gpu_g1_msm_split(m, r, b->scratch, f, b->one_bits, b->sig_bits, k, 0);
}

bool cuzk_gpu_key_b_g2(const cuzk_gpu_key *gk) { return gk && gk->b2; }

cuzk_err cuzk_gpu_prove_one(cuzk_gpu_key *gk, pthread_mutex_t *lock, const cuzk_pk_view *pk,
                            const cuzk_fr *w, cuzk_fr *a, cuzk_fr *b, cuzk_fr *c,
                            cuzk_gpu_bufs *bufs, cuzk_g1_jac *h, cuzk_g1_jac *ra,
                            cuzk_g1_jac *rb1, cuzk_g1_jac *rl, cuzk_g2_jac *rb2,
                            cuzk_prove_timings *t)
{
    cuzk_err e;
    if (!lock)
        lock = &gk->lock;
    pthread_mutex_lock(lock);
    double t0 = cuzk_now_ms(); /* the device is ours from here */
    e = pk->conv == CUZK_CONV_SNARKJS ? cuzk_gpu_h_snarkjs(gk->dom, a, b, c)
                                      : cuzk_gpu_h_bellman(gk->dom, a, b, c);
    if (e == CUZK_OK)
        e = cuzk_gpu_g1_msm_fr(gk->h, h, a, gk->n_h, 0);
    double t1 = cuzk_now_ms();
    size_t nv = pk->n_vars, npub = pk->n_public;
    if (e == CUZK_OK)
        e = msm_split(gk->a, false, ra, pk->a_density, w, nv, bufs);
    if (e == CUZK_OK)
        e = msm_split(gk->b1, false, rb1, pk->b_density, w, nv, bufs);
    if (e == CUZK_OK)
        e = msm_split(gk->l, false, rl, NULL, w + npub + 1, gk->n_l, bufs);
    if (e == CUZK_OK && rb2 && gk->b2)
        e = msm_split(gk->b2, true, rb2, pk->b_density, w, nv, bufs);
    double t2 = cuzk_now_ms();
    pthread_mutex_unlock(lock);
    t->h_ms += t1 - t0;
    t->msm_ms += t2 - t1;
    t->device_ms += t2 - t0;
    if (t->device_first_ms == 0 || t0 < t->device_first_ms)
        t->device_first_ms = t0;
    if (t2 > t->device_last_ms)
        t->device_last_ms = t2;
    return e;
}

cuzk_err cuzk_groth16_gpu_key_new(cuzk_gpu_key **out, const cuzk_zkey *pk, int device)
{
    cuzk_pk_view v;
    cuzk_pk_view_from_zkey(&v, pk);
    return cuzk_gpu_key_from_view(out, &v, device);
}

#else /* no CUDA in this build */

cuzk_err cuzk_groth16_gpu_key_new(cuzk_gpu_key **out, const cuzk_zkey *pk, int device)
{
    (void)pk;
    (void)device;
    *out = NULL;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}

void cuzk_groth16_gpu_key_free(cuzk_gpu_key *k) { (void)k; }

cuzk_err cuzk_gpu_key_from_view(cuzk_gpu_key **out, const cuzk_pk_view *pk, int device)
{
    (void)pk;
    (void)device;
    *out = NULL;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}

bool cuzk_gpu_key_b_g2(const cuzk_gpu_key *gk)
{
    (void)gk;
    return false;
}

cuzk_err cuzk_gpu_prove_one(cuzk_gpu_key *gk, pthread_mutex_t *lock, const cuzk_pk_view *pk,
                            const cuzk_fr *w, cuzk_fr *a, cuzk_fr *b, cuzk_fr *c,
                            cuzk_gpu_bufs *bufs, cuzk_g1_jac *h, cuzk_g1_jac *ra,
                            cuzk_g1_jac *rb1, cuzk_g1_jac *rl, cuzk_g2_jac *rb2,
                            cuzk_prove_timings *t)
{
    (void)gk, (void)lock, (void)pk, (void)w, (void)a, (void)b, (void)c, (void)bufs;
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
#endif

/* Where B_G2 runs with the GPU backend: on the device by default (measured on an H200 with
 * 16 host cores, porep-24 x2: 4.2 s with B_G2 on the device against 6.4 s with it on 16 CPU
 * threads; bench/RESULTS.md), falling back to the CPU thread when its G2 bases do not fit
 * in device memory; CUZK_B_G2=cpu keeps it on the CPU. */
bool cuzk_gpu_b_g2_on_device(void)
{
    const char *v = getenv("CUZK_B_G2");
    return !(v && !strcmp(v, "cpu"));
}

cuzk_backend cuzk_groth16_backend(const cuzk_prove_opts *opts)
{
    cuzk_backend b = opts ? opts->backend : CUZK_BACKEND_AUTO;
    if (b != CUZK_BACKEND_AUTO)
        return b;
    const char *env = getenv("CUZK_BACKEND");
    if (env && !strcmp(env, "cpu"))
        return CUZK_BACKEND_CPU;
    if (env && !strcmp(env, "gpu"))
        return CUZK_BACKEND_GPU;
#ifdef CUZK_HAVE_CUDA
    return cuzk_gpu_available() ? CUZK_BACKEND_GPU : CUZK_BACKEND_CPU;
#else
    return CUZK_BACKEND_CPU;
#endif
}
