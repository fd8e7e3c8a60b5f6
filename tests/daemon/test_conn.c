/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-daemon staying up (label "daemon"):
 *
 *   test_conn sighup      the log file renamed, SIGHUP: the next lines go to a new file at
 *                         the path, the daemon lives on and a job still proves
 *   test_conn unixlock    a second daemon on the same Unix socket refuses to start (exit
 *                         non-zero, naming the lock file) and the first still answers there
 *   test_conn conns       the per-address limit refuses the 65th connection from one
 *                         address; beside 2 000 idle and 500 dripping connections (from
 *                         many loopback addresses, each within the limit) /healthz answers
 *                         within 1 s to a client on a fresh address, and the header deadline
 *                         closes the dripping and idle ones; 300 long polls at once hold no
 *                         thread (/healthz and /v1/status answer within 1 s) and each
 *                         returns as soon as its job ends; SIGTERM with polls waiting: exit 0
 *   test_conn aging       a low job submitted into a steady stream of critical jobs: without
 *                         aging it is still queued while the stream goes on; with
 *                         --priority-aging 1 it ends within a few seconds, the stream going on
 *
 * Environment: CUZK_BIN (build dir with cuzk-daemon), CUZK_SRC (source dir).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_lib.h"
#include "test.h"
#include "util/timing.h"

/* Runs cuzk-daemon with argv (NULL-terminated, without the program) to its exit, stderr into
 * err_path; the exit status, or -1 when it is still running after timeout_s (then killed). */
