/*
 * The host-testable half of the G1 MSM's batch-affine accumulation (src/gpu/msm/affine.cuh)
 * compiled as host code against the CPU library; needs no GPU:
 *   fp_inv_var (the variable-time inversion) and aff_fp_halve against cuzk_fp_inv on random
 *   and edge values;
 *   aff_pair_denom / aff_pair_sum against the CPU's Jacobian addition: P + Q, P + P, P + -P,
 *   either or both infinity;
 *   the product-tree batch inversion (aff_tree_up / aff_tree_down) with ones among the values;
 *   whole reduction rounds (aff_round_fwd / aff_round_bwd with the kernel's accessor) emulated
 *   one thread after another over random sorted lists with long runs, equal bases (doublings),
 *   P next to -P, infinity bases, negated values and thread ranges that cut pairs: after
 *   every round the points left in each bucket must add up to the CPU's bucket sum, and the
 *   run offsets must be the predicted ones;
 *   the whole per-MSM flow of msm/affine.cu (bucket offsets, chunks, slices, rounds per slice,
 *   the kernel's launch geometry and buffer bounds, the sentinel tail) on random plans.
 * gpu_cc_lost_ must stay 0 (no carry dropped where the field code's bounds say none).
 */
#include <stdint.h>
#include <string.h>

#include <vector>

#include "test.h"
#include "test_points.h"

#include "cuzk/ec.h"
#include "gpu/msm/affine.cuh"

static fp_t to_dev(const cuzk_fp &a)
{
    fp_t d;
    gpu_limbs32(d.v, a.l, 6);
    return d;
}
static cuzk_fp from_dev(const fp_t &d)
{
    cuzk_fp a;
    for (int i = 0; i < 6; i++)
        a.l[i] = (uint64_t)d.v[2 * i] | ((uint64_t)d.v[2 * i + 1] << 32);
    return a;
}
static bool dev_eq(const fp_t &d, const cuzk_fp &a)
{
    const cuzk_fp g = from_dev(d);
    return memcmp(g.l, a.l, sizeof a.l) == 0;
}
static g1_aff_t aff_to_dev(const cuzk_g1_affine &a)
{
    g1_aff_t d;
    d.x = to_dev(a.x);
    d.y = to_dev(a.y);
    return d;
}
static cuzk_g1_affine aff_from_dev(const g1_aff_t &d)
{
    cuzk_g1_affine a;
    a.x = from_dev(d.x);
    a.y = from_dev(d.y);
    return a;
}

static fp_t g_r2;

/* a < p: the form every stored coordinate must have (the lazy forms stay inside formulas). */
static bool dev_reduced(const fp_t &a)
{
    return f_eq<FpP>(f_reduce_once<FpP>(a, 0), a);
}

/* The other representative of a reduced a in [0, 2p): a + p, a lazy input. */
static fp_t lazy_rep(const fp_t &a)
{
    fp_t r;
    uint64_t c = 0;
    for (int j = 0; j < 12; j++) { /* a + p < 2p < 2^384 */
        c += (uint64_t)a.v[j] + FpP::p(j);
        r.v[j] = (uint32_t)c;
        c >>= 32;
    }
    return r;
}

/* fp_inv_var(a) == cuzk_fp_inv(a) (the representation a taken as is: it is < p). */
static bool inv_ok(const cuzk_fp &a)
{
    cuzk_fp w;
    cuzk_fp_inv(&w, &a);
    return dev_eq(fp_inv_var(to_dev(a), g_r2), w);
}

