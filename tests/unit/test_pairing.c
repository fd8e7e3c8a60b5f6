/* SPDX-License-Identifier: Apache-2.0 */
/* Optimal ate pairing: known answers from @noble/curves, bilinearity, non-degeneracy,
 * order r, multi-pairing, final exponentiation against a plain power. */
#include <gmp.h>

#include "cuzk/ec.h"
#include "cuzk/pairing.h"
#include "pairing/pairing_internal.h"
#include "test.h"
#include "test_files.h"
#include "test_gmp.h"
#include "test_points.h"

static void g1_mul(cuzk_g1_affine *r, const cuzk_g1_affine *a, const cuzk_fr *k)
{
    cuzk_g1_jac j;
    cuzk_g1_jac_from_affine(&j, a);
    cuzk_g1_mul_fr(&j, &j, k);
    cuzk_g1_jac_to_affine(r, &j);
}

static void g2_mul(cuzk_g2_affine *r, const cuzk_g2_affine *a, const cuzk_fr *k)
{
    cuzk_g2_jac j;
    cuzk_g2_jac_from_affine(&j, a);
    cuzk_g2_mul_fr(&j, &j, k);
    cuzk_g2_jac_to_affine(r, &j);
}

static void fr_limbs(uint64_t out[CUZK_FR_LIMBS], const cuzk_fr *a)
{
    cuzk_fr_to_limbs(out, a);
}

/* ---- the hard-part identity and the final exponentiation against pow ---- */
static void test_final_exp(void)
{
    mpz_t p, r, x, lhs, rhs, t, u, e;
    mpz_inits(p, r, x, lhs, rhs, t, u, e, NULL);
    test_mpz_fp_modulus(p);
    test_mpz_fr_modulus(r);
    mpz_set_ui(x, 0);
    mpz_set_ui(t, 0xd2010000u);
    mpz_mul_2exp(t, t, 32);
    mpz_add_ui(t, t, 0x00010000u);
    CHECK(mpz_get_ui(t) == CUZK_BLS_X_ABS || sizeof(unsigned long) < 8);
    mpz_neg(x, t);                                   /* x = -0xd201000000010000 */
    /* p = (x-1)^2 (x^4 - x^2 + 1)/3 + x and r = x^4 - x^2 + 1 */
    mpz_pow_ui(t, x, 4);
    mpz_pow_ui(u, x, 2);
    mpz_sub(t, t, u);
    mpz_add_ui(t, t, 1);
    CHECK(mpz_cmp(t, r) == 0);
    mpz_sub_ui(u, x, 1);
    mpz_pow_ui(u, u, 2);
    mpz_mul(u, u, t);
    mpz_divexact_ui(u, u, 3);
    mpz_add(u, u, x);
    CHECK(mpz_cmp(u, p) == 0);
    /* 3 (p^4 - p^2 + 1)/r = (x-1)^2 (x+p)(x^2 + p^2 - 1) + 3 */
    mpz_pow_ui(lhs, p, 4);
    mpz_pow_ui(t, p, 2);
    mpz_sub(lhs, lhs, t);
    mpz_add_ui(lhs, lhs, 1);
    CHECK(mpz_divisible_p(lhs, r));
    mpz_divexact(lhs, lhs, r);
    mpz_mul_ui(lhs, lhs, 3);
    mpz_sub_ui(rhs, x, 1);
    mpz_pow_ui(rhs, rhs, 2);
    mpz_add(t, x, p);
    mpz_mul(rhs, rhs, t);
    mpz_pow_ui(t, x, 2);
    mpz_pow_ui(u, p, 2);
    mpz_add(t, t, u);
    mpz_sub_ui(t, t, 1);
    mpz_mul(rhs, rhs, t);
    mpz_add_ui(rhs, rhs, 3);
    CHECK(mpz_cmp(lhs, rhs) == 0);

    /* final_exp(f) = f^(3 (p^12 - 1)/r) for a Miller loop output and a random element */
    mpz_pow_ui(e, p, 12);
    mpz_sub_ui(e, e, 1);
    mpz_divexact(e, e, r);
    mpz_mul_ui(e, e, 3);
    uint64_t el[80];
    size_t nl = test_mpz_to_limbs(el, 80, e);
    cuzk_g1_affine g1;
    cuzk_g2_affine g2;
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);
    cuzk_fp12 f[2], a, b;
    cuzk_miller_loop(&f[0], &g1, &g2);
    for (int i = 0; i < 6; i++) {
        cuzk_fp2 *c = i < 3 ? (&f[1].c0.c0 + i) : (&f[1].c1.c0 + (i - 3));
        test_rand_fp2(c);
    }
    for (int i = 0; i < 2; i++) {
        cuzk_final_exp(&a, &f[i]);
        cuzk_fp12_pow(&b, &f[i], el, nl);
        CHECK(cuzk_fp12_eq(&a, &b));
        CHECK(!cuzk_fp12_is_one(&a));
        /* in GT: a^r = 1 */
        uint64_t rl[CUZK_FR_LIMBS];
        memcpy(rl, CUZK_FR_MODULUS.l, sizeof rl);
        cuzk_fp12_pow(&b, &a, rl, CUZK_FR_LIMBS);
        CHECK(cuzk_fp12_is_one(&b));
    }
    /* final_exp of 1 and of an Fp6 element is 1 */
    cuzk_fp12_set_one(&a);
    cuzk_final_exp(&b, &a);
    CHECK(cuzk_fp12_is_one(&b));
    a = f[1];
    cuzk_fp6_set_zero(&a.c1);
    cuzk_final_exp(&b, &a);
    CHECK(cuzk_fp12_is_one(&b));
    mpz_clears(p, r, x, lhs, rhs, t, u, e, NULL);
}

