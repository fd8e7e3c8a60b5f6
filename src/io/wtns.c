/* SPDX-License-Identifier: Apache-2.0 */
/* snarkjs .wtns v2 reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/io.h"
#include "io/binfile.h"

static const char *const wtns_names[] = {NULL, "header", "witness values"};

void cuzk_wtns_free(cuzk_wtns *w)
{
    if (!w)
        return;
    if (!w->borrowed)
        free(w->w);
    free(w);
}

typedef struct {
    cuzk_fr *out;
    const uint8_t *in;
} val_ctx;

static bool conv_value(void *vctx, size_t i)
{
    val_ctx *c = vctx;
    return cuzk_fr_from_bytes_le(&c->out[i], c->in + i * CUZK_FR_BYTES) == CUZK_OK;
}

/* Value i's 32 little-endian bytes are below r (canonical), read in place. */
static bool below_r(void *vctx, size_t i)
{
    const uint8_t *p = (const uint8_t *)vctx + i * CUZK_FR_BYTES;
    for (int k = CUZK_FR_LIMBS - 1; k >= 0; k--) {
        uint64_t x;
        memcpy(&x, p + 8 * k, 8); /* little-endian host (io/binfile.h) */
        if (x != CUZK_FR_MODULUS.l[k])
            return x < CUZK_FR_MODULUS.l[k];
    }
    return false;
}

/* check: the checks of a load (the structure, every value below r) without the values
 * kept: w->n their count, w->w one value, the first (n > 0), in new memory. */
static cuzk_err load(io_file *f, cuzk_wtns *w, cuzk_fr *buf, size_t cap, bool check)
{
    const io_section *s;
    io_cur c;
    /* only the header and the values: an upload padded with other sections or trailing
     * bytes would hold memory the witness does not count */
    cuzk_err e = io_expect_only(f, 1u << 1 | 1u << 2, ".wtns");
    if (e)
        return e;
    e = io_field_header(f, &s, &c);
    if (e)
        return e;
    uint32_t n8 = CUZK_FR_BYTES; /* io_field_header accepted only BLS12-381's r */
    if (c.left != 4)
        return cuzk_error_set(CUZK_ESIZE, "%s: section 1 (header): size %llu, expected %u",
                              f->path, (unsigned long long)s->size, 4 + n8 + 4);
    (void)io_u32(&c, &w->n);

    e = io_section_get(f, 2, &s);
    if (e)
        return e;
    if (s->size != (uint64_t)w->n * CUZK_FR_BYTES)
        return cuzk_error_set(CUZK_ESIZE,
                              "%s: section 2 (witness values): size %llu, expected %u values * "
                              "%d bytes = %llu",
                              f->path, (unsigned long long)s->size, w->n, CUZK_FR_BYTES,
                              (unsigned long long)w->n * CUZK_FR_BYTES);
    if (check) {
        size_t bad = io_par_first_fail(w->n, 1u << 14, below_r, (void *)s->p);
        if (bad < w->n)
            return cuzk_error_set(CUZK_ENONCANONICAL,
                                  "%s: section 2 (witness values): value %zu is not below r",
                                  f->path, bad);
        w->w = calloc(1, sizeof(cuzk_fr));
        w->cap = 1;
        if (!w->w)
            return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", f->path);
        if (w->n) /* below r: the scan said so */
            cuzk_fr_from_bytes_le_reduce(&w->w[0], s->p);
        return CUZK_OK;
    }
    if (buf && w->n <= cap) {
        w->w = buf;
        w->cap = cap;
        w->borrowed = true;
    } else {
        w->w = malloc((w->n ? w->n : 1) * sizeof(cuzk_fr));
        w->cap = w->n;
    }
    if (!w->w)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory for %u values", f->path, w->n);
    val_ctx vc = {w->w, s->p};
    size_t bad = io_par_first_fail(w->n, 1024, conv_value, &vc);
    if (bad < w->n)
        return cuzk_error_set(CUZK_ENONCANONICAL,
                              "%s: section 2 (witness values): value %zu is not below r",
                              f->path, bad);
    return CUZK_OK;
}

/* The witness of the opened f (file or image), closed here. */
static cuzk_err load_opened(cuzk_wtns **out, io_file *f, cuzk_fr *buf, size_t cap,
                            bool check)
{
    cuzk_wtns *w = calloc(1, sizeof *w);
    cuzk_err e = w ? load(f, w, buf, cap, check)
                   : cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", f->path);
    cuzk_err fe = io_finish(f); /* truncated or replaced meanwhile: what was read is not it */
    if (fe)
        e = fe;
    if (e) {
        cuzk_wtns_free(w);
        return e;
    }
    *out = w;
    return CUZK_OK;
}

cuzk_err cuzk_wtns_load(cuzk_wtns **out, const char *path)
{
    return cuzk_wtns_load_into(out, path, NULL, 0);
}

static cuzk_err load_path(cuzk_wtns **out, const char *path, cuzk_fr *buf, size_t cap,
                          bool check)
{
    *out = NULL;
    io_file f;
    cuzk_err e = io_open(&f, path, "wtns", 2, wtns_names, sizeof wtns_names / sizeof *wtns_names);
    return e ? e : load_opened(out, &f, buf, cap, check);
}

cuzk_err cuzk_wtns_load_into(cuzk_wtns **out, const char *path, cuzk_fr *buf, size_t cap)
{
    return load_path(out, path, buf, cap, false);
}

cuzk_err cuzk_wtns_check(cuzk_wtns **out, const char *path)
{
    return load_path(out, path, NULL, 0, true);
}

cuzk_err cuzk_wtns_load_mem(cuzk_wtns **out, const char *name, const void *data, size_t len)
{
    return cuzk_wtns_load_mem_into(out, name, data, len, NULL, 0);
}

cuzk_err cuzk_wtns_load_mem_into(cuzk_wtns **out, const char *name, const void *data,
                                 size_t len, cuzk_fr *buf, size_t cap)
{
    *out = NULL;
    if (!name)
        name = ".wtns image";
    io_file f;
    cuzk_err e = io_open_mem(&f, name, data, len, "wtns", 2, wtns_names,
                             sizeof wtns_names / sizeof *wtns_names);
    return e ? e : load_opened(out, &f, buf, cap, false);
}
