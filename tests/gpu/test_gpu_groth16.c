/* Whole proofs on the GPU backend equal the CPU backend's byte for byte (fixed r, s) and
 * verify, with a, b, c synthesised on the device (the default), on the CPU, or given: the circom fixtures (snarkjs convention) and small porep-k workloads (bellman
 * convention, density-filtered vectors). Exits 77 when no GPU is usable. */
#include "test.h"
#include "test_circuit.h"
#include "test_device.h"
#include "test_files.h"

#include "gen/porep.h"
#include "cuzk/groth16.h"
#include "groth16/gpu_prover.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif

static void fixture(const char *name)
{
    char p[1024];
    cuzk_zkey *zk = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_vk *vk = NULL;
    test_fixture_path(p, sizeof p, name, "circuit.zkey");
    CHECK_EQ_ERR(cuzk_zkey_load(&zk, p), CUZK_OK);
    test_fixture_path(p, sizeof p, name, "witness.wtns");
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, p), CUZK_OK);
    test_fixture_path(p, sizeof p, name, "verification_key.json");
    CHECK_EQ_ERR(cuzk_vk_read_json(&vk, p), CUZK_OK);
    if (!zk || !wt || !vk)
        goto out;
    cuzk_fr r, s;
    test_rand_fr(&r);
    test_rand_fr(&s);
    const cuzk_fr *ws[2] = {wt->w, wt->w};
    cuzk_proof pc[2], pg[2];
    cuzk_prove_opts oc = {.backend = CUZK_BACKEND_CPU, .test_r = &r, .test_s = &s};
    cuzk_prove_opts og = {.backend = CUZK_BACKEND_GPU, .test_r = &r, .test_s = &s};
    CHECK_EQ_ERR(cuzk_groth16_prove(pc, NULL, zk, ws, 2, wt->n, &oc), CUZK_OK);
    CHECK_EQ_ERR(cuzk_groth16_prove(pg, NULL, zk, ws, 2, wt->n, &og), CUZK_OK);
    CHECK(test_proof_eq(&pc[0], &pg[0]) && test_proof_eq(&pc[1], &pg[1]));
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, wt->w + 1, zk->n_public, &pg[0]), CUZK_OK);
    /* a resident key reused over several calls */
    cuzk_gpu_key *gk = NULL;
    CHECK_EQ_ERR(cuzk_groth16_gpu_key_new(&gk, zk, 0, NULL), CUZK_OK);
    og.gpu_key = gk;
    for (int i = 0; i < 3 && gk; i++) {
        CHECK_EQ_ERR(cuzk_groth16_prove(pg, NULL, zk, ws, 1, wt->n, &og), CUZK_OK);
        CHECK(test_proof_eq(&pc[0], &pg[0]));
    }
    cuzk_groth16_gpu_key_free(gk);
    printf("fixture %s: gpu == cpu\n", name);
out:
    cuzk_vk_free(vk);
    cuzk_wtns_free(wt);
    cuzk_zkey_free(zk);
}

/* nkeys > 0: the batch spread over that many resident keys (cuzk_prove_opts.gpu_keys), on
 * the visible devices in turn (several on one device when there are fewer devices: the
 * multi-device path with one GPU); mixed_b2: the first key keeps B_G2 on the CPU. */
/* whether keys made now synthesise on the device (CUZK_GPU_SYNTH=cpu: no) */
static bool want_dev_synth = true;
/* each witness in its own allocation (not one array), and how many of them the GPU run
 * must have uploaded from where they lie (page-locked in place); -1: not checked */
static bool sep_witnesses = false;
static int want_in_place = -1;
/* cuzk_gpu_key_streamed of the keys made (B2's bit dropped where B_G2 is on the CPU) */
static unsigned want_streamed = 0;

