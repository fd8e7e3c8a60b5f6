/* SPDX-License-Identifier: Apache-2.0 */
/* bellman/bellperson .params reader and writer, Filecoin's compressed proof. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/pairing.h"
#include "cuzk/params.h"
#include "io/binfile.h"
#include "io/params_internal.h"
#include "util/parallel.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif

#define G1_UNC 96    /* zcash uncompressed G1: x || y, 48 bytes big-endian each */
#define G2_UNC 192   /* zcash uncompressed G2: x.c1 || x.c0 || y.c1 || y.c0 */
#define G1_CMP 48    /* zcash compressed G1 */
#define G2_CMP 96    /* zcash compressed G2 */
#define LEN_BYTES 4  /* u32 big-endian vector length */
/* alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2 */
#define VK_BYTES (3 * G1_UNC + 3 * G2_UNC)

const char *const params_vec_names[PARAMS_NVEC] = {"ic", "h", "l", "a", "b_g1", "b_g2"};

void params_vectors(params_vec v[PARAMS_NVEC], const cuzk_params *p)
{
    const uint32_t n[PARAMS_NVEC] = {p->n_ic, p->n_h, p->n_l, p->n_a, p->n_b_g1, p->n_b_g2};
    void *const pts[PARAMS_NVEC] = {p->ic, p->h, p->l, p->a, p->b_g1, p->b_g2};
    for (int i = 0; i < PARAMS_NVEC; i++) {
        v[i].n = n[i];
        v[i].pts = pts[i];
        v[i].g2 = i == PARAMS_NVEC - 1;
    }
}

void params_set_vector(cuzk_params *p, int i, uint32_t n, void *pts)
{
    switch (i) {
    case 0: p->n_ic = n; p->ic = pts; break;
    case 1: p->n_h = n; p->h = pts; break;
    case 2: p->n_l = n; p->l = pts; break;
    case 3: p->n_a = n; p->a = pts; break;
    case 4: p->n_b_g1 = n; p->b_g1 = pts; break;
    default: p->n_b_g2 = n; p->b_g2 = pts; break;
    }
}

void cuzk_params_free(cuzk_params *p)
{
    if (!p)
        return;
    free(p->path);
    free(p->ic);
    free(p->h);
    free(p->l);
    free(p->a);
    free(p->b_g1);
    free(p->b_g2);
    free(p);
}

cuzk_params *params_new(const char *path)
{
    cuzk_params *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->path = strdup(path ? path : "");
    if (!p->path) {
        free(p);
        return NULL;
    }
    return p;
}

/* ---- decoding ---- */

typedef struct {
    void *out;
    const uint8_t *in;
    unsigned flags;
    bool g2;
} dec_ctx;

static cuzk_err decode_one(const dec_ctx *c, size_t i)
{
    cuzk_err e;
    bool inf;
    if (c->g2) {
        cuzk_g2_affine *r = (cuzk_g2_affine *)c->out + i;
        e = cuzk_g2_from_uncompressed(r, c->in + i * G2_UNC, c->flags);
        inf = e == CUZK_OK && cuzk_g2_affine_is_inf(r);
    } else {
        cuzk_g1_affine *r = (cuzk_g1_affine *)c->out + i;
        e = cuzk_g1_from_uncompressed(r, c->in + i * G1_UNC, c->flags);
        inf = e == CUZK_OK && cuzk_g1_affine_is_inf(r);
    }
    if (inf)
        return cuzk_error_set(CUZK_EFORMAT, "point at infinity");
    return e;
}

static bool decode_ok(void *ctx, size_t i) { return decode_one(ctx, i) == CUZK_OK; }

/* Whether the subgroup checks of a vector of count points go to the device: a CUDA build
 * with a device and at least min points (cuzk_gpu_opts.params_check_min: 65536 when 0; the
 * CPU checks about 0.2 M G1 points a second on 16 cores, the device tens of millions). */
