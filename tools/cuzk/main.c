/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk: one-shot commands.
 *   cuzk prove [--threads N] [--gpu NAME=VALUE]... [-v] [--no-verify] <circuit.zkey> <witness.wtns>
 *              <proof.json> <public.json>   (exit 0; 1: a proof fails its check, nothing written; 2)
 *   cuzk prove [options] --r1cs <circuit.r1cs> <key.params> <witness.wtns> <proof.json> <public.json>
 *   cuzk verify <verification_key.json> <public.json> <proof.json|proof.bin>   (exit 0, 1, 2)
 *   cuzk export vk <circuit.zkey> <verification_key.json>
 *   cuzk info <file>
 *   cuzk wtns check <circuit.r1cs> <witness.wtns>   (exit 0, 1, 2)
 *   cuzk setup [-v] [--threads N] <circuit.r1cs> <out.zkey|out.params>
 *   cuzk gen --constraints N [--partitions P] [--profile porep|dense] [--seed S] -o DIR
 * Outputs go through tools/common/outfile.h (temporary name, rename; refused when one names
 * an input or another output). Built with CUZK_CLI_TEST_BUILD (tests/cuzk-test only), prove
 * also takes --test-fixed-rs R S.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cuzk/version.h"
#include "config.h"
#include "cuzk.h"
#include "cuzk/groth16.h"
#include "cuzk/params.h"
#include "groth16/bellman.h"
#include "io/binfile.h"
#include "outfile.h"
#include "progress.h"
#include "util/parallel.h"

/* The environment, read once in main. */
static tool_env g_env;

static int fail(const char *cmd, cuzk_err e)
{
    const char *d = cuzk_error_detail();
    bool bn254 = e == CUZK_ECURVE && strstr(d, "BN254");
    fprintf(stderr, "cuzk %s: %s%s\n", cmd, d[0] ? d : cuzk_strerror(e),
            bn254 ? "; compile the circuit with `circom --prime bls12381` (and use a BLS12-381 "
                    "powers of tau)" : "");
    return 2;
}

/* Exit status of cuzk prove when a proof fails its check before it is written. */
#define PROVE_EXIT_UNSATISFIED 1

static const char prove_text[] =
    "  cuzk prove [--threads N] [--gpu NAME=VALUE]... [-v] [--no-verify] <circuit.zkey>\n"
    "             <witness.wtns> <proof.json> <public.json>\n"
    "      Groth16 proof of a witness with a snarkjs proving key (BLS12-381).\n"
    "      -v prints a one-line timing breakdown by stage.\n"
    "  cuzk prove [--threads N] [-v] [--trusted] [--cache] [--filecoin proof.bin]\n"
    "             --r1cs <circuit.r1cs> <key.params> <witness.wtns> <proof.json> <public.json>\n"
    "      the same with bellman/bellperson (Filecoin) parameters for a circom circuit.\n"
    "  cuzk prove [options] [--r1cs <circuit.r1cs>] <key> --batch DIR <w0.wtns> [w1.wtns ...]\n"
    "      one proof per witness as one batch (the key loaded once; on a GPU the partitions\n"
    "      pipeline and spread over the devices): DIR/proof-<i>.json, DIR/public-<i>.json.\n"
    "      --trusted skips the subgroup checks of the key's vectors; --cache keeps the\n"
    "      decoded key in key.params.cuzkcache; --filecoin also writes the 192-byte proof.\n";

static const char prove_more[] =
    "  Every proof is verified against the key before anything is written (about a\n"
    "  millisecond); --no-verify skips that check. On a terminal the stages are shown on\n"
    "  stderr while they run.\n"
    "exit status:\n"
    "  0  the proofs and public inputs are written\n"
    "  1  a proof fails verification: the witness does not satisfy the circuit\n"
    "     (nothing is written; cuzk wtns check names the first failing constraint)\n"
    "  2  bad usage, an input unreadable or malformed, an output that cannot be written\n";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cuzk COMMAND ...   (cuzk --version: the version; cuzk COMMAND -h: its usage)\n"
            "%s"
            "  cuzk verify <verification_key.json> <public.json> <proof.json|proof.bin>\n"
            "      prints OK and exits 0 for a valid proof, 1 for an invalid one (with the\n"
            "      reason), 2 for an unreadable or malformed input; cuzk verify -h says more.\n"
            "  cuzk export vk <circuit.zkey|key.params> <verification_key.json>\n"
            "      writes the verification key as snarkjs does.\n"
            "  cuzk info <file>\n"
            "      what a .zkey, .params, .r1cs, .wtns or snarkjs JSON file holds, or what is wrong with it.\n"
            "  cuzk wtns check <circuit.r1cs> <witness.wtns>\n"
            "      whether the witness satisfies every constraint (exit 0), or the first that fails (1).\n"
            "  cuzk setup [-v] [--threads N] [--backend auto|cpu|gpu] <circuit.r1cs> <out.zkey|out.params>\n"
            "      Groth16 setup with fresh random toxic waste, for development and benchmarks\n"
            "      only (production keys come from a ceremony); cuzk setup -h says more.\n"
            "  cuzk gen --constraints N [--partitions P] [--profile porep|dense] [--seed S] -o DIR\n"
            "      a synthetic satisfiable circuit.r1cs and witness-<p>.wtns files; cuzk gen -h says more.\n"
            "options of cuzk prove:\n"
            "%s"
            "%s",
            prove_text, tool_gpu_help, tool_env_help);
}

