/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench scale: a real Groth16 setup and real proofs of a circom circuit, in one process,
 * without ever writing the proving key to disk (at domain 2^27 a .params key is ~48 GB and
 * does not fit on the disk next to its 25 GB .r1cs).
 *
 *   .r1cs load -> setup in memory (.params: bellman/bellperson key; .zkey: snarkjs key)
 *   -> verification key -> witnesses -> (GPU: resident keys, one per device used)
 *   -> one batch proof of every witness, --runs times -> cuzk_groth16_verify of every proof
 *   -> (--out DIR) vk.json, proof-<i>.json, public-<i>.json (snarkjs JSON) and, for params,
 *      proof-<i>.bin (Filecoin's 192 bytes).
 *
 * Each stage reports its wall time, the peak resident set of the stage (VmHWM, reset before
 * the stage through /proc/self/clear_refs when the kernel allows it) and the resident set
 * after it (VmRSS). Memory is freed as early as it can be: the .r1cs structure right after a
 * snarkjs setup (the key holds the rows it needs), the resident GPU keys (and the pinned work
 * buffers they keep) right after the last proof.
 *
 * Exit status: 0 when every proof verifies, 1 when one does not or a stage fails (the
 * message names the file), 2 for bad usage.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "config.h"
#include "cuzk/gpu.h"
#include "cuzk/params.h"
#include "cuzk/setup.h"
#include "groth16/bellman.h"
#include "groth16/gpu_prover.h"
#include "groth16/pk.h"
#include "util/parallel.h"
#include "util/timing.h"


#define SCALE_MAX_RUNS 64
#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- host memory ---- */

/* VmHWM and VmRSS of this process in bytes (0 when /proc is not readable). */
static void read_mem(double *hwm, double *rss)
{
    *hwm = *rss = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned long long kb;
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
            *hwm = (double)kb * 1024.0;
        else if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
            *rss = (double)kb * 1024.0;
    }
    fclose(f);
}

/* Resets VmHWM to the current RSS (Linux 4.0+), so the next reading is the peak of one
 * stage. Returns false when the kernel refuses: the readings are then process peaks. */
static bool reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return false;
    bool ok = fputs("5", f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok;
}

typedef struct {
    const char *name;
    double ms;
    double hwm, rss; /* bytes */
} stage_rec;

#define MAX_STAGES 16
typedef struct {
    stage_rec st[MAX_STAGES];
    int n;
    double t0;
    double peak; /* the process's peak over every stage */
    bool per_stage;
} stages;

static void stage_begin(stages *s, const char *what)
{
    fprintf(stderr, "scale: %s...\n", what);
    fflush(stderr);
    s->per_stage = reset_hwm();
    s->t0 = cuzk_now_ms();
}

static void stage_end(stages *s, const char *name)
{
    double ms = cuzk_now_ms() - s->t0;
    stage_rec r = {.name = name, .ms = ms};
    read_mem(&r.hwm, &r.rss);
    if (r.hwm > s->peak)
        s->peak = r.hwm;
    if (s->n < MAX_STAGES)
        s->st[s->n++] = r;
    fprintf(stderr, "scale: %s done in %.1f s (stage peak RSS %.2f GiB, RSS now %.2f GiB)\n", name,
            ms / 1e3, r.hwm / GIB, r.rss / GIB);
    fflush(stderr);
}

/* Gives freed heap back to the system (glibc keeps some otherwise). */
static void trim(void) { malloc_trim(0); }

/* ---- errors ---- */

