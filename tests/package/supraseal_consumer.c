/* SPDX-License-Identifier: Apache-2.0 */
/* A program built against the installed SupraSeal C2 ABI library (tests/package/install.sh):
 * loads a .params key through create_SRS, clones and drops the handle, proves an empty batch,
 * and gets an error with a message for a missing file; prints "ok" when all of that holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuzk_supraseal.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    SRS srs = {NULL};
    RustError r = create_SRS(&srs, argv[1], true);
    if (r.code || !srs.ptr) {
        fprintf(stderr, "create_SRS: %d %s\n", r.code, r.message ? r.message : "");
        return 1;
    }
    SRS c = clone_SRS(&srs);
#ifdef CUZK_SUPRASEAL_CURIO
    r = generate_groth16_proofs_c(NULL, 0, NULL, NULL, NULL, &c, NULL, -1);
#else
    r = generate_groth16_proofs_c(NULL, 0, NULL, NULL, NULL, &c);
#endif
    if (r.code)
        return 1;
    evict_SRS(&srs);
    drop_SRS(&srs);
    drop_SRS(&c);
    SRS bad = {NULL};
    r = create_SRS(&bad, "/nonexistent.params", false);
    if (!r.code || !r.message || !strstr(r.message, "/nonexistent.params") || bad.ptr)
        return 1;
    free(r.message);
    printf("ok\n");
    return 0;
}
