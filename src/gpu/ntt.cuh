/*
 * Internal to src/gpu/ntt.cu: the Fr NTT's passes, plan and twiddle tables, written as
 * __host__ __device__ pieces so that tests/unit/test_gpu_ntt_host.cu runs the very same
 * index, twiddle and butterfly code on the CPU (without a GPU) against the CPU library.
 *
 * Pass geometry: the k stages of the radix-2 network are split into passes of at most tmax
 * (NTT_TMAX on the device) stages, each done in shared memory by blocks of E = 2^elog
 * (NTT_ELOG) elements. A pass does t stages starting at global stage s0 on 2^(k-t)
 * independent sub-problems of 2^t elements; with S = 2^sb,
 * sb = k - s0 - t, element (q, m) of sub-problem q = hi S + lo sits at
 *   hi 2^(k-s0) + m S + lo,  m < 2^t,
 * and local stage r pairs m and m + 2^(t-1-r) (bit hb = t-1-r of m clear) with twiddle
 *   tau_r(lo, m') = omega_(N_r)^(m' S + lo),  m' = m mod 2^hb,  N_r = 2^(k-s0-r).
 * DIF (natural in, bit-reversed out): stages r = 0..t-1, (u, v) -> (u + v, (u - v) tau).
 * DIT (bit-reversed in, natural out): the mirror, passes in the reverse order and stages
 * r = t-1..0, (u, v) -> (u + v tau, u - v tau). DIT_w(y) = DFT_w(bitrev y), DIF_w(x) =
 * bitrev(DFT_w x), so DIF followed by DIT needs no permutation.
 * A block holds E = 2^elog elements: G = E / 2^t sub-problems of consecutive q, in shared
 * memory at j = m G + g (16-byte halves in two arrays, swizzled against bank conflicts).
 * A round does R stages in registers (2^R elements an item) with one trip through shared
 * memory and one barrier; R = 1 (ntt_chunk_size: one stage a round, radix 2, which keeps a
 * thread at 64 registers and 4 blocks of 256 threads on a multiprocessor).
 *
 * Twiddles, one multiplication per butterfly:
 *  - table passes (2^(k-s0) <= 2^tlog): one table W[j] = omega_(2^L)^j, j <= 2^(L-1),
 *    read through the cache: tau_r(x) = W[x 2^(L-(k-s0)+r)]. The inverse direction uses
 *    the same table: omega_N^-x = -omega_N^(N/2 - x), i.e. -W[2^(L-1) - idx]; the minus sign
 *    is taken by the butterfly (DIF: (u + v, (v - u) W'), DIT: (u - v W', u + v W')).
 *  - the first pass of a large transform (2^k > 2^tlog) reads its own table the same way:
 *    W0[j] = omega_n^j, j <= n/2 (L = k; 16 n bytes: 2 GiB at 2^27), filled on the device
 *    from three 1024-entry power tables (ntt_pow3, two products an entry). Each of its
 *    twiddles is read once from memory (32 n bytes a pass, half the pass's own traffic;
 *    the passes are bound by their products, not by memory). Forming them instead (A_r(lo)
 *    B_r(m'), about one product per distinct twiddle) made that pass 26 % slower than the
 *    next at 2^24 (1.76 against 1.42 ms, bench/RESULTS.md, session 12).
 *  - the last stage of the last DIF pass (first of the first DIT pass) has tau = 1: no
 *    multiplication.
 * Fused scalings: the last DIF pass can multiply its outputs by a constant, or for a coset
 * (the H step) by part of pre s^i (i = bitrev_k(p), p the position) from a table F, the
 * rest of s^i being taken by the twiddles of the passes after the first (ntt_cw_fill:
 * one product an element in all; see ntt_pf_size). The last DIT pass can end the H step:
 * out[p] = out[p] hb[p] - X[p] (a b - c, with X the values of c).
 *
 * Natural order out (public NTT, bellman H's end): the last DIF pass (sb = 0) stores X in
 * natural order (brv): block blk takes the sub-problems hi = bitrev_(k-t)(blk G + g), each
 * 2^t consecutive elements, and element m of hi goes to bitrev_t(m) 2^(k-t) + blk G + g (runs
 * of G consecutive positions). Its output then overlaps other blocks' inputs: with more
 * than one pass, the passes before it go to a second buffer (ntt_run_dif's tmp).
 * Without one (no memory for it), a bit reversal in place by tiles follows the DIF passes.
 * With q = min(4, floor(k/2)) and
 * i = (a, b, c) (q, k - 2q, q bits), bitrev(i) = (rev c, rev b, rev a): the block of middle
 * value b loads the 2^(2q) elements of b and of rev b (runs of 2^q consecutive elements) and
 * writes each tile, transposed, into the other's place.
 */
#ifndef CUZK_GPU_NTT_CUH
#define CUZK_GPU_NTT_CUH

#include <stdlib.h>
#include <string.h>

#include "cuzk/error.h"
#include "cuzk/ff.h"
#include "gpu/error.cuh"
#include "gpu/ff/bls12_381.cuh"
#include "gpu/mem.cuh"

#define NTT_ELOG 10          /* the device's blocks: 2^10 elements (fewer below 2^18) */
#define NTT_TMAX 10          /* the device's passes: at most 10 stages */
#define NTT_MAXPASS 8
#define NTT_TAB 1024        /* entries of each level of a power table (10 bits) */
#define NTT_TLOG 18         /* largest 2^(k-s0) of a pass read from W: W <= 4 MiB + 32 B */
#define NTT_THREADS 256
#define NTT_BRV_QMAX 4      /* bit-reversal tiles of 2^4 x 2^4 elements */
#define NTT_MINB 4          /* the launch bounds: 4 blocks a multiprocessor (64 registers) */