static int daemon_run_to_exit(const char *const *args, const char *err_path, double timeout_s)
{
    char exe[512];
    snprintf(exe, sizeof exe, "%s/cuzk-daemon", bin_dir);
    const char *argv[64] = {exe};
    int n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        int nul = open("/dev/null", O_RDWR), err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(err, 2);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    track(p, true);
    int st = 0;
    for (int i = 0; i < (int)(timeout_s * 20); i++) {
        if (waitpid(p, &st, WNOHANG) == p) {
            track(p, false);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        usleep(50000);
    }
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
    track(p, false);
    return -1;
}

static bool healthy(const char *addr)
{
    resp r;
    bool ok = http(&r, addr, "GET", "/healthz", NULL) && r.status == 200;
    resp_free(&r);
    return ok;
}

static bool prove_one(const char *addr, const char *prio)
{
    char *id = submit(addr, "chain", "chain", prio, 1, NULL);
    json_t *f = id ? wait_final(addr, id, 60) : NULL;
    bool ok = f && !strcmp(jstr(f, "state"), "done");
    json_decref(f);
    free(id);
    return ok;
}

static int test_sighup(void)
{
    daemon_proc d;
    if (!daemon_start(&d, "sighup", NULL)) {
        CHECK(0);
        return test_finish();
    }
    CHECK(add_key(d.addr, "chain", "chain"));
    CHECK(prove_one(d.addr, "normal"));
    char old[400];
    snprintf(old, sizeof old, "%s.1", d.log);
    CHECK(rename(d.log, old) == 0);   /* what logrotate does */
    CHECK(kill(d.pid, SIGHUP) == 0);
    bool reopened = false;
    for (int i = 0; i < 100 && !reopened; i++) {
        reopened = count_in_file(d.log, "event=log_reopened") == 1;
        if (!reopened)
            usleep(20000);
    }
    CHECK(reopened);
    CHECK(kill(d.pid, 0) == 0);   /* alive: SIGHUP's default action would have ended it */
    CHECK(healthy(d.addr));
    CHECK(prove_one(d.addr, "high"));
    /* the job's lines are in the new file, not the old one */
    CHECK(count_in_file(d.log, "event=job_final") == 1);
    CHECK(count_in_file(old, "event=job_final") == 1);
    CHECK(count_in_file(old, "event=log_reopened") == 0);
    /* twice more: each time the same */
    for (int k = 0; k < 2; k++)
        CHECK(kill(d.pid, SIGHUP) == 0);
    for (int i = 0; i < 100 && count_in_file(d.log, "event=log_reopened") < 2; i++)
        usleep(20000);
    CHECK(count_in_file(d.log, "event=log_reopened") >= 2);
    CHECK(prove_one(d.addr, "low"));
    CHECK(daemon_stop(&d, 30) == 0);
    CHECK(count_in_file(d.log, "event=exit") == 1);
    CHECK(count_in_file(old, "event=exit") == 0);
    return test_finish();
}

static int test_unixlock(void)
{
    char sock[400], listen[420], state2[400], err[400], lock[420];
    snprintf(sock, sizeof sock, "%s/d.sock", tmp_dir);
    snprintf(listen, sizeof listen, "unix:%s", sock);
    snprintf(state2, sizeof state2, "%s/second.state", tmp_dir);
    snprintf(err, sizeof err, "%s/second.err", tmp_dir);
    snprintf(lock, sizeof lock, "%s.lock", sock);
    daemon_proc d;
    if (!daemon_start(&d, "first", "--listen", listen, NULL)) {
        CHECK(0);
        return test_finish();
    }
    CHECK(!strcmp(d.addr, listen));
    CHECK(healthy(d.addr));
    CHECK(access(lock, F_OK) == 0);
    /* the second one, with a state directory of its own: only the socket is shared */
    const char *args[] = {"--listen", listen, "--state-dir", state2, NULL};
    int rc = daemon_run_to_exit(args, err, 20);
    CHECK(rc != 0 && rc != -1);
    char *msg = read_file(err, NULL);
    CHECK(msg && strstr(msg, lock) && strstr(msg, "another cuzk-daemon"));
    if (msg && !strstr(msg, lock))
        fprintf(stderr, "second daemon said: %s\n", msg);
    free(msg);
    /* the first one still serves on its socket, which is still there */
    CHECK(healthy(d.addr));
    CHECK(add_key(d.addr, "chain", "chain"));
    CHECK(prove_one(d.addr, "normal"));
    CHECK(daemon_stop(&d, 30) == 0);
    /* stopped: socket and lock gone; a new daemon takes the path */
    CHECK(access(sock, F_OK) != 0 && access(lock, F_OK) != 0);
    if (daemon_start(&d, "third", "--listen", listen, NULL)) {
        CHECK(healthy(d.addr));
        CHECK(daemon_stop(&d, 30) == 0);
    } else {
        CHECK(0);
    }
    /* a stale socket (no daemon, no lock held) is still replaced */
    if (daemon_start(&d, "fourth", "--listen", listen, NULL)) {
        kill(d.pid, SIGKILL);
        waitpid(d.pid, NULL, 0);
        track(d.pid, false);
        d.pid = 0;
        CHECK(access(sock, F_OK) == 0);
        if (daemon_start(&d, "fifth", "--listen", listen, NULL)) {
            CHECK(healthy(d.addr));
            CHECK(daemon_stop(&d, 30) == 0);
        } else {
            CHECK(0);
        }
    } else {
        CHECK(0);
    }
    return test_finish();
}

/* ---- raw connections from chosen loopback addresses ---- */

static int conn_port;

/* A TCP connection to the daemon from source address 127.0.a.b (bound before connect, so
 * the daemon sees that address); non-blocking, the connect maybe still under way. -1 on
 * failure. */
static int conn_open(unsigned a, unsigned b)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET};
    src.sin_addr.s_addr = htonl(0x7f000000u | a << 8 | b);
    dst.sin_addr.s_addr = htonl(0x7f000001u);
    dst.sin_port = htons((uint16_t)conn_port);
    if (bind(fd, (struct sockaddr *)&src, sizeof src) != 0 ||
        (connect(fd, (struct sockaddr *)&dst, sizeof dst) != 0 && errno != EINPROGRESS)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The daemon's clients' token header, for the raw requests. */
static char conn_auth[160];

/* The start of a request: "METHOD PATH HTTP/1.1", Host (the listen address), the bearer
 * token header, then `more` (header lines, each ending in CRLF; the caller ends the
 * headers). */
static void req_head(char *out, size_t n, const char *method, const char *path, const char *more)
{
    snprintf(out, n, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s%s%s", method, path, conn_port,
             conn_auth, conn_auth[0] ? "\r\n" : "", more);
}

/* A sample of /metrics (name and labels as written there), or -1 when absent. */
static long long metric_get(const char *name)
{
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", conn_port);
    resp r;
    long long v = -1;
    if (http(&r, addr, "GET", "/metrics", NULL) && r.status == 200 && r.body) {
        size_t n = strlen(name);
        for (const char *l = r.body; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
            if (!strncmp(l, name, n) && l[n] == ' ') {
                v = strtoll(l + n + 1, NULL, 10);
                break;
            }
    }
    resp_free(&r);
    return v;
}

/* Waits until every fd's connect completed; false if one failed or 10 s passed. */
static bool conn_wait_connected(const int *fd, size_t n)
{
    struct pollfd *p = calloc(n, sizeof *p);
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        p[i] = (struct pollfd){.fd = fd[i], .events = POLLOUT};
    double t0 = cuzk_now_ms();
    size_t left = n;
    while (left && ok && cuzk_now_ms() - t0 < 10000) {
        if (poll(p, n, 100) < 0)
            break;
        for (size_t i = 0; i < n; i++) {
            if (p[i].fd < 0 || !p[i].revents)
                continue;
            int err = 0;
            socklen_t el = sizeof err;
            getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err, &el);
            if (err) {
                fprintf(stderr, "connect %zu: %s\n", i, strerror(err));
                ok = false;
            }
            p[i].fd = -1;
            left--;
        }
    }
    free(p);
    return ok && left == 0;
}

static bool send_all(int fd, const char *t)
{
    size_t n = strlen(t), o = 0;
    double t0 = cuzk_now_ms();
    while (o < n && cuzk_now_ms() - t0 < 5000) {
        ssize_t w = send(fd, t + o, n - o, MSG_NOSIGNAL);
        if (w > 0)
            o += (size_t)w;
        else if (w < 0 && errno != EAGAIN)
            return false;
        else
            usleep(1000);
    }
    return o == n;
}

/* Reads what has arrived on fd (non-blocking) into buf/len; false once the peer closed. */
static bool conn_read(int fd, char *buf, size_t cap, size_t *len)
{
    for (;;) {
        char tmp[4096];
        ssize_t r = recv(fd, tmp, sizeof tmp, 0);
        if (r > 0) {
            size_t k = (size_t)r < cap - 1 - *len ? (size_t)r : cap - 1 - *len;
            memcpy(buf + *len, tmp, k);
            *len += k;
            buf[*len] = 0;
            continue;
        }
        return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
}

/* Whether an HTTP response in buf is complete (its Content-Length of body arrived). */
static bool response_complete(const char *buf, size_t len)
{
    const char *end = strstr(buf, "\r\n\r\n");
    const char *cl = strcasestr(buf, "Content-Length:");
    if (!end || !cl || cl > end)
        return false;
    return len >= (size_t)(end + 4 - buf) + strtoul(cl + 15, NULL, 10);
}

/* GET path from 127.0.a.b on a fresh connection: seconds from connect to the whole
 * response, status in *status (0: none); the body into body (cap bytes) when given. */
static double timed_get(unsigned a, unsigned b, const char *path, long *status)
{
    double t0 = cuzk_now_ms();
    *status = 0;
    int fd = conn_open(a, b);
    if (fd < 0 || !conn_wait_connected(&fd, 1)) {
        if (fd >= 0)
            close(fd);
        return 99;
    }
    char req[512], buf[65536];
    req_head(req, sizeof req, "GET", path, "Connection: close\r\n\r\n");
    size_t len = 0;
    buf[0] = 0;
    bool ok = send_all(fd, req);
    while (ok && !response_complete(buf, len) && cuzk_now_ms() - t0 < 10000) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        poll(&p, 1, 50);
        ok = conn_read(fd, buf, sizeof buf, &len);
    }
    double took = (cuzk_now_ms() - t0) / 1e3;
    close(fd);
    if (response_complete(buf, len) && !strncmp(buf, "HTTP/1.1 ", 9))
        *status = strtol(buf + 9, NULL, 10);
    return took;
}

/* Raises the open files limit to the hard one; false when it stays below want. */
static bool fd_limit(rlim_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return false;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur >= want;
}

/* Whether the peer closed fd within timeout_ms (read gives 0 or an error). */
static bool closed_within(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, timeout_ms) <= 0)
        return false;
    char b[256];
    ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN);
}

