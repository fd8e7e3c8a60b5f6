/*
 * The device field arithmetic of src/gpu/ff (the Montgomery template of mont.cuh over the
 * fields of bls12_381.cuh), compiled as host code (its carry chains then run with an
 * explicit carry flag, the same instruction sequence as on the device), against the CPU
 * library: Fp (12 x 32-bit limbs) and Fr (8 limbs). Needs no GPU.
 *
 * Inputs: random reduced elements, random unreduced ones within each function's stated
 * bounds (f_mul: a + p <= 2^(32N) and a b < p 2^(32N); for Fp any a, b < 2p qualify, since
 * 4p < 2^384), and edge values (0, 1, p - 1, p, 2p - 1, all-ones words, 2^(32N) - 1). The
 * reference reduces the inputs mod p and uses cuzk_fp_mul etc. gpu_cc_lost_ must stay 0:
 * no carry was dropped where the code's bounds say none can occur.
 * The squaring (f_sqr; f_sqr_raw for Fp, Fr squares through f_mul) is checked on its own
 * inputs (run_sqr): reduced values and, for Fp, values below 2p. It must match f_mul(a, a)
 * bit for bit, raw and reduced, and the CPU squaring. Fp's bounds (2a + p <= 2^384 for all
 * a < 2p) are checked on the modulus.
 */
#include <stdint.h>
#include <string.h>

#include "test.h"

#include "gpu/ff/bls12_381.cuh"

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

/* f_sqr(a) == f_mul(a, a) == cpu_sqr(a mod p), and where the field has it (sqr_fits: Fp)
 * f_sqr_raw(a) == f_mul_raw(a, a) (both add the one M < 2^(32N) with a^2 + M p = 0 mod
 * 2^(32N), so the raw values agree too); a reduced, or for Fp below 2p. */
