/* SPDX-License-Identifier: Apache-2.0 */
/* circom .r1cs v1 writer (inverse of cuzk_r1cs_load) and the container helpers that the
 * streaming generator shares. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/gen.h"
#include "io/io_write.h"

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);   /* little-endian host, checked in binfile.h */
    return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
    return p + 8;
}

static uint8_t *put_prime_r(uint8_t *p)
{
    p = put32(p, CUZK_FR_BYTES);
    memcpy(p, CUZK_FR_MODULUS.l, CUZK_FR_BYTES);   /* canonical limbs, LE = the prime's bytes */
    return p + CUZK_FR_BYTES;
}

static uint8_t *put_file_header(uint8_t *p, const char magic[4], uint32_t version, uint32_t nsec)
{
    memcpy(p, magic, 4);
    p = put32(p + 4, version);
    return put32(p, nsec);
}

static uint8_t *put_sec_header(uint8_t *p, uint32_t id, uint64_t size)
{
    return put64(put32(p, id), size);
}

void io_r1cs_prefix(uint8_t out[IO_W_R1CS_PREFIX], const io_r1cs_counts *c, uint64_t sec2_size,
                    uint32_t n_sections)
{
    uint8_t *p = put_file_header(out, "r1cs", 1, n_sections);
    p = put_sec_header(p, 1, IO_W_R1CS_SEC1);
    p = put_prime_r(p);
    p = put32(p, c->n_wires);
    p = put32(p, c->n_pub_out);
    p = put32(p, c->n_pub_in);
    p = put32(p, c->n_prv_in);
    p = put64(p, c->n_labels);
    p = put32(p, c->n_constraints);
    put_sec_header(p, 2, sec2_size);
}

void io_r1cs_sec3_header(uint8_t out[IO_W_SEC_HEADER], uint32_t n_wires)
{
    put_sec_header(out, 3, (uint64_t)n_wires * 8);
}

void io_wtns_prefix(uint8_t out[IO_W_WTNS_PREFIX], uint32_t n)
{
    uint8_t *p = put_file_header(out, "wtns", 2, 2);
    p = put_sec_header(p, 1, IO_W_WTNS_SEC1);
    p = put_prime_r(p);
    p = put32(p, n);
    put_sec_header(p, 2, (uint64_t)n * CUZK_FR_BYTES);
}

int io_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (w == 0)
            return EIO;
        p += w;
        len -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

static cuzk_err write_fail(FILE *f, const char *path)
{
    int err = errno;
    if (f)
        fclose(f);
    return cuzk_error_set(CUZK_EIO, "%s: cannot write: %s", path, strerror(err ? err : EIO));
}

cuzk_err cuzk_r1cs_write(const char *path, const cuzk_r1cs *r)
{
    if (!path || !r)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_r1cs_write: NULL argument");
    for (int m = 0; m < 3; m++)
        if (r->m[m].n_rows != r->n_constraints)
            return cuzk_error_set(CUZK_ESIZE, "%s: matrix %c has %zu rows for %u constraints",
                                  path, "ABC"[m], r->m[m].n_rows, r->n_constraints);
    uint64_t sec2 = (uint64_t)r->n_constraints * 12;
    for (int m = 0; m < 3; m++)
        sec2 += r->m[m].row[r->n_constraints] * IO_W_TERM_BYTES;
    FILE *f = fopen(path, "wb");
    if (!f)
        return write_fail(NULL, path);
    io_r1cs_counts c = {r->n_wires, r->n_pub_out, r->n_pub_in, r->n_prv_in, r->n_labels,
                        r->n_constraints};
    uint8_t pre[IO_W_R1CS_PREFIX];
    io_r1cs_prefix(pre, &c, sec2, r->wire_labels ? 3 : 2);
    if (fwrite(pre, 1, sizeof pre, f) != sizeof pre)
        return write_fail(f, path);
    uint8_t term[IO_W_TERM_BYTES];
    for (size_t i = 0; i < r->n_constraints; i++) {
        for (int m = 0; m < 3; m++) {
            const cuzk_csr *x = &r->m[m];
            uint32_t nt = (uint32_t)(x->row[i + 1] - x->row[i]);
            put32(term, nt);
            if (fwrite(term, 1, 4, f) != 4)
                return write_fail(f, path);
            for (uint64_t k = x->row[i]; k < x->row[i + 1]; k++) {
                put32(term, x->col[k]);
                cuzk_fr_to_bytes_le(term + 4, &x->val[k]);
                if (fwrite(term, 1, sizeof term, f) != sizeof term)
                    return write_fail(f, path);
            }
        }
    }
    if (r->wire_labels) {
        uint8_t h[IO_W_SEC_HEADER];
        io_r1cs_sec3_header(h, r->n_wires);
        if (fwrite(h, 1, sizeof h, f) != sizeof h ||
            fwrite(r->wire_labels, 8, r->n_wires, f) != r->n_wires)
            return write_fail(f, path);
    }
    if (fclose(f) != 0)
        return write_fail(NULL, path);
    return CUZK_OK;
}
