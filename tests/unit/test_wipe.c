/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The secrets' wipes. A memset of a buffer that is freed or goes out of scope is a dead
 * store the compiler may remove; explicit_bzero is kept. This program is linked with
 * -Wl,--wrap=explicit_bzero (and its fortified form), so every call the library makes lands
 * in the recorder below, which notes the size and whether the buffer held anything. Checked:
 * cuzk_random_fr wipes its 32 random bytes; a proof wipes its r and s arrays and the epilogue's
 * multiples of them; the bellman setup wipes its Lagrange values and wire polynomials at tau;
 * and the outputs stay right (proofs verify, with keys from both setups).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/params.h"
#include "cuzk/setup.h"
#include "groth16/bellman.h"
#include "setup/bellman.h"
#include "test.h"
#include "test_circuit.h"
#include "test_files.h"

#define MAX_CALLS 200000
static struct {
    size_t n;
    bool held; /* a nonzero byte before the wipe */
} calls[MAX_CALLS];
static unsigned long n_calls;

void __real_explicit_bzero(void *p, size_t n);
void __wrap_explicit_bzero(void *p, size_t n);
void __real___explicit_bzero_chk(void *p, size_t n, size_t dstlen);
void __wrap___explicit_bzero_chk(void *p, size_t n, size_t dstlen);

static void record(const void *p, size_t n)
{
    unsigned long i = __atomic_fetch_add(&n_calls, 1, __ATOMIC_RELAXED);
    if (i >= MAX_CALLS)
        return;
    bool held = false;
    for (size_t k = 0; k < n && !held; k++)
        held = ((const unsigned char *)p)[k] != 0;
    calls[i].n = n;
    calls[i].held = held;
}

void __wrap_explicit_bzero(void *p, size_t n)
{
    record(p, n);
    __real_explicit_bzero(p, n);
}

void __wrap___explicit_bzero_chk(void *p, size_t n, size_t dstlen)
{
    record(p, n);
    __real___explicit_bzero_chk(p, n, dstlen);
}

static void calls_reset(void) { __atomic_store_n(&n_calls, 0, __ATOMIC_RELAXED); }

/* How many recorded wipes of n bytes found the buffer holding something. */
static unsigned long wipes_of(size_t n)
{
    unsigned long k = 0, m = n_calls < MAX_CALLS ? n_calls : MAX_CALLS;
    for (unsigned long i = 0; i < m; i++)
        k += calls[i].n == n && calls[i].held;
    return k;
}

static void test_random(void)
{
    cuzk_fr a, b;
    calls_reset();
    CHECK_EQ_ERR(cuzk_random_fr(&a), CUZK_OK);
    CHECK(wipes_of(32) >= 1);   /* the 32 bytes drawn from getrandom */
    CHECK_EQ_ERR(cuzk_random_fr(&b), CUZK_OK);
    CHECK(!cuzk_fr_eq(&a, &b)); /* still random */
    uint8_t le[CUZK_FR_BYTES];
    cuzk_fr_to_bytes_le(le, &a);
    cuzk_fr c;
    CHECK_EQ_ERR(cuzk_fr_from_bytes_le(&c, le), CUZK_OK); /* canonical: below r */
}

