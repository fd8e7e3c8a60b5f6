/* SPDX-License-Identifier: Apache-2.0 */
/* snarkjs Groth16 .zkey v1 reader. */
#include <stdio.h>
#include <stdlib.h>

#include "cuzk/io.h"
#include "io/binfile.h"
#include "io/io_internal.h"

#define ZKEY_PROTOCOL_GROTH16 1   /* snarkjs zkey_constants.js */
#define ZKEY_PROTOCOL_PLONK 2
#define ZKEY_PROTOCOL_FFLONK 10
#define G1_BYTES 96               /* snarkjs G1: x || y, 48 bytes each */
#define G2_BYTES 192              /* snarkjs G2: x.c0 || x.c1 || y.c0 || y.c1 */
#define COEF_BYTES (12 + CUZK_FR_BYTES)  /* u32 matrix, u32 constraint, u32 signal, value */

static const char *const zkey_names[] = {
    NULL, "protocol", "Groth16 header", "IC points", "coefficients", "A points",
    "B1 points", "B2 points", "C points", "H points", "contributions",
};

void cuzk_zkey_free(cuzk_zkey *z)
{
    if (!z)
        return;
    free(z->ic);
    io_csr_free(&z->a);
    io_csr_free(&z->b);
    free(z->a_pts);
    free(z->b1_pts);
    free(z->b2_pts);
    free(z->c_pts);
    free(z->h_pts);
    free(z);
}

/* ---- point vectors ---- */

typedef struct {
    void *out;
    const uint8_t *in;
    unsigned flags;
    bool g2;
} pts_ctx;

static cuzk_err decode_one(const pts_ctx *c, size_t i)
{
    if (c->g2)
        return cuzk_g2_from_snarkjs((cuzk_g2_affine *)c->out + i, c->in + i * G2_BYTES, c->flags);
    return cuzk_g1_from_snarkjs((cuzk_g1_affine *)c->out + i, c->in + i * G1_BYTES, c->flags);
}

static bool decode_ok(void *vctx, size_t i) { return decode_one(vctx, i) == CUZK_OK; }

/* Section `id`, whose size must be that of `count` points. */
static cuzk_err points_section(const io_file *f, uint32_t id, uint64_t count, bool g2,
                               const io_section **s)
{
    cuzk_err e = io_section_get(f, id, s);
    if (e)
        return e;
    uint64_t psize = g2 ? G2_BYTES : G1_BYTES;
    if ((*s)->size != count * psize)
        return cuzk_error_set(CUZK_ESIZE,
                              "%s: section %u (%s): size %llu, expected %llu points * %llu "
                              "bytes = %llu",
                              f->path, id, io_secname(f, id), (unsigned long long)(*s)->size,
                              (unsigned long long)count, (unsigned long long)psize,
                              (unsigned long long)(count * psize));
    return CUZK_OK;
}

/* Decodes `count` points of section `id` (whose size must match) into a new array. */
static cuzk_err decode_points(const io_file *f, uint32_t id, uint64_t count, bool g2,
                              unsigned flags, void **out)
{
    *out = NULL;
    const io_section *s;
    cuzk_err e = points_section(f, id, count, g2, &s);
    if (e)
        return e;
    size_t esize = g2 ? sizeof(cuzk_g2_affine) : sizeof(cuzk_g1_affine);
    void *arr = malloc(count ? count * esize : 1);
    if (!arr)
        return cuzk_error_set(CUZK_ENOMEM, "%s: section %u (%s): out of memory for %llu points",
                              f->path, id, io_secname(f, id), (unsigned long long)count);
    pts_ctx c = {arr, s->p, flags, g2};
    size_t bad = io_par_first_fail(count, (flags & CUZK_DECODE_CHECK_SUBGROUP) ? 1 : 64,
                                   decode_ok, &c);
    if (bad < count) {
        e = decode_one(&c, bad);
        free(arr);
        return cuzk_error_set(e, "%s: section %u (%s): point %zu: %s", f->path, id,
                              io_secname(f, id), bad, cuzk_strerror(e));
    }
    *out = arr;
    return CUZK_OK;
}

/* ---- header ---- */

