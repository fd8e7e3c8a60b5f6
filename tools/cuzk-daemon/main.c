/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-daemon: the resident-key Groth16 proving service (docs/API.md, DESIGN.md section 3).
 *
 *   cuzk-daemon [--config FILE] [--listen HOST:PORT | --listen unix:PATH] [flags]
 *
 * Settings come from defaults sized to the machine, then the INI file, then the flags.
 * SIGTERM / SIGINT: stop accepting, end every job explicitly, exit 0.
 * SIGHUP: reopen the log file (after logrotate moved it); nothing else changes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <ini.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "cuzk/version.h"
#include "cuzk/engine.h"
#include "io/binfile.h"
#include "server/server.h"
#include "secret.h"
#include "state.h"

#ifndef CUZK_EXAMPLE_REL
#define CUZK_EXAMPLE_REL "../share/cuzk/example"
#endif
/* --example: the proving key of a small circom circuit (142 wires, 3 public signals),
 * installed in share/cuzk/example: found relative to this program, at CUZK_EXAMPLE_REL from
 * its directory when installed, or in share/cuzk/example beside it in the build tree. The
 * path of `file` there into out; false when neither holds it. */
static bool example_path(char *out, size_t n, const char *file)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return false;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    static const char *const rel[] = {CUZK_EXAMPLE_REL, "share/cuzk/example"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char cand[4200], real[PATH_MAX];
        int w = snprintf(cand, sizeof cand, "%s/%s/%s", exe, rel[i], file);
        if (w > 0 && (size_t)w < sizeof cand && realpath(cand, real) && access(real, R_OK) == 0 &&
            strlen(real) < n) {
            memcpy(out, real, strlen(real) + 1);
            return true;
        }
    }
    return false;
}

#define MAX_KEYS 64

typedef struct {
    cuzk_engine_config eng;
    server_config srv;
    double shutdown_grace_s;
    const char *address_file;
    const char *log_file;
    const char *state_dir;
    /* keys to load at start; r1cs set for a bellman .params key */
    struct {
        char *id, *path, *r1cs;
        bool trusted, cache;
    } keys[MAX_KEYS];
    unsigned n_keys;
    const char *token_file, *admin_token_file;   /* read once the flags are parsed */
    char token_buf[DAEMON_TOKEN_MAX], admin_buf[DAEMON_TOKEN_MAX];
    bool example;
    bool no_journal;   /* journal = off / --no-journal: jobs in memory only */
    bool any_path;     /* allow_any_path: witness paths outside any allow_dir */
    char ini_error[1024];   /* the first bad line of the INI file, without its number */
} daemon_config;

