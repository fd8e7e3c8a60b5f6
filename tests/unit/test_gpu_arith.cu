/*
 * The device field arithmetic of src/gpu/gpu_common.cuh, compiled as host code (its carry
 * chains then run with an explicit carry flag, the same instruction sequence as on the
 * device), against the CPU library: Fp (12 x 32-bit limbs) and Fr (8 limbs). Needs no GPU.
 *
 * Inputs: random reduced elements, random unreduced ones within each function's stated
 * bounds (f_mul: a + p <= 2^(32N) and a b < p 2^(32N); for Fp any a, b < 2p qualify, since
 * 4p < 2^384), and edge values (0, 1, p - 1, p, 2p - 1, all-ones words, 2^(32N) - 1). The
 * reference reduces the inputs mod p and uses cuzk_fp_mul etc. gpu_cc_lost_ must stay 0:
 * no carry was dropped where the code's bounds say none can occur.
 */
#include <stdint.h>
#include <string.h>

#include "test.h"

#include "gpu/gpu_common.cuh"

/* Per field: the CPU type and functions, and the limb count in 64-bit words. */
struct FpCpu {
    typedef cuzk_fp T;
    typedef FpP P;
    static constexpr int L = CUZK_FP_LIMBS;
    static const T &mod() { return CUZK_FP_MODULUS; }
    static void rand(T *r) { test_rand_fp(r); }
    static void mul(T *r, const T *a, const T *b) { cuzk_fp_mul(r, a, b); }
    static void sqr(T *r, const T *a) { cuzk_fp_sqr(r, a); }
    static void add(T *r, const T *a, const T *b) { cuzk_fp_add(r, a, b); }
    static void sub(T *r, const T *a, const T *b) { cuzk_fp_sub(r, a, b); }
    static void neg(T *r, const T *a) { cuzk_fp_neg(r, a); }
    static const char *name() { return "fp"; }
};
struct FrCpu {
    typedef cuzk_fr T;
    typedef FrP P;
    static constexpr int L = CUZK_FR_LIMBS;
    static const T &mod() { return CUZK_FR_MODULUS; }
    static void rand(T *r) { test_rand_fr(r); }
    static void mul(T *r, const T *a, const T *b) { cuzk_fr_mul(r, a, b); }
    static void sqr(T *r, const T *a) { cuzk_fr_sqr(r, a); }
    static void add(T *r, const T *a, const T *b) { cuzk_fr_add(r, a, b); }
    static void sub(T *r, const T *a, const T *b) { cuzk_fr_sub(r, a, b); }
    static void neg(T *r, const T *a) { cuzk_fr_neg(r, a); }
    static const char *name() { return "fr"; }
};

/* 64-bit limb helpers on L-limb integers. */
static int big_cmp(const uint64_t *a, const uint64_t *b, int L)
{
    for (int i = L - 1; i >= 0; i--)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}
/* r = a - b, returns the borrow. */
static uint64_t big_sub(uint64_t *r, const uint64_t *a, const uint64_t *b, int L)
{
    uint64_t br = 0;
    for (int i = 0; i < L; i++) {
        const uint64_t d = a[i] - b[i] - br;
        br = (a[i] < b[i]) || (a[i] == b[i] && br);
        r[i] = d;
    }
    return br;
}
/* r = a + b, returns the carry. */
static uint64_t big_add(uint64_t *r, const uint64_t *a, const uint64_t *b, int L)
{
    uint64_t cr = 0;
    for (int i = 0; i < L; i++) {
        const uint64_t s = a[i] + b[i];
        const uint64_t c1 = s < a[i];
        r[i] = s + cr;
        cr = c1 | (r[i] < s);
    }
    return cr;
}

