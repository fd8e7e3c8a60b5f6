/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Point encodings (see include/cuzk/ec.h): snarkjs (little-endian Montgomery, infinity all
 * zero), zcash/bellperson (big-endian, flag bits in byte 0, G2 as c1||c0), decimal text.
 * Decoders write *r only on success and report each failure with its own code and a detail.
 */
#include <stdio.h>
#include <string.h>

#include "cuzk/ec.h"

#define ZC_FLAG_COMPRESSED 0x80u   /* byte 0: compressed form */
#define ZC_FLAG_INFINITY 0x40u     /* byte 0: point at infinity */
#define ZC_FLAG_SORT 0x20u         /* byte 0: y is the lexicographically largest root */
#define ZC_FLAG_MASK 0xe0u         /* all three flag bits */

/* ---- shared checks ---- */

static cuzk_err g1_finish(cuzk_g1_affine *r, const cuzk_g1_affine *p, unsigned flags,
                          const char *what)
{
    if (!cuzk_g1_affine_is_on_curve(p))
        return cuzk_error_set(CUZK_ENOT_ON_CURVE, "%s: G1 point is not on the curve", what);
    if ((flags & CUZK_DECODE_CHECK_SUBGROUP) && !cuzk_g1_affine_in_subgroup(p))
        return cuzk_error_set(CUZK_ENOT_IN_SUBGROUP, "%s: G1 point is not in the subgroup",
                              what);
    *r = *p;
    return CUZK_OK;
}

static cuzk_err g2_finish(cuzk_g2_affine *r, const cuzk_g2_affine *p, unsigned flags,
                          const char *what)
{
    if (!cuzk_g2_affine_is_on_curve(p))
        return cuzk_error_set(CUZK_ENOT_ON_CURVE, "%s: G2 point is not on the curve", what);
    if ((flags & CUZK_DECODE_CHECK_SUBGROUP) && !cuzk_g2_affine_in_subgroup(p))
        return cuzk_error_set(CUZK_ENOT_IN_SUBGROUP, "%s: G2 point is not in the subgroup",
                              what);
    *r = *p;
    return CUZK_OK;
}

/* Checks byte 0's flags for a zcash encoding of len bytes. Returns CUZK_OK and sets *inf
 * when the input is a valid infinity; CUZK_EFLAGS on a bad combination. */
static cuzk_err zc_check_flags(bool *inf, const uint8_t *in, size_t len, bool compressed,
                               const char *what)
{
    unsigned b0 = in[0];
    *inf = false;
    if (!(b0 & ZC_FLAG_COMPRESSED) != !compressed)
        return cuzk_error_set(CUZK_EFLAGS, "%s: compression flag %s", what,
                              compressed ? "missing" : "set on an uncompressed encoding");
    if ((b0 & ZC_FLAG_SORT) && !compressed)
        return cuzk_error_set(CUZK_EFLAGS, "%s: sort flag set on an uncompressed encoding",
                              what);
    if (b0 & ZC_FLAG_INFINITY) {
        if (b0 & ZC_FLAG_SORT)
            return cuzk_error_set(CUZK_EFLAGS, "%s: sort flag set with the infinity flag",
                                  what);
        uint8_t acc = (uint8_t)(b0 & ~ZC_FLAG_MASK);
        for (size_t i = 1; i < len; i++)
            acc |= in[i];
        if (acc)
            return cuzk_error_set(CUZK_EFLAGS, "%s: infinity flag with nonzero coordinates",
                                  what);
        *inf = true;
    }
    return CUZK_OK;
}

/* Reads a big-endian Fp at in (48 bytes), masking the flag bits of byte 0 when first. */
static cuzk_err zc_read_fp(cuzk_fp *r, const uint8_t *in, bool first, const char *what,
                           const char *coord)
{
    uint8_t buf[CUZK_FP_BYTES];
    memcpy(buf, in, sizeof buf);
    if (first)
        buf[0] &= (uint8_t)~ZC_FLAG_MASK;
    if (cuzk_fp_from_bytes_be(r, buf) != CUZK_OK)
        return cuzk_error_set(CUZK_ENONCANONICAL, "%s: coordinate %s is not below p", what,
                              coord);
    return CUZK_OK;
}