static bool subgroup_on_gpu(uint32_t count, size_t min)
{
#ifdef CUZK_HAVE_CUDA
    if (count == 0 || count < (min ? min : (size_t)65536))
        return false;
    if (!cuzk_gpu_available()) {
        cuzk_error_clear();
        return false;
    }
    return true;
#else
    (void)count, (void)min;
    return false;
#endif
}

/* Decodes count points at in (file offset off) into a new array. */
static cuzk_err decode_vec(void **out, const char *path, const char *name, const uint8_t *in,
                           uint64_t off, uint32_t count, bool g2, unsigned flags,
                           size_t gpu_min)
{
    size_t esize = g2 ? sizeof(cuzk_g2_affine) : sizeof(cuzk_g1_affine);
    *out = malloc(count ? (size_t)count * esize : 1);
    if (!*out)
        return cuzk_error_set(CUZK_ENOMEM, "%s: vector %s: out of memory for %u points", path,
                              name, count);
    /* large vectors: decoded with the curve checks here, then the subgroup checks on the
     * device (if that fails, the CPU does them after all) */
    bool dev = (flags & CUZK_DECODE_CHECK_SUBGROUP) && subgroup_on_gpu(count, gpu_min);
    dec_ctx c = {*out, in, dev ? flags & ~CUZK_DECODE_CHECK_SUBGROUP : flags, g2};
    /* a subgroup check costs a scalar multiplication: small chunks balance better */
    size_t grain = (c.flags & CUZK_DECODE_CHECK_SUBGROUP) ? 16 : 1024;
    size_t bad = io_par_first_fail(count, grain, decode_ok, &c);
#ifdef CUZK_HAVE_CUDA
    if (dev && bad == count) {
        c.flags = flags; /* from here (and for the detail below) the CPU's checks in full */
        if (cuzk_gpu_subgroup_check(*out, count, g2 ? 2 : 1, 0, &bad) != CUZK_OK) {
            cuzk_error_clear(); /* the device failed: the CPU checks */
            bad = io_par_first_fail(count, 16, decode_ok, &c);
        }
    }
#endif
    if (bad == count)
        return CUZK_OK;
    cuzk_err e = decode_one(&c, bad);   /* again on this thread, for the detail */
    char why[256];
    snprintf(why, sizeof why, "%s", cuzk_error_detail());
    if (e == CUZK_OK) { /* the device's check failed a point the CPU's passes: a bug */
        e = CUZK_ENOT_IN_SUBGROUP;
        snprintf(why, sizeof why, "the device's subgroup check rejects it, the CPU's does not "
                                  "(please report this)");
    }
    free(*out);
    *out = NULL;
    return cuzk_error_set(e, "%s: vector %s: point %zu (file offset %llu): %s", path, name, bad,
                          (unsigned long long)(off + bad * (g2 ? G2_UNC : G1_UNC)), why);
}

static uint32_t rd_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wr_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static cuzk_err decode_vk_point(void *r, const char *path, const char *name, const uint8_t *in,
                                uint64_t off, bool g2)
{
    dec_ctx c = {r, in, CUZK_DECODE_CHECK_SUBGROUP, g2};
    cuzk_err e = decode_one(&c, 0);
    if (e == CUZK_OK)
        return e;
    char why[256];
    snprintf(why, sizeof why, "%s", cuzk_error_detail());
    return cuzk_error_set(e, "%s: verifying key: %s (file offset %llu): %s", path, name,
                          (unsigned long long)off, why);
}

