/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mutation fuzzing of every reader of user input: .wtns (as a file and as an image in
 * memory, which must agree), .r1cs, .zkey, bellman .params and its decoded cache, snarkjs's proof.json, public.json and verification_key.json, Filecoin's
 * 192-byte proof, and the point decoders. Each case takes a valid seed (the fixtures of
 * tests/data/circuits, keys and proofs made here), applies one to four mutations (byte and
 * bit flips, random bytes, truncation, junk appended, a length or count field overwritten
 * with an edge value, spans and whole sections duplicated or removed, a point replaced by
 * one off the curve, outside the subgroup or at infinity, a JSON token replaced), writes it
 * to a file and loads it with the public reader.
 *
 * A load returns CUZK_OK or an error whose detail is non-empty and names the file; it never
 * runs out of memory (the seeds are small: a failed allocation was sized by a forged field)
 * and never takes long. What is accepted is used: counts checked against the file size,
 * witnesses checked, keys proved with, proofs verified (a proof, key or public input that
 * verifies must be the seed's own). AddressSanitizer and UBSan catch the rest. Per format it
 * prints how many mutants were accepted and which errors rejected the others. A failing case
 * prints its mutations and keeps the mutant in /tmp; CUZK_TEST_SEED repeats the run.
 *
 * Regression cases (specific mutations of the fixtures that broke a reader, and limits)
 * run before the random ones.
 */
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "test_circuit.h"
#include "test_files.h"
#include "test_points.h"

#include "cuzk/groth16.h"
#include "cuzk/params.h"
#include "setup/bellman.h"
#include "util/parallel.h"
#include "util/timing.h"

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif

#ifdef FUZZ_ASAN
/* A forged size must not reach malloc: allocations above 1 GiB fail (and the loader's
 * CUZK_ENOMEM fails the case) instead of being attempted. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}
#endif

#define CASE_SLOW_MS 15000.0  /* one load taking longer is reported as a hang */
#define MAX_SEEDS 12
#define MAX_KEPT 10           /* failing mutants kept in /tmp */

static char tmp_dir[256];

static uint64_t rnd(uint64_t n) { return n ? test_rand64() % n : 0; }

/* ---- the mutable buffer and the log of what was done to it ---- */

typedef struct {
    uint8_t *b;
    size_t n, cap;
} mbuf;

static void mb_reserve(mbuf *m, size_t n)
{
    if (n + 1 > m->cap) {
        m->cap = 2 * n + 64;
        m->b = xrealloc(m->b, m->cap);
    }
}

static void mb_set(mbuf *m, const uint8_t *b, size_t n)
{
    mb_reserve(m, n);
    memcpy(m->b, b, n);
    m->n = n;
}

/* Inserts n bytes at `at` (src may point into m). */
static void mb_insert(mbuf *m, size_t at, const uint8_t *src, size_t n)
{
    uint8_t *tmp = xrealloc(NULL, n);
    memcpy(tmp, src, n);
    mb_reserve(m, m->n + n);
    memmove(m->b + at + n, m->b + at, m->n - at);
    memcpy(m->b + at, tmp, n);
    m->n += n;
    free(tmp);
}

static void mb_erase(mbuf *m, size_t at, size_t n)
{
    memmove(m->b + at, m->b + at + n, m->n - at - n);
    m->n -= n;
}

static char mlog[1024];
static size_t mlog_len;

static void mlogf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mlogf(const char *fmt, ...)
{
    if (mlog_len + 2 >= sizeof mlog)
        return;
    if (mlog_len)
        mlog[mlog_len++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(mlog + mlog_len, sizeof mlog - mlog_len, fmt, ap);
    va_end(ap);
    if (k > 0)
        mlog_len += (size_t)k < sizeof mlog - mlog_len ? (size_t)k : sizeof mlog - mlog_len - 1;
}

/* ---- points: encodings and the replacements a mutation puts in their place ---- */

enum { PT_SJ_G1, PT_SJ_G2, PT_UNC_G1, PT_UNC_G2, PT_CMP_G1, PT_CMP_G2, PT_KINDS };
static const size_t pt_len[PT_KINDS] = {96, 192, 96, 192, 48, 96};
static const char *const pt_name[PT_KINDS] = {"snarkjs G1", "snarkjs G2", "uncompressed G1",
                                              "uncompressed G2", "compressed G1",
                                              "compressed G2"};
enum { PV_INF, PV_OFF_SUBGROUP, PV_OFF_CURVE, PV_ZERO, PV_GENERATOR, PV_RANDOM, PV_NONCANON,
       PV_COUNT };
static const char *const pv_name[PV_COUNT] = {"infinity", "off-subgroup", "off-curve", "zeros",
                                              "generator", "random", "non-canonical"};
static uint8_t pt_enc[PT_KINDS][PV_COUNT][192];

static bool pt_is_g2(int kind)
{
    return kind == PT_SJ_G2 || kind == PT_UNC_G2 || kind == PT_CMP_G2;
}

static void enc_g1(int kind, uint8_t *out, const cuzk_g1_affine *p)
{
    if (kind == PT_SJ_G1)
        cuzk_g1_to_snarkjs(out, p);
    else if (kind == PT_UNC_G1)
        cuzk_g1_to_uncompressed(out, p);
    else
        cuzk_g1_to_compressed(out, p);
}

static void enc_g2(int kind, uint8_t *out, const cuzk_g2_affine *p)
{
    if (kind == PT_SJ_G2)
        cuzk_g2_to_snarkjs(out, p);
    else if (kind == PT_UNC_G2)
        cuzk_g2_to_uncompressed(out, p);
    else
        cuzk_g2_to_compressed(out, p);
}

static cuzk_err dec_point(int kind, const uint8_t *in, unsigned flags, cuzk_g1_affine *p1,
                          cuzk_g2_affine *p2)
{
    switch (kind) {
    case PT_SJ_G1: return cuzk_g1_from_snarkjs(p1, in, flags);
    case PT_SJ_G2: return cuzk_g2_from_snarkjs(p2, in, flags);
    case PT_UNC_G1: return cuzk_g1_from_uncompressed(p1, in, flags);
    case PT_UNC_G2: return cuzk_g2_from_uncompressed(p2, in, flags);
    case PT_CMP_G1: return cuzk_g1_from_compressed(p1, in, flags);
    default: return cuzk_g2_from_compressed(p2, in, flags);
    }
}

static void init_point_encodings(void)
{
    cuzk_g1_affine g1[PV_COUNT];
    cuzk_g2_affine g2[PV_COUNT];
    cuzk_fp one;
    cuzk_fp_set_one(&one);
    cuzk_g1_affine_set_inf(&g1[PV_INF]);
    cuzk_g2_affine_set_inf(&g2[PV_INF]);
    test_g1_off_subgroup(&g1[PV_OFF_SUBGROUP]);
    test_g2_off_subgroup(&g2[PV_OFF_SUBGROUP]);
    cuzk_g1_generator(&g1[PV_GENERATOR]);
    cuzk_g2_generator(&g2[PV_GENERATOR]);
    test_g1_rand(&g1[PV_RANDOM]);
    test_g2_rand(&g2[PV_RANDOM]);
    g1[PV_OFF_CURVE] = g1[PV_RANDOM];
    cuzk_fp_add(&g1[PV_OFF_CURVE].y, &g1[PV_OFF_CURVE].y, &one);
    g2[PV_OFF_CURVE] = g2[PV_RANDOM];
    cuzk_fp_add(&g2[PV_OFF_CURVE].y.c0, &g2[PV_OFF_CURVE].y.c0, &one);
    g1[PV_ZERO] = g1[PV_NONCANON] = g1[PV_RANDOM];
    g2[PV_ZERO] = g2[PV_NONCANON] = g2[PV_RANDOM];

    /* p in both byte orders, for a coordinate that is not below the modulus */
    uint8_t p_le[CUZK_FP_BYTES], p_be[CUZK_FP_BYTES];
    memcpy(p_le, CUZK_FP_MODULUS.l, CUZK_FP_BYTES);
    for (int i = 0; i < CUZK_FP_BYTES; i++)
        p_be[i] = p_le[CUZK_FP_BYTES - 1 - i];

    for (int k = 0; k < PT_KINDS; k++) {
        for (int v = 0; v < PV_COUNT; v++) {
            uint8_t *o = pt_enc[k][v];
            if (pt_is_g2(k))
                enc_g2(k, o, &g2[v]);
            else
                enc_g1(k, o, &g1[v]);
        }
        memset(pt_enc[k][PV_ZERO], 0, pt_len[k]);
        uint8_t *nc = pt_enc[k][PV_NONCANON];
        if (k == PT_SJ_G1 || k == PT_SJ_G2) {
            memcpy(nc, p_le, CUZK_FP_BYTES);
        } else {
            uint8_t flags = nc[0] & 0xe0;
            memcpy(nc, p_be, CUZK_FP_BYTES);
            nc[0] |= flags;
        }
        if (k == PT_CMP_G1 || k == PT_CMP_G2) {
            /* compressed: "off the curve" is an x without a point (no square root) */
            uint8_t *o = pt_enc[k][PV_OFF_CURVE];
            cuzk_g1_affine t1;
            cuzk_g2_affine t2;
            for (;;) {
                test_rand_bytes(o, pt_len[k]);
                o[0] = (uint8_t)((o[0] & 0x0f) | 0x80);
                if (k == PT_CMP_G2)
                    o[48] &= 0x0f;
                if (dec_point(k, o, 0, &t1, &t2) == CUZK_ENOT_SQUARE)
                    break;
            }
        }
    }
}

/* ---- seeds: valid inputs with what a mutation may aim at ---- */

typedef struct {
    size_t off;
    uint8_t width;   /* 4 or 8 bytes */
    bool be;         /* big-endian (the .params lengths) */
} field;

typedef struct {
    size_t off, len;   /* a section, a vector: duplicated or removed whole */
} span;

typedef struct {
    size_t off;
    int kind;          /* PT_* */
} slot;

typedef struct circuit_ctx circuit_ctx;

typedef struct {
    char name[64];
    uint8_t *b;
    size_t n;
    field *fields;
    size_t n_fields;
    span *spans;
    size_t n_spans;
    slot *slots;
    size_t n_slots;
    cuzk_err want;           /* what the unmutated seed gives */
    const circuit_ctx *ctx;  /* the circuit whose files it came from (or NULL) */
    int kind;                /* points: the PT_* of the seed */
} seed;

static void add_field(seed *s, size_t off, unsigned width, bool be)
{
    if (off + width > s->n)
        return;
    s->fields = xrealloc(s->fields, (s->n_fields + 1) * sizeof *s->fields);
    s->fields[s->n_fields++] = (field){off, (uint8_t)width, be};
}

static void add_span(seed *s, size_t off, size_t len)
{
    if (off + len > s->n || len == 0)
        return;
    s->spans = xrealloc(s->spans, (s->n_spans + 1) * sizeof *s->spans);
    s->spans[s->n_spans++] = (span){off, len};
}

static void add_slots(seed *s, size_t off, size_t count, int kind)
{
    s->slots = xrealloc(s->slots, (s->n_slots + count) * sizeof *s->slots);
    for (size_t i = 0; i < count && off + (i + 1) * pt_len[kind] <= s->n; i++)
        s->slots[s->n_slots++] = (slot){off + i * pt_len[kind], kind};
}

static void seed_free(seed *s)
{
    free(s->b);
    free(s->fields);
    free(s->spans);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

static uint32_t rd32le(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The iden3 container: header fields, every section header, each section whole, and the
 * first words of every payload (counts and field sizes live there). */
static void iden3_meta(seed *s)
{
    add_field(s, 4, 4, false);
    add_field(s, 8, 4, false);
    uint32_t nsec = rd32le(s->b + 8);
    size_t pos = 12;
    for (uint32_t i = 0; i < nsec && pos + 12 <= s->n; i++) {
        uint64_t size;
        memcpy(&size, s->b + pos + 4, 8);
        add_field(s, pos, 4, false);
        add_field(s, pos + 4, 8, false);
        add_span(s, pos, 12 + size);
        for (size_t k = 0; k < 8 && 4 * k + 4 <= size; k++)
            add_field(s, pos + 12 + 4 * k, 4, false);
        pos += 12 + size;
    }
}

/* Payload offset and size of section id, or false. */
static bool iden3_section(const seed *s, uint32_t id, size_t *off, size_t *len)
{
    uint32_t nsec = rd32le(s->b + 8);
    size_t pos = 12;
    for (uint32_t i = 0; i < nsec && pos + 12 <= s->n; i++) {
        uint64_t size;
        memcpy(&size, s->b + pos + 4, 8);
        if (rd32le(s->b + pos) == id) {
            *off = pos + 12;
            *len = size;
            return true;
        }
        pos += 12 + size;
    }
    return false;
}

static void wtns_meta(seed *s)
{
    iden3_meta(s);
    size_t off, len;
    if (iden3_section(s, 1, &off, &len))
        add_field(s, off + 4 + CUZK_FR_BYTES, 4, false);   /* the count */
}

static void r1cs_meta(seed *s)
{
    iden3_meta(s);
    size_t off, len;
    if (iden3_section(s, 1, &off, &len)) {
        /* n_wires, n_pub_out, n_pub_in, n_prv_in, n_labels (u64), n_constraints */
        size_t h = off + 4 + CUZK_FR_BYTES;
        for (int k = 0; k < 4; k++)
            add_field(s, h + 4 * k, 4, false);
        add_field(s, h + 16, 8, false);
        add_field(s, h + 24, 4, false);
    }
    if (iden3_section(s, 2, &off, &len)) {
        /* the term counts and wires of the first constraints; each constraint a span */
        size_t p = off, end = off + len;
        for (int i = 0; i < 64 && p < end; i++) {
            size_t start = p;
            for (int m = 0; m < 3 && p + 4 <= end; m++) {
                uint32_t nt = rd32le(s->b + p);
                add_field(s, p, 4, false);
                p += 4;
                for (uint32_t k = 0; k < nt && p + 4 + CUZK_FR_BYTES <= end; k++) {
                    add_field(s, p, 4, false);
                    p += 4 + CUZK_FR_BYTES;
                }
            }
            add_span(s, start, p - start);
        }
    }
}

static void zkey_meta(seed *s)
{
    iden3_meta(s);
    size_t off, len;
    if (iden3_section(s, 2, &off, &len)) {
        size_t h = off + 4 + CUZK_FP_BYTES + 4 + CUZK_FR_BYTES;   /* n_vars */
        add_field(s, off + 4 + CUZK_FP_BYTES, 4, false);           /* n8r */
        for (int k = 0; k < 3; k++)
            add_field(s, h + 4 * k, 4, false);
        size_t v = h + 12;
        static const int vk_kind[6] = {PT_SJ_G1, PT_SJ_G1, PT_SJ_G2, PT_SJ_G2, PT_SJ_G1, PT_SJ_G2};
        for (int k = 0; k < 6; k++) {
            add_slots(s, v, 1, vk_kind[k]);
            v += pt_len[vk_kind[k]];
        }
    }
    if (iden3_section(s, 4, &off, &len)) {
        /* matrix, constraint and signal of the first entries, and random ones */
        uint32_t n = rd32le(s->b + off);
        for (uint32_t i = 0; i < n; i++) {
            if (i >= 32 && rnd(8) != 0)
                continue;
            size_t e = off + 4 + (size_t)i * (12 + CUZK_FR_BYTES);
            for (int k = 0; k < 3; k++)
                add_field(s, e + 4 * k, 4, false);
        }
    }
    static const struct { uint32_t id; int kind; } vec[] = {
        {3, PT_SJ_G1}, {5, PT_SJ_G1}, {6, PT_SJ_G1}, {7, PT_SJ_G2}, {8, PT_SJ_G1}, {9, PT_SJ_G1},
    };
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++)
        if (iden3_section(s, vec[k].id, &off, &len))
            add_slots(s, off, len / pt_len[vec[k].kind], vec[k].kind);
}

#define PARAMS_VK_BYTES (3 * 96 + 3 * 192)

static void params_meta(seed *s, const cuzk_params *p)
{
    const uint32_t n[6] = {p->n_ic, p->n_h, p->n_l, p->n_a, p->n_b_g1, p->n_b_g2};
    static const int vk_kind[6] = {PT_UNC_G1, PT_UNC_G1, PT_UNC_G2, PT_UNC_G2, PT_UNC_G1,
                                   PT_UNC_G2};
    size_t off = 0;
    for (int k = 0; k < 6; k++) {
        add_slots(s, off, 1, vk_kind[k]);
        off += pt_len[vk_kind[k]];
    }
    add_span(s, 0, off);
    for (int v = 0; v < 6; v++) {
        int kind = v == 5 ? PT_UNC_G2 : PT_UNC_G1;
        add_field(s, off, 4, true);
        add_span(s, off, 4 + (size_t)n[v] * pt_len[kind]);
        add_slots(s, off + 4, n[v], kind);
        off += 4 + (size_t)n[v] * pt_len[kind];
    }
}

/* ---- formats ---- */

typedef struct fmt fmt;
typedef cuzk_err (*load_fn)(const seed *s, const char *path, const uint8_t *b, size_t n);

struct fmt {
    const char *name;
    const char *ext;         /* of the file a mutant is written to */
    bool text;               /* JSON: token mutations */
    bool in_memory;          /* decoders of a fixed-length buffer: no file, no length change */
    unsigned long iters;
    load_fn load;
    seed seeds[MAX_SEEDS];
    int n_seeds;
    char path[400];          /* where mutants are written ("": tmp_dir/mutant.ext) */
    /* results */
    unsigned long cases, accepted, rejected[CUZK_ERR_COUNT_];
    unsigned long used;      /* accepted mutants used: witnesses checked, proofs verified */
    unsigned long big_circuits;   /* r1cs: bellman circuits too large for memory */
    double ms;
};

static void fmt_add_seed(fmt *f, seed *s) { f->seeds[f->n_seeds++] = *s; }

static fmt *cur_fmt;   /* the format being fuzzed */

/* ---- JSON tokens ---- */

static char **json_repl;
static size_t n_json_repl;

static void add_repl(const char *s)
{
    json_repl = xrealloc(json_repl, (n_json_repl + 1) * sizeof *json_repl);
    json_repl[n_json_repl++] = strdup(s);
}

/* out = a + 1 as decimal strings. */
static void dec_inc(char *out, const char *a)
{
    size_t n = strlen(a);
    memcpy(out + 1, a, n + 1);
    out[0] = '0';
    for (size_t i = n + 1; i-- > 0;) {
        if (out[i] == '9') {
            out[i] = '0';
        } else {
            out[i]++;
            break;
        }
    }
    if (out[0] == '0')
        memmove(out, out + 1, n + 1);
}

static void init_json_repl(void)
{
    static const char *const fixed[] = {
        "\"0\"", "\"1\"", "\"2\"", "\"\"", "\"-1\"", "\"01\"", "\"00\"", "\"1.0\"", "\" 1\"",
        "\"1 \"", "\"0x10\"", "\"1e3\"", "\"\\u0000\"", "\"1\\u00001\"", "\"\\ud800\"",
        "0", "1", "-1", "3", "-0", "1.5", "1e400", "4294967294", "4294967295", "4294967296",
        "9223372036854775807", "18446744073709551616", "null", "true", "false", "[]", "{}",
        "[\"1\"]", "[[\"1\"]]", "[\"0\", \"1\", \"0\"]", "{\"a\": 1}", "\"groth16\"",
        "\"plonk\"", "\"bls12381\"", "\"bn128\"",
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        add_repl(fixed[i]);
    /* p - 1, p, p + 1, r - 1, r, 10^115, a string of 117 digits and one of 300 */
    char a[CUZK_FP_DEC_MAX + 4], b[CUZK_FP_DEC_MAX + 4], q[400];
    cuzk_fp m1;
    cuzk_fp_set_one(&m1);
    cuzk_fp_neg(&m1, &m1);
    cuzk_fp_to_dec(a, &m1);
    snprintf(q, sizeof q, "\"%s\"", a);
    add_repl(q);
    dec_inc(b, a);
    snprintf(q, sizeof q, "\"%s\"", b);
    add_repl(q);
    dec_inc(a, b);
    snprintf(q, sizeof q, "\"%s\"", a);
    add_repl(q);
    cuzk_fr r1;
    cuzk_fr_set_one(&r1);
    cuzk_fr_neg(&r1, &r1);
    cuzk_fr_to_dec(a, &r1);
    snprintf(q, sizeof q, "\"%s\"", a);
    add_repl(q);
    dec_inc(b, a);
    snprintf(q, sizeof q, "\"%s\"", b);
    add_repl(q);
    memset(q, '0', sizeof q);
    q[0] = '"';
    q[1] = '1';
    q[117] = '"';
    q[118] = 0;
    add_repl(q);
    memset(q, '9', sizeof q);
    q[0] = '"';
    q[118] = '"';
    q[119] = 0;
    add_repl(q);
    memset(q, '7', sizeof q);
    q[0] = '"';
    q[301] = '"';
    q[302] = 0;
    add_repl(q);
}

typedef struct {
    size_t off, len;
} token;

/* Strings, numbers and literals of a JSON text (a rough scan: mutants need not parse). */
static size_t json_scan(const mbuf *m, token *t, size_t max)
{
    size_t n = 0, i = 0;
    while (i < m->n && n < max) {
        uint8_t c = m->b[i];
        size_t j = i + 1;
        if (c == '"') {
            while (j < m->n && m->b[j] != '"')
                j += m->b[j] == '\\' ? 2 : 1;
            j = j < m->n ? j + 1 : m->n;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            while (j < m->n && m->b[j] && strchr("+-.eE0123456789", m->b[j]))
                j++;
        } else if (c >= 'a' && c <= 'z') {
            while (j < m->n && m->b[j] >= 'a' && m->b[j] <= 'z')
                j++;
        } else {
            i++;
            continue;
        }
        t[n++] = (token){i, j - i};
        i = j;
    }
    return n;
}

static void mut_token(mbuf *m)
{
    static token t[8192];
    size_t n = json_scan(m, t, sizeof t / sizeof t[0]);
    if (n == 0)
        return;
    token k = t[rnd(n)];
    unsigned how = (unsigned)rnd(10);
    if (how == 0) {
        mb_erase(m, k.off, k.len);
        mlogf("token-del@%zu+%zu", k.off, k.len);
    } else if (how == 1) {
        /* the token once more, before itself: arrays grow by one */
        uint8_t *dup = xrealloc(NULL, k.len + 2);
        memcpy(dup, m->b + k.off, k.len);
        memcpy(dup + k.len, ", ", 2);
        mb_insert(m, k.off, dup, k.len + 2);
        free(dup);
        mlogf("token-dup@%zu+%zu", k.off, k.len);
    } else {
        const char *r = json_repl[rnd(n_json_repl)];
        mb_erase(m, k.off, k.len);
        mb_insert(m, k.off, (const uint8_t *)r, strlen(r));
        mlogf("token@%zu+%zu=%.24s", k.off, k.len, r);
    }
}

/* ---- mutations ---- */

static uint64_t rd_field(const uint8_t *p, unsigned w, bool be)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < w; i++)
        v |= (uint64_t)p[be ? w - 1 - i : i] << (8 * i);
    return v;
}

static void wr_field(uint8_t *p, unsigned w, bool be, uint64_t v)
{
    for (unsigned i = 0; i < w; i++)
        p[be ? w - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static void mut_byte(mbuf *m)
{
    if (!m->n)
        return;
    size_t at = rnd(m->n);
    uint8_t x = (uint8_t)(1 + rnd(255));
    m->b[at] ^= x;
    mlogf("byte@%zu^%02x", at, x);
}

static void mut_bit(mbuf *m)
{
    if (!m->n)
        return;
    size_t at = rnd(m->n);
    unsigned bit = (unsigned)rnd(8);
    m->b[at] ^= (uint8_t)(1u << bit);
    mlogf("bit@%zu.%u", at, bit);
}

static void mut_random(mbuf *m)
{
    if (!m->n)
        return;
    size_t at = rnd(m->n), len = 1 + rnd(16);
    if (len > m->n - at)
        len = m->n - at;
    test_rand_bytes(m->b + at, len);
    mlogf("rand@%zu+%zu", at, len);
}

static void mut_trunc(mbuf *m, const seed *s)
{
    size_t len;
    unsigned how = (unsigned)rnd(4);
    if (how == 0)
        len = rnd((m->n < 64 ? m->n : 64) + 1);   /* inside the headers */
    else if (how == 1 && s->n_fields)
        len = s->fields[rnd(s->n_fields)].off + rnd(9);
    else if (how == 2 && s->n_spans) {
        span sp = s->spans[rnd(s->n_spans)];
        len = sp.off + rnd(sp.len + 1);
    } else
        len = rnd(m->n + 1);
    if (len > m->n)
        len = m->n;
    m->n = len;
    mlogf("trunc=%zu", len);
}

static void mut_extend(mbuf *m)
{
    size_t len = 1 + rnd(rnd(4) ? 64 : 512);
    uint8_t junk[512];
    unsigned how = (unsigned)rnd(3);
    if (how == 0)
        memset(junk, 0, len);
    else if (how == 1 && m->n)
        for (size_t i = 0; i < len; i++)
            junk[i] = m->b[i % m->n];
    else
        test_rand_bytes(junk, len);
    mb_insert(m, m->n, junk, len);
    mlogf("extend+%zu/%u", len, how);
}

static void mut_field(mbuf *m, const seed *s, bool be_default)
{
    unsigned w;
    size_t off;
    bool be;
    if (s->n_fields && rnd(4) != 0) {
        field f = s->fields[rnd(s->n_fields)];
        w = f.width;
        off = f.off;
        be = f.be;
    } else {
        w = rnd(3) == 0 ? 8 : 4;
        off = m->n >= w ? rnd(m->n - w + 1) & ~(size_t)3 : 0;
        be = be_default;
    }
    if (m->n < w)
        return;
    if (off + w > m->n)
        off = m->n - w;
    uint64_t old = rd_field(m->b + off, w, be), v;
    uint64_t max = w == 4 ? UINT32_MAX : UINT64_MAX;
    switch (rnd(14)) {
    case 0: v = 0; break;
    case 1: v = 1 + rnd(16); break;
    case 2: v = max; break;
    case 3: v = max >> 1; break;
    case 4: v = (max >> 1) + 1; break;
    case 5: v = old + 1; break;
    case 6: v = old - 1; break;
    case 7: v = m->n; break;
    case 8: v = m->n - off; break;
    case 9: v = old * 2; break;
    case 10: v = old ^ (1ULL << rnd(8 * w)); break;
    case 11: v = max - rnd(64); break;
    case 12: v = (uint64_t)1 << rnd(8 * w); break;
    default: v = test_rand64(); break;
    }
    if (w == 4)
        v &= UINT32_MAX;
    wr_field(m->b + off, w, be, v);
    mlogf("u%u%s@%zu:%#llx=%#llx", 8 * w, be ? "be" : "", off, (unsigned long long)old,
          (unsigned long long)v);
}

static void pick_span(const mbuf *m, const seed *s, size_t *off, size_t *len)
{
    if (s->n_spans && rnd(2)) {
        span sp = s->spans[rnd(s->n_spans)];
        *off = sp.off;
        *len = sp.len;
    } else {
        *off = rnd(m->n + 1);
        *len = 1 + rnd(rnd(2) ? 16 : m->n / 4 + 1);
    }
    if (*off > m->n)
        *off = m->n;
    if (*len > m->n - *off)
        *len = m->n - *off;
}

static void mut_dup(mbuf *m, const seed *s)
{
    size_t off, len;
    pick_span(m, s, &off, &len);
    if (!len)
        return;
    size_t at = rnd(2) ? off + len : rnd(m->n + 1);
    mb_insert(m, at, m->b + off, len);
    mlogf("dup@%zu+%zu->%zu", off, len, at);
}

static void mut_cut(mbuf *m, const seed *s)
{
    size_t off, len;
    pick_span(m, s, &off, &len);
    if (!len)
        return;
    mb_erase(m, off, len);
    mlogf("cut@%zu+%zu", off, len);
}

static void mut_point(mbuf *m, const seed *s)
{
    slot sl = s->slots[rnd(s->n_slots)];
    size_t len = pt_len[sl.kind];
    if (sl.off + len > m->n) {
        mut_byte(m);
        return;
    }
    int v = (int)rnd(PV_COUNT);
    memcpy(m->b + sl.off, pt_enc[sl.kind][v], len);
    mlogf("point@%zu=%s", sl.off, pv_name[v]);
}

enum { M_BYTE, M_BIT, M_RANDOM, M_TRUNC, M_EXTEND, M_FIELD, M_DUP, M_CUT, M_POINT, M_TOKEN,
       M_KINDS };

static void mutate_once(const fmt *f, const seed *s, mbuf *m, bool be_default)
{
    /* weights per kind: binary files, JSON texts, fixed-length buffers */
    static const unsigned w_bin[M_KINDS] = {12, 10, 8, 10, 5, 25, 8, 8, 14, 0};
    static const unsigned w_text[M_KINDS] = {10, 5, 5, 8, 4, 0, 8, 10, 0, 50};
    static const unsigned w_mem[M_KINDS] = {30, 30, 15, 0, 0, 10, 0, 0, 15, 0};
    const unsigned *w = f->in_memory ? w_mem : f->text ? w_text : w_bin;
    unsigned total = 0;
    for (int k = 0; k < M_KINDS; k++)
        total += (k == M_POINT && !s->n_slots) ? 0 : w[k];
    unsigned r = (unsigned)rnd(total), k = 0;
    for (; k < M_KINDS; k++) {
        unsigned wk = (k == M_POINT && !s->n_slots) ? 0 : w[k];
        if (r < wk)
            break;
        r -= wk;
    }
    switch (k) {
    case M_BYTE: mut_byte(m); break;
    case M_BIT: mut_bit(m); break;
    case M_RANDOM: mut_random(m); break;
    case M_TRUNC: mut_trunc(m, s); break;
    case M_EXTEND: mut_extend(m); break;
    case M_FIELD: mut_field(m, s, be_default); break;
    case M_DUP: mut_dup(m, s); break;
    case M_CUT: mut_cut(m, s); break;
    case M_POINT: mut_point(m, s); break;
    default: mut_token(m); break;
    }
}

/* ---- fixtures per circuit: what accepted mutants are checked against ---- */

struct circuit_ctx {
    const char *name;
    cuzk_wtns *wtns;
    cuzk_vk *vk;           /* from verification_key.json */
    cuzk_proof proof;      /* proof.json */
    cuzk_fr *pub;          /* public.json */
    size_t n_pub;
    cuzk_bellman_circuit *bc;
    cuzk_params *params;   /* made here from toxic waste */
    cuzk_vk *params_vk;
};

static circuit_ctx circuits[3] = {{.name = "multiplier"}, {.name = "nopub"}, {.name = "chain"}};
#define N_CIRCUITS (sizeof circuits / sizeof circuits[0])

static void must(cuzk_err e, const char *what)
{
    if (e != CUZK_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, cuzk_errname(e), cuzk_error_detail());
        exit(2);
    }
}

static void load_circuit(circuit_ctx *c)
{
    char p[1200];
    test_fixture_path(p, sizeof p, c->name, "witness.wtns");
    must(cuzk_wtns_load(&c->wtns, p), p);
    test_fixture_path(p, sizeof p, c->name, "circuit.r1cs");
    must(cuzk_bellman_circuit_load(&c->bc, p), p);
    test_fixture_path(p, sizeof p, c->name, "verification_key.json");
    must(cuzk_vk_read_json(&c->vk, p), p);
    test_fixture_path(p, sizeof p, c->name, "proof.json");
    must(cuzk_proof_read_json(&c->proof, p), p);
    test_fixture_path(p, sizeof p, c->name, "public.json");
    must(cuzk_public_read_json(&c->pub, &c->n_pub, p), p);
    must(cuzk_groth16_verify(c->vk, c->pub, c->n_pub, &c->proof), "fixture proof");
    cuzk_setup_toxic t;
    test_rand_toxic(&t);
    cuzk_setup_opts so = {.backend = CUZK_BACKEND_CPU};
    must(cuzk_setup_bellman_opts(&c->params, c->bc, &t, &so), "bellman setup");
    must(cuzk_vk_from_params(&c->params_vk, c->params), "params vk");
}

static void free_circuit(circuit_ctx *c)
{
    cuzk_wtns_free(c->wtns);
    cuzk_bellman_circuit_free(c->bc);
    cuzk_vk_free(c->vk);
    free(c->pub);
    cuzk_params_free(c->params);
    cuzk_vk_free(c->params_vk);
}

/* Any error code but success: known, with a detail. */
static void check_code(cuzk_err e, const char *what)
{
    bool ok = e > CUZK_OK && e < CUZK_ERR_COUNT_ && cuzk_error_detail()[0];
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  %s: %s with detail \"%s\"\n", what, cuzk_errname(e),
                cuzk_error_detail());
}

/* Whether a key has a point at infinity (which the verifier refuses). */
static bool vk_has_inf(const cuzk_vk *vk)
{
    bool inf = cuzk_g1_affine_is_inf(&vk->alpha1) || cuzk_g2_affine_is_inf(&vk->beta2) ||
               cuzk_g2_affine_is_inf(&vk->gamma2) || cuzk_g2_affine_is_inf(&vk->delta2);
    for (size_t i = 0; i <= vk->n_public; i++)
        inf = inf || cuzk_g1_affine_is_inf(&vk->ic[i]);
    return inf;
}

/* A proof (made or loaded) checked against a key: it verifies, or fails the equation, or
 * the count of public inputs differs, or the key has a point at infinity (CUZK_EFORMAT),
 * or `also` (CUZK_OK for none). Returns whether it verified. */
static bool verify_any(const cuzk_vk *vk, const cuzk_fr *pub, size_t n_pub,
                       const cuzk_proof *pr, cuzk_err also)
{
    cuzk_err e = cuzk_groth16_verify(vk, pub, n_pub, pr);
    bool ok = e == CUZK_OK || e == CUZK_EVERIFY || e == CUZK_ESIZE || e == also ||
              (e == CUZK_EFORMAT && vk_has_inf(vk));
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  verify: %s: %s\n", cuzk_errname(e), cuzk_error_detail());
    cur_fmt->used++;
    return e == CUZK_OK;
}

static cuzk_prove_opts prove_opts(const cuzk_fr *r, const cuzk_fr *s)
{
    cuzk_prove_opts o;
    memset(&o, 0, sizeof o);
    o.backend = CUZK_BACKEND_CPU;
    o.test_r = r;
    o.test_s = s;
    return o;
}

/* ---- loaders: load, check what came back, use it ---- */

static cuzk_err ld_wtns(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)s;
    /* the same bytes in memory first: the same answer as the file, the error naming them */
    cuzk_wtns *wm = (cuzk_wtns *)1;
    cuzk_err em = cuzk_wtns_load_mem(&wm, "mutant image", b, n);
    CHECK(em ? wm == NULL : wm != NULL);
    CHECK(em == CUZK_OK || strncmp(cuzk_error_detail(), "mutant image: ", 14) == 0);
    cuzk_wtns *w = (cuzk_wtns *)1;
    cuzk_err e = cuzk_wtns_load(&w, path);
    CHECK(em == e);
    CHECK(!wm || (w && wm->n == w->n && !memcmp(wm->w, w->w, sizeof *w->w * w->n)));
    cuzk_wtns_free(wm);
    /* the submission's check (no values kept): the same answer, the same count and first
     * value */
    cuzk_wtns *wc = (cuzk_wtns *)1;
    cuzk_err ec = cuzk_wtns_check(&wc, path);
    CHECK(ec == e);
    CHECK(ec ? wc == NULL : (wc && w && wc->n == w->n && wc->cap == 1 &&
                             (!w->n || !memcmp(wc->w, w->w, sizeof *w->w))));
    cuzk_wtns_free(wc);
    if (e) {
        CHECK(w == NULL);
        return e;
    }
    /* header, section 1 (n8, r, count), section 2 header and the values */
    CHECK(w && 12 + 12 + 40 + 12 + (uint64_t)w->n * CUZK_FR_BYTES <= n);
    if (w && w->n) {
        uint8_t v[CUZK_FR_BYTES];
        cuzk_fr back;
        cuzk_fr_to_bytes_le(v, &w->w[w->n - 1]);
        CHECK(cuzk_fr_from_bytes_le(&back, v) == CUZK_OK);
    }
    cuzk_wtns_free(w);
    return e;
}

static bool csr_ok(const cuzk_csr *m, size_t rows, uint32_t n_cols)
{
    if (m->n_rows != rows || m->row[0] != 0)
        return false;
    for (size_t i = 0; i < rows; i++)
        if (m->row[i + 1] < m->row[i])
            return false;
    for (uint64_t k = 0; k < m->row[rows]; k++)
        if (m->col[k] >= n_cols)
            return false;
    return true;
}

static cuzk_err ld_r1cs(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)b;
    cuzk_r1cs *r = (cuzk_r1cs *)1;
    cuzk_err e = cuzk_r1cs_load(&r, path);
    if (e) {
        CHECK(r == NULL);
        return e;
    }
    uint64_t nnz = 0;
    for (int m = 0; m < 3; m++) {
        CHECK(csr_ok(&r->m[m], r->n_constraints, r->n_wires));
        nnz += r->m[m].row[r->n_constraints];
    }
    /* header, section 1, and in section 2 three counts a constraint and 36 bytes a term */
    CHECK(12 + 12 + 64 + 12 + 12 * (uint64_t)r->n_constraints + 36 * nnz <= n);
    CHECK(1 + (uint64_t)r->n_public + r->n_prv_in <= r->n_wires);
    const cuzk_wtns *w = s->ctx->wtns;
    size_t bad;
    e = cuzk_r1cs_check_witness(r, w->w, w->n, &bad);
    if (e != CUZK_OK && e != CUZK_EVERIFY && e != CUZK_ESIZE)
        check_code(CUZK_OK, "r1cs_check_witness");
    if (e != CUZK_ESIZE)
        cur_fmt->used++;
    CHECK(e != CUZK_EVERIFY || bad < r->n_constraints);
    /* the bellman circuit: its input rows and densities */
    cuzk_bellman_circuit *c = NULL;
    e = cuzk_bellman_circuit_from_r1cs(&c, r);
    if (e != CUZK_OK)
        check_code(e, "bellman_circuit_from_r1cs");
    /* The input rows (60 bytes per public input) are not backed by anything in the file, so
     * a header claiming billions of public inputs may run out of memory here (not fixed:
     * the counts can only be checked against the key, see the report of this test). */
    if (e == CUZK_ENOMEM && (uint64_t)r->n_constraints + r->n_public >= (1u << 24))
        cur_fmt->big_circuits++;
    else
        CHECK(e != CUZK_ENOMEM);
    if (c) {
        CHECK(c->n_rows == r->n_constraints + r->n_public + 1);
        CHECK(c->n_a_dense <= c->n_vars && c->n_b_dense <= c->n_vars);
    }
    cuzk_bellman_circuit_free(c);
    cuzk_r1cs_free(r);
    return CUZK_OK;
}

