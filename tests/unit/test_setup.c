/* SPDX-License-Identifier: Apache-2.0 */
/* Groth16 setup (snarkjs convention): fixed-base multiplication, Lagrange basis at tau,
 * column sums, keys checked against naive formulas for known toxic waste, and keys for the
 * fixtures and a synthetic circuit written, read back, proved with and verified. */
#include <unistd.h>

#include "test.h"
#include "test_circuit.h"
#include "test_files.h"

#include "cuzk/groth16.h"
#include "cuzk/pairing.h"
#include "cuzk/setup.h"
#include "setup/setup_internal.h"

static void test_fixed_base(unsigned wbits)
{
    setup_g1_table t1;
    setup_g2_table t2;
    CHECK_EQ_ERR(setup_g1_table_new(&t1, wbits, 2), CUZK_OK);
    CHECK_EQ_ERR(setup_g2_table_new(&t2, wbits, 2), CUZK_OK);
    enum { N = 40 };
    cuzk_fr k[N];
    cuzk_fr_set_zero(&k[0]);
    cuzk_fr_set_one(&k[1]);
    test_fr_minus(&k[2], 1);
    cuzk_fr_set_u64(&k[3], 255);        /* all digits of window 0 */
    cuzk_fr_set_u64(&k[4], 256);        /* first digit of window 1 */
    cuzk_fr_set_u64(&k[5], UINT64_MAX); /* crosses a limb */
    {
        uint64_t l[4] = {0, 0, 0, 1ULL << 62};   /* the top window */
        CHECK_EQ_ERR(cuzk_fr_from_limbs(&k[6], l), CUZK_OK);
    }
    test_rand_frs(&k[7], N - 7);
    cuzk_g1_affine o1[N];
    cuzk_g2_affine o2[N];
    CHECK_EQ_ERR(setup_g1_mul_batch_var(o1, k, N, &t1, 2), CUZK_OK);
    CHECK_EQ_ERR(setup_g2_mul_batch_var(o2, k, N, &t2, 2), CUZK_OK);
    cuzk_g1_affine g1;
    cuzk_g2_affine g2;
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);
    for (int i = 0; i < N; i++) {
        cuzk_g1_jac j1;
        cuzk_g2_jac j2;
        cuzk_g1_affine a1;
        cuzk_g2_affine a2;
        cuzk_g1_jac_from_affine(&j1, &g1);
        cuzk_g1_mul_fr(&j1, &j1, &k[i]);
        cuzk_g1_jac_to_affine(&a1, &j1);
        cuzk_g2_jac_from_affine(&j2, &g2);
        cuzk_g2_mul_fr(&j2, &j2, &k[i]);
        cuzk_g2_jac_to_affine(&a2, &j2);
        CHECK(cuzk_g1_affine_eq(&a1, &o1[i]));
        CHECK(cuzk_g2_affine_eq(&a2, &o2[i]));
    }
    CHECK(cuzk_g1_affine_is_inf(&o1[0]) && cuzk_g2_affine_is_inf(&o2[0]));
    CHECK(cuzk_g1_affine_eq(&o1[1], &g1) && cuzk_g2_affine_eq(&o2[1], &g2));
    /* (r - 1) G = -G */
    cuzk_g1_affine ng1;
    cuzk_g1_affine_neg(&ng1, &g1);
    CHECK(cuzk_g1_affine_eq(&o1[2], &ng1));
    /* thread counts agree on a larger batch */
    enum { M = 3000 };
    cuzk_fr *km = malloc(M * sizeof *km);
    cuzk_g1_affine *p1 = malloc(M * sizeof *p1), *p2 = malloc(M * sizeof *p2);
    test_rand_frs(km, M);
    CHECK_EQ_ERR(setup_g1_mul_batch_var(p1, km, M, &t1, 1), CUZK_OK);
    CHECK_EQ_ERR(setup_g1_mul_batch_var(p2, km, M, &t1, 3), CUZK_OK);
    CHECK(!memcmp(p1, p2, M * sizeof *p1));
    free(km);
    free(p1);
    free(p2);
    setup_g1_table_free(&t1);
    setup_g2_table_free(&t2);
}