static void test_inv(unsigned long iters)
{
    unsigned long bad = 0, n = 0;
    for (unsigned long i = 0; i < iters; i++) {
        cuzk_fp a;
        test_rand_fp(&a);
        bad += !inv_ok(a);
        n++;
    }
    /* edges: representations 0, 1, 2^k, p - 1, p - 2^k, small integers, one, -one */
    cuzk_fp p = CUZK_FP_MODULUS, a;
    memset(&a, 0, sizeof a);
    bad += !inv_ok(a); /* 0 -> 0 */
    n++;
    for (int k = 0; k < 381; k++) {
        memset(&a, 0, sizeof a);
        a.l[k / 64] = 1ULL << (k % 64);
        bad += !inv_ok(a);
        a = p;
        a.l[0] -= 1; /* p - 1 */
        bad += !inv_ok(a);
        if (k < 64) {
            a = p;
            a.l[0] -= 1ULL << k; /* p - 2^k (no borrow: p's low limb is 0xb9feffffffffaaab) */
            if (a.l[0] < p.l[0])
                bad += !inv_ok(a);
        }
        n += 3;
    }
    for (uint64_t v = 1; v < 200; v++) {
        cuzk_fp_set_u64(&a, v);
        bad += !inv_ok(a);
        cuzk_fp_neg(&a, &a);
        bad += !inv_ok(a);
        n += 2;
    }
    /* halving: aff_fp_halve(x, s) doubled s times is x */
    for (unsigned long i = 0; i < iters; i++) {
        cuzk_fp x;
        test_rand_fp(&x);
        const unsigned s = 1 + (unsigned)(test_rand64() % 31);
        fp_t h = aff_fp_halve(to_dev(x), s);
        bool red = true;
        {
            cuzk_fp hc = from_dev(h);
            for (int j = 5; j >= 0; j--)
                if (hc.l[j] != p.l[j]) {
                    red = hc.l[j] < p.l[j];
                    break;
                }
        }
        for (unsigned k = 0; k < s; k++)
            h = f_dbl<FpP>(h);
        bad += !(red && dev_eq(h, x));
        n++;
    }
    printf("inversion: %lu checks, %lu bad\n", n, bad);
    CHECK(bad == 0);
}

/* ---- points ---- */
/* The CPU's p + q, affine. */
static cuzk_g1_affine cpu_add(const cuzk_g1_affine &p, const cuzk_g1_affine &q)
{
    cuzk_g1_jac j;
    cuzk_g1_jac_from_affine(&j, &p);
    cuzk_g1_jac_add_affine_var(&j, &j, &q);
    cuzk_g1_affine r;
    cuzk_g1_jac_to_affine(&r, &j);
    return r;
}

static bool pair_ok(const cuzk_g1_affine &p, const cuzk_g1_affine &q, int want_case)
{
    const g1_aff_t dp = aff_to_dev(p), dq = aff_to_dev(q);
    fp_t d;
    const int c = aff_pair_denom(d, dp, dq);
    if (f_is_zero<FpP>(d) || (want_case >= 0 && c != want_case))
        return false;
    const cuzk_g1_affine want = cpu_add(p, q);
    const fp_t inv = fp_inv_var(d, g_r2);
    /* the inverse as the tree gives it: either representative below 2p */
    for (const fp_t &i : {inv, lazy_rep(inv)}) {
        const g1_aff_t s = aff_pair_sum(c, dp, dq, i);
        const cuzk_g1_affine got = aff_from_dev(s);
        if (!dev_reduced(s.x) || !dev_reduced(s.y) || !cuzk_g1_affine_eq(&got, &want) ||
            !cuzk_g1_affine_is_on_curve(&got))
            return false;
    }
    return true;
}