/* ---- small helpers ---- */
GPU_HD unsigned ntt_brev(unsigned x, unsigned bits) /* the low `bits` bits of x, reversed */
{
    if (bits == 0)
        return 0;
#ifdef __CUDA_ARCH__
    return __brev(x) >> (32 - bits);
#else
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    x = (x >> 16) | (x << 16);
    return x >> (32 - bits);
#endif
}

/* pre s^x from a three-level table (tab[j] = pre s^j, tab[1024 + j] = s^(1024 j),
 * tab[2048 + j] = s^(2^20 j)), x < 2^30: two multiplications. */
GPU_HD fr_t ntt_pow3(const fr_t *tab, size_t x)
{
    const fr_t f = f_mul<FrP>(hd_ld(tab + (x & (NTT_TAB - 1))),
                              hd_ld(tab + NTT_TAB + ((x >> 10) & (NTT_TAB - 1))));
    return f_mul<FrP>(f, hd_ld(tab + 2 * NTT_TAB + (x >> 20)));
}


/* ---- rounds: one stage of a pass each (chunk ci is stage r = ci). The round code
 * (ntt_phase_round) is written for chunks of R stages; one stage a round measured fastest on
 * the H200: the passes are bound by the latency of the products' carry chains, and a thread
 * of radix-2 rounds fits in 64 registers, so 4 blocks of 2^10 elements (32 warps) share a
 * multiprocessor, against 2 blocks of 2^11 (16 warps) for radix-4 rounds at 124 registers.
 * 2^24 forward: 4.97 ms against 5.30, 2^27: 43.4 against 46.0 (3 blocks of 2^11 at 72
 * registers: 5.11 and 44.1). ---- */
GPU_HD unsigned ntt_nchunks(unsigned t)
{
    return t;
}
GPU_HD unsigned ntt_chunk_size(unsigned t, unsigned ci)
{
    (void)t;
    (void)ci;
    return 1;
}
/* The first stage of chunk ci. */
GPU_HD unsigned ntt_chunk_r0(unsigned ci)
{
    return ci;
}

/* Threads of a block: one per 2 elements (one butterfly a stage), from 32 to NTT_THREADS
 * (launch bounds of NTT_MINB blocks a multiprocessor): 2^10-element blocks (from 2^18) have
 * 256 threads of 2 butterflies; the smaller blocks of 2^16-2^17 a thread a butterfly,
 * which measured 20 % faster at 2^16 than one a 2 (0.032 against 0.040 ms, H200). */
static inline unsigned ntt_threads(unsigned elog)
{
    const unsigned n = elog > 1 ? 1u << (elog - 1) : 1;
    return n < 32 ? 32 : n > NTT_THREADS ? NTT_THREADS : n;
}

/* The device's block size for 2^k: the whole transform in one block up to 2^NTT_TMAX; above,
 * 2^NTT_ELOG elements, fewer below 2^18 so that a pass still has 256 blocks or more
 * (elog <= k - 8) while the transform keeps its two passes (elog >= k / 2). */
static inline unsigned ntt_elog_for(unsigned k)
{
    if (k <= NTT_TMAX)
        return k;
    const unsigned e = k - 8 > (k + 1) / 2 ? k - 8 : (k + 1) / 2;
    return e < NTT_ELOG ? e : NTT_ELOG;
}

/* ---- plan and tables ---- */
struct ntt_plan {
    unsigned k, elog, npass;
    unsigned L;   /* W holds the powers of omega_(2^L) */
    bool w0;      /* pass 0 reads W0, the table of omega_n (2^k > 2^tlog) */
    unsigned s0[NTT_MAXPASS], t[NTT_MAXPASS];
};

/* The passes of 2^k: elog clamped to k, at most tmax stages a pass, the first passes one
 * stage longer when k is not a multiple; the first pass reads W0 when 2^k > 2^tlog.
 * The device plans with ntt_elog_for(k), NTT_TMAX and NTT_TLOG; the host test also with other
 * geometries (more passes and sub-problems at small k). False when the geometry is not
 * supported (too many passes; tables out of range). */
static inline bool ntt_plan_make(ntt_plan *p, unsigned k, unsigned elog, unsigned tmax,
                                 unsigned tlog)
{
    memset(p, 0, sizeof *p);
    if (k < 1 || k > 30 || tmax < 1)
        return false;
    if (elog > k)
        elog = k;
    if (tmax > elog)
        tmax = elog;
    p->k = k;
    p->elog = elog;
    p->npass = (k + tmax - 1) / tmax;
    if (p->npass > NTT_MAXPASS)
        return false;
    unsigned s0 = 0, tm = 0;
    for (unsigned i = 0; i < p->npass; i++) {
        const unsigned t = k / p->npass + (i < k % p->npass ? 1 : 0);
        p->s0[i] = s0;
        p->t[i] = t;
        s0 += t;
        if (t > tm)
            tm = t;
    }
    p->w0 = k > tlog;
    unsigned L = tm;
    for (unsigned i = p->w0 ? 1 : 0; i < p->npass; i++)
        if (k - p->s0[i] > L)
            L = k - p->s0[i];
    if (p->w0 && p->npass > 1 && k - p->s0[1] > tlog)
        return false; /* a second pass too large for W */
    p->L = L;
    return true;
}

