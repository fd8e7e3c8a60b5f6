/* SPDX-License-Identifier: Apache-2.0 */
/* io: .r1cs, .wtns, .zkey readers and snarkjs JSON, against circom/snarkjs fixtures
 * (tests/data/circuits, made by tests/data/make_fixtures.sh). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cuzk/io.h"
#include "cuzk/pairing.h"
#include "cuzk/params.h"
#include "io/binfile.h"
#include "test.h"
#include "test_files.h"
#include "test_points.h"

static char tmp_dir[256];

static bool files_equal(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = read_all(a, &na), *y = read_all(b, &nb);
    bool eq = na == nb && memcmp(x, y, na) == 0;
    if (!eq)
        fprintf(stderr, "files differ: %s (%zu bytes) and %s (%zu bytes)\n", a, na, b, nb);
    free(x);
    free(y);
    return eq;
}

/* ---- container rewriting: parse a (trusted) fixture, edit its sections, write it ---- */
typedef struct {
    uint32_t id;
    uint64_t size;
    uint8_t *data;
} tsec;
typedef struct {
    uint8_t magic[4];
    uint32_t version;
    int n;
    tsec s[32];
} tfile;

static void tf_read(tfile *t, const char *path)
{
    size_t n;
    uint8_t *b = read_all(path, &n);
    memset(t, 0, sizeof *t);
    memcpy(t->magic, b, 4);
    memcpy(&t->version, b + 4, 4);
    uint32_t ns;
    memcpy(&ns, b + 8, 4);
    size_t pos = 12;
    for (uint32_t i = 0; i < ns; i++) {
        tsec *s = &t->s[t->n++];
        memcpy(&s->id, b + pos, 4);
        memcpy(&s->size, b + pos + 4, 8);
        pos += 12;
        s->data = malloc(s->size + 1);
        memcpy(s->data, b + pos, s->size);
        pos += s->size;
    }
    free(b);
}

static void tf_write(const tfile *t, const char *path)
{
    size_t total = 12;
    for (int i = 0; i < t->n; i++)
        total += 12 + t->s[i].size;
    uint8_t *b = malloc(total), *p = b;
    memcpy(p, t->magic, 4);
    memcpy(p + 4, &t->version, 4);
    uint32_t ns = (uint32_t)t->n;
    memcpy(p + 8, &ns, 4);
    p += 12;
    for (int i = 0; i < t->n; i++) {
        memcpy(p, &t->s[i].id, 4);
        memcpy(p + 4, &t->s[i].size, 8);
        memcpy(p + 12, t->s[i].data, t->s[i].size);
        p += 12 + t->s[i].size;
    }
    write_all(path, b, total);
    free(b);
}

static void tf_copy(tfile *dst, const tfile *src)
{
    *dst = *src;
    for (int i = 0; i < src->n; i++) {
        dst->s[i].data = malloc(src->s[i].size + 1);
        memcpy(dst->s[i].data, src->s[i].data, src->s[i].size);
    }
}

static void tf_free(tfile *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->s[i].data);
    t->n = 0;
}

static tsec *tf_sec(tfile *t, uint32_t id)
{
    for (int i = 0; i < t->n; i++)
        if (t->s[i].id == id)
            return &t->s[i];
    fprintf(stderr, "fixture has no section %u\n", id);
    exit(2);
}

static void tf_resize(tsec *s, uint64_t size)
{
    s->data = realloc(s->data, size + 1);
    if (size > s->size)
        memset(s->data + s->size, 0, size - s->size);
    s->size = size;
}

/* ---- loaders by kind, for the generic corruption tests ---- */
/* K_WTNS_MEM: the file's bytes through cuzk_wtns_load_mem, named by the path;
 * K_WTNS_CHECK: cuzk_wtns_check (the submission's check, no values kept) */
typedef enum { K_R1CS, K_WTNS, K_ZKEY, K_WTNS_MEM, K_WTNS_CHECK } kind;

static cuzk_err load_kind(kind k, const char *path)
{
    cuzk_err e;
    if (k == K_WTNS_MEM) {
        size_t n;
        uint8_t *b = read_all(path, &n);
        cuzk_wtns *w = (cuzk_wtns *)1;
        e = cuzk_wtns_load_mem(&w, path, b, n);
        CHECK(e ? w == NULL : w != NULL);
        cuzk_wtns_free(w);
        free(b);
    } else if (k == K_R1CS) {
        cuzk_r1cs *r = (cuzk_r1cs *)1;
        e = cuzk_r1cs_load(&r, path);
        CHECK(e ? r == NULL : r != NULL);
        cuzk_r1cs_free(r);
    } else if (k == K_WTNS) {
        cuzk_wtns *w = (cuzk_wtns *)1;
        e = cuzk_wtns_load(&w, path);
        CHECK(e ? w == NULL : w != NULL);
        cuzk_wtns_free(w);
    } else if (k == K_WTNS_CHECK) {
        cuzk_wtns *w = (cuzk_wtns *)1;
        e = cuzk_wtns_check(&w, path);
        CHECK(e ? w == NULL : (w != NULL && w->cap == 1));
        cuzk_wtns_free(w);
    } else {
        cuzk_zkey *z = (cuzk_zkey *)1;
        e = cuzk_zkey_load(&z, path);
        CHECK(e ? z == NULL : z != NULL);
        cuzk_zkey_free(z);
    }
    return e;
}

/* The error has the expected code and its detail names the file. */
static int expect_fail_line;
#define EXPECT_ERR(call, code, path)                                                      \
    do {                                                                                  \
        cuzk_error_clear();                                                               \
        expect_fail_line = __LINE__;                                                      \
        CHECK_EQ_ERR((call), (code));                                                     \
        const char *d_ = cuzk_error_detail();                                             \
        const char *b_ = strrchr((path), '/');                                            \
        if (!strstr(d_, b_ ? b_ + 1 : (path))) {                                          \
            fprintf(stderr, "line %d: detail lacks the file name: \"%s\"\n", __LINE__, d_); \
            CHECK(0);                                                                     \
        }                                                                                 \
    } while (0)

/* ---- fixture loading and consistency ---- */

typedef struct {
    const char *name;
    uint32_t wires, constraints, n_public, domain;
} circuit_facts;

/* From r1cs_info.txt (snarkjs r1cs info) of each fixture; domain = smallest power of two
 * above constraints + public signals. */
static const circuit_facts facts[] = {
    {"multiplier", 4, 1, 1, 4},
    {"chain", 142, 139, 3, 256},
    {"nopub", 4, 2, 0, 4},
};

