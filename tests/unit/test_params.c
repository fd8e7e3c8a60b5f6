/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bellman/bellperson .params: an in-test setup from random toxic waste for the fixture
 * circuits, write/read round trips, proofs checked against the toxic waste directly and by
 * the verifier, Filecoin's compressed proof, every rejection path of the reader, the
 * decoded cache, and a decode-speed measurement.
 *
 * Also a tool for the interop test: test_params --write-key <circuit.r1cs> <out.params>
 * writes a key made from random toxic waste (seeded like the tests).
 *
 * Environment: CUZK_TEST_DATA (fixtures), CUZK_PARAMS_BENCH_LOG2=k (decode benchmark of
 * 2^k G1 points and 2^(k-3) G2 points; default 12).
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "test_circuit.h"
#include "test_files.h"
#include "test_points.h"

#include "cuzk/groth16.h"
#include "cuzk/params.h"
#include "groth16/bellman.h"
#include "setup/bellman.h"
#include "util/parallel.h"
#include "util/timing.h"

static char tmpdir[256];

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
    return buf;
}

static bool bit(const uint64_t *b, size_t i) { return (b[i / 64] >> (i % 64)) & 1; }

/*
 * The proof a bellman prover must produce for fixed r, s, computed in the exponent from
 * the toxic waste with a brute-force Lagrange basis L_j(tau) = prod_{k != j}
 * (tau - w^k)/(w^j - w^k) over the bellman domain (w from 7):
 *   A = alpha + a(tau) + r delta,  B = beta + b(tau) + s delta,
 *   C = (beta a_aux(tau) + alpha b_aux(tau) + c_aux(tau) + a(tau) b(tau) - c(tau))/delta
 *       + s A + r (beta + b(tau) + s delta) - r s delta
 * with a(tau) = sum_j (A.w)_j L_j(tau) over every row and a_aux the same with only the aux
 * wires' terms. The rows are rebuilt here from the r1cs, bellman's input rows appended.
 */
static void expected_proof(cuzk_proof *out, const cuzk_r1cs *r, const cuzk_fr *w,
                           const cuzk_setup_toxic *t, unsigned log2n, const cuzk_fr *rr,
                           const cuzk_fr *ss)
{
    size_t n = (size_t)1 << log2n, m = r->n_constraints, np1 = (size_t)r->n_public + 1;
    size_t rows = m + np1;
    cuzk_fr om, *pw = malloc(n * sizeof *pw), *lag = malloc(rows * sizeof *lag);
    if (cuzk_fr_root_of_unity(&om, log2n, CUZK_ROOTS_BELLMAN) != CUZK_OK)
        abort();
    cuzk_fr_set_one(&pw[0]);
    for (size_t i = 1; i < n; i++)
        cuzk_fr_mul(&pw[i], &pw[i - 1], &om);
    for (size_t j = 0; j < rows; j++) {
        cuzk_fr num, den, d;
        cuzk_fr_set_one(&num);
        cuzk_fr_set_one(&den);
        for (size_t k = 0; k < n; k++) {
            if (k == j)
                continue;
            cuzk_fr_sub(&d, &t->tau, &pw[k]);
            cuzk_fr_mul(&num, &num, &d);
            cuzk_fr_sub(&d, &pw[j], &pw[k]);
            cuzk_fr_mul(&den, &den, &d);
        }
        cuzk_fr_inv(&den, &den);
        cuzk_fr_mul(&lag[j], &num, &den);
    }
    /* evaluations: [0] all wires, [1] aux only; for A, B, C */
    cuzk_fr ev[3][2], x;
    for (int mi = 0; mi < 3; mi++) {
        cuzk_fr_set_zero(&ev[mi][0]);
        cuzk_fr_set_zero(&ev[mi][1]);
        for (size_t j = 0; j < rows; j++) {
            cuzk_fr all, aux;
            cuzk_fr_set_zero(&all);
            cuzk_fr_set_zero(&aux);
            if (j < m) {
                const cuzk_csr *c = &r->m[mi];
                for (uint64_t k = c->row[j]; k < c->row[j + 1]; k++) {
                    cuzk_fr_mul(&x, &c->val[k], &w[c->col[k]]);
                    cuzk_fr_add(&all, &all, &x);
                    if (c->col[k] >= np1)
                        cuzk_fr_add(&aux, &aux, &x);
                }
            } else if (mi == 0) {
                all = w[j - m];   /* input row: A = w_i, an input, never aux */
            }
            cuzk_fr_mul(&x, &all, &lag[j]);
            cuzk_fr_add(&ev[mi][0], &ev[mi][0], &x);
            cuzk_fr_mul(&x, &aux, &lag[j]);
            cuzk_fr_add(&ev[mi][1], &ev[mi][1], &x);
        }
    }
    cuzk_fr ea, eb, ec, rd, sd, rs, dinv;
    cuzk_fr_mul(&rd, rr, &t->delta);
    cuzk_fr_mul(&sd, ss, &t->delta);
    cuzk_fr_add(&ea, &t->alpha, &ev[0][0]);
    cuzk_fr_add(&ea, &ea, &rd);
    cuzk_fr_add(&eb, &t->beta, &ev[1][0]);
    cuzk_fr_add(&eb, &eb, &sd);
    /* ec = (beta a_aux + alpha b_aux + c_aux + a b - c)/delta + s ea + r eb - r s delta */
    cuzk_fr_mul(&ec, &t->beta, &ev[0][1]);
    cuzk_fr_mul(&x, &t->alpha, &ev[1][1]);
    cuzk_fr_add(&ec, &ec, &x);
    cuzk_fr_add(&ec, &ec, &ev[2][1]);
    cuzk_fr_mul(&x, &ev[0][0], &ev[1][0]);
    cuzk_fr_add(&ec, &ec, &x);
    cuzk_fr_sub(&ec, &ec, &ev[2][0]);
    cuzk_fr_inv(&dinv, &t->delta);
    cuzk_fr_mul(&ec, &ec, &dinv);
    cuzk_fr_mul(&x, ss, &ea);
    cuzk_fr_add(&ec, &ec, &x);
    cuzk_fr_mul(&x, rr, &eb);
    cuzk_fr_add(&ec, &ec, &x);
    cuzk_fr_mul(&rs, rr, ss);
    cuzk_fr_mul(&rs, &rs, &t->delta);
    cuzk_fr_sub(&ec, &ec, &rs);
    cuzk_g1_generator_mul(&out->a, &ea);
    cuzk_g2_generator_mul(&out->b, &eb);
    cuzk_g1_generator_mul(&out->c, &ec);
    free(pw);
    free(lag);
}

