/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench porep: whole batch proofs on the synthetic porep-k workload (WORKLOADS.md),
 * per stage, on the CPU and/or the GPU backend, and whether both give the same proofs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "config.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif
#include "gen/porep.h"
#include "groth16/gpu_prover.h"
#include "util/parallel.h"
#include "util/timing.h"


static void progress(const char *phase) { fprintf(stderr, "porep: %s...\n", phase); }

#define MAX_RUNS 16
#define DEV_STAGES 7
typedef struct {
    const char *name;
    double total[MAX_RUNS], prep[MAX_RUNS], h[MAX_RUNS], msm[MAX_RUNS], b2[MAX_RUNS], epi[MAX_RUNS];
    double dev[MAX_RUNS]; /* device time (locks held), summed over the devices */
    double stage[DEV_STAGES][MAX_RUNS]; /* the device time by stage (cuzk_prove_timings) */
    unsigned streamed; /* cuzk_gpu_key_streamed of device 0's key */
    bool h_affine;     /* cuzk_gpu_key_h_affine of device 0's key after the last run */
    double free_gib;   /* device 0's free memory then (GiB; 0 when not known) */
    double key_ms;
    int runs;
    cuzk_proof *proofs;
} backend_result;

static const char *const stage_names[DEV_STAGES] = {"abc", "ntt", "h_msm", "batch_add", "tail",
                                                    "b2",  "split_wait"};

static void free_keys(cuzk_gpu_key **gk, unsigned n)
{
    for (unsigned d = 0; d < n; d++)
        cuzk_groth16_gpu_key_free(gk[d]);
}

/* gpu: how the GPU backend's resident keys use their devices */
static int run_backend(backend_result *res, cuzk_backend be, const cuzk_porep *w, size_t parts, int runs,
                       unsigned threads, const cuzk_fr *const *abc, unsigned ndev,
                       const cuzk_gpu_opts *gpu)
{
    const cuzk_pk_view *v = cuzk_porep_view(w);
    cuzk_fr r, s;
    cuzk_fr_set_u64(&r, 1234567);
    cuzk_fr_set_u64(&s, 7654321);
    cuzk_prove_opts o = {.nthreads = threads, .backend = be, .test_r = &r, .test_s = &s, .abc = abc};
    cuzk_gpu_key *gk[CUZK_MAX_GPUS] = {NULL};
    if (be == CUZK_BACKEND_GPU) {
        /* a resident key per device; the batch spreads over them */
        double t0 = cuzk_now_ms();
        for (unsigned d = 0; d < ndev; d++)
            if (cuzk_gpu_key_from_view(&gk[d], v, (int)d, gpu) != CUZK_OK) {
                fprintf(stderr, "porep: gpu key on device %u: %s\n", d, cuzk_error_detail());
                free_keys(gk, ndev);
                return 1;
            }
        res->key_ms = cuzk_now_ms() - t0;
        res->streamed = cuzk_gpu_key_streamed(gk[0]);
        o.gpu_keys = gk;
        o.n_gpu_keys = ndev;
    }
    res->proofs = calloc(parts, sizeof(cuzk_proof));
    for (int i = -1; i < runs; i++) { /* run -1 is the warm-up */
        cuzk_pending *p = NULL;
        cuzk_prove_timings t;
        double t0 = cuzk_now_ms();
        cuzk_err e = cuzk_groth16_prove_start_view(&p, v, cuzk_porep_witnesses(w), parts,
                                                   cuzk_porep_witness_len(w), &o);
        if (e == CUZK_OK)
            e = cuzk_groth16_prove_finish(res->proofs, &t, p);
        cuzk_groth16_pending_free(p);
        double dt = cuzk_now_ms() - t0;
        if (e != CUZK_OK) {
            fprintf(stderr, "porep: prove (%s): %s\n", res->name, cuzk_error_detail());
            free_keys(gk, ndev);
            return 1;
        }
        fprintf(stderr, "porep: %s run %d: %.1f ms\n", res->name, i, dt);
        if (i < 0)
            continue;
        res->total[i] = dt;
        res->prep[i] = t.prep_ms;
        res->h[i] = t.h_ms;
        res->msm[i] = t.msm_ms;
        res->b2[i] = t.b_g2_ms;
        res->epi[i] = t.epilogue_ms;
        res->dev[i] = t.device_ms;
        const double st[DEV_STAGES] = {t.dev_abc_ms,       t.dev_ntt_ms,  t.dev_h_msm_ms,
                                       t.dev_batch_add_ms, t.dev_tail_ms, t.dev_b2_ms,
                                       t.dev_split_wait_ms};
        for (int j = 0; j < DEV_STAGES; j++)
            res->stage[j][i] = st[j];
        res->runs = i + 1;
    }
    if (be == CUZK_BACKEND_GPU) {
        res->h_affine = cuzk_gpu_key_h_affine(gk[0]);
#ifdef CUZK_HAVE_CUDA
        cuzk_gpu_device_info di;
        if (cuzk_gpu_device_query(&di, 0) == CUZK_OK)
            res->free_gib = (double)di.free_mem / (1u << 30);
#endif
    }
    free_keys(gk, ndev);
    return 0;
}

