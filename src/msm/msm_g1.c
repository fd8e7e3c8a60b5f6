/* SPDX-License-Identifier: Apache-2.0 */
/* Pippenger MSM, batch addition and split MSM over G1 (template in msm_impl.h). */
#include "cuzk/msm.h"
#include "ec/ec_internal.h"
#include "ff/ff_inline.h"
#include "util/parallel.h"
#include "msm/msm_ifma.h"

#define MSM_G g1
#define MSM_AFF cuzk_g1_affine
#define MSM_JAC cuzk_g1_jac
#define MSM_XYZZ cuzk_g1_xyzz
#define MSM_F cuzk_fp
#define MSM_FF(name) cuzk_fpi_##name
#define MSM_F_INV cuzk_fp_inv_var
#define MSM_INV_COST 50.0 /* Fp inversion ~ 56 G1 mixed additions (measured) */

/* GLV (msm_internal.h): the bases' images -sigma(P) = (beta x, -y) = u P, true for P in G1
 * (a key from a sound setup; for a corrupt key whose points lie outside G1 the sum is wrong,
 * as the proof's check then says); 128 bytes a base beside its 96, so up to 2^20 bases
 * (128 MiB). */
#define MSM_ENDO_PARTS 2
#define MSM_ENDO_MAX ((size_t)1 << 20)
#define MSM_ENDO_BASES g1_glv_bases
/* the batch-affine buckets on AVX-512 IFMA where the CPU has it (msm_ifma.h) */
#define MSM_IFMA 1
#define MSM_VEC_PT msm_g1_r52
#define MSM_VEC_FN(name) msm_ifma_g1_##name

typedef struct {
    cuzk_g1_affine *out;
    const cuzk_g1_affine *in;
    cuzk_fp beta;
} glv_bases_ctx;

static void glv_bases_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    const glv_bases_ctx *c = vctx;
    for (size_t i = b; i < e; i++) {
        cuzk_fpi_mul(&c->out[i].x, &c->in[i].x, &c->beta); /* infinity (0, 0) stays */
        cuzk_fp_neg(&c->out[i].y, &c->in[i].y);
    }
}

static void g1_glv_bases(cuzk_g1_affine *out, const cuzk_g1_affine *in, size_t n, unsigned T)
{
    glv_bases_ctx c = {.out = out, .in = in};
    cuzk_g1_beta_(&c.beta);
    cuzk_parallel_for(n, 4096, T, glv_bases_range, &c);
}

#include "msm/msm_impl.h"
