/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SupraSeal C2's C ABI (include/cuzk_supraseal.h) over cuzk's prover: the SRS handle, the
 * checks of the assignments, the batch as the prover takes it, the proofs in blst's layout.
 * Built twice: SupraSeal's flavour, and with CUZK_SUPRASEAL_CURIO Curio's (the split calls
 * and the 8-argument generate_groth16_proofs_c).
 *
 * A call becomes one prover batch per run of consecutive circuits with the same densities
 * (bellperson's circuits of one batch share them, so one batch): the key's view takes the
 * densities, a, b, c go to the prover as the caller's three vectors (no padded copy), and
 * each witness as its two parts: on the GPU its partition's host side is prepared from them
 * in place (cuzk_gpu_prep_splits_parts); on the CPU, or with B_G2 on a CPU thread, they are
 * joined into the pending proof's copies (wit_fill).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/msm.h"
#include "cuzk/params.h"
#include "cuzk_supraseal.h"
#include "groth16/gpu_prover.h"
#include "groth16/pk.h"
#include "supraseal/supraseal_internal.h"
#include "util/parallel.h"

#define ABI __attribute__((visibility("default")))

_Static_assert(sizeof(fr_t) == sizeof(cuzk_fr), "fr_t is cuzk_fr");
_Static_assert(sizeof(cuzk_abi_g1_affine) == sizeof(cuzk_g1_affine), "G1 affine layout");
_Static_assert(sizeof(cuzk_abi_g2_affine) == sizeof(cuzk_g2_affine), "G2 affine layout");
_Static_assert(sizeof(groth16_proof) == sizeof(cuzk_proof), "proof layout");
/* the crate's layouts (x86-64 and aarch64: 8-byte pointers and usize) */
_Static_assert(sizeof(groth16_proof) == 384 && offsetof(groth16_proof, b) == 96 &&
               offsetof(groth16_proof, c) == 288, "groth16_proof: G1 96, G2 192, G1 96 bytes");
_Static_assert(sizeof(SRS) == sizeof(void *), "SRS is one pointer");
_Static_assert(sizeof(RustError) == 16 && offsetof(RustError, message) == 8, "RustError");
_Static_assert(sizeof(Assignment) == 17 * 8 && offsetof(Assignment, b_inp_density) == 3 * 8 &&
               offsetof(Assignment, b_aux_density) == 6 * 8 && offsetof(Assignment, a) == 9 * 8 &&
               offsetof(Assignment, abc_size) == 12 * 8 &&
               offsetof(Assignment, inp_assignment_data) == 13 * 8 &&
               offsetof(Assignment, aux_assignment_size) == 16 * 8,
               "Assignment: 17 fields of 8 bytes in SupraSeal's order");

/* ---- errors ---- */
static RustError rust_ok(void) { return (RustError){0, NULL}; }

/* code e, message from malloc: "cuzk: " + the detail */
static RustError rust_err(cuzk_err e, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *m = NULL;
    if (asprintf(&m, "cuzk: %s", buf) < 0)
        m = NULL;
    return (RustError){e == CUZK_OK ? (int)CUZK_EINVAL : (int)e, m};
}

/* the code of e with cuzk_error_detail() as the message (prefixed with what) */
static RustError rust_from(cuzk_err e, const char *what)
{
    const char *d = cuzk_error_detail();
    return rust_err(e, "%s: %s", what, d && d[0] ? d : cuzk_strerror(e));
}

/* ---- configuration ---- */
static pthread_mutex_t cfg_mu = PTHREAD_MUTEX_INITIALIZER;
static cuzk_supraseal_cfg cfg;
static bool cfg_ready;
static char cfg_env_error[512]; /* a bad environment value, reported by create_SRS */

static cuzk_err cfg_set_locked(const char *name, const char *value)
{
    if (!name || !value)
        return cuzk_error_set(CUZK_EINVAL, "option: no name or no value");
    if (!strcmp(name, "backend")) {
        if (!strcmp(value, "auto"))
            cfg.backend = CUZK_BACKEND_AUTO;
        else if (!strcmp(value, "cpu"))
            cfg.backend = CUZK_BACKEND_CPU;
        else if (!strcmp(value, "gpu"))
            cfg.backend = CUZK_BACKEND_GPU;
        else
            return cuzk_error_set(CUZK_EINVAL, "option backend: '%s' is not auto, cpu or gpu",
                                  value);
        return CUZK_OK;
    }
    if (!strcmp(name, "threads")) {
        char *end;
        unsigned long n = strtoul(value, &end, 10);
        if (!value[0] || *end || n > 4096)
            return cuzk_error_set(CUZK_EINVAL, "option threads: '%s' is not a count 0..4096",
                                  value);
        cfg.threads = (unsigned)n;
        return CUZK_OK;
    }
    if (!strcmp(name, "params")) {
        if (!strcmp(value, "checked"))
            cfg.params_flags &= ~CUZK_PARAMS_TRUSTED;
        else if (!strcmp(value, "trusted"))
            cfg.params_flags |= CUZK_PARAMS_TRUSTED;
        else
            return cuzk_error_set(CUZK_EINVAL, "option params: '%s' is not checked or trusted",
                                  value);
        return CUZK_OK;
    }
    if (!strcmp(name, "params_cache")) {
        if (!strcmp(value, "off"))
            cfg.params_flags &= ~CUZK_PARAMS_CACHE;
        else if (!strcmp(value, "on"))
            cfg.params_flags |= CUZK_PARAMS_CACHE;
        else
            return cuzk_error_set(CUZK_EINVAL, "option params_cache: '%s' is not off or on",
                                  value);
        return CUZK_OK;
    }
    cuzk_err e = cuzk_gpu_opts_set(&cfg.gpu, name, value);
    if (e != CUZK_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        return cuzk_error_set(e, "option %s: not backend, threads, params, params_cache, or a "
                                 "GPU option (%s)", name, why);
    }
    return CUZK_OK;
}

/* The GPU options of a CUZK_GPU value: "name=value,name=value". */
static cuzk_err cfg_set_gpu_list(const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return cuzk_error_set(CUZK_ENOMEM, "CUZK_GPU: out of memory");
    cuzk_err e = CUZK_OK;
    for (char *it = strtok_r(copy, ",", &save); it && e == CUZK_OK; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '=');
        if (!eq) {
            e = cuzk_error_set(CUZK_EINVAL, "CUZK_GPU: '%s' is not name=value", it);
            break;
        }
        *eq = 0;
        e = cfg_set_locked(it, eq + 1);
    }
    free(copy);
    return e;
}