/* The table layout of one domain (offsets in elements into one array). */
struct ntt_ctx {
    ntt_plan plan;
    const fr_t *tab;          /* the array (device or host memory) */
    size_t n_tab;
    size_t n_host;            /* the entries before W0 (all when there is none) */
    size_t off_w;             /* W: 2^(L-1) + 1 entries */
    size_t off_w3;            /* with W0: omega_n^j, ^(1024 j), ^(2^20 j), 3 x 1024 entries */
    size_t off_sc[2];         /* coset scalings: F (ntt_pf_size entries) */
    size_t off_cw[2][NTT_MAXPASS]; /* coset twiddles of passes 1.. (ntt_cw_size entries each) */
    size_t off_w0;            /* W0 (plan.w0): 2^(k-1) + 1 entries, last */
    bool has_sc[2];           /* 0: to the coset (1/n) s^i; 1: bellman back (zinv/n) g^-i */
    fr_t n_inv;               /* 1/n */
};

static inline void ntt_host_powers(cuzk_fr *out, const cuzk_fr *start, const cuzk_fr *base,
                                   size_t count)
{
    cuzk_fr acc = *start;
    for (size_t i = 0; i < count; i++) {
        out[i] = acc;
        cuzk_fr_mul(&acc, &acc, base);
    }
}

static inline void ntt_host_pow2k(cuzk_fr *r, const cuzk_fr *a, unsigned k) /* a^(2^k) */
{
    *r = *a;
    for (unsigned i = 0; i < k; i++)
        cuzk_fr_sqr(r, r);
}

/* Cosets (the H step): the transform of coefficients c_i s^i (DIT after the inverse DIF of
 * a slot: s = omega_2n or g, with pre = 1/n), or outputs X_i times pre s^i (the inverse DIF
 * that ends bellman's step: s = g^-1, pre = (g^n - 1)^-1 / n). With s^i the product of
 * s^(2^l) over the bits l of i, and level l of the network (global stage l) the one whose
 * butterflies feed bit l (DIT: v holds the coefficients with bit l set; DIF: (u - v) tau
 * goes to the outputs with bit l set), factor s^(2^l) can be taken by level l's twiddles
 * (tau' = s^(2^l) tau) for no product. The passes after the first do so from tables of
 * their own (ntt_cw_fill), all their levels but k - 1 (the last stage keeps tau = 1). The
 * bits of the first pass's levels and bit k - 1 are scaled in the last DIF pass's store by
 * F[rho] (ntt_pf_fill): rho = (i mod 2^t0) + 2^t0 bit_(k-1)(i), one product an element
 * (one pass: rho = i, F[i] = pre s^i). */
static inline size_t ntt_pf_size(const ntt_plan &p)
{
    return p.npass == 1 ? (size_t)1 << p.k : (size_t)2 << p.t[0];
}
/* Pass p's coset twiddles (p >= 1), level s0 + r from entry ntt_cw_off(K, r), K = k - s0
 * (levels r' < r hold 2^(K-r'-1) entries each); t levels in all. */
GPU_HD size_t ntt_cw_off(unsigned K, unsigned r)
{
    return ((size_t)1 << K) - ((size_t)1 << (K - r));
}
static inline size_t ntt_cw_size(const ntt_plan &p, unsigned pass)
{
    return ntt_cw_off(p.k - p.s0[pass], p.t[pass]);
}
GPU_HD unsigned ntt_pf_index(unsigned i, unsigned k, unsigned t0) /* t0 0: one pass */
{
    return t0 ? (i & ((1u << t0) - 1)) | ((i >> (k - 1)) << t0) : i;
}

static inline void ntt_pf_fill(cuzk_fr *tab, const ntt_plan &p, const cuzk_fr *pre,
                               const cuzk_fr *s)
{
    if (p.npass == 1) {
        ntt_host_powers(tab, pre, s, (size_t)1 << p.k);
        return;
    }
    const size_t h = (size_t)1 << p.t[0];
    ntt_host_powers(tab, pre, s, h);
    cuzk_fr top; /* s^(2^(k-1)) */
    ntt_host_pow2k(&top, s, p.k - 1);
    for (size_t j = 0; j < h; j++)
        cuzk_fr_mul(&tab[h + j], &tab[j], &top);
}

/* Pass `pass`'s coset twiddles from W (w: omega_(2^L)^j, j <= 2^(L-1)): forward
 * (DIT) s^(2^l) omega_N^x; inverse (DIF, the butterflies' sign convention: minus tau')
 * -s^(2^l) omega_N^-x = s^(2^l) omega_N^(N/2 - x); N = 2^(K-r), x < N/2. */
static inline void ntt_cw_fill(cuzk_fr *tab, const ntt_plan &p, unsigned pass, const cuzk_fr *w,
                               const cuzk_fr *s, bool inv)
{
    const unsigned K = p.k - p.s0[pass];
    cuzk_fr sl;
    ntt_host_pow2k(&sl, s, p.s0[pass]); /* s^(2^l), l = s0 */
    for (unsigned r = 0; r < p.t[pass]; r++) {
        const size_t half = (size_t)1 << (K - r - 1), off = ntt_cw_off(K, r);
        const unsigned sh = p.L - K + r;
        for (size_t x = 0; x < half; x++)
            cuzk_fr_mul(&tab[off + x], &sl, &w[(inv ? half - x : x) << sh]);
        cuzk_fr_sqr(&sl, &sl);
    }
}

/* Coset i's tables (0: to the coset, for the DIT; 1: back, for the inverse DIF) in the host
 * array tab of c's layout (W filled). */
