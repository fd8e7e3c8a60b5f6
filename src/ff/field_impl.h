/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Prime-field template, included once per field by fp.c and fr.c. Before including, define:
 *   F        name infix (fp, fr)          T       element type (cuzk_fp, cuzk_fr)
 *   N        limb count                   MODULUS const uint64_t[N], the prime
 *   ONE      const uint64_t[N], 2^(64N) mod p (1 in Montgomery form)
 *   R2       const uint64_t[N], 2^(128N) mod p (to-Montgomery factor)
 *   N0       -p^(-1) mod 2^64
 *   ADX_MUL(r, a, b), ADX_SQR(r, a)  the fast-path routines on limb arrays
 *   FAST_ADD(r, a, b), FAST_SUB(r, a, b)  optional: addition and subtraction routines
 */
#include <string.h>

#include "ff/limbs.h"

#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c) CAT3_(a, b, c)
#define FN(name) CAT3(cuzk_, F, _##name)

void FN(set_zero)(T *r) { memset(r, 0, sizeof *r); }
void FN(set_one)(T *r) { memcpy(r->l, ONE, sizeof r->l); }

void FN(set_u64)(T *r, uint64_t v)
{
    uint64_t l[N] = {v};
    mont_mul(r->l, l, R2, MODULUS, N0, N); /* v < p, so v*R2/R = v*R mod p */
}

bool FN(is_zero)(const T *a) { return limbs_is_zero(a->l, N); }
bool FN(is_one)(const T *a) { return limbs_eq(a->l, ONE, N); }
bool FN(eq)(const T *a, const T *b) { return limbs_eq(a->l, b->l, N); }

void FN(cmov)(T *r, const T *a, bool flag) { limbs_select(r->l, a->l, r->l, limbs_mask(flag), N); }

#if defined(FAST_ADD) && defined(FAST_SUB)
void FN(add)(T *r, const T *a, const T *b) { FAST_ADD(r->l, a->l, b->l); }
void FN(sub)(T *r, const T *a, const T *b) { FAST_SUB(r->l, a->l, b->l); }
void FN(dbl)(T *r, const T *a) { FAST_ADD(r->l, a->l, a->l); }
#else
void FN(add)(T *r, const T *a, const T *b) { mod_add(r->l, a->l, b->l, MODULUS, N); }
void FN(sub)(T *r, const T *a, const T *b) { mod_sub(r->l, a->l, b->l, MODULUS, N); }
void FN(dbl)(T *r, const T *a) { mod_add(r->l, a->l, a->l, MODULUS, N); }
#endif
void FN(neg)(T *r, const T *a) { mod_neg(r->l, a->l, MODULUS, N); }

void FN(mul_portable)(T *r, const T *a, const T *b) { mont_mul(r->l, a->l, b->l, MODULUS, N0, N); }
void FN(sqr_portable)(T *r, const T *a) { mont_mul(r->l, a->l, a->l, MODULUS, N0, N); }

void FN(mul)(T *r, const T *a, const T *b)
{
    if (cuzk_ff_adx_enabled_)
        ADX_MUL(r->l, a->l, b->l);
    else
        mont_mul(r->l, a->l, b->l, MODULUS, N0, N);
}

void FN(sqr)(T *r, const T *a)
{
    if (cuzk_ff_adx_enabled_)
        ADX_SQR(r->l, a->l);
    else
        mont_mul(r->l, a->l, a->l, MODULUS, N0, N);
}

/* Left-to-right 4-bit fixed window. The exponent is treated as public (its bits choose
 * table entries), the base as secret: the sequence of operations depends only on nlimbs,
 * and the table is read with a masked scan. */