/* ---- cyclotomic squaring, exp by x, sparse line product against the plain ones ---- */
static void test_internals(void)
{
    unsigned long n = test_iters(10);
    for (unsigned long it = 0; it < n; it++) {
        cuzk_fp12 f, m, t0, t1;
        for (int i = 0; i < 3; i++) {
            test_rand_fp2(&f.c0.c0 + i);
            test_rand_fp2(&f.c1.c0 + i);
        }
        /* m = f^((p^6 - 1)(p^2 + 1)) lies in the cyclotomic subgroup */
        cuzk_fp12_inv(&t0, &f);
        cuzk_fp12_conj(&m, &f);
        cuzk_fp12_mul(&m, &m, &t0);
        cuzk_fp12_frobenius(&t0, &m, 2);
        cuzk_fp12_mul(&m, &m, &t0);
        cuzk_fp12_cyclotomic_sqr_(&t0, &m);
        cuzk_fp12_sqr(&t1, &m);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        t0 = m;
        cuzk_fp12_cyclotomic_sqr_(&t0, &t0);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* in the cyclotomic subgroup the inverse is the conjugate */
        cuzk_fp12_inv(&t0, &m);
        cuzk_fp12_conj(&t1, &m);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* m^x = 1/m^|x| */
        uint64_t xa = CUZK_BLS_X_ABS;
        cuzk_fp12_pow(&t0, &m, &xa, 1);
        cuzk_fp12_inv(&t0, &t0);
        cuzk_fp12_cyclotomic_exp_x_(&t1, &m);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* sparse 014 product */
        cuzk_fp2 c0, c1, c4;
        test_rand_fp2(&c0);
        test_rand_fp2(&c1);
        test_rand_fp2(&c4);
        cuzk_fp12 l;
        cuzk_fp6_set_zero(&l.c0);
        cuzk_fp6_set_zero(&l.c1);
        l.c0.c0 = c0;
        l.c0.c1 = c1;
        l.c1.c1 = c4;
        cuzk_fp12_mul(&t0, &f, &l);
        cuzk_fp12_mul_by_014_(&t1, &f, &c0, &c1, &c4);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        t1 = f;
        cuzk_fp12_mul_by_014_(&t1, &t1, &c0, &c1, &c4);
        CHECK(cuzk_fp12_eq(&t0, &t1));
    }
}

/* ---- known answers ---- */
static int hex_to_fp(cuzk_fp *r, const char *s)
{
    uint8_t b[CUZK_FP_BYTES] = { 0 };
    size_t len = strlen(s);
    if (len == 0 || len > 2 * CUZK_FP_BYTES)
        return -1;
    for (size_t i = 0; i < len; i++) {
        char c = s[len - 1 - i];
        int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        b[CUZK_FP_BYTES - 1 - i / 2] |= (uint8_t)(v << (4 * (i & 1)));
    }
    return cuzk_fp_from_bytes_be(r, b) == CUZK_OK ? 0 : -1;
}

/* scalars are < r < 2^255: parse as Fp (p > r) then take limbs into Fr */
static int hex_to_fr(cuzk_fr *r, const char *s)
{
    cuzk_fp t;
    if (hex_to_fp(&t, s))
        return -1;
    uint64_t l[CUZK_FP_LIMBS];
    cuzk_fp_to_limbs(l, &t);
    if (l[4] | l[5])
        return -1;
    return cuzk_fr_from_limbs(r, l) == CUZK_OK ? 0 : -1;
}

