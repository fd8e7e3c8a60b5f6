/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Point formulas for short Weierstrass curves y^2 = x^3 + b (a = 0), written once and
 * included by g1.c (over Fp) and g2.c (over Fp2). Before including, the includer defines:
 *
 *   EC_G            g1 or g2 (the name infix)
 *   EC_F            the coordinate field type (cuzk_fp or cuzk_fp2)
 *   EC_FF(op)       the field function for op, e.g. cuzk_fp_##op
 *   EC_AFF, EC_JAC, EC_XYZZ   the point types
 *   ec_mul_by_b(r, a)         static function: r = b*a
 *
 * and gets every function of include/cuzk/ec.h's CUZK_EC_DECLARE_ except cuzk_G_generator
 * and cuzk_G_affine_in_subgroup, which are curve specific, plus the static helper
 * ec_mul_abs_x_var (multiplication by |x| = 0xd201000000010000, the curve parameter).
 *
 * Conventions (from ec.h): affine infinity is (0, 0); Jacobian infinity is any Z = 0;
 * XYZZ infinity is any ZZ = 0. Formulas are those of the Explicit-Formulas Database
 * (hyperelliptic.org/EFD, "g1p/auto-shortw-jacobian-0" and "auto-shortw-xyzz").
 */
#ifndef EC_G
#error "define EC_G, EC_F, EC_FF, EC_AFF, EC_JAC, EC_XYZZ and ec_mul_by_b before including"
#endif

#include <string.h>

#define EC_CAT4_(a, b, c, d) a##b##c##d
#define EC_XCAT4_(a, b, c, d) EC_CAT4_(a, b, c, d)
#define EC_FN(name) EC_XCAT4_(cuzk_, EC_G, _, name)

typedef EC_F ec_f;

/* ---- small field helpers ---- */

static inline void ec_f_mul3(ec_f *r, const ec_f *a)
{
    ec_f t;
    EC_FF(dbl)(&t, a);
    EC_FF(add)(r, &t, a);
}

/* 1 if a == b (public small integers, computed without branches). */
static inline bool ec_ct_eq_u64(uint64_t a, uint64_t b)
{
    uint64_t d = a ^ b;
    /* (d | -d) has its top bit set iff d != 0 */
    return (bool)(1 ^ ((d | (0 - d)) >> 63));
}

/* ---- affine ---- */

void EC_FN(affine_set_inf)(EC_AFF *r)
{
    EC_FF(set_zero)(&r->x);
    EC_FF(set_zero)(&r->y);
}

bool EC_FN(affine_is_inf)(const EC_AFF *a)
{
    return EC_FF(is_zero)(&a->x) & EC_FF(is_zero)(&a->y);
}

bool EC_FN(affine_eq)(const EC_AFF *a, const EC_AFF *b)
{
    return EC_FF(eq)(&a->x, &b->x) & EC_FF(eq)(&a->y, &b->y);
}

void EC_FN(affine_neg)(EC_AFF *r, const EC_AFF *a)
{
    r->x = a->x;
    EC_FF(neg)(&r->y, &a->y);   /* -0 = 0 keeps infinity */
}

bool EC_FN(affine_is_on_curve)(const EC_AFF *a)
{
    ec_f lhs, rhs, t;
    EC_FF(sqr)(&lhs, &a->y);           /* y^2 */
    EC_FF(sqr)(&t, &a->x);
    EC_FF(mul)(&rhs, &t, &a->x);       /* x^3 */
    EC_FF(set_one)(&t);
    ec_mul_by_b(&t, &t);
    EC_FF(add)(&rhs, &rhs, &t);        /* x^3 + b */
    return EC_FF(eq)(&lhs, &rhs) | EC_FN(affine_is_inf)(a);
}

/* ---- Jacobian ---- */

void EC_FN(jac_set_inf)(EC_JAC *r)
{
    EC_FF(set_one)(&r->x);
    EC_FF(set_one)(&r->y);
    EC_FF(set_zero)(&r->z);
}

bool EC_FN(jac_is_inf)(const EC_JAC *a)
{
    return EC_FF(is_zero)(&a->z);
}

