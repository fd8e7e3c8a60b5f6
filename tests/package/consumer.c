/* SPDX-License-Identifier: Apache-2.0 */
/* A program outside the project, built against an installed cuzk (pkg-config or CMake):
 * proves a snarkjs key's witness on the CPU with the public API alone and verifies it.
 *   consumer circuit.zkey witness.wtns  ->  exit 0 and "ok VERSION" when the proof verifies */
#include <stdio.h>
#include <string.h>

#include <cuzk/groth16.h>
#include <cuzk/io.h>
#include <cuzk/version.h>

static int fail(const char *what, cuzk_err e)
{
    fprintf(stderr, "consumer: %s: %s (%s)\n", what, cuzk_strerror(e), cuzk_error_detail());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: consumer circuit.zkey witness.wtns\n");
        return 2;
    }
    if (strcmp(cuzk_version(), CUZK_VERSION)) {
        fprintf(stderr, "consumer: library %s, headers %s\n", cuzk_version(), CUZK_VERSION);
        return 1;
    }
    cuzk_zkey *zk = NULL;
    cuzk_wtns *w = NULL;
    cuzk_vk *vk = NULL;
    cuzk_err e;
    if ((e = cuzk_zkey_load(&zk, argv[1])) != CUZK_OK)
        return fail(argv[1], e);
    if ((e = cuzk_wtns_load(&w, argv[2])) != CUZK_OK)
        return fail(argv[2], e);
    if ((e = cuzk_vk_from_zkey(&vk, zk)) != CUZK_OK)
        return fail("verification key", e);
    cuzk_prove_opts o = {.backend = CUZK_BACKEND_CPU};
    const cuzk_fr *wit = w->w;
    cuzk_proof proof;
    if ((e = cuzk_groth16_prove(&proof, NULL, zk, &wit, 1, w->n, &o)) != CUZK_OK)
        return fail("prove", e);
    if ((e = cuzk_groth16_verify(vk, cuzk_groth16_public(zk, wit), zk->n_public, &proof)) != CUZK_OK)
        return fail("verify", e);
    /* a changed public input must not verify */
    cuzk_fr pub[64];
    size_t np = zk->n_public < 64 ? zk->n_public : 64;
    memcpy(pub, cuzk_groth16_public(zk, wit), np * sizeof pub[0]);
    if (np) {
        pub[0].l[0] ^= 1;
        if (cuzk_groth16_verify(vk, pub, np, &proof) == CUZK_OK) {
            fprintf(stderr, "consumer: a tampered public input verified\n");
            return 1;
        }
    }
    printf("ok %s\n", cuzk_version());
    cuzk_vk_free(vk);
    cuzk_wtns_free(w);
    cuzk_zkey_free(zk);
    return 0;
}
