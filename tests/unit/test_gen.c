/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk gen and the .r1cs/.wtns writers: round trips through the readers, generated circuits
 * of many sizes (block and iteration boundaries) that load and are satisfied by every
 * witness, statistics recounted from the loaded files, PoRep densities, determinism. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/gen.h"
#include "test.h"
#include "test_files.h"

static char tmpdir[64];

static void rm_dir(const char *d)
{
    DIR *dp = opendir(d);
    if (!dp)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(p, sizeof p, "%s/%s", d, e->d_name) < (int)sizeof p)
            unlink(p);
    }
    closedir(dp);
    rmdir(d);
}

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = read_all_or_null(a, &na), *y = read_all_or_null(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* ---- writers ---- */

static void test_writers(void)
{
    char path[512];
    for (int round = 0; round < 4; round++) {
        /* r1cs: random CSR matrices, with and without labels */
        cuzk_r1cs r;
        memset(&r, 0, sizeof r);
        r.n_wires = 1 + (uint32_t)(test_rand64() % 50);
        r.n_pub_out = (uint32_t)(test_rand64() % r.n_wires);
        r.n_pub_in = (uint32_t)(test_rand64() % (r.n_wires - r.n_pub_out));
        r.n_prv_in = (uint32_t)(test_rand64() % (r.n_wires - r.n_pub_out - r.n_pub_in));
        r.n_constraints = (uint32_t)(round == 0 ? 0 : test_rand64() % 40);
        r.n_labels = round & 1 ? r.n_wires : 1000u + (uint32_t)round;
        for (int m = 0; m < 3; m++) {
            cuzk_csr *x = &r.m[m];
            x->n_rows = r.n_constraints;
            x->row = calloc(r.n_constraints + 1, 8);
            for (uint32_t i = 0; i < r.n_constraints; i++)
                x->row[i + 1] = x->row[i] + test_rand64() % 5;
            uint64_t nnz = x->row[r.n_constraints];
            x->col = malloc((nnz + 1) * 4);
            x->val = malloc((nnz + 1) * sizeof(cuzk_fr));
            for (uint64_t k = 0; k < nnz; k++) {
                x->col[k] = (uint32_t)(test_rand64() % r.n_wires);
                test_rand_frs_mixed(&x->val[k], 1);
            }
        }
        if (round & 1) {
            r.wire_labels = malloc(r.n_wires * 8);
            for (uint32_t i = 0; i < r.n_wires; i++)
                r.wire_labels[i] = test_rand64();
        }
        snprintf(path, sizeof path, "%s/w.r1cs", tmpdir);
        CHECK_EQ_ERR(cuzk_r1cs_write(path, &r), CUZK_OK);
        cuzk_r1cs *l = NULL;
        CHECK_EQ_ERR(cuzk_r1cs_load(&l, path), CUZK_OK);
        if (l) {
            CHECK(l->n_wires == r.n_wires && l->n_pub_out == r.n_pub_out &&
                  l->n_pub_in == r.n_pub_in && l->n_prv_in == r.n_prv_in &&
                  l->n_constraints == r.n_constraints && l->n_labels == r.n_labels);
            for (int m = 0; m < 3; m++) {
                uint64_t nnz = r.m[m].row[r.n_constraints];
                CHECK(!memcmp(l->m[m].row, r.m[m].row, (r.n_constraints + 1) * 8));
                CHECK(!memcmp(l->m[m].col, r.m[m].col, nnz * 4));
                int eq = 1;
                for (uint64_t k = 0; k < nnz; k++)
                    eq &= cuzk_fr_eq(&l->m[m].val[k], &r.m[m].val[k]);
                CHECK(eq);
            }
            if (round & 1)
                CHECK(l->wire_labels && !memcmp(l->wire_labels, r.wire_labels, r.n_wires * 8));
            else
                CHECK(l->wire_labels == NULL);
            cuzk_r1cs_free(l);
        }
        for (int m = 0; m < 3; m++) {
            free(r.m[m].row);
            free(r.m[m].col);
            free(r.m[m].val);
        }
        free(r.wire_labels);

        /* wtns */
        size_t n = round == 0 ? 0 : 1 + test_rand64() % 700;
        cuzk_fr *w = malloc((n + 1) * sizeof(cuzk_fr));
        test_rand_frs_mixed(w, n);
        snprintf(path, sizeof path, "%s/w.wtns", tmpdir);
        CHECK_EQ_ERR(cuzk_wtns_write(path, w, n), CUZK_OK);
        cuzk_wtns *lw = NULL;
        CHECK_EQ_ERR(cuzk_wtns_load(&lw, path), CUZK_OK);
        if (lw) {
            CHECK(lw->n == n);
            int eq = 1;
            for (size_t i = 0; i < n && lw->n == n; i++)
                eq &= cuzk_fr_eq(&lw->w[i], &w[i]);
            CHECK(eq);
            cuzk_wtns_free(lw);
        }
        free(w);
    }
    /* unwritable paths */
    cuzk_fr one;
    cuzk_fr_set_one(&one);
    snprintf(path, sizeof path, "%s/no/such/dir/x.wtns", tmpdir);
    CHECK_EQ_ERR(cuzk_wtns_write(path, &one, 1), CUZK_EIO);
    CHECK(strstr(cuzk_error_detail(), "x.wtns") != NULL);
    cuzk_r1cs empty;
    memset(&empty, 0, sizeof empty);
    uint64_t zero_row = 0;
    for (int m = 0; m < 3; m++)
        empty.m[m].row = &zero_row;
    empty.n_wires = 1;
    snprintf(path, sizeof path, "%s/no/such/dir/x.r1cs", tmpdir);
    CHECK_EQ_ERR(cuzk_r1cs_write(path, &empty), CUZK_EIO);
}

/* ---- generator ---- */

static void path_of(char *p, size_t n, const char *dir, int part)
{
    if (part < 0)
        snprintf(p, n, "%s/circuit.r1cs", dir);
    else
        snprintf(p, n, "%s/witness-%d.wtns", dir, part);
}

/* Generates into dir, loads everything back and checks it; returns the loaded r1cs (or
 * NULL) for further checks. */
static cuzk_r1cs *gen_and_check(const char *dir, const cuzk_gen_opts *o, cuzk_gen_stats *st)
{
    char p[512];
    cuzk_err e = cuzk_gen_write(st, dir, o);
    CHECK_EQ_ERR(e, CUZK_OK);
    if (e != CUZK_OK) {
        fprintf(stderr, "  %s\n", cuzk_error_detail());
        return NULL;
    }
    path_of(p, sizeof p, dir, -1);
    cuzk_r1cs *r = NULL;
    CHECK_EQ_ERR(cuzk_r1cs_load(&r, p), CUZK_OK);
    if (!r)
        return NULL;
    struct stat sb;
    CHECK(stat(p, &sb) == 0 && (uint64_t)sb.st_size == st->r1cs_bytes);
    uint32_t np = cuzk_gen_n_public(o);
    CHECK(r->n_constraints == o->n_constraints);
    CHECK(st->n_constraints == o->n_constraints);
    CHECK(r->n_wires == st->n_wires && r->n_pub_out == 0 && r->n_pub_in == np &&
          st->n_public == np && r->n_prv_in == st->n_prv_in && r->n_labels == r->n_wires);
    uint64_t bc = o->profile == CUZK_GEN_POREP ? 8 * 1343 : 8192;   /* constraints a block */
    CHECK(r->n_prv_in == 3 * ((o->n_constraints + bc - 1) / bc));
    /* labels are the wire numbers */
    int lab_ok = r->wire_labels != NULL;
    for (uint32_t i = 0; lab_ok && i < r->n_wires; i++)
        lab_ok = r->wire_labels[i] == i;
    CHECK(lab_ok);
    /* terms, densities and repeated wires recounted from the file */
    uint8_t *used = calloc(r->n_wires, 1);
    int dup = 0;
    uint32_t *seen = calloc(r->n_wires, 4);
    uint32_t stamp = 0;
    for (int m = 0; m < 3; m++) {
        CHECK(r->m[m].row[r->n_constraints] == st->n_terms[m]);
        for (uint32_t i = 0; i < r->n_constraints; i++) {
            stamp++;
            for (uint64_t k = r->m[m].row[i]; k < r->m[m].row[i + 1]; k++) {
                uint32_t w = r->m[m].col[k];
                dup |= seen[w] == stamp;
                seen[w] = stamp;
                if (m < 2)
                    used[w] |= (uint8_t)(1 << m);
            }
        }
    }
    CHECK(!dup);   /* snarkjs keeps one term per wire in a linear combination */
    uint64_t in_a = 0, in_b = 0;
    uint32_t pub_a = 0, pub_b = 0;
    for (uint32_t w = 1 + np; w < r->n_wires; w++) {
        in_a += used[w] & 1;
        in_b += (used[w] >> 1) & 1;
    }
    for (uint32_t w = 1; w <= np; w++) {
        pub_a += used[w] & 1;
        pub_b += (used[w] >> 1) & 1;
    }
    CHECK(st->n_private == r->n_wires - 1 - np);
    CHECK(in_a == st->private_in_a && in_b == st->private_in_b);
    CHECK(pub_a == st->public_in_a && pub_b == st->public_in_b);
    if (o->n_public < 0)
        CHECK(pub_b == np);   /* every public input is used */
    free(used);
    free(seen);
    /* every witness satisfies the circuit */
    uint64_t v01 = 0;
    for (uint32_t q = 0; q < o->n_partitions; q++) {
        path_of(p, sizeof p, dir, (int)q);
        CHECK(stat(p, &sb) == 0 && (uint64_t)sb.st_size == st->wtns_bytes);
        cuzk_wtns *w = NULL;
        CHECK_EQ_ERR(cuzk_wtns_load(&w, p), CUZK_OK);
        if (!w)
            continue;
        size_t bad = 0;
        e = cuzk_r1cs_check_witness(r, w->w, w->n, &bad);
        CHECK_EQ_ERR(e, CUZK_OK);
        if (e)
            fprintf(stderr, "  N=%llu profile %d partition %u: constraint %zu fails\n",
                    (unsigned long long)o->n_constraints, (int)o->profile, q, bad);
        for (uint32_t i = 1 + np; i < w->n; i++) {
            cuzk_fr one;
            cuzk_fr_set_one(&one);
            v01 += cuzk_fr_is_zero(&w->w[i]) || cuzk_fr_eq(&w->w[i], &one);
        }
        cuzk_wtns_free(w);
    }
    CHECK(v01 == st->private_01);
    return r;
}

static void test_sizes(void)
{
    static const uint64_t porep_n[] = {1, 2, 3, 125, 126, 127, 381, 382, 383, 1342, 1343, 1344,
                                       2686, 10743, 10744, 10745, 1 << 14};
    static const uint64_t dense_n[] = {1, 2, 3, 1023, 1024, 1025, 8191, 8192, 8193, 1 << 14};
    char dir[128];
    snprintf(dir, sizeof dir, "%s/sizes", tmpdir);
    for (int prof = 0; prof < 2; prof++) {
        const uint64_t *ns = prof ? dense_n : porep_n;
        size_t cnt = prof ? sizeof dense_n / 8 : sizeof porep_n / 8;
        for (size_t i = 0; i < cnt; i++) {
            cuzk_gen_opts o = {.n_constraints = ns[i], .n_partitions = 1 + (uint32_t)(i % 3),
                               .profile = prof ? CUZK_GEN_DENSE : CUZK_GEN_POREP,
                               .seed = test_rand64(), .n_public = -1};
            cuzk_gen_stats st;
            cuzk_r1cs *r = gen_and_check(dir, &o, &st);
            cuzk_r1cs_free(r);
            rm_dir(dir);
        }
    }
    /* explicit public-input counts, zero included */
    for (int k = 0; k < 3; k++) {
        int64_t pubs[] = {0, 1, 400};
        cuzk_gen_opts o = {.n_constraints = 3000, .n_partitions = 2,
                           .profile = k == 1 ? CUZK_GEN_DENSE : CUZK_GEN_POREP,
                           .seed = test_rand64(), .n_public = pubs[k]};
        cuzk_gen_stats st;
        cuzk_r1cs *r = gen_and_check(dir, &o, &st);
        CHECK(st.n_public == (uint32_t)pubs[k]);
        cuzk_r1cs_free(r);
        rm_dir(dir);
    }
}

static void test_porep_stats(void)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/stats", tmpdir);
    /* 12 whole iterations (16116 constraints), then 2^14 with a cut iteration at the end */
    static const uint64_t ns[2] = {12 * 1343, 1 << 14};
    cuzk_gen_opts o;
    cuzk_gen_stats st;
    cuzk_r1cs *r = NULL;
    for (int i = 0; i < 2; i++) {
        o = (cuzk_gen_opts){.n_constraints = ns[i], .n_partitions = 2,
                            .profile = CUZK_GEN_POREP, .seed = test_rand64(), .n_public = -1};
        cuzk_r1cs_free(r);
        r = gen_and_check(dir, &o, &st);
        double a = 100.0 * (double)st.private_in_a / (double)st.n_private;
        double b = 100.0 * (double)st.private_in_b / (double)st.n_private;
        double v = 100.0 * (double)st.private_01 / (double)(st.n_private * o.n_partitions);
        printf("porep N=%llu: public %u, private in A %.2f%%, in B %.2f%%, values 0/1 %.2f%%\n",
               (unsigned long long)ns[i], st.n_public, a, b, v);
        /* targets: A 99.7 %, B 25.4 % (Filecoin PoRep), about 90 % of values bits; a cut
         * last iteration (S-boxes and decomposed bits first) pulls B up a little */
        double tol = i == 0 ? 0.4 : 1.2;
        CHECK(a > 99.5 && a < 99.9);
        CHECK(b > 25.4 - tol && b < 25.4 + tol);
        CHECK(v > 88.5 && v < 92.0);
        CHECK(st.n_public == 12 + (uint32_t)i);   /* one per iteration begun */
    }

    /* A tampered witness fails: the check above can fail. */
    char p[512];
    snprintf(p, sizeof p, "%s/witness-0.wtns", dir);
    cuzk_wtns *w = NULL;
    CHECK_EQ_ERR(cuzk_wtns_load(&w, p), CUZK_OK);
    snprintf(p, sizeof p, "%s/circuit.r1cs", dir);
    cuzk_r1cs_free(r);
    r = NULL;
    CHECK_EQ_ERR(cuzk_r1cs_load(&r, p), CUZK_OK);
    if (w && r) {
        /* Add 2, not 1: in the cut last iteration a decomposed bit may be held only by
         * b*b = b, which 0 + 1 still satisfies; b + 2 satisfies it for no b in {0, 1}, and
         * every other wire is defined by a constraint that any change breaks. */
        for (int t = 0; t < 5; t++) {
            size_t i = 1 + test_rand64() % (w->n - 1);
            cuzk_fr keep = w->w[i], two;
            cuzk_fr_set_u64(&two, 2);
            cuzk_fr_add(&w->w[i], &w->w[i], &two);
            CHECK_EQ_ERR(cuzk_r1cs_check_witness(r, w->w, w->n, NULL), CUZK_EVERIFY);
            w->w[i] = keep;
        }
        CHECK_EQ_ERR(cuzk_r1cs_check_witness(r, w->w, w->n, NULL), CUZK_OK);
    }
    cuzk_wtns_free(w);
    cuzk_r1cs_free(r);
    rm_dir(dir);
}