static void prove_usage(FILE *f)
{
    fprintf(f, "usage:\n%s%soptions:\n%s%s", prove_text, prove_more, tool_gpu_help, tool_env_help);
}

/* -h or --help as a command's only argument */
static bool is_help(int argc, char **argv)
{
    return argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"));
}

static double mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One proof per witness, as one batch through the prover (the key loaded once; on the GPU
 * the partitions pipeline and spread over the devices). proofs[i] / publics[i]: the output
 * paths of witness i. r1cs: a bellman .params key with its circuit, else a .zkey. */
static int prove_batch(const char *key, const char *r1cs, unsigned pflags, const char *filecoin,
                       size_t nw, const char *const *wpaths, char *const *proofs,
                       char *const *publics, const cuzk_prove_opts *opts, int verbose,
                       bool check)
{
    cuzk_params *p = NULL;
    cuzk_bellman_circuit *c = NULL;
    cuzk_zkey *zk = NULL;
    cuzk_wtns **wt = calloc(nw, sizeof *wt);
    const cuzk_fr **ws = calloc(nw, sizeof *ws);
    cuzk_proof *proof = calloc(nw, sizeof *proof);
    cuzk_prove_timings t;
    memset(&t, 0, sizeof t);
    if (!wt || !ws || !proof) {
        free(wt), free(ws), free(proof);
        return fail("prove", cuzk_error_set(CUZK_ENOMEM, "out of memory"));
    }
    cli_progress *pg = cli_progress_start("cuzk prove", "loading the key");
    double t0 = mono_ms();
    /* the key first: the .r1cs's counts are checked against it before its rows are built */
    cuzk_err e = r1cs ? cuzk_params_load_gpu(&p, key, pflags, opts->gpu) : cuzk_zkey_load(&zk, key);
    if (e == CUZK_OK && r1cs)
        e = cuzk_bellman_circuit_load_for(&c, r1cs, p);
    double load_ms = mono_ms() - t0;
    size_t n_public = r1cs ? (c ? c->n_public : 0) : (zk ? zk->n_public : 0);
    cli_progress_stage(pg, nw == 1 ? "loading the witness" : "loading the witnesses");
    for (size_t i = 0; e == CUZK_OK && i < nw; i++)
        if ((e = cuzk_wtns_load(&wt[i], wpaths[i])) == CUZK_OK)
            ws[i] = wt[i]->w;
    /* one length for the batch: a witness of another circuit is named here */
    for (size_t i = 1; e == CUZK_OK && i < nw; i++)
        if (wt[i]->n != wt[0]->n)
            e = cuzk_error_set(CUZK_ESIZE, "%s: %zu values, but %s has %zu: not witnesses of one circuit",
                               wpaths[i], (size_t)wt[i]->n, wpaths[0], (size_t)wt[0]->n);
    /* each witness against the key, as the prover checks it, to name the file that fails */
    cuzk_pk_view view;
    if (e == CUZK_OK && r1cs)
        cuzk_pk_view_from_params(&view, p, c);
    else if (e == CUZK_OK)
        cuzk_pk_view_from_zkey(&view, zk);
    for (size_t i = 0; e == CUZK_OK && i < nw; i++)
        if ((e = cuzk_pk_view_check_witness(&view, ws[i], wt[i]->n)) != CUZK_OK) {
            char why[400];
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
            cuzk_error_set(e, "%s: %s", wpaths[i], why);
        }
    cli_progress_stage(pg, nw == 1 ? "proving" : "proving the batch");
    if (e == CUZK_OK)
        e = r1cs ? cuzk_params_prove(proof, &t, p, c, ws, nw, wt[0]->n, opts)
                 : cuzk_groth16_prove(proof, &t, zk, ws, nw, wt[0]->n, opts);
    /* every proof checked against the key's verification key before anything is written */
    size_t bad = nw;
    double verify_ms = 0;
    if (e == CUZK_OK && check) {
        double tv = mono_ms();
        cli_progress_stage(pg, "verifying");
        cuzk_vk *vk = NULL;
        e = r1cs ? cuzk_vk_from_params(&vk, p) : cuzk_vk_from_zkey(&vk, zk);
        for (size_t i = 0; e == CUZK_OK && i < nw; i++) {
            cuzk_err v = cuzk_groth16_verify(vk, ws[i] + 1, n_public, &proof[i]);
            if (v == CUZK_EVERIFY) {
                bad = i;
                break;
            }
            e = v;
        }
        cuzk_vk_free(vk);
        verify_ms = mono_ms() - tv;
    }
    cli_progress_end(pg);
    if (bad < nw) {
        fprintf(stderr, "cuzk prove: %s: the proof fails verification: the witness does not "
                        "satisfy the circuit (`cuzk wtns check circuit.r1cs %s` names the first "
                        "constraint that fails); nothing written\n", wpaths[bad], wpaths[bad]);
        e = CUZK_EVERIFY;
    }
    /* every output under a temporary name first: all of them appear, or none */
    size_t nout = 2 * nw + (filecoin ? 1 : 0);
    const char **names = e == CUZK_OK ? calloc(nout, sizeof *names) : NULL;
    tool_out *out = names ? calloc(nout, sizeof *out) : NULL;
    if (e == CUZK_OK && !out)
        e = cuzk_error_set(CUZK_ENOMEM, "out of memory");
    if (out) {
        for (size_t i = 0; i < nw; i++) {
            names[2 * i] = proofs[i];
            names[2 * i + 1] = publics[i];
        }
        if (filecoin)
            names[2 * nw] = filecoin;
        e = tool_out_open_all(out, names, nout);
        for (size_t i = 0; e == CUZK_OK && i < nw; i++) {
            e = tool_out_status(&out[2 * i], cuzk_proof_write_json(out[2 * i].tmp, &proof[i]));
            if (e == CUZK_OK)
                e = tool_out_status(&out[2 * i + 1], cuzk_public_write_json(
                                        out[2 * i + 1].tmp, ws[i] + 1, n_public));
        }
        if (e == CUZK_OK && filecoin)
            e = tool_out_status(&out[2 * nw],
                                cuzk_proof_write_filecoin(out[2 * nw].tmp, &proof[0]));
        if (e == CUZK_OK)
            e = tool_out_commit(out, nout);
        else
            tool_out_discard(out, nout);
    }
    free(names);
    free(out);
    if (e == CUZK_OK && verbose && check)
        fprintf(stderr, "cuzk prove: %zu proof%s verified in %.1f ms\n", nw, nw == 1 ? "" : "s",
                verify_ms);
    if (e == CUZK_OK && verbose) {
        bool gpu = cuzk_groth16_backend(opts) == CUZK_BACKEND_GPU;
        char held[48] = "";
        if (gpu) /* the device's share is named only when a device ran */
            snprintf(held, sizeof held, "; device held %.1f ms", t.device_ms);
        fprintf(stderr,
                "cuzk prove: key load %.1f ms; %zu proof%s in %.1f ms (prep %.1f, H %.1f, msm %.1f, "
                "b_g2 %.1f overlapped, epilogue %.1f%s) %s domain 2^%u, %u vars, "
                "%u threads, backend %s, field %s\n",
                load_ms, nw, nw == 1 ? "" : "s", t.total_ms, t.prep_ms, t.h_ms, t.msm_ms, t.b_g2_ms,
                t.epilogue_ms, held, r1cs ? "bellman" : "snarkjs",
                r1cs ? c->log2_domain : zk->log2_domain, r1cs ? c->n_vars : zk->n_vars,
                opts->nthreads ? opts->nthreads : cuzk_parallel_threads(), gpu ? "gpu" : "cpu",
                cuzk_ff_impl_name(cuzk_ff_get_impl()));
    }
    for (size_t i = 0; i < nw; i++)
        cuzk_wtns_free(wt[i]);
    free(wt), free(ws), free(proof);
    cuzk_zkey_free(zk);
    cuzk_params_free(p);
    cuzk_bellman_circuit_free(c);
    if (bad < nw)
        return PROVE_EXIT_UNSATISFIED;
    return e == CUZK_OK ? 0 : fail("prove", e);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* What a file is, told from its first bytes as cuzk info does: to name an argument given in
 * the wrong place before its loader reports a bad magic. */
typedef enum {
    KIND_UNKNOWN, /* missing, unreadable or none of these: the loader names the problem */
    KIND_ZKEY,
    KIND_R1CS,
    KIND_WTNS,
    KIND_WASM,
    KIND_PROOF,   /* snarkjs proof.json */
    KIND_VK,      /* snarkjs verification_key.json */
    KIND_JSON,    /* another JSON object: a circuit's input.json */
    KIND_PUBLIC,  /* a JSON array: public.json */
} file_kind;

static const char *const kind_names[] = {
    [KIND_UNKNOWN] = "an unknown file", [KIND_ZKEY] = "a proving key (.zkey)",
    [KIND_R1CS] = "a constraint system (.r1cs)", [KIND_WTNS] = "a witness (.wtns)",
    [KIND_WASM] = "a WebAssembly module (the circuit's witness calculator)",
    [KIND_PROOF] = "a proof (proof.json)", [KIND_VK] = "a verification key",
    [KIND_JSON] = "a JSON object, not a proof nor a key (a circuit's input.json?)",
    [KIND_PUBLIC] = "a list of public inputs (public.json)",
};

static file_kind kind_of(const char *path)
{
    FILE *f;
    if (!path || io_fopen_regular(&f, path) != CUZK_OK) { /* a FIFO is refused, not waited on */
        cuzk_error_clear();
        return KIND_UNKNOWN;
    }
    char b[4096];
    size_t n = fread(b, 1, sizeof b - 1, f);
    fclose(f);
    b[n] = 0;
    if (n >= 4 && !memcmp(b, "zkey", 4))
        return KIND_ZKEY;
    if (n >= 4 && !memcmp(b, "r1cs", 4))
        return KIND_R1CS;
    if (n >= 4 && !memcmp(b, "wtns", 4))
        return KIND_WTNS;
    if (n >= 4 && !memcmp(b, "\0asm", 4))
        return KIND_WASM;
    /* JSON only when what was read is text: a binary file (bellman parameters, a proof.bin)
     * may begin with whitespace and a '[' by chance */
    for (size_t j = 0; j < n; j++) {
        unsigned char c = (unsigned char)b[j];
        if (c < 0x20 && c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return KIND_UNKNOWN;
    }
    size_t i = 0;
    while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
        i++;
    if (i < n && b[i] == '[')
        return KIND_PUBLIC;
    if (i < n && b[i] == '{') {
        if (strstr(b, "\"pi_a\""))
            return KIND_PROOF;
        if (strstr(b, "\"vk_alpha_1\"") || strstr(b, "\"IC\""))
            return KIND_VK;
        return KIND_JSON;
    }
    return KIND_UNKNOWN;
}

/* 0 when path is of kind want (or not known: its loader speaks); else prints why, with the
 * command's order of arguments, and returns 2. */
static int kind_expect(const char *cmd, const char *path, file_kind want, const char *role,
                       const char *order)
{
    file_kind k = kind_of(path);
    if (k == KIND_UNKNOWN || k == want)
        return 0;
    if (k == KIND_JSON && (want == KIND_PROOF || want == KIND_VK))
        return 0; /* a malformed proof or key: its reader names the field */
    if (want == KIND_WTNS && (k == KIND_WASM || k == KIND_JSON))
        fprintf(stderr, "cuzk %s: %s is %s, not a witness: a witness is made from the circuit's "
                        ".wasm and its input.json with `snarkjs wtns calculate circuit.wasm "
                        "input.json witness.wtns`\n", cmd, path, kind_names[k]);
    else if (want == KIND_VK && k == KIND_ZKEY)
        fprintf(stderr, "cuzk %s: %s is %s, not a verification key: `cuzk export vk %s "
                        "verification_key.json` writes its key\n", cmd, path, kind_names[k], path);
    else
        fprintf(stderr, "cuzk %s: %s is %s, not %s: arguments in the wrong order? the order is "
                        "%s\n", cmd, path, kind_names[k], role, order);
    return 2;
}

static int cmd_prove(int argc, char **argv)
{
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int npos = 0, verbose = 0;
    bool check = true;
    unsigned threads = 0;
#ifdef CUZK_CLI_TEST_BUILD
    const char *test_rs[2] = {NULL, NULL};
#endif
    const char *r1cs = NULL, *filecoin = NULL, *batch = NULL;
    unsigned pflags = 0;
    cuzk_gpu_opts gpu;
    tool_env_gpu_opts(&g_env, &gpu);
    if (!pos)
        return fail("prove", cuzk_error_set(CUZK_ENOMEM, "out of memory"));
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            verbose = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            prove_usage(stdout);
            free(pos);
            return 0;
        } else if (!strcmp(argv[i], "--no-verify")) {
            check = false;
        } else if (!strcmp(argv[i], "--gpu") && i + 1 < argc) {
            if (tool_gpu_flag(&gpu, argv[++i], "cuzk prove")) {
                free(pos);
                return 2;
            }
        } else if (!strcmp(argv[i], "--r1cs") && i + 1 < argc) {
            r1cs = argv[++i];
        } else if (!strcmp(argv[i], "--filecoin") && i + 1 < argc) {
            filecoin = argv[++i];
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
            batch = argv[++i];
        } else if (!strcmp(argv[i], "--trusted")) {
            pflags |= CUZK_PARAMS_TRUSTED;
        } else if (!strcmp(argv[i], "--cache")) {
            pflags |= CUZK_PARAMS_CACHE;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            long t = strtol(argv[++i], NULL, 10);
            if (t < 1 || t > 4096) {
                fprintf(stderr, "cuzk prove: --threads takes a number from 1 to 4096\n");
                free(pos);
                return 2;
            }
            threads = (unsigned)t;
#ifdef CUZK_CLI_TEST_BUILD
        } else if (!strcmp(argv[i], "--test-fixed-rs") && i + 2 < argc) {
            /* The test build only (tests/cuzk-test, never installed): fixed r and s
             * (decimal) make proofs reproducible, and without blinding. */
            test_rs[0] = argv[++i];
            test_rs[1] = argv[++i];
#endif
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cuzk prove: unknown option '%s'\n", argv[i]);
            free(pos);
            return 2;
        } else {
            pos[npos++] = argv[i];
        }
    }
    if (batch ? (npos < 2 || filecoin) : npos != 4) {
        if (batch && filecoin)
            fprintf(stderr, "cuzk prove: --filecoin writes one proof; not with --batch\n");
        usage(stderr);
        free(pos);
        return 2;
    }
    if (threads)
        cuzk_parallel_set_threads(threads);

    cuzk_prove_opts opts = {.nthreads = threads, .backend = g_env.backend, .gpu = &gpu};
#ifdef CUZK_CLI_TEST_BUILD
    cuzk_fr tr, ts;
    if (test_rs[0]) {
        if (cuzk_fr_from_dec(&tr, test_rs[0]) != CUZK_OK || cuzk_fr_from_dec(&ts, test_rs[1]) != CUZK_OK) {
            fprintf(stderr, "cuzk prove: --test-fixed-rs takes two decimal values below r\n");
            free(pos);
            return 2;
        }
        opts.test_r = &tr;
        opts.test_s = &ts;
    }
#endif
    size_t nw = batch ? (size_t)npos - 1 : 1;
    char **proofs = calloc(nw, sizeof *proofs), **publics = calloc(nw, sizeof *publics);
    int rc = 2;
    bool ok = proofs && publics;
    for (size_t i = 0; ok && i < nw; i++) {
        if (batch) {
            size_t len = strlen(batch) + 32;
            proofs[i] = malloc(len);
            publics[i] = malloc(len);
            ok = proofs[i] && publics[i];
            if (ok) {
                snprintf(proofs[i], len, "%s/proof-%zu.json", batch, i);
                snprintf(publics[i], len, "%s/public-%zu.json", batch, i);
            }
        } else {
            proofs[i] = strdup(pos[2]);
            publics[i] = strdup(pos[3]);
            ok = proofs[i] && publics[i];
        }
    }
    if (ok) { /* no output may name an input or another output */
        size_t nin = nw + 2, nout = 2 * nw + 1;
        const char **in = calloc(nin, sizeof *in), **outs = calloc(nout, sizeof *outs);
        ok = in && outs;
        if (ok) {
            in[0] = pos[0];
            in[1] = r1cs;
            for (size_t i = 0; i < nw; i++) {
                in[2 + i] = pos[1 + i];
                outs[2 * i] = proofs[i];
                outs[2 * i + 1] = publics[i];
            }
            outs[2 * nw] = filecoin;
            rc = tool_out_check("cuzk prove", in, nin, outs, nout);
        }
        free(in);
        free(outs);
        if (ok && rc) {
            ok = false;
            goto done;
        }
    }
    if (ok) {
        /* each input of the kind its place wants, and no output an existing key, circuit or
         * witness: arguments in the wrong order are named as such */
        const char *order = batch ? (r1cs ? "--r1cs circuit.r1cs key.params --batch DIR w0.wtns "
                                            "[w1.wtns ...]"
                                          : "circuit.zkey --batch DIR w0.wtns [w1.wtns ...]")
                                  : (r1cs ? "--r1cs circuit.r1cs key.params witness.wtns proof.json "
                                            "public.json"
                                          : "circuit.zkey witness.wtns proof.json public.json");
        int bad = kind_expect("prove", r1cs, KIND_R1CS, "a constraint system (.r1cs)", order);
        if (!bad && !r1cs && ends_with(pos[0], ".params")) {
            fprintf(stderr, "cuzk prove: %s: bellman parameters need their circuit: cuzk prove "
                            "--r1cs circuit.r1cs %s ...\n", pos[0], pos[0]);
            bad = 2;
        }
        if (!bad)
            bad = kind_expect("prove", pos[0], r1cs ? KIND_UNKNOWN : KIND_ZKEY,
                              r1cs ? "bellman parameters (.params)" : "a proving key (.zkey)", order);
        for (int i = 1; !bad && i < (batch ? npos : 2); i++)
            bad = kind_expect("prove", pos[i], KIND_WTNS, "a witness (.wtns)", order);
        for (int i = 2; !bad && !batch && i < 4; i++) {
            file_kind k = kind_of(pos[i]);
            if (k == KIND_ZKEY || k == KIND_R1CS || k == KIND_WTNS || k == KIND_WASM) {
                fprintf(stderr, "cuzk prove: output %s is %s: refused, it would be overwritten "
                                "(arguments in the wrong order? the order is %s)\n", pos[i],
                        kind_names[k], order);
                bad = 2;
            }
        }
        if (bad) {
            rc = bad;
            goto done;
        }
    }
    if (ok)
        rc = prove_batch(pos[0], r1cs, pflags, filecoin, nw, pos + 1, proofs, publics, &opts, verbose,
                         check);
    else
        rc = fail("prove", cuzk_error_set(CUZK_ENOMEM, "out of memory"));
done:
#ifdef CUZK_CLI_TEST_BUILD
    explicit_bzero(&tr, sizeof tr);
    explicit_bzero(&ts, sizeof ts);
#endif
    for (size_t i = 0; i < nw; i++) {
        free(proofs ? proofs[i] : NULL);
        free(publics ? publics[i] : NULL);
    }
    free(proofs), free(publics), free(pos);
    return rc;
}

