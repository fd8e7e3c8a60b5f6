/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's key registry: keys registered by id, loaded through cuzk_key (either kind),
 * evicted least-recently-used when the memory budget needs room, reloaded on demand, and
 * their resident GPU copies. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/params.h"
#include "engine/engine_internal.h"

/* ---- sizes ---- */

/* Estimate of one partition's peak bytes from its load to the end of its finalisation with
 * a, b, c on the host (the CPU backend, or synthesis on the CPU): the witness (read, and
 * the pending proof's copy), a, b, c over the domain, the NTT domain's twiddles and scratch
 * (about two more domain vectors), MSM scalar scratch, and a fixed allowance for MSM
 * buckets and thread stacks. The same for both kinds of key: they differ only in how c is
 * formed (a o b or C.w), not in the buffers. */
#define PART_FIXED_BYTES ((uint64_t)1 << 20)   /* 1 MiB: MSM buckets, small buffers */
static uint64_t part_bytes_host(uint64_t nv, uint64_t n)
{
    uint64_t fr = sizeof(cuzk_fr);
    return 2 * nv * fr + 5 * n * fr + (n > nv ? n : nv) * 2 * fr + PART_FIXED_BYTES;
}

/* The same with synthesis on the device (the GPU backend's default): the domain vectors
 * live on the device; the host holds the witness (page-locked in place, or a page-locked
 * copy of it), the split MSMs' bit vectors and gathered significant scalars (for
 * PoRep-like witnesses a tenth of the values in each of A, B and L; bounded here by one
 * witness's size). At 2^27: 12 GiB instead of 36. */
static uint64_t part_bytes_device(uint64_t nv)
{
    return 3 * nv * (uint64_t)sizeof(cuzk_fr) + PART_FIXED_BYTES;
}

/* The estimate before any resident copy exists: synthesis on the device unless the engine
 * proves on the CPU or its GPU options turn it off. key_gpu corrects it when a resident
 * copy synthesises on the CPU after all (its matrices did not fit). */
static uint64_t part_bytes_first(const cuzk_engine *e, uint64_t nv, uint64_t n)
{
    if (e->devices[0].gpu >= 0 && e->cfg.gpu.synth != CUZK_GPU_SYNTH_OFF)
        return part_bytes_device(nv);
    return part_bytes_host(nv, n);
}

/* ---- loading (no engine lock) ---- */

static cuzk_err entry_load(const cuzk_engine *e, const key_entry *k, cuzk_key **out)
{
    cuzk_gpu_opts g = e->cfg.gpu;
    if (e->devices[0].gpu < 0) /* the CPU backend: the .params subgroup checks there too */
        g.params_check_min = SIZE_MAX;
    cuzk_key_opts o = {.r1cs = k->r1cs, .params_flags = k->pflags, .gpu = &g,
                       .cache_dir = e->cfg.cache_dir};
    return cuzk_key_load(out, k->path, &o);
}

/* ---- the registry (engine lock held) ---- */

key_entry *key_find(cuzk_engine *e, const char *id)
{
    for (key_entry *k = e->keys; k; k = k->next)
        if (k->registered && strcmp(k->id, id) == 0)
            return k;
    return NULL;
}

void key_unload(cuzk_engine *e, key_entry *k)
{
    for (unsigned i = 0; i < CUZK_ENGINE_MAX_DEVICES; i++) {
        cuzk_groth16_gpu_key_free(k->gk[i]);
        k->gk[i] = NULL;
    }
    cuzk_key_free(k->key);
    k->key = NULL;
    if (k->st == KEY_LOADED)
        e->mem_used -= k->key_bytes;
    k->st = KEY_UNLOADED;
}

void key_unref(cuzk_engine *e, key_entry *k)
{
    if (--k->refs > 0)
        return;
    key_unload(e, k);
    for (key_entry **pp = &e->keys; *pp; pp = &(*pp)->next)
        if (*pp == k) {
            *pp = k->next;
            break;
        }
    LOG(e, CUZK_LOG_INFO, "event=key_freed key=%s", k->id);
    free(k);
    pthread_cond_broadcast(&e->cv_load);
}

