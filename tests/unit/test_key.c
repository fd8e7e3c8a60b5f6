/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk_key (include/cuzk/key.h): both formats loaded from the fixtures (the snarkjs .zkey of
 * tests/data, a bellman .params made here by a setup for the same circuit), their counts,
 * sizes and verification keys against the format's own loaders, proofs equal to those of
 * the format's own prover for the same r and s and accepted by the verifier, the witness
 * check, every refusal of the loader naming the file, and the resident GPU copy (made and
 * equal to the CPU where a device answers, refused otherwise).
 *
 * Environment: CUZK_TEST_DATA (fixtures).
 */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "test_circuit.h"
#include "test_files.h"

#include "cuzk/groth16.h"
#include "cuzk/key.h"
#include "cuzk/params.h"
#include "cuzk/setup.h"

static char tmpdir[256];

static bool vk_eq(const cuzk_vk *a, const cuzk_vk *b)
{
    if (a->n_public != b->n_public || !cuzk_g1_affine_eq(&a->alpha1, &b->alpha1) ||
        !cuzk_g2_affine_eq(&a->beta2, &b->beta2) || !cuzk_g2_affine_eq(&a->gamma2, &b->gamma2) ||
        !cuzk_g2_affine_eq(&a->delta2, &b->delta2))
        return false;
    for (uint32_t i = 0; i <= a->n_public; i++)
        if (!cuzk_g1_affine_eq(&a->ic[i], &b->ic[i]))
            return false;
    return true;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* What both formats share: the witness check, a proof with fixed r, s equal to `want`
 * (made by the format's own prover), verified by the key's vk and refused with a public
 * input changed; a batch of two through the split API with fresh r, s; the resident GPU
 * copy where a device answers. */
static void check_proving(const cuzk_key *k, const cuzk_wtns *wt, const cuzk_fr *rr,
                          const cuzk_fr *ss, const cuzk_proof *want)
{
    const cuzk_fr *w = wt->w;
    uint32_t np = cuzk_key_n_public(k);
    CHECK_EQ_ERR(cuzk_key_check_witness(k, w, wt->n), CUZK_OK);
    CHECK_ERR(cuzk_key_check_witness(k, w, wt->n - 1), CUZK_ESIZE, "expects 142", NULL);
    cuzk_fr *bad = malloc(wt->n * sizeof *bad);
    if (bad) {
        memcpy(bad, w, wt->n * sizeof *bad);
        cuzk_fr_add(&bad[0], &bad[0], &bad[0]);   /* 2 */
        CHECK_ERR(cuzk_key_check_witness(k, bad, wt->n), CUZK_EFORMAT, "first value", NULL);
        const cuzk_fr *bw = bad;
        cuzk_proof pr;
        CHECK(cuzk_key_prove(&pr, NULL, k, &bw, 1, wt->n, NULL) != CUZK_OK);
        free(bad);
    }

    cuzk_prove_opts o = {.backend = CUZK_BACKEND_CPU, .test_r = rr, .test_s = ss};
    cuzk_proof pr;
    CHECK_EQ_ERR(cuzk_key_prove(&pr, NULL, k, &w, 1, wt->n, &o), CUZK_OK);
    CHECK(test_proof_eq(&pr, want));
    const cuzk_vk *vk = cuzk_key_vk(k);
    CHECK(vk && vk->n_public == np);
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, w + 1, np, &pr), CUZK_OK);
    if (np) {
        cuzk_fr *pub = malloc(np * sizeof *pub), one;
        memcpy(pub, w + 1, np * sizeof *pub);
        cuzk_fr_set_one(&one);
        cuzk_fr_add(&pub[0], &pub[0], &one);
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, np, &pr), CUZK_EVERIFY);
        free(pub);
    }

    const cuzk_fr *ws[2] = {w, w};
    cuzk_proof prs[2];
    cuzk_pending *pend = NULL;
    cuzk_prove_opts o2 = {.backend = CUZK_BACKEND_CPU};
    CHECK_EQ_ERR(cuzk_key_prove_start(&pend, k, ws, 2, wt->n, &o2), CUZK_OK);
    if (pend) {
        CHECK_EQ_ERR(cuzk_groth16_prove_finish(prs, NULL, pend), CUZK_OK);
        cuzk_groth16_pending_free(pend);
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, w + 1, np, &prs[0]), CUZK_OK);
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, w + 1, np, &prs[1]), CUZK_OK);
        CHECK(!cuzk_g1_affine_eq(&prs[0].a, &prs[1].a));   /* fresh r per proof */
    }

    /* The resident copy: with a device, proofs equal to the CPU's; without, a clear refusal. */
    cuzk_gpu_opts go;
    cuzk_gpu_opts_default(&go);
    cuzk_gpu_key *gk = NULL;
    cuzk_err r = cuzk_key_gpu_new(&gk, k, 0, &go);
    if (r == CUZK_OK) {
        cuzk_gpu_key_info gi;
        cuzk_gpu_key_get_info(gk, &gi);
        printf("  gpu key: synthesis on the %s, B_G2 on the %s, streamed 0x%x\n",
               gi.synth_device ? "device" : "CPU", gi.b_g2_device ? "device" : "CPU", gi.streamed);
        CHECK(gi.synth_device);   /* a fixture's matrices fit any device */
        cuzk_prove_opts og = {.backend = CUZK_BACKEND_GPU, .gpu_key = gk, .test_r = rr,
                              .test_s = ss};
        cuzk_proof pg;
        CHECK_EQ_ERR(cuzk_key_prove(&pg, NULL, k, &w, 1, wt->n, &og), CUZK_OK);
        CHECK(test_proof_eq(&pg, want));
        cuzk_groth16_gpu_key_free(gk);
        /* synthesis forced to the CPU: the key says so */
        cuzk_gpu_opts off = go;
        CHECK_EQ_ERR(cuzk_gpu_opts_set(&off, "synth", "off"), CUZK_OK);
        CHECK_EQ_ERR(cuzk_key_gpu_new(&gk, k, 0, &off), CUZK_OK);
        cuzk_gpu_key_get_info(gk, &gi);
        CHECK(gk && !gi.synth_device);
        cuzk_groth16_gpu_key_free(gk);
    } else {
        printf("  gpu key: %s (%s)\n", cuzk_errname(r), cuzk_error_detail());
        CHECK(r == CUZK_EUNSUPPORTED || r == CUZK_EGPU);
        CHECK(gk == NULL);
    }
}