static void test_known_answers(void)
{
    char path[1024];
    test_data_path(path, sizeof path, "pairing_vectors.txt");
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL);
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", path);
        return;
    }
    char line[8192];
    int nvec = 0;
    cuzk_g1_affine g1;
    cuzk_g2_affine g2;
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *tok[20];
        int nt = 0;
        for (char *s = strtok(line, " \n"); s && nt < 20; s = strtok(NULL, " \n"))
            tok[nt++] = s;
        CHECK(nt == 20);
        if (nt != 20)
            continue;
        cuzk_fr a, b;
        cuzk_g1_affine p;
        cuzk_g2_affine q;
        cuzk_fp12 want;
        cuzk_fp *wc[12] = {
            &want.c0.c0.c0, &want.c0.c0.c1, &want.c0.c1.c0, &want.c0.c1.c1,
            &want.c0.c2.c0, &want.c0.c2.c1, &want.c1.c0.c0, &want.c1.c0.c1,
            &want.c1.c1.c0, &want.c1.c1.c1, &want.c1.c2.c0, &want.c1.c2.c1,
        };
        int bad = hex_to_fr(&a, tok[0]) | hex_to_fr(&b, tok[1]);
        bad |= hex_to_fp(&p.x, tok[2]) | hex_to_fp(&p.y, tok[3]);
        bad |= hex_to_fp(&q.x.c0, tok[4]) | hex_to_fp(&q.x.c1, tok[5]);
        bad |= hex_to_fp(&q.y.c0, tok[6]) | hex_to_fp(&q.y.c1, tok[7]);
        for (int i = 0; i < 12; i++)
            bad |= hex_to_fp(wc[i], tok[8 + i]);
        CHECK(bad == 0);
        if (bad)
            continue;
        CHECK(cuzk_g1_affine_is_on_curve(&p));
        CHECK(cuzk_g2_affine_is_on_curve(&q));
        /* the points are a*G1 and b*G2 */
        cuzk_g1_affine p2;
        cuzk_g2_affine q2;
        g1_mul(&p2, &g1, &a);
        g2_mul(&q2, &g2, &b);
        CHECK(cuzk_g1_affine_eq(&p, &p2));
        CHECK(cuzk_g2_affine_eq(&q, &q2));
        cuzk_fp12 got;
        cuzk_pairing(&got, &p, &q);
        CHECK(cuzk_fp12_eq(&got, &want));
        /* the bytes in tower order are those of the file, in the file's order */
        uint8_t gb[576], wb[576];
        cuzk_fp12_to_bytes_be(gb, &got);
        for (int i = 0; i < 12; i++)
            cuzk_fp_to_bytes_be(wb + 48 * i, wc[i]);
        CHECK(memcmp(gb, wb, 576) == 0);
        nvec++;
    }
    fclose(fp);
    CHECK(nvec >= 5);
}

/* ---- snarkjs: vk_alphabeta_12 = e(vk_alpha_1, vk_beta_2) in its verification keys ---- */

/* Copies the first n decimal strings after "key" in the JSON text into out[i] (size 128). */
static int json_numbers(const char *text, const char *key, char out[][128], int n)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *s = strstr(text, pat);
    if (!s)
        return -1;
    s += strlen(pat);
    for (int i = 0; i < n; i++) {
        while (*s && *s != '"')
            s++;
        if (!*s)
            return -1;
        s++;
        size_t len = 0;
        while (s[len] >= '0' && s[len] <= '9' && len < 127)
            len++;
        if (len == 0 || s[len] != '"')
            return -1;
        memcpy(out[i], s, len);
        out[i][len] = 0;
        s += len + 1;
    }
    return 0;
}

