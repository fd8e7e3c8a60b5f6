/* SPDX-License-Identifier: Apache-2.0 */
/* bellman/bellperson convention: the circuit rows and densities, the key view, proving. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/msm.h"
#include "groth16/bellman.h"
#include "util/parallel.h"

void cuzk_bellman_circuit_free(cuzk_bellman_circuit *c)
{
    if (!c)
        return;
    cuzk_csr *m[3] = {&c->a, &c->b, &c->c};
    for (int i = 0; i < 3; i++) {
        free(m[i]->row);
        free(m[i]->col);
        free(m[i]->val);
    }
    free(c->a_density);
    free(c->b_density);
    free(c);
}

/* ---- densities ---- */
typedef struct {
    const cuzk_csr *m;
    uint64_t *bits;
} dens_ctx;

static void dens_range(void *vc, size_t b, size_t e, unsigned w)
{
    (void)w;
    dens_ctx *c = vc;
    const cuzk_csr *m = c->m;
    for (size_t i = b; i < e; i++) {
        for (uint64_t k = m->row[i]; k < m->row[i + 1]; k++) {
            if (cuzk_fr_is_zero(&m->val[k]))
                continue;
            uint32_t col = m->col[k];
            uint64_t bit = 1ULL << (col % 64);
            uint64_t *word = &c->bits[col / 64];
            if (!(__atomic_load_n(word, __ATOMIC_RELAXED) & bit))
                __atomic_fetch_or(word, bit, __ATOMIC_RELAXED);
        }
    }
}

static uint64_t density_of(uint64_t *bits, const cuzk_csr *m, uint32_t n_vars)
{
    dens_ctx c = {m, bits};
    cuzk_parallel_for(m->n_rows, 4096, 0, dens_range, &c);
    return cuzk_msm_bitvec_count(bits, n_vars);
}

/* The smallest k with 2^k >= rows: bellman's domain. */
static unsigned log2_rows(uint64_t rows)
{
    unsigned k = 0;
    while (((uint64_t)1 << k) < rows)
        k++;
    return k;
}

/* Appends bellman's input rows to matrices of m rows that c owns (A gains the terms). */
static cuzk_err circuit_extend(cuzk_bellman_circuit *c, const char *what)
{
    uint32_t np1 = c->n_public + 1, m = c->n_constraints;
    size_t rows = (size_t)m + np1;
    cuzk_csr *mats[3] = {&c->a, &c->b, &c->c};
    for (int i = 0; i < 3; i++) {
        uint64_t *row = realloc(mats[i]->row, (rows + 1) * sizeof *row);
        if (!row)
            return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory for the input rows", what);
        mats[i]->row = row;
        uint64_t nnz = row[m];
        for (uint32_t j = 1; j <= np1; j++)
            row[m + j] = nnz + (i == 0 ? j : 0);
        mats[i]->n_rows = rows;
    }
    uint64_t nnz = c->a.row[m];
    uint32_t *col = realloc(c->a.col, (nnz + np1) * sizeof *col);
    if (col)
        c->a.col = col;
    cuzk_fr *val = col ? realloc(c->a.val, (nnz + np1) * sizeof *val) : NULL;
    if (!val)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory for the input rows", what);
    c->a.val = val;
    for (uint32_t j = 0; j < np1; j++) {
        c->a.col[nnz + j] = j;        /* input j (j = 0 is the constant one) */
        cuzk_fr_set_one(&c->a.val[nnz + j]);
    }
    c->n_rows = (uint32_t)rows;
    c->log2_domain = log2_rows(rows);
    size_t words = CUZK_MSM_BITVEC_WORDS((size_t)c->n_vars);
    c->a_density = calloc(words ? words : 1, sizeof(uint64_t));
    c->b_density = calloc(words ? words : 1, sizeof(uint64_t));
    if (!c->a_density || !c->b_density)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory for the densities", what);
    c->n_a_dense = density_of(c->a_density, &c->a, c->n_vars);
    c->n_b_dense = density_of(c->b_density, &c->b, c->n_vars);
    return CUZK_OK;
}