static void usage(FILE *f)
{
    fputs(
        "usage: cuzk-daemon [options]   (cuzk-daemon --version: the version)\n"
        "  (without any option this is printed: `cuzk-daemon --listen 127.0.0.1:9820` runs\n"
        "  with every default)\n"
        "  --config FILE             INI file (see docs/cuzk-daemon.ini); flags override it\n"
        "  --listen ADDR             HOST:PORT, [V6]:PORT or unix:PATH (repeatable;\n"
        "                            default 127.0.0.1:9820; port 0 picks a free port)\n"
        "  --address-file FILE       write the bound addresses there, one per line\n"
        "  --state-dir DIR           the daemon's own state (default /var/lib/cuzk as root,\n"
        "                            else $XDG_STATE_HOME/cuzk or ~/.local/state/cuzk);\n"
        "                            created 0700; one daemon per directory\n"
        "  --token TOKEN             the clients' token: require 'Authorization: Bearer TOKEN'\n"
        "                            (default: STATE_DIR/token, made at the first start)\n"
        "  --token-file FILE         the same, the token read from FILE's first line\n"
        "  --admin-token-file FILE   the operator's token (key registration and eviction,\n"
        "                            priority critical; default: STATE_DIR/admin-token)\n"
        "  --no-auth                 no token at all: any client may do anything (refused\n"
        "                            unless every listener is loopback or a Unix socket)\n"
        "  --allow-dir DIR           only read keys and witnesses under DIR (repeatable)\n"
        "  --critical admin|any      who may submit priority critical (default admin: the\n"
        "                            admin token only)\n"
        "  --max-keys N              keys registered at once (default 16; 409 beyond)\n"
        "  --allow-origin ORIGIN     accept requests from this web page origin\n"
        "                            (https://app.example:8443; repeatable; default: none)\n"
        "  --allow-host NAME[:PORT]  accept this Host besides the listener's own address\n"
        "                            (repeatable; '*' any: only behind a proxy that checks)\n"
        "  --key ID=PATH             register and load a .zkey at start (repeatable)\n"
        "  --key ID=PATH,r1cs=R1CS[,trusted][,cache]\n"
        "                            the same for a bellman .params key and its circuit\n"
        "  --example                 register the built-in example key as 'example'\n"
        "  --memory-budget SIZE      bytes for keys + in-flight partitions (K, M, G suffixes;\n"
        "                            default: half of physical memory)\n"
        "  --loader-threads N        witness loaders (default: CPUs/4, at least 1)\n"
        "  --lookahead N             loaded partitions waiting for a device, at most\n"
        "                            (default: one per device worker, at least 2)\n"
        "  --gpu-workers N           workers per device (sharing the device lock; default 2)\n"
        "  --finalizers N            finaliser pool size\n"
        "  --prove-threads N         threads inside one proof (0: all CPUs)\n"
        "  --no-verify               do not self-verify proofs (on by default)\n"
        "  --allow-any-path          with no --allow-dir: clients' witness paths may name any\n"
        "                            file the daemon can read (off: path witnesses refused)\n"
        "  --no-journal              keep jobs in memory only (journal = off): a crash or a\n"
        "                            restart loses them (by default every accepted job is\n"
        "                            journaled in the state directory and resumed)\n"
        "  --store sqlite|URL        where the journal keeps jobs: sqlite (default,\n"
        "                            STATE_DIR/journal.db) or postgresql://USER@HOST:PORT/DB\n"
        "                            (schema made there): every daemon on that database\n"
        "                            shares its queue, a farm (docs/cluster.md)\n"
        "  --lease S                 farm: a claimed partition's lease (default 30 s),\n"
        "                            renewed every S/3; a daemon gone loses it after S\n"
        "  --node-name NAME          farm: this host's name in the status (default: hostname)\n"
        "  --db-upload-max SIZE      farm: uploads up to SIZE kept in the database (16M)\n"
        "  --spool-dir DIR           farm: larger uploads kept in DIR, on storage every host\n"
        "                            sees (absolute path; unset: refused, give a path)\n"
        "  --job-timeout S           fail a job not finished after S seconds (0: never)\n"
        "  --max-queued N            unfinished jobs accepted; beyond: 503 + Retry-After\n"
        "  --max-partitions N        witnesses per job\n"
        "  --max-body SIZE           request body limit (413 beyond)\n"
        "  --max-body-total SIZE     bodies being received at once, all connections (503\n"
        "                            beyond; default 1G)\n"
        "  --max-wait S              cap of ?wait= long polls\n"
        "  --connection-limit N      open connections per listener (default 4096, kept\n"
        "                            below the open files limit)\n"
        "  --per-ip-connection-limit N  connections from one IP address (default 64; 0: no\n"
        "                            limit; Unix socket clients have none)\n"
        "  --header-timeout S        a request's headers must be in S seconds after the\n"
        "                            connection opened or its previous request (default 30)\n"
        "  --body-min-rate SIZE      a body gets header-timeout plus one second per SIZE\n"
        "                            bytes received (default 64K; 0: no floor)\n"
        "  --http-threads N          HTTP threads per listener (epoll; default 8)\n"
        "  --connection-timeout S    close a connection idle for S seconds (default 120)\n"
        "  --result-ttl S            forget finished jobs after S seconds\n"
        "  --priority-aging S        a waiting job's priority rises one level per S seconds\n"
        "                            (default 60; 0: none, a low job may wait for ever)\n"
        "  --shutdown-grace S        on SIGTERM, time running jobs get to finish\n"
        "  --log-level L             error, warn, info (default; timeline events), debug\n"
        "  --log-file FILE           append the log there instead of stderr\n"
        "  --gpu NAME=VALUE          a GPU option of the [gpu] section (repeatable): synth,\n"
        "                            bases, msm_chunk, witness, b_g2, params_check_min\n"
        "  --debug-device-delay-ms N testing: hold the device lock N ms longer per partition\n"
        "  --debug-journal-delay-ms N testing: take N ms longer journaling a job's last proof\n",
        f);
    fputs(tool_env_help, f);
}

/* Strings of the configuration, freed at exit. */
static char *owned[256];
static unsigned n_owned;
static char *keep(const char *v)
{
    char *d = n_owned < sizeof owned / sizeof owned[0] ? strdup(v) : NULL;
    if (d)
        owned[n_owned++] = d;
    return d;
}