template <class C> static bool check_sqr(const typename C::T &a)
{
    typedef typename C::P P;
    Fe<P> da;
    to_dev<C>(&da, &a);
    const typename C::T ra = reduce<C>(a);
    typename C::T want;
    C::sqr(&want, &ra);
    const Fe<P> sq = f_sqr<P>(da), mu = f_mul<P>(da, da);
    bool ok = dev_eq<C>(sq, want) && memcmp(&sq, &mu, sizeof sq) == 0;
    if constexpr (sqr_fits<P>::value) {
        const Fe<P> sq_raw = f_sqr_raw<P>(da), mu_raw = f_mul_raw<P>(da, da);
        ok = ok && memcmp(&sq_raw, &mu_raw, sizeof sq_raw) == 0;
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

/* a with bit k set (k < 64 L). */
template <class C> static typename C::T bit_value(int k)
{
    typename C::T r;
    memset(&r, 0, sizeof r);
    r.l[k / 64] = 1ULL << (k % 64);
    return r;
}

/* f_sqr on random reduced values, 32-bit words of special values (0, all ones, top bit
 * alone, all but the top bit, 1: the doubling's carried bits and long carry runs), and
 * edges: 0, 1, the Montgomery one, p - 1, p - 2, 2^k, 2^k - 1, p - 2^k, p with its low
 * words all ones and the next word one less (< p); for Fp also values in [p, 2p), among them
 * 2p with low words all ones and the next one less. */
template <class C> static void run_sqr(unsigned long iters, bool lazy_2p)
{
    typedef typename C::T T;
    typedef typename C::P P;
    const T &p = C::mod();
    T p2;
    big_add(p2.l, p.l, p.l, C::L);
    int bits = 64 * C::L;
    while (!((p.l[(bits - 1) / 64] >> ((bits - 1) % 64)) & 1))
        bits--;
    unsigned long bad = 0, n = 0;
    const auto one = [&](const T &a) {
        if (!check_sqr<C>(a))
            bad++;
        n++;
    };
    for (unsigned long it = 0; it < iters; it++) {
        T a;
        C::rand(&a);
        one(a);
    }
    static const uint32_t special[] = {0, 0xffffffffu, 0x80000000u, 0x7fffffffu, 1};
    for (unsigned long it = 0; it < iters / 4; it++) {
        Fe<P> d;
        for (int j = 0; j < P::N; j++) {
            const uint64_t r = test_rand64();
            d.v[j] = (r & 7) < 5 ? special[r & 7] : (uint32_t)(r >> 32);
        }
        T a;
        from_dev<C>(&a, d);
        a = reduce<C>(a);
        one(a);
    }
    T e, pm;
    memset(&e, 0, sizeof e);
    one(e); /* 0 */
    e.l[0] = 1;
    one(e);
    from_dev<C>(&e, f_one<P>());
    one(e);
    for (int k = 0; k < bits; k++) {
        const T b = bit_value<C>(k);
        T t;
        big_sub(t.l, b.l, bit_value<C>(0).l, C::L); /* 2^k - 1 < p */
        one(t);
        big_sub(t.l, p.l, b.l, C::L); /* p - 2^k */
        one(t);
        if (k < bits - 1) /* 2^(bits-1) <= p */
            one(b);
        if (lazy_2p) {
            big_add(t.l, p.l, b.l, C::L); /* p + 2^k, p + 2^k - 1 < 2p */
            one(t);
            big_sub(t.l, t.l, bit_value<C>(0).l, C::L);
            one(t);
            big_sub(t.l, p2.l, b.l, C::L); /* 2p - 2^k */
            one(t);
        }
    }
    big_sub(pm.l, p.l, bit_value<C>(1).l, C::L); /* p - 2 */
    one(pm);
    /* the largest values below p (for Fp also 2p) with words 0..j-1 all ones, word j below
     * the bound's (row sums near their bounds) */
    for (int b = 0; b < (lazy_2p ? 2 : 1); b++)
        for (int j = 0; j < P::N; j++) {
            Fe<P> d;
            to_dev<C>(&d, b ? &p2 : &p);
            if (d.v[j] == 0)
                continue;
            d.v[j]--;
            for (int k = 0; k < j; k++)
                d.v[k] = 0xffffffffu;
            from_dev<C>(&e, d);
            one(e);
        }
    if (lazy_2p) {
        for (unsigned long it = 0; it < iters / 4; it++)
            one(rand_below_2p<C>());
        big_sub(e.l, p2.l, bit_value<C>(0).l, C::L); /* 2p - 1 */
        one(e);
        one(p);
    }
    printf("%s sqr: %lu values, %lu bad\n", C::name(), n, bad);
    CHECK(bad == 0);
}

/* The same Fr parameters without the low-form specialisation: the reduction rows with every
 * product (mont_row_reduce_any). */
GPU_FIELD_PARAMS(FrAnyP, 8, fr)

/* Fr's reduction rows without the products by r's words 0 and 1 (mont_low_form): the words
 * are 1 and 2^32 - 1, and f_mul_raw equals the form with every product bit for bit (both add
 * the one M < 2^256 with a b + M r = 0 mod 2^256), on random values, values whose word 0 is
 * 0 (a row's t_0 = 0: hi(m r_1) = 0) and edges. */
static void run_fr_low_form(unsigned long iters)
{
    CHECK(mont_low_form<FrP>::value && !mont_low_form<FrAnyP>::value);
    CHECK(FrP::p(0) == 1 && FrP::p(1) == 0xffffffffu);
    unsigned long bad = 0, n = 0;
    for (unsigned long it = 0; it < iters; it++) {
        cuzk_fr a, b;
        test_rand_fr(&a);
        test_rand_fr(&b);
        if (it % 3 == 1)
            a.l[0] &= ~0xffffffffULL;
        if (it % 3 == 2)
            a.l[0] = b.l[0] = 0;
        if (it % 5 == 0)
            b = a;
        Fe<FrP> da, db;
        Fe<FrAnyP> ga, gb;
        gpu_limbs32(da.v, a.l, 4);
        gpu_limbs32(db.v, b.l, 4);
        memcpy(ga.v, da.v, sizeof ga.v);
        memcpy(gb.v, db.v, sizeof gb.v);
        const Fe<FrP> r = f_mul_raw<FrP>(da, db);
        const Fe<FrAnyP> g = f_mul_raw<FrAnyP>(ga, gb);
        if (memcmp(r.v, g.v, sizeof r.v) != 0 || !check_mul<FrCpu>(a, b) ||
            !check_mul<FrCpu>(b, a))
            bad++;
        n++;
    }
    printf("fr low form: %lu products, %lu differ\n", n, bad);
    CHECK(bad == 0);
}

/* Fr's lazy sums and differences modulo 2r (FrDblP, the NTT's butterflies): for a, b in
 * [0, 2r), f_add / f_sub with M = FrDblP give a value in [0, 2r) congruent to a + b / a - b
 * mod r; FrDblP's words are 2r's; and f_mul_raw(w, x) of a reduced w and such an x is below
 * 2r with the residue of w x 2^-256 (the butterflies' products). Random values below 2r,
 * edges 0, 1, r - 1, r, r + 1, 2r - 1 and values with long runs of all-ones words. */
static void run_fr_lazy(unsigned long iters)
{
    const cuzk_fr &r = CUZK_FR_MODULUS;
    cuzk_fr r2, one, e[6];
    CHECK(big_add(r2.l, r.l, r.l, CUZK_FR_LIMBS) == 0);
    {
        Fe<FrP> w;
        for (int j = 0; j < 8; j++)
            w.v[j] = FrDblP::p(j);
        CHECK(dev_eq<FrCpu>(w, r2));
    }
    memset(&one, 0, sizeof one);
    one.l[0] = 1;
    memset(e, 0, sizeof e);
    e[1] = one;
    big_sub(e[2].l, r.l, one.l, CUZK_FR_LIMBS);
    e[3] = r;
    big_add(e[4].l, r.l, one.l, CUZK_FR_LIMBS);
    big_sub(e[5].l, r2.l, one.l, CUZK_FR_LIMBS);
    unsigned long bad = 0, n = 0;
    const auto check = [&](const cuzk_fr &a, const cuzk_fr &b) {
        Fe<FrP> da, db;
        to_dev<FrCpu>(&da, &a);
        to_dev<FrCpu>(&db, &b);
        const cuzk_fr ra = reduce<FrCpu>(a), rb = reduce<FrCpu>(b);
        cuzk_fr ws, wd, got;
        cuzk_fr_add(&ws, &ra, &rb);
        cuzk_fr_sub(&wd, &ra, &rb);
        from_dev<FrCpu>(&got, f_add<FrP, FrDblP>(da, db));
        bool ok = big_cmp(got.l, r2.l, CUZK_FR_LIMBS) < 0 &&
                  memcmp(reduce<FrCpu>(got).l, ws.l, sizeof ws.l) == 0;
        from_dev<FrCpu>(&got, f_sub<FrP, FrDblP>(da, db));
        ok = ok && big_cmp(got.l, r2.l, CUZK_FR_LIMBS) < 0 &&
             memcmp(reduce<FrCpu>(got).l, wd.l, sizeof wd.l) == 0;
        /* the product of a reduced twiddle and a lazy value (check_mul: raw < 2r) */
        ok = ok && check_mul<FrCpu>(rb, a) && check_mul<FrCpu>(ra, b);
        if (!ok)
            bad++;
        n++;
    };
    for (unsigned long it = 0; it < iters; it++) {
        cuzk_fr a = rand_below_2p<FrCpu>(), b = rand_below_2p<FrCpu>();
        if (it % 4 == 1) { /* all-ones and zero words (long carry runs), kept below 2r */
            for (int i = 0; i < CUZK_FR_LIMBS - 1; i++)
                a.l[i] = (test_rand64() & 1) ? ~0ULL : 0;
            b = a;
            b.l[0] ^= 1;
            for (cuzk_fr *x : {&a, &b})
                if (big_cmp(x->l, r2.l, CUZK_FR_LIMBS) >= 0)
                    big_sub(x->l, x->l, r.l, CUZK_FR_LIMBS);
        }
        check(a, b);
        check(b, a);
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            check(e[i], e[j]);
    printf("fr lazy (mod 2r): %lu pairs, %lu bad\n", n, bad);
    CHECK(bad == 0);
}

int main(void)
{
    test_init("test_gpu_arith");
    gpu_consts_host_init();
    const unsigned long iters = test_iters(100000);
    run_field<FpCpu>(iters, true);
    run_field<FrCpu>(iters, false);
    run_fr_low_form(iters / 4);
    run_fr_lazy(iters / 4);
    {
        /* f_sqr_raw<FpP> needs 2a + p <= 2^384 for all a < 2p: 5p < 2^384 */
        const cuzk_fp &p = CUZK_FP_MODULUS;
        cuzk_fp p2, p4, p5;
        uint64_t carry = big_add(p2.l, p.l, p.l, CUZK_FP_LIMBS);
        carry |= big_add(p4.l, p2.l, p2.l, CUZK_FP_LIMBS);
        carry |= big_add(p5.l, p4.l, p.l, CUZK_FP_LIMBS);
        CHECK(carry == 0);
    }
    run_sqr<FpCpu>(iters, true);
    run_sqr<FrCpu>(iters, false);
    CHECK(gpu_cc_lost_ == 0);
    return test_finish();
}
