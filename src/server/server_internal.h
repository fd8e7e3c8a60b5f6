/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of the daemon's HTTP API share:
 *
 *   http.c      libmicrohttpd: requests, bodies, responses, start and stop
 *   listen.c    the listening sockets (TCP, Unix)
 *   auth.c      who may ask: the bearer token, the directories a client's paths may name
 *   api.c       the routes, and what the handlers share
 *   api_jobs.c  POST /v1/proofs, GET and DELETE /v1/proofs/ID
 *   api_keys.c  /v1/keys
 *   metrics.c   /v1/status and /metrics
 */
#ifndef CUZK_SERVER_INTERNAL_H
#define CUZK_SERVER_INTERNAL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/un.h>

#include "server/server.h"

/* Status codes counted for /metrics. */
#define SERVER_N_CODES 13
extern const unsigned server_http_codes[SERVER_N_CODES];

struct server {
    cuzk_engine *e;
    server_config cfg;
    char *allow_real[SERVER_MAX_ALLOW];   /* realpath of each allowed directory */
    unsigned n_listen;
    struct MHD_Daemon *mhd[SERVER_MAX_LISTEN];
    int fd[SERVER_MAX_LISTEN];
    char addr[SERVER_MAX_LISTEN][300];
    char unix_path[SERVER_MAX_LISTEN][sizeof(((struct sockaddr_un *)0)->sun_path)];
    _Atomic uint64_t counts[SERVER_N_CODES];
    _Atomic size_t body_bytes;   /* buffered request bodies (their capacity), all connections */
};

/* One request: its body as received. */
typedef struct {
    char *body;
    size_t len, cap;
    bool too_large;
    bool busy;       /* the bodies being received at once would pass max_body_total */
    bool answered;   /* a response was queued before the body was read */
} req;

/* http.c: responses. text is freed (MUST_FREE); obj is stolen. */
enum MHD_Result send_text(server *s, struct MHD_Connection *c, unsigned code, char *text,
                          const char *ctype);
enum MHD_Result send_json(server *s, struct MHD_Connection *c, unsigned code, json_t *obj);
enum MHD_Result send_error(server *s, struct MHD_Connection *c, unsigned code, const char *fmt,
                           ...) __attribute__((format(printf, 4, 5)));
/* Replaces each byte of an invalid UTF-8 sequence with '?'. */
void utf8_scrub(char *s);

/* listen.c: binds listener i of the configuration. */
cuzk_err listen_unix(server *s, unsigned i, const char *path);
cuzk_err listen_tcp(server *s, unsigned i, const char *spec);

/* auth.c */
/* The request carries the clients' or the operator's token (or there is no_auth). */
bool auth_ok(const server *s, struct MHD_Connection *c);
/* The request carries the operator's token (or there is no_auth). */
bool auth_admin(const server *s, struct MHD_Connection *c);
/* Not from a web page, or from one the operator allows: no Origin header (or a listed one),
 * and a Host that names the listener: any on a Unix socket; an IP address with the
 * listener's port; localhost with the port on a loopback listener; a listed name. Writes the
 * reason of a refusal. */
bool auth_browser_ok(const server *s, struct MHD_Connection *c, char *why, size_t wlen);
/* With --allow-dir: path must resolve inside an allowed directory. Writes the reason. */
bool path_allowed(const server *s, const char *path, char *why, size_t wlen);

/* api.c */
enum MHD_Result api_route(server *s, struct MHD_Connection *c, const char *url,
                          const char *method, const req *rq);
/* The name of the first member of obj not in known (NULL-terminated), or NULL. */
const char *api_unknown_field(json_t *obj, const char *const *known);
bool api_parse_u64(const char *s, uint64_t *out);

/* api_jobs.c */
enum MHD_Result api_job_submit(server *s, struct MHD_Connection *c, const req *rq);
enum MHD_Result api_job_get(server *s, struct MHD_Connection *c, const char *id);
enum MHD_Result api_job_cancel(server *s, struct MHD_Connection *c, const char *id);

/* api_keys.c */
enum MHD_Result api_key_add(server *s, struct MHD_Connection *c, const req *rq);
enum MHD_Result api_key_list(server *s, struct MHD_Connection *c);
enum MHD_Result api_key_get(server *s, struct MHD_Connection *c, const char *id);
enum MHD_Result api_key_remove(server *s, struct MHD_Connection *c, const char *id);

#endif
