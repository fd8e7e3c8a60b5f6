/* SPDX-License-Identifier: Apache-2.0 */
/* circom .r1cs v1 reader. */
#include <stdio.h>
#include <stdlib.h>

#include "cuzk/io.h"
#include "io/binfile.h"
#include "io/io_internal.h"

static const char *const r1cs_names[] = {
    NULL, "header", "constraints", "wire labels", "custom gates list", "custom gates uses",
};

void cuzk_r1cs_free(cuzk_r1cs *r)
{
    if (!r)
        return;
    for (int m = 0; m < 3; m++)
        io_csr_free(&r->m[m]);
    free(r->wire_labels);
    free(r);
}

typedef struct {
    cuzk_r1cs *r;
    const uint8_t **cons;   /* start of each constraint in the mapping */
} fill_ctx;

/* Fills the terms of constraint i; false at the first bad wire or coefficient. */
static bool fill_constraint(void *vctx, size_t i)
{
    fill_ctx *c = vctx;
    cuzk_r1cs *r = c->r;
    const uint8_t *p = c->cons[i];
    for (int m = 0; m < 3; m++) {
        uint32_t nt = io_rd32(p);
        p += 4;
        uint64_t at = r->m[m].row[i];
        for (uint32_t k = 0; k < nt; k++, p += 4 + CUZK_FR_BYTES) {
            uint32_t wire = io_rd32(p);
            if (wire >= r->n_wires)
                return false;
            r->m[m].col[at + k] = wire;
            if (cuzk_fr_from_bytes_le(&r->m[m].val[at + k], p + 4) != CUZK_OK)
                return false;
        }
    }
    return true;
}

static cuzk_err constraint_error(const fill_ctx *c, const char *path, size_t i)
{
    static const char mname[3] = {'A', 'B', 'C'};
    const cuzk_r1cs *r = c->r;
    const uint8_t *p = c->cons[i];
    for (int m = 0; m < 3; m++) {
        uint32_t nt = io_rd32(p);
        p += 4;
        for (uint32_t k = 0; k < nt; k++, p += 4 + CUZK_FR_BYTES) {
            uint32_t wire = io_rd32(p);
            cuzk_fr t;
            if (wire >= r->n_wires)
                return cuzk_error_set(CUZK_EFORMAT,
                                      "%s: section 2 (constraints): constraint %zu, %c term %u: "
                                      "wire %u out of range (%u wires)",
                                      path, i, mname[m], k, wire, r->n_wires);
            if (cuzk_fr_from_bytes_le(&t, p + 4) != CUZK_OK)
                return cuzk_error_set(CUZK_ENONCANONICAL,
                                      "%s: section 2 (constraints): constraint %zu, %c term %u: "
                                      "coefficient is not below r",
                                      path, i, mname[m], k);
        }
    }
    return cuzk_error_set(CUZK_EFORMAT, "%s: section 2 (constraints): constraint %zu: invalid",
                          path, i);
}

static cuzk_err parse_header(io_file *f, cuzk_r1cs *r, uint32_t *n8_out)
{
    const io_section *s;
    io_cur c;
    cuzk_err e = io_field_header(f, &s, &c);
    if (e)
        return e;
    uint32_t n8 = CUZK_FR_BYTES; /* io_field_header accepted only BLS12-381's r */
    if (s->size != 4 + (uint64_t)n8 + 28)
        return cuzk_error_set(CUZK_ESIZE, "%s: section 1 (header): size %llu, expected %llu",
                              f->path, (unsigned long long)s->size,
                              (unsigned long long)(4 + (uint64_t)n8 + 28));
    (void)(io_u32(&c, &r->n_wires) && io_u32(&c, &r->n_pub_out) && io_u32(&c, &r->n_pub_in) &&
           io_u32(&c, &r->n_prv_in) && io_u64(&c, &r->n_labels) && io_u32(&c, &r->n_constraints));
    uint64_t inputs = 1 + (uint64_t)r->n_pub_out + r->n_pub_in + r->n_prv_in;
    if (inputs > r->n_wires)
        return cuzk_error_set(CUZK_EFORMAT,
                              "%s: section 1 (header): 1 + %u outputs + %u public + %u private "
                              "inputs exceed the %u wires",
                              f->path, r->n_pub_out, r->n_pub_in, r->n_prv_in, r->n_wires);
    r->n_public = r->n_pub_out + r->n_pub_in;
    *n8_out = n8;
    return CUZK_OK;
}