static void test_determinism(void)
{
    char d1[128], d2[128], p1[512], p2[512];
    snprintf(d1, sizeof d1, "%s/det1", tmpdir);
    snprintf(d2, sizeof d2, "%s/det2", tmpdir);
    for (int prof = 0; prof < 2; prof++) {
        uint64_t seed = test_rand64();
        cuzk_gen_opts o = {.n_constraints = 30000 + test_rand64() % 5000, .n_partitions = 3,
                           .profile = prof ? CUZK_GEN_DENSE : CUZK_GEN_POREP, .seed = seed,
                           .n_public = -1, .nthreads = 1};
        cuzk_gen_stats st;
        CHECK_EQ_ERR(cuzk_gen_write(&st, d1, &o), CUZK_OK);
        o.nthreads = 2;
        CHECK_EQ_ERR(cuzk_gen_write(&st, d2, &o), CUZK_OK);
        for (int q = -1; q < 3; q++) {
            path_of(p1, sizeof p1, d1, q);
            path_of(p2, sizeof p2, d2, q);
            CHECK(same_file(p1, p2));   /* same seed, any thread count: same bytes */
        }
        /* partitions differ from each other */
        path_of(p1, sizeof p1, d1, 0);
        path_of(p2, sizeof p2, d1, 1);
        CHECK(!same_file(p1, p2));
        /* another seed: other witnesses (and another circuit of the same shape) */
        o.seed = seed + 1;
        CHECK_EQ_ERR(cuzk_gen_write(&st, d2, &o), CUZK_OK);
        for (int q = -1; q < 3; q++) {
            path_of(p1, sizeof p1, d1, q);
            path_of(p2, sizeof p2, d2, q);
            CHECK(!same_file(p1, p2));
        }
        rm_dir(d1);
        rm_dir(d2);
    }
}

