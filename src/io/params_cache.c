/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decoded cache of a .params file: PATH.cuzkcache holds the decoded points as the
 * prover uses them (Montgomery affine structures of this build), so a daemon start reads
 * them at memory/disk speed instead of converting and subgroup-checking every point again.
 *
 * Layout (host byte order, little-endian only):
 *   0  "cuzkPRMC"           magic
 *   8  u32 version (1), u32 flags (bit 0: the source was decoded with subgroup checks)
 *   16 u32 sizeof(cuzk_g1_affine), u32 sizeof(cuzk_g2_affine)
 *   24 u64 source size, i64 source mtime seconds, i64 mtime nanoseconds, u64 source inode
 *   56 u64 FNV-1a digest of the source's first and last MiB
 *   64 u32 n_ic, n_h, n_l, n_a, n_b_g1, n_b_g2
 *   88 u64 zero
 *   96 alpha1, beta1, delta1 (G1), beta2, gamma2, delta2 (G2), then the six arrays in file
 *      order, nothing after.
 * The cache is trusted as much as the directory it sits in: its points are not re-checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/binfile.h"
#include "io/params_internal.h"
#include "util/parallel.h"

#define CACHE_MAGIC "cuzkPRMC"            /* 8 bytes, no terminator stored */
#define CACHE_VERSION 1u
#define CACHE_FLAG_CHECKED 1u
#define CACHE_HEADER_BYTES 96
#define CACHE_DIGEST_SPAN ((uint64_t)1 << 20)  /* bytes hashed at each end of the source */
#define FNV64_OFFSET 0xcbf29ce484222325ULL     /* FNV-1a 64-bit offset basis */
#define FNV64_PRIME 0x100000001b3ULL           /* FNV-1a 64-bit prime */
#define VK_RAW_BYTES (3 * sizeof(cuzk_g1_affine) + 3 * sizeof(cuzk_g2_affine))

typedef struct {
    char magic[8];
    uint32_t version, flags;
    uint32_t g1_size, g2_size;
    uint64_t src_size;
    int64_t mtime_s, mtime_ns;
    uint64_t src_ino;
    uint64_t digest;
    uint32_t n[PARAMS_NVEC];
    uint64_t zero;
} cache_header;

_Static_assert(sizeof(cache_header) == CACHE_HEADER_BYTES, "cache header layout");

char *cuzk_params_cache_path(const char *path)
{
    static const char suffix[] = ".cuzkcache";
    size_t n = strlen(path);
    char *s = malloc(n + sizeof suffix);
    if (s) {
        memcpy(s, path, n);
        memcpy(s + n, suffix, sizeof suffix);
    }
    return s;
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * FNV64_PRIME;
    return h;
}

/* The identity of the source: size, mtime, inode and the digest of its two ends. */
static cuzk_err source_identity(cache_header *h, const char *path)
{
    params_mapping mp;
    cuzk_err e = params_map(&mp, path);
    if (e != CUZK_OK)
        return e;
    uint64_t span = mp.len < CACHE_DIGEST_SPAN ? mp.len : CACHE_DIGEST_SPAN;
    uint64_t d = fnv1a(FNV64_OFFSET, mp.map, span);
    d = fnv1a(d, mp.map + (mp.len - span), span);
    h->src_size = mp.len;
    h->mtime_s = (int64_t)mp.st.st_mtim.tv_sec;
    h->mtime_ns = (int64_t)mp.st.st_mtim.tv_nsec;
    h->src_ino = (uint64_t)mp.st.st_ino;
    h->digest = d;
    params_unmap(&mp);
    return CUZK_OK;
}