static cuzk_err ld_zkey(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)b;
    cuzk_zkey *z = (cuzk_zkey *)1;
    cuzk_err e = cuzk_zkey_load(&z, path);
    if (e) {
        CHECK(z == NULL);
        return e;
    }
    CHECK(z->n_public < z->n_vars && z->n_rows <= z->domain_size);
    CHECK(z->n_rows == z->n_constraints + z->n_public + 1);
    CHECK(z->domain_size == 1u << z->log2_domain);
    CHECK(csr_ok(&z->a, z->n_rows, z->n_vars) && csr_ok(&z->b, z->n_rows, z->n_vars));
    /* the points alone: 96 bytes a G1, 192 a G2; the coefficients 44 bytes each */
    uint64_t need = 96 * ((uint64_t)z->n_public + 1 + 2 * (uint64_t)z->n_vars +
                          (z->n_vars - z->n_public - 1) + z->domain_size) +
                    192 * (uint64_t)z->n_vars +
                    44 * (z->a.row[z->n_rows] + z->b.row[z->n_rows]);
    CHECK(need <= n);
    /* prove with the fixture's witness (when it fits) and verify with the key's own vk */
    const cuzk_wtns *w = s->ctx->wtns;
    e = cuzk_zkey_check_witness(z, w->w, w->n);
    if (e == CUZK_OK && cur_fmt->used < test_iters(40)) {
        cuzk_fr r, sc;
        cuzk_fr_set_u64(&r, 5);
        cuzk_fr_set_u64(&sc, 7);
        cuzk_prove_opts o = prove_opts(&r, &sc);
        const cuzk_fr *wits[1] = {w->w};
        cuzk_proof pr;
        cuzk_vk *vk = NULL;
        e = cuzk_groth16_prove(&pr, NULL, z, wits, 1, w->n, &o);
        if (e != CUZK_OK)
            check_code(e, "prove");
        else if ((e = cuzk_vk_from_zkey(&vk, z)) != CUZK_OK)
            check_code(e, "vk_from_zkey");
        else
            /* the large vectors are checked on the curve only (include/cuzk/io.h): a point
             * outside the subgroup gives a proof the verifier refuses */
            (void)verify_any(vk, cuzk_groth16_public(z, w->w), z->n_public, &pr,
                             CUZK_ENOT_IN_SUBGROUP);
        cuzk_vk_free(vk);
    } else if (e != CUZK_OK) {
        check_code(e, "zkey_check_witness");
    }
    cuzk_zkey_free(z);
    return CUZK_OK;
}

