/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench's commands other than micro: option parsing, the batch runner (COUNT jobs on
 * CONCURRENCY client threads, a progress line), and the daemon's status, metrics, preload
 * and evict.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "config.h"

/* Default daemon address: loopback, the daemon's default port. */
#define BENCH_DEFAULT_ADDR "127.0.0.1:9820"
/* Default per-job limit in seconds before the client cancels the job. */
#define BENCH_DEFAULT_TIMEOUT_S 600.0
/* Milliseconds between redraws of the progress line on a terminal. */
#define BENCH_PROGRESS_MS 250

static const char usage_text[] =
    "  single  [options]                one job (its partitions: --witness ...), timings, proofs\n"
    "  batch   -c COUNT -j CONC [options] COUNT jobs from CONC concurrent clients\n"
    "  status  [--addr A] [--token T]   the daemon's GET /v1/status\n"
    "  metrics [--addr A] [--token T]   the daemon's GET /metrics (Prometheus text)\n"
    "  health  [--addr A]               the daemon's GET /healthz: exit 0 when it answers ok\n"
    "  preload --zkey PATH [--key ID]   register and load a proving key at the daemon\n"
    "  evict   --key ID                 evict a key from the daemon\n"
    "options:\n"
    "  --addr HOST:PORT|unix:PATH  daemon address (default " BENCH_DEFAULT_ADDR ", or $CUZK_ADDR)\n"
    "  --token T                   bearer token (or $CUZK_TOKEN; by default the first line of\n"
    "                              STATE_DIR/admin-token when this user may read it, else of\n"
    "                              STATE_DIR/token: a daemon's own tokens)\n"
    "  --token-file FILE           bearer token: FILE's first line\n"
    "  --state-dir DIR             the daemon's state directory, where its tokens are\n"
    "                              (default: cuzk-daemon's, /var/lib/cuzk as root, else\n"
    "                              $XDG_STATE_HOME/cuzk or ~/.local/state/cuzk)\n"
    "  --key ID                    key id at the daemon (default: the --zkey file name without .zkey)\n"
    "  --zkey PATH                 proving key: registered with the daemon, or loaded with --in-process\n"
    "  --witness PATH              a .wtns file; repeat for the partitions of one job\n"
    "  --priority P                low, normal (default), high, critical, or mixed (cycles)\n"
    "  --verify-with VK.json       check every returned proof against this verification key\n"
    "  --in-process                prove in this process through the daemon's engine, no daemon\n"
    "  --direct                    in this process, the prover's calls without the engine\n"
    "  --engine-log                in-process engine: its pipeline log (info level) on stderr\n"
    "  --threads N                 in-process: library threads\n"
    "  --gpu NAME=VALUE            in-process: a GPU option (repeatable; the daemon's [gpu] names:\n"
    "                              synth, bases, msm_chunk, witness, b_g2, params_check_min)\n"
    "  --timeout S                 per-job limit in seconds, then the job is cancelled (default 600)\n"
    "  --out-dir DIR               single: write proof_N.json and public_N.json there\n"
    "  --json                      machine-readable report on stdout\n"
    "  --progress                  progress line on stderr even when it is not a terminal\n"
    "  --quiet                     no per-job lines\n"
    "exit status: 0 every job done and every check passed; 1 a job failed or a check failed;\n"
    "2 usage error, daemon unreachable or refusing the setup\n";

void bench_usage_cmds(FILE *f) { fputs(usage_text, f); }