template <class C> static void to_dev(Fe<typename C::P> *d, const typename C::T *a)
{
    static_assert(sizeof(*d) == sizeof(*a), "layout");
    gpu_limbs32(d->v, a->l, C::L);
}
template <class C> static void from_dev(typename C::T *a, const Fe<typename C::P> &d)
{
    for (int i = 0; i < C::L; i++)
        a->l[i] = (uint64_t)d.v[2 * i] | ((uint64_t)d.v[2 * i + 1] << 32);
}
/* a mod p for any a < 2^(64L) (at most 10 subtractions for Fp, 3 for Fr). */
template <class C> static typename C::T reduce(const typename C::T &a)
{
    typename C::T r = a;
    while (big_cmp(r.l, C::mod().l, C::L) >= 0)
        big_sub(r.l, r.l, C::mod().l, C::L);
    return r;
}
template <class C> static bool dev_eq(const Fe<typename C::P> &d, const typename C::T &want)
{
    typename C::T got;
    from_dev<C>(&got, d);
    return memcmp(got.l, want.l, sizeof want.l) == 0;
}
template <class C> static bool dev_reduced(const Fe<typename C::P> &d)
{
    typename C::T got;
    from_dev<C>(&got, d);
    return big_cmp(got.l, C::mod().l, C::L) < 0;
}

/* f_mul(a, b) == cpu_mul(a mod p, b mod p), reduced; the caller keeps a b < p 2^(32N). */
template <class C> static bool check_mul(const typename C::T &a, const typename C::T &b)
{
    typedef typename C::P P;
    Fe<P> da, db;
    to_dev<C>(&da, &a);
    to_dev<C>(&db, &b);
    const typename C::T ra = reduce<C>(a), rb = reduce<C>(b);
    typename C::T want;
    C::mul(&want, &ra, &rb);
    const Fe<P> got = f_mul<P>(da, db);
    bool ok = dev_eq<C>(got, want);
    /* f_mul_raw: < 2p, the same residue */
    const Fe<P> raw = f_mul_raw<P>(da, db);
    typename C::T rr, p2;
    from_dev<C>(&rr, raw);
    big_add(p2.l, C::mod().l, C::mod().l, C::L);
    ok = ok && big_cmp(rr.l, p2.l, C::L) < 0;
    ok = ok && memcmp(reduce<C>(rr).l, want.l, sizeof want.l) == 0;
    if (memcmp(ra.l, rb.l, sizeof ra.l) == 0 && memcmp(a.l, b.l, sizeof a.l) == 0) {
        typename C::T wsq;
        C::sqr(&wsq, &ra);
        ok = ok && dev_eq<C>(f_sqr<P>(da), wsq);
    }
    return ok;
}

/* add/sub/neg/dbl on reduced inputs. */
template <class C> static bool check_linear(const typename C::T &a, const typename C::T &b)
{
    typedef typename C::P P;
    Fe<P> da, db;
    to_dev<C>(&da, &a);
    to_dev<C>(&db, &b);
    typename C::T w;
    bool ok = true;
    C::add(&w, &a, &b);
    ok = ok && dev_eq<C>(f_add<P>(da, db), w);
    C::add(&w, &a, &a);
    ok = ok && dev_eq<C>(f_dbl<P>(da), w);
    C::sub(&w, &a, &b);
    ok = ok && dev_eq<C>(f_sub<P>(da, db), w);
    C::neg(&w, &a);
    ok = ok && dev_eq<C>(f_neg<P>(da), w);
    return ok;
}

/* f_mul's first argument must satisfy a + p <= 2^(32N) (the row sums stay in N + 1 words). */
template <class C> static bool first_ok(const typename C::T &a)
{
    typename C::T s;
    return big_add(s.l, a.l, C::mod().l, C::L) == 0;
}

/* A random integer below 2^(64L) (any bits), below 2p, or a random element. */
template <class C> static typename C::T rand_any(void)
{
    typename C::T r;
    for (int i = 0; i < C::L; i++)
        r.l[i] = test_rand64();
    return r;
}
template <class C> static typename C::T rand_below_2p(void)
{
    typename C::T r, p2;
    big_add(p2.l, C::mod().l, C::mod().l, C::L);
    do {
        r = rand_any<C>();
        r.l[C::L - 1] &= (~0ULL) >> (__builtin_clzll(p2.l[C::L - 1]));
    } while (big_cmp(r.l, p2.l, C::L) >= 0);
    return r;
}