/* naive L_i(x) = prod_{k != i} (x - w^k)/(w^i - w^k) */
static void naive_lagrange(cuzk_fr *r, unsigned log2_n, size_t i, const cuzk_fr *x)
{
    size_t n = (size_t)1 << log2_n;
    cuzk_fr om, wi, wk, num, den, t;
    CHECK_EQ_ERR(cuzk_fr_root_of_unity(&om, log2_n, CUZK_ROOTS_SNARKJS), CUZK_OK);
    uint64_t e = i;
    cuzk_fr_pow(&wi, &om, &e, 1);
    cuzk_fr_set_one(&num);
    cuzk_fr_set_one(&den);
    cuzk_fr_set_one(&wk);
    for (size_t k = 0; k < n; k++, cuzk_fr_mul(&wk, &wk, &om)) {
        if (k == i)
            continue;
        cuzk_fr_sub(&t, x, &wk);
        cuzk_fr_mul(&num, &num, &t);
        cuzk_fr_sub(&t, &wi, &wk);
        cuzk_fr_mul(&den, &den, &t);
    }
    cuzk_fr_inv(&den, &den);
    cuzk_fr_mul(r, &num, &den);
}

static void test_lagrange(void)
{
    for (unsigned k = 0; k <= 6; k++) {
        size_t n = (size_t)1 << k;
        cuzk_fr tau, *l = malloc(n * sizeof *l), sum, one;
        test_rand_fr(&tau);
        CHECK_EQ_ERR(setup_lagrange_at(l, k, CUZK_ROOTS_SNARKJS, &tau, 0, 1, n, 2), CUZK_OK);
        cuzk_fr_set_zero(&sum);
        for (size_t i = 0; i < n; i++) {
            cuzk_fr want;
            naive_lagrange(&want, k, i, &tau);
            CHECK(cuzk_fr_eq(&want, &l[i]));
            cuzk_fr_add(&sum, &sum, &l[i]);
        }
        cuzk_fr_set_one(&one);
        CHECK(cuzk_fr_eq(&sum, &one));   /* sum of the basis is the constant 1 */
        /* odd indices of the same domain */
        if (k >= 1) {
            cuzk_fr *o = malloc(n / 2 * sizeof *o);
            CHECK_EQ_ERR(setup_lagrange_at(o, k, CUZK_ROOTS_SNARKJS, &tau, 1, 2, n / 2, 1), CUZK_OK);
            for (size_t j = 0; j < n / 2; j++)
                CHECK(cuzk_fr_eq(&o[j], &l[2 * j + 1]));
            free(o);
        }
        /* tau in the domain is refused */
        cuzk_fr w;
        CHECK_EQ_ERR(cuzk_fr_root_of_unity(&w, k, CUZK_ROOTS_SNARKJS), CUZK_OK);
        CHECK_EQ_ERR(setup_lagrange_at(l, k, CUZK_ROOTS_SNARKJS, &w, 0, 1, n, 1), CUZK_EINVAL);
        free(l);
    }
    /* a larger domain across chunk boundaries: polynomial of degree < n interpolated */
    unsigned k = 13;
    size_t n = (size_t)1 << k;
    cuzk_fr tau, om, x, *l = malloc(n * sizeof *l), c[5];
    test_rand_fr(&tau);
    test_rand_frs(c, 5);
    CHECK_EQ_ERR(setup_lagrange_at(l, k, CUZK_ROOTS_SNARKJS, &tau, 0, 1, n, 3), CUZK_OK);
    CHECK_EQ_ERR(cuzk_fr_root_of_unity(&om, k, CUZK_ROOTS_SNARKJS), CUZK_OK);
    /* p(X) = c0 + c1 X + c2 X^2 + c3 X^3 + c4 X^(n-1): sum p(w^i) L_i(tau) = p(tau) */
    cuzk_fr acc, want, t, xp;
    cuzk_fr_set_zero(&acc);
    cuzk_fr_set_one(&x);
    uint64_t e = n - 1;
    for (size_t i = 0; i < n; i++, cuzk_fr_mul(&x, &x, &om)) {
        cuzk_fr v;
        test_fr_horner(&v, c, 4, &x);
        cuzk_fr_pow(&xp, &x, &e, 1);
        cuzk_fr_mul(&xp, &xp, &c[4]);
        cuzk_fr_add(&v, &v, &xp);
        cuzk_fr_mul(&t, &v, &l[i]);
        cuzk_fr_add(&acc, &acc, &t);
    }
    test_fr_horner(&want, c, 4, &tau);
    cuzk_fr_pow(&xp, &tau, &e, 1);
    cuzk_fr_mul(&xp, &xp, &c[4]);
    cuzk_fr_add(&want, &want, &xp);
    CHECK(cuzk_fr_eq(&acc, &want));
    free(l);
}