static cuzk_err parse_header(const io_file *f, cuzk_zkey *z)
{
    const io_section *s;
    cuzk_err e = io_section_get(f, 1, &s);
    if (e)
        return e;
    if (s->size != 4)
        return cuzk_error_set(CUZK_ESIZE, "%s: section 1 (protocol): size %llu, expected 4",
                              f->path, (unsigned long long)s->size);
    uint32_t proto = io_rd32(s->p);
    if (proto != ZKEY_PROTOCOL_GROTH16)
        return cuzk_error_set(CUZK_EUNSUPPORTED,
                              "%s: section 1 (protocol): protocol %u (%s) is not supported, only "
                              "Groth16 (1)",
                              f->path, proto,
                              proto == ZKEY_PROTOCOL_PLONK    ? "PLONK"
                              : proto == ZKEY_PROTOCOL_FFLONK ? "FFLONK"
                                                              : "unknown");

    e = io_section_get(f, 2, &s);
    if (e)
        return e;
    io_cur c = {s->p, s->size};
    char where[512];
    snprintf(where, sizeof where, "%s: section 2 (Groth16 header)", f->path);
    uint32_t n8q, n8r;
    if (!io_u32(&c, &n8q) || c.left < n8q)
        return cuzk_error_set(CUZK_ESIZE, "%s: too short", where);
    e = io_check_prime(where, "the base field q", n8q, c.p, true);
    if (e)
        return e;
    c.p += n8q;
    c.left -= n8q;
    if (!io_u32(&c, &n8r) || c.left < n8r)
        return cuzk_error_set(CUZK_ESIZE, "%s: too short", where);
    e = io_check_prime(where, "the scalar field r", n8r, c.p, false);
    if (e)
        return e;
    c.p += n8r;
    c.left -= n8r;
    const uint64_t rest = 12 + 3 * G1_BYTES + 3 * G2_BYTES;
    if (c.left != rest)
        return cuzk_error_set(CUZK_ESIZE, "%s: size %llu, expected %llu", where,
                              (unsigned long long)s->size,
                              (unsigned long long)(8 + CUZK_FP_BYTES + CUZK_FR_BYTES + rest));
    (void)(io_u32(&c, &z->n_vars) && io_u32(&c, &z->n_public) && io_u32(&c, &z->domain_size));
    uint32_t d = z->domain_size;
    if (d == 0 || (d & (d - 1)) != 0)
        return cuzk_error_set(CUZK_EFORMAT, "%s: domain size %u is not a power of two", where, d);
    z->log2_domain = (uint32_t)__builtin_ctz(d);
    if ((uint64_t)z->n_public + 1 > z->n_vars)
        return cuzk_error_set(CUZK_EFORMAT, "%s: %u public signals + 1 exceed the %u variables",
                              where, z->n_public, z->n_vars);
    if ((uint64_t)z->n_public + 1 > d)
        return cuzk_error_set(CUZK_EFORMAT, "%s: domain size %u is not above %u public signals",
                              where, d, z->n_public);

    /* alpha1, beta1 (G1), beta2, gamma2 (G2), delta1 (G1), delta2 (G2) */
    static const struct { const char *name; bool g2; size_t off; } vk[] = {
        {"alpha1", false, offsetof(cuzk_zkey, alpha1)},
        {"beta1", false, offsetof(cuzk_zkey, beta1)},
        {"beta2", true, offsetof(cuzk_zkey, beta2)},
        {"gamma2", true, offsetof(cuzk_zkey, gamma2)},
        {"delta1", false, offsetof(cuzk_zkey, delta1)},
        {"delta2", true, offsetof(cuzk_zkey, delta2)},
    };
    for (size_t k = 0; k < sizeof vk / sizeof vk[0]; k++) {
        void *dst = (char *)z + vk[k].off;
        bool inf;
        if (vk[k].g2) {
            e = cuzk_g2_from_snarkjs(dst, c.p, CUZK_DECODE_CHECK_SUBGROUP);
            inf = !e && cuzk_g2_affine_is_inf(dst);
            c.p += G2_BYTES;
        } else {
            e = cuzk_g1_from_snarkjs(dst, c.p, CUZK_DECODE_CHECK_SUBGROUP);
            inf = !e && cuzk_g1_affine_is_inf(dst);
            c.p += G1_BYTES;
        }
        if (e)
            return cuzk_error_set(e, "%s: %s: %s", where, vk[k].name, cuzk_strerror(e));
        if (inf)
            return cuzk_error_set(CUZK_EFORMAT, "%s: %s is the point at infinity", where,
                                  vk[k].name);
    }
    return CUZK_OK;
}

