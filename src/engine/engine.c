/* cuzk engine: queue, scheduler, synthesis / device / finaliser workers, key registry and
 * memory budget (include/cuzk/engine.h, DESIGN.md section 3). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "groth16/bellman.h"
#include "groth16/gpu_prover.h"
#include "io/binfile.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif

/* ---- names ---- */

static const char *const prio_names[CUZK_PRIO_COUNT] = {"low", "normal", "high", "critical"};

const char *cuzk_priority_name(cuzk_priority p)
{
    return (unsigned)p < CUZK_PRIO_COUNT ? prio_names[p] : "?";
}

bool cuzk_priority_parse(cuzk_priority *out, const char *s)
{
    for (unsigned i = 0; i < CUZK_PRIO_COUNT; i++)
        if (s && strcmp(s, prio_names[i]) == 0) {
            *out = (cuzk_priority)i;
            return true;
        }
    return false;
}

const char *cuzk_job_state_name(cuzk_job_state s)
{
    static const char *const n[] = {"queued", "running", "done", "failed", "cancelled"};
    return (unsigned)s < 5 ? n[s] : "?";
}

bool cuzk_log_level_parse(cuzk_log_level *out, const char *s)
{
    static const char *const n[] = {"error", "warn", "info", "debug"};
    for (unsigned i = 0; i < 4; i++)
        if (s && strcmp(s, n[i]) == 0) {
            *out = (cuzk_log_level)i;
            return true;
        }
    return false;
}

static bool is_final(cuzk_job_state s) { return s >= CUZK_JOB_DONE; }

/* ---- clock and log ---- */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double engine_now(const cuzk_engine *e) { return mono_s() - e->t0; }

static void vlog(cuzk_engine *e, cuzk_log_level lv, const char *fmt, va_list ap)
{
    static const char *const lvn[] = {"ERROR", "WARN ", "INFO ", "DEBUG"};
    if (lv > e->cfg.log_level)
        return;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char ts[40];
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    /* One event a line: control characters from requests (a key path with a newline) must
     * not forge lines of their own. */
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    for (char *p = msg; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    FILE *f = e->cfg.log ? e->cfg.log : stderr;
    pthread_mutex_lock(&e->log_mu);
    fprintf(f, "%s.%06ldZ %s t=%.3f %s\n", ts, (long)tv.tv_usec, lvn[lv], engine_now(e) * 1e3,
            msg ? msg : "(out of memory)");
    fflush(f);
    pthread_mutex_unlock(&e->log_mu);
    free(msg);
}

void cuzk_engine_log(cuzk_engine *e, cuzk_log_level lv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(e, lv, fmt, ap);
    va_end(ap);
}
#define LOG(e, lv, ...) cuzk_engine_log(e, lv, __VA_ARGS__)

/* ---- configuration ---- */

void cuzk_engine_config_default(cuzk_engine_config *c)
{
    memset(c, 0, sizeof *c);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : (uint64_t)4 << 30;
    c->synth_threads = ncpu >= 8 ? (unsigned)(ncpu / 4) : 1;
    /* two per device: one synthesises its next partition while the other holds the device */
    c->workers_per_device = 2;
    c->lookahead = 0; /* auto: one per device worker (at least 2), set when devices are known */
    c->finalizers = ncpu >= 4 ? 2 : 1;
    c->prove_threads = 0;
    c->memory_budget = phys / 2;      /* half of physical memory */
    c->verify = true;
    c->job_timeout_s = 3600;
    c->max_queued_jobs = 1024;
    c->result_ttl_s = 600;
    c->max_partitions = 1024;
    c->log_level = CUZK_LOG_INFO;
}

/* ---- sizes ---- */

static uint64_t csr_bytes(const cuzk_csr *m)
{
    uint64_t nnz = m->row ? m->row[m->n_rows] : 0;
    return (m->n_rows + 1) * sizeof(uint64_t) + nnz * (sizeof(uint32_t) + sizeof(cuzk_fr));
}

/* Resident bytes of a loaded key and its verification key. */
static uint64_t zkey_bytes(const cuzk_zkey *z)
{
    uint64_t nv = z->n_vars, n = z->domain_size, np = z->n_public;
    return sizeof *z + csr_bytes(&z->a) + csr_bytes(&z->b) + (np + 1) * sizeof(cuzk_g1_affine) * 2 +
           nv * (2 * sizeof(cuzk_g1_affine) + sizeof(cuzk_g2_affine)) +
           (nv - np - 1) * sizeof(cuzk_g1_affine) + n * sizeof(cuzk_g1_affine) + sizeof(cuzk_vk);
}

/* Resident bytes of a loaded .params key, its circuit (the A, B, C rows with bellman's
 * input rows, the two density bit vectors) and its verification key. */
static uint64_t params_bytes(const cuzk_params *p, const cuzk_bellman_circuit *c)
{
    uint64_t g1 = sizeof(cuzk_g1_affine), g2 = sizeof(cuzk_g2_affine);
    uint64_t dens_words = ((uint64_t)c->n_vars + 63) / 64;
    return sizeof *p + sizeof *c +
           ((uint64_t)p->n_ic + p->n_h + p->n_l + p->n_a + p->n_b_g1) * g1 +
           (uint64_t)p->n_b_g2 * g2 + csr_bytes(&c->a) + csr_bytes(&c->b) + csr_bytes(&c->c) +
           2 * dens_words * sizeof(uint64_t) + sizeof(cuzk_vk) + (uint64_t)p->n_ic * g1;
}

/* Estimate of one partition's peak bytes from synthesis to the end of its finalisation:
 * the witness (read, and the pending proof's copy), a, b, c over the domain, the NTT
 * domain's twiddles and scratch (about two more domain vectors), MSM scalar scratch, and a
 * fixed allowance for MSM buckets and thread stacks. The same for both kinds of key: they
 * differ only in how c is formed (a o b or C.w), not in the buffers. */
#define PART_FIXED_BYTES ((uint64_t)1 << 20)   /* 1 MiB: MSM buckets, small buffers */
static uint64_t part_bytes(uint64_t nv, uint64_t n)
{
    uint64_t fr = sizeof(cuzk_fr);
    return 2 * nv * fr + 5 * n * fr + (n > nv ? n : nv) * 2 * fr + PART_FIXED_BYTES;
}

/* The same on the GPU backend with synthesis on the device (the default there): the
 * domain vectors live on the device; the host holds the witness (page-locked in place, or
 * a page-locked copy of it when that fails), the split MSMs' bit vectors and gathered
 * significant scalars (for PoRep-like witnesses a tenth of the values in each of A, B and
 * L; bounded here by one witness's size). At 2^27: 12 GiB instead of 36. With
 * CUZK_GPU_SYNTH=cpu, or when the matrices do not fit the device, a, b, c are on the host
 * too: the CPU figure. */
static uint64_t part_bytes_gpu(uint64_t nv, uint64_t n)
{
    const char *v = getenv("CUZK_GPU_SYNTH");
    if (v && !strcmp(v, "cpu"))
        return part_bytes(nv, n);
    return 3 * nv * (uint64_t)sizeof(cuzk_fr) + PART_FIXED_BYTES;
}

/* ---- loading a key of either kind (no engine lock) ---- */

static void key_obj_free(key_obj *o)
{
    cuzk_zkey_free(o->zk);
    cuzk_params_free(o->pa);
    cuzk_bellman_circuit_free(o->bc);
    cuzk_vk_free(o->vk);
    memset(o, 0, sizeof *o);
}

/* CUZK_EIO when path names something other than a regular file: a directory, a device, or
 * a FIFO (opening one without a writer blocks for ever). A path that cannot be stat'ed is
 * left to the loader, whose error names the file and the reason. For key_kind_of's sniff;
 * the loaders check the file they open themselves. */
static cuzk_err regular_file(const char *path)
{
    const char *what = io_not_regular(path);
    return what ? cuzk_error_set(CUZK_EIO, "%s: not a regular file (%s)", path, what) : CUZK_OK;
}

/* Loads the key of an entry's path (and r1cs) into *o; on failure *o is empty and the error
 * detail names the file and the problem. */
static cuzk_err key_obj_load(key_obj *o, key_kind kind, const char *path, const char *r1cs,
                             unsigned pflags)
{
    memset(o, 0, sizeof *o);
    /* the loaders refuse what is not a regular file (at a reload too), without blocking */
    cuzk_err r;
    if (kind == KEY_ZKEY) {
        r = cuzk_zkey_load(&o->zk, path);
        if (r == CUZK_OK)
            r = cuzk_vk_from_zkey(&o->vk, o->zk);
        if (r == CUZK_OK)
            cuzk_pk_view_from_zkey(&o->view, o->zk);
    } else {
        r = cuzk_params_load(&o->pa, path, pflags);
        if (r == CUZK_OK)
            r = cuzk_bellman_circuit_load_for(&o->bc, r1cs, o->pa);
        if (r == CUZK_OK && (r = cuzk_params_check_circuit(o->pa, o->bc)) != CUZK_OK) {
            char why[600];
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
            r = cuzk_error_set(r, "%s does not fit the circuit %s: %s", path, r1cs, why);
        }
        if (r == CUZK_OK)
            r = cuzk_vk_from_params(&o->vk, o->pa);
        if (r == CUZK_OK)
            cuzk_pk_view_from_params(&o->view, o->pa, o->bc);
    }
    if (r != CUZK_OK)
        key_obj_free(o);
    return r;
}

/* The kind of key at path: the "zkey" magic makes a .zkey; another file is a .params when
 * an r1cs is given. CUZK_EINVAL for an r1cs with a .zkey and a ".params" file without. A
 * file that cannot be read is left to the .zkey loader (its error names the file). */
static cuzk_err key_kind_of(key_kind *kind, const char *path, const char *r1cs)
{
    static const char zkey_magic[4] = {'z', 'k', 'e', 'y'};   /* a .zkey's first 4 bytes */
    char head[4] = {0};
    cuzk_err r = regular_file(path);
    if (r == CUZK_OK && r1cs)
        r = regular_file(r1cs);
    if (r != CUZK_OK)
        return r;
    FILE *f = fopen(path, "rb");
    bool is_zkey = f && fread(head, 1, sizeof head, f) == sizeof head &&
                   memcmp(head, zkey_magic, sizeof head) == 0;
    if (f)
        fclose(f);
    size_t n = strlen(path);
    bool dot_params = n >= 7 && strcmp(path + n - 7, ".params") == 0;
    if (is_zkey && r1cs)
        return cuzk_error_set(CUZK_EINVAL,
                              "%s is a snarkjs .zkey (its circuit is inside): \"r1cs\" is only "
                              "for a bellman .params key", path);
    if (!is_zkey && !r1cs && dot_params)
        return cuzk_error_set(CUZK_EINVAL,
                              "%s: a bellman .params key needs the circuit's .r1cs "
                              "(\"r1cs\": PATH)", path);
    *kind = !is_zkey && r1cs ? KEY_PARAMS : KEY_ZKEY;
    return CUZK_OK;
}

/* ---- keys (engine lock held) ---- */

static key_entry *key_find(cuzk_engine *e, const char *id)
{
    for (key_entry *k = e->keys; k; k = k->next)
        if (k->registered && strcmp(k->id, id) == 0)
            return k;
    return NULL;
}

static void key_unload(cuzk_engine *e, key_entry *k)
{
    for (unsigned i = 0; i < CUZK_ENGINE_MAX_DEVICES; i++) {
        cuzk_groth16_gpu_key_free(k->gk[i]);
        k->gk[i] = NULL;
    }
    key_obj_free(&k->obj);
    if (k->st == KEY_LOADED)
        e->mem_used -= k->key_bytes;
    k->st = KEY_UNLOADED;
}

static void key_unref(cuzk_engine *e, key_entry *k)
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
    pthread_cond_broadcast(&e->cv_synth);
}