/* ---- synthetic circuits ---- */

/* The vk points pair as they must: e(beta1, g2) = e(g1, beta2), e(delta1, g2) = e(g1, delta2). */
static bool vk_pairs(const cuzk_zkey *z)
{
    cuzk_g1_affine g1, p[2];
    cuzk_g2_affine g2, q[2];
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);
    cuzk_g1_affine_neg(&p[0], &z->beta1);
    q[0] = g2;
    p[1] = g1;
    q[1] = z->beta2;
    bool ok = cuzk_pairing_product_is_one(p, q, 2);
    cuzk_g1_affine_neg(&p[0], &z->delta1);
    q[1] = z->delta2;
    return ok && cuzk_pairing_product_is_one(p, q, 2);
}

/* setup -> write -> load -> equal -> prove -> verify (and a wrong public input fails) */
static void check_roundtrip(const char *name, const cuzk_r1cs *r, const cuzk_fr *w, size_t wn,
                            const cuzk_setup_opts *opts, cuzk_zkey **keep)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/cuzk_test_setup_%d_%s.zkey", (int)getpid(), name);
    cuzk_zkey *z = NULL, *zl = NULL;
    cuzk_vk *vk = NULL;
    CHECK_EQ_ERR(cuzk_setup_zkey(&z, r, opts), CUZK_OK);
    if (!z)
        return;
    CHECK(z->n_vars == r->n_wires && z->n_public == r->n_public &&
          z->n_constraints == r->n_constraints);
    CHECK(z->domain_size > (uint64_t)r->n_constraints + r->n_public &&
          z->domain_size / 2 <= (uint64_t)r->n_constraints + r->n_public);
    CHECK(vk_pairs(z));
    CHECK_EQ_ERR(cuzk_zkey_write(path, z), CUZK_OK);
    CHECK_EQ_ERR(cuzk_zkey_load(&zl, path), CUZK_OK);
    unlink(path);
    if (zl)
        CHECK(test_zkey_eq(z, zl));
    const cuzk_zkey *k = zl ? zl : z;
    CHECK_EQ_ERR(cuzk_vk_from_zkey(&vk, k), CUZK_OK);
    if (vk) {
        cuzk_proof pr[2];
        const cuzk_fr *ws[2] = {w, w};
        CHECK_EQ_ERR(cuzk_groth16_prove(pr, NULL, k, ws, 2, wn, NULL), CUZK_OK);
        const cuzk_fr *pub = cuzk_groth16_public(k, w);
        for (int j = 0; j < 2; j++)
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, k->n_public, &pr[j]), CUZK_OK);
        if (k->n_public > 0) {
            cuzk_fr *bad = malloc(k->n_public * sizeof *bad);
            memcpy(bad, pub, k->n_public * sizeof *bad);
            cuzk_fr one;
            cuzk_fr_set_one(&one);
            cuzk_fr_add(&bad[0], &bad[0], &one);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, bad, k->n_public, &pr[0]), CUZK_EVERIFY);
            free(bad);
        } else {
            /* no public input: a proof with C doubled fails */
            cuzk_g1_jac j;
            cuzk_g1_jac_from_affine(&j, &pr[0].c);
            cuzk_g1_jac_dbl(&j, &j);
            cuzk_g1_jac_to_affine(&pr[0].c, &j);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, 0, &pr[0]), CUZK_EVERIFY);
        }
    }
    cuzk_vk_free(vk);
    cuzk_zkey_free(zl);
    if (keep)
        *keep = z;
    else
        cuzk_zkey_free(z);
}

