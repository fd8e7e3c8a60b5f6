/*
 * cuzk-bench kernels: the CPU's and (in a CUDA build with a device) the GPU's Fr NTT and G1
 * MSM side by side on the same data (WORKLOADS.md ntt-k / msm-k: uniform random scalars,
 * distinct random points; the GPU's NTT data and MSM bases resident on the device; the MSM
 * timed from scalars in page-locked host memory (the default accumulation, AUTO) and from
 * scalars already on the device, to the result on the host, there with XYZZ (msm_dev) and
 * with the batch-affine accumulation (msm_aff). Median of --runs after a warm-up; the results
 * are compared. --profile: each GPU MSM's stage times (of its last run) on stderr.
 * --ntt-only: the NTTs alone (no points made, no MSM; up to 2^28 in little time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gen/porep.h"
#include "cuzk/msm.h"
#include "cuzk/poly.h"
#include "util/parallel.h"
#include "util/timing.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif


#define MAX_RUNS 16
typedef struct {
    double v[MAX_RUNS];
    int n;
} samples;

typedef struct {
    unsigned k;
    double ntt_cpu, ntt_gpu, msm_cpu, msm_gpu, msm_dev, msm_aff, badd_gpu, msm_pre, msm_pre_aff;
    int ntt_same, msm_same; /* -1: not compared */
} row;


/* dst = the median of `runs` timings of call (a cuzk_err expression) after one untimed
 * warm-up; returns 1 from the enclosing function when call fails. Uses its `s` and `runs`. */