/* A proof file is snarkjs's proof.json when its first non-blank byte is '{'; otherwise it
 * is read as Filecoin's binary proof (whose first byte has the compressed flag 0x80 set),
 * whatever its size. *json: which. */
static cuzk_err proof_kind(bool *json, const char *path)
{
    FILE *f;
    cuzk_err e = io_fopen_regular(&f, path); /* a FIFO is refused, not waited on */
    if (e != CUZK_OK)
        return e;
    int c;
    do
        c = fgetc(f);
    while (c == ' ' || c == '\n' || c == '\r' || c == '\t');
    fclose(f);
    if (c == EOF)
        return cuzk_error_set(CUZK_EFORMAT, "%s: empty: neither a proof.json nor a %d-byte "
                              "Filecoin proof", path, CUZK_FILECOIN_PROOF_BYTES);
    *json = c == '{';
    return CUZK_OK;
}

/* Exit status: 0 the proof is valid, 1 it is not (for this key and these public inputs, or
 * their number is not the key's), 2 an input cannot be read or is malformed (the message
 * names the file and the field). */
static int cmd_verify(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        printf("usage: cuzk verify <verification_key.json> <public.json> <proof.json|proof.bin>\n"
               "  Checks a Groth16 proof (BLS12-381) against a snarkjs verification key.\n"
               "  The proof is snarkjs's proof.json, or Filecoin's %d-byte binary proof\n"
               "  (A, B, C compressed), told apart by content.\n"
               "  The key is refused when alpha, beta, gamma, delta or an IC point is the point\n"
               "  at infinity, or when its vk_alphabeta_12 (optional) is not e(alpha, beta).\n"
               "exit status:\n"
               "  0  the proof is valid (prints OK)\n"
               "  1  the proof is invalid: the pairing check fails, or the number of public\n"
               "     inputs is not the key's (prints INVALID and the reason on stderr)\n"
               "  2  an input is unreadable or malformed, or the key is refused (the message\n"
               "     names the file and the field)\n", CUZK_FILECOIN_PROOF_BYTES);
        return 0;
    }
    if (argc != 3) {
        usage(stderr);
        return 2;
    }
    const char *order = "verification_key.json public.json proof.json";
    if (kind_expect("verify", argv[0], KIND_VK, "a verification key", order) ||
        kind_expect("verify", argv[1], KIND_PUBLIC, "a list of public inputs (public.json)",
                    order) ||
        kind_expect("verify", argv[2], KIND_PROOF, "a proof", order))
        return 2;
    cuzk_vk *vk = NULL;
    cuzk_fr *pub = NULL;
    size_t npub = 0;
    cuzk_proof proof;
    bool json = true;
    cuzk_err e;
    if ((e = cuzk_vk_read_json(&vk, argv[0])) != CUZK_OK)
        return fail("verify", e);
    if ((e = cuzk_vk_check(vk, argv[0])) != CUZK_OK ||
        (e = cuzk_public_read_json(&pub, &npub, argv[1])) != CUZK_OK ||
        (e = proof_kind(&json, argv[2])) != CUZK_OK ||
        (e = json ? cuzk_proof_read_json(&proof, argv[2])
                  : cuzk_proof_read_filecoin(&proof, argv[2])) != CUZK_OK) {
        cuzk_vk_free(vk);
        free(pub);
        return fail("verify", e);
    }
    e = cuzk_groth16_verify(vk, pub, npub, &proof);
    cuzk_vk_free(vk);
    free(pub);
    if (e == CUZK_OK) {
        printf("OK\n");
        return 0;
    }
    if (e != CUZK_EVERIFY && e != CUZK_ESIZE)  /* not a verdict on the proof */
        return fail("verify", e);
    fprintf(stderr, "cuzk verify: INVALID: %s\n", cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
    return 1;
}