static void test_pair(unsigned long iters)
{
    unsigned long bad = 0, n = 0;
    cuzk_g1_affine inf;
    cuzk_g1_affine_set_inf(&inf);
    for (unsigned long i = 0; i < iters; i++) {
        cuzk_g1_affine p, q;
        test_g1_rand(&p);
        test_g1_rand(&q);
        cuzk_g1_affine np;
        cuzk_g1_affine_neg(&np, &p);
        bad += !pair_ok(p, q, AFF_ADD);
        bad += !pair_ok(q, p, AFF_ADD);
        bad += !pair_ok(p, p, AFF_DBL);
        bad += !pair_ok(p, np, AFF_INF);
        bad += !pair_ok(np, p, AFF_INF);
        bad += !pair_ok(p, inf, AFF_P);
        bad += !pair_ok(inf, q, AFF_Q);
        n += 7;
    }
    bad += !pair_ok(inf, inf, AFF_P);
    /* x = 0 is on the curve (y^2 = 4): not infinity */
    {
        cuzk_g1_affine z, nz;
        cuzk_fp_set_zero(&z.x);
        cuzk_fp_set_u64(&z.y, 2);
        cuzk_g1_affine_neg(&nz, &z);
        cuzk_g1_affine p;
        test_g1_rand(&p);
        bad += !pair_ok(z, p, AFF_ADD);
        bad += !pair_ok(p, z, AFF_ADD);
        bad += !pair_ok(z, z, AFF_DBL);
        bad += !pair_ok(z, nz, AFF_INF);
        bad += !pair_ok(z, inf, AFF_P);
        n += 6;
    }
    printf("pair sums: %lu checks, %lu bad\n", n + 1, bad);
    CHECK(bad == 0);
}

/* ---- the XYZZ formulas of ec/xyzz.cuh (G1), against the CPU's ---- */
static g1_xyzz_t xyzz_to_dev(const cuzk_g1_xyzz &a)
{
    g1_xyzz_t d;
    d.x = to_dev(a.x);
    d.y = to_dev(a.y);
    d.zz = to_dev(a.zz);
    d.zzz = to_dev(a.zzz);
    return d;
}

/* d is reduced and the same point as c. */
static bool xyzz_same(const g1_xyzz_t &d, const cuzk_g1_xyzz &c)
{
    if (!dev_reduced(d.x) || !dev_reduced(d.y) || !dev_reduced(d.zz) || !dev_reduced(d.zzz))
        return false;
    cuzk_g1_xyzz g;
    g.x = from_dev(d.x);
    g.y = from_dev(d.y);
    g.zz = from_dev(d.zz);
    g.zzz = from_dev(d.zzz);
    cuzk_g1_affine ga, ca;
    cuzk_g1_xyzz_to_affine(&ga, &g);
    cuzk_g1_xyzz_to_affine(&ca, &c);
    return cuzk_g1_affine_eq(&ga, &ca) && cuzk_g1_xyzz_is_inf(&g) == cuzk_g1_xyzz_is_inf(&c);
}

/* Runs of mixed additions (xyzz_add_affine) over bases with infinity, repeats and negatives
 * among them (doublings, P + -P, restarts from infinity), each step checked; then full
 * additions (xyzz_add) of the accumulators in pairs, of one with itself's copy (doubling),
 * with its negative (infinity) and with infinity, and doublings (xyzz_dbl). */