static inline void ec_jac_cmov(EC_JAC *r, const EC_JAC *a, bool flag)
{
    EC_FF(cmov)(&r->x, &a->x, flag);
    EC_FF(cmov)(&r->y, &a->y, flag);
    EC_FF(cmov)(&r->z, &a->z, flag);
}

bool EC_FN(jac_eq)(const EC_JAC *a, const EC_JAC *b)
{
    /* x1/z1^2 = x2/z2^2 and y1/z1^3 = y2/z2^3, cross-multiplied */
    ec_f z1z1, z2z2, t1, t2, u1, u2;
    bool ia = EC_FN(jac_is_inf)(a), ib = EC_FN(jac_is_inf)(b);
    EC_FF(sqr)(&z1z1, &a->z);
    EC_FF(sqr)(&z2z2, &b->z);
    EC_FF(mul)(&u1, &a->x, &z2z2);
    EC_FF(mul)(&u2, &b->x, &z1z1);
    bool xeq = EC_FF(eq)(&u1, &u2);
    EC_FF(mul)(&t1, &z2z2, &b->z);
    EC_FF(mul)(&t1, &t1, &a->y);       /* y1 z2^3 */
    EC_FF(mul)(&t2, &z1z1, &a->z);
    EC_FF(mul)(&t2, &t2, &b->y);       /* y2 z1^3 */
    bool yeq = EC_FF(eq)(&t1, &t2);
    return (ia & ib) | (!ia & !ib & xeq & yeq);
}

void EC_FN(jac_from_affine)(EC_JAC *r, const EC_AFF *a)
{
    bool inf = EC_FN(affine_is_inf)(a);
    ec_f zero;
    EC_FF(set_zero)(&zero);
    r->x = a->x;
    r->y = a->y;
    EC_FF(set_one)(&r->z);
    EC_FF(cmov)(&r->z, &zero, inf);
}

void EC_FN(jac_to_affine)(EC_AFF *r, const EC_JAC *a)
{
    /* inv(0) = 0, so infinity maps to (0, 0) without a special case */
    ec_f zi, zi2, zi3;
    EC_FF(inv)(&zi, &a->z);
    EC_FF(sqr)(&zi2, &zi);
    EC_FF(mul)(&zi3, &zi2, &zi);
    EC_FF(mul)(&r->x, &a->x, &zi2);
    EC_FF(mul)(&r->y, &a->y, &zi3);
}

bool EC_FN(jac_is_on_curve)(const EC_JAC *a)
{
    /* Y^2 = X^3 + b Z^6 */
    ec_f lhs, rhs, t;
    EC_FF(sqr)(&lhs, &a->y);
    EC_FF(sqr)(&t, &a->x);
    EC_FF(mul)(&rhs, &t, &a->x);
    EC_FF(sqr)(&t, &a->z);
    EC_FF(mul)(&t, &t, &a->z);
    EC_FF(sqr)(&t, &t);
    ec_mul_by_b(&t, &t);
    EC_FF(add)(&rhs, &rhs, &t);
    return EC_FF(eq)(&lhs, &rhs) | EC_FN(jac_is_inf)(a);
}

void EC_FN(jac_neg)(EC_JAC *r, const EC_JAC *a)
{
    r->x = a->x;
    EC_FF(neg)(&r->y, &a->y);
    r->z = a->z;
}

void EC_FN(jac_dbl)(EC_JAC *r, const EC_JAC *a)
{
    /* dbl-2009-l: A = X1^2, B = Y1^2, C = B^2, D = 2((X1+B)^2 - A - C), E = 3A, F = E^2,
     * X3 = F - 2D, Y3 = E(D - X3) - 8C, Z3 = 2 Y1 Z1. Z1 = 0 gives Z3 = 0. */
    ec_f A, B, C, D, E, F, t;
    EC_FF(sqr)(&A, &a->x);
    EC_FF(sqr)(&B, &a->y);
    EC_FF(sqr)(&C, &B);
    EC_FF(add)(&t, &a->x, &B);
    EC_FF(sqr)(&t, &t);
    EC_FF(sub)(&t, &t, &A);
    EC_FF(sub)(&t, &t, &C);
    EC_FF(dbl)(&D, &t);
    ec_f_mul3(&E, &A);
    EC_FF(sqr)(&F, &E);
    EC_FF(mul)(&r->z, &a->y, &a->z);
    EC_FF(dbl)(&r->z, &r->z);
    EC_FF(dbl)(&t, &D);
    EC_FF(sub)(&r->x, &F, &t);
    EC_FF(sub)(&t, &D, &r->x);
    EC_FF(mul)(&t, &E, &t);
    EC_FF(dbl)(&C, &C);
    EC_FF(dbl)(&C, &C);
    EC_FF(dbl)(&C, &C);
    EC_FF(sub)(&r->y, &t, &C);
}