/* ---- the circuit in bellman's convention ---- */
static void test_circuit(const char *name, const cuzk_r1cs *r, const cuzk_bellman_circuit *c,
                         const char *r1cs_path)
{
    size_t m = r->n_constraints, np1 = (size_t)r->n_public + 1;
    CHECK(c->n_vars == r->n_wires && c->n_public == r->n_public && c->n_constraints == m);
    CHECK(c->n_rows == m + np1);
    CHECK(((size_t)1 << c->log2_domain) >= c->n_rows);
    CHECK(c->log2_domain == 0 || ((size_t)1 << (c->log2_domain - 1)) < c->n_rows);
    for (int i = 0; i < 3; i++) {
        const cuzk_csr *x = i == 0 ? &c->a : i == 1 ? &c->b : &c->c;
        CHECK(x->n_rows == c->n_rows);
        /* the circuit's own rows are the r1cs's */
        CHECK(!memcmp(x->row, r->m[i].row, (m + 1) * sizeof *x->row));
        uint64_t nnz = r->m[i].row[m];
        CHECK(!memcmp(x->col, r->m[i].col, nnz * sizeof *x->col));
        /* input rows: A = w_j with coefficient 1, B and C empty */
        for (size_t j = 0; j < np1; j++) {
            uint64_t b = x->row[m + j], e = x->row[m + j + 1];
            if (i == 0)
                CHECK(e == b + 1 && x->col[b] == j && cuzk_fr_is_one(&x->val[b]));
            else
                CHECK(e == b);
        }
    }
    /* densities against a direct scan */
    uint64_t na = 0, nb = 0;
    for (size_t i = 0; i < c->n_vars; i++) {
        bool ina = i < np1, inb = false;
        for (int mi = 0; mi < 2; mi++)
            for (uint64_t k = 0; k < r->m[mi].row[m]; k++)
                if (r->m[mi].col[k] == i && !cuzk_fr_is_zero(&r->m[mi].val[k]))
                    *(mi ? &inb : &ina) = true;
        CHECK(bit(c->a_density, i) == ina);
        CHECK(bit(c->b_density, i) == inb);
        na += ina;
        nb += inb;
    }
    CHECK(c->n_a_dense == na && c->n_b_dense == nb);
    /* the copy and the in-place loader agree */
    cuzk_bellman_circuit *c2 = NULL;
    CHECK_EQ_ERR(cuzk_bellman_circuit_load(&c2, r1cs_path), CUZK_OK);
    if (c2) {
        CHECK(test_csr_eq(&c->a, &c2->a) && test_csr_eq(&c->b, &c2->b) &&
              test_csr_eq(&c->c, &c2->c));
        CHECK(c2->n_rows == c->n_rows && c2->log2_domain == c->log2_domain);
        CHECK(!memcmp(c->a_density, c2->a_density, ((c->n_vars + 63) / 64) * 8));
        CHECK(!memcmp(c->b_density, c2->b_density, ((c->n_vars + 63) / 64) * 8));
    }
    cuzk_bellman_circuit_free(c2);
    printf("  %s: %u wires, %u public, %u constraints -> %u rows, domain 2^%u, A-dense %llu, "
           "B-dense %llu\n", name, c->n_vars, c->n_public, c->n_constraints, c->n_rows,
           c->log2_domain, (unsigned long long)c->n_a_dense, (unsigned long long)c->n_b_dense);
}

/* ---- Filecoin proof ---- */
static void test_filecoin(const cuzk_proof *pr, const cuzk_vk *vk, const cuzk_fr *pub, size_t npub)
{
    uint8_t b[CUZK_FILECOIN_PROOF_BYTES], b2[CUZK_FILECOIN_PROOF_BYTES];
    cuzk_proof q;
    cuzk_proof_to_filecoin(b, pr);
    CHECK((b[0] & 0x80) && (b[48] & 0x80) && (b[144] & 0x80));   /* compressed flags */
    CHECK_EQ_ERR(cuzk_proof_from_filecoin(&q, b), CUZK_OK);
    CHECK(test_proof_eq(&q, pr));
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, npub, &q), CUZK_OK);
    cuzk_proof_to_filecoin(b2, &q);
    CHECK(!memcmp(b, b2, sizeof b));
    /* file round trip */
    char path[300];
    tmp_path(path, sizeof path, "proof.bin");
    CHECK_EQ_ERR(cuzk_proof_write_filecoin(path, pr), CUZK_OK);
    size_t len;
    uint8_t *fb = read_all_or_null(path, &len);
    CHECK(fb && len == CUZK_FILECOIN_PROOF_BYTES && !memcmp(fb, b, len));
    free(fb);
    memset(&q, 0, sizeof q);
    CHECK_EQ_ERR(cuzk_proof_read_filecoin(&q, path), CUZK_OK);
    CHECK(test_proof_eq(&q, pr));
    write_all(path, b, sizeof b - 1);
    CHECK_ERR(cuzk_proof_read_filecoin(&q, path), CUZK_ESIZE, path, "192");
    /* flags: compressed flag cleared, infinity */
    memcpy(b2, b, sizeof b);
    b2[48] &= 0x7f;
    CHECK_ERR(cuzk_proof_from_filecoin(&q, b2), CUZK_EFLAGS, "B", NULL);
    memcpy(b2, b, sizeof b);
    memset(b2 + 144, 0, 48);
    b2[144] = 0xc0;   /* compressed | infinity */
    CHECK_ERR(cuzk_proof_from_filecoin(&q, b2), CUZK_EFORMAT, "C", "infinity");
    /* a flipped bit: refused, or a proof that fails */
    int bad = 0;
    for (int k = 0; k < 8; k++) {
        memcpy(b2, b, sizeof b);
        size_t pos = 1 + test_rand64() % (sizeof b - 1);
        if (pos == 48 || pos == 144)
            pos++;
        b2[pos] ^= (uint8_t)(1u << (test_rand64() % 8));
        cuzk_err e = cuzk_proof_from_filecoin(&q, b2);
        if (e != CUZK_OK || cuzk_groth16_verify(vk, pub, npub, &q) != CUZK_OK)
            bad++;
    }
    CHECK(bad == 8);
}