/* The error's detail, after path when it is given (NULL: the detail names the file). */
static int fail_at(const char *path, cuzk_err e)
{
    const char *d = cuzk_error_detail();
    if (!d[0])
        d = cuzk_strerror(e);
    if (path)
        fprintf(stderr, "cuzk-bench scale: %s: %s\n", path, d);
    else
        fprintf(stderr, "cuzk-bench scale: %s\n", d);
    return 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cuzk-bench scale --r1cs circuit.r1cs --witness w0.wtns [--witness w1.wtns ...]\n"
            "         [--format params|zkey] [--out DIR] [--runs N] [--threads N]\n"
            "         [--backend auto|cpu|gpu] [--devices N] [--gpu NAME=VALUE]... [--json]\n"
            "  A Groth16 setup in memory (development key: fresh toxic waste, never written),\n"
            "  one batch proof of every witness (--runs times; the first reported as cold), each\n"
            "  proof checked with the key's verification key. Per stage: wall time, peak and\n"
            "  current host RSS; the key's size in memory; the prover's stage timings.\n"
            "  --format: params (bellman/bellperson, default) or zkey (snarkjs)\n"
            "  --out DIR: write vk.json, proof-<i>.json, public-<i>.json (snarkjs JSON) and, for\n"
            "         params, proof-<i>.bin (Filecoin's 192-byte proof)\n"
            "  --backend: setup and prover backend (default auto: CUZK_BACKEND when set, else\n"
            "         the GPU when one answers)\n"
            "  --devices N: GPUs the batch spreads over (default: every visible one, at most one\n"
            "         per witness)\n"
            "  --json: one JSON object on stdout instead of the table (progress stays on stderr)\n"
            "  exit 0: every proof verifies; 1: a proof does not, or a stage failed; 2: usage\n"
            "%s", tool_gpu_help);
}

/* ---- the run ---- */

typedef struct {
    cuzk_prove_timings t;
    double wall_ms;
} prove_rec;

static void timings_json(FILE *f, const char *name, const prove_rec *r)
{
    fprintf(f,
            "\"%s\":{\"wall_ms\":%.1f,\"total_ms\":%.1f,\"prep_ms\":%.1f,\"h_ms\":%.1f,\"msm_ms\":%.1f,"
            "\"b_g2_ms\":%.1f,\"epilogue_ms\":%.1f,\"device_ms\":%.1f}",
            name, r->wall_ms, r->t.total_ms, r->t.prep_ms, r->t.h_ms, r->t.msm_ms, r->t.b_g2_ms,
            r->t.epilogue_ms, r->t.device_ms);
}

static void timings_line(FILE *f, const char *name, const prove_rec *r)
{
    fprintf(f, "%-10s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", name, r->wall_ms,
            r->t.total_ms, r->t.prep_ms, r->t.h_ms, r->t.msm_ms, r->t.b_g2_ms, r->t.epilogue_ms,
            r->t.device_ms);
}

/* Device memory in use (total - free) on device d, in bytes; -1 when unknown. */
static double device_used(int d)
{
#ifndef CUZK_HAVE_CUDA
    (void)d;
    return -1;
#else
    cuzk_gpu_device_info info;
    if (cuzk_gpu_device_query(&info, d) != CUZK_OK) {
        cuzk_error_clear();
        return -1;
    }
    return (double)(info.total_mem - info.free_mem);
#endif
}

static uint64_t csr_bytes(const cuzk_csr *m)
{
    uint64_t nnz = m->row ? m->row[m->n_rows] : 0;
    return (uint64_t)(m->n_rows + 1) * sizeof(uint64_t) + nnz * (sizeof(uint32_t) + sizeof(cuzk_fr));
}

static uint64_t params_bytes(const cuzk_params *p)
{
    uint64_t g1 = (uint64_t)p->n_ic + p->n_h + p->n_l + p->n_a + p->n_b_g1;
    return g1 * sizeof(cuzk_g1_affine) + (uint64_t)p->n_b_g2 * sizeof(cuzk_g2_affine);
}

static uint64_t zkey_bytes(const cuzk_zkey *z)
{
    uint64_t g1 = (uint64_t)z->n_public + 1 + 2ull * z->n_vars + (z->n_vars - z->n_public - 1) +
                  z->domain_size;
    return g1 * sizeof(cuzk_g1_affine) + (uint64_t)z->n_vars * sizeof(cuzk_g2_affine) +
           csr_bytes(&z->a) + csr_bytes(&z->b);
}

