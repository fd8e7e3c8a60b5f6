/* SPDX-License-Identifier: Apache-2.0 */
/* Whole proofs on the GPU backend equal the CPU backend's byte for byte (fixed r, s) and
 * verify, with a, b, c synthesised on the device (the default), on the CPU, or given: the
 * circom fixtures (snarkjs convention) and small porep-k workloads (bellman convention,
 * density-filtered vectors), under every forced mode of cuzk_gpu_opts (synthesis, bases,
 * witness upload, B_G2); and the .params reader's subgroup checks on the device against the
 * CPU's. Exits 77 when no GPU is usable. */
#include <stdint.h>
#include <unistd.h>

#include "test.h"
#include "test_circuit.h"
#include "test_device.h"
#include "test_files.h"
#include "test_points.h"

#include "gen/porep.h"
#include "cuzk/groth16.h"
#include "cuzk/params.h"
#include "cuzk/setup.h"
#include "groth16/gpu_prover.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif

/* The options of every resident key made from here on (those made per call through
 * cuzk_prove_opts.gpu, and those the tests make) */
static cuzk_gpu_opts gopts;

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
    cuzk_prove_opts og = {.backend = CUZK_BACKEND_GPU, .test_r = &r, .test_s = &s, .gpu = &gopts};
    CHECK_EQ_ERR(cuzk_groth16_prove(pc, NULL, zk, ws, 2, wt->n, &oc), CUZK_OK);
    CHECK_EQ_ERR(cuzk_groth16_prove(pg, NULL, zk, ws, 2, wt->n, &og), CUZK_OK);
    CHECK(test_proof_eq(&pc[0], &pg[0]) && test_proof_eq(&pc[1], &pg[1]));
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, wt->w + 1, zk->n_public, &pg[0]), CUZK_OK);
    /* a resident key reused over several calls */
    cuzk_gpu_key *gk = NULL;
    CHECK_EQ_ERR(cuzk_groth16_gpu_key_new(&gk, zk, 0, &gopts), CUZK_OK);
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
/* whether keys made now synthesise on the device (gopts.synth = OFF: no) */
static bool want_dev_synth = true;
/* each witness in its own allocation (not one array), and how many of them the GPU run
 * must have uploaded from where they lie (page-locked in place); -1: not checked */
static bool sep_witnesses = false;
static int want_in_place = -1;
/* cuzk_gpu_key_streamed of the keys made (B2's bit dropped where B_G2 is on the CPU) */
static unsigned want_streamed = 0;
/* cuzk_gpu_key_precomputed of the keys made */
static unsigned want_precomputed = 0;

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
    cuzk_prove_opts og = {.backend = CUZK_BACKEND_GPU, .test_r = &r, .test_s = &s, .gpu = &gopts};
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
        cuzk_gpu_opts ko = gopts;
        if (mixed_b2 && k2 == 0)
            ko.b_g2 = CUZK_GPU_B_G2_CPU;
        CHECK_EQ_ERR(cuzk_gpu_key_from_view(&keys[k2], cuzk_porep_view(w), (int)(k2 % ndev), &ko),
                     CUZK_OK);
        CHECK(cuzk_gpu_key_synth(keys[k2]) == want_dev_synth);
        CHECK(cuzk_gpu_key_b_g2(keys[k2]) == (ko.b_g2 == CUZK_GPU_B_G2_DEVICE));
        const bool b2_cpu = ko.b_g2 == CUZK_GPU_B_G2_CPU;
        CHECK(cuzk_gpu_key_streamed(keys[k2]) == (b2_cpu ? want_streamed & 15u : want_streamed));
        CHECK(cuzk_gpu_key_precomputed(keys[k2]) ==
              (b2_cpu ? want_precomputed & 15u : want_precomputed));
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

#define VK_BYTES (3 * 96 + 3 * 192) /* a .params file's verifying key, before its vectors */

/* Byte offset of vector v's length field (0 ic, 1 h, 2 l, 3 a, 4 b_g1, 5 b_g2: the G1 ones
 * first). */
static size_t vec_off(const cuzk_params *p, int v)
{
    uint32_t n[6] = {p->n_ic, p->n_h, p->n_l, p->n_a, p->n_b_g1, p->n_b_g2};
    size_t off = VK_BYTES;
    for (int i = 0; i < v; i++)
        off += 4 + (size_t)n[i] * 96;
    return off;
}

