/* SPDX-License-Identifier: Apache-2.0 */
/* snarkjs Groth16 .zkey writer (layout in ../shared/ANCHORS.md and include/cuzk/setup.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/setup.h"
#include "io/binfile.h" /* little-endian host check */

#define ZKEY_GROTH16 1          /* section 1: protocol id of Groth16 */
#define ZKEY_SECTIONS 10        /* sections 1 .. 10 */
#define ZKEY_HASH_BYTES 64      /* section 10: blake2b-512 circuit hash */
#define ZKEY_G1 96              /* snarkjs G1 encoding bytes */
#define ZKEY_G2 192             /* snarkjs G2 encoding bytes */
#define ZKEY_COEF (12 + CUZK_FR_BYTES) /* section 4 entry: matrix, row, signal, value */

typedef struct {
    FILE *f;
    bool ok;
} zw;

static void put(zw *w, const void *p, size_t n)
{
    if (w->ok && n && fwrite(p, 1, n, w->f) != n)
        w->ok = false;
}

static void put_u32(zw *w, uint32_t v) { put(w, &v, 4); } /* little-endian host (binfile.h) */

static void put_section(zw *w, uint32_t id, uint64_t size)
{
    put_u32(w, id);
    put(w, &size, 8);
}

static void put_g1(zw *w, const cuzk_g1_affine *p)
{
    uint8_t b[ZKEY_G1];
    cuzk_g1_to_snarkjs(b, p);
    put(w, b, sizeof b);
}

static void put_g2(zw *w, const cuzk_g2_affine *p)
{
    uint8_t b[ZKEY_G2];
    cuzk_g2_to_snarkjs(b, p);
    put(w, b, sizeof b);
}

static void put_g1s(zw *w, const cuzk_g1_affine *p, size_t n)
{
    for (size_t i = 0; i < n && w->ok; i++)
        put_g1(w, &p[i]);
}

static void put_g2s(zw *w, const cuzk_g2_affine *p, size_t n)
{
    for (size_t i = 0; i < n && w->ok; i++)
        put_g2(w, &p[i]);
}

/* Section 4 entries of row j of m (matrix id 0 = A, 1 = B); values v*R^2 mod r: the
 * Montgomery bytes of the element whose value is v*R, i.e. of x * rr where rr has the
 * value R. */
static void put_row(zw *w, const cuzk_csr *m, uint32_t id, uint32_t j, const cuzk_fr *rr)
{
    uint8_t b[ZKEY_COEF];
    for (uint64_t k = m->row[j]; k < m->row[j + 1]; k++) {
        cuzk_fr y;
        uint32_t h[3] = {id, j, m->col[k]};
        memcpy(b, h, 12);
        cuzk_fr_mul(&y, &m->val[k], rr);
        cuzk_fr_to_mont_bytes_le(b + 12, &y);
        put(w, b, sizeof b);
    }
}