cuzk_err params_decode(cuzk_params **out, const char *path, const uint8_t *m, uint64_t len,
                       unsigned flags, size_t gpu_min)
{
    *out = NULL;
    cuzk_params *p = params_new(path);
    if (!p)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    cuzk_err e;
    if (len < VK_BYTES) {
        e = cuzk_error_set(CUZK_ESIZE, "%s: file is %llu bytes, shorter than the %d-byte "
                                       "verifying key", path, (unsigned long long)len, VK_BYTES);
        goto fail;
    }
    uint64_t off = 0;
    struct {
        void *r;
        const char *name;
        bool g2;
    } vk[6] = {{&p->alpha1, "alpha_g1", false}, {&p->beta1, "beta_g1", false},
               {&p->beta2, "beta_g2", true},    {&p->gamma2, "gamma_g2", true},
               {&p->delta1, "delta_g1", false}, {&p->delta2, "delta_g2", true}};
    for (int i = 0; i < 6; i++) {
        if ((e = decode_vk_point(vk[i].r, path, vk[i].name, m + off, off, vk[i].g2)) != CUZK_OK)
            goto fail;
        off += vk[i].g2 ? G2_UNC : G1_UNC;
    }
    for (int v = 0; v < PARAMS_NVEC; v++) {
        const char *name = params_vec_names[v];
        bool g2 = v == PARAMS_NVEC - 1;
        uint64_t psize = g2 ? G2_UNC : G1_UNC;
        if (len - off < LEN_BYTES) {
            e = cuzk_error_set(CUZK_ESIZE, "%s: vector %s: the file ends at byte %llu, inside "
                                           "its length field at offset %llu", path, name,
                               (unsigned long long)len, (unsigned long long)off);
            goto fail;
        }
        uint32_t n = rd_be32(m + off);
        off += LEN_BYTES;
        if ((len - off) / psize < n) {
            e = cuzk_error_set(CUZK_ESIZE, "%s: vector %s: length %u needs %llu bytes from "
                                           "offset %llu, the file has %llu left", path, name, n,
                               (unsigned long long)(n * psize), (unsigned long long)off,
                               (unsigned long long)(len - off));
            goto fail;
        }
        /* vk points and IC are few: always subgroup-checked */
        unsigned f = (v == 0 || !(flags & CUZK_PARAMS_TRUSTED)) ? CUZK_DECODE_CHECK_SUBGROUP : 0;
        void *pts;
        if ((e = decode_vec(&pts, path, name, m + off, off, n, g2, f, gpu_min)) != CUZK_OK)
            goto fail;
        params_set_vector(p, v, n, pts);
        off += n * psize;
    }
    if (off != len) {
        e = cuzk_error_set(CUZK_ESIZE, "%s: %llu bytes after the last vector (b_g2 ends at "
                                       "offset %llu)", path, (unsigned long long)(len - off),
                           (unsigned long long)off);
        goto fail;
    }
    if (p->n_ic == 0) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: vector ic is empty (it holds at least the point "
                                        "of the constant one)", path);
        goto fail;
    }
    *out = p;
    return CUZK_OK;
fail:
    cuzk_params_free(p);
    return e;
}

cuzk_err params_map(params_mapping *mp, const char *path)
{
    memset(mp, 0, sizeof *mp);
    mp->guard = -1;
    struct stat st;
    int fd;
    cuzk_err oe = io_open_regular(&fd, path, &st);
    if (oe != CUZK_OK)
        return oe;
    mp->len = (uint64_t)st.st_size;
    mp->st = st;
    if (mp->len) {
        void *m = mmap(NULL, mp->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int er = errno;
            close(fd);
            return cuzk_error_set(CUZK_EIO, "%s: cannot map: %s", path, strerror(er));
        }
        mp->map = m;
        mp->guard = io_guard_add(m, mp->len);
        madvise(m, mp->len, MADV_WILLNEED);
    }
    close(fd);
    return CUZK_OK;
}

void params_unmap(params_mapping *mp)
{
    io_guard_remove(mp->guard);
    mp->guard = -1;
    if (mp->map)
        munmap(mp->map, mp->len);
    mp->map = NULL;
}

cuzk_err params_mapping_check(const params_mapping *mp, const char *path)
{
    return io_guard_hit(mp->guard)
               ? cuzk_error_set(CUZK_EIO, "%s: the file was truncated while it was read", path)
               : CUZK_OK;
}

