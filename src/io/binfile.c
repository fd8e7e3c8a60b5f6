/* SPDX-License-Identifier: Apache-2.0 */
/* iden3 container: mapping, section table, prime checks, parallel validation. */
#include "io/binfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/parallel.h"

#define IO_HEADER_BYTES 12        /* magic, u32 version, u32 section count */
#define IO_SECTION_HEADER_BYTES 12 /* u32 id, u64 size */

const char *io_secname(const io_file *f, uint32_t id)
{
    if (id < f->n_names && f->names[id])
        return f->names[id];
    return "unknown";
}

/* ---- the truncation guard ---- */

#define IO_GUARD_SLOTS 64

static struct {
    _Atomic uintptr_t lo, hi; /* lo = 0: free */
    atomic_int hit;
} io_guard[IO_GUARD_SLOTS];
static atomic_bool io_guard_on;
static struct sigaction io_guard_prev;
static uintptr_t io_page;
void (*io_test_after_map)(const char *path);

static void io_sigbus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < IO_GUARD_SLOTS; i++) {
        uintptr_t lo = atomic_load(&io_guard[i].lo), hi = atomic_load(&io_guard[i].hi);
        if (lo && a >= lo && a < hi) {
            /* zeros where the file ended: the read goes on and io_finish reports it */
            void *pg = (void *)(a & ~(io_page - 1));
            if (mmap(pg, io_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
                MAP_FAILED) {
                atomic_store(&io_guard[i].hit, 1);
                return;
            }
        }
    }
    /* not a guarded mapping: what there was before */
    if (io_guard_prev.sa_flags & SA_SIGINFO) {
        io_guard_prev.sa_sigaction(sig, si, uc);
    } else if (io_guard_prev.sa_handler != SIG_IGN && io_guard_prev.sa_handler != SIG_DFL) {
        io_guard_prev.sa_handler(sig);
    } else {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

bool io_guard_install(void)
{
    if (atomic_load(&io_guard_on))
        return true;
    long pg = sysconf(_SC_PAGESIZE);
    io_page = pg > 0 ? (uintptr_t)pg : 4096;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = io_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &io_guard_prev) != 0)
        return false;
    atomic_store(&io_guard_on, true);
    return true;
}

int io_guard_add(const void *p, size_t len)
{
    if (!atomic_load(&io_guard_on) || !p || !len)
        return -1;
    for (int i = 0; i < IO_GUARD_SLOTS; i++) {
        uintptr_t zero = 0;
        if (atomic_compare_exchange_strong(&io_guard[i].lo, &zero, (uintptr_t)p)) {
            atomic_store(&io_guard[i].hit, 0);
            atomic_store(&io_guard[i].hi, (uintptr_t)p + len);
            return i;
        }
    }
    return -1; /* all taken: this mapping goes unguarded */
}

bool io_guard_hit(int slot)
{
    return slot >= 0 && atomic_load(&io_guard[slot].hit) != 0;
}

void io_guard_remove(int slot)
{
    if (slot < 0)
        return;
    atomic_store(&io_guard[slot].hi, 0);
    atomic_store(&io_guard[slot].lo, 0);
}

void io_close(io_file *f)
{
    io_guard_remove(f->guard);
    f->guard = -1;
    if (f->mapped && f->len)
        munmap((void *)f->map, f->len);
    f->mapped = false;
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    f->map = NULL;
    f->len = 0;
}

cuzk_err io_finish(io_file *f)
{
    struct stat now;
    cuzk_err e = CUZK_OK;
    if (io_guard_hit(f->guard))
        e = cuzk_error_set(CUZK_EIO, "%s: the file was truncated while it was read", f->path);
    else if (f->fd >= 0 && fstat(f->fd, &now) == 0 &&
             (now.st_size != f->st.st_size || now.st_mtim.tv_sec != f->st.st_mtim.tv_sec ||
              now.st_mtim.tv_nsec != f->st.st_mtim.tv_nsec))
        e = cuzk_error_set(CUZK_EIO, "%s: the file changed while it was read (size %lld, then "
                                     "%lld bytes)",
                           f->path, (long long)f->st.st_size, (long long)now.st_size);
    io_close(f);
    return e;
}