static inline void ntt_coset_fill(cuzk_fr *tab, const ntt_ctx *c, int i, const cuzk_fr *pre,
                                  const cuzk_fr *s)
{
    ntt_pf_fill(tab + c->off_sc[i], c->plan, pre, s);
    for (unsigned q = 1; q < c->plan.npass; q++)
        ntt_cw_fill(tab + c->off_cw[i][q], c->plan, q, tab + c->off_w, s, i == 1);
}

/* Plans the domain and fills its tables in a new host array (*host, free() it). The coset
 * scalings: snarkjs (k < two-adicity): s = omega_2n; bellman: s = g (7), and back with
 * s = g^-1, pre = (g^n - 1)^-1 / n. W0 (plan.w0), the last c->n_tab - c->n_host entries:
 * with host_w0 in the host array too, filled there (the host test); else left out of it (the
 * device fills it from the three-level table at off_w3 with ntt_pow3, as the host does). */
static inline cuzk_err ntt_tables_make(ntt_ctx *c, cuzk_fr **host, unsigned k, cuzk_roots fam,
                                       unsigned elog, unsigned tmax, unsigned tlog, bool host_w0)
{
    memset(c, 0, sizeof *c);
    *host = NULL;
    if (!ntt_plan_make(&c->plan, k, elog, tmax, tlog))
        return cuzk_error_set(CUZK_EINVAL, "gpu ntt: no plan for 2^%u (elog %u, tmax %u)", k,
                              elog, tmax);
    const ntt_plan &p = c->plan;
    size_t n = 0;
    c->off_w = n;
    n += ((size_t)1 << (p.L - 1)) + 1;
    if (p.w0) {
        c->off_w3 = n;
        n += 3 * NTT_TAB;
    }
    c->has_sc[0] = fam == CUZK_ROOTS_BELLMAN || k < CUZK_FR_TWO_ADICITY;
    c->has_sc[1] = fam == CUZK_ROOTS_BELLMAN;
    for (int i = 0; i < 2; i++)
        if (c->has_sc[i]) {
            c->off_sc[i] = n;
            n += ntt_pf_size(p);
            for (unsigned q = 1; q < p.npass; q++) {
                c->off_cw[i][q] = n;
                n += ntt_cw_size(p, q);
            }
        }
    c->n_host = n;
    if (p.w0) {
        c->off_w0 = n;
        n += ((size_t)1 << (k - 1)) + 1;
    }
    c->n_tab = n;
    cuzk_fr *tab = (cuzk_fr *)calloc(host_w0 ? c->n_tab : c->n_host, sizeof(cuzk_fr));
    if (!tab)
        return cuzk_error_set(CUZK_ENOMEM, "gpu ntt: host twiddle tables");
    cuzk_fr one, w, nn, n_inv;
    cuzk_fr_set_one(&one);
    cuzk_err e = cuzk_fr_root_of_unity(&w, p.L, fam);
    if (e != CUZK_OK) {
        free(tab);
        return e;
    }
    ntt_host_powers(tab + c->off_w, &one, &w, ((size_t)1 << (p.L - 1)) + 1);
    if (p.w0) {
        cuzk_fr wn, b;
        e = cuzk_fr_root_of_unity(&wn, k, fam);
        if (e != CUZK_OK) {
            free(tab);
            return e;
        }
        cuzk_fr *t3 = tab + c->off_w3;
        ntt_host_powers(t3, &one, &wn, NTT_TAB);
        ntt_host_pow2k(&b, &wn, 10);
        ntt_host_powers(t3 + NTT_TAB, &one, &b, NTT_TAB);
        ntt_host_pow2k(&b, &wn, 20);
        ntt_host_powers(t3 + 2 * NTT_TAB, &one, &b, NTT_TAB);
        if (host_w0)
            for (size_t x = 0; x <= ((size_t)1 << (k - 1)); x++)
                ((fr_t *)tab)[c->off_w0 + x] = ntt_pow3((const fr_t *)t3, x);
    }
    cuzk_fr_set_u64(&nn, (uint64_t)1 << k);
    cuzk_fr_inv(&n_inv, &nn);
    memcpy(&c->n_inv, &n_inv, sizeof c->n_inv);
    if (fam == CUZK_ROOTS_SNARKJS && c->has_sc[0]) {
        cuzk_fr s;
        e = cuzk_fr_root_of_unity(&s, k + 1, fam); /* omega_2n */
        if (e != CUZK_OK) {
            free(tab);
            return e;
        }
        ntt_coset_fill(tab, c, 0, &n_inv, &s);
    }
    if (fam == CUZK_ROOTS_BELLMAN) {
        cuzk_fr g, ginv, zinv, pre;
        cuzk_fr_generator(&g, fam);
        cuzk_fr_inv(&ginv, &g);
        ntt_host_pow2k(&zinv, &g, k); /* Z(g omega^j) = g^n - 1 */
        cuzk_fr_sub(&zinv, &zinv, &one);
        cuzk_fr_inv(&zinv, &zinv);
        cuzk_fr_mul(&pre, &zinv, &n_inv);
        ntt_coset_fill(tab, c, 0, &n_inv, &g);
        ntt_coset_fill(tab, c, 1, &pre, &ginv);
    }
    *host = tab;
    return CUZK_OK;
}

/* ---- one pass: arguments and the per-block phases ---- */
enum { NTT_POST_NONE = 0, NTT_POST_CONST = 1, NTT_POST_COSET = 2 };