static void test_fixtures(void)
{
    const char *names[] = {"multiplier", "chain", "nopub"};
    for (int i = 0; i < 3; i++) {
        cuzk_r1cs *r = NULL;
        cuzk_wtns *wt = NULL;
        char fx[1024];
        CHECK_EQ_ERR(cuzk_r1cs_load(&r, test_fixture_path(fx, sizeof fx, names[i], "circuit.r1cs")),
                     CUZK_OK);
        CHECK_EQ_ERR(cuzk_wtns_load(&wt, test_fixture_path(fx, sizeof fx, names[i], "witness.wtns")),
                     CUZK_OK);
        if (r && wt) {
            cuzk_zkey *z1 = NULL, *z2 = NULL;
            check_roundtrip(names[i], r, wt->w, wt->n, NULL, &z1);
            check_roundtrip(names[i], r, wt->w, wt->n, NULL, &z2);
            /* fresh toxic waste: two runs give different keys */
            if (z1 && z2) {
                CHECK(!cuzk_g1_affine_eq(&z1->alpha1, &z2->alpha1));
                CHECK(!cuzk_g2_affine_eq(&z1->delta2, &z2->delta2));
                CHECK(memcmp(z1->h_pts, z2->h_pts, sizeof *z1->h_pts));
                CHECK(memcmp(z1->a_pts + 1, z2->a_pts + 1, sizeof *z1->a_pts));
            }
            cuzk_zkey_free(z1);
            cuzk_zkey_free(z2);
        }
        cuzk_r1cs_free(r);
        cuzk_wtns_free(wt);
    }
}

