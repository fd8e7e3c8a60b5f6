/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-daemon's security model (docs/API.md "Security model"), label "daemon":
 *
 *   test_security security_token   the first start makes STATE_DIR/token and admin-token (0600,
 *                           64 hex digits) and requires them; a restart reuses them; a token
 *                           file that group or others may read, or a symbolic link, refuses
 *                           the start
 *   test_security security_empty   an empty token (--token '', a token file with an empty first
 *                           line) refuses the start instead of turning authentication off
 *   test_security security_noauth   --no-auth on a loopback address: no token needed, and logged;
 *                           on a non-loopback or all-interfaces address: refused; with a
 *                           token: refused; --listen :PORT (and 0.0.0.0) warns
 *   test_security security_browser   a request with an Origin header is refused (403) unless
 *                           allow_origin lists it; one whose Host is not the listener's address
 *                           (a name other than localhost on loopback, another port) unless
 *                           allow_host lists it; any Host on a Unix socket
 *   test_security security_admin     POST /v1/keys and DELETE /v1/keys/ID take the admin token
 *                           (403 with the clients', whose answer quotes nothing of the file);
 *                           GET stays with the clients'; max_keys (409 beyond, and at start);
 *                           priority critical takes the admin token unless critical = any
 *   test_security security_cache     a .params key's decoded cache goes to STATE_DIR/cache
 *                           (0700; its secret 0600), written through a fresh temporary file (a
 *                           link planted at the old predictable name is not followed: its
 *                           target is unchanged); a modified cache, or one made with another
 *                           secret, is rejected and rebuilt (the key loads, a job proves); a
 *                           removed key's cache is deleted
 *
 * Environment: CUZK_BIN (build dir with cuzk-daemon), CUZK_SRC (source dir).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon_lib.h"
#include "test.h"
#include "test_files.h"

/* Runs cuzk-daemon with the flags (NULL-terminated) and a state directory of its own, which
 * must refuse to start: returns its exit status (-1 when it was still running after 10 s),
 * its stderr in err. */
static int daemon_refused(char *err, size_t n, const char *tag, ...)
{
    const char *argv[40];
    int k = 0;
    char exe[512], state[400], errf[400];
    snprintf(exe, sizeof exe, "%s/cuzk-daemon", bin_dir);
    snprintf(state, sizeof state, "%s/%s.state", tmp_dir, tag);
    snprintf(errf, sizeof errf, "%s/%s.err", tmp_dir, tag);
    argv[k++] = exe;
    bool state_given = false;
    va_list ap;
    va_start(ap, tag);
    for (const char *a; (a = va_arg(ap, const char *)) && k < 34;) {
        state_given |= !strcmp(a, "--state-dir");
        argv[k++] = a;
    }
    va_end(ap);
    if (!state_given) {
        argv[k++] = "--state-dir";
        argv[k++] = state;
    }
    argv[k] = NULL;
    pid_t p = fork();
    if (p == 0) {
        int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 2);
        dup2(fd, 1);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    track(p, true);
    int st = 0, rc = -1;
    for (int i = 0; i < 200; i++) {
        if (waitpid(p, &st, WNOHANG) == p) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        usleep(50000);
    }
    if (rc < 0) {
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
    }
    track(p, false);
    char *t = read_file(errf, NULL);
    snprintf(err, n, "%s", t ? t : "");
    free(t);
    return rc;
}

static long get_status(const char *addr, const char *path, const char *auth)
{
    resp r;
    long st = http_ex(&r, addr, "GET", path, NULL, NULL, 0, auth) ? r.status : 0;
    resp_free(&r);
    return st;
}

static bool is_token(const char *t)
{
    if (strlen(t) != 64)
        return false;
    for (const char *p = t; *p; p++)
        if (!strchr("0123456789abcdef", *p))
            return false;
    return true;
}

/* ---- token ---- */

static int test_token(void)
{
    daemon_proc d;
    if (!daemon_start(&d, "tok", NULL)) {
        CHECK(0);
        return test_finish();
    }
    char path[400], bearer[600];
    struct stat st;
    snprintf(path, sizeof path, "%s/token", d.state);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    snprintf(path, sizeof path, "%s/admin-token", d.state);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    CHECK(is_token(d.token) && is_token(d.admin) && strcmp(d.token, d.admin) != 0);
    CHECK(count_in_file(d.log, "event=token_made") == 2);
    /* required: none, a wrong one, a prefix: 401; /healthz stays open */
    CHECK(get_status(d.addr, "/v1/status", "Authorization:") == 401);
    CHECK(get_status(d.addr, "/v1/status", "Authorization: Bearer wrong") == 401);
    snprintf(bearer, sizeof bearer, "Authorization: Bearer %.63s", d.token);
    CHECK(get_status(d.addr, "/v1/status", bearer) == 401);
    CHECK(get_status(d.addr, "/healthz", "Authorization:") == 200);
    snprintf(bearer, sizeof bearer, "Authorization: Bearer %s", d.token);
    CHECK(get_status(d.addr, "/v1/status", bearer) == 200);
    snprintf(bearer, sizeof bearer, "Authorization: Bearer %s", d.admin);
    CHECK(get_status(d.addr, "/v1/status", bearer) == 200);
    char first[520];
    snprintf(first, sizeof first, "%s", d.token);
    CHECK(daemon_stop(&d, 20) == 0);

    /* a restart on the same state directory keeps the token */
    char state[300];
    snprintf(state, sizeof state, "%s", d.state);
    if (daemon_start(&d, "tok2", "--state-dir", state, NULL)) {
        CHECK(!strcmp(d.token, first));
        snprintf(bearer, sizeof bearer, "Authorization: Bearer %s", first);
        CHECK(get_status(d.addr, "/v1/status", bearer) == 200);
        CHECK(count_in_file(d.log, "event=token_made") == 0);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }

    /* a token file others may read, or a link, is refused */
    char err[4096];
    snprintf(path, sizeof path, "%s/token", state);
    CHECK(chmod(path, 0640) == 0);
    CHECK(daemon_refused(err, sizeof err, "tok-mode", "--state-dir", state, NULL) == 2);
    CHECK(strstr(err, "token") && strstr(err, "chmod 600"));
    CHECK(chmod(path, 0600) == 0);
    char moved[420];
    snprintf(moved, sizeof moved, "%s/token.real", tmp_dir);
    CHECK(rename(path, moved) == 0 && symlink(moved, path) == 0);
    CHECK(daemon_refused(err, sizeof err, "tok-link", "--state-dir", state, NULL) == 2);
    CHECK(strstr(err, "symbolic link") != NULL);
    return test_finish();
}

/* ---- empty ---- */

static int test_empty(void)
{
    char err[4096], file[400];
    CHECK(daemon_refused(err, sizeof err, "empty-flag", "--listen", "127.0.0.1:0", "--token", "",
                         NULL) == 2);
    CHECK(strstr(err, "token is empty") != NULL);
    snprintf(file, sizeof file, "%s/empty-token", tmp_dir);
    FILE *f = fopen(file, "w");
    CHECK(f && fputs("\nsecond-line\n", f) >= 0 && fclose(f) == 0);
    CHECK(daemon_refused(err, sizeof err, "empty-file", "--listen", "127.0.0.1:0",
                         "--token-file", file, NULL) == 2);
    CHECK(strstr(err, "empty") != NULL);
    /* the same token file in the INI file */
    char ini[400];
    snprintf(ini, sizeof ini, "%s/empty.ini", tmp_dir);
    f = fopen(ini, "w");
    CHECK(f && fprintf(f, "token_file = %s\n", file) > 0 && fclose(f) == 0);
    CHECK(daemon_refused(err, sizeof err, "empty-ini", "--config", ini, "--listen",
                         "127.0.0.1:0", NULL) == 2);
    CHECK(strstr(err, "empty") != NULL);
    /* and the empty token does not let anyone in when given with a good one beside */
    daemon_proc d;
    if (daemon_start(&d, "given", "--token", "given-token", NULL)) {
        CHECK(get_status(d.addr, "/v1/status", "Authorization: Bearer ") == 401);
        CHECK(get_status(d.addr, "/v1/status", "Authorization: Bearer given-token") == 200);
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    return test_finish();
}

/* ---- noauth ---- */

static int test_noauth(void)
{
    daemon_proc d;
    if (daemon_start(&d, "noauth", "--no-auth", NULL)) {
        CHECK(get_status(d.addr, "/v1/status", "Authorization:") == 200);
        CHECK(count_in_file(d.log, "event=auth_off") == 1);
        char path[400];
        snprintf(path, sizeof path, "%s/token", d.state);
        CHECK(access(path, F_OK) != 0);   /* no token made */
        CHECK(daemon_stop(&d, 20) == 0);
    } else {
        CHECK(0);
    }
    char err[4096];
    static const char *const open_to_all[] = {"192.0.2.1:0", "0.0.0.0:0", ":0", "[::]:0",
                                              "example.org:0"};
    for (size_t i = 0; i < sizeof open_to_all / sizeof open_to_all[0]; i++) {
        int rc = daemon_refused(err, sizeof err, "noauth-open", "--no-auth", "--listen",
                                open_to_all[i], NULL);
        CHECK(rc == 2 && strstr(err, "not loopback"));
        if (rc != 2)
            fprintf(stderr, "--no-auth --listen %s: status %d: %s\n", open_to_all[i], rc, err);
    }
    /* beside a loopback listener too */
    CHECK(daemon_refused(err, sizeof err, "noauth-two", "--no-auth", "--listen", "127.0.0.1:0",
                         "--listen", "0.0.0.0:0", NULL) == 2);
    CHECK(daemon_refused(err, sizeof err, "noauth-tok", "--no-auth", "--token", "t",
                         "--listen", "127.0.0.1:0", NULL) == 2);
    CHECK(strstr(err, "choose one") != NULL);
    /* every interface: warned, and the token required */
    static const char *const wild[] = {"0.0.0.0:0", ":0"};
    for (size_t i = 0; i < 2; i++) {
        if (daemon_start(&d, i ? "wild-port" : "wild-any", "--listen", wild[i], NULL)) {
            CHECK(count_in_file(d.log, "event=listen_all_interfaces") == 1);
            char addr[300];
            const char *port = strrchr(d.addr, ':');
            snprintf(addr, sizeof addr, "127.0.0.1%s", port ? port : ":0");
            CHECK(get_status(addr, "/v1/status", "Authorization:") == 401);
            char bearer[600];
            snprintf(bearer, sizeof bearer, "Authorization: Bearer %s", d.token);
            CHECK(get_status(addr, "/v1/status", bearer) == 200);
            CHECK(daemon_stop(&d, 20) == 0);
        } else {
            CHECK(0);
        }
    }
    return test_finish();
}

/* ---- browser ---- */

static long get_with(const char *addr, const char *path, const char *header, char *err, size_t n)
{
    resp r;
    long st = http_ex(&r, addr, "GET", path, NULL, NULL, 0, header) ? r.status : 0;
    snprintf(err, n, "%s", jstr(r.json, "error"));
    resp_free(&r);
    return st;
}

static int test_browser(void)
{
    char sock[300], unixa[310];
    snprintf(sock, sizeof sock, "%s/b.sock", tmp_dir);
    snprintf(unixa, sizeof unixa, "unix:%s", sock);
    daemon_proc d;
    if (!daemon_start(&d, "browser", "--listen", "127.0.0.1:0", "--listen", unixa,
                      "--allow-origin", "https://ok.example", "--allow-host", "proxy.example",
                      "--allow-host", "pinned.example:8443", NULL)) {
        CHECK(0);
        return test_finish();
    }
    const char *port = strrchr(d.addr, ':') + 1;
    char h[300], err[1100];
    /* Origin */
    CHECK(get_with(d.addr, "/v1/status", "Origin: http://evil.example", err, sizeof err) == 403 &&
          strstr(err, "Origin"));
    CHECK(get_with(d.addr, "/v1/status", "Origin: null", err, sizeof err) == 403);
    CHECK(get_with(d.addr, "/healthz", "Origin: http://evil.example", err, sizeof err) == 403);
    CHECK(get_with(d.addr, "/v1/status", "Origin: https://ok.example", err, sizeof err) == 200);
    CHECK(get_with(unixa, "/v1/status", "Origin: http://evil.example", err, sizeof err) == 403);
    /* Host */
    static const struct {
        const char *fmt;
        long want;
    } hosts[] = {
        {"Host: 127.0.0.1:%s", 200},       {"Host: localhost:%s", 200},
        {"Host: LocalHost:%s", 200},       {"Host: [::1]:%s", 200},
        {"Host: evil.example:%s", 403},    {"Host: localhost.evil.example:%s", 403},
        {"Host: 127.0.0.1:1%s", 403},      {"Host: localhost:%s0", 403},
        {"Host: localhost%.0s", 403},      {"Host: localhost:%sx", 403},
        {"Host: proxy.example%.0s", 200},  {"Host: proxy.example:%s", 200},
        {"Host: pinned.example:8443%.0s", 200}, {"Host: pinned.example:%s", 403},
        {"Host: 127.0.0.1.evil.example:%s", 403},
    };
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
        snprintf(h, sizeof h, hosts[i].fmt, port);
        long st = get_with(d.addr, "/v1/status", h, err, sizeof err);
        CHECK(st == hosts[i].want && (st == 200 || strstr(err, "Host")));
        if (st != hosts[i].want)
            fprintf(stderr, "%s: %ld, expected %ld (%s)\n", h, st, hosts[i].want, err);
    }
    snprintf(h, sizeof h, "Host: evil.example:%s", port);
    CHECK(get_with(d.addr, "/healthz", h, err, sizeof err) == 403);
    /* a Unix socket: any Host */
    CHECK(get_with(unixa, "/v1/status", "Host: evil.example", err, sizeof err) == 200);
    CHECK(daemon_stop(&d, 20) == 0);
    return test_finish();
}

/* ---- admin ---- */

static long req(const char *addr, const char *method, const char *path, const char *json,
                const char *token, char *err, size_t n)
{
    char h[600];
    snprintf(h, sizeof h, "Authorization: Bearer %s", token);
    resp r;
    long st = http_ex(&r, addr, method, path, json ? "application/json" : NULL, json,
                      json ? strlen(json) : 0, h)
                  ? r.status
                  : 0;
    if (err)
        snprintf(err, n, "%s", r.body ? r.body : "");
    resp_free(&r);
    return st;
}

static int test_admin(void)
{
    daemon_proc d;
    if (!daemon_start(&d, "admin", "--max-keys", "2", NULL)) {
        CHECK(0);
        return test_finish();
    }
    char *zc = test_fixture_dup("chain", "circuit.zkey");
    char *zm = test_fixture_dup("multiplier", "circuit.zkey");
    char *rc = test_fixture_dup("chain", "circuit.r1cs");
    char body[2048], err[2048];
    /* a file the client may not read: its bytes are never quoted back */
    char secret[400];
    snprintf(secret, sizeof secret, "%s/secret", tmp_dir);
    write_all(secret, "SeCrEtBy\x01\x02\x03\x04tes of a file\n", 27);
    chmod(secret, 0600);
    snprintf(body, sizeof body, "{\"id\": \"s\", \"path\": \"%s\", \"r1cs\": \"%s\"}", secret, rc);
    CHECK(req(d.addr, "POST", "/v1/keys", body, d.token, err, sizeof err) == 403);
    CHECK(!strstr(err, "SeCr") && !strstr(err, "5365") && strstr(err, "admin token"));
    /* the clients' token: 403 for POST and DELETE, GET answers */
    snprintf(body, sizeof body, "{\"id\": \"chain\", \"path\": \"%s\"}", zc);
    CHECK(req(d.addr, "POST", "/v1/keys", body, d.token, err, sizeof err) == 403);
    CHECK(req(d.addr, "POST", "/v1/keys", body, d.admin, err, sizeof err) == 201);
    CHECK(req(d.addr, "GET", "/v1/keys", NULL, d.token, err, sizeof err) == 200 &&
          strstr(err, "\"chain\""));
    CHECK(req(d.addr, "GET", "/v1/keys/chain", NULL, d.token, NULL, 0) == 200);
    CHECK(req(d.addr, "DELETE", "/v1/keys/chain", NULL, d.token, err, sizeof err) == 403);
    CHECK(req(d.addr, "GET", "/v1/keys/chain", NULL, d.token, NULL, 0) == 200);
    /* max_keys 2 */
    snprintf(body, sizeof body, "{\"id\": \"mult\", \"path\": \"%s\"}", zm);
    CHECK(req(d.addr, "POST", "/v1/keys", body, d.admin, err, sizeof err) == 201);
    snprintf(body, sizeof body, "{\"id\": \"third\", \"path\": \"%s\"}", zm);
    CHECK(req(d.addr, "POST", "/v1/keys", body, d.admin, err, sizeof err) == 409 &&
          strstr(err, "max_keys"));
    snprintf(body, sizeof body, "{\"id\": \"mult\", \"path\": \"%s\"}", zm);
    CHECK(req(d.addr, "POST", "/v1/keys", body, d.admin, err, sizeof err) == 200);   /* the same */
    CHECK(req(d.addr, "DELETE", "/v1/keys/mult", NULL, d.admin, err, sizeof err) == 200);
    snprintf(body, sizeof body, "{\"id\": \"third\", \"path\": \"%s\"}", zm);
    CHECK(req(d.addr, "POST", "/v1/keys", body, d.admin, err, sizeof err) == 201);
    /* priority critical: the admin token's */
    char *w = test_fixture_dup("chain", "witness.wtns");
    snprintf(body, sizeof body, "{\"key\": \"chain\", \"priority\": \"critical\", "
             "\"witnesses\": [\"%s\"]}", w);
    CHECK(req(d.addr, "POST", "/v1/proofs", body, d.token, err, sizeof err) == 403 &&
          strstr(err, "critical"));
    CHECK(req(d.addr, "POST", "/v1/proofs?priority=critical", body, d.token, NULL, 0) == 403);
    CHECK(req(d.addr, "POST", "/v1/proofs", body, d.admin, err, sizeof err) == 202);
    snprintf(body, sizeof body, "{\"key\": \"chain\", \"priority\": \"high\", "
             "\"witnesses\": [\"%s\"]}", w);
    CHECK(req(d.addr, "POST", "/v1/proofs", body, d.token, err, sizeof err) == 202);
    CHECK(daemon_stop(&d, 30) == 0);

    /* critical = any */
    if (daemon_start(&d, "admin-any", "--critical", "any", "--example", NULL)) {
        snprintf(body, sizeof body, "{\"key\": \"example\", \"priority\": \"critical\", "
                 "\"witnesses\": [\"%s\"]}", w);
        CHECK(req(d.addr, "POST", "/v1/proofs", body, d.token, err, sizeof err) == 202);
        CHECK(daemon_stop(&d, 30) == 0);
    } else {
        CHECK(0);
    }
    /* more keys at start than max_keys: refused */
    char k1[600], k2[600];
    snprintf(k1, sizeof k1, "a=%s", zc);
    snprintf(k2, sizeof k2, "b=%s", zm);
    CHECK(daemon_refused(err, sizeof err, "admin-many", "--listen", "127.0.0.1:0", "--max-keys",
                         "1", "--key", k1, "--key", k2, NULL) == 1);
    CHECK(strstr(err, "max_keys") != NULL);
    CHECK(daemon_refused(err, sizeof err, "admin-bad", "--listen", "127.0.0.1:0", "--critical",
                         "everyone", NULL) == 2);
    free(w);
    free(zc);
    free(zm);
    free(rc);
    return test_finish();
}

/* ---- cache ---- */

/* The one *.cuzkcache file in dir into out; false when there is not exactly one. */
static bool find_cache(const char *dir, char *out, size_t n)
{
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 10 && !strcmp(e->d_name + l - 10, ".cuzkcache")) {
            snprintf(out, n, "%s/%s", dir, e->d_name);
            found++;
        }
    }
    if (d)
        closedir(d);
    return found == 1;
}

