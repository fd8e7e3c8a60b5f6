/* SPDX-License-Identifier: Apache-2.0 */
/* The state directory (state.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"

/* mkdir -p with mode 0700 for what it creates. */
static int mkdir_parents(const char *dir)
{
    char p[4096];
    int w = snprintf(p, sizeof p, "%s", dir);
    if (w <= 0 || (size_t)w >= sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    if (mkdir(p, 0700) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

int daemon_state_open(const char *dir, char *why, size_t wlen)
{
    if (!dir || !dir[0]) {
        snprintf(why, wlen, "no state directory (set state_dir or --state-dir)");
        return -1;
    }
    if (mkdir_parents(dir) != 0) {
        snprintf(why, wlen, "state_dir %s: cannot create: %s", dir, strerror(errno));
        return -1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        snprintf(why, wlen, "state_dir %s: %s", dir,
                 errno == ELOOP || errno == ENOTDIR ? "not a directory (or a symbolic link)"
                                                    : strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(dfd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(why, wlen,
                 "state_dir %s: must be owned by this user (uid %u; it is uid %u) and not "
                 "writable by group or others (mode %04o): chmod 700 it",
                 dir, (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        close(dfd);
        return -1;
    }
    int lfd = openat(dfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    close(dfd);
    if (lfd < 0) {
        snprintf(why, wlen, "state_dir %s: lock: %s", dir, strerror(errno));
        return -1;
    }
    if (flock(lfd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(lfd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        snprintf(why, wlen, "state_dir %s is in use by another cuzk-daemon (pid %s)", dir,
                 pid[0] ? pid : "unknown");
        close(lfd);
        return -1;
    }
    char line[32];
    int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    if (ftruncate(lfd, 0) != 0 || pwrite(lfd, line, (size_t)n, 0) != n) {
        snprintf(why, wlen, "state_dir %s: lock: %s", dir, strerror(errno));
        close(lfd);
        return -1;
    }
    return lfd;
}
