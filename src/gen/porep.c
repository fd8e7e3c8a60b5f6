/* SPDX-License-Identifier: Apache-2.0 */
/* The synthetic porep-k workload (see porep.h). */
#include <stdlib.h>
#include <string.h>

#include "gen/porep.h"
#include "cuzk/msm.h"
#include "util/parallel.h"

struct cuzk_porep {
    cuzk_pk_view v;
    cuzk_g1_affine vk_g1[3];   /* alpha1, beta1, delta1 */
    cuzk_g2_affine vk_g2[2];   /* beta2, delta2 */
    cuzk_g1_affine *a, *b1, *l, *h;
    cuzk_g2_affine *b2;
    uint64_t *a_density, *b_density;
    cuzk_csr m[3];
    cuzk_fr *wit;              /* partitions * n_vars */
    const cuzk_fr **wits;
    size_t partitions, a_count, b_count;
};

/* Deterministic per-index randomness: splitmix64 of (seed, stream, index). */
static uint64_t mix(uint64_t seed, uint64_t stream, uint64_t i)
{
    uint64_t z = seed ^ (stream * 0xd1342543de82ef95ULL) ^ (i * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    return z ^ (z >> 29);
}

static void rand_fr(cuzk_fr *r, uint64_t seed, uint64_t stream, uint64_t i)
{
    uint8_t b[32];
    for (int k = 0; k < 4; k++) {
        uint64_t v = mix(seed, stream, 4 * i + (uint64_t)k);
        memcpy(b + 8 * k, &v, 8);
    }
    cuzk_fr_from_bytes_le_reduce(r, b);
}

void cuzk_porep_free(cuzk_porep *w)
{
    if (!w)
        return;
    free(w->a);
    free(w->b1);
    free(w->l);
    free(w->h);
    free(w->b2);
    free(w->a_density);
    free(w->b_density);
    for (int k = 0; k < 3; k++) {
        free(w->m[k].row);
        free(w->m[k].col);
        free(w->m[k].val);
    }
    free(w->wit);
    free(w->wits);
    free(w);
}

/* ---- random distinct points: P_i = B[i mod 4096] + C[i / 4096] ---- */
#define PT_SPLIT 4096

typedef struct {
    uint64_t seed, stream;
    const cuzk_g1_affine *b1, *c1;
    const cuzk_g2_affine *b2, *c2;
    cuzk_g1_affine *out1;
    cuzk_g2_affine *out2;
} pts_ctx;

/* Written once for G1 and G2: random multiples of the generator (bases), the points
 * P_i = C[i / PT_SPLIT] + B[i mod PT_SPLIT] in chunks of `chunk`, and the driver. */
#define POREP_POINTS_(G, AFF, JAC, O, CHUNK_PTS)                                                \
    static void G##_bases(void *p, size_t begin, size_t end, unsigned worker)                   \
    {                                                                                           \
        (void)worker;                                                                           \
        pts_ctx *c = p;                                                                         \
        AFF g;                                                                                  \
        JAC gj, t;                                                                              \
        cuzk_##G##_generator(&g);                                                               \
        cuzk_##G##_jac_from_affine(&gj, &g);                                                    \
        for (size_t i = begin; i < end; i++) {                                                  \
            uint64_t k[4] = {mix(c->seed, c->stream, 4 * i), mix(c->seed, c->stream, 4 * i + 1), \
                             mix(c->seed, c->stream, 4 * i + 2),                                \
                             mix(c->seed, c->stream, 4 * i + 3) >> 2};                          \
            cuzk_##G##_mul_var(&t, &gj, k, 254);                                                \
            cuzk_##G##_jac_to_affine(&c->out##O[i], &t);                                        \
        }                                                                                       \
    }                                                                                           \
    static void G##_points(void *p, size_t begin, size_t end, unsigned worker)                  \
    {                                                                                           \
        (void)worker;                                                                           \
        pts_ctx *c = p;                                                                         \
        JAC tmp[CHUNK_PTS];                                                                     \
        for (size_t s = begin; s < end; s += CHUNK_PTS) {                                       \
            size_t e = s + CHUNK_PTS < end ? s + CHUNK_PTS : end;                               \
            for (size_t i = s; i < e; i++) {                                                    \
                cuzk_##G##_jac_from_affine(&tmp[i - s], &c->c##O[i / PT_SPLIT]);                \
                cuzk_##G##_jac_add_affine_var(&tmp[i - s], &tmp[i - s], &c->b##O[i % PT_SPLIT]); \
            }                                                                                   \
            cuzk_##G##_batch_to_affine(&c->out##O[s], tmp, e - s);                              \
        }                                                                                       \
    }                                                                                           \
    static cuzk_err make_##G(AFF **out, size_t n, uint64_t seed, uint64_t stream)               \
    {                                                                                           \
        size_t nc = n / PT_SPLIT + 1;                                                           \
        AFF *b = malloc(sizeof *b * PT_SPLIT), *c = malloc(sizeof *c * nc);                     \
        *out = malloc(sizeof **out * (n ? n : 1));                                              \
        if (!b || !c || !*out) {                                                                \
            free(b);                                                                            \
            free(c);                                                                            \
            free(*out);                                                                         \
            *out = NULL;                                                                        \
            return CUZK_ENOMEM;                                                                 \
        }                                                                                       \
        pts_ctx ctx = {.seed = seed, .stream = stream, .out##O = b};                            \
        cuzk_parallel_for(PT_SPLIT, 16, 0, G##_bases, &ctx);                                    \
        ctx.stream = stream + 1;                                                                \
        ctx.out##O = c;                                                                         \
        cuzk_parallel_for(nc, 16, 0, G##_bases, &ctx);                                          \
        ctx.b##O = b;                                                                           \
        ctx.c##O = c;                                                                           \
        ctx.out##O = *out;                                                                      \
        cuzk_parallel_for(n, CHUNK_PTS, 0, G##_points, &ctx);                                   \
        free(b);                                                                                \
        free(c);                                                                                \
        return CUZK_OK;                                                                         \
    }

#define CHUNK 1024
POREP_POINTS_(g1, cuzk_g1_affine, cuzk_g1_jac, 1, CHUNK)
POREP_POINTS_(g2, cuzk_g2_affine, cuzk_g2_jac, 2, CHUNK / 4)

/* ---- constraint rows and witnesses ---- */
typedef struct {
    cuzk_porep *w;
    uint64_t seed;
    size_t nv, npub;
} fill_ctx;

static void fill_rows(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    fill_ctx *c = p;
    for (size_t i = begin; i < end; i++) {
        for (int k = 0; k < 3; k++) {
            c->w->m[k].row[i] = i;
            c->w->m[k].col[i] = (uint32_t)(mix(c->seed, 10 + (uint64_t)k, i) % c->nv);
            rand_fr(&c->w->m[k].val[i], c->seed, 20 + (uint64_t)k, i);
        }
    }
}

static void fill_witness(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    fill_ctx *c = p;
    size_t nv = c->nv;
    for (size_t g = begin; g < end; g++) {
        size_t j = g / nv, i = g % nv;
        cuzk_fr *x = &c->w->wit[g];
        uint64_t stream = 100 + j;
        if (i == 0) {
            cuzk_fr_set_one(x);
        } else if (i <= c->npub) {
            rand_fr(x, c->seed, stream, i);
        } else {
            uint64_t u = mix(c->seed, stream + 1000, i) % 100;
            if (u < 45)
                cuzk_fr_set_zero(x);
            else if (u < 90)
                cuzk_fr_set_one(x);
            else
                rand_fr(x, c->seed, stream, i);
        }
    }
}

cuzk_err cuzk_porep_new(cuzk_porep **out, unsigned log2_n, size_t partitions, uint64_t seed,
                        void (*progress)(const char *phase))
{
    return cuzk_porep_new_ex(out, log2_n, partitions, seed, progress, true);
}

cuzk_err cuzk_porep_new_ex(cuzk_porep **out, unsigned log2_n, size_t partitions, uint64_t seed,
                           void (*progress)(const char *phase), bool points)
{
    *out = NULL;
    if (log2_n < 4 || log2_n > 28 || partitions == 0)
        return cuzk_error_set(CUZK_EINVAL, "porep workload: k must be 4..28 and partitions >= 1");
    size_t n = (size_t)1 << log2_n;
    size_t m = log2_n >= 14 ? n - 4096 : n - n / 4;
    size_t npub = m / 8 < 327 ? m / 8 : 327; /* public inputs after the constant one */
    size_t nv = m;
    cuzk_porep *w = calloc(1, sizeof *w);
    if (!w)
        return CUZK_ENOMEM;
    w->partitions = partitions;
    size_t words = CUZK_MSM_BITVEC_WORDS(nv);
    w->a_density = calloc(words, 8);
    w->b_density = calloc(words, 8);
    for (int k = 0; k < 3; k++) {
        w->m[k].n_rows = m;
        w->m[k].row = malloc(sizeof(uint64_t) * (m + 1));
        w->m[k].col = malloc(sizeof(uint32_t) * m);
        w->m[k].val = malloc(sizeof(cuzk_fr) * m);
        if (!w->m[k].row || !w->m[k].col || !w->m[k].val)
            goto nomem;
        w->m[k].row[m] = m;
    }
    w->wit = malloc(sizeof(cuzk_fr) * nv * partitions);
    w->wits = malloc(sizeof(cuzk_fr *) * partitions);
    if (!w->a_density || !w->b_density || !w->wit || !w->wits)
        goto nomem;

    for (size_t i = 0; i < nv; i++) {
        bool in = i <= npub;
        if (in || mix(seed, 1, i) % 1000 < 997) {
            w->a_density[i / 64] |= 1ULL << (i % 64);
            w->a_count++;
        }
        if (in || mix(seed, 2, i) % 1000 < 254) {
            w->b_density[i / 64] |= 1ULL << (i % 64);
            w->b_count++;
        }
    }
    if (progress)
        progress("constraints and witnesses");
    fill_ctx fc = {w, seed, nv, npub};
    cuzk_parallel_for(m, 4096, 0, fill_rows, &fc);
    cuzk_parallel_for(nv * partitions, 4096, 0, fill_witness, &fc);
    for (size_t j = 0; j < partitions; j++)
        w->wits[j] = w->wit + j * nv;

    if (!points)
        goto view;
    if (progress)
        progress("G1 points");
    if (make_g1(&w->h, n - 1, seed, 1000) != CUZK_OK ||
        make_g1(&w->l, nv - npub - 1, seed, 1002) != CUZK_OK ||
        make_g1(&w->a, w->a_count, seed, 1004) != CUZK_OK ||
        make_g1(&w->b1, w->b_count, seed, 1006) != CUZK_OK)
        goto nomem;
    if (progress)
        progress("G2 points");
    if (make_g2(&w->b2, w->b_count, seed, 1008) != CUZK_OK)
        goto nomem;

    cuzk_g1_affine *vk1 = NULL;
    cuzk_g2_affine *vk2 = NULL;
    if (make_g1(&vk1, 3, seed, 1010) != CUZK_OK || make_g2(&vk2, 2, seed, 1012) != CUZK_OK) {
        free(vk1);
        free(vk2);
        goto nomem;
    }
    memcpy(w->vk_g1, vk1, sizeof w->vk_g1);
    memcpy(w->vk_g2, vk2, sizeof w->vk_g2);
    free(vk1);
    free(vk2);

view:;
    cuzk_pk_view *v = &w->v;
    v->conv = CUZK_CONV_BELLMAN;
    v->n_vars = (uint32_t)nv;
    v->n_public = (uint32_t)npub;
    v->log2_domain = log2_n;
    v->alpha1 = &w->vk_g1[0];
    v->beta1 = &w->vk_g1[1];
    v->delta1 = &w->vk_g1[2];
    v->beta2 = &w->vk_g2[0];
    v->delta2 = &w->vk_g2[1];
    v->a_pts = w->a;
    v->a_density = w->a_density;
    v->b1_pts = w->b1;
    v->b2_pts = w->b2;
    v->b_density = w->b_density;
    v->l_pts = w->l;
    v->h_pts = w->h;
    v->h_count = n - 1;
    v->ma = &w->m[0];
    v->mb = &w->m[1];
    v->mc = &w->m[2];
    v->n_rows = m;
    *out = w;
    return CUZK_OK;
nomem:
    cuzk_porep_free(w);
    return cuzk_error_set(CUZK_ENOMEM, "porep workload 2^%u x %zu: out of memory", log2_n, partitions);
}

const cuzk_pk_view *cuzk_porep_view(const cuzk_porep *w) { return &w->v; }
const cuzk_fr *const *cuzk_porep_witnesses(const cuzk_porep *w) { return w->wits; }
size_t cuzk_porep_witness_len(const cuzk_porep *w) { return w->v.n_vars; }
size_t cuzk_porep_a_count(const cuzk_porep *w) { return w->a_count; }
size_t cuzk_porep_b_count(const cuzk_porep *w) { return w->b_count; }
size_t cuzk_porep_key_bytes(const cuzk_porep *w)
{
    size_t n = (size_t)1 << w->v.log2_domain;
    return sizeof(cuzk_g1_affine) * (n - 1 + (w->v.n_vars - w->v.n_public - 1) + w->a_count + w->b_count) +
           sizeof(cuzk_g2_affine) * w->b_count;
}

cuzk_g1_affine *cuzk_bench_random_g1(size_t n, uint64_t seed)
{
    cuzk_g1_affine *out = NULL;
    return make_g1(&out, n, seed, 2000) == CUZK_OK ? out : NULL;
}

typedef struct {
    cuzk_fr *out;
    uint64_t seed;
} rand_fr_ctx;

static void rand_fr_range(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    rand_fr_ctx *c = p;
    for (size_t i = begin; i < end; i++)
        rand_fr(&c->out[i], c->seed, 3000, i);
}

void cuzk_bench_random_fr(cuzk_fr *out, size_t n, uint64_t seed)
{
    rand_fr_ctx c = {out, seed};
    cuzk_parallel_for(n, 4096, 0, rand_fr_range, &c);
}