/* Once, at the first call: the defaults, then the environment (the only channel a host
 * that calls SupraSeal's ABI has; docs/filecoin.md lists the variables). */
static void cfg_init_locked(void)
{
    if (cfg_ready)
        return;
    cfg_ready = true;
    cfg.backend = CUZK_BACKEND_AUTO;
    cuzk_gpu_opts_default(&cfg.gpu);
    static const struct { const char *env, *name; } vars[] = {
        {"CUZK_BACKEND", "backend"}, {"CUZK_THREADS", "threads"},
        {"CUZK_PARAMS", "params"}, {"CUZK_PARAMS_CACHE", "params_cache"}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i].env);
        if (v && cfg_set_locked(vars[i].name, v) != CUZK_OK && !cfg_env_error[0])
            snprintf(cfg_env_error, sizeof cfg_env_error, "%s=%s: %s", vars[i].env, v,
                     cuzk_error_detail());
    }
    const char *g = getenv("CUZK_GPU");
    if (g && cfg_set_gpu_list(g) != CUZK_OK && !cfg_env_error[0])
        snprintf(cfg_env_error, sizeof cfg_env_error, "CUZK_GPU=%s: %s", g, cuzk_error_detail());
    if (cfg.threads)
        cuzk_parallel_set_threads(cfg.threads);
}

