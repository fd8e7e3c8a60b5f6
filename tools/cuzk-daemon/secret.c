/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's tokens (secret.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "secret.h"

/* The first line of the open file fd (the text before '\r' or '\n') into out. */
static bool first_line(int fd, const char *what, char *out, size_t n, char *why, size_t wlen)
{
    char buf[DAEMON_TOKEN_MAX + 2];
    size_t got = 0;
    while (got < sizeof buf - 1) {
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(why, wlen, "%s: cannot read: %s", what, strerror(errno));
            return false;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    buf[got] = 0;
    size_t len = strcspn(buf, "\r\n");
    buf[len] = 0;
    if (len == 0) {
        snprintf(why, wlen, "%s: the token (its first line) is empty", what);
        return false;
    }
    if (len >= n || len >= DAEMON_TOKEN_MAX) {
        explicit_bzero(buf, sizeof buf);
        snprintf(why, wlen, "%s: the token is longer than %d bytes", what, DAEMON_TOKEN_MAX - 1);
        return false;
    }
    memcpy(out, buf, len + 1);
    explicit_bzero(buf, sizeof buf);
    return true;
}

bool daemon_secret_read_file(const char *path, char *out, size_t n, char *why, size_t wlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, wlen, "%s: %s", path, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, wlen, "%s: not a regular file", path);
        close(fd);
        return false;
    }
    bool ok = first_line(fd, path, out, n, why, wlen);
    close(fd);
    return ok;
}

bool daemon_secret_get(const char *dir, const char *name, char *out, size_t n, bool *made,
                       char *why, size_t wlen)
{
    *made = false;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        snprintf(why, wlen, "%s: %s", dir, strerror(errno));
        return false;
    }
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
        struct stat st;
        bool ok = false;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
            snprintf(why, wlen, "%s: not a regular file", path);
        else if (st.st_uid != geteuid() || (st.st_mode & 077))
            snprintf(why, wlen,
                     "%s: must be owned by this user and not readable or writable by group or "
                     "others (mode %04o): chmod 600 it, or remove it for a fresh token",
                     path, (unsigned)(st.st_mode & 07777));
        else
            ok = first_line(fd, path, out, n, why, wlen);
        close(fd);
        close(dfd);
        return ok;
    }
    if (errno != ENOENT) {
        snprintf(why, wlen, "%s: %s", path,
                 errno == ELOOP ? "a symbolic link (refused)" : strerror(errno));
        close(dfd);
        return false;
    }
    unsigned char raw[32];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(why, wlen, "%s: getrandom: %s", path, strerror(errno));
            close(dfd);
            return false;
        }
        got += (size_t)r;
    }
    char text[2 * sizeof raw + 2];
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(text + 2 * i, 3, "%02x", raw[i]);
    explicit_bzero(raw, sizeof raw);
    text[2 * sizeof raw] = '\n';
    text[2 * sizeof raw + 1] = 0;
    fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0;
    if (ok) {
        size_t len = 2 * sizeof raw + 1;
        ok = write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
        ok = close(fd) == 0 && ok;
        ok = ok && fsync(dfd) == 0;
        if (!ok)
            unlinkat(dfd, name, 0);
    }
    if (!ok)
        snprintf(why, wlen, "%s: cannot create: %s", path, strerror(errno));
    else if (n <= 2 * sizeof raw)
        ok = false, snprintf(why, wlen, "%s: no room for the token", path);
    if (ok) {
        memcpy(out, text, 2 * sizeof raw);
        out[2 * sizeof raw] = 0;
        *made = true;
    }
    explicit_bzero(text, sizeof text);
    close(dfd);
    return ok;
}