bool key_evict_one(cuzk_engine *e, const key_entry *keep)
{
    key_entry *best = NULL;
    for (key_entry *k = e->keys; k; k = k->next)
        if (k != keep && k->st == KEY_LOADED && k->in_flight == 0 &&
            (!best || k->last_used < best->last_used))
            best = k;
    if (!best)
        return false;
    LOG(e, CUZK_LOG_INFO, "event=key_evict key=%s bytes=%llu", best->id,
        (unsigned long long)best->key_bytes);
    key_unload(e, best);
    e->c_evictions++;
    return true;
}

bool key_reload(cuzk_engine *e, key_entry *k, const char *job_id, char *why, size_t whylen)
{
    double t0 = engine_now(e);
    pthread_mutex_unlock(&e->mu);
    LOG(e, CUZK_LOG_INFO, "event=key_load_start key=%s job=%s", k->id, job_id);
    cuzk_key *key = NULL;
    cuzk_err r = entry_load(e, k, &key);
    snprintf(why, whylen, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
    pthread_mutex_lock(&e->mu);
    e->c_loads++;
    pthread_cond_broadcast(&e->cv_load);
    if (r != CUZK_OK) {
        e->mem_used -= k->key_bytes;
        k->st = KEY_UNLOADED;
        if (!why[0])
            snprintf(why, whylen, "%s", cuzk_strerror(r));
        return false;
    }
    k->key = key;
    k->st = KEY_LOADED;
    k->loads++;
    LOG(e, CUZK_LOG_INFO, "event=key_load_end key=%s job=%s ms=%.3f", k->id, job_id, (engine_now(e) - t0) * 1e3);
    return true;
}

cuzk_err key_gpu(cuzk_engine *e, key_entry *k, device *d, cuzk_gpu_key **out)
{
    /* Only the first partition of a key on this device waits for the device here: the
     * others must not, or their CPU side could not overlap the device work of the
     * partition holding it (the pointer is published once, with release). */
    cuzk_gpu_key *gk = __atomic_load_n(&k->gk[d->gpu], __ATOMIC_ACQUIRE);
    *out = gk;
    if (gk)
        return CUZK_OK;
    cuzk_err r = CUZK_OK;
    bool made = false;
    pthread_mutex_lock(&d->lock);
    gk = __atomic_load_n(&k->gk[d->gpu], __ATOMIC_ACQUIRE);
    if (!gk && (r = cuzk_key_gpu_new(&gk, k->key, d->gpu, &e->cfg.gpu)) == CUZK_OK) {
        __atomic_store_n(&k->gk[d->gpu], gk, __ATOMIC_RELEASE);
        made = true;
    }
    pthread_mutex_unlock(&d->lock);
    if (r != CUZK_OK)
        return r;
    *out = gk;
    if (made) {
        cuzk_gpu_key_info gi;
        cuzk_gpu_key_get_info(gk, &gi);
        LOG(e, CUZK_LOG_INFO,
            "event=gpu_key key=%s dev=%s synth=%s b_g2=%s streamed=0x%x precomputed=0x%x",
            k->id, d->name, gi.synth_device ? "device" : "cpu",
            gi.b_g2_device ? "device" : "cpu", gi.streamed, gi.precomputed);
        /* a, b, c on the host: later partitions reserve the host figure */
        pthread_mutex_lock(&e->mu);
        if (!gi.synth_device) {
            uint64_t host = part_bytes_host(k->n_vars, k->domain_size);
            if (host > k->part_bytes)
                k->part_bytes = host;
        }
        pthread_mutex_unlock(&e->mu);
    }
    return CUZK_OK;
}

static void fill_key_info(cuzk_engine_key_info *i, const key_entry *k)
{
    memset(i, 0, sizeof *i);
    snprintf(i->id, sizeof i->id, "%s", k->id);
    snprintf(i->path, sizeof i->path, "%s", k->path);
    i->loaded = k->st == KEY_LOADED;
    i->n_vars = k->n_vars;
    i->n_public = k->n_public;
    i->domain_size = k->domain_size;
    i->key_bytes = k->key_bytes;
    i->partition_bytes = k->part_bytes;
    i->in_flight = k->in_flight;
    i->last_used_s = k->last_used;
    i->loads = k->loads;
    snprintf(i->format, sizeof i->format, "%s", cuzk_key_format_name(k->format));
    snprintf(i->r1cs, sizeof i->r1cs, "%s", k->r1cs);
    i->trusted = (k->pflags & CUZK_PARAMS_TRUSTED) != 0;
    i->cache = (k->pflags & CUZK_PARAMS_CACHE) != 0;
}

static bool id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n >= sizeof(((key_entry *)0)->id))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    }
    return true;
}