void cuzk_supraseal_cfg_get(cuzk_supraseal_cfg *out)
{
    pthread_mutex_lock(&cfg_mu);
    cfg_init_locked();
    *out = cfg;
    pthread_mutex_unlock(&cfg_mu);
}

ABI RustError cuzk_supraseal_set_option(const char *name, const char *value)
{
    pthread_mutex_lock(&cfg_mu);
    cfg_init_locked();
    cuzk_supraseal_cfg saved = cfg;
    cuzk_err e = cfg_set_locked(name, value);
    if (e != CUZK_OK)
        cfg = saved;
    else if (name && !strcmp(name, "threads"))
        cuzk_parallel_set_threads(cfg.threads);
    pthread_mutex_unlock(&cfg_mu);
    return e == CUZK_OK ? rust_ok() : rust_from(e, "cuzk_supraseal_set_option");
}

/* ---- the SRS ---- */
void cuzk_srs_ref(cuzk_srs *s) { atomic_fetch_add(&s->refs, 1); }

void cuzk_srs_unref(cuzk_srs *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (unsigned d = 0; d < s->n_gk; d++)
        cuzk_groth16_gpu_key_free(s->gk[d]);
    pthread_mutex_destroy(&s->mu);
    cuzk_params_free(s->p);
    free(s->path);
    free(s);
}

static cuzk_err srs_load(cuzk_srs **out, const char *path, const cuzk_supraseal_cfg *c)
{
    *out = NULL;
    cuzk_srs *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    }
    cuzk_err e = cuzk_params_load_gpu(&s->p, path, c->params_flags, &c->gpu);
    if (e == CUZK_OK) {
        uint64_t n = (uint64_t)s->p->n_h + 1;
        if ((n & (n - 1)) || n < 2)
            e = cuzk_error_set(CUZK_EFORMAT, "%s: vector h has %u points, not a power of two "
                                             "less one (the domain size - 1)", path, s->p->n_h);
        else if (s->p->n_ic < 1 || s->p->n_b_g1 != s->p->n_b_g2)
            e = cuzk_error_set(CUZK_EFORMAT, "%s: vectors b_g1 (%u) and b_g2 (%u) differ",
                               path, s->p->n_b_g1, s->p->n_b_g2);
        while (e == CUZK_OK && ((uint64_t)1 << s->log2_n) < n)
            s->log2_n++;
    }
    if (e != CUZK_OK) {
        cuzk_params_free(s->p);
        free(s->path);
        free(s);
        return e;
    }
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->mu, NULL);
    *out = s;
    return CUZK_OK;
}

/* The process cache: the last SRS_CACHE_MAX paths, most recent first, each holding one
 * reference. Loads happen under its lock (one at a time, as SupraSeal's). */
#define SRS_CACHE_MAX 4
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static cuzk_srs *cache_list[SRS_CACHE_MAX];
static unsigned cache_n;

static cuzk_err cache_lookup(cuzk_srs **out, const char *path, const cuzk_supraseal_cfg *c)
{
    pthread_mutex_lock(&cache_mu);
    for (unsigned i = 0; i < cache_n; i++) {
        if (strcmp(cache_list[i]->path, path))
            continue;
        cuzk_srs *s = cache_list[i];
        memmove(&cache_list[1], &cache_list[0], i * sizeof cache_list[0]);
        cache_list[0] = s;
        cuzk_srs_ref(s);
        *out = s;
        pthread_mutex_unlock(&cache_mu);
        return CUZK_OK;
    }
    cuzk_srs *s;
    cuzk_err e = srs_load(&s, path, c);
    if (e == CUZK_OK) {
        if (cache_n == SRS_CACHE_MAX)
            cuzk_srs_unref(cache_list[--cache_n]); /* the least recently used */
        memmove(&cache_list[1], &cache_list[0], cache_n * sizeof cache_list[0]);
        cache_list[0] = s;
        cache_n++;
        cuzk_srs_ref(s);
        *out = s;
    }
    pthread_mutex_unlock(&cache_mu);
    return e;
}

