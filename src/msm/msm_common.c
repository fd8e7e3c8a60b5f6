/* SPDX-License-Identifier: Apache-2.0 */
/* MSM pieces shared by G1 and G2: planning, scalar conversion, classification, bit
 * vectors and gathers. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "msm/msm_internal.h"
#include "util/parallel.h"

#define MSM_BUCKET_BUDGET ((size_t)1 << 30)  /* bytes of buckets over all workers, at most */
#define MSM_COST_ADD 1.0    /* mixed (bucket += affine base) addition, the unit */
#define MSM_COST_XADD 1.25  /* XYZZ + XYZZ addition relative to a mixed one */
#define MSM_COST_DBL 0.8    /* XYZZ doubling relative to a mixed addition */
#define MSM_CACHE_BYTES ((size_t)1 << 20) /* buckets beyond this miss the private caches */
#define MSM_COST_MISS 0.1  /* extra cost per mixed addition once buckets leave the cache */
#define MSM_FAR_BYTES ((size_t)16 << 20) /* buckets beyond this miss the shared cache too */
#define MSM_COST_FAR 0.3    /* further extra cost per mixed addition then */
#define MSM_COST_BA 0.62    /* batch-affine addition without its share of the inversion */

unsigned msm_threads(unsigned nthreads)
{
    return nthreads ? nthreads : cuzk_parallel_threads();
}

static size_t plan_batch(unsigned c, double inv_cost)
{
    if (inv_cost <= 0 || c < MSM_BA_MIN_WINDOW)
        return 0;
    size_t b = ((size_t)1 << (c - 1)) / MSM_BA_SPREAD;
    return b < MSM_BA_BATCH_MAX ? b : MSM_BA_BATCH_MAX;
}

static double plan_cost(size_t n, unsigned T, unsigned bits, unsigned c, size_t chunks,
                        size_t hot_bytes, size_t batch, double inv_cost, double ba_cost)
{
    unsigned nwin = (bits + c - 1) / c;
    double nb = (double)((size_t)1 << (c - 1));
    size_t chunk_len = (n + chunks - 1) / chunks;
    size_t ntasks = (size_t)nwin * chunks;
    size_t rounds = (ntasks + T - 1) / T;
    double add = batch ? ba_cost + inv_cost / (double)batch : MSM_COST_ADD;
    if (nb * (double)hot_bytes > (double)MSM_CACHE_BYTES)
        add += MSM_COST_MISS;
    if (nb * (double)hot_bytes > (double)MSM_FAR_BYTES)
        add += MSM_COST_FAR;
    /* A task: one mixed addition per point (digit 0 is rare) but for the first point of
     * each bucket, which is copied (about nb (1 - e^-fill) of them), then per bucket the
     * running sum's addition of it (a mixed one for an affine bucket; none for an empty
     * bucket) and the XYZZ addition of the running sum into the total. */
    double fill = (double)chunk_len / nb;
    double used = nb * (1.0 - exp(-fill));
    double reduce = nb * MSM_COST_XADD + used * (batch ? MSM_COST_ADD : MSM_COST_XADD);
    double task = ((double)chunk_len - used) * add + reduce;
    double combine = (double)ntasks * MSM_COST_XADD + (double)bits * MSM_COST_DBL;
    return (double)rounds * task + combine;
}