/* Generic addition add-2007-bl, valid when a != +-b and neither is infinity. Sets *h_zero
 * (U1 = U2: same x) and *r_zero (S1 = S2: same y) so callers can handle the exceptions. */
static void ec_jac_add_generic(EC_JAC *r, const EC_JAC *a, const EC_JAC *b, bool *h_zero,
                               bool *r_zero)
{
    /* Z1Z1 = Z1^2, Z2Z2 = Z2^2, U1 = X1 Z2Z2, U2 = X2 Z1Z1, S1 = Y1 Z2 Z2Z2,
     * S2 = Y2 Z1 Z1Z1, H = U2 - U1, I = (2H)^2, J = H I, rr = 2(S2 - S1), V = U1 I,
     * X3 = rr^2 - J - 2V, Y3 = rr(V - X3) - 2 S1 J, Z3 = ((Z1 + Z2)^2 - Z1Z1 - Z2Z2) H */
    ec_f z1z1, z2z2, u1, u2, s1, s2, h, i, j, rr, v, t;
    EC_FF(sqr)(&z1z1, &a->z);
    EC_FF(sqr)(&z2z2, &b->z);
    EC_FF(mul)(&u1, &a->x, &z2z2);
    EC_FF(mul)(&u2, &b->x, &z1z1);
    EC_FF(mul)(&s1, &a->y, &b->z);
    EC_FF(mul)(&s1, &s1, &z2z2);
    EC_FF(mul)(&s2, &b->y, &a->z);
    EC_FF(mul)(&s2, &s2, &z1z1);
    EC_FF(sub)(&h, &u2, &u1);
    EC_FF(sub)(&rr, &s2, &s1);
    *h_zero = EC_FF(is_zero)(&h);
    *r_zero = EC_FF(is_zero)(&rr);
    EC_FF(dbl)(&rr, &rr);
    EC_FF(dbl)(&i, &h);
    EC_FF(sqr)(&i, &i);
    EC_FF(mul)(&j, &h, &i);
    EC_FF(mul)(&v, &u1, &i);
    EC_FF(add)(&t, &a->z, &b->z);
    EC_FF(sqr)(&t, &t);
    EC_FF(sub)(&t, &t, &z1z1);
    EC_FF(sub)(&t, &t, &z2z2);
    EC_FF(mul)(&r->z, &t, &h);
    EC_FF(sqr)(&t, &rr);
    EC_FF(sub)(&t, &t, &j);
    EC_FF(sub)(&t, &t, &v);
    EC_FF(sub)(&r->x, &t, &v);
    EC_FF(sub)(&t, &v, &r->x);
    EC_FF(mul)(&t, &rr, &t);
    EC_FF(mul)(&s1, &s1, &j);
    EC_FF(dbl)(&s1, &s1);
    EC_FF(sub)(&r->y, &t, &s1);
}

void EC_FN(jac_add_var)(EC_JAC *r, const EC_JAC *a, const EC_JAC *b)
{
    if (EC_FN(jac_is_inf)(a)) {
        *r = *b;
        return;
    }
    if (EC_FN(jac_is_inf)(b)) {
        *r = *a;
        return;
    }
    EC_JAC out;
    bool hz, rz;
    ec_jac_add_generic(&out, a, b, &hz, &rz);
    if (hz) {
        if (rz)
            EC_FN(jac_dbl)(r, a);
        else
            EC_FN(jac_set_inf)(r);
        return;
    }
    *r = out;
}