/* ---- coefficients (section 4) ---- */

typedef struct {
    const uint8_t *base;    /* first entry */
    const uint32_t *pos;    /* destination of each entry within its matrix */
    cuzk_csr *mat[2];
} coef_ctx;

static bool coef_conv(void *vctx, size_t i)
{
    const coef_ctx *c = vctx;
    const uint8_t *p = c->base + i * COEF_BYTES;
    /* The file stores v*R^2 mod r. Read as a Montgomery value that is (v*R^2)*R^-1 = v*R;
     * multiplying by the element whose Montgomery limbs are 1 (i.e. by R^-1 once more)
     * leaves limbs v*R, the Montgomery form of v. */
    static const cuzk_fr limbs_one = {{1, 0, 0, 0}};
    cuzk_fr t;
    if (cuzk_fr_from_mont_bytes_le(&t, p + 12) != CUZK_OK)
        return false;
    cuzk_fr_mul(&c->mat[io_rd32(p)]->val[c->pos[i]], &t, &limbs_one);
    return true;
}

static cuzk_err parse_coefs(const io_file *f, cuzk_zkey *z)
{
    const io_section *s;
    cuzk_err e = io_section_get(f, 4, &s);
    if (e)
        return e;
    const char *where = "section 4 (coefficients)";
    if (s->size < 4)
        return cuzk_error_set(CUZK_ESIZE, "%s: %s: size %llu, too short", f->path, where,
                              (unsigned long long)s->size);
    uint32_t n = io_rd32(s->p);
    if (s->size != 4 + (uint64_t)n * COEF_BYTES)
        return cuzk_error_set(CUZK_ESIZE, "%s: %s: size %llu, expected 4 + %u entries * %d = %llu",
                              f->path, where, (unsigned long long)s->size, n, COEF_BYTES,
                              (unsigned long long)(4 + (uint64_t)n * COEF_BYTES));
    const uint8_t *base = s->p + 4;
    /* Pass 1: indices, and the number of rows. */
    uint32_t n_rows = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p = base + (size_t)i * COEF_BYTES;
        uint32_t m = io_rd32(p), row = io_rd32(p + 4), sig = io_rd32(p + 8);
        if (m > 1)
            return cuzk_error_set(CUZK_EFORMAT, "%s: %s: entry %u: matrix %u (only 0 = A, 1 = B)",
                                  f->path, where, i, m);
        if (row >= z->domain_size)
            return cuzk_error_set(CUZK_EFORMAT,
                                  "%s: %s: entry %u: constraint %u is outside the domain of %u",
                                  f->path, where, i, row, z->domain_size);
        if (sig >= z->n_vars)
            return cuzk_error_set(CUZK_EFORMAT,
                                  "%s: %s: entry %u: signal %u out of range (%u variables)",
                                  f->path, where, i, sig, z->n_vars);
        if (row + 1 > n_rows)
            n_rows = row + 1;
    }
    if (n_rows < z->n_public + 1)
        return cuzk_error_set(CUZK_EFORMAT,
                              "%s: %s: %u rows, fewer than the %u rows of the public signals",
                              f->path, where, n_rows, z->n_public + 1);
    z->n_rows = n_rows;
    z->n_constraints = n_rows - z->n_public - 1;
    cuzk_csr *mat[2] = {&z->a, &z->b};
    for (int m = 0; m < 2; m++) {
        mat[m]->n_rows = n_rows;
        mat[m]->row = calloc((size_t)n_rows + 1, sizeof(uint64_t));
        if (!mat[m]->row)
            return cuzk_error_set(CUZK_ENOMEM, "%s: %s: out of memory", f->path, where);
    }
    /* Pass 2: counts per row, then offsets. */
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p = base + (size_t)i * COEF_BYTES;
        mat[io_rd32(p)]->row[io_rd32(p + 4) + 1]++;
    }
    for (int m = 0; m < 2; m++) {
        for (uint32_t r = 0; r < n_rows; r++)
            mat[m]->row[r + 1] += mat[m]->row[r];
        size_t nnz = mat[m]->row[n_rows];
        mat[m]->col = malloc((nnz ? nnz : 1) * sizeof(uint32_t));
        mat[m]->val = malloc((nnz ? nnz : 1) * sizeof(cuzk_fr));
        if (!mat[m]->col || !mat[m]->val)
            return cuzk_error_set(CUZK_ENOMEM, "%s: %s: out of memory", f->path, where);
    }
    /* Pass 3: columns in file order within each row (a stable counting sort), and the
     * destination of every value; pass 4 converts the values in parallel. */
    uint32_t *pos = malloc((n ? n : 1) * sizeof(uint32_t));
    uint64_t *next[2] = {malloc(((size_t)n_rows + 1) * sizeof(uint64_t)),
                         malloc(((size_t)n_rows + 1) * sizeof(uint64_t))};
    if (!pos || !next[0] || !next[1]) {
        free(pos);
        free(next[0]);
        free(next[1]);
        return cuzk_error_set(CUZK_ENOMEM, "%s: %s: out of memory", f->path, where);
    }
    for (int m = 0; m < 2; m++)
        memcpy(next[m], mat[m]->row, ((size_t)n_rows + 1) * sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p = base + (size_t)i * COEF_BYTES;
        uint32_t m = io_rd32(p);
        uint64_t at = next[m][io_rd32(p + 4)]++;
        mat[m]->col[at] = io_rd32(p + 8);
        pos[i] = (uint32_t)at;
    }
    free(next[0]);
    free(next[1]);
    coef_ctx cc = {base, pos, {&z->a, &z->b}};
    size_t bad = io_par_first_fail(n, 1024, coef_conv, &cc);
    free(pos);
    if (bad < n)
        return cuzk_error_set(CUZK_ENONCANONICAL, "%s: %s: entry %zu: value is not below r",
                              f->path, where, bad);
    return CUZK_OK;
}