/* Evicts the least recently used loaded key with nothing in flight, other than keep. */
static bool evict_one(cuzk_engine *e, const key_entry *keep)
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

static void fill_key_info(const cuzk_engine *e, cuzk_engine_key_info *i, const key_entry *k)
{
    (void)e;
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
    snprintf(i->format, sizeof i->format, "%s", k->kind == KEY_PARAMS ? "params" : "zkey");
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

cuzk_err cuzk_engine_key_add(cuzk_engine *e, cuzk_engine_key_info *info, const char *id,
                             const char *path)
{
    return cuzk_engine_key_add_ex(e, info, id, path, NULL);
}

cuzk_err cuzk_engine_key_add_ex(cuzk_engine *e, cuzk_engine_key_info *info, const char *id,
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
            fill_key_info(e, info, k);
            info->existed = true;
        }
        pthread_mutex_unlock(&e->mu);
        return r;
    }
    pthread_mutex_unlock(&e->mu);

    key_kind kind = KEY_ZKEY;
    cuzk_err r = key_kind_of(&kind, path, r1cs);
    if (r != CUZK_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        LOG(e, CUZK_LOG_WARN, "event=key_load_failed key=%s reason=\"%s\"", id, why);
        return cuzk_error_set(r, "key %s: %s", id, why);
    }
    /* Load outside the lock (can take long), then insert. */
    LOG(e, CUZK_LOG_INFO, "event=key_load_start key=%s path=%s%s%s", id, path,
        r1cs ? " r1cs=" : "", r1cs ? r1cs : "");
    double t = mono_s();
    key_obj obj;
    r = key_obj_load(&obj, kind, path, r1cs, pflags);
    if (r != CUZK_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        LOG(e, CUZK_LOG_WARN, "event=key_load_failed key=%s reason=\"%s\"", id, why);
        return cuzk_error_set(r, "key %s: %s", id, why[0] ? why : cuzk_strerror(r));
    }
    k = calloc(1, sizeof *k);
    if (!k) {
        key_obj_free(&obj);
        return cuzk_error_set(CUZK_ENOMEM, "key %s: out of memory", id);
    }
    snprintf(k->id, sizeof k->id, "%s", id);
    snprintf(k->path, sizeof k->path, "%s", path);
    snprintf(k->r1cs, sizeof k->r1cs, "%s", r1cs ? r1cs : "");
    k->kind = kind;
    k->pflags = pflags;
    k->n_vars = obj.view.n_vars;
    k->n_public = obj.view.n_public;
    k->domain_size = (uint32_t)1 << obj.view.log2_domain;
    k->key_bytes = kind == KEY_ZKEY ? zkey_bytes(obj.zk) : params_bytes(obj.pa, obj.bc);
    k->part_bytes = e->devices[0].gpu >= 0 ? part_bytes_gpu(k->n_vars, k->domain_size)
                                            : part_bytes(k->n_vars, k->domain_size);
    k->refs = 1;
    k->registered = true;

    pthread_mutex_lock(&e->mu);
    if (key_find(e, id)) {   /* registered meanwhile by another request */
        pthread_mutex_unlock(&e->mu);
        key_obj_free(&obj);
        free(k);
        return cuzk_engine_key_add_ex(e, info, id, path, opts);
    }
    if (k->key_bytes > e->cfg.memory_budget) {
        pthread_mutex_unlock(&e->mu);
        key_obj_free(&obj);
        uint64_t kb = k->key_bytes;
        free(k);
        return cuzk_error_set(CUZK_ESIZE,
                              "key %s needs %llu bytes resident, more than the memory budget "
                              "of %llu bytes",
                              id, (unsigned long long)kb,
                              (unsigned long long)e->cfg.memory_budget);
    }
    while (e->mem_used + k->key_bytes > e->cfg.memory_budget && evict_one(e, NULL))
        ;
    /* Resident even if in-flight work holds the rest: the budget is exceeded briefly rather
     * than failing a registration; later reservations wait until it is back under. */
    k->obj = obj;
    k->st = KEY_LOADED;
    k->loads = 1;
    e->c_loads++;
    e->mem_used += k->key_bytes;
    k->last_used = engine_now(e);
    k->next = e->keys;
    e->keys = k;
    if (info)
        fill_key_info(e, info, k);
    pthread_mutex_unlock(&e->mu);
    LOG(e, CUZK_LOG_INFO,
        "event=key_load_end key=%s format=%s ms=%.3f key_bytes=%llu partition_bytes=%llu", id,
        kind == KEY_PARAMS ? "params" : "zkey", (mono_s() - t) * 1e3,
        (unsigned long long)k->key_bytes, (unsigned long long)k->part_bytes);
    return CUZK_OK;
}