void EC_FN(jac_add)(EC_JAC *r, const EC_JAC *a, const EC_JAC *b)
{
    /* Complete and branch-free: compute the generic sum and the double, then select.
     * a = b (same x and y, neither infinite) -> double; a = -b -> the generic formula
     * already gives Z3 = H * ... = 0; a = O -> b; b = O -> a. */
    EC_JAC sum, d;
    bool hz, rz;
    bool ia = EC_FN(jac_is_inf)(a), ib = EC_FN(jac_is_inf)(b);
    ec_jac_add_generic(&sum, a, b, &hz, &rz);
    EC_FN(jac_dbl)(&d, a);
    ec_jac_cmov(&sum, &d, hz & rz);
    ec_jac_cmov(&sum, b, ia);
    ec_jac_cmov(&sum, a, ib);
    *r = sum;
}

void EC_FN(jac_add_affine_var)(EC_JAC *r, const EC_JAC *a, const EC_AFF *b)
{
    if (EC_FN(affine_is_inf)(b)) {
        *r = *a;
        return;
    }
    if (EC_FN(jac_is_inf)(a)) {
        EC_FN(jac_from_affine)(r, b);
        return;
    }
    /* madd-2007-bl: Z1Z1 = Z1^2, U2 = X2 Z1Z1, S2 = Y2 Z1 Z1Z1, H = U2 - X1, HH = H^2,
     * I = 4HH, J = H I, rr = 2(S2 - Y1), V = X1 I, X3 = rr^2 - J - 2V,
     * Y3 = rr(V - X3) - 2 Y1 J, Z3 = (Z1 + H)^2 - Z1Z1 - HH */
    ec_f z1z1, u2, s2, h, hh, i, j, rr, v, t, y1j;
    EC_FF(sqr)(&z1z1, &a->z);
    EC_FF(mul)(&u2, &b->x, &z1z1);
    EC_FF(mul)(&s2, &b->y, &a->z);
    EC_FF(mul)(&s2, &s2, &z1z1);
    EC_FF(sub)(&h, &u2, &a->x);
    EC_FF(sub)(&rr, &s2, &a->y);
    if (EC_FF(is_zero)(&h)) {
        if (EC_FF(is_zero)(&rr))
            EC_FN(jac_dbl)(r, a);
        else
            EC_FN(jac_set_inf)(r);
        return;
    }
    EC_FF(dbl)(&rr, &rr);
    EC_FF(sqr)(&hh, &h);
    EC_FF(dbl)(&i, &hh);
    EC_FF(dbl)(&i, &i);
    EC_FF(mul)(&j, &h, &i);
    EC_FF(mul)(&v, &a->x, &i);
    EC_FF(mul)(&y1j, &a->y, &j);
    EC_FF(dbl)(&y1j, &y1j);
    EC_FF(add)(&t, &a->z, &h);
    EC_FF(sqr)(&t, &t);
    EC_FF(sub)(&t, &t, &z1z1);
    EC_FF(sub)(&r->z, &t, &hh);
    EC_FF(sqr)(&t, &rr);
    EC_FF(sub)(&t, &t, &j);
    EC_FF(sub)(&t, &t, &v);
    EC_FF(sub)(&r->x, &t, &v);
    EC_FF(sub)(&t, &v, &r->x);
    EC_FF(mul)(&t, &rr, &t);
    EC_FF(sub)(&r->y, &t, &y1j);
}

/* ---- scalar multiplication ---- */

/* Bits [pos, pos+w) of k (nbits bits long), bits at or above nbits read as 0. w <= 8. */
static inline unsigned ec_scalar_bits(const uint64_t *k, size_t nbits, size_t pos, unsigned w)
{
    unsigned v = 0;
    for (unsigned b = 0; b < w; b++) {
        size_t i = pos + b;
        if (i < nbits)   /* depends on the public length only */
            v |= (unsigned)((k[i / 64] >> (i % 64)) & 1) << b;
    }
    return v;
}

#define EC_VAR_WINDOW 5    /* sliding window width of mul_var: table of 2^(w-1) odd multiples */

