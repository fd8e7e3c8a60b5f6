/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk setup [-v] [--threads N] [--backend auto|cpu|gpu] [--device D] <circuit.r1cs> <out.zkey|out.params> */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk.h"
#include "cuzk/setup.h"
#include "outfile.h"
#include "progress.h"
#include "setup/bellman.h"
#include "setup/setup_internal.h"
#include "util/parallel.h"

static void setup_usage(FILE *f)
{
    fprintf(f,
            "usage: cuzk setup [-v] [--threads N] [--backend auto|cpu|gpu] [--device D]\n"
            "                  <circuit.r1cs> <out.zkey|out.params>\n"
            "  Groth16 setup with fresh random toxic waste (tau, alpha, beta, gamma, delta from\n"
            "  getrandom), wiped when done. FOR DEVELOPMENT AND BENCHMARKS ONLY: whoever runs it\n"
            "  could forge proofs while it runs; production keys come from a multi-party\n"
            "  ceremony (snarkjs powers of tau + phase 2, or Filecoin's parameters).\n"
            "  .zkey: snarkjs's proving key (snarkjs groth16 prove accepts it; zkey verify does\n"
            "         not, as it has no ceremony transcript).\n"
            "  .params: bellman/bellperson (Filecoin) parameters for the same circuit.\n"
            "  -v prints progress and timings per stage on stderr; without it, on a terminal,\n"
            "  a progress line names the stage after 2 s.\n"
            "  --backend: where the vector points are computed (fixed-base multiplication):\n"
            "         auto (default, or CUZK_BACKEND=cpu|gpu when set): the GPU for vectors\n"
            "         of 2^16 points or more when a device answers, else the CPU; gpu: every\n"
            "         vector on the device; cpu: the CPU. The keys are the same either way.\n"
            "  --device D: the CUDA device of the GPU backend (default 0).\n"
            "%s", tool_env_help);
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static cuzk_err write_zkey(const char *path, const void *key)
{
    return cuzk_zkey_write(path, key);
}
static cuzk_err write_params(const char *path, const void *key)
{
    return cuzk_params_write(path, key);
}

/* The key under a temporary name beside path, then renamed onto it (outfile.h). */
static cuzk_err write_out(const char *path, cuzk_err (*write)(const char *, const void *),
                          const void *key)
{
    tool_out out;
    cuzk_err e = tool_out_open(&out, path);
    if (e != CUZK_OK)
        return e;
    if ((e = tool_out_status(&out, write(out.tmp, key))) != CUZK_OK) {
        tool_out_discard(&out, 1);
        return e;
    }
    return tool_out_commit(&out, 1);
}

static int setup_fail(cuzk_err e)
{
    const char *d = cuzk_error_detail();
    fprintf(stderr, "cuzk setup: %s\n", d[0] ? d : cuzk_strerror(e));
    return 2;
}

/* The key of the circuit pos[0] into pos[1] (.zkey when zkey, else .params); the error is
 * printed by the caller, once the progress line is gone. */
static cuzk_err setup_run(const char *const *pos, bool zkey, bool verbose,
                          const cuzk_setup_opts *opts, double t0, cli_progress *pg)
{
    cuzk_err e;
    if (zkey) {
        cuzk_r1cs *r = NULL;
        cuzk_zkey *z = NULL;
        if ((e = cuzk_r1cs_load(&r, pos[0])) != CUZK_OK)
            return e;
        if (verbose)
            fprintf(stderr, "setup: loaded %s (%.0f ms)\n", pos[0], setup_now_ms() - t0);
        cli_progress_stage(pg, "computing the key");
        e = cuzk_setup_zkey(&z, r, opts);
        cuzk_r1cs_free(r);
        if (e != CUZK_OK)
            return e;
        double tw = setup_now_ms();
        cli_progress_stage(pg, "writing the key");
        e = write_out(pos[1], write_zkey, z);
        cuzk_zkey_free(z);
        if (e != CUZK_OK)
            return e;
        if (verbose)
            fprintf(stderr, "setup: wrote %s (%.0f ms)\n", pos[1], setup_now_ms() - tw);
    } else {
        cuzk_bellman_circuit *c = NULL;
        cuzk_params *p = NULL;
        if ((e = cuzk_bellman_circuit_load(&c, pos[0])) != CUZK_OK)
            return e;
        if (verbose)
            fprintf(stderr, "setup: loaded %s (%.0f ms)\n", pos[0], setup_now_ms() - t0);
        cli_progress_stage(pg, "computing the parameters");
        e = cuzk_setup_params(&p, c, opts);
        cuzk_bellman_circuit_free(c);
        if (e != CUZK_OK)
            return e;
        double tw = setup_now_ms();
        cli_progress_stage(pg, "writing the parameters");
        e = write_out(pos[1], write_params, p);
        cuzk_params_free(p);
        if (e != CUZK_OK)
            return e;
        if (verbose)
            fprintf(stderr, "setup: wrote %s (%.0f ms)\n", pos[1], setup_now_ms() - tw);
    }
    if (verbose)
        fprintf(stderr, "setup: total %.0f ms\n", setup_now_ms() - t0);
    return CUZK_OK;
}

int cuzk_cli_setup(int argc, char **argv, const tool_env *env)
{
    const char *pos[2];
    int npos = 0;
    bool verbose = false;
    unsigned threads = 0;
    cuzk_backend backend = CUZK_BACKEND_AUTO;
    int device = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            verbose = true;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            setup_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end || t < 1 || t > 4096) {
                fprintf(stderr, "cuzk setup: --threads takes a number from 1 to 4096\n");
                return 2;
            }
            threads = (unsigned)t;
        } else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            if (!strcmp(b, "auto")) {
                backend = CUZK_BACKEND_AUTO;
            } else if (!strcmp(b, "cpu")) {
                backend = CUZK_BACKEND_CPU;
            } else if (!strcmp(b, "gpu")) {
                backend = CUZK_BACKEND_GPU;
            } else {
                fprintf(stderr, "cuzk setup: --backend takes auto, cpu or gpu\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            char *end;
            long d = strtol(argv[++i], &end, 10);
            if (*end || d < 0 || d > 1023) {
                fprintf(stderr, "cuzk setup: --device takes a device number\n");
                return 2;
            }
            device = (int)d;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cuzk setup: unknown option '%s'\n", argv[i]);
            setup_usage(stderr);
            return 2;
        } else if (npos < 2) {
            pos[npos++] = argv[i];
        } else {
            npos++;
        }
    }
    if (npos != 2) {
        setup_usage(stderr);
        return 2;
    }
    bool zkey = ends_with(pos[1], ".zkey"), params = ends_with(pos[1], ".params");
    if (!zkey && !params) {
        fprintf(stderr, "cuzk setup: %s: the output must end in .zkey (snarkjs) or .params "
                        "(bellman)\n", pos[1]);
        return 2;
    }
    const char *in[] = {pos[0]}, *outs[] = {pos[1]};
    if (tool_out_check("cuzk setup", in, 1, outs, 1))
        return 2;
    if (threads)
        cuzk_parallel_set_threads(threads);
    if (backend == CUZK_BACKEND_AUTO) /* --backend auto or none: the environment's choice */
        backend = env->backend;
    cuzk_setup_opts opts = {.nthreads = threads, .progress = verbose ? stderr : NULL,
                            .backend = backend, .device = device};
    double t0 = setup_now_ms();
    cuzk_err e;
    cuzk_setup_fb fb;
    if ((e = cuzk_setup_fb_init(&fb, &opts)) != CUZK_OK)
        return setup_fail(e);
    if (verbose) {
        if (fb.gpu == 2)
            fprintf(stderr, "setup: fixed-base on the GPU (device %d) for every vector\n", device);
        else if (fb.gpu == 1)
            fprintf(stderr, "setup: fixed-base on the GPU (device %d) for vectors of %zu points "
                            "or more, on the CPU (%u threads) below\n", device, CUZK_SETUP_GPU_MIN,
                    setup_threads(&opts));
        else
            fprintf(stderr, "setup: fixed-base on the CPU (%u threads)\n", setup_threads(&opts));
    }
    /* -v prints its own lines: the progress line only without it */
    cli_progress *pg = verbose ? NULL : cli_progress_start("cuzk setup", "loading the circuit");
    e = setup_run(pos, zkey, verbose, &opts, t0, pg);
    cli_progress_end(pg);
    return e == CUZK_OK ? 0 : setup_fail(e);
}