const char *io_not_regular_mode(unsigned m)
{
    mode_t mode = (mode_t)m;
    return S_ISREG(mode)    ? NULL
           : S_ISDIR(mode)  ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
                            : "a device";
}

const char *io_not_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) != 0 ? NULL : io_not_regular_mode((unsigned)st.st_mode);
}

cuzk_err io_open_regular(int *fd, const char *path, struct stat *st)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (*fd < 0) {
        int e = errno;
        return cuzk_error_set(e == ENOENT ? CUZK_ENOTFOUND : CUZK_EIO, "%s: cannot open: %s",
                              path, strerror(e));
    }
    const char *what = NULL;
    int e = fstat(*fd, st) != 0 ? errno : 0;
    if (!e)
        what = io_not_regular_mode((unsigned)st->st_mode);
    if (!e && !what)
        return CUZK_OK;
    close(*fd);
    *fd = -1;
    if (e)
        return cuzk_error_set(CUZK_EIO, "%s: cannot stat: %s", path, strerror(e));
    return cuzk_error_set(CUZK_EIO, "%s: not a regular file (%s)", path, what);
}

cuzk_err io_fopen_regular(FILE **out, const char *path)
{
    struct stat st;
    int fd;
    *out = NULL;
    cuzk_err r = io_open_regular(&fd, path, &st);
    if (r != CUZK_OK)
        return r;
    *out = fdopen(fd, "rb");
    if (!*out) {
        int e = errno;
        close(fd);
        return cuzk_error_set(CUZK_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    return CUZK_OK;
}

static cuzk_err io_index(io_file *f, const char magic[4], uint32_t version);

static void io_init(io_file *f, const char *path, const char *const *names, size_t n_names)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    f->names = names;
    f->n_names = n_names;
    f->fd = -1;
    f->guard = -1;
}

static cuzk_err io_short(const char *path, uint64_t len)
{
    return cuzk_error_set(CUZK_ESIZE, "%s: file is %llu bytes, shorter than the %d-byte header",
                          path, (unsigned long long)len, IO_HEADER_BYTES);
}

cuzk_err io_open_mem(io_file *f, const char *name, const void *data, size_t len,
                     const char magic[4], uint32_t version, const char *const *names,
                     size_t n_names)
{
    io_init(f, name, names, n_names);
    if (!data || len < IO_HEADER_BYTES)
        return io_short(name, data ? len : 0);
    f->map = data;
    f->len = len;
    cuzk_err e = io_index(f, magic, version);
    if (e != CUZK_OK)
        io_close(f);
    return e;
}

cuzk_err io_open(io_file *f, const char *path, const char magic[4], uint32_t version,
                 const char *const *names, size_t n_names)
{
    io_init(f, path, names, n_names);
    struct stat st;
    cuzk_err e = io_open_regular(&f->fd, path, &st);
    if (e != CUZK_OK)
        return e;
    f->st = st;
    if ((uint64_t)st.st_size < IO_HEADER_BYTES) {
        io_close(f);
        return io_short(path, (uint64_t)st.st_size);
    }
    f->len = (size_t)st.st_size;
    void *m = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, f->fd, 0);
    if (m == MAP_FAILED) {
        int er = errno;
        f->len = 0;
        io_close(f);
        return cuzk_error_set(CUZK_EIO, "%s: cannot map: %s", path, strerror(er));
    }
    f->map = m;
    f->mapped = true;
    f->guard = io_guard_add(m, f->len);
    if (io_test_after_map)
        io_test_after_map(path);

    e = io_index(f, magic, version);
    if (e != CUZK_OK) {
        /* the file cut short under us reads as zeros: that, not the garbage, is the error */
        if (io_guard_hit(f->guard))
            e = cuzk_error_set(CUZK_EIO, "%s: the file was truncated while it was read", path);
        io_close(f);
    }
    return e;
}

