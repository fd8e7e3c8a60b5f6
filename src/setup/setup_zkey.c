/* SPDX-License-Identifier: Apache-2.0 */
/* Groth16 setup in snarkjs's conventions: a cuzk_zkey in memory (see include/cuzk/setup.h). */
#include <stdlib.h>
#include <string.h>

#include "setup/bellman.h"
#include "setup/setup_internal.h"
#include "util/parallel.h"

/* The fixed-base step of one run: the device (cuzk_setup_fb) or the CPU window tables,
 * built at their first use (none when every vector goes to the device). */
typedef struct {
    cuzk_setup_fb fb;
    const cuzk_setup_opts *opts;
    setup_g1_table t1;
    setup_g2_table t2;
    unsigned wb1, wb2, nth;
} zk_fb;

static cuzk_err zk_g1(zk_fb *f, cuzk_g1_affine *out, const cuzk_fr *k, size_t n)
{
    bool done;
    if (n == 0)
        return CUZK_OK;
    cuzk_err e = cuzk_setup_fb_gpu_g1(&f->fb, out, k, n, f->opts, &done);
    if (e != CUZK_OK || done)
        return e;
    if (!f->t1.t && (e = setup_g1_table_new(&f->t1, f->wb1, f->nth)) != CUZK_OK)
        return e;
    return setup_g1_mul_batch_var(out, k, n, &f->t1, f->nth);
}

static cuzk_err zk_g2(zk_fb *f, cuzk_g2_affine *out, const cuzk_fr *k, size_t n)
{
    bool done;
    if (n == 0)
        return CUZK_OK;
    cuzk_err e = cuzk_setup_fb_gpu_g2(&f->fb, out, k, n, f->opts, &done);
    if (e != CUZK_OK || done)
        return e;
    if (!f->t2.t && (e = setup_g2_table_new(&f->t2, f->wb2, f->nth)) != CUZK_OK)
        return e;
    return setup_g2_mul_batch_var(out, k, n, &f->t2, f->nth);
}

static unsigned floor_log2(uint64_t v)
{
    unsigned k = 0;
    while (v >>= 1)
        k++;
    return k;
}

/* m (n_constraints rows) followed by `extra` rows: row n_constraints + s holds wire s with
 * coefficient 1 when ones is set, nothing otherwise. */
static cuzk_err csr_extend(cuzk_csr *out, const cuzk_csr *m, size_t n_constraints, size_t extra,
                           bool ones)
{
    uint64_t nnz = m->row[n_constraints] - m->row[0];
    uint64_t tot = nnz + (ones ? extra : 0);
    out->n_rows = n_constraints + extra;
    out->row = malloc((out->n_rows + 1) * sizeof *out->row);
    out->col = malloc((tot ? tot : 1) * sizeof *out->col);
    out->val = malloc((tot ? tot : 1) * sizeof *out->val);
    if (!out->row || !out->col || !out->val)
        return cuzk_error_set(CUZK_ENOMEM, "setup: out of memory for the coefficients");
    for (size_t i = 0; i <= n_constraints; i++)
        out->row[i] = m->row[i] - m->row[0];
    memcpy(out->col, m->col + m->row[0], nnz * sizeof *out->col);
    memcpy(out->val, m->val + m->row[0], nnz * sizeof *out->val);
    for (size_t s = 0; s < extra; s++) {
        uint64_t k = out->row[n_constraints + s];
        if (ones) {
            out->col[k] = (uint32_t)s;
            cuzk_fr_set_one(&out->val[k]);
            k++;
        }
        out->row[n_constraints + s + 1] = k;
    }
    return CUZK_OK;
}

typedef struct {
    cuzk_fr *t;                   /* in: w_i, out: beta u_i + alpha v_i + w_i */
    const cuzk_fr *u, *v;
    const cuzk_setup_toxic *tw;
} comb_ctx;

static void comb_range(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    comb_ctx *c = p;
    cuzk_fr x;
    for (size_t i = begin; i < end; i++) {
        cuzk_fr_mul(&x, &c->tw->beta, &c->u[i]);
        cuzk_fr_add(&c->t[i], &c->t[i], &x);
        cuzk_fr_mul(&x, &c->tw->alpha, &c->v[i]);
        cuzk_fr_add(&c->t[i], &c->t[i], &x);
    }
    setup_wipe(&x, sizeof x);
}

typedef struct {
    cuzk_fr *x;
    const cuzk_fr *f;
} scale_ctx;