static bool parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return false;
    double m = 1;
    if (*end == 'k' || *end == 'K')
        m = 1024.0, end++;
    else if (*end == 'm' || *end == 'M')
        m = 1024.0 * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        m = 1024.0 * 1024 * 1024, end++;
    else if (*end == 't' || *end == 'T')
        m = 1024.0 * 1024 * 1024 * 1024, end++;
    if (*end == 'i' || *end == 'B' || *end == 'b')
        end++;
    if (*end == 'B')
        end++;
    if (*end)
        return false;
    *out = (uint64_t)(v * m);
    return true;
}

static bool parse_uint(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > 1000000000UL || s[0] == '-')
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_secs(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0))
        return false;
    *out = v;
    return true;
}

static bool parse_bool(const char *s, bool *out)
{
    if (!strcasecmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on"))
        return *out = true, true;
    if (!strcasecmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off"))
        return *out = false, true;
    return false;
}

/* The index of the key entry of id (made when new); MAX_KEYS when the table is full. */
static unsigned key_slot(daemon_config *c, const char *id)
{
    for (unsigned i = 0; i < c->n_keys; i++)
        if (!strcmp(c->keys[i].id, id))
            return i;
    if (c->n_keys >= MAX_KEYS || !(c->keys[c->n_keys].id = keep(id)))
        return MAX_KEYS;
    return c->n_keys++;
}

static bool add_key(daemon_config *c, const char *id, const char *path)
{
    unsigned i = key_slot(c, id);
    return i < MAX_KEYS && (c->keys[i].path = keep(path)) != NULL;
}

/* --key ID=PATH[,r1cs=R1CS][,trusted][,cache]: the options are taken from the end, so a
 * path may hold commas as long as it does not end like an option. */
static bool add_key_flag(daemon_config *c, const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v)
        return false;
    char id[128], rest[8300];
    snprintf(id, sizeof id, "%.*s", (int)(eq - v), v);
    snprintf(rest, sizeof rest, "%s", eq + 1);
    bool trusted = false, cache = false;
    char *r1cs = NULL;
    for (;;) {
        char *comma = strrchr(rest, ',');
        if (!comma)
            break;
        if (!strcmp(comma, ",trusted"))
            trusted = true;
        else if (!strcmp(comma, ",cache"))
            cache = true;
        else if (!strncmp(comma, ",r1cs=", 6) && !r1cs && comma[6])
            r1cs = keep(comma + 6);
        else
            break;
        *comma = 0;
    }
    if ((trusted || cache) && !r1cs)
        return false;
    unsigned i = key_slot(c, id);
    if (i >= MAX_KEYS || !(c->keys[i].path = keep(rest)))
        return false;
    c->keys[i].r1cs = r1cs;
    c->keys[i].trusted = trusted;
    c->keys[i].cache = cache;
    return true;
}

/* [key.ID] section of the INI file: path, r1cs, trusted, cache. */
static bool set_key_option(daemon_config *c, const char *id, const char *name, const char *v)
{
    unsigned i = key_slot(c, id);
    if (i >= MAX_KEYS)
        return false;
    if (!strcmp(name, "path"))
        return (c->keys[i].path = keep(v)) != NULL;
    if (!strcmp(name, "r1cs"))
        return (c->keys[i].r1cs = keep(v)) != NULL;
    if (!strcmp(name, "trusted"))
        return parse_bool(v, &c->keys[i].trusted);
    if (!strcmp(name, "cache"))
        return parse_bool(v, &c->keys[i].cache);
    return false;
}

/* One setting, from the INI file (section.name) or a flag (name, section ignored). Names
 * use underscores; flags' dashes are turned into underscores before. Returns false when the
 * name is unknown or the value is bad. Strings are kept (strdup) for the process's life. */
static bool set_option(daemon_config *c, const char *section, const char *name, const char *v)
{
    cuzk_engine_config *e = &c->eng;
    server_config *s = &c->srv;
    if (section && !strcmp(section, "keys"))
        return add_key(c, name, v);
    if (section && !strncmp(section, "key.", 4))
        return section[4] && set_key_option(c, section + 4, name, v);
    if (!strcmp(name, "listen")) {
        if (s->n_listen >= SERVER_MAX_LISTEN)
            return false;
        s->listen[s->n_listen++] = keep(v);
        return true;
    }
    if (!strcmp(name, "token"))
        return (s->token = keep(v)) != NULL;
    if (!strcmp(name, "token_file"))
        return (c->token_file = keep(v)) != NULL;
    if (!strcmp(name, "admin_token_file"))
        return (c->admin_token_file = keep(v)) != NULL;
    if (!strcmp(name, "no_auth"))
        return parse_bool(v, &s->no_auth);
    if (!strcmp(name, "critical")) {
        if (strcmp(v, "admin") != 0 && strcmp(v, "any") != 0)
            return false;
        s->critical_any = !strcmp(v, "any");
        return true;
    }
    if (!strcmp(name, "max_keys"))
        return parse_uint(v, &e->max_keys) && e->max_keys > 0;
    if (!strcmp(name, "allow_origin") || !strcmp(name, "allow_host")) {
        bool o = !strcmp(name, "allow_origin");
        unsigned *n = o ? &s->n_allow_origin : &s->n_allow_host;
        if (*n >= SERVER_MAX_ALLOW || !v[0])
            return false;
        (o ? s->allow_origin : s->allow_host)[(*n)++] = keep(v);
        return true;
    }
    if (!strcmp(name, "allow_dir")) {
        if (s->n_allow >= SERVER_MAX_ALLOW)
            return false;
        s->allow_dirs[s->n_allow++] = keep(v);
        return true;
    }
    if (!strcmp(name, "state_dir"))
        return v[0] && (c->state_dir = s->state_dir = keep(v)) != NULL;
    if (!strcmp(name, "address_file"))
        return (c->address_file = keep(v)) != NULL;
    if (!strcmp(name, "log_file"))
        return (c->log_file = keep(v)) != NULL;
    if (!strcmp(name, "log_level"))
        return cuzk_log_level_parse(&e->log_level, v);
    if (!strcmp(name, "key"))
        return add_key_flag(c, v);
    if (!strcmp(name, "memory_budget"))
        return parse_size(v, &e->memory_budget);
    if (!strcmp(name, "max_body") || !strcmp(name, "max_body_total")) {
        uint64_t b;
        if (!parse_size(v, &b))
            return false;
        if (!strcmp(name, "max_body"))
            s->max_body = (size_t)b;
        else
            s->max_body_total = (size_t)b;
        return true;
    }
    if (!strcmp(name, "loader_threads"))
        return parse_uint(v, &e->loader_threads);
    if (!strcmp(name, "lookahead"))
        return parse_uint(v, &e->lookahead);
    if (!strcmp(name, "gpu_workers") || !strcmp(name, "workers_per_device"))
        return parse_uint(v, &e->workers_per_device);
    if (!strcmp(name, "finalizers"))
        return parse_uint(v, &e->finalizers);
    if (!strcmp(name, "prove_threads"))
        return parse_uint(v, &e->prove_threads);
    if (!strcmp(name, "max_queued"))
        return parse_uint(v, &e->max_queued_jobs);
    if (!strcmp(name, "max_partitions"))
        return parse_uint(v, &e->max_partitions);
    if (!strcmp(name, "connection_limit"))
        return parse_uint(v, &s->connection_limit) && s->connection_limit > 0;
    if (!strcmp(name, "per_ip_connection_limit"))
        return parse_uint(v, &s->per_ip_connection_limit);
    if (!strcmp(name, "http_threads"))
        return parse_uint(v, &s->http_threads) && s->http_threads > 0 && s->http_threads <= 256;
    if (!strcmp(name, "connection_timeout"))
        return parse_uint(v, &s->connection_timeout_s) && s->connection_timeout_s > 0;
    if (!strcmp(name, "header_timeout"))
        return parse_secs(v, &s->header_timeout_s) && s->header_timeout_s > 0;
    if (!strcmp(name, "body_min_rate"))
        return parse_size(v, &s->body_min_rate);
    if (!strcmp(name, "debug_device_delay_ms"))
        return parse_uint(v, &e->debug_device_delay_ms);
    if (!strcmp(name, "debug_journal_delay_ms"))
        return parse_uint(v, &e->debug_journal_delay_ms);
    if (!strcmp(name, "verify"))
        return parse_bool(v, &e->verify);
    if (!strcmp(name, "allow_any_path"))
        return parse_bool(v, &c->any_path);
    if (!strcmp(name, "journal")) {
        bool on;
        if (!parse_bool(v, &on))
            return false;
        c->no_journal = !on;
        return true;
    }
    if (!strcmp(name, "store")) {
        /* "sqlite": STATE_DIR/journal.db; a postgresql:// URL: that database */
        if (!strcmp(v, "sqlite")) {
            e->store = NULL;
            return true;
        }
        if (strncmp(v, "postgresql://", 13) != 0 && strncmp(v, "postgres://", 11) != 0)
            return false;
        return (e->store = keep(v)) != NULL;
    }
    if (!strcmp(name, "lease"))
        return parse_secs(v, &e->lease_s) && e->lease_s >= 0.3;
    if (!strcmp(name, "node_name"))
        return v[0] && strlen(v) <= 64 && (e->node_name = keep(v)) != NULL;
    if (!strcmp(name, "db_upload_max"))
        return parse_size(v, &e->db_upload_max) && e->db_upload_max > 0 &&
               e->db_upload_max <= ((uint64_t)1 << 30);
    if (!strcmp(name, "spool_dir"))
        return v[0] == '/' && (e->spool_dir = keep(v)) != NULL;
    if (!strcmp(name, "job_timeout"))
        return parse_secs(v, &e->job_timeout_s);
    if (!strcmp(name, "priority_aging"))
        return parse_secs(v, &e->priority_aging_s);
    if (!strcmp(name, "result_ttl"))
        return parse_secs(v, &e->result_ttl_s);
    if (!strcmp(name, "shutdown_grace"))
        return parse_secs(v, &c->shutdown_grace_s);
    if (!strcmp(name, "max_wait"))
        return parse_secs(v, &s->max_wait_s);
    return false;
}

/* --gpu NAME=VALUE: one option of the [gpu] section (cuzk_gpu_opts_set's names). */
static bool set_gpu_flag(daemon_config *c, const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v) {
        cuzk_error_set(CUZK_EINVAL, "--gpu takes NAME=VALUE");
        return false;
    }
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
    return cuzk_gpu_opts_set(&c->eng.gpu, name, eq + 1) == CUZK_OK;
}