void EC_FN(mul_var)(EC_JAC *r, const EC_JAC *a, const uint64_t *k, size_t nbits)
{
    /* left-to-right sliding window over the odd multiples a, 3a, ..., 31a */
    EC_JAC tab[1u << (EC_VAR_WINDOW - 1)], a2, acc;
    tab[0] = *a;
    EC_FN(jac_dbl)(&a2, a);
    for (unsigned i = 1; i < (1u << (EC_VAR_WINDOW - 1)); i++)
        EC_FN(jac_add_var)(&tab[i], &tab[i - 1], &a2);
    EC_FN(jac_set_inf)(&acc);
    size_t i = nbits;
    while (i > 0) {
        size_t top = i - 1;
        if (!((k[top / 64] >> (top % 64)) & 1)) {
            EC_FN(jac_dbl)(&acc, &acc);
            i--;
            continue;
        }
        /* window [low, top] of at most EC_VAR_WINDOW bits whose lowest bit is set */
        size_t low = top + 1 >= EC_VAR_WINDOW ? top + 1 - EC_VAR_WINDOW : 0;
        while (!((k[low / 64] >> (low % 64)) & 1))
            low++;
        unsigned w = (unsigned)(top - low + 1);
        unsigned d = ec_scalar_bits(k, nbits, low, w);
        for (unsigned s = 0; s < w; s++)
            EC_FN(jac_dbl)(&acc, &acc);
        EC_FN(jac_add_var)(&acc, &acc, &tab[d >> 1]);
        i = low;
    }
    *r = acc;
}

#define EC_CT_WINDOW 4     /* fixed window width of the constant-time mul: 2^w table entries */

void EC_FN(mul)(EC_JAC *r, const EC_JAC *a, const uint64_t *k, size_t nbits)
{
    /* fixed 4-bit windows from the top; each window does 4 doublings, reads the table
     * entry by cmov over all 16 entries, and adds with the complete formula. The time
     * depends on nbits only. */
    EC_JAC tab[1u << EC_CT_WINDOW], acc, t;
    EC_FN(jac_set_inf)(&tab[0]);
    tab[1] = *a;
    for (unsigned i = 2; i < (1u << EC_CT_WINDOW); i++)
        EC_FN(jac_add)(&tab[i], &tab[i - 1], a);
    EC_FN(jac_set_inf)(&acc);
    size_t nwin = (nbits + EC_CT_WINDOW - 1) / EC_CT_WINDOW;
    for (size_t wi = nwin; wi-- > 0;) {
        for (unsigned s = 0; s < EC_CT_WINDOW; s++)
            EC_FN(jac_dbl)(&acc, &acc);
        unsigned d = ec_scalar_bits(k, nbits, wi * EC_CT_WINDOW, EC_CT_WINDOW);
        t = tab[0];
        for (unsigned j = 1; j < (1u << EC_CT_WINDOW); j++)
            ec_jac_cmov(&t, &tab[j], ec_ct_eq_u64(j, d));
        EC_FN(jac_add)(&acc, &acc, &t);
    }
    *r = acc;
    /* the table held multiples of a possibly secret point, acc and t the scalar's
     * multiples: clear them (explicit_bzero: a memset of dead locals may be removed) */
    explicit_bzero(tab, sizeof tab);
    explicit_bzero(&acc, sizeof acc);
    explicit_bzero(&t, sizeof t);
}

void EC_FN(mul_fr)(EC_JAC *r, const EC_JAC *a, const cuzk_fr *k)
{
    uint64_t l[CUZK_FR_LIMBS];
    cuzk_fr_to_limbs(l, k);
    EC_FN(mul)(r, a, l, 64 * CUZK_FR_LIMBS);
    explicit_bzero(l, sizeof l);   /* the scalar, maybe r, s or toxic waste */
}

void EC_FN(generator_mul)(EC_AFF *r, const cuzk_fr *k)
{
    EC_AFF g;
    EC_JAC j;
    EC_FN(generator)(&g);
    EC_FN(jac_from_affine)(&j, &g);
    EC_FN(mul_fr)(&j, &j, k);
    EC_FN(jac_to_affine)(r, &j);
    /* j is k*G in projective form: as secret as k when k is toxic waste */
    volatile unsigned char *v = (volatile unsigned char *)&j;
    for (size_t i = 0; i < sizeof j; i++)
        v[i] = 0;
}