static void test_xyzz(unsigned long iters)
{
    unsigned long bad = 0, n = 0;
    const unsigned L = 24;
    std::vector<cuzk_g1_affine> b(L);
    std::vector<g1_xyzz_t> dacc;
    std::vector<cuzk_g1_xyzz> cacc;
    for (unsigned long it = 0; it < iters; it++) {
        test_g1_rand_bases(b.data(), L);
        if (it % 2) { /* the same base over and over: doublings, then P + -P */
            for (unsigned i = 1; i < L; i++)
                b[i] = b[i % 3 == 0 ? i - 1 : 0];
            cuzk_g1_affine_neg(&b[L - 1], &b[L - 2]);
        }
        g1_xyzz_t d;
        cuzk_g1_xyzz c;
        xyzz_set_inf(d);
        cuzk_g1_xyzz_set_inf(&c);
        for (unsigned i = 0; i < L; i++) {
            if (cuzk_g1_affine_is_inf(&b[i]))
                continue; /* as msm_add_base */
            const g1_aff_t db = aff_to_dev(b[i]);
            xyzz_add_affine(d, db.x, db.y);
            cuzk_g1_xyzz_add_affine_var(&c, &c, &b[i]);
            bad += !xyzz_same(d, c);
            n++;
            if (i % 8 == 7) {
                dacc.push_back(d);
                cacc.push_back(c);
            }
        }
    }
    for (size_t i = 0; i + 1 < dacc.size(); i++) {
        g1_xyzz_t d = dacc[i], e = dacc[i];
        cuzk_g1_xyzz c;
        xyzz_add(d, dacc[i + 1]); /* distinct, or equal points (doubling), or infinity */
        cuzk_g1_xyzz_add_var(&c, &cacc[i], &cacc[i + 1]);
        bad += !xyzz_same(d, c);
        xyzz_add(e, dacc[i]); /* the same point: the doubling path */
        cuzk_g1_xyzz_dbl_var(&c, &cacc[i]);
        bad += !xyzz_same(e, c);
        cuzk_g1_xyzz neg;
        cuzk_g1_xyzz_neg(&neg, &cacc[i]);
        g1_xyzz_t f = dacc[i];
        xyzz_add(f, xyzz_to_dev(neg)); /* P + -P: infinity */
        cuzk_g1_xyzz_add_var(&c, &cacc[i], &neg);
        bad += !xyzz_same(f, c) || !xyzz_is_inf(f);
        g1_xyzz_t g = dacc[i];
        xyzz_dbl(g, g);
        cuzk_g1_xyzz_dbl_var(&c, &cacc[i]);
        bad += !xyzz_same(g, c);
        n += 4;
    }
    printf("XYZZ formulas: %lu checks, %lu bad\n", n, bad);
    CHECK(bad == 0);
    CHECK(n > 0);
}

/* The leaves nd[T..2T) inverted in place through the product tree, as a round's block does
 * it (the root inverted on the host). */
static void tree_invert(std::vector<fp_t> &nd, unsigned T)
{
    for (unsigned h = T / 2; h; h >>= 1)
        for (unsigned i = h; i < 2 * h; i++)
            aff_tree_up(nd.data(), i);
    nd[1] = fp_inv_var(nd[1], g_r2);
    for (unsigned h = 1; h < T; h <<= 1)
        for (unsigned i = h; i < 2 * h; i++)
            aff_tree_down(nd.data(), i);
}

/* The tree over T leaves, ones among them: every leaf times its original is one. */
static void test_tree(void)
{
    unsigned long bad = 0;
    const fp_t one = f_one<FpP>();
    for (unsigned T = 1; T <= 128; T *= 2) {
        std::vector<fp_t> nd(2 * T), orig(T);
        for (unsigned t = 0; t < T; t++) {
            cuzk_fp a;
            test_rand_fp(&a);
            orig[t] = (test_rand64() % 4 == 0) ? one : to_dev(a);
            nd[T + t] = orig[t];
        }
        tree_invert(nd, T);
        for (unsigned t = 0; t < T; t++)
            bad += !f_eq<FpP>(f_mul<FpP>(nd[T + t], orig[t]), one);
    }
    printf("batch inversion tree: %lu bad\n", bad);
    CHECK(bad == 0);
}

/* ---- whole rounds, emulated ---- */
struct round_list {
    std::vector<uint32_t> keys, vals; /* vals: round 0 only */
    std::vector<g1_aff_t> pts;        /* round 0: the bases */
};

/* off[kl] = sum_{k < kl} ceil(len0[k] / 2^r), off[nb] the count. */
static std::vector<uint32_t> offsets(const std::vector<uint32_t> &len0, unsigned r)
{
    std::vector<uint32_t> off(len0.size() + 1);
    uint32_t s = 0;
    for (size_t k = 0; k < len0.size(); k++) {
        off[k] = s;
        s += (uint32_t)(((uint64_t)len0[k] + (1ULL << r) - 1) >> r);
    }
    off[len0.size()] = s;
    return off;
}

/* One round over `in` as the kernel runs it: `blocks` blocks of T threads of K pairs (the
 * blocks one after another, the barriers as sequence points; a block without pairs skips
 * the inversion), out_size >= the output count (the rest stays garbage). */