/* One line of the INI file: [gpu] takes exactly cuzk_gpu_opts_set's names; the other
 * sections set_option's. The first bad line's reason is kept for the message. */
static int ini_cb(void *user, const char *section, const char *name, const char *value)
{
    daemon_config *c = user;
    bool ok;
    char why[600] = "unknown setting or bad value";
    if (section && !strcmp(section, "gpu")) {
        ok = cuzk_gpu_opts_set(&c->eng.gpu, name, value) == CUZK_OK;
        if (!ok)
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
    } else {
        ok = set_option(c, section, name, value);
    }
    if (!ok && !c->ini_error[0])
        snprintf(c->ini_error, sizeof c->ini_error, "[%s] %s = %s: %s", section, name, value, why);
    return ok;
}

static int parse_args(daemon_config *c, int argc, char **argv)
{
    /* The config file first, so that flags override it. */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--config")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "cuzk-daemon: --config needs a file\n");
                return 2;
            }
            FILE *f;
            if (io_fopen_regular(&f, argv[i + 1]) != CUZK_OK) {
                fprintf(stderr, "cuzk-daemon: %s\n", cuzk_error_detail());
                return 2;
            }
            int rc = ini_parse_file(f, ini_cb, c);
            fclose(f);
            if (rc != 0) {
                if (rc < 0)
                    fprintf(stderr, "cuzk-daemon: %s: cannot read\n", argv[i + 1]);
                else if (c->ini_error[0])
                    fprintf(stderr, "cuzk-daemon: %s:%d: %s\n", argv[i + 1], rc, c->ini_error);
                else
                    fprintf(stderr, "cuzk-daemon: %s:%d: not a section, a comment or "
                            "NAME = VALUE\n", argv[i + 1], rc);
                return 2;
            }
        }
    /* Listeners named on the command line replace those of the file. */
    bool flag_listen = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(a, "--no-verify")) {
            c->eng.verify = false;
            continue;
        }
        if (!strcmp(a, "--no-journal")) {
            c->no_journal = true;
            continue;
        }
        if (!strcmp(a, "--allow-any-path")) {
            c->any_path = true;
            continue;
        }
        if (!strcmp(a, "--example")) {
            c->example = true;
            continue;
        }
        if (!strcmp(a, "--no-auth")) {
            c->srv.no_auth = true;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || i + 1 >= argc) {
            fprintf(stderr, "cuzk-daemon: %s: unknown option or missing value\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--config"))
            continue;
        char name[64];
        snprintf(name, sizeof name, "%s", a + 2);
        for (char *p = name; *p; p++)
            if (*p == '-')
                *p = '_';
        if (!strcmp(name, "listen") && !flag_listen) {
            c->srv.n_listen = 0;
            flag_listen = true;
        }
        if (!strcmp(name, "gpu")) {
            if (!set_gpu_flag(c, v)) {
                fprintf(stderr, "cuzk-daemon: --gpu %s: %s\n", v, cuzk_error_detail());
                return 2;
            }
            continue;
        }
        if (!set_option(c, NULL, name, v)) {
            fprintf(stderr, "cuzk-daemon: %s %s: unknown option or bad value\n", a, v);
            return 2;
        }
    }
    return 0;
}