enum { N_IDLE = 2000, N_DRIP = 500, N_BODY = 100, PER_ADDR = 50, N_POLLS = 300 };
#define HEADER_TIMEOUT_S 4.0

/* The 65th connection from one address is refused; another address is not limited by it. */
static void conns_per_ip(void)
{
    int fd[65];
    for (int i = 0; i < 64; i++)
        fd[i] = conn_open(0, 2);
    CHECK(conn_wait_connected(fd, 64));
    usleep(300000);   /* all 64 taken by the daemon before the next */
    fd[64] = conn_open(0, 2);
    CHECK(conn_wait_connected(fd + 64, 1));
    /* one of the 65, the last one, is closed at once; the others stay open */
    usleep(500000);
    int closed = 0, which = -1;
    for (int i = 0; i < 65; i++)
        if (closed_within(fd[i], 0))
            closed++, which = i;
    printf("per-ip: %d of 65 connections from 127.0.0.2 refused (the %dth)\n", closed, which + 1);
    CHECK(closed == 1 && which == 64);
    /* those open are served */
    char req[512];
    req_head(req, sizeof req, "GET", "/healthz", "\r\n");
    CHECK(send_all(fd[0], req));
    char buf[4096];
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < 100 && !response_complete(buf, len); i++) {
        struct pollfd p = {.fd = fd[0], .events = POLLIN};
        poll(&p, 1, 20);
        conn_read(fd[0], buf, sizeof buf, &len);
    }
    CHECK(strncmp(buf, "HTTP/1.1 200", 12) == 0);
    /* another address at the same moment: not limited */
    long st;
    CHECK(timed_get(0, 3, "/healthz", &st) < 1.0 && st == 200);
    for (int i = 0; i < 65; i++)
        close(fd[i]);
}

