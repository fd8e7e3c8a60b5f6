/* SPDX-License-Identifier: Apache-2.0 */
/* Generator driver: layout, files, the parallel pass over blocks, statistics. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen/gen_internal.h"
#include "io/io_write.h"
#include "util/parallel.h"

#define GEN_PATH_MAX 4096

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void profile_sizes(cuzk_gen_profile pr, uint64_t *iter, uint64_t *block)
{
    if (pr == CUZK_GEN_POREP) {
        *iter = GEN_POREP_ITER_CONS;
        *block = (uint64_t)GEN_POREP_ITER_CONS * GEN_POREP_ITERS;
    } else {
        *iter = GEN_DENSE_ITER_CONS;
        *block = (uint64_t)GEN_DENSE_ITER_CONS * GEN_DENSE_ITERS;
    }
}

static uint32_t n_public_for(cuzk_gen_profile pr, int64_t want, uint64_t n)
{
    if (want >= 0)
        return (uint32_t)want;
    uint64_t iter, block;
    profile_sizes(pr, &iter, &block);
    uint64_t begun = (n + iter - 1) / iter;   /* every public input is used once at least */
    return begun < CUZK_GEN_MAX_PUBLIC ? (uint32_t)begun : CUZK_GEN_MAX_PUBLIC;
}

uint32_t cuzk_gen_n_public(const cuzk_gen_opts *o)
{
    return n_public_for(o->profile, o->n_public, o->n_constraints);
}

uint64_t cuzk_gen_fit_domain(const cuzk_gen_opts *o, unsigned log2)
{
    if (log2 > 40)
        return 0;
    /* N + n_public(N) grows strictly with N: the largest N with N + n_public + 1 <= 2^log2. */
    uint64_t lo = 0, hi = (uint64_t)1 << log2;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (mid + n_public_for(o->profile, o->n_public, mid) + 1 <= ((uint64_t)1 << log2))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* ---- per-worker block state ---- */

static void block_free(gen_block *b)
{
    free(b->cons);
    free(b->vals);
    free(b->mark[0]);
    free(b->mark[1]);
    free(b->st);
    free(b->tv);
    free(b->bits);
    free(b->lanes);
    free(b->big);
    memset(b, 0, sizeof *b);
}

/* cons_cap 0 makes a counting block (no constraint bytes stored). */
static bool block_alloc(gen_block *b, const gen_circuit *c, uint32_t n_part, size_t cons_cap,
                        uint8_t *pub_mark[2])
{
    memset(b, 0, sizeof *b);
    b->c = c;
    b->n_part = n_part;
    b->wires_cap = (uint32_t)c->block_cons;   /* a constraint makes at most one wire */
    b->slab = (GEN_SEEDS + (size_t)b->wires_cap) * CUZK_FR_BYTES;
    size_t words = (GEN_SEEDS + (size_t)b->wires_cap + 63) / 64;
    size_t np = n_part ? n_part : 1;
    b->cons_cap = cons_cap;
    b->cons = cons_cap ? malloc(cons_cap) : NULL;
    b->vals = n_part ? malloc(b->slab * n_part) : NULL;
    b->mark[0] = malloc(words * 8);
    b->mark[1] = malloc(words * 8);
    b->pub_mark[0] = pub_mark[0];
    b->pub_mark[1] = pub_mark[1];
    b->st = malloc(np * 4 * sizeof(cuzk_fr));
    b->tv = malloc(np * GEN_WIDTH * sizeof(cuzk_fr));
    b->bits = malloc(np * GEN_DEC_BITS);
    b->lanes = malloc(np * GEN_LANES);
    b->big = malloc((GEN_DEC_BITS + 1) * sizeof(gen_term));
    bool ok = (b->cons || !cons_cap) && (b->vals || !n_part) && b->mark[0] && b->mark[1] &&
              b->st && b->tv && b->bits && b->lanes && b->big;
    if (!ok)
        block_free(b);
    return ok;
}

static uint64_t popcount_range(const uint64_t *m, size_t nbits)
{
    uint64_t n = 0;
    size_t w = nbits / 64;
    for (size_t i = 0; i < w; i++)
        n += (uint64_t)__builtin_popcountll(m[i]);
    if (nbits % 64)
        n += (uint64_t)__builtin_popcountll(m[w] & ((1ULL << (nbits % 64)) - 1));
    return n;
}

/* ---- the pass ---- */

typedef struct {
    const gen_circuit *c;
    const cuzk_gen_opts *o;
    gen_block *blk;              /* one per worker */
    uint64_t **labels;           /* one buffer per worker */
    int r1cs_fd, *wtns_fd;
    uint64_t n_blocks, block_bytes;
    uint64_t labels_off;         /* file offset of label 0 */
    _Atomic uint64_t done, in_a, in_b, v01;
    _Atomic int err;             /* first errno */
    _Atomic int err_file;        /* -1: the r1cs, p: witness p, -2: internal */
    _Atomic uint64_t next_report_ms;
    double t0;
} pass_ctx;

static void fail_once(pass_ctx *x, int err, int file)
{
    int zero = 0;
    if (atomic_compare_exchange_strong(&x->err, &zero, err))
        atomic_store(&x->err_file, file);
}

static uint64_t count_01(const uint8_t *v, size_t n)
{
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++, v += CUZK_FR_BYTES) {
        uint64_t l[4];
        memcpy(l, v, 32);
        k += (l[0] <= 1) & ((l[1] | l[2] | l[3]) == 0);
    }
    return k;
}