/* CUZK_EBUSY when max_keys keys are registered (e->mu held). */
static cuzk_err keys_full(cuzk_engine *e, const char *id)
{
    if (e->cfg.max_keys == 0)
        return CUZK_OK;
    unsigned n = 0;
    for (key_entry *k = e->keys; k; k = k->next)
        n += k->registered;
    if (n < e->cfg.max_keys)
        return CUZK_OK;
    return cuzk_error_set(CUZK_EBUSY, "key %s: %u keys are registered, max_keys: remove one "
                          "first", id, n);
}

/* ---- the cache directory ---- */

/* Keeps cache_dir bounded: beyond max_keys cache files (at least the registered keys'),
 * those of no registered key go, the least recently written first; temporary files of
 * writes that did not finish (a crash) go after an hour. */
static void cache_dir_prune(cuzk_engine *e)
{
    const char *dir = e->cfg.cache_dir;
    unsigned bound = e->cfg.max_keys ? e->cfg.max_keys : 64;
    pthread_mutex_lock(&e->mu);
    size_t n_reg = 0;
    for (key_entry *k = e->keys; k; k = k->next)
        n_reg += k->registered;
    char **keep = calloc(n_reg + 1, sizeof *keep);
    size_t nk = 0;
    for (key_entry *k = e->keys; keep && k; k = k->next)
        if (k->registered && (keep[nk] = cuzk_params_cache_path_in(k->path, dir)))
            nk++;
    pthread_mutex_unlock(&e->mu);
    DIR *d = keep ? opendir(dir) : NULL;
    struct {
        char name[256];
        time_t mtime;
    } *old = NULL;
    size_t n_old = 0, n_cache = 0, cap = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        bool tmp = strstr(de->d_name, ".cuzkcache.tmp.") != NULL;
        if (!tmp && (l < 10 || strcmp(de->d_name + l - 10, ".cuzkcache") != 0))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (tmp) {
            if (time(NULL) - st.st_mtime > 3600)
                unlinkat(dirfd(d), de->d_name, 0);
            continue;
        }
        n_cache++;
        bool registered = false;
        for (size_t i = 0; i < nk && !registered; i++) {
            const char *b = strrchr(keep[i], '/');
            registered = b && !strcmp(b + 1, de->d_name);
        }
        if (registered || l >= sizeof old[0].name)
            continue;
        if (n_old == cap) {
            cap = cap ? 2 * cap : 16;
            void *o = realloc(old, cap * sizeof *old);
            if (!o)
                break;
            old = o;
        }
        snprintf(old[n_old].name, sizeof old[n_old].name, "%s", de->d_name);
        old[n_old++].mtime = st.st_mtime;
    }
    while (n_cache > bound && n_old > 0) {   /* the oldest of no registered key */
        size_t o = 0;
        for (size_t i = 1; i < n_old; i++)
            if (old[i].mtime < old[o].mtime)
                o = i;
        if (unlinkat(dirfd(d), old[o].name, 0) == 0)
            LOG(e, CUZK_LOG_INFO, "event=key_cache_pruned file=%s", old[o].name);
        old[o] = old[--n_old];
        n_cache--;
    }
    if (d)
        closedir(d);
    free(old);
    for (size_t i = 0; i < nk; i++)
        free(keep[i]);
    free(keep);
}

/* ---- the API ---- */

cuzk_err cuzk_engine_key_add(cuzk_engine *e, cuzk_engine_key_info *info, const char *id,
                             const char *path)
{
    return cuzk_engine_key_add_ex(e, info, id, path, NULL);
}

