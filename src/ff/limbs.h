/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Generic multi-precision primitives on little-endian 64-bit limbs, parameterised by the
 * modulus (blst-style): the per-field files wrap them with a constant limb count, so the
 * compiler unrolls every loop. All functions here run in constant time.
 */
#ifndef CUZK_FF_LIMBS_H
#define CUZK_FF_LIMBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

typedef unsigned __int128 u128;

#define LIMBS_INLINE static inline __attribute__((always_inline))

/* mask = all ones if flag else 0 */
LIMBS_INLINE uint64_t limbs_mask(uint64_t flag) { return (uint64_t)0 - (flag & 1); }

/* r = a + b, returns the carry out. */
LIMBS_INLINE uint64_t limbs_add(uint64_t *r, const uint64_t *a, const uint64_t *b, size_t n)
{
#if defined(__x86_64__)
    /* adc chain */
    unsigned char c = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned long long t;
        c = _addcarry_u64(c, a[i], b[i], &t);
        r[i] = t;
    }
    return c;
#endif
    u128 acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc += (u128)a[i] + b[i];
        r[i] = (uint64_t)acc;
        acc >>= 64;
    }
    return (uint64_t)acc;
}

/* r = a - b, returns the borrow out (0 or 1). */
LIMBS_INLINE uint64_t limbs_sub(uint64_t *r, const uint64_t *a, const uint64_t *b, size_t n)
{
#if defined(__x86_64__)
    /* sbb chain */
    unsigned char c = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned long long t;
        c = _subborrow_u64(c, a[i], b[i], &t);
        r[i] = t;
    }
    return c;
#endif
    uint64_t borrow = 0;
    for (size_t i = 0; i < n; i++) {
        u128 d = (u128)a[i] - b[i] - borrow;
        r[i] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) & 1;
    }
    return borrow;
}

/* r = mask ? a : b */
LIMBS_INLINE void limbs_select(uint64_t *r, const uint64_t *a, const uint64_t *b, uint64_t mask, size_t n)
{
    for (size_t i = 0; i < n; i++)
        r[i] = (a[i] & mask) | (b[i] & ~mask);
}

LIMBS_INLINE uint64_t limbs_is_zero(const uint64_t *a, size_t n)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= a[i];
    /* 1 if acc == 0, without branches */
    return ((acc | (0 - acc)) >> 63) ^ 1;
}

LIMBS_INLINE uint64_t limbs_eq(const uint64_t *a, const uint64_t *b, size_t n)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= a[i] ^ b[i];
    return ((acc | (0 - acc)) >> 63) ^ 1;
}

/* 1 if a < b (as integers), constant time. */
LIMBS_INLINE uint64_t limbs_lt(const uint64_t *a, const uint64_t *b, size_t n)
{
    uint64_t t[8];
    return limbs_sub(t, a, b, n);
}

/* r = a + b mod p, for a, b < p and 2p < 2^(64n) + p (p's top bit may be set: the carry
 * is folded into the comparison). */
LIMBS_INLINE void mod_add(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p, size_t n)
{
    uint64_t s[8], d[8];
    uint64_t carry = limbs_add(s, a, b, n);
    uint64_t borrow = limbs_sub(d, s, p, n);
    /* keep s only if s < p with no carry, i.e. borrow && !carry */
    limbs_select(r, s, d, limbs_mask(borrow & (carry ^ 1)), n);
}

LIMBS_INLINE void mod_sub(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p, size_t n)
{
    uint64_t d[8], pm[8];
    uint64_t borrow = limbs_sub(d, a, b, n);
    uint64_t m = limbs_mask(borrow);
    for (size_t i = 0; i < n; i++)
        pm[i] = p[i] & m;
    limbs_add(r, d, pm, n);
}

LIMBS_INLINE void mod_neg(uint64_t *r, const uint64_t *a, const uint64_t *p, size_t n)
{
    uint64_t d[8];
    uint64_t nz = limbs_is_zero(a, n) ^ 1;
    limbs_sub(d, p, a, n);
    uint64_t m = limbs_mask(nz);
    for (size_t i = 0; i < n; i++)
        r[i] = d[i] & m;
}

/*
 * Montgomery multiplication, CIOS: r = a*b*2^(-64n) mod p for a, b < p, p odd < 2^(64n-1).
 * n0 = -p^(-1) mod 2^64.
 */
LIMBS_INLINE void mont_mul(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p,
                           uint64_t n0, size_t n)
{
    uint64_t t[10] = {0};
    for (size_t i = 0; i < n; i++) {
        u128 acc = 0;
        for (size_t j = 0; j < n; j++) {
            acc += (u128)a[j] * b[i] + t[j];
            t[j] = (uint64_t)acc;
            acc >>= 64;
        }
        acc += t[n];
        t[n] = (uint64_t)acc;
        t[n + 1] = (uint64_t)(acc >> 64);

        uint64_t m = t[0] * n0;
        acc = (u128)m * p[0] + t[0];
        acc >>= 64;
        for (size_t j = 1; j < n; j++) {
            acc += (u128)m * p[j] + t[j];
            t[j - 1] = (uint64_t)acc;
            acc >>= 64;
        }
        acc += t[n];
        t[n - 1] = (uint64_t)acc;
        t[n] = t[n + 1] + (uint64_t)(acc >> 64);
    }
    /* t < 2p: subtract p once if t >= p */
    uint64_t d[8];
    uint64_t borrow = limbs_sub(d, t, p, n);
    limbs_select(r, t, d, limbs_mask(borrow & (t[n] ^ 1)), n);
}

/* Shift right by s bits (0 < s < 64). */
LIMBS_INLINE void limbs_shr(uint64_t *r, const uint64_t *a, unsigned s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        r[i] = (a[i] >> s) | (i + 1 < n ? a[i + 1] << (64 - s) : 0);
}

/* a += small, returns carry. Not constant time in the carry chain length; used on public values. */
LIMBS_INLINE uint64_t limbs_add_small(uint64_t *a, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n && v; i++) {
        uint64_t s = a[i] + v;
        v = s < v;
        a[i] = s;
    }
    return v;
}

LIMBS_INLINE uint64_t limbs_sub_small(uint64_t *a, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n && v; i++) {
        uint64_t s = a[i] - v;
        v = a[i] < v;
        a[i] = s;
    }
    return v;
}

#endif
