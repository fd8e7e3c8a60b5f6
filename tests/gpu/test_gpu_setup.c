/* SPDX-License-Identifier: Apache-2.0 */
/* Setup on the device: cuzk_gpu_fixed_base_g1/_g2 against the CPU (cuzk_g1_generator_mul and
 * the CPU's fixed-base batches) on random scalars and 0, 1, 2, r-1, for sizes 1 .. 2^20; then
 * whole setups (cuzk_setup_zkey and cuzk_setup_params, fixed toxic waste) with the GPU and
 * with the CPU backend give identical keys, and proofs under the GPU-made keys verify.
 * Exits 77 when no GPU is usable. */
#define _GNU_SOURCE

#include "test.h"
#include "test_circuit.h"
#include "test_device.h"

#include "cuzk/groth16.h"
#include "cuzk/gpu.h"
#include "cuzk/setup.h"
#include "setup/bellman.h"
#include "util/timing.h"

/* n scalars: 0, 1, 2, r-1 first (as many as fit), a repeat, a zero in the middle, the rest
 * random. */
static cuzk_fr *scalars(size_t n)
{
    cuzk_fr *s = malloc(n * sizeof *s);
    test_rand_frs(s, n);
    cuzk_fr one;
    cuzk_fr_set_one(&one);
    if (n > 0)
        cuzk_fr_set_zero(&s[0]);
    if (n > 1)
        s[1] = one;
    if (n > 2)
        cuzk_fr_set_u64(&s[2], 2);
    if (n > 3)
        test_fr_minus(&s[3], 1);
    if (n > 10) {
        s[n / 2] = s[5];
        cuzk_fr_set_zero(&s[n / 3]);
    }
    return s;
}

static void fixed_base(size_t n)
{
    cuzk_fr *s = scalars(n);
    cuzk_g1_affine *g1 = malloc(n * sizeof *g1), *c1 = malloc(n * sizeof *c1);
    cuzk_g2_affine *g2 = malloc(n * sizeof *g2), *c2 = malloc(n * sizeof *c2);
    memset(g1, 0xa5, n * sizeof *g1);
    memset(g2, 0xa5, n * sizeof *g2);
    double t0 = cuzk_now_ms();
    CHECK_EQ_ERR(cuzk_gpu_fixed_base_g1(0, g1, s, n), CUZK_OK);
    double t1 = cuzk_now_ms();
    CHECK_EQ_ERR(cuzk_gpu_fixed_base_g2(0, g2, s, n), CUZK_OK);
    double t2 = cuzk_now_ms();
    CHECK_EQ_ERR(cuzk_setup_g1_batch_var(c1, s, n, 0), CUZK_OK);
    CHECK_EQ_ERR(cuzk_setup_g2_batch_var(c2, s, n, 0), CUZK_OK);
    double t3 = cuzk_now_ms();
    size_t bad1 = 0, bad2 = 0;
    for (size_t i = 0; i < n; i++) {
        bad1 += memcmp(&g1[i], &c1[i], sizeof *g1) != 0;
        bad2 += memcmp(&g2[i], &c2[i], sizeof *g2) != 0;
    }
    CHECK(bad1 == 0);
    CHECK(bad2 == 0);
    /* the first points also against the constant-time generator multiplication */
    for (size_t i = 0; i < n && i < 8; i++) {
        cuzk_g1_affine a;
        cuzk_g2_affine b;
        cuzk_g1_generator_mul(&a, &s[i]);
        cuzk_g2_generator_mul(&b, &s[i]);
        CHECK(!memcmp(&a, &g1[i], sizeof a));
        CHECK(!memcmp(&b, &g2[i], sizeof b));
    }
    if (n > 0) { /* 0 -> infinity as (0, 0) */
        cuzk_g1_affine z1;
        cuzk_g2_affine z2;
        memset(&z1, 0, sizeof z1);
        memset(&z2, 0, sizeof z2);
        CHECK(!memcmp(&g1[0], &z1, sizeof z1) && !memcmp(&g2[0], &z2, sizeof z2));
    }
    printf("fixed base n=%zu: %zu G1 and %zu G2 mismatches; gpu G1 %.1f ms, G2 %.1f ms, "
           "cpu both %.1f ms\n", n, bad1, bad2, t1 - t0, t2 - t1, t3 - t2);
    free(s);
    free(g1);
    free(c1);
    free(g2);
    free(c2);
}

/* Runs a setup with progress into a string; true when a line ends in "(gpu) ..." */
static bool saw_gpu(const char *log) { return strstr(log, "(gpu)") != NULL; }

