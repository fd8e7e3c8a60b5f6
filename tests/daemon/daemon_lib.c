/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon tests' shared part (daemon_lib.h). */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/daemon_lib.h"
#include "test.h"
#include "test_files.h"

const char *bin_dir, *src_dir;
bool daemon_default_any_path = true;
char tmp_dir[256];

/* ---- daemon process ---- */


static pid_t live_pids[8];

void kill_all(void)
{
    for (int i = 0; i < 8; i++)
        if (live_pids[i] > 0) {
            kill(live_pids[i], SIGKILL);
            waitpid(live_pids[i], NULL, 0);
            live_pids[i] = 0;
        }
}

static void on_fatal(int sig)
{
    kill_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

void track(pid_t p, bool add)
{
    for (int i = 0; i < 8; i++)
        if (add ? live_pids[i] == 0 : live_pids[i] == p) {
            live_pids[i] = add ? p : 0;
            return;
        }
}

/* The tokens of the daemons started, by address (http_ex sends them). */
static struct {
    char addr[256], addr2[256];
    char token[520], admin[520];
} tokens[16];

static void tokens_forget(const char *addr)
{
    for (int i = 0; i < 16; i++)
        if (addr[0] && (!strcmp(tokens[i].addr, addr) || !strcmp(tokens[i].addr2, addr)))
            memset(&tokens[i], 0, sizeof tokens[i]);
}

static void tokens_remember(const daemon_proc *d)
{
    tokens_forget(d->addr);
    for (int i = 0; i < 16; i++)
        if (!tokens[i].addr[0]) {
            snprintf(tokens[i].addr, sizeof tokens[i].addr, "%s", d->addr);
            snprintf(tokens[i].addr2, sizeof tokens[i].addr2, "%s", d->addr2);
            snprintf(tokens[i].token, sizeof tokens[i].token, "%s", d->token);
            snprintf(tokens[i].admin, sizeof tokens[i].admin, "%s", d->admin);
            return;
        }
}

/* The first line of a file into out ("" when unreadable). */
static void first_line(const char *path, char *out, size_t n)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(out, (int)n, f))
            out[0] = 0;
        fclose(f);
    }
    out[strcspn(out, "\r\n")] = 0;
}

/* Starts cuzk-daemon with the given flags (NULL-terminated) plus a free loopback port, an
 * address file and a log file. Returns false when it does not come up within 20 s. */
bool daemon_start(daemon_proc *d, const char *tag, ...)
{
    const char *argv[64];
    int n = 0;
    char exe[512], addrf[300];
    snprintf(exe, sizeof exe, "%s/cuzk-daemon", bin_dir);
    snprintf(addrf, sizeof addrf, "%s/%s.addr", tmp_dir, tag);
    snprintf(d->log, sizeof d->log, "%s/%s.log", tmp_dir, tag);
    unlink(addrf);
    argv[n++] = exe;
    va_list ap;
    va_start(ap, tag);
    bool listen_given = false, state_given = false, no_auth = false, allow_given = false;
    const char *token = NULL, *token_file = NULL, *admin_file = NULL;
    snprintf(d->state, sizeof d->state, "%s/%s.state", tmp_dir, tag);
    for (const char *a, *prev = ""; (a = va_arg(ap, const char *)) && n < 56; prev = a) {
        if (!strcmp(a, "--listen"))
            listen_given = true;
        if (!strcmp(a, "--state-dir"))
            state_given = true;
        if (!strcmp(prev, "--state-dir"))
            snprintf(d->state, sizeof d->state, "%s", a);
        if (!strcmp(a, "--no-auth"))
            no_auth = true;
        if (!strcmp(prev, "--token"))
            token = a;
        if (!strcmp(prev, "--token-file"))
            token_file = a;
        if (!strcmp(prev, "--admin-token-file"))
            admin_file = a;
        if (!strcmp(a, "--allow-dir"))
            allow_given = true;
        argv[n++] = a;
    }
    va_end(ap);
    if (!listen_given) {
        argv[n++] = "--listen";
        argv[n++] = "127.0.0.1:0";
    }
    if (!state_given) {   /* a state directory of this daemon's own */
        argv[n++] = "--state-dir";
        argv[n++] = d->state;
    }
    if (!allow_given && daemon_default_any_path)   /* witness paths as the scenarios name them */
        argv[n++] = "--allow-any-path";
    argv[n++] = "--address-file";
    argv[n++] = addrf;
    argv[n++] = "--log-file";
    argv[n++] = d->log;
    argv[n] = NULL;
    pid_t p = fork();
    if (p < 0)
        return false;
    if (p == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    d->pid = p;
    track(p, true);
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(addrf, "r");
        if (f) {
            bool ok = fgets(d->addr, sizeof d->addr, f) != NULL;
            if (!fgets(d->addr2, sizeof d->addr2, f))
                d->addr2[0] = 0;
            fclose(f);
            d->addr[strcspn(d->addr, "\n")] = 0;
            d->addr2[strcspn(d->addr2, "\n")] = 0;
            if (ok) {
                char path[400];
                d->token[0] = d->admin[0] = 0;
                if (!no_auth) {
                    snprintf(path, sizeof path, "%s/token", d->state);
                    if (token)
                        snprintf(d->token, sizeof d->token, "%s", token);
                    else
                        first_line(token_file ? token_file : path, d->token, sizeof d->token);
                    snprintf(path, sizeof path, "%s/admin-token", d->state);
                    first_line(admin_file ? admin_file : path, d->admin, sizeof d->admin);
                }
                tokens_remember(d);
                return true;
            }
        }
        int st;
        if (waitpid(p, &st, WNOHANG) == p) {
            track(p, false);
            d->pid = 0;
            fprintf(stderr, "cuzk-daemon exited at start (log %s)\n", d->log);
            return false;
        }
        usleep(100000);
    }
    fprintf(stderr, "cuzk-daemon did not come up (log %s)\n", d->log);
    return false;
}