template <class C> static void run_field(unsigned long iters, bool lazy_2p)
{
    typedef typename C::T T;
    typedef typename C::P P;
    const T &p = C::mod();
    T zero, one_raw, one_m, pm1, p2m1, allones, p_itself;
    memset(&zero, 0, sizeof zero);
    one_raw = zero;
    one_raw.l[0] = 1;
    {
        Fe<P> o = f_one<P>();
        from_dev<C>(&one_m, o);
    }
    big_sub(pm1.l, p.l, one_raw.l, C::L);
    big_add(p2m1.l, p.l, pm1.l, C::L);
    memset(&allones, 0xff, sizeof allones);
    p_itself = p;
    const T edges[] = {zero, one_raw, one_m, pm1, p_itself, p2m1, allones};
    const int nedge = (int)(sizeof edges / sizeof edges[0]);
    unsigned long bad = 0, n = 0;

    /* reduced x reduced, and squares */
    for (unsigned long it = 0; it < iters; it++) {
        T a, b;
        C::rand(&a);
        C::rand(&b);
        if (!check_mul<C>(a, b) || !check_mul<C>(a, a) || !check_linear<C>(a, b))
            bad++;
        n += 3;
    }
    /* words of all ones and zeros mixed (long carry runs) */
    for (unsigned long it = 0; it < iters / 4; it++) {
        T a, b;
        for (int i = 0; i < C::L; i++) {
            const uint64_t r = test_rand64();
            a.l[i] = (r & 1) ? ~0ULL : (r & 2) ? 0 : test_rand64();
            b.l[i] = (r & 4) ? ~0ULL : (r & 8) ? 0 : test_rand64();
        }
        a = reduce<C>(a);
        b = reduce<C>(b);
        if (!check_mul<C>(a, b) || !check_mul<C>(a, a) || !check_linear<C>(a, b))
            bad++;
        n += 3;
    }
    /* unreduced a (any a with a + p <= 2^(32N)) times reduced b, and any b times reduced a */
    for (unsigned long it = 0; it < iters / 4; it++) {
        T a, b, any = rand_any<C>();
        do
            a = rand_any<C>();
        while (!first_ok<C>(a));
        C::rand(&b);
        if (!check_mul<C>(a, b) || !check_mul<C>(b, any))
            bad++;
        n += 2;
    }
    /* Fp: both inputs below 2p (lazy values) */
    if (lazy_2p)
        for (unsigned long it = 0; it < iters / 4; it++) {
            T a = rand_below_2p<C>(), b = rand_below_2p<C>();
            if (!check_mul<C>(a, b) || !check_mul<C>(a, a))
                bad++;
            n += 2;
        }
    /* edges against edges and random values */
    for (int i = 0; i < nedge; i++) {
        for (int j = 0; j < nedge; j++) {
            const T &a = edges[i], &b = edges[j];
            const bool a_red = big_cmp(a.l, p.l, C::L) < 0, b_red = big_cmp(b.l, p.l, C::L) < 0;
            const bool a_2p = big_cmp(a.l, p2m1.l, C::L) <= 0;
            const bool b_2p = big_cmp(b.l, p2m1.l, C::L) <= 0;
            if (first_ok<C>(a) && (a_red || b_red || (lazy_2p && a_2p && b_2p))) {
                if (!check_mul<C>(a, b))
                    bad++;
                n++;
            }
            if (a_red && b_red) {
                if (!check_linear<C>(a, b))
                    bad++;
                n++;
            }
        }
        for (int k = 0; k < 200; k++) {
            T r;
            C::rand(&r);
            if ((first_ok<C>(edges[i]) && !check_mul<C>(edges[i], r)) || !check_mul<C>(r, edges[i]))
                bad++;
            n += 2;
            if (big_cmp(edges[i].l, p.l, C::L) < 0 && !check_linear<C>(edges[i], r))
                bad++;
        }
    }
    /* f_from_mont: a 2^(-32N) */
    for (unsigned long it = 0; it < iters / 16; it++) {
        T a, w;
        C::rand(&a);
        Fe<P> da;
        to_dev<C>(&da, &a);
        C::mul(&w, &a, &one_raw);
        if (!dev_eq<C>(f_from_mont<P>(da), w))
            bad++;
        n++;
    }
    printf("%s: %lu groups, %lu bad\n", C::name(), n, bad);
    CHECK(bad == 0);
    (void)dev_reduced<C>;
}

int main(void)
{
    test_init("test_gpu_arith");
    gpu_consts_host_init();
    const unsigned long iters = test_iters(100000);
    run_field<FpCpu>(iters, true);
    run_field<FrCpu>(iters, false);
    CHECK(gpu_cc_lost_ == 0);
    return test_finish();
}