void msm_plan_make(msm_plan *p, size_t n, unsigned bits, unsigned nthreads, unsigned window,
                   size_t xyzz_bytes, size_t aff_bytes, double inv_cost, double ba_cost)
{
    if (ba_cost <= 0)
        ba_cost = MSM_COST_BA;
    size_t bucket_bytes = xyzz_bytes + aff_bytes + 1; /* all of a worker's bucket memory */
    memset(p, 0, sizeof(*p));
    if (n == 0)
        return;
    unsigned T = msm_threads(nthreads);
    unsigned cmin = window ? window : 1, cmax = window ? window : MSM_AUTO_WINDOW_MAX;
    size_t max_chunks = (size_t)T * 4;
    if (max_chunks > n)
        max_chunks = n;
    double best = 0;
    for (unsigned c = cmin; c <= cmax; c++) {
        unsigned nwin = (bits + c - 1) / c;
        size_t nb = (size_t)1 << (c - 1);
        /* batch-affine or XYZZ buckets, whichever costs less; a window given by the caller
         * takes batch-affine ones wherever they are allowed */
        size_t ba = plan_batch(c, inv_cost);
        for (int with_ba = ba ? 1 : 0; with_ba >= (window && ba ? 1 : 0); with_ba--) {
            size_t batch = with_ba ? ba : 0;
            for (size_t chunks = 1; chunks <= max_chunks; chunks++) {
                size_t ntasks = (size_t)nwin * chunks;
                size_t workers = ntasks < T ? ntasks : T;
                if (!window && c > 1 && workers * nb * bucket_bytes > MSM_BUCKET_BUDGET)
                    continue;
                /* the buckets most accesses touch: affine ones with batches, else XYZZ */
                size_t hot = batch ? aff_bytes : xyzz_bytes;
                double cost = plan_cost(n, T, bits, c, chunks, hot, batch, inv_cost, ba_cost);
                if (p->c == 0 || cost < best) {
                    best = cost;
                    p->c = c;
                    p->chunks = chunks;
                    p->batch = batch;
                }
            }
        }
    }
    p->nwin = (bits + p->c - 1) / p->c;
    p->nbuckets = (size_t)1 << (p->c - 1);
    p->chunk_len = (n + p->chunks - 1) / p->chunks;
    p->chunks = (n + p->chunk_len - 1) / p->chunk_len; /* drop empty ranges */
    p->ntasks = (size_t)p->nwin * p->chunks;
    p->nworkers = p->ntasks < T ? (unsigned)p->ntasks : T;
}

/* ---- Montgomery to canonical ---- */

typedef struct {
    cuzk_msm_scalar *out;
    const cuzk_fr *in;
} conv_ctx;

static void conv_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    conv_ctx *c = vctx;
    for (size_t i = b; i < e; i++)
        cuzk_fr_to_limbs(c->out[i].l, &c->in[i]);
}

void cuzk_msm_scalars_from_fr(cuzk_msm_scalar *out, const cuzk_fr *in, size_t n,
                              unsigned nthreads)
{
    conv_ctx c = {out, in};
    cuzk_parallel_for(n, 4096, msm_threads(nthreads), conv_range, &c);
}

/* ---- endomorphism split (msm_internal.h) ---- */

#define MSM_ENDO_X 0xd201000000010000ULL /* |x|, the curve parameter; u = x^2 */

typedef struct {
    cuzk_msm_scalar *out;
    const cuzk_msm_scalar *in;
    unsigned parts;
} endo_ctx;

static void endo_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    const endo_ctx *c = vctx;
    const unsigned nd = c->parts == 2 ? 2 : 3; /* base-|x| digits taken off */
    for (size_t i = b; i < e; i++) {
        uint64_t q[4], d[3];
        memcpy(q, c->in[i].l, sizeof q);
        /* q = q div |x|, the remainder the next digit */
        for (unsigned t = 0; t < nd; t++) {
            unsigned __int128 rem = 0;
            for (int l = 3; l >= 0; l--) {
                unsigned __int128 cur = (rem << 64) | q[l];
                q[l] = (uint64_t)(cur / MSM_ENDO_X);
                rem = cur % MSM_ENDO_X;
            }
            d[t] = (uint64_t)rem;
        }
        uint64_t *o = c->out[i].l;
        if (c->parts == 2) {
            unsigned __int128 s1 = (unsigned __int128)d[1] * MSM_ENDO_X + d[0]; /* < u */
            o[0] = (uint64_t)s1;
            o[1] = (uint64_t)(s1 >> 64);
            o[2] = q[0]; /* s div u < 2^255 / u < 2^128 */
            o[3] = q[1];
        } else {
            o[0] = d[0];
            o[1] = d[1];
            o[2] = d[2];
            o[3] = q[0]; /* s div |x|^3 < 2^64 */
        }
    }
}