/* SIGTERM and wait up to timeout_s; returns the exit status, or -1 after a SIGKILL. */
int daemon_stop(daemon_proc *d, double timeout_s)
{
    if (d->pid <= 0)
        return -1;
    tokens_forget(d->addr);
    kill(d->pid, SIGTERM);
    int st = 0;
    for (int i = 0; i < (int)(timeout_s * 20); i++) {
        if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
            track(d->pid, false);
            d->pid = 0;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        usleep(50000);
    }
    kill(d->pid, SIGKILL);
    waitpid(d->pid, &st, 0);
    track(d->pid, false);
    d->pid = 0;
    fprintf(stderr, "cuzk-daemon did not exit %.0f s after SIGTERM\n", timeout_s);
    return -1;
}

void daemon_kill(daemon_proc *d)
{
    if (d->pid <= 0)
        return;
    kill(d->pid, SIGKILL);
    waitpid(d->pid, NULL, 0);
    track(d->pid, false);
    d->pid = 0;
}

/* ---- HTTP ---- */


static size_t on_body(char *p, size_t sz, size_t n, void *u)
{
    resp *r = u;
    char *b = realloc(r->body, r->len + sz * n + 1);
    if (!b)
        return 0;
    memcpy(b + r->len, p, sz * n);
    r->body = b;
    r->len += sz * n;
    b[r->len] = 0;
    return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *u)
{
    resp *r = u;
    if (sz * n > 12 && strncasecmp(p, "Retry-After:", 12) == 0)
        snprintf(r->retry_after, sizeof r->retry_after, "%.*s", (int)strcspn(p + 12, "\r\n"), p + 12);
    return sz * n;
}