cuzk_err key_add_local(cuzk_engine *e, cuzk_engine_key_info *info, const char *id,
                       const char *path, const cuzk_engine_key_opts *opts)
{
    if (!e || !id || !path)
        return cuzk_error_set(CUZK_EINVAL, "key: missing id or path");
    if (!id_ok(id))
        return cuzk_error_set(CUZK_EINVAL, "key id \"%.40s\": use 1-127 of [A-Za-z0-9._-]", id);
    if (strlen(path) >= sizeof(((key_entry *)0)->path))
        return cuzk_error_set(CUZK_EINVAL, "key %s: path too long", id);
    const char *r1cs = opts && opts->r1cs && opts->r1cs[0] ? opts->r1cs : NULL;
    if (r1cs && strlen(r1cs) >= sizeof(((key_entry *)0)->r1cs))
        return cuzk_error_set(CUZK_EINVAL, "key %s: r1cs path too long", id);
    unsigned pflags = r1cs ? (opts->trusted ? CUZK_PARAMS_TRUSTED : 0) |
                                 (opts->cache ? CUZK_PARAMS_CACHE : 0)
                           : 0;
    if (!r1cs && opts && (opts->trusted || opts->cache))
        return cuzk_error_set(CUZK_EINVAL,
                              "key %s: \"trusted\" and \"cache\" are for a bellman .params key "
                              "(with \"r1cs\")", id);
    pthread_mutex_lock(&e->mu);
    key_entry *k = key_find(e, id);
    if (k) {
        cuzk_err r = CUZK_OK;
        if (strcmp(k->path, path) != 0)
            r = cuzk_error_set(CUZK_EINVAL, "key id %s is registered for another path (%s)", id,
                               k->path);
        else if (strcmp(k->r1cs, r1cs ? r1cs : "") != 0 || k->pflags != pflags)
            r = cuzk_error_set(CUZK_EINVAL,
                               "key id %s is registered with another r1cs or flags (r1cs \"%s\")",
                               id, k->r1cs);
        else if (info) {
            fill_key_info(info, k);
            info->existed = true;
        }
        pthread_mutex_unlock(&e->mu);
        return r;
    }
    cuzk_err full = keys_full(e, id);
    pthread_mutex_unlock(&e->mu);
    if (full != CUZK_OK)
        return full;

    k = calloc(1, sizeof *k);
    if (!k)
        return cuzk_error_set(CUZK_ENOMEM, "key %s: out of memory", id);
    snprintf(k->id, sizeof k->id, "%s", id);
    snprintf(k->path, sizeof k->path, "%s", path);
    snprintf(k->r1cs, sizeof k->r1cs, "%s", r1cs ? r1cs : "");
    k->pflags = pflags;
    /* Load outside the lock (can take long), then insert. */
    LOG(e, CUZK_LOG_INFO, "event=key_load_start key=%s path=%s%s%s", id, path,
        r1cs ? " r1cs=" : "", r1cs ? r1cs : "");
    double t = engine_mono_s();
    cuzk_key *key = NULL;
    cuzk_err r = entry_load(e, k, &key);
    if (r != CUZK_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        LOG(e, CUZK_LOG_WARN, "event=key_load_failed key=%s reason=\"%s\"", id, why);
        free(k);
        return cuzk_error_set(r, "key %s: %s", id, why[0] ? why : cuzk_strerror(r));
    }
    k->format = cuzk_key_format_of(key);
    k->n_vars = cuzk_key_n_vars(key);
    k->n_public = cuzk_key_n_public(key);
    k->domain_size = cuzk_key_domain_size(key);
    k->key_bytes = cuzk_key_bytes(key);
    k->part_bytes = part_bytes_first(e, k->n_vars, k->domain_size);
    k->refs = 1;
    k->registered = true;

    pthread_mutex_lock(&e->mu);
    if (key_find(e, id)) {   /* registered meanwhile by another request */
        pthread_mutex_unlock(&e->mu);
        cuzk_key_free(key);
        free(k);
        return key_add_local(e, info, id, path, opts);
    }
    if ((r = keys_full(e, id)) != CUZK_OK) {   /* others registered meanwhile */
        pthread_mutex_unlock(&e->mu);
        cuzk_key_free(key);
        free(k);
        return r;
    }
    if (k->key_bytes > e->cfg.memory_budget) {
        pthread_mutex_unlock(&e->mu);
        cuzk_key_free(key);
        uint64_t kb = k->key_bytes;
        free(k);
        return cuzk_error_set(CUZK_ESIZE,
                              "key %s needs %llu bytes resident, more than the memory budget "
                              "of %llu bytes",
                              id, (unsigned long long)kb,
                              (unsigned long long)e->cfg.memory_budget);
    }
    while (e->mem_used + k->key_bytes > e->cfg.memory_budget && key_evict_one(e, NULL))
        ;
    /* Resident even if in-flight work holds the rest: the budget is exceeded briefly rather
     * than failing a registration; later reservations wait until it is back under. */
    k->key = key;
    k->st = KEY_LOADED;
    k->loads = 1;
    e->c_loads++;
    e->mem_used += k->key_bytes;
    k->last_used = engine_now(e);
    k->next = e->keys;
    e->keys = k;
    if (info)
        fill_key_info(info, k);
    uint64_t kb = k->key_bytes, pb = k->part_bytes;
    cuzk_key_format f = k->format;
    pthread_mutex_unlock(&e->mu);
    LOG(e, CUZK_LOG_INFO,
        "event=key_load_end key=%s format=%s ms=%.3f key_bytes=%llu partition_bytes=%llu", id,
        cuzk_key_format_name(f), (engine_mono_s() - t) * 1e3, (unsigned long long)kb,
        (unsigned long long)pb);
    if ((pflags & CUZK_PARAMS_CACHE) && e->cfg.cache_dir)
        cache_dir_prune(e);
    return CUZK_OK;
}

