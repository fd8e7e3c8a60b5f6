/* SPDX-License-Identifier: Apache-2.0 */
/* Secret randomness for proofs: uniform elements of Fr from the operating system. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "cuzk/groth16.h"

static cuzk_err os_random(uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t k = getrandom(buf + got, len - got, 0);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return CUZK_ERANDOM;
        }
        got += (size_t)k;
    }
    return CUZK_OK;
}

cuzk_err cuzk_random_fr(cuzk_fr *out)
{
    uint8_t b[32];
    /* r < 2^255: keep 255 bits and reject values >= r; r/2^255 = 0.906, so about 1.1
     * draws on average. Rejected draws are discarded, so
     * timing reveals only how many were rejected, nothing of the kept value. */
    for (int tries = 0; tries < 256; tries++) {
        if (os_random(b, sizeof b) != CUZK_OK) {
            int err = errno;
            explicit_bzero(b, sizeof b);
            return cuzk_error_set(CUZK_ERANDOM, "getrandom failed: %s", strerror(err));
        }
        b[31] &= 0x7f;
        cuzk_err e = cuzk_fr_from_bytes_le(out, b);
        if (e == CUZK_OK) {
            explicit_bzero(b, sizeof b); /* memset of a dead buffer may be removed */
            return CUZK_OK;
        }
    }
    explicit_bzero(b, sizeof b);
    return cuzk_error_set(CUZK_ERANDOM, "getrandom returned no value below r in 256 draws");
}