static void test_fixture(const circuit_facts *f)
{
    char p_r1cs[1200], p_wtns[1200], p_zkey[1200], p_pub[1200];
    test_fixture_path(p_r1cs, sizeof p_r1cs, f->name, "circuit.r1cs");
    test_fixture_path(p_wtns, sizeof p_wtns, f->name, "witness.wtns");
    test_fixture_path(p_zkey, sizeof p_zkey, f->name, "circuit.zkey");
    test_fixture_path(p_pub, sizeof p_pub, f->name, "public.json");
    cuzk_r1cs *r;
    cuzk_wtns *w;
    cuzk_zkey *z;
    CHECK_EQ_ERR(cuzk_r1cs_load(&r, p_r1cs), CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&w, p_wtns), CUZK_OK);
    CHECK_EQ_ERR(cuzk_zkey_load(&z, p_zkey), CUZK_OK);
    if (!r || !w || !z) {
        fprintf(stderr, "%s: %s\n", f->name, cuzk_error_detail());
        exit(1);
    }
    CHECK(r->n_wires == f->wires);
    CHECK(r->n_constraints == f->constraints);
    CHECK(r->n_public == f->n_public);
    CHECK(r->m[0].n_rows == f->constraints);
    CHECK(r->wire_labels != NULL);
    CHECK(w->n == f->wires);
    cuzk_wtns *wc = NULL;
    CHECK_EQ_ERR(cuzk_wtns_check(&wc, p_wtns), CUZK_OK);
    CHECK(wc && wc->n == w->n && wc->cap == 1 && cuzk_fr_is_one(&wc->w[0]) &&
          !memcmp(&wc->w[0], &w->w[0], sizeof(cuzk_fr)));
    cuzk_wtns_free(wc);
    CHECK(z->n_vars == f->wires);
    CHECK(z->n_public == f->n_public);
    CHECK(z->domain_size == f->domain);
    CHECK((1u << z->log2_domain) == z->domain_size);
    CHECK(z->n_constraints == f->constraints);
    CHECK(z->n_rows == f->constraints + f->n_public + 1);
    CHECK(z->domain_size > z->n_constraints + z->n_public);
    CHECK(z->domain_size / 2 <= z->n_constraints + z->n_public);
    CHECK_EQ_ERR(cuzk_zkey_check_witness(z, w->w, w->n), CUZK_OK);
    CHECK_EQ_ERR(cuzk_zkey_check_witness(z, w->w, w->n - 1), CUZK_ESIZE);

    /* The witness satisfies the r1cs, and a changed witness does not. */
    size_t bad;
    CHECK_EQ_ERR(cuzk_r1cs_check_witness(r, w->w, w->n, &bad), CUZK_OK);
    CHECK(bad == SIZE_MAX);
    {
        /* Independent check, term by term from the CSR. */
        size_t ok = 0;
        for (size_t i = 0; i < r->n_constraints; i++) {
            cuzk_fr v[3], t;
            for (int m = 0; m < 3; m++) {
                cuzk_fr_set_zero(&v[m]);
                for (uint64_t k = r->m[m].row[i]; k < r->m[m].row[i + 1]; k++) {
                    CHECK(r->m[m].col[k] < r->n_wires);
                    cuzk_fr_mul(&t, &r->m[m].val[k], &w->w[r->m[m].col[k]]);
                    cuzk_fr_add(&v[m], &v[m], &t);
                }
            }
            cuzk_fr_mul(&t, &v[0], &v[1]);
            ok += cuzk_fr_eq(&t, &v[2]);
        }
        CHECK(ok == r->n_constraints);
    }
    cuzk_fr *w2 = malloc(w->n * sizeof *w2);
    memcpy(w2, w->w, w->n * sizeof *w2);
    cuzk_fr one;
    cuzk_fr_set_one(&one);
    cuzk_fr_add(&w2[w->n - 1], &w2[w->n - 1], &one);
    CHECK_EQ_ERR(cuzk_r1cs_check_witness(r, w2, w->n, &bad), CUZK_EVERIFY);
    CHECK(bad < r->n_constraints);
    CHECK_EQ_ERR(cuzk_r1cs_check_witness(r, w2, w->n - 1, NULL), CUZK_ESIZE);

    /* The key's section 4 reproduces A·w and B·w of the r1cs, and w_s on the public rows. */
    size_t same_a = 0, same_b = 0;
    for (size_t i = 0; i < z->n_rows; i++) {
        cuzk_fr za, zb, ra, rb;
        cuzk_fr zero;
        cuzk_fr_set_zero(&zero);
        for (int m = 0; m < 2; m++) {
            const cuzk_csr *c = m ? &z->b : &z->a;
            cuzk_fr *acc = m ? &zb : &za, t;
            cuzk_fr_set_zero(acc);
            for (uint64_t k = c->row[i]; k < c->row[i + 1]; k++) {
                cuzk_fr_mul(&t, &c->val[k], &w->w[c->col[k]]);
                cuzk_fr_add(acc, acc, &t);
            }
        }
        if (i < r->n_constraints) {
            for (int m = 0; m < 2; m++) {
                cuzk_fr *acc = m ? &rb : &ra, t;
                cuzk_fr_set_zero(acc);
                for (uint64_t k = r->m[m].row[i]; k < r->m[m].row[i + 1]; k++) {
                    cuzk_fr_mul(&t, &r->m[m].val[k], &w->w[r->m[m].col[k]]);
                    cuzk_fr_add(acc, acc, &t);
                }
            }
        } else {
            ra = w->w[i - r->n_constraints];
            rb = zero;
        }
        same_a += cuzk_fr_eq(&za, &ra);
        same_b += cuzk_fr_eq(&zb, &rb);
    }
    CHECK(same_a == z->n_rows);
    CHECK(same_b == z->n_rows);

    /* public.json of snarkjs = w[1 .. nPublic]; writing it back gives the same bytes. */
    cuzk_fr *pub;
    size_t npub;
    CHECK_EQ_ERR(cuzk_public_read_json(&pub, &npub, p_pub), CUZK_OK);
    CHECK(npub == f->n_public);
    for (size_t i = 0; i < npub && i + 1 < w->n; i++)
        CHECK(cuzk_fr_eq(&pub[i], &w->w[i + 1]));
    char out[512];
    snprintf(out, sizeof out, "%s/%s_public.json", tmp_dir, f->name);
    CHECK_EQ_ERR(cuzk_public_write_json(out, w->w + 1, f->n_public), CUZK_OK);
    CHECK(files_equal(out, p_pub));
    free(pub);

    /* verification_key.json: ours from the zkey is byte-identical to snarkjs's; reading
     * snarkjs's gives the same key. */
    char p_vk[1200], p_proof[1200];
    test_fixture_path(p_vk, sizeof p_vk, f->name, "verification_key.json");
    test_fixture_path(p_proof, sizeof p_proof, f->name, "proof.json");
    cuzk_vk *vk, *vk2;
    CHECK_EQ_ERR(cuzk_vk_from_zkey(&vk, z), CUZK_OK);
    snprintf(out, sizeof out, "%s/%s_vk.json", tmp_dir, f->name);
    CHECK_EQ_ERR(cuzk_vk_write_json(out, vk), CUZK_OK);
    CHECK(files_equal(out, p_vk));
    CHECK_EQ_ERR(cuzk_vk_read_json(&vk2, p_vk), CUZK_OK);
    if (vk2) {
        CHECK(vk2->n_public == vk->n_public);
        CHECK(cuzk_g1_affine_eq(&vk2->alpha1, &vk->alpha1));
        CHECK(cuzk_g2_affine_eq(&vk2->beta2, &vk->beta2));
        CHECK(cuzk_g2_affine_eq(&vk2->gamma2, &vk->gamma2));
        CHECK(cuzk_g2_affine_eq(&vk2->delta2, &vk->delta2));
        CHECK(vk2->has_alphabeta && cuzk_fp12_eq(&vk2->alphabeta, &vk->alphabeta));
        for (size_t i = 0; i <= vk->n_public; i++)
            CHECK(cuzk_g1_affine_eq(&vk2->ic[i], &vk->ic[i]));
        /* without vk_alphabeta_12 the writer computes it */
        vk2->has_alphabeta = false;
        char out2[600];
        snprintf(out2, sizeof out2, "%s/%s_vk2.json", tmp_dir, f->name);
        CHECK_EQ_ERR(cuzk_vk_write_json(out2, vk2), CUZK_OK);
        CHECK(files_equal(out2, p_vk));
    }

    /* snarkjs's proof reads, writes back byte-identical, and verifies with the key:
     * e(A, B) = e(alpha, beta) e(IC_0 + sum pub_i IC_i, gamma) e(C, delta). */
    cuzk_proof pr;
    CHECK_EQ_ERR(cuzk_proof_read_json(&pr, p_proof), CUZK_OK);
    snprintf(out, sizeof out, "%s/%s_proof.json", tmp_dir, f->name);
    CHECK_EQ_ERR(cuzk_proof_write_json(out, &pr), CUZK_OK);
    CHECK(files_equal(out, p_proof));
    {
        cuzk_g1_jac acc, t, icj;
        cuzk_g1_jac_from_affine(&acc, &vk->ic[0]);
        for (size_t i = 0; i < vk->n_public; i++) {
            cuzk_g1_jac_from_affine(&icj, &vk->ic[i + 1]);
            cuzk_g1_mul_fr(&t, &icj, &w->w[i + 1]);
            cuzk_g1_jac_add_var(&acc, &acc, &t);
        }
        cuzk_g1_affine ps[4];
        cuzk_g2_affine qs[4];
        cuzk_g1_affine_neg(&ps[0], &pr.a);
        qs[0] = pr.b;
        ps[1] = vk->alpha1;
        qs[1] = vk->beta2;
        cuzk_g1_jac_to_affine(&ps[2], &acc);
        qs[2] = vk->gamma2;
        ps[3] = pr.c;
        qs[3] = vk->delta2;
        CHECK(cuzk_pairing_product_is_one(ps, qs, 4));
        /* a wrong public input breaks it */
        cuzk_g1_affine_neg(&ps[2], &ps[2]);
        CHECK(!cuzk_pairing_product_is_one(ps, qs, 4));
    }

    /* Sections in reverse order load to the same thing. */
    {
        tfile t;
        tf_read(&t, p_zkey);
        for (int i = 0; i < t.n / 2; i++) {
            tsec s = t.s[i];
            t.s[i] = t.s[t.n - 1 - i];
            t.s[t.n - 1 - i] = s;
        }
        snprintf(out, sizeof out, "%s/%s_rev.zkey", tmp_dir, f->name);
        tf_write(&t, out);
        tf_free(&t);
        cuzk_zkey *z2;
        CHECK_EQ_ERR(cuzk_zkey_load(&z2, out), CUZK_OK);
        if (z2) {
            CHECK(z2->n_rows == z->n_rows && z2->a.row[z->n_rows] == z->a.row[z->n_rows]);
            size_t nnz = z->a.row[z->n_rows];
            CHECK(memcmp(z2->a.val, z->a.val, nnz * sizeof(cuzk_fr)) == 0);
            CHECK(memcmp(z2->h_pts, z->h_pts, z->domain_size * sizeof(cuzk_g1_affine)) == 0);
            CHECK(memcmp(z2->b2_pts, z->b2_pts, z->n_vars * sizeof(cuzk_g2_affine)) == 0);
        }
        cuzk_zkey_free(z2);
    }
    cuzk_vk_free(vk);
    cuzk_vk_free(vk2);
    free(w2);
    cuzk_r1cs_free(r);
    cuzk_wtns_free(w);
    cuzk_zkey_free(z);
}