/* SIGHUP: the log path opened anew and put under the log's FILE (its descriptor replaced
 * by dup2), so the engine's FILE * stays valid and lines go to the new file from here on. */
static void log_reopen(cuzk_engine *e, FILE *log, const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        cuzk_engine_log(e, CUZK_LOG_ERROR, "event=log_reopen_failed path=%s reason=\"%s\"", path,
                        strerror(errno));
        return;
    }
    flockfile(log);   /* no line of another thread split between the two files */
    fflush(log);
    int r = dup2(fd, fileno(log));
    int er = errno;
    funlockfile(log);
    close(fd);
    if (r < 0)
        cuzk_engine_log(e, CUZK_LOG_ERROR, "event=log_reopen_failed path=%s reason=\"%s\"", path,
                        strerror(er));
    else
        cuzk_engine_log(e, CUZK_LOG_INFO, "event=log_reopened path=%s", path);
}

/* Every connection takes a descriptor: the soft limit raised to the hard one, and the
 * connection limit kept below it (room for keys, witnesses, the journal). */
static void fd_limit_raise(server_config *srv)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t want = rl.rlim_max;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    rlim_t room = rl.rlim_cur > 256 ? rl.rlim_cur - 256 : rl.rlim_cur / 2;
    if (rl.rlim_cur != RLIM_INFINITY && srv->connection_limit > room) {
        fprintf(stderr, "cuzk-daemon: connection_limit %u lowered to %llu (open files limit "
                        "%llu)\n", srv->connection_limit, (unsigned long long)room,
                (unsigned long long)rl.rlim_cur);
        srv->connection_limit = (unsigned)room;
    }
}