ABI RustError create_SRS(SRS *ret, const char *params_path, bool cache)
{
    if (!ret)
        return rust_err(CUZK_EINVAL, "create_SRS: no SRS to fill");
    ret->ptr = NULL;
    if (!params_path || !params_path[0])
        return rust_err(CUZK_EINVAL, "create_SRS: no .params path");
    cuzk_supraseal_cfg c;
    cuzk_supraseal_cfg_get(&c);
    if (cfg_env_error[0])
        return rust_err(CUZK_EINVAL, "the environment: %s", cfg_env_error);
    cuzk_srs *s;
    cuzk_err e = cache ? cache_lookup(&s, params_path, &c) : srs_load(&s, params_path, &c);
    if (e != CUZK_OK)
        return rust_from(e, "create_SRS");
    ret->ptr = s;
    return rust_ok();
}

ABI void evict_SRS(const SRS *srs)
{
    if (!srs || !srs->ptr)
        return;
    const cuzk_srs *s = srs->ptr;
    cuzk_srs *gone = NULL;
    pthread_mutex_lock(&cache_mu);
    for (unsigned i = 0; i < cache_n; i++)
        if (!strcmp(cache_list[i]->path, s->path)) {
            gone = cache_list[i];
            memmove(&cache_list[i], &cache_list[i + 1], (cache_n - i - 1) * sizeof cache_list[0]);
            cache_n--;
            break;
        }
    pthread_mutex_unlock(&cache_mu);
    cuzk_srs_unref(gone);
}

ABI void drop_SRS(SRS *srs)
{
    if (!srs || !srs->ptr)
        return;
    cuzk_srs_unref(srs->ptr);
    srs->ptr = NULL;
}

ABI SRS clone_SRS(const SRS *srs)
{
    if (!srs || !srs->ptr)
        return (SRS){NULL};
    cuzk_srs_ref(srs->ptr);
    return (SRS){srs->ptr};
}

/* ---- the batch ---- */
static size_t popcount_bits(const uint64_t *w, size_t bits)
{
    size_t n = 0;
    for (size_t i = 0; i < bits / 64; i++)
        n += (size_t)__builtin_popcountll(w[i]);
    if (bits % 64)
        n += (size_t)__builtin_popcountll(w[bits / 64] & ((1ULL << (bits % 64)) - 1));
    return n;
}

