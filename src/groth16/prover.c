/* Groth16 prover, CPU backend: the stages of DESIGN.md section 2 for a batch of witnesses. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "groth16/gpu_prover.h"
#include "groth16/pk.h"
#include "cuzk/msm.h"
#include "cuzk/poly.h"
#include "util/parallel.h"
#include "util/timing.h"

struct cuzk_pending {
    cuzk_pk_view pk_view;      /* a copy: the caller's view may go away after start */
    const cuzk_pk_view *pk;
    size_t n_wit;
    unsigned nthreads;
    cuzk_fr *w;                 /* n_wit * n_vars witness copies (B_G2 reads them) */
    cuzk_fr *r, *s;             /* n_wit each */
    cuzk_g1_jac *a, *b1, *l, *h;
    cuzk_g2_jac *b2;
    cuzk_prove_timings t;
    double t_start;
    /* B_G2 on its own thread */
    pthread_t b2_thread;
    bool b2_started, b2_joined;
    bool b2_on_gpu;             /* B_G2 computed with the device work, no CPU thread */
    const cuzk_fr *const *abc_in; /* the caller's a, b, c (opts->abc), read during start only */
    /* The witnesses: copied into w when B_G2's CPU thread reads them after start returns;
     * else (B_G2 on the device) the caller's, read during start only (wsrc). */
    const cuzk_fr *const *wsrc;
    cuzk_err b2_err;
    double b2_ms;
};

static const cuzk_fr *wit(const cuzk_pending *p, size_t j)
{
    return p->w ? p->w + j * p->pk->n_vars : p->wsrc[j];
}

/* ---- prep: a = A.w, b = B.w, c = a o b over the key's rows, zero beyond ---- */
typedef struct {
    const cuzk_pk_view *pk;
    const cuzk_fr *w;
    cuzk_fr *a, *b, *c;
} synth_ctx;

/* Witnesses of large circuits are mostly bits: a term whose wire holds 0 adds nothing and
 * one holding 1 adds its coefficient, so only the other terms need a product. (Variable
 * time in the witness, like the MSMs.) */
static void csr_row_dot(cuzk_fr *out, const cuzk_csr *m, size_t row, const cuzk_fr *w)
{
    cuzk_fr acc, t;
    cuzk_fr_set_zero(&acc);
    for (uint64_t k = m->row[row]; k < m->row[row + 1]; k++) {
        const cuzk_fr *x = &w[m->col[k]];
        if (cuzk_fr_is_zero(x))
            continue;
        if (cuzk_fr_is_one(x)) {
            cuzk_fr_add(&acc, &acc, &m->val[k]);
            continue;
        }
        cuzk_fr_mul(&t, &m->val[k], x);
        cuzk_fr_add(&acc, &acc, &t);
    }
    *out = acc;
}

/* Witness values of a row a few rows ahead: the columns of large circuits are scattered over
 * a witness far larger than the caches, so the loads, not the products, set the pace. */
#define SYNTH_PREFETCH_ROWS 8
static void csr_row_prefetch(const cuzk_csr *m, size_t row, const cuzk_fr *w)
{
    uint64_t k = m->row[row], e = m->row[row + 1];
    for (unsigned t = 0; k < e && t < 4; k++, t++)
        __builtin_prefetch(&w[m->col[k]]);
}

static void synth_range(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    synth_ctx *c = p;
    size_t rows = c->pk->n_rows;
    for (size_t i = begin; i < end; i++) {
        if (i + SYNTH_PREFETCH_ROWS < rows) {
            size_t ahead = i + SYNTH_PREFETCH_ROWS;
            csr_row_prefetch(c->pk->ma, ahead, c->w);
            csr_row_prefetch(c->pk->mb, ahead, c->w);
            if (c->pk->mc)
                csr_row_prefetch(c->pk->mc, ahead, c->w);
        }
        if (i < rows) {
            csr_row_dot(&c->a[i], c->pk->ma, i, c->w);
            csr_row_dot(&c->b[i], c->pk->mb, i, c->w);
            if (c->pk->mc)
                csr_row_dot(&c->c[i], c->pk->mc, i, c->w);
            else
                cuzk_fr_mul(&c->c[i], &c->a[i], &c->b[i]);
        } else {
            cuzk_fr_set_zero(&c->a[i]);
            cuzk_fr_set_zero(&c->b[i]);
            cuzk_fr_set_zero(&c->c[i]);
        }
    }
}