/* The host part of a listener "HOST:PORT" or "[V6]:PORT" into host ("" for ":PORT"); false
 * for a Unix socket. */
static bool listen_host(const char *spec, char *host, size_t n)
{
    if (!strncmp(spec, "unix:", 5))
        return false;
    const char *end = spec[0] == '[' ? strchr(spec, ']') : strrchr(spec, ':');
    const char *start = spec[0] == '[' ? spec + 1 : spec;
    size_t len = end ? (size_t)(end - start) : strlen(start);
    snprintf(host, n, "%.*s", (int)len, start);
    return true;
}

/* A listener on every interface: ":PORT", "0.0.0.0:PORT", "[::]:PORT". */
static bool listen_is_wildcard(const char *host)
{
    unsigned char a[16], zero[16] = {0};
    return !host[0] || (inet_pton(AF_INET, host, a) == 1 && !memcmp(a, zero, 4)) ||
           (inet_pton(AF_INET6, host, a) == 1 && !memcmp(a, zero, 16));
}

/* 127.0.0.0/8, ::1, localhost. */
static bool listen_is_loopback(const char *host)
{
    unsigned char a[16], one[16] = {[15] = 1};
    return !strcasecmp(host, "localhost") || (inet_pton(AF_INET, host, a) == 1 && a[0] == 127) ||
           (inet_pton(AF_INET6, host, a) == 1 && !memcmp(a, one, 16));
}

/* The tokens: the clients' (given, or STATE_DIR/token) and the operator's (given, or
 * STATE_DIR/admin-token), or none with --no-auth on loopback. Returns false after a message. */
