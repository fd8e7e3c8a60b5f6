/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Optimal ate pairing on BLS12-381: e(P, Q) = f_{x,Q}(P)^((p^12 - 1)/r * 3), x = -0xd201000000010000.
 *
 * Twist. G2 lives on E'(Fp2): y^2 = x^3 + 4 xi (xi = 1 + u, w^6 = xi), and maps into
 * E(Fp12) by psi(x', y') = (x' w^-2, y' w^-3). A slope on E' becomes lambda' w^-1 on E, so
 * the line through T with slope lambda', evaluated at P = (xP, yP) in G1 and multiplied by
 * w^3 (an element of Fp4, removed by the final exponentiation like every factor from a
 * proper subfield), is
 *     (lambda' xT - yT) - lambda' xP w^2 + yP w^3,
 * i.e. non-zero only at the Fp2 positions c0.c0, c0.c1 (w^2 = v) and c1.c1 (w^3 = v w):
 * the "014" shape, multiplied in by cuzk_fp12_mul_by_014_ (13 Fp2 products instead of 18).
 *
 * T is kept in homogeneous projective coordinates (X : Y : Z) = (X/Z, Y/Z), so the loop
 * needs no inversion; each line is scaled by an Fp2 factor (again harmless).
 *
 * Final exponentiation: easy part f^((p^6 - 1)(p^2 + 1)), then the hard part raised to
 *     3 (p^4 - p^2 + 1)/r = (x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3
 * (Hayashida-Hayasaka-Teruya). The factor 3 is coprime to r, so the result is still a
 * non-degenerate bilinear pairing, and it is the value that zkcrypto/bls12_381,
 * noble-curves and snarkjs (ffjavascript) compute, so GT values agree with theirs (the tests
 * compare with noble's e(aG1, bG2) and snarkjs's vk_alphabeta_12). The unit tests also check
 * the identity and the result against a plain exponentiation.
 */
#include "pairing/pairing_internal.h"

/* ------------------------------------------------------- sparse products ---- */

/* r = a * (b0 + b1 v) in Fp6 (5 Fp2 products):
 *   r0 = a0 b0 + xi a2 b1, r1 = a0 b1 + a1 b0, r2 = a1 b1 + a2 b0 */
static void fp6_mul_by_01(cuzk_fp6 *r, const cuzk_fp6 *a, const cuzk_fp2 *b0, const cuzk_fp2 *b1)
{
    cuzk_fp2 t0, t1, s, u, r0, r1, r2;
    cuzk_fp2_mul(&t0, &a->c0, b0);
    cuzk_fp2_mul(&t1, &a->c1, b1);

    cuzk_fp2_add(&s, &a->c1, &a->c2);   /* (a1 + a2) b1 - a1 b1 = a2 b1 */
    cuzk_fp2_mul(&r0, &s, b1);
    cuzk_fp2_sub(&r0, &r0, &t1);
    cuzk_fp2_mul_by_nonresidue(&r0, &r0);
    cuzk_fp2_add(&r0, &r0, &t0);

    cuzk_fp2_add(&s, &a->c0, &a->c1);
    cuzk_fp2_add(&u, b0, b1);
    cuzk_fp2_mul(&r1, &s, &u);
    cuzk_fp2_sub(&r1, &r1, &t0);
    cuzk_fp2_sub(&r1, &r1, &t1);

    cuzk_fp2_add(&s, &a->c0, &a->c2);   /* (a0 + a2) b0 - a0 b0 = a2 b0 */
    cuzk_fp2_mul(&r2, &s, b0);
    cuzk_fp2_sub(&r2, &r2, &t0);
    cuzk_fp2_add(&r2, &r2, &t1);

    r->c0 = r0;
    r->c1 = r1;
    r->c2 = r2;
}

/* r = a * (b1 v) = xi a2 b1 + a0 b1 v + a1 b1 v^2 */
static void fp6_mul_by_1(cuzk_fp6 *r, const cuzk_fp6 *a, const cuzk_fp2 *b1)
{
    cuzk_fp2 t0, t1, t2;
    cuzk_fp2_mul(&t0, &a->c2, b1);
    cuzk_fp2_mul_by_nonresidue(&t0, &t0);
    cuzk_fp2_mul(&t1, &a->c0, b1);
    cuzk_fp2_mul(&t2, &a->c1, b1);
    r->c0 = t0;
    r->c1 = t1;
    r->c2 = t2;
}

/* f * (l0 + l1 w) with l0 = c0 + c1 v, l1 = c4 v (Karatsuba over w). */
void cuzk_fp12_mul_by_014_(cuzk_fp12 *r, const cuzk_fp12 *f, const cuzk_fp2 *c0,
                           const cuzk_fp2 *c1, const cuzk_fp2 *c4)
{
    cuzk_fp6 t0, t1, s;
    cuzk_fp2 u;
    fp6_mul_by_01(&t0, &f->c0, c0, c1);
    fp6_mul_by_1(&t1, &f->c1, c4);
    cuzk_fp6_add(&s, &f->c0, &f->c1);
    cuzk_fp2_add(&u, c1, c4);
    fp6_mul_by_01(&s, &s, c0, &u);
    cuzk_fp6_sub(&s, &s, &t0);
    cuzk_fp6_sub(&r->c1, &s, &t1);
    cuzk_fp6_mul_by_nonresidue(&t1, &t1);
    cuzk_fp6_add(&r->c0, &t0, &t1);
}

/* ------------------------------------------------------ cyclotomic group ---- */

/* (x + y s)^2 in Fp4 = Fp2[s]/(s^2 - xi): (x^2 + xi y^2) + 2xy s */
static void fp4_sqr(cuzk_fp2 *rx, cuzk_fp2 *ry, const cuzk_fp2 *x, const cuzk_fp2 *y)
{
    cuzk_fp2 t0, t1, t2;
    cuzk_fp2_sqr(&t0, x);
    cuzk_fp2_sqr(&t1, y);
    cuzk_fp2_add(&t2, x, y);
    cuzk_fp2_sqr(&t2, &t2);
    cuzk_fp2_sub(&t2, &t2, &t0);
    cuzk_fp2_sub(ry, &t2, &t1);
    cuzk_fp2_mul_by_nonresidue(&t1, &t1);
    cuzk_fp2_add(rx, &t0, &t1);
}

/* r = 3a - 2x = 2(a - x) + a */
static void three_minus_two(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *x)
{
    cuzk_fp2 t;
    cuzk_fp2_sub(&t, a, x);
    cuzk_fp2_dbl(&t, &t);
    cuzk_fp2_add(r, &t, a);
}

/* r = 3a + 2x = 2(a + x) + a */
static void three_plus_two(cuzk_fp2 *r, const cuzk_fp2 *a, const cuzk_fp2 *x)
{
    cuzk_fp2 t;
    cuzk_fp2_add(&t, a, x);
    cuzk_fp2_dbl(&t, &t);
    cuzk_fp2_add(r, &t, a);
}

/* Granger-Scott. View Fp12 as Fp4[w]/(w^3 - s) with s = w^3, Fp4 = Fp2[s]/(s^2 - xi):
 *   a = A0 + A1 w + A2 w^2, A0 = c0.c0 + c1.c1 s, A1 = c1.c0 + c0.c2 s, A2 = c0.c1 + c1.c2 s.
 * For a in the cyclotomic subgroup (conj over Fp4 is the inverse's shape):
 *   a^2 = (3 A0^2 - 2 conj A0) + (3 s A2^2 + 2 conj A1) w + (3 A1^2 - 2 conj A2) w^2. */
void cuzk_fp12_cyclotomic_sqr_(cuzk_fp12 *r, const cuzk_fp12 *a)
{
    cuzk_fp2 x0 = a->c0.c0, y0 = a->c1.c1;
    cuzk_fp2 x1 = a->c1.c0, y1 = a->c0.c2;
    cuzk_fp2 x2 = a->c0.c1, y2 = a->c1.c2;
    cuzk_fp2 sa0, sb0, sa1, sb1, sa2, sb2, t;
    fp4_sqr(&sa0, &sb0, &x0, &y0);
    fp4_sqr(&sa1, &sb1, &x1, &y1);
    fp4_sqr(&sa2, &sb2, &x2, &y2);

    three_minus_two(&r->c0.c0, &sa0, &x0);   /* B0 = (3 a0 - 2 x0) + (3 b0 + 2 y0) s */
    three_plus_two(&r->c1.c1, &sb0, &y0);
    cuzk_fp2_mul_by_nonresidue(&t, &sb2);    /* s A2^2 = xi b2 + a2 s */
    three_plus_two(&r->c1.c0, &t, &x1);      /* B1 = (3 xi b2 + 2 x1) + (3 a2 - 2 y1) s */
    three_minus_two(&r->c0.c2, &sa2, &y1);
    three_minus_two(&r->c0.c1, &sa1, &x2);   /* B2 = (3 a1 - 2 x2) + (3 b1 + 2 y2) s */
    three_plus_two(&r->c1.c2, &sb1, &y2);
}

void cuzk_fp12_cyclotomic_exp_x_(cuzk_fp12 *r, const cuzk_fp12 *a)
{
    cuzk_fp12 acc = *a;
    for (int b = 62; b >= 0; b--) {
        cuzk_fp12_cyclotomic_sqr_(&acc, &acc);
        if ((CUZK_BLS_X_ABS >> b) & 1)
            cuzk_fp12_mul(&acc, &acc, a);
    }
    cuzk_fp12_conj(r, &acc);   /* x < 0: a^x = conj(a^|x|) in the cyclotomic subgroup */
}

/* ------------------------------------------------------------ Miller loop ---- */

typedef struct { cuzk_fp2 x, y, z; } g2_proj;   /* (X/Z, Y/Z) */

/* T = 2T; (l0, l1, l4) = tangent at T evaluated at P, scaled by -2YZ:
 *   l0 = 3b'Z^2 - Y^2, l1 = 3X^2 xP, l4 = -2YZ yP   (b' = 4 xi)
 * Doubling (Costello-Lange-Naehrig, multiplied through by 4 to avoid halving):
 *   X3 = 2XY (Y^2 - 9b'Z^2), Y3 = (Y^2 + 9b'Z^2)^2 - 108 b'^2 Z^4, Z3 = 8 Y^3 Z */
static void dbl_step(g2_proj *t, cuzk_fp2 *l0, cuzk_fp2 *l1, cuzk_fp2 *l4, const cuzk_fp *xp,
                     const cuzk_fp *yp)
{
    cuzk_fp2 xx, yy, zz, h, b3, b9, xy, s, u;
    cuzk_fp2_sqr(&xx, &t->x);
    cuzk_fp2_sqr(&yy, &t->y);
    cuzk_fp2_sqr(&zz, &t->z);
    cuzk_fp2_add(&h, &t->y, &t->z);           /* h = (Y + Z)^2 - Y^2 - Z^2 = 2YZ */
    cuzk_fp2_sqr(&h, &h);
    cuzk_fp2_sub(&h, &h, &yy);
    cuzk_fp2_sub(&h, &h, &zz);
    cuzk_fp2_mul_by_nonresidue(&b3, &zz);     /* b3 = 12 xi Z^2 = 3b'Z^2 */
    cuzk_fp2_dbl(&b3, &b3);
    cuzk_fp2_dbl(&b3, &b3);
    cuzk_fp2_dbl(&s, &b3);
    cuzk_fp2_add(&b3, &b3, &s);
    cuzk_fp2_dbl(&b9, &b3);                   /* b9 = 9b'Z^2 */
    cuzk_fp2_add(&b9, &b9, &b3);

    cuzk_fp2_sub(l0, &b3, &yy);
    cuzk_fp2_dbl(&s, &xx);
    cuzk_fp2_add(&s, &s, &xx);
    cuzk_fp2_mul_fp(l1, &s, xp);
    cuzk_fp2_neg(&s, &h);
    cuzk_fp2_mul_fp(l4, &s, yp);

    cuzk_fp2_mul(&xy, &t->x, &t->y);
    cuzk_fp2_sub(&s, &yy, &b9);
    cuzk_fp2_mul(&t->x, &xy, &s);
    cuzk_fp2_dbl(&t->x, &t->x);

    cuzk_fp2_mul(&t->z, &yy, &h);             /* 4 Y^2 (2YZ) */
    cuzk_fp2_dbl(&t->z, &t->z);
    cuzk_fp2_dbl(&t->z, &t->z);

    cuzk_fp2_add(&s, &yy, &b9);
    cuzk_fp2_sqr(&s, &s);
    cuzk_fp2_sqr(&u, &b3);                    /* 12 (3b'Z^2)^2 = 108 b'^2 Z^4 */
    cuzk_fp2_dbl(&u, &u);
    cuzk_fp2_dbl(&u, &u);
    cuzk_fp2_dbl(&h, &u);
    cuzk_fp2_add(&u, &u, &h);
    cuzk_fp2_sub(&t->y, &s, &u);
}

/* T = T + Q (Q affine, T != +-Q); with theta = Y - yQ Z, lam = X - xQ Z the chord,
 * scaled by lam, is l0 = theta xQ - lam yQ, l1 = -theta xP, l4 = lam yP, and
 *   C = theta^2, D = lam^2, E = lam D, F = Z C, G = X D, H = E + F - 2G,
 *   X3 = lam H, Y3 = theta (G - H) - Y E, Z3 = Z E. */
static void add_step(g2_proj *t, cuzk_fp2 *l0, cuzk_fp2 *l1, cuzk_fp2 *l4,
                     const cuzk_g2_affine *q, const cuzk_fp *xp, const cuzk_fp *yp)
{
    cuzk_fp2 theta, lam, c, d, e, f, g, h, s;
    cuzk_fp2_mul(&theta, &q->y, &t->z);
    cuzk_fp2_sub(&theta, &t->y, &theta);
    cuzk_fp2_mul(&lam, &q->x, &t->z);
    cuzk_fp2_sub(&lam, &t->x, &lam);

    cuzk_fp2_mul(l0, &theta, &q->x);
    cuzk_fp2_mul(&s, &lam, &q->y);
    cuzk_fp2_sub(l0, l0, &s);
    cuzk_fp2_neg(&s, &theta);
    cuzk_fp2_mul_fp(l1, &s, xp);
    cuzk_fp2_mul_fp(l4, &lam, yp);

    cuzk_fp2_sqr(&c, &theta);
    cuzk_fp2_sqr(&d, &lam);
    cuzk_fp2_mul(&e, &lam, &d);
    cuzk_fp2_mul(&f, &t->z, &c);
    cuzk_fp2_mul(&g, &t->x, &d);
    cuzk_fp2_add(&h, &e, &f);
    cuzk_fp2_sub(&h, &h, &g);
    cuzk_fp2_sub(&h, &h, &g);
    cuzk_fp2_mul(&t->x, &lam, &h);
    cuzk_fp2_sub(&s, &g, &h);
    cuzk_fp2_mul(&s, &theta, &s);
    cuzk_fp2_mul(&f, &t->y, &e);
    cuzk_fp2_sub(&t->y, &s, &f);
    cuzk_fp2_mul(&t->z, &t->z, &e);
}

/* Pairs handled together per pass: their squarings of f are shared (stack only). */
#define MILLER_CHUNK 16

/* f = prod_i f_{|x|,Q_i}(P_i) (not yet conjugated for x < 0); no infinity inside. */
static void miller_chunk(cuzk_fp12 *f, const cuzk_g1_affine *const *p,
                         const cuzk_g2_affine *const *q, size_t n)
{
    g2_proj t[MILLER_CHUNK];
    cuzk_fp2 l0, l1, l4;
    for (size_t i = 0; i < n; i++) {
        t[i].x = q[i]->x;
        t[i].y = q[i]->y;
        cuzk_fp2_set_one(&t[i].z);
    }
    cuzk_fp12_set_one(f);
    /* The top bit (63) of |x| is the starting T = Q. */
    for (int b = 62; b >= 0; b--) {
        if (b != 62)
            cuzk_fp12_sqr(f, f);
        for (size_t i = 0; i < n; i++) {
            dbl_step(&t[i], &l0, &l1, &l4, &p[i]->x, &p[i]->y);
            if (b == 62 && i == 0) {   /* f = 1: the first line is f */
                cuzk_fp6_set_zero(&f->c0);
                cuzk_fp6_set_zero(&f->c1);
                f->c0.c0 = l0;
                f->c0.c1 = l1;
                f->c1.c1 = l4;
            } else {
                cuzk_fp12_mul_by_014_(f, f, &l0, &l1, &l4);
            }
        }
        if ((CUZK_BLS_X_ABS >> b) & 1) {
            for (size_t i = 0; i < n; i++) {
                add_step(&t[i], &l0, &l1, &l4, q[i], &p[i]->x, &p[i]->y);
                cuzk_fp12_mul_by_014_(f, f, &l0, &l1, &l4);
            }
        }
    }
}

static void multi_miller(cuzk_fp12 *r, const cuzk_g1_affine *p, const cuzk_g2_affine *q, size_t n)
{
    const cuzk_g1_affine *pp[MILLER_CHUNK];
    const cuzk_g2_affine *qq[MILLER_CHUNK];
    cuzk_fp12 acc, f;
    bool have = false;
    size_t m = 0;
    cuzk_fp12_set_one(&acc);
    for (size_t i = 0; i <= n; i++) {
        if (i < n && !cuzk_g1_affine_is_inf(&p[i]) && !cuzk_g2_affine_is_inf(&q[i])) {
            pp[m] = &p[i];
            qq[m] = &q[i];
            m++;
        }
        if (m == MILLER_CHUNK || (i == n && m > 0)) {
            miller_chunk(have ? &f : &acc, pp, qq, m);
            if (have)
                cuzk_fp12_mul(&acc, &acc, &f);
            have = true;
            m = 0;
        }
    }
    cuzk_fp12_conj(r, &acc);   /* x < 0: f_{x,Q} = 1/f_{|x|,Q} up to the final exponentiation */
}

void cuzk_miller_loop(cuzk_fp12 *r, const cuzk_g1_affine *p, const cuzk_g2_affine *q)
{
    multi_miller(r, p, q, 1);
}

/* --------------------------------------------------- final exponentiation ---- */

void cuzk_final_exp(cuzk_fp12 *r, const cuzk_fp12 *a)
{
    cuzk_fp12 m, t, u, xa, xb, xc, xd, res;
    /* easy part: m = a^((p^6 - 1)(p^2 + 1)), now in the cyclotomic subgroup */
    cuzk_fp12_inv(&t, a);
    cuzk_fp12_conj(&m, a);
    cuzk_fp12_mul(&m, &m, &t);
    cuzk_fp12_frobenius(&t, &m, 2);
    cuzk_fp12_mul(&m, &t, &m);

    /* hard part: m^(l0 + l1 p + l2 p^2 + l3 p^3) with, from the identity above,
     *   l3 = (x-1)^2, l2 = x l3, l1 = (x^2 - 1) l3, l0 = (x^3 - x) l3 + 3.
     * xa = m^l3, xb = xa^x, xc = xb^x, xd = xc^x:
     *   m^l0 = xd conj(xb) m^3, m^l1 = xc conj(xa), m^l2 = xb, m^l3 = xa. */
    cuzk_fp12_cyclotomic_exp_x_(&t, &m);          /* m^(x-1) */
    cuzk_fp12_conj(&u, &m);
    cuzk_fp12_mul(&t, &t, &u);
    cuzk_fp12_cyclotomic_exp_x_(&xa, &t);         /* m^((x-1)^2) */
    cuzk_fp12_conj(&u, &t);
    cuzk_fp12_mul(&xa, &xa, &u);
    cuzk_fp12_cyclotomic_exp_x_(&xb, &xa);
    cuzk_fp12_cyclotomic_exp_x_(&xc, &xb);
    cuzk_fp12_cyclotomic_exp_x_(&xd, &xc);

    cuzk_fp12_conj(&u, &xb);
    cuzk_fp12_mul(&res, &xd, &u);
    cuzk_fp12_cyclotomic_sqr_(&t, &m);
    cuzk_fp12_mul(&t, &t, &m);
    cuzk_fp12_mul(&res, &res, &t);

    cuzk_fp12_conj(&u, &xa);
    cuzk_fp12_mul(&t, &xc, &u);
    cuzk_fp12_frobenius(&t, &t, 1);
    cuzk_fp12_mul(&res, &res, &t);

    cuzk_fp12_frobenius(&t, &xb, 2);
    cuzk_fp12_mul(&res, &res, &t);

    cuzk_fp12_frobenius(&t, &xa, 3);
    cuzk_fp12_mul(r, &res, &t);
}

/* ------------------------------------------------------------- pairings ---- */

void cuzk_pairing(cuzk_fp12 *r, const cuzk_g1_affine *p, const cuzk_g2_affine *q)
{
    cuzk_fp12 f;
    multi_miller(&f, p, q, 1);
    cuzk_final_exp(r, &f);
}

void cuzk_multi_pairing(cuzk_fp12 *r, const cuzk_g1_affine *p, const cuzk_g2_affine *q, size_t n)
{
    cuzk_fp12 f;
    multi_miller(&f, p, q, n);
    cuzk_final_exp(r, &f);
}

bool cuzk_pairing_product_is_one(const cuzk_g1_affine *p, const cuzk_g2_affine *q, size_t n)
{
    cuzk_fp12 f;
    cuzk_multi_pairing(&f, p, q, n);
    return cuzk_fp12_is_one(&f);
}