static int cmd_export(int argc, char **argv)
{
    if (is_help(argc, argv) || (argc == 2 && !strcmp(argv[0], "vk") && is_help(1, argv + 1))) {
        printf("usage: cuzk export vk <circuit.zkey|key.params> <verification_key.json>\n"
               "  Writes the key's verification key as snarkjs does (snarkjs zkey export\n"
               "  verificationkey), for cuzk verify and snarkjs groth16 verify.\n"
               "  Exit status 0 when written, 2 otherwise.\n");
        return 0;
    }
    if (argc != 3 || strcmp(argv[0], "vk")) {
        usage(stderr);
        return 2;
    }
    const char *in[] = {argv[1]}, *outs[] = {argv[2]};
    if (tool_out_check("cuzk export vk", in, 1, outs, 1))
        return 2;
    cuzk_zkey *zk = NULL;
    cuzk_vk *vk = NULL;
    cuzk_err e;
    if (ends_with(argv[1], ".params")) {
        /* the vk points and IC are subgroup-checked even for a trusted load */
        cuzk_params *p = NULL;
        cuzk_gpu_opts gpu;
        tool_env_gpu_opts(&g_env, &gpu);
        e = cuzk_params_load_gpu(&p, argv[1], CUZK_PARAMS_TRUSTED, &gpu);
        if (e == CUZK_OK)
            e = cuzk_vk_from_params(&vk, p);
        cuzk_params_free(p);
    } else {
        e = cuzk_zkey_load(&zk, argv[1]);
        if (e == CUZK_OK)
            e = cuzk_vk_from_zkey(&vk, zk);
    }
    tool_out out;
    if (e == CUZK_OK && (e = tool_out_open(&out, argv[2])) == CUZK_OK) {
        e = tool_out_status(&out, cuzk_vk_write_json(out.tmp, vk));
        if (e == CUZK_OK)
            e = tool_out_commit(&out, 1);
        else
            tool_out_discard(&out, 1);
    }
    cuzk_vk_free(vk);
    cuzk_zkey_free(zk);
    return e == CUZK_OK ? 0 : fail("export vk", e);
}