int cuzk_bench_porep(int argc, char **argv)
{
    unsigned k = 16, threads = 0, ndev = 0;
    size_t parts = 1;
    int runs = 3, json = 0, given_abc = 0;
    uint64_t seed = 1;
    const char *backend = "auto";
    cuzk_gpu_opts gpu;
    tool_env_gpu_opts(tool_env_get(), &gpu);
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc)
            k = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc)
            parts = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = argv[++i];
        else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
            ndev = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--abc"))
            given_abc = 1; /* a, b, c uniformly random and given, as in WORKLOADS.md */
        else if (!strcmp(argv[i], "--gpu") && i + 1 < argc) {
            if (tool_gpu_flag(&gpu, argv[++i], "cuzk-bench porep"))
                return 2;
        } else {
            fprintf(stderr, "usage: cuzk-bench porep [-k K] [-p PARTITIONS] [--runs N] [--seed S]\n"
                            "         [--threads N] [--backend cpu|gpu|both|auto] [--gpu NAME=VALUE]...\n"
                            "         [--abc] [--devices N] [--json]\n"
                            "  --backend: auto (default) is CUZK_BACKEND when set, else the GPU when\n"
                            "         one answers; both also checks that the two give the same proofs\n"
                            "  --devices: GPUs the batch spreads over (default: every visible one)\n"
                            "  --abc: a, b, c uniformly random and handed to the prover (WORKLOADS.md's\n"
                            "         definition, as bellperson hands them to SupraSeal): no synthesis\n"
                            "%s", tool_gpu_help);
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || parts < 1) {
        fprintf(stderr, "cuzk-bench porep: --runs 1..%d, -p >= 1\n", MAX_RUNS);
        return 2;
    }
    if (threads)
        cuzk_parallel_set_threads(threads);
    unsigned vis = cuzk_gpu_prover_devices();
    if (ndev == 0 || ndev > vis)
        ndev = vis;
    if (ndev > CUZK_MAX_GPUS)
        ndev = CUZK_MAX_GPUS;
    double t0 = cuzk_now_ms();
    cuzk_porep *w;
    if (cuzk_porep_new(&w, k, parts, seed, progress) != CUZK_OK) {
        fprintf(stderr, "cuzk-bench porep: %s\n", cuzk_error_detail());
        return 1;
    }
    const cuzk_pk_view *v = cuzk_porep_view(w);
    cuzk_fr **abc = NULL;
    if (given_abc) {
        size_t n3 = (size_t)3 << k;
        abc = calloc(parts, sizeof *abc);
        for (size_t j = 0; abc && j < parts; j++) {
            abc[j] = malloc(sizeof(cuzk_fr) * n3);
            if (!abc[j]) {
                fprintf(stderr, "cuzk-bench porep: out of memory for a, b, c\n");
                return 1;
            }
            cuzk_bench_random_fr(abc[j], n3, seed * 1000 + j);
        }
    }
    double gen_ms = cuzk_now_ms() - t0;

    backend_result res[2];
    memset(res, 0, sizeof res);
    int nb = 0;
    bool want_cpu = !strcmp(backend, "cpu") || !strcmp(backend, "both");
    bool want_gpu = !strcmp(backend, "gpu") || !strcmp(backend, "both");
    if (!strcmp(backend, "auto")) {
        cuzk_prove_opts auto_opts = {.backend = tool_env_get()->backend};
        if (cuzk_groth16_backend(&auto_opts) == CUZK_BACKEND_GPU)
            want_gpu = true;
        else
            want_cpu = true;
    }
    int rc = 0;
    if (want_gpu) {
        res[nb].name = "gpu";
        rc |= run_backend(&res[nb++], CUZK_BACKEND_GPU, w, parts, runs, threads, (const cuzk_fr *const *)abc, ndev,
                          &gpu);
    }
    if (want_cpu && rc == 0) {
        res[nb].name = "cpu";
        rc |= run_backend(&res[nb++], CUZK_BACKEND_CPU, w, parts, runs, threads, (const cuzk_fr *const *)abc, ndev,
                          &gpu);
    }
    int same = -1;
    if (rc == 0 && nb == 2) {
        same = 1;
        for (size_t j = 0; j < parts; j++)
            if (!cuzk_g1_affine_eq(&res[0].proofs[j].a, &res[1].proofs[j].a) ||
                !cuzk_g2_affine_eq(&res[0].proofs[j].b, &res[1].proofs[j].b) ||
                !cuzk_g1_affine_eq(&res[0].proofs[j].c, &res[1].proofs[j].c))
                same = 0;
    }
    if (rc == 0) {
        printf("porep-%u x%zu (synthetic: random key, proofs do not verify%s), seed %llu, %u threads\n"
               "  constraints %u, wires %u, A-dense %zu, B-dense %zu, key %.1f MiB, workload built in %.1f s,"
               " %u device(s) for the gpu backend\n",
               k, parts, given_abc ? "; a, b, c given, no synthesis" : "", (unsigned long long)seed,
               threads ? threads : cuzk_parallel_threads(), (unsigned)v->n_rows, v->n_vars, cuzk_porep_a_count(w), cuzk_porep_b_count(w),
               (double)cuzk_porep_key_bytes(w) / (1 << 20), gen_ms / 1e3, ndev);
        printf("%-8s %10s %10s %10s %10s %10s %10s %10s %10s\n", "backend", "total_ms", "prep_ms", "h_ms",
               "msm_ms", "b_g2_ms", "epi_ms", "device_ms", "key_ms");
        for (int b = 0; b < nb; b++) {
            backend_result *r = &res[b];
            printf("%-8s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", r->name,
                   cuzk_median(r->total, (size_t)r->runs), cuzk_median(r->prep, (size_t)r->runs), cuzk_median(r->h, (size_t)r->runs),
                   cuzk_median(r->msm, (size_t)r->runs), cuzk_median(r->b2, (size_t)r->runs), cuzk_median(r->epi, (size_t)r->runs),
                   cuzk_median(r->dev, (size_t)r->runs), r->key_ms);
        }
        for (int b = 0; b < nb; b++) {
            backend_result *r = &res[b];
            if (cuzk_median(r->dev, (size_t)r->runs) <= 0)
                continue;
            printf("%s device time by stage (ms, batch, median):", r->name);
            for (int j = 0; j < DEV_STAGES; j++)
                printf(" %s %.1f", stage_names[j], cuzk_median(r->stage[j], (size_t)r->runs));
            printf("\n");
            printf("%s H MSM accumulation: %s; device free with the key resident: %.1f GiB\n",
                   r->name, r->h_affine ? "batch-affine" : "XYZZ", r->free_gib);
            if (r->streamed) {
                static const char *const names[] = CUZK_GPU_KEY_BASES_NAMES;
                printf("%s bases streamed from host memory:", r->name);
                for (int j = 0; j < 5; j++)
                    if (r->streamed & (1u << j))
                        printf(" %s", names[j]);
                printf("\n");
            }
        }
        if (same >= 0)
            printf("gpu and cpu proofs (fixed r, s): %s\n", same ? "identical" : "DIFFERENT");
        if (json) {
            printf("{\"workload\":\"porep-%u\",\"partitions\":%zu,\"seed\":%llu,\"runs\":%d,\"devices\":%u", k, parts,
                   (unsigned long long)seed, runs, ndev);
            for (int b = 0; b < nb; b++) {
                backend_result *r = &res[b];
                printf(",\"%s\":{\"total_ms\":%.1f,\"prep_ms\":%.1f,\"h_ms\":%.1f,\"msm_ms\":%.1f,"
                       "\"b_g2_ms\":%.1f,\"epilogue_ms\":%.1f,\"device_ms\":%.1f,\"key_ms\":%.1f}",
                       r->name, cuzk_median(r->total, (size_t)r->runs), cuzk_median(r->prep, (size_t)r->runs), cuzk_median(r->h, (size_t)r->runs),
                       cuzk_median(r->msm, (size_t)r->runs), cuzk_median(r->b2, (size_t)r->runs), cuzk_median(r->epi, (size_t)r->runs),
                       cuzk_median(r->dev, (size_t)r->runs), r->key_ms);
                if (cuzk_median(r->dev, (size_t)r->runs) > 0) {
                    printf(",\"%s_stages\":{", r->name);
                    for (int j = 0; j < DEV_STAGES; j++)
                        printf("%s\"%s_ms\":%.1f", j ? "," : "", stage_names[j],
                               cuzk_median(r->stage[j], (size_t)r->runs));
                    printf("},\"%s_streamed\":%u,\"%s_h_affine\":%s", r->name, r->streamed,
                           r->name, r->h_affine ? "true" : "false");
                }
            }
            if (same >= 0)
                printf(",\"identical\":%s", same ? "true" : "false");
            printf("}\n");
        }
    }
    for (int b = 0; b < nb; b++)
        free(res[b].proofs);
    for (size_t j = 0; abc && j < parts; j++)
        free(abc[j]);
    free(abc);
    cuzk_porep_free(w);
    if (same == 0)
        return 1;
    return rc;
}