cuzk_err key_remove_local(cuzk_engine *e, const char *id)
{
    pthread_mutex_lock(&e->mu);
    key_entry *k = key_find(e, id);
    if (!k) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_error_set(CUZK_ENOTFOUND, "unknown key %s", id);
    }
    k->registered = false;
    LOG(e, CUZK_LOG_INFO, "event=key_remove key=%s users=%u", id, k->refs - 1);
    /* its decoded cache goes with it, unless another registered key reads the same file */
    bool shared = false;
    for (key_entry *o = e->keys; o; o = o->next)
        shared |= o->registered && !strcmp(o->path, k->path);
    char path[sizeof k->path];
    bool cached = !shared && (k->pflags & CUZK_PARAMS_CACHE) && e->cfg.cache_dir;
    snprintf(path, sizeof path, "%s", k->path);
    key_unref(e, k);
    pthread_mutex_unlock(&e->mu);
    if (cached && cuzk_params_cache_remove(path, e->cfg.cache_dir) != CUZK_OK) {
        LOG(e, CUZK_LOG_WARN, "event=key_cache_remove_failed key=%s reason=\"%s\"", id,
            cuzk_error_detail());
        cuzk_error_clear();
    }
    return CUZK_OK;
}

cuzk_err cuzk_engine_key_get(cuzk_engine *e, cuzk_engine_key_info *info, const char *id)
{
    pthread_mutex_lock(&e->mu);
    key_entry *k = key_find(e, id);
    if (k)
        fill_key_info(info, k);
    pthread_mutex_unlock(&e->mu);
    return k ? CUZK_OK : cuzk_error_set(CUZK_ENOTFOUND, "unknown key \"%.100s\"", id);
}

size_t cuzk_engine_keys(cuzk_engine *e, cuzk_engine_key_info *out, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&e->mu);
    for (key_entry *k = e->keys; k; k = k->next)
        if (k->registered) {
            if (n < cap)
                fill_key_info(&out[n], k);
            n++;
        }
    pthread_mutex_unlock(&e->mu);
    return n;
}

/* The API: in a farm, the key table follows each registration and removal. */
cuzk_err cuzk_engine_key_add_ex(cuzk_engine *e, cuzk_engine_key_info *info, const char *id,
                                const char *path, const cuzk_engine_key_opts *opts)
{
    cuzk_err r = key_add_local(e, info, id, path, opts);
    if (r == CUZK_OK && (r = cluster_key_put(e, id)) != CUZK_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        if (!info->existed && key_remove_local(e, id) != CUZK_OK)
            cuzk_error_clear();
        return cuzk_error_set(CUZK_EUNAVAILABLE, "key %s: the farm's key table: %s", id, why);
    }
    return r;
}

cuzk_err cuzk_engine_key_remove(cuzk_engine *e, const char *id)
{
    cuzk_err r = key_remove_local(e, id);
    if (!e->cluster)
        return r;
    /* in a farm any daemon removes a key of the table, registered here yet or not */
    char why[400];
    snprintf(why, sizeof why, "%s", cuzk_error_detail());
    cuzk_err t = cluster_key_del(e, id);
    if (t == CUZK_OK || (t == CUZK_ENOTFOUND && r == CUZK_OK)) {
        cuzk_error_clear();
        return CUZK_OK;
    }
    if (t == CUZK_ENOTFOUND)
        return cuzk_error_set(r, "%s", why);
    snprintf(why, sizeof why, "%s", cuzk_error_detail());
    return cuzk_error_set(CUZK_EUNAVAILABLE, "key %s: not removed from the farm's key table: %s",
                          id, why);
}
