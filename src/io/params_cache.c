/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decoded cache of a .params file: the decoded points as the prover uses them
 * (Montgomery affine structures of this build), so a daemon start reads them at memory/disk
 * speed instead of converting and subgroup-checking every point again. It lives in a cache
 * directory (NAME-HASH.cuzkcache there: the key's file name and a digest of its absolute
 * path), authenticated, or beside the key (PATH.cuzkcache), trusted as its directory is.
 *
 * Layout (host byte order, little-endian only):
 *   0  "cuzkPRMC"           magic
 *   8  u32 version (1), u32 flags (bit 0: the source was decoded with subgroup checks;
 *      bit 1: a tag follows the arrays)
 *   16 u32 sizeof(cuzk_g1_affine), u32 sizeof(cuzk_g2_affine)
 *   24 u64 source size, i64 source mtime seconds, i64 mtime nanoseconds, u64 source inode
 *   56 u64 FNV-1a digest of the source's first and last MiB
 *   64 u32 n_ic, n_h, n_l, n_a, n_b_g1, n_b_g2
 *   88 u64 zero
 *   96 alpha1, beta1, delta1 (G1), beta2, gamma2, delta2 (G2), then the six arrays in file
 *      order; then, with flag bit 1, the tag (32 bytes), nothing after.
 * The tag: HMAC-SHA256 keyed by the cache directory's secret (DIR/secret, 32 random bytes,
 * 0600) of the header and the tags of the file's 64 MiB chunks after the header (each an
 * HMAC-SHA256 of its chunk, computed in parallel). A cache in a directory is used only with
 * a matching tag, so a planted or modified file is rebuilt, never trusted; its points are
 * not re-checked. One beside the key is trusted as much as the directory it sits in.
 * Written to a temporary file made with mkstemp (O_CREAT | O_EXCL: a link planted at its
 * name is never followed), fsynced, then renamed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/binfile.h"
#include "io/params_internal.h"
#include "util/parallel.h"

#define CACHE_MAGIC "cuzkPRMC"            /* 8 bytes, no terminator stored */
#define CACHE_VERSION 1u
#define CACHE_FLAG_CHECKED 1u
#define CACHE_FLAG_TAG 2u
#define CACHE_HEADER_BYTES 96
#define CACHE_TAG_BYTES 32                     /* HMAC-SHA256 */
#define CACHE_SECRET_BYTES 32
#define CACHE_TAG_CHUNK ((uint64_t)64 << 20)   /* bytes of one chunk's tag */
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

char *cuzk_params_cache_path(const char *path) { return cuzk_params_cache_path_in(path, NULL); }

char *cuzk_params_cache_path_in(const char *path, const char *cache_dir)
{
    static const char suffix[] = ".cuzkcache";
    if (!cache_dir) {
        size_t n = strlen(path);
        char *s = malloc(n + sizeof suffix);
        if (s) {
            memcpy(s, path, n);
            memcpy(s + n, suffix, sizeof suffix);
        }
        return s;
    }
    /* NAME-HASH.cuzkcache: the file name (its safe characters, 64 at most) for the reader,
     * 64 bits of SHA-256 of the absolute path for uniqueness */
    char *abs = realpath(path, NULL);
    const char *id = abs ? abs : path;
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)id, strlen(id), d);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char name[65];
    size_t k = 0;
    for (const char *q = base; *q && k < sizeof name - 1; q++)
        name[k++] = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                            (*q >= '0' && *q <= '9') || *q == '.' || *q == '_' || *q == '-'
                        ? *q
                        : '_';
    name[k] = 0;
    free(abs);
    size_t len = strlen(cache_dir) + sizeof name + 2 * 8 + sizeof suffix + 4;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s/%s-%02x%02x%02x%02x%02x%02x%02x%02x%s", cache_dir, name, d[0], d[1],
                 d[2], d[3], d[4], d[5], d[6], d[7], suffix);
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