static int usage_err(const char *cmd, const char *msg)
{
    fprintf(stderr, "cuzk-bench %s: %s\n(cuzk-bench --help lists the options)\n", cmd, msg);
    return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The first line of path into out; false when it cannot be read or the line is empty. */
static bool read_token_file(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(out, (int)n, f) != NULL;
    fclose(f);
    if (ok)
        out[strcspn(out, "\r\n")] = 0;
    return ok && out[0];
}

/* Parses the options shared by the commands; returns 0, or 2 after a message. */
static int parse_opts(const char *cmd, int argc, char **argv, bench_opts *o, const char ***wit_store)
{
    memset(o, 0, sizeof *o);
    o->addr = getenv("CUZK_ADDR") && getenv("CUZK_ADDR")[0] ? getenv("CUZK_ADDR") : BENCH_DEFAULT_ADDR;
    o->token = getenv("CUZK_TOKEN");
    o->priority = BENCH_PRIO_NORMAL;
    o->count = 1;
    o->concurrency = 1;
    o->timeout_s = BENCH_DEFAULT_TIMEOUT_S;
    const char **wit = calloc((size_t)argc + 1, sizeof *wit);
    if (!wit)
        return usage_err(cmd, "out of memory");
    *wit_store = wit;
    o->witness = wit;
    char msg[4400];
    const char *token_file = NULL, *state_dir = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG()                                                     \
    do {                                                               \
        if (!v) {                                                      \
            snprintf(msg, sizeof msg, "%s needs a value", a);          \
            return usage_err(cmd, msg);                                \
        }                                                              \
        i++;                                                           \
    } while (0)
        if (!strcmp(a, "--addr")) {
            NEED_ARG();
            o->addr = v;
        } else if (!strcmp(a, "--token")) {
            NEED_ARG();
            o->token = v;
            token_file = NULL;
        } else if (!strcmp(a, "--token-file")) {
            NEED_ARG();
            token_file = v;
        } else if (!strcmp(a, "--state-dir")) {
            NEED_ARG();
            state_dir = v;
        } else if (!strcmp(a, "--key")) {
            NEED_ARG();
            o->key = v;
        } else if (!strcmp(a, "--zkey")) {
            NEED_ARG();
            o->zkey = v;
        } else if (!strcmp(a, "--witness")) {
            NEED_ARG();
            wit[o->n_witness++] = v;
        } else if (!strcmp(a, "--priority")) {
            NEED_ARG();
            int p = -1;
            for (int k = 0; k < BENCH_NPRIO; k++)
                if (!strcmp(v, bench_prio_names[k]))
                    p = k;
            if (!strcmp(v, "mixed"))
                p = BENCH_PRIO_MIXED;
            if (p < 0) {
                snprintf(msg, sizeof msg, "--priority takes low, normal, high, critical or mixed, not '%s'", v);
                return usage_err(cmd, msg);
            }
            o->priority = p;
        } else if (!strcmp(a, "--verify-with")) {
            NEED_ARG();
            o->verify_with = v;
        } else if (!strcmp(a, "--out-dir")) {
            NEED_ARG();
            o->out_dir = v;
        } else if (!strcmp(a, "-c") || !strcmp(a, "--count")) {
            NEED_ARG();
            if (parse_long(v, 1, 10000000, &o->count))
                return usage_err(cmd, "-c takes a number of jobs from 1 to 10000000");
        } else if (!strcmp(a, "-j") || !strcmp(a, "--concurrency")) {
            NEED_ARG();
            if (parse_long(v, 1, 4096, &o->concurrency))
                return usage_err(cmd, "-j takes a number of concurrent clients from 1 to 4096");
        } else if (!strcmp(a, "--threads")) {
            NEED_ARG();
            long t;
            if (parse_long(v, 1, 4096, &t))
                return usage_err(cmd, "--threads takes a number from 1 to 4096");
            o->threads = (unsigned)t;
        } else if (!strcmp(a, "--gpu")) {
            NEED_ARG();
            const char *eq = strchr(v, '=');
            char name[64];
            snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - v) : 0, v);
            if (!eq || cuzk_gpu_opts_set(&o->gpu, name, eq + 1) != CUZK_OK) {
                snprintf(msg, sizeof msg, "--gpu %s: %s", v,
                         eq ? cuzk_error_detail() : "takes NAME=VALUE");
                return usage_err(cmd, msg);
            }
        } else if (!strcmp(a, "--timeout")) {
            NEED_ARG();
            char *end;
            o->timeout_s = strtod(v, &end);
            if (end == v || *end || !(o->timeout_s > 0))
                return usage_err(cmd, "--timeout takes a positive number of seconds");
        } else if (!strcmp(a, "--in-process")) {
            o->in_process = true;
        } else if (!strcmp(a, "--direct")) {
            o->in_process = true;
            o->direct = true;
        } else if (!strcmp(a, "--engine-log")) {
            o->engine_log = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--progress")) {
            o->progress = true;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o->quiet = true;
        } else {
            snprintf(msg, sizeof msg, "unknown option '%s'", a);
            return usage_err(cmd, msg);
        }
