/* SPDX-License-Identifier: Apache-2.0 */
/* Groth16 prover and verifier on the circom/snarkjs fixtures: batches, the split API,
 * fixed r and s, and rejection of bad witnesses and tampered proofs. */
#include "test.h"
#include "test_circuit.h"
#include "test_files.h"

#include "cuzk/groth16.h"
#include "cuzk/msm.h"
#include "groth16/csr_dedup.h"
#include "groth16/gpu_prover.h"
#include "groth16/pk.h"

static void test_circuit(const char *name)
{
    cuzk_zkey *zk = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_vk *vk = NULL;
    char p[1024];
    CHECK_EQ_ERR(cuzk_zkey_load(&zk, test_fixture_path(p, sizeof p, name, "circuit.zkey")),
                 CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, test_fixture_path(p, sizeof p, name, "witness.wtns")),
                 CUZK_OK);
    test_fixture_path(p, sizeof p, name, "verification_key.json");
    CHECK_EQ_ERR(cuzk_vk_read_json(&vk, p), CUZK_OK);
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
    CHECK(!test_proof_eq(&proofs[0], &proofs[1]));
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
    CHECK(test_proof_eq(&p1, &p2[0]));
    CHECK(test_proof_eq(&p1, &p2[1]));
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
        CHECK(test_proof_eq(&p1, &p3[0]) && test_proof_eq(&p1, &p3[1]));
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

/* The CPU side of the GPU split MSMs (cuzk_gpu_prep_splits): for every split, the batch
 * add of the ones plus the MSM of the gathered significant scalars over the bases of their
 * positions must equal the plain MSM over the density-selected witness values. Witness of
 * zeros, ones and random values; densities dense, sparse and absent (all wires). */
static void test_prep_splits(void)
{
    const size_t sizes[] = {3, 70, 1000, 5000};
    for (size_t si = 0; si < 4; si++) {
        size_t nv = sizes[si], words = CUZK_MSM_BITVEC_WORDS(nv);
        cuzk_fr *w = malloc(sizeof *w * nv);
        cuzk_g1_affine *pts = malloc(sizeof *pts * nv), *sel = malloc(sizeof *sel * nv);
        uint64_t *da = calloc(words, 8), *db = calloc(words, 8);
        cuzk_fr_set_one(&w[0]);
        for (size_t i = 1; i < nv; i++) {
            unsigned k = (unsigned)(test_rand64() % 10);
            if (k < 4)
                cuzk_fr_set_zero(&w[i]);
            else if (k < 8)
                cuzk_fr_set_one(&w[i]);
            else
                cuzk_fr_set_u64(&w[i], test_rand64() | 2); /* never 0 or 1 */
        }
        for (size_t i = 0; i < nv; i++) {
            cuzk_fr k;
            cuzk_fr_set_u64(&k, i + 2);
            cuzk_g1_generator_mul(&pts[i], &k);
            if (test_rand64() % 100 < 97)
                da[i / 64] |= 1ULL << (i % 64);
            if (test_rand64() % 4 == 0)
                db[i / 64] |= 1ULL << (i % 64);
        }
        /* L starts after the public inputs: inside the first word, on a word edge (63
         * public inputs: L from wire 64), and past several words */
        const uint32_t npub = nv <= 2 ? 0 : si < 2 ? 1 : si == 2 ? 63 : 200;
        cuzk_pk_view pk = {.n_vars = (uint32_t)nv, .n_public = npub,
                           .a_density = si == 1 ? NULL : da, .b_density = db};
        cuzk_gpu_bufs b = {0};
        CHECK(cuzk_gpu_bufs_splits_alloc(&b, nv));
        /* the witness's copy for the upload rides on the classification (every other size) */
        cuzk_fr *wcopy = malloc(sizeof *wcopy * nv);
        memset(wcopy, 0xa5, sizeof *wcopy * nv);
        b.wcopy = si % 2 ? NULL : wcopy;
        CHECK_EQ_ERR(cuzk_gpu_prep_splits(&pk, w, &b, si % 2 ? 3 : 1), CUZK_OK);
        CHECK(b.wcopy == NULL);
        if (si % 2 == 0)
            CHECK(memcmp(wcopy, w, sizeof *w * nv) == 0);
        free(wcopy);
        const uint64_t *dens[3] = {pk.a_density, pk.b_density, NULL};
        size_t off[3] = {0, 0, pk.n_public + 1U};
        for (int t = 0; t < 3; t++) {
            /* want: the MSM of the selected witness values over bases 0, 1, 2, ... */
            cuzk_msm_scalar *sc = malloc(sizeof *sc * nv);
            size_t k = 0;
            for (size_t i = off[t]; i < nv; i++)
                if (!dens[t] || (dens[t][i / 64] >> (i % 64) & 1)) {
                    cuzk_fr_to_limbs(sc[k].l, &w[i]);
                    k++;
                }
            cuzk_g1_jac want, ones, tail;
            CHECK_EQ_ERR(cuzk_g1_msm(&want, pts, sc, k, NULL), CUZK_OK);
            const cuzk_gpu_split_in *sp = &b.sp[t];
            CHECK(sp->n == k);
            CHECK_EQ_ERR(cuzk_g1_batch_add(&ones, pts, sp->n, sp->one, 2), CUZK_OK);
            size_t ns = cuzk_g1_gather(sel, pts, sp->n, sp->sig, 2);
            CHECK(ns == sp->n_sig);
            CHECK_EQ_ERR(cuzk_g1_msm(&tail, sel, sp->s, ns, NULL), CUZK_OK);
            cuzk_g1_jac_add(&tail, &tail, &ones);
            CHECK(cuzk_g1_jac_eq(&tail, &want));
            free(sc);
        }
        cuzk_gpu_bufs_splits_free(&b);
        free(w), free(pts), free(sel), free(da), free(db);
    }
}