/* a, b, c of partition j into abc (3n values): copied when the caller computed them, else
 * synthesised from the witness on all threads. */
static void fill_abc(const cuzk_pending *p, size_t j, cuzk_fr *abc)
{
    size_t n = (size_t)1 << p->pk->log2_domain;
    if (p->abc_in) {
        memcpy(abc, p->abc_in[j], sizeof(cuzk_fr) * 3 * n);
        return;
    }
    synth_ctx sc = {p->pk, wit(p, j), abc, abc + n, abc + 2 * n};
    cuzk_parallel_for(n, 1024, p->nthreads, synth_range, &sc);
}

/* sum of w_i * pts[k] over the wires i whose bit is set in density (k counts the set
 * bits), or over all n wires when density is NULL. scratch: n canonical scalars. */
#define DENSITY_MSM_(G, AFF, JAC)                                                               \
    static cuzk_err G##_msm_density(JAC *r, const AFF *pts, const uint64_t *density,           \
                                    const cuzk_fr *w, size_t n, cuzk_msm_scalar *scratch,      \
                                    const cuzk_msm_opts *mo)                                   \
    {                                                                                          \
        if (!density)                                                                          \
            return cuzk_##G##_msm_auto_fr(r, NULL, pts, w, n, mo);                             \
        size_t k = cuzk_msm_gather_fr(scratch, w, n, density, mo->nthreads);                   \
        return cuzk_##G##_msm_auto(r, NULL, pts, scratch, k, mo);                              \
    }
DENSITY_MSM_(g1, cuzk_g1_affine, cuzk_g1_jac)
DENSITY_MSM_(g2, cuzk_g2_affine, cuzk_g2_jac)

/* ---- B_G2 thread ---- */
static void *b2_main(void *arg)
{
    cuzk_pending *p = arg;
    double t0 = cuzk_now_ms();
    cuzk_msm_opts mo = {.nthreads = p->nthreads};
    size_t nv = p->pk->n_vars;
    cuzk_msm_scalar *scratch = malloc(sizeof(cuzk_msm_scalar) * nv);
    p->b2_err = scratch ? CUZK_OK : CUZK_ENOMEM;
    for (size_t j = 0; j < p->n_wit && p->b2_err == CUZK_OK; j++)
        p->b2_err = g2_msm_density(&p->b2[j], p->pk->b2_pts, p->pk->b_density, wit(p, j), nv,
                                   scratch, &mo);
    free(scratch);
    p->b2_ms = cuzk_now_ms() - t0;
    return NULL;
}

static void pending_join(cuzk_pending *p)
{
    if (p->b2_started && !p->b2_joined) {
        pthread_join(p->b2_thread, NULL);
        p->b2_joined = true;
    }
}

void cuzk_groth16_pending_free(cuzk_pending *p)
{
    if (!p)
        return;
    pending_join(p);
    /* r and s are secrets: wipe them before the memory is returned. */
    if (p->r)
        memset(p->r, 0, sizeof(cuzk_fr) * p->n_wit);
    if (p->s)
        memset(p->s, 0, sizeof(cuzk_fr) * p->n_wit);
    free(p->w);
    free(p->r);
    free(p->s);
    free(p->a);
    free(p->b1);
    free(p->l);
    free(p->h);
    free(p->b2);
    free(p);
}

const cuzk_fr *cuzk_groth16_public(const cuzk_zkey *pk, const cuzk_fr *witness)
{
    (void)pk;
    return witness + 1;
}

