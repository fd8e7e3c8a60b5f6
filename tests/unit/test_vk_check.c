/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Verification keys fit to verify with (cuzk_vk_check, and cuzk_groth16_verify's own
 * refusal): a point at infinity in any of alpha1, beta2, gamma2, delta2 or IC is refused
 * and named, a key of points at infinity does not accept a proof of points at infinity, and
 * vk_alphabeta_12, when present, must be e(alpha1, beta2). The fixture keys pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/ec.h"
#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "test.h"
#include "test_files.h"

/* A copy of vk with its own IC. */
static cuzk_vk *vk_dup(const cuzk_vk *vk)
{
    cuzk_vk *v = xmalloc(sizeof *v);
    *v = *vk;
    v->ic = xmalloc(((size_t)vk->n_public + 1) * sizeof *v->ic);
    memcpy(v->ic, vk->ic, ((size_t)vk->n_public + 1) * sizeof *v->ic);
    return v;
}

static void test_circuit(const char *name)
{
    char *vp = test_fixture_dup(name, "verification_key.json");
    char *pp = test_fixture_dup(name, "proof.json"), *up = test_fixture_dup(name, "public.json");
    char *kp = test_fixture_dup(name, "circuit.zkey");
    cuzk_vk *vk = NULL, *vz = NULL;
    cuzk_zkey *zk = NULL;
    cuzk_proof pr;
    cuzk_fr *pub = NULL;
    size_t npub = 0;
    CHECK_EQ_ERR(cuzk_vk_read_json(&vk, vp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_proof_read_json(&pr, pp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_public_read_json(&pub, &npub, up), CUZK_OK);
    CHECK_EQ_ERR(cuzk_zkey_load(&zk, kp), CUZK_OK);
    if (!vk || !pub || !zk)
        goto out;
    CHECK(vk->has_alphabeta);
    CHECK_EQ_ERR(cuzk_vk_check(vk, vp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, npub, &pr), CUZK_OK);
    CHECK_EQ_ERR(cuzk_vk_from_zkey(&vz, zk), CUZK_OK);
    if (vz)
        CHECK_EQ_ERR(cuzk_vk_check(vz, NULL), CUZK_OK);

    /* each point at infinity in turn */
    for (unsigned f = 0; f < 4 + vk->n_public + 1; f++) {
        cuzk_vk *v = vk_dup(vk);
        char field[32];
        static const char *const named[4] = {"vk_alpha_1", "vk_beta_2", "vk_gamma_2",
                                             "vk_delta_2"};
        if (f < 4)
            snprintf(field, sizeof field, "%s", named[f]);
        else
            snprintf(field, sizeof field, "IC[%u]", f - 4);
        if (f == 0)
            cuzk_g1_affine_set_inf(&v->alpha1);
        else if (f < 4)
            cuzk_g2_affine_set_inf(f == 1 ? &v->beta2 : f == 2 ? &v->gamma2 : &v->delta2);
        else
            cuzk_g1_affine_set_inf(&v->ic[f - 4]);
        v->has_alphabeta = false;
        char want[64];
        snprintf(want, sizeof want, "%s: the point at infinity", field);
        CHECK_ERR(cuzk_vk_check(v, "k.json"), CUZK_EFORMAT, "k.json: ", want);
        snprintf(want, sizeof want, "%s is the point at infinity", field);
        CHECK_ERR(cuzk_groth16_verify(v, pub, npub, &pr), CUZK_EFORMAT, want, NULL);
        cuzk_vk_free(v);
    }

    /* all at infinity, and a proof at infinity: the pairing product would be one */
    {
        cuzk_vk *v = vk_dup(vk);
        cuzk_g1_affine_set_inf(&v->alpha1);
        cuzk_g2_affine_set_inf(&v->beta2);
        cuzk_g2_affine_set_inf(&v->gamma2);
        cuzk_g2_affine_set_inf(&v->delta2);
        for (size_t i = 0; i <= v->n_public; i++)
            cuzk_g1_affine_set_inf(&v->ic[i]);
        v->has_alphabeta = false;
        cuzk_proof o;
        cuzk_g1_affine_set_inf(&o.a);
        cuzk_g2_affine_set_inf(&o.b);
        cuzk_g1_affine_set_inf(&o.c);
        CHECK_ERR(cuzk_groth16_verify(v, pub, npub, &o), CUZK_EFORMAT, "vk_alpha_1", NULL);
        CHECK_ERR(cuzk_vk_check(v, "inf.json"), CUZK_EFORMAT, "inf.json: vk_alpha_1", NULL);
        cuzk_vk_free(v);
    }

    /* vk_alphabeta_12: a wrong value is refused, an absent one is not needed */
    {
        cuzk_vk *v = vk_dup(vk);
        cuzk_fp6 t = v->alphabeta.c0;
        v->alphabeta.c0 = v->alphabeta.c1;
        v->alphabeta.c1 = t;
        CHECK_ERR(cuzk_vk_check(v, "ab.json"), CUZK_EFORMAT, "ab.json: vk_alphabeta_12", NULL);
        v->alphabeta = vk->alphabeta;
        cuzk_fp_add(&v->alphabeta.c1.c2.c1, &v->alphabeta.c1.c2.c1, &v->alphabeta.c0.c0.c0);
        CHECK_ERR(cuzk_vk_check(v, "ab.json"), CUZK_EFORMAT, "vk_alphabeta_12", NULL);
        v->has_alphabeta = false;
        CHECK_EQ_ERR(cuzk_vk_check(v, "ab.json"), CUZK_OK);
        CHECK_EQ_ERR(cuzk_groth16_verify(v, pub, npub, &pr), CUZK_OK);
        cuzk_vk_free(v);
    }
    CHECK_ERR(cuzk_vk_check(NULL, "x.json"), CUZK_EINVAL, "x.json", NULL);
out:
    cuzk_vk_free(vk);
    cuzk_vk_free(vz);
    cuzk_zkey_free(zk);
    free(pub);
    free(vp);
    free(pp);
    free(up);
    free(kp);
}

int main(void)
{
    test_init("test_vk_check");
    test_circuit("multiplier");
    test_circuit("chain");
    test_circuit("nopub");
    return test_finish();
}