static int cmd_info(int argc, char **argv)
{
    if (is_help(argc, argv)) {
        printf("usage: cuzk info <file>\n"
               "  What a .zkey, .params, .r1cs, .wtns, proof, verification key or public.json\n"
               "  holds (its counts, its curve), or what is wrong with it (exit status 2).\n"
               "  (a file named -h: cuzk info ./-h)\n");
        return 0;
    }
    if (argc != 1) {
        usage(stderr);
        return 2;
    }
    const char *path = argv[0];
    FILE *f;
    if (io_fopen_regular(&f, path) != CUZK_OK) { /* a FIFO is refused, not waited on */
        fprintf(stderr, "cuzk info: %s\n", cuzk_error_detail());
        return 2;
    }
    char magic[5] = {0};
    size_t got = fread(magic, 1, 4, f);
    int first = got ? (unsigned char)magic[0] : EOF;
    /* the first non-blank character tells JSON apart */
    while (first == ' ' || first == '\n' || first == '\r' || first == '\t')
        first = fgetc(f);
    fclose(f);
    cuzk_err e;
    if (ends_with(path, ".params")) {
        cuzk_params *p;
        cuzk_gpu_opts gpu;
        tool_env_gpu_opts(&g_env, &gpu);
        if ((e = cuzk_params_load_gpu(&p, path, 0, &gpu)) != CUZK_OK)
            return fail("info", e);
        printf("%s: bellman/bellperson Groth16 parameters, curve bls12381, points valid\n"
               "  public inputs %u, domain 2^%u (h %u), private wires l %u, a %u, b_g1 %u, b_g2 %u\n",
               path, p->n_ic - 1, (unsigned)__builtin_ctzll((unsigned long long)p->n_h + 1), p->n_h,
               p->n_l, p->n_a, p->n_b_g1, p->n_b_g2);
        cuzk_params_free(p);
    } else if (got == 4 && !memcmp(magic, "zkey", 4)) {
        cuzk_zkey *z;
        if ((e = cuzk_zkey_load(&z, path)) != CUZK_OK)
            return fail("info", e);
        printf("%s: snarkjs Groth16 proving key, curve bls12381\n"
               "  variables %u, public %u, constraints %u, domain 2^%u (%u)\n"
               "  coefficients: A %llu, B %llu\n",
               path, z->n_vars, z->n_public, z->n_constraints, z->log2_domain, z->domain_size,
               (unsigned long long)z->a.row[z->a.n_rows], (unsigned long long)z->b.row[z->b.n_rows]);
        cuzk_zkey_free(z);
    } else if (got == 4 && !memcmp(magic, "r1cs", 4)) {
        cuzk_r1cs *r;
        if ((e = cuzk_r1cs_load(&r, path)) != CUZK_OK)
            return fail("info", e);
        printf("%s: circom constraint system, field of bls12381\n"
               "  wires %u (outputs %u, public inputs %u, private inputs %u), constraints %u, labels %llu\n",
               path, r->n_wires, r->n_pub_out, r->n_pub_in, r->n_prv_in, r->n_constraints,
               (unsigned long long)r->n_labels);
        cuzk_r1cs_free(r);
    } else if (got == 4 && !memcmp(magic, "wtns", 4)) {
        cuzk_wtns *w;
        if ((e = cuzk_wtns_load(&w, path)) != CUZK_OK)
            return fail("info", e);
        printf("%s: witness, field of bls12381, %u values\n", path, w->n);
        cuzk_wtns_free(w);
    } else if (first == '{' || first == '[') {
        cuzk_proof proof;
        cuzk_vk *vk;
        cuzk_fr *pub;
        size_t n;
        if (first == '[') {
            if ((e = cuzk_public_read_json(&pub, &n, path)) != CUZK_OK)
                return fail("info", e);
            printf("%s: public inputs, %zu values\n", path, n);
            free(pub);
        } else if (cuzk_proof_read_json(&proof, path) == CUZK_OK) {
            printf("%s: Groth16 proof, curve bls12381, points valid\n", path);
        } else if ((e = cuzk_vk_read_json(&vk, path)) == CUZK_OK) {
            e = cuzk_vk_check(vk, path);
            printf("%s: Groth16 verification key, curve bls12381, %u public inputs%s%s\n", path,
                   vk->n_public, e == CUZK_OK ? "" : "; REFUSED by cuzk verify: ",
                   e == CUZK_OK ? "" : cuzk_error_detail());
            cuzk_vk_free(vk);
        } else {
            fprintf(stderr, "cuzk info: %s: neither a valid proof nor a verification key (%s)\n", path,
                    cuzk_error_detail());
            return 2;
        }
    } else if (got && ((unsigned char)magic[0] & 0x80)) { /* compressed: Filecoin's proof */
        cuzk_proof proof;
        if ((e = cuzk_proof_read_filecoin(&proof, path)) != CUZK_OK)
            return fail("info", e);
        printf("%s: Groth16 proof in Filecoin's %d-byte form, curve bls12381, points valid\n",
               path, CUZK_FILECOIN_PROOF_BYTES);
    } else {
        fprintf(stderr, "cuzk info: %s: unknown file type (not .zkey, .r1cs, .wtns, JSON or a "
                        "Filecoin proof)\n", path);
        return 2;
    }
    return 0;
}