cuzk_err params_cache_write_flagged(const cuzk_params *p, const char *params_path, bool checked)
{
    cache_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.version = CACHE_VERSION;
    h.flags = checked ? CACHE_FLAG_CHECKED : 0;
    h.g1_size = sizeof(cuzk_g1_affine);
    h.g2_size = sizeof(cuzk_g2_affine);
    cuzk_err e = source_identity(&h, params_path);
    if (e != CUZK_OK)
        return e;
    params_vec v[PARAMS_NVEC];
    params_vectors(v, p);
    for (int i = 0; i < PARAMS_NVEC; i++)
        h.n[i] = v[i].n;

    char *cpath = cuzk_params_cache_path(params_path);
    size_t tl = cpath ? strlen(cpath) + 32 : 0;
    char *tmp = cpath ? malloc(tl) : NULL;
    if (!tmp) {
        free(cpath);
        return cuzk_error_set(CUZK_ENOMEM, "%s: cache: out of memory", params_path);
    }
    snprintf(tmp, tl, "%s.tmp.%ld", cpath, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        e = cuzk_error_set(CUZK_EIO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        free(cpath);
        return e;
    }
    bool ok = fwrite(&h, sizeof h, 1, f) == 1;
    const cuzk_g1_affine *g1[3] = {&p->alpha1, &p->beta1, &p->delta1};
    const cuzk_g2_affine *g2[3] = {&p->beta2, &p->gamma2, &p->delta2};
    for (int i = 0; i < 3 && ok; i++)
        ok = fwrite(g1[i], sizeof *g1[i], 1, f) == 1;
    for (int i = 0; i < 3 && ok; i++)
        ok = fwrite(g2[i], sizeof *g2[i], 1, f) == 1;
    for (int i = 0; i < PARAMS_NVEC && ok; i++) {
        size_t es = v[i].g2 ? sizeof(cuzk_g2_affine) : sizeof(cuzk_g1_affine);
        ok = v[i].n == 0 || fwrite(v[i].pts, es, v[i].n, f) == v[i].n;
    }
    if (fclose(f) != 0)
        ok = false;
    if (ok && rename(tmp, cpath) != 0)
        ok = false;
    if (!ok) {
        remove(tmp);
        e = cuzk_error_set(CUZK_EIO, "%s: cannot write the cache", cpath);
    }
    free(tmp);
    free(cpath);
    return e;
}

cuzk_err cuzk_params_cache_write(const cuzk_params *p, const char *params_path)
{
    /* a key loaded from a file kept its checks in the flags it was loaded with; a caller of
     * this public entry vouches for p, so the cache is marked checked */
    return params_cache_write_flagged(p, params_path, true);
}


cuzk_err params_cache_load_checked(cuzk_params **out, const char *params_path, bool need_checked)
{
    *out = NULL;
    char *cpath = cuzk_params_cache_path(params_path);
    if (!cpath)
        return cuzk_error_set(CUZK_ENOMEM, "%s: cache: out of memory", params_path);
    params_mapping mp;
    cuzk_err e = params_map(&mp, cpath);
    if (e != CUZK_OK) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: no cache", cpath);
        free(cpath);
        return e;
    }
    cuzk_params *p = NULL;
    cache_header h, src;
    memset(&src, 0, sizeof src);
    if (mp.len < sizeof h) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: shorter than its header", cpath);
        goto done;
    }
    memcpy(&h, mp.map, sizeof h);
    if (memcmp(h.magic, CACHE_MAGIC, 8) || h.version != CACHE_VERSION ||
        h.g1_size != sizeof(cuzk_g1_affine) || h.g2_size != sizeof(cuzk_g2_affine)) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: not a cache of this version or build", cpath);
        goto done;
    }
    if (need_checked && !(h.flags & CACHE_FLAG_CHECKED)) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: made without subgroup checks", cpath);
        goto done;
    }
    if ((e = source_identity(&src, params_path)) != CUZK_OK)
        goto done;
    if (src.src_size != h.src_size || src.mtime_s != h.mtime_s || src.mtime_ns != h.mtime_ns ||
        src.src_ino != h.src_ino || src.digest != h.digest) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: stale (the source changed)", cpath);
        goto done;
    }
    uint64_t want = sizeof h + VK_RAW_BYTES;
    for (int i = 0; i < PARAMS_NVEC; i++)
        want += (uint64_t)h.n[i] * (i == PARAMS_NVEC - 1 ? sizeof(cuzk_g2_affine)
                                                          : sizeof(cuzk_g1_affine));
    if (mp.len != want) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: %llu bytes, its header says %llu", cpath,
                           (unsigned long long)mp.len, (unsigned long long)want);
        goto done;
    }
    if (!(p = params_new(params_path))) {
        e = cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", cpath);
        goto done;
    }
    const uint8_t *q = mp.map + sizeof h;
    cuzk_g1_affine *g1[3] = {&p->alpha1, &p->beta1, &p->delta1};
    cuzk_g2_affine *g2[3] = {&p->beta2, &p->gamma2, &p->delta2};
    for (int i = 0; i < 3; i++, q += sizeof(cuzk_g1_affine))
        memcpy(g1[i], q, sizeof(cuzk_g1_affine));
    for (int i = 0; i < 3; i++, q += sizeof(cuzk_g2_affine))
        memcpy(g2[i], q, sizeof(cuzk_g2_affine));
    for (int i = 0; i < PARAMS_NVEC; i++) {
        size_t bytes = (size_t)h.n[i] * (i == PARAMS_NVEC - 1 ? sizeof(cuzk_g2_affine)
                                                               : sizeof(cuzk_g1_affine));
        uint8_t *arr = malloc(bytes ? bytes : 1);
        if (!arr) {
            e = cuzk_error_set(CUZK_ENOMEM, "%s: out of memory for vector %s", cpath,
                               params_vec_names[i]);
            goto done;
        }
        cuzk_parallel_memcpy(arr, q, bytes, 0);
        params_set_vector(p, i, h.n[i], arr);
        q += bytes;
    }
    if (p->n_ic == 0) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: empty IC", cpath);
        goto done;
    }
    if ((e = params_mapping_check(&mp, cpath)) != CUZK_OK)
        goto done;
    *out = p;
    p = NULL;
done:
    cuzk_params_free(p);
    params_unmap(&mp);
    free(cpath);
    return e;
}

cuzk_err cuzk_params_cache_load(cuzk_params **out, const char *params_path)
{
    return params_cache_load_checked(out, params_path, false);
}