void FN(pow)(T *r, const T *a, const uint64_t *e, size_t nlimbs)
{
    T tbl[16], acc, t;
    FN(set_one)(&tbl[0]);
    tbl[1] = *a;
    for (int i = 2; i < 16; i++)
        FN(mul)(&tbl[i], &tbl[i - 1], a);
    FN(set_one)(&acc);
    for (size_t li = nlimbs; li-- > 0;) {
        for (int nib = 15; nib >= 0; nib--) {
            for (int k = 0; k < 4; k++)
                FN(sqr)(&acc, &acc);
            unsigned idx = (unsigned)(e[li] >> (4 * nib)) & 15;
            FN(set_zero)(&t);
            for (unsigned j = 0; j < 16; j++)
                FN(cmov)(&t, &tbl[j], j == idx);
            FN(mul)(&acc, &acc, &t);
        }
    }
    *r = acc;
}

/* Fermat: a^(p-2); 0 maps to 0. */
void FN(inv)(T *r, const T *a)
{
    uint64_t e[N];
    memcpy(e, MODULUS, sizeof e);
    limbs_sub_small(e, 2, N);
    FN(pow)(r, a, e, N);
}

/* Variable-time inverse: binary extended Euclid on the canonical value,
 * then back to Montgomery form. */
void FN(inv_var)(T *r, const T *a)
{
    if (FN(is_zero)(a)) {
        FN(set_zero)(r);
        return;
    }
    /* a is x*R; u = a (as integer), we find u^(-1) mod p = x^(-1) R^(-1),
     * then multiply by R^3 (two mont_mul with R2) to get x^(-1) R. */
    uint64_t u[N], v[N], x1[N], x2[N];
    memcpy(u, a->l, sizeof u);
    memcpy(v, MODULUS, sizeof v);
    memset(x1, 0, sizeof x1);
    x1[0] = 1;
    memset(x2, 0, sizeof x2);
    uint64_t one[N] = {1};
    while (!limbs_eq(u, one, N) && !limbs_eq(v, one, N)) {
        while ((u[0] & 1) == 0) {
            limbs_shr(u, u, 1, N);
            if (x1[0] & 1) {
                uint64_t c = limbs_add(x1, x1, MODULUS, N);
                limbs_shr(x1, x1, 1, N);
                x1[N - 1] |= c << 63;
            } else {
                limbs_shr(x1, x1, 1, N);
            }
        }
        while ((v[0] & 1) == 0) {
            limbs_shr(v, v, 1, N);
            if (x2[0] & 1) {
                uint64_t c = limbs_add(x2, x2, MODULUS, N);
                limbs_shr(x2, x2, 1, N);
                x2[N - 1] |= c << 63;
            } else {
                limbs_shr(x2, x2, 1, N);
            }
        }
        if (!limbs_lt(u, v, N)) {
            limbs_sub(u, u, v, N);
            mod_sub(x1, x1, x2, MODULUS, N);
        } else {
            limbs_sub(v, v, u, N);
            mod_sub(x2, x2, x1, MODULUS, N);
        }
    }
    uint64_t *res = limbs_eq(u, one, N) ? x1 : x2;
    mont_mul(r->l, res, R2, MODULUS, N0, N);
    mont_mul(r->l, r->l, R2, MODULUS, N0, N);
}

/* Euler's criterion: a^((p-1)/2). */
int FN(legendre)(const T *a)
{
    uint64_t e[N];
    T t, m1;
    memcpy(e, MODULUS, sizeof e);
    limbs_shr(e, e, 1, N); /* (p-1)/2 since p is odd */
    FN(pow)(&t, a, e, N);
    if (FN(is_zero)(&t))
        return 0;
    return FN(is_one)(&t) ? 1 : (FN(set_one)(&m1), FN(neg)(&m1, &m1), FN(eq)(&t, &m1) ? -1 : 0);
}

cuzk_err FN(from_limbs)(T *r, const uint64_t in[N])
{
    if (!limbs_lt(in, MODULUS, N))
        return CUZK_ENONCANONICAL;
    mont_mul(r->l, in, R2, MODULUS, N0, N);
    return CUZK_OK;
}