/* r = |x| a with |x| = 0xd201000000010000 (BLS12-381's parameter is x = -|x|); variable time
 * (for subgroup checks on public points). */
static void ec_mul_abs_x_var(EC_JAC *r, const EC_JAC *a)
{
    const uint64_t abs_x = 0xd201000000010000ULL;
    EC_JAC acc = *a;                      /* top bit (63) */
    for (int i = 62; i >= 0; i--) {
        EC_FN(jac_dbl)(&acc, &acc);
        if ((abs_x >> i) & 1)
            EC_FN(jac_add_var)(&acc, &acc, a);
    }
    *r = acc;
}

/* ---- batch conversion ---- */

void EC_FN(batch_to_affine)(EC_AFF *out, const EC_JAC *in, size_t n)
{
    /* Montgomery's trick with Z = 0 replaced by 1 (and the result forced to (0, 0)):
     * out[i].x = prod_{j<i} z_j, acc = prod z_j, inv = 1/acc, then walk back. */
    if (n == 0)
        return;
    ec_f acc, one, z, inv, zi, zi2, t;
    EC_FF(set_one)(&one);
    acc = one;
    for (size_t i = 0; i < n; i++) {
        out[i].x = acc;
        z = in[i].z;
        EC_FF(cmov)(&z, &one, EC_FF(is_zero)(&z));
        EC_FF(mul)(&acc, &acc, &z);
    }
    EC_FF(inv)(&inv, &acc);
    for (size_t i = n; i-- > 0;) {
        bool inf = EC_FF(is_zero)(&in[i].z);
        z = in[i].z;
        EC_FF(cmov)(&z, &one, inf);
        EC_FF(mul)(&zi, &inv, &out[i].x);     /* 1/z_i */
        EC_FF(mul)(&inv, &inv, &z);           /* 1/prod_{j<i} z_j */
        EC_FF(sqr)(&zi2, &zi);
        EC_FF(mul)(&t, &zi2, &zi);
        EC_FF(mul)(&out[i].x, &in[i].x, &zi2);
        EC_FF(mul)(&out[i].y, &in[i].y, &t);
        ec_f zero;
        EC_FF(set_zero)(&zero);
        EC_FF(cmov)(&out[i].x, &zero, inf);
        EC_FF(cmov)(&out[i].y, &zero, inf);
    }
}

/* ---- XYZZ ---- */

void EC_FN(xyzz_set_inf)(EC_XYZZ *r)
{
    EC_FF(set_one)(&r->x);
    EC_FF(set_one)(&r->y);
    EC_FF(set_zero)(&r->zz);
    EC_FF(set_zero)(&r->zzz);
}

bool EC_FN(xyzz_is_inf)(const EC_XYZZ *a)
{
    return EC_FF(is_zero)(&a->zz);
}

void EC_FN(xyzz_from_affine)(EC_XYZZ *r, const EC_AFF *a)
{
    bool inf = EC_FN(affine_is_inf)(a);
    ec_f zero;
    EC_FF(set_zero)(&zero);
    r->x = a->x;
    r->y = a->y;
    EC_FF(set_one)(&r->zz);
    EC_FF(cmov)(&r->zz, &zero, inf);
    r->zzz = r->zz;
}

void EC_FN(xyzz_to_jac)(EC_JAC *r, const EC_XYZZ *a)
{
    /* With Z = ZZ ZZZ: X' = X ZZ ZZZ^2 (X'/Z^2 = X/ZZ), Y' = Y ZZ^3 ZZZ^2 (Y'/Z^3 = Y/ZZZ).
     * ZZ = 0 gives Z = 0. */
    ec_f zzz2, zz3, x, y, z;
    EC_FF(sqr)(&zzz2, &a->zzz);
    EC_FF(sqr)(&zz3, &a->zz);
    EC_FF(mul)(&zz3, &zz3, &a->zz);
    EC_FF(mul)(&x, &a->x, &a->zz);
    EC_FF(mul)(&x, &x, &zzz2);
    EC_FF(mul)(&y, &a->y, &zz3);
    EC_FF(mul)(&y, &y, &zzz2);
    EC_FF(mul)(&z, &a->zz, &a->zzz);
    r->x = x;
    r->y = y;
    r->z = z;
}