static uint64_t circuit_bytes(const cuzk_bellman_circuit *c)
{
    return csr_bytes(&c->a) + csr_bytes(&c->b) + csr_bytes(&c->c) +
           2ull * ((c->n_vars + 63) / 64) * sizeof(uint64_t);
}

static int mkdir_p1(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return 0;
    fprintf(stderr, "cuzk-bench scale: %s: cannot create the directory: %s\n", dir, strerror(errno));
    return 1;
}

static char *path_in(const char *dir, const char *fmt, size_t i)
{
    size_t len = strlen(dir) + 64;
    char *p = malloc(len);
    if (p) {
        int n = snprintf(p, len, "%s/", dir);
        snprintf(p + n, len - (size_t)n, fmt, i);
    }
    return p;
}

static int bad_usage(const char **wpaths)
{
    usage(stderr);
    free(wpaths);
    return 2;
}

int cuzk_bench_scale(int argc, char **argv)
{
    const char *r1cs_path = NULL, *out_dir = NULL, *format = "params";
    const char **wpaths = calloc((size_t)argc + 1, sizeof *wpaths);
    size_t nw = 0;
    int runs = 1, json = 0;
    unsigned threads = 0, want_dev = 0;
    cuzk_backend backend = CUZK_BACKEND_AUTO;
    cuzk_gpu_opts gpu_opts;
    tool_env_gpu_opts(tool_env_get(), &gpu_opts);
    if (!wpaths) {
        fprintf(stderr, "cuzk-bench scale: out of memory\n");
        return 1;
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(wpaths);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!v) {
            fprintf(stderr, "cuzk-bench scale: %s needs a value\n", a);
            return bad_usage(wpaths);
        } else if (!strcmp(a, "--r1cs")) {
            r1cs_path = argv[++i];
        } else if (!strcmp(a, "--witness")) {
            wpaths[nw++] = argv[++i];
        } else if (!strcmp(a, "--format")) {
            format = argv[++i];
            if (strcmp(format, "params") && strcmp(format, "zkey")) {
                fprintf(stderr, "cuzk-bench scale: --format takes params or zkey, not '%s'\n", format);
                return bad_usage(wpaths);
            }
        } else if (!strcmp(a, "--out")) {
            out_dir = argv[++i];
        } else if (!strcmp(a, "--runs")) {
            long r = strtol(argv[++i], &end, 10);
            if (*end || r < 1 || r > SCALE_MAX_RUNS) {
                fprintf(stderr, "cuzk-bench scale: --runs takes 1 to %d\n", SCALE_MAX_RUNS);
                return bad_usage(wpaths);
            }
            runs = (int)r;
        } else if (!strcmp(a, "--threads")) {
            long t = strtol(argv[++i], &end, 10);
            if (*end || t < 1 || t > 4096) {
                fprintf(stderr, "cuzk-bench scale: --threads takes 1 to 4096\n");
                return bad_usage(wpaths);
            }
            threads = (unsigned)t;
        } else if (!strcmp(a, "--devices")) {
            long d = strtol(argv[++i], &end, 10);
            if (*end || d < 1 || d > CUZK_MAX_GPUS) {
                fprintf(stderr, "cuzk-bench scale: --devices takes 1 to %d\n", CUZK_MAX_GPUS);
                return bad_usage(wpaths);
            }
            want_dev = (unsigned)d;
        } else if (!strcmp(a, "--gpu")) {
            if (tool_gpu_flag(&gpu_opts, argv[++i], "cuzk-bench scale")) {
                free(wpaths);
                return 2;
            }
        } else if (!strcmp(a, "--backend")) {
            const char *b = argv[++i];
            if (!strcmp(b, "auto"))
                backend = CUZK_BACKEND_AUTO;
            else if (!strcmp(b, "cpu"))
                backend = CUZK_BACKEND_CPU;
            else if (!strcmp(b, "gpu"))
                backend = CUZK_BACKEND_GPU;
            else {
                fprintf(stderr, "cuzk-bench scale: --backend takes auto, cpu or gpu\n");
                return bad_usage(wpaths);
            }
        } else {
            fprintf(stderr, "cuzk-bench scale: unknown option '%s'\n", a);
            return bad_usage(wpaths);
        }
    }
    if (!r1cs_path || nw == 0) {
        fprintf(stderr, "cuzk-bench scale: --r1cs and at least one --witness are needed\n");
        return bad_usage(wpaths);
    }

    bool zk_fmt = !strcmp(format, "zkey");
    if (threads)
        cuzk_parallel_set_threads(threads);
    unsigned nthreads = threads ? threads : cuzk_parallel_threads();
    if (backend == CUZK_BACKEND_AUTO) /* --backend auto or none: the environment's choice */
        backend = tool_env_get()->backend;
    cuzk_prove_opts popts = {.nthreads = threads, .backend = backend, .gpu = &gpu_opts};
    bool gpu = cuzk_groth16_backend(&popts) == CUZK_BACKEND_GPU;
    cuzk_error_clear();
    unsigned ndev = 0;
    if (gpu) {
        ndev = cuzk_gpu_prover_devices();
        if (want_dev && want_dev < ndev)
            ndev = want_dev;
        if (ndev > nw)
            ndev = (unsigned)nw;
        if (ndev > CUZK_MAX_GPUS)
            ndev = CUZK_MAX_GPUS;
    }

    stages S;
    memset(&S, 0, sizeof S);
    int rc = 1;
    cuzk_err e = CUZK_OK;
    cuzk_r1cs *r = NULL;
    cuzk_bellman_circuit *c = NULL;
    cuzk_params *p = NULL;
    cuzk_zkey *z = NULL;
    cuzk_vk *vk = NULL;
    cuzk_wtns **wt = calloc(nw, sizeof *wt);
    const cuzk_fr **ws = calloc(nw, sizeof *ws);
    cuzk_proof *proofs = calloc(nw, sizeof *proofs);
    cuzk_gpu_key *gk[CUZK_MAX_GPUS] = {NULL};
    prove_rec pr[SCALE_MAX_RUNS];
    memset(pr, 0, sizeof pr);
    double dev_after_key[CUZK_MAX_GPUS], dev_after_prove[CUZK_MAX_GPUS];
    uint64_t key_bytes = 0, circ_bytes = 0;
    uint32_t log2_domain = 0, n_vars = 0, n_public = 0, n_constraints = 0;
    size_t verified = 0, invalid = 0;
    double gpu_key_ms = 0;
    if (!wt || !ws || !proofs) {
        fprintf(stderr, "cuzk-bench scale: out of memory\n");
        goto done;
    }
    /* the inputs are checked before the setup, which takes minutes at scale */
    if (access(r1cs_path, R_OK) != 0) {
        fprintf(stderr, "cuzk-bench scale: %s: cannot read: %s\n", r1cs_path, strerror(errno));
        goto done;
    }
    for (size_t i = 0; i < nw; i++)
        if (access(wpaths[i], R_OK) != 0) {
            fprintf(stderr, "cuzk-bench scale: %s: cannot read: %s\n", wpaths[i], strerror(errno));
            goto done;
        }
    if (out_dir && mkdir_p1(out_dir))
        goto done;

    /* 1. the circuit */
    stage_begin(&S, "loading the circuit");
    e = zk_fmt ? cuzk_r1cs_load(&r, r1cs_path) : cuzk_bellman_circuit_load(&c, r1cs_path);
    if (e != CUZK_OK) {
        fail_at(NULL, e);
        goto done;
    }
    stage_end(&S, "r1cs_load");
    if (zk_fmt) {
        n_constraints = r->n_constraints;
        circ_bytes = csr_bytes(&r->m[0]) + csr_bytes(&r->m[1]) + csr_bytes(&r->m[2]);
    } else {
        n_constraints = c->n_constraints;
        circ_bytes = circuit_bytes(c);
    }

    /* 2. the setup, in memory */
    stage_begin(&S, "setup (in memory; development key, toxic waste discarded)");
    cuzk_setup_opts sopts = {.nthreads = threads, .progress = stderr, .backend = backend};
    e = zk_fmt ? cuzk_setup_zkey(&z, r, &sopts) : cuzk_setup_params(&p, c, &sopts);
    if (zk_fmt) {
        /* the snarkjs key holds the rows a and b it proves with: the .r1cs is done */
        cuzk_r1cs_free(r);
        r = NULL;
    }
    trim();
    if (e != CUZK_OK) {
        fail_at(r1cs_path, e);
        goto done;
    }
    stage_end(&S, "setup");
    if (zk_fmt) {
        key_bytes = zkey_bytes(z);
        log2_domain = z->log2_domain, n_vars = z->n_vars, n_public = z->n_public;
    } else {
        key_bytes = params_bytes(p);
        log2_domain = c->log2_domain, n_vars = c->n_vars, n_public = c->n_public;
    }
    fprintf(stderr, "scale: key in memory %.2f GiB (%s, domain 2^%u, %u wires, %u public)\n",
            (double)key_bytes / GIB, format, log2_domain, n_vars, n_public);

    stage_begin(&S, "verification key");
    e = zk_fmt ? cuzk_vk_from_zkey(&vk, z) : cuzk_vk_from_params(&vk, p);
    if (e != CUZK_OK) {
        fail_at(NULL, e);
        goto done;
    }
    stage_end(&S, "vk");

    /* 3. the witnesses */
    stage_begin(&S, "loading the witnesses");
    for (size_t i = 0; i < nw; i++) {
        if ((e = cuzk_wtns_load(&wt[i], wpaths[i])) != CUZK_OK) {
            fail_at(NULL, e);
            goto done;
        }
        ws[i] = wt[i]->w;
        if (wt[i]->n != n_vars) {
            fprintf(stderr, "cuzk-bench scale: %s: %u values, but the circuit %s has %u wires\n",
                    wpaths[i], wt[i]->n, r1cs_path, n_vars);
            goto done;
        }
    }
    stage_end(&S, "witness_load");

    /* 4. resident keys on the devices (the key load of this path) */
    cuzk_pk_view view;
    if (zk_fmt) {
        cuzk_pk_view_from_zkey(&view, z);
    } else {
        if ((e = cuzk_params_check_circuit(p, c)) != CUZK_OK) {
            fail_at(NULL, e);
            goto done;
        }
        cuzk_pk_view_from_params(&view, p, c);
    }
    for (size_t i = 0; i < nw; i++) /* as the prover checks them, to name the file that fails */
        if ((e = cuzk_pk_view_check_witness(&view, ws[i], n_vars)) != CUZK_OK) {
            fail_at(wpaths[i], e);
            goto done;
        }
    if (gpu) {
        stage_begin(&S, "uploading the key to the GPU(s)");
        for (unsigned d = 0; d < ndev; d++) {
            if ((e = cuzk_gpu_key_from_view(&gk[d], &view, (int)d, &gpu_opts)) != CUZK_OK) {
                fprintf(stderr, "cuzk-bench scale: resident key on device %u: %s\n", d,
                        cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
                goto done;
            }
            dev_after_key[d] = device_used((int)d);
        }
        stage_end(&S, "gpu_key");
        gpu_key_ms = S.st[S.n - 1].ms;
        popts.gpu_keys = gk;
        popts.n_gpu_keys = ndev;
    }

    /* 5. the batch, --runs times */
    for (int run = 0; run < runs; run++) {
        char what[96];
        snprintf(what, sizeof what, "proving %zu witness%s as one batch (run %d of %d, %s)", nw,
                 nw == 1 ? "" : "es", run + 1, runs, gpu ? "gpu" : "cpu");
        stage_begin(&S, what);
        double t0 = cuzk_now_ms();
        cuzk_pending *pend = NULL;
        e = cuzk_groth16_prove_start_view(&pend, &view, ws, nw, n_vars, &popts);
        if (e == CUZK_OK)
            e = cuzk_groth16_prove_finish(proofs, &pr[run].t, pend);
        cuzk_groth16_pending_free(pend);
        pr[run].wall_ms = cuzk_now_ms() - t0;
        if (e != CUZK_OK) {
            fail_at(NULL, e);
            goto done;
        }
        if (run == 0)
            for (unsigned d = 0; d < ndev; d++)
                dev_after_prove[d] = device_used((int)d);
        if (run >= 2) /* one row for the warm runs: the last one's wall time and memory */
            S.n--;
        stage_end(&S, run == 0 ? "prove_cold" : "prove_warm");
    }
    for (unsigned d = 0; d < ndev; d++) {
        cuzk_groth16_gpu_key_free(gk[d]);
        gk[d] = NULL;
    }
    trim();

    /* 6. verification */
    stage_begin(&S, "verifying every proof");
    for (size_t i = 0; i < nw; i++) {
        cuzk_err ve = cuzk_groth16_verify(vk, ws[i] + 1, n_public, &proofs[i]);
        if (ve == CUZK_OK) {
            verified++;
        } else {
            invalid++;
            fprintf(stderr, "cuzk-bench scale: proof %zu (%s) does NOT verify: %s\n", i, wpaths[i],
                    cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(ve));
        }
    }
    stage_end(&S, "verify");

    /* 7. the files */
    if (out_dir) {
        stage_begin(&S, "writing the verification key, proofs and public inputs");
        char *path = path_in(out_dir, "vk.json", 0);
        e = path ? cuzk_vk_write_json(path, vk) : CUZK_ENOMEM;
        for (size_t i = 0; e == CUZK_OK && i < nw; i++) {
            free(path);
            if (!(path = path_in(out_dir, "proof-%zu.json", i)))
                e = CUZK_ENOMEM;
            else if ((e = cuzk_proof_write_json(path, &proofs[i])) != CUZK_OK)
                break;
            free(path);
            if (!(path = path_in(out_dir, "public-%zu.json", i)))
                e = CUZK_ENOMEM;
            else if ((e = cuzk_public_write_json(path, ws[i] + 1, n_public)) != CUZK_OK)
                break;
            if (!zk_fmt) {
                free(path);
                if (!(path = path_in(out_dir, "proof-%zu.bin", i)))
                    e = CUZK_ENOMEM;
                else if ((e = cuzk_proof_write_filecoin(path, &proofs[i])) != CUZK_OK)
                    break;
            }
        }
        if (e != CUZK_OK) {
            fail_at(path ? NULL : out_dir, e); /* the writers name their file */
            free(path);
            goto done;
        }
        free(path);
        stage_end(&S, "write");
    }
    rc = invalid ? 1 : 0;

    /* the report */
    prove_rec warm = {{0}, 0};
    if (runs > 1) { /* medians of the warm runs */
        double v[8][SCALE_MAX_RUNS];
        size_t k = (size_t)runs - 1;
        for (size_t j = 0; j < k; j++) {
            const prove_rec *q = &pr[j + 1];
            v[0][j] = q->wall_ms, v[1][j] = q->t.total_ms, v[2][j] = q->t.prep_ms, v[3][j] = q->t.h_ms;
            v[4][j] = q->t.msm_ms, v[5][j] = q->t.b_g2_ms, v[6][j] = q->t.epilogue_ms;
            v[7][j] = q->t.device_ms;
        }
        warm.wall_ms = cuzk_median(v[0], k), warm.t.total_ms = cuzk_median(v[1], k);
        warm.t.prep_ms = cuzk_median(v[2], k), warm.t.h_ms = cuzk_median(v[3], k);
        warm.t.msm_ms = cuzk_median(v[4], k), warm.t.b_g2_ms = cuzk_median(v[5], k);
        warm.t.epilogue_ms = cuzk_median(v[6], k), warm.t.device_ms = cuzk_median(v[7], k);
    }
    if (json) {
        printf("{\"format\":\"%s\",\"r1cs\":\"%s\",\"log2_domain\":%u,\"constraints\":%u,\"wires\":%u,"
               "\"public\":%u,\"partitions\":%zu,\"runs\":%d,\"threads\":%u,\"backend\":\"%s\","
               "\"devices\":%u,\"key_bytes\":%llu,\"circuit_bytes\":%llu,\"gpu_key_ms\":%.1f,"
               "\"stage_peaks\":%s,\"peak_rss_gib\":%.3f,\"verified\":%zu,\"invalid\":%zu,\"stages\":{",
               format, r1cs_path, log2_domain, n_constraints, n_vars, n_public, nw, runs, nthreads,
               gpu ? "gpu" : "cpu", ndev, (unsigned long long)key_bytes, (unsigned long long)circ_bytes,
               gpu_key_ms, S.per_stage ? "true" : "false", S.peak / GIB, verified, invalid);
        for (int k = 0; k < S.n; k++)
            printf("%s\"%s\":{\"ms\":%.1f,\"peak_rss_gib\":%.3f,\"rss_gib\":%.3f}", k ? "," : "",
                   S.st[k].name, S.st[k].ms, S.st[k].hwm / GIB, S.st[k].rss / GIB);
        printf("},");
        timings_json(stdout, "prove_cold", &pr[0]);
        if (runs > 1) {
            printf(",");
            timings_json(stdout, "prove_warm", &warm);
        }
        printf(",\"device_used_gib\":[");
        for (unsigned d = 0; d < ndev; d++)
            printf("%s{\"device\":%u,\"after_key\":%.3f,\"after_prove\":%.3f}", d ? "," : "", d,
                   dev_after_key[d] / GIB, dev_after_prove[d] / GIB);
        printf("]}\n");
    } else {
        printf("cuzk-bench scale: %s, %s: domain 2^%u, %u constraints, %u wires, %u public;"
               " %zu partition%s, %d run%s, %u threads, %s backend",
               format, r1cs_path, log2_domain, n_constraints, n_vars, n_public, nw, nw == 1 ? "" : "s",
               runs, runs == 1 ? "" : "s", nthreads, gpu ? "gpu" : "cpu");
        if (gpu)
            printf(" on %u device%s", ndev, ndev == 1 ? "" : "s");
        printf("\n  circuit in memory %.3f GiB, key in memory %.3f GiB; peak host RSS %.3f GiB\n",
               (double)circ_bytes / GIB, (double)key_bytes / GIB, S.peak / GIB);
        printf("%-14s %10s %14s %12s\n", "stage", "seconds", S.per_stage ? "peak_GiB" : "proc_peak_GiB",
               "rss_GiB");
        for (int k = 0; k < S.n; k++)
            printf("%-14s %10.2f %14.3f %12.3f\n", S.st[k].name, S.st[k].ms / 1e3, S.st[k].hwm / GIB,
                   S.st[k].rss / GIB);
        printf("%-10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "prove", "wall_ms", "total_ms",
               "prep_ms", "h_ms", "msm_ms", "b_g2_ms", "epi_ms", "device_ms");
        timings_line(stdout, "cold", &pr[0]);
        if (runs > 1)
            timings_line(stdout, "warm", &warm);
        for (unsigned d = 0; d < ndev; d++)
            printf("device %u: %.2f GiB in use after the key upload, %.2f GiB after the first batch\n", d,
                   dev_after_key[d] / GIB, dev_after_prove[d] / GIB);
        printf("proofs: %zu verified, %zu invalid%s%s\n", verified, invalid, out_dir ? "; files in " : "",
               out_dir ? out_dir : "");
    }

done:
    for (unsigned d = 0; d < CUZK_MAX_GPUS; d++)
        cuzk_groth16_gpu_key_free(gk[d]);
    for (size_t i = 0; wt && i < nw; i++)
        cuzk_wtns_free(wt[i]);
    free(wt), free(ws), free(proofs), free(wpaths);
    cuzk_vk_free(vk);
    cuzk_zkey_free(z);
    cuzk_params_free(p);
    cuzk_bellman_circuit_free(c);
    cuzk_r1cs_free(r);
    return rc;
}