#undef NEED_ARG
    }
    /* the token: --token, --token-file, $CUZK_TOKEN, else the daemon's own files */
    static char tokbuf[600];
    if (token_file) {
        if (!read_token_file(token_file, tokbuf, sizeof tokbuf)) {
            snprintf(msg, sizeof msg, "--token-file %s: cannot read a token (its first line)",
                     token_file);
            return usage_err(cmd, msg);
        }
        o->token = tokbuf;
    } else if (!o->token || !o->token[0]) {
        char dir[4096], path[4200];
        o->token = NULL;
        if (state_dir)
            bench_copy(dir, sizeof dir, state_dir);
        else if (!tool_default_state_dir(tool_env_get(), dir, sizeof dir))
            dir[0] = 0;
        static const char *const names[] = {"admin-token", "token"};
        for (int k = 0; k < 2 && dir[0] && !o->token; k++) {
            snprintf(path, sizeof path, "%s/%s", dir, names[k]);
            if (read_token_file(path, tokbuf, sizeof tokbuf))
                o->token = tokbuf;
        }
    }
    /* default key id: the zkey's file name without its directory and .zkey */
    static char keybuf[256];
    if (!o->key && o->zkey) {
        const char *b = strrchr(o->zkey, '/');
        b = b ? b + 1 : o->zkey;
        bench_copy(keybuf, sizeof keybuf, b);
        size_t n = strlen(keybuf);
        if (n > 5 && !strcmp(keybuf + n - 5, ".zkey"))
            keybuf[n - 5] = 0;
        o->key = keybuf;
    }
    return 0;
}

/* ---- the batch runner ---- */

typedef struct {
    const bench_opts *o;
    bench_job *jobs;
    const cuzk_vk *vk;
    bench_inproc *ip;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long next, finished, failed, vfail, running_threads;
    double t0;
    bool show_progress, tty;
    int progress_drawn;
} batch;

static void progress_draw(batch *b, bool final)
{
    double el = (bench_now_ms() - b->t0) / 1e3;
    long inflight = b->next - b->finished;
    if (b->tty) {
        fprintf(stderr, "\r\033[Kbatch: %ld/%ld done, %ld failed, %ld check failures, %ld in flight, %.1f s%s",
                b->finished, b->o->count, b->failed, b->vfail, inflight, el, final ? "\n" : "");
        b->progress_drawn = !final;
    } else {
        fprintf(stderr, "batch: %ld/%ld done, %ld failed, %ld check failures, %ld in flight, %.1f s\n",
                b->finished, b->o->count, b->failed, b->vfail, inflight, el);
    }
    fflush(stderr);
}