/* Known toxic waste: every point against the naive formulas of include/cuzk/setup.h. */
static void test_known_toxic(void)
{
    cuzk_r1cs *r = NULL;
    char fx[1024];
    CHECK_EQ_ERR(cuzk_r1cs_load(&r, test_fixture_path(fx, sizeof fx, "chain", "circuit.r1cs")),
                 CUZK_OK);
    if (!r)
        return;
    cuzk_setup_toxic tw;
    test_rand_toxic(&tw);
    cuzk_setup_opts o1 = {.nthreads = 1, .test_toxic = &tw};
    cuzk_setup_opts o3 = {.nthreads = 3, .test_toxic = &tw};
    cuzk_zkey *z = NULL, *z3 = NULL;
    CHECK_EQ_ERR(cuzk_setup_zkey(&z, r, &o1), CUZK_OK);
    CHECK_EQ_ERR(cuzk_setup_zkey(&z3, r, &o3), CUZK_OK);
    if (!z || !z3)
        goto out;
    CHECK(test_zkey_eq(z, z3));   /* same toxic waste, any thread count: the same key */
    size_t nc = r->n_constraints, np = r->n_public, nv = r->n_wires, n = z->domain_size;
    unsigned k = z->log2_domain;
    CHECK(n == 256);
    cuzk_fr *lag = malloc(n * sizeof *lag);
    for (size_t j = 0; j < n; j++)
        naive_lagrange(&lag[j], k, j, &tw.tau);
    cuzk_fr *u = calloc(nv, sizeof *u), *v = calloc(nv, sizeof *v), *w = calloc(nv, sizeof *w);
    cuzk_fr *uvw[3] = {u, v, w};
    for (int m = 0; m < 3; m++)
        for (size_t j = 0; j < nc; j++)
            for (uint64_t q = r->m[m].row[j]; q < r->m[m].row[j + 1]; q++) {
                cuzk_fr t;
                cuzk_fr_mul(&t, &r->m[m].val[q], &lag[j]);
                cuzk_fr_add(&uvw[m][r->m[m].col[q]], &uvw[m][r->m[m].col[q]], &t);
            }
    for (size_t s = 0; s <= np; s++)
        cuzk_fr_add(&u[s], &u[s], &lag[nc + s]);
    cuzk_g1_affine p;
    cuzk_g1_generator_mul(&p, &tw.alpha);
    CHECK(cuzk_g1_affine_eq(&p, &z->alpha1));
    cuzk_g1_generator_mul(&p, &tw.delta);
    CHECK(cuzk_g1_affine_eq(&p, &z->delta1));
    cuzk_fr gi, di;
    cuzk_fr_inv(&gi, &tw.gamma);
    cuzk_fr_inv(&di, &tw.delta);
    unsigned bad_a = 0, bad_b = 0, bad_c = 0;
    for (size_t i = 0; i < nv; i++) {
        cuzk_g1_generator_mul(&p, &u[i]);
        bad_a += !cuzk_g1_affine_eq(&p, &z->a_pts[i]);
        cuzk_g1_generator_mul(&p, &v[i]);
        bad_b += !cuzk_g1_affine_eq(&p, &z->b1_pts[i]);
        cuzk_fr t, x;
        cuzk_fr_mul(&t, &tw.beta, &u[i]);
        cuzk_fr_mul(&x, &tw.alpha, &v[i]);
        cuzk_fr_add(&t, &t, &x);
        cuzk_fr_add(&t, &t, &w[i]);
        cuzk_fr_mul(&t, &t, i <= np ? &gi : &di);
        cuzk_g1_generator_mul(&p, &t);
        bad_c += !cuzk_g1_affine_eq(&p, i <= np ? &z->ic[i] : &z->c_pts[i - np - 1]);
    }
    CHECK(bad_a == 0);
    CHECK(bad_b == 0);
    CHECK(bad_c == 0);
    /* H_j = L^(2n)_(2j+1)(tau)/delta, a few j */
    size_t js[4] = {0, 1, n / 2, n - 1};
    for (int q = 0; q < 4; q++) {
        cuzk_fr t;
        naive_lagrange(&t, k + 1, 2 * js[q] + 1, &tw.tau);
        cuzk_fr_mul(&t, &t, &di);
        cuzk_g1_generator_mul(&p, &t);
        CHECK(cuzk_g1_affine_eq(&p, &z->h_pts[js[q]]));
    }
    free(lag);
    free(u);
    free(v);
    free(w);

    /* bad toxic waste is refused */
    cuzk_zkey *zb = NULL;
    cuzk_setup_toxic bad = tw;
    cuzk_fr_set_zero(&bad.delta);
    cuzk_setup_opts ob = {.test_toxic = &bad};
    CHECK_EQ_ERR(cuzk_setup_zkey(&zb, r, &ob), CUZK_EINVAL);
    CHECK(zb == NULL);
    bad = tw;
    CHECK_EQ_ERR(cuzk_fr_root_of_unity(&bad.tau, k + 1, CUZK_ROOTS_SNARKJS), CUZK_OK);
    CHECK_EQ_ERR(cuzk_setup_zkey(&zb, r, &ob), CUZK_EINVAL);
    cuzk_fr_set_one(&bad.tau);   /* in every domain */
    CHECK_EQ_ERR(cuzk_setup_zkey(&zb, r, &ob), CUZK_EINVAL);
    /* an unwritable path */
    CHECK_EQ_ERR(cuzk_zkey_write("/nonexistent-dir/x.zkey", z), CUZK_EIO);
    CHECK(strstr(cuzk_error_detail(), "/nonexistent-dir/x.zkey") != NULL);
out:
    cuzk_zkey_free(z);
    cuzk_zkey_free(z3);
    cuzk_r1cs_free(r);
}

static void test_synthetic(void)
{
    /* sizes around powers of two: m + n_public just below and at 2^k */
    size_t ms[3] = {2, 1022, 1000 + 4 * test_iters(1)};
    for (int i = 0; i < 3; i++) {
        cuzk_fr *w = NULL;
        cuzk_r1cs *r = test_chain_circuit(ms[i], &w);
        CHECK_EQ_ERR(cuzk_r1cs_check_witness(r, w, r->n_wires, NULL), CUZK_OK);
        char name[32];
        snprintf(name, sizeof name, "synth%zu", ms[i]);
        check_roundtrip(name, r, w, r->n_wires, NULL, NULL);
        cuzk_r1cs_free(r);
        free(w);
    }
}