/* 2 000 idle connections, 500 sending their headers a byte every half second, 100 their
 * bodies: /healthz answers from fresh addresses within 1 s; the header deadline closes the
 * idle and header-dripping ones, the body's floor the body-dripping ones. */
static void conns_flood(void)
{
    enum { N = N_IDLE + N_DRIP + N_BODY };
    static int fd[N];
    static double closed_s[N];
    double t0 = cuzk_now_ms();
    for (int i = 0; i < N; i++) {   /* 127.0.1.x idle, 127.0.2.x headers, 127.0.3.x bodies */
        int k = i < N_IDLE ? i : i < N_IDLE + N_DRIP ? i - N_IDLE : i - N_IDLE - N_DRIP;
        fd[i] = conn_open(i < N_IDLE ? 1 : i < N_IDLE + N_DRIP ? 2 : 3, (unsigned)(10 + k / PER_ADDR));
        closed_s[i] = 0;
    }
    CHECK(conn_wait_connected(fd, N));
    char head[512], body_head[512];
    req_head(head, sizeof head, "GET", "/healthz", "X-Drip: ");
    req_head(body_head, sizeof body_head, "POST", "/healthz", "Content-Length: 100000\r\n\r\n");
    for (int i = N_IDLE; i < N; i++)
        CHECK(send_all(fd[i], i < N_IDLE + N_DRIP ? head : body_head));
    printf("flood: %d idle, %d header-dripping, %d body-dripping connections open in %.2f s\n",
           N_IDLE, N_DRIP, N_BODY, (cuzk_now_ms() - t0) / 1e3);
    /* beside them: /healthz from fresh addresses, while the drippers drip */
    double worst = 0, last_drip = 0;
    unsigned fresh = 0;
    struct pollfd *p = calloc(N, sizeof *p);
    int n_closed = 0;
    while (n_closed < N && cuzk_now_ms() - t0 < (HEADER_TIMEOUT_S + 6) * 1e3) {
        double now = cuzk_now_ms();
        if (now - last_drip > 500) {   /* a byte every half second: each one is progress */
            for (int i = N_IDLE; i < N; i++)
                if (!closed_s[i] && send(fd[i], "x", 1, MSG_NOSIGNAL) < 0 && errno != EAGAIN)
                    closed_s[i] = (now - t0) / 1e3;
            last_drip = now;
        }
        if ((now - t0) / 1e3 < HEADER_TIMEOUT_S - 1.5 && fresh < 8) {
            long st;
            double took = timed_get(4, 10 + fresh++, "/healthz", &st);
            CHECK(st == 200);
            if (took > worst)
                worst = took;
        }
        for (int i = 0; i < N; i++)
            p[i] = (struct pollfd){.fd = closed_s[i] ? -1 : fd[i], .events = POLLIN | POLLRDHUP};
        poll(p, N, 20);
        now = cuzk_now_ms();
        n_closed = 0;
        for (int i = 0; i < N; i++) {
            if (p[i].fd >= 0 && p[i].revents && closed_within(p[i].fd, 0))
                closed_s[i] = (now - t0) / 1e3;
            n_closed += closed_s[i] > 0;
        }
    }
    free(p);
    static const char *const what[] = {"idle", "header-dripping", "body-dripping"};
    const int lo[] = {0, N_IDLE, N_IDLE + N_DRIP}, hi[] = {N_IDLE, N_IDLE + N_DRIP, N};
    printf("flood: /healthz from %u fresh addresses, slowest %.3f s\n", fresh, worst);
    for (int g = 0; g < 3; g++) {
        double first = 1e9, last = 0;
        int closed = 0;
        for (int i = lo[g]; i < hi[g]; i++) {
            closed += closed_s[i] > 0;
            if (closed_s[i] && closed_s[i] < first)
                first = closed_s[i];
            if (closed_s[i] > last)
                last = closed_s[i];
        }
        printf("flood: %d of %d %s connections closed, between %.2f and %.2f s (header "
               "deadline %.1f s)\n", closed, hi[g] - lo[g], what[g], first, last,
               HEADER_TIMEOUT_S);
        CHECK(closed == hi[g] - lo[g]);
        /* by the deadline: not before it (the connection time counts), not long after */
        CHECK(first > HEADER_TIMEOUT_S - 1.0 && last < HEADER_TIMEOUT_S + 4.0);
    }
    CHECK(fresh >= 2);
    CHECK(worst < 1.0);
    /* /metrics counts them: every connection of the flood cut by a deadline */
    long long cut = metric_get("cuzk_http_connections_cut_total");
    printf("flood: cuzk_http_connections_cut_total %lld\n", cut);
    CHECK(cut >= N);
    for (int i = 0; i < N; i++)
        close(fd[i]);
}

