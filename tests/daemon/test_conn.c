/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-daemon staying up (label "daemon"):
 *
 *   test_conn sighup      the log file renamed, SIGHUP: the next lines go to a new file at
 *                         the path, the daemon lives on and a job still proves
 *   test_conn unixlock    a second daemon on the same Unix socket refuses to start (exit
 *                         non-zero, naming the lock file) and the first still answers there
 *
 * Environment: CUZK_BIN (build dir with cuzk-daemon), CUZK_SRC (source dir).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_lib.h"
#include "test.h"

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

int main(int argc, char **argv)
{
    static const daemon_scenario sc[] = {
        {"sighup", test_sighup},
        {"unixlock", test_unixlock},
    };
    return daemon_test_main(argc, argv, "test_conn", sc, sizeof sc / sizeof sc[0]);
}
