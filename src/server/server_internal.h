/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of the daemon's HTTP API share:
 *
 *   http.c      libmicrohttpd: requests, bodies, responses, start and stop
 *   listen.c    the listening sockets (TCP, Unix)
 *   conns.c     the connections' deadlines (headers, bodies)
 *   longpoll.c  long polls on suspended connections
 *   auth.c      who may ask: the bearer token, the directories a client's paths may name
 *   api.c       the routes, and what the handlers share
 *   api_jobs.c  POST /v1/proofs, GET and DELETE /v1/proofs/ID
 *   api_keys.c  /v1/keys
 *   metrics.c   /v1/status and /metrics
 */
#ifndef CUZK_SERVER_INTERNAL_H
#define CUZK_SERVER_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/un.h>

#include "server/server.h"

/* Bytes over max_body that a request body may bring to be read and dropped before its 413
 * (beyond, the 413 is sent before any of the body is read). */
#define SERVER_DRAIN_MAX ((uint64_t)16 << 20)

/* Status codes counted for /metrics. */
#define SERVER_N_CODES 13
extern const unsigned server_http_codes[SERVER_N_CODES];

/* What a connection is doing, for its deadline (conns.c). */
typedef enum {
    CONN_HEADERS,   /* since it opened or its previous request ended: header_timeout */
    CONN_BODY,      /* headers in: header_timeout + bytes received / body_min_rate */
    CONN_ANSWER,    /* the request is complete: no deadline of conns.c's */
} conn_phase;

/* Where a connection's long poll is (longpoll.c). */
enum { LONGPOLL_NONE, LONGPOLL_WAITING, LONGPOLL_RESUMED };

/* One connection, from libmicrohttpd's connect notification to its close notification
 * (its socket context). */
typedef struct conn_track {
    struct conn_track *prev, *next;   /* server's list, under conns_mu */
    int fd;
    bool cut;                         /* shut down past its deadline */
    _Atomic double since_ms;          /* start of the phase */
    _Atomic conn_phase phase;
    _Atomic uint64_t body_bytes;      /* of this request's body, received */
    atomic_int poll;                  /* LONGPOLL_* */
} conn_track;

typedef struct longpoll_waiter longpoll_waiter;

struct server {
    cuzk_engine *e;
    server_config cfg;
    char *allow_real[SERVER_MAX_ALLOW];   /* realpath of each allowed directory */
    unsigned n_listen;
    struct MHD_Daemon *mhd[SERVER_MAX_LISTEN];
    int fd[SERVER_MAX_LISTEN];
    char addr[SERVER_MAX_LISTEN][300];
    char unix_path[SERVER_MAX_LISTEN][sizeof(((struct sockaddr_un *)0)->sun_path)];
    int lock_fd[SERVER_MAX_LISTEN];   /* a Unix listener's PATH.lock, held; else -1 */
    char lock_path[SERVER_MAX_LISTEN][sizeof(((struct sockaddr_un *)0)->sun_path) + 8];
    _Atomic uint64_t counts[SERVER_N_CODES];
    _Atomic size_t body_bytes;   /* buffered request bodies (their capacity), all connections */
    /* conns.c */
    pthread_mutex_t conns_mu;
    pthread_cond_t conns_cv;
    pthread_t conns_thread;
    bool conns_init, conns_running, conns_stop;
    conn_track *conns;
    unsigned n_conns;
    uint64_t conns_cut;          /* connections shut down past their deadline */
    /* longpoll.c */
    pthread_mutex_t lp_mu;
    pthread_cond_t lp_cv;
    pthread_t lp_thread;
    bool lp_init, lp_running, lp_stop;
    longpoll_waiter *lp_head;
    unsigned lp_n;
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
/* Gives up listener i's lock file (removed), if it holds one. */
void listen_unlock(server *s, unsigned i);

/* conns.c: the connection notification (MHD_OPTION_NOTIFY_CONNECTION) tracks each
 * connection; conns_of gives a connection's (NULL when untracked), conns_phase moves it
 * to a phase from now, conns_body_bytes counts body bytes received. The timer thread runs
 * from conns_start to conns_stop; conns_free after every libmicrohttpd daemon stopped. */
void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                  enum MHD_ConnectionNotificationCode code);
conn_track *conns_of(struct MHD_Connection *c);
void conns_phase(conn_track *t, conn_phase phase);
void conns_body_bytes(conn_track *t, size_t n);
cuzk_err conns_start(server *s);
void conns_stop(server *s);
void conns_free(server *s);

/* longpoll.c. final(s, id): whether job id is final or unknown (answer now). */
typedef bool (*longpoll_final_fn)(server *s, const char *id);
/* In a GET's handler: true when the connection was suspended to wait up to wait_s seconds
 * for job id to end (the handler is called again then, and this returns false: answer);
 * false when the request is to be answered now (no wait, the job is final, stopping). */
bool longpoll_wait(server *s, struct MHD_Connection *c, const char *id, double wait_s,
                   longpoll_final_fn final);
unsigned longpoll_count(server *s);   /* polls waiting now */
cuzk_err longpoll_start(server *s);
/* Stops the waiter and resumes every waiting poll (before the libmicrohttpd daemons stop). */
void longpoll_stop(server *s);
void longpoll_free(server *s);

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