static bool params_same(const cuzk_params *x, const cuzk_params *y)
{
    bool ok = x->n_ic == y->n_ic && x->n_h == y->n_h && x->n_l == y->n_l && x->n_a == y->n_a &&
              x->n_b_g1 == y->n_b_g1 && x->n_b_g2 == y->n_b_g2;
    for (uint32_t i = 0; ok && i < x->n_h; i++)
        ok = cuzk_g1_affine_eq(&x->h[i], &y->h[i]);
    for (uint32_t i = 0; ok && i < x->n_l; i++)
        ok = cuzk_g1_affine_eq(&x->l[i], &y->l[i]);
    for (uint32_t i = 0; ok && i < x->n_a; i++)
        ok = cuzk_g1_affine_eq(&x->a[i], &y->a[i]);
    for (uint32_t i = 0; ok && i < x->n_b_g1; i++)
        ok = cuzk_g1_affine_eq(&x->b_g1[i], &y->b_g1[i]);
    for (uint32_t i = 0; ok && i < x->n_b_g2; i++)
        ok = cuzk_g2_affine_eq(&x->b_g2[i], &y->b_g2[i]);
    return ok;
}

/* Loads path with the subgroup checks on the device for every vector (params_check_min 1)
 * and on the CPU (SIZE_MAX); both give want, and on failure a detail holding `where`. */
static void params_both(const char *path, cuzk_err want, const char *where, const cuzk_params *good)
{
    cuzk_gpu_opts dev, cpu;
    cuzk_gpu_opts_default(&dev);
    cuzk_gpu_opts_default(&cpu);
    CHECK_EQ_ERR(cuzk_gpu_opts_set(&dev, "params_check_min", "1"), CUZK_OK);
    cpu.params_check_min = SIZE_MAX;
    const cuzk_gpu_opts *o[2] = {&dev, &cpu};
    for (int i = 0; i < 2; i++) {
        cuzk_params *q = NULL;
        cuzk_err e = cuzk_params_load_gpu(&q, path, 0, o[i]);
        CHECK_EQ_ERR(e, want);
        if (e != CUZK_OK && where && !strstr(cuzk_error_detail(), where)) {
            printf("  %s checks: the detail '%s' does not name '%s'\n", i ? "cpu" : "device",
                   cuzk_error_detail(), where);
            CHECK(0);
        }
        if (good && q)
            CHECK(params_same(q, good));
        cuzk_params_free(q);
    }
}

/* The .params reader's subgroup checks on the device (cuzk_gpu_opts.params_check_min = 1:
 * every vector) against the CPU's (SIZE_MAX: none on the device): a key made here loads the
 * same either way, and a G1 point (in a) or a G2 point (in b_g2) outside the subgroup is
 * refused by both, naming the vector and the point. */
static void params_checks(void)
{
    char rp[1024], kp[256], bp[256];
    const char *d = getenv("CUZK_TEST_DATA");
    snprintf(rp, sizeof rp, "%s/circuits/chain/circuit.r1cs", d ? d : "tests/data");
    snprintf(kp, sizeof kp, "/tmp/test_gpu_groth16.%d.good.params", (int)getpid());
    snprintf(bp, sizeof bp, "/tmp/test_gpu_groth16.%d.bad.params", (int)getpid());
    cuzk_bellman_circuit *c = NULL;
    cuzk_params *p = NULL;
    cuzk_setup_opts so = {.backend = CUZK_BACKEND_CPU};
    CHECK_EQ_ERR(cuzk_bellman_circuit_load(&c, rp), CUZK_OK);
    if (!c || cuzk_setup_params(&p, c, &so) != CUZK_OK || cuzk_params_write(kp, p) != CUZK_OK) {
        CHECK(0);
        goto out;
    }
    params_both(kp, CUZK_OK, NULL, p);
    size_t len;
    uint8_t *b = read_all(kp, &len);
    cuzk_g1_affine o1;
    cuzk_g2_affine o2;
    test_g1_off_subgroup(&o1);
    test_g2_off_subgroup(&o2);
    CHECK(p->n_a > 5 && p->n_b_g2 > 2);
    uint8_t keep[192];
    size_t a5 = vec_off(p, 3) + 4 + 96 * 5, b2 = vec_off(p, 5) + 4 + 192 * 2;
    memcpy(keep, b + a5, 96);
    cuzk_g1_to_uncompressed(b + a5, &o1);
    write_all(bp, b, len);
    params_both(bp, CUZK_ENOT_IN_SUBGROUP, "vector a: point 5", NULL);
    memcpy(b + a5, keep, 96);
    cuzk_g2_to_uncompressed(b + b2, &o2);
    write_all(bp, b, len);
    params_both(bp, CUZK_ENOT_IN_SUBGROUP, "vector b_g2: point 2", NULL);
    free(b);
    printf(".params subgroup checks: device == cpu\n");
out:
    unlink(kp);
    unlink(bp);
    cuzk_params_free(p);
    cuzk_bellman_circuit_free(c);
}