cuzk_err cuzk_engine_key_remove(cuzk_engine *e, const char *id)
{
    pthread_mutex_lock(&e->mu);
    key_entry *k = key_find(e, id);
    if (!k) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_error_set(CUZK_EINVAL, "unknown key %s", id);
    }
    k->registered = false;
    LOG(e, CUZK_LOG_INFO, "event=key_remove key=%s users=%u", id, k->refs - 1);
    key_unref(e, k);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

cuzk_err cuzk_engine_key_get(cuzk_engine *e, cuzk_engine_key_info *info, const char *id)
{
    pthread_mutex_lock(&e->mu);
    key_entry *k = key_find(e, id);
    if (k)
        fill_key_info(e, info, k);
    pthread_mutex_unlock(&e->mu);
    return k ? CUZK_OK : cuzk_error_set(CUZK_EINVAL, "unknown key \"%.100s\"", id);
}

size_t cuzk_engine_keys(cuzk_engine *e, cuzk_engine_key_info *out, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&e->mu);
    for (key_entry *k = e->keys; k; k = k->next)
        if (k->registered) {
            if (n < cap)
                fill_key_info(e, &out[n], k);
            n++;
        }
    pthread_mutex_unlock(&e->mu);
    return n;
}

/* ---- jobs (engine lock held) ---- */

