/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SupraSeal C2 ABI's whole call beside cuzk's own prover on the synthetic porep-k
 * workload of `cuzk-bench porep --abc` (src/gen/porep.h: the same key, witnesses, densities,
 * uniform a, b, c for the same seed), in one process, and whether both give the same proofs:
 *
 *   cuzk_supraseal_porep [--backend gpu|cpu] [--runs N] [--seed S] -k K -p P --key FILE.params
 *
 * The key (random valid points, so the proofs do not verify) is written to FILE.params when
 * it is not there. Then cuzk's prover (cuzk_groth16_prove_start_view with the given a, b, c,
 * resident keys made first, as cuzk-bench porep does) and the ABI (create_SRS, then
 * generate_groth16_proofs_c with bellperson's structs pointing at the same arrays) each run a
 * warm-up and N timed calls; the proofs of both must be equal byte for byte. Peak host memory
 * is one decoded key plus the batch's a, b, c and witnesses (the native side frees its key
 * before the ABI loads its own). Exit 0 when equal, 1 when not, 2 when it could not run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cuzk/params.h"
#include "cuzk_supraseal.h"
#include "gen/porep.h"
#include "groth16/gpu_prover.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void fail(const char *what)
{
    fprintf(stderr, "cuzk_supraseal_porep: %s: %s\n", what, cuzk_error_detail());
    exit(2);
}

static void progress(const char *phase) { fprintf(stderr, "porep: %s...\n", phase); }

/* The workload's key as a .params file (gamma2 = beta2 and IC random: nothing proves with them) */
static void write_key(const char *path, unsigned k, size_t parts, uint64_t seed)
{
    cuzk_porep *w;
    if (cuzk_porep_new(&w, k, parts, seed, progress) != CUZK_OK)
        fail("porep workload");
    const cuzk_pk_view *v = cuzk_porep_view(w);
    cuzk_params p;
    memset(&p, 0, sizeof p);
    p.path = (char *)"";
    p.alpha1 = *v->alpha1;
    p.beta1 = *v->beta1;
    p.delta1 = *v->delta1;
    p.beta2 = *v->beta2;
    p.gamma2 = *v->beta2;
    p.delta2 = *v->delta2;
    p.n_ic = v->n_public + 1;
    p.ic = cuzk_bench_random_g1(p.n_ic, seed + 77);
    p.n_h = (uint32_t)v->h_count;
    p.h = (cuzk_g1_affine *)v->h_pts;
    p.n_l = v->n_vars - v->n_public - 1;
    p.l = (cuzk_g1_affine *)v->l_pts;
    p.n_a = (uint32_t)cuzk_porep_a_count(w);
    p.a = (cuzk_g1_affine *)v->a_pts;
    p.n_b_g1 = p.n_b_g2 = (uint32_t)cuzk_porep_b_count(w);
    p.b_g1 = (cuzk_g1_affine *)v->b1_pts;
    p.b_g2 = (cuzk_g2_affine *)v->b2_pts;
    progress("writing the .params key");
    if (!p.ic || cuzk_params_write(path, &p) != CUZK_OK)
        fail(path);
    free(p.ic);
    cuzk_porep_free(w);
}

/* dst = bits [from, from + n) of src */
static uint64_t *bits_slice(const uint64_t *src, size_t from, size_t n, size_t *pop)
{
    uint64_t *d = calloc(n / 64 + 1, 8);
    if (!d)
        exit(2);
    *pop = 0;
    for (size_t i = 0; i < n; i++)
        if (src[(from + i) / 64] >> ((from + i) % 64) & 1) {
            d[i / 64] |= 1ULL << (i % 64);
            ++*pop;
        }
    return d;
}