/* The multiplier's witness holds known values: 1, c = 33, a = 3, b = 11. */
static void test_known_values(void)
{
    char p[1200];
    test_fixture_path(p, sizeof p, "multiplier", "witness.wtns");
    cuzk_wtns *w;
    CHECK_EQ_ERR(cuzk_wtns_load(&w, p), CUZK_OK);
    if (!w)
        return;
    static const uint64_t want[4] = {1, 33, 3, 11};
    CHECK(w->n == 4);
    for (int i = 0; i < 4 && i < (int)w->n; i++) {
        cuzk_fr t;
        cuzk_fr_set_u64(&t, want[i]);
        CHECK(cuzk_fr_eq(&t, &w->w[i]));
    }
    cuzk_wtns_free(w);
}

/* ---- corruption ---- */

static void test_truncation(kind k, const char *circuit, const char *file, size_t max_cuts)
{
    char src[1200], dst[512];
    test_fixture_path(src, sizeof src, circuit, file);
    snprintf(dst, sizeof dst, "%s/trunc_%s_%s", tmp_dir, circuit, file);
    size_t n;
    uint8_t *b = read_all(src, &n);
    size_t cuts = n < max_cuts ? n : max_cuts;
    for (size_t i = 0; i < cuts; i++) {
        /* every offset for small files; otherwise the first 64, then random ones */
        size_t at = n <= max_cuts || i < 64 ? i : (size_t)(test_rand64() % n);
        write_all(dst, b, at);
        EXPECT_ERR(load_kind(k, dst), CUZK_ESIZE, dst);
    }
    free(b);
}

static const char *kind_file[] = {"circuit.r1cs", "witness.wtns", "circuit.zkey", "witness.wtns",
                                  "witness.wtns"};

static void test_container_errors(kind k)
{
    char src[1200], dst[512];
    test_fixture_path(src, sizeof src, "multiplier", kind_file[k]);
    snprintf(dst, sizeof dst, "%s/bad_%s", tmp_dir, kind_file[k]);
    tfile t0, t;
    tf_read(&t0, src);

    tf_copy(&t, &t0);
    t.magic[0] ^= 1;
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(k, dst), CUZK_EFORMAT, dst);
    tf_free(&t);

    tf_copy(&t, &t0);
    t.version++;
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(k, dst), CUZK_EFORMAT, dst);
    tf_free(&t);

    /* a duplicated section */
    tf_copy(&t, &t0);
    t.s[t.n] = t.s[0];
    t.s[t.n].data = malloc(t.s[0].size + 1);
    memcpy(t.s[t.n].data, t.s[0].data, t.s[0].size);
    t.n++;
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(k, dst), CUZK_EFORMAT, dst);
    tf_free(&t);

    /* a missing section (the header, then section 2) */
    for (uint32_t id = 1; id <= 2; id++) {
        tf_copy(&t, &t0);
        tsec *s = tf_sec(&t, id);
        s->id = 13; /* unknown ids are skipped */
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(k, dst), CUZK_EFORMAT, dst);
        tf_free(&t);
    }

    /* every section one byte longer or shorter than its counts */
    for (int i = 0; i < t0.n; i++) {
        if (k == K_ZKEY && t0.s[i].id == 10) /* contributions: not read */
            continue;
        for (int d = -1; d <= 1; d += 2) {
            if (d < 0 && t0.s[i].size == 0)
                continue;
            tf_copy(&t, &t0);
            tf_resize(&t.s[i], t.s[i].size + (uint64_t)(int64_t)d);
            tf_write(&t, dst);
            EXPECT_ERR(load_kind(k, dst), CUZK_ESIZE, dst);
            tf_free(&t);
        }
    }

    /* the declared size of the last section passes the end of the file */
    tf_copy(&t, &t0);
    tf_write(&t, dst);
    {
        size_t n;
        uint8_t *b = read_all(dst, &n);
        size_t off = n - t.s[t.n - 1].size - 8;
        uint64_t sz;
        memcpy(&sz, b + off, 8);
        sz++;
        memcpy(b + off, &sz, 8);
        write_all(dst, b, n);
        EXPECT_ERR(load_kind(k, dst), CUZK_ESIZE, dst);
        sz = UINT64_MAX;
        memcpy(b + off, &sz, 8);
        write_all(dst, b, n);
        EXPECT_ERR(load_kind(k, dst), CUZK_ESIZE, dst);
        free(b);
    }
    tf_free(&t);

    /* a prime other than r in the header */
    tf_copy(&t, &t0);
    if (k == K_ZKEY) {
        tf_sec(&t, 2)->data[4 + 48 + 4] ^= 2; /* r */
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(k, dst), CUZK_ECURVE, dst);
        tf_free(&t);
        tf_copy(&t, &t0);
        tf_sec(&t, 2)->data[4] ^= 2; /* q */
    } else {
        tf_sec(&t, 1)->data[4] ^= 2;
    }
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(k, dst), CUZK_ECURVE, dst);
    CHECK(strstr(cuzk_error_detail(), "BLS12-381") != NULL);
    tf_free(&t);

    tf_free(&t0);
}

static void put_r(uint8_t *p)
{
    uint64_t l[4];
    memcpy(l, CUZK_FR_MODULUS.l, sizeof l);
    memcpy(p, l, 32);
}

static void test_r1cs_errors(void)
{
    char src[1200], dst[512];
    test_fixture_path(src, sizeof src, "chain", "circuit.r1cs");
    snprintf(dst, sizeof dst, "%s/bad_chain.r1cs", tmp_dir);
    tfile t0, t;
    tf_read(&t0, src);
    uint32_t nwires;
    memcpy(&nwires, tf_sec(&t0, 1)->data + 4 + 32, 4);

    /* Walk the terms of section 2: [u32 n, n x (u32 wire, 32-byte value)] x 3 per constraint. */
    tsec *c0 = tf_sec(&t0, 2);
    size_t offs[4096], nt = 0;
    for (size_t p = 0; p < c0->size && nt < 4096;) {
        uint32_t n;
        memcpy(&n, c0->data + p, 4);
        p += 4;
        for (uint32_t k = 0; k < n && nt < 4096; k++, p += 36)
            offs[nt++] = p;
    }
    CHECK(nt > 100);
    for (int rep = 0; rep < 20; rep++) {
        size_t at = offs[test_rand64() % nt];
        /* wire index out of range */
        tf_copy(&t, &t0);
        uint32_t bad = nwires + (uint32_t)(test_rand64() % 3);
        memcpy(tf_sec(&t, 2)->data + at, &bad, 4);
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_R1CS, dst), CUZK_EFORMAT, dst);
        tf_free(&t);
        /* coefficient r, or r + small, or all ones: not canonical */
        tf_copy(&t, &t0);
        uint8_t *v = tf_sec(&t, 2)->data + at + 4;
        int which = rep % 3;
        if (which == 2) {
            memset(v, 0xff, 32);
        } else {
            put_r(v);
            v[0] = (uint8_t)(v[0] + which);
        }
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_R1CS, dst), CUZK_ENONCANONICAL, dst);
        tf_free(&t);
    }
    /* r - 1 is fine */
    tf_copy(&t, &t0);
    put_r(tf_sec(&t, 2)->data + offs[0] + 4);
    tf_sec(&t, 2)->data[offs[0] + 4] -= 1;
    tf_write(&t, dst);
    CHECK_EQ_ERR(load_kind(K_R1CS, dst), CUZK_OK);
    tf_free(&t);
    /* more constraints in the header than in section 2, or fewer */
    for (int d = -1; d <= 1; d += 2) {
        tf_copy(&t, &t0);
        uint8_t *h = tf_sec(&t, 1)->data + 4 + 32 + 16 + 8;
        uint32_t nc;
        memcpy(&nc, h, 4);
        nc = (uint32_t)((int64_t)nc + d);
        memcpy(h, &nc, 4);
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_R1CS, dst), CUZK_ESIZE, dst);
        tf_free(&t);
    }
    /* an absurd constraint count */
    tf_copy(&t, &t0);
    {
        uint32_t big = 0xfffffff0u;
        memcpy(tf_sec(&t, 1)->data + 4 + 32 + 16 + 8, &big, 4);
    }
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(K_R1CS, dst), CUZK_ESIZE, dst);
    tf_free(&t);
    /* inputs that exceed the wires */
    tf_copy(&t, &t0);
    {
        uint8_t *h = tf_sec(&t, 1)->data + 4 + 32 + 12;
        uint32_t big = nwires;
        memcpy(h, &big, 4);
    }
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(K_R1CS, dst), CUZK_EFORMAT, dst);
    tf_free(&t);
    tf_free(&t0);

    /* labels are optional */
    test_fixture_path(src, sizeof src, "multiplier", "circuit.r1cs");
    tf_read(&t, src);
    for (int i = 0; i < t.n; i++)
        if (t.s[i].id == 3) {
            free(t.s[i].data);
            t.s[i] = t.s[--t.n];
        }
    snprintf(dst, sizeof dst, "%s/nolabels.r1cs", tmp_dir);
    tf_write(&t, dst);
    tf_free(&t);
    cuzk_r1cs *r;
    CHECK_EQ_ERR(cuzk_r1cs_load(&r, dst), CUZK_OK);
    CHECK(r && r->wire_labels == NULL && r->n_constraints == 1);
    cuzk_r1cs_free(r);
}