/* ---- the whole path for one fixture ---- */
static void test_fixture(const char *name)
{
    char rp[300], wp[300], kp[300], vp[300];
    test_fixture_path(rp, sizeof rp, name, "circuit.r1cs");
    test_fixture_path(wp, sizeof wp, name, "witness.wtns");
    snprintf(kp, sizeof kp, "%s/%s.params", tmpdir, name);
    snprintf(vp, sizeof vp, "%s/%s.vk.json", tmpdir, name);
    cuzk_r1cs *r = NULL;
    cuzk_wtns *wt = NULL;
    cuzk_bellman_circuit *c = NULL;
    cuzk_params *p = NULL, *p2 = NULL;
    cuzk_vk *vk = NULL, *vk2 = NULL;
    CHECK_EQ_ERR(cuzk_r1cs_load(&r, rp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, wp), CUZK_OK);
    if (!r || !wt)
        goto out;
    CHECK_EQ_ERR(cuzk_r1cs_check_witness(r, wt->w, wt->n, NULL), CUZK_OK);
    CHECK_EQ_ERR(cuzk_bellman_circuit_from_r1cs(&c, r), CUZK_OK);
    if (!c)
        goto out;
    test_circuit(name, r, c, rp);

    cuzk_setup_toxic t;
    test_rand_toxic(&t);
    CHECK_EQ_ERR(cuzk_setup_bellman(&p, c, &t, 0), CUZK_OK);
    if (!p)
        goto out;
    CHECK_EQ_ERR(cuzk_params_check_circuit(p, c), CUZK_OK);
    /* spot checks of the setup against the toxic waste */
    {
        cuzk_g1_affine e1;
        cuzk_g2_affine e2;
        cuzk_g1_generator_mul(&e1, &t.alpha);
        CHECK(cuzk_g1_affine_eq(&e1, &p->alpha1));
        cuzk_g2_generator_mul(&e2, &t.gamma);
        CHECK(cuzk_g2_affine_eq(&e2, &p->gamma2));
        cuzk_fr zd, x, one;
        uint64_t nn = (uint64_t)1 << c->log2_domain;
        cuzk_fr_pow(&zd, &t.tau, &nn, 1);
        cuzk_fr_set_one(&one);
        cuzk_fr_sub(&zd, &zd, &one);
        cuzk_fr_inv(&x, &t.delta);
        cuzk_fr_mul(&zd, &zd, &x);   /* Z(tau)/delta = h_0 */
        cuzk_g1_generator_mul(&e1, &zd);
        CHECK(cuzk_g1_affine_eq(&e1, &p->h[0]));
        cuzk_fr_mul(&zd, &zd, &t.tau);
        cuzk_g1_generator_mul(&e1, &zd);
        CHECK(p->n_h < 2 || cuzk_g1_affine_eq(&e1, &p->h[1]));
    }

    CHECK_EQ_ERR(cuzk_params_write(kp, p), CUZK_OK);
    struct stat st;
    CHECK(stat(kp, &st) == 0 && (uint64_t)st.st_size == cuzk_params_file_bytes(p));
    CHECK_EQ_ERR(cuzk_params_load(&p2, kp, 0), CUZK_OK);
    CHECK(p2 && test_params_eq(p, p2) && !strcmp(p2->path, kp));
    cuzk_params_free(p2);
    p2 = NULL;
    CHECK_EQ_ERR(cuzk_params_load(&p2, kp, CUZK_PARAMS_TRUSTED), CUZK_OK);
    CHECK(p2 && test_params_eq(p, p2));
    if (!p2)
        goto out;

    CHECK_EQ_ERR(cuzk_vk_from_params(&vk, p2), CUZK_OK);
    if (!vk)
        goto out;
    CHECK(vk->n_public == r->n_public);

    /* one proof with fixed r, s against the toxic waste, then the verifier */
    const cuzk_fr *w = wt->w;
    const cuzk_fr *pub = w + 1;
    cuzk_fr rr, ss;
    test_rand_fr(&rr);
    test_rand_fr(&ss);
    cuzk_prove_opts o = {.nthreads = 0, .test_r = &rr, .test_s = &ss};
    cuzk_proof pr, want;
    cuzk_prove_timings tm;
    CHECK_EQ_ERR(cuzk_params_prove(&pr, &tm, p2, c, &w, 1, wt->n, &o), CUZK_OK);
    expected_proof(&want, r, w, &t, c->log2_domain, &rr, &ss);
    CHECK(cuzk_g1_affine_eq(&pr.a, &want.a));
    CHECK(cuzk_g2_affine_eq(&pr.b, &want.b));
    CHECK(cuzk_g1_affine_eq(&pr.c, &want.c));
    CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, r->n_public, &pr), CUZK_OK);
    /* a public input changed: fails */
    if (r->n_public) {
        cuzk_fr *pub2 = malloc(r->n_public * sizeof *pub2), one;
        memcpy(pub2, pub, r->n_public * sizeof *pub2);
        cuzk_fr_set_one(&one);
        cuzk_fr_add(&pub2[0], &pub2[0], &one);
        CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub2, r->n_public, &pr), CUZK_EVERIFY);
        free(pub2);
    }

    /* a batch of three with random r, s through the split API, one thread and all */
    for (unsigned th = 1; th <= 2; th++) {
        const cuzk_fr *ws[3] = {w, w, w};
        cuzk_proof prs[3];
        cuzk_pending *pend = NULL;
        cuzk_prove_opts o2 = {.nthreads = th == 1 ? 1 : 0};
        CHECK_EQ_ERR(cuzk_params_prove_start(&pend, p2, c, ws, 3, wt->n, &o2), CUZK_OK);
        if (!pend)
            continue;
        CHECK_EQ_ERR(cuzk_groth16_prove_finish(prs, NULL, pend), CUZK_OK);
        cuzk_groth16_pending_free(pend);
        for (int j = 0; j < 3; j++)
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, r->n_public, &prs[j]), CUZK_OK);
        CHECK(!cuzk_g1_affine_eq(&prs[0].a, &prs[1].a));   /* fresh r per proof */
    }

    /* a witness that breaks a constraint: the proof does not verify */
    if (wt->n > r->n_public + 1) {
        cuzk_fr *bw = malloc(wt->n * sizeof *bw), two;
        memcpy(bw, w, wt->n * sizeof *bw);
        cuzk_fr_set_u64(&two, 2);
        size_t k = wt->n - 1;
        cuzk_fr_add(&bw[k], &bw[k], &two);
        if (cuzk_r1cs_check_witness(r, bw, wt->n, NULL) == CUZK_EVERIFY) {
            const cuzk_fr *bwp = bw;
            cuzk_proof bp;
            CHECK_EQ_ERR(cuzk_params_prove(&bp, NULL, p2, c, &bwp, 1, wt->n, NULL), CUZK_OK);
            CHECK_EQ_ERR(cuzk_groth16_verify(vk, pub, r->n_public, &bp), CUZK_EVERIFY);
        }
        /* witness length and w[0] */
        const cuzk_fr *bwp = bw;
        CHECK_ERR(cuzk_params_prove(&pr, NULL, p2, c, &bwp, 1, wt->n - 1, NULL), CUZK_ESIZE,
                  "witness 0", NULL);
        cuzk_fr_set_u64(&bw[0], 3);
        CHECK_ERR(cuzk_params_prove(&pr, NULL, p2, c, &bwp, 1, wt->n, NULL), CUZK_EFORMAT,
                  "first value", NULL);
        free(bw);
    }

    test_filecoin(&pr, vk, pub, r->n_public);

    /* vk export to snarkjs JSON and back */
    CHECK_EQ_ERR(cuzk_vk_write_json(vp, vk), CUZK_OK);
    CHECK_EQ_ERR(cuzk_vk_read_json(&vk2, vp), CUZK_OK);
    if (vk2) {
        CHECK(vk2->n_public == vk->n_public &&
              test_g1_affine_eq_n(vk2->ic, vk->ic, vk->n_public + 1));
        CHECK(cuzk_g2_affine_eq(&vk2->delta2, &vk->delta2));
        CHECK_EQ_ERR(cuzk_groth16_verify(vk2, pub, r->n_public, &pr), CUZK_OK);
    }
    printf("  %s: prove %.2f ms, proofs verify, Filecoin form round-trips\n", name, tm.total_ms);