/* cuzk_csr_dedup: every term's index names its value; the table holds each distinct value
 * once, in order of first appearance, across matrices; more distinct values than allowed
 * is refused with nothing allocated. */
static void test_csr_dedup(void)
{
    const size_t rows = 3000;
    cuzk_fr pool[40];
    test_rand_frs(pool, 40);
    cuzk_fr_set_one(&pool[0]);
    cuzk_fr_neg(&pool[1], &pool[0]);
    cuzk_csr m[3];
    for (int t = 0; t < 3; t++) {
        m[t].n_rows = rows + 5; /* rows past n_rows are ignored */
        m[t].row = malloc(sizeof(uint64_t) * (m[t].n_rows + 1));
        size_t nnz = 0;
        m[t].row[0] = 0;
        for (size_t r = 0; r < m[t].n_rows; r++)
            m[t].row[r + 1] = (nnz += test_rand64() % 4);
        m[t].col = calloc(nnz ? nnz : 1, sizeof(uint32_t));
        m[t].val = malloc(sizeof(cuzk_fr) * (nnz ? nnz : 1));
        for (size_t k = 0; k < nnz; k++)
            m[t].val[k] = pool[(test_rand64() % 3 == 0) ? test_rand64() % 40 : test_rand64() % 3];
    }
    const cuzk_csr *ms[4] = {&m[0], &m[1], NULL, &m[2]};
    uint32_t *idx[4];
    cuzk_fr *tab = NULL;
    size_t nt = 0;
    CHECK_EQ_ERR(cuzk_csr_dedup(ms, 4, rows, 64, idx, &tab, &nt), CUZK_OK);
    if (tab) {
        CHECK(nt <= 40 && idx[2] == NULL);
        size_t bad = 0;
        for (int t = 0; t < 4; t++)
            for (size_t k = 0; ms[t] && k < ms[t]->row[rows]; k++)
                bad += idx[t][k] >= nt || !cuzk_fr_eq(&tab[idx[t][k]], &ms[t]->val[k]);
        CHECK(bad == 0);
        for (size_t i = 0; i < nt; i++) /* distinct */
            for (size_t j = i + 1; j < nt; j++)
                bad += cuzk_fr_eq(&tab[i], &tab[j]);
        CHECK(bad == 0);
        CHECK(cuzk_fr_eq(&tab[idx[0][0]], &m[0].val[0]) && idx[0][0] == 0);
        /* the table's count is exact: a limit one below it is refused */
        uint32_t *idx2[4];
        cuzk_fr *tab2 = NULL;
        size_t nt2 = 0;
        CHECK_EQ_ERR(cuzk_csr_dedup(ms, 4, rows, nt - 1, idx2, &tab2, &nt2), CUZK_ESIZE);
        CHECK(tab2 == NULL && nt2 == 0 && idx2[0] == NULL && idx2[3] == NULL);
        CHECK_EQ_ERR(cuzk_csr_dedup(ms, 4, rows, nt, idx2, &tab2, &nt2), CUZK_OK);
        CHECK(nt2 == nt);
        for (int t = 0; t < 4; t++)
            free(idx2[t]);
        free(tab2);
    }
    for (int t = 0; t < 4; t++)
        free(idx[t]);
    free(tab);
    for (int t = 0; t < 3; t++)
        free(m[t].row), free(m[t].col), free(m[t].val);
}