static void test_wtns_errors(void)
{
    char src[1200], dst[512];
    test_fixture_path(src, sizeof src, "chain", "witness.wtns");
    snprintf(dst, sizeof dst, "%s/bad_chain.wtns", tmp_dir);
    tfile t0, t;
    tf_read(&t0, src);
    uint32_t n = (uint32_t)(tf_sec(&t0, 2)->size / 32);
    for (int rep = 0; rep < 10; rep++) {
        tf_copy(&t, &t0);
        uint8_t *v = tf_sec(&t, 2)->data + 32 * (test_rand64() % n);
        put_r(v);
        if (rep & 1)
            v[31] |= 0x80;
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_WTNS, dst), CUZK_ENONCANONICAL, dst);
        EXPECT_ERR(load_kind(K_WTNS_MEM, dst), CUZK_ENONCANONICAL, dst);
        EXPECT_ERR(load_kind(K_WTNS_CHECK, dst), CUZK_ENONCANONICAL, dst);
        tf_free(&t);
    }
    /* count in the header disagrees with section 2 */
    tf_copy(&t, &t0);
    uint32_t m = n + 1;
    memcpy(tf_sec(&t, 1)->data + 4 + 32, &m, 4);
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(K_WTNS, dst), CUZK_ESIZE, dst);
    EXPECT_ERR(load_kind(K_WTNS_MEM, dst), CUZK_ESIZE, dst);
    EXPECT_ERR(load_kind(K_WTNS_CHECK, dst), CUZK_ESIZE, dst);
    tf_free(&t);
    tf_free(&t0);
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static void test_zkey_errors(void)
{
    char src[1200], dst[512];
    test_fixture_path(src, sizeof src, "chain", "circuit.zkey");
    snprintf(dst, sizeof dst, "%s/bad_chain.zkey", tmp_dir);
    tfile t0, t;
    tf_read(&t0, src);
    tsec *h0 = tf_sec(&t0, 2);
    uint32_t nvars, npub, domain;
    memcpy(&nvars, h0->data + 88, 4);
    memcpy(&npub, h0->data + 92, 4);
    memcpy(&domain, h0->data + 96, 4);
    CHECK(nvars == 142 && npub == 3 && domain == 256);

    /* protocol PLONK */
    tf_copy(&t, &t0);
    tf_sec(&t, 1)->data[0] = 2;
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_EUNSUPPORTED, dst);
    tf_free(&t);

    /* domain size not a power of two; too small for the public rows */
    static const uint32_t bad_domains[] = {255, 0, 384, 2};
    for (size_t i = 0; i < 4; i++) {
        tf_copy(&t, &t0);
        memcpy(tf_sec(&t, 2)->data + 96, &bad_domains[i], 4);
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_EFORMAT, dst);
        tf_free(&t);
    }
    /* a larger domain makes section 9 the wrong size */
    tf_copy(&t, &t0);
    {
        uint32_t d2 = 512;
        memcpy(tf_sec(&t, 2)->data + 96, &d2, 4);
    }
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_ESIZE, dst);
    tf_free(&t);
    /* more public signals than variables */
    tf_copy(&t, &t0);
    memcpy(tf_sec(&t, 2)->data + 92, &nvars, 4);
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_EFORMAT, dst);
    tf_free(&t);

    /* off-curve points: one byte of a point's y in the header and in sections 3, 5..9 */
    static const struct { uint32_t id; size_t psize; } vecs[] = {
        {3, 96}, {5, 96}, {6, 96}, {7, 192}, {8, 96}, {9, 96},
    };
    for (size_t v = 0; v < 6; v++) {
        tsec *s0 = tf_sec(&t0, vecs[v].id);
        size_t np = s0->size / vecs[v].psize;
        for (int rep = 0; rep < 4; rep++) {
            size_t i;
            int guard = 0;
            do { /* a point that is not infinity */
                i = test_rand64() % np;
            } while (all_zero(s0->data + i * vecs[v].psize, vecs[v].psize) && ++guard < 1000);
            tf_copy(&t, &t0);
            /* low byte of y (the last coordinate's first byte for G2: y.c1) */
            tf_sec(&t, vecs[v].id)->data[i * vecs[v].psize + vecs[v].psize - 48] ^= 1;
            tf_write(&t, dst);
            EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_ENOT_ON_CURVE, dst);
            char want[64];
            snprintf(want, sizeof want, "section %u", vecs[v].id);
            CHECK(strstr(cuzk_error_detail(), want) != NULL);
            snprintf(want, sizeof want, "point %zu", i);
            CHECK(strstr(cuzk_error_detail(), want) != NULL);
            tf_free(&t);
        }
        /* a coordinate >= p: all ones in the top byte */
        tf_copy(&t, &t0);
        tf_sec(&t, vecs[v].id)->data[47] = 0xff;
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_ENONCANONICAL, dst);
        tf_free(&t);
    }
    /* alpha1 .. delta2 in the header: off the curve, or infinity */
    static const size_t hdr_pts[] = {100, 196, 292, 484, 676, 772};
    static const size_t hdr_psz[] = {96, 96, 192, 192, 96, 192};
    for (size_t k = 0; k < 6; k++) {
        tf_copy(&t, &t0);
        tf_sec(&t, 2)->data[hdr_pts[k] + hdr_psz[k] - 48] ^= 1;
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_ENOT_ON_CURVE, dst);
        tf_free(&t);
        tf_copy(&t, &t0);
        memset(tf_sec(&t, 2)->data + hdr_pts[k], 0, hdr_psz[k]);
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_EFORMAT, dst);
        tf_free(&t);
    }
    CHECK(tf_sec(&t0, 2)->size == 772 + 192);

    /* coefficients: matrix, constraint, signal out of range; value not canonical */
    tsec *c0 = tf_sec(&t0, 4);
    uint32_t ncoef;
    memcpy(&ncoef, c0->data, 4);
    for (int rep = 0; rep < 12; rep++) {
        size_t e = 4 + 44 * (test_rand64() % ncoef);
        tf_copy(&t, &t0);
        uint8_t *p = tf_sec(&t, 4)->data + e;
        uint32_t v;
        cuzk_err want = CUZK_EFORMAT;
        switch (rep % 4) {
        case 0: v = 2 + (uint32_t)(test_rand64() % 5); memcpy(p, &v, 4); break;
        case 1: v = domain + (uint32_t)(test_rand64() % 5); memcpy(p + 4, &v, 4); break;
        case 2: v = nvars + (uint32_t)(test_rand64() % 5); memcpy(p + 8, &v, 4); break;
        default: put_r(p + 12); want = CUZK_ENONCANONICAL; break;
        }
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_ZKEY, dst), want, dst);
        tf_free(&t);
    }
    /* count disagrees with the section size */
    tf_copy(&t, &t0);
    ncoef++;
    memcpy(tf_sec(&t, 4)->data, &ncoef, 4);
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(K_ZKEY, dst), CUZK_ESIZE, dst);
    tf_free(&t);
    tf_free(&t0);
}