out:
    cuzk_vk_free(vk);
    cuzk_vk_free(vk2);
    cuzk_params_free(p);
    cuzk_params_free(p2);
    cuzk_bellman_circuit_free(c);
    cuzk_wtns_free(wt);
    cuzk_r1cs_free(r);
}

/* ---- a key that does not fit its circuit ---- */
/* Copies the .r1cs at src to dst without its wire-labels section (3) and with the header's
 * wire and public-output counts replaced: what then bounds them is the key alone. */
static bool forge_r1cs_counts(const char *src, const char *dst, uint32_t wires, uint32_t pub_out)
{
    size_t n;
    uint8_t *b = read_all_or_null(src, &n), *o = malloc(n);
    uint32_t nsec = 0, kept;
    if (n >= 12)
        memcpy(&nsec, b + 8, 4);
    size_t off = 12, len = 12;
    bool ok = o && n >= 12 && nsec > 0;
    for (uint32_t i = 0; ok && i < nsec; i++) {
        uint32_t type;
        uint64_t size;
        ok = off + 12 <= n;
        if (ok) {
            memcpy(&type, b + off, 4);
            memcpy(&size, b + off + 4, 8);
            ok = size <= n - off - 12;
        }
        if (ok && type == 1) { /* n8, the prime, then wires and public outputs */
            uint32_t n8;
            memcpy(&n8, b + off + 12, 4);
            memcpy(b + off + 16 + n8, &wires, 4);
            memcpy(b + off + 20 + n8, &pub_out, 4);
        }
        if (ok && type != 3) {
            memcpy(o + len, b + off, 12 + size);
            len += 12 + size;
        }
        off += ok ? 12 + size : 0;
    }
    if (ok) {
        memcpy(o, b, 8);
        kept = nsec - 1;
        memcpy(o + 8, &kept, 4);
        write_all(dst, o, len);
    }
    free(b);
    free(o);
    return ok;
}