/* cuzk_gpu_opts_set: every name and value it takes, and refusals that name the option. */
static void test_gpu_opts(void)
{
    cuzk_gpu_opts o, d;
    cuzk_gpu_opts_default(&o);
    memset(&d, 0, sizeof d);
    CHECK(!memcmp(&o, &d, sizeof o));
    CHECK(o.synth == CUZK_GPU_SYNTH_AUTO && o.bases == CUZK_GPU_BASES_AUTO &&
          o.witness == CUZK_GPU_WITNESS_AUTO && o.b_g2 == CUZK_GPU_B_G2_DEVICE);
    static const struct {
        const char *name, *value;
        int field, want;
    } ok[] = {
        {"synth", "full", 0, CUZK_GPU_SYNTH_FULL},       {"synth", "dedup", 0, CUZK_GPU_SYNTH_DEDUP},
        {"synth", "off", 0, CUZK_GPU_SYNTH_OFF},         {"synth", "auto", 0, CUZK_GPU_SYNTH_AUTO},
        {"bases", "stream", 1, CUZK_GPU_BASES_STREAM},   {"bases", "resident", 1, CUZK_GPU_BASES_RESIDENT},
        {"witness", "copy", 2, CUZK_GPU_WITNESS_COPY},   {"witness", "register", 2, CUZK_GPU_WITNESS_REGISTER},
        {"b_g2", "cpu", 3, CUZK_GPU_B_G2_CPU},           {"b_g2", "device", 3, CUZK_GPU_B_G2_DEVICE},
        {"precompute", "off", 4, CUZK_GPU_PRECOMPUTE_OFF},
        {"precompute", "on", 4, CUZK_GPU_PRECOMPUTE_ON},
        {"precompute", "auto", 4, CUZK_GPU_PRECOMPUTE_AUTO},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        CHECK_EQ_ERR(cuzk_gpu_opts_set(&o, ok[i].name, ok[i].value), CUZK_OK);
        int got = ok[i].field == 0 ? (int)o.synth : ok[i].field == 1 ? (int)o.bases
                : ok[i].field == 2 ? (int)o.witness : ok[i].field == 3 ? (int)o.b_g2
                                                        : (int)o.precompute;
        CHECK(got == ok[i].want);
    }
    CHECK_EQ_ERR(cuzk_gpu_opts_set(&o, "msm_chunk", "65536"), CUZK_OK);
    CHECK(o.msm_chunk == 65536);
    CHECK_EQ_ERR(cuzk_gpu_opts_set(&o, "params_check_min", "12"), CUZK_OK);
    CHECK(o.params_check_min == 12);
    static const char *const bad[][2] = {{"synth", "cpu"}, {"synth", ""}, {"bases", "Stream"},
                                         {"msm_chunk", "0"}, {"msm_chunk", "-1"}, {"msm_chunk", "4k"},
                                         {"params_check_min", ""}, {"colour", "blue"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cuzk_gpu_opts before = o;
        CHECK_EQ_ERR(cuzk_gpu_opts_set(&o, bad[i][0], bad[i][1]), CUZK_EINVAL);
        CHECK(strstr(cuzk_error_detail(), bad[i][0]) != NULL);
        CHECK(!memcmp(&before, &o, sizeof o));
    }
    CHECK_EQ_ERR(cuzk_gpu_opts_set(NULL, "synth", "auto"), CUZK_EINVAL);
}

int main(void)
{
    test_init("test_groth16");
    test_gpu_opts();
    test_prep_splits();
    test_csr_dedup();
    test_circuit("multiplier");
    test_circuit("chain");
    test_circuit("nopub");

    cuzk_fr x, y;
    CHECK_EQ_ERR(cuzk_random_fr(&x), CUZK_OK);
    CHECK_EQ_ERR(cuzk_random_fr(&y), CUZK_OK);
    CHECK(!cuzk_fr_eq(&x, &y));
    return test_finish();
}