void msm_endo_split(cuzk_msm_scalar *out, const cuzk_msm_scalar *in, size_t n, unsigned parts,
                    unsigned nthreads)
{
    endo_ctx c = {out, in, parts};
    cuzk_parallel_for(n, 1024, msm_threads(nthreads), endo_range, &c);
}

/* ---- oversized canonical scalars ---- */

typedef struct {
    const cuzk_msm_scalar *s;
    atomic_size_t first;
} over_ctx;

static void over_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    over_ctx *c = vctx;
    for (size_t i = b; i < e; i++) {
        if (c->s[i].l[3] >> 63) {
            size_t cur = atomic_load(&c->first);
            while (i < cur && !atomic_compare_exchange_weak(&c->first, &cur, i)) {
            }
            return;
        }
    }
}

size_t msm_find_oversized(const cuzk_msm_scalar *s, size_t n, unsigned nthreads)
{
    over_ctx c = {.s = s};
    atomic_init(&c.first, n);
    cuzk_parallel_for(n, 16384, msm_threads(nthreads), over_range, &c);
    return atomic_load(&c.first);
}

/* ---- classification ---- */

typedef struct {
    uint64_t *one, *sig;
    const void *scalars;
    cuzk_fr *copy;      /* NULL, or where the scalars are copied as they are read */
    bool mont;
    cuzk_fr one_mont;   /* 1 in Montgomery form, R mod r */
    size_t n;
    atomic_size_t n_one, n_sig;
} class_ctx;

/* Copies n values with non-temporal stores where there are (SSE2): the destination is not
 * read back soon (it goes to the device), and streaming stores skip reading each of its
 * lines first, which per-word memcpy calls would pay (measured: slower than a separate
 * memcpy pass without them). */
#if defined(__SSE2__)
#include <emmintrin.h>
static inline void copy_stream(cuzk_fr *dst, const cuzk_fr *src, size_t n)
{
    if (((uintptr_t)dst & 15) != 0) {
        memcpy(dst, src, sizeof(cuzk_fr) * n);
        return;
    }
    __m128i *d = (__m128i *)(void *)dst;
    const __m128i *s = (const __m128i *)(const void *)src;
    for (size_t i = 0; i < 2 * n; i++)
        _mm_stream_si128(d + i, _mm_loadu_si128(s + i));
}
static inline void copy_stream_done(void) { _mm_sfence(); }
#else
static inline void copy_stream(cuzk_fr *dst, const cuzk_fr *src, size_t n)
{
    memcpy(dst, src, sizeof(cuzk_fr) * n);
}
static inline void copy_stream_done(void) {}
#endif

static void class_range(void *vctx, size_t wb, size_t we, unsigned worker)
{
    (void)worker;
    class_ctx *c = vctx;
    size_t n_one = 0, n_sig = 0;
    const uint64_t *one = c->mont ? c->one_mont.l : (const uint64_t[4]){1, 0, 0, 0};
    for (size_t w = wb; w < we; w++) {
        uint64_t mo = 0, ms = 0;
        size_t base = w * 64, end = base + 64 < c->n ? base + 64 : c->n;
        for (size_t i = base; i < end; i++) {
            const uint64_t *s = c->mont ? ((const cuzk_fr *)c->scalars)[i].l
                                        : ((const cuzk_msm_scalar *)c->scalars)[i].l;
            uint64_t bit = 1ULL << (i - base);
            bool zero = (s[0] | s[1] | s[2] | s[3]) == 0;
            bool is_one = s[0] == one[0] && s[1] == one[1] && s[2] == one[2] && s[3] == one[3];
            if (is_one)
                mo |= bit;
            else if (!zero)
                ms |= bit;
        }
        if (c->copy) /* the word's scalars are in the cache now */
            copy_stream(&c->copy[base], &((const cuzk_fr *)c->scalars)[base], end - base);
        if (c->one)
            c->one[w] = mo;
        if (c->sig)
            c->sig[w] = ms;
        n_one += (size_t)__builtin_popcountll(mo);
        n_sig += (size_t)__builtin_popcountll(ms);
    }
    if (c->copy)
        copy_stream_done(); /* the streaming stores are visible before the join */
    atomic_fetch_add(&c->n_one, n_one);
    atomic_fetch_add(&c->n_sig, n_sig);
}