/* SupraSeal's assertions on circuit i, and what cuzk needs beyond them. */
static RustError check_assignment(const cuzk_srs *s, const Assignment *p, size_t i)
{
    const cuzk_params *k = s->p;
    const char *path = s->path;
    size_t inp = p->inp_assignment_size, aux = p->aux_assignment_size;
    size_t n = (size_t)1 << s->log2_n;
    if (!p->a || !p->b || !p->c || !p->inp_assignment_data ||
        (aux && (!p->aux_assignment_data || !p->a_aux_density || !p->b_aux_density)) ||
        (inp && !p->b_inp_density))
        return rust_err(CUZK_EINVAL, "circuit %zu: a NULL pointer among a, b, c, the "
                                     "assignments and the densities", i);
    if (k->n_l != aux)
        return rust_err(CUZK_ESIZE, "circuit %zu: L has %u points (%s), the aux assignment %zu "
                                    "values", i, k->n_l, path, aux);
    if (k->n_ic != inp)
        return rust_err(CUZK_ESIZE, "circuit %zu: IC has %u points (%s), the input assignment "
                                    "%zu values", i, k->n_ic, path, inp);
    if (p->a_aux_bit_len != aux)
        return rust_err(CUZK_ESIZE, "circuit %zu: a_aux_bit_len is %zu, the aux assignment "
                                    "%zu values", i, p->a_aux_bit_len, aux);
    if (p->b_aux_bit_len != aux)
        return rust_err(CUZK_ESIZE, "circuit %zu: b_aux_bit_len is %zu, the aux assignment "
                                    "%zu values", i, p->b_aux_bit_len, aux);
    if (p->b_inp_bit_len != inp)
        return rust_err(CUZK_ESIZE, "circuit %zu: b_inp_bit_len is %zu, the input assignment "
                                    "%zu values", i, p->b_inp_bit_len, inp);
    if ((uint64_t)k->n_a != (uint64_t)inp + p->a_aux_popcount)
        return rust_err(CUZK_ESIZE, "circuit %zu: A has %u points (%s), inputs + "
                                    "a_aux_popcount = %zu + %zu", i, k->n_a, path, inp,
                        p->a_aux_popcount);
    if ((uint64_t)k->n_b_g1 != (uint64_t)p->b_inp_popcount + p->b_aux_popcount)
        return rust_err(CUZK_ESIZE, "circuit %zu: B_G1 has %u points (%s), b_inp_popcount + "
                                    "b_aux_popcount = %zu + %zu", i, k->n_b_g1, path,
                        p->b_inp_popcount, p->b_aux_popcount);
    struct {
        const char *name;
        const uint64_t *w;
        size_t bits, claimed;
    } d[3] = {{"a_aux_density", p->a_aux_density, aux, p->a_aux_popcount},
              {"b_inp_density", p->b_inp_density, inp, p->b_inp_popcount},
              {"b_aux_density", p->b_aux_density, aux, p->b_aux_popcount}};
    for (int j = 0; j < 3; j++) {
        size_t have = popcount_bits(d[j].w, d[j].bits);
        if (have != d[j].claimed)
            return rust_err(CUZK_ESIZE, "circuit %zu: %s has %zu bits set, its popcount says "
                                        "%zu", i, d[j].name, have, d[j].claimed);
    }
    if (!inp || !cuzk_fr_is_one((const cuzk_fr *)&p->inp_assignment_data[0]))
        return rust_err(CUZK_EFORMAT, "circuit %zu: the first input is not 1 (bellperson's "
                                      "constant one)", i);
    if (p->abc_size > n || p->abc_size == 0)
        return rust_err(CUZK_ESIZE, "circuit %zu: abc_size is %zu, the domain (%s: h has %u "
                                    "points) holds 1 .. %zu", i, p->abc_size, path, k->n_h, n);
    return rust_ok();
}

static bool same_bits(const uint64_t *x, const uint64_t *y, size_t bits)
{
    if (x == y || bits == 0)
        return true;
    if (memcmp(x, y, (bits / 64) * 8))
        return false;
    uint64_t m = bits % 64 ? (1ULL << (bits % 64)) - 1 : 0;
    return !m || !((x[bits / 64] ^ y[bits / 64]) & m);
}

static bool same_density(const Assignment *x, const Assignment *y)
{
    return x->abc_size == y->abc_size &&
           same_bits(x->a_aux_density, y->a_aux_density, x->aux_assignment_size) &&
           same_bits(x->b_inp_density, y->b_inp_density, x->inp_assignment_size) &&
           same_bits(x->b_aux_density, y->b_aux_density, x->aux_assignment_size);
}

/* dst bits [off, off + bits) |= src bits [0, bits) (dst has a word to spare past them) */
static void bits_put(uint64_t *dst, size_t off, const uint64_t *src, size_t bits)
{
    size_t words = bits / 64, q = off / 64;
    unsigned sh = (unsigned)(off % 64);
    uint64_t last = bits % 64 ? src[words] & ((1ULL << (bits % 64)) - 1) : 0;
    for (size_t i = 0; i <= words; i++) {
        uint64_t w = i < words ? src[i] : last;
        dst[q + i] |= w << sh;
        if (sh && w >> (64 - sh))
            dst[q + i + 1] |= w >> (64 - sh);
    }
}

/* One prover batch: circuits [first, first + n) with their densities. */
typedef struct {
    size_t first, n;
    uint64_t *a_density, *b_density; /* n_vars bits; read by B_G2's thread after start */
    cuzk_pending *pending;
} abi_group;