/* The magic, the version and the section table of the mapped file f. */
static cuzk_err io_index(io_file *f, const char magic[4], uint32_t version)
{
    const char *path = f->path;
    const uint8_t *b = f->map;
    /* Messages never quote the file's bytes: a client may name a file it cannot read. */
    if (memcmp(b, magic, 4) != 0)
        return cuzk_error_set(CUZK_EFORMAT, "%s: not a .%.4s file (bad magic)", path, magic);
    f->version = io_rd32(b + 4);
    if (f->version != version) {
        uint32_t v = f->version;
        return cuzk_error_set(CUZK_EFORMAT, "%s: .%.4s version %u is not supported (only %u)",
                              path, magic, v, version);
    }
    uint32_t nsec = io_rd32(b + 8);
    uint64_t pos = IO_HEADER_BYTES;
    for (uint32_t i = 0; i < nsec; i++) {
        if (f->len - pos < IO_SECTION_HEADER_BYTES) {
            return cuzk_error_set(CUZK_ESIZE,
                                  "%s: truncated: header of section %u of %u at offset %llu "
                                  "passes the end of the file (%zu bytes)",
                                  path, i + 1, nsec, (unsigned long long)pos, f->len);
        }
        uint32_t id = io_rd32(b + pos);
        uint64_t size;
        memcpy(&size, b + pos + 4, 8);
        pos += IO_SECTION_HEADER_BYTES;
        if (size > f->len - pos) {
            return cuzk_error_set(CUZK_ESIZE,
                                  "%s: section %u (%s): size %llu at offset %llu passes the end "
                                  "of the file (%zu bytes): truncated",
                                  path, id, io_secname(f, id), (unsigned long long)size,
                                  (unsigned long long)pos, f->len);
        }
        if (id >= IO_MAX_SECTION && !f->unknown_id)
            f->unknown_id = id;
        if (id < IO_MAX_SECTION) {
            if (f->sec[id].present)
                return cuzk_error_set(CUZK_EFORMAT, "%s: section %u (%s): duplicated", path, id,
                                      io_secname(f, id));
            f->sec[id].present = true;
            f->sec[id].p = b + pos;
            f->sec[id].size = size;
        }
        pos += size;
    }
    f->end = pos;
    return CUZK_OK;
}

cuzk_err io_expect_only(const io_file *f, uint32_t known, const char *what)
{
    uint32_t bad = f->unknown_id;
    for (uint32_t id = 0; !bad && id < IO_MAX_SECTION; id++)
        if (f->sec[id].present && !(known >> id & 1))
            bad = id ? id : UINT32_MAX;
    if (bad)
        return cuzk_error_set(CUZK_EFORMAT, "%s: section %u: not a section of a %s file",
                              f->path, bad == UINT32_MAX ? 0 : bad, what);
    if (f->end != f->len)
        return cuzk_error_set(CUZK_EFORMAT, "%s: %llu bytes after the last section (the "
                              "sections end at byte %llu of %zu)",
                              f->path, (unsigned long long)(f->len - f->end),
                              (unsigned long long)f->end, f->len);
    return CUZK_OK;
}

cuzk_err io_section_get(const io_file *f, uint32_t id, const io_section **s)
{
    if (id >= IO_MAX_SECTION || !f->sec[id].present)
        return cuzk_error_set(CUZK_EFORMAT, "%s: section %u (%s): missing", f->path, id,
                              io_secname(f, id));
    *s = &f->sec[id];
    return CUZK_OK;
}

/* ---- primes ---- */

/* Fields circom and snarkjs know besides BLS12-381, as decimal strings (circom's --prime
 * list). The tests load bn128 and bls12377 files to check the names come out right. */
static const struct { const char *name, *dec; } known_primes[] = {
    {"bn128 (BN254) scalar field r",
     "21888242871839275222246405745257275088548364400416034343698204186575808495617"},
    {"bn128 (BN254) base field q",
     "21888242871839275222246405745257275088696311157297823662689037894645226208583"},
    {"bls12377 scalar field r",
     "8444461749428370424248824938781546531375899335154063827935233455917409239041"},
    {"goldilocks (2^64 - 2^32 + 1)", "18446744069414584321"},
};