static void test_options(void)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/opts", tmpdir);
    cuzk_gen_opts o = {.n_constraints = 0, .n_partitions = 1, .n_public = -1};
    cuzk_gen_stats st;
    CHECK_EQ_ERR(cuzk_gen_write(&st, dir, &o), CUZK_EINVAL);
    o.n_constraints = 10;
    o.n_partitions = 0;
    CHECK_EQ_ERR(cuzk_gen_write(&st, dir, &o), CUZK_EINVAL);
    o.n_partitions = CUZK_GEN_MAX_PARTITIONS + 1;
    CHECK_EQ_ERR(cuzk_gen_write(&st, dir, &o), CUZK_EINVAL);
    o.n_partitions = 1;
    o.profile = (cuzk_gen_profile)7;
    CHECK_EQ_ERR(cuzk_gen_write(&st, dir, &o), CUZK_EINVAL);
    o.profile = CUZK_GEN_POREP;
    char bad[128];
    snprintf(bad, sizeof bad, "%s/no/such/dir", tmpdir);
    CHECK_EQ_ERR(cuzk_gen_write(&st, bad, &o), CUZK_EIO);
    CHECK(strstr(cuzk_error_detail(), "no/such/dir") != NULL);

    /* domains: N + n_public + 1 <= 2^k, and N + 1 no longer fits */
    for (int prof = 0; prof < 2; prof++) {
        for (unsigned k = 1; k <= 27; k++) {
            cuzk_gen_opts f = {.profile = prof ? CUZK_GEN_DENSE : CUZK_GEN_POREP, .n_public = -1};
            uint64_t n = cuzk_gen_fit_domain(&f, k);
            f.n_constraints = n;
            uint64_t np = cuzk_gen_n_public(&f);
            if (n == 0) {
                CHECK(k == 1);   /* N = 1 needs one public input: 3 > 2 */
                continue;
            }
            CHECK(n + np + 1 <= (1ULL << k));
            f.n_constraints = n + 1;
            CHECK(n + 1 + cuzk_gen_n_public(&f) + 1 > (1ULL << k));
        }
        cuzk_gen_opts f = {.profile = prof ? CUZK_GEN_DENSE : CUZK_GEN_POREP, .n_public = -1};
        CHECK(cuzk_gen_fit_domain(&f, 27) == (1ULL << 27) - 328);
        CHECK(cuzk_gen_fit_domain(&f, 20) == (1ULL << 20) - 328);
    }
}

int main(void)
{
    test_init("test_gen");
    test_tmpdir_make(tmpdir, sizeof tmpdir, "cuzk_test_gen");
    test_writers();
    test_options();
    test_sizes();
    test_porep_stats();
    test_determinism();
    test_dir_remove(tmpdir);
    return test_finish();
}
