/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One batch of bucket additions on the vector lanes, written once for G1 and G2 (included
 * by msm_ifma.c after defining FT, the lane field (NC parts of fe8), PT, the point type,
 * F_MUL, F_SQR, F_INV and FLUSH_NAME).
 *
 * Per group of eight entries: the differences den = x2 - xa and num = y2 - ya; prefix
 * products of den in two chains (even and odd groups, for two products in flight); one
 * inversion of the eight lanes of their product; then, from the last group back, 1 / den,
 * lambda = num / den, x3 = lambda^2 - xa - x2, y3 = lambda (xa - x3) - ya. An entry whose den
 * is 0 mod p (its point has the bucket's x) gets den = 1 and is left undone (special[]).
 */

#ifndef MSM_IFMA_FLUSH_SECOND /* once */
enum { W_DEN, W_NUM, W_XA, W_YA, W_X2, W_PREF, W_N };
#endif

/* coordinate `off` (x or y, parts consecutive) of the eight lanes' points */
VI void F_GATHER(FT *r, const void *const pt[8], size_t off)
{
    for (unsigned c = 0; c < NC; c++) {
        const msm_r52 *src[8];
        for (unsigned l = 0; l < 8; l++)
            src[l] = (const msm_r52 *)((const uint8_t *)pt[l] + off) + c;
        gather8(&r->c[c], src);
    }
}

VI void F_SUBK(FT *r, const FT *a, const FT *b, const fe8 *k, __m512i m52)
{
    for (unsigned c = 0; c < NC; c++)
        sub_k(&r->c[c], &a->c[c], &b->c[c], k, m52);
}

TGT size_t FLUSH_NAME(PT *buckets, const msm_ifma_ent *ent, size_t m, void *work, uint32_t *special)
{
    if (m == 0)
        return 0;
    vconsts k;
    make_consts(&k);
    const __m512i m52 = k.m52;
    FT *w = work;
    size_t groups = (m + 7) / 8, nsp = 0;
    uint8_t *spm = (uint8_t *)(w + groups * W_N); /* within msm_ifma_work_bytes(m) */
    const size_t ox = offsetof(PT, x), oy = offsetof(PT, y);
#define WG(g, which) (&w[(size_t)(g) * W_N + (which)])

    for (size_t g = 0; g < groups; g++) {
        const void *bk[8], *pt[8];
        __mmask8 negm = 0, valid = 0;
        for (unsigned l = 0; l < 8; l++) {
            size_t i = g * 8 + l;
            const msm_ifma_ent *e = &ent[i < m ? i : m - 1];
            if (i < m)
                valid |= (__mmask8)(1u << l);
            if (e->neg)
                negm |= (__mmask8)(1u << l);
            bk[l] = &buckets[e->j];
            pt[l] = e->p;
        }
        FT XA, YA, X2, Y2, DEN, NUM;
        F_GATHER(&XA, bk, ox);
        F_GATHER(&YA, bk, oy);
        F_GATHER(&X2, pt, ox);
        F_GATHER(&Y2, pt, oy);
        if (negm) { /* -y as 2p - y (y < 2p) */
            fe8 zero, ny;
            for (unsigned j = 0; j < 8; j++)
                zero.v[j] = _mm512_setzero_si512();
            for (unsigned c = 0; c < NC; c++) {
                sub_k(&ny, &zero, &Y2.c[c], &k.p2, m52);
                for (unsigned j = 0; j < 8; j++)
                    Y2.c[c].v[j] = _mm512_mask_blend_epi64(negm, Y2.c[c].v[j], ny.v[j]);
            }
        }
        F_SUBK(&DEN, &X2, &XA, &k.p2, m52); /* parts in (0, 4p): 0 mod p is p, 2p or 3p */
        F_SUBK(&NUM, &Y2, &YA, &k.p2, m52);
        __mmask8 z = 0xff;
        for (unsigned c = 0; c < NC; c++)
            z &= eq8(&DEN.c[c], &k.p1) | eq8(&DEN.c[c], &k.p2) | eq8(&DEN.c[c], &k.p3);
        spm[g] = (uint8_t)(z & valid);
        for (unsigned l = 0; l < 8; l++)
            if (((z & valid) >> l) & 1)
                special[nsp++] = (uint32_t)(g * 8 + l);
        __mmask8 fix = (__mmask8)(z | (__mmask8)~valid);
        if (fix)
            for (unsigned c = 0; c < NC; c++)
                for (unsigned j = 0; j < 8; j++)
                    DEN.c[c].v[j] = _mm512_mask_blend_epi64(
                        fix, DEN.c[c].v[j], c == 0 ? k.one.v[j] : _mm512_setzero_si512());
        *WG(g, W_DEN) = DEN;
        *WG(g, W_NUM) = NUM;
        *WG(g, W_XA) = XA;
        *WG(g, W_YA) = YA;
        *WG(g, W_X2) = X2;
    }

    for (size_t g = 0; g < groups; g++) {
        if (g < 2)
            *WG(g, W_PREF) = *WG(g, W_DEN);
        else
            F_MUL(WG(g, W_PREF), WG(g - 2, W_PREF), WG(g, W_DEN), &k);
    }
    FT inv[2], tot, ti;
    if (groups == 1) {
        F_INV(&inv[0], WG(0, W_PREF), &k);
    } else {
        F_MUL(&tot, WG(groups - 1, W_PREF), WG(groups - 2, W_PREF), &k);
        F_INV(&ti, &tot, &k);
        F_MUL(&inv[(groups - 1) & 1], &ti, WG(groups - 2, W_PREF), &k);
        F_MUL(&inv[(groups - 2) & 1], &ti, WG(groups - 1, W_PREF), &k);
    }

    for (size_t g = groups; g-- > 0;) {
        FT dinv, L, L2, X3, Y3, t;
        FT *ic = &inv[g & 1];
        if (g >= 2) {
            F_MUL(&dinv, ic, WG(g - 2, W_PREF), &k);
            F_MUL(ic, ic, WG(g, W_DEN), &k);
        } else {
            dinv = *ic;
        }
        const FT *XA = WG(g, W_XA), *YA = WG(g, W_YA), *X2 = WG(g, W_X2);
        F_MUL(&L, WG(g, W_NUM), &dinv, &k);
        F_SQR(&L2, &L, &k);
        for (unsigned c = 0; c < NC; c++) { /* x3 in (0, 6p), then below 2p */
            for (unsigned j = 0; j < 8; j++)
                X3.c[c].v[j] = _mm512_sub_epi64(_mm512_add_epi64(L2.c[c].v[j], k.p4.v[j]),
                                                _mm512_add_epi64(XA->c[c].v[j], X2->c[c].v[j]));
            norm(&X3.c[c], m52);
            csub(&X3.c[c], &X3.c[c], &k.p4, m52);
            csub(&X3.c[c], &X3.c[c], &k.p2, m52);
        }
        F_SUBK(&t, XA, &X3, &k.p2, m52);
        F_MUL(&Y3, &L, &t, &k);
        F_SUBK(&Y3, &Y3, YA, &k.p2, m52);
        for (unsigned c = 0; c < NC; c++)
            csub(&Y3.c[c], &Y3.c[c], &k.p2, m52);
        for (unsigned c = 0; c < NC; c++) {
            __m512i rx[8], ry[8];
            transpose(rx, X3.c[c].v);
            transpose(ry, Y3.c[c].v);
            for (unsigned l = 0; l < 8; l++) {
                size_t i = g * 8 + l;
                if (i >= m)
                    break;
                if ((spm[g] >> l) & 1) /* left as it was */
                    continue;
                uint8_t *b = (uint8_t *)&buckets[ent[i].j];
                _mm512_storeu_si512((void *)((msm_r52 *)(b + ox) + c), rx[l]);
                _mm512_storeu_si512((void *)((msm_r52 *)(b + oy) + c), ry[l]);
            }
        }
    }
#undef WG
    return nsp;
}

/* ---- the weighted bucket sum, sum over q of (q + 1) bk[q], on the lanes: lane l takes the
 * buckets [l S, (l + 1) S) (S = nb / 8) with XYZZ running and weighted sums of its own, then
 * the lanes are combined: sum = sum_l W_l + S sum_l l R_l (R_l: lane l's total). A step
 * whose additions meet an exception (equal or opposite points) is redone in scalar code. */

typedef struct {
    FT x, y, zz, zzz;
} F_XZ;

/* lanes where a (parts normalised, below 4p) is 0 mod p */
VI __mmask8 F_ZERO(const FT *a, const vconsts *k)
{
    __mmask8 z = 0xff;
    for (unsigned c = 0; c < NC; c++) {
        fe8 zero;
        for (unsigned j = 0; j < 8; j++)
            zero.v[j] = _mm512_setzero_si512();
        z &= eq8(&a->c[c], &zero) | eq8(&a->c[c], &k->p1) | eq8(&a->c[c], &k->p2) |
             eq8(&a->c[c], &k->p3);
    }
    return z;
}

/* the tail of both additions: x3 = R^2 - PPP - 2Q, y3 = R (Q - x3) - y1 PPP (y1ppp given) */
VI void F_XZ_TAIL(F_XZ *o, const FT *rr, const FT *ppp, const FT *q, const FT *y1ppp,
                  const vconsts *k)
{
    FT r2, t;
    F_SQR(&r2, rr, k);
    for (unsigned c = 0; c < NC; c++) { /* R^2 + 6p - PPP - 2Q in (0, 8p), then below 2p */
        for (unsigned j = 0; j < 8; j++)
            o->x.c[c].v[j] = _mm512_sub_epi64(
                _mm512_add_epi64(r2.c[c].v[j], _mm512_add_epi64(k->p4.v[j], k->p2.v[j])),
                _mm512_add_epi64(ppp->c[c].v[j], _mm512_add_epi64(q->c[c].v[j], q->c[c].v[j])));
        norm(&o->x.c[c], k->m52);
        csub(&o->x.c[c], &o->x.c[c], &k->p4, k->m52);
        csub(&o->x.c[c], &o->x.c[c], &k->p2, k->m52);
    }
    F_SUBK(&t, q, &o->x, &k->p2, k->m52);
    F_MUL(&o->y, rr, &t, k);
    F_SUBK(&o->y, &o->y, y1ppp, &k->p2, k->m52);
    for (unsigned c = 0; c < NC; c++)
        csub(&o->y.c[c], &o->y.c[c], &k->p2, k->m52);
}

/* o = a + (x2, y2) (madd-2008-s); returns the lanes where P = 0 (equal or opposite) */
VI __mmask8 F_MADD(F_XZ *o, const F_XZ *a, const FT *x2, const FT *y2, const vconsts *k)
{
    FT u2, s2, p, rr, pp, ppp, q, y1ppp;
    F_MUL(&u2, x2, &a->zz, k);
    F_MUL(&s2, y2, &a->zzz, k);
    F_SUBK(&p, &u2, &a->x, &k->p2, k->m52);
    F_SUBK(&rr, &s2, &a->y, &k->p2, k->m52);
    __mmask8 exc = F_ZERO(&p, k);
    F_SQR(&pp, &p, k);
    F_MUL(&ppp, &p, &pp, k);
    F_MUL(&q, &a->x, &pp, k);
    F_MUL(&y1ppp, &a->y, &ppp, k);
    F_MUL(&o->zz, &a->zz, &pp, k);
    F_MUL(&o->zzz, &a->zzz, &ppp, k);
    F_XZ_TAIL(o, &rr, &ppp, &q, &y1ppp, k);
    return exc;
}

/* o = a + b (add-2008-s); returns the lanes where P = 0 */
VI __mmask8 F_XADD(F_XZ *o, const F_XZ *a, const F_XZ *b, const vconsts *k)
{
    FT u1, u2, s1, s2, p, rr, pp, ppp, q, s1ppp, t;
    F_MUL(&u1, &a->x, &b->zz, k);
    F_MUL(&u2, &b->x, &a->zz, k);
    F_MUL(&s1, &a->y, &b->zzz, k);
    F_MUL(&s2, &b->y, &a->zzz, k);
    F_SUBK(&p, &u2, &u1, &k->p2, k->m52);
    F_SUBK(&rr, &s2, &s1, &k->p2, k->m52);
    __mmask8 exc = F_ZERO(&p, k);
    F_SQR(&pp, &p, k);
    F_MUL(&ppp, &p, &pp, k);
    F_MUL(&q, &u1, &pp, k);
    F_MUL(&s1ppp, &s1, &ppp, k);
    F_MUL(&t, &a->zz, &b->zz, k);
    F_MUL(&o->zz, &t, &pp, k);
    F_MUL(&t, &a->zzz, &b->zzz, k);
    F_MUL(&o->zzz, &t, &ppp, k);
    F_XZ_TAIL(o, &rr, &ppp, &q, &s1ppp, k);
    return exc;
}

VI void F_XZ_BLEND(F_XZ *r, __mmask8 m, const F_XZ *a)
{
    for (unsigned c = 0; c < NC; c++)
        for (unsigned j = 0; j < 8; j++) {
            r->x.c[c].v[j] = _mm512_mask_blend_epi64(m, r->x.c[c].v[j], a->x.c[c].v[j]);
            r->y.c[c].v[j] = _mm512_mask_blend_epi64(m, r->y.c[c].v[j], a->y.c[c].v[j]);
            r->zz.c[c].v[j] = _mm512_mask_blend_epi64(m, r->zz.c[c].v[j], a->zz.c[c].v[j]);
            r->zzz.c[c].v[j] = _mm512_mask_blend_epi64(m, r->zzz.c[c].v[j], a->zzz.c[c].v[j]);
        }
}

TGT static void F_XZ_GET(SXYZZ *o, const F_XZ *a, __mmask8 inf, unsigned l)
{
    if ((inf >> l) & 1) {
        S_(set_inf)(o);
        return;
    }
    for (unsigned c = 0; c < NC; c++) {
        lane_get((cuzk_fp *)(void *)&o->x + c, &a->x.c[c], l);
        lane_get((cuzk_fp *)(void *)&o->y + c, &a->y.c[c], l);
        lane_get((cuzk_fp *)(void *)&o->zz + c, &a->zz.c[c], l);
        lane_get((cuzk_fp *)(void *)&o->zzz + c, &a->zzz.c[c], l);
    }
}

/* sets lane l from v; returns whether v is infinity (the lane then keeps its old values) */
TGT static bool F_XZ_SET(F_XZ *a, unsigned l, const SXYZZ *v)
{
    if (S_(is_inf)(v))
        return true;
    for (unsigned c = 0; c < NC; c++) {
        lane_set(&a->x.c[c], l, (const cuzk_fp *)(const void *)&v->x + c);
        lane_set(&a->y.c[c], l, (const cuzk_fp *)(const void *)&v->y + c);
        lane_set(&a->zz.c[c], l, (const cuzk_fp *)(const void *)&v->zz + c);
        lane_set(&a->zzz.c[c], l, (const cuzk_fp *)(const void *)&v->zzz + c);
    }
    return false;
}

TGT void SUM_NAME(SXYZZ *out, const PT *bk, const uint8_t *flag, uint8_t present, size_t nb)
{
    vconsts k;
    make_consts(&k);
    size_t S = nb / 8;
    F_XZ R, W;
    __mmask8 rinf = 0xff, winf = 0xff;
    memset(&R, 0, sizeof R);
    memset(&W, 0, sizeof W);
    const size_t ox = offsetof(PT, x), oy = offsetof(PT, y);
    for (size_t i = S; i-- > 0;) {
        const void *pt[8];
        __mmask8 pm = 0;
        for (unsigned l = 0; l < 8; l++) {
            size_t q = l * S + i;
            pt[l] = &bk[q];
            if (flag[q] & present)
                pm |= (__mmask8)(1u << l);
        }
        F_XZ R2 = R, W2 = W, one;
        FT x2, y2;
        F_GATHER(&x2, pt, ox);
        F_GATHER(&y2, pt, oy);
        __mmask8 exc = 0, add = (__mmask8)(pm & ~rinf), first = (__mmask8)(pm & rinf);
        if (add)
            exc |= (__mmask8)(F_MADD(&R2, &R, &x2, &y2, &k) & add);
        one.x = x2, one.y = y2;
        for (unsigned c = 0; c < NC; c++)
            for (unsigned j = 0; j < 8; j++) {
                one.zz.c[c].v[j] = one.zzz.c[c].v[j] = c == 0 ? k.one.v[j] : _mm512_setzero_si512();
            }
        F_XZ Rn = R;
        F_XZ_BLEND(&Rn, add, &R2);
        F_XZ_BLEND(&Rn, first, &one);
        __mmask8 rinf_n = (__mmask8)(rinf & ~pm);
        __mmask8 wadd = (__mmask8)(~rinf_n & ~winf), wfirst = (__mmask8)(~rinf_n & winf);
        if (wadd)
            exc |= (__mmask8)(F_XADD(&W2, &W, &Rn, &k) & wadd);
        if (exc) { /* this step in scalar code, every lane */
            for (unsigned l = 0; l < 8; l++) {
                SXYZZ r, w;
                F_XZ_GET(&r, &R, rinf, l);
                F_XZ_GET(&w, &W, winf, l);
                if ((pm >> l) & 1) {
                    SAFF b;
                    for (unsigned c = 0; c < NC; c++) {
                        lane_get((cuzk_fp *)(void *)&b.x + c, &x2.c[c], l);
                        lane_get((cuzk_fp *)(void *)&b.y + c, &y2.c[c], l);
                    }
                    S_(add_affine_var)(&r, &r, &b);
                }
                if (!S_(is_inf)(&r))
                    S_(add_var)(&w, &w, &r);
                __mmask8 bit = (__mmask8)(1u << l);
                rinf = F_XZ_SET(&R, l, &r) ? (__mmask8)(rinf | bit) : (__mmask8)(rinf & ~bit);
                winf = F_XZ_SET(&W, l, &w) ? (__mmask8)(winf | bit) : (__mmask8)(winf & ~bit);
            }
            continue;
        }
        F_XZ Wn = W;
        F_XZ_BLEND(&Wn, wadd, &W2);
        F_XZ_BLEND(&Wn, wfirst, &Rn);
        R = Rn;
        W = Wn;
        rinf = rinf_n;
        winf = (__mmask8)(winf & rinf_n);
    }
    /* sum_l W_l + S sum_l l R_l, the second as sum over l >= 1 of sum_{l' >= l} R_l' */
    SXYZZ acc, run, t;
    S_(set_inf)(&acc);
    S_(set_inf)(&run);
    for (unsigned l = 8; l-- > 1;) {
        F_XZ_GET(&t, &R, rinf, l);
        S_(add_var)(&run, &run, &t);
        S_(add_var)(&acc, &acc, &run);
    }
    for (size_t s2 = S; s2 > 1; s2 >>= 1)
        S_(dbl_var)(&acc, &acc);
    for (unsigned l = 0; l < 8; l++) {
        F_XZ_GET(&t, &W, winf, l);
        S_(add_var)(&acc, &acc, &t);
    }
    *out = acc;
}