/* Decimal string -> little-endian bytes (n bytes). false if it does not fit. */
static bool dec_to_le(uint8_t *out, size_t n, const char *s)
{
    memset(out, 0, n);
    for (; *s; s++) {
        unsigned carry = (unsigned)(*s - '0');
        for (size_t i = 0; i < n; i++) {
            unsigned v = out[i] * 10u + carry;
            out[i] = (uint8_t)v;
            carry = v >> 8;
        }
        if (carry)
            return false;
    }
    return true;
}

cuzk_err io_check_prime(const char *where, const char *what, uint32_t n8, const uint8_t *prime,
                        bool want_fp)
{
    uint8_t want[CUZK_FP_BYTES];
    size_t wn = want_fp ? CUZK_FP_BYTES : CUZK_FR_BYTES;
    if (want_fp) {
        uint64_t l[CUZK_FP_LIMBS];
        memcpy(l, CUZK_FP_MODULUS.l, sizeof l);
        memcpy(want, l, CUZK_FP_BYTES);
    } else {
        uint64_t l[CUZK_FR_LIMBS];
        memcpy(l, CUZK_FR_MODULUS.l, sizeof l);
        memcpy(want, l, CUZK_FR_BYTES);
    }
    if (n8 == wn && memcmp(prime, want, wn) == 0)
        return CUZK_OK;
    const char *want_name = want_fp ? "BLS12-381 base field p" : "BLS12-381 scalar field r";
    for (size_t k = 0; k < sizeof known_primes / sizeof known_primes[0]; k++) {
        uint8_t kb[64];
        if (n8 > sizeof kb || !dec_to_le(kb, n8, known_primes[k].dec))
            continue;
        if (memcmp(kb, prime, n8) == 0)
            return cuzk_error_set(CUZK_ECURVE, "%s: %s is the %s, not the %s: only BLS12-381 is supported",
                                  where, what, known_primes[k].name, want_name);
    }
    /* Unknown: its size only, not its bytes (the file may be one its reader cannot see). */
    return cuzk_error_set(CUZK_ECURVE, "%s: %s is an unknown prime of %u bytes, not the %s: only "
                          "BLS12-381 is supported", where, what, n8, want_name);
}

/* ---- parallel validation ---- */

typedef struct {
    io_item_fn ok;
    void *ctx;
    size_t first;   /* smallest failing index seen, updated atomically */
} par_ctx;

static void par_range(void *vctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    par_ctx *c = vctx;
    for (size_t i = begin; i < end; i++) {
        if (__atomic_load_n(&c->first, __ATOMIC_RELAXED) <= i)
            return;
        if (!c->ok(c->ctx, i)) {
            size_t cur = __atomic_load_n(&c->first, __ATOMIC_RELAXED);
            while (i < cur && !__atomic_compare_exchange_n(&c->first, &cur, i, false,
                                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
            return;
        }
    }
}

size_t io_par_first_fail(size_t n, size_t grain, io_item_fn ok, void *ctx)
{
    par_ctx c = {ok, ctx, n};
    cuzk_parallel_for(n, grain, 0, par_range, &c);
    return c.first;
}

cuzk_err io_field_header(const io_file *f, const io_section **s, io_cur *c)
{
    cuzk_err e = io_section_get(f, 1, s);
    if (e)
        return e;
    *c = (io_cur){(*s)->p, (*s)->size};
    uint32_t n8;
    if (!io_u32(c, &n8) || c->left < n8)
        return cuzk_error_set(CUZK_ESIZE, "%s: section 1 (header): %llu bytes, too short",
                              f->path, (unsigned long long)(*s)->size);
    char where[512];
    snprintf(where, sizeof where, "%s: section 1 (header)", f->path);
    e = io_check_prime(where, "the prime", n8, c->p, false);
    if (e)
        return e;
    c->p += n8;
    c->left -= n8;
    return CUZK_OK;
}