struct ntt_args {
    fr_t *x;            /* the data, loaded */
    fr_t *out;          /* where the results go: x, or with hfinal slot a */
    const fr_t *hb;     /* hfinal: out[p] = out[p] hb[p] - X[p] */
    const fr_t *w;      /* the pass's table: W, or W0 for pass 0 (L = k) with plan.w0 */
    const fr_t *sc;     /* post COSET: F (ntt_pf_index) */
    const fr_t *cw;     /* a coset's twiddles for this pass (pass >= 1), in place of w */
    fr_t cst;           /* post CONST: the factor */
    unsigned k, s0, t, elog, L;
    unsigned t0;        /* post COSET: the first pass's stages (0: one pass) */
    unsigned post;      /* NTT_POST_*: last DIF pass only (sb = 0) */
    unsigned hfinal;    /* last DIT pass only (s0 = 0) */
    unsigned brv;       /* last DIF pass only (sb = 0), out != x unless one pass: natural
                         * order out, out[bitrev_k(p)] = the result at p (ntt_addr_out) */
};

static inline ntt_args ntt_args_make(const ntt_ctx &c, unsigned pass, fr_t *x)
{
    const ntt_plan &p = c.plan;
    ntt_args a;
    memset(&a, 0, sizeof a);
    a.x = x;
    a.out = x;
    const bool w0 = pass == 0 && p.w0;
    a.w = c.tab + (w0 ? c.off_w0 : c.off_w);
    a.k = p.k;
    a.s0 = p.s0[pass];
    a.t = p.t[pass];
    a.elog = p.elog;
    a.L = w0 ? p.k : p.L;
    a.post = NTT_POST_NONE;
    a.cst = c.n_inv;
    a.t0 = p.npass > 1 ? p.t[0] : 0;
    return a;
}

/* Shared memory of a block: the E elements as two arrays of 16-byte halves (a warp's 16-byte
 * accesses to consecutive elements then hit distinct banks), index swizzled. */
struct ntt_sm {
    uint4 *d;
    unsigned E;
};

static inline size_t ntt_smem_bytes(const ntt_args &a)
{
    return ((size_t)1 << a.elog) * sizeof(fr_t);
}

GPU_HD ntt_sm ntt_sm_at(void *base, const ntt_args &a)
{
    const unsigned E = 1u << a.elog;
    ntt_sm s;
    s.E = E;
    s.d = (uint4 *)base;
    return s;
}

GPU_HD unsigned ntt_swz(unsigned j)
{
    return j ^ ((j >> 3) & 7);
}
GPU_HD fr_t ntt_sm_get(const ntt_sm &s, unsigned j)
{
    const unsigned p = ntt_swz(j);
    fr_t v;
#ifdef __CUDA_ARCH__
    uint4 *h = reinterpret_cast<uint4 *>(&v);
    h[0] = s.d[p];
    h[1] = s.d[s.E + p];
#else /* host: no type punning (strict aliasing) */
    memcpy(&v.v[0], &s.d[p], 16);
    memcpy(&v.v[4], &s.d[s.E + p], 16);
#endif
    return v;
}
GPU_HD void ntt_sm_put(const ntt_sm &s, unsigned j, const fr_t &v)
{
    const unsigned p = ntt_swz(j);
#ifdef __CUDA_ARCH__
    const uint4 *h = reinterpret_cast<const uint4 *>(&v);
    s.d[p] = h[0];
    s.d[s.E + p] = h[1];
#else
    memcpy(&s.d[p], &v.v[0], 16);
    memcpy(&s.d[s.E + p], &v.v[4], 16);
#endif
}

/* Element e (0..E-1, the order of the global accesses) of block blk: its (g, m) and global
 * position. Runs of G consecutive elements (S >= G), or one contiguous range (S < G). */
GPU_HD size_t ntt_addr(const ntt_args &a, size_t blk, unsigned e, unsigned *g_out,
                       unsigned *m_out)
{
    const unsigned t = a.t, gl = a.elog - t, sb = a.k - a.s0 - t;
    const size_t q0 = blk << gl;
    if (a.brv) { /* sb = 0: sub-problem g of the block is hi = bitrev_(k-t)(q0 + g) */
        *g_out = e >> t;
        *m_out = e & ((1u << t) - 1);
        return ((size_t)ntt_brev((unsigned)(q0 + (e >> t)), a.k - t) << t) + *m_out;
    }
    if (sb >= gl) {
        const unsigned g = e & ((1u << gl) - 1), m = e >> gl;
        const size_t q = q0 + g;
        const size_t hi = q >> sb, lo = q & (((size_t)1 << sb) - 1);
        *g_out = g;
        *m_out = m;
        return (hi << (a.k - a.s0)) + ((size_t)m << sb) + lo;
    }
    const unsigned lo = e & ((1u << sb) - 1);
    const unsigned m = (e >> sb) & ((1u << t) - 1);
    const unsigned hl = e >> (sb + t);
    *g_out = (hl << sb) | lo;
    *m_out = m;
    return (q0 << t) + e;
}

/* Where element e of block blk is stored: ntt_addr's place, or with brv (sb = 0) the natural
 * position bitrev_k(hi 2^t + m) = bitrev_t(m) 2^(k-t) + q0 + g of element (g, m), taken in
 * runs of G consecutive positions. */
GPU_HD size_t ntt_addr_out(const ntt_args &a, size_t blk, unsigned e, unsigned *g_out,
                           unsigned *m_out)
{
    if (!a.brv)
        return ntt_addr(a, blk, e, g_out, m_out);
    const unsigned gl = a.elog - a.t;
    const unsigned g = e & ((1u << gl) - 1), mr = e >> gl;
    *g_out = g;
    *m_out = ntt_brev(mr, a.t);
    return ((size_t)mr << (a.k - a.t)) + (blk << gl) + g;
}