static void *batch_worker(void *arg)
{
    batch *b = arg;
    const bench_opts *o = b->o;
    bench_conn *c = NULL;
    if (!o->in_process) {
        c = bench_conn_new(o);
        if (!c) {
            fprintf(stderr, "cuzk-bench: cannot create an HTTP client (libcurl)\n");
        }
    }
    for (;;) {
        pthread_mutex_lock(&b->mu);
        long i = b->next < o->count ? b->next++ : -1;
        pthread_mutex_unlock(&b->mu);
        if (i < 0)
            break;
        bench_job *j = &b->jobs[i];
        j->index = i;
        j->priority = o->priority == BENCH_PRIO_MIXED ? (int)(i % BENCH_NPRIO) : o->priority;
        for (int s = 0; s < BENCH_NSTAGES; s++)
            j->t[s] = -1;
        if (o->in_process)
            bench_inproc_run_job(b->ip, o, j);
        else if (c)
            bench_daemon_run_job(c, o, j);
        else
            snprintf(j->state, sizeof j->state, "error"), snprintf(j->error, sizeof j->error, "no HTTP client");
        if (!strcmp(j->state, "done") && b->vk)
            bench_verify_job(j, b->vk);
        pthread_mutex_lock(&b->mu);
        b->finished++;
        if (strcmp(j->state, "done"))
            b->failed++;
        b->vfail += j->verify_fail;
        if (!o->quiet && !o->json) {
            if (b->progress_drawn)
                fprintf(stderr, "\r\033[K");
            bench_print_job(stdout, j, o->count);
            fflush(stdout);
            b->progress_drawn = 0;
        }
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
    }
    bench_conn_free(c);
    pthread_mutex_lock(&b->mu);
    b->running_threads--;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* Checks the daemon answers before a batch, with a clear message when it does not. */
static int daemon_preflight(const char *cmd, const bench_opts *o)
{
    bench_conn *c = bench_conn_new(o);
    if (!c) {
        fprintf(stderr, "cuzk-bench %s: cannot create an HTTP client (libcurl)\n", cmd);
        return 2;
    }
    char err[800];
    long status = 0;
    char *body = NULL;
    if (bench_http(c, "GET", "/healthz", NULL, &status, &body, err, sizeof err)) {
        fprintf(stderr, "cuzk-bench %s: %s\n  (is cuzk-daemon running? start it with: cuzk-daemon --listen %s)\n",
                cmd, err, o->addr);
        bench_conn_free(c);
        return 2;
    }
    if (status / 100 != 2) {
        char why[500];
        bench_http_error_text(why, sizeof why, status, body);
        fprintf(stderr, "cuzk-bench %s: the daemon at %s answered GET /healthz with %s\n", cmd, o->addr, why);
        free(body);
        bench_conn_free(c);
        return 2;
    }
    free(body);
    if (o->zkey && bench_daemon_register_key(c, o, err, sizeof err)) {
        fprintf(stderr, "cuzk-bench %s: %s\n", cmd, err);
        bench_conn_free(c);
        return 2;
    }
    bench_conn_free(c);
    return 0;
}

static int cmd_prove(const char *cmd, int argc, char **argv, bool single)
{
    bench_opts o;
    const char **wit = NULL;
    int rc = parse_opts(cmd, argc, argv, &o, &wit);
    if (rc) {
        free(wit);
        return rc;
    }
    if (single) {
        o.count = 1;
        o.concurrency = 1;
    } else if (o.out_dir) {
        free(wit);
        return usage_err(cmd, "--out-dir is for single");
    }
    if (o.n_witness == 0) {
        free(wit);
        return usage_err(cmd, "give at least one --witness PATH (one per partition of a job)");
    }
    if (o.in_process && !o.zkey) {
        free(wit);
        return usage_err(cmd, "--in-process needs --zkey PATH");
    }
    if (!o.in_process && !o.key) {
        free(wit);
        return usage_err(cmd, "give --key ID (a key the daemon has) or --zkey PATH (registered first)");
    }
    if (o.concurrency > o.count)
        o.concurrency = o.count;

    cuzk_vk *vk = NULL;
    if (o.verify_with) {
        cuzk_err e = cuzk_vk_read_json(&vk, o.verify_with);
        if (e != CUZK_OK) {
            fprintf(stderr, "cuzk-bench %s: --verify-with: %s\n", cmd,
                    cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
            free(wit);
            return 2;
        }
    }

    batch b = {.o = &o, .vk = vk};
    double key_load_ms = -1;
    char err[800];
    if (o.in_process) {
        if (bench_inproc_open(&b.ip, &o, &key_load_ms, err, sizeof err)) {
            fprintf(stderr, "cuzk-bench %s: --zkey: %s\n", cmd, err);
            cuzk_vk_free(vk);
            free(wit);
            return 2;
        }
    } else if ((rc = daemon_preflight(cmd, &o)) != 0) {
        cuzk_vk_free(vk);
        free(wit);
        return rc;
    }

    b.jobs = calloc((size_t)o.count, sizeof *b.jobs);
    pthread_t *th = calloc((size_t)o.concurrency, sizeof *th);
    if (!b.jobs || !th) {
        fprintf(stderr, "cuzk-bench %s: out of memory\n", cmd);
        free(b.jobs);
        free(th);
        bench_inproc_close(b.ip);
        cuzk_vk_free(vk);
        free(wit);
        return 2;
    }
    pthread_mutex_init(&b.mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b.cv, &ca);
    pthread_condattr_destroy(&ca);
    bench_devices dev0, dev1;
    bool have_dev = false;
    bench_conn *sc = NULL;
    if (o.in_process) {
        have_dev = bench_inproc_devices(b.ip, &dev0) == 0;
    } else if ((sc = bench_conn_new(&o)) != NULL) {
        have_dev = bench_daemon_devices(sc, &dev0) == 0;
    }
    b.tty = isatty(2);
    b.show_progress = !single && (o.progress || b.tty);
    b.t0 = bench_now_ms();
    long started = 0;
    /* Count the workers before any starts: a fast one may finish before the loop ends. */
    b.running_threads = o.concurrency;
    for (long t = 0; t < o.concurrency; t++) {
        if (pthread_create(&th[t], NULL, batch_worker, &b)) {
            fprintf(stderr, "cuzk-bench %s: cannot start client thread %ld\n", cmd, t);
            break;
        }
        started++;
    }
    pthread_mutex_lock(&b.mu);
    b.running_threads -= o.concurrency - started;
    long shown = -1;
    while (b.running_threads > 0 && started > 0) {
        if (b.show_progress && (b.tty || shown != b.finished)) {
            progress_draw(&b, false);
            shown = b.finished;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += BENCH_PROGRESS_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&b.cv, &b.mu, &ts);
    }
    if (b.show_progress && (b.tty || shown != b.finished))
        progress_draw(&b, true);
    pthread_mutex_unlock(&b.mu);
    for (long t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    double wall_ms = bench_now_ms() - b.t0;
    if (have_dev)
        have_dev = (o.in_process ? bench_inproc_devices(b.ip, &dev1) : bench_daemon_devices(sc, &dev1)) == 0;
    bench_conn_free(sc);

    int status = 0;
    if (started < o.concurrency && started == 0)
        status = 2;
    if (single && o.out_dir && !strcmp(b.jobs[0].state, "done")) {
        if (bench_write_job(&b.jobs[0], o.out_dir, err, sizeof err)) {
            fprintf(stderr, "cuzk-bench %s: --out-dir: %s\n", cmd, err);
            status = 2;
        }
    }
    char mode[64];
    snprintf(mode, sizeof mode, "%s%s", single ? "single" : "batch",
             !o.in_process ? "" : o.direct ? " (in-process, direct)" : " (in-process engine)");
    bench_report(stdout, &o, mode, b.jobs, o.count, wall_ms, key_load_ms, have_dev ? &dev0 : NULL,
                 have_dev ? &dev1 : NULL);
    for (long i = 0; i < o.count; i++) {
        if (strcmp(b.jobs[i].state, "done") || b.jobs[i].verify_fail)
            status = status ? status : 1;
        bench_job_clear(&b.jobs[i]);
    }
    pthread_cond_destroy(&b.cv);
    pthread_mutex_destroy(&b.mu);
    free(b.jobs);
    free(th);
    bench_inproc_close(b.ip);
    cuzk_vk_free(vk);
    free(wit);
    return status;
}

int bench_cmd_single(int argc, char **argv) { return cmd_prove("single", argc, argv, true); }
int bench_cmd_batch(int argc, char **argv) { return cmd_prove("batch", argc, argv, false); }

/* ---- status, metrics, preload, evict ---- */

static int simple_request(const char *cmd, const bench_opts *o, const char *method, const char *path,
                          const char *req, char **body)
{
    bench_conn *c = bench_conn_new(o);
    if (!c) {
        fprintf(stderr, "cuzk-bench %s: cannot create an HTTP client (libcurl)\n", cmd);
        return 2;
    }
    char err[800];
    long status = 0;
    int rc = bench_http(c, method, path, req, &status, body, err, sizeof err);
    bench_conn_free(c);
    if (rc) {
        fprintf(stderr, "cuzk-bench %s: %s\n", cmd, err);
        return 2;
    }
    if (status / 100 != 2) {
        char why[600];
        bench_http_error_text(why, sizeof why, status, *body);
        fprintf(stderr, "cuzk-bench %s: the daemon at %s answered %s %s with %s\n", cmd, o->addr, method, path, why);
        free(*body);
        *body = NULL;
        return 1;
    }
    return 0;
}

static int print_json_body(const char *body, bool compact)
{
    json_t *r = json_loads(body, 0, NULL);
    if (!r) {
        fputs(body, stdout);
        if (body[0] && body[strlen(body) - 1] != '\n')
            putchar('\n');
        return 0;
    }
    char *txt = json_dumps(r, compact ? JSON_COMPACT : JSON_INDENT(2));
    json_decref(r);
    if (txt)
        printf("%s\n", txt);
    free(txt);
    return 0;
}

/* The options of a command that takes no witnesses (0, or its exit status on a bad one). */
static int parse_plain(const char *cmd, int argc, char **argv, bench_opts *o)
{
    const char **wit = NULL;
    int rc = parse_opts(cmd, argc, argv, o, &wit);
    free(wit);
    return rc;
}

/* A GET of path, its body printed: as JSON (compact or indented) or as it came (raw). */
typedef enum { SHOW_JSON, SHOW_JSON_COMPACT, SHOW_RAW, SHOW_NONE } show_mode;
static int get_and_show(const char *cmd, int argc, char **argv, const char *path,
                        show_mode (*mode)(const bench_opts *o))
{
    bench_opts o;
    int rc = parse_plain(cmd, argc, argv, &o);
    if (rc)
        return rc;
    char *body = NULL;
    if ((rc = simple_request(cmd, &o, "GET", path, NULL, &body)) != 0)
        return rc;
    switch (mode(&o)) {
    case SHOW_JSON: print_json_body(body, false); break;
    case SHOW_JSON_COMPACT: print_json_body(body, true); break;
    case SHOW_RAW: fputs(body, stdout); break;
    case SHOW_NONE: break;
    }
    free(body);
    return 0;
}

static show_mode status_mode(const bench_opts *o) { return o->json ? SHOW_JSON_COMPACT : SHOW_JSON; }
static show_mode health_mode(const bench_opts *o) { return o->quiet ? SHOW_NONE : SHOW_JSON_COMPACT; }
static show_mode metrics_mode(const bench_opts *o) { (void)o; return SHOW_RAW; }

int bench_cmd_status(int argc, char **argv)
{
    return get_and_show("status", argc, argv, "/v1/status", status_mode);
}

int bench_cmd_health(int argc, char **argv)
{
    return get_and_show("health", argc, argv, "/healthz", health_mode);
}

int bench_cmd_metrics(int argc, char **argv)
{
    return get_and_show("metrics", argc, argv, "/metrics", metrics_mode);
}

int bench_cmd_preload(int argc, char **argv)
{
    bench_opts o;
    int rc = parse_plain("preload", argc, argv, &o);
    if (rc)
        return rc;
    if (!o.zkey)
        return usage_err("preload", "give --zkey PATH (and --key ID, default: the file name)");
    char *abs = realpath(o.zkey, NULL);
    if (!abs) {
        fprintf(stderr, "cuzk-bench preload: %s: cannot open\n", o.zkey);
        return 2;
    }
    json_t *req = json_pack("{s:s, s:s}", "id", o.key, "path", abs);
    free(abs);
    char *txt = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!txt) {
        fprintf(stderr, "cuzk-bench preload: out of memory\n");
        return 2;
    }
    char *body = NULL;
    double t0 = bench_now_ms();
    rc = simple_request("preload", &o, "POST", "/v1/keys", txt, &body);
    double ms = bench_now_ms() - t0;
    free(txt);
    if (rc)
        return rc;
    if (o.json)
        print_json_body(body, true);
    else
        printf("key '%s' registered from %s (%.1f ms)\n", o.key, o.zkey, ms);
    free(body);
    return 0;
}

int bench_cmd_evict(int argc, char **argv)
{
    bench_opts o;
    int rc = parse_plain("evict", argc, argv, &o);
    if (rc)
        return rc;
    if (!o.key)
        return usage_err("evict", "give --key ID");
    char path[400], *body = NULL;
    snprintf(path, sizeof path, "/v1/keys/%s", o.key);
    if ((rc = simple_request("evict", &o, "DELETE", path, NULL, &body)) != 0)
        return rc;
    if (o.json)
        print_json_body(body, true);
    else
        printf("key '%s' evicted\n", o.key);
    free(body);
    return 0;
}