static void scale_range(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    scale_ctx *c = p;
    for (size_t i = begin; i < end; i++)
        cuzk_fr_mul(&c->x[i], &c->x[i], c->f);
}

static void scale(cuzk_fr *x, size_t n, const cuzk_fr *f, unsigned nthreads)
{
    scale_ctx c = {x, f};
    cuzk_parallel_for(n, 4096, nthreads, scale_range, &c);
}

cuzk_err cuzk_setup_zkey(cuzk_zkey **out, const cuzk_r1cs *r, const cuzk_setup_opts *opts)
{
    if (!out || !r)
        return cuzk_error_set(CUZK_EINVAL, "setup: NULL argument");
    *out = NULL;
    const size_t nc = r->n_constraints, npub = r->n_public, nv = r->n_wires;
    if (nv < npub + 1 || r->m[0].n_rows != nc || r->m[1].n_rows != nc || r->m[2].n_rows != nc)
        return cuzk_error_set(CUZK_EINVAL, "setup: inconsistent circuit (%zu wires, %zu public, "
                                           "%zu constraints)", nv, npub, nc);
    /* snarkjs: cirPower = log2(nConstraints + nPublic) + 1 (floor log2, log2(0) = 0) */
    const unsigned k = floor_log2((uint64_t)nc + npub) + 1;
    if (k + 1 > CUZK_FR_TWO_ADICITY)
        return cuzk_error_set(CUZK_ESIZE, "setup: domain 2^%u too large (snarkjs's H needs the "
                                          "2n-domain, at most 2^%u)", k, CUZK_FR_TWO_ADICITY);
    const size_t n = (size_t)1 << k, n_rows = nc + npub + 1, n_prv = nv - npub - 1;
    const unsigned nth = setup_threads(opts);
    double t0 = setup_now_ms(), t_start = t0;
    zk_fb f = {.opts = opts, .nth = nth};
    cuzk_err e = cuzk_setup_fb_init(&f.fb, opts);
    if (e != CUZK_OK)
        return e;
    f.fb.nthreads = nth;
    f.wb1 = setup_wbits_for(n > nv ? n : nv);
    f.wb2 = setup_wbits_for(nv);

    cuzk_setup_toxic tw;
    cuzk_zkey *z = calloc(1, sizeof *z);
    cuzk_fr *lag = malloc(n * sizeof *lag);
    cuzk_fr *u = malloc(nv * sizeof *u), *v = malloc(nv * sizeof *v), *w = malloc(nv * sizeof *w);
    if (!z || !lag || !u || !v || !w) {
        e = cuzk_error_set(CUZK_ENOMEM, "setup: out of memory (domain 2^%u, %zu wires)", k, nv);
        goto done;
    }
    z->n_vars = (uint32_t)nv;
    z->n_public = (uint32_t)npub;
    z->domain_size = (uint32_t)n;
    z->log2_domain = k;
    z->n_rows = (uint32_t)n_rows;
    z->n_constraints = (uint32_t)nc;
    z->ic = malloc((npub + 1) * sizeof *z->ic);
    z->a_pts = malloc(nv * sizeof *z->a_pts);
    z->b1_pts = malloc(nv * sizeof *z->b1_pts);
    z->b2_pts = malloc(nv * sizeof *z->b2_pts);
    z->c_pts = malloc((n_prv ? n_prv : 1) * sizeof *z->c_pts);
    z->h_pts = malloc(n * sizeof *z->h_pts);
    if (!z->ic || !z->a_pts || !z->b1_pts || !z->b2_pts || !z->c_pts || !z->h_pts) {
        e = cuzk_error_set(CUZK_ENOMEM, "setup: out of memory for the key (domain 2^%u)", k);
        goto done;
    }
    if ((e = csr_extend(&z->a, &r->m[0], nc, npub + 1, true)) != CUZK_OK ||
        (e = csr_extend(&z->b, &r->m[1], nc, npub + 1, false)) != CUZK_OK)
        goto done;
    if ((e = setup_toxic_get(&tw, opts, k + 1)) != CUZK_OK)
        goto done;
    setup_log(opts, &t0, "domain 2^%u, %zu wires, %zu public, %zu constraints: toxic waste drawn",
              k, nv, npub, nc);

    /* u, v, w: the wires' polynomials at tau (the extra rows add L_(nc+s) to u_s) */
    if ((e = setup_lagrange_at(lag, k, CUZK_ROOTS_SNARKJS, &tw.tau, 0, 1, n_rows, nth)) != CUZK_OK)
        goto wipe;
    if ((e = setup_column_eval(u, nv, &r->m[0], nc, lag, nth)) != CUZK_OK ||
        (e = setup_column_eval(v, nv, &r->m[1], nc, lag, nth)) != CUZK_OK ||
        (e = setup_column_eval(w, nv, &r->m[2], nc, lag, nth)) != CUZK_OK)
        goto wipe;
    for (size_t s = 0; s <= npub; s++)
        cuzk_fr_add(&u[s], &u[s], &lag[nc + s]);
    setup_log(opts, &t0, "Lagrange basis and wire polynomials at tau");

    cuzk_g1_generator_mul(&z->alpha1, &tw.alpha);
    cuzk_g1_generator_mul(&z->beta1, &tw.beta);
    cuzk_g2_generator_mul(&z->beta2, &tw.beta);
    cuzk_g2_generator_mul(&z->gamma2, &tw.gamma);
    cuzk_g1_generator_mul(&z->delta1, &tw.delta);
    cuzk_g2_generator_mul(&z->delta2, &tw.delta);

    if ((e = zk_g1(&f, z->a_pts, u, nv)) != CUZK_OK)
        goto wipe;
    setup_log(opts, &t0, "A: %zu G1 points (%s)", nv, cuzk_setup_fb_name(&f.fb, nv));
    if ((e = zk_g1(&f, z->b1_pts, v, nv)) != CUZK_OK)
        goto wipe;
    setup_log(opts, &t0, "B1: %zu G1 points (%s)", nv, cuzk_setup_fb_name(&f.fb, nv));
    if ((e = zk_g2(&f, z->b2_pts, v, nv)) != CUZK_OK)
        goto wipe;
    setup_log(opts, &t0, "B2: %zu G2 points (%s)", nv, cuzk_setup_fb_name(&f.fb, nv));

    /* w_i <- (beta u_i + alpha v_i + w_i), then / gamma (public) or / delta (private) */
    comb_ctx cc = {w, u, v, &tw};
    cuzk_parallel_for(nv, 4096, nth, comb_range, &cc);
    /* u and v are done with: wiped and freed now (less held at once) */
    setup_wipe(u, nv * sizeof *u);
    setup_wipe(v, nv * sizeof *v);
    free(u);
    free(v);
    u = v = NULL;
    cuzk_fr gi, di;
    cuzk_fr_inv(&gi, &tw.gamma);
    cuzk_fr_inv(&di, &tw.delta);
    scale(w, npub + 1, &gi, nth);
    scale(w + npub + 1, n_prv, &di, nth);
    if ((e = zk_g1(&f, z->ic, w, npub + 1)) != CUZK_OK ||
        (e = zk_g1(&f, z->c_pts, w + npub + 1, n_prv)) != CUZK_OK)
        goto wipe2;
    setup_log(opts, &t0, "IC and C: %zu G1 points (%s)", nv,
              cuzk_setup_fb_name(&f.fb, n_prv));

    /* H_j = L'_(2j+1)(tau) / delta, L' the 2n-domain's basis */
    if ((e = setup_lagrange_at(lag, k + 1, CUZK_ROOTS_SNARKJS, &tw.tau, 1, 2, n, nth)) != CUZK_OK)
        goto wipe2;
    scale(lag, n, &di, nth);
    if ((e = zk_g1(&f, z->h_pts, lag, n)) != CUZK_OK)
        goto wipe2;
    setup_log(opts, &t0, "H: %zu G1 points (%s)", n, cuzk_setup_fb_name(&f.fb, n));
    t0 = t_start;
    setup_log(opts, &t0, "done");

wipe2:
    setup_wipe(&gi, sizeof gi);
    setup_wipe(&di, sizeof di);
wipe:
    setup_wipe(&tw, sizeof tw);
done:
    if (lag)
        setup_wipe(lag, n * sizeof *lag);
    if (u)
        setup_wipe(u, nv * sizeof *u);
    if (v)
        setup_wipe(v, nv * sizeof *v);
    if (w)
        setup_wipe(w, nv * sizeof *w);
    free(lag);
    free(u);
    free(v);
    free(w);
    setup_g1_table_free(&f.t1);
    setup_g2_table_free(&f.t2);
    if (e != CUZK_OK) {
        cuzk_zkey_free(z);
        return e;
    }
    *out = z;
    return CUZK_OK;
}