/* ---- the cache directory and its secret ---- */

/* Opens dir (made 0700 when missing): refused unless it is a directory (not a link) of this
 * user's that group and others cannot enter. */
static cuzk_err cache_dir_open(int *dfd, const char *dir)
{
    *dfd = -1;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return cuzk_error_set(CUZK_EIO, "cache directory %s: cannot create: %s", dir,
                              strerror(errno));
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return cuzk_error_set(CUZK_EIO, "cache directory %s: %s", dir,
                              errno == ELOOP || errno == ENOTDIR ? "not a directory (or a link)"
                                                                 : strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
        close(fd);
        return cuzk_error_set(CUZK_EINVAL,
                              "cache directory %s: must be this user's and closed to group and "
                              "others (mode %04o): chmod 700 it",
                              dir, (unsigned)(st.st_mode & 07777));
    }
    *dfd = fd;
    return CUZK_OK;
}

/* The directory's secret (DIR/secret): read, or made from getrandom when missing. */
static cuzk_err cache_secret(uint8_t key[CACHE_SECRET_BYTES], int dfd, const char *dir)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = openat(dfd, "secret", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            struct stat st;
            bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
                      !(st.st_mode & 077) && st.st_size == CACHE_SECRET_BYTES &&
                      read(fd, key, CACHE_SECRET_BYTES) == CACHE_SECRET_BYTES;
            close(fd);
            if (!ok)
                return cuzk_error_set(CUZK_EINVAL,
                                      "%s/secret: not a %d-byte regular file of this user's, "
                                      "mode 0600 (remove it: the caches are rebuilt)",
                                      dir, CACHE_SECRET_BYTES);
            return CUZK_OK;
        }
        if (errno != ENOENT)
            return cuzk_error_set(CUZK_EIO, "%s/secret: %s", dir,
                                  errno == ELOOP ? "a link (refused)" : strerror(errno));
        size_t got = 0;
        while (got < CACHE_SECRET_BYTES) {
            ssize_t r = getrandom(key + got, CACHE_SECRET_BYTES - got, 0);
            if (r < 0 && errno != EINTR)
                return cuzk_error_set(CUZK_ERANDOM, "%s/secret: getrandom: %s", dir,
                                      strerror(errno));
            got += r > 0 ? (size_t)r : 0;
        }
        fd = openat(dfd, "secret", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            continue;   /* made meanwhile: read that one */
        bool ok = fd >= 0 && write(fd, key, CACHE_SECRET_BYTES) == CACHE_SECRET_BYTES &&
                  fsync(fd) == 0;
        if (fd >= 0 && close(fd) != 0)
            ok = false;
        if (ok && fsync(dfd) == 0)
            return CUZK_OK;
        int er = errno;
        unlinkat(dfd, "secret", 0);
        explicit_bzero(key, CACHE_SECRET_BYTES);
        return cuzk_error_set(CUZK_EIO, "%s/secret: cannot write: %s", dir, strerror(er));
    }
    return cuzk_error_set(CUZK_EIO, "%s/secret: cannot read", dir);
}

/* The secret of the cache directory into key (cache_dir NULL: none, *have false). */
static cuzk_err cache_key(uint8_t key[CACHE_SECRET_BYTES], bool *have, const char *cache_dir)
{
    *have = false;
    if (!cache_dir)
        return CUZK_OK;
    int dfd;
    cuzk_err e = cache_dir_open(&dfd, cache_dir);
    if (e == CUZK_OK) {
        e = cache_secret(key, dfd, cache_dir);
        close(dfd);
    }
    *have = e == CUZK_OK;
    return e;
}

/* ---- the tag ---- */

typedef struct {
    const uint8_t *key, *body;
    uint64_t len;
    uint8_t *tags;
    _Atomic int failed;
} tag_ctx;