/* cuzk wtns check: exit 0 the witness satisfies every constraint, 1 it does not (the first
 * constraint that fails is named) or it has the wrong number of values, 2 an input is
 * unreadable or malformed. */
static int cmd_wtns(int argc, char **argv)
{
    if (is_help(argc, argv) || (argc == 2 && !strcmp(argv[0], "check") && is_help(1, argv + 1))) {
        printf("usage: cuzk wtns check <circuit.r1cs> <witness.wtns>\n"
               "  Checks (A.w)(B.w) = C.w for every constraint of the circuit, as snarkjs wtns\n"
               "  check does: whether cuzk prove can make a valid proof of this witness.\n"
               "exit status:\n"
               "  0  every constraint holds (prints OK)\n"
               "  1  the witness does not satisfy the circuit: the first constraint that fails\n"
               "     is named, or the number of values is not the circuit's\n"
               "  2  an input is unreadable or malformed\n");
        return 0;
    }
    if (argc != 3 || strcmp(argv[0], "check")) {
        fprintf(stderr, "usage: cuzk wtns check <circuit.r1cs> <witness.wtns>   (cuzk wtns -h)\n");
        return 2;
    }
    const char *order = "circuit.r1cs witness.wtns";
    if (kind_expect("wtns check", argv[1], KIND_R1CS, "a constraint system (.r1cs)", order) ||
        kind_expect("wtns check", argv[2], KIND_WTNS, "a witness (.wtns)", order))
        return 2;
    cuzk_r1cs *r = NULL;
    cuzk_wtns *w = NULL;
    cuzk_err e = cuzk_r1cs_load(&r, argv[1]);
    if (e == CUZK_OK)
        e = cuzk_wtns_load(&w, argv[2]);
    if (e != CUZK_OK) {
        cuzk_r1cs_free(r);
        return fail("wtns check", e);
    }
    size_t badc = 0;
    e = cuzk_r1cs_check_witness(r, w->w, w->n, &badc);
    int rc = 0;
    if (e == CUZK_OK) {
        printf("OK: %s satisfies the %u constraints of %s\n", argv[2], r->n_constraints, argv[1]);
    } else if (e == CUZK_EVERIFY || e == CUZK_ESIZE) {
        fprintf(stderr, "cuzk wtns check: %s does not satisfy %s: %s\n", argv[2], argv[1],
                cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
        rc = 1;
    } else {
        rc = fail("wtns check", e);
    }
    cuzk_wtns_free(w);
    cuzk_r1cs_free(r);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("%s %s\n", "cuzk", cuzk_version());
        return 0;
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (tool_env_init(&g_env, "cuzk"))
        return 2;
    if (!strcmp(cmd, "prove"))
        return cmd_prove(argc - 2, argv + 2);
    if (!strcmp(cmd, "verify"))
        return cmd_verify(argc - 2, argv + 2);
    if (!strcmp(cmd, "export"))
        return cmd_export(argc - 2, argv + 2);
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "wtns"))
        return cmd_wtns(argc - 2, argv + 2);
    if (!strcmp(cmd, "setup"))
        return cuzk_cli_setup(argc - 2, argv + 2, &g_env);
    if (!strcmp(cmd, "gen"))
        return cuzk_cli_gen(argc - 2, argv + 2);
    fprintf(stderr, "cuzk: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