static cuzk_err draw_secrets(cuzk_pending *p, const cuzk_prove_opts *o)
{
    for (size_t j = 0; j < p->n_wit; j++) {
        if (o && o->test_r && o->test_s) {
            p->r[j] = *o->test_r;
            p->s[j] = *o->test_s;
            continue;
        }
        cuzk_err e = cuzk_random_fr(&p->r[j]);
        if (e == CUZK_OK)
            e = cuzk_random_fr(&p->s[j]);
        if (e != CUZK_OK)
            return e;
    }
    return CUZK_OK;
}

void cuzk_pk_view_from_zkey(cuzk_pk_view *v, const cuzk_zkey *z)
{
    memset(v, 0, sizeof *v);
    v->conv = CUZK_CONV_SNARKJS;
    v->n_vars = z->n_vars;
    v->n_public = z->n_public;
    v->log2_domain = z->log2_domain;
    v->alpha1 = &z->alpha1;
    v->beta1 = &z->beta1;
    v->delta1 = &z->delta1;
    v->beta2 = &z->beta2;
    v->delta2 = &z->delta2;
    v->a_pts = z->a_pts;
    v->b1_pts = z->b1_pts;
    v->b2_pts = z->b2_pts;
    v->l_pts = z->c_pts;
    v->h_pts = z->h_pts;
    v->h_count = z->domain_size;
    v->ma = &z->a;
    v->mb = &z->b;
    v->mc = NULL;
    v->n_rows = z->n_rows;
}

cuzk_err cuzk_pk_view_check_witness(const cuzk_pk_view *v, const cuzk_fr *w, size_t n)
{
    if (n != v->n_vars)
        return cuzk_error_set(CUZK_ESIZE, "the witness has %zu values, the key expects %u", n,
                              v->n_vars);
    if (!cuzk_fr_is_one(&w[0]))
        return cuzk_error_set(CUZK_EFORMAT, "the witness's first value is not 1");
    return CUZK_OK;
}

cuzk_err cuzk_groth16_prove_start(cuzk_pending **out, const cuzk_zkey *pk,
                                  const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                                  const cuzk_prove_opts *opts)
{
    *out = NULL;
    if (!pk)
        return cuzk_error_set(CUZK_EINVAL, "prove: no key");
    cuzk_pk_view v;
    cuzk_pk_view_from_zkey(&v, pk);
    return cuzk_groth16_prove_start_view(out, &v, witnesses, n_wit, wit_len, opts);
}

/* ---- CPU backend: every stage on the CPU, one partition after the other ---- */
static cuzk_err prove_cpu(cuzk_pending *p, const cuzk_domain *dom, cuzk_fr *abc,
                          cuzk_msm_scalar *scratch)
{
    const cuzk_pk_view *pk = p->pk;
    size_t nv = pk->n_vars, n = (size_t)1 << pk->log2_domain, npub = pk->n_public;
    cuzk_msm_opts mo = {.nthreads = p->nthreads};
    cuzk_err e = CUZK_OK;
    for (size_t j = 0; j < p->n_wit && e == CUZK_OK; j++) {
        const cuzk_fr *w = wit(p, j);
        double t1 = cuzk_now_ms();
        fill_abc(p, j, abc);
        synth_ctx sc = {pk, w, abc, abc + n, abc + 2 * n};
        double t2 = cuzk_now_ms();
        p->t.prep_ms += t2 - t1;

        e = pk->conv == CUZK_CONV_SNARKJS ? cuzk_h_snarkjs(dom, sc.a, sc.b, sc.c, p->nthreads)
                                          : cuzk_h_bellman(dom, sc.a, sc.b, sc.c, p->nthreads);
        if (e != CUZK_OK)
            break;
        if ((e = cuzk_g1_msm_fr(&p->h[j], scratch, pk->h_pts, sc.a, pk->h_count, &mo)) != CUZK_OK)
            break;
        double t3 = cuzk_now_ms();
        p->t.h_ms += t3 - t2;

        if ((e = g1_msm_density(&p->a[j], pk->a_pts, pk->a_density, w, nv, scratch, &mo)) != CUZK_OK ||
            (e = g1_msm_density(&p->b1[j], pk->b1_pts, pk->b_density, w, nv, scratch, &mo)) != CUZK_OK ||
            (e = cuzk_g1_msm_auto_fr(&p->l[j], NULL, pk->l_pts, w + npub + 1, nv - npub - 1, &mo)) != CUZK_OK)
            break;
        p->t.msm_ms += cuzk_now_ms() - t3;
    }
    return e;
}