static cuzk_err parse_constraints(io_file *f, cuzk_r1cs *r)
{
    const io_section *s;
    cuzk_err e = io_section_get(f, 2, &s);
    if (e)
        return e;
    size_t nc = r->n_constraints;
    /* Each constraint holds at least its three term counts: refuse an impossible count
     * before allocating for it. */
    if (s->size / 12 < nc)
        return cuzk_error_set(CUZK_ESIZE,
                              "%s: section 2 (constraints): %llu bytes cannot hold %zu constraints",
                              f->path, (unsigned long long)s->size, nc);
    const uint8_t **cons = malloc((nc ? nc : 1) * sizeof *cons);
    for (int m = 0; m < 3; m++) {
        r->m[m].n_rows = nc;
        r->m[m].row = calloc(nc + 1, sizeof(uint64_t));
    }
    if (!cons || !r->m[0].row || !r->m[1].row || !r->m[2].row) {
        free(cons);
        return cuzk_error_set(CUZK_ENOMEM, "%s: section 2 (constraints): out of memory for %zu "
                              "constraints", f->path, nc);
    }
    /* Pass 1: structure and row offsets. */
    io_cur c = {s->p, s->size};
    const uint64_t term = 4 + CUZK_FR_BYTES;
    for (size_t i = 0; i < nc; i++) {
        cons[i] = c.p;
        for (int m = 0; m < 3; m++) {
            uint32_t nt;
            if (!io_u32(&c, &nt) || c.left / term < nt) {
                free(cons);
                return cuzk_error_set(CUZK_ESIZE,
                                      "%s: section 2 (constraints): constraint %zu of %zu passes "
                                      "the end of the section (%llu bytes)",
                                      f->path, i, nc, (unsigned long long)s->size);
            }
            c.p += nt * term;
            c.left -= nt * term;
            r->m[m].row[i + 1] = r->m[m].row[i] + nt;
        }
    }
    if (c.left != 0) {
        free(cons);
        return cuzk_error_set(CUZK_ESIZE,
                              "%s: section 2 (constraints): %llu bytes left after %zu constraints",
                              f->path, (unsigned long long)c.left, nc);
    }
    for (int m = 0; m < 3; m++) {
        size_t nnz = r->m[m].row[nc];
        r->m[m].col = malloc((nnz ? nnz : 1) * sizeof(uint32_t));
        r->m[m].val = malloc((nnz ? nnz : 1) * sizeof(cuzk_fr));
        if (!r->m[m].col || !r->m[m].val) {
            free(cons);
            return cuzk_error_set(CUZK_ENOMEM, "%s: section 2 (constraints): out of memory",
                                  f->path);
        }
    }
    /* Pass 2: wires and coefficients, in parallel. */
    fill_ctx fc = {r, cons};
    size_t bad = io_par_first_fail(nc, 32, fill_constraint, &fc);
    if (bad < nc)
        e = constraint_error(&fc, f->path, bad);
    free(cons);
    return e;
}

cuzk_err cuzk_r1cs_load(cuzk_r1cs **out, const char *path)
{
    *out = NULL;
    io_file f;
    cuzk_err e = io_open(&f, path, "r1cs", 1, r1cs_names, sizeof r1cs_names / sizeof *r1cs_names);
    if (e)
        return e;
    cuzk_r1cs *r = calloc(1, sizeof *r);
    if (!r) {
        io_close(&f);
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    }
    uint32_t n8 = 0;
    e = parse_header(&f, r, &n8);
    if (!e && (f.sec[4].present || f.sec[5].present))
        e = cuzk_error_set(CUZK_EUNSUPPORTED, "%s: section %d (%s): custom gates are not supported",
                           path, f.sec[4].present ? 4 : 5, r1cs_names[f.sec[4].present ? 4 : 5]);
    if (!e)
        e = parse_constraints(&f, r);
    if (!e && f.sec[3].present) {
        const io_section *s = &f.sec[3];
        if (s->size != (uint64_t)r->n_wires * 8) {
            e = cuzk_error_set(CUZK_ESIZE, "%s: section 3 (wire labels): size %llu, expected "
                               "%u wires * 8 = %llu", path, (unsigned long long)s->size,
                               r->n_wires, (unsigned long long)r->n_wires * 8);
        } else {
            r->wire_labels = malloc(s->size ? s->size : 1);
            if (!r->wire_labels)
                e = cuzk_error_set(CUZK_ENOMEM, "%s: section 3 (wire labels): out of memory", path);
            else
                memcpy(r->wire_labels, s->p, s->size);
        }
    }
    cuzk_err fe = io_finish(&f); /* truncated or replaced meanwhile: what was read is not it */
    if (fe)
        e = fe;
    if (e) {
        cuzk_r1cs_free(r);
        return e;
    }
    *out = r;
    return CUZK_OK;
}

/* ---- witness check ---- */

typedef struct {
    const cuzk_r1cs *r;
    const cuzk_fr *w;
} sat_ctx;

static bool sat_row(void *vctx, size_t i)
{
    const sat_ctx *c = vctx;
    cuzk_fr v[3];
    for (int m = 0; m < 3; m++)
        io_csr_row_dot(&v[m], &c->r->m[m], i, c->w);
    cuzk_fr_mul(&v[0], &v[0], &v[1]);
    return cuzk_fr_eq(&v[0], &v[2]);
}

cuzk_err cuzk_r1cs_check_witness(const cuzk_r1cs *r, const cuzk_fr *w, size_t n, size_t *bad)
{
    if (bad)
        *bad = SIZE_MAX;
    if (n != r->n_wires)
        return cuzk_error_set(CUZK_ESIZE, "witness has %zu values, the r1cs %u wires", n,
                              r->n_wires);
    if (n == 0 || !cuzk_fr_is_one(&w[0]))
        return cuzk_error_set(CUZK_EFORMAT, "witness value 0 is not 1");
    sat_ctx c = {r, w};
    size_t i = io_par_first_fail(r->n_constraints, 32, sat_row, &c);
    if (i < r->n_constraints) {
        if (bad)
            *bad = i;
        return cuzk_error_set(CUZK_EVERIFY, "witness does not satisfy constraint %zu of %u", i,
                              r->n_constraints);
    }
    return CUZK_OK;
}
