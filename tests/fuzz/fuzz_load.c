/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Coverage-guided fuzzing of the readers of user input, with libFuzzer (clang), beside
 * tests/unit/test_fuzz.c's mutation fuzzing that CI runs: the same public readers, but the
 * inputs grown from the branches they reach. One binary, the format chosen by
 * CUZK_FUZZ_FORMAT (wtns, r1cs, zkey, params, key, proof-json, public-json, vk-json,
 * filecoin-proof, g1, g2): tests/fuzz/run.sh builds it (cmake -DCUZK_FUZZ=ON with clang),
 * seeds each format from tests/data and runs it.
 *
 * A reader must return CUZK_OK or an error whose detail is non-empty and names the file;
 * what it accepts is checked for what it claims (a witness against its key or circuit,
 * counts, points on the curve). A crash, a leak, undefined behaviour, an allocation sized by
 * a forged field (ASan's max_allocation_size_mb) or a broken claim ends the run (abort) and
 * libFuzzer keeps the input.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/ec.h"
#include "cuzk/error.h"
#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/key.h"
#include "cuzk/params.h"
#include "util/parallel.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=1";
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *g_format;
static char g_path[256];        /* the input as a file, for the readers that take a path */
static char g_r1cs[4096];       /* format params / key: the circuit the .params is for */

static void fail(const char *what)
{
    fprintf(stderr, "fuzz %s: %s\n", g_format, what);
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    g_format = getenv("CUZK_FUZZ_FORMAT");
    if (!g_format) {
        fprintf(stderr, "fuzz: set CUZK_FUZZ_FORMAT (wtns r1cs zkey params key proof-json "
                        "public-json vk-json filecoin-proof g1 g2)\n");
        exit(2);
    }
    const char *r = getenv("CUZK_FUZZ_R1CS");
    snprintf(g_r1cs, sizeof g_r1cs, "%s", r ? r : "");
    const char *dir = getenv("TMPDIR");
    snprintf(g_path, sizeof g_path, "%s/cuzk-fuzz-%d.%s", dir ? dir : "/tmp", (int)getpid(),
             g_format);
    cuzk_parallel_set_threads(1);
    return 0;
}

/* The input as the file g_path. */
static void put_file(const uint8_t *data, size_t size)
{
    FILE *f = fopen(g_path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        fail("cannot write the input file");
}

/* An error must say what went wrong, naming the file. */
static void check_error(cuzk_err e)
{
    if (e == CUZK_OK)
        return;
    const char *d = cuzk_error_detail();
    if (!d || !*d)
        fail("an error without a detail");
    if (!strstr(d, g_path))
        fail("an error detail that does not name the file");
    cuzk_error_clear();
}

/* An accepted key has its verification key. */
static void check_vk(cuzk_err e, cuzk_vk *vk)
{
    if (e != CUZK_OK || !vk)
        fail("an accepted key whose verification key cannot be made");
    cuzk_vk_free(vk);
}

static void fuzz_wtns(const uint8_t *data, size_t size)
{
    cuzk_wtns *w = NULL, *m = NULL;
    put_file(data, size);
    cuzk_err e = cuzk_wtns_load(&w, g_path);
    check_error(e);
    cuzk_err em = cuzk_wtns_load_mem(&m, g_path, data, size);
    check_error(em);
    if ((e == CUZK_OK) != (em == CUZK_OK))
        fail("the file and the memory image disagree");
    cuzk_wtns *c = NULL;
    cuzk_err ec = cuzk_wtns_check(&c, g_path);
    check_error(ec);
    if ((ec == CUZK_OK) != (e == CUZK_OK))
        fail("cuzk_wtns_check and cuzk_wtns_load disagree");
    cuzk_wtns_free(c);
    cuzk_wtns_free(w);
    cuzk_wtns_free(m);
}

static void fuzz_r1cs(const uint8_t *data, size_t size)
{
    cuzk_r1cs *r = NULL;
    put_file(data, size);
    check_error(cuzk_r1cs_load(&r, g_path));
    if (r) {
        cuzk_bellman_circuit *c = NULL;
        cuzk_err e = cuzk_bellman_circuit_from_r1cs(&c, r);
        if (e != CUZK_OK)
            cuzk_error_clear();
        cuzk_bellman_circuit_free(c);
    }
    cuzk_r1cs_free(r);
}

static void fuzz_zkey(const uint8_t *data, size_t size)
{
    cuzk_zkey *z = NULL;
    put_file(data, size);
    check_error(cuzk_zkey_load(&z, g_path));
    if (z) {
        cuzk_vk *vk = NULL;
        check_vk(cuzk_vk_from_zkey(&vk, z), vk);
    }
    cuzk_zkey_free(z);
}

static void fuzz_params(const uint8_t *data, size_t size)
{
    cuzk_params *p = NULL;
    put_file(data, size);
    check_error(cuzk_params_load(&p, g_path, 0));
    if (p) {
        if (cuzk_params_file_bytes(p) != size)
            fail("an accepted .params whose size is not the file's");
        cuzk_vk *vk = NULL;
        check_vk(cuzk_vk_from_params(&vk, p), vk);
    }
    cuzk_params_free(p);
}

/* cuzk_key_load: the format by its magic, a .params checked against CUZK_FUZZ_R1CS. */
static void fuzz_key(const uint8_t *data, size_t size)
{
    cuzk_key *k = NULL;
    put_file(data, size);
    cuzk_key_opts o = {.r1cs = g_r1cs[0] && !(size >= 4 && !memcmp(data, "zkey", 4)) ? g_r1cs : NULL};
    cuzk_err e = cuzk_key_load(&k, g_path, &o);
    check_error(e);
    if (k && cuzk_key_n_vars(k) == 0)
        fail("a key with no variables");
    cuzk_key_free(k);
}

static void fuzz_proof_json(const uint8_t *data, size_t size)
{
    cuzk_proof p;
    put_file(data, size);
    cuzk_err e = cuzk_proof_read_json(&p, g_path);
    check_error(e);
    if (e == CUZK_OK && (!cuzk_g1_affine_in_subgroup(&p.a) || !cuzk_g2_affine_in_subgroup(&p.b) ||
                         !cuzk_g1_affine_in_subgroup(&p.c)))
        fail("an accepted proof with a point outside the group");
}

static void fuzz_public_json(const uint8_t *data, size_t size)
{
    cuzk_fr *pub = NULL;
    size_t n = 0;
    put_file(data, size);
    check_error(cuzk_public_read_json(&pub, &n, g_path));
    free(pub);
}

static void fuzz_vk_json(const uint8_t *data, size_t size)
{
    cuzk_vk *vk = NULL;
    put_file(data, size);
    check_error(cuzk_vk_read_json(&vk, g_path));
    cuzk_vk_free(vk);
}

static void fuzz_filecoin_proof(const uint8_t *data, size_t size)
{
    cuzk_proof p;
    put_file(data, size);
    cuzk_err e = cuzk_proof_read_filecoin(&p, g_path);
    check_error(e);
    if (e == CUZK_OK && size != CUZK_FILECOIN_PROOF_BYTES)
        fail("an accepted Filecoin proof of the wrong size");
    if (e == CUZK_OK) {
        uint8_t back[CUZK_FILECOIN_PROOF_BYTES];
        cuzk_proof_to_filecoin(back, &p);
        if (memcmp(back, data, sizeof back))
            fail("a Filecoin proof that does not encode back to its bytes");
    }
}

/* The point decoders: every encoding of the bytes' prefix, with and without the subgroup
 * check; what is accepted is on the curve (and in the group when checked), and the
 * canonical encodings encode back to their bytes. */
#define FUZZ_DECODE(G, ENC, BYTES, CANON)                                                     \
    if (cuzk_##G##_from_##ENC(&p, b, fl) == CUZK_OK) {                                          \
        if (!cuzk_##G##_affine_is_on_curve(&p) || (fl && !cuzk_##G##_affine_in_subgroup(&p)))  \
            fail(#G " " #ENC ": accepted off the curve or the group");                        \
        if (CANON) {                                                                           \
            uint8_t back[BYTES];                                                               \
            cuzk_##G##_to_##ENC(back, &p);                                                     \
            if (memcmp(back, b, BYTES))                                                        \
                fail(#G " " #ENC ": not canonical");                                          \
        }                                                                                      \
    } else                                                                                     \
        cuzk_error_clear();

#define FUZZ_POINTS(G, AFF, UNCOMP)                                                            \
    static void fuzz_##G(const uint8_t *data, size_t size)                                     \
    {                                                                                          \
        uint8_t b[UNCOMP] = {0};                                                               \
        memcpy(b, data, size < sizeof b ? size : sizeof b);                                    \
        for (unsigned fl = 0; fl < 2; fl++) {                                                  \
            AFF p;                                                                             \
            FUZZ_DECODE(G, snarkjs, UNCOMP, 0)                                                 \
            FUZZ_DECODE(G, uncompressed, UNCOMP, 1)                                            \
            FUZZ_DECODE(G, compressed, UNCOMP / 2, 1)                                          \
        }                                                                                      \
    }
FUZZ_POINTS(g1, cuzk_g1_affine, 96)
FUZZ_POINTS(g2, cuzk_g2_affine, 192)

static const struct {
    const char *name;
    void (*run)(const uint8_t *, size_t);
} formats[] = {
    {"wtns", fuzz_wtns},
    {"r1cs", fuzz_r1cs},
    {"zkey", fuzz_zkey},
    {"params", fuzz_params},
    {"key", fuzz_key},
    {"proof-json", fuzz_proof_json},
    {"public-json", fuzz_public_json},
    {"vk-json", fuzz_vk_json},
    {"filecoin-proof", fuzz_filecoin_proof},
    {"g1", fuzz_g1},
    {"g2", fuzz_g2},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static void (*run)(const uint8_t *, size_t);
    if (!run) {
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
            if (!strcmp(formats[i].name, g_format))
                run = formats[i].run;
        if (!run) {
            fprintf(stderr, "fuzz: unknown CUZK_FUZZ_FORMAT %s\n", g_format);
            exit(2);
        }
    }
    run(data, size);
    return 0;
}