static cuzk_err ld_params(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)b;
    cuzk_params *p = (cuzk_params *)1;
    /* every fourth case with all the subgroup checks, the others trusted */
    unsigned flags = rnd(4) == 0 ? 0 : CUZK_PARAMS_TRUSTED;
    cuzk_err e = cuzk_params_load(&p, path, flags);
    if (e) {
        CHECK(p == NULL);
        return e;
    }
    CHECK(cuzk_params_file_bytes(p) == n);
    CHECK(p->n_ic >= 1 && strcmp(p->path, path) == 0);
    e = cuzk_params_check_circuit(p, s->ctx->bc);
    if (e == CUZK_OK && cur_fmt->used < test_iters(40)) {
        const cuzk_wtns *w = s->ctx->wtns;
        cuzk_fr r, sc;
        cuzk_fr_set_u64(&r, 5);
        cuzk_fr_set_u64(&sc, 7);
        cuzk_prove_opts o = prove_opts(&r, &sc);
        const cuzk_fr *wits[1] = {w->w};
        cuzk_proof pr;
        cuzk_vk *vk = NULL;
        e = cuzk_params_prove(&pr, NULL, p, s->ctx->bc, wits, 1, w->n, &o);
        if (e != CUZK_OK)
            check_code(e, "params_prove");
        else if ((e = cuzk_vk_from_params(&vk, p)) != CUZK_OK)
            check_code(e, "vk_from_params");
        else
            (void)verify_any(vk, w->w + 1, s->ctx->bc->n_public, &pr,
                             (flags & CUZK_PARAMS_TRUSTED) ? CUZK_ENOT_IN_SUBGROUP : CUZK_OK);
        cuzk_vk_free(vk);
    } else if (e != CUZK_OK) {
        CHECK(e == CUZK_ESIZE && strstr(cuzk_error_detail(), path));
    }
    cuzk_params_free(p);
    return CUZK_OK;
}