/* .params: cuzk_setup_params -> write -> load -> prove (bellman convention) -> verify */
static void test_params(void)
{
    const char *names[] = {"chain", "multiplier"};
    for (int i = 0; i < 2; i++) {
        cuzk_r1cs *r = NULL;
        cuzk_wtns *wt = NULL;
        cuzk_bellman_circuit *c = NULL;
        cuzk_params *p = NULL, *p2 = NULL, *p3 = NULL;
        cuzk_vk *vk = NULL;
        char path[256];
        snprintf(path, sizeof path, "/tmp/cuzk_test_setup_%d_%s.params", (int)getpid(), names[i]);
        char fx[1024];
        CHECK_EQ_ERR(cuzk_r1cs_load(&r, test_fixture_path(fx, sizeof fx, names[i], "circuit.r1cs")),
                     CUZK_OK);
        CHECK_EQ_ERR(cuzk_wtns_load(&wt, test_fixture_path(fx, sizeof fx, names[i], "witness.wtns")),
                     CUZK_OK);
        if (!r || !wt)
            goto next;
        CHECK_EQ_ERR(cuzk_bellman_circuit_from_r1cs(&c, r), CUZK_OK);
        cuzk_setup_opts o = {.nthreads = 2};
        CHECK_EQ_ERR(cuzk_setup_params(&p, c, &o), CUZK_OK);
        CHECK_EQ_ERR(cuzk_setup_params(&p3, c, NULL), CUZK_OK);
        if (!p || !p3)
            goto next;
        CHECK_EQ_ERR(cuzk_params_check_circuit(p, c), CUZK_OK);
        CHECK(!cuzk_g1_affine_eq(&p->alpha1, &p3->alpha1));   /* fresh toxic waste */
        CHECK_EQ_ERR(cuzk_params_write(path, p), CUZK_OK);
        CHECK_EQ_ERR(cuzk_params_load(&p2, path, 0), CUZK_OK);
        unlink(path);
        if (!p2)
            goto next;
        CHECK(p2->n_h == p->n_h && p2->n_a == p->n_a && p2->n_b_g2 == p->n_b_g2 &&
              !memcmp(p2->h, p->h, p->n_h * sizeof *p->h));
        CHECK_EQ_ERR(cuzk_vk_from_params(&vk, p2), CUZK_OK);
        if (vk) {
            cuzk_proof pr;
            const cuzk_fr *w = wt->w;
            CHECK_EQ_ERR(cuzk_params_prove(&pr, NULL, p2, c, &w, 1, wt->n, NULL), CUZK_OK);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, w + 1, c->n_public, &pr), CUZK_OK);
            /* a proof under the other key does not verify */
            cuzk_proof pr3;
            CHECK_EQ_ERR(cuzk_params_prove(&pr3, NULL, p3, c, &w, 1, wt->n, NULL), CUZK_OK);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, w + 1, c->n_public, &pr3), CUZK_EVERIFY);
        }
    next:
        cuzk_vk_free(vk);
        cuzk_params_free(p);
        cuzk_params_free(p2);
        cuzk_params_free(p3);
        cuzk_bellman_circuit_free(c);
        cuzk_r1cs_free(r);
        cuzk_wtns_free(wt);
    }
}

int main(void)
{
    test_init("test_setup");
    /* every width the setup picks, and odd ones whose windows cross limbs */
    unsigned widths[] = {SETUP_WBITS_SMALL, SETUP_WBITS_LARGE, 5};
    for (int i = 0; i < 3; i++)
        test_fixed_base(widths[i]);
    setup_g1_table tb;
    CHECK_EQ_ERR(setup_g1_table_new(&tb, SETUP_WBITS_MAX + 1, 1), CUZK_EINVAL);
    test_lagrange();
    test_known_toxic();
    test_fixtures();
    test_synthetic();
    test_params();
    return test_finish();
}