static void test_mismatch(void)
{
    char rp[300], rp2[300], wp[300];
    test_fixture_path(rp, sizeof rp, "multiplier", "circuit.r1cs");
    test_fixture_path(rp2, sizeof rp2, "chain", "circuit.r1cs");
    test_fixture_path(wp, sizeof wp, "chain", "witness.wtns");
    cuzk_bellman_circuit *cm = NULL, *cc = NULL;
    cuzk_params *pm = NULL;
    cuzk_wtns *wt = NULL;
    CHECK_EQ_ERR(cuzk_bellman_circuit_load(&cm, rp), CUZK_OK);
    CHECK_EQ_ERR(cuzk_bellman_circuit_load(&cc, rp2), CUZK_OK);
    CHECK_EQ_ERR(cuzk_wtns_load(&wt, wp), CUZK_OK);
    cuzk_setup_toxic t;
    test_rand_toxic(&t);
    if (cm && cc && wt && cuzk_setup_bellman(&pm, cm, &t, 0) == CUZK_OK) {
        CHECK_ERR(cuzk_params_check_circuit(pm, cc), CUZK_ESIZE, "vector", "needs");
        const cuzk_fr *w = wt->w;
        cuzk_proof pr;
        CHECK_ERR(cuzk_params_prove(&pr, NULL, pm, cc, &w, 1, wt->n, NULL), CUZK_ESIZE,
                  "vector", NULL);
        /* the right circuit, a witness of another */
        CHECK_ERR(cuzk_params_prove(&pr, NULL, pm, cm, &w, 1, wt->n, NULL), CUZK_ESIZE,
                  "witness", NULL);
        /* each vector one short */
        uint32_t *lens[6] = {&pm->n_ic, &pm->n_h, &pm->n_l, &pm->n_a, &pm->n_b_g1, &pm->n_b_g2};
        const char *names[6] = {"vector ic", "vector h", "vector l", "vector a", "vector b_g1",
                                "vector b_g2"};
        for (int i = 0; i < 6; i++) {
            (*lens[i])--;
            CHECK_ERR(cuzk_params_check_circuit(pm, cm), CUZK_ESIZE, names[i], NULL);
            (*lens[i])++;
        }
        CHECK_EQ_ERR(cuzk_params_check_circuit(pm, cm), CUZK_OK);
        /* the counts checked against the key while loading: its own circuit loads, another
         * circuit is named with the key, and a forged header claiming 2^31 wires fails
         * before anything is built from it (no 100 GiB of input rows) */
        cuzk_bellman_circuit *cx = NULL;
        CHECK_EQ_ERR(cuzk_bellman_circuit_load_for(&cx, rp, pm), CUZK_OK);
        CHECK(cx && cx->n_vars == cm->n_vars && cx->n_public == cm->n_public &&
              cx->log2_domain == cm->log2_domain);
        cuzk_bellman_circuit_free(cx);
        cx = NULL;
        CHECK_ERR(cuzk_bellman_circuit_load_for(&cx, rp2, pm), CUZK_ESIZE, "does not fit", rp2);
        CHECK(cx == NULL);
        char fp[400];
        snprintf(fp, sizeof fp, "%s/forged.r1cs", tmpdir);
        CHECK(forge_r1cs_counts(rp, fp, 1u << 31, (1u << 31) - 4));
        CHECK_ERR(cuzk_bellman_circuit_load_for(&cx, fp, pm), CUZK_ESIZE, "vector ic", fp);
        CHECK(cx == NULL);
    } else {
        CHECK(0);
    }
    cuzk_params_free(pm);
    cuzk_bellman_circuit_free(cm);
    cuzk_bellman_circuit_free(cc);
    cuzk_wtns_free(wt);
}

/* ---- reader rejections ---- */

#define VK_BYTES (3 * 96 + 3 * 192)

/* byte offset of vector v's length field and of its point i */
static size_t vec_off(const cuzk_params *p, int v)
{
    uint32_t n[6] = {p->n_ic, p->n_h, p->n_l, p->n_a, p->n_b_g1, p->n_b_g2};
    size_t off = VK_BYTES;
    for (int i = 0; i < v; i++)
        off += 4 + (size_t)n[i] * 96;
    return off;
}