void resp_free(resp *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

/* Sent with every request when set (the fuzz scenario's bearer token), unless extra_header
 * is an Authorization header of its own ("Authorization:" alone sends none). */
const char *http_auth;
long http_timeout_s = 120;

/* One request. addr is HOST:PORT or unix:PATH. extra_header may be NULL. The path is sent
 * as given (dot segments too). */
bool http_ex(resp *r, const char *addr, const char *method, const char *path,
             const char *ctype, const void *body, size_t len, const char *extra_header)
{
    memset(r, 0, sizeof *r);
    CURL *c = curl_easy_init();
    if (!c)
        return false;
    char url[1024];
    if (strncmp(addr, "unix:", 5) == 0) {
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, addr + 5);
        snprintf(url, sizeof url, "http://localhost%s", path);
    } else {
        snprintf(url, sizeof url, "http://%s%s", addr, path);
    }
    struct curl_slist *h = NULL;
    char ct[128];
    if (ctype) {
        snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
        h = curl_slist_append(h, ct);
    }
    if (extra_header)
        h = curl_slist_append(h, extra_header);
    bool own_auth = extra_header && strncasecmp(extra_header, "Authorization:", 14) == 0;
    char bearer[600];
    if (http_auth && !own_auth) {
        h = curl_slist_append(h, http_auth);
    } else if (!own_auth) {
        /* the daemon's tokens: the operator's for what only the operator may do */
        bool admin = (!strcmp(method, "POST") && !strncmp(path, "/v1/keys", 8) &&
                      (path[8] == 0 || path[8] == '?')) ||
                     (!strcmp(method, "DELETE") && !strncmp(path, "/v1/keys/", 9)) ||
                     (!strcmp(method, "POST") && !strncmp(path, "/v1/proofs", 10) &&
                      ((body && memmem(body, len, "\"critical\"", 10)) ||
                       strstr(path, "priority=critical")));
        for (int i = 0; i < 16; i++)
            if (tokens[i].addr[0] &&
                (!strcmp(tokens[i].addr, addr) || !strcmp(tokens[i].addr2, addr))) {
                const char *t = admin && tokens[i].admin[0] ? tokens[i].admin : tokens[i].token;
                if (t[0]) {
                    snprintf(bearer, sizeof bearer, "Authorization: Bearer %s", t);
                    h = curl_slist_append(h, bearer);
                }
                break;
            }
    }
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, http_timeout_s);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK) {
        fprintf(stderr, "%s %s: %s\n", method, path, curl_easy_strerror(rc));
        return false;
    }
    if (r->body)
        r->json = json_loads(r->body, 0, NULL);
    return true;
}

bool http(resp *r, const char *addr, const char *method, const char *path, const char *json)
{
    return http_ex(r, addr, method, path, json ? "application/json" : NULL, json,
                   json ? strlen(json) : 0, NULL);
}

const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

bool add_key(const char *addr, const char *id, const char *circuit)
{
    char *zk = test_fixture_dup(circuit, "circuit.zkey"), body[1024];
    snprintf(body, sizeof body, "{\"id\": \"%s\", \"path\": \"%s\"}", id, zk);
    free(zk);
    resp r;
    bool ok = http(&r, addr, "POST", "/v1/keys", body) && (r.status == 201 || r.status == 200);
    if (!ok)
        fprintf(stderr, "POST /v1/keys %s: %ld %s\n", id, r.status, r.body ? r.body : "");
    resp_free(&r);
    return ok;
}

/* Submits a job of n copies of the circuit's fixture witness. Returns the job id (a
 * malloc'd string) or NULL; *status gets the HTTP status. */
char *submit(const char *addr, const char *key, const char *circuit, const char *prio,
             int n, long *status)
{
    char *w = test_fixture_dup(circuit, "witness.wtns");
    size_t cap = 256 + (size_t)n * (strlen(w) + 4);
    char *body = malloc(cap);
    int o = snprintf(body, cap, "{\"key\": \"%s\", \"priority\": \"%s\", \"witnesses\": [", key, prio);
    for (int i = 0; i < n; i++)
        o += snprintf(body + o, cap - (size_t)o, "%s\"%s\"", i ? ", " : "", w);
    snprintf(body + o, cap - (size_t)o, "]}");
    resp r;
    char *id = NULL;
    if (http(&r, addr, "POST", "/v1/proofs", body) && r.status == 202)
        id = strdup(jstr(r.json, "id"));
    if (status)
        *status = r.status;
    if (!id && (!status || r.status == 0))
        fprintf(stderr, "submit: %ld %s\n", r.status, r.body ? r.body : "");
    resp_free(&r);
    free(body);
    free(w);
    return id;
}

/* Long-polls a job until it is final (up to timeout_s); returns its JSON (owned) or NULL. */
json_t *wait_final(const char *addr, const char *id, double timeout_s)
{
    char path[128];
    for (double waited = 0; waited <= timeout_s; waited += 5) {
        snprintf(path, sizeof path, "/v1/proofs/%s?wait=5", id);
        resp r;
        bool answered = http(&r, addr, "GET", path, NULL);
        if (answered && r.status == 503) {   /* a farm's store away for a moment */
            resp_free(&r);
            usleep(200000);
            continue;
        }
        if (!answered || r.status != 200 || !r.json) {
            resp_free(&r);
            return NULL;
        }
        const char *st = jstr(r.json, "state");
        if (!strcmp(st, "done") || !strcmp(st, "failed") || !strcmp(st, "cancelled")) {
            json_t *j = json_incref(r.json);
            resp_free(&r);
            return j;
        }
        resp_free(&r);
    }
    return NULL;
}