template <bool FIRST>
static round_list run_round(const round_list &in, const std::vector<uint32_t> &off_in,
                            const std::vector<uint32_t> &off_out, uint32_t k0, unsigned K,
                            size_t blocks, unsigned T, size_t out_size)
{
    const uint32_t count = off_in.back();
    round_list out;
    out.keys.assign(out_size, 0xdeadbeefu);
    out.pts.resize(out_size);
    for (size_t j = 0; j < out_size; j++)
        out.pts[j].x.v[0] = 0xdeadbeefu; /* must be overwritten below the count */
    const size_t nthreads = blocks * T;
    std::vector<fp_t> pre((size_t)K * nthreads);
    std::vector<uint2> meta((size_t)K * nthreads);
    aff_io<FIRST> io;
    io.out = out.pts.data();
    io.okeys = out.keys.data();
    io.pre = pre.data();
    io.meta = meta.data();
    io.keys = in.keys.data();
    io.vals = FIRST ? in.vals.data() : NULL;
    io.pts = in.pts.data();
    io.off_in = off_in.data();
    io.off_out = off_out.data();
    io.k0 = k0;
    io.stride = nthreads;
    std::vector<fp_t> nd(2 * T);
    std::vector<unsigned> np(T);
    for (size_t b = 0; b < blocks; b++) {
        bool any = false;
        for (unsigned tid = 0; tid < T; tid++) {
            io.t = b * T + tid;
            const uint64_t es = (uint64_t)io.t * 2 * K;
            np[tid] = 0;
            nd[T + tid] = f_one<FpP>();
            if (es < count)
                nd[T + tid] = aff_round_fwd(io, (uint32_t)es,
                                            (uint32_t)(es + 2 * K < count ? es + 2 * K : count),
                                            np[tid]);
            if (np[tid] > K)
                CHECK(np[tid] <= K);
            any = any || np[tid];
        }
        if (!any)
            continue;
        tree_invert(nd, T);
        for (unsigned tid = 0; tid < T; tid++) {
            io.t = b * T + tid;
            aff_round_bwd(io, nd[T + tid], np[tid]);
        }
    }
    return out;
}

/* Bucket sums of a list on the CPU (first: round 0, signed bases); elements with the key
 * `sentinel` are skipped (they must come last), other keys must be sorted and in
 * [k0, k0 + nb). */
static std::vector<cuzk_g1_jac> bucket_sums(const round_list &l, bool first, uint32_t k0,
                                            uint32_t nb, bool *keys_ok,
                                            uint32_t sentinel = 0xffffffffu)
{
    std::vector<cuzk_g1_jac> s(nb);
    for (uint32_t k = 0; k < nb; k++)
        cuzk_g1_jac_set_inf(&s[k]);
    *keys_ok = true;
    for (size_t e = 0; e < l.keys.size(); e++) {
        if (l.keys[e] == sentinel)
            continue;
        if (l.keys[e] < k0 || l.keys[e] - k0 >= nb || (e && l.keys[e] < l.keys[e - 1])) {
            *keys_ok = false;
            continue;
        }
        cuzk_g1_affine p;
        if (first) {
            p = aff_from_dev(l.pts[l.vals[e] & ~MSM_AFF_SIGN]);
            if (l.vals[e] & MSM_AFF_SIGN)
                cuzk_g1_affine_neg(&p, &p);
        } else {
            p = aff_from_dev(l.pts[e]);
            if (!cuzk_g1_affine_is_on_curve(&p))
                *keys_ok = false;
        }
        cuzk_g1_jac_add_affine_var(&s[l.keys[e] - k0], &s[l.keys[e] - k0], &p);
    }
    return s;
}

/* A random sorted list: nb buckets of assorted lengths (0, 1, 2, 3, ..., long runs, one run
 * of a single repeated base), bases from a small pool with repeats, negations and infinity. */
