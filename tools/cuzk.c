/*
 * cuzk: one-shot commands.
 *   cuzk prove [--threads N] [-v] <circuit.zkey> <witness.wtns> <proof.json> <public.json>
 *   cuzk prove [options] --r1cs <circuit.r1cs> <key.params> <witness.wtns> <proof.json> <public.json>
 *   cuzk verify <verification_key.json> <public.json> <proof.json>
 *   cuzk export vk <circuit.zkey> <verification_key.json>
 *   cuzk info <file>
 *   cuzk setup [-v] [--threads N] <circuit.r1cs> <out.zkey|out.params>
 *   cuzk gen --constraints N [--partitions P] [--profile porep|dense] [--seed S] -o DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cuzk/groth16.h"
#include "cuzk/params.h"
#include "util/parallel.h"

static int fail(const char *cmd, cuzk_err e)
{
    const char *d = cuzk_error_detail();
    fprintf(stderr, "cuzk %s: %s\n", cmd, d[0] ? d : cuzk_strerror(e));
    return 2;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage:\n"
            "  cuzk prove [--threads N] [-v] <circuit.zkey> <witness.wtns> <proof.json> <public.json>\n"
            "      Groth16 proof of a witness with a snarkjs proving key (BLS12-381).\n"
            "      -v prints a one-line timing breakdown by stage.\n"
            "  cuzk prove [--threads N] [-v] [--trusted] [--cache] [--filecoin proof.bin]\n"
            "             --r1cs <circuit.r1cs> <key.params> <witness.wtns> <proof.json> <public.json>\n"
            "      the same with bellman/bellperson (Filecoin) parameters for a circom circuit.\n"
            "      --trusted skips the subgroup checks of the key's vectors; --cache keeps the\n"
            "      decoded key in key.params.cuzkcache; --filecoin also writes the 192-byte proof.\n"
            "  cuzk verify <verification_key.json> <public.json> <proof.json|proof.bin>\n"
            "      prints OK and exits 0 for a valid proof; exits 1 with the reason otherwise.\n"
            "  cuzk export vk <circuit.zkey|key.params> <verification_key.json>\n"
            "      writes the verification key as snarkjs does.\n"
            "  cuzk info <file>\n"
            "      what a .zkey, .params, .r1cs, .wtns or snarkjs JSON file holds, or what is wrong with it.\n"
            "  cuzk setup [-v] [--threads N] <circuit.r1cs> <out.zkey|out.params>\n"
            "      Groth16 setup with fresh random toxic waste, for development and benchmarks\n"
            "      only (production keys come from a ceremony); cuzk setup -h says more.\n"
            "  cuzk gen --constraints N [--partitions P] [--profile porep|dense] [--seed S] -o DIR\n"
            "      a synthetic satisfiable circuit.r1cs and witness-<p>.wtns files; cuzk gen -h says more.\n"
            "environment: CUZK_THREADS (worker threads), CUZK_FF_IMPL=portable (no MULX/ADX),\n"
            "  CUZK_BACKEND=cpu|gpu (default: the GPU when one answers), CUZK_B_G2=cpu (B_G2 on the CPU)\n");
}

/* cuzk prove --r1cs: pos = key.params, witness.wtns, proof.json, public.json. */
static int prove_params(const char *r1cs, const char *const pos[4], unsigned pflags,
                        const char *filecoin, const cuzk_prove_opts *opts, int verbose)
{
    cuzk_params *p = NULL;
    cuzk_bellman_circuit *c = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_proof proof;
    cuzk_prove_timings t;
    struct timespec t0, t1;
    memset(&t, 0, sizeof t);
    cuzk_err e = cuzk_bellman_circuit_load(&c, r1cs);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (e == CUZK_OK)
        e = cuzk_params_load(&p, pos[0], pflags);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double load_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (e == CUZK_OK)
        e = cuzk_wtns_load(&wt, pos[1]);
    if (e == CUZK_OK) {
        const cuzk_fr *w = wt->w;
        e = cuzk_params_prove(&proof, &t, p, c, &w, 1, wt->n, opts);
        if (e != CUZK_OK) {
            char why[600];
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
            if (!strncmp(why, "witness", 7)) /* name the witness file */
                cuzk_error_set(e, "%s: %s", pos[1], why);
        }
    }
    if (e == CUZK_OK)
        e = cuzk_proof_write_json(pos[2], &proof);
    if (e == CUZK_OK)
        e = cuzk_public_write_json(pos[3], wt->w + 1, c->n_public);
    if (e == CUZK_OK && filecoin)
        e = cuzk_proof_write_filecoin(filecoin, &proof);
    if (e == CUZK_OK && verbose)
        fprintf(stderr,
                "cuzk prove: key load %.1f ms; total %.1f ms (prep %.1f, H %.1f, msm %.1f, b_g2 "
                "%.1f overlapped, epilogue %.1f) bellman domain 2^%u, %u vars, %u threads\n",
                load_ms, t.total_ms, t.prep_ms, t.h_ms, t.msm_ms, t.b_g2_ms, t.epilogue_ms,
                c->log2_domain, c->n_vars, opts->nthreads ? opts->nthreads : cuzk_parallel_threads());
    cuzk_wtns_free(wt);
    cuzk_params_free(p);
    cuzk_bellman_circuit_free(c);
    return e == CUZK_OK ? 0 : fail("prove", e);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static int cmd_prove(int argc, char **argv)
{
    const char *pos[4];
    int npos = 0, verbose = 0;
    unsigned threads = 0;
    const char *test_rs[2] = {NULL, NULL};
    const char *r1cs = NULL, *filecoin = NULL;
    unsigned pflags = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            verbose = 1;
        } else if (!strcmp(argv[i], "--r1cs") && i + 1 < argc) {
            r1cs = argv[++i];
        } else if (!strcmp(argv[i], "--filecoin") && i + 1 < argc) {
            filecoin = argv[++i];
        } else if (!strcmp(argv[i], "--trusted")) {
            pflags |= CUZK_PARAMS_TRUSTED;
        } else if (!strcmp(argv[i], "--cache")) {
            pflags |= CUZK_PARAMS_CACHE;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            long t = strtol(argv[++i], NULL, 10);
            if (t < 1 || t > 4096) {
                fprintf(stderr, "cuzk prove: --threads takes a number from 1 to 4096\n");
                return 2;
            }
            threads = (unsigned)t;
        } else if (!strcmp(argv[i], "--test-fixed-rs") && i + 2 < argc) {
            /* For tests only: fixed r and s (decimal) make proofs reproducible. */
            test_rs[0] = argv[++i];
            test_rs[1] = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cuzk prove: unknown option '%s'\n", argv[i]);
            return 2;
        } else if (npos < 4) {
            pos[npos++] = argv[i];
        } else {
            npos++;
        }
    }
    if (npos != 4) {
        usage(stderr);
        return 2;
    }
    if (threads)
        cuzk_parallel_set_threads(threads);

    cuzk_prove_opts opts = {.nthreads = threads};
    cuzk_fr tr, ts;
    if (test_rs[0]) {
        if (cuzk_fr_from_dec(&tr, test_rs[0]) != CUZK_OK || cuzk_fr_from_dec(&ts, test_rs[1]) != CUZK_OK) {
            fprintf(stderr, "cuzk prove: --test-fixed-rs takes two decimal values below r\n");
            return 2;
        }
        opts.test_r = &tr;
        opts.test_s = &ts;
    }
    if (r1cs)
        return prove_params(r1cs, pos, pflags, filecoin, &opts, verbose);

    cuzk_zkey *zk = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_err e = cuzk_zkey_load(&zk, pos[0]);
    if (e != CUZK_OK)
        return fail("prove", e);
    e = cuzk_wtns_load(&wt, pos[1]);
    if (e != CUZK_OK) {
        cuzk_zkey_free(zk);
        return fail("prove", e);
    }
    cuzk_proof proof;
    cuzk_prove_timings t;
    const cuzk_fr *w = wt->w;
    e = cuzk_groth16_prove(&proof, &t, zk, &w, 1, wt->n, &opts);
    if (e != CUZK_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        if (!strncmp(why, "witness", 7)) /* name the witness file */
            cuzk_error_set(e, "%s: %s", pos[1], why);
        goto out;
    }
    if ((e = cuzk_proof_write_json(pos[2], &proof)) != CUZK_OK)
        goto out;
    if ((e = cuzk_public_write_json(pos[3], cuzk_groth16_public(zk, w), zk->n_public)) != CUZK_OK)
        goto out;
    if (verbose)
        fprintf(stderr,
                "cuzk prove: total %.1f ms (prep %.1f, H %.1f, msm %.1f, b_g2 %.1f overlapped, "
                "epilogue %.1f) domain 2^%u, %u vars, %u threads\n",
                t.total_ms, t.prep_ms, t.h_ms, t.msm_ms, t.b_g2_ms, t.epilogue_ms, zk->log2_domain,
                zk->n_vars, threads ? threads : cuzk_parallel_threads());