/* Phase 1: the block's elements into shared memory. */
GPU_HD void ntt_phase_load(const ntt_args &a, const ntt_sm &s, size_t blk, unsigned tid,
                           unsigned nth)
{
    const unsigned gl = a.elog - a.t;
    for (unsigned e = tid; e < s.E; e += nth) {
        unsigned g, m;
        const size_t p = ntt_addr(a, blk, e, &g, &m);
        ntt_sm_put(s, (m << gl) | g, hd_ld_rw(a.x + p));
    }
}

/* The twiddle of local stage r for sub-problem lo and m', in the sign convention of the
 * butterflies (inverse: minus the inverse twiddle), from the pass's table, or its coset's
 * (ntt_cw_fill). */
template <bool INV, bool CW>
GPU_HD fr_t ntt_twiddle(const ntt_args &a, unsigned r, size_t lo, unsigned mp)
{
    const unsigned sb = a.k - a.s0 - a.t, K = a.k - a.s0;
    if (CW) /* kernels of their own: chosen at run time in every pass, the plain passes
             * measured 1.4-2.1 % slower (bench/RESULTS.md, session 16) */
        return hd_ld(a.cw + ntt_cw_off(K, r) + ((size_t)mp << sb) + lo);
    size_t j = (((size_t)mp << sb) + lo) << (a.L - K + r);
    if (INV)
        j = ((size_t)1 << (a.L - 1)) - j;
    return hd_ld(a.w + j);
}

/* The butterflies keep their values in [0, 2r) (lazy: sums and differences modulo 2r,
 * FrDblP), and the products take them as their second argument: f_mul_raw(w, x) < 2r for a
 * reduced twiddle w and any x < 2^256, without f_mul's final subtraction. A pass loads
 * reduced values and stores reduced ones (ntt_phase_store). */
template <bool DIT, bool INV> GPU_HD void ntt_bfly(fr_t &u, fr_t &v, const fr_t &w)
{
    if (!DIT) {
        const fr_t d = INV ? f_sub<FrP, FrDblP>(v, u) : f_sub<FrP, FrDblP>(u, v);
        u = f_add<FrP, FrDblP>(u, v);
        v = f_mul_raw<FrP>(w, d);
    } else {
        const fr_t p = f_mul_raw<FrP>(w, v);
        v = INV ? f_add<FrP, FrDblP>(u, p) : f_sub<FrP, FrDblP>(u, p);
        u = INV ? f_sub<FrP, FrDblP>(u, p) : f_add<FrP, FrDblP>(u, p);
    }
}
GPU_HD void ntt_bfly1(fr_t &u, fr_t &v) /* twiddle 1, both kinds and directions */
{
    const fr_t d = f_sub<FrP, FrDblP>(u, v);
    u = f_add<FrP, FrDblP>(u, v);
    v = d;
}

/* Phase 4: one round, the R stages of chunk ci in registers (2^R elements per item). */
template <unsigned R, bool DIT, bool INV, bool CW>
GPU_HD void ntt_phase_round(const ntt_args &a, const ntt_sm &s, size_t blk, unsigned ci,
                            unsigned tid, unsigned nth)
{
    const unsigned t = a.t, gl = a.elog - t, G = 1u << gl, sb = a.k - a.s0 - t;
    const unsigned r0 = ntt_chunk_r0(ci);
    const unsigned hb0 = t - 1 - r0, bl = hb0 + 1 - R; /* the round's bits of m: bl..hb0 */
    const unsigned items = 1u << (a.elog - R);
    const size_t smask = ((size_t)1 << sb) - 1;
    for (unsigned it = tid; it < items; it += nth) {
        const unsigned g = it & (G - 1), mb = it >> gl;
        const unsigned mlow = mb & ((1u << bl) - 1);
        const unsigned mbase = ((mb >> bl) << (bl + R)) | mlow;
        const size_t lo = ((blk << gl) + g) & smask;
        fr_t x[1u << R];
#pragma unroll
        for (unsigned c = 0; c < (1u << R); c++)
            x[c] = ntt_sm_get(s, ((mbase | (c << bl)) << gl) | g);
#pragma unroll
        for (unsigned ii = 0; ii < R; ii++) {
            const unsigned i = DIT ? R - 1 - ii : ii; /* stage r0 + i, bit R-1-i of c */
            const unsigned r = r0 + i, half = 1u << (R - 1 - i);
            const bool one = hb0 - i == 0 && sb == 0; /* the network's last stage: tau = 1 */
#pragma unroll
            for (unsigned dd = 0; dd < half; dd++) {
                fr_t w;
                if (!one)
                    w = ntt_twiddle<INV, CW>(a, r, lo, mlow + (dd << bl));
#pragma unroll
                for (unsigned h = 0; h < (1u << R); h += 2 * half) {
                    if (one)
                        ntt_bfly1(x[h + dd], x[h + dd + half]);
                    else
                        ntt_bfly<DIT, INV>(x[h + dd], x[h + dd + half], w);
                }
            }
        }
#pragma unroll
        for (unsigned c = 0; c < (1u << R); c++)
            ntt_sm_put(s, ((mbase | (c << bl)) << gl) | g, x[c]);
    }
}

template <bool DIT, bool INV, bool CW>
GPU_HD void ntt_phase_round_any(const ntt_args &a, const ntt_sm &s, size_t blk, unsigned ci,
                                unsigned tid, unsigned nth)
{
    ntt_phase_round<1, DIT, INV, CW>(a, s, blk, ci, tid, nth); /* ntt_chunk_size: 1 */
}