static char cache_src[400];   /* the .params file whose cache is fuzzed */

static cuzk_err ld_cache(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)b;
    (void)n;
    (void)path;
    (void)s;
    cuzk_params *p = (cuzk_params *)1;
    /* the mutant is the cache; the loader is given its source */
    cuzk_err e = cuzk_params_cache_load(&p, cache_src);
    if (e) {
        CHECK(p == NULL);
        return e;
    }
    CHECK(p->n_ic >= 1);
    cuzk_params_free(p);
    return e;
}

static cuzk_err ld_vk(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)b;
    (void)n;
    cuzk_vk *vk = (cuzk_vk *)1;
    cuzk_err e = cuzk_vk_read_json(&vk, path);
    if (e) {
        CHECK(vk == NULL);
        return e;
    }
    const circuit_ctx *c = s->ctx;
    if (verify_any(vk, c->pub, c->n_pub, &c->proof, CUZK_OK)) {
        /* only the seed's own key verifies the seed's proof */
        bool same = vk->n_public == c->vk->n_public &&
                    cuzk_g1_affine_eq(&vk->alpha1, &c->vk->alpha1) &&
                    cuzk_g2_affine_eq(&vk->beta2, &c->vk->beta2) &&
                    cuzk_g2_affine_eq(&vk->gamma2, &c->vk->gamma2) &&
                    cuzk_g2_affine_eq(&vk->delta2, &c->vk->delta2);
        for (size_t i = 0; same && i <= vk->n_public; i++)
            same = cuzk_g1_affine_eq(&vk->ic[i], &c->vk->ic[i]);
        CHECK(same);
    }
    cuzk_vk_free(vk);
    return CUZK_OK;
}