static void queue_remove(cuzk_engine *e, job *j)
{
    if (!j->in_queue)
        return;
    job **pp = &e->qhead[j->prio], *prev = NULL;
    while (*pp && *pp != j) {
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    if (*pp) {
        *pp = j->qnext;
        if (e->qtail[j->prio] == j)
            e->qtail[j->prio] = prev;
    }
    j->qnext = NULL;
    j->in_queue = false;
}

/* Frees the job's inputs and its key reference once it is final and nothing of it is in
 * flight any more. */
static void job_retire_inputs(cuzk_engine *e, job *j)
{
    if (!is_final(j->state) || j->outstanding > 0 || j->inputs_freed)
        return;
    for (size_t i = 0; i < j->n; i++) {
        free(j->paths[i]);
        free(j->data[i]);
    }
    free(j->paths);
    free(j->data);
    free(j->len);
    j->paths = NULL;
    j->data = NULL;
    j->len = NULL;
    j->inputs_freed = true;
    key_unref(e, j->key);
    j->key = NULL;
}

/* Sets the final state once; returns false when the job was already final. */
static bool job_finish(cuzk_engine *e, job *j, cuzk_job_state st, const char *reason)
{
    if (is_final(j->state))
        return false;
    j->state = st;
    snprintf(j->error, sizeof j->error, "%s", reason ? reason : "");
    j->finished = engine_now(e);
    j->t.total_ms = (j->finished - j->submitted) * 1e3;
    queue_remove(e, j);
    e->jobs_open--;
    if (st == CUZK_JOB_DONE) {
        e->c_done++;
        e->stage_s[5] += j->t.total_ms * 1e-3;
    } else if (st == CUZK_JOB_FAILED) {
        e->c_failed++;
    } else {
        e->c_cancelled++;
    }
    if (st != CUZK_JOB_DONE) {
        free(j->proofs);
        free(j->publics);
        j->proofs = NULL;
        j->publics = NULL;
    }
    LOG(e, st == CUZK_JOB_FAILED ? CUZK_LOG_WARN : CUZK_LOG_INFO,
        "event=job_final job=%llu state=%s total_ms=%.3f queue_ms=%.3f srs_ms=%.3f synth_ms=%.3f "
        "gpu_ms=%.3f finalize_ms=%.3f verify_ms=%.3f%s%s%s",
        (unsigned long long)j->id, cuzk_job_state_name(st), j->t.total_ms, j->t.queue_ms,
        j->t.srs_ms, j->t.synth_ms, j->t.gpu_ms, j->t.finalize_ms, j->t.verify_ms,
        reason ? " reason=\"" : "", reason ? reason : "", reason ? "\"" : "");
    job_retire_inputs(e, j);
    pthread_cond_broadcast(&e->cv_job);
    pthread_cond_broadcast(&e->cv_synth);
    return true;
}

static job *job_find(cuzk_engine *e, uint64_t id)
{
    for (job *j = e->jobs; j; j = j->next)
        if (j->id == id)
            return j;
    return NULL;
}

/* ---- the witness buffer pool (engine lock held) ---- */

/* An idle buffer with room for n values (the smallest that fits), or NULL; *cap its room. */
static cuzk_fr *wpool_take(cuzk_engine *e, size_t n, size_t *cap)
{
    unsigned best = e->n_wpool;
    for (unsigned i = 0; i < e->n_wpool; i++)
        if (e->wpool[i].cap >= n && (best == e->n_wpool || e->wpool[i].cap < e->wpool[best].cap))
            best = i;
    if (best == e->n_wpool) {
        *cap = 0;
        return NULL;
    }
    cuzk_fr *b = e->wpool[best].p;
    *cap = e->wpool[best].cap;
    e->mem_used -= *cap * sizeof(cuzk_fr);
    e->wpool[best] = e->wpool[--e->n_wpool];
    return b;
}

/* Keeps b (room for cap values) for a later load when there is room in the pool and in the
 * memory budget, else frees it. */
static void wpool_put(cuzk_engine *e, cuzk_fr *b, size_t cap)
{
    uint64_t bytes = (uint64_t)cap * sizeof(cuzk_fr);
    if (!b)
        return;
    if (e->stop || e->n_wpool == ENGINE_WPOOL_MAX ||
        e->mem_used + bytes > e->cfg.memory_budget) {
        free(b);
        return;
    }
    e->wpool[e->n_wpool++] = (struct wbuf){b, cap};
    e->mem_used += bytes;
}

/* Frees the largest idle buffer; false when there is none. */
static bool wpool_drop(cuzk_engine *e)
{
    if (e->n_wpool == 0)
        return false;
    unsigned big = 0;
    for (unsigned i = 1; i < e->n_wpool; i++)
        if (e->wpool[i].cap > e->wpool[big].cap)
            big = i;
    e->mem_used -= (uint64_t)e->wpool[big].cap * sizeof(cuzk_fr);
    free(e->wpool[big].p);
    e->wpool[big] = e->wpool[--e->n_wpool];
    return true;
}

/* The partition's witness goes: its buffer to the pool. */
static void witness_release(cuzk_engine *e, part *p)
{
    if (!p->w)
        return;
    cuzk_fr *b = p->w->w;
    size_t cap = p->w->cap;
    p->w->w = NULL; /* the buffer is the pool's now, borrowed or not */
    cuzk_wtns_free(p->w);
    p->w = NULL;
    wpool_put(e, b, cap);
}

/* A partition leaves the pipeline (engine lock held). reserved: it held a reservation. */
static void part_retire(cuzk_engine *e, part *p, bool reserved)
{
    if (reserved) {
        e->mem_used -= p->key->part_bytes;
        p->key->in_flight--;
        p->key->last_used = engine_now(e);
        e->n_reserved--;
    }
    p->j->outstanding--;
    job_retire_inputs(e, p->j);
    witness_release(e, p);
    free(p->pub);
    if (p->pend)
        cuzk_groth16_pending_free(p->pend);
    free(p);
    pthread_cond_broadcast(&e->cv_synth);
    pthread_cond_broadcast(&e->cv_job);
}

static void part_fail(cuzk_engine *e, part *p, bool reserved, const char *what, cuzk_err err,
                      const char *detail)
{
    char why[512];
    snprintf(why, sizeof why, "partition %zu: %s: %.440s", p->idx, what,
             detail && detail[0] ? detail : cuzk_strerror(err));
    job_finish(e, p->j, CUZK_JOB_FAILED, why);
    part_retire(e, p, reserved);
}

/* ---- synthesis workers ---- */

static job *queue_head(cuzk_engine *e)
{
    for (int pr = CUZK_PRIO_COUNT - 1; pr >= 0; pr--)
        if (e->qhead[pr])
            return e->qhead[pr];
    return NULL;
}

/* Reserves memory for partition p (and its key when evicted). Returns 1 when reserved and
 * the caller must load the key, 0 when reserved with the key loaded, -1 when the job ended
 * or the partition can never fit (job failed). Engine lock held; may wait. */
static int reserve(cuzk_engine *e, part *p)
{
    key_entry *k = p->key;
    for (;;) {
        if (is_final(p->j->state))
            return -1;
        if (k->st == KEY_LOADING) {
            pthread_cond_wait(&e->cv_synth, &e->mu);
            continue;
        }
        uint64_t need = k->part_bytes + (k->st == KEY_UNLOADED ? k->key_bytes : 0);
        if (e->mem_used + need <= e->cfg.memory_budget) {
            e->mem_used += need;
            k->in_flight++;
            e->n_reserved++;
            if (k->st == KEY_UNLOADED) {
                k->st = KEY_LOADING;
                return 1;
            }
            return 0;
        }
        if (wpool_drop(e) || evict_one(e, k))
            continue;
        if (e->n_reserved == 0) {
            char why[300];
            snprintf(why, sizeof why,
                     "memory budget: needs %llu bytes, %llu of %llu in use by keys, and "
                     "nothing in flight to wait for",
                     (unsigned long long)need, (unsigned long long)e->mem_used,
                     (unsigned long long)e->cfg.memory_budget);
            job_finish(e, p->j, CUZK_JOB_FAILED, why);
            return -1;
        }
        pthread_cond_wait(&e->cv_synth, &e->mu);
    }
}

/* Loads witness idx of j into buf (room for cap values) when it fits (see cuzk_wtns_load_into). */
static cuzk_err load_witness(cuzk_wtns **w, const job *j, size_t idx, cuzk_fr *buf, size_t cap)
{
    if (j->paths[idx]) /* the loader refuses a FIFO or a directory without blocking */
        return cuzk_wtns_load_into(w, j->paths[idx], buf, cap);
    /* Uploaded bytes: the loader reads files, so hand it an anonymous memory file. */
    int fd = memfd_create("cuzk-wtns", MFD_CLOEXEC);
    if (fd < 0)
        return cuzk_error_set(CUZK_EIO, "uploaded witness: memfd_create: %s", strerror(errno));
    size_t off = 0;
    while (off < j->len[idx]) {
        ssize_t n = write(fd, j->data[idx] + off, j->len[idx] - off);
        if (n <= 0) {
            close(fd);
            return cuzk_error_set(CUZK_EIO, "uploaded witness: write: %s", strerror(errno));
        }
        off += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    cuzk_err r = cuzk_wtns_load_into(w, path, buf, cap);
    close(fd);
    if (r != CUZK_OK) {
        /* Name it "uploaded witness" rather than the /proc path. */
        char why[600];
        const char *d = cuzk_error_detail();
        const char *rest = strncmp(d, path, strlen(path)) == 0 ? d + strlen(path) : d;
        snprintf(why, sizeof why, "uploaded witness%s", rest);
        return cuzk_error_set(r, "%s", why);
    }
    return CUZK_OK;
}

static void synth_worker(cuzk_engine *e)
{
    pthread_mutex_lock(&e->mu);
    for (;;) {
        job *j;
        while (!e->stop && (!(j = queue_head(e)) || e->n_synth + e->n_ready >= e->cfg.lookahead))
            pthread_cond_wait(&e->cv_synth, &e->mu);
        if (e->stop)
            break;
        part *p = calloc(1, sizeof *p);
        if (!p) {
            job_finish(e, j, CUZK_JOB_FAILED, "out of memory");
            continue;
        }
        p->j = j;
        p->idx = j->next_part++;
        p->key = j->key;
        if (j->next_part == j->n)
            queue_remove(e, j);
        j->outstanding++;
        e->n_synth++;
        double t0 = engine_now(e);
        if (j->state == CUZK_JOB_QUEUED) {
            j->state = CUZK_JOB_RUNNING;
            j->t.queue_ms = (t0 - j->submitted) * 1e3;
        }
        int rv = reserve(e, p);
        if (rv < 0) {
            e->n_synth--;
            part_retire(e, p, false);
            continue;
        }
        key_entry *k = p->key;
        if (rv == 1) {
            pthread_mutex_unlock(&e->mu);
            LOG(e, CUZK_LOG_INFO, "event=key_load_start key=%s job=%llu", k->id,
                (unsigned long long)j->id);
            key_obj obj;
            cuzk_err r = key_obj_load(&obj, k->kind, k->path, k->r1cs, k->pflags);
            char why[600];
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
            pthread_mutex_lock(&e->mu);
            e->c_loads++;
            if (r != CUZK_OK) {
                e->mem_used -= k->key_bytes;
                k->st = KEY_UNLOADED;
                e->n_synth--;
                pthread_cond_broadcast(&e->cv_synth);
                part_fail(e, p, true, "reloading the key", r, why);
                continue;
            }
            k->obj = obj;
            k->st = KEY_LOADED;
            k->loads++;
            pthread_cond_broadcast(&e->cv_synth);
            LOG(e, CUZK_LOG_INFO, "event=key_load_end key=%s job=%llu ms=%.3f", k->id,
                (unsigned long long)j->id, (engine_now(e) - t0) * 1e3);
        }
        double t1 = engine_now(e);
        j->t.srs_ms += (t1 - t0) * 1e3;
        e->stage_s[0] += t1 - t0;
        k->last_used = t1;
        const cuzk_pk_view *view = &k->obj.view;
        size_t wcap;
        cuzk_fr *wbuf = wpool_take(e, view->n_vars, &wcap);
        pthread_mutex_unlock(&e->mu);

        LOG(e, CUZK_LOG_INFO, "event=synth_start job=%llu part=%zu", (unsigned long long)j->id,
            p->idx);
        cuzk_err r = load_witness(&p->w, j, p->idx, wbuf, wcap);
        if (wbuf) {
            pthread_mutex_lock(&e->mu);
            if (p->w && p->w->borrowed)
                e->c_wreuse++;
            else /* not taken (a failed load, or a witness too big for it) */
                wpool_put(e, wbuf, wcap);
            pthread_mutex_unlock(&e->mu);
        }
        if (r == CUZK_OK && (r = cuzk_pk_view_check_witness(view, p->w->w, p->w->n)) != CUZK_OK) {
            char d[400];
            snprintf(d, sizeof d, "%s", cuzk_error_detail());
            const char *wn = j->paths[p->idx] ? j->paths[p->idx] : "uploaded witness";
            cuzk_error_set(r, "%s: %s (key %s)", wn, d, k->path);
        }
        /* Public inputs: witness values 1 .. n_public, for both kinds of key. */
        if (r == CUZK_OK && view->n_public) {
            p->pub = malloc(sizeof(cuzk_fr) * view->n_public);
            if (!p->pub)
                r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
            else
                memcpy(p->pub, p->w->w + 1, sizeof(cuzk_fr) * view->n_public);
        }
        char why[600];
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        double t2 = engine_now(e);
        LOG(e, CUZK_LOG_INFO, "event=synth_end job=%llu part=%zu ms=%.3f%s",
            (unsigned long long)j->id, p->idx, (t2 - t1) * 1e3, r == CUZK_OK ? "" : " error=1");

        pthread_mutex_lock(&e->mu);
        e->n_synth--;
        j->t.synth_ms += (t2 - t1) * 1e3;
        e->stage_s[1] += t2 - t1;
        if (r != CUZK_OK) {
            part_fail(e, p, true, "witness", r, why);
            continue;
        }
        if (is_final(j->state)) {
            part_retire(e, p, true);
            continue;
        }
        /* Insert into the ready list: priority desc, then job id, then partition. */
        p->t_ready = t2;
        part **pp = &e->ready;
        while (*pp && ((*pp)->j->prio > j->prio ||
                       ((*pp)->j->prio == j->prio &&
                        ((*pp)->j->id < j->id || ((*pp)->j->id == j->id && (*pp)->idx < p->idx)))))
            pp = &(*pp)->next;
        p->next = *pp;
        *pp = p;
        e->n_ready++;
        pthread_cond_signal(&e->cv_ready);
    }
    pthread_mutex_unlock(&e->mu);
}

/* ---- device workers ---- */

static void device_worker(cuzk_engine *e, device *d, unsigned widx)
{
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->stop && !e->ready)
            pthread_cond_wait(&e->cv_ready, &e->mu);
        if (e->stop)
            break;
        part *p = e->ready;
        e->ready = p->next;
        p->next = NULL;
        e->n_ready--;
        pthread_cond_broadcast(&e->cv_synth);   /* a lookahead slot is free */
        job *j = p->j;
        if (is_final(j->state)) {
            part_retire(e, p, true);
            continue;
        }
        e->n_device++;
        const cuzk_pk_view *view = &p->key->obj.view;
        pthread_mutex_unlock(&e->mu);

        LOG(e, CUZK_LOG_INFO, "event=gpu_pickup job=%llu part=%zu dev=%s worker=%u",
            (unsigned long long)j->id, p->idx, d->name, widx);
        cuzk_prove_opts po = {.nthreads = e->cfg.prove_threads};
        cuzk_err r = CUZK_OK;
        if (d->gpu >= 0) {
            /* GPU: the prover holds the device lock around its device work only; the
             * key's resident copy on this device is made once, under that lock. */
            po.backend = CUZK_BACKEND_GPU;
            po.device_lock = &d->lock;
            /* Only the first partition of a key on this device waits for the device here:
             * the others must not, or their CPU side could not overlap the device work of
             * the partition holding it (the pointer is published once, with release). */
            cuzk_gpu_key *gk = __atomic_load_n(&p->key->gk[d->gpu], __ATOMIC_ACQUIRE);
            if (!gk) {
                pthread_mutex_lock(&d->lock);
                gk = __atomic_load_n(&p->key->gk[d->gpu], __ATOMIC_ACQUIRE);
                if (!gk && (r = cuzk_gpu_key_from_view(&gk, view, d->gpu, NULL)) == CUZK_OK)
                    __atomic_store_n(&p->key->gk[d->gpu], gk, __ATOMIC_RELEASE);
                pthread_mutex_unlock(&d->lock);
            }
            po.gpu_key = gk;
        } else {
            po.backend = CUZK_BACKEND_CPU;
            pthread_mutex_lock(&d->lock);
        }
        double t0 = engine_now(e);
        LOG(e, CUZK_LOG_INFO, "event=gpu_start job=%llu part=%zu dev=%s worker=%u",
            (unsigned long long)j->id, p->idx, d->name, widx);
        const cuzk_fr *wv = p->w->w;
        if (r == CUZK_OK)
            r = cuzk_groth16_prove_start_view(&p->pend, view, &wv, 1, p->w->n, &po);
        char why[600];
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        if (e->cfg.debug_device_delay_ms) {
            struct timespec ts = {e->cfg.debug_device_delay_ms / 1000,
                                  (long)(e->cfg.debug_device_delay_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        double t1 = engine_now(e);
        if (d->gpu < 0)
            pthread_mutex_unlock(&d->lock);
        /* the prover's own split: CPU side (synthesis, bit vectors) and device lock held */
        cuzk_prove_timings pt;
        memset(&pt, 0, sizeof pt);
        if (r == CUZK_OK)
            cuzk_groth16_pending_timings(p->pend, &pt);
        LOG(e, CUZK_LOG_INFO,
            "event=gpu_end job=%llu part=%zu dev=%s worker=%u ms=%.3f prep_ms=%.3f device_ms=%.3f%s",
            (unsigned long long)j->id, p->idx, d->name, widx, (t1 - t0) * 1e3, pt.prep_ms,
            pt.device_ms, r == CUZK_OK ? "" : " error=1");
        /* Device occupancy: on a GPU the prover reports when it held the device; the CPU
         * pseudo-device is held for the whole call. */
        double ds = t0, de = t1;
        if (d->gpu >= 0 && r == CUZK_OK) {
            ds = pt.device_first_ms / 1e3 - e->t0;
            de = pt.device_last_ms / 1e3 - e->t0;
        }

        pthread_mutex_lock(&e->mu);
        /* The pending proof holds its own copy of the witness, or (the GPU) no longer reads
         * it: its buffer is free for the next load. */
        witness_release(e, p);
        e->n_device--;
        d->busy_s += de - ds;
        /* the gap between this partition's device work and the latest end before it (0 when
         * they touch; workers may report out of order) */
        if (d->partitions > 0) {
            double gap = ds > d->last_end_s ? ds - d->last_end_s : 0;
            d->gap_s += gap;
            d->gaps++;
            if (gap > d->gap_max_s)
                d->gap_max_s = gap;
        }
        if (de > d->last_end_s)
            d->last_end_s = de;
        d->partitions++;
        j->t.gpu_ms += (t1 - t0) * 1e3;
        e->stage_s[2] += t1 - t0;
        if (r != CUZK_OK) {
            part_fail(e, p, true, "prove", r, why);
            continue;
        }
        if (is_final(j->state)) {
            part_retire(e, p, true);
            continue;
        }
        if (e->fin_tail)
            e->fin_tail->next = p;
        else
            e->fin_head = p;
        e->fin_tail = p;
        pthread_cond_signal(&e->cv_fin);
    }
    pthread_mutex_unlock(&e->mu);
}

/* ---- finalisers ---- */

static void finalizer(cuzk_engine *e)
{
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->fin_head && !(e->stop && e->n_device == 0 && !e->ready))
            pthread_cond_wait(&e->cv_fin, &e->mu);
        if (!e->fin_head)
            break;
        part *p = e->fin_head;
        e->fin_head = p->next;
        if (!e->fin_head)
            e->fin_tail = NULL;
        p->next = NULL;
        e->n_fin++;
        job *j = p->j;
        const cuzk_vk *vk = p->key->obj.vk;
        uint32_t npub = p->key->n_public;
        bool verify = e->cfg.verify;
        pthread_mutex_unlock(&e->mu);

        double t0 = engine_now(e);
        cuzk_proof proof;
        cuzk_err r = cuzk_groth16_prove_finish(&proof, NULL, p->pend);
        char why[600];
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        cuzk_groth16_pending_free(p->pend);
        p->pend = NULL;
        double t1 = engine_now(e);
        LOG(e, CUZK_LOG_INFO, "event=finalize_end job=%llu part=%zu ms=%.3f%s",
            (unsigned long long)j->id, p->idx, (t1 - t0) * 1e3, r == CUZK_OK ? "" : " error=1");
        cuzk_err vr = CUZK_OK;
        if (r == CUZK_OK && verify) {
            vr = cuzk_groth16_verify(vk, p->pub, npub, &proof);
            if (vr != CUZK_OK)
                snprintf(why, sizeof why, "%s", cuzk_error_detail());
        }
        double t2 = engine_now(e);
        if (verify && r == CUZK_OK)
            LOG(e, vr == CUZK_OK ? CUZK_LOG_DEBUG : CUZK_LOG_ERROR,
                "event=verify_end job=%llu part=%zu ms=%.3f ok=%d", (unsigned long long)j->id,
                p->idx, (t2 - t1) * 1e3, vr == CUZK_OK);

        pthread_mutex_lock(&e->mu);
        e->n_fin--;
        j->t.finalize_ms += (t1 - t0) * 1e3;
        j->t.verify_ms += (t2 - t1) * 1e3;
        e->stage_s[3] += t1 - t0;
        e->stage_s[4] += t2 - t1;
        if (r != CUZK_OK) {
            part_fail(e, p, true, "finish", r, why);
            continue;
        }
        if (vr != CUZK_OK) {
            part_fail(e, p, true, "self-verification failed", vr, why);
            continue;
        }
        e->c_parts++;
        if (verify)
            e->c_verified++;
        if (!is_final(j->state)) {
            j->proofs[p->idx] = proof;
            if (npub)
                memcpy(j->publics + p->idx * npub, p->pub, sizeof(cuzk_fr) * npub);
            if (++j->n_done == j->n)
                job_finish(e, j, CUZK_JOB_DONE, NULL);
        }
        part_retire(e, p, true);
    }
    pthread_mutex_unlock(&e->mu);
}

/* ---- reaper: per-job timeouts and expiry of finished jobs ---- */

static void *reaper_main(void *arg)
{
    cuzk_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    while (!e->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;   /* wake every 100 ms */
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&e->cv_job, &e->mu, &ts);
        double now = engine_now(e);
        job **pp = &e->jobs, *prev = NULL;
        while (*pp) {
            job *j = *pp;
            if (!is_final(j->state) && e->cfg.job_timeout_s > 0 &&
                now - j->submitted > e->cfg.job_timeout_s) {
                char why[128];
                snprintf(why, sizeof why, "timed out after %.3g s (job_timeout_s)",
                         e->cfg.job_timeout_s);
                job_finish(e, j, CUZK_JOB_FAILED, why);
            }
            if (is_final(j->state) && j->outstanding == 0 &&
                now - j->finished > e->cfg.result_ttl_s) {
                *pp = j->next;
                if (e->jobs_tail == j)
                    e->jobs_tail = prev;
                job_retire_inputs(e, j); /* a no-op when they went already */
                free(j->proofs);
                free(j->publics);
                free(j);
                continue;
            }
            prev = j;
            pp = &j->next;
        }
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* ---- threads ---- */

typedef struct {
    cuzk_engine *e;
    int kind;        /* 0 synth, 1 device, 2 finaliser */
    device *d;
    unsigned widx;
} thread_arg;

static void *thread_main(void *arg)
{
    thread_arg a = *(thread_arg *)arg;
    free(arg);
    if (a.kind == 0)
        synth_worker(a.e);
    else if (a.kind == 1)
        device_worker(a.e, a.d, a.widx);
    else
        finalizer(a.e);
    return NULL;
}

static cuzk_err spawn(cuzk_engine *e, int kind, device *d, unsigned widx)
{
    thread_arg *a = malloc(sizeof *a);
    if (!a)
        return cuzk_error_set(CUZK_ENOMEM, "engine: out of memory");
    *a = (thread_arg){e, kind, d, widx};
    if (pthread_create(&e->threads[e->n_threads], NULL, thread_main, a) != 0) {
        free(a);
        return cuzk_error_set(CUZK_ENOMEM, "engine: cannot create a thread");
    }
    e->n_threads++;
    return CUZK_OK;
}

cuzk_err cuzk_engine_new(cuzk_engine **out, const cuzk_engine_config *c)
{
    *out = NULL;
    cuzk_engine_config cfg;
    if (c)
        cfg = *c;
    else
        cuzk_engine_config_default(&cfg);
    if (cfg.synth_threads == 0 || cfg.workers_per_device == 0 || cfg.finalizers == 0 ||
        cfg.max_queued_jobs == 0 || cfg.max_partitions == 0 ||
        cfg.memory_budget == 0)
        return cuzk_error_set(CUZK_EINVAL,
                              "engine: synth_threads, workers_per_device, finalizers, "
                              "max_queued_jobs, max_partitions and memory_budget must be > 0");
    cuzk_engine *e = calloc(1, sizeof *e);
    if (!e)
        return cuzk_error_set(CUZK_ENOMEM, "engine: out of memory");
    e->cfg = cfg;
    e->t0 = mono_s();
    e->next_id = 1;
    e->accepting = true;
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->log_mu, NULL);
    pthread_cond_init(&e->cv_synth, NULL);
    pthread_cond_init(&e->cv_ready, NULL);
    pthread_cond_init(&e->cv_fin, NULL);
    pthread_cond_init(&e->cv_job, NULL);

    /* Devices: every visible GPU when the GPU backend is chosen (CUZK_BACKEND, or AUTO with
     * a device present), else the CPU pseudo-device. */
    e->n_devices = 0;
#ifdef CUZK_HAVE_CUDA
    if (cuzk_groth16_backend(NULL) == CUZK_BACKEND_GPU) {
        int ng = cuzk_gpu_device_count();
        for (int g = 0; g < ng && e->n_devices < CUZK_ENGINE_MAX_DEVICES; g++) {
            device *dv = &e->devices[e->n_devices++];
            snprintf(dv->name, sizeof dv->name, "gpu%d", g);
            dv->gpu = g;
        }
    }
#endif
    if (e->n_devices == 0) {
        e->n_devices = 1;
        snprintf(e->devices[0].name, sizeof e->devices[0].name, "cpu0");
        e->devices[0].gpu = -1;
    }
    /* Lookahead 0 (the default): one synthesised partition per device worker, so that a
     * worker finishing its partition always finds the next one ready (with a fixed 2, the
     * daemon on two H200s with 2 workers each kept the devices 71-78 % busy). Memory is
     * still bounded by the budget (reserve()). */
    if (cfg.lookahead == 0) {
        cfg.lookahead = e->n_devices * cfg.workers_per_device;
        if (cfg.lookahead < 2)
            cfg.lookahead = 2;
        e->cfg.lookahead = cfg.lookahead;
    }
    for (unsigned i = 0; i < e->n_devices; i++) {
        pthread_mutex_init(&e->devices[i].lock, NULL);
        e->devices[i].workers = cfg.workers_per_device;
    }
    unsigned total = cfg.synth_threads + cfg.finalizers + e->n_devices * cfg.workers_per_device;
    e->threads = calloc(total, sizeof(pthread_t));
    cuzk_err r = e->threads ? CUZK_OK : cuzk_error_set(CUZK_ENOMEM, "engine: out of memory");
    for (unsigned i = 0; r == CUZK_OK && i < cfg.synth_threads; i++)
        r = spawn(e, 0, NULL, i);
    for (unsigned d = 0; r == CUZK_OK && d < e->n_devices; d++)
        for (unsigned i = 0; r == CUZK_OK && i < cfg.workers_per_device; i++)
            r = spawn(e, 1, &e->devices[d], i);
    for (unsigned i = 0; r == CUZK_OK && i < cfg.finalizers; i++)
        r = spawn(e, 2, NULL, i);
    if (r == CUZK_OK) {
        if (pthread_create(&e->reaper, NULL, reaper_main, e) == 0)
            e->reaper_started = true;
        else
            r = cuzk_error_set(CUZK_ENOMEM, "engine: cannot create a thread");
    }
    if (r != CUZK_OK) {
        cuzk_engine_free(e);
        return r;
    }
    LOG(e, CUZK_LOG_INFO,
        "event=engine_start synth_threads=%u lookahead=%u devices=%u workers_per_device=%u "
        "finalizers=%u memory_budget=%llu verify=%d",
        cfg.synth_threads, cfg.lookahead, e->n_devices, cfg.workers_per_device, cfg.finalizers,
        (unsigned long long)cfg.memory_budget, cfg.verify);
    *out = e;
    return CUZK_OK;
}

static void timespec_after(struct timespec *ts, double s)
{
    clock_gettime(CLOCK_REALTIME, ts);
    double whole = (double)(long)s;
    ts->tv_sec += (time_t)whole;
    ts->tv_nsec += (long)((s - whole) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

void cuzk_engine_shutdown(cuzk_engine *e, double grace_s)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->mu);
    if (e->shut_done) {
        pthread_mutex_unlock(&e->mu);
        return;
    }
    e->accepting = false;
    LOG(e, CUZK_LOG_INFO, "event=shutdown_start open_jobs=%u grace_s=%.3g", e->jobs_open, grace_s);
    for (job *j = e->jobs; j; j = j->next)
        if (j->state == CUZK_JOB_QUEUED)
            job_finish(e, j, CUZK_JOB_FAILED, "daemon shutting down (job had not started)");
    /* Running jobs: no new job starts, their remaining partitions still run. */
    struct timespec dl;
    timespec_after(&dl, grace_s > 0 ? grace_s : 0);
    while (e->jobs_open > 0 && grace_s > 0)
        if (pthread_cond_timedwait(&e->cv_job, &e->mu, &dl) == ETIMEDOUT)
            break;
    for (job *j = e->jobs; j; j = j->next)
        if (!is_final(j->state))
            job_finish(e, j, CUZK_JOB_FAILED, "daemon shutting down (grace period over)");
    /* Let partitions on the way drain (their results are dropped), then stop the threads. */
    for (;;) {
        unsigned busy = 0;
        for (job *j = e->jobs; j; j = j->next)
            busy += (unsigned)j->outstanding;
        if (busy == 0)
            break;
        pthread_cond_wait(&e->cv_job, &e->mu);
    }
    e->stop = true;
    e->shut_done = true;
    pthread_cond_broadcast(&e->cv_synth);
    pthread_cond_broadcast(&e->cv_ready);
    pthread_cond_broadcast(&e->cv_fin);
    pthread_cond_broadcast(&e->cv_job);
    LOG(e, CUZK_LOG_INFO, "event=shutdown_end done=%llu failed=%llu cancelled=%llu",
        (unsigned long long)e->c_done, (unsigned long long)e->c_failed,
        (unsigned long long)e->c_cancelled);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < e->n_threads; i++)
        pthread_join(e->threads[i], NULL);
    e->n_threads = 0;
    if (e->reaper_started) {
        pthread_join(e->reaper, NULL);
        e->reaper_started = false;
    }
}