/* nw proofs of the fixture's witness with fresh r and s; they verify. */
static void test_prove(void)
{
    char *kp = test_fixture_dup("chain", "circuit.zkey");
    char *wp = test_fixture_dup("chain", "witness.wtns");
    cuzk_zkey *zk = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_vk *vk = NULL;
    CHECK_EQ_ERR(cuzk_zkey_load(&zk, kp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, wp), CUZK_OK);
    if (zk && wt && cuzk_vk_from_zkey(&vk, zk) == CUZK_OK) {
        enum { NW = 3 };
        const cuzk_fr *ws[NW] = {wt->w, wt->w, wt->w};
        cuzk_proof pr[NW];
        cuzk_prove_opts o = {.backend = CUZK_BACKEND_CPU};
        calls_reset();
        CHECK_EQ_ERR(cuzk_groth16_prove(pr, NULL, zk, ws, NW, wt->n, &o), CUZK_OK);
        CHECK(wipes_of(NW * sizeof(cuzk_fr)) >= 2);   /* the r and s arrays */
        CHECK(wipes_of(sizeof(cuzk_fr)) >= 3 * NW);   /* 3 draws, r s, the scalar copies */
        CHECK(wipes_of(sizeof(cuzk_g2_jac)) >= NW);   /* s delta2 */
        for (int j = 0; j < NW; j++)
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, wt->w + 1, zk->n_public, &pr[j]), CUZK_OK);
        CHECK(!cuzk_g1_affine_eq(&pr[0].a, &pr[1].a)); /* blinded: r differs */
    }
    cuzk_vk_free(vk);
    cuzk_wtns_free(wt);
    cuzk_zkey_free(zk);
    free(kp);
    free(wp);
}

/* Both setups from random toxic waste: the bellman one wipes its scalars; a proof with
 * either key verifies. */
static void test_setups(void)
{
    char *rp = test_fixture_dup("chain", "circuit.r1cs");
    char *wp = test_fixture_dup("chain", "witness.wtns");
    cuzk_r1cs *r = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_bellman_circuit *c = NULL;
    CHECK_EQ_ERR(cuzk_r1cs_load(&r, rp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, wp), CUZK_OK);
    if (r && wt && cuzk_bellman_circuit_from_r1cs(&c, r) == CUZK_OK) {
        cuzk_setup_toxic t;
        test_rand_toxic(&t);
        cuzk_params *p = NULL;
        calls_reset();
        CHECK_EQ_ERR(cuzk_setup_bellman(&p, c, &t, 0), CUZK_OK);
        CHECK(wipes_of(3 * (size_t)c->n_vars * sizeof(cuzk_fr)) >= 1); /* u, v, w at tau */
        CHECK(wipes_of((size_t)c->n_rows * sizeof(cuzk_fr)) >= 2);     /* Lagrange values */
        cuzk_vk *vk = NULL;
        if (p && cuzk_vk_from_params(&vk, p) == CUZK_OK) {
            const cuzk_fr *w = wt->w;
            cuzk_proof pr;
            CHECK_EQ_ERR(cuzk_params_prove(&pr, NULL, p, c, &w, 1, wt->n, NULL), CUZK_OK);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, w + 1, r->n_public, &pr), CUZK_OK);
        }
        cuzk_vk_free(vk);
        cuzk_params_free(p);

        cuzk_zkey *z = NULL;
        cuzk_setup_opts so = {.backend = CUZK_BACKEND_CPU};
        calls_reset();
        CHECK_EQ_ERR(cuzk_setup_zkey(&z, r, &so), CUZK_OK);
        CHECK(wipes_of(sizeof(cuzk_setup_toxic)) >= 1); /* the toxic waste itself */
        vk = NULL;
        if (z && cuzk_vk_from_zkey(&vk, z) == CUZK_OK) {
            const cuzk_fr *w = wt->w;
            cuzk_proof pr;
            cuzk_prove_opts o = {.backend = CUZK_BACKEND_CPU};
            CHECK_EQ_ERR(cuzk_groth16_prove(&pr, NULL, z, &w, 1, wt->n, &o), CUZK_OK);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, w + 1, r->n_public, &pr), CUZK_OK);
        }
        cuzk_vk_free(vk);
        cuzk_zkey_free(z);
    }
    cuzk_bellman_circuit_free(c);
    cuzk_wtns_free(wt);
    cuzk_r1cs_free(r);
    free(rp);
    free(wp);
}

int main(void)
{
    test_init("test_wipe");
    test_random();
    test_prove();
    test_setups();
    return test_finish();
}