static cuzk_err ld_proof(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)b;
    (void)n;
    cuzk_proof pr;
    cuzk_err e = cuzk_proof_read_json(&pr, path);
    if (e)
        return e;
    const circuit_ctx *c = s->ctx;
    CHECK(!verify_any(c->vk, c->pub, c->n_pub, &pr, CUZK_OK) || test_proof_eq(&pr, &c->proof));
    return CUZK_OK;
}

static cuzk_err ld_public(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)b;
    (void)n;
    cuzk_fr *pub = (cuzk_fr *)1;
    size_t np = 7;
    cuzk_err e = cuzk_public_read_json(&pub, &np, path);
    if (e) {
        CHECK(pub == NULL && np == 0);
        return e;
    }
    const circuit_ctx *c = s->ctx;
    bool verified = verify_any(c->vk, pub, np, &c->proof, CUZK_OK);
    bool same = np == c->n_pub;
    for (size_t i = 0; same && i < np; i++)
        same = cuzk_fr_eq(&pub[i], &c->pub[i]);
    CHECK(!verified || same);
    free(pub);
    return CUZK_OK;
}

static cuzk_err ld_filecoin(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    cuzk_proof pr;
    cuzk_err e = cuzk_proof_read_filecoin(&pr, path);
    if (n == CUZK_FILECOIN_PROOF_BYTES) {
        /* the in-memory decoder agrees with the file reader */
        cuzk_proof pr2;
        cuzk_err e2 = cuzk_proof_from_filecoin(&pr2, b);
        CHECK(e2 == e);
        if (e2)
            CHECK(strncmp(cuzk_error_detail(), "Filecoin proof", 14) == 0);
        cuzk_error_clear();
        e = cuzk_proof_read_filecoin(&pr, path);   /* for the caller's detail */
    }
    if (e)
        return e;
    CHECK(n == CUZK_FILECOIN_PROOF_BYTES);
    uint8_t back[CUZK_FILECOIN_PROOF_BYTES];
    cuzk_proof_to_filecoin(back, &pr);
    CHECK(memcmp(back, b, sizeof back) == 0);
    const circuit_ctx *c = s->ctx;
    bool verified = verify_any(c->params_vk, c->wtns->w + 1, c->bc->n_public, &pr, CUZK_OK);
    CHECK(!verified || memcmp(b, s->b, sizeof back) == 0);
    return CUZK_OK;
}

