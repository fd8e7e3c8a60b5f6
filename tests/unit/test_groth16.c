/* Groth16 prover and verifier on the circom/snarkjs fixtures: batches, the split API,
 * fixed r and s, and rejection of bad witnesses and tampered proofs. */
#include "test.h"

#include "cuzk/groth16.h"

static char path_buf[1024];
static const char *fixture(const char *circuit, const char *file)
{
    const char *d = getenv("CUZK_TEST_DATA");
    snprintf(path_buf, sizeof path_buf, "%s/circuits/%s/%s", d ? d : "tests/data", circuit, file);
    return path_buf;
}

static bool proof_eq(const cuzk_proof *x, const cuzk_proof *y)
{
    return cuzk_g1_affine_eq(&x->a, &y->a) && cuzk_g2_affine_eq(&x->b, &y->b) &&
           cuzk_g1_affine_eq(&x->c, &y->c);
}

static void test_circuit(const char *name)
{
    cuzk_zkey *zk = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_vk *vk = NULL;
    CHECK_EQ_ERR(cuzk_zkey_load(&zk, fixture(name, "circuit.zkey")), CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, fixture(name, "witness.wtns")), CUZK_OK);
    CHECK_EQ_ERR(cuzk_vk_read_json(&vk, fixture(name, "verification_key.json")), CUZK_OK);
    if (!zk || !wt || !vk)
        goto out;
    const cuzk_fr *pub = cuzk_groth16_public(zk, wt->w);

    /* A batch of three copies of the witness: three different proofs, all valid. */
    enum { B = 3 };
    const cuzk_fr *ws[B] = {wt->w, wt->w, wt->w};
    cuzk_proof proofs[B];
    cuzk_prove_timings t;
    CHECK_EQ_ERR(cuzk_groth16_prove(proofs, &t, zk, ws, B, wt->n, NULL), CUZK_OK);
    for (int j = 0; j < B; j++)
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zk->n_public, &proofs[j]), CUZK_OK);
    CHECK(!proof_eq(&proofs[0], &proofs[1]));
    CHECK(t.total_ms >= t.epilogue_ms && t.total_ms > 0);

    /* Fixed r, s: the split API, the one-call API and any thread count agree. */
    cuzk_fr r, s;
    test_rand_fr(&r);
    test_rand_fr(&s);
    cuzk_prove_opts o1 = {.nthreads = 1, .test_r = &r, .test_s = &s};
    cuzk_prove_opts o2 = {.nthreads = 2, .test_r = &r, .test_s = &s};
    cuzk_proof p1, p2[2];
    CHECK_EQ_ERR(cuzk_groth16_prove(&p1, NULL, zk, ws, 1, wt->n, &o1), CUZK_OK);
    cuzk_pending *pend = NULL;
    CHECK_EQ_ERR(cuzk_groth16_prove_start(&pend, zk, ws, 2, wt->n, &o2), CUZK_OK);
    if (pend) {
        CHECK_EQ_ERR(cuzk_groth16_prove_finish(p2, NULL, pend), CUZK_OK);
        cuzk_groth16_pending_free(pend);
    }
    CHECK(proof_eq(&p1, &p2[0]));
    CHECK(proof_eq(&p1, &p2[1]));
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zk->n_public, &p1), CUZK_OK);

    /* a, b, c computed outside the prover (the bellperson/SupraSeal split): the same proof.
     * Here with the key's own rows: a = A.w, b = B.w, c = a o b, zero beyond them. */
    {
        size_t n = zk->domain_size;
        cuzk_fr *abc = calloc(3 * n, sizeof(cuzk_fr)), u;
        for (size_t i = 0; i < zk->n_rows; i++) {
            const cuzk_csr *m[2] = {&zk->a, &zk->b};
            for (int k = 0; k < 2; k++)
                for (uint64_t q = m[k]->row[i]; q < m[k]->row[i + 1]; q++) {
                    cuzk_fr_mul(&u, &m[k]->val[q], &wt->w[m[k]->col[q]]);
                    cuzk_fr_add(&abc[(size_t)k * n + i], &abc[(size_t)k * n + i], &u);
                }
            cuzk_fr_mul(&abc[2 * n + i], &abc[i], &abc[n + i]);
        }
        const cuzk_fr *abcs[2] = {abc, abc};
        cuzk_prove_opts o3 = {.nthreads = 2, .test_r = &r, .test_s = &s, .abc = abcs};
        cuzk_proof p3[2];
        CHECK_EQ_ERR(cuzk_groth16_prove(p3, NULL, zk, ws, 2, wt->n, &o3), CUZK_OK);
        CHECK(proof_eq(&p1, &p3[0]) && proof_eq(&p1, &p3[1]));
        /* a wrong c gives a proof that does not verify */
        cuzk_fr_add(&abc[2 * n], &abc[2 * n], &abc[0]);
        cuzk_fr_set_one(&u);
        cuzk_fr_add(&abc[2 * n + 1], &abc[2 * n + 1], &u);
        CHECK_EQ_ERR(cuzk_groth16_prove(p3, NULL, zk, ws, 1, wt->n, &o3), CUZK_OK);
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zk->n_public, &p3[0]), CUZK_EVERIFY);
        free(abc);
    }

    /* A pending proof may be freed without finishing it. */
    pend = NULL;
    CHECK_EQ_ERR(cuzk_groth16_prove_start(&pend, zk, ws, 1, wt->n, NULL), CUZK_OK);
    cuzk_groth16_pending_free(pend);

    /* Tampering: another public input, a swapped point, a wrong count. */
    if (zk->n_public > 0) {
        cuzk_fr *bad = malloc(sizeof(cuzk_fr) * zk->n_public);
        memcpy(bad, pub, sizeof(cuzk_fr) * zk->n_public);
        cuzk_fr one;
        cuzk_fr_set_one(&one);
        cuzk_fr_add(&bad[0], &bad[0], &one);
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, bad, zk->n_public, &p1), CUZK_EVERIFY);
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zk->n_public - 1, &p1), CUZK_ESIZE);
        free(bad);
    }
    cuzk_proof t1 = p1;
    t1.a = proofs[0].a;
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zk->n_public, &t1), CUZK_EVERIFY);
    t1 = p1;
    t1.c = p1.a;
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zk->n_public, &t1), CUZK_EVERIFY);
    t1 = p1;
    cuzk_fp_add(&t1.a.y, &t1.a.y, &t1.a.x); /* off the curve */
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zk->n_public, &t1), CUZK_ENOT_ON_CURVE);

    /* Bad witnesses: wrong length, w[0] != 1. Nothing is proved, the detail names it. */
    CHECK(cuzk_groth16_prove(&p1, NULL, zk, ws, 1, wt->n - 1, NULL) != CUZK_OK);
    CHECK(strstr(cuzk_error_detail(), "witness 0") != NULL);
    cuzk_fr *w2 = malloc(sizeof(cuzk_fr) * wt->n);
    memcpy(w2, wt->w, sizeof(cuzk_fr) * wt->n);
    cuzk_fr_set_u64(&w2[0], 2);
    const cuzk_fr *ws2[2] = {wt->w, w2};
    CHECK(cuzk_groth16_prove(p2, NULL, zk, ws2, 2, wt->n, NULL) != CUZK_OK);
    CHECK(strstr(cuzk_error_detail(), "witness 1") != NULL);

    /* A witness that does not satisfy the circuit gives a proof that does not verify. */
    if (wt->n > zk->n_public + 1) {
        memcpy(w2, wt->w, sizeof(cuzk_fr) * wt->n);
        cuzk_fr_add(&w2[wt->n - 1], &w2[wt->n - 1], &w2[0]);
        const cuzk_fr *ws3[1] = {w2};
        CHECK_EQ_ERR(cuzk_groth16_prove(&p1, NULL, zk, ws3, 1, wt->n, NULL), CUZK_OK);
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, zk->n_public, &p1), CUZK_EVERIFY);
    }
    free(w2);
out:
    cuzk_vk_free(vk);
    cuzk_wtns_free(wt);
    cuzk_zkey_free(zk);
}

int main(void)
{
    test_init("test_groth16");
    test_circuit("multiplier");
    test_circuit("chain");
    test_circuit("nopub");

    cuzk_fr x, y;
    CHECK_EQ_ERR(cuzk_random_fr(&x), CUZK_OK);
    CHECK_EQ_ERR(cuzk_random_fr(&y), CUZK_OK);
    CHECK(!cuzk_fr_eq(&x, &y));
    return test_finish();
}