static void test_reader(void)
{
    char rp[300], kp[300], bp[300];
    test_fixture_path(rp, sizeof rp, "chain", "circuit.r1cs");
    tmp_path(kp, sizeof kp, "good.params");
    tmp_path(bp, sizeof bp, "bad.params");
    cuzk_bellman_circuit *c = NULL;
    cuzk_params *p = NULL, *q = NULL;
    cuzk_setup_toxic t;
    test_rand_toxic(&t);
    CHECK_EQ_ERR(cuzk_bellman_circuit_load(&c, rp), CUZK_OK);
    if (!c || cuzk_setup_bellman(&p, c, &t, 0) != CUZK_OK || cuzk_params_write(kp, p) != CUZK_OK) {
        CHECK(0);
        goto out;
    }
    size_t len;
    uint8_t *good = read_all_or_null(kp, &len), *b = malloc(len + 1);
    CHECK(good && len == cuzk_params_file_bytes(p));

    /* truncations: every vector's length field and the middle of its points */
    size_t cuts[16];
    int nc = 0;
    cuts[nc++] = 0;
    cuts[nc++] = 100;
    cuts[nc++] = VK_BYTES - 1;
    for (int v = 0; v < 6; v++) {
        cuts[nc++] = vec_off(p, v) + 2;
        cuts[nc++] = vec_off(p, v) + 4 + 50;
    }
    cuts[nc++] = len - 1;
    for (int i = 0; i < nc; i++) {
        write_all(bp, good, cuts[i]);
        CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ESIZE, bp, NULL);
        CHECK(q == NULL);
    }
    write_all(bp, good, vec_off(p, 2) + 4 + 50);
    CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ESIZE, "vector l", "length");
    /* a byte after the end */
    memcpy(b, good, len);
    b[len] = 0;
    write_all(bp, b, len + 1);
    CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ESIZE, "after the last vector", NULL);
    /* a length the file cannot hold */
    memcpy(b, good, len);
    memset(b + vec_off(p, 1), 0xff, 4);
    write_all(bp, b, len);
    CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ESIZE, "vector h", "4294967295");

    /* flags */
    size_t b2off = vec_off(p, 5) + 4;   /* b_g2 point 0 */
    memcpy(b, good, len);
    b[b2off + 192] |= 0x80;             /* point 1 marked compressed */
    write_all(bp, b, len);
    CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_EFLAGS, "vector b_g2: point 1", bp);
    memcpy(b, good, len);
    b[vec_off(p, 3) + 4] |= 0x20;       /* a point 0 with the sort flag */
    write_all(bp, b, len);
    CHECK_ERR(cuzk_params_load(&q, bp, CUZK_PARAMS_TRUSTED), CUZK_EFLAGS, "vector a: point 0", NULL);
    /* infinity in l */
    memcpy(b, good, len);
    memset(b + vec_off(p, 2) + 4 + 96 * 2, 0, 96);
    b[vec_off(p, 2) + 4 + 96 * 2] = 0x40;
    write_all(bp, b, len);
    CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_EFORMAT, "vector l: point 2", "infinity");
    /* a verifying-key point off the curve */
    memcpy(b, good, len);
    b[95] ^= 1;                          /* alpha_g1's y */
    write_all(bp, b, len);
    CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ENOT_ON_CURVE, "alpha_g1", NULL);
    /* off the curve in h */
    memcpy(b, good, len);
    b[vec_off(p, 1) + 4 + 96 + 95] ^= 1; /* h point 1, last byte of y */
    write_all(bp, b, len);
    CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ENOT_ON_CURVE, "vector h: point 1", NULL);
    CHECK_ERR(cuzk_params_load(&q, bp, CUZK_PARAMS_TRUSTED), CUZK_ENOT_ON_CURVE, "vector h", NULL);
    /* a coordinate >= p: top byte 0x1f with no flag is above p's top byte */
    {
        uint8_t x[48];
        memset(x, 0xff, 48);
        x[0] = 0x1f;
        cuzk_fp fx;
        CHECK_EQ_ERR(cuzk_fp_from_bytes_be(&fx, x), CUZK_ENONCANONICAL);
        memcpy(b, good, len);
        memcpy(b + vec_off(p, 4) + 4 + 96 * 3, x, 48);   /* b_g1 point 3, x */
        write_all(bp, b, len);
        CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ENONCANONICAL, "vector b_g1: point 3", NULL);
    }
    /* outside the subgroup: G1 in a, G2 in b_g2; rejected by default, accepted trusted */
    {
        cuzk_g1_affine o1;
        cuzk_g2_affine o2;
        test_g1_off_subgroup(&o1);
        test_g2_off_subgroup(&o2);
        CHECK(cuzk_g1_affine_is_on_curve(&o1) && cuzk_g2_affine_is_on_curve(&o2));
        memcpy(b, good, len);
        cuzk_g1_to_uncompressed(b + vec_off(p, 3) + 4 + 96 * 5, &o1);
        write_all(bp, b, len);
        CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ENOT_IN_SUBGROUP, "vector a: point 5", bp);
        CHECK_EQ_ERR(cuzk_params_load(&q, bp, CUZK_PARAMS_TRUSTED), CUZK_OK);
        CHECK(q && cuzk_g1_affine_eq(&q->a[5], &o1));
        cuzk_params_free(q);
        q = NULL;
        memcpy(b, good, len);
        cuzk_g2_to_uncompressed(b + b2off + 192 * 2, &o2);
        write_all(bp, b, len);
        CHECK_ERR(cuzk_params_load(&q, bp, 0), CUZK_ENOT_IN_SUBGROUP, "vector b_g2: point 2", NULL);
        CHECK_EQ_ERR(cuzk_params_load(&q, bp, CUZK_PARAMS_TRUSTED), CUZK_OK);
        CHECK(q && cuzk_g2_affine_eq(&q->b_g2[2], &o2));
        cuzk_params_free(q);
        q = NULL;
        /* IC is checked even for trusted files */
        memcpy(b, good, len);
        cuzk_g1_to_uncompressed(b + vec_off(p, 0) + 4, &o1);
        write_all(bp, b, len);
        CHECK_ERR(cuzk_params_load(&q, bp, CUZK_PARAMS_TRUSTED), CUZK_ENOT_IN_SUBGROUP,
                  "vector ic: point 0", NULL);
        /* so is the verifying key */
        memcpy(b, good, len);
        cuzk_g2_to_uncompressed(b + 2 * 96 + 192, &o2);   /* gamma_g2 */
        write_all(bp, b, len);
        CHECK_ERR(cuzk_params_load(&q, bp, CUZK_PARAMS_TRUSTED), CUZK_ENOT_IN_SUBGROUP,
                  "gamma_g2", NULL);
    }
    CHECK_ERR(cuzk_params_load(&q, "/nonexistent/x.params", 0), CUZK_ENOTFOUND, "/nonexistent", NULL);
    /* the writer refuses infinity */
    {
        cuzk_g1_affine keep = p->l[0];
        cuzk_g1_affine_set_inf(&p->l[0]);
        CHECK_ERR(cuzk_params_write(bp, p), CUZK_EINVAL, "vector l: point 0", NULL);
        p->l[0] = keep;
    }
    free(good);
    free(b);
out:
    cuzk_params_free(p);
    cuzk_params_free(q);
    cuzk_bellman_circuit_free(c);
}