static void *kill_later_main(void *arg)
{
    kill_later *k = arg;
    usleep(k->delay_ms * 1000u);
    kill(k->pid, SIGKILL);
    return NULL;
}

void kill_later_start(kill_later *k)
{
    pthread_create(&k->th, NULL, kill_later_main, k);
}

void kill_later_join(kill_later *k)
{
    pthread_join(k->th, NULL);
}

unsigned dir_entries(const char *path)
{
    DIR *d = opendir(path);
    unsigned n = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        n += de->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

int verify_job_proofs(json_t *f, const char *vk, const char *tag, int i, int parts,
                      int *n_proofs, FILE *ms)
{
    bool done = f && !strcmp(jstr(f, "state"), "done");
    json_t *proofs = done ? json_object_get(f, "proofs") : NULL;
    json_t *pubs = done ? json_object_get(f, "public") : NULL;
    CHECK(json_array_size(proofs) == (size_t)parts);
    int verified = 0;
    for (size_t p = 0; done && p < json_array_size(proofs); p++) {
        char pp[400], up[400], cmd[1600];
        snprintf(pp, sizeof pp, "%s/%s-proof_%d_%zu.json", tmp_dir, tag, i, p);
        snprintf(up, sizeof up, "%s/%s-public_%d_%zu.json", tmp_dir, tag, i, p);
        CHECK(json_dump_file(json_array_get(proofs, p), pp, 0) == 0);
        CHECK(json_dump_file(json_array_get(pubs, p), up, 0) == 0);
        snprintf(cmd, sizeof cmd, "%s/cuzk verify %s %s %s > /dev/null 2>&1", bin_dir, vk, up, pp);
        (*n_proofs)++;
        bool ok = system(cmd) == 0;
        CHECK(ok);
        verified += ok;
        if (ms && i % 8 == 0)
            fprintf(ms, "%s\t%s\t%s\n", vk, up, pp);
    }
    return verified;
}

/* The file's bytes, 0-terminated (the test reads JSON as text too); NULL when unreadable. */
char *read_file(const char *path, size_t *len)
{
    size_t n;
    char *b = (char *)read_all_or_null(path, &n);
    if (len)
        *len = n;
    return b;
}

char *b64(const unsigned char *p, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(4 * ((n + 2) / 3) + 1), *q = o;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *q++ = t[v >> 18 & 63];
        *q++ = t[v >> 12 & 63];
        *q++ = i + 1 < n ? t[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? t[v & 63] : '=';
    }
    *q = 0;
    return o;
}

int count_in_file(const char *path, const char *needle)
{
    size_t n;
    char *t = read_file(path, &n);
    int c = 0;
    for (char *p = t; p && (p = strstr(p, needle)); p += strlen(needle))
        c++;
    free(t);
    return c;
}

bool snarkjs_present(void)
{
    char p[512];
    snprintf(p, sizeof p, "%s/tests/js/node_modules/snarkjs/package.json", src_dir);
    return access(p, R_OK) == 0;
}

int daemon_test_main(int argc, char **argv, const char *prog, const daemon_scenario *sc,
                     size_t n)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s", prog);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "%c%s", i ? '|' : ' ', sc[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    bin_dir = getenv("CUZK_BIN");
    src_dir = getenv("CUZK_SRC");
    if (!bin_dir || !src_dir) {
        fprintf(stderr, "CUZK_BIN and CUZK_SRC must be set\n");
        return 2;
    }
    size_t k = 0;
    while (k < n && strcmp(sc[k].name, argv[1]) != 0)
        k++;
    if (k == n) {
        fprintf(stderr, "unknown scenario %s\n", argv[1]);
        return 2;
    }
    char name[64];
    snprintf(name, sizeof name, "%s %s", prog, argv[1]);
    test_init(name);
    test_tmpdir_make(tmp_dir, sizeof tmp_dir, prog);
    atexit(kill_all);
    signal(SIGSEGV, on_fatal);
    signal(SIGABRT, on_fatal);
    signal(SIGINT, on_fatal);
    signal(SIGTERM, on_fatal);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = sc[k].run();
    kill_all();
    curl_global_cleanup();
    if (rc == 0) {   /* keep the logs of a failed run */
        test_dir_remove(tmp_dir);
    } else {
        printf("logs kept in %s\n", tmp_dir);
    }
    return rc;
}
