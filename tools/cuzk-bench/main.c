/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench: benchmarks.
 *   cuzk-bench micro [--json] [--impl portable|adx]   ns/op of field, curve and pairing ops
 *   cuzk-bench porep ...   the synthetic porep-k workload (tools/cuzk-bench/porep.c)
 *   cuzk-bench kernels ... CPU and GPU NTT and MSM side by side (tools/cuzk-bench/kernels.c)
 *   cuzk-bench tails ...   a porep-k partition's split MSMs over windows (tools/cuzk-bench/tails.c)
 *   cuzk-bench scale ...   real setup in memory + real proofs that verify, per stage, with
 *                          peak host memory (tools/cuzk-bench/scale.c)
 *   cuzk-bench single|batch|status|metrics|health|preload|evict ...   a cuzk-daemon's client, or
 *       the library in this process (--in-process); see tools/cuzk-bench/ and --help
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk/version.h"
#include "cuzk/ec.h"
#include "cuzk/pairing.h"

#include "bench.h"
#include "config.h"


static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x1234567887654321ULL;
static uint64_t rng64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rand_fp(cuzk_fp *r)
{
    uint8_t b[48];
    for (int i = 0; i < 48; i++)
        b[i] = (uint8_t)rng64();
    b[47] &= 0x0f;
    if (cuzk_fp_from_bytes_le(r, b) != CUZK_OK)
        cuzk_fp_set_u64(r, rng64());
}

static void rand_fr(cuzk_fr *r)
{
    uint8_t b[32];
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)rng64();
    cuzk_fr_from_bytes_le_reduce(r, b);
}

typedef struct {
    const char *name;
    double ns;
} result;

#define MAXRES 32
static result results[MAXRES];
static int nres;

static void record(const char *name, double ns)
{
    if (nres < MAXRES)
        results[nres++] = (result){name, ns};
}

/* Times `body` (a statement using index i) over `iters` iterations, best of 5 rounds. */
#define TIME_OP(label, iters, body)                                    \
    do {                                                               \
        double best_ = 1e30;                                           \
        for (int round_ = 0; round_ < 5; round_++) {                   \
            double t0_ = now_ns();                                     \
            for (long i = 0; i < (long)(iters); i++) {                 \
                body;                                                  \
            }                                                          \
            double dt_ = (now_ns() - t0_) / (double)(iters);           \
            if (dt_ < best_)                                           \
                best_ = dt_;                                           \
        }                                                              \
        record(label, best_);                                          \
    } while (0)

static volatile uint64_t sink;

static int cmd_micro(int argc, char **argv)
{
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--impl") && i + 1 < argc) {
            const char *v = argv[++i];
            cuzk_ff_impl impl;
            cuzk_err e = cuzk_ff_impl_parse(&impl, v);
            if (e == CUZK_OK)
                e = cuzk_ff_set_impl(impl);
            if (e != CUZK_OK) {
                fprintf(stderr, "cuzk-bench micro: --impl %s: %s\n", v, cuzk_error_detail());
                return 2;
            }
        } else {
            fprintf(stderr, "usage: cuzk-bench micro [--json] [--impl portable|adx]\n");
            return 2;
        }
    }

    cuzk_fp a, b;
    cuzk_fr x, y;
    rand_fp(&a);
    rand_fp(&b);
    rand_fr(&x);
    rand_fr(&y);

    /* Dependent chains so the compiler cannot hoist or overlap the work away. */
    TIME_OP("fp_mul", 2000000, cuzk_fp_mul(&a, &a, &b));
    TIME_OP("fp_sqr", 2000000, cuzk_fp_sqr(&a, &a));
    TIME_OP("fr_mul", 2000000, cuzk_fr_mul(&x, &x, &y));
    TIME_OP("fp_inv", 2000, cuzk_fp_inv(&a, &a));
    TIME_OP("fp_inv_var", 2000, cuzk_fp_inv_var(&a, &a));
    sink = a.l[0] ^ x.l[0];

    /* Curve points: a chain of mixed additions of random multiples of the generator. */
    enum { NP = 64 };
    cuzk_g1_affine g1, p1[NP];
    cuzk_g2_affine g2, p2[NP];
    cuzk_g1_jac j1[NP], acc1;
    cuzk_g2_jac j2[NP], acc2;
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);
    cuzk_g1_jac_from_affine(&acc1, &g1);
    cuzk_g2_jac_from_affine(&acc2, &g2);
    for (int k = 0; k < NP; k++) {
        uint64_t s[4] = {rng64(), rng64(), rng64(), rng64() >> 2};
        cuzk_g1_mul_var(&j1[k], &acc1, s, 254);
        cuzk_g2_mul_var(&j2[k], &acc2, s, 254);
    }
    cuzk_g1_batch_to_affine(p1, j1, NP);
    cuzk_g2_batch_to_affine(p2, j2, NP);

    TIME_OP("g1_add_affine", 200000, cuzk_g1_jac_add_affine_var(&acc1, &acc1, &p1[i & (NP - 1)]));
    TIME_OP("g1_dbl", 200000, cuzk_g1_jac_dbl(&acc1, &acc1));
    cuzk_g1_xyzz xz1;
    cuzk_g1_xyzz_from_affine(&xz1, &p1[0]);
    TIME_OP("g1_xyzz_add_affine", 200000, cuzk_g1_xyzz_add_affine_var(&xz1, &xz1, &p1[1 + (i & (NP - 2))]));
    TIME_OP("g2_add_affine", 100000, cuzk_g2_jac_add_affine_var(&acc2, &acc2, &p2[i & (NP - 1)]));
    TIME_OP("g2_dbl", 100000, cuzk_g2_jac_dbl(&acc2, &acc2));
    sink = acc1.x.l[0] ^ acc2.x.c0.l[0] ^ xz1.x.l[0];

    cuzk_fp12 f;
    TIME_OP("pairing", 50, cuzk_pairing(&f, &p1[i & (NP - 1)], &p2[i & (NP - 1)]));
    TIME_OP("multi_pairing_4", 30, cuzk_multi_pairing(&f, &p1[4 * (i & 7)], &p2[4 * (i & 7)], 4));
    sink = f.c0.c0.c0.l[0];

    const char *impl = cuzk_ff_impl_name(cuzk_ff_get_impl());
    if (json) {
        printf("{\"impl\":\"%s\",\"ns_per_op\":{", impl);
        for (int k = 0; k < nres; k++)
            printf("%s\"%s\":%.1f", k ? "," : "", results[k].name, results[k].ns);
        printf("}}\n");
    } else {
        printf("cuzk-bench micro (field back end: %s, best of 5 rounds)\n", impl);
        printf("%-22s %14s\n", "operation", "ns/op");
        for (int k = 0; k < nres; k++)
            printf("%-22s %14.1f\n", results[k].name, results[k].ns);
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cuzk-bench <command> [options]   (cuzk-bench --version: the version)\n"
               "commands:\n"
               "  micro [--json] [--impl portable|adx]   ns/op of field, curve and pairing operations\n"
               "  porep [-k K] [-p PARTITIONS] [--runs N] [--backend cpu|gpu|both|auto] [--gpu NAME=VALUE]...\n"
               "        [--json]                   whole proofs on the synthetic porep-k workload, per stage\n"
               "  kernels [-k K]... [--runs N] [--backend cpu|gpu|both] [--json] [--ntt-only]\n"
               "                                   Fr NTT and G1 MSM of 2^K, CPU and GPU side by side\n"
               "  scale --r1cs C.r1cs --witness W.wtns... [--format params|zkey] [--out DIR] [--runs N]\n"
               "        [--gpu NAME=VALUE]... [--json]\n"
               "                                   setup in memory (key never written), one batch proof,\n"
               "                                   verification; time and peak RSS per stage (scale -h)\n"
               "  prep [-k K] [--threads T] [--runs N] [--json]\n"
               "                                   the CPU side of a GPU partition (witness copy, split\n"
               "                                   bit vectors and scalars), beside the reference way\n"
               "  tails [-k K] [--runs N] [--windows LO-HI] [--only A,B1,L,B2] [--json]\n"
               "                                   the split MSMs of a porep-K partition on the device\n"
               "                                   over windows and accumulations (tails -h)\n");
    bench_usage_cmds(f);
    fprintf(f, "options of porep and scale:\n%s%s", tool_gpu_help, tool_env_help);
}