/* zcash Fp2: c1 then c0. */
static cuzk_err zc_read_fp2(cuzk_fp2 *r, const uint8_t *in, bool first, const char *what,
                            const char *coord)
{
    char name[16];
    cuzk_err e;
    snprintf(name, sizeof name, "%s.c1", coord);
    if ((e = zc_read_fp(&r->c1, in, first, what, name)) != CUZK_OK)
        return e;
    snprintf(name, sizeof name, "%s.c0", coord);
    return zc_read_fp(&r->c0, in + CUZK_FP_BYTES, false, what, name);
}

static void zc_write_fp2(uint8_t *out, const cuzk_fp2 *a)
{
    cuzk_fp_to_bytes_be(out, &a->c1);
    cuzk_fp_to_bytes_be(out + CUZK_FP_BYTES, &a->c0);
}

/* ---- snarkjs ---- */

static cuzk_err sj_read_fp(cuzk_fp *r, const uint8_t *in, const char *what, const char *coord)
{
    if (cuzk_fp_from_mont_bytes_le(r, in) != CUZK_OK)
        return cuzk_error_set(CUZK_ENONCANONICAL, "%s: coordinate %s is not below p", what,
                              coord);
    return CUZK_OK;
}

cuzk_err cuzk_g1_from_snarkjs(cuzk_g1_affine *r, const uint8_t in[96], unsigned flags)
{
    static const char what[] = "G1 snarkjs";
    cuzk_g1_affine p;
    cuzk_err e;
    if ((e = sj_read_fp(&p.x, in, what, "x")) != CUZK_OK ||
        (e = sj_read_fp(&p.y, in + 48, what, "y")) != CUZK_OK)
        return e;
    return g1_finish(r, &p, flags, what);   /* all zero = (0, 0) = infinity */
}

void cuzk_g1_to_snarkjs(uint8_t out[96], const cuzk_g1_affine *a)
{
    cuzk_fp_to_mont_bytes_le(out, &a->x);
    cuzk_fp_to_mont_bytes_le(out + 48, &a->y);
}

cuzk_err cuzk_g2_from_snarkjs(cuzk_g2_affine *r, const uint8_t in[192], unsigned flags)
{
    static const char what[] = "G2 snarkjs";
    cuzk_g2_affine p;
    cuzk_err e;
    if ((e = sj_read_fp(&p.x.c0, in, what, "x.c0")) != CUZK_OK ||
        (e = sj_read_fp(&p.x.c1, in + 48, what, "x.c1")) != CUZK_OK ||
        (e = sj_read_fp(&p.y.c0, in + 96, what, "y.c0")) != CUZK_OK ||
        (e = sj_read_fp(&p.y.c1, in + 144, what, "y.c1")) != CUZK_OK)
        return e;
    return g2_finish(r, &p, flags, what);
}

void cuzk_g2_to_snarkjs(uint8_t out[192], const cuzk_g2_affine *a)
{
    cuzk_fp_to_mont_bytes_le(out, &a->x.c0);
    cuzk_fp_to_mont_bytes_le(out + 48, &a->x.c1);
    cuzk_fp_to_mont_bytes_le(out + 96, &a->y.c0);
    cuzk_fp_to_mont_bytes_le(out + 144, &a->y.c1);
}

/* ---- zcash G1 ---- */