/* A body arriving above the floor is not cut, though it takes longer than header_timeout. */
static void conns_slow_body(void)
{
    int fd = conn_open(5, 10);
    CHECK(conn_wait_connected(&fd, 1));
    enum { CHUNK = 1000, CHUNKS = 13 };   /* 2 000 bytes/s for 6.5 s, the floor 1 024 */
    char head[512], chunk[CHUNK + 1];
    char more[64];
    snprintf(more, sizeof more, "Content-Length: %d\r\n\r\n", CHUNK * CHUNKS);
    req_head(head, sizeof head, "POST", "/healthz", more);
    memset(chunk, 'x', CHUNK);
    chunk[CHUNK] = 0;
    double t0 = cuzk_now_ms();
    bool ok = send_all(fd, head);
    for (int i = 0; ok && i < CHUNKS; i++) {
        usleep(500000);
        ok = send_all(fd, chunk);
    }
    char buf[4096];
    size_t len = 0;
    buf[0] = 0;
    while (ok && !response_complete(buf, len) && cuzk_now_ms() - t0 < 15000) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        poll(&p, 1, 50);
        ok = conn_read(fd, buf, sizeof buf, &len);
    }
    printf("slow body: %d bytes in %.1f s: %.12s\n", CHUNK * CHUNKS, (cuzk_now_ms() - t0) / 1e3, buf);
    CHECK(strncmp(buf, "HTTP/1.1 405", 12) == 0);   /* answered (POST /healthz: use GET) */
    close(fd);
}

/* N_POLLS long polls on one running job: /healthz and /v1/status answer within 1 s; each
 * poll answers as soon as the job ends, with its proofs. */