static void pass_range(void *vctx, size_t begin, size_t end, unsigned worker)
{
    pass_ctx *x = vctx;
    const gen_circuit *c = x->c;
    gen_block *b = &x->blk[worker];
    uint64_t *lab = x->labels[worker];
    for (size_t bi = begin; bi < end; bi++) {
        if (atomic_load_explicit(&x->err, memory_order_relaxed))
            return;
        uint64_t cons0 = (uint64_t)bi * c->block_cons;
        uint64_t left = x->o->n_constraints - cons0;
        b->index = bi;
        b->limit = left < c->block_cons ? left : c->block_cons;
        gen_block_run(b);
        if (b->overflow || b->n_cons != b->limit ||
            (b->limit == c->block_cons && (b->cons_len != x->block_bytes || b->n_wires != c->block_wires))) {
            fail_once(x, EINVAL, -2);
            return;
        }
        uint32_t seed0 = c->seed_base + (uint32_t)bi * GEN_SEEDS;
        uint32_t wire0 = c->wire_base + (uint32_t)bi * c->block_wires;
        int e = io_pwrite_all(x->r1cs_fd, b->cons, b->cons_len,
                              IO_W_R1CS_PREFIX + (uint64_t)bi * x->block_bytes);
        if (e) {
            fail_once(x, e, -1);
            return;
        }
        for (uint32_t i = 0; i < GEN_SEEDS; i++)
            lab[i] = seed0 + i;
        for (uint32_t i = 0; i < b->n_wires; i++)
            lab[GEN_SEEDS + i] = wire0 + i;
        if ((e = io_pwrite_all(x->r1cs_fd, lab, GEN_SEEDS * 8, x->labels_off + (uint64_t)seed0 * 8)) ||
            (e = io_pwrite_all(x->r1cs_fd, lab + GEN_SEEDS, (size_t)b->n_wires * 8,
                               x->labels_off + (uint64_t)wire0 * 8))) {
            fail_once(x, e, -1);
            return;
        }
        uint64_t v01 = 0;
        for (uint32_t p = 0; p < c->n_part; p++) {
            const uint8_t *v = b->vals + (size_t)p * b->slab;
            if ((e = io_pwrite_all(x->wtns_fd[p], v, GEN_SEEDS * CUZK_FR_BYTES,
                                   IO_W_WTNS_PREFIX + (uint64_t)seed0 * CUZK_FR_BYTES)) ||
                (e = io_pwrite_all(x->wtns_fd[p], v + GEN_SEEDS * CUZK_FR_BYTES,
                                   (size_t)b->n_wires * CUZK_FR_BYTES,
                                   IO_W_WTNS_PREFIX + (uint64_t)wire0 * CUZK_FR_BYTES))) {
                fail_once(x, e, (int)p);
                return;
            }
            v01 += count_01(v, GEN_SEEDS + (size_t)b->n_wires);
        }
        size_t nl = GEN_SEEDS + (size_t)b->n_wires;
        atomic_fetch_add(&x->in_a, popcount_range(b->mark[0], nl));
        atomic_fetch_add(&x->in_b, popcount_range(b->mark[1], nl));
        atomic_fetch_add(&x->v01, v01);
        uint64_t done = atomic_fetch_add(&x->done, b->n_cons) + b->n_cons;
        if (x->o->progress) {
            uint64_t ms = (uint64_t)((now_s() - x->t0) * 1000);
            uint64_t due = atomic_load(&x->next_report_ms);
            if (ms >= due && atomic_compare_exchange_strong(&x->next_report_ms, &due, ms + 1000))
                x->o->progress(x->o->progress_ctx, done, x->o->n_constraints);
        }
    }
}