static void whole_setup(size_t m)
{
    cuzk_fr *w = NULL;
    cuzk_r1cs *r = test_chain_circuit(m, &w);
    CHECK_EQ_ERR(cuzk_r1cs_check_witness(r, w, r->n_wires, NULL), CUZK_OK);
    cuzk_setup_toxic tw;
    test_rand_toxic(&tw);
    char *log = NULL;
    size_t log_len = 0;
    FILE *lf = open_memstream(&log, &log_len);
    cuzk_setup_opts oc = {.test_toxic = &tw, .backend = CUZK_BACKEND_CPU};
    cuzk_setup_opts og = {.test_toxic = &tw, .backend = CUZK_BACKEND_GPU, .progress = lf};
    cuzk_setup_opts oa = {.test_toxic = &tw, .backend = CUZK_BACKEND_AUTO};

    /* snarkjs keys */
    cuzk_zkey *zc = NULL, *zg = NULL, *za = NULL;
    cuzk_vk *vk = NULL;
    double t0 = cuzk_now_ms();
    CHECK_EQ_ERR(cuzk_setup_zkey(&zc, r, &oc), CUZK_OK);
    double t1 = cuzk_now_ms();
    CHECK_EQ_ERR(cuzk_setup_zkey(&zg, r, &og), CUZK_OK);
    double t2 = cuzk_now_ms();
    CHECK_EQ_ERR(cuzk_setup_zkey(&za, r, &oa), CUZK_OK);
    fflush(lf);
    CHECK(saw_gpu(log));
    if (zc && zg && za) {
        CHECK(test_zkey_eq(zc, zg));
        CHECK(test_zkey_eq(zc, za));
        CHECK_EQ_ERR(cuzk_vk_from_zkey(&vk, zg), CUZK_OK);
        cuzk_proof pr;
        const cuzk_fr *ws[1] = {w};
        CHECK_EQ_ERR(cuzk_groth16_prove(&pr, NULL, zg, ws, 1, r->n_wires, NULL), CUZK_OK);
        if (vk) {
            const cuzk_fr *pub = cuzk_groth16_public(zg, w);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zg->n_public, &pr), CUZK_OK);
            cuzk_fr bad[2] = {pub[0], pub[1]}, one;
            cuzk_fr_set_one(&one);
            cuzk_fr_add(&bad[0], &bad[0], &one);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, bad, zg->n_public, &pr), CUZK_EVERIFY);
        }
    }
    printf("zkey m=%zu: gpu == cpu == auto; cpu %.0f ms, gpu %.0f ms\n", m, t1 - t0, t2 - t1);
    cuzk_vk_free(vk);
    vk = NULL;
    cuzk_zkey_free(zc);
    cuzk_zkey_free(zg);
    cuzk_zkey_free(za);

    /* bellman parameters */
    cuzk_bellman_circuit *c = NULL;
    cuzk_params *pc = NULL, *pg = NULL;
    CHECK_EQ_ERR(cuzk_bellman_circuit_from_r1cs(&c, r), CUZK_OK);
    if (c) {
        t0 = cuzk_now_ms();
        CHECK_EQ_ERR(cuzk_setup_params(&pc, c, &oc), CUZK_OK);
        t1 = cuzk_now_ms();
        CHECK_EQ_ERR(cuzk_setup_params(&pg, c, &og), CUZK_OK);
        t2 = cuzk_now_ms();
        if (pc && pg) {
            CHECK(test_params_eq(pc, pg));
            CHECK_EQ_ERR(cuzk_vk_from_params(&vk, pg), CUZK_OK);
            cuzk_proof pr;
            const cuzk_fr *wp = w;
            CHECK_EQ_ERR(cuzk_params_prove(&pr, NULL, pg, c, &wp, 1, r->n_wires, NULL), CUZK_OK);
            if (vk)
                CHECK_EQ_ERR(cuzk_groth16_verify(vk, w + 1, c->n_public, &pr), CUZK_OK);
        }
        printf("params m=%zu: gpu == cpu; cpu %.0f ms, gpu %.0f ms\n", m, t1 - t0, t2 - t1);
    }
    /* AUTO is the options' alone: the library ignores CUZK_BACKEND (the programs read it) */
    if (m >= CUZK_SETUP_GPU_MIN) {
        setenv("CUZK_BACKEND", "cpu", 1);
        fclose(lf);
        free(log);
        log = NULL;
        lf = open_memstream(&log, &log_len);
        cuzk_setup_opts oe = {.test_toxic = &tw, .progress = lf};
        cuzk_zkey *ze = NULL;
        CHECK_EQ_ERR(cuzk_setup_zkey(&ze, r, &oe), CUZK_OK);
        fflush(lf);
        CHECK(saw_gpu(log));
        cuzk_zkey_free(ze);
        unsetenv("CUZK_BACKEND");
    }
    fclose(lf);
    free(log);
    cuzk_vk_free(vk);
    cuzk_params_free(pc);
    cuzk_params_free(pg);
    cuzk_bellman_circuit_free(c);
    cuzk_r1cs_free(r);
    free(w);
}

int main(void)
{
    test_init("test_gpu_setup");
    test_gpu_require();
    CHECK_EQ_ERR(cuzk_gpu_fixed_base_g1(0, NULL, NULL, 0), CUZK_OK);
    size_t sizes[] = {1, 2, 3, 17, 1000, 2049, ((size_t)1 << 16) + 1, (size_t)1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        fixed_base(sizes[i]);
    whole_setup(5);
    whole_setup(1000);
    whole_setup(((size_t)1 << 17) - 3);
    return test_finish();
}
