/* SPDX-License-Identifier: Apache-2.0 */
/* Pippenger MSM, batch addition and split MSM over G2 (template in msm_impl.h). */
#include "cuzk/msm.h"
#include "ec/ec_internal.h"
#include "ff/ff_inline.h"
#include "util/parallel.h"
#include "msm/msm_ifma.h"

#define MSM_G g2
#define MSM_AFF cuzk_g2_affine
#define MSM_JAC cuzk_g2_jac
#define MSM_XYZZ cuzk_g2_xyzz
#define MSM_F cuzk_fp2
#define MSM_FF(name) cuzk_fp2i_##name
#define MSM_F_INV cuzk_fp2_inv
#define MSM_INV_COST 25.0 /* Fp2 inversion ~ 22 G2 mixed additions (measured) */
/* GLS (msm_internal.h): the bases' images -psi(Q) = |x| Q, psi^2(Q) = |x|^2 Q and
 * -psi^3(Q) = |x|^3 Q, true for Q in G2 (as for GLV in msm_g1.c): four 64-bit parts a scalar. Three images per base (and the split scalars):
 * 608 bytes a base beside its 192, so only up to 2^18 bases (152 MiB). */
#define MSM_ENDO_PARTS 4
#define MSM_ENDO_MAX ((size_t)1 << 18)
#define MSM_ENDO_BASES g2_gls_bases
/* the batch-affine buckets on AVX-512 IFMA where the CPU has it (msm_ifma.h) */
#define MSM_IFMA 1
#define MSM_VEC_PT msm_g2_r52
#define MSM_VEC_FN(name) msm_ifma_g2_##name
#define MSM_VEC_INV_COST 6.0 /* a flush's inversion (about 7 us) in G2 mixed additions */

typedef struct {
    cuzk_g2_affine *out;
    const cuzk_g2_affine *in;
    size_t n;
} gls_bases_ctx;

static void gls_bases_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    const gls_bases_ctx *c = vctx;
    for (size_t i = b; i < e; i++) {
        cuzk_g2_affine t = c->in[i];
        for (size_t h = 0; h < 3; h++) { /* (-1)^(h+1) psi^(h+1)(Q) */
            cuzk_g2_psi_(&t, &t);
            c->out[h * c->n + i] = t;
            if (h != 1)
                cuzk_fp2_neg(&c->out[h * c->n + i].y, &t.y);
        }
    }
}

static void g2_gls_bases(cuzk_g2_affine *out, const cuzk_g2_affine *in, size_t n, unsigned T)
{
    gls_bases_ctx c = {.out = out, .in = in, .n = n};
    cuzk_parallel_for(n, 1024, T, gls_bases_range, &c);
}

#include "msm/msm_impl.h"