static round_list make_list(uint32_t nb, uint32_t k0, std::vector<uint32_t> *len0)
{
    const unsigned npool = 12;
    round_list l;
    cuzk_g1_affine inf, pool_prev;
    cuzk_g1_affine_set_inf(&inf);
    pool_prev = inf;
    for (unsigned i = 0; i < npool; i++) {
        cuzk_g1_affine p;
        test_g1_rand(&p);
        if (i == 3)
            p = inf;
        if (i == 5) /* -base 4 */
            cuzk_g1_affine_neg(&p, &pool_prev);
        if (i == 7) /* a repeat of base 6 */
            p = pool_prev;
        pool_prev = p;
        l.pts.push_back(aff_to_dev(p));
    }
    len0->assign(nb, 0);
    for (uint32_t k = 0; k < nb; k++) {
        const uint64_t r = test_rand64() % 16;
        uint32_t len = r < 6 ? (uint32_t)r : r < 12 ? 6 + (uint32_t)(test_rand64() % 20)
                                                    : 20 + (uint32_t)(test_rand64() % 120);
        if (k == nb / 2)
            len = 300; /* one huge run of a single base: doublings all the way */
        (*len0)[k] = len;
        const int mode = (int)(test_rand64() % 4); /* 0: random, 1: one base, 2: P, -P, 3: signs */
        const uint32_t b0 = (uint32_t)(test_rand64() % npool);
        for (uint32_t i = 0; i < len; i++) {
            uint32_t v = (uint32_t)(test_rand64() % npool);
            if (k == nb / 2 || mode == 1)
                v = b0;
            else if (mode == 2) /* bases 4 and 5 = -4, either negated: sums cancel or double */
                v = (4 + (i & 1)) | (test_rand64() % 2 ? MSM_AFF_SIGN : 0);
            else if (mode == 3 && test_rand64() % 2)
                v |= MSM_AFF_SIGN;
            l.keys.push_back(k0 + k);
            l.vals.push_back(v);
        }
    }
    return l;
}

static void test_rounds(unsigned reps)
{
    unsigned long bad = 0, rounds = 0;
    const unsigned Ks[] = {1, 2, 3, 5, 16};
    const unsigned Ts[] = {1, 2, 4, 8};
    for (unsigned rep = 0; rep < reps; rep++) {
        const uint32_t nb = 1 + (uint32_t)(test_rand64() % 40), k0 = (uint32_t)(test_rand64() % 100);
        std::vector<uint32_t> len0;
        round_list l = make_list(nb, k0, &len0);
        uint32_t maxlen = 0;
        for (uint32_t k = 0; k < nb; k++)
            maxlen = len0[k] > maxlen ? len0[k] : maxlen;
        bool kok;
        const std::vector<cuzk_g1_jac> want = bucket_sums(l, true, k0, nb, &kok);
        const unsigned K = Ks[rep % 5], T = Ts[(rep / 5) % 4];
        unsigned R = 0;
        while ((1u << R) < maxlen)
            R++;
        round_list cur = l;
        for (unsigned r = 0; r < R; r++) {
            const std::vector<uint32_t> oi = offsets(len0, r), oo = offsets(len0, r + 1);
            if (oi.back() != cur.keys.size())
                bad++;
            const size_t blocks = (oi.back() + 2 * K * T - 1) / (2 * K * T);
            cur = r == 0 ? run_round<true>(cur, oi, oo, k0, K, blocks, T, oo.back())
                         : run_round<false>(cur, oi, oo, k0, K, blocks, T, oo.back());
            rounds++;
            const std::vector<cuzk_g1_jac> got = bucket_sums(cur, false, k0, nb, &kok);
            bool ok = kok;
            for (uint32_t k = 0; k < nb; k++) {
                ok = ok && cuzk_g1_jac_eq(&got[k], &want[k]);
                /* the run of bucket k is where the offsets say */
                for (uint32_t e = oo[k]; e < oo[k + 1]; e++)
                    ok = ok && cur.keys[e] == k0 + k;
            }
            if (!ok) {
                fprintf(stderr, "round %u (K %u, T %u, nb %u): bucket sums differ\n", r, K, T, nb);
                bad++;
            }
        }
        /* every bucket ends as one point (or none) */
        const std::vector<uint32_t> last = offsets(len0, R);
        for (uint32_t k = 0; k < nb; k++)
            if (last[k + 1] - last[k] != (len0[k] ? 1u : 0u))
                bad++;
    }
    printf("rounds: %u lists, %lu rounds, %lu bad\n", reps, rounds, bad);
    CHECK(bad == 0);
}