cuzk_err cuzk_params_load(cuzk_params **out, const char *path, unsigned flags)
{
    return cuzk_params_load_gpu(out, path, flags, NULL);
}

cuzk_err cuzk_params_load_gpu(cuzk_params **out, const char *path, unsigned flags,
                              const cuzk_gpu_opts *gpu)
{
    return cuzk_params_load_ex(out, path, flags, gpu, NULL);
}

cuzk_err cuzk_params_load_ex(cuzk_params **out, const char *path, unsigned flags,
                             const cuzk_gpu_opts *gpu, const char *cache_dir)
{
    *out = NULL;
    if (!path)
        return cuzk_error_set(CUZK_EINVAL, "params: no path");
    if (flags & CUZK_PARAMS_CACHE) {
        cuzk_params *p;
        if (params_cache_load_checked(&p, path, !(flags & CUZK_PARAMS_TRUSTED), cache_dir) ==
            CUZK_OK) {
            *out = p;
            return CUZK_OK;
        }
        cuzk_error_clear();   /* no usable cache: decode the file */
    }
    params_mapping mp;
    cuzk_err e = params_map(&mp, path);
    if (e != CUZK_OK)
        return e;
    e = params_decode(out, path, mp.map, mp.len, flags, gpu ? gpu->params_check_min : 0);
    cuzk_err te = params_mapping_check(&mp, path);
    params_unmap(&mp);
    if (te != CUZK_OK) { /* what was decoded is not the file */
        cuzk_params_free(*out);
        *out = NULL;
        e = te;
    }
    if (e == CUZK_OK && (flags & CUZK_PARAMS_CACHE)) {
        /* a cache that cannot be written (read-only directory) only costs the next start */
        if (params_cache_write_flagged(*out, path, !(flags & CUZK_PARAMS_TRUSTED), cache_dir) !=
            CUZK_OK)
            cuzk_error_clear();
    }
    return e;
}

/* ---- writing ---- */

uint64_t cuzk_params_file_bytes(const cuzk_params *p)
{
    return VK_BYTES + PARAMS_NVEC * LEN_BYTES +
           ((uint64_t)p->n_ic + p->n_h + p->n_l + p->n_a + p->n_b_g1) * G1_UNC +
           (uint64_t)p->n_b_g2 * G2_UNC;
}

typedef struct {
    const void *pts;
    uint8_t *buf;
    bool g2;
} enc_ctx;

static void encode_range(void *vc, size_t b, size_t e, unsigned w)
{
    (void)w;
    enc_ctx *c = vc;
    for (size_t i = b; i < e; i++) {
        if (c->g2)
            cuzk_g2_to_uncompressed(c->buf + i * G2_UNC, (const cuzk_g2_affine *)c->pts + i);
        else
            cuzk_g1_to_uncompressed(c->buf + i * G1_UNC, (const cuzk_g1_affine *)c->pts + i);
    }
}

static bool not_inf(void *vc, size_t i)
{
    const params_vec *v = vc;
    return v->g2 ? !cuzk_g2_affine_is_inf((const cuzk_g2_affine *)v->pts + i)
                 : !cuzk_g1_affine_is_inf((const cuzk_g1_affine *)v->pts + i);
}

#define WRITE_BLOCK 65536   /* points encoded per parallel step of the writer */