cuzk_err cuzk_zkey_write(const char *path, const cuzk_zkey *z)
{
    if (!path || !z)
        return cuzk_error_set(CUZK_EINVAL, "zkey write: NULL argument");
    const uint64_t nv = z->n_vars, npub = z->n_public, n = z->domain_size;
    if (nv < npub + 1 || z->a.n_rows != z->n_rows || z->b.n_rows != z->n_rows ||
        n != (uint64_t)1 << z->log2_domain || z->n_rows > n)
        return cuzk_error_set(CUZK_EINVAL, "%s: inconsistent key (%llu vars, %llu public, "
                              "%u rows, domain %llu)", path, (unsigned long long)nv,
                              (unsigned long long)npub, z->n_rows, (unsigned long long)n);
    const uint64_t n_coefs = z->a.row[z->n_rows] + z->b.row[z->n_rows];
    if (n_coefs > UINT32_MAX)
        return cuzk_error_set(CUZK_ESIZE, "%s: %llu coefficients do not fit section 4's u32 count",
                              path, (unsigned long long)n_coefs);

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cuzk_err e = cuzk_error_set(CUZK_EIO, "%s: cannot create a temporary file: %s", path,
                                    strerror(errno));
        free(tmp);
        return e;
    }
    (void)fchmod(fd, 0644); /* mkstemp makes 0600; a key is not secret */
    zw w = {fdopen(fd, "wb"), true};
    if (!w.f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return cuzk_error_set(CUZK_EIO, "%s: %s", path, strerror(errno));
    }
    setvbuf(w.f, NULL, _IOFBF, 1 << 20);

    put(&w, "zkey", 4);
    put_u32(&w, 1);               /* container version */
    put_u32(&w, ZKEY_SECTIONS);

    /* 1: protocol */
    put_section(&w, 1, 4);
    put_u32(&w, ZKEY_GROTH16);

    /* 2: header */
    put_section(&w, 2, 4 + CUZK_FP_BYTES + 4 + CUZK_FR_BYTES + 12 + 3 * ZKEY_G1 + 3 * ZKEY_G2);
    uint8_t q[CUZK_FP_BYTES], rb[CUZK_FR_BYTES];
    memcpy(q, CUZK_FP_MODULUS.l, sizeof q);   /* canonical limbs, little-endian host */
    memcpy(rb, CUZK_FR_MODULUS.l, sizeof rb);
    put_u32(&w, CUZK_FP_BYTES);
    put(&w, q, sizeof q);
    put_u32(&w, CUZK_FR_BYTES);
    put(&w, rb, sizeof rb);
    put_u32(&w, z->n_vars);
    put_u32(&w, z->n_public);
    put_u32(&w, z->domain_size);
    put_g1(&w, &z->alpha1);
    put_g1(&w, &z->beta1);
    put_g2(&w, &z->beta2);
    put_g2(&w, &z->gamma2);
    put_g1(&w, &z->delta1);
    put_g2(&w, &z->delta2);

    /* 3: IC */
    put_section(&w, 3, (npub + 1) * ZKEY_G1);
    put_g1s(&w, z->ic, npub + 1);

    /* 4: coefficients, row by row: A's terms then B's */
    put_section(&w, 4, 4 + n_coefs * ZKEY_COEF);
    put_u32(&w, (uint32_t)n_coefs);
    uint8_t rbytes[CUZK_FR_BYTES];
    cuzk_fr one, rr;
    cuzk_fr_set_one(&one);
    cuzk_fr_to_mont_bytes_le(rbytes, &one);      /* R mod r as a canonical value */
    if (cuzk_fr_from_bytes_le(&rr, rbytes) != CUZK_OK)
        w.ok = false;                            /* cannot happen: R mod r < r */
    for (uint32_t j = 0; j < z->n_rows && w.ok; j++) {
        put_row(&w, &z->a, 0, j, &rr);
        put_row(&w, &z->b, 1, j, &rr);
    }

    /* 5..9: A, B1, B2, C, H */
    put_section(&w, 5, nv * ZKEY_G1);
    put_g1s(&w, z->a_pts, nv);
    put_section(&w, 6, nv * ZKEY_G1);
    put_g1s(&w, z->b1_pts, nv);
    put_section(&w, 7, nv * ZKEY_G2);
    put_g2s(&w, z->b2_pts, nv);
    put_section(&w, 8, (nv - npub - 1) * ZKEY_G1);
    put_g1s(&w, z->c_pts, nv - npub - 1);
    put_section(&w, 9, n * ZKEY_G1);
    put_g1s(&w, z->h_pts, n);

    /* 10: contributions: circuit hash (none: all zero), zero contributions */
    uint8_t hash[ZKEY_HASH_BYTES] = {0};
    put_section(&w, 10, ZKEY_HASH_BYTES + 4);
    put(&w, hash, sizeof hash);
    put_u32(&w, 0);

    int err = w.ok ? 0 : errno;
    if (fclose(w.f) != 0 && w.ok) {
        w.ok = false;
        err = errno;
    }
    if (w.ok && rename(tmp, path) != 0) {
        w.ok = false;
        err = errno;
    }
    if (!w.ok) {
        unlink(tmp);
        free(tmp);
        return cuzk_error_set(CUZK_EIO, "%s: write failed: %s", path,
                              err ? strerror(err) : "short write");
    }
    free(tmp);
    return CUZK_OK;
}
