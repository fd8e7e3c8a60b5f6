/* SPDX-License-Identifier: Apache-2.0 */
/* Witness files a client names: opened once at submission, beneath one of the allowed
 * directories' descriptors without following any symbolic link (openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, else a walk of O_NOFOLLOW opens one component at a
 * time), checked to be a regular file and against the key, and kept open for the loader, so
 * that a file swapped for a link after submission is never read. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

#include "engine/engine_internal.h"

#ifndef RESOLVE_BENEATH
struct open_how {
    uint64_t flags, mode, resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)

cuzk_err witness_dirs_open(cuzk_engine *e)
{
    e->n_allow = 0;
    for (unsigned i = 0; i < e->cfg.n_allow_dirs; i++) {
        if (e->n_allow >= ENGINE_MAX_ALLOW)
            return cuzk_error_set(CUZK_EINVAL, "engine: more than %d allowed directories",
                                  ENGINE_MAX_ALLOW);
        const char *d = e->cfg.allow_dirs[i];
        struct engine_allow *a = &e->allow[e->n_allow];
        a->fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (a->fd < 0)
            return cuzk_error_set(CUZK_EIO, "allowed directory %s: %s", d, strerror(errno));
        a->given = strdup(d);
        a->real = realpath(d, NULL);
        e->n_allow++;
        if (!a->given || !a->real)
            return cuzk_error_set(CUZK_ENOMEM, "allowed directory %s: %s", d,
                                  a->given ? strerror(errno) : "out of memory");
    }
    e->cfg.allow_dirs = NULL;   /* the caller's array is not kept */
    return CUZK_OK;
}

void witness_dirs_close(cuzk_engine *e)
{
    for (unsigned i = 0; i < e->n_allow; i++) {
        close(e->allow[i].fd);
        free(e->allow[i].given);
        free(e->allow[i].real);
    }
    e->n_allow = 0;
}

/* path relative to dir when path lies (by its name) under dir, else NULL. */
static const char *under(const char *dir, const char *path)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 1 && dir[0] == '/')
        return path[0] == '/' ? path + 1 : NULL;
    if (strncmp(path, dir, n) != 0 || path[n] != '/')
        return NULL;
    return path + n + 1;
}

/* The component walk: every directory opened O_NOFOLLOW beneath the last, ".." refused. */
static int walk_open(int dfd, const char *rel)
{
    char buf[PATH_MAX];
    if (strlen(rel) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, rel);
    int cur = dup(dfd);
    char *save = NULL;
    char *c = strtok_r(buf, "/", &save);
    while (cur >= 0 && c) {
        char *next = strtok_r(NULL, "/", &save);
        if (!strcmp(c, "..")) {
            close(cur);
            errno = EXDEV;
            return -1;
        }
        if (!strcmp(c, ".")) {
            c = next;
            continue;
        }
        int fd = next ? openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                      : openat(cur, c, OPEN_FLAGS);
        int err = errno;
        close(cur);
        cur = fd;
        errno = err;
        c = next;
    }
    return cur;
}

/* openat2 is tried first (cleared when the kernel lacks it; tests clear it to run the walk) */
atomic_bool witness_use_openat2 = true;

/* Opens rel beneath dfd without following a link; -1 and errno when refused. */
static int beneath_open(int dfd, const char *rel)
{
    if (witness_use_openat2) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = OPEN_FLAGS;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, dfd, rel, &how, sizeof how);
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
            return (int)fd;
        witness_use_openat2 = false;   /* an older kernel, or a filter refusing the call */
    }
    return walk_open(dfd, rel);
}

cuzk_err witness_open(const cuzk_engine *e, const char *path, int *out)
{
    *out = -1;
    int fd = -1;
    if (e->n_allow == 0) {
        if (!e->cfg.witness_any_path)
            return cuzk_error_set(CUZK_EUNSUPPORTED,
                                  "path witnesses are off: the operator lists directories "
                                  "with allow_dir");
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            return cuzk_error_set(errno == EMFILE || errno == ENFILE ? CUZK_EBUSY : CUZK_EIO,
                                  "%.300s: %s", path, strerror(errno));
    } else {
        const char *rel = NULL;
        unsigned i;
        for (i = 0; i < e->n_allow && !rel; i++)
            if (!(rel = under(e->allow[i].given, path)))
                rel = under(e->allow[i].real, path);
        if (!rel || !rel[0])
            return cuzk_error_set(CUZK_EUNSUPPORTED,
                                  "%.300s is outside the allowed directories (allow_dir)", path);
        fd = beneath_open(e->allow[i - 1].fd, rel);
        if (fd < 0) {
            int err = errno;
            if (err == ELOOP || err == EXDEV || err == ENOTDIR)
                return cuzk_error_set(CUZK_EUNSUPPORTED,
                                      "%.300s: a symbolic link or \"..\" on the way, or outside "
                                      "the allowed directories (allow_dir)",
                                      path);
            if (err == EMFILE || err == ENFILE)   /* the jobs hold their files: come back later */
                return cuzk_error_set(CUZK_EBUSY, "%.300s: %s", path, strerror(err));
            return cuzk_error_set(CUZK_EIO, "%.300s: %s", path, strerror(err));
        }
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const char *what = S_ISFIFO(st.st_mode)  ? "a FIFO"
                           : S_ISDIR(st.st_mode) ? "a directory"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                  : "a device";
        close(fd);
        return cuzk_error_set(CUZK_EFORMAT, "%.300s: not a regular file (%s)", path, what);
    }
    *out = fd;
    return CUZK_OK;
}

/* Loads the witness file open at fd (named name in errors) into buf: through
 * /proc/self/fd (the same file, no path resolved again; the reader's guard against a
 * truncation applies), else read into memory. check: cuzk_wtns_check's checks alone (where
 * /proc is not there, a whole load). */
static cuzk_err load_fd(cuzk_wtns **w, int fd, const char *name, cuzk_fr *buf, size_t cap,
                        bool check)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (access(proc, F_OK) == 0) {
        cuzk_err r = check ? cuzk_wtns_check(w, proc) : cuzk_wtns_load_into(w, proc, buf, cap);
        if (r != CUZK_OK) {   /* the detail names the witness, not the descriptor */
            char d[600];
            const char *det = cuzk_error_detail();
            size_t pl = strlen(proc);
            snprintf(d, sizeof d, "%s%s", name, strncmp(det, proc, pl) ? "" : det + pl);
            if (strncmp(det, proc, pl))
                snprintf(d, sizeof d, "%s: %s", name, det);
            cuzk_error_set(r, "%s", d);
        }
        return r;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return cuzk_error_set(CUZK_EIO, "%s: not a regular file", name);
    size_t len = (size_t)st.st_size;
    unsigned char *b = malloc(len ? len : 1);
    if (!b)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", name);
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, b + got, len - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    cuzk_err r = got == len ? cuzk_wtns_load_mem_into(w, name, b, len, buf, cap)
                            : cuzk_error_set(CUZK_EIO, "%s: short read", name);
    free(b);
    return r;
}

cuzk_err witness_load_fd(cuzk_wtns **w, int fd, const char *name, cuzk_fr *buf, size_t cap)
{
    return load_fd(w, fd, name, buf, cap, false);
}

cuzk_err witness_check_fd(cuzk_wtns **w, int fd, const char *name)
{
    return load_fd(w, fd, name, NULL, 0, true);
}