cuzk_err cuzk_g1_from_uncompressed(cuzk_g1_affine *r, const uint8_t in[96], unsigned flags)
{
    static const char what[] = "G1 uncompressed";
    bool inf;
    cuzk_err e;
    if ((e = zc_check_flags(&inf, in, 96, false, what)) != CUZK_OK)
        return e;
    if (inf) {
        cuzk_g1_affine_set_inf(r);
        return CUZK_OK;
    }
    cuzk_g1_affine p;
    if ((e = zc_read_fp(&p.x, in, true, what, "x")) != CUZK_OK ||
        (e = zc_read_fp(&p.y, in + 48, false, what, "y")) != CUZK_OK)
        return e;
    /* (0, 0) is our infinity but, without the flag, just a point off the curve */
    if (cuzk_g1_affine_is_inf(&p))
        return cuzk_error_set(CUZK_ENOT_ON_CURVE, "%s: (0, 0) without the infinity flag",
                              what);
    return g1_finish(r, &p, flags, what);
}

void cuzk_g1_to_uncompressed(uint8_t out[96], const cuzk_g1_affine *a)
{
    if (cuzk_g1_affine_is_inf(a)) {
        memset(out, 0, 96);
        out[0] = ZC_FLAG_INFINITY;
        return;
    }
    cuzk_fp_to_bytes_be(out, &a->x);
    cuzk_fp_to_bytes_be(out + 48, &a->y);
}

cuzk_err cuzk_g1_from_compressed(cuzk_g1_affine *r, const uint8_t in[48], unsigned flags)
{
    static const char what[] = "G1 compressed";
    bool inf;
    cuzk_err e;
    if ((e = zc_check_flags(&inf, in, 48, true, what)) != CUZK_OK)
        return e;
    if (inf) {
        cuzk_g1_affine_set_inf(r);
        return CUZK_OK;
    }
    cuzk_g1_affine p;
    cuzk_fp rhs, t;
    if ((e = zc_read_fp(&p.x, in, true, what, "x")) != CUZK_OK)
        return e;
    cuzk_fp_sqr(&rhs, &p.x);
    cuzk_fp_mul(&rhs, &rhs, &p.x);
    cuzk_fp_set_u64(&t, 4);   /* b = 4 */
    cuzk_fp_add(&rhs, &rhs, &t);
    if (!cuzk_fp_sqrt(&p.y, &rhs))
        return cuzk_error_set(CUZK_ENOT_SQUARE, "%s: x^3 + 4 has no square root", what);
    bool want = (in[0] & ZC_FLAG_SORT) != 0;
    if (cuzk_fp_lexicographically_largest(&p.y) != want)
        cuzk_fp_neg(&p.y, &p.y);
    return g1_finish(r, &p, flags, what);
}

void cuzk_g1_to_compressed(uint8_t out[48], const cuzk_g1_affine *a)
{
    if (cuzk_g1_affine_is_inf(a)) {
        memset(out, 0, 48);
        out[0] = ZC_FLAG_COMPRESSED | ZC_FLAG_INFINITY;
        return;
    }
    cuzk_fp_to_bytes_be(out, &a->x);
    out[0] |= ZC_FLAG_COMPRESSED;
    if (cuzk_fp_lexicographically_largest(&a->y))
        out[0] |= ZC_FLAG_SORT;
}

/* ---- zcash G2 ---- */

cuzk_err cuzk_g2_from_uncompressed(cuzk_g2_affine *r, const uint8_t in[192], unsigned flags)
{
    static const char what[] = "G2 uncompressed";
    bool inf;
    cuzk_err e;
    if ((e = zc_check_flags(&inf, in, 192, false, what)) != CUZK_OK)
        return e;
    if (inf) {
        cuzk_g2_affine_set_inf(r);
        return CUZK_OK;
    }
    cuzk_g2_affine p;
    if ((e = zc_read_fp2(&p.x, in, true, what, "x")) != CUZK_OK ||
        (e = zc_read_fp2(&p.y, in + 96, false, what, "y")) != CUZK_OK)
        return e;
    if (cuzk_g2_affine_is_inf(&p))
        return cuzk_error_set(CUZK_ENOT_ON_CURVE, "%s: (0, 0) without the infinity flag",
                              what);
    return g2_finish(r, &p, flags, what);
}