/* Phase 5: the block's elements back to memory, with the fused scaling or H end. */
GPU_HD void ntt_phase_store(const ntt_args &a, const ntt_sm &s, size_t blk, unsigned tid,
                            unsigned nth)
{
    const unsigned gl = a.elog - a.t;
    for (unsigned e = tid; e < s.E; e += nth) {
        unsigned g, m;
        const size_t p = ntt_addr_out(a, blk, e, &g, &m);
        fr_t v = ntt_sm_get(s, (m << gl) | g); /* < 2r: reduced by the product or here */
        if (a.post == NTT_POST_CONST)
            v = f_mul<FrP>(a.cst, v);
        else if (a.post == NTT_POST_COSET) { /* coefficient (or output) i = bitrev_k(p) */
            const unsigned q = (unsigned)((blk << gl) + g), kt = a.k - a.t;
            const unsigned i = (ntt_brev(m, a.t) << kt) | (a.brv ? q : ntt_brev(q, kt));
            v = f_mul<FrP>(hd_ld(a.sc + ntt_pf_index(i, a.k, a.t0)), v);
        } else
            v = f_reduce_once<FrP>(v, 0);
        if (a.hfinal)
            v = f_sub<FrP>(f_mul<FrP>(hd_ld_rw(a.out + p), hd_ld(a.hb + p)), v);
        hd_st(a.out + p, v);
    }
}

/* ---- bit reversal by tiles ---- */
GPU_HD unsigned ntt_brv_q(unsigned k)
{
    return k / 2 < NTT_BRV_QMAX ? k / 2 : NTT_BRV_QMAX;
}
/* Shared index of (tile, a, c): rows of 2^q, the low bits of c swizzled by the row. */
GPU_HD unsigned ntt_brv_sidx(unsigned q, unsigned tile, unsigned a, unsigned c)
{
    const unsigned f = (a ^ (a >> 3)) & 7 & ((1u << q) - 1);
    return (tile << (2 * q)) | (a << q) | (c ^ f);
}
/* Load (st = 0) or store (st = 1) the tiles of block blk; sh holds 2^(2q+1) elements.
 * Block blk is middle value b; nothing to do when rev b < b (the block of rev b does it). */
GPU_HD void ntt_brv_phase(fr_t *x, unsigned k, size_t blk, int st, fr_t *sh, unsigned tid,
                          unsigned nth)
{
    const unsigned q = ntt_brv_q(k), mbits = k - 2 * q;
    const unsigned b = (unsigned)blk, rb = ntt_brev(b, mbits);
    if (rb < b)
        return;
    const unsigned T = 1u << (2 * q), ntile = rb == b ? 1 : 2;
    for (unsigned i = tid; i < ntile * T; i += nth) {
        const unsigned tile = i >> (2 * q), e = i & (T - 1);
        const unsigned a_ = e >> q, c = e & ((1u << q) - 1);
        const size_t p = ((size_t)a_ << (k - q)) | ((size_t)(tile ? rb : b) << q) | c;
        if (!st) {
            sh[ntt_brv_sidx(q, tile, a_, c)] = hd_ld_rw(x + p);
        } else {
            /* (a, tile's b, c) <- (rev c, other b, rev a) */
            const unsigned src = ntile == 1 ? 0 : 1 - tile;
            hd_st(x + p, sh[ntt_brv_sidx(q, src, ntt_brev(c, q), ntt_brev(a_, q))]);
        }
    }
}
GPU_HD size_t ntt_brv_blocks(unsigned k)
{
    return (size_t)1 << (k - 2 * ntt_brv_q(k));
}

/* ---- the host executor: the kernels' phase sequence block by block (tests) ----
 * ntt_pass_kernel runs, per block: load, barrier, then per chunk
 * (DIF: 0, 1, ..; DIT: the reverse) one round and a barrier, then store. Here the block's
 * threads are one loop (tid 0 of 1), the barriers the order of the calls. */
/* The kernel of a pass, for both executors: 2 dit + inv on W (ids 0-3); on coset twiddles
 * (a.cw) 4: forward DIT, 5: inverse DIF, the only two the sequences use. */
#define NTT_KERNELS 6
static inline cuzk_err ntt_kernel_id(const ntt_args &a, bool dit, bool inv, int *id)
{
    if (a.cw && dit == inv)
        return cuzk_error_set(CUZK_EINVAL, "gpu ntt: coset twiddles, dit %d inv %d", (int)dit,
                              (int)inv);
    *id = a.cw ? (dit ? 4 : 5) : (dit ? 2 : 0) + (inv ? 1 : 0);
    return CUZK_OK;
}

struct ntt_host_exec {
    static cuzk_err slot_ready(int) { return CUZK_OK; }
    static void round(const ntt_args &a, const ntt_sm &s, size_t blk, unsigned ci, int id)
    {
        void (*const fns[NTT_KERNELS])(const ntt_args &, const ntt_sm &, size_t, unsigned,
                                       unsigned, unsigned) = {
            ntt_phase_round_any<false, false, false>, ntt_phase_round_any<false, true, false>,
            ntt_phase_round_any<true, false, false>,  ntt_phase_round_any<true, true, false>,
            ntt_phase_round_any<true, false, true>,   ntt_phase_round_any<false, true, true>};
        fns[id](a, s, blk, ci, 0, 1);
    }
    cuzk_err pass(const ntt_args &a, bool dit, bool inv)
    {
        int id;
        GPU_TRY(ntt_kernel_id(a, dit, inv, &id));
        void *mem = malloc(ntt_smem_bytes(a));
        if (!mem)
            return cuzk_error_set(CUZK_ENOMEM, "ntt_host_exec");
        const ntt_sm s = ntt_sm_at(mem, a);
        const size_t nblk = (size_t)1 << (a.k - a.elog);
        const unsigned nc = ntt_nchunks(a.t);
        for (size_t blk = 0; blk < nblk; blk++) {
            ntt_phase_load(a, s, blk, 0, 1);
            for (unsigned i = 0; i < nc; i++) {
                round(a, s, blk, dit ? nc - 1 - i : i, id);
            }
            ntt_phase_store(a, s, blk, 0, 1);
        }
        free(mem);
        return CUZK_OK;
    }
    cuzk_err bitrev(fr_t *x, unsigned k)
    {
        fr_t sh[2u << (2 * NTT_BRV_QMAX)];
        const size_t nblk = ntt_brv_blocks(k);
        for (size_t blk = 0; blk < nblk; blk++) {
            ntt_brv_phase(x, k, blk, 0, sh, 0, 1);
            ntt_brv_phase(x, k, blk, 1, sh, 0, 1);
        }
        return CUZK_OK;
    }
};