static void porep_keys(unsigned k, size_t parts, unsigned nkeys, bool mixed_b2, bool given_abc)
{
    cuzk_porep *w = NULL;
    CHECK_EQ_ERR(cuzk_porep_new(&w, k, parts, test_rand64(), NULL), CUZK_OK);
    if (!w)
        return;
    cuzk_fr r, s;
    test_rand_fr(&r);
    test_rand_fr(&s);
    cuzk_proof *pc = calloc(parts, sizeof *pc), *pg = calloc(parts, sizeof *pg);
    cuzk_prove_opts oc = {.backend = CUZK_BACKEND_CPU, .test_r = &r, .test_s = &s};
    cuzk_prove_opts og = {.backend = CUZK_BACKEND_GPU, .test_r = &r, .test_s = &s};
    /* given a, b, c (random: the proofs do not verify, but both backends must agree) */
    cuzk_fr **abc = given_abc ? calloc(parts, sizeof *abc) : NULL;
    for (size_t j = 0; abc && j < parts; j++) {
        abc[j] = malloc(sizeof(cuzk_fr) * ((size_t)3 << k));
        cuzk_bench_random_fr(abc[j], (size_t)3 << k, test_rand64() + j);
    }
    oc.abc = og.abc = (const cuzk_fr *const *)abc;
    cuzk_gpu_key *keys[4] = {NULL};
    unsigned ndev = cuzk_gpu_prover_devices();
    for (unsigned k2 = 0; k2 < nkeys && k2 < 4; k2++) {
        if (mixed_b2 && k2 == 0)
            setenv("CUZK_B_G2", "cpu", 1);
        CHECK_EQ_ERR(cuzk_gpu_key_from_view(&keys[k2], cuzk_porep_view(w), (int)(k2 % ndev), NULL),
                     CUZK_OK);
        if (mixed_b2 && k2 == 0)
            unsetenv("CUZK_B_G2");
        CHECK(cuzk_gpu_key_synth(keys[k2]) == want_dev_synth);
        const bool b2_cpu = (mixed_b2 && k2 == 0) || getenv("CUZK_B_G2");
        CHECK(cuzk_gpu_key_streamed(keys[k2]) == (b2_cpu ? want_streamed & 15u : want_streamed));
    }
    if (nkeys) {
        og.gpu_keys = keys;
        og.n_gpu_keys = nkeys;
    }
    const cuzk_fr *const *wits = cuzk_porep_witnesses(w);
    cuzk_fr **own = NULL;
    if (sep_witnesses) {
        own = calloc(parts, sizeof *own);
        for (size_t j = 0; j < parts; j++) {
            own[j] = malloc(sizeof(cuzk_fr) * cuzk_porep_witness_len(w));
            memcpy(own[j], wits[j], sizeof(cuzk_fr) * cuzk_porep_witness_len(w));
        }
        wits = (const cuzk_fr *const *)own;
    }
    cuzk_pending *p = NULL;
    CHECK_EQ_ERR(cuzk_groth16_prove_start_view(&p, cuzk_porep_view(w), wits, parts,
                                               cuzk_porep_witness_len(w), &oc), CUZK_OK);
    if (p)
        CHECK_EQ_ERR(cuzk_groth16_prove_finish(pc, NULL, p), CUZK_OK);
    cuzk_groth16_pending_free(p);
    p = NULL;
    CHECK_EQ_ERR(cuzk_groth16_prove_start_view(&p, cuzk_porep_view(w), wits, parts,
                                               cuzk_porep_witness_len(w), &og), CUZK_OK);
    if (p) {
        cuzk_prove_timings t;
        cuzk_groth16_pending_timings(p, &t);
        if (want_in_place >= 0)
            CHECK((int)t.witness_in_place == want_in_place);
        CHECK_EQ_ERR(cuzk_groth16_prove_finish(pg, NULL, p), CUZK_OK);
    }
    cuzk_groth16_pending_free(p);
    for (size_t j = 0; own && j < parts; j++)
        free(own[j]);
    free(own);
    for (size_t j = 0; j < parts; j++)
        CHECK(test_proof_eq(&pc[j], &pg[j]));
    printf("porep-%u x%zu%s%s: gpu == cpu\n", k, parts,
           nkeys ? (mixed_b2 ? " on several keys, B_G2 mixed" : " on several keys") : "",
           given_abc ? ", a, b, c given" : "");
    for (size_t j = 0; abc && j < parts; j++)
        free(abc[j]);
    free(abc);
    for (unsigned k2 = 0; k2 < 4; k2++)
        cuzk_groth16_gpu_key_free(keys[k2]);
    free(pc);
    free(pg);
    cuzk_porep_free(w);
}