int main(void)
{
    test_init("test_gpu_groth16");
    test_gpu_require();
    params_checks();
    /* B_G2 on the CPU thread first (read when a resident key is made) */
    cuzk_gpu_opts_default(&gopts);
    gopts.b_g2 = CUZK_GPU_B_G2_CPU;
    fixture("multiplier");
    fixture("chain");
    fixture("nopub");
    porep(10, 2);
    porep(13, 1);
    porep(16, 2);
    /* then on the device (the default) */
    gopts.b_g2 = CUZK_GPU_B_G2_DEVICE;
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
    /* the G1 sets on precomputed multiples (AUTO leaves sets this small alone) */
    gopts.precompute = CUZK_GPU_PRECOMPUTE_ON;
    want_precomputed = 15;
    printf("with precomputed multiples:\n");
    porep_keys(13, 3, 2, false, false);
    porep_keys(12, 2, 1, true, false);
    porep(12, 2); /* the one-shot keys too */
    porep_keys(12, 2, 0, false, true);
    gopts.precompute = CUZK_GPU_PRECOMPUTE_AUTO;
    want_precomputed = 0;
    /* synthesis on the CPU (read when a resident key is made; the default is the device) */
    gopts.synth = CUZK_GPU_SYNTH_OFF;
    want_dev_synth = false;
    printf("with synthesis on the CPU:\n");
    fixture("chain");
    porep(13, 2);
    porep_keys(12, 2, 0, false, true);
    /* synthesis on the device from deduplicated coefficients */
    gopts.synth = CUZK_GPU_SYNTH_DEDUP;
    want_dev_synth = true;
    printf("with deduplicated coefficients on the device:\n");
    fixture("chain");
    fixture("multiplier");
    porep(13, 2);
    porep(12, 1);
    porep_keys(13, 3, 2, false, false);
    gopts.synth = CUZK_GPU_SYNTH_FULL;
    printf("with the whole matrices forced:\n");
    porep_keys(12, 2, 1, false, false);
    gopts.synth = CUZK_GPU_SYNTH_AUTO;
    /* witnesses page-locked in place for the upload (the default from 1 GiB; forced here),
     * each in its own allocation: all uploaded in place; one array: adjacent witnesses share
     * a page, so the second of two in flight falls back to the copy (correct either way) */
    gopts.witness = CUZK_GPU_WITNESS_REGISTER;
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
    gopts.witness = CUZK_GPU_WITNESS_COPY;
    sep_witnesses = true;
    want_in_place = 0;
    porep_keys(12, 2, 0, false, false);
    sep_witnesses = false;
    want_in_place = -1;
    gopts.witness = CUZK_GPU_WITNESS_AUTO;
    /* every set of bases streamed from host memory in chunks of 1024, as when a key does not
     * fit on the device (read when a key is made) */
    gopts.bases = CUZK_GPU_BASES_STREAM;
    gopts.msm_chunk = 1000;
    want_streamed = 31;
    printf("with the bases streamed from host memory:\n");
    fixture("chain");
    fixture("multiplier");
    porep_keys(13, 2, 1, false, false);
    porep_keys(13, 3, 2, true, false); /* two keys on one view: the second cannot page-lock it */
    porep_keys(12, 2, 1, false, true);
    gopts.msm_chunk = 100000; /* one chunk (2^16 values) */
    porep_keys(16, 1, 1, false, false);
    gopts.bases = CUZK_GPU_BASES_RESIDENT;
    want_streamed = 0;
    porep_keys(12, 1, 1, false, false);
    gopts.bases = CUZK_GPU_BASES_AUTO;
    gopts.msm_chunk = 0;
    porep_keys(12, 1, 1, false, false); /* auto: these fit */
    return test_finish();
}