static void test_snarkjs_alphabeta(void)
{
    const char *circuits[] = { "multiplier", "chain", "nopub" };
    int checked = 0;
    for (size_t c = 0; c < sizeof circuits / sizeof circuits[0]; c++) {
        char path[1024];
        test_fixture_path(path, sizeof path, circuits[c], "verification_key.json");
        FILE *fp = fopen(path, "r");
        if (!fp)
            continue;
        static char text[1 << 16];
        size_t len = fread(text, 1, sizeof text - 1, fp);
        fclose(fp);
        text[len] = 0;
        if (!strstr(text, "\"bls12381\""))
            continue;
        char a[3][128], b[6][128], g[12][128];
        int bad = json_numbers(text, "vk_alpha_1", a, 3) | json_numbers(text, "vk_beta_2", b, 6) |
                  json_numbers(text, "vk_alphabeta_12", g, 12);
        CHECK(bad == 0);
        if (bad)
            continue;
        cuzk_g1_affine p;
        cuzk_g2_affine q;
        const char *bq[4] = { b[0], b[1], b[2], b[3] };
        CHECK_EQ_ERR(cuzk_g1_from_dec(&p, a[0], a[1], CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
        CHECK_EQ_ERR(cuzk_g2_from_dec(&q, bq, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
        cuzk_fp12 want, got;
        /* snarkjs nests [c0, c1] of Fp6 triples of Fp2 pairs: the cuzk tower order */
        cuzk_fp *wc[12] = {
            &want.c0.c0.c0, &want.c0.c0.c1, &want.c0.c1.c0, &want.c0.c1.c1,
            &want.c0.c2.c0, &want.c0.c2.c1, &want.c1.c0.c0, &want.c1.c0.c1,
            &want.c1.c1.c0, &want.c1.c1.c1, &want.c1.c2.c0, &want.c1.c2.c1,
        };
        for (int i = 0; i < 12; i++)
            CHECK_EQ_ERR(cuzk_fp_from_dec(wc[i], g[i]), CUZK_OK);
        cuzk_pairing(&got, &p, &q);
        CHECK(cuzk_fp12_eq(&got, &want));
        checked++;
    }
    CHECK(checked >= 1);
}

/* ---- bilinearity, non-degeneracy, negation, multi-pairing ---- */
static void test_bilinear(void)
{
    cuzk_g1_affine g1, p, pa;
    cuzk_g2_affine g2, q, qb;
    cuzk_fp12 e, t0, t1;
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);
    cuzk_pairing(&e, &g1, &g2);
    CHECK(!cuzk_fp12_is_one(&e));   /* non-degenerate */
    uint64_t rl[CUZK_FR_LIMBS];
    memcpy(rl, CUZK_FR_MODULUS.l, sizeof rl);
    cuzk_fp12_pow(&t0, &e, rl, CUZK_FR_LIMBS);
    CHECK(cuzk_fp12_is_one(&t0));   /* e^r = 1 */

    unsigned long n = test_iters(4);
    for (unsigned long it = 0; it < n; it++) {
        cuzk_fr a, b, ab;
        test_rand_fr(&a);
        test_rand_fr(&b);
        g1_mul(&pa, &g1, &a);
        g2_mul(&qb, &g2, &b);
        /* e(aP, bQ) = e(P, Q)^(ab) */
        cuzk_pairing(&t0, &pa, &qb);
        cuzk_fr_mul(&ab, &a, &b);
        uint64_t l[CUZK_FR_LIMBS];
        fr_limbs(l, &ab);
        cuzk_fp12_pow(&t1, &e, l, CUZK_FR_LIMBS);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* e(abP, Q) = e(aP, bQ) = e(P, abQ) */
        g1_mul(&p, &g1, &ab);
        cuzk_pairing(&t1, &p, &g2);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        g2_mul(&q, &g2, &ab);
        cuzk_pairing(&t1, &g1, &q);
        CHECK(cuzk_fp12_eq(&t0, &t1));
        /* e(-P, Q) e(P, Q) = 1 and e(P, -Q) = e(-P, Q) */
        cuzk_g1_affine np;
        cuzk_g2_affine nq;
        cuzk_g1_affine_neg(&np, &pa);
        cuzk_g2_affine_neg(&nq, &qb);
        cuzk_pairing(&t1, &np, &qb);
        cuzk_fp12 t2;
        cuzk_fp12_mul(&t2, &t0, &t1);
        CHECK(cuzk_fp12_is_one(&t2));
        cuzk_pairing(&t2, &pa, &nq);
        CHECK(cuzk_fp12_eq(&t1, &t2));
        /* e(P1 + P2, Q) = e(P1, Q) e(P2, Q) */
        cuzk_g1_jac j1, j2;
        cuzk_g1_jac_from_affine(&j1, &pa);
        cuzk_g1_jac_from_affine(&j2, &p);
        cuzk_g1_jac_add_var(&j1, &j1, &j2);
        cuzk_g1_affine sum;
        cuzk_g1_jac_to_affine(&sum, &j1);
        cuzk_pairing(&t1, &sum, &qb);
        cuzk_pairing(&t2, &pa, &qb);
        cuzk_fp12 t3;
        cuzk_pairing(&t3, &p, &qb);
        cuzk_fp12_mul(&t2, &t2, &t3);
        CHECK(cuzk_fp12_eq(&t1, &t2));
        /* product checks */
        cuzk_g1_affine ps[2] = { pa, np };
        cuzk_g2_affine qs[2] = { qb, qb };
        CHECK(cuzk_pairing_product_is_one(ps, qs, 2));
        qs[1] = g2;
        CHECK(!cuzk_pairing_product_is_one(ps, qs, 2));
        /* e(aP, Q) e(P, -aQ) = 1: the Groth16-style cross check */
        g2_mul(&q, &g2, &a);
        cuzk_g2_affine_neg(&q, &q);
        cuzk_g1_affine ps2[2] = { pa, g1 };
        cuzk_g2_affine qs2[2] = { g2, q };
        CHECK(cuzk_pairing_product_is_one(ps2, qs2, 2));
    }
}

static void test_infinity_and_multi(void)
{
    cuzk_g1_affine g1, inf1;
    cuzk_g2_affine g2, inf2;
    cuzk_fp12 t0, t1;
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);
    cuzk_g1_affine_set_inf(&inf1);
    cuzk_g2_affine_set_inf(&inf2);
    cuzk_pairing(&t0, &inf1, &g2);
    CHECK(cuzk_fp12_is_one(&t0));
    cuzk_pairing(&t0, &g1, &inf2);
    CHECK(cuzk_fp12_is_one(&t0));
    cuzk_miller_loop(&t0, &inf1, &inf2);
    CHECK(cuzk_fp12_is_one(&t0));
    cuzk_multi_pairing(&t0, NULL, NULL, 0);
    CHECK(cuzk_fp12_is_one(&t0));
    CHECK(cuzk_pairing_product_is_one(NULL, NULL, 0));

    /* multi-pairing = product of single pairings, n across the internal chunk size,
     * with infinities sprinkled in */
    enum { N = 21 };
    static cuzk_g1_affine ps[N];
    static cuzk_g2_affine qs[N];
    cuzk_fp12 single[N];
    for (int i = 0; i < N; i++) {
        if (i == 3)
            cuzk_g1_affine_set_inf(&ps[i]), qs[i] = g2;
        else if (i == 17)
            ps[i] = g1, cuzk_g2_affine_set_inf(&qs[i]);
        else
            test_g1_rand(&ps[i]), test_g2_rand(&qs[i]);
        cuzk_pairing(&single[i], &ps[i], &qs[i]);
    }
    size_t sizes[] = { 1, 2, 3, 16, 17, N };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        cuzk_fp12_set_one(&t1);
        for (size_t i = 0; i < n; i++)
            cuzk_fp12_mul(&t1, &t1, &single[i]);
        cuzk_multi_pairing(&t0, ps, qs, n);
        CHECK(cuzk_fp12_eq(&t0, &t1));
    }
    /* a sum that is one: e(P_i, Q) over P_i summing to 0 */
    cuzk_g1_affine pz[N];
    cuzk_g2_affine qz[N];
    cuzk_g1_jac acc;
    cuzk_g1_jac_set_inf(&acc);
    for (int i = 0; i < N - 1; i++) {
        pz[i] = ps[i];
        qz[i] = g2;
        cuzk_g1_jac_add_affine_var(&acc, &acc, &ps[i]);
    }
    cuzk_g1_jac_neg(&acc, &acc);
    cuzk_g1_jac_to_affine(&pz[N - 1], &acc);
    qz[N - 1] = g2;
    CHECK(cuzk_pairing_product_is_one(pz, qz, N));
    CHECK(!cuzk_pairing_product_is_one(pz, qz, N - 1));
}

static void bench(void)
{
    cuzk_g1_affine p;
    cuzk_g2_affine q;
    test_g1_rand(&p);
    test_g2_rand(&q);
    cuzk_fp12 e;
    int reps = 20;
    struct timespec t0, t1, t2;
    cuzk_fp12 f;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < reps; i++)
        cuzk_miller_loop(&f, &p, &q);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (int i = 0; i < reps; i++)
        cuzk_final_exp(&e, &f);
    clock_gettime(CLOCK_MONOTONIC, &t2);
    double ml = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / reps / 1e3;
    double fe = ((t2.tv_sec - t1.tv_sec) * 1e9 + (t2.tv_nsec - t1.tv_nsec)) / reps / 1e3;
    printf("pairing: miller loop %.0f us, final exp %.0f us, total %.0f us\n", ml, fe, ml + fe);
}

int main(void)
{
    test_init("test_pairing");
    test_internals();
    test_final_exp();
    test_known_answers();
    test_snarkjs_alphabeta();
    test_bilinear();
    test_infinity_and_multi();
    bench();
    return test_finish();
}