static void tag_chunks(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    tag_ctx *t = ctx;
    for (size_t i = begin; i < end; i++) {
        uint64_t off = (uint64_t)i * CACHE_TAG_CHUNK;
        uint64_t n = t->len - off < CACHE_TAG_CHUNK ? t->len - off : CACHE_TAG_CHUNK;
        unsigned out = 0;
        if (!HMAC(EVP_sha256(), t->key, CACHE_SECRET_BYTES, t->body + off, (size_t)n,
                  t->tags + CACHE_TAG_BYTES * i, &out) ||
            out != CACHE_TAG_BYTES)
            t->failed = 1;
    }
}

/* The tag of a cache image: its header hdr and the len bytes after it. */
static bool cache_tag(uint8_t out[CACHE_TAG_BYTES], const uint8_t key[CACHE_SECRET_BYTES],
                      const cache_header *hdr, const uint8_t *body, uint64_t len)
{
    size_t nchunks = (size_t)((len + CACHE_TAG_CHUNK - 1) / CACHE_TAG_CHUNK);
    /* the header, then each chunk's tag */
    uint8_t *buf = malloc(CACHE_HEADER_BYTES + CACHE_TAG_BYTES * nchunks);
    if (!buf)
        return false;
    tag_ctx t = {.key = key, .body = body, .len = len, .tags = buf + CACHE_HEADER_BYTES};
    memcpy(buf, hdr, CACHE_HEADER_BYTES);
    cuzk_parallel_for(nchunks, 1, 0, tag_chunks, &t);
    unsigned n = 0;
    bool ok = !t.failed && HMAC(EVP_sha256(), key, CACHE_SECRET_BYTES, buf,
                                CACHE_HEADER_BYTES + CACHE_TAG_BYTES * nchunks, out, &n) &&
              n == CACHE_TAG_BYTES;
    free(buf);
    return ok;
}

/* ---- writing ---- */