static cuzk_err ld_point(const seed *s, const char *path, const uint8_t *b, size_t n)
{
    (void)path;
    (void)n;
    cuzk_g1_affine p1;
    cuzk_g2_affine p2;
    unsigned flags = rnd(2) ? CUZK_DECODE_CHECK_SUBGROUP : 0;
    cuzk_err e = dec_point(s->kind, b, flags, &p1, &p2);
    if (e)
        return e;
    /* what decodes is canonical: encoding it again gives the same bytes */
    uint8_t back[192];
    if (pt_is_g2(s->kind)) {
        CHECK(cuzk_g2_affine_is_on_curve(&p2));
        CHECK(!flags || cuzk_g2_affine_in_subgroup(&p2));
        enc_g2(s->kind, back, &p2);
    } else {
        CHECK(cuzk_g1_affine_is_on_curve(&p1));
        CHECK(!flags || cuzk_g1_affine_in_subgroup(&p1));
        enc_g1(s->kind, back, &p1);
    }
    CHECK(memcmp(back, b, pt_len[s->kind]) == 0);
    return CUZK_OK;
}

/* ---- the driver ---- */

static unsigned kept;

/* Reports a failed case and keeps its mutant. */
static void report(const fmt *f, const seed *s, unsigned long i, const mbuf *m, cuzk_err e,
                   const char *detail)
{
    fprintf(stderr, "  %s: case %lu from %s: [%s] -> %s: \"%s\"\n", f->name, i, s->name, mlog,
            cuzk_errname(e), detail);
    if (kept < MAX_KEPT) {
        char p[300];
        snprintf(p, sizeof p, "/tmp/cuzk_fuzz_%s_%lu.%s", f->name, i, f->ext);
        write_all(p, m->b, m->n);
        fprintf(stderr, "  kept as %s\n", p);
        kept++;
    }
}