static void classify(uint64_t *one_bits, uint64_t *sig_bits, cuzk_msm_counts *counts,
                     const void *scalars, bool mont, size_t n, unsigned nthreads, cuzk_fr *copy)
{
    class_ctx c = {.one = one_bits, .sig = sig_bits, .scalars = scalars, .copy = copy,
                   .mont = mont, .n = n};
    cuzk_fr_set_one(&c.one_mont);
    atomic_init(&c.n_one, 0);
    atomic_init(&c.n_sig, 0);
    cuzk_parallel_for(CUZK_MSM_BITVEC_WORDS(n), 64, msm_threads(nthreads), class_range, &c);
    if (counts) {
        counts->n = n;
        counts->n_one = atomic_load(&c.n_one);
        counts->n_sig = atomic_load(&c.n_sig);
        counts->n_zero = n - counts->n_one - counts->n_sig;
    }
}

void cuzk_msm_classify_fr(uint64_t *one_bits, uint64_t *sig_bits, cuzk_msm_counts *counts,
                          const cuzk_fr *scalars, size_t n, unsigned nthreads)
{
    classify(one_bits, sig_bits, counts, scalars, true, n, nthreads, NULL);
}

void cuzk_msm_classify_fr_copy(uint64_t *one_bits, uint64_t *sig_bits, cuzk_msm_counts *counts,
                               const cuzk_fr *scalars, size_t n, unsigned nthreads, cuzk_fr *copy)
{
    classify(one_bits, sig_bits, counts, scalars, true, n, nthreads, copy);
}

void cuzk_msm_classify(uint64_t *one_bits, uint64_t *sig_bits, cuzk_msm_counts *counts,
                       const cuzk_msm_scalar *scalars, size_t n, unsigned nthreads)
{
    classify(one_bits, sig_bits, counts, scalars, false, n, nthreads, NULL);
}

bool cuzk_msm_should_split(const cuzk_msm_counts *counts)
{
    return counts->n_sig <= counts->n / 2;
}

/* ---- bit vectors ---- */

/* Mask of the valid bits of word w of an n-bit vector. */
static inline uint64_t word_mask(size_t w, size_t n)
{
    size_t rem = n - w * 64;
    return rem >= 64 ? ~0ULL : ((1ULL << rem) - 1);
}

size_t cuzk_msm_bitvec_count(const uint64_t *bits, size_t n)
{
    size_t words = CUZK_MSM_BITVEC_WORDS(n), cnt = 0;
    for (size_t w = 0; w < words; w++)
        cnt += (size_t)__builtin_popcountll(bits[w] & word_mask(w, n));
    return cnt;
}

void cuzk_msm_bitvec_or(uint64_t *r, const uint64_t *a, size_t n)
{
    size_t words = CUZK_MSM_BITVEC_WORDS(n);
    for (size_t w = 0; w < words; w++)
        r[w] |= a[w];
}

void cuzk_msm_bitvec_andnot(uint64_t *r, const uint64_t *a, size_t n)
{
    size_t words = CUZK_MSM_BITVEC_WORDS(n);
    for (size_t w = 0; w < words; w++)
        r[w] &= ~a[w];
}