static cuzk_err load(const io_file *f, cuzk_zkey *z)
{
    cuzk_err e = parse_header(f, z);
    if (e)
        return e;
    /* The IC points take part in every verification: check their subgroup too. */
    if ((e = decode_points(f, 3, (uint64_t)z->n_public + 1, false, CUZK_DECODE_CHECK_SUBGROUP,
                           (void **)&z->ic)))
        return e;
    /* The domain size bounds the rows that section 4 allocates: check it against the H
     * points first. */
    const io_section *h;
    if ((e = points_section(f, 9, z->domain_size, false, &h)) || (e = parse_coefs(f, z)))
        return e;
    if ((e = decode_points(f, 5, z->n_vars, false, 0, (void **)&z->a_pts)) ||
        (e = decode_points(f, 6, z->n_vars, false, 0, (void **)&z->b1_pts)) ||
        (e = decode_points(f, 7, z->n_vars, true, 0, (void **)&z->b2_pts)) ||
        (e = decode_points(f, 8, (uint64_t)z->n_vars - z->n_public - 1, false, 0,
                           (void **)&z->c_pts)) ||
        (e = decode_points(f, 9, z->domain_size, false, 0, (void **)&z->h_pts)))
        return e;
    return CUZK_OK;
}

cuzk_err cuzk_zkey_load(cuzk_zkey **out, const char *path)
{
    *out = NULL;
    io_file f;
    cuzk_err e = io_open(&f, path, "zkey", 1, zkey_names, sizeof zkey_names / sizeof *zkey_names);
    if (e)
        return e;
    cuzk_zkey *z = calloc(1, sizeof *z);
    if (!z) {
        io_close(&f);
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    }
    e = load(&f, z);
    cuzk_err fe = io_finish(&f); /* truncated or replaced meanwhile: what was read is not it */
    if (fe)
        e = fe;
    if (e) {
        cuzk_zkey_free(z);
        return e;
    }
    *out = z;
    return CUZK_OK;
}

cuzk_err cuzk_zkey_check_witness(const cuzk_zkey *z, const cuzk_fr *w, size_t n)
{
    if (n != z->n_vars)
        return cuzk_error_set(CUZK_ESIZE, "witness has %zu values, the key %u variables", n,
                              z->n_vars);
    if (!cuzk_fr_is_one(&w[0]))
        return cuzk_error_set(CUZK_EFORMAT, "witness value 0 is not 1");
    return CUZK_OK;
}