void cuzk_g2_to_uncompressed(uint8_t out[192], const cuzk_g2_affine *a)
{
    if (cuzk_g2_affine_is_inf(a)) {
        memset(out, 0, 192);
        out[0] = ZC_FLAG_INFINITY;
        return;
    }
    zc_write_fp2(out, &a->x);
    zc_write_fp2(out + 96, &a->y);
}

cuzk_err cuzk_g2_from_compressed(cuzk_g2_affine *r, const uint8_t in[96], unsigned flags)
{
    static const char what[] = "G2 compressed";
    bool inf;
    cuzk_err e;
    if ((e = zc_check_flags(&inf, in, 96, true, what)) != CUZK_OK)
        return e;
    if (inf) {
        cuzk_g2_affine_set_inf(r);
        return CUZK_OK;
    }
    cuzk_g2_affine p;
    cuzk_fp2 rhs, b;
    if ((e = zc_read_fp2(&p.x, in, true, what, "x")) != CUZK_OK)
        return e;
    cuzk_fp2_sqr(&rhs, &p.x);
    cuzk_fp2_mul(&rhs, &rhs, &p.x);
    cuzk_fp_set_u64(&b.c0, 4);   /* b = 4(1+u) */
    cuzk_fp_set_u64(&b.c1, 4);
    cuzk_fp2_add(&rhs, &rhs, &b);
    if (!cuzk_fp2_sqrt(&p.y, &rhs))
        return cuzk_error_set(CUZK_ENOT_SQUARE, "%s: x^3 + 4(1+u) has no square root", what);
    bool want = (in[0] & ZC_FLAG_SORT) != 0;
    if (cuzk_fp2_lexicographically_largest(&p.y) != want)
        cuzk_fp2_neg(&p.y, &p.y);
    return g2_finish(r, &p, flags, what);
}

void cuzk_g2_to_compressed(uint8_t out[96], const cuzk_g2_affine *a)
{
    if (cuzk_g2_affine_is_inf(a)) {
        memset(out, 0, 96);
        out[0] = ZC_FLAG_COMPRESSED | ZC_FLAG_INFINITY;
        return;
    }
    zc_write_fp2(out, &a->x);
    out[0] |= ZC_FLAG_COMPRESSED;
    if (cuzk_fp2_lexicographically_largest(&a->y))
        out[0] |= ZC_FLAG_SORT;
}

/* ---- decimal ---- */

static cuzk_err dec_read_fp(cuzk_fp *r, const char *s, const char *what, const char *coord)
{
    cuzk_err e = cuzk_fp_from_dec(r, s);
    if (e != CUZK_OK)
        return cuzk_error_set(e, "%s: coordinate %s: %s", what, coord, cuzk_strerror(e));
    return CUZK_OK;
}

cuzk_err cuzk_g1_from_dec(cuzk_g1_affine *r, const char *x, const char *y, unsigned flags)
{
    static const char what[] = "G1 decimal";
    cuzk_g1_affine p;
    cuzk_err e;
    if ((e = dec_read_fp(&p.x, x, what, "x")) != CUZK_OK ||
        (e = dec_read_fp(&p.y, y, what, "y")) != CUZK_OK)
        return e;
    return g1_finish(r, &p, flags, what);   /* (0, 0) = infinity */
}

cuzk_err cuzk_g2_from_dec(cuzk_g2_affine *r, const char *const xy[4], unsigned flags)
{
    static const char what[] = "G2 decimal";
    cuzk_g2_affine p;
    cuzk_err e;
    if ((e = dec_read_fp(&p.x.c0, xy[0], what, "x.c0")) != CUZK_OK ||
        (e = dec_read_fp(&p.x.c1, xy[1], what, "x.c1")) != CUZK_OK ||
        (e = dec_read_fp(&p.y.c0, xy[2], what, "y.c0")) != CUZK_OK ||
        (e = dec_read_fp(&p.y.c1, xy[3], what, "y.c1")) != CUZK_OK)
        return e;
    return g2_finish(r, &p, flags, what);
}
