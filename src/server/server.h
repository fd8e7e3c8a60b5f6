/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk-daemon's HTTP API (docs/API.md) over libmicrohttpd, in front of a cuzk engine. */
#ifndef CUZK_SERVER_H
#define CUZK_SERVER_H

#include <jansson.h>
#include <stdbool.h>

#include "cuzk/engine.h"

#define SERVER_MAX_LISTEN 4
#define SERVER_MAX_ALLOW 32

typedef struct {
    const char *listen[SERVER_MAX_LISTEN];   /* "HOST:PORT", "[V6]:PORT" or "unix:PATH" */
    unsigned n_listen;
    const char *state_dir;                   /* the daemon's state directory */
    const char *token;                       /* the clients' bearer token */
    const char *admin_token;                 /* the operator's: accepted where token is, and
                                              * the only one for key registration, eviction
                                              * and (critical_admin) priority critical */
    bool no_auth;                            /* no token at all (loopback only, checked by
                                              * the daemon): every client is the operator */
    bool critical_any;                       /* any client may submit priority critical
                                              * (false: only with the admin token) */
    const char *allow_dirs[SERVER_MAX_ALLOW];
    unsigned n_allow;
    /* Browsers: a request with an Origin header is refused unless its value is listed; one
     * whose Host is not the listener's address (DNS rebinding) unless the name is listed
     * ("NAME" any port, "NAME:PORT", "*" any Host). See auth_browser_ok. */
    const char *allow_origin[SERVER_MAX_ALLOW];
    unsigned n_allow_origin;
    const char *allow_host[SERVER_MAX_ALLOW];
    unsigned n_allow_host;
    size_t max_body;                         /* bytes of a request body */
    size_t max_body_total;                   /* bytes of all bodies being received at once */
    double max_wait_s;                       /* cap of ?wait= */
    unsigned connection_limit;               /* open connections per listener, all clients */
    unsigned per_ip_connection_limit;        /* from one IP address (Unix sockets: none); 0: no limit */
    unsigned connection_timeout_s;           /* idle connections are closed after this */
    double header_timeout_s;                 /* a request's headers complete within this */
    uint64_t body_min_rate;                  /* bytes/s a body gets beyond header_timeout_s */
    unsigned http_threads;                   /* libmicrohttpd's epoll thread pool, per listener */
    unsigned retry_after_s;                  /* Retry-After of a 503 */
} server_config;

void server_config_default(server_config *c);

typedef struct server server;

/* Binds every listener (a Unix socket is created mode 0600, replacing a stale socket) and
 * starts serving. On failure nothing is left bound. */
cuzk_err server_start(server **out, cuzk_engine *e, const server_config *c) CUZK_WUR;
/* The address actually bound by listener i ("127.0.0.1:40123", "unix:/run/cuzk.sock"). */
const char *server_address(const server *s, unsigned i);
unsigned server_n_listeners(const server *s);
/* Stops listening, waits for open requests, removes Unix sockets. NULL is a no-op. */
void server_stop(server *s);

/* metrics.c */
json_t *server_key_json(const cuzk_engine_key_info *k);
json_t *server_status_json(cuzk_engine *e);
/* What the HTTP side counts, for /metrics. */
typedef struct {
    const unsigned *codes;        /* status codes counted */
    const uint64_t *counts;       /* requests answered per code */
    size_t n_codes;
    uint64_t body_bytes;          /* buffers of the request bodies being received now */
    unsigned connections;         /* open connections now */
    uint64_t connections_cut;     /* connections shut down past a deadline, so far */
    unsigned long_polls;          /* long polls waiting now (suspended connections) */
} server_http_stats;

/* Prometheus text of the engine's state and the HTTP side's counts. */
char *server_metrics_text(cuzk_engine *e, const server_http_stats *h);

#endif