static void porep(unsigned k, size_t parts) { porep_keys(k, parts, 0, false, false); }

int main(void)
{
    test_init("test_gpu_groth16");
    test_gpu_require();
    /* B_G2 on the CPU thread first (read when a resident key is made) */
    setenv("CUZK_B_G2", "cpu", 1);
    fixture("multiplier");
    fixture("chain");
    fixture("nopub");
    porep(10, 2);
    porep(13, 1);
    porep(16, 2);
    /* then on the device (the default) */
    unsetenv("CUZK_B_G2");
    printf("with B_G2 on the device:\n");
    fixture("chain");
    porep(12, 2);
    porep(16, 1);
    /* one batch over several resident keys (devices) */
    porep_keys(13, 5, 2, false, false);
    porep_keys(12, 3, 3, true, false);
    porep_keys(10, 1, 2, false, false);
    /* a, b, c given (no synthesis) */
    porep_keys(12, 2, 0, false, true);
    /* synthesis on the CPU (read when a resident key is made; the default is the device) */
    setenv("CUZK_GPU_SYNTH", "cpu", 1);
    want_dev_synth = false;
    printf("with synthesis on the CPU:\n");
    fixture("chain");
    porep(13, 2);
    porep_keys(12, 2, 0, false, true);
    /* synthesis on the device from deduplicated coefficients */
    setenv("CUZK_GPU_SYNTH", "dedup", 1);
    want_dev_synth = true;
    printf("with deduplicated coefficients on the device:\n");
    fixture("chain");
    fixture("multiplier");
    porep(13, 2);
    porep(12, 1);
    porep_keys(13, 3, 2, false, false);
    setenv("CUZK_GPU_SYNTH", "full", 1);
    printf("with the whole matrices forced:\n");
    porep_keys(12, 2, 1, false, false);
    unsetenv("CUZK_GPU_SYNTH");
    /* witnesses page-locked in place for the upload (the default from 1 GiB; forced here),
     * each in its own allocation: all uploaded in place; one array: adjacent witnesses share
     * a page, so the second of two in flight falls back to the copy (correct either way) */
    setenv("CUZK_GPU_WITNESS", "register", 1);
    printf("with witnesses page-locked in place:\n");
    sep_witnesses = true;
    want_in_place = 3;
    porep_keys(13, 3, 0, false, false);
    want_in_place = 4;
    porep_keys(12, 4, 2, false, false);
    sep_witnesses = false;
    want_in_place = -1;
    porep(13, 3);
    fixture("chain");
    setenv("CUZK_GPU_WITNESS", "copy", 1);
    sep_witnesses = true;
    want_in_place = 0;
    porep_keys(12, 2, 0, false, false);
    sep_witnesses = false;
    want_in_place = -1;
    unsetenv("CUZK_GPU_WITNESS");
    /* every set of bases streamed from host memory in chunks of 1024, as when a key does not
     * fit on the device (read when a key is made) */
    setenv("CUZK_GPU_BASES", "stream", 1);
    setenv("CUZK_GPU_MSM_CHUNK", "1000", 1);
    want_streamed = 31;
    printf("with the bases streamed from host memory:\n");
    fixture("chain");
    fixture("multiplier");
    porep_keys(13, 2, 1, false, false);
    porep_keys(13, 3, 2, true, false); /* two keys on one view: the second cannot page-lock it */
    porep_keys(12, 2, 1, false, true);
    setenv("CUZK_GPU_MSM_CHUNK", "100000", 1); /* one chunk (2^16 values) */
    porep_keys(16, 1, 1, false, false);
    setenv("CUZK_GPU_BASES", "resident", 1);
    want_streamed = 0;
    porep_keys(12, 1, 1, false, false);
    unsetenv("CUZK_GPU_BASES");
    unsetenv("CUZK_GPU_MSM_CHUNK");
    porep_keys(12, 1, 1, false, false); /* auto: these fit */
    return test_finish();
}