/* The whole per-MSM flow of msm/affine.cu (msm_aff_plan, msm_aff_run) on the host: random
 * windows and buckets (many empty, some long), sentinel pairs at the end; off0 from
 * aff_bounds_at, the chunk offsets from aff_chunk_at, slices from msm_aff_cut with a random
 * cap, rounds from msm_aff_rounds (full or with a random stop), each round with the kernel's
 * geometry (msm_aff_geometry) and buffers of msm_aff_ub elements, the sentinel tail, then the
 * bucket sums of what is left (the XYZZ pass's job) against the CPU's sums of the input. */
static void test_flow(unsigned reps)
{
    unsigned long bad = 0, nslices = 0, nrounds = 0;
    for (unsigned rep = 0; rep < reps; rep++) {
        const uint32_t W = 1 + (uint32_t)(test_rand64() % 5), B = 1u << (test_rand64() % 7);
        const uint32_t nbk = W * B, sentinel = nbk;
        /* the sorted list: make_list's buckets re-keyed onto [0, nbk), sparse */
        std::vector<uint32_t> len_any;
        round_list l = make_list(nbk, 0, &len_any);
        round_list all;
        all.pts = l.pts;
        std::vector<uint32_t> len0(nbk, 0);
        for (size_t e = 0; e < l.keys.size(); e++) {
            if (test_rand64() % 3 == 0 && len_any[l.keys[e]] < 200)
                continue; /* thin out: empty buckets appear */
            all.keys.push_back(l.keys[e]);
            all.vals.push_back(l.vals[e]);
            len0[l.keys[e]]++;
        }
        const size_t nsent = test_rand64() % 50;
        for (size_t i = 0; i < nsent; i++) {
            all.keys.push_back(sentinel);
            all.vals.push_back(0);
        }
        const size_t npairs = all.keys.size();
        bool kok;
        const std::vector<cuzk_g1_jac> want = bucket_sums(all, true, 0, nbk, &kok, sentinel);
        /* off0 and the chunk offsets */
        std::vector<uint32_t> off0(nbk + 1, 0xffffffffu);
        for (size_t e = 0; e <= npairs; e++)
            aff_bounds_at(off0.data(), all.keys.data(), npairs, nbk, e);
        uint32_t acc = 0, maxlen = 0;
        for (uint32_t k = 0; k <= nbk; k++) {
            bad += off0[k] != acc;
            if (k < nbk) {
                acc += len0[k];
                maxlen = len0[k] > maxlen ? len0[k] : maxlen;
            }
        }
        const uint32_t cbr = B >> (test_rand64() % 3), cb = cbr ? cbr : 1;
        const uint32_t nchunks = (nbk + cb - 1) / cb;
        std::vector<uint32_t> co(nchunks + 1, 0xffffffffu);
        for (size_t k = 0; k <= nbk; k++)
            aff_chunk_at(co.data(), off0.data(), nbk, cb, nchunks, k);
        /* slices */
        const size_t cap = 1 + test_rand64() % (npairs + 1);
        std::vector<msm_aff_slice> sl(nchunks);
        const size_t ns = msm_aff_cut(sl.data(), co.data(), nchunks, cb, nbk, cap);
        nslices += ns;
        const bool full = test_rand64() % 2;
        const size_t stop = 1 + test_rand64() % 3;
        std::vector<cuzk_g1_jac> got(nbk);
        std::vector<bool> covered(nbk, false);
        for (uint32_t k = 0; k < nbk; k++)
            cuzk_g1_jac_set_inf(&got[k]);
        for (size_t i = 0; i < ns; i++) {
            msm_aff_slice &s = sl[i];
            bool ok = s.n && s.s0 == off0[s.k0] && s.n == off0[s.k0 + s.nb] - off0[s.k0] &&
                      (i == 0 || sl[i - 1].k0 + sl[i - 1].nb <= s.k0) &&
                      (s.n <= cap || s.nb <= cb);
            for (uint32_t k = s.k0; k < s.k0 + s.nb; k++)
                covered[k] = true;
            s.rounds = msm_aff_rounds(s, maxlen, full, stop);
            const unsigned R = s.rounds;
            nrounds += R;
            /* round 0's input: the slice's part of the sorted list */
            round_list cur;
            cur.keys.assign(all.keys.begin() + s.s0, all.keys.begin() + s.s0 + s.n);
            cur.vals.assign(all.vals.begin() + s.s0, all.vals.begin() + s.s0 + s.n);
            cur.pts = all.pts;
            std::vector<std::vector<uint32_t>> off(R + 1);
            for (unsigned r = 0; r <= R; r++) {
                off[r].resize(s.nb + 1);
                uint32_t sum = 0;
                for (uint32_t kl = 0; kl <= s.nb; kl++) {
                    off[r][kl] = sum;
                    if (kl < s.nb)
                        sum += aff_len_at(off0.data(), s.k0, kl, r);
                }
                ok = ok && off[r][s.nb] <= msm_aff_ub(s, r);
            }
            const size_t threads = 1 + test_rand64() % 64;
            const unsigned T = 1u << (test_rand64() % 4);
            for (unsigned r = 0; r < R && ok; r++) {
                uint32_t K;
                size_t blocks;
                msm_aff_geometry(threads, T, 1 + (uint32_t)(test_rand64() % 3), 8,
                                 msm_aff_ub(s, r), &K, &blocks);
                const size_t ub = msm_aff_ub(s, r + 1);
                cur = r == 0 ? run_round<true>(cur, off[0], off[1], s.k0, K, blocks, T, ub)
                             : run_round<false>(cur, off[r], off[r + 1], s.k0, K, blocks, T, ub);
            }
            std::vector<cuzk_g1_jac> part;
            if (R) { /* the tail kernel: the sentinel past the count */
                for (size_t e = off[R][s.nb]; e < cur.keys.size(); e++)
                    cur.keys[e] = sentinel;
                part = bucket_sums(cur, false, s.k0, s.nb, &kok, sentinel);
            } else {
                part = bucket_sums(cur, true, s.k0, s.nb, &kok, sentinel);
            }
            ok = ok && kok;
            for (uint32_t kl = 0; kl < s.nb; kl++)
                got[s.k0 + kl] = part[kl];
            if (!ok) {
                fprintf(stderr, "flow rep %u slice %zu (k0 %u nb %u n %u, %u rounds): wrong\n", rep,
                        i, s.k0, s.nb, s.n, R);
                bad++;
            }
        }
        for (uint32_t k = 0; k < nbk; k++)
            if (!cuzk_g1_jac_eq(&got[k], &want[k]) || (!covered[k] && len0[k])) {
                fprintf(stderr, "flow rep %u (W %u B %u cap %zu): bucket %u differs\n", rep, W, B,
                        cap, k);
                bad++;
                break;
            }
    }
    printf("flow: %u plans, %lu slices, %lu rounds, %lu bad\n", reps, nslices, nrounds, bad);
    CHECK(bad == 0);
}

int main(void)
{
    test_init("test_gpu_affine");
    gpu_consts_host_init();
    msm_aff_r2(&g_r2);
    test_inv(test_iters(2000));
    test_pair(test_iters(20));
    test_xyzz(test_iters(40));
    test_tree();
    test_rounds((unsigned)test_iters(20));
    test_flow((unsigned)test_iters(30));
    CHECK(gpu_cc_lost_ == 0);
    return test_finish();
}