void cuzk_engine_free(cuzk_engine *e)
{
    if (!e)
        return;
    if (!e->shut_done) {
        if (e->n_threads == 0 && !e->reaper_started) {
            e->shut_done = true;   /* failed construction: no threads */
        } else {
            cuzk_engine_shutdown(e, 0);
        }
    }
    pthread_mutex_lock(&e->mu);
    while (e->jobs) {
        job *j = e->jobs;
        e->jobs = j->next;
        job_retire_inputs(e, j);
        free(j->proofs);
        free(j->publics);
        free(j);
    }
    while (e->keys) {
        key_entry *k = e->keys;
        e->keys = k->next;
        key_unload(e, k);
        free(k);
    }
    while (wpool_drop(e))
        ;
    pthread_mutex_unlock(&e->mu);
    free(e->threads);
    for (unsigned i = 0; i < e->n_devices; i++)
        pthread_mutex_destroy(&e->devices[i].lock);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->log_mu);
    pthread_cond_destroy(&e->cv_synth);
    pthread_cond_destroy(&e->cv_ready);
    pthread_cond_destroy(&e->cv_fin);
    pthread_cond_destroy(&e->cv_job);
    free(e);
}

/* ---- submit, cancel, query ---- */

cuzk_err cuzk_engine_submit(cuzk_engine *e, uint64_t *job_id, const char *key_id,
                            cuzk_priority prio, const cuzk_witness_src *w, size_t n)
{
    *job_id = 0;
    if ((unsigned)prio >= CUZK_PRIO_COUNT)
        return cuzk_error_set(CUZK_EINVAL, "bad priority %d", (int)prio);
    if (n == 0 || n > e->cfg.max_partitions)
        return cuzk_error_set(CUZK_EINVAL, "a job needs 1 to %u witnesses, got %zu",
                              e->cfg.max_partitions, n);
    job *j = calloc(1, sizeof *j);
    if (!j)
        return cuzk_error_set(CUZK_ENOMEM, "out of memory");
    j->n = n;
    j->paths = calloc(n, sizeof(char *));
    j->data = calloc(n, sizeof(unsigned char *));
    j->len = calloc(n, sizeof(size_t));
    j->proofs = calloc(n, sizeof(cuzk_proof));
    bool ok = j->paths && j->data && j->len && j->proofs;
    for (size_t i = 0; ok && i < n; i++) {
        if (w[i].path) {
            ok = (j->paths[i] = strdup(w[i].path)) != NULL;
        } else {
            ok = (j->data[i] = malloc(w[i].len ? w[i].len : 1)) != NULL;
            if (ok && w[i].len)
                memcpy(j->data[i], w[i].data, w[i].len);
            j->len[i] = w[i].len;
        }
    }
    j->inputs_freed = false;
    cuzk_err r = ok ? CUZK_OK : cuzk_error_set(CUZK_ENOMEM, "out of memory");

    pthread_mutex_lock(&e->mu);
    key_entry *k = r == CUZK_OK ? key_find(e, key_id) : NULL;
    if (r != CUZK_OK) {
    } else if (!e->accepting) {
        r = cuzk_error_set(CUZK_EBUSY, "shutting down: not accepting jobs");
    } else if (!k) {
        r = cuzk_error_set(CUZK_EINVAL, "unknown key \"%.100s\"", key_id);
    } else if (k->key_bytes + k->part_bytes > e->cfg.memory_budget) {
        r = cuzk_error_set(CUZK_ESIZE,
                           "memory budget too small: key %s needs %llu bytes resident plus %llu "
                           "bytes per partition (%llu), the budget is %llu bytes",
                           k->id, (unsigned long long)k->key_bytes,
                           (unsigned long long)k->part_bytes,
                           (unsigned long long)(k->key_bytes + k->part_bytes),
                           (unsigned long long)e->cfg.memory_budget);
    } else if (e->jobs_open >= e->cfg.max_queued_jobs) {
        r = cuzk_error_set(CUZK_EBUSY, "queue full: %u unfinished jobs (max_queued_jobs)",
                           e->jobs_open);
    } else if (k->n_public && !(j->publics = calloc(n * k->n_public, sizeof(cuzk_fr)))) {
        r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
    }
    if (r != CUZK_OK) {
        e->c_rejected++;
        pthread_mutex_unlock(&e->mu);
        LOG(e, CUZK_LOG_INFO, "event=job_rejected key=%.100s reason=\"%s\"", key_id,
            cuzk_error_detail());
        for (size_t i = 0; i < n && j->paths && j->data; i++) {
            free(j->paths[i]);
            free(j->data[i]);
        }
        free(j->paths);
        free(j->data);
        free(j->len);
        free(j->proofs);
        free(j->publics);
        free(j);
        return r;
    }
    j->id = e->next_id++;
    j->key = k;
    snprintf(j->key_id, sizeof j->key_id, "%s", k->id);
    k->refs++;
    j->n_public = k->n_public;
    j->prio = prio;
    j->state = CUZK_JOB_QUEUED;
    j->submitted = engine_now(e);
    if (e->jobs_tail)
        e->jobs_tail->next = j;
    else
        e->jobs = j;
    e->jobs_tail = j;
    if (e->qtail[prio])
        e->qtail[prio]->qnext = j;
    else
        e->qhead[prio] = j;
    e->qtail[prio] = j;
    j->in_queue = true;
    e->jobs_open++;
    e->c_submitted++;
    *job_id = j->id;
    LOG(e, CUZK_LOG_INFO, "event=job_submit job=%llu key=%s priority=%s partitions=%zu",
        (unsigned long long)j->id, k->id, cuzk_priority_name(prio), n);
    pthread_cond_broadcast(&e->cv_synth);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

cuzk_err cuzk_engine_cancel(cuzk_engine *e, uint64_t job_id)
{
    pthread_mutex_lock(&e->mu);
    job *j = job_find(e, job_id);
    cuzk_err r = CUZK_OK;
    if (!j)
        r = cuzk_error_set(CUZK_EINVAL, "unknown job %llu", (unsigned long long)job_id);
    else if (j->state == CUZK_JOB_DONE || j->state == CUZK_JOB_FAILED)
        r = cuzk_error_set(CUZK_EBUSY, "job %llu already ended: %s", (unsigned long long)job_id,
                           cuzk_job_state_name(j->state));
    else
        job_finish(e, j, CUZK_JOB_CANCELLED, "cancelled");
    pthread_mutex_unlock(&e->mu);
    return r;
}

cuzk_err cuzk_engine_job_get(cuzk_engine *e, cuzk_job_info *info, uint64_t job_id,
                             double timeout_s, bool want_results)
{
    memset(info, 0, sizeof *info);
    pthread_mutex_lock(&e->mu);
    job *j = job_find(e, job_id);
    if (j && timeout_s != 0) {
        struct timespec dl;
        timespec_after(&dl, timeout_s > 0 ? timeout_s : 0);
        while (!is_final(j->state) && !e->stop) {
            int rc = timeout_s < 0 ? pthread_cond_wait(&e->cv_job, &e->mu)
                                   : pthread_cond_timedwait(&e->cv_job, &e->mu, &dl);
            if (rc == ETIMEDOUT)
                break;
        }
        j = job_find(e, job_id);   /* the reaper may have expired it meanwhile */
    }
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_error_set(CUZK_EINVAL, "unknown job %llu", (unsigned long long)job_id);
    }
    info->id = j->id;
    snprintf(info->key, sizeof info->key, "%s", j->key_id);
    info->priority = j->prio;
    info->state = j->state;
    snprintf(info->error, sizeof info->error, "%s", j->error);
    info->n_partitions = j->n;
    info->n_done = j->n_done;
    info->timings = j->t;
    if (!is_final(j->state))
        info->timings.total_ms = (engine_now(e) - j->submitted) * 1e3;
    info->submitted_s = j->submitted;
    info->finished_s = is_final(j->state) ? j->finished : 0;
    info->n_public = j->n_public;
    cuzk_err r = CUZK_OK;
    if (want_results && j->state == CUZK_JOB_DONE) {
        info->proofs = malloc(sizeof(cuzk_proof) * j->n);
        info->publics = malloc(sizeof(cuzk_fr) * (j->n * j->n_public + 1));
        if (!info->proofs || !info->publics) {
            cuzk_job_info_release(info);
            r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
        } else {
            memcpy(info->proofs, j->proofs, sizeof(cuzk_proof) * j->n);
            if (j->n_public)
                memcpy(info->publics, j->publics, sizeof(cuzk_fr) * j->n * j->n_public);
        }
    }
    pthread_mutex_unlock(&e->mu);
    return r;
}

