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