static bool auth_setup(daemon_config *c, unsigned *made)
{
    server_config *s = &c->srv;
    char why[4600];
    *made = 0;
    if (s->no_auth) {
        if (s->token || c->token_file || c->admin_token_file) {
            fprintf(stderr, "cuzk-daemon: --no-auth with a token: choose one\n");
            return false;
        }
        for (unsigned i = 0; i < s->n_listen; i++) {
            char host[300];
            if (listen_host(s->listen[i], host, sizeof host) && !listen_is_loopback(host)) {
                fprintf(stderr, "cuzk-daemon: --no-auth: refused with the listener %s, which is "
                        "not loopback (anyone who reaches it could register keys and submit "
                        "jobs)\n", s->listen[i]);
                return false;
            }
        }
        return true;
    }
    if (s->token && !s->token[0]) {
        fprintf(stderr, "cuzk-daemon: the token is empty (it would let every client in; "
                        "--no-auth says so explicitly)\n");
        return false;
    }
    bool m = false;
    if (c->token_file) {
        if (!daemon_secret_read_file(c->token_file, c->token_buf, sizeof c->token_buf, why,
                                     sizeof why)) {
            fprintf(stderr, "cuzk-daemon: token_file %s\n", why);
            return false;
        }
        s->token = c->token_buf;
    } else if (!s->token) {
        if (!daemon_secret_get(c->state_dir, "token", c->token_buf, sizeof c->token_buf, &m, why,
                               sizeof why)) {
            fprintf(stderr, "cuzk-daemon: %s\n", why);
            return false;
        }
        s->token = c->token_buf;
        *made |= m;
    }
    bool ok = c->admin_token_file
                  ? daemon_secret_read_file(c->admin_token_file, c->admin_buf, sizeof c->admin_buf,
                                            why, sizeof why)
                  : daemon_secret_get(c->state_dir, "admin-token", c->admin_buf,
                                      sizeof c->admin_buf, &m, why, sizeof why);
    if (!ok) {
        fprintf(stderr, "cuzk-daemon: %s%s\n", c->admin_token_file ? "admin_token_file " : "",
                why);
        return false;
    }
    if (!c->admin_token_file)
        *made |= (unsigned)m << 1;
    s->admin_token = c->admin_buf;
    if (!strcmp(s->token, s->admin_token)) {
        fprintf(stderr, "cuzk-daemon: the clients' token and the operator's (admin) token are "
                        "the same: every client would be the operator\n");
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("%s %s\n", "cuzk-daemon", cuzk_version());
        return 0;
    }
    if (argc < 2) { /* run with at least one option: --config FILE, or --listen for defaults */
        usage(stderr);
        return 2;
    }
    tool_env env;
    if (tool_env_init(&env, "cuzk-daemon"))
        return 2;
    daemon_config c;
    memset(&c, 0, sizeof c);
    cuzk_engine_config_default(&c.eng);
    c.eng.backend = env.backend;
    server_config_default(&c.srv);
    c.eng.max_keys = 16;
    c.shutdown_grace_s = 30;
    int rc = parse_args(&c, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (c.no_journal && c.eng.store) {
        fprintf(stderr, "cuzk-daemon: store = %s needs the journal (journal = off given)\n",
                "postgresql://...");
        return 2;
    }
    /* A key or witness file truncated by someone else while it is read fails that load
     * instead of ending the daemon (and every job in it) with SIGBUS. */
    if (!io_guard_install())
        fprintf(stderr, "cuzk-daemon: warning: cannot install the SIGBUS guard: %s\n",
                strerror(errno));
    char example_key[4200], example_wtns[4200];
    if (c.example) {
        if (!example_path(example_key, sizeof example_key, "circuit.zkey") ||
            !example_path(example_wtns, sizeof example_wtns, "witness.wtns")) {
            fprintf(stderr, "cuzk-daemon: --example: the example key is not installed "
                            "(share/cuzk/example/circuit.zkey, at %s from this program)\n",
                    CUZK_EXAMPLE_REL);
            return 2;
        }
        if (!add_key(&c, "example", example_key))
            return 2;
    }
    char state_default[4200];
    if (!c.state_dir) {
        if (!tool_default_state_dir(&env, state_default, sizeof state_default)) {
            fprintf(stderr, "cuzk-daemon: no state directory: set --state-dir (neither "
                            "XDG_STATE_HOME nor HOME is set)\n");
            return 2;
        }
        c.state_dir = c.srv.state_dir = state_default;
    }
    char why[4600];
    int state_lock = daemon_state_open(c.state_dir, why, sizeof why);
    if (state_lock < 0) {
        fprintf(stderr, "cuzk-daemon: %s\n", why);
        return 1;
    }
    unsigned tokens_made;
    if (!auth_setup(&c, &tokens_made)) {
        close(state_lock);
        return 2;
    }
    /* the .params keys' decoded caches: STATE_DIR/cache, 0700, authenticated there */
    char cache_dir[4300];
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", c.state_dir);
    if (mkdir(cache_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "cuzk-daemon: %s: cannot create: %s\n", cache_dir, strerror(errno));
        close(state_lock);
        return 1;
    }
    c.eng.cache_dir = cache_dir;
    if (c.log_file) {
        c.eng.log = fopen(c.log_file, "a");
        if (!c.eng.log) {
            fprintf(stderr, "cuzk-daemon: %s: %s\n", c.log_file, strerror(errno));
            return 1;
        }
    }

    fd_limit_raise(&c.srv);

    /* Signals are taken by sigwait in the main thread only; every thread inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    cuzk_engine *e = NULL;
    c.eng.state_dir = c.no_journal ? NULL : c.state_dir;
    /* witness paths only beneath allow_dir (none: path witnesses refused); each job keeps its
     * witness files open (the descriptor limit was raised by fd_limit_raise) */
    c.eng.allow_dirs = c.srv.allow_dirs;
    c.eng.n_allow_dirs = c.srv.n_allow;
    c.eng.witness_any_path = c.any_path && c.srv.n_allow == 0;
    if (cuzk_engine_new(&e, &c.eng) != CUZK_OK) {
        fprintf(stderr, "cuzk-daemon: %s\n", cuzk_error_detail());
        return 1;
    }
    for (unsigned i = 0; i < c.n_keys; i++) {
        if (!c.keys[i].path) {
            fprintf(stderr, "cuzk-daemon: key %s: no path (set [key.%s] path = ...)\n",
                    c.keys[i].id, c.keys[i].id);
            cuzk_engine_free(e);
            return 2;
        }
    }
    for (unsigned i = 0; i < c.n_keys; i++) {
        cuzk_engine_key_info ki;
        cuzk_engine_key_opts ko = {.r1cs = c.keys[i].r1cs, .trusted = c.keys[i].trusted,
                                   .cache = c.keys[i].cache};
        if (cuzk_engine_key_add_ex(e, &ki, c.keys[i].id, c.keys[i].path, &ko) != CUZK_OK) {
            cuzk_engine_log(e, CUZK_LOG_ERROR, "event=startup_failed reason=\"%s\"", cuzk_error_detail());
            cuzk_engine_free(e);
            return 1;
        }
    }
    if (c.srv.no_auth)
        cuzk_engine_log(e, CUZK_LOG_WARN, "event=auth_off reason=\"--no-auth: no token, every "
                        "client may register keys and submit jobs\"");
    if (tokens_made & 1)
        cuzk_engine_log(e, CUZK_LOG_INFO, "event=token_made path=%s/token", c.state_dir);
    if (tokens_made & 2)
        cuzk_engine_log(e, CUZK_LOG_INFO, "event=token_made path=%s/admin-token", c.state_dir);
    for (unsigned i = 0; i < c.srv.n_listen; i++) {
        char host[300];
        if (listen_host(c.srv.listen[i], host, sizeof host) && listen_is_wildcard(host))
            cuzk_engine_log(e, CUZK_LOG_WARN, "event=listen_all_interfaces listen=%s reason=\"every "
                            "interface: anyone who reaches this host may try the token\"",
                            c.srv.listen[i]);
    }
    if (c.eng.witness_any_path)
        cuzk_engine_log(e, CUZK_LOG_WARN, "event=allow_any_path reason=\"witness paths may name "
                        "any file this daemon can read\"");
    if (c.no_journal)
        cuzk_engine_log(e, CUZK_LOG_WARN, "event=journal_off reason=\"journal = off: accepted "
                        "jobs are lost with the process\"");
    else if (cuzk_engine_recover(e, NULL, NULL) != CUZK_OK) {
        cuzk_engine_log(e, CUZK_LOG_ERROR, "event=startup_failed reason=\"%s\"", cuzk_error_detail());
        cuzk_engine_free(e);
        return 1;
    }
    if (c.example)
        cuzk_engine_log(e, CUZK_LOG_INFO, "event=example key=example witness=%s", example_wtns);
    server *s = NULL;
    if (server_start(&s, e, &c.srv) != CUZK_OK) {
        cuzk_engine_log(e, CUZK_LOG_ERROR, "event=startup_failed reason=\"%s\"", cuzk_error_detail());
        if (c.log_file)   /* the one who started it reads this, not the log */
            fprintf(stderr, "cuzk-daemon: %s\n", cuzk_error_detail());
        cuzk_engine_free(e);
        return 1;
    }
    if (c.address_file) {
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", c.address_file);
        FILE *f = fopen(tmp, "w");
        for (unsigned i = 0; f && i < server_n_listeners(s); i++)
            fprintf(f, "%s\n", server_address(s, i));
        if (!f || fclose(f) != 0 || rename(tmp, c.address_file) != 0)
            cuzk_engine_log(e, CUZK_LOG_WARN, "event=address_file_failed path=%s", c.address_file);
    }
    cuzk_engine_log(e, CUZK_LOG_INFO, "event=ready pid=%ld", (long)getpid());

    int sig = 0;
    while (sigwait(&sigs, &sig) == 0 && sig == SIGHUP) {
        if (c.log_file)
            log_reopen(e, c.eng.log, c.log_file);
        else
            cuzk_engine_log(e, CUZK_LOG_INFO, "event=signal sig=SIGHUP log=stderr");
    }
    cuzk_engine_log(e, CUZK_LOG_INFO, "event=signal sig=%s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    cuzk_engine_shutdown(e, c.shutdown_grace_s);
    server_stop(s);
    cuzk_engine_log(e, CUZK_LOG_INFO, "event=exit");
    cuzk_engine_free(e);
    if (c.eng.log)
        fclose(c.eng.log);
    for (unsigned i = 0; i < n_owned; i++)
        free(owned[i]);
    explicit_bzero(c.token_buf, sizeof c.token_buf);
    explicit_bzero(c.admin_buf, sizeof c.admin_buf);
    close(state_lock);
    return 0;
}