#define TIMED(dst, call)                                                                  \
    do {                                                                                  \
        s.n = 0;                                                                          \
        for (int i_ = -1; i_ < runs; i_++) {                                              \
            double t0_ = cuzk_now_ms();                                                   \
            if ((call) != CUZK_OK)                                                        \
                return 1;                                                                 \
            if (i_ >= 0)                                                                  \
                s.v[s.n++] = cuzk_now_ms() - t0_;                                         \
        }                                                                                 \
        print_samples(#dst, &s); /* before the median, which sorts them */               \
        dst = cuzk_median(s.v, (size_t)s.n);                                              \
    } while (0)

static unsigned g_window; /* --window: the GPU MSMs' window (0: chosen from n) */
static bool g_profile;    /* --profile */
static bool g_ntt_only;   /* --ntt-only: no MSM, no batch add */
static int g_pre = -1;    /* --pre C: the MSMs again with precomputed multiples (0: window chosen) */

/* --profile: every run's time of a column in run order, one line on stderr (a bimodal
 * column shows itself here, not in the median). */
static void print_samples(const char *what, const samples *s)
{
    if (!g_profile)
        return;
    fprintf(stderr, "cuzk-bench kernels: %s runs:", what);
    for (int i = 0; i < s->n; i++)
        fprintf(stderr, " %.3f", s->v[i]);
    fprintf(stderr, " ms\n");
}

#ifdef CUZK_HAVE_CUDA
/* --profile: the stage times of m's last MSM, one line on stderr. */
static void print_profile(cuzk_gpu_msm *m, const char *what)
{
    cuzk_gpu_msm_profile p;
    if (!g_profile || cuzk_gpu_msm_profile_get(m, &p) != CUZK_OK || p.runs == 0)
        return;
    fprintf(stderr, "gpu msm g1 n=%zu c=%u W=%u (%s%s): upload %.3f digits %.3f sort %.3f "
            "accumulate %.3f partials %.3f bucket_sums %.3f window_reduce %.3f ms", p.terms,
            p.window, p.windows, what, p.affine ? ", affine" : p.precomputed ? ", precomputed" : "", p.upload_ms, p.digits_ms,
            p.sort_ms, p.accumulate_ms, p.partials_ms, p.bucket_sums_ms, p.window_reduce_ms);
    if (p.affine)
        fprintf(stderr, " (plan %.3f, %u slices, up to %u rounds: rounds %.3f, xyzz_finish %.3f)",
                p.affine_plan_ms, p.affine_slices, p.affine_rounds, p.affine_rounds_ms,
                p.affine_finish_ms);
    fprintf(stderr, "\n");
}
#endif

static int bench_k(row *rw, unsigned k, int runs, bool cpu, bool gpu)
{
    size_t n = (size_t)1 << k;
    rw->k = k;
    rw->ntt_cpu = rw->ntt_gpu = rw->msm_cpu = rw->msm_gpu = rw->msm_dev = rw->msm_aff = rw->badd_gpu = -1;
    rw->msm_pre = rw->msm_pre_aff = -1;
    rw->ntt_same = rw->msm_same = -1;
    cuzk_fr *x = malloc(sizeof(cuzk_fr) * n), *y = malloc(sizeof(cuzk_fr) * n);
    cuzk_fr *ref = malloc(sizeof(cuzk_fr) * n);
    cuzk_g1_affine *pts = g_ntt_only ? NULL : cuzk_bench_random_g1(n, 7 + k);
    if (!x || !y || !ref || (!pts && !g_ntt_only)) {
        fprintf(stderr, "cuzk-bench kernels: out of memory at 2^%u\n", k);
        free(x), free(y), free(ref), free(pts);
        return 1;
    }
    cuzk_bench_random_fr(x, n, 11 + k);
    cuzk_g1_jac r_cpu, r_gpu;
    cuzk_domain *d = NULL;
    samples s;
    if (cpu) {
        if (cuzk_domain_new(&d, k, CUZK_ROOTS_BELLMAN) != CUZK_OK)
            return 1;
        s.n = 0;
        for (int i = -1; i < runs; i++) {
            memcpy(y, x, sizeof(cuzk_fr) * n);
            double t0 = cuzk_now_ms();
            cuzk_ntt_forward(d, y, 0);
            if (i >= 0)
                s.v[s.n++] = cuzk_now_ms() - t0;
        }
        rw->ntt_cpu = cuzk_median(s.v, (size_t)s.n);
        memcpy(ref, y, sizeof(cuzk_fr) * n);
        if (!g_ntt_only)
            TIMED(rw->msm_cpu, cuzk_g1_msm_fr(&r_cpu, NULL, pts, x, n, NULL));
        cuzk_domain_free(d);
    }
#ifdef CUZK_HAVE_CUDA
    if (gpu) {
        cuzk_gpu_domain *gd = NULL;
        cuzk_gpu_msm *m = NULL;
        if (cuzk_gpu_domain_new(&gd, 0, k, CUZK_ROOTS_BELLMAN) != CUZK_OK ||
            cuzk_gpu_domain_load(gd, 0, x) != CUZK_OK) {
            fprintf(stderr, "cuzk-bench kernels: gpu: %s\n", cuzk_error_detail());
            cuzk_gpu_domain_free(gd);
            return 1;
        }
        TIMED(rw->ntt_gpu, cuzk_gpu_domain_ntt(gd, 0, false)); /* synchronous: returns when done */
        /* one forward transform of x, for the comparison */
        if (cpu && cuzk_gpu_domain_load(gd, 0, x) == CUZK_OK && cuzk_gpu_domain_ntt(gd, 0, false) == CUZK_OK &&
            cuzk_gpu_domain_store(gd, 0, y) == CUZK_OK)
            rw->ntt_same = memcmp(y, ref, sizeof(cuzk_fr) * n) == 0;
        if (g_ntt_only) {
            cuzk_gpu_domain_free(gd);
            goto done;
        }
        if (cuzk_gpu_msm_new(&m, 0, pts, n) != CUZK_OK ||
            cuzk_gpu_msm_set_profile(m, g_profile) != CUZK_OK) {
            fprintf(stderr, "cuzk-bench kernels: gpu msm: %s\n", cuzk_error_detail());
            cuzk_gpu_domain_free(gd);
            return 1;
        }
        /* the MSM with its scalars in page-locked host memory (the upload timed), then with
         * them already on the device (a domain slot), as the prover's H MSM reads them */
        cuzk_fr *xp = NULL;
        const cuzk_fr *xs = x;
        if (cuzk_gpu_host_alloc((void **)&xp, sizeof(cuzk_fr) * n) == CUZK_OK) {
            memcpy(xp, x, sizeof(cuzk_fr) * n);
            xs = xp;
        }
        TIMED(rw->msm_gpu, cuzk_gpu_g1_msm_fr(m, &r_gpu, xs, n, g_window));
        print_profile(m, "msm_gpu");
        cuzk_gpu_host_free(xp);
        void *xd = NULL;
        cuzk_g1_jac r_dev;
        if (cuzk_gpu_domain_load(gd, 1, x) == CUZK_OK && cuzk_gpu_domain_slot_dev(gd, 1, &xd, NULL) == CUZK_OK) {
            /* with XYZZ, then with the batch-affine accumulation */
            if (cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_XYZZ) != CUZK_OK)
                return 1;
            TIMED(rw->msm_dev, cuzk_gpu_g1_msm_fr_dev(m, &r_dev, xd, n, g_window));
            print_profile(m, "msm_dev");
            if (!cuzk_g1_jac_eq(&r_dev, &r_gpu))
                rw->msm_same = 0; /* the two GPU entries disagree */
            if (cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_AFFINE) != CUZK_OK)
                return 1;
            TIMED(rw->msm_aff, cuzk_gpu_g1_msm_fr_dev(m, &r_dev, xd, n, g_window));
            print_profile(m, "msm_aff");
            if (cuzk_gpu_msm_accumulation_used(m) != CUZK_GPU_MSM_ACC_AFFINE)
                fprintf(stderr, "cuzk-bench kernels: 2^%u: the affine accumulation fell back to xyzz\n", k);
            if (!cuzk_g1_jac_eq(&r_dev, &r_gpu))
                rw->msm_same = 0;
        }
        /* batch add of the 2^k bases with half the bits set (the bit vector uploaded) */
        size_t words = CUZK_MSM_BITVEC_WORDS(n);
        uint64_t *bits = malloc(words * sizeof *bits);
        if (bits) {
            cuzk_fr wb;
            for (size_t w = 0; w < words; w++) {
                cuzk_bench_random_fr(&wb, 1, 1000 + w);
                bits[w] = wb.l[0] ^ wb.l[1];
            }
            cuzk_g1_jac rb;
            TIMED(rw->badd_gpu, cuzk_gpu_g1_batch_add(m, &rb, bits, n));
            free(bits);
        }
        /* --pre: the precomputed multiples, then the MSM with XYZZ and batch-affine */
        if (g_pre >= 0 && xd) {
            double t0 = cuzk_now_ms();
            if (cuzk_gpu_msm_precompute(m, (unsigned)g_pre) != CUZK_OK) {
                fprintf(stderr, "cuzk-bench kernels: 2^%u: precompute: %s\n", k, cuzk_error_detail());
            } else {
                fprintf(stderr, "cuzk-bench kernels: 2^%u: precomputed multiples (window %u) in %.1f ms\n", k,
                        g_pre ? (unsigned)g_pre : cuzk_gpu_msm_window_precomputed(n), cuzk_now_ms() - t0);
                if (cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_XYZZ) != CUZK_OK)
                    return 1;
                TIMED(rw->msm_pre, cuzk_gpu_g1_msm_fr_dev(m, &r_dev, xd, n, g_window));
                print_profile(m, "msm_pre");
                if (!cuzk_gpu_msm_precomputed_used(m))
                    fprintf(stderr, "cuzk-bench kernels: 2^%u: the precomputed multiples were not used\n", k);
                if (!cuzk_g1_jac_eq(&r_dev, &r_gpu))
                    rw->msm_same = 0;
                if (cuzk_gpu_msm_set_accumulation(m, CUZK_GPU_MSM_ACC_AFFINE) != CUZK_OK)
                    return 1;
                TIMED(rw->msm_pre_aff, cuzk_gpu_g1_msm_fr_dev(m, &r_dev, xd, n, g_window));
                print_profile(m, "msm_pre_aff");
                if (!cuzk_g1_jac_eq(&r_dev, &r_gpu))
                    rw->msm_same = 0;
            }
        }
        cuzk_gpu_domain_free(gd);
        cuzk_gpu_msm_free(m);
        if (cpu && rw->msm_same != 0)
            rw->msm_same = cuzk_g1_jac_eq(&r_cpu, &r_gpu);
    }
