/* SPDX-License-Identifier: Apache-2.0 */
/* A real PostgreSQL server for a test: initdb in a fresh temporary directory, the server on
 * a free loopback port (its Unix socket in that directory too), one database made, stopped
 * and removed at the end. Debian's binaries (/usr/lib/postgresql/VERSION/bin, the newest
 * version found). initdb refuses to run as root: as root, the directory is given to the
 * unprivileged user nobody (65534:65534) and initdb and pg_ctl run as that user (setpriv);
 * clients connect over TCP with trust authentication (loopback only), user cuzk.
 *
 *   test_pg pg;
 *   int rc = test_pg_start(&pg);   // 0: running (pg.url); 77: no PostgreSQL here; else failed
 *   ... test_pg_restart(&pg) ...   // stop (immediate: like a crash) and start again
 *   test_pg_stop(&pg);             // stopped and its directory removed
 * Header-only. */
#ifndef CUZK_TEST_PG_H
#define CUZK_TEST_PG_H

#include <glob.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char bin[200];    /* the binaries' directory */
    char dir[128];    /* the temporary directory: data/, log, the socket */
    char as[64];      /* the command prefix that runs as the server's user ("" or setpriv) */
    int port;
    char url[256];    /* postgresql://cuzk@127.0.0.1:PORT/cuzk_test */
    bool running;
} test_pg;

/* A loopback port free at the time of asking. */
static inline int test_pg_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static inline int test_pg_sh(const char *cmd)
{
    int rc = system(cmd);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

/* pg_ctl start on a fresh free port (retried: another process may take the port first). */
static inline int test_pg_launch(test_pg *pg)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        pg->port = test_pg_free_port();
        if (pg->port <= 0)
            return 1;
        char cmd[1400];
        snprintf(cmd, sizeof cmd,
                 "cd / && %s %s/pg_ctl -D %s/data -l %s/log -w -t 60 -s -o \"-p %d -k %s"
                 " -c listen_addresses=127.0.0.1 -c max_connections=60"
                 " -c shared_buffers=16MB\" start >>%s/ctl.log 2>&1",
                 pg->as, pg->bin, pg->dir, pg->dir, pg->port, pg->dir, pg->dir);
        if (test_pg_sh(cmd) == 0) {
            snprintf(pg->url, sizeof pg->url, "postgresql://cuzk@127.0.0.1:%d/cuzk_test",
                     pg->port);
            pg->running = true;
            return 0;
        }
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cat %s/ctl.log %s/log >&2", pg->dir, pg->dir);
    test_pg_sh(cmd);
    return 1;
}

static inline void test_pg_halt(test_pg *pg, const char *mode)
{
    if (!pg->running)
        return;
    char cmd[900];
    snprintf(cmd, sizeof cmd, "cd / && %s %s/pg_ctl -D %s/data -w -s -m %s stop >>%s/ctl.log 2>&1",
             pg->as, pg->bin, pg->dir, mode, pg->dir);
    test_pg_sh(cmd);
    pg->running = false;
}

static inline void test_pg_stop(test_pg *pg)
{
    test_pg_halt(pg, "fast");
    if (pg->dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", pg->dir);
        if (test_pg_sh(cmd) != 0)
            fprintf(stderr, "test_pg: could not remove %s\n", pg->dir);
        pg->dir[0] = 0;
    }
}

/* Stopped as a crash would (immediate: no checkpoint) and started again on the same port
 * when it is still free (else another; pg->url follows). */
static inline int test_pg_restart(test_pg *pg)
{
    test_pg_halt(pg, "immediate");
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "cd / && %s %s/pg_ctl -D %s/data -l %s/log -w -t 60 -s -o \"-p %d -k %s"
             " -c listen_addresses=127.0.0.1 -c max_connections=60 -c shared_buffers=16MB\""
             " start >>%s/ctl.log 2>&1",
             pg->as, pg->bin, pg->dir, pg->dir, pg->port, pg->dir, pg->dir);
    if (test_pg_sh(cmd) == 0) {
        pg->running = true;
        return 0;
    }
    return test_pg_launch(pg);
}

static inline int test_pg_start(test_pg *pg)
{
    memset(pg, 0, sizeof *pg);
    glob_t g;
    if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        fprintf(stderr, "test_pg: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin)\n");
        return 77;
    }
    /* the newest: versions sort as numbers of equal width in Debian (13, 15, 16) */
    snprintf(pg->bin, sizeof pg->bin, "%s", g.gl_pathv[g.gl_pathc - 1]);
    globfree(&g);
    *strrchr(pg->bin, '/') = 0;
    snprintf(pg->dir, sizeof pg->dir, "/tmp/cuzk-pg-XXXXXX");
    if (!mkdtemp(pg->dir)) {
        perror("test_pg: mkdtemp");
        pg->dir[0] = 0;
        return 1;
    }
    if (geteuid() == 0) {
        if (chown(pg->dir, 65534, 65534) != 0) {
            perror("test_pg: chown");
            return 1;
        }
        snprintf(pg->as, sizeof pg->as,
                 "setpriv --reuid=65534 --regid=65534 --clear-groups --");
    }
    char cmd[1000];
    /* cd: the server's user may not enter the caller's working directory */
    snprintf(cmd, sizeof cmd,
             "cd / && %s %s/initdb -D %s/data -U cuzk --auth=trust -E UTF8 --no-sync"
             " >%s/initdb.log 2>&1",
             pg->as, pg->bin, pg->dir, pg->dir);
    if (test_pg_sh(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "cat %s/initdb.log >&2", pg->dir);
        test_pg_sh(cmd);
        test_pg_stop(pg);
        return 1;
    }
    if (test_pg_launch(pg) != 0) {
        test_pg_stop(pg);
        return 1;
    }
    snprintf(cmd, sizeof cmd, "%s/createdb -h 127.0.0.1 -p %d -U cuzk cuzk_test >&2", pg->bin,
             pg->port);
    if (test_pg_sh(cmd) != 0) {
        test_pg_stop(pg);
        return 1;
    }
    return 0;
}

#endif