size_t cuzk_msm_bitvec_and(uint64_t *r, const uint64_t *a, const uint64_t *b, size_t n)
{
    size_t words = CUZK_MSM_BITVEC_WORDS(n), cnt = 0;
    for (size_t w = 0; w < words; w++) {
        r[w] = a[w] & b[w] & word_mask(w, n);
        cnt += (size_t)__builtin_popcountll(r[w]);
    }
    return cnt;
}

void cuzk_msm_bitvec_extract(uint64_t *out, const uint64_t *src, size_t off, size_t n)
{
    size_t words = CUZK_MSM_BITVEC_WORDS(n), q = off / 64;
    unsigned sh = (unsigned)(off % 64);
    size_t src_words = CUZK_MSM_BITVEC_WORDS(off + n);
    for (size_t w = 0; w < words; w++) {
        uint64_t v = src[q + w] >> sh;
        if (sh && q + w + 1 < src_words)
            v |= src[q + w + 1] << (64 - sh);
        out[w] = v & word_mask(w, n);
    }
}

/* ---- passes over the set bits of a vector, in chunks ----
 * fn(ctx, wb, we, pos) handles words [wb, we), pos[k] being the bits of selection k (of the
 * first n) before word wb: a chunk knows where each of its outputs starts, so chunks run in
 * parallel after a first pass that counts each chunk's bits. A selection is the set bits
 * that a mask also has (NULL: all) at positions from lo on. */
#define BITS_SEL_MAX 4

typedef struct {
    const uint64_t *mask;
    size_t lo;
} bits_sel;

static const bits_sel SEL_ALL = {NULL, 0};

/* Word w of the selection s of bits (the first n). */
static inline uint64_t sel_word(const uint64_t *bits, const bits_sel *s, size_t w, size_t n)
{
    uint64_t m = bits[w] & word_mask(w, n);
    if (s->mask)
        m &= s->mask[w];
    if (s->lo > w * 64)
        m = s->lo - w * 64 >= 64 ? 0 : m & (~0ULL << (s->lo - w * 64));
    return m;
}

typedef void (*bits_chunk_fn)(void *ctx, size_t wb, size_t we, const size_t *pos);

typedef struct {
    const uint64_t *bits;
    size_t n, words, chunk_words;
    const bits_sel *sel;
    unsigned nsel;
    size_t *offsets;   /* per chunk and selection: set-bit count, then the bits before it */
    bits_chunk_fn fn;
    void *ctx;
} chunks_ctx;

static void chunk_bounds(const chunks_ctx *c, size_t j, size_t *wb, size_t *we)
{
    *wb = j * c->chunk_words;
    *we = *wb + c->chunk_words < c->words ? *wb + c->chunk_words : c->words;
}

static void sel_count(const chunks_ctx *c, size_t wb, size_t we, size_t *cnt)
{
    for (unsigned k = 0; k < c->nsel; k++) {
        size_t t = 0;
        for (size_t w = wb; w < we; w++)
            t += (size_t)__builtin_popcountll(sel_word(c->bits, &c->sel[k], w, c->n));
        cnt[k] = t;
    }
}

static void chunks_count(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    chunks_ctx *c = vctx;
    for (size_t j = b; j < e; j++) {
        size_t wb, we;
        chunk_bounds(c, j, &wb, &we);
        sel_count(c, wb, we, &c->offsets[j * c->nsel]);
    }
}

static void chunks_run(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    chunks_ctx *c = vctx;
    for (size_t j = b; j < e; j++) {
        size_t wb, we;
        chunk_bounds(c, j, &wb, &we);
        c->fn(c->ctx, wb, we, &c->offsets[j * c->nsel]);
    }
}

