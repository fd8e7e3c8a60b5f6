/* SPDX-License-Identifier: Apache-2.0 */
/* iden3 binary container (.r1cs, .wtns, .zkey): memory-mapped, sections indexed by id. */
#ifndef CUZK_IO_BINFILE_H
#define CUZK_IO_BINFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>

#include "cuzk/error.h"
#include "cuzk/ff.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the iden3 readers assume a little-endian host"
#endif

#define IO_MAX_SECTION 16   /* ids 1..15 are indexed; others are skipped */

typedef struct {
    const uint8_t *p;   /* payload inside the mapping */
    uint64_t size;
    bool present;
} io_section;

typedef struct {
    const char *path;
    const char *const *names;   /* names[id] for messages (NULL entries allowed) */
    size_t n_names;
    const uint8_t *map;         /* the file's mapping, or the caller's image (io_open_mem) */
    size_t len;
    bool mapped;                /* map is a mapping of the file, unmapped by io_close */
    uint32_t version;
    io_section sec[IO_MAX_SECTION];
    int fd;                     /* kept open to tell at the end whether the file changed */
    struct stat st;             /* as opened */
    int guard;                  /* the mapping's slot in the truncation guard, or -1 */
    uint32_t unknown_id;        /* the first section id >= IO_MAX_SECTION, or 0 */
    uint64_t end;               /* where the last section ends */
} io_file;

/* What a file of mode m is when it is not a regular file ("a directory", "a FIFO", "a
 * socket", "a device"), else NULL. */
const char *io_not_regular_mode(unsigned m);
/* The same for the file at path (followed through links); NULL too when it cannot be
 * stat'ed, which the open that follows then reports. Checked before opening where an open
 * could block (a FIFO without a writer) or mislead; the loaders also open non-blocking and
 * check the opened file, so a path swapped in between cannot hang them. */
const char *io_not_regular(const char *path);
/* open(path) for reading a regular file, non-blocking (a FIFO without a writer would make
 * a plain open wait for ever, and is refused here): *fd the descriptor, with *st filled;
 * else *fd = -1 and CUZK_ENOTFOUND (no such file) or CUZK_EIO (anything else: not a
 * regular file, no permission), naming the file and what is wrong. */
cuzk_err io_open_regular(int *fd, const char *path, struct stat *st) CUZK_WUR;
/* fopen(path, "rb") for a regular file only, opened non-blocking so that a FIFO is refused
 * instead of waiting for a writer; io_open_regular's errors otherwise (*out NULL). */
cuzk_err io_fopen_regular(FILE **out, const char *path) CUZK_WUR;

/* Maps `path`, checks the magic and the version (must equal `version`) and indexes the
 * sections. names[id] name the sections in messages. On failure nothing stays mapped. */
cuzk_err io_open(io_file *f, const char *path, const char magic[4], uint32_t version,
                 const char *const *names, size_t n_names) CUZK_WUR;
/* The same checks over an image of the file in memory (len bytes at data, kept by the
 * caller until io_close); name stands for the path in messages. */
cuzk_err io_open_mem(io_file *f, const char *name, const void *data, size_t len,
                     const char magic[4], uint32_t version, const char *const *names,
                     size_t n_names) CUZK_WUR;
void io_close(io_file *f);
/* io_close after a load: CUZK_EIO naming the file when it was truncated or replaced while
 * it was read (what was read from it is then not the file), else CUZK_OK (always for an
 * image in memory). */
cuzk_err io_finish(io_file *f) CUZK_WUR;

/* The truncation guard: a file truncated by another process while it is mapped makes every
 * read past its new end raise SIGBUS, which would kill a daemon serving many jobs. Once
 * installed, a SIGBUS inside a guarded mapping (io_open's, params_map's) puts a page of
 * zeros there instead and marks the mapping, whose io_finish then reports it; any other
 * SIGBUS goes to the handler there was before (by default: the process ends). Returns false
 * when sigaction fails. For long-running programs (cuzk-daemon); tests. */
bool io_guard_install(void);
/* Slot handling for other mappings (params_map): io_guard_add returns the slot (or -1 when
 * the guard is off or full), io_guard_hit whether a read faulted, io_guard_remove frees it. */
int io_guard_add(const void *p, size_t len);
bool io_guard_hit(int slot);
void io_guard_remove(int slot);
/* Called by io_open once the file is mapped, when set (tests: truncate the file there). */
extern void (*io_test_after_map)(const char *path);
const char *io_secname(const io_file *f, uint32_t id);
/* For formats whose every section is known: CUZK_EFORMAT naming the file and the problem
 * when f holds a section whose id is not in the bit set known (bit id), or bytes after its
 * last section; what names the format in the message (".wtns"). Duplicates are refused by
 * io_open already. */
cuzk_err io_expect_only(const io_file *f, uint32_t known, const char *what) CUZK_WUR;
/* The section, or CUZK_EFORMAT "missing". */
cuzk_err io_section_get(const io_file *f, uint32_t id, const io_section **s) CUZK_WUR;

/* A bounds-checked reader over a section. */
typedef struct {
    const uint8_t *p;
    uint64_t left;
} io_cur;

static inline bool io_take(io_cur *c, void *out, size_t n)
{
    if (c->left < n)
        return false;
    memcpy(out, c->p, n);
    c->p += n;
    c->left -= n;
    return true;
}
static inline bool io_u32(io_cur *c, uint32_t *v) { return io_take(c, v, 4); }
static inline bool io_u64(io_cur *c, uint64_t *v) { return io_take(c, v, 8); }
static inline uint32_t io_rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Checks a prime field header: n8 bytes of prime must be BLS12-381's r (want_fp false) or
 * p (want_fp true). On mismatch CUZK_ECURVE with a message naming the field that was found
 * (bn128, bls12377, ... or the prime in hex), prefixed with `where`. */
cuzk_err io_check_prime(const char *where, const char *what, uint32_t n8, const uint8_t *prime,
                        bool want_fp) CUZK_WUR;

/* Section 1 of a .r1cs or .wtns starts with u32 n8 and the n8-byte prime of the field,
 * which must be BLS12-381's r. Sets *s to the section and *c to a cursor just past the
 * prime; errors name the file and the section. */
cuzk_err io_field_header(const io_file *f, const io_section **s, io_cur *c) CUZK_WUR;

/* Parallel first-failure search: runs ok(ctx, i) for i in [0, n) on all threads and returns
 * the smallest i where it returned false, or n when none did. */
typedef bool (*io_item_fn)(void *ctx, size_t i);
size_t io_par_first_fail(size_t n, size_t grain, io_item_fn ok, void *ctx);

#endif