/* Sizes of r, or CUZK_ESIZE when bellman's domain cannot hold them. */
static cuzk_err circuit_new(cuzk_bellman_circuit **out, const cuzk_r1cs *r, const char *what)
{
    *out = NULL;
    uint64_t rows = (uint64_t)r->n_constraints + r->n_public + 1;
    if (r->n_public >= r->n_wires || rows >= ((uint64_t)1 << CUZK_FR_TWO_ADICITY))
        return cuzk_error_set(CUZK_ESIZE, "%s: %u constraints and %u public inputs (%u wires) "
                                          "do not fit a bellman domain of at most 2^%d",
                              what, r->n_constraints, r->n_public, r->n_wires,
                              CUZK_FR_TWO_ADICITY);
    cuzk_bellman_circuit *c = calloc(1, sizeof *c);
    if (!c)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", what);
    c->n_vars = r->n_wires;
    c->n_public = r->n_public;
    c->n_constraints = r->n_constraints;
    *out = c;
    return CUZK_OK;
}

static void *dup_mem(const void *p, size_t n)
{
    void *q = malloc(n ? n : 1);
    if (q && n)
        memcpy(q, p, n);
    return q;
}

cuzk_err cuzk_bellman_circuit_from_r1cs(cuzk_bellman_circuit **out, const cuzk_r1cs *r)
{
    *out = NULL;
    if (!r)
        return cuzk_error_set(CUZK_EINVAL, "bellman circuit: no r1cs");
    cuzk_bellman_circuit *c;
    cuzk_err e = circuit_new(&c, r, "r1cs");
    if (e != CUZK_OK)
        return e;
    cuzk_csr *dst[3] = {&c->a, &c->b, &c->c};
    for (int i = 0; i < 3; i++) {
        const cuzk_csr *s = &r->m[i];
        uint64_t nnz = s->row[s->n_rows];
        dst[i]->n_rows = s->n_rows;
        dst[i]->row = dup_mem(s->row, (s->n_rows + 1) * sizeof *s->row);
        dst[i]->col = dup_mem(s->col, nnz * sizeof *s->col);
        dst[i]->val = dup_mem(s->val, nnz * sizeof *s->val);
        if (!dst[i]->row || !dst[i]->col || !dst[i]->val) {
            cuzk_bellman_circuit_free(c);
            return cuzk_error_set(CUZK_ENOMEM, "r1cs: out of memory copying the matrices");
        }
    }
    if ((e = circuit_extend(c, "r1cs")) != CUZK_OK) {
        cuzk_bellman_circuit_free(c);
        return e;
    }
    *out = c;
    return CUZK_OK;
}

static cuzk_err params_check(const cuzk_params *p, uint32_t n_vars, uint32_t n_public,
                             uint32_t n_constraints, unsigned log2_domain, const uint64_t *n_a,
                             const uint64_t *n_b);

cuzk_err cuzk_bellman_circuit_load(cuzk_bellman_circuit **out, const char *r1cs_path)
{
    return cuzk_bellman_circuit_load_for(out, r1cs_path, NULL);
}

cuzk_err cuzk_bellman_circuit_load_for(cuzk_bellman_circuit **out, const char *r1cs_path,
                                       const cuzk_params *p)
{
    *out = NULL;
    cuzk_r1cs *r;
    cuzk_err e = cuzk_r1cs_load(&r, r1cs_path);
    if (e != CUZK_OK)
        return e;
    cuzk_bellman_circuit *c;
    if ((e = circuit_new(&c, r, r1cs_path)) != CUZK_OK) {
        cuzk_r1cs_free(r);
        return e;
    }
    /* The header's counts against the key before the input rows and densities are built
     * from them: nothing else in an .r1cs bounds its public inputs and wires, so a forged
     * header could make those allocations as large as it likes. */
    if (p && (e = params_check(p, r->n_wires, r->n_public, r->n_constraints,
                               log2_rows((uint64_t)r->n_constraints + r->n_public + 1), NULL,
                               NULL)) != CUZK_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        e = cuzk_error_set(e, "%s does not fit the circuit %s: %s",
                           p->path && p->path[0] ? p->path : "params", r1cs_path, why);
        cuzk_bellman_circuit_free(c);
        cuzk_r1cs_free(r);
        return e;
    }
    /* take the matrices over; the r1cs keeps nothing */
    c->a = r->m[0];
    c->b = r->m[1];
    c->c = r->m[2];
    memset(r->m, 0, sizeof r->m);
    cuzk_r1cs_free(r);
    if ((e = circuit_extend(c, r1cs_path)) != CUZK_OK) {
        cuzk_bellman_circuit_free(c);
        return e;
    }
    *out = c;
    return CUZK_OK;
}

/* The key's vector lengths against a circuit's counts; the densities' (n_a, n_b) only when
 * given, as they are known only once the rows are built. */