int main(int argc, char **argv)
{
    unsigned k = 16;
    size_t parts = 1;
    int runs = 3;
    uint64_t seed = 1;
    const char *key = NULL, *backend = "gpu";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc)
            k = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc)
            parts = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--key") && i + 1 < argc)
            key = argv[++i];
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = argv[++i];
        else {
            fprintf(stderr, "usage: cuzk_supraseal_porep [--backend gpu|cpu] [--runs N] [--seed S] "
                            "-k K -p P --key FILE.params\n");
            return 2;
        }
    }
    if (!key || runs < 1 || parts < 1)
        return 2;
    cuzk_backend be = !strcmp(backend, "cpu") ? CUZK_BACKEND_CPU : CUZK_BACKEND_GPU;
    struct stat st;
    if (stat(key, &st) != 0)
        write_key(key, k, parts, seed);

    /* the witnesses and densities (no points), a, b, c uniform as cuzk-bench porep --abc */
    cuzk_porep *w;
    if (cuzk_porep_new_ex(&w, k, parts, seed, progress, false) != CUZK_OK)
        fail("porep workload");
    const cuzk_pk_view *pv = cuzk_porep_view(w);
    size_t n = (size_t)1 << k, nv = pv->n_vars, n_inp = pv->n_public + 1, n_aux = nv - n_inp;
    cuzk_fr **abc = calloc(parts, sizeof *abc);
    for (size_t j = 0; j < parts; j++) {
        abc[j] = malloc(sizeof(cuzk_fr) * 3 * n);
        if (!abc[j])
            return 2;
        cuzk_bench_random_fr(abc[j], 3 * n, seed * 1000 + j);
    }
    cuzk_fr r, s;
    cuzk_fr_set_u64(&r, 1234567);
    cuzk_fr_set_u64(&s, 7654321);

    /* cuzk's prover on the key read back from the file */
    progress("native: loading the key");
    cuzk_params *p;
    if (cuzk_params_load(&p, key, CUZK_PARAMS_TRUSTED) != CUZK_OK)
        fail(key);
    cuzk_pk_view v = *pv;
    v.alpha1 = &p->alpha1, v.beta1 = &p->beta1, v.delta1 = &p->delta1;
    v.beta2 = &p->beta2, v.delta2 = &p->delta2;
    v.a_pts = p->a, v.b1_pts = p->b_g1, v.b2_pts = p->b_g2, v.l_pts = p->l, v.h_pts = p->h;
    v.h_count = p->n_h;
    cuzk_gpu_key *gk[CUZK_MAX_GPUS] = {NULL};
    unsigned ndev = 0;
    cuzk_prove_opts o = {.backend = be, .test_r = &r, .test_s = &s,
                         .abc = (const cuzk_fr *const *)abc};
    if (be == CUZK_BACKEND_GPU) {
        unsigned vis = cuzk_gpu_prover_devices();
        for (unsigned d = 0; d < vis && d < CUZK_MAX_GPUS; d++, ndev++)
            if (cuzk_gpu_key_from_view(&gk[d], &v, (int)d, NULL) != CUZK_OK)
                fail("gpu key");
        o.gpu_keys = gk;
        o.n_gpu_keys = ndev;
    }
    cuzk_proof *native = calloc(parts, sizeof *native);
    double native_best = 0;
    for (int i = -1; i < runs; i++) {
        cuzk_pending *pend;
        double t0 = now_ms();
        if (cuzk_groth16_prove_start_view(&pend, &v, cuzk_porep_witnesses(w), parts, nv, &o) !=
                CUZK_OK ||
            cuzk_groth16_prove_finish(native, NULL, pend) != CUZK_OK)
            fail("native prove");
        cuzk_groth16_pending_free(pend);
        double dt = now_ms() - t0;
        fprintf(stderr, "porep: native run %d: %.1f ms\n", i, dt);
        if (i == 0 || (i > 0 && dt < native_best))
            native_best = dt;
    }
    for (unsigned d = 0; d < ndev; d++)
        cuzk_groth16_gpu_key_free(gk[d]);
    cuzk_params_free(p);

    /* the ABI, as bellperson calls it */
    RustError e = cuzk_supraseal_set_option("backend", be == CUZK_BACKEND_CPU ? "cpu" : "gpu");
    if (!e.code)
        e = cuzk_supraseal_set_option("params", "trusted");
    SRS srs = {NULL};
    double t0 = now_ms();
    if (!e.code)
        e = create_SRS(&srs, key, false);
    double load_ms = now_ms() - t0;
    if (e.code) {
        fprintf(stderr, "abi: %s\n", e.message ? e.message : "?");
        return 2;
    }
    size_t pa, pbi, pba;
    uint64_t *a_aux = bits_slice(pv->a_density, n_inp, n_aux, &pa);
    uint64_t *b_inp = bits_slice(pv->b_density, 0, n_inp, &pbi);
    uint64_t *b_aux = bits_slice(pv->b_density, n_inp, n_aux, &pba);
    Assignment *as = calloc(parts, sizeof *as);
    fr_t *rs = calloc(parts, sizeof *rs), *ss = calloc(parts, sizeof *ss);
    groth16_proof *proofs = calloc(parts, sizeof *proofs);
    for (size_t j = 0; j < parts; j++) {
        const cuzk_fr *wj = cuzk_porep_witnesses(w)[j];
        as[j] = (Assignment){
            .a_aux_density = a_aux, .a_aux_bit_len = n_aux, .a_aux_popcount = pa,
            .b_inp_density = b_inp, .b_inp_bit_len = n_inp, .b_inp_popcount = pbi,
            .b_aux_density = b_aux, .b_aux_bit_len = n_aux, .b_aux_popcount = pba,
            .a = (const fr_t *)abc[j], .b = (const fr_t *)(abc[j] + n),
            .c = (const fr_t *)(abc[j] + 2 * n), .abc_size = n,
            .inp_assignment_data = (const fr_t *)wj, .inp_assignment_size = n_inp,
            .aux_assignment_data = (const fr_t *)(wj + n_inp), .aux_assignment_size = n_aux};
        memcpy(&rs[j], &r, sizeof r);
        memcpy(&ss[j], &s, sizeof s);
    }
    double abi_best = 0;
    for (int i = -1; i < runs; i++) {
        t0 = now_ms();
        e = generate_groth16_proofs_c(as, parts, rs, ss, proofs, &srs);
        double dt = now_ms() - t0;
        if (e.code) {
            fprintf(stderr, "abi: generate_groth16_proofs_c: %s\n", e.message ? e.message : "?");
            return 2;
        }
        fprintf(stderr, "porep: abi run %d: %.1f ms\n", i, dt);
        if (i == 0 || (i > 0 && dt < abi_best))
            abi_best = dt;
    }
    drop_SRS(&srs);
    int same = !memcmp(proofs, native, sizeof *native * parts);
    printf("porep-%u x%zu (%s): native %.1f ms, abi %.1f ms (%+.1f%%), best of %d; abi key load "
           "%.1f s (first call makes the resident keys); proofs %s\n",
           k, parts, backend, native_best, abi_best, 100.0 * (abi_best - native_best) / native_best,
           runs, load_ms / 1e3, same ? "equal" : "DIFFER");
    printf("{\"k\":%u,\"p\":%zu,\"backend\":\"%s\",\"native_ms\":%.1f,\"abi_ms\":%.1f,"
           "\"abi_load_ms\":%.1f,\"equal\":%s}\n",
           k, parts, backend, native_best, abi_best, load_ms, same ? "true" : "false");
    for (size_t j = 0; j < parts; j++)
        free(abc[j]);
    free(abc), free(native), free(as), free(rs), free(ss), free(proofs);
    free(a_aux), free(b_inp), free(b_aux);
    cuzk_porep_free(w);
    return same ? 0 : 1;
}
