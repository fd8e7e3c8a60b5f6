/* SPDX-License-Identifier: Apache-2.0 */
/* The programs' output files: temporary name beside the target, fsync, rename (outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

/* The directory part of path ("." when it has none), malloc'd; *base: its last component. */
static char *path_dir(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!slash)
        return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = 0;
    }
    return d;
}

typedef struct {
    bool exists, dir_known;
    dev_t dev, ddev;
    ino_t ino, dino;
    const char *base;
} file_id;

static void file_id_of(file_id *f, const char *path)
{
    struct stat st;
    memset(f, 0, sizeof *f);
    if (stat(path, &st) == 0) {
        f->exists = true;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
    }
    char *dir = path_dir(path, &f->base);
    if (dir && stat(dir, &st) == 0) {
        f->dir_known = true;
        f->ddev = st.st_dev;
        f->dino = st.st_ino;
    }
    free(dir);
}

static bool same_inode(const file_id *a, const file_id *b)
{
    return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
}

static bool same_entry(const file_id *a, const file_id *b)
{
    return a->dir_known && b->dir_known && a->ddev == b->ddev && a->dino == b->dino &&
           !strcmp(a->base, b->base);
}

/* 0 when path can be written: a file name whose directory exists and is writable, not an
 * existing directory; else prints why and returns 2. */
static int out_place_check(const char *prog, const char *path)
{
    const char *base;
    char *dir = path_dir(path, &base);
    struct stat st;
    int rc = 0;
    if (!dir) {
        fprintf(stderr, "%s: out of memory\n", prog);
        rc = 2;
    } else if (!*base) {
        fprintf(stderr, "%s: output %s: not a file name\n", prog, path);
        rc = 2;
    } else if (stat(dir, &st) != 0) {
        fprintf(stderr, "%s: output %s: its directory %s: %s\n", prog, path, dir, strerror(errno));
        rc = 2;
    } else if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: output %s: %s is not a directory\n", prog, path, dir);
        rc = 2;
    } else if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "%s: output %s: its directory %s is not writable: %s\n", prog, path, dir,
                strerror(errno));
        rc = 2;
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: output %s: is a directory\n", prog, path);
        rc = 2;
    }
    free(dir);
    return rc;
}

int tool_out_check(const char *prog, const char *const *in, size_t n_in, const char *const *out,
                   size_t n_out)
{
    for (size_t i = 0; i < n_out; i++) {
        if (!out[i])
            continue;
        file_id o;
        file_id_of(&o, out[i]);
        if (out_place_check(prog, out[i]))
            return 2;
        for (size_t j = 0; j < n_in; j++) {
            if (!in[j])
                continue;
            file_id f;
            file_id_of(&f, in[j]);
            if (same_inode(&o, &f)) {
                fprintf(stderr, "%s: output %s is the input %s (the same file): refused, it "
                                "would be overwritten\n", prog, out[i], in[j]);
                return 2;
            }
        }
        for (size_t j = 0; j < i; j++) {
            if (!out[j])
                continue;
            file_id f;
            file_id_of(&f, out[j]);
            if (same_inode(&o, &f) || same_entry(&o, &f)) {
                fprintf(stderr, "%s: outputs %s and %s are the same file: refused\n", prog,
                        out[j], out[i]);
                return 2;
            }
        }
    }
    return 0;
}

cuzk_err tool_out_open(tool_out *o, const char *path)
{
    o->path = path;
    o->tmp = NULL;
    const char *base;
    char *dir = path_dir(path, &base);
    size_t len = (dir ? strlen(dir) : 0) + strlen(base) + 32;
    char *tmp = dir ? malloc(len) : NULL;
    if (!tmp) {
        free(dir);
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    }
    if (!*base) {
        free(dir);
        free(tmp);
        return cuzk_error_set(CUZK_EINVAL, "%s: not a file name", path);
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        free(dir);
        free(tmp);
        return cuzk_error_set(CUZK_EIO, "%s: is a directory", path);
    }
    int fd = -1, err = EEXIST;
    for (int tries = 0; fd < 0 && err == EEXIST && tries < 100; tries++) {
        uint8_t rnd[6];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
            err = errno ? errno : EIO;
            break;
        }
        snprintf(tmp, len, "%s/.%s.%02x%02x%02x%02x%02x%02x.tmp", dir, base, rnd[0], rnd[1],
                 rnd[2], rnd[3], rnd[4], rnd[5]);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        err = fd < 0 ? errno : 0;
    }
    free(dir);
    if (fd < 0) {
        free(tmp);
        return cuzk_error_set(CUZK_EIO, "%s: cannot create a temporary file beside it: %s", path,
                              strerror(err));
    }
    close(fd);
    o->tmp = tmp;
    return CUZK_OK;
}

cuzk_err tool_out_open_all(tool_out *o, const char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cuzk_err e = tool_out_open(&o[i], paths[i]);
        if (e != CUZK_OK) {
            tool_out_discard(o, i);
            return e;
        }
    }
    return CUZK_OK;
}

cuzk_err tool_out_status(const tool_out *o, cuzk_err e)
{
    if (e == CUZK_OK || !o->tmp)
        return e;
    char d[512];
    snprintf(d, sizeof d, "%s", cuzk_error_detail());
    const char *at = strstr(d, o->tmp);
    if (!at)
        return e;
    return cuzk_error_set(e, "%.*s%s%s", (int)(at - d), d, o->path, at + strlen(o->tmp));
}

void tool_out_discard(tool_out *o, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (o[i].tmp)
            (void)unlink(o[i].tmp);
        free(o[i].tmp);
        o[i].tmp = NULL;
    }
}

/* fsync of a file or directory by name; 0 or an errno value. */
static int sync_path(const char *path, int flags)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0)
        return errno;
    int err = fsync(fd) != 0 && errno != EINVAL ? errno : 0; /* EINVAL: cannot be synced */
    close(fd);
    return err;
}

cuzk_err tool_out_commit(tool_out *o, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int err = o[i].tmp ? sync_path(o[i].tmp, O_NOFOLLOW) : EINVAL;
        if (err) {
            cuzk_err e = cuzk_error_set(CUZK_EIO, "%s: cannot flush the written file: %s",
                                        o[i].path, strerror(err));
            tool_out_discard(o, n);
            return e;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (rename(o[i].tmp, o[i].path) != 0) {
            cuzk_err e = cuzk_error_set(CUZK_EIO, "%s: cannot rename the written file onto it: "
                                        "%s", o[i].path, strerror(errno));
            for (size_t j = 0; j < i; j++) /* the set is whole or absent */
                (void)unlink(o[j].path);
            tool_out_discard(o, n);
            return e;
        }
        free(o[i].tmp);
        o[i].tmp = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *base;
        char *dir = path_dir(o[i].path, &base);
        if (dir)
            (void)sync_path(dir, O_DIRECTORY);
        free(dir);
    }
    return CUZK_OK;
}