struct cuzk_abi_pending {
    cuzk_srs *srs;      /* a reference, released with the pending proof */
    size_t n_circuits;
    size_t n_groups;
    abi_group *g;
};

void cuzk_abi_pending_free(cuzk_abi_pending *ap)
{
    if (!ap)
        return;
    for (size_t i = 0; i < ap->n_groups; i++) {
        cuzk_groth16_pending_free(ap->g[i].pending);
        free(ap->g[i].a_density);
        free(ap->g[i].b_density);
    }
    free(ap->g);
    cuzk_srs_unref(ap->srs);
    free(ap);
}

/* The key's view for the densities of circuit p. */
static cuzk_err group_view(cuzk_pk_view *v, abi_group *g, const cuzk_srs *s, const Assignment *p)
{
    const cuzk_params *k = s->p;
    size_t inp = p->inp_assignment_size, aux = p->aux_assignment_size, nv = inp + aux;
    size_t words = CUZK_MSM_BITVEC_WORDS(nv) + 1;
    g->a_density = calloc(words, sizeof(uint64_t));
    g->b_density = calloc(words, sizeof(uint64_t));
    if (!g->a_density || !g->b_density)
        return cuzk_error_set(CUZK_ENOMEM, "out of memory for the densities of %zu wires", nv);
    for (size_t i = 0; i < inp; i++) /* every input is in A (bellperson's input rows) */
        g->a_density[i / 64] |= 1ULL << (i % 64);
    bits_put(g->a_density, inp, p->a_aux_density, aux);
    bits_put(g->b_density, 0, p->b_inp_density, inp);
    bits_put(g->b_density, inp, p->b_aux_density, aux);
    memset(v, 0, sizeof *v);
    v->conv = CUZK_CONV_BELLMAN;
    v->n_vars = (uint32_t)nv;
    v->n_public = (uint32_t)(inp - 1);
    v->log2_domain = s->log2_n;
    v->alpha1 = &k->alpha1;
    v->beta1 = &k->beta1;
    v->delta1 = &k->delta1;
    v->beta2 = &k->beta2;
    v->delta2 = &k->delta2;
    v->a_pts = k->a;
    v->a_density = g->a_density;
    v->b1_pts = k->b_g1;
    v->b2_pts = k->b_g2;
    v->b_density = g->b_density;
    v->l_pts = k->l;
    v->h_pts = k->h;
    v->h_count = k->n_h;
    v->n_rows = p->abc_size; /* no rows: a, b, c are given */
    return CUZK_OK;
}

/* The SRS's resident keys, one per visible device, made at the first GPU proof (under s->mu;
 * device 0 failing fails, a later device failing leaves the others). */
static cuzk_err srs_gpu_keys(cuzk_srs *s, const cuzk_pk_view *v, const cuzk_supraseal_cfg *c)
{
    pthread_mutex_lock(&s->mu);
    cuzk_err e = CUZK_OK;
    if (!s->gk_made) {
        int nd = (int)cuzk_gpu_prover_devices();
        if (nd > CUZK_MAX_GPUS)
            nd = CUZK_MAX_GPUS;
        for (int d = 0; d < nd; d++) {
            cuzk_err ed = cuzk_gpu_key_from_view(&s->gk[s->n_gk], v, d, &c->gpu);
            if (ed == CUZK_OK)
                s->n_gk++;
            else if (d == 0) {
                e = ed;
                break;
            } else
                cuzk_error_clear();
        }
        if (e == CUZK_OK && s->n_gk == 0)
            e = cuzk_error_set(CUZK_EGPU, "no GPU device answers");
        s->gk_made = e == CUZK_OK;
    }
    pthread_mutex_unlock(&s->mu);
    return e;
}

/* The witnesses of a run of circuits as the prover reads them (cuzk_prove_extra.wit_fill). */
typedef struct {
    const Assignment *p;   /* the run's first circuit */
    unsigned threads;
} wit_src;