static void test_zkey(void)
{
    printf("zkey\n");
    char zp[300], wp[300], vp[300];
    test_fixture_path(zp, sizeof zp, "chain", "circuit.zkey");
    test_fixture_path(wp, sizeof wp, "chain", "witness.wtns");
    test_fixture_path(vp, sizeof vp, "chain", "verification_key.json");
    cuzk_key *k = NULL;
    cuzk_zkey *z = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_vk *vkj = NULL;
    CHECK_EQ_ERR(cuzk_key_load(&k, zp, NULL), CUZK_OK);
    CHECK_EQ_ERR(cuzk_zkey_load(&z, zp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, wp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_vk_read_json(&vkj, vp), CUZK_OK);
    if (!k || !z || !wt || !vkj)
        goto out;
    CHECK(cuzk_key_format_of(k) == CUZK_KEY_ZKEY);
    CHECK(!strcmp(cuzk_key_format_name(cuzk_key_format_of(k)), "zkey"));
    CHECK(cuzk_key_n_vars(k) == 142 && cuzk_key_n_vars(k) == z->n_vars);
    CHECK(cuzk_key_n_public(k) == 3 && cuzk_key_n_public(k) == z->n_public);
    CHECK(cuzk_key_domain_size(k) == z->domain_size);
    /* at least the points: A, B1, B2 per wire, H per domain point */
    uint64_t pts = (uint64_t)z->n_vars * (2 * sizeof(cuzk_g1_affine) + sizeof(cuzk_g2_affine)) +
                   (uint64_t)z->domain_size * sizeof(cuzk_g1_affine);
    CHECK(cuzk_key_bytes(k) > pts);
    CHECK(vk_eq(cuzk_key_vk(k), vkj));   /* snarkjs's verification_key.json */
    /* the same options given explicitly (no r1cs, no flags) */
    cuzk_key *k2 = NULL;
    cuzk_key_opts ko = {.r1cs = "", .params_flags = 0, .gpu = NULL};
    CHECK_EQ_ERR(cuzk_key_load(&k2, zp, &ko), CUZK_OK);
    CHECK(k2 && cuzk_key_bytes(k2) == cuzk_key_bytes(k));
    cuzk_key_free(k2);

    cuzk_fr rr, ss;
    test_rand_fr(&rr);
    test_rand_fr(&ss);
    cuzk_prove_opts o = {.backend = CUZK_BACKEND_CPU, .test_r = &rr, .test_s = &ss};
    cuzk_proof want;
    const cuzk_fr *w = wt->w;
    CHECK_EQ_ERR(cuzk_groth16_prove(&want, NULL, z, &w, 1, wt->n, &o), CUZK_OK);
    check_proving(k, wt, &rr, &ss, &want);
out:
    cuzk_key_free(k);
    cuzk_zkey_free(z);
    cuzk_wtns_free(wt);
    cuzk_vk_free(vkj);
}

/* Writes tmpdir/NAME.params: a development key for the circuit of the fixture's .r1cs. */
static bool make_params(char *kp, size_t n, const char *name)
{
    char rp[300];
    test_fixture_path(rp, sizeof rp, name, "circuit.r1cs");
    snprintf(kp, n, "%s/%s.params", tmpdir, name);
    cuzk_bellman_circuit *c = NULL;
    cuzk_params *p = NULL;
    cuzk_setup_opts so = {.backend = CUZK_BACKEND_CPU};
    cuzk_err r = cuzk_bellman_circuit_load(&c, rp);
    if (r == CUZK_OK)
        r = cuzk_setup_params(&p, c, &so);
    if (r == CUZK_OK)
        r = cuzk_params_write(kp, p);
    CHECK_EQ_ERR(r, CUZK_OK);
    cuzk_params_free(p);
    cuzk_bellman_circuit_free(c);
    return r == CUZK_OK;
}

static void test_params(void)
{
    printf("params\n");
    char kp[300], rp[300], wp[300], cache[320];
    test_fixture_path(rp, sizeof rp, "chain", "circuit.r1cs");
    test_fixture_path(wp, sizeof wp, "chain", "witness.wtns");
    if (!make_params(kp, sizeof kp, "chain"))
        return;
    cuzk_key *k = NULL;
    cuzk_params *p = NULL;
    cuzk_bellman_circuit *c = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_vk *vkp = NULL;
    cuzk_key_opts ko = {.r1cs = rp};
    CHECK_EQ_ERR(cuzk_key_load(&k, kp, &ko), CUZK_OK);
    CHECK_EQ_ERR(cuzk_params_load(&p, kp, 0), CUZK_OK);
    CHECK_EQ_ERR(cuzk_bellman_circuit_load(&c, rp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, wp), CUZK_OK);
    if (!k || !p || !c || !wt)
        goto out;
    CHECK_EQ_ERR(cuzk_vk_from_params(&vkp, p), CUZK_OK);
    CHECK(cuzk_key_format_of(k) == CUZK_KEY_PARAMS);
    CHECK(!strcmp(cuzk_key_format_name(cuzk_key_format_of(k)), "params"));
    CHECK(cuzk_key_n_vars(k) == 142 && cuzk_key_n_vars(k) == c->n_vars);
    CHECK(cuzk_key_n_public(k) == 3 && cuzk_key_n_public(k) == c->n_public);
    CHECK(cuzk_key_domain_size(k) == (uint32_t)1 << c->log2_domain);
    CHECK(cuzk_key_bytes(k) >= file_size(kp));   /* the decoded points at least */
    CHECK(vkp && vk_eq(cuzk_key_vk(k), vkp));

    cuzk_fr rr, ss;
    test_rand_fr(&rr);
    test_rand_fr(&ss);
    cuzk_prove_opts o = {.backend = CUZK_BACKEND_CPU, .test_r = &rr, .test_s = &ss};
    cuzk_proof want;
    const cuzk_fr *w = wt->w;
    CHECK_EQ_ERR(cuzk_params_prove(&want, NULL, p, c, &w, 1, wt->n, &o), CUZK_OK);
    check_proving(k, wt, &rr, &ss, &want);

    /* the load flags and the GPU options: trusted with the checks kept off the device, the
     * decoded cache written next to the key; the same key each time */
    cuzk_gpu_opts go;
    cuzk_gpu_opts_default(&go);
    CHECK_EQ_ERR(cuzk_gpu_opts_set(&go, "params_check_min", "18446744073709551615"), CUZK_OK);
    snprintf(cache, sizeof cache, "%s.cuzkcache", kp);
    unlink(cache);
    const unsigned flags[3] = {CUZK_PARAMS_TRUSTED, CUZK_PARAMS_CACHE, CUZK_PARAMS_CACHE};
    for (int i = 0; i < 3; i++) {
        cuzk_key *k2 = NULL;
        cuzk_key_opts o2 = {.r1cs = rp, .params_flags = flags[i], .gpu = &go};
        CHECK_EQ_ERR(cuzk_key_load(&k2, kp, &o2), CUZK_OK);
        CHECK(k2 && vk_eq(cuzk_key_vk(k2), vkp) && cuzk_key_bytes(k2) == cuzk_key_bytes(k));
        cuzk_proof pr;
        CHECK(k2 && cuzk_key_prove(&pr, NULL, k2, &w, 1, wt->n, &o) == CUZK_OK &&
              test_proof_eq(&pr, &want));
        cuzk_key_free(k2);
        if (flags[i] == CUZK_PARAMS_CACHE)
            CHECK(access(cache, R_OK) == 0);
    }
out:
    cuzk_key_free(k);
    cuzk_params_free(p);
    cuzk_bellman_circuit_free(c);
    cuzk_wtns_free(wt);
    cuzk_vk_free(vkp);
}

/* Every refusal: the error code and the file(s) in the detail; *out stays NULL. */
static void test_refusals(void)
{
    printf("refusals\n");
    char zp[300], rp[300], mrp[300], kp[300], p[400];
    test_fixture_path(zp, sizeof zp, "chain", "circuit.zkey");
    test_fixture_path(rp, sizeof rp, "chain", "circuit.r1cs");
    test_fixture_path(mrp, sizeof mrp, "multiplier", "circuit.r1cs");
    snprintf(kp, sizeof kp, "%s/chain.params", tmpdir);   /* test_params made it */
    cuzk_key *k = (cuzk_key *)1;
    cuzk_key_opts ko = {.r1cs = rp};

    snprintf(p, sizeof p, "%s/nosuch.zkey", tmpdir);
    CHECK(cuzk_key_load(&k, p, NULL) == CUZK_ENOTFOUND && strstr(cuzk_error_detail(), p) && !k);
    k = (cuzk_key *)1;
    CHECK(cuzk_key_load(&k, NULL, NULL) == CUZK_EINVAL && !k);
    CHECK_ERR(cuzk_key_load(&k, tmpdir, NULL), CUZK_EIO, tmpdir, "not a regular file");
    CHECK(!k);
    CHECK_ERR(cuzk_key_load(&k, zp, &(cuzk_key_opts){.r1cs = tmpdir}), CUZK_EIO, tmpdir,
              "not a regular file");
    /* a .params without its circuit, an r1cs with a .zkey, flags without an r1cs */
    CHECK_ERR(cuzk_key_load(&k, kp, NULL), CUZK_EINVAL, kp, "needs the circuit's .r1cs");
    CHECK_ERR(cuzk_key_load(&k, zp, &ko), CUZK_EINVAL, zp, ".zkey");
    CHECK_ERR(cuzk_key_load(&k, zp, &(cuzk_key_opts){.params_flags = CUZK_PARAMS_TRUSTED}),
              CUZK_EINVAL, zp, ".r1cs");
    CHECK(!k);
    /* the key of another circuit: both files named */
    CHECK_ERR(cuzk_key_load(&k, kp, &(cuzk_key_opts){.r1cs = mrp}), CUZK_ESIZE, kp, mrp);
    CHECK(strstr(cuzk_error_detail(), "does not fit"));
    CHECK(!k);
    snprintf(p, sizeof p, "%s/nope.r1cs", tmpdir);
    CHECK(cuzk_key_load(&k, kp, &(cuzk_key_opts){.r1cs = p}) != CUZK_OK &&
          strstr(cuzk_error_detail(), "nope.r1cs") && !k);
    /* corrupt copies: a .params with a byte of ic[0] changed, a truncated .zkey */
    size_t n = 0;
    uint8_t *b = read_all(kp, &n);
    size_t ic0 = 3 * 96 + 3 * 192 + 4;   /* after 3 G1 + 3 G2 points and the u32 length */
    if (n > ic0 + 48) {
        b[ic0 + 40] ^= 0x5a;
        snprintf(p, sizeof p, "%s/corrupt.params", tmpdir);
        write_all(p, b, n);
        cuzk_err r = cuzk_key_load(&k, p, &ko);
        CHECK(r != CUZK_OK && strstr(cuzk_error_detail(), p) && !k);
        printf("  corrupt .params: %s: %s\n", cuzk_errname(r), cuzk_error_detail());
    }
    free(b);
    b = read_all(zp, &n);
    snprintf(p, sizeof p, "%s/truncated.zkey", tmpdir);
    write_all(p, b, n / 2);
    free(b);
    cuzk_err r = cuzk_key_load(&k, p, NULL);
    CHECK(r != CUZK_OK && strstr(cuzk_error_detail(), p) && !k);
    /* not a key at all: a witness file, as a .zkey */
    char wp[300];
    test_fixture_path(wp, sizeof wp, "chain", "witness.wtns");
    r = cuzk_key_load(&k, wp, NULL);
    CHECK(r == CUZK_EFORMAT && strstr(cuzk_error_detail(), wp) && !k);

    cuzk_gpu_key_info gi = {.synth_device = true, .b_g2_device = true, .streamed = 3};
    cuzk_gpu_key_get_info(NULL, &gi);
    CHECK(!gi.synth_device && !gi.b_g2_device && gi.streamed == 0);
    cuzk_key_free(NULL);
}

int main(void)
{
    test_init("test_key");
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cuzk_test_key_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_zkey();
    test_params();
    test_refusals();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return test_finish();
}