/* ---- the decoded cache ---- */
static void test_cache(void)
{
    char rp[300], kp[300], cp[320];
    test_fixture_path(rp, sizeof rp, "multiplier", "circuit.r1cs");
    tmp_path(kp, sizeof kp, "cached.params");
    snprintf(cp, sizeof cp, "%s.cuzkcache", kp);
    char *cpath = cuzk_params_cache_path(kp);
    CHECK(cpath && !strcmp(cpath, cp));
    free(cpath);
    cuzk_bellman_circuit *c = NULL;
    cuzk_params *p = NULL, *q = NULL;
    cuzk_setup_toxic t;
    test_rand_toxic(&t);
    if (cuzk_bellman_circuit_load(&c, rp) != CUZK_OK || cuzk_setup_bellman(&p, c, &t, 0) != CUZK_OK ||
        cuzk_params_write(kp, p) != CUZK_OK) {
        CHECK(0);
        goto out;
    }
    unlink(cp);
    CHECK_ERR(cuzk_params_cache_load(&q, kp), CUZK_EFORMAT, "no cache", NULL);
    CHECK_EQ_ERR(cuzk_params_load(&q, kp, CUZK_PARAMS_CACHE), CUZK_OK);   /* writes it */
    CHECK(q && test_params_eq(p, q));
    cuzk_params_free(q);
    q = NULL;
    CHECK(access(cp, R_OK) == 0);
    CHECK_EQ_ERR(cuzk_params_cache_load(&q, kp), CUZK_OK);
    CHECK(q && test_params_eq(p, q) && !strcmp(q->path, kp));
    cuzk_params_free(q);
    q = NULL;
    /* a changed source makes it stale */
    {
        size_t len;
        uint8_t *b = read_all_or_null(kp, &len);
        b[len - 1] ^= 1;   /* last byte of the last b_g2 point */
        write_all(kp, b, len);
        struct timespec ts[2] = {{0, UTIME_NOW}, {1, 0}};   /* mtime 1 s after the epoch */
        utimensat(AT_FDCWD, kp, ts, 0);
        CHECK_ERR(cuzk_params_cache_load(&q, kp), CUZK_EFORMAT, "stale", NULL);
        CHECK_ERR(cuzk_params_load(&q, kp, CUZK_PARAMS_CACHE), CUZK_ENOT_ON_CURVE, "b_g2", NULL);
        b[len - 1] ^= 1;
        write_all(kp, b, len);
        free(b);
    }
    /* a cache made from a trusted (unchecked) decode is not used by a checked load */
    {
        size_t len;
        uint8_t *b = read_all_or_null(kp, &len);
        cuzk_g1_affine o1;
        test_g1_off_subgroup(&o1);
        cuzk_g1_to_uncompressed(b + vec_off(p, 1) + 4, &o1);   /* h point 0 */
        write_all(kp, b, len);
        unlink(cp);
        CHECK_EQ_ERR(cuzk_params_load(&q, kp, CUZK_PARAMS_CACHE | CUZK_PARAMS_TRUSTED), CUZK_OK);
        cuzk_params_free(q);
        q = NULL;
        CHECK(access(cp, R_OK) == 0);
        CHECK_ERR(cuzk_params_load(&q, kp, CUZK_PARAMS_CACHE), CUZK_ENOT_IN_SUBGROUP,
                  "vector h: point 0", NULL);
        CHECK_EQ_ERR(cuzk_params_load(&q, kp, CUZK_PARAMS_CACHE | CUZK_PARAMS_TRUSTED), CUZK_OK);
        CHECK(q && cuzk_g1_affine_eq(&q->h[0], &o1));
        free(b);
    }
    /* a truncated cache is refused */
    {
        size_t len;
        uint8_t *b = read_all_or_null(cp, &len);
        write_all(cp, b, len - 8);
        cuzk_params *q2 = NULL;
        CHECK_ERR(cuzk_params_cache_load(&q2, kp), CUZK_EFORMAT, "header says", NULL);
        CHECK(q2 == NULL);
        free(b);
    }
out:
    unlink(cp);
    cuzk_params_free(p);
    cuzk_params_free(q);
    cuzk_bellman_circuit_free(c);
}

/* ---- decode speed ---- */
/* A key of n1 + 1 G1 points (ic 1, h n1) and n2 G2 points (b_g2) cycling through d1, d2. */
static cuzk_params *params_new_bench(const cuzk_g1_affine *d1, const cuzk_g2_affine *d2,
                                     size_t nd, size_t n1, size_t n2)
{
    cuzk_params *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->path = strdup("");
    p->alpha1 = p->beta1 = p->delta1 = d1[0];
    p->beta2 = p->gamma2 = p->delta2 = d2[0];
    p->n_ic = 1;
    p->n_h = (uint32_t)n1;
    p->n_b_g2 = (uint32_t)n2;
    p->ic = malloc(sizeof *p->ic);
    p->h = malloc(n1 * sizeof *p->h);
    p->b_g2 = malloc(n2 * sizeof *p->b_g2);
    p->l = malloc(1);
    p->a = malloc(1);
    p->b_g1 = malloc(1);
    if (!p->path || !p->ic || !p->h || !p->b_g2 || !p->l || !p->a || !p->b_g1) {
        cuzk_params_free(p);
        return NULL;
    }
    p->ic[0] = d1[1];
    for (size_t i = 0; i < n1; i++)
        p->h[i] = d1[i % nd];
    for (size_t i = 0; i < n2; i++)
        p->b_g2[i] = d2[i % nd];
    return p;
}