static void conns_polls(const char *addr)
{
    char *id = submit(addr, "chain", "chain", "normal", 6, NULL);
    CHECK(id != NULL);
    if (!id)
        return;
    static int fd[N_POLLS];
    static double answered_s[N_POLLS];
    static char *buf[N_POLLS];
    static size_t len[N_POLLS];
    char req[512], path[128];
    snprintf(path, sizeof path, "/v1/proofs/%s?wait=50", id);
    req_head(req, sizeof req, "GET", path, "\r\n");
    for (int i = 0; i < N_POLLS; i++)
        fd[i] = conn_open(4, (unsigned)(10 + i / PER_ADDR));
    CHECK(conn_wait_connected(fd, N_POLLS));
    double t0 = cuzk_now_ms();
    for (int i = 0; i < N_POLLS; i++) {
        CHECK(send_all(fd[i], req));
        buf[i] = calloc(1, 65536);
        len[i] = 0;
        answered_s[i] = 0;
    }
    /* while they wait: other requests answer at once */
    double worst = 0;
    for (unsigned k = 0; k < 4; k++) {
        long st;
        double took = timed_get(6, 10 + k, k & 1 ? "/v1/status" : "/healthz", &st);
        CHECK(st == 200);
        if (took > worst)
            worst = took;
    }
    long long waiting = metric_get("cuzk_http_long_polls");
    CHECK(waiting == N_POLLS);
    if (waiting != N_POLLS)
        fprintf(stderr, "polls: cuzk_http_long_polls %lld, %d waiting\n", waiting, N_POLLS);
    snprintf(path, sizeof path, "/v1/proofs/%s", id);
    double done_s = 0;
    int answered = 0;
    struct pollfd p[N_POLLS];
    while (answered < N_POLLS && cuzk_now_ms() - t0 < 60000) {
        if (!done_s) {   /* when the job is seen final by a plain poll */
            resp r;
            if (http(&r, addr, "GET", path, NULL) && r.json && !strcmp(jstr(r.json, "state"), "done"))
                done_s = (cuzk_now_ms() - t0) / 1e3;
            resp_free(&r);
        }
        for (int i = 0; i < N_POLLS; i++)
            p[i] = (struct pollfd){.fd = answered_s[i] ? -1 : fd[i], .events = POLLIN};
        poll(p, N_POLLS, 20);
        double now = (cuzk_now_ms() - t0) / 1e3;
        for (int i = 0; i < N_POLLS; i++) {
            if (p[i].fd < 0 || !p[i].revents)
                continue;
            bool open = conn_read(fd[i], buf[i], 65536, &len[i]);
            if (response_complete(buf[i], len[i]) || !open) {
                answered_s[i] = now;
                answered++;
            }
        }
    }
    int ok = 0;
    double first = 1e9, lastc = 0;
    for (int i = 0; i < N_POLLS; i++) {
        ok += !strncmp(buf[i], "HTTP/1.1 200", 12) && strstr(buf[i], "\"state\": \"done\"") &&
              strstr(buf[i], "\"proofs\"");
        if (answered_s[i] && answered_s[i] < first)
            first = answered_s[i];
        if (answered_s[i] > lastc)
            lastc = answered_s[i];
        close(fd[i]);
        free(buf[i]);
    }
    printf("polls: %d waiting: /healthz, /v1/status within %.3f s; the job ended at %.2f s "
           "(plain poll), the long polls answered between %.2f and %.2f s, %d of them done "
           "with proofs\n", N_POLLS, worst, done_s, first, lastc, ok);
    CHECK(worst < 1.0);
    CHECK(ok == N_POLLS);
    CHECK(done_s > 0 && first > 0.5);   /* they waited for the job */
    CHECK(lastc < done_s + 1.0);       /* and answered as it ended, not at the end of the wait */
    free(id);
}

static int test_conns(void)
{
    if (!fd_limit(N_IDLE + N_DRIP + N_BODY + 512)) {
        printf("conns: skipped: the open files limit is below %d\n", N_IDLE + N_DRIP + N_BODY + 512);
        return SKIP;
    }
    char ht[32];
    snprintf(ht, sizeof ht, "%.1f", HEADER_TIMEOUT_S);
    daemon_proc d;
    /* one HTTP thread: a poll that held it would stop every other request */
    if (!daemon_start(&d, "conns", "--header-timeout", ht, "--body-min-rate", "1024",
                      "--http-threads", "1",
                      "--gpu-workers", "1", "--debug-device-delay-ms", "400", NULL)) {
        CHECK(0);
        return test_finish();
    }
    conn_port = atoi(strrchr(d.addr, ':') + 1);
    snprintf(conn_auth, sizeof conn_auth, "Authorization: Bearer %.128s", d.token);
    conns_per_ip();
    conns_flood();
    conns_slow_body();
    CHECK(healthy(d.addr));
    CHECK(add_key(d.addr, "chain", "chain"));
    conns_polls(d.addr);
    /* SIGTERM while polls wait: they are answered, the daemon ends cleanly */
    char *id = submit(d.addr, "chain", "chain", "low", 8, NULL);
    int fd[40];
    char req[512];
    char path[128];
    snprintf(path, sizeof path, "/v1/proofs/%s?wait=50", id ? id : "0");
    req_head(req, sizeof req, "GET", path, "\r\n");
    for (int i = 0; i < 40; i++)
        fd[i] = conn_open(7, 10);
    CHECK(conn_wait_connected(fd, 40));
    for (int i = 0; i < 40; i++)
        CHECK(send_all(fd[i], req));
    usleep(300000);
    CHECK(daemon_stop(&d, 30) == 0);
    int ended = 0;
    for (int i = 0; i < 40; i++) {
        char b[65536];
        size_t n = 0;
        b[0] = 0;
        while (conn_read(fd[i], b, sizeof b, &n) && !response_complete(b, n)) {
            struct pollfd p = {.fd = fd[i], .events = POLLIN};
            if (poll(&p, 1, 1000) <= 0)
                break;
        }
        ended += !strncmp(b, "HTTP/1.1 200", 12) || n == 0;
        close(fd[i]);
    }
    CHECK(ended == 40);
    free(id);
    CHECK(count_in_file(d.log, "event=exit") == 1);
    return test_finish();
}