static cuzk_err params_check(const cuzk_params *p, uint32_t n_vars, uint32_t n_public,
                             uint32_t n_constraints, unsigned log2_domain, const uint64_t *n_a,
                             const uint64_t *n_b)
{
    const char *path = p->path && p->path[0] ? p->path : "params";
    struct {
        const char *name;
        uint64_t have, want;
        const char *why;
        bool known;
    } chk[] = {
        {"ic", p->n_ic, (uint64_t)n_public + 1, "one per input, the constant one included", true},
        {"l", p->n_l, (uint64_t)n_vars - n_public - 1, "one per private wire", true},
        {"h", p->n_h, ((uint64_t)1 << log2_domain) - 1, "domain size - 1", true},
        {"a", p->n_a, n_a ? *n_a : 0, "one per wire with a nonzero A coefficient", n_a != NULL},
        {"b_g1", p->n_b_g1, n_b ? *n_b : 0, "one per wire with a nonzero B coefficient", n_b != NULL},
        {"b_g2", p->n_b_g2, n_b ? *n_b : 0, "one per wire with a nonzero B coefficient", n_b != NULL},
    };
    for (size_t i = 0; i < sizeof chk / sizeof chk[0]; i++)
        if (chk[i].known && chk[i].have != chk[i].want)
            return cuzk_error_set(CUZK_ESIZE,
                                  "%s: vector %s has %llu points, the circuit (%u wires, %u "
                                  "public, %u constraints, domain 2^%u) needs %llu (%s)",
                                  path, chk[i].name, (unsigned long long)chk[i].have, n_vars,
                                  n_public, n_constraints, log2_domain,
                                  (unsigned long long)chk[i].want, chk[i].why);
    return CUZK_OK;
}

cuzk_err cuzk_params_check_circuit(const cuzk_params *p, const cuzk_bellman_circuit *c)
{
    if (!p || !c)
        return cuzk_error_set(CUZK_EINVAL, "params: no key or no circuit");
    return params_check(p, c->n_vars, c->n_public, c->n_constraints, c->log2_domain,
                        &c->n_a_dense, &c->n_b_dense);
}

void cuzk_pk_view_from_params(cuzk_pk_view *v, const cuzk_params *p, const cuzk_bellman_circuit *c)
{
    memset(v, 0, sizeof *v);
    v->conv = CUZK_CONV_BELLMAN;
    v->n_vars = c->n_vars;
    v->n_public = c->n_public;
    v->log2_domain = c->log2_domain;
    v->alpha1 = &p->alpha1;
    v->beta1 = &p->beta1;
    v->delta1 = &p->delta1;
    v->beta2 = &p->beta2;
    v->delta2 = &p->delta2;
    v->a_pts = p->a;
    v->a_density = c->a_density;
    v->b1_pts = p->b_g1;
    v->b2_pts = p->b_g2;
    v->b_density = c->b_density;
    v->l_pts = p->l;
    v->h_pts = p->h;
    v->h_count = p->n_h;
    v->ma = &c->a;
    v->mb = &c->b;
    v->mc = &c->c;
    v->n_rows = c->n_rows;
}

cuzk_err cuzk_params_prove_start(cuzk_pending **out, const cuzk_params *p,
                                 const cuzk_bellman_circuit *c, const cuzk_fr *const *witnesses,
                                 size_t n_wit, size_t wit_len, const cuzk_prove_opts *opts)
{
    *out = NULL;
    cuzk_err e = cuzk_params_check_circuit(p, c);
    if (e != CUZK_OK)
        return e;
    cuzk_pk_view v;
    cuzk_pk_view_from_params(&v, p, c);
    return cuzk_groth16_prove_start_view(out, &v, witnesses, n_wit, wit_len, opts);
}

cuzk_err cuzk_params_prove(cuzk_proof *proofs, cuzk_prove_timings *timings, const cuzk_params *p,
                           const cuzk_bellman_circuit *c, const cuzk_fr *const *witnesses,
                           size_t n_wit, size_t wit_len, const cuzk_prove_opts *opts)
{
    cuzk_pending *pend;
    cuzk_err e = cuzk_params_prove_start(&pend, p, c, witnesses, n_wit, wit_len, opts);
    if (e != CUZK_OK)
        return e;
    e = cuzk_groth16_prove_finish(proofs, timings, pend);
    cuzk_groth16_pending_free(pend);
    return e;
}