static void test_other_curves(void)
{
    char p[1200];
    /* BN254 */
    test_fixture_path(p, sizeof p, "bn128", "circuit.r1cs");
    EXPECT_ERR(load_kind(K_R1CS, p), CUZK_ECURVE, p);
    CHECK(strstr(cuzk_error_detail(), "bn128") != NULL);
    test_fixture_path(p, sizeof p, "bn128", "witness.wtns");
    EXPECT_ERR(load_kind(K_WTNS, p), CUZK_ECURVE, p);
    CHECK(strstr(cuzk_error_detail(), "bn128") != NULL);
    EXPECT_ERR(load_kind(K_WTNS_MEM, p), CUZK_ECURVE, p);
    CHECK(strstr(cuzk_error_detail(), "bn128") != NULL);
    EXPECT_ERR(load_kind(K_WTNS_CHECK, p), CUZK_ECURVE, p);
    test_fixture_path(p, sizeof p, "bn128", "circuit.zkey");
    EXPECT_ERR(load_kind(K_ZKEY, p), CUZK_ECURVE, p);
    CHECK(strstr(cuzk_error_detail(), "bn128") != NULL);
    CHECK(strstr(cuzk_error_detail(), "base field") != NULL);
    test_fixture_path(p, sizeof p, "bn128", "proof.json");
    cuzk_proof pr;
    EXPECT_ERR(cuzk_proof_read_json(&pr, p), CUZK_ECURVE, p);
    test_fixture_path(p, sizeof p, "bn128", "verification_key.json");
    cuzk_vk *vk;
    EXPECT_ERR(cuzk_vk_read_json(&vk, p), CUZK_ECURVE, p);
    CHECK(vk == NULL);
    /* BLS12-377, Goldilocks (an 8-byte prime, sections in another order) */
    test_fixture_path(p, sizeof p, "other", "bls12377.r1cs");
    EXPECT_ERR(load_kind(K_R1CS, p), CUZK_ECURVE, p);
    CHECK(strstr(cuzk_error_detail(), "bls12377") != NULL);
    test_fixture_path(p, sizeof p, "other", "goldilocks.r1cs");
    EXPECT_ERR(load_kind(K_R1CS, p), CUZK_ECURVE, p);
    CHECK(strstr(cuzk_error_detail(), "goldilocks") != NULL);
    /* missing file (also under a missing directory), directory */
    for (int k = K_R1CS; k <= K_ZKEY; k++) {
        snprintf(p, sizeof p, "%s/no_such_file.%s", tmp_dir, kind_file[k]);
        EXPECT_ERR(load_kind((kind)k, p), CUZK_ENOTFOUND, p);
        snprintf(p, sizeof p, "%s/no_such_dir/%s", tmp_dir, kind_file[k]);
        EXPECT_ERR(load_kind((kind)k, p), CUZK_ENOTFOUND, p);
    }
    EXPECT_ERR(load_kind(K_R1CS, tmp_dir), CUZK_EIO, tmp_dir);
}

/* ---- JSON ---- */

static void write_text_file(const char *path, const char *s) { write_all(path, s, strlen(s)); }

/* Replaces the first occurrence of `from` in `text` with `to` (new string). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        return NULL;
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *o = malloc(n);
    size_t pre = (size_t)(at - text);
    memcpy(o, text, pre);
    strcpy(o + pre, to);
    strcat(o, at + strlen(from));
    return o;
}

/* out = a + b + carry as decimal strings (no leading zeros). */
static void dec_add(char *out, const char *a, const char *b, int carry)
{
    char sum[256];
    size_t la = strlen(a), lb = strlen(b), L = (la > lb ? la : lb) + 1;
    sum[L] = 0;
    for (size_t i = 0; i < L; i++) {
        int d = (i < la ? a[la - 1 - i] - '0' : 0) + (i < lb ? b[lb - 1 - i] - '0' : 0) + carry;
        sum[L - 1 - i] = (char)('0' + d % 10);
        carry = d / 10;
    }
    strcpy(out, sum[0] == '0' && L > 1 ? sum + 1 : sum);
}