#else
    (void)gpu;
    (void)r_gpu;
#endif
#ifdef CUZK_HAVE_CUDA
done:
#endif
    free(x);
    free(y);
    free(ref);
    free(pts);
    return 0;
}

int cuzk_bench_kernels(int argc, char **argv)
{
    unsigned ks[32];
    int nk = 0, runs = 3, json = 0;
    const char *backend = "both";
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc && nk < 32)
            ks[nk++] = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--window") && i + 1 < argc)
            g_window = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--profile"))
            g_profile = true;
        else if (!strcmp(argv[i], "--ntt-only"))
            g_ntt_only = true;
        else if (!strcmp(argv[i], "--pre") && i + 1 < argc)
            g_pre = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: cuzk-bench kernels [-k K]... [--runs N] [--backend cpu|gpu|both] [--json]"
                             " [--window C (GPU MSMs, 1..22; default chosen from n)] [--profile] [--ntt-only]"
                             " [--pre C (the GPU MSMs again on precomputed multiples, window C; 0: chosen)]\n");
            return 2;
        }
    }
    if (nk == 0)
        ks[nk++] = 16;
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "cuzk-bench kernels: --runs 1..%d\n", MAX_RUNS);
        return 2;
    }
    bool cpu = strcmp(backend, "gpu") != 0, gpu = strcmp(backend, "cpu") != 0;