/* ---- the sequences of passes, for any executor X with
 *   cuzk_err X::pass(const ntt_args &, bool dit, bool inv) and
 *   cuzk_err X::bitrev(fr_t *x, unsigned k) ---- */

/* DIF (natural in) in direction inv; the last pass scaled (post, with the coset table sc).
 * Not natural: in place, bit-reversed out. natural: natural order out, in x, stored so by
 * the last pass (brv): with more than one pass, the passes before it go from x to tmp (n
 * elements, not x) and it from tmp back to x (one pass: in place, a block then holds the
 * whole transform). That order costs no pass over memory: the bit reversal's is saved. */
template <class X>
static cuzk_err ntt_run_dif(X &ex, const ntt_ctx &c, fr_t *x, bool inv, unsigned post,
                            const fr_t *sc, bool natural, fr_t *tmp, int coset = -1)
{
    const unsigned np = c.plan.npass;
    if (natural && np > 1 && !tmp)
        return cuzk_error_set(CUZK_EINVAL, "gpu ntt: natural order out needs a second buffer");
    for (unsigned p = 0; p < np; p++) {
        ntt_args a = ntt_args_make(c, p, x);
        if (coset >= 0 && p > 0)
            a.cw = c.tab + c.off_cw[coset][p];
        if (natural && np > 1) {
            a.x = p == 0 ? x : tmp;
            a.out = p + 1 == np ? x : tmp;
        }
        if (p + 1 == np) {
            a.post = post;
            a.sc = sc;
            a.brv = natural;
        }
        GPU_TRY(ex.pass(a, false, inv));
    }
    return CUZK_OK;
}

/* DIT (bit-reversed in, natural out); with hf_out the last pass stores
 * hf_out[p] = hf_out[p] hf_b[p] - X[p] instead of X. */
template <class X>
static cuzk_err ntt_run_dit(X &ex, const ntt_ctx &c, fr_t *x, bool inv, fr_t *hf_out,
                            const fr_t *hf_b, int coset = -1)
{
    for (unsigned p = c.plan.npass; p-- > 0;) {
        ntt_args a = ntt_args_make(c, p, x);
        if (coset >= 0 && p > 0)
            a.cw = c.tab + c.off_cw[coset][p];
        if (p == 0 && hf_out) {
            a.out = hf_out;
            a.hb = hf_b;
            a.hfinal = 1;
        }
        GPU_TRY(ex.pass(a, true, inv));
    }
    return CUZK_OK;
}

/* Natural order in and out (the public NTT); the inverse with 1/n. With tmp (n elements)
 * the last pass stores in natural order; without it (no memory for tmp), a bit reversal
 * in place follows. */
template <class X>
static cuzk_err ntt_run_ntt(X &ex, const ntt_ctx &c, fr_t *x, bool inv, fr_t *tmp)
{
    const bool natural = tmp || c.plan.npass == 1;
    GPU_TRY(ntt_run_dif(ex, c, x, inv, inv ? NTT_POST_CONST : NTT_POST_NONE, NULL, natural,
                        tmp));
    return natural ? CUZK_OK : ex.bitrev(x, c.plan.k);
}

/* The H step on slots a, b, c (values on the domain, natural order). Per slot: inverse DIF
 * (coefficient i at position bitrev(i), times n), times (1/n) s^i (fused), forward DIT
 * (values at s omega^j, natural order); c's last pass forms a b - c into a.
 * snarkjs (s = omega_2n): the result. bellman (s = g): then inverse DIF of a, coefficient i
 * times (g^n - 1)^-1 (1/n) g^-i (fused), stored in natural order (through b). */
template <class X>
static cuzk_err ntt_run_h(X &ex, const ntt_ctx &c, fr_t *sa, fr_t *sb_, fr_t *sc_,
                          bool bellman)
{
    fr_t *sl[3] = {sa, sb_, sc_};
    for (int i = 0; i < 3; i++) {
        GPU_TRY(ex.slot_ready(i)); /* slot i's input is there (it may still be arriving) */
        GPU_TRY(ntt_run_dif(ex, c, sl[i], true, NTT_POST_COSET, c.tab + c.off_sc[0], false,
                            NULL));
        GPU_TRY(ntt_run_dit(ex, c, sl[i], false, i == 2 ? sa : NULL, i == 2 ? sb_ : NULL, 0));
    }
    if (!bellman)
        return CUZK_OK;
    /* b is free now: it holds the passes before the last, which stores a in natural order */
    return ntt_run_dif(ex, c, sa, true, NTT_POST_COSET, c.tab + c.off_sc[1], true, sb_, 1);
}

#endif