/* Runs fn over the nsel selections of bits; writes each selection's set-bit count. */
static void bits_by_chunk_sel(const uint64_t *bits, size_t n, unsigned T, const bits_sel *sel,
                              unsigned nsel, bits_chunk_fn fn, void *ctx, size_t *totals)
{
    chunks_ctx c = {.bits = bits, .n = n, .words = CUZK_MSM_BITVEC_WORDS(n), .sel = sel,
                    .nsel = nsel, .fn = fn, .ctx = ctx};
    size_t nchunks = (size_t)T * 8;
    if (nchunks > c.words / 16) /* at least 1024 positions per chunk */
        nchunks = c.words / 16;
    if (T == 1 || nchunks <= 1 || !(c.offsets = malloc(nchunks * nsel * sizeof(size_t)))) {
        static const size_t zeros[BITS_SEL_MAX];
        fn(ctx, 0, c.words, zeros);
        sel_count(&c, 0, c.words, totals);
        return;
    }
    c.chunk_words = (c.words + nchunks - 1) / nchunks;
    nchunks = (c.words + c.chunk_words - 1) / c.chunk_words;
    cuzk_parallel_for(nchunks, 1, T, chunks_count, &c);
    for (unsigned k = 0; k < nsel; k++) {
        size_t total = 0;
        for (size_t j = 0; j < nchunks; j++) {
            size_t cnt = c.offsets[j * nsel + k];
            c.offsets[j * nsel + k] = total;
            total += cnt;
        }
        totals[k] = total;
    }
    cuzk_parallel_for(nchunks, 1, T, chunks_run, &c);
    free(c.offsets);
}

/* The single-selection case: all set bits. Returns their count. */
static size_t bits_by_chunk(const uint64_t *bits, size_t n, unsigned T, bits_chunk_fn fn,
                            void *ctx)
{
    size_t total;
    bits_by_chunk_sel(bits, n, T, &SEL_ALL, 1, fn, ctx, &total);
    return total;
}

/* Compression: the chunks share output words at their edges, which take an atomic OR. Per
 * input word, the source bits under the mask are packed with PEXT where the CPU has BMI2
 * (a few cycles a word instead of one step per mask bit), else bit by bit. */
typedef struct {
    uint64_t *out;
    const uint64_t *src, *mask;
    size_t n;
} compress_ctx;

static inline uint64_t pext_portable(uint64_t s, uint64_t m)
{
    uint64_t v = 0;
    for (unsigned k = 0; m; k++) {
        v |= ((s >> __builtin_ctzll(m)) & 1) << k;
        m &= m - 1;
    }
    return v;
}

#define COMPRESS_WORDS_BODY(PEXT)                                                              \
    do {                                                                                       \
        size_t pos = pos0[0], accw = pos / 64;                                                 \
        uint64_t acc = 0; /* the output word being filled, flushed when pos leaves it */       \
        for (size_t w = wb; w < we; w++) {                                                     \
            uint64_t m = c->mask[w] & word_mask(w, c->n);                                      \
            if (!m)                                                                            \
                continue;                                                                      \
            unsigned k = (unsigned)__builtin_popcountll(m), sh = (unsigned)(pos % 64);         \
            uint64_t v = PEXT(c->src[w], m);                                                   \
            if (pos / 64 != accw) {                                                            \
                if (acc)                                                                       \
                    __atomic_fetch_or(&c->out[accw], acc, __ATOMIC_RELAXED);                   \
                acc = 0;                                                                       \
                accw = pos / 64;                                                               \
            }                                                                                  \
            acc |= v << sh;                                                                    \
            if (sh + k >= 64) { /* the word is full: the rest of v starts the next */          \
                if (acc)                                                                       \
                    __atomic_fetch_or(&c->out[accw], acc, __ATOMIC_RELAXED);                   \
                accw++;                                                                        \
                acc = sh ? v >> (64 - sh) : 0;                                                 \
            }                                                                                  \
            pos += k;                                                                          \
        }                                                                                      \
        if (acc)                                                                               \
            __atomic_fetch_or(&c->out[accw], acc, __ATOMIC_RELAXED);                           \
    } while (0)