static cuzk_err open_out(int *fd, const char *path, uint64_t size)
{
    *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (*fd < 0)
        return cuzk_error_set(CUZK_EIO, "%s: cannot create: %s", path, strerror(errno));
    /* Reserve the space now so that a full disk fails at once, not hours later. */
    if (size && fallocate(*fd, 0, 0, (off_t)size) != 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
        int err = errno;
        close(*fd);
        *fd = -1;
        unlink(path);
        return cuzk_error_set(CUZK_EIO, "%s: cannot reserve %llu bytes: %s", path,
                              (unsigned long long)size, strerror(err));
    }
    return CUZK_OK;
}

cuzk_err cuzk_gen_write(cuzk_gen_stats *st, const char *dir, const cuzk_gen_opts *o)
{
    double t0 = now_s();
    if (!dir || !o)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_gen_write: NULL argument");
    if (o->n_constraints < 1 || o->n_constraints > UINT32_MAX)
        return cuzk_error_set(CUZK_EINVAL, "gen: %llu constraints: must be 1 .. 2^32-1",
                              (unsigned long long)o->n_constraints);
    if (o->n_partitions < 1 || o->n_partitions > CUZK_GEN_MAX_PARTITIONS)
        return cuzk_error_set(CUZK_EINVAL, "gen: %u partitions: must be 1 .. %d", o->n_partitions,
                              CUZK_GEN_MAX_PARTITIONS);
    if (o->profile != CUZK_GEN_POREP && o->profile != CUZK_GEN_DENSE)
        return cuzk_error_set(CUZK_EINVAL, "gen: unknown profile %d", (int)o->profile);
    if (o->n_public > (int64_t)1 << 24)
        return cuzk_error_set(CUZK_EINVAL, "gen: %lld public inputs: at most 2^24",
                              (long long)o->n_public);
    if (strlen(dir) > GEN_PATH_MAX - 64)
        return cuzk_error_set(CUZK_EINVAL, "gen: output directory name too long");

    const uint32_t P = o->n_partitions;
    const uint64_t N = o->n_constraints;
    gen_circuit *c = calloc(1, sizeof *c);
    uint64_t *part_seed = malloc(P * sizeof *part_seed);
    if (!c || !part_seed) {
        free(c);
        free(part_seed);
        return cuzk_error_set(CUZK_ENOMEM, "gen: out of memory");
    }
    c->profile = o->profile;
    c->n_part = P;
    profile_sizes(o->profile, &c->iter_cons, &c->block_cons);
    c->n_public = n_public_for(o->profile, o->n_public, N);
    c->circuit_seed = gen_mix(o->seed, 0x63697263756974ULL);   /* "circuit" */
    for (uint32_t p = 0; p < P; p++)
        part_seed[p] = gen_mix(o->seed, 0x7769746e657373ULL + p);   /* "witness" + p */
    c->part_seed = part_seed;
    gen_circuit_init(c);

    const uint64_t n_blocks = (N + c->block_cons - 1) / c->block_cons;
    const uint64_t n_full = N / c->block_cons, rem = N % c->block_cons;
    cuzk_err e = CUZK_OK;
    uint64_t seed_base = 1 + (uint64_t)c->n_public;
    uint64_t wire_base = seed_base + GEN_SEEDS * n_blocks;
    unsigned nth = o->nthreads ? o->nthreads : cuzk_parallel_threads();
    if (nth > n_blocks)
        nth = (unsigned)n_blocks;
    cuzk_fr *pub_val = NULL;
    uint8_t *pub_mark[2] = {calloc(c->n_public + 1, 1), calloc(c->n_public + 1, 1)};
    gen_block *blk = calloc(nth, sizeof *blk);
    uint64_t **labels = calloc(nth, sizeof *labels);
    int r1cs_fd = -1, *wtns_fd = malloc(P * sizeof(int));
    char *path = malloc(GEN_PATH_MAX);
    uint8_t *head = NULL;
    if (!pub_mark[0] || !pub_mark[1] || !blk || !labels || !wtns_fd || !path) {
        e = cuzk_error_set(CUZK_ENOMEM, "gen: out of memory");
        goto out;
    }
    for (uint32_t p = 0; p < P; p++)
        wtns_fd[p] = -1;
    if (wire_base > UINT32_MAX) {
        e = cuzk_error_set(CUZK_ESIZE, "gen: %llu public inputs and seeds need 2^32 wires or more",
                           (unsigned long long)wire_base);
        goto out;
    }
    c->seed_base = (uint32_t)seed_base;
    c->wire_base = (uint32_t)wire_base;

    /* Sizes from counting runs of a full block and of the last, partial one. */
    uint64_t full_bytes = 0, full_terms[3] = {0, 0, 0}, rem_bytes = 0, rem_terms[3] = {0, 0, 0};
    uint32_t rem_wires = 0;
    {
        gen_block cb;
        if (!block_alloc(&cb, c, 0, 0, pub_mark)) {
            e = cuzk_error_set(CUZK_ENOMEM, "gen: out of memory");
            goto out;
        }
        cb.index = 0;
        cb.limit = c->block_cons;
        gen_block_run(&cb);
        full_bytes = cb.cons_len;
        c->block_wires = cb.n_wires;
        memcpy(full_terms, cb.n_terms, sizeof full_terms);
        if (rem) {
            cb.index = n_blocks - 1;
            cb.limit = rem;
            gen_block_run(&cb);
            rem_bytes = cb.cons_len;
            rem_wires = cb.n_wires;
            memcpy(rem_terms, cb.n_terms, sizeof rem_terms);
        }
        block_free(&cb);
    }
    uint64_t n_wires = wire_base + n_full * c->block_wires + rem_wires;
    if (n_wires > UINT32_MAX) {
        e = cuzk_error_set(CUZK_ESIZE, "gen: %llu constraints need %llu wires, more than 2^32-1",
                           (unsigned long long)N, (unsigned long long)n_wires);
        goto out;
    }
    uint64_t sec2 = n_full * full_bytes + rem_bytes;
    uint64_t labels_off = IO_W_R1CS_PREFIX + sec2 + IO_W_SEC_HEADER;
    uint64_t r1cs_bytes = labels_off + n_wires * 8;
    uint64_t wtns_bytes = IO_W_WTNS_PREFIX + n_wires * CUZK_FR_BYTES;

    /* Public inputs, per partition. */
    pub_val = malloc(((size_t)P * c->n_public + 1) * sizeof(cuzk_fr));
    size_t head_len = IO_W_R1CS_PREFIX > IO_W_WTNS_PREFIX ? IO_W_R1CS_PREFIX : IO_W_WTNS_PREFIX;
    head_len += (size_t)seed_base * 8 + (size_t)seed_base * CUZK_FR_BYTES;
    head = calloc(1, head_len);
    if (!pub_val || !head) {
        e = cuzk_error_set(CUZK_ENOMEM, "gen: out of memory");
        goto out;
    }
    for (uint32_t p = 0; p < P; p++) {
        uint64_t ws = gen_mix(part_seed[p], UINT64_MAX);
        for (uint32_t i = 0; i < c->n_public; i++)
            gen_rand_fr(&pub_val[(size_t)p * c->n_public + i], &ws);
    }
    c->pub_val = pub_val;

    /* Worker blocks. */
    size_t cons_cap = full_bytes > rem_bytes ? full_bytes : rem_bytes;
    for (unsigned w = 0; w < nth; w++) {
        labels[w] = malloc((GEN_SEEDS + (size_t)c->block_cons) * 8);
        if (!labels[w] || !block_alloc(&blk[w], c, P, cons_cap ? cons_cap : 1, pub_mark)) {
            e = cuzk_error_set(CUZK_ENOMEM, "gen: out of memory for %u threads", nth);
            goto out;
        }
    }

    /* Files and their fixed parts. */
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        e = cuzk_error_set(CUZK_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
        goto out;
    }
    snprintf(path, GEN_PATH_MAX, "%s/circuit.r1cs", dir);
    if ((e = open_out(&r1cs_fd, path, r1cs_bytes)) != CUZK_OK)
        goto out;
    io_r1cs_counts rc = {(uint32_t)n_wires, 0, c->n_public, GEN_SEEDS * (uint32_t)n_blocks,
                         n_wires, (uint32_t)N};
    io_r1cs_prefix(head, &rc, sec2, 3);
    int err = io_pwrite_all(r1cs_fd, head, IO_W_R1CS_PREFIX, 0);
    io_r1cs_sec3_header(head, (uint32_t)n_wires);
    if (!err)
        err = io_pwrite_all(r1cs_fd, head, IO_W_SEC_HEADER, labels_off - IO_W_SEC_HEADER);
    uint8_t *lab0 = head + IO_W_R1CS_PREFIX;   /* labels of the one and the public inputs */
    for (uint64_t i = 0; i < seed_base; i++)
        memcpy(lab0 + i * 8, &i, 8);
    if (!err)
        err = io_pwrite_all(r1cs_fd, lab0, (size_t)seed_base * 8, labels_off);
    if (err) {
        e = cuzk_error_set(CUZK_EIO, "%s: cannot write: %s", path, strerror(err));
        goto out;
    }
    for (uint32_t p = 0; p < P; p++) {
        snprintf(path, GEN_PATH_MAX, "%s/witness-%u.wtns", dir, p);
        if ((e = open_out(&wtns_fd[p], path, wtns_bytes)) != CUZK_OK)
            goto out;
        io_wtns_prefix(head, (uint32_t)n_wires);
        uint8_t *v = head + IO_W_WTNS_PREFIX;
        memset(v, 0, (size_t)seed_base * CUZK_FR_BYTES);
        v[0] = 1;   /* wire 0: the constant one */
        for (uint32_t i = 0; i < c->n_public; i++)
            cuzk_fr_to_bytes_le(v + (size_t)(1 + i) * CUZK_FR_BYTES,
                                &pub_val[(size_t)p * c->n_public + i]);
        if ((err = io_pwrite_all(wtns_fd[p], head, IO_W_WTNS_PREFIX + (size_t)seed_base * CUZK_FR_BYTES, 0))) {
            e = cuzk_error_set(CUZK_EIO, "%s: cannot write: %s", path, strerror(err));
            goto out;
        }
    }

    /* The blocks, in parallel. */
    pass_ctx x = {.c = c, .o = o, .blk = blk, .labels = labels, .r1cs_fd = r1cs_fd,
                  .wtns_fd = wtns_fd, .n_blocks = n_blocks, .block_bytes = full_bytes,
                  .labels_off = labels_off, .t0 = t0};
    atomic_init(&x.done, 0);
    atomic_init(&x.in_a, 0);
    atomic_init(&x.in_b, 0);
    atomic_init(&x.v01, 0);
    atomic_init(&x.err, 0);
    atomic_init(&x.err_file, 0);
    atomic_init(&x.next_report_ms, 1000);
    cuzk_parallel_for(n_blocks, 1, nth, pass_range, &x);
    int ferr = atomic_load(&x.err);
    if (ferr) {
        int file = atomic_load(&x.err_file);
        if (file == -2)
            e = cuzk_error_set(CUZK_EINVAL, "gen: internal error: a block did not have its expected size");
        else {
            if (file == -1)
                snprintf(path, GEN_PATH_MAX, "%s/circuit.r1cs", dir);
            else
                snprintf(path, GEN_PATH_MAX, "%s/witness-%d.wtns", dir, file);
            e = cuzk_error_set(CUZK_EIO, "%s: cannot write: %s", path, strerror(ferr));
        }
        goto out;
    }
    if (o->progress)
        o->progress(o->progress_ctx, N, N);

    if (st) {
        memset(st, 0, sizeof *st);
        st->n_wires = (uint32_t)n_wires;
        st->n_public = c->n_public;
        st->n_prv_in = GEN_SEEDS * (uint32_t)n_blocks;
        st->n_constraints = N;
        for (int m = 0; m < 3; m++)
            st->n_terms[m] = n_full * full_terms[m] + rem_terms[m];
        st->r1cs_bytes = r1cs_bytes;
        st->wtns_bytes = wtns_bytes;
        st->n_private = n_wires - seed_base;
        st->private_in_a = atomic_load(&x.in_a);
        st->private_in_b = atomic_load(&x.in_b);
        st->private_01 = atomic_load(&x.v01);
        for (uint32_t i = 1; i <= c->n_public; i++) {
            st->public_in_a += pub_mark[0][i];
            st->public_in_b += pub_mark[1][i];
        }
    }

out:
    if (r1cs_fd >= 0 && close(r1cs_fd) != 0 && e == CUZK_OK)
        e = cuzk_error_set(CUZK_EIO, "%s/circuit.r1cs: close: %s", dir, strerror(errno));
    if (wtns_fd)
        for (uint32_t p = 0; p < P; p++)
            if (wtns_fd[p] >= 0 && close(wtns_fd[p]) != 0 && e == CUZK_OK)
                e = cuzk_error_set(CUZK_EIO, "%s/witness-%u.wtns: close: %s", dir, p, strerror(errno));
    if (blk)
        for (unsigned w = 0; w < nth; w++)
            block_free(&blk[w]);
    if (labels)
        for (unsigned w = 0; w < nth; w++)
            free(labels[w]);
    free(labels);
    free(blk);
    free(wtns_fd);
    free(path);
    free(head);
    free(pub_val);
    free(pub_mark[0]);
    free(pub_mark[1]);
    free(part_seed);
    free(c);
    if (st && e == CUZK_OK)
        st->seconds = now_s() - t0;
    return e;
}