/* One load of buffer m; the common checks. */
static cuzk_err run_case(fmt *f, const seed *s, unsigned long i, const mbuf *m,
                         const char *path)
{
    if (!f->in_memory)
        write_all(path, m->b, m->n);
    unsigned long failed0 = test_failed_;
    cuzk_error_clear();
    double t0 = cuzk_now_ms();
    cuzk_err e = f->load(s, path, m->b, m->n);
    double dt = cuzk_now_ms() - t0;
    f->ms += dt;
    f->cases++;
    char detail[1024];
    snprintf(detail, sizeof detail, "%s", cuzk_error_detail());
    if (e == CUZK_OK) {
        f->accepted++;
    } else if (e > CUZK_OK && e < CUZK_ERR_COUNT_) {
        f->rejected[e]++;
        /* a clear error: said, and for a file, naming it */
        CHECK(detail[0] != 0);
        CHECK(f->in_memory || strstr(detail, path) != NULL);
    } else {
        CHECK(0);   /* not an error code */
    }
    /* The seeds are small: only a size read from the mutant can ask for that much. */
    CHECK(e != CUZK_ENOMEM);
    CHECK(dt < CASE_SLOW_MS);
    if (test_failed_ != failed0)
        report(f, s, i, m, e, detail);
    return e;
}

static void fmt_begin(fmt *f)
{
    if (!f->path[0])
        snprintf(f->path, sizeof f->path, "%s/mutant.%s", tmp_dir, f->ext);
    cur_fmt = f;
}

static void fuzz(fmt *f)
{
    fmt_begin(f);
    const char *path = f->path;
    mbuf m = {0};
    /* every seed as it is */
    for (int k = 0; k < f->n_seeds; k++) {
        const seed *s = &f->seeds[k];
        mb_set(&m, s->b, s->n);
        mlog_len = 0;
        mlogf("none");
        cuzk_err e = run_case(f, s, 0, &m, path);
        CHECK(e == s->want);
        if (e != s->want)
            fprintf(stderr, "  %s: seed %s gives %s, expected %s\n", f->name, s->name,
                    cuzk_errname(e), cuzk_errname(s->want));
    }
    unsigned long iters = test_iters(f->iters);
    for (unsigned long i = 1; i <= iters; i++) {
        const seed *s = &f->seeds[rnd((uint64_t)f->n_seeds)];
        mb_set(&m, s->b, s->n);
        mlog_len = 0;
        unsigned r = (unsigned)rnd(20), nmut = r < 10 ? 1 : r < 15 ? 2 : r < 18 ? 3 : 4;
        for (unsigned k = 0; k < nmut; k++)
            mutate_once(f, s, &m, !strcmp(f->name, "params"));
        run_case(f, s, i, &m, path);
    }
    free(m.b);

    printf("%-8s %5lu cases %7.0f ms: %lu accepted (%lu used); rejected:", f->name, f->cases,
           f->ms, f->accepted, f->used);
    for (int e = 1; e < CUZK_ERR_COUNT_; e++)
        if (f->rejected[e])
            printf(" %s %lu", cuzk_errname((cuzk_err)e) + 5, f->rejected[e]);
    if (f->big_circuits)
        printf("; %lu bellman circuits out of memory", f->big_circuits);
    printf("\n");
    fflush(stdout);
}

/* ---- seeds ---- */

static void seed_file(fmt *f, const char *path, const char *name, const circuit_ctx *c,
                      void (*meta)(seed *), cuzk_err want)
{
    seed s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%s", name);
    s.b = read_all(path, &s.n);
    s.ctx = c;
    s.want = want;
    if (meta)
        meta(&s);
    fmt_add_seed(f, &s);
}

static void seed_bytes(fmt *f, const uint8_t *b, size_t n, const char *name,
                       const circuit_ctx *c, cuzk_err want)
{
    seed s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%s", name);
    s.b = xrealloc(NULL, n + 1);
    memcpy(s.b, b, n);
    s.n = n;
    s.ctx = c;
    s.want = want;
    fmt_add_seed(f, &s);
}

static void seed_fixtures(fmt *f, const char *file, void (*meta)(seed *))
{
    for (size_t k = 0; k < N_CIRCUITS; k++) {
        char p[1200], name[64];
        test_fixture_path(p, sizeof p, circuits[k].name, file);
        snprintf(name, sizeof name, "%s/%s", circuits[k].name, file);
        seed_file(f, p, name, &circuits[k], meta, CUZK_OK);
    }
}

static void text_seed(fmt *f, char *text, const char *name, const circuit_ctx *c,
                      cuzk_err want)
{
    if (!text) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    seed_bytes(f, (const uint8_t *)text, strlen(text), name, c, want);
    free(text);
}

static void file_seed(fmt *f, const char *path, const char *name, const circuit_ctx *c,
                      cuzk_err want)
{
    size_t n;
    uint8_t *b = read_all(path, &n);
    seed_bytes(f, b, n, name, c, want);
    free(b);
}

static fmt formats[] = {
    {.name = "wtns", .ext = "wtns", .iters = 1500, .load = ld_wtns},
    {.name = "r1cs", .ext = "r1cs", .iters = 1500, .load = ld_r1cs},
    {.name = "zkey", .ext = "zkey", .iters = 1200, .load = ld_zkey},
    {.name = "params", .ext = "params", .iters = 800, .load = ld_params},
    {.name = "cache", .ext = "params.cuzkcache", .iters = 300, .load = ld_cache},
    {.name = "vk.json", .ext = "json", .text = true, .iters = 1000, .load = ld_vk},
    {.name = "proof", .ext = "json", .text = true, .iters = 1000, .load = ld_proof},
    {.name = "public", .ext = "json", .text = true, .iters = 1000, .load = ld_public},
    {.name = "filecoin", .ext = "bin", .iters = 600, .load = ld_filecoin},
    {.name = "points", .ext = "pt", .in_memory = true, .iters = 1500, .load = ld_point},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

static fmt *format(const char *name)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (!strcmp(formats[i].name, name))
            return &formats[i];
    exit(2);
}