/* The lines of usage that describe cmd (its line and those continuing it), then the options. */
static void usage_cmd(FILE *f, const char *cmd)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        usage(f);
        return;
    }
    usage(m);
    fclose(m);
    fprintf(f, "usage: cuzk-bench %s [options]   (cuzk-bench --help: every command)\n", cmd);
    size_t cl = strlen(cmd);
    bool in = false, opts = false;
    for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        int n = nl ? (int)(nl - line) : (int)strlen(line);
        opts = opts || !strncmp(line, "options", 7);
        if (!opts && line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
            in = !strncmp(line + 2, cmd, cl) && (line[2 + cl] == ' ' || line[2 + cl] == '\n');
        if (in || opts)
            fprintf(f, "%.*s\n", n, line);
    }
    free(buf);
}

/* A command's -h or --help, anywhere among its arguments (scale and prep answer their own). */
static bool cmd_help(int argc, char **argv)
{
    static const char *const names[] = {"micro", "porep", "kernels", "single", "batch",
                                        "status", "metrics", "preload", "evict", "health"};
    bool known = false;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        known = known || !strcmp(argv[1], names[k]);
    for (int i = 2; known && i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage_cmd(stdout, argv[1]);
            return true;
        }
    return false;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("%s %s\n", "cuzk-bench", cuzk_version());
        return 0;
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    if (cmd_help(argc, argv))
        return 0;
    tool_env env;
    if (tool_env_init(&env, "cuzk-bench"))
        return 2;
    if (!strcmp(argv[1], "micro"))
        return cmd_micro(argc - 2, argv + 2);
    if (!strcmp(argv[1], "porep"))
        return cuzk_bench_porep(argc - 2, argv + 2);
    if (!strcmp(argv[1], "kernels"))
        return cuzk_bench_kernels(argc - 2, argv + 2);
    if (!strcmp(argv[1], "scale"))
        return cuzk_bench_scale(argc - 2, argv + 2);
    if (!strcmp(argv[1], "prep"))
        return cuzk_bench_prep(argc - 2, argv + 2);
    if (!strcmp(argv[1], "tails"))
        return cuzk_bench_tails(argc - 2, argv + 2);
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"single", bench_cmd_single},   {"batch", bench_cmd_batch},     {"status", bench_cmd_status},
                {"metrics", bench_cmd_metrics}, {"preload", bench_cmd_preload}, {"evict", bench_cmd_evict},
                {"health", bench_cmd_health}};
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        if (!strcmp(argv[1], cmds[k].name)) {
            if (bench_http_global_init()) {
                fprintf(stderr, "cuzk-bench: libcurl failed to initialise\n");
                return 2;
            }
            return cmds[k].fn(argc - 2, argv + 2);
        }
    }
    fprintf(stderr, "cuzk-bench: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