#ifdef CUZK_HAVE_CUDA
    if (gpu && !cuzk_gpu_available()) {
        fprintf(stderr, "cuzk-bench kernels: no GPU (%s): CPU only\n", cuzk_error_detail());
        gpu = false;
    }
#else
    gpu = false;
#endif
    row rows[32];
    int rc = 0;
    for (int i = 0; i < nk && rc == 0; i++) {
        if (ks[i] < 1 || ks[i] > 28) {
            fprintf(stderr, "cuzk-bench kernels: k must be 1..28\n");
            return 2;
        }
        rc = bench_k(&rows[i], ks[i], runs, cpu, gpu);
        if (rc)
            nk = i;
    }
    printf("kernels: median of %d after a warm-up, %u CPU threads%s\n", runs, cuzk_parallel_threads(),
           gpu ? "; GPU: NTT data and MSM bases resident, msm_gpu with the scalars uploaded from "
                 "page-locked memory (default accumulation), msm_dev with them on the device "
                 "(XYZZ), msm_aff the same with the batch-affine accumulation, batch add of half "
                 "the bases; with --pre, msm_pre and msm_pre_aff: msm_dev and msm_aff on the "
                 "precomputed multiples" : "");
    printf("%-6s %12s %12s %12s %12s %12s %12s %12s %12s %12s %8s %8s\n", "k", "ntt_cpu_ms", "ntt_gpu_ms",
           "msm_cpu_ms", "msm_gpu_ms", "msm_dev_ms", "msm_aff_ms", "badd_gpu_ms", "msm_pre_ms", "msm_pre_aff",
           "ntt_eq", "msm_eq");
    for (int i = 0; i < nk; i++) {
        row *r = &rows[i];
        printf("2^%-4u %12.3f %12.3f %12.3f %12.3f %12.3f %12.3f %12.3f %12.3f %12.3f %8s %8s\n", r->k,
               r->ntt_cpu, r->ntt_gpu, r->msm_cpu, r->msm_gpu, r->msm_dev, r->msm_aff, r->badd_gpu, r->msm_pre,
               r->msm_pre_aff,
               r->ntt_same < 0 ? "-" : r->ntt_same ? "yes" : "NO",
               r->msm_same < 0 ? "-" : r->msm_same ? "yes" : "NO");
        if (r->ntt_same == 0 || r->msm_same == 0)
            rc = 1;
    }
    if (json) {
        printf("[");
        for (int i = 0; i < nk; i++)
            printf("%s{\"k\":%u,\"ntt_cpu_ms\":%.3f,\"ntt_gpu_ms\":%.3f,\"msm_cpu_ms\":%.3f,\"msm_gpu_ms\":%.3f,"
                   "\"msm_dev_ms\":%.3f,\"msm_affine_ms\":%.3f,\"batch_add_gpu_ms\":%.3f,\"msm_pre_ms\":%.3f,"
                   "\"msm_pre_affine_ms\":%.3f}",
                   i ? "," : "", rows[i].k, rows[i].ntt_cpu, rows[i].ntt_gpu, rows[i].msm_cpu, rows[i].msm_gpu,
                   rows[i].msm_dev, rows[i].msm_aff, rows[i].badd_gpu, rows[i].msm_pre, rows[i].msm_pre_aff);
        printf("]\n");
    }
    return rc;
}