/* A steady stream of critical jobs (a backlog of `backlog` kept queued) with one low job
 * submitted at its start, for up to run_s seconds or until the low job is final; the low
 * job's state at the end in state (its seconds to the end in *took_s). */
static void stream_with_low(const char *addr, double run_s, int backlog, char *state, size_t n,
                            double *took_s, int *n_critical)
{
    char *crit[512];
    int nc = 0;
    for (int i = 0; i < backlog; i++)
        crit[nc++] = submit(addr, "chain", "chain", "critical", 1, NULL);
    double t0 = cuzk_now_ms();
    char *low = submit(addr, "chain", "chain", "low", 1, NULL);
    CHECK(low != NULL);
    snprintf(state, n, "none");
    *took_s = 0;
    char path[128];
    snprintf(path, sizeof path, "/v1/proofs/%s", low ? low : "0");
    while ((cuzk_now_ms() - t0) / 1e3 < run_s && nc < 500) {
        resp r;
        bool got = http(&r, addr, "GET", path, NULL) && r.json;
        if (got)
            snprintf(state, n, "%s", jstr(r.json, "state"));
        resp_free(&r);
        if (!strcmp(state, "done") || !strcmp(state, "failed") || !strcmp(state, "cancelled")) {
            *took_s = (cuzk_now_ms() - t0) / 1e3;
            break;
        }
        /* keep the critical backlog queued */
        int queued = backlog + 1;   /* unknown: submit nothing */
        if (http(&r, addr, "GET", "/v1/status", NULL) && r.json)
            queued = (int)json_integer_value(
                json_object_get(json_object_get(r.json, "queue"), "jobs_queued"));
        resp_free(&r);
        for (int k = queued - 1; k < backlog && nc < 500; k++)   /* the low job is one of them */
            crit[nc++] = submit(addr, "chain", "chain", "critical", 1, NULL);
        usleep(20000);
    }
    *n_critical = nc;
    for (int i = 0; i < nc; i++)
        free(crit[i]);
    free(low);
}

static int test_aging(void)
{
    static const char *const aging[] = {"0", "1"};
    for (int a = 0; a < 2; a++) {
        char tag[32];
        snprintf(tag, sizeof tag, "aging%s", aging[a]);
        daemon_proc d;
        if (!daemon_start(&d, tag, "--priority-aging", aging[a], "--gpu-workers", "1",
                          "--lookahead", "1", "--debug-device-delay-ms", "60", NULL)) {
            CHECK(0);
            return test_finish();
        }
        CHECK(add_key(d.addr, "chain", "chain"));
        char state[32];
        double took;
        int nc;
        stream_with_low(d.addr, a == 0 ? 5.0 : 20.0, 4, state, sizeof state, &took, &nc);
        printf("aging %s s: after %d critical jobs the low job is %s (%.2f s)\n", aging[a], nc,
               state, took);
        if (a == 0) {   /* the stream starves it */
            CHECK(!strcmp(state, "queued"));
        } else {        /* low, normal, high, critical after 3 s: then the older goes first */
            CHECK(!strcmp(state, "done"));
            CHECK(took > 2.0 && took < 8.0);
        }
        CHECK(daemon_stop(&d, 30) == 0);
    }
    return test_finish();
}

int main(int argc, char **argv)
{
    static const daemon_scenario sc[] = {
        {"sighup", test_sighup},
        {"unixlock", test_unixlock},
        {"conns", test_conns},
        {"aging", test_aging},
    };
    return daemon_test_main(argc, argv, "test_conn", sc, sizeof sc / sizeof sc[0]);
}