static void test_json(void)
{
    /* p and r in decimal, derived from -1 in each field */
    char p_dec[CUZK_FP_DEC_MAX + 2], r_dec[CUZK_FR_DEC_MAX + 2], rm1_dec[CUZK_FR_DEC_MAX];
    {
        cuzk_fp m1;
        cuzk_fr n1;
        cuzk_fp_set_one(&m1);
        cuzk_fp_neg(&m1, &m1);
        cuzk_fp_to_dec(p_dec, &m1);
        dec_add(p_dec, p_dec, "1", 0);
        cuzk_fr_set_one(&n1);
        cuzk_fr_neg(&n1, &n1);
        cuzk_fr_to_dec(rm1_dec, &n1);
        dec_add(r_dec, rm1_dec, "1", 0);
        CHECK(strlen(p_dec) == 115 && strlen(r_dec) == 77);
    }
    char p_proof[1200], p_vk[1200], dst[512];
    test_fixture_path(p_proof, sizeof p_proof, "chain", "proof.json");
    test_fixture_path(p_vk, sizeof p_vk, "chain", "verification_key.json");
    snprintf(dst, sizeof dst, "%s/bad_proof.json", tmp_dir);
    size_t n;
    char *proof = (char *)read_all(p_proof, &n);
    cuzk_proof pr, pr2;
    CHECK_EQ_ERR(cuzk_proof_read_json(&pr, p_proof), CUZK_OK);

    /* Round trip of random points (and infinity) through proof.json. */
    for (int rep = 0; rep < 4; rep++) {
        cuzk_g1_jac j;
        cuzk_g2_jac j2;
        cuzk_fr k;
        cuzk_g1_generator(&pr2.a);
        cuzk_g1_jac_from_affine(&j, &pr2.a);
        test_rand_fr(&k);
        cuzk_g1_mul_fr(&j, &j, &k);
        cuzk_g1_jac_to_affine(&pr2.a, &j);
        cuzk_g2_generator(&pr2.b);
        cuzk_g2_jac_from_affine(&j2, &pr2.b);
        cuzk_g2_mul_fr(&j2, &j2, &k);
        cuzk_g2_jac_to_affine(&pr2.b, &j2);
        pr2.c = pr2.a;
        if (rep == 1)
            cuzk_g1_affine_set_inf(&pr2.c);
        if (rep == 2)
            cuzk_g2_affine_set_inf(&pr2.b);
        CHECK_EQ_ERR(cuzk_proof_write_json(dst, &pr2), CUZK_OK);
        cuzk_proof pr3;
        CHECK_EQ_ERR(cuzk_proof_read_json(&pr3, dst), CUZK_OK);
        CHECK(cuzk_g1_affine_eq(&pr3.a, &pr2.a));
        CHECK(cuzk_g2_affine_eq(&pr3.b, &pr2.b));
        CHECK(cuzk_g1_affine_eq(&pr3.c, &pr2.c));
    }

    /* Public inputs round trip with edge values 0, 1, r - 1. */
    {
        cuzk_fr v[5], *back;
        size_t nb;
        cuzk_fr_set_zero(&v[0]);
        cuzk_fr_set_one(&v[1]);
        cuzk_fr_neg(&v[2], &v[1]);
        test_rand_fr(&v[3]);
        test_rand_fr(&v[4]);
        snprintf(dst, sizeof dst, "%s/pub.json", tmp_dir);
        CHECK_EQ_ERR(cuzk_public_write_json(dst, v, 5), CUZK_OK);
        CHECK_EQ_ERR(cuzk_public_read_json(&back, &nb, dst), CUZK_OK);
        CHECK(nb == 5);
        for (size_t i = 0; i < 5 && i < nb; i++)
            CHECK(cuzk_fr_eq(&back[i], &v[i]));
        free(back);
        CHECK_EQ_ERR(cuzk_public_write_json(dst, v, 0), CUZK_OK);
        CHECK_EQ_ERR(cuzk_public_read_json(&back, &nb, dst), CUZK_OK);
        CHECK(nb == 0);
        free(back);
        /* bad public values */
        static const struct { const char *text; cuzk_err e; } bad[] = {
            {"[\"1\", 2]", CUZK_EFORMAT},
            {"[\"01\"]", CUZK_EPARSE},
            {"[\"-1\"]", CUZK_EPARSE},
            {"[\"\"]", CUZK_EPARSE},
            {"[\"1 \"]", CUZK_EPARSE},
            {"[\"0x10\"]", CUZK_EPARSE},
            {"{\"a\": \"1\"}", CUZK_EFORMAT},
            {"[\"1\"", CUZK_EPARSE},
            {"", CUZK_EPARSE},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            write_text_file(dst, bad[i].text);
            back = (cuzk_fr *)1;
            EXPECT_ERR(cuzk_public_read_json(&back, &nb, dst), bad[i].e, dst);
            CHECK(back == NULL);
        }
        char txt[200];
        snprintf(txt, sizeof txt, "[\"%s\"]", r_dec);
        write_text_file(dst, txt);
        EXPECT_ERR(cuzk_public_read_json(&back, &nb, dst), CUZK_ENONCANONICAL, dst);
        /* r - 1 is accepted */
        snprintf(txt, sizeof txt, "[\"%s\"]", rm1_dec);
        write_text_file(dst, txt);
        CHECK_EQ_ERR(cuzk_public_read_json(&back, &nb, dst), CUZK_OK);
        CHECK(nb == 1 && cuzk_fr_eq(&back[0], &v[2]));
        free(back);
    }

    /* Corrupted proofs. */
    snprintf(dst, sizeof dst, "%s/bad_proof.json", tmp_dir);
    {
        char xa[CUZK_FP_DEC_MAX], ya[CUZK_FP_DEC_MAX], t[CUZK_FP_DEC_MAX + 8];
        cuzk_fp_to_dec(xa, &pr.a.x);
        cuzk_fp_to_dec(ya, &pr.a.y);
        /* y + 1: off the curve */
        cuzk_fp y1, one;
        cuzk_fp_set_one(&one);
        cuzk_fp_add(&y1, &pr.a.y, &one);
        char y1s[CUZK_FP_DEC_MAX], q[CUZK_FP_DEC_MAX + 4];
        cuzk_fp_to_dec(y1s, &y1);
        snprintf(t, sizeof t, "\"%s\"", ya);
        snprintf(q, sizeof q, "\"%s\"", y1s);
        char *s = replace(proof, t, q);
        write_text_file(dst, s);
        EXPECT_ERR(cuzk_proof_read_json(&pr2, dst), CUZK_ENOT_ON_CURVE, dst);
        CHECK(strstr(cuzk_error_detail(), "pi_a") != NULL);
        free(s);
        /* leading zero */
        snprintf(q, sizeof q, "\"0%s\"", ya);
        s = replace(proof, t, q);
        write_text_file(dst, s);
        EXPECT_ERR(cuzk_proof_read_json(&pr2, dst), CUZK_EPARSE, dst);
        free(s);
        /* a number instead of a string */
        snprintf(q, sizeof q, "5");
        s = replace(proof, t, q);
        write_text_file(dst, s);
        EXPECT_ERR(cuzk_proof_read_json(&pr2, dst), CUZK_EFORMAT, dst);
        free(s);
        /* x + p: not canonical */
        {
            char sum[CUZK_FP_DEC_MAX + 2];
            dec_add(sum, xa, p_dec, 0);
            snprintf(t, sizeof t, "\"%s\"", xa);
            snprintf(q, sizeof q, "\"%s\"", sum);
            s = replace(proof, t, q);
            write_text_file(dst, s);
            EXPECT_ERR(cuzk_proof_read_json(&pr2, dst), CUZK_ENONCANONICAL, dst);
            free(s);
        }
        /* z != 1 */
        s = replace(proof, "\"1\"\n ],\n \"pi_b\"", "\"2\"\n ],\n \"pi_b\"");
        CHECK(s != NULL);
        if (s) {
            write_text_file(dst, s);
            EXPECT_ERR(cuzk_proof_read_json(&pr2, dst), CUZK_EFORMAT, dst);
            free(s);
        }
        /* protocol, curve, missing member, syntax */
        static const char *swaps[][2] = {
            {"\"groth16\"", "\"plonk\""}, {"\"bls12381\"", "\"bn128\""},
            {"\"pi_c\"", "\"pi_x\""}, {"\"pi_a\": [", "\"pi_a\": [["},
        };
        static const cuzk_err swap_err[] = {CUZK_EUNSUPPORTED, CUZK_ECURVE, CUZK_EFORMAT,
                                            CUZK_EPARSE};
        for (int i = 0; i < 4; i++) {
            s = replace(proof, swaps[i][0], swaps[i][1]);
            write_text_file(dst, s);
            EXPECT_ERR(cuzk_proof_read_json(&pr2, dst), swap_err[i], dst);
            free(s);
        }
        /* points on the curve but not in the subgroup */
        pr2 = pr;
        test_g1_off_subgroup(&pr2.c);
        CHECK(cuzk_g1_affine_is_on_curve(&pr2.c));
        CHECK_EQ_ERR(cuzk_proof_write_json(dst, &pr2), CUZK_OK);
        EXPECT_ERR(cuzk_proof_read_json(&pr2, dst), CUZK_ENOT_IN_SUBGROUP, dst);
        CHECK(strstr(cuzk_error_detail(), "pi_c") != NULL);
        pr2 = pr;
        test_g2_off_subgroup(&pr2.b);
        CHECK(cuzk_g2_affine_is_on_curve(&pr2.b));
        CHECK_EQ_ERR(cuzk_proof_write_json(dst, &pr2), CUZK_OK);
        EXPECT_ERR(cuzk_proof_read_json(&pr2, dst), CUZK_ENOT_IN_SUBGROUP, dst);
        CHECK(strstr(cuzk_error_detail(), "pi_b") != NULL);
        /* missing file */
        snprintf(t, sizeof t, "nofile.json");
        char miss[600];
        snprintf(miss, sizeof miss, "%s/nofile.json", tmp_dir);
        EXPECT_ERR(cuzk_proof_read_json(&pr2, miss), CUZK_ENOTFOUND, miss);
        cuzk_vk *vk_miss = NULL;
        EXPECT_ERR(cuzk_vk_read_json(&vk_miss, miss), CUZK_ENOTFOUND, miss);
        cuzk_fr *pub_miss = NULL;
        size_t npub_miss = 0;
        EXPECT_ERR(cuzk_public_read_json(&pub_miss, &npub_miss, miss), CUZK_ENOTFOUND, miss);
        CHECK(vk_miss == NULL && pub_miss == NULL);
        EXPECT_ERR(cuzk_proof_read_filecoin(&pr2, miss), CUZK_ENOTFOUND, miss);
    }
    free(proof);

    /* Corrupted verification keys. */
    char *vks = (char *)read_all(p_vk, &n);
    snprintf(dst, sizeof dst, "%s/bad_vk.json", tmp_dir);
    {
        static const char *swaps[][2] = {
            {"\"nPublic\": 3", "\"nPublic\": 4"},
            {"\"nPublic\": 3", "\"nPublic\": \"3\""},
            {"\"nPublic\": 3", "\"nPublic\": -1"},
            {"\"IC\"", "\"ic\""},
            {"\"vk_gamma_2\": [\n  [\n   \"", "\"vk_gamma_2\": [\n  [\n   \"00"},
            {"\"curve\": \"bls12381\"", "\"curve\": \"bn128\""},
            {"\"vk_alphabeta_12\": [\n  [\n   [\n    \"", "\"vk_alphabeta_12\": [\n  [\n   [\n    \"x"},
        };
        static const cuzk_err swap_err[] = {CUZK_EFORMAT, CUZK_EFORMAT, CUZK_EFORMAT,
                                            CUZK_EFORMAT, CUZK_EPARSE, CUZK_ECURVE, CUZK_EPARSE};
        for (size_t i = 0; i < sizeof swaps / sizeof swaps[0]; i++) {
            char *s = replace(vks, swaps[i][0], swaps[i][1]);
            CHECK(s != NULL);
            if (!s)
                continue;
            write_text_file(dst, s);
            cuzk_vk *vk = (cuzk_vk *)1;
            EXPECT_ERR(cuzk_vk_read_json(&vk, dst), swap_err[i], dst);
            CHECK(vk == NULL);
            free(s);
        }
        /* IC point off the subgroup */
        cuzk_vk *vk;
        CHECK_EQ_ERR(cuzk_vk_read_json(&vk, p_vk), CUZK_OK);
        if (vk) {
            test_g1_off_subgroup(&vk->ic[2]);
            CHECK_EQ_ERR(cuzk_vk_write_json(dst, vk), CUZK_OK);
            cuzk_vk *vk2;
            EXPECT_ERR(cuzk_vk_read_json(&vk2, dst), CUZK_ENOT_IN_SUBGROUP, dst);
            CHECK(strstr(cuzk_error_detail(), "IC[2]") != NULL);
            cuzk_vk_free(vk);
        }
    }
    free(vks);
}

/* Not regular files: a FIFO without a writer (opening it for reading would wait for ever),
 * a directory and a device; every reader refuses each at once, naming it and what it is. */