void EC_FN(xyzz_to_affine)(EC_AFF *r, const EC_XYZZ *a)
{
    /* w = 1/(ZZ ZZZ); 1/ZZ = w ZZZ, 1/ZZZ = w ZZ. Infinity: inv(0) = 0 gives (0, 0). */
    ec_f w, izz, izzz;
    EC_FF(mul)(&w, &a->zz, &a->zzz);
    EC_FF(inv)(&w, &w);
    EC_FF(mul)(&izz, &w, &a->zzz);
    EC_FF(mul)(&izzz, &w, &a->zz);
    EC_FF(mul)(&r->x, &a->x, &izz);
    EC_FF(mul)(&r->y, &a->y, &izzz);
}

void EC_FN(xyzz_neg)(EC_XYZZ *r, const EC_XYZZ *a)
{
    r->x = a->x;
    EC_FF(neg)(&r->y, &a->y);
    r->zz = a->zz;
    r->zzz = a->zzz;
}

/* dbl-2008-s-1 with (ZZ1, ZZZ1) given; aff: ZZ1 = ZZZ1 = 1 (mdbl-2008-s-1).
 * U = 2Y1, V = U^2, W = U V, S = X1 V, M = 3 X1^2, X3 = M^2 - 2S, Y3 = M(S - X3) - W Y1,
 * ZZ3 = V ZZ1, ZZZ3 = W ZZZ1. */
static void ec_xyzz_dbl_coords(EC_XYZZ *r, const ec_f *x1, const ec_f *y1, const ec_f *zz1,
                               const ec_f *zzz1)
{
    ec_f u, v, w, s, m, t;
    EC_FF(dbl)(&u, y1);
    EC_FF(sqr)(&v, &u);
    EC_FF(mul)(&w, &u, &v);
    EC_FF(mul)(&s, x1, &v);
    EC_FF(sqr)(&m, x1);
    ec_f_mul3(&m, &m);
    EC_FF(mul)(&t, &w, y1);            /* W Y1, before r (which may alias) is written */
    if (zz1) {
        EC_FF(mul)(&r->zz, &v, zz1);
        EC_FF(mul)(&r->zzz, &w, zzz1);
    } else {
        r->zz = v;
        r->zzz = w;
    }
    ec_f x3;
    EC_FF(sqr)(&x3, &m);
    EC_FF(sub)(&x3, &x3, &s);
    EC_FF(sub)(&x3, &x3, &s);
    EC_FF(sub)(&s, &s, &x3);
    EC_FF(mul)(&s, &m, &s);
    EC_FF(sub)(&r->y, &s, &t);
    r->x = x3;
}

void EC_FN(xyzz_dbl_var)(EC_XYZZ *r, const EC_XYZZ *a)
{
    if (EC_FN(xyzz_is_inf)(a)) {
        *r = *a;
        return;
    }
    EC_XYZZ in = *a;
    ec_xyzz_dbl_coords(r, &in.x, &in.y, &in.zz, &in.zzz);
}

