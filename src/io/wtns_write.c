/* SPDX-License-Identifier: Apache-2.0 */
/* snarkjs .wtns v2 writer (inverse of cuzk_wtns_load). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/gen.h"
#include "io/io_write.h"

cuzk_err cuzk_wtns_write(const char *path, const cuzk_fr *w, size_t n)
{
    if (!path || (!w && n))
        return cuzk_error_set(CUZK_EINVAL, "cuzk_wtns_write: NULL argument");
    if (n > UINT32_MAX)
        return cuzk_error_set(CUZK_ESIZE, "%s: %zu values do not fit the u32 count", path, n);
    FILE *f = fopen(path, "wb");
    if (!f)
        goto fail;
    uint8_t pre[IO_W_WTNS_PREFIX];
    io_wtns_prefix(pre, (uint32_t)n);
    if (fwrite(pre, 1, sizeof pre, f) != sizeof pre)
        goto fail;
    uint8_t buf[256 * CUZK_FR_BYTES];
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        for (; k < 256 && i < n; k++, i++)
            cuzk_fr_to_bytes_le(buf + k * CUZK_FR_BYTES, &w[i]);
        if (fwrite(buf, CUZK_FR_BYTES, k, f) != k)
            goto fail;
    }
    FILE *g = f;
    f = NULL;
    if (fclose(g) != 0)
        goto fail;
    return CUZK_OK;
fail:;
    int err = errno ? errno : EIO;
    if (f)
        fclose(f);
    return cuzk_error_set(CUZK_EIO, "%s: cannot write: %s", path, strerror(err));
}