/* ---- GPU backend: per device, a pipeline whose CPU thread prepares the next partition
 * (synthesis or the given a, b, c, and the split MSMs' bit vectors and gathered scalars)
 * while the device works on the current one; two buffer sets from the resident key handed
 * over through `ready`. With several devices, each pipeline claims the batch's partitions
 * from a shared counter as it frees up, so a faster or less loaded device takes more. ---- */
typedef struct {
    cuzk_pending *p;
    cuzk_gpu_key *gk;
    pthread_mutex_t *lock;
    atomic_size_t *next;       /* the next unclaimed partition of the batch */
    bool dev_synth;            /* a, b, c synthesised on the device */
    cuzk_gpu_bufs *slot[2];
    size_t job[2];             /* the partition in each slot; n_wit: none left */
    bool ready[2];
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

/* The CPU side of partition j into slot: a, b, c (synthesised here, or copied when given),
 * or for synthesis on the device the witness, into the slot's page-locked buffer; and the
 * prepared splits of the MSMs. */
static cuzk_err gpu_cpu_side(cuzk_pending *p, size_t j, cuzk_gpu_bufs *slot, bool dev_synth)
{
    size_t n = (size_t)1 << p->pk->log2_domain;
    if (p->abc_in) { /* given: into page-locked memory, so the upload runs at full speed */
        cuzk_err e = cuzk_gpu_bufs_reserve(slot, 3 * n);
        if (e != CUZK_OK)
            return e;
        cuzk_parallel_memcpy(slot->abc, p->abc_in[j], sizeof(cuzk_fr) * 3 * n, p->nthreads);
    } else if (dev_synth) {
        cuzk_err e = cuzk_gpu_bufs_witness(slot, wit(p, j), p->pk->n_vars);
        if (e != CUZK_OK)
            return e;
    } else {
        fill_abc(p, j, slot->abc);
    }
    return cuzk_gpu_prep_splits(p->pk, wit(p, j), slot, p->nthreads);
}

static size_t gpu_claim(gpu_pipe *g)
{
    size_t j = atomic_fetch_add(g->next, 1);
    return j < g->p->n_wit ? j : g->p->n_wit;
}

static void *gpu_synth_main(void *arg)
{
    gpu_pipe *g = arg;
    cuzk_pending *p = g->p;
    for (unsigned s = 0;; s ^= 1) {
        pthread_mutex_lock(&g->mu);
        while (g->ready[s] && !g->abort)
            pthread_cond_wait(&g->cv, &g->mu);
        bool stop = g->abort;
        pthread_mutex_unlock(&g->mu);
        size_t j = stop ? p->n_wit : gpu_claim(g);
        double t0 = cuzk_now_ms();
        cuzk_err e = j < p->n_wit ? gpu_cpu_side(p, j, g->slot[s], g->dev_synth) : CUZK_OK;
        pthread_mutex_lock(&g->mu);
        g->synth_ms += cuzk_now_ms() - t0;
        g->job[s] = j;
        g->err[s] = e;
        if (e != CUZK_OK)
            snprintf(g->why[s], sizeof g->why[s], "%s", cuzk_error_detail());
        g->ready[s] = true;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
        if (j >= p->n_wit)
            return NULL;
    }
}

/* One device's share of the batch; the result and its detail land in g. */
static void *gpu_device_main(void *arg)
{
    gpu_pipe *g = arg;
    cuzk_pending *p = g->p;
    size_t n = (size_t)1 << p->pk->log2_domain;
    cuzk_err e = cuzk_gpu_bufs_get(g->gk, &g->slot[0]);
    if (e == CUZK_OK && p->n_wit > 1 && (e = cuzk_gpu_bufs_get(g->gk, &g->slot[1])) != CUZK_OK)
        cuzk_gpu_bufs_put(g->gk, g->slot[0]);
    if (e != CUZK_OK) {
        atomic_store(g->next, p->n_wit);
        g->result = e;
        snprintf(g->result_why, sizeof g->result_why, "%s", cuzk_error_detail());
        return NULL;
    }
    if (!g->slot[1])
        g->slot[1] = g->slot[0]; /* one partition: one set (the second slot only ends it) */
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    pthread_t th;
    bool threaded = pthread_create(&th, NULL, gpu_synth_main, g) == 0;
    for (unsigned s = 0; e == CUZK_OK; s ^= 1) {
        size_t j;
        if (!threaded) { /* no thread to be had: prepare here */
            if ((j = gpu_claim(g)) >= p->n_wit)
                break;
            double t0 = cuzk_now_ms();
            e = gpu_cpu_side(p, j, g->slot[s], g->dev_synth);
            g->synth_ms += cuzk_now_ms() - t0;
        } else {
            pthread_mutex_lock(&g->mu);
            while (!g->ready[s])
                pthread_cond_wait(&g->cv, &g->mu);
            j = g->job[s];
            e = g->err[s];
            if (e != CUZK_OK)
                cuzk_error_set(e, "%s", g->why[s]);
            pthread_mutex_unlock(&g->mu);
            if (j >= p->n_wit)
                break;
        }
        /* a, b, c: given, synthesised here into the slot, or (NULL) on the device from the
         * witness the slot points at */
        const cuzk_fr *a = g->dev_synth ? NULL : g->slot[s]->abc;
        const cuzk_fr *buf = g->dev_synth ? g->slot[s]->wsrc : g->slot[s]->abc;
        if (e == CUZK_OK)
            e = cuzk_gpu_prove_one(g->gk, g->lock, p->pk, a, a ? a + n : NULL, a ? a + 2 * n : NULL,
                                   buf, g->slot[s], &p->h[j], &p->a[j], &p->b1[j], &p->l[j],
                                   p->b2_on_gpu ? &p->b2[j] : NULL, &g->t);
        if (e == CUZK_OK && g->dev_synth && g->slot[s]->wreg)
            g->t.witness_in_place++;
        cuzk_gpu_bufs_witness_done(g->slot[s]);
        pthread_mutex_lock(&g->mu);
        g->ready[s] = false;
        if (e != CUZK_OK)
            g->abort = true;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
    }
    if (e != CUZK_OK) {
        atomic_store(g->next, p->n_wit); /* the other devices stop claiming */
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

/* The batch over nk resident keys (one per device; lock: the device lock when nk == 1). */
static cuzk_err prove_gpu(cuzk_pending *p, cuzk_gpu_key *const *gks, unsigned nk,
                          pthread_mutex_t *lock)
{
    atomic_size_t next;
    atomic_init(&next, 0);
    if (nk > p->n_wit)
        nk = p->n_wit ? (unsigned)p->n_wit : 1;
    gpu_pipe *g = calloc(nk, sizeof *g);
    pthread_t *th = calloc(nk, sizeof *th);
    bool *started = calloc(nk, sizeof *started);
    if (!g || !th || !started) {
        free(g), free(th), free(started);
        return cuzk_error_set(CUZK_ENOMEM, "prove: out of memory");
    }
    for (unsigned d = 0; d < nk; d++) {
        g[d] = (gpu_pipe){.p = p, .gk = gks[d], .lock = nk == 1 ? lock : NULL, .next = &next,
                          .dev_synth = !p->abc_in && cuzk_gpu_key_synth(gks[d])};
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
        cuzk_prove_timings *t = &g[d].t;
        p->t.h_ms += t->h_ms;
        p->t.msm_ms += t->msm_ms;
        p->t.device_ms += t->device_ms;
        p->t.witness_in_place += t->witness_in_place;
        p->t.dev_abc_ms += t->dev_abc_ms;
        p->t.dev_ntt_ms += t->dev_ntt_ms;
        p->t.dev_h_msm_ms += t->dev_h_msm_ms;
        p->t.dev_batch_add_ms += t->dev_batch_add_ms;
        p->t.dev_tail_ms += t->dev_tail_ms;
        p->t.dev_b2_ms += t->dev_b2_ms;
        if (t->device_first_ms && (!p->t.device_first_ms || t->device_first_ms < p->t.device_first_ms))
            p->t.device_first_ms = t->device_first_ms;
        if (t->device_last_ms > p->t.device_last_ms)
            p->t.device_last_ms = t->device_last_ms;
        p->t.prep_ms += g[d].synth_ms;
        if (e == CUZK_OK && g[d].result != CUZK_OK) {
            e = g[d].result;
            cuzk_error_set(e, "%s", g[d].result_why);
        }
    }
    free(g), free(th), free(started);
    return e;
}

cuzk_err cuzk_groth16_prove_start_view(cuzk_pending **out, const cuzk_pk_view *view,
                                       const cuzk_fr *const *witnesses, size_t n_wit,
                                       size_t wit_len, const cuzk_prove_opts *opts)
{
    *out = NULL;
    if (!view || (!witnesses && n_wit))
        return cuzk_error_set(CUZK_EINVAL, "prove: no key or no witnesses");
    cuzk_error_clear();
    double t0 = cuzk_now_ms();
    for (size_t j = 0; j < n_wit; j++) {
        cuzk_err e = cuzk_pk_view_check_witness(view, witnesses[j], wit_len);
        if (e != CUZK_OK) {
            char why[400];
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
            return cuzk_error_set(e, "witness %zu of %zu: %s", j, n_wit, why);
        }
    }

    cuzk_pending *p = calloc(1, sizeof *p);
    if (!p)
        return cuzk_error_set(CUZK_ENOMEM, "prove: out of memory");
    p->pk_view = *view;
    p->pk = &p->pk_view;
    p->abc_in = opts ? opts->abc : NULL;
    const cuzk_pk_view *pk = p->pk;
    size_t nv = pk->n_vars, n = (size_t)1 << pk->log2_domain;
    p->n_wit = n_wit;
    p->nthreads = opts && opts->nthreads ? opts->nthreads : cuzk_parallel_threads();
    p->t_start = t0;
    p->r = calloc(n_wit + 1, sizeof(cuzk_fr));
    p->s = calloc(n_wit + 1, sizeof(cuzk_fr));
    p->a = calloc(n_wit + 1, sizeof(cuzk_g1_jac));
    p->b1 = calloc(n_wit + 1, sizeof(cuzk_g1_jac));
    p->l = calloc(n_wit + 1, sizeof(cuzk_g1_jac));
    p->h = calloc(n_wit + 1, sizeof(cuzk_g1_jac));
    p->b2 = calloc(n_wit + 1, sizeof(cuzk_g2_jac));
    cuzk_domain *dom = NULL;
    /* GPU: the caller's resident keys (one per device), or one made here per device used */
    cuzk_gpu_key *gk_owned[CUZK_MAX_GPUS] = {NULL}, *gk_one = opts ? opts->gpu_key : NULL;
    cuzk_gpu_key *const *gks = opts && opts->n_gpu_keys ? opts->gpu_keys : &gk_one;
    unsigned nk = opts && opts->n_gpu_keys ? opts->n_gpu_keys : 1;
    bool gpu = cuzk_groth16_backend(opts) == CUZK_BACKEND_GPU;
    /* The GPU path takes its buffers from the resident key; the CPU path allocates them. */
    cuzk_fr *abc = gpu ? NULL : malloc(sizeof(cuzk_fr) * 3 * n);
    cuzk_msm_scalar *scratch = gpu ? NULL : malloc(sizeof(cuzk_msm_scalar) * (n > nv ? n : nv));
    cuzk_err e = CUZK_OK;
    if (!p->r || !p->s || !p->a || !p->b1 || !p->l || !p->h || !p->b2 ||
        (!gpu && (!abc || !scratch))) {
        e = cuzk_error_set(CUZK_ENOMEM, "prove: out of memory for a batch of %zu (domain 2^%u)",
                           n_wit, pk->log2_domain);
        goto fail;
    }
    if (gpu && !gks[0]) {
        /* one-shot: a resident key on each device the batch can use */
        nk = cuzk_gpu_prover_devices();
        if (nk > n_wit)
            nk = n_wit ? (unsigned)n_wit : 1;
        if (nk > CUZK_MAX_GPUS)
            nk = CUZK_MAX_GPUS;
        nk = nk ? nk : 1;
        for (unsigned d = 0; d < nk; d++) {
            if ((e = cuzk_gpu_key_from_view(&gk_owned[d], pk, (int)d, opts ? opts->gpu : NULL)) == CUZK_OK)
                continue;
            if (d == 0)
                goto fail;
            nk = d; /* a device that cannot hold the key: the others share the batch */
            e = CUZK_OK;
            cuzk_error_clear();
        }
        gks = gk_owned;
    }
    cuzk_roots family = pk->conv == CUZK_CONV_SNARKJS ? CUZK_ROOTS_SNARKJS : CUZK_ROOTS_BELLMAN;
    if (!gpu && (e = cuzk_domain_new(&dom, pk->log2_domain, family)) != CUZK_OK) {
        cuzk_error_set(e, "prove: cannot build the NTT domain of 2^%u", pk->log2_domain);
        goto fail;
    }
    if ((e = draw_secrets(p, opts)) != CUZK_OK) {
        cuzk_error_set(e, "prove: getrandom failed");
        goto fail;
    }
    /* B_G2 runs beside everything else on its own CPU thread (overlapping the device work on
     * the GPU backend), unless the resident key does it on the device. */
    p->b2_on_gpu = gpu;
    for (unsigned d = 0; gpu && d < nk; d++)
        p->b2_on_gpu = p->b2_on_gpu && cuzk_gpu_key_b_g2(gks[d]);
    if (p->b2_on_gpu) {
        p->wsrc = witnesses; /* nothing reads them after start: no copy */
    } else {
        p->w = malloc(sizeof(cuzk_fr) * nv * (n_wit ? n_wit : 1));
        if (!p->w) {
            e = cuzk_error_set(CUZK_ENOMEM, "prove: out of memory for %zu witness copies", n_wit);
            goto fail;
        }
        for (size_t j = 0; j < n_wit; j++)
            memcpy(p->w + j * nv, witnesses[j], sizeof(cuzk_fr) * nv);
    }

    if (p->b2_on_gpu)
        p->b2_err = CUZK_OK;
    else if (pthread_create(&p->b2_thread, NULL, b2_main, p) == 0)
        p->b2_started = true;
    else
        b2_main(p);
    p->t.prep_ms += cuzk_now_ms() - t0;

    e = gpu ? prove_gpu(p, gks, nk, opts ? opts->device_lock : NULL)
            : prove_cpu(p, dom, abc, scratch);
    if (e != CUZK_OK && cuzk_error_detail()[0] == 0)
        cuzk_error_set(e, "prove: %s", cuzk_strerror(e));
fail:
    free(abc);
    free(scratch);
    cuzk_domain_free(dom);
    for (unsigned d = 0; d < CUZK_MAX_GPUS; d++)
        cuzk_groth16_gpu_key_free(gk_owned[d]);
    if (e != CUZK_OK) {
        cuzk_groth16_pending_free(p);
        return e;
    }
    *out = p;
    return CUZK_OK;
}

/*
 * Epilogue (snarkjs's groth16_prove, DESIGN.md section 1):
 *   pi_A = alpha1 + A + r delta1
 *   pi_B = beta2 + B2 + s delta2
 *   pi_C = L + H + s pi_A + r (beta1 + B1 + s delta1) - r s delta1
 * r and s are secret: only constant-time scalar multiplication and complete additions.
 */
static void epilogue_one(cuzk_proof *out, const cuzk_pending *p, size_t j)
{
    const cuzk_pk_view *pk = p->pk;
    const cuzk_fr *r = &p->r[j], *s = &p->s[j];
    cuzk_g1_jac alpha1, beta1, delta1, t, pa, pc, b1s;
    cuzk_g2_jac beta2, delta2, pb, t2;
    cuzk_fr rs;
    cuzk_g1_jac_from_affine(&alpha1, pk->alpha1);
    cuzk_g1_jac_from_affine(&beta1, pk->beta1);
    cuzk_g1_jac_from_affine(&delta1, pk->delta1);
    cuzk_g2_jac_from_affine(&beta2, pk->beta2);
    cuzk_g2_jac_from_affine(&delta2, pk->delta2);

    cuzk_g1_mul_fr(&t, &delta1, r);
    cuzk_g1_jac_add(&pa, &alpha1, &p->a[j]);
    cuzk_g1_jac_add(&pa, &pa, &t);

    cuzk_g2_mul_fr(&t2, &delta2, s);
    cuzk_g2_jac_add(&pb, &beta2, &p->b2[j]);
    cuzk_g2_jac_add(&pb, &pb, &t2);

    cuzk_g1_mul_fr(&t, &delta1, s);
    cuzk_g1_jac_add(&b1s, &beta1, &p->b1[j]);
    cuzk_g1_jac_add(&b1s, &b1s, &t);

    cuzk_g1_jac_add(&pc, &p->l[j], &p->h[j]);
    cuzk_g1_mul_fr(&t, &pa, s);
    cuzk_g1_jac_add(&pc, &pc, &t);
    cuzk_g1_mul_fr(&t, &b1s, r);
    cuzk_g1_jac_add(&pc, &pc, &t);
    cuzk_fr_mul(&rs, r, s);
    cuzk_g1_mul_fr(&t, &delta1, &rs);
    cuzk_g1_jac_neg(&t, &t);
    cuzk_g1_jac_add(&pc, &pc, &t);
    memset(&rs, 0, sizeof rs);

    cuzk_g1_jac_to_affine(&out->a, &pa);
    cuzk_g2_jac_to_affine(&out->b, &pb);
    cuzk_g1_jac_to_affine(&out->c, &pc);
}

void cuzk_groth16_pending_timings(const cuzk_pending *p, cuzk_prove_timings *t) { *t = p->t; }

cuzk_err cuzk_groth16_prove_finish(cuzk_proof *proofs, cuzk_prove_timings *timings, cuzk_pending *p)
{
    if (!p)
        return cuzk_error_set(CUZK_EINVAL, "prove_finish: no pending proof");
    pending_join(p);
    p->t.b_g2_ms = p->b2_ms;
    if (p->b2_err != CUZK_OK)
        return cuzk_error_set(p->b2_err, "prove: B_G2 MSM failed: %s", cuzk_strerror(p->b2_err));
    double t0 = cuzk_now_ms();
    for (size_t j = 0; j < p->n_wit; j++)
        epilogue_one(&proofs[j], p, j);
    double t1 = cuzk_now_ms();
    p->t.epilogue_ms = t1 - t0;
    p->t.total_ms = t1 - p->t_start;
    if (timings)
        *timings = p->t;
    return CUZK_OK;
}

cuzk_err cuzk_groth16_prove(cuzk_proof *proofs, cuzk_prove_timings *timings, const cuzk_zkey *pk,
                            const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                            const cuzk_prove_opts *opts)
{
    cuzk_pending *p;
    cuzk_err e = cuzk_groth16_prove_start(&p, pk, witnesses, n_wit, wit_len, opts);
    if (e != CUZK_OK)
        return e;
    e = cuzk_groth16_prove_finish(proofs, timings, p);
    cuzk_groth16_pending_free(p);
    return e;
}