static void compress_words(void *vctx, size_t wb, size_t we, const size_t *pos0)
{
    const compress_ctx *c = vctx;
    COMPRESS_WORDS_BODY(pext_portable);
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("bmi2"))) static void compress_words_bmi2(void *vctx, size_t wb,
                                                                size_t we, const size_t *pos0)
{
    const compress_ctx *c = vctx;
    COMPRESS_WORDS_BODY(_pext_u64);
}
static int msm_pext_available(void) { return __builtin_cpu_supports("bmi2"); }
#else
#define compress_words_bmi2 compress_words
static int msm_pext_available(void) { return 0; }
#endif

static int msm_pext_enabled_ = -1; /* -1: not chosen yet */

bool msm_bitvec_set_pext(bool on)
{
    if (on && !msm_pext_available())
        return false;
    __atomic_store_n(&msm_pext_enabled_, on ? 1 : 0, __ATOMIC_RELAXED);
    return true;
}

static bool msm_pext_enabled(void)
{
    int v = __atomic_load_n(&msm_pext_enabled_, __ATOMIC_RELAXED);
    if (v < 0) {
        v = msm_pext_available();
        __atomic_store_n(&msm_pext_enabled_, v, __ATOMIC_RELAXED);
    }
    return v != 0;
}

size_t cuzk_msm_bitvec_compress(uint64_t *out, const uint64_t *src, const uint64_t *mask,
                                size_t n, unsigned nthreads)
{
    size_t words = CUZK_MSM_BITVEC_WORDS(n);
    if (!mask) {
        for (size_t w = 0; w < words; w++)
            out[w] = src[w] & word_mask(w, n);
        return n;
    }
    compress_ctx c = {.out = out, .src = src, .mask = mask, .n = n};
    memset(out, 0, 8 * CUZK_MSM_BITVEC_WORDS(cuzk_msm_bitvec_count(mask, n)));
    return bits_by_chunk(mask, n, msm_threads(nthreads),
                         msm_pext_enabled() ? compress_words_bmi2 : compress_words, &c);
}

/* ---- gather ---- */

/* Words ahead whose selected elements are prefetched: the selected elements of a sparse
 * vector (a tenth of a PoRep witness) defeat the hardware's stream prefetch, so each would
 * wait for memory; four words (up to 256 elements) ahead hides that latency. */
#define GATHER_AHEAD 4

static inline void gather_prefetch(const uint8_t *in, size_t elem, size_t w, uint64_t m)
{
    while (m) {
        const uint8_t *p = in + (w * 64 + (size_t)__builtin_ctzll(m)) * elem;
        __builtin_prefetch(p);
        if (elem > 64)
            __builtin_prefetch(p + elem - 1);
        m &= m - 1;
    }
}

typedef struct {
    uint8_t *out;
    const uint8_t *in;
    size_t elem;
    msm_gather_kind kind;
    size_t n;
    const uint64_t *bits;
} gather_ctx;

static void gather_words(void *vctx, size_t wb, size_t we, const size_t *pos0)
{
    const gather_ctx *c = vctx;
    size_t pos = pos0[0];
    for (size_t w = wb; w < we; w++) {
        if (w + GATHER_AHEAD < we)
            gather_prefetch(c->in, c->elem, w + GATHER_AHEAD,
                            c->bits[w + GATHER_AHEAD] & word_mask(w + GATHER_AHEAD, c->n));
        uint64_t m = c->bits[w] & word_mask(w, c->n);
        while (m) {
            size_t i = w * 64 + (size_t)__builtin_ctzll(m);
            m &= m - 1;
            if (c->kind == MSM_GATHER_FR_TO_CANON)
                cuzk_fr_to_limbs(((cuzk_msm_scalar *)(void *)c->out)[pos].l,
                                 &((const cuzk_fr *)(const void *)c->in)[i]);
            else
                memcpy(c->out + pos * c->elem, c->in + i * c->elem, c->elem);
            pos++;
        }
    }
}