static void test_not_regular(void)
{
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmp_dir);
    if (mkfifo(fifo, 0600) != 0) {
        printf("test_not_regular: mkfifo failed, FIFO cases skipped\n");
        return;
    }
    const char *paths[3] = {fifo, tmp_dir, "/dev/null"};
    const char *what[3] = {"a FIFO", "a directory", "a device"};
    for (int i = 0; i < 3; i++) {
        const char *p = paths[i];
        for (int k = 0; k < 3; k++) {
            EXPECT_ERR(load_kind((kind)k, p), CUZK_EIO, p);
            CHECK(strstr(cuzk_error_detail(), what[i]) != NULL);
        }
        cuzk_vk *vk = NULL;
        cuzk_proof pr;
        cuzk_fr *pub = NULL;
        size_t npub = 0;
        EXPECT_ERR(cuzk_vk_read_json(&vk, p), CUZK_EIO, p);
        CHECK(strstr(cuzk_error_detail(), what[i]) != NULL);
        EXPECT_ERR(cuzk_proof_read_json(&pr, p), CUZK_EIO, p);
        EXPECT_ERR(cuzk_public_read_json(&pub, &npub, p), CUZK_EIO, p);
        CHECK(vk == NULL && pub == NULL);
    }
    unlink(fifo);
}

/* A file truncated by someone else while it is read: with the guard installed the load
 * reports it (naming the file) instead of the process dying of SIGBUS, for each loader that
 * maps its file; and a later load of an intact copy works. */
static char trunc_path[600];
static void truncate_half(const char *path)
{
    struct stat st;
    if (!strcmp(path, trunc_path) && stat(path, &st) == 0 && truncate(path, st.st_size / 2) != 0)
        perror("truncate");
}

static void test_truncated_while_read(void)
{
    CHECK(io_guard_install());
    static const struct {
        kind k;
        const char *circuit, *file;
    } cases[] = {{K_WTNS, "chain", "witness.wtns"},
                 {K_R1CS, "chain", "circuit.r1cs"},
                 {K_ZKEY, "chain", "circuit.zkey"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[1200];
        test_fixture_path(src, sizeof src, cases[i].circuit, cases[i].file);
        size_t n;
        uint8_t *b = read_all(src, &n);
        snprintf(trunc_path, sizeof trunc_path, "%s/trunc-%zu", tmp_dir, i);
        write_all(trunc_path, b, n);
        io_test_after_map = truncate_half;
        EXPECT_ERR(load_kind(cases[i].k, trunc_path), CUZK_EIO, trunc_path);
        CHECK(strstr(cuzk_error_detail(), "truncated while it was read") != NULL);
        io_test_after_map = NULL;
        write_all(trunc_path, b, n);
        CHECK_EQ_ERR(load_kind(cases[i].k, trunc_path), CUZK_OK);
        free(b);
    }
}

/* cuzk_wtns_load_into: into the caller's buffer when the witness fits (the same values as a
 * plain load, the buffer not freed with the witness), else into new memory. */
static void test_wtns_into(void)
{
    char src[1200];
    test_fixture_path(src, sizeof src, "chain", "witness.wtns");
    cuzk_wtns *a = NULL, *b = NULL;
    CHECK_EQ_ERR(cuzk_wtns_load(&a, src), CUZK_OK);
    if (!a)
        return;
    CHECK(!a->borrowed && a->cap == a->n);
    const size_t caps[3] = {a->n, (size_t)a->n + 7, (size_t)a->n - 1};
    for (int i = 0; i < 3; i++) {
        cuzk_fr *buf = malloc(sizeof *buf * caps[i]);
        CHECK_EQ_ERR(cuzk_wtns_load_into(&b, src, buf, caps[i]), CUZK_OK);
        if (b) {
            bool fits = caps[i] >= a->n;
            CHECK(b->borrowed == fits && (b->w == buf) == fits);
            CHECK(b->cap == (fits ? caps[i] : a->n) && b->n == a->n);
            CHECK(memcmp(b->w, a->w, sizeof *a->w * a->n) == 0);
        }
        cuzk_wtns_free(b); /* frees its own memory only */
        b = NULL;
        free(buf);         /* still the caller's: a double free here would abort */
    }
    /* a failed load leaves the buffer to the caller */
    cuzk_fr *buf = malloc(sizeof *buf * a->n);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing.wtns", tmp_dir);
    EXPECT_ERR(cuzk_wtns_load_into(&b, missing, buf, a->n), CUZK_ENOTFOUND, missing);
    CHECK(b == NULL);
    free(buf);
    cuzk_wtns_free(a);
}

/* cuzk_wtns_load_mem(_into): the file loader's witness from the file's bytes, for every
 * fixture (into a buffer as cuzk_wtns_load_into does); errors name the given name; the
 * image is not referenced afterwards. */
static void test_wtns_mem(void)
{
    for (size_t k = 0; k < sizeof facts / sizeof facts[0]; k++) {
        char src[1200];
        test_fixture_path(src, sizeof src, facts[k].name, "witness.wtns");
        size_t n;
        uint8_t *b = read_all(src, &n);
        cuzk_wtns *a = NULL, *m = NULL;
        CHECK_EQ_ERR(cuzk_wtns_load(&a, src), CUZK_OK);
        CHECK_EQ_ERR(cuzk_wtns_load_mem(&m, "fixture image", b, n), CUZK_OK);
        memset(b, 0xff, n); /* the values are the witness's own, not views of the image */
        if (a && m) {
            CHECK(m->n == a->n && m->n == facts[k].wires && !m->borrowed && m->cap == m->n);
            CHECK(memcmp(m->w, a->w, sizeof *a->w * a->n) == 0);
        }
        cuzk_wtns_free(m);
        m = NULL;
        free(b);
        b = read_all(src, &n);
        for (int fit = 0; a && fit < 2; fit++) {
            size_t cap = fit ? a->n : a->n - 1;
            cuzk_fr *buf = malloc(sizeof *buf * a->n);
            CHECK_EQ_ERR(cuzk_wtns_load_mem_into(&m, "fixture image", b, n, buf, cap), CUZK_OK);
            if (m) {
                CHECK(m->borrowed == (fit == 1) && (m->w == buf) == (fit == 1));
                CHECK(memcmp(m->w, a->w, sizeof *a->w * a->n) == 0);
            }
            cuzk_wtns_free(m);
            m = NULL;
            free(buf);
        }
        /* one byte short (every cut: test_truncation): the detail starts with the name */
        cuzk_error_clear();
        m = (cuzk_wtns *)1;
        CHECK_EQ_ERR(cuzk_wtns_load_mem(&m, "upload.wtns", b, n - 1), CUZK_ESIZE);
        CHECK(m == NULL && strncmp(cuzk_error_detail(), "upload.wtns: ", 13) == 0);
        free(b);
        cuzk_wtns_free(a);
    }
    /* no bytes at all, and no name: still an error that says what it is */
    cuzk_wtns *m = (cuzk_wtns *)1;
    cuzk_error_clear();
    CHECK_EQ_ERR(cuzk_wtns_load_mem(&m, NULL, NULL, 0), CUZK_ESIZE);
    CHECK(m == NULL && strstr(cuzk_error_detail(), ".wtns") != NULL);
    /* another container in memory: the magic is named */
    char src[1200];
    test_fixture_path(src, sizeof src, "multiplier", "circuit.r1cs");
    size_t n;
    uint8_t *b = read_all(src, &n);
    EXPECT_ERR(cuzk_wtns_load_mem(&m, "circuit-as-witness", b, n), CUZK_EFORMAT,
               "circuit-as-witness");
    CHECK(strstr(cuzk_error_detail(), "bad magic") != NULL);
    free(b);
}

/* .wtns holds exactly sections 1 and 2 and nothing after them: an upload padded with other
 * sections, a second copy of one, or trailing bytes is refused (the padding would be memory
 * the witness does not count), naming the file and the problem. */
static void test_wtns_strict(void)
{
    char src[1200], dst[512];
    test_fixture_path(src, sizeof src, "chain", "witness.wtns");
    snprintf(dst, sizeof dst, "%s/strict_chain.wtns", tmp_dir);
    tfile t0, t;
    tf_read(&t0, src);
    CHECK(t0.n == 2);   /* snarkjs writes the header and the values only */
    static const uint32_t extra_ids[] = {0, 3, 13, 15, 16, 1000};
    for (size_t i = 0; i < sizeof extra_ids / sizeof extra_ids[0]; i++) {
        tf_copy(&t, &t0);
        tsec *x = &t.s[t.n++];
        x->id = extra_ids[i];
        x->size = 64;
        x->data = calloc(1, 65);
        tf_write(&t, dst);
        EXPECT_ERR(load_kind(K_WTNS, dst), CUZK_EFORMAT, dst);
        CHECK(strstr(cuzk_error_detail(), "not a section of a .wtns file") != NULL);
        EXPECT_ERR(load_kind(K_WTNS_MEM, dst), CUZK_EFORMAT, dst);
        EXPECT_ERR(load_kind(K_WTNS_CHECK, dst), CUZK_EFORMAT, dst);
        tf_free(&t);
    }
    /* section 2 twice */
    tf_copy(&t, &t0);
    t.s[t.n] = t.s[1];
    t.s[t.n].data = malloc(t.s[1].size + 1);
    memcpy(t.s[t.n].data, t.s[1].data, t.s[1].size);
    t.n++;
    tf_write(&t, dst);
    EXPECT_ERR(load_kind(K_WTNS, dst), CUZK_EFORMAT, dst);
    CHECK(strstr(cuzk_error_detail(), "duplicated") != NULL);
    tf_free(&t);
    /* trailing bytes after the last section: one byte, and a megabyte */
    size_t n;
    uint8_t *b = read_all(src, &n);
    static const size_t pads[] = {1, 12, (size_t)1 << 20};
    for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++) {
        uint8_t *p = calloc(1, n + pads[i]);
        memcpy(p, b, n);
        write_all(dst, p, n + pads[i]);
        EXPECT_ERR(load_kind(K_WTNS, dst), CUZK_EFORMAT, dst);
        CHECK(strstr(cuzk_error_detail(), "after the last section") != NULL);
        cuzk_wtns *w = (cuzk_wtns *)1;
        cuzk_error_clear();
        CHECK_EQ_ERR(cuzk_wtns_load_mem(&w, "padded upload", p, n + pads[i]), CUZK_EFORMAT);
        CHECK(w == NULL && strstr(cuzk_error_detail(), "padded upload") != NULL);
        free(p);
    }
    free(b);
    /* every fixture (snarkjs's and cuzk's own writer) still loads */
    for (size_t k = 0; k < sizeof facts / sizeof facts[0]; k++) {
        test_fixture_path(src, sizeof src, facts[k].name, "witness.wtns");
        cuzk_wtns *w = NULL;
        CHECK_EQ_ERR(cuzk_wtns_load(&w, src), CUZK_OK);
        cuzk_wtns_free(w);
    }
    tf_free(&t0);
}