void EC_FN(xyzz_add_var)(EC_XYZZ *r, const EC_XYZZ *a, const EC_XYZZ *b)
{
    if (EC_FN(xyzz_is_inf)(a)) {
        *r = *b;
        return;
    }
    if (EC_FN(xyzz_is_inf)(b)) {
        *r = *a;
        return;
    }
    /* add-2008-s: U1 = X1 ZZ2, U2 = X2 ZZ1, S1 = Y1 ZZZ2, S2 = Y2 ZZZ1, P = U2 - U1,
     * R = S2 - S1, PP = P^2, PPP = P PP, Q = U1 PP, X3 = R^2 - PPP - 2Q,
     * Y3 = R(Q - X3) - S1 PPP, ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP */
    ec_f u1, u2, s1, s2, p, rr, pp, ppp, q, t;
    EC_FF(mul)(&u1, &a->x, &b->zz);
    EC_FF(mul)(&u2, &b->x, &a->zz);
    EC_FF(mul)(&s1, &a->y, &b->zzz);
    EC_FF(mul)(&s2, &b->y, &a->zzz);
    EC_FF(sub)(&p, &u2, &u1);
    EC_FF(sub)(&rr, &s2, &s1);
    if (EC_FF(is_zero)(&p)) {
        if (EC_FF(is_zero)(&rr))
            EC_FN(xyzz_dbl_var)(r, a);
        else
            EC_FN(xyzz_set_inf)(r);
        return;
    }
    EC_FF(sqr)(&pp, &p);
    EC_FF(mul)(&ppp, &p, &pp);
    EC_FF(mul)(&q, &u1, &pp);
    EC_FF(mul)(&r->zz, &a->zz, &b->zz);
    EC_FF(mul)(&r->zz, &r->zz, &pp);
    EC_FF(mul)(&r->zzz, &a->zzz, &b->zzz);
    EC_FF(mul)(&r->zzz, &r->zzz, &ppp);
    EC_FF(sqr)(&t, &rr);
    EC_FF(sub)(&t, &t, &ppp);
    EC_FF(sub)(&t, &t, &q);
    EC_FF(sub)(&r->x, &t, &q);
    EC_FF(sub)(&t, &q, &r->x);
    EC_FF(mul)(&t, &rr, &t);
    EC_FF(mul)(&s1, &s1, &ppp);
    EC_FF(sub)(&r->y, &t, &s1);
}

void EC_FN(xyzz_add_affine_var)(EC_XYZZ *r, const EC_XYZZ *a, const EC_AFF *b)
{
    if (EC_FN(affine_is_inf)(b)) {
        *r = *a;
        return;
    }
    if (EC_FN(xyzz_is_inf)(a)) {
        EC_FN(xyzz_from_affine)(r, b);
        return;
    }
    /* madd-2008-s: U2 = X2 ZZ1, S2 = Y2 ZZZ1, P = U2 - X1, R = S2 - Y1, PP = P^2,
     * PPP = P PP, Q = X1 PP, X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - Y1 PPP,
     * ZZ3 = ZZ1 PP, ZZZ3 = ZZZ1 PPP */
    ec_f u2, s2, p, rr, pp, ppp, q, t, y1ppp;
    EC_FF(mul)(&u2, &b->x, &a->zz);
    EC_FF(mul)(&s2, &b->y, &a->zzz);
    EC_FF(sub)(&p, &u2, &a->x);
    EC_FF(sub)(&rr, &s2, &a->y);
    if (EC_FF(is_zero)(&p)) {
        if (EC_FF(is_zero)(&rr)) {
            EC_AFF bb = *b;
            ec_xyzz_dbl_coords(r, &bb.x, &bb.y, NULL, NULL);
        } else {
            EC_FN(xyzz_set_inf)(r);
        }
        return;
    }
    EC_FF(sqr)(&pp, &p);
    EC_FF(mul)(&ppp, &p, &pp);
    EC_FF(mul)(&q, &a->x, &pp);
    EC_FF(mul)(&y1ppp, &a->y, &ppp);
    EC_FF(mul)(&r->zz, &a->zz, &pp);
    EC_FF(mul)(&r->zzz, &a->zzz, &ppp);
    EC_FF(sqr)(&t, &rr);
    EC_FF(sub)(&t, &t, &ppp);
    EC_FF(sub)(&t, &t, &q);
    EC_FF(sub)(&r->x, &t, &q);
    EC_FF(sub)(&t, &q, &r->x);
    EC_FF(mul)(&t, &rr, &t);
    EC_FF(sub)(&r->y, &t, &y1ppp);
}

void EC_FN(xyzz_sub_affine_var)(EC_XYZZ *r, const EC_XYZZ *a, const EC_AFF *b)
{
    EC_AFF nb;
    EC_FN(affine_neg)(&nb, b);
    EC_FN(xyzz_add_affine_var)(r, a, &nb);
}
