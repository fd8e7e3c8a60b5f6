/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SupraSeal C2 ABI called as bellperson calls it (include/cuzk_supraseal.h): from a
 * circuit's .r1cs and witnesses it builds what bellperson's ProvingAssignment holds (a, b, c
 * per constraint with one input * 0 = 0 row per input, unpadded; the three density bit
 * vectors with their popcounts; the Montgomery assignments), calls the library with r and
 * s per circuit, and checks every proof: it verifies against the key's vk, equals cuzk's own
 * API's proof for the same r and s byte for byte, and verifies again from its 192-byte
 * Filecoin encoding. Built once per flavour (CUZK_SUPRASEAL_CURIO: Curio's).
 *
 *   harness [options] prove  R1CS PARAMS BATCH W.wtns...   (BATCH circuits, the witnesses in turn)
 *   harness [options] errors R1CS PARAMS W.wtns            (every error path: code and message)
 *   harness [options] refs   R1CS PARAMS W.wtns            (clone/drop/evict while proofs run)
 *   harness [options] split  R1CS PARAMS W.wtns            (Curio: two threads, one gpu mutex)
 *   harness gpu-available                                  (exit 0 when a GPU answers, else 77)
 * options: --backend auto|cpu|gpu (the library's; default cpu), --native cpu|gpu|off (the
 * reference proofs' backend; default cpu), --runs N (prove: time N calls, print ms),
 * --seed S, --trusted (the .params without subgroup checks, here and in the library),
 * --vk VK.json (with --native off: the key is loaded by the library only; for large keys).
 * Exit 0 when every check passes, 1 otherwise, 2 when it could not run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk/params.h"
#include "cuzk_supraseal.h"

static int failures;
#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

static void die(const char *what, cuzk_err e)
{
    fprintf(stderr, "%s: %s: %s\n", what, cuzk_strerror(e), cuzk_error_detail());
    exit(2);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t rng = 1;
static void rand_fr(cuzk_fr *r)
{
    uint8_t b[32];
    for (int i = 0; i < 32; i++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        b[i] = (uint8_t)(rng >> 56);
    }
    b[31] &= 0x0f; /* below the modulus */
    if (cuzk_fr_from_bytes_le(r, b) != CUZK_OK)
        exit(2);
}

/* What bellperson's ProvingAssignment holds for one circuit. */
typedef struct {
    cuzk_fr *a, *b, *c;        /* n_rows each */
    cuzk_fr *inp, *aux;
    size_t n_rows, n_inp, n_aux;
} circuit_data;

typedef struct {
    const cuzk_bellman_circuit *bc;
    const cuzk_fr *w;
    circuit_data *d;
    size_t b, e;
} eval_ctx;

static void row_dot(cuzk_fr *out, const cuzk_csr *m, size_t row, const cuzk_fr *w)
{
    cuzk_fr acc, t;
    cuzk_fr_set_zero(&acc);
    for (uint64_t k = m->row[row]; k < m->row[row + 1]; k++) {
        cuzk_fr_mul(&t, &m->val[k], &w[m->col[k]]);
        cuzk_fr_add(&acc, &acc, &t);
    }
    *out = acc;
}

static void *eval_main(void *arg)
{
    eval_ctx *x = arg;
    for (size_t i = x->b; i < x->e; i++) {
        row_dot(&x->d->a[i], &x->bc->a, i, x->w);
        row_dot(&x->d->b[i], &x->bc->b, i, x->w);
        row_dot(&x->d->c[i], &x->bc->c, i, x->w);
    }
    return NULL;
}

/* a, b, c over the circuit's rows (its constraints, then A = input i, B = C = 0 per input)
 * and the assignments split into inputs and aux, from witness w. */
static void circuit_build(circuit_data *d, const cuzk_bellman_circuit *bc, const cuzk_fr *w)
{
    d->n_rows = bc->n_rows;
    d->n_inp = bc->n_public + 1;
    d->n_aux = bc->n_vars - d->n_inp;
    d->a = xmalloc(sizeof(cuzk_fr) * d->n_rows);
    d->b = xmalloc(sizeof(cuzk_fr) * d->n_rows);
    d->c = xmalloc(sizeof(cuzk_fr) * d->n_rows);
    d->inp = xmalloc(sizeof(cuzk_fr) * d->n_inp);
    d->aux = xmalloc(sizeof(cuzk_fr) * d->n_aux);
    memcpy(d->inp, w, sizeof(cuzk_fr) * d->n_inp);
    memcpy(d->aux, w + d->n_inp, sizeof(cuzk_fr) * d->n_aux);
    enum { T = 8 };
    pthread_t th[T];
    eval_ctx x[T];
    for (int t = 0; t < T; t++) {
        x[t] = (eval_ctx){bc, w, d, d->n_rows * t / T, d->n_rows * (t + 1) / T};
        if (pthread_create(&th[t], NULL, eval_main, &x[t]))
            eval_main(&x[t]), th[t] = 0;
    }
    for (int t = 0; t < T; t++)
        if (th[t])
            pthread_join(th[t], NULL);
}

static void circuit_free(circuit_data *d)
{
    free(d->a), free(d->b), free(d->c), free(d->inp), free(d->aux);
}

/* The density trackers: a wire is in A (B) when a row of A (B) has it with a nonzero
 * coefficient. */
typedef struct {
    uint64_t *a_aux, *b_inp, *b_aux;
    size_t a_aux_pop, b_inp_pop, b_aux_pop;
} densities;

static void density_mark(uint64_t *inp, uint64_t *aux, const cuzk_csr *m, size_t n_inp)
{
    for (size_t i = 0; i < m->n_rows; i++)
        for (uint64_t k = m->row[i]; k < m->row[i + 1]; k++) {
            if (cuzk_fr_is_zero(&m->val[k]))
                continue;
            size_t col = m->col[k];
            if (col < n_inp) {
                if (inp)
                    inp[col / 64] |= 1ULL << (col % 64);
            } else {
                col -= n_inp;
                aux[col / 64] |= 1ULL << (col % 64);
            }
        }
}

static size_t popcount(const uint64_t *w, size_t words)
{
    size_t n = 0;
    for (size_t i = 0; i < words; i++)
        n += (size_t)__builtin_popcountll(w[i]);
    return n;
}

static void densities_build(densities *d, const cuzk_bellman_circuit *bc)
{
    size_t n_inp = bc->n_public + 1, n_aux = bc->n_vars - n_inp;
    size_t wi = (n_inp + 63) / 64, wa = (n_aux + 63) / 64;
    d->a_aux = xmalloc(8 * wa);
    d->b_inp = xmalloc(8 * wi);
    d->b_aux = xmalloc(8 * wa);
    density_mark(NULL, d->a_aux, &bc->a, n_inp);
    density_mark(d->b_inp, d->b_aux, &bc->b, n_inp);
    d->a_aux_pop = popcount(d->a_aux, wa);
    d->b_inp_pop = popcount(d->b_inp, wi);
    d->b_aux_pop = popcount(d->b_aux, wa);
}

static Assignment assignment_of(const circuit_data *c, const densities *d)
{
    return (Assignment){
        .a_aux_density = d->a_aux, .a_aux_bit_len = c->n_aux, .a_aux_popcount = d->a_aux_pop,
        .b_inp_density = d->b_inp, .b_inp_bit_len = c->n_inp, .b_inp_popcount = d->b_inp_pop,
        .b_aux_density = d->b_aux, .b_aux_bit_len = c->n_aux, .b_aux_popcount = d->b_aux_pop,
        .a = (const fr_t *)c->a, .b = (const fr_t *)c->b, .c = (const fr_t *)c->c,
        .abc_size = c->n_rows,
        .inp_assignment_data = (const fr_t *)c->inp, .inp_assignment_size = c->n_inp,
        .aux_assignment_data = (const fr_t *)c->aux, .aux_assignment_size = c->n_aux};
}

/* ---- the fixture ---- */
static const char *r1cs_path, *params_path;
static cuzk_params *params;
static cuzk_bellman_circuit *bcirc;
static cuzk_vk *vk;
static densities dens;
static size_t n_wtns;
static cuzk_fr **wits;         /* the witnesses, n_vars values each */
static circuit_data *cdata;    /* one per witness */
static cuzk_backend native_be = CUZK_BACKEND_CPU;
static bool native_off;
static const char *vk_json;    /* --vk: the verification key from JSON, the key not loaded here */
static bool trusted;           /* --trusted: the .params without subgroup checks, here and there */

static void fixture_load(char **wpaths, size_t n)
{
    cuzk_err e;
    if (vk_json) { /* large keys: one copy in the process, the library's */
        if ((e = cuzk_vk_read_json(&vk, vk_json)) != CUZK_OK)
            die(vk_json, e);
        if ((e = cuzk_bellman_circuit_load(&bcirc, r1cs_path)) != CUZK_OK)
            die(r1cs_path, e);
    } else {
        if ((e = cuzk_params_load(&params, params_path, trusted ? CUZK_PARAMS_TRUSTED : 0)) != CUZK_OK)
            die(params_path, e);
        if ((e = cuzk_bellman_circuit_load_for(&bcirc, r1cs_path, params)) != CUZK_OK)
            die(r1cs_path, e);
        if ((e = cuzk_params_check_circuit(params, bcirc)) != CUZK_OK)
            die("check", e);
        if ((e = cuzk_vk_from_params(&vk, params)) != CUZK_OK)
            die("vk", e);
    }
    densities_build(&dens, bcirc);
    n_wtns = n;
    wits = xmalloc(n * sizeof *wits);
    cdata = xmalloc(n * sizeof *cdata);
    for (size_t i = 0; i < n; i++) {
        cuzk_wtns *w;
        if ((e = cuzk_wtns_load(&w, wpaths[i])) != CUZK_OK)
            die(wpaths[i], e);
        if (w->n != bcirc->n_vars) {
            fprintf(stderr, "%s: %u values, the circuit has %u wires\n", wpaths[i], w->n,
                    bcirc->n_vars);
            exit(2);
        }
        wits[i] = xmalloc(sizeof(cuzk_fr) * w->n);
        memcpy(wits[i], w->w, sizeof(cuzk_fr) * w->n);
        cuzk_wtns_free(w);
        circuit_build(&cdata[i], bcirc, wits[i]);
    }
}

/* proof i of the batch: verifies, is cuzk's own for (r, s), verifies from 192 bytes */
static void check_proof(const groth16_proof *gp, size_t i, const cuzk_fr *r, const cuzk_fr *s)
{
    cuzk_proof p;
    memcpy(&p, gp, sizeof p); /* blst's layout is cuzk's: Montgomery limbs, c0 then c1 */
    const cuzk_fr *w = wits[i % n_wtns];
    cuzk_err e = cuzk_groth16_verify(vk, w + 1, bcirc->n_public, &p);
    CHECK(e == CUZK_OK, "proof %zu does not verify: %s %s", i, cuzk_strerror(e), cuzk_error_detail());
    if (!native_off) {
        cuzk_proof q;
        cuzk_prove_opts o = {.backend = native_be, .test_r = r, .test_s = s};
        e = cuzk_params_prove(&q, NULL, params, bcirc, (const cuzk_fr *const *)&w, 1,
                              bcirc->n_vars, &o);
        CHECK(e == CUZK_OK, "native proof %zu: %s", i, cuzk_error_detail());
        CHECK(e != CUZK_OK || !memcmp(&q, gp, sizeof q),
              "proof %zu differs from cuzk_params_prove's for the same r, s", i);
    }
    uint8_t fc[CUZK_FILECOIN_PROOF_BYTES];
    cuzk_proof_to_filecoin(fc, &p);
    cuzk_proof back;
    e = cuzk_proof_from_filecoin(&back, fc);
    CHECK(e == CUZK_OK, "proof %zu: the 192-byte form does not decode: %s", i, cuzk_error_detail());
    if (e == CUZK_OK) {
        e = cuzk_groth16_verify(vk, w + 1, bcirc->n_public, &back);
        CHECK(e == CUZK_OK, "proof %zu does not verify from its 192 bytes", i);
    }
}

typedef struct {
    Assignment *as;
    fr_t *r, *s;
    groth16_proof *proofs;
    size_t n;
} batch;

static void batch_make(batch *b, size_t n)
{
    b->n = n;
    b->as = xmalloc(n * sizeof *b->as);
    b->r = xmalloc(n * sizeof *b->r);
    b->s = xmalloc(n * sizeof *b->s);
    b->proofs = xmalloc(n * sizeof *b->proofs);
    for (size_t i = 0; i < n; i++) {
        b->as[i] = assignment_of(&cdata[i % n_wtns], &dens);
        rand_fr((cuzk_fr *)&b->r[i]);
        rand_fr((cuzk_fr *)&b->s[i]);
    }
}

static void batch_free(batch *b)
{
    free(b->as), free(b->r), free(b->s), free(b->proofs);
}

static void batch_check(const batch *b, const char *what)
{
    int before = failures;
    for (size_t i = 0; i < b->n; i++)
        check_proof(&b->proofs[i], i, (const cuzk_fr *)&b->r[i], (const cuzk_fr *)&b->s[i]);
    printf("%s: %zu proofs %s\n", what, b->n, failures == before ? "ok" : "FAILED");
}

static RustError call_generate(const batch *b, const SRS *srs)
{
#ifdef CUZK_SUPRASEAL_CURIO
    return generate_groth16_proofs_c(b->as, b->n, b->r, b->s, b->proofs, srs, NULL, -1);
#else
    return generate_groth16_proofs_c(b->as, b->n, b->r, b->s, b->proofs, srs);
#endif
}

static bool rust_ok(RustError r, const char *what)
{
    if (r.code == 0) {
        CHECK(r.message == NULL, "%s: success with a message", what);
        free(r.message);
        return true;
    }
    fprintf(stderr, "%s: code %d: %s\n", what, r.code, r.message ? r.message : "(no message)");
    free(r.message);
    return false;
}

/* an error: a code, a message containing want (each of the '|'-separated words) */
static void expect_err(RustError r, const char *what, const char *want)
{
    CHECK(r.code != 0, "%s: succeeded, an error was expected", what);
    CHECK(r.message != NULL, "%s: code %d without a message", what, r.code);
    if (r.message) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", want);
        for (char *save, *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save))
            CHECK(strstr(r.message, t), "%s: message '%s' lacks '%s'", what, r.message, t);
        printf("error %-28s code %d: %s\n", what, r.code, r.message);
    }
    free(r.message);
}

static int do_prove(size_t n, int runs)
{
    SRS srs = {NULL};
    if (!rust_ok(create_SRS(&srs, params_path, false), "create_SRS"))
        return 1;
    batch b;
    batch_make(&b, n);
    double best = 0;
    for (int run = 0; run < (runs > 0 ? runs : 1); run++) {
        double t0 = now_ms();
        RustError r = call_generate(&b, &srs);
        double dt = now_ms() - t0;
        CHECK(rust_ok(r, "generate_groth16_proofs_c"), "generate failed");
        if (runs > 0)
            printf("abi call %d: %.1f ms\n", run, dt);
        if (run == 0 || dt < best)
            best = dt;
    }
    if (runs > 0)
        printf("abi best: %.1f ms for %zu circuits\n", best, n);
    char what[64];
    snprintf(what, sizeof what, "batch of %zu", n);
    batch_check(&b, what);
    batch_free(&b);
    drop_SRS(&srs);
    CHECK(srs.ptr == NULL, "drop_SRS left the handle set");
    drop_SRS(&srs); /* a dropped handle: nothing */
    return failures != 0;
}

/* ---- clone/drop/evict while proofs run ---- */
typedef struct {
    SRS srs;
    batch b;
    RustError r;
} prove_job;

static void *prove_main(void *arg)
{
    prove_job *j = arg;
    j->r = call_generate(&j->b, &j->srs);
    drop_SRS(&j->srs); /* the thread's own reference */
    return NULL;
}

static int do_refs(void)
{
    /* cached: two handles of one path share one key; evicting leaves the handles working */
    SRS a = {NULL}, b = {NULL};
    if (!rust_ok(create_SRS(&a, params_path, true), "create_SRS cached") ||
        !rust_ok(create_SRS(&b, params_path, true), "create_SRS cached again"))
        return 1;
    CHECK(a.ptr == b.ptr, "two cached handles of one path are different keys");
    SRS c = clone_SRS(&a);
    CHECK(c.ptr == a.ptr, "clone_SRS is another key");
    SRS z = {NULL}, zc = clone_SRS(&z);
    CHECK(zc.ptr == NULL, "clone_SRS of an empty handle is not empty");
    evict_SRS(&z); /* empty: nothing */

    /* proofs on four threads, each with its own clone, while the handles go */
    enum { J = 4 };
    prove_job jobs[J];
    pthread_t th[J];
    for (int i = 0; i < J; i++) {
        jobs[i].srs = clone_SRS(&a);
        batch_make(&jobs[i].b, 1 + (size_t)i % 2);
        if (pthread_create(&th[i], NULL, prove_main, &jobs[i]))
            exit(2);
    }
    evict_SRS(&a);   /* the cache's reference */
    drop_SRS(&a);
    drop_SRS(&b);
    evict_SRS(&c);   /* already evicted: nothing */
    drop_SRS(&c);    /* the last handle outside the threads */
    for (int i = 0; i < J; i++) {
        pthread_join(th[i], NULL);
        CHECK(rust_ok(jobs[i].r, "generate during drop"), "a proof failed while handles went");
        char what[64];
        snprintf(what, sizeof what, "thread %d (handles dropped)", i);
        batch_check(&jobs[i].b, what);
        batch_free(&jobs[i].b);
    }

    /* after eviction a cached create loads afresh */
    SRS d = {NULL};
    if (rust_ok(create_SRS(&d, params_path, true), "create_SRS after evict")) {
        batch bb;
        batch_make(&bb, 1);
        CHECK(rust_ok(call_generate(&bb, &d), "generate after evict"), "generate after evict");
        batch_check(&bb, "after evict");
        batch_free(&bb);
        evict_SRS(&d);
        drop_SRS(&d);
    }
    /* more paths than the cache keeps: the oldest goes, the handles stay valid */
    SRS many[6];
    char tmpl[6][64];
    for (int i = 0; i < 6; i++) {
        snprintf(tmpl[i], sizeof tmpl[i], "%s", params_path);
        many[i].ptr = NULL;
    }
    for (int i = 0; i < 6; i++) {
        /* one file under six names: ./ prefixes make different paths */
        char path[4096];
        int k = snprintf(path, sizeof path, "%s", params_path[0] == '/' ? "" : "./");
        for (int j = 0; j < i; j++)
            k += snprintf(path + k, sizeof path - (size_t)k, "%s", params_path[0] == '/' ? "/" : "./");
        snprintf(path + k, sizeof path - (size_t)k, "%s", params_path);
        CHECK(rust_ok(create_SRS(&many[i], path, true), path), "create_SRS %s", path);
    }
    batch bb;
    batch_make(&bb, 1);
    CHECK(rust_ok(call_generate(&bb, &many[0]), "generate, first of six"), "the oldest handle");
    batch_check(&bb, "the oldest of six cached paths");
    batch_free(&bb);
    for (int i = 0; i < 6; i++) {
        evict_SRS(&many[i]);
        drop_SRS(&many[i]);
    }
    return failures != 0;
}

/* ---- every error path ---- */
static int do_errors(void)
{
    SRS srs = {NULL};
    expect_err(create_SRS(&srs, "/nonexistent/x.params", false), "missing .params",
               "/nonexistent/x.params");
    CHECK(srs.ptr == NULL, "a failed create_SRS left a handle");
    expect_err(create_SRS(&srs, NULL, false), "NULL path", "path");
    expect_err(create_SRS(NULL, params_path, false), "NULL SRS", "SRS");
    expect_err(create_SRS(&srs, r1cs_path, false), "corrupt .params (an .r1cs)", r1cs_path);
    /* a truncated copy of the key */
    char trunc[] = "/tmp/cuzk-abi-XXXXXX";
    int fd = mkstemp(trunc);
    FILE *in = fopen(params_path, "rb"), *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (in && out) {
        fseek(in, 0, SEEK_END);
        long sz = ftell(in);
        fseek(in, 0, SEEK_SET);
        char *buf = xmalloc((size_t)sz);
        if (fread(buf, 1, (size_t)sz, in) == (size_t)sz)
            fwrite(buf, 1, (size_t)sz - 100, out);
        free(buf);
        fclose(out);
        expect_err(create_SRS(&srs, trunc, true), "truncated .params", trunc);
        CHECK(srs.ptr == NULL, "a failed cached create_SRS left a handle");
    }
    if (in)
        fclose(in);
    remove(trunc);

    if (!rust_ok(create_SRS(&srs, params_path, false), "create_SRS"))
        return 1;
    batch b;
    batch_make(&b, 2);
    const Assignment good = b.as[1];
    SRS none = {NULL};
    expect_err(call_generate(&b, &none), "no SRS", "SRS");
    expect_err(call_generate(&b, NULL), "NULL SRS", "SRS");
#define MUTATE(what, stmt, want)                                                              \
    do {                                                                                      \
        b.as[1] = good;                                                                       \
        stmt;                                                                                 \
        expect_err(call_generate(&b, &srs), what, want);                                      \
    } while (0)
    char l_msg[128], a_msg[128], b_msg[128];
    snprintf(l_msg, sizeof l_msg, "circuit 1|L has %u|%zu", params->n_l, good.aux_assignment_size - 1);
    snprintf(a_msg, sizeof a_msg, "A has %u|%zu + %zu", params->n_a, good.inp_assignment_size,
             good.a_aux_popcount + 1);
    snprintf(b_msg, sizeof b_msg, "B_G1 has %u|%zu + %zu", params->n_b_g1, good.b_inp_popcount,
             good.b_aux_popcount - 1);
    MUTATE("L size != aux size", (b.as[1].aux_assignment_size--, b.as[1].a_aux_bit_len--,
                                   b.as[1].b_aux_bit_len--), l_msg);
    MUTATE("A size != inputs + popcount", b.as[1].a_aux_popcount++, a_msg);
    MUTATE("B size != popcounts", b.as[1].b_aux_popcount--, b_msg);
    MUTATE("a_aux_bit_len", b.as[1].a_aux_bit_len++, "a_aux_bit_len is|aux assignment");
    MUTATE("b_aux_bit_len", b.as[1].b_aux_bit_len--, "b_aux_bit_len is");
    MUTATE("b_inp_bit_len", b.as[1].b_inp_bit_len++, "b_inp_bit_len is");
    MUTATE("inputs != IC", (b.as[1].inp_assignment_size++, b.as[1].b_inp_bit_len++), "IC has");
    MUTATE("abc_size > domain", b.as[1].abc_size = (size_t)params->n_h + 2, "abc_size is");
    MUTATE("abc_size 0", b.as[1].abc_size = 0, "abc_size is 0");
    MUTATE("NULL a", b.as[1].a = NULL, "NULL");
    MUTATE("NULL aux", b.as[1].aux_assignment_data = NULL, "NULL");
    /* a density whose bits are not its popcount (both popcounts kept consistent with B) */
    uint64_t *bad_b = xmalloc(8 * ((good.b_aux_bit_len + 63) / 64));
    memcpy(bad_b, good.b_aux_density, 8 * ((good.b_aux_bit_len + 63) / 64));
    for (size_t i = 0; i < good.b_aux_bit_len; i++)
        if (!(bad_b[i / 64] >> (i % 64) & 1)) {
            bad_b[i / 64] |= 1ULL << (i % 64);
            break;
        }
    MUTATE("density bits != popcount", b.as[1].b_aux_density = bad_b, "b_aux_density has");
    free(bad_b);
    /* the first input is not one */
    cuzk_fr *inp = xmalloc(sizeof(cuzk_fr) * good.inp_assignment_size);
    memcpy(inp, good.inp_assignment_data, sizeof(cuzk_fr) * good.inp_assignment_size);
    cuzk_fr_set_zero(&inp[0]);
    MUTATE("first input not one", b.as[1].inp_assignment_data = (const fr_t *)inp, "not 1");
    free(inp);
    b.as[1] = good;
#ifdef CUZK_SUPRASEAL_CURIO
    expect_err(generate_groth16_proofs_c(b.as, b.n, b.r, b.s, b.proofs, &srs, NULL, 99),
               "gpu_index out of range", "gpu_index 99");
    expect_err(generate_groth16_proofs_start_c(b.as, b.n, b.r, b.s, &srs, NULL, -1, NULL),
               "NULL pending_out", "pending_out");
    void *pend = (void *)1;
    expect_err(generate_groth16_proofs_start_c(b.as, b.n, b.r, b.s, &none, NULL, -1, &pend),
               "start without SRS", "SRS");
    CHECK(pend == NULL, "a failed start left a pending proof");
    expect_err(finalize_groth16_proof_c(NULL, b.proofs), "finalize NULL", "pending");
    destroy_pending_proof(NULL);
    if (rust_ok(generate_groth16_proofs_start_c(b.as, b.n, b.r, b.s, &srs, NULL, -1, &pend),
                "start"))
        expect_err(finalize_groth16_proof_c(pend, NULL), "finalize NULL proofs", "proofs");
    destroy_gpu_mutex(NULL);
#endif
    expect_err(call_generate(&(batch){.as = NULL, .n = 2, .r = b.r, .s = b.s, .proofs = b.proofs},
                             &srs), "NULL provers", "NULL");
    expect_err(call_generate(&(batch){.as = b.as, .n = 2, .r = b.r, .s = b.s, .proofs = NULL},
                             &srs), "NULL proofs", "proofs");
    /* options */
    expect_err(cuzk_supraseal_set_option("backend", "tpu"), "bad backend", "backend|tpu");
    expect_err(cuzk_supraseal_set_option("colour", "red"), "unknown option", "colour");
    expect_err(cuzk_supraseal_set_option("threads", "-3"), "bad threads", "threads");
    expect_err(cuzk_supraseal_set_option(NULL, "x"), "NULL option", "option");
    /* the GPU backend forced where no device answers */
    if (cuzk_groth16_backend(NULL) != CUZK_BACKEND_GPU) {
        CHECK(rust_ok(cuzk_supraseal_set_option("backend", "gpu"), "set backend gpu"), "set gpu");
        expect_err(call_generate(&b, &srs), "GPU forced, no device", "GPU");
        CHECK(rust_ok(cuzk_supraseal_set_option("backend", "cpu"), "set backend cpu"), "set cpu");
    }
    /* after all that the same handle still proves */
    CHECK(rust_ok(call_generate(&b, &srs), "generate after the errors"), "generate after errors");
    batch_check(&b, "after the errors");
    batch_free(&b);
    drop_SRS(&srs);
    return failures != 0;
}

#ifdef CUZK_SUPRASEAL_CURIO
/* ---- Curio: two workers share one GPU mutex, their finalizers run on other threads ---- */
typedef struct {
    void *mtx;
    SRS *srs;
    int gpu_index;
    batch b;
    void *pending;
    RustError r, fr;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    w->r = generate_groth16_proofs_start_c(w->b.as, w->b.n, w->b.r, w->b.s, w->srs, w->mtx,
                                           w->gpu_index, &w->pending);
    return NULL;
}

static void *finalizer_main(void *arg)
{
    worker *w = arg;
    w->fr = finalize_groth16_proof_c(w->pending, w->b.proofs);
    return NULL;
}

static int do_split(void)
{
    SRS srs = {NULL};
    if (!rust_ok(create_SRS(&srs, params_path, true), "create_SRS"))
        return 1;
    void *mtx = create_gpu_mutex();
    CHECK(mtx != NULL, "create_gpu_mutex");
    int gi = cuzk_groth16_backend(NULL) == CUZK_BACKEND_GPU ? 0 : -1;
    for (int round = 0; round < 2; round++) {
        enum { W = 2 };
        worker w[W];
        pthread_t th[W], fin[W];
        for (int i = 0; i < W; i++) {
            w[i] = (worker){.mtx = mtx, .srs = &srs, .gpu_index = round ? gi : -1};
            batch_make(&w[i].b, (size_t)(1 + i));
            if (pthread_create(&th[i], NULL, worker_main, &w[i]))
                exit(2);
        }
        for (int i = 0; i < W; i++)
            pthread_join(th[i], NULL);
        /* the inputs may go once start returns: scrambled before the finalizers run */
        fr_t *r_keep[W], *s_keep[W];
        for (int i = 0; i < W; i++) {
            size_t bytes = w[i].b.n * sizeof(fr_t);
            r_keep[i] = xmalloc(bytes);
            s_keep[i] = xmalloc(bytes);
            memcpy(r_keep[i], w[i].b.r, bytes);
            memcpy(s_keep[i], w[i].b.s, bytes);
            memset(w[i].b.r, 0xff, bytes);
            memset(w[i].b.s, 0xff, bytes);
            memset(w[i].b.as, 0xff, w[i].b.n * sizeof *w[i].b.as);
        }
        for (int i = 0; i < W; i++) {
            CHECK(rust_ok(w[i].r, "start"), "start failed");
            if (!w[i].r.code && pthread_create(&fin[i], NULL, finalizer_main, &w[i]))
                exit(2);
        }
        for (int i = 0; i < W; i++) {
            if (w[i].r.code == 0) {
                pthread_join(fin[i], NULL);
                CHECK(rust_ok(w[i].fr, "finalize"), "finalize failed");
                memcpy(w[i].b.r, r_keep[i], w[i].b.n * sizeof(fr_t));
                memcpy(w[i].b.s, s_keep[i], w[i].b.n * sizeof(fr_t));
                char what[64];
                snprintf(what, sizeof what, "split round %d worker %d", round, i);
                batch_check(&w[i].b, what);
            }
            free(r_keep[i]), free(s_keep[i]);
            batch_free(&w[i].b);
        }
        printf("split round %d: starts and finalizes done\n", round);
    }
    /* a pending proof destroyed instead of finalized */
    batch b;
    batch_make(&b, 1);
    void *pend = NULL;
    if (rust_ok(generate_groth16_proofs_start_c(b.as, b.n, b.r, b.s, &srs, mtx, -1, &pend),
                "start to destroy"))
        destroy_pending_proof(pend);
    batch_free(&b);
    /* every handle gone between start and finalize: the pending proof holds the key */
    batch_make(&b, 2);
    SRS tmp = clone_SRS(&srs);
    pend = NULL;
    RustError r = generate_groth16_proofs_start_c(b.as, b.n, b.r, b.s, &tmp, mtx, -1, &pend);
    drop_SRS(&tmp);
    evict_SRS(&srs);
    drop_SRS(&srs);
    if (rust_ok(r, "start, then the handles dropped")) {
        worker fw = {.pending = pend, .b = b};
        pthread_t th;
        if (pthread_create(&th, NULL, finalizer_main, &fw))
            exit(2);
        pthread_join(th, NULL);
        CHECK(rust_ok(fw.fr, "finalize after the handles went"), "finalize after drop");
        batch_check(&b, "finalized after every handle was dropped");
    } else
        CHECK(0, "start failed");
    batch_free(&b);
    destroy_gpu_mutex(mtx);
    return failures != 0;
}
#endif

int main(int argc, char **argv)
{
    const char *backend = "cpu";
    int runs = 0, i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = argv[++i];
        else if (!strcmp(argv[i], "--native") && i + 1 < argc) {
            const char *v = argv[++i];
            native_off = !strcmp(v, "off");
            native_be = !strcmp(v, "gpu") ? CUZK_BACKEND_GPU : CUZK_BACKEND_CPU;
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            rng = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--vk") && i + 1 < argc)
            vk_json = argv[++i];
        else if (!strcmp(argv[i], "--trusted"))
            trusted = true;
        else
            break;
    }
    if (argc - i == 1 && !strcmp(argv[i], "gpu-available")) { /* 0 yes, 77 no (CTest's skip) */
        bool yes = cuzk_groth16_backend(NULL) == CUZK_BACKEND_GPU;
        printf("gpu: %s\n", yes ? "a device answers" : cuzk_error_detail()[0] ? cuzk_error_detail()
                                                                        : "none (no CUDA build or device)");
        return yes ? 0 : 77;
    }
    if (argc - i < 4) {
        fprintf(stderr, "usage: harness [--backend auto|cpu|gpu] [--native cpu|gpu|off] "
                        "[--runs N] [--seed S] [--trusted] [--vk VK.json]\n"
                        "  prove R1CS PARAMS BATCH W.wtns... | errors|refs|split R1CS PARAMS W.wtns\n");
        return 2;
    }
    const char *mode = argv[i];
    r1cs_path = argv[i + 1];
    params_path = argv[i + 2];
    if (!rust_ok(cuzk_supraseal_set_option("backend", backend), "backend") ||
        (trusted && !rust_ok(cuzk_supraseal_set_option("params", "trusted"), "params")))
        return 2;
    if (vk_json && (!native_off || strcmp(argv[i], "prove"))) {
        fprintf(stderr, "--vk needs --native off and the prove mode\n");
        return 2;
    }
    int rc;
    if (!strcmp(mode, "prove")) {
        size_t n = (size_t)atol(argv[i + 3]);
        if (argc - i < 5 || n == 0)
            return 2;
        fixture_load(argv + i + 4, (size_t)(argc - i - 4));
        rc = do_prove(n, runs);
    } else {
        fixture_load(argv + i + 3, 1);
        if (!strcmp(mode, "errors"))
            rc = do_errors();
        else if (!strcmp(mode, "refs"))
            rc = do_refs();
#ifdef CUZK_SUPRASEAL_CURIO
        else if (!strcmp(mode, "split"))
            rc = do_split();
#endif
        else {
            fprintf(stderr, "unknown mode %s\n", mode);
            return 2;
        }
    }
    printf("%s: %s (%d failures)\n", mode, rc ? "FAILED" : "ok", failures);
    return rc ? 1 : 0;
}