cuzk_err cuzk_params_write(const char *path, const cuzk_params *p)
{
    if (!path || !p)
        return cuzk_error_set(CUZK_EINVAL, "params write: no path or no key");
    params_vec vec[PARAMS_NVEC];
    params_vectors(vec, p);
    const cuzk_g1_affine *vk1[3] = {&p->alpha1, &p->beta1, &p->delta1};
    const cuzk_g2_affine *vk2[3] = {&p->beta2, &p->gamma2, &p->delta2};
    for (int i = 0; i < 3; i++)
        if (cuzk_g1_affine_is_inf(vk1[i]) || cuzk_g2_affine_is_inf(vk2[i]))
            return cuzk_error_set(CUZK_EINVAL, "%s: a verifying-key point is infinity", path);
    for (int v = 0; v < PARAMS_NVEC; v++) {
        if (vec[v].n && !vec[v].pts)
            return cuzk_error_set(CUZK_EINVAL, "%s: vector %s: %u points but no array", path,
                                  params_vec_names[v], vec[v].n);
        size_t bad = io_par_first_fail(vec[v].n, 4096, not_inf, &vec[v]);
        if (bad < vec[v].n)
            return cuzk_error_set(CUZK_EINVAL, "%s: vector %s: point %zu is infinity", path,
                                  params_vec_names[v], bad);
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return cuzk_error_set(CUZK_EIO, "%s: cannot create: %s", path, strerror(errno));
    uint8_t *buf = malloc((size_t)WRITE_BLOCK * G2_UNC);
    bool ok = buf != NULL;
    if (ok) {
        uint8_t *q = buf;
        cuzk_g1_to_uncompressed(q, &p->alpha1), q += G1_UNC;
        cuzk_g1_to_uncompressed(q, &p->beta1), q += G1_UNC;
        cuzk_g2_to_uncompressed(q, &p->beta2), q += G2_UNC;
        cuzk_g2_to_uncompressed(q, &p->gamma2), q += G2_UNC;
        cuzk_g1_to_uncompressed(q, &p->delta1), q += G1_UNC;
        cuzk_g2_to_uncompressed(q, &p->delta2), q += G2_UNC;
        ok = fwrite(buf, 1, VK_BYTES, f) == VK_BYTES;
    }
    for (int v = 0; ok && v < PARAMS_NVEC; v++) {
        uint8_t lb[LEN_BYTES];
        wr_be32(lb, vec[v].n);
        ok = fwrite(lb, 1, LEN_BYTES, f) == LEN_BYTES;
        size_t psize = vec[v].g2 ? G2_UNC : G1_UNC;
        size_t esize = vec[v].g2 ? sizeof(cuzk_g2_affine) : sizeof(cuzk_g1_affine);
        for (size_t at = 0; ok && at < vec[v].n; at += WRITE_BLOCK) {
            size_t k = vec[v].n - at < WRITE_BLOCK ? vec[v].n - at : WRITE_BLOCK;
            enc_ctx c = {(const uint8_t *)vec[v].pts + at * esize, buf, vec[v].g2};
            cuzk_parallel_for(k, 1024, 0, encode_range, &c);
            ok = fwrite(buf, psize, k, f) == k;
        }
    }
    free(buf);
    if (fclose(f) != 0)
        ok = false;
    if (!ok) {
        remove(path);
        return cuzk_error_set(buf ? CUZK_EIO : CUZK_ENOMEM, "%s: write failed", path);
    }
    return CUZK_OK;
}

/* ---- verifying key ---- */

cuzk_err cuzk_vk_from_params(cuzk_vk **out, const cuzk_params *p)
{
    *out = NULL;
    if (!p || p->n_ic == 0)
        return cuzk_error_set(CUZK_EINVAL, "verification key: no key or an empty IC");
    cuzk_vk *vk = calloc(1, sizeof *vk);
    cuzk_g1_affine *ic = malloc((size_t)p->n_ic * sizeof *ic);
    if (!vk || !ic) {
        free(vk);
        free(ic);
        return cuzk_error_set(CUZK_ENOMEM, "verification key: out of memory");
    }
    memcpy(ic, p->ic, (size_t)p->n_ic * sizeof *ic);
    vk->ic = ic;
    vk->n_public = p->n_ic - 1;
    vk->alpha1 = p->alpha1;
    vk->beta2 = p->beta2;
    vk->gamma2 = p->gamma2;
    vk->delta2 = p->delta2;
    cuzk_pairing(&vk->alphabeta, &vk->alpha1, &vk->beta2);
    vk->has_alphabeta = true;
    *out = vk;
    return CUZK_OK;
}

/* ---- Filecoin proof ---- */

void cuzk_proof_to_filecoin(uint8_t out[CUZK_FILECOIN_PROOF_BYTES], const cuzk_proof *p)
{
    cuzk_g1_to_compressed(out, &p->a);
    cuzk_g2_to_compressed(out + G1_CMP, &p->b);
    cuzk_g1_to_compressed(out + G1_CMP + G2_CMP, &p->c);
}

cuzk_err cuzk_proof_from_filecoin(cuzk_proof *p, const uint8_t in[CUZK_FILECOIN_PROOF_BYTES])
{
    static const char *const names[3] = {"A", "B", "C"};
    cuzk_err e[3];
    e[0] = cuzk_g1_from_compressed(&p->a, in, CUZK_DECODE_CHECK_SUBGROUP);
    if (e[0] == CUZK_OK && cuzk_g1_affine_is_inf(&p->a))
        e[0] = cuzk_error_set(CUZK_EFORMAT, "point at infinity");
    if (e[0] == CUZK_OK) {
        e[1] = cuzk_g2_from_compressed(&p->b, in + G1_CMP, CUZK_DECODE_CHECK_SUBGROUP);
        if (e[1] == CUZK_OK && cuzk_g2_affine_is_inf(&p->b))
            e[1] = cuzk_error_set(CUZK_EFORMAT, "point at infinity");
    } else {
        e[1] = CUZK_OK;
    }
    if (e[0] == CUZK_OK && e[1] == CUZK_OK) {
        e[2] = cuzk_g1_from_compressed(&p->c, in + G1_CMP + G2_CMP, CUZK_DECODE_CHECK_SUBGROUP);
        if (e[2] == CUZK_OK && cuzk_g1_affine_is_inf(&p->c))
            e[2] = cuzk_error_set(CUZK_EFORMAT, "point at infinity");
    } else {
        e[2] = CUZK_OK;
    }
    for (int i = 0; i < 3; i++) {
        if (e[i] != CUZK_OK) {
            char why[256];
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
            return cuzk_error_set(e[i], "Filecoin proof: %s: %s", names[i], why);
        }
    }
    return CUZK_OK;
}

cuzk_err cuzk_proof_write_filecoin(const char *path, const cuzk_proof *p)
{
    uint8_t b[CUZK_FILECOIN_PROOF_BYTES];
    cuzk_proof_to_filecoin(b, p);
    FILE *f = fopen(path, "wb");
    if (!f)
        return cuzk_error_set(CUZK_EIO, "%s: cannot create: %s", path, strerror(errno));
    bool ok = fwrite(b, 1, sizeof b, f) == sizeof b;
    if (fclose(f) != 0 || !ok) {
        remove(path);
        return cuzk_error_set(CUZK_EIO, "%s: write failed", path);
    }
    return CUZK_OK;
}

cuzk_err cuzk_proof_read_filecoin(cuzk_proof *p, const char *path)
{
    FILE *f;
    cuzk_err fe = io_fopen_regular(&f, path);
    if (fe != CUZK_OK)
        return fe;
    uint8_t b[CUZK_FILECOIN_PROOF_BYTES + 1];
    size_t got = fread(b, 1, sizeof b, f);
    fclose(f);
    if (got > CUZK_FILECOIN_PROOF_BYTES)
        return cuzk_error_set(CUZK_ESIZE, "%s: longer than the %d bytes of a Filecoin proof",
                              path, CUZK_FILECOIN_PROOF_BYTES);
    if (got < CUZK_FILECOIN_PROOF_BYTES)
        return cuzk_error_set(CUZK_ESIZE, "%s: %zu bytes, a Filecoin proof has %d", path, got,
                              CUZK_FILECOIN_PROOF_BYTES);
    cuzk_err e = cuzk_proof_from_filecoin(p, b);
    if (e != CUZK_OK) {
        char why[300];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        return cuzk_error_set(e, "%s: %s", path, why);
    }
    return CUZK_OK;
}