cuzk_err params_cache_write_flagged(const cuzk_params *p, const char *params_path, bool checked,
                                    const char *cache_dir)
{
    uint8_t key[CACHE_SECRET_BYTES];
    bool keyed;
    cuzk_err e = cache_key(key, &keyed, cache_dir);
    if (e != CUZK_OK)
        return e;
    cache_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.version = CACHE_VERSION;
    h.flags = (checked ? CACHE_FLAG_CHECKED : 0) | (keyed ? CACHE_FLAG_TAG : 0);
    h.g1_size = sizeof(cuzk_g1_affine);
    h.g2_size = sizeof(cuzk_g2_affine);
    if ((e = source_identity(&h, params_path)) != CUZK_OK) {
        explicit_bzero(key, sizeof key);
        return e;
    }
    params_vec v[PARAMS_NVEC];
    params_vectors(v, p);
    uint64_t body_len = VK_RAW_BYTES;
    for (int i = 0; i < PARAMS_NVEC; i++) {
        h.n[i] = v[i].n;
        body_len += (uint64_t)v[i].n * (v[i].g2 ? sizeof(cuzk_g2_affine) : sizeof(cuzk_g1_affine));
    }

    char *cpath = cuzk_params_cache_path_in(params_path, cache_dir);
    size_t tl = cpath ? strlen(cpath) + 16 : 0;
    char *tmp = cpath ? malloc(tl) : NULL;
    if (!tmp) {
        free(cpath);
        explicit_bzero(key, sizeof key);
        return cuzk_error_set(CUZK_ENOMEM, "%s: cache: out of memory", params_path);
    }
    snprintf(tmp, tl, "%s.tmp.XXXXXX", cpath);
    /* O_CREAT | O_EXCL, mode 0600, a fresh random name: a link there is never followed */
    int fd = mkostemp(tmp, O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        e = cuzk_error_set(CUZK_EIO, "%s: cannot create: %s", tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        free(cpath);
        explicit_bzero(key, sizeof key);
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
    ok = ok && fflush(f) == 0;
    if (ok && keyed) {   /* the tag of what the file holds, appended */
        uint64_t total = sizeof h + body_len;
        uint8_t *m = mmap(NULL, (size_t)total, PROT_READ, MAP_SHARED, fd, 0);
        uint8_t tag[CACHE_TAG_BYTES];
        ok = m != MAP_FAILED && cache_tag(tag, key, &h, m + sizeof h, body_len) &&
             fwrite(tag, sizeof tag, 1, f) == 1;
        if (m != MAP_FAILED)
            munmap(m, (size_t)total);
    }
    explicit_bzero(key, sizeof key);
    ok = ok && fflush(f) == 0 && fsync(fd) == 0;
    if (fclose(f) != 0)
        ok = false;
    if (ok && rename(tmp, cpath) != 0)
        ok = false;
    if (ok && cache_dir) {
        int dfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
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
    return params_cache_write_flagged(p, params_path, true, NULL);
}

cuzk_err cuzk_params_cache_remove(const char *params_path, const char *cache_dir)
{
    char *cpath = cuzk_params_cache_path_in(params_path, cache_dir);
    if (!cpath)
        return cuzk_error_set(CUZK_ENOMEM, "%s: cache: out of memory", params_path);
    cuzk_err e = unlink(cpath) == 0 || errno == ENOENT
                     ? CUZK_OK
                     : cuzk_error_set(CUZK_EIO, "%s: cannot remove: %s", cpath, strerror(errno));
    free(cpath);
    return e;
}

/* ---- reading ---- */

cuzk_err params_cache_load_checked(cuzk_params **out, const char *params_path, bool need_checked,
                                   const char *cache_dir)
{
    *out = NULL;
    uint8_t key[CACHE_SECRET_BYTES];
    bool keyed;
    cuzk_err e = cache_key(key, &keyed, cache_dir);
    if (e != CUZK_OK)
        return e;
    char *cpath = cuzk_params_cache_path_in(params_path, cache_dir);
    if (!cpath) {
        explicit_bzero(key, sizeof key);
        return cuzk_error_set(CUZK_ENOMEM, "%s: cache: out of memory", params_path);
    }
    params_mapping mp;
    e = params_map(&mp, cpath);
    if (e != CUZK_OK) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: no cache", cpath);
        explicit_bzero(key, sizeof key);
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
    if (keyed && !(h.flags & CACHE_FLAG_TAG)) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: not authenticated (no tag)", cpath);
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
    uint64_t body = VK_RAW_BYTES;
    for (int i = 0; i < PARAMS_NVEC; i++)
        body += (uint64_t)h.n[i] * (i == PARAMS_NVEC - 1 ? sizeof(cuzk_g2_affine)
                                                          : sizeof(cuzk_g1_affine));
    uint64_t want = sizeof h + body + (h.flags & CACHE_FLAG_TAG ? CACHE_TAG_BYTES : 0);
    if (mp.len != want) {
        e = cuzk_error_set(CUZK_EFORMAT, "%s: %llu bytes, its header says %llu", cpath,
                           (unsigned long long)mp.len, (unsigned long long)want);
        goto done;
    }
    if (keyed) {
        uint8_t tag[CACHE_TAG_BYTES];
        if (!cache_tag(tag, key, &h, mp.map + sizeof h, body) ||
            CRYPTO_memcmp(tag, mp.map + sizeof h + body, CACHE_TAG_BYTES) != 0) {
            e = cuzk_error_set(CUZK_EFORMAT, "%s: not authenticated (its tag does not match: "
                               "modified, or not made with this directory's secret)", cpath);
            goto done;
        }
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
    explicit_bzero(key, sizeof key);
    cuzk_params_free(p);
    params_unmap(&mp);
    free(cpath);
    return e;
}

cuzk_err cuzk_params_cache_load(cuzk_params **out, const char *params_path)
{
    return params_cache_load_checked(out, params_path, false, NULL);
}