out:
    cuzk_wtns_free(wt);
    cuzk_zkey_free(zk);
    return e == CUZK_OK ? 0 : fail("prove", e);
}

static int cmd_verify(int argc, char **argv)
{
    if (argc != 3) {
        usage(stderr);
        return 2;
    }
    cuzk_vk *vk = NULL;
    cuzk_fr *pub = NULL;
    size_t npub = 0;
    cuzk_proof proof;
    cuzk_err e;
    if ((e = cuzk_vk_read_json(&vk, argv[0])) != CUZK_OK)
        return fail("verify", e);
    struct stat pst;
    bool fc = stat(argv[2], &pst) == 0 && pst.st_size == CUZK_FILECOIN_PROOF_BYTES;
    if ((e = cuzk_public_read_json(&pub, &npub, argv[1])) != CUZK_OK ||
        (e = fc ? cuzk_proof_read_filecoin(&proof, argv[2]) : cuzk_proof_read_json(&proof, argv[2])) != CUZK_OK) {
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
    fprintf(stderr, "cuzk verify: INVALID: %s\n", cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
    return 1;
}

static int cmd_export(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[0], "vk")) {
        usage(stderr);
        return 2;
    }
    cuzk_zkey *zk = NULL;
    cuzk_vk *vk = NULL;
    cuzk_err e;
    if (ends_with(argv[1], ".params")) {
        /* the vk points and IC are subgroup-checked even for a trusted load */
        cuzk_params *p = NULL;
        e = cuzk_params_load(&p, argv[1], CUZK_PARAMS_TRUSTED);
        if (e == CUZK_OK)
            e = cuzk_vk_from_params(&vk, p);
        cuzk_params_free(p);
    } else {
        e = cuzk_zkey_load(&zk, argv[1]);
        if (e == CUZK_OK)
            e = cuzk_vk_from_zkey(&vk, zk);
    }
    if (e == CUZK_OK)
        e = cuzk_vk_write_json(argv[2], vk);
    cuzk_vk_free(vk);
    cuzk_zkey_free(zk);
    return e == CUZK_OK ? 0 : fail("export vk", e);
}

static int cmd_info(int argc, char **argv)
{
    if (argc != 1) {
        usage(stderr);
        return 2;
    }
    const char *path = argv[0];
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cuzk info: %s: cannot open\n", path);
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
        if ((e = cuzk_params_load(&p, path, 0)) != CUZK_OK)
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
            printf("%s: Groth16 verification key, curve bls12381, %u public inputs\n", path, vk->n_public);
            cuzk_vk_free(vk);
        } else {
            fprintf(stderr, "cuzk info: %s: neither a valid proof nor a verification key (%s)\n", path,
                    cuzk_error_detail());
            return 2;
        }
    } else {
        fprintf(stderr, "cuzk info: %s: unknown file type (not .zkey, .r1cs, .wtns or JSON)\n", path);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "prove"))
        return cmd_prove(argc - 2, argv + 2);
    if (!strcmp(cmd, "verify"))
        return cmd_verify(argc - 2, argv + 2);
    if (!strcmp(cmd, "export"))
        return cmd_export(argc - 2, argv + 2);
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "setup"))
        return cuzk_cli_setup(argc - 2, argv + 2);
    if (!strcmp(cmd, "gen"))
        return cuzk_cli_gen(argc - 2, argv + 2);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "cuzk: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
