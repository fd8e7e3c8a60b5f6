/* SPDX-License-Identifier: Apache-2.0 */
/* Groth16 verification with one multi-pairing. */
#include <stdio.h>
#include <stdlib.h>

#include "cuzk/ec.h"

#include "cuzk/groth16.h"
#include "cuzk/msm.h"
#include "cuzk/pairing.h"

/* The key's points at infinity: the first one named, or NULL when there is none. */
static const char *vk_infinity(const cuzk_vk *vk, char *buf, size_t len)
{
    if (cuzk_g1_affine_is_inf(&vk->alpha1))
        return "vk_alpha_1";
    if (cuzk_g2_affine_is_inf(&vk->beta2))
        return "vk_beta_2";
    if (cuzk_g2_affine_is_inf(&vk->gamma2))
        return "vk_gamma_2";
    if (cuzk_g2_affine_is_inf(&vk->delta2))
        return "vk_delta_2";
    for (size_t i = 0; vk->ic && i <= vk->n_public; i++)
        if (cuzk_g1_affine_is_inf(&vk->ic[i])) {
            snprintf(buf, len, "IC[%zu]", i);
            return buf;
        }
    return NULL;
}

cuzk_err cuzk_vk_check(const cuzk_vk *vk, const char *name)
{
    if (!name)
        name = "verification key";
    if (!vk || !vk->ic)
        return cuzk_error_set(CUZK_EINVAL, "%s: no key", name);
    char buf[48];
    const char *field = vk_infinity(vk, buf, sizeof buf);
    if (field)
        return cuzk_error_set(CUZK_EFORMAT, "%s: %s: the point at infinity (such a key accepts "
                              "forged proofs)", name, field);
    if (vk->has_alphabeta) {
        cuzk_fp12 ab;
        cuzk_pairing(&ab, &vk->alpha1, &vk->beta2);
        if (!cuzk_fp12_eq(&ab, &vk->alphabeta))
            return cuzk_error_set(CUZK_EFORMAT, "%s: vk_alphabeta_12: not e(vk_alpha_1, "
                                  "vk_beta_2): the key is inconsistent", name);
    }
    return CUZK_OK;
}

cuzk_err cuzk_groth16_verify(const cuzk_vk *vk, const cuzk_fr *pub, size_t n_pub,
                             const cuzk_proof *proof)
{
    if (!vk || !proof || (n_pub && !pub))
        return cuzk_error_set(CUZK_EINVAL, "verify: missing key, proof or public inputs");
    char buf[48];
    const char *inf = vk_infinity(vk, buf, sizeof buf);
    if (inf)
        return cuzk_error_set(CUZK_EFORMAT, "verify: the key's %s is the point at infinity "
                              "(such a key accepts forged proofs)", inf);
    if (n_pub != vk->n_public)
        return cuzk_error_set(CUZK_ESIZE, "verify: %zu public inputs, the key expects %u", n_pub,
                              vk->n_public);
    if (!cuzk_g1_affine_is_on_curve(&proof->a) || !cuzk_g2_affine_is_on_curve(&proof->b) ||
        !cuzk_g1_affine_is_on_curve(&proof->c))
        return cuzk_error_set(CUZK_ENOT_ON_CURVE, "verify: a proof point is not on the curve");
    if (!cuzk_g1_affine_in_subgroup(&proof->a) || !cuzk_g2_affine_in_subgroup(&proof->b) ||
        !cuzk_g1_affine_in_subgroup(&proof->c))
        return cuzk_error_set(CUZK_ENOT_IN_SUBGROUP, "verify: a proof point is not in the subgroup");

    /* vk_x = IC_0 + sum pub_i IC_(i+1); public inputs are public: variable time is fine. One
     * single-threaded MSM (verifiers run side by side in the daemon's finalisers): for
     * PoRep's 327 inputs about 5x faster than a scalar multiplication per input. */
    cuzk_g1_jac vkx, ic0;
    cuzk_g1_jac_from_affine(&ic0, &vk->ic[0]);
    if (n_pub) {
        cuzk_msm_scalar *k = malloc(sizeof *k * n_pub);
        if (!k)
            return cuzk_error_set(CUZK_ENOMEM, "verify: out of memory");
        cuzk_msm_scalars_from_fr(k, pub, n_pub, 1);
        cuzk_msm_opts mo = {.nthreads = 1};
        cuzk_err e = cuzk_g1_msm(&vkx, &vk->ic[1], k, n_pub, &mo);
        free(k);
        if (e != CUZK_OK)
            return e;
        cuzk_g1_jac_add_var(&vkx, &vkx, &ic0);
    } else {
        vkx = ic0;
    }

    /* e(-A, B) e(alpha1, beta2) e(vk_x, gamma2) e(C, delta2) = 1 */
    cuzk_g1_affine p[4];
    cuzk_g2_affine q[4];
    cuzk_g1_affine_neg(&p[0], &proof->a);
    q[0] = proof->b;
    p[1] = vk->alpha1;
    q[1] = vk->beta2;
    cuzk_g1_jac_to_affine(&p[2], &vkx);
    q[2] = vk->gamma2;
    p[3] = proof->c;
    q[3] = vk->delta2;
    if (!cuzk_pairing_product_is_one(p, q, 4))
        return cuzk_error_set(CUZK_EVERIFY, "verify: the pairing equation does not hold");
    return CUZK_OK;
}
