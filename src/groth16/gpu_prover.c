/* The prover's GPU stages: H (NTT step) and the G1 MSMs on a resident key. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk/groth16.h"
#include "groth16/gpu_prover.h"

#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#include "cuzk/poly.h"

struct cuzk_gpu_key {
    int device;
    pthread_mutex_t lock;         /* one proof at a time on this resident copy */
    cuzk_gpu_domain *dom;         /* snarkjs H on the device; NULL for bellman keys */
    cuzk_domain *cpu_dom;         /* bellman H runs on the CPU for now */
    cuzk_gpu_msm *h, *a, *b1, *l; /* resident bases */
    size_t n_a, n_b, n_l, n_h;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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
    cuzk_domain_free(k->cpu_dom);
    cuzk_gpu_msm_free(k->h);
    cuzk_gpu_msm_free(k->a);
    cuzk_gpu_msm_free(k->b1);
    cuzk_gpu_msm_free(k->l);
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
    k->device = device;
    k->n_a = density_count(pk->a_density, pk->n_vars);
    k->n_b = density_count(pk->b_density, pk->n_vars);
    k->n_l = pk->n_vars - pk->n_public - 1;
    k->n_h = pk->h_count;
    cuzk_err e;
    if (pk->conv == CUZK_CONV_SNARKJS)
        e = cuzk_gpu_domain_new(&k->dom, device, pk->log2_domain, CUZK_ROOTS_SNARKJS);
    else
        e = cuzk_domain_new(&k->cpu_dom, pk->log2_domain, CUZK_ROOTS_BELLMAN);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_new(&k->h, device, pk->h_pts, k->n_h);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_new(&k->a, device, pk->a_pts, k->n_a);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_new(&k->b1, device, pk->b1_pts, k->n_b);
    if (e == CUZK_OK)
        e = cuzk_gpu_msm_new(&k->l, device, pk->l_pts, k->n_l);
    if (e != CUZK_OK) {
        cuzk_groth16_gpu_key_free(k);
        return e;
    }
    *out = k;
    return CUZK_OK;
}

/* MSM over the wires whose density bit is set (all when NULL), on resident bases. */
static cuzk_err gpu_msm_density(cuzk_gpu_msm *m, cuzk_g1_jac *r, const uint64_t *density,
                                const cuzk_fr *w, size_t n, cuzk_msm_scalar *scratch)
{
    if (!density)
        return cuzk_gpu_g1_msm_fr(m, r, w, n, 0);
    size_t k = cuzk_msm_gather_fr(scratch, w, n, density, 0);
    return cuzk_gpu_g1_msm(m, r, scratch, k, 0);
}

cuzk_err cuzk_gpu_prove_one(cuzk_gpu_key *gk, pthread_mutex_t *lock, const cuzk_pk_view *pk,
                            const cuzk_fr *w,
                            cuzk_fr *a, cuzk_fr *b, cuzk_fr *c, cuzk_msm_scalar *scratch,
                            cuzk_g1_jac *h, cuzk_g1_jac *ra, cuzk_g1_jac *rb1, cuzk_g1_jac *rl,
                            double *h_ms, double *msm_ms)
{
    cuzk_err e;
    if (!lock)
        lock = &gk->lock;
    pthread_mutex_lock(lock);
    double t0 = now_ms();
    if (pk->conv == CUZK_CONV_SNARKJS)
        e = cuzk_gpu_h_snarkjs(gk->dom, a, b, c);
    else
        e = cuzk_h_bellman(gk->cpu_dom, a, b, c, 0);
    if (e == CUZK_OK)
        e = cuzk_gpu_g1_msm_fr(gk->h, h, a, gk->n_h, 0);
    double t1 = now_ms();
    size_t nv = pk->n_vars, npub = pk->n_public;
    if (e == CUZK_OK)
        e = gpu_msm_density(gk->a, ra, pk->a_density, w, nv, scratch);
    if (e == CUZK_OK)
        e = gpu_msm_density(gk->b1, rb1, pk->b_density, w, nv, scratch);
    if (e == CUZK_OK)
        e = cuzk_gpu_g1_msm_fr(gk->l, rl, w + npub + 1, gk->n_l, 0);
    double t2 = now_ms();
    pthread_mutex_unlock(lock);
    *h_ms += t1 - t0;
    *msm_ms += t2 - t1;
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

cuzk_err cuzk_gpu_prove_one(cuzk_gpu_key *gk, pthread_mutex_t *lock, const cuzk_pk_view *pk,
                            const cuzk_fr *w,
                            cuzk_fr *a, cuzk_fr *b, cuzk_fr *c, cuzk_msm_scalar *scratch,
                            cuzk_g1_jac *h, cuzk_g1_jac *ra, cuzk_g1_jac *rb1, cuzk_g1_jac *rl,
                            double *h_ms, double *msm_ms)
{
    (void)gk, (void)lock, (void)pk, (void)w, (void)a, (void)b, (void)c, (void)scratch;
    (void)h, (void)ra, (void)rb1, (void)rl, (void)h_ms, (void)msm_ms;
    return cuzk_error_set(CUZK_EUNSUPPORTED, "this build of cuzk has no GPU backend");
}
#endif

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