void cuzk_job_info_release(cuzk_job_info *info)
{
    free(info->proofs);
    free(info->publics);
    info->proofs = NULL;
    info->publics = NULL;
}

void cuzk_engine_count_rejected(cuzk_engine *e)
{
    pthread_mutex_lock(&e->mu);
    e->c_rejected++;
    pthread_mutex_unlock(&e->mu);
}

void cuzk_engine_get_stats(cuzk_engine *e, cuzk_engine_stats *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&e->mu);
    s->uptime_s = engine_now(e);
    s->shutting_down = !e->accepting;
    for (job *j = e->jobs; j; j = j->next) {
        if (j->state == CUZK_JOB_QUEUED)
            s->jobs_queued++;
        else if (j->state == CUZK_JOB_RUNNING)
            s->jobs_running++;
        if (j->in_queue)
            s->partitions_queued += (unsigned)(j->n - j->next_part);
    }
    s->partitions_synth = e->n_synth;
    s->partitions_ready = e->n_ready;
    s->partitions_device = e->n_device;
    s->partitions_finalize = e->n_fin;
    for (part *p = e->fin_head; p; p = p->next)
        s->partitions_finalize++;
    s->jobs_submitted = e->c_submitted;
    s->jobs_done = e->c_done;
    s->jobs_failed = e->c_failed;
    s->jobs_cancelled = e->c_cancelled;
    s->jobs_rejected = e->c_rejected;
    s->partitions_proved = e->c_parts;
    s->proofs_verified = e->c_verified;
    s->key_loads = e->c_loads;
    s->key_evictions = e->c_evictions;
    s->witness_buffers_reused = e->c_wreuse;
    s->memory_budget = e->cfg.memory_budget;
    s->memory_used = e->mem_used;
    s->n_devices = e->n_devices;
    for (unsigned i = 0; i < e->n_devices; i++) {
        const device *d = &e->devices[i];
        snprintf(s->devices[i].name, sizeof s->devices[i].name, "%s", d->name);
        s->devices[i].workers = d->workers;
        s->devices[i].busy_s = d->busy_s;
        s->devices[i].gap_s = d->gap_s;
        s->devices[i].gap_max_s = d->gap_max_s;
        s->devices[i].gaps = d->gaps;
        s->devices[i].partitions = d->partitions;
    }
    s->devices[0].busy = e->n_device;   /* one device today */
    memcpy(s->stage_s, e->stage_s, sizeof s->stage_s);
    s->synth_threads = e->cfg.synth_threads;
    s->finalizers = e->cfg.finalizers;
    s->lookahead = e->cfg.lookahead;
    s->config = e->cfg;
    pthread_mutex_unlock(&e->mu);
}