void FN(to_limbs)(uint64_t out[N], const T *a)
{
    uint64_t one[N] = {1};
    mont_mul(out, a->l, one, MODULUS, N0, N);
}

static void CAT3(F, _, le_load)(uint64_t l[N], const uint8_t *in)
{
    for (size_t i = 0; i < N; i++) {
        uint64_t v = 0;
        for (int b = 7; b >= 0; b--)
            v = (v << 8) | in[8 * i + (size_t)b];
        l[i] = v;
    }
}

static void CAT3(F, _, le_store)(uint8_t *out, const uint64_t l[N])
{
    for (size_t i = 0; i < N; i++)
        for (int b = 0; b < 8; b++)
            out[8 * i + (size_t)b] = (uint8_t)(l[i] >> (8 * b));
}

cuzk_err FN(from_bytes_le)(T *r, const uint8_t in[8 * N])
{
    uint64_t l[N];
    CAT3(F, _, le_load)(l, in);
    return FN(from_limbs)(r, l);
}

cuzk_err FN(from_bytes_be)(T *r, const uint8_t in[8 * N])
{
    uint8_t le[8 * N];
    for (size_t i = 0; i < 8 * N; i++)
        le[i] = in[8 * N - 1 - i];
    return FN(from_bytes_le)(r, le);
}

void FN(to_bytes_le)(uint8_t out[8 * N], const T *a)
{
    uint64_t l[N];
    FN(to_limbs)(l, a);
    CAT3(F, _, le_store)(out, l);
}

void FN(to_bytes_be)(uint8_t out[8 * N], const T *a)
{
    uint8_t le[8 * N];
    FN(to_bytes_le)(le, a);
    for (size_t i = 0; i < 8 * N; i++)
        out[i] = le[8 * N - 1 - i];
}

cuzk_err FN(from_mont_bytes_le)(T *r, const uint8_t in[8 * N])
{
    uint64_t l[N];
    CAT3(F, _, le_load)(l, in);
    if (!limbs_lt(l, MODULUS, N))
        return CUZK_ENONCANONICAL;
    memcpy(r->l, l, sizeof l);
    return CUZK_OK;
}

void FN(to_mont_bytes_le)(uint8_t out[8 * N], const T *a) { CAT3(F, _, le_store)(out, a->l); }

cuzk_err FN(from_dec)(T *r, const char *s)
{
    if (!s || !*s)
        return CUZK_EPARSE;
    uint64_t l[N] = {0};
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9')
            return CUZK_EPARSE;
        /* l = l*10 + digit, detecting overflow past N limbs */
        u128 acc = (u128)(unsigned)(*c - '0');
        for (size_t i = 0; i < N; i++) {
            acc += (u128)l[i] * 10;
            l[i] = (uint64_t)acc;
            acc >>= 64;
        }
        if (acc)
            return CUZK_ENONCANONICAL;
    }
    return FN(from_limbs)(r, l);
}

void FN(to_dec)(char out[DEC_MAX], const T *a)
{
    uint64_t l[N];
    char buf[8 * N * 3 + 2];
    size_t pos = sizeof buf;
    buf[--pos] = 0;
    FN(to_limbs)(l, a);
    do {
        /* l /= 10^19, remainder into 19 digits (fewer for the leading group) */
        const uint64_t d = 10000000000000000000ULL;
        u128 rem = 0;
        for (size_t i = N; i-- > 0;) {
            u128 cur = (rem << 64) | l[i];
            l[i] = (uint64_t)(cur / d);
            rem = cur % d;
        }
        uint64_t chunk = (uint64_t)rem;
        bool more = !limbs_is_zero(l, N);
        for (int k = 0; k < 19; k++) {
            buf[--pos] = (char)('0' + chunk % 10);
            chunk /= 10;
            if (!more && chunk == 0)
                break;
        }
    } while (!limbs_is_zero(l, N));
    strcpy(out, &buf[pos]);
}

#undef FN
#undef CAT3
#undef CAT3_