static void wit_fill(void *ctx, size_t j, cuzk_fr *dst)
{
    const wit_src *ws = ctx;
    const Assignment *p = &ws->p[j];
    memcpy(dst, p->inp_assignment_data, sizeof(cuzk_fr) * p->inp_assignment_size);
    cuzk_parallel_memcpy(dst + p->inp_assignment_size, p->aux_assignment_data,
                         sizeof(cuzk_fr) * p->aux_assignment_size, ws->threads);
}

RustError cuzk_abi_start(cuzk_abi_pending **out, const Assignment provers[], size_t num_circuits,
                         const fr_t r_s[], const fr_t s_s[], const SRS *srs, void *gpu_mtx,
                         int gpu_index)
{
    *out = NULL;
    if (!srs || !srs->ptr)
        return rust_err(CUZK_EINVAL, "no SRS (create_SRS failed or it was dropped)");
    if (num_circuits && (!provers || !r_s || !s_s))
        return rust_err(CUZK_EINVAL, "provers, r_s or s_s is NULL for %zu circuits", num_circuits);
    cuzk_srs *s = srs->ptr;
    for (size_t i = 0; i < num_circuits; i++) {
        RustError r = check_assignment(s, &provers[i], i);
        if (r.code)
            return r;
    }
    cuzk_supraseal_cfg c;
    cuzk_supraseal_cfg_get(&c);
    if (gpu_index < -1 || gpu_index >= CUZK_MAX_GPUS)
        return rust_err(CUZK_EINVAL, "gpu_index %d is not -1 or a device 0..%d", gpu_index,
                        CUZK_MAX_GPUS - 1);

    cuzk_abi_pending *ap = calloc(1, sizeof *ap);
    if (!ap)
        return rust_err(CUZK_ENOMEM, "out of memory");
    cuzk_srs_ref(s);
    ap->srs = s;
    ap->n_circuits = num_circuits;
    ap->g = calloc(num_circuits ? num_circuits : 1, sizeof *ap->g);
    if (!ap->g) {
        cuzk_abi_pending_free(ap);
        return rust_err(CUZK_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < num_circuits; i++) {
        if (i == 0 || !same_density(&provers[i], &provers[ap->g[ap->n_groups - 1].first]))
            ap->g[ap->n_groups++].first = i;
        ap->g[ap->n_groups - 1].n++;
    }

    cuzk_backend be = c.backend;
    if (be == CUZK_BACKEND_AUTO)
        be = cuzk_groth16_backend(NULL);
    else if (be == CUZK_BACKEND_GPU) {
        cuzk_error_clear();
        if (cuzk_groth16_backend(NULL) != CUZK_BACKEND_GPU) {
            const char *d = cuzk_error_detail();
            cuzk_abi_pending_free(ap);
            return rust_err(CUZK_EGPU, "the GPU backend is forced (backend=gpu) but no GPU "
                                       "device answers (%s)",
                            d[0] ? d : "this build has no CUDA backend, or no device");
        }
    }
    if (gpu_mtx)
        pthread_mutex_lock(gpu_mtx);
    RustError ret = rust_ok();
    size_t nv = s->p->n_ic + (size_t)s->p->n_l;
    for (size_t gi = 0; gi < ap->n_groups && !ret.code; gi++) {
        abi_group *g = &ap->g[gi];
        const Assignment *p0 = &provers[g->first];
        cuzk_pk_view v;
        cuzk_err e = group_view(&v, g, s, p0);
        if (e == CUZK_OK && be == CUZK_BACKEND_GPU) {
            e = srs_gpu_keys(s, &v, &c);
            if (e != CUZK_OK && c.backend == CUZK_BACKEND_AUTO) {
                cuzk_error_clear(); /* no key fits a device: the CPU proves */
                be = CUZK_BACKEND_CPU;
                e = CUZK_OK;
            }
        }
        if (e != CUZK_OK) {
            ret = rust_from(e, "prove");
            break;
        }
        if (be == CUZK_BACKEND_GPU && gpu_index >= (int)s->n_gk) {
            ret = rust_err(CUZK_EINVAL, "gpu_index %d: %u GPU devices serve this key", gpu_index,
                           s->n_gk);
            break;
        }
        const cuzk_fr **abc = calloc(5 * g->n, sizeof *abc);
        if (!abc) {
            ret = rust_err(CUZK_ENOMEM, "out of memory");
            break;
        }
        const cuzk_fr **inp = abc + 3 * g->n, **aux = inp + g->n;
        for (size_t j = 0; j < g->n; j++) {
            const Assignment *p = &provers[g->first + j];
            abc[3 * j] = (const cuzk_fr *)p->a;
            abc[3 * j + 1] = (const cuzk_fr *)p->b;
            abc[3 * j + 2] = (const cuzk_fr *)p->c;
            inp[j] = (const cuzk_fr *)p->inp_assignment_data;
            aux[j] = (const cuzk_fr *)p->aux_assignment_data;
        }
        cuzk_prove_opts o = {.nthreads = c.threads, .backend = be, .gpu = &c.gpu};
        if (be == CUZK_BACKEND_GPU && gpu_index >= 0)
            o.gpu_key = s->gk[gpu_index];
        else if (be == CUZK_BACKEND_GPU) {
            o.gpu_keys = s->gk;
            o.n_gpu_keys = s->n_gk;
        }
        /* each witness is its inputs then its aux values, written where the prover reads it */
        wit_src src = {&provers[g->first], c.threads};
        cuzk_prove_extra x = {.r = (const cuzk_fr *)&r_s[g->first],
                              .s = (const cuzk_fr *)&s_s[g->first],
                              .abc_split = abc, .abc_len = p0->abc_size,
                              .wit_fill = wit_fill, .wit_ctx = &src,
                              .wit_inp = inp, .wit_aux = aux};
        e = cuzk_groth16_prove_start_view_ex(&g->pending, &v, NULL, g->n, nv, &o, &x);
        free(abc);
        if (e != CUZK_OK)
            ret = rust_from(e, g->n == num_circuits ? "prove" : "prove (a run of circuits)");
    }
    if (gpu_mtx)
        pthread_mutex_unlock(gpu_mtx);
    if (ret.code) {
        cuzk_abi_pending_free(ap);
        return ret;
    }
    *out = ap;
    return ret;
}

RustError cuzk_abi_finish(cuzk_abi_pending *ap, groth16_proof proofs[])
{
    if (!ap)
        return rust_err(CUZK_EINVAL, "no pending proof");
    if (ap->n_circuits && !proofs)
        return rust_err(CUZK_EINVAL, "proofs is NULL for %zu circuits", ap->n_circuits);
    RustError ret = rust_ok();
    for (size_t gi = 0; gi < ap->n_groups && !ret.code; gi++) {
        abi_group *g = &ap->g[gi];
        cuzk_proof *pr = malloc(sizeof *pr * g->n);
        if (!pr) {
            ret = rust_err(CUZK_ENOMEM, "out of memory");
            break;
        }
        cuzk_err e = cuzk_groth16_prove_finish(pr, NULL, g->pending);
        if (e == CUZK_OK)
            memcpy(&proofs[g->first], pr, sizeof *pr * g->n); /* the same layout (above) */
        else
            ret = rust_from(e, "finalize");
        free(pr);
    }
    return ret;
}

#ifndef CUZK_SUPRASEAL_CURIO
ABI RustError generate_groth16_proofs_c(const Assignment provers[], size_t num_circuits,
                                        const fr_t r_s[], const fr_t s_s[], groth16_proof proofs[],
                                        const SRS *srs)
{
    if (num_circuits && !proofs)
        return rust_err(CUZK_EINVAL, "proofs is NULL for %zu circuits", num_circuits);
    cuzk_abi_pending *ap;
    RustError r = cuzk_abi_start(&ap, provers, num_circuits, r_s, s_s, srs, NULL, -1);
    if (r.code)
        return r;
    r = cuzk_abi_finish(ap, proofs);
    cuzk_abi_pending_free(ap);
    return r;
}
#endif