size_t msm_gather(void *out, const void *in, size_t elem, msm_gather_kind kind, size_t n,
                  const uint64_t *bits, unsigned nthreads)
{
    gather_ctx c = {.out = out, .in = in, .elem = elem, .kind = kind, .n = n, .bits = bits};
    return bits_by_chunk(bits, n, msm_threads(nthreads), gather_words, &c);
}

size_t cuzk_msm_gather_scalars(cuzk_msm_scalar *out, const cuzk_msm_scalar *in, size_t n,
                               const uint64_t *bits, unsigned nthreads)
{
    return msm_gather(out, in, sizeof(*in), MSM_GATHER_COPY, n, bits, nthreads);
}

size_t cuzk_msm_gather_fr(cuzk_msm_scalar *out, const cuzk_fr *in, size_t n,
                          const uint64_t *bits, unsigned nthreads)
{
    return msm_gather(out, in, sizeof(*in), MSM_GATHER_FR_TO_CANON, n, bits, nthreads);
}

/* Several selections of one vector in one pass: each selected value is read and converted
 * once, however many outputs take it. */
typedef struct {
    const cuzk_fr *in;
    const uint64_t *bits;
    size_t n;
    const bits_sel *sel;
    cuzk_msm_gather_out *outs;
    unsigned nsel;
} gather_multi_ctx;

static void gather_multi_words(void *vctx, size_t wb, size_t we, const size_t *pos0)
{
    const gather_multi_ctx *c = vctx;
    size_t pos[BITS_SEL_MAX];
    memcpy(pos, pos0, sizeof(size_t) * c->nsel);
    for (size_t w = wb; w < we; w++) {
        uint64_t mk[BITS_SEL_MAX], any = 0;
        for (unsigned k = 0; k < c->nsel; k++)
            any |= mk[k] = sel_word(c->bits, &c->sel[k], w, c->n);
        if (w + GATHER_AHEAD < we) {
            uint64_t ahead = 0;
            for (unsigned k = 0; k < c->nsel; k++)
                ahead |= sel_word(c->bits, &c->sel[k], w + GATHER_AHEAD, c->n);
            gather_prefetch((const uint8_t *)c->in, sizeof(cuzk_fr), w + GATHER_AHEAD, ahead);
        }
        while (any) {
            unsigned b = (unsigned)__builtin_ctzll(any);
            uint64_t bit = 1ULL << b;
            any &= any - 1;
            cuzk_msm_scalar v;
            cuzk_fr_to_limbs(v.l, &c->in[w * 64 + b]);
            for (unsigned k = 0; k < c->nsel; k++)
                if (mk[k] & bit)
                    c->outs[k].out[pos[k]++] = v;
        }
    }
}

cuzk_err cuzk_msm_gather_fr_multi(cuzk_msm_gather_out *outs, unsigned k, const cuzk_fr *in,
                                  size_t n, const uint64_t *bits, unsigned nthreads)
{
    if (k == 0 || k > BITS_SEL_MAX)
        return cuzk_error_set(CUZK_EINVAL, "msm: a multiple gather takes 1 to %d outputs, not %u",
                              BITS_SEL_MAX, k);
    bits_sel sel[BITS_SEL_MAX];
    size_t cnt[BITS_SEL_MAX];
    for (unsigned i = 0; i < k; i++)
        sel[i] = (bits_sel){outs[i].mask, outs[i].lo};
    gather_multi_ctx c = {.in = in, .bits = bits, .n = n, .sel = sel, .outs = outs, .nsel = k};
    bits_by_chunk_sel(bits, n, msm_threads(nthreads), sel, k, gather_multi_words, &c, cnt);
    for (unsigned i = 0; i < k; i++)
        outs[i].count = cnt[i];
    return CUZK_OK;
}