static void make_seeds(void)
{
    seed_fixtures(format("wtns"), "witness.wtns", wtns_meta);
    seed_fixtures(format("r1cs"), "circuit.r1cs", r1cs_meta);
    seed_fixtures(format("zkey"), "circuit.zkey", zkey_meta);

    /* .params: the keys made from the fixture circuits, written here; its cache */
    fmt *fp = format("params");
    for (size_t k = 0; k < N_CIRCUITS; k++) {
        circuit_ctx *c = &circuits[k];
        char p[400], name[64];
        snprintf(p, sizeof p, "%s/%s.params", tmp_dir, c->name);
        must(cuzk_params_write(p, c->params), p);
        snprintf(name, sizeof name, "%s.params", c->name);
        file_seed(fp, p, name, c, CUZK_OK);
        params_meta(&fp->seeds[fp->n_seeds - 1], c->params);
    }
    {
        fmt *fc = format("cache");
        seed s;
        memset(&s, 0, sizeof s);
        snprintf(s.name, sizeof s.name, "multiplier.params.cuzkcache");
        snprintf(cache_src, sizeof cache_src, "%s/cache_src.params", tmp_dir);
        must(cuzk_params_write(cache_src, circuits[0].params), cache_src);
        must(cuzk_params_cache_write(circuits[0].params, cache_src), "cache write");
        char *cp = cuzk_params_cache_path(cache_src);
        s.b = read_all(cp, &s.n);
        /* the mutants are written where the cache belongs */
        snprintf(fc->path, sizeof fc->path, "%s", cp);
        free(cp);
        /* header fields: flags, sizes, source identity, the six counts */
        for (size_t off = 8; off < 96; off += 4)
            add_field(&s, off, 4, false);
        for (size_t off = 24; off < 64; off += 8)
            add_field(&s, off, 8, false);
        add_span(&s, 0, 96);
        s.ctx = &circuits[0];
        fmt_add_seed(fc, &s);
    }

    /* snarkjs JSON: the fixtures, and keys and proofs with points at infinity or outside
     * the subgroup (written by our writers, which do not check) */
    fmt *fv = format("vk.json"), *fpr = format("proof"), *fpu = format("public");
    seed_fixtures(fv, "verification_key.json", NULL);
    seed_fixtures(fpr, "proof.json", NULL);
    seed_fixtures(fpu, "public.json", NULL);
    {
        char p[400];
        snprintf(p, sizeof p, "%s/vk_seed.json", tmp_dir);
        cuzk_vk vk = *circuits[0].vk;
        cuzk_g1_affine_set_inf(&vk.alpha1);
        cuzk_g2_affine_set_inf(&vk.gamma2);
        must(cuzk_vk_write_json(p, &vk), p);
        file_seed(fv, p, "vk with infinity", &circuits[0], CUZK_OK);
        vk = *circuits[0].vk;
        cuzk_g1_affine ic[2] = {vk.ic[0], vk.ic[1]};
        test_g1_off_subgroup(&ic[1]);
        vk.ic = ic;
        must(cuzk_vk_write_json(p, &vk), p);
        file_seed(fv, p, "vk off subgroup", &circuits[0], CUZK_ENOT_IN_SUBGROUP);

        cuzk_proof pr;
        cuzk_g1_affine_set_inf(&pr.a);
        cuzk_g2_affine_set_inf(&pr.b);
        cuzk_g1_affine_set_inf(&pr.c);
        text_seed(fpr, cuzk_proof_to_json(&pr), "proof at infinity", &circuits[0], CUZK_OK);
        pr = circuits[0].proof;
        test_g2_off_subgroup(&pr.b);
        text_seed(fpr, cuzk_proof_to_json(&pr), "proof off subgroup", &circuits[0],
                  CUZK_ENOT_IN_SUBGROUP);
        cuzk_fr v[3];
        cuzk_fr_set_zero(&v[0]);
        cuzk_fr_set_one(&v[1]);
        cuzk_fr_neg(&v[2], &v[1]);
        text_seed(fpu, cuzk_public_to_json(v, 3), "public edge values", &circuits[2], CUZK_OK);
    }

    /* Filecoin: proofs made with the .params keys */
    fmt *ff = format("filecoin");
    for (size_t k = 0; k < N_CIRCUITS; k++) {
        circuit_ctx *c = &circuits[k];
        cuzk_fr r, sc;
        test_rand_fr(&r);
        test_rand_fr(&sc);
        cuzk_prove_opts o = prove_opts(&r, &sc);
        const cuzk_fr *wits[1] = {c->wtns->w};
        cuzk_proof pr;
        must(cuzk_params_prove(&pr, NULL, c->params, c->bc, wits, 1, c->wtns->n, &o), "prove");
        uint8_t b[CUZK_FILECOIN_PROOF_BYTES];
        cuzk_proof_to_filecoin(b, &pr);
        char name[64];
        snprintf(name, sizeof name, "%s proof.bin", c->name);
        seed_bytes(ff, b, sizeof b, name, c, CUZK_OK);
        seed *s = &ff->seeds[ff->n_seeds - 1];
        add_slots(s, 0, 1, PT_CMP_G1);
        add_slots(s, 48, 1, PT_CMP_G2);
        add_slots(s, 144, 1, PT_CMP_G1);
    }

    /* points: a random one and infinity in each encoding */
    fmt *fpt = format("points");
    for (int k = 0; k < PT_KINDS; k++) {
        for (int v = 0; v < 2; v++) {
            const uint8_t *e = pt_enc[k][v ? PV_INF : PV_RANDOM];
            char name[64];
            snprintf(name, sizeof name, "%s %s", pt_name[k], v ? "infinity" : "random");
            seed_bytes(fpt, e, pt_len[k], name, NULL, CUZK_OK);
            seed *s = &fpt->seeds[fpt->n_seeds - 1];
            s->kind = k;
            add_slots(s, 0, 1, k);
        }
    }
}

/* ---- regression cases: specific mutations that broke a reader, or probe a limit ---- */

static void set_u32(mbuf *m, size_t off, uint32_t v)
{
    wr_field(m->b + off, 4, false, v);
    mlogf("u32@%zu=%#x", off, v);
}

/* The mutant m of seed s loads with the result want (and passes the common checks). */
static void expect(fmt *f, const seed *s, const mbuf *m, cuzk_err want, const char *why)
{
    fmt_begin(f);
    cuzk_err e = run_case(f, s, 0, m, f->path);
    CHECK(e == want);
    if (e != want)
        fprintf(stderr, "  regression %s: %s [%s]: %s, expected %s: %s\n", f->name, why, mlog,
                cuzk_errname(e), cuzk_errname(want), cuzk_error_detail());
}

/* Seed k of format f in m, with an empty log. */
static const seed *start(fmt *f, int k, mbuf *m)
{
    const seed *s = &f->seeds[k];
    mb_set(m, s->b, s->n);
    mlog_len = 0;
    return s;
}

static void regressions(void)
{
    mbuf m = {0};
    size_t off, len;
    const seed *s;
    fmt *fz = format("zkey");

    /* A domain of 2^31 with a coefficient on its last row: the row offsets (2 x 16 GiB)
     * were allocated before section 9 could show that the file holds no such domain. */
    s = start(fz, 0, &m);
    if (iden3_section(s, 2, &off, &len))
        set_u32(&m, off + 4 + CUZK_FP_BYTES + 4 + CUZK_FR_BYTES + 8, 0x80000000u);
    if (iden3_section(s, 4, &off, &len))
        set_u32(&m, off + 4 + 4, 0x7fffffffu);
    expect(fz, s, &m, CUZK_ESIZE, "domain 2^31, coefficient row 2^31 - 1");

    /* Limits: 2^32 - 1 wires (no wire labels to hold them), the bellman circuit made of it
     * (two density bit vectors of 512 MiB: the largest a forged r1cs header can ask for
     * there besides the input rows below). */
    fmt *fr = format("r1cs");
    s = start(fr, 0, &m);
    if (iden3_section(s, 1, &off, &len))
        set_u32(&m, off + 4 + CUZK_FR_BYTES, 0xffffffffu);
    if (iden3_section(s, 3, &off, &len)) {
        mb_erase(&m, off - 12, len + 12);
        set_u32(&m, 8, rd32le(m.b + 8) - 1);
    }
    expect(fr, s, &m, CUZK_OK, "2^32 - 1 wires");
    /* and 2^31 public outputs */
    s = start(fr, 0, &m);
    if (iden3_section(s, 1, &off, &len)) {
        set_u32(&m, off + 4 + CUZK_FR_BYTES, 0xffffffffu);
        set_u32(&m, off + 4 + CUZK_FR_BYTES + 4, 0x80000000u);
    }
    if (iden3_section(s, 3, &off, &len)) {
        mb_erase(&m, off - 12, len + 12);
        set_u32(&m, 8, rd32le(m.b + 8) - 1);
    }
    /* the r1cs loads; its bellman circuit needs 2^31 input rows and may run out of memory */
    printf("regression: an r1cs of 2^31 public outputs (AddressSanitizer may warn that an "
           "allocation failed)\n");
    fflush(stdout);
    expect(fr, s, &m, CUZK_OK, "2^31 public outputs");

    free(m.b);
    /* the counts of the runs above are the fuzzer's to print */
    for (size_t i = 0; i < N_FORMATS; i++) {
        formats[i].cases = formats[i].accepted = formats[i].used = formats[i].big_circuits = 0;
        formats[i].ms = 0;
        memset(formats[i].rejected, 0, sizeof formats[i].rejected);
    }
}

int main(void)
{
    test_init("test_fuzz");
    test_tmpdir_make(tmp_dir, sizeof tmp_dir, "cuzk_test_fuzz");
    /* The inputs are tiny: two threads exercise the parallel paths, more only cost. */
    cuzk_parallel_set_threads(2);
    init_point_encodings();
    init_json_repl();
    for (size_t k = 0; k < N_CIRCUITS; k++)
        load_circuit(&circuits[k]);
    make_seeds();
#ifndef FUZZ_ASAN
    /* Without AddressSanitizer's cap, a forged size asking for many GiB fails here rather
     * than being touched (the loader's CUZK_ENOMEM then fails the case). Nothing from here
     * on uses a GPU (whose driver reserves much address space). */
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && (rl.rlim_cur == RLIM_INFINITY ||
                                           rl.rlim_cur > ((rlim_t)8 << 30))) {
        rl.rlim_cur = (rlim_t)8 << 30;
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            perror("setrlimit");
    }
#endif
    regressions();

    double t0 = cuzk_now_ms();
    for (size_t i = 0; i < N_FORMATS; i++)
        fuzz(&formats[i]);
    printf("%.1f s in all\n", (cuzk_now_ms() - t0) / 1e3);

    for (size_t i = 0; i < N_FORMATS; i++)
        for (int k = 0; k < formats[i].n_seeds; k++)
            seed_free(&formats[i].seeds[k]);
    for (size_t k = 0; k < N_CIRCUITS; k++)
        free_circuit(&circuits[k]);
    for (size_t i = 0; i < n_json_repl; i++)
        free(json_repl[i]);
    free(json_repl);
    test_dir_remove(tmp_dir);
    return test_finish();
}
