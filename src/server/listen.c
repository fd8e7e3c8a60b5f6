/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's listening sockets: TCP (v4, v6) and Unix (created 0600, with a lock file). */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/server_internal.h"

/* PATH.lock, locked (flock) for the daemon's life: a second daemon on the same socket is
 * refused, instead of removing the first one's socket as stale and orphaning it. The lock is
 * taken on the file that is at the path once locked (a daemon that stops unlinks it while
 * holding it: one that opened the old file then locks a file no longer there, and retries). */
static cuzk_err lock_take(server *s, unsigned i, const char *path)
{
    char lp[sizeof s->lock_path[i]];
    if ((size_t)snprintf(lp, sizeof lp, "%s.lock", path) >= sizeof lp)
        return cuzk_error_set(CUZK_EINVAL, "unix:%s: path too long", path);
    for (int tries = 0; tries < 100; tries++) {
        int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            return cuzk_error_set(CUZK_EIO, "unix:%s: lock file %s: %s", path, lp, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int er = errno;
            close(fd);
            if (er == EWOULDBLOCK)
                return cuzk_error_set(CUZK_EBUSY, "unix:%s: another cuzk-daemon serves this socket "
                                      "(its lock file %s is held)", path, lp);
            return cuzk_error_set(CUZK_EIO, "unix:%s: lock file %s: %s", path, lp, strerror(er));
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && lstat(lp, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            s->lock_fd[i] = fd;
            snprintf(s->lock_path[i], sizeof s->lock_path[i], "%s", lp);
            return CUZK_OK;
        }
        close(fd);   /* unlinked or replaced meanwhile */
    }
    return cuzk_error_set(CUZK_EIO, "unix:%s: lock file %s keeps being replaced", path, lp);
}

void listen_unlock(server *s, unsigned i)
{
    if (s->lock_fd[i] < 0)
        return;
    unlink(s->lock_path[i]);   /* while still held: see lock_take */
    close(s->lock_fd[i]);
    s->lock_fd[i] = -1;
    s->lock_path[i][0] = 0;
}

cuzk_err listen_unix(server *s, unsigned i, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return cuzk_error_set(CUZK_EINVAL, "unix:%s: path too long", path);
    strcpy(sa.sun_path, path);
    cuzk_err r = lock_take(s, i, path);   /* before a socket there is taken for stale */
    if (r != CUZK_OK)
        return r;
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (!S_ISSOCK(sb.st_mode)) {
            listen_unlock(s, i);
            return cuzk_error_set(CUZK_EINVAL, "unix:%s: exists and is not a socket", path);
        }
        unlink(path);   /* a stale socket from an earlier run */
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int er = errno;
        listen_unlock(s, i);
        return cuzk_error_set(CUZK_EIO, "unix:%s: socket: %s", path, strerror(er));
    }
    mode_t old = umask(0177);   /* the socket is created 0600: owner only */
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || chmod(path, 0600) != 0 || listen(fd, SOMAXCONN) != 0) {
        int er = errno;
        close(fd);
        listen_unlock(s, i);
        return cuzk_error_set(CUZK_EIO, "unix:%s: %s", path, strerror(er));
    }
    s->fd[i] = fd;
    snprintf(s->unix_path[i], sizeof s->unix_path[i], "%s", path);
    snprintf(s->addr[i], sizeof s->addr[i], "unix:%s", path);
    return CUZK_OK;
}

cuzk_err listen_tcp(server *s, unsigned i, const char *spec)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {   /* [v6]:port */
        const char *rb = strchr(spec, ']');
        if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof host)
            return cuzk_error_set(CUZK_EINVAL, "listen %s: expected [ADDR]:PORT", spec);
        memcpy(host, spec + 1, (size_t)(rb - spec - 1));
        host[rb - spec - 1] = 0;
        port = rb + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon || (size_t)(colon - spec) >= sizeof host)
            return cuzk_error_set(CUZK_EINVAL, "listen %s: expected HOST:PORT or unix:PATH", spec);
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = 0;
        port = colon + 1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (g != 0)
        return cuzk_error_set(CUZK_EINVAL, "listen %s: %s", spec, gai_strerror(g));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    int one = 1;
    int rc = fd < 0 ? -1 : 0;
    if (rc == 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        rc = bind(fd, ai->ai_addr, ai->ai_addrlen);
    }
    if (rc == 0)
        rc = listen(fd, SOMAXCONN);
    int er = errno;
    freeaddrinfo(ai);
    if (rc != 0) {
        if (fd >= 0)
            close(fd);
        return cuzk_error_set(CUZK_EIO, "listen %s: %s", spec, strerror(er));
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char hb[NI_MAXHOST], pb[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, hb, sizeof hb, pb, sizeof pb,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(s->addr[i], sizeof s->addr[i], ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", hb, pb);
    else
        snprintf(s->addr[i], sizeof s->addr[i], "%s", spec);
    s->fd[i] = fd;
    return CUZK_OK;
}