static void bench_decode(void)
{
    const char *s = getenv("CUZK_PARAMS_BENCH_LOG2");
    unsigned k = s ? (unsigned)atoi(s) : 12;
    if (k < 6 || k > 30)
        k = 12;
    size_t n1 = (size_t)1 << k, n2 = n1 / 8;
    /* 256 distinct points, repeated: decoding costs the same for every point */
    enum { DISTINCT = 256 };
    cuzk_fr sc[DISTINCT];
    test_rand_frs(sc, DISTINCT);
    cuzk_g1_affine d1[DISTINCT];
    cuzk_g2_affine d2[DISTINCT];
    if (cuzk_setup_g1_batch_var(d1, sc, DISTINCT, 0) != CUZK_OK ||
        cuzk_setup_g2_batch_var(d2, sc, DISTINCT, 0) != CUZK_OK) {
        CHECK(0);
        return;
    }
    for (int i = 0; i < 4; i++) {   /* the fixed-base path against plain scalar mul */
        cuzk_g1_affine e1;
        cuzk_g2_affine e2;
        cuzk_g1_generator_mul(&e1, &sc[i]);
        cuzk_g2_generator_mul(&e2, &sc[i]);
        CHECK(cuzk_g1_affine_eq(&e1, &d1[i]) && cuzk_g2_affine_eq(&e2, &d2[i]));
    }
    /* per point, one thread: the cost of each check */
    {
        uint8_t e1[DISTINCT][96], e2[DISTINCT][192];
        for (int i = 0; i < DISTINCT; i++) {
            cuzk_g1_to_uncompressed(e1[i], &d1[i]);
            cuzk_g2_to_uncompressed(e2[i], &d2[i]);
        }
        double us[4];
        for (int v = 0; v < 4; v++) {
            unsigned f = (v & 1) ? CUZK_DECODE_CHECK_SUBGROUP : 0;
            int ok = 0;
            double t0 = cuzk_now_ms();
            for (int i = 0; i < DISTINCT; i++) {
                cuzk_g1_affine r1;
                cuzk_g2_affine r2;
                ok += v < 2 ? cuzk_g1_from_uncompressed(&r1, e1[i], f) == CUZK_OK
                            : cuzk_g2_from_uncompressed(&r2, e2[i], f) == CUZK_OK;
            }
            us[v] = (cuzk_now_ms() - t0) * 1e3 / DISTINCT;
            CHECK(ok == DISTINCT);
        }
        printf("  one thread, per point: G1 %.2f us (%.1f us with the subgroup check), "
               "G2 %.2f us (%.1f us)\n", us[0], us[1], us[2], us[3]);
        printf("  {\"bench\":\"point_decode_us\",\"g1\":%.3f,\"g1_subgroup\":%.3f,"
               "\"g2\":%.3f,\"g2_subgroup\":%.3f}\n", us[0], us[1], us[2], us[3]);
    }
    cuzk_params *p = params_new_bench(d1, d2, DISTINCT, n1, n2);
    char kp[300];
    tmp_path(kp, sizeof kp, "bench.params");
    char *cp = cuzk_params_cache_path(kp);
    unlink(cp);
    if (!p || cuzk_params_write(kp, p) != CUZK_OK) {
        CHECK(0);
        cuzk_params_free(p);
        free(cp);
        return;
    }
    double mb = (double)cuzk_params_file_bytes(p) / 1e6, pts = (double)(n1 + n2 + 1);
    const char *label[4] = {"checked", "trusted", "cache write", "cache read"};
    unsigned fl[4] = {0, CUZK_PARAMS_TRUSTED, CUZK_PARAMS_CACHE, CUZK_PARAMS_CACHE};
    double ms[4];
    for (int i = 0; i < 4; i++) {
        cuzk_params *q = NULL;
        double t0 = cuzk_now_ms();
        cuzk_err e = cuzk_params_load(&q, kp, fl[i]);
        ms[i] = cuzk_now_ms() - t0;
        CHECK_EQ_ERR(e, CUZK_OK);
        CHECK(q && test_params_eq(p, q));
        cuzk_params_free(q);
    }
    printf("  decode of %.1f MB (%zu G1 + %zu G2 points), %u threads:\n", mb, n1 + 1, n2,
           cuzk_parallel_threads());
    for (int i = 0; i < 4; i++)
        printf("    %-12s %9.1f ms  %8.1f MB/s  %10.0f points/s\n", label[i], ms[i],
               mb / (ms[i] / 1e3), pts / (ms[i] / 1e3));
    printf("  {\"bench\":\"params_decode\",\"mb\":%.2f,\"g1\":%zu,\"g2\":%zu,\"checked_ms\":%.2f,"
           "\"trusted_ms\":%.2f,\"cache_write_ms\":%.2f,\"cache_read_ms\":%.2f}\n",
           mb, n1 + 1, n2, ms[0], ms[1], ms[2], ms[3]);
    unlink(cp);
    unlink(kp);
    free(cp);
    cuzk_params_free(p);
}

/* test_params --write-key <circuit.r1cs> <out.params>: a key from random toxic waste. */
static int write_key(const char *r1cs, const char *out)
{
    cuzk_bellman_circuit *c = NULL;
    cuzk_params *p = NULL;
    cuzk_setup_toxic t;
    cuzk_err e = cuzk_bellman_circuit_load(&c, r1cs);
    if (e == CUZK_OK)
        e = cuzk_setup_toxic_random(&t);
    if (e == CUZK_OK)
        e = cuzk_setup_bellman(&p, c, &t, 0);
    memset(&t, 0, sizeof t);
    if (e == CUZK_OK)
        e = cuzk_params_write(out, p);
    cuzk_params_free(p);
    cuzk_bellman_circuit_free(c);
    if (e != CUZK_OK) {
        fprintf(stderr, "test_params --write-key: %s\n", cuzk_error_detail());
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--write-key"))
        return write_key(argv[2], argv[3]);
    test_init("test_params");
    test_tmpdir_make(tmpdir, sizeof tmpdir, "cuzk_test_params");
    const char *fixtures[3] = {"multiplier", "chain", "nopub"};
    for (int i = 0; i < 3; i++)
        test_fixture(fixtures[i]);
    test_mismatch();
    test_reader();
    test_cache();
    bench_decode();
    test_dir_remove(tmpdir);
    return test_finish();
}