static bool prove_one(const char *addr, const char *key, const char *wtns)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"key\": \"%s\", \"witnesses\": [\"%s\"]}", key, wtns);
    resp r;
    char id[200] = "";
    if (http(&r, addr, "POST", "/v1/proofs", body) && r.status == 202)
        snprintf(id, sizeof id, "%s", jstr(r.json, "id"));
    resp_free(&r);
    json_t *f = id[0] ? wait_final(addr, id, 60) : NULL;
    bool ok = f && !strcmp(jstr(f, "state"), "done");
    json_decref(f);
    return ok;
}

static int test_cache(void)
{
    char cp[400], cmd[1400], target[400], planted[500], state[400], cdir[420], cache[900];
    snprintf(cp, sizeof cp, "%s/chain.params", tmp_dir);
    char *r1cs = test_fixture_dup("chain", "circuit.r1cs");
    char *w = test_fixture_dup("chain", "witness.wtns");
    snprintf(cmd, sizeof cmd, "%s/cuzk setup %s %s > /dev/null", bin_dir, r1cs, cp);
    CHECK(system(cmd) == 0);
    snprintf(target, sizeof target, "%s/victim", tmp_dir);
    write_all(target, "ORIGINAL\n", 9);
    daemon_proc d;
    if (!daemon_start(&d, "cache", NULL)) {
        CHECK(0);
        return test_finish();
    }
    snprintf(state, sizeof state, "%s", d.state);
    snprintf(cdir, sizeof cdir, "%s/cache", state);
    /* the name the temporary file had (PATH.cuzkcache.tmp.PID): a link to the victim */
    snprintf(planted, sizeof planted, "%s.cuzkcache.tmp.%ld", cp, (long)d.pid);
    CHECK(symlink(target, planted) == 0);
    char body[2048], err[2048];
    snprintf(body, sizeof body,
             "{\"id\": \"cp\", \"path\": \"%s\", \"r1cs\": \"%s\", \"cache\": true}", cp, r1cs);
    CHECK(req(d.addr, "POST", "/v1/keys", body, d.admin, err, sizeof err) == 201);
    char *v = read_file(target, NULL);
    CHECK(v && !strcmp(v, "ORIGINAL\n"));   /* the link was not followed */
    free(v);
    struct stat st;
    CHECK(stat(cdir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    snprintf(cache, sizeof cache, "%s/secret", cdir);
    CHECK(lstat(cache, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600 &&
          st.st_size == 32);
    snprintf(cache, sizeof cache, "%s.cuzkcache", cp);
    CHECK(access(cache, F_OK) != 0);   /* nothing beside the key */
    CHECK(find_cache(cdir, cache, sizeof cache));
    CHECK(prove_one(d.addr, "cp", w));
    CHECK(daemon_stop(&d, 30) == 0);
    size_t len = 0;
    unsigned char *orig = (unsigned char *)read_file(cache, &len);
    CHECK(orig && len > 2000);
    if (!orig)
        return test_finish();

    /* modified in place (a byte of a point in the middle): rejected, rebuilt */
    char kflag[1200];
    snprintf(kflag, sizeof kflag, "cp=%s,r1cs=%s,cache", cp, r1cs);
    unsigned char *bad = malloc(len);
    memcpy(bad, orig, len);
    bad[len / 2] ^= 0x20;
    write_all(cache, bad, len);
    if (daemon_start(&d, "cache2", "--state-dir", state, "--key", kflag, NULL)) {
        size_t l2 = 0;
        unsigned char *now = (unsigned char *)read_file(cache, &l2);
        CHECK(now && l2 == len && !memcmp(now, orig, len));   /* rewritten from the key */
        free(now);
        CHECK(prove_one(d.addr, "cp", w));
        CHECK(daemon_stop(&d, 30) == 0);
    } else {
        CHECK(0);
    }
    /* a cache the daemon did not make (another secret): rejected, rebuilt with its own tag */
    snprintf(planted, sizeof planted, "%s/secret", cdir);
    CHECK(unlink(planted) == 0);
    /* and the directory stays bounded: with max_keys 1, the caches of no registered key go,
     * and an unfinished write's temporary file of an hour ago */
    char stale[3][600];
    struct timespec ago[2] = {{0, UTIME_NOW}, {time(NULL) - 7200, 0}};
    for (int i = 0; i < 3; i++) {
        snprintf(stale[i], sizeof stale[i], i < 2 ? "%s/gone%d-0011223344556677.cuzkcache"
                                                  : "%s/x.cuzkcache.tmp.AbC%d", cdir, i);
        write_all(stale[i], "stale", 5);
        CHECK(utimensat(AT_FDCWD, stale[i], ago, 0) == 0);
    }
    if (daemon_start(&d, "cache3", "--state-dir", state, "--key", kflag, "--max-keys", "1",
                     NULL)) {
        for (int i = 0; i < 3; i++)
            CHECK(access(stale[i], F_OK) != 0);
        char one[900];
        CHECK(find_cache(cdir, one, sizeof one) && !strcmp(one, cache));
        size_t l3 = 0;
        unsigned char *now = (unsigned char *)read_file(cache, &l3);
        CHECK(now && l3 == len && memcmp(now, orig, len - 32) == 0 &&
              memcmp(now + len - 32, orig + len - 32, 32) != 0);   /* only the tag differs */
        free(now);
        CHECK(access(planted, R_OK) == 0);   /* a new secret */
        CHECK(prove_one(d.addr, "cp", w));
        /* removing the key removes its cache */
        CHECK(req(d.addr, "DELETE", "/v1/keys/cp", NULL, d.admin, err, sizeof err) == 200);
        CHECK(access(cache, F_OK) != 0);
        CHECK(daemon_stop(&d, 30) == 0);
    } else {
        CHECK(0);
    }
    free(bad);
    free(orig);
    free(r1cs);
    free(w);
    return test_finish();
}

int main(int argc, char **argv)
{
    static const daemon_scenario sc[] = {
        {"security_token", test_token},
        {"security_empty", test_empty},
        {"security_noauth", test_noauth},
        {"security_browser", test_browser},
        {"security_admin", test_admin},
        {"security_cache", test_cache},
    };
    return daemon_test_main(argc, argv, "test_security", sc, sizeof sc / sizeof sc[0]);
}