/* Errors never quote a file's bytes: the daemon opens files for clients, who must not learn
 * what a file they cannot read holds (the first bytes of /etc/shadow as a "bad magic"). */
static bool has_secret(const char *d)
{
    static const char *const leaks[] = {"root", "726f6f74", "SECRET", "534543524554", "hunter",
                                        "68756e746572"};
    for (size_t i = 0; i < sizeof leaks / sizeof leaks[0]; i++)
        if (strcasestr(d, leaks[i])) {
            fprintf(stderr, "error detail quotes the file: \"%s\"\n", d);
            return true;
        }
    return false;
}

static void test_no_bytes_in_errors(void)
{
    char p[600];
    snprintf(p, sizeof p, "%s/shadow", tmp_dir);
    const char *shadow = "root:$6$SECREThunter2SECRET:19000:0:99999:7:::\n"
                         "daemon:*:19000:0:99999:7:::\n";
    write_text_file(p, shadow);
    for (int k = K_R1CS; k <= K_WTNS_CHECK; k++) {
        EXPECT_ERR(load_kind((kind)k, p), CUZK_EFORMAT, p);
        CHECK(strstr(cuzk_error_detail(), "bad magic") != NULL);
        CHECK(!has_secret(cuzk_error_detail()));
    }
    /* a .wtns whose prime is someone's secret: its size is said, not its bytes */
    char src[1200];
    test_fixture_path(src, sizeof src, "multiplier", "witness.wtns");
    tfile t;
    tf_read(&t, src);
    memcpy(tf_sec(&t, 1)->data + 4, "SECREThunter2SECREThunter2rootXX", 32);
    tf_write(&t, p);
    EXPECT_ERR(load_kind(K_WTNS, p), CUZK_ECURVE, p);
    CHECK(!has_secret(cuzk_error_detail()));
    tf_free(&t);
    /* JSON readers: not the text near a syntax error, nor a string value */
    static const char *const docs[] = {
        "root:$6$SECREThunter2\n",
        "{\"pi_a\": [root_SECRET_hunter2]}",
        "{\"protocol\": \"rootSECREThunter2\", \"curve\": \"bls12381\"}",
        "{\"protocol\": \"groth16\", \"curve\": \"rootSECREThunter2\"}",
        "[\"rootSECREThunter2\"]",
        "[\"12root\"]",
        "[\"0700\"]",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        write_text_file(p, docs[i]);
        cuzk_proof pr;
        cuzk_vk *vk = NULL;
        cuzk_fr *pub = NULL;
        size_t np = 0;
        cuzk_error_clear();
        CHECK(cuzk_proof_read_json(&pr, p) != CUZK_OK && !has_secret(cuzk_error_detail()));
        CHECK(strstr(cuzk_error_detail(), "shadow") != NULL);
        cuzk_error_clear();
        CHECK(cuzk_vk_read_json(&vk, p) != CUZK_OK && !has_secret(cuzk_error_detail()));
        cuzk_error_clear();
        CHECK(cuzk_public_read_json(&pub, &np, p) != CUZK_OK && !has_secret(cuzk_error_detail()));
        free(pub);
    }
}

/* cuzk_proof_json / cuzk_public_json: the documents the text writers produce. */
static void test_json_values(void)
{
    char p[1200];
    test_fixture_path(p, sizeof p, "chain", "proof.json");
    cuzk_proof pr;
    CHECK_EQ_ERR(cuzk_proof_read_json(&pr, p), CUZK_OK);
    cuzk_proof inf;
    memset(&inf, 0, sizeof inf); /* infinity everywhere: the ["0", "1", "0"] forms */
    const cuzk_proof *prs[2] = {&pr, &inf};
    for (int i = 0; i < 2; i++) {
        char *text = cuzk_proof_to_json(prs[i]);
        json_t *v = cuzk_proof_json(prs[i]);
        char *dumped = v ? json_dumps(v, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
        CHECK(text && dumped && strcmp(text, dumped) == 0);
        free(text);
        free(dumped);
        json_decref(v);
    }
    test_fixture_path(p, sizeof p, "chain", "public.json");
    cuzk_fr *pub = NULL;
    size_t npub = 0;
    CHECK_EQ_ERR(cuzk_public_read_json(&pub, &npub, p), CUZK_OK);
    const size_t ns[2] = {0, npub}; /* the empty array and the fixture's */
    for (int i = 0; pub && i < 2; i++) {
        size_t n = ns[i];
        char *text = cuzk_public_to_json(pub, n);
        json_t *parsed = text ? json_loads(text, 0, NULL) : NULL;
        json_t *v = cuzk_public_json(pub, n);
        CHECK(parsed && v && json_is_array(v) && json_array_size(v) == n &&
              json_equal(parsed, v));
        free(text);
        json_decref(parsed);
        json_decref(v);
    }
    free(pub);
}

int main(void)
{
    test_init("test_io");
    test_tmpdir_make(tmp_dir, sizeof tmp_dir, "cuzk_test_io");

    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
        test_fixture(&facts[i]);
    test_known_values();
    test_truncation(K_R1CS, "multiplier", "circuit.r1cs", 1u << 20);
    test_truncation(K_WTNS, "multiplier", "witness.wtns", 1u << 20);
    test_truncation(K_ZKEY, "multiplier", "circuit.zkey", 1u << 20);
    test_truncation(K_R1CS, "chain", "circuit.r1cs", test_iters(300));
    test_truncation(K_WTNS, "chain", "witness.wtns", test_iters(300));
    test_truncation(K_WTNS_MEM, "multiplier", "witness.wtns", 1u << 20);
    test_truncation(K_WTNS_MEM, "chain", "witness.wtns", test_iters(300));
    test_truncation(K_WTNS_CHECK, "chain", "witness.wtns", test_iters(300));
    test_truncation(K_ZKEY, "chain", "circuit.zkey", test_iters(300));
    test_container_errors(K_R1CS);
    test_container_errors(K_WTNS);
    test_container_errors(K_ZKEY);
    test_container_errors(K_WTNS_MEM);
    test_container_errors(K_WTNS_CHECK);
    test_r1cs_errors();
    test_wtns_errors();
    test_zkey_errors();
    test_other_curves();
    test_json();
    test_not_regular();
    test_truncated_while_read();
    test_wtns_into();
    test_wtns_mem();
    test_json_values();
    test_wtns_strict();
    test_no_bytes_in_errors();

    test_dir_remove(tmp_dir);
    return test_finish();
}
