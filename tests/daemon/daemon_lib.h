/* SPDX-License-Identifier: Apache-2.0 */
/* What the daemon test programs share: starting and stopping cuzk-daemon, HTTP with
 * libcurl, the fixtures, and a main that runs one named scenario. */
#ifndef CUZK_TEST_DAEMON_LIB_H
#define CUZK_TEST_DAEMON_LIB_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SKIP 77   /* CTest's skip code for this test */

extern const char *bin_dir, *src_dir;   /* CUZK_BIN, CUZK_SRC */
extern char tmp_dir[256];               /* this run's directory (kept when it fails) */
/* Sent with every request when set (a bearer token header), unless extra_header is an
 * Authorization header of its own ("Authorization:" alone sends none). When it is not set, a
 * request to a daemon started by daemon_start carries that daemon's tokens: the operator's
 * (admin) token for what only the operator may do (POST /v1/keys, DELETE /v1/keys/ID, a job
 * of priority critical: in a JSON body or ?priority=critical), the clients' token for the
 * rest. */
extern const char *http_auth;
extern long http_timeout_s;
/* daemon_start adds --allow-any-path when no --allow-dir is given (default true). */
extern bool daemon_default_any_path;

typedef struct {
    pid_t pid;
    char addr[256];      /* first listener */
    char addr2[256];     /* second listener (e.g. unix:PATH) */
    char log[300];
    char state[300];   /* its --state-dir, unless the test gives one */
    char token[520];   /* the clients' token it requires ("" with --no-auth) */
    char admin[520];   /* the operator's token */
} daemon_proc;

typedef struct {
    long status;
    char *body;
    size_t len;
    char retry_after[32];
    json_t *json;    /* body parsed when it is JSON */
} resp;

void kill_all(void);

void track(pid_t p, bool add);

/* Starts cuzk-daemon with the given flags (NULL-terminated) plus a free loopback port, an
 * address file and a log file (and --allow-any-path unless the flags name an --allow-dir).
 * Returns false when it does not come up within 20 s. Then d->token and d->admin hold its
 * tokens (--token, --token-file, --admin-token-file, else those it made in its state
 * directory), which requests to its addresses carry. */
bool daemon_start(daemon_proc *d, const char *tag, ...);

/* SIGTERM and wait up to timeout_s; returns the exit status, or -1 after a SIGKILL. */
int daemon_stop(daemon_proc *d, double timeout_s);

/* SIGKILL (a crash: no shutdown runs) and reap it. */
void daemon_kill(daemon_proc *d);

/* A SIGKILL sent to pid after delay_ms, from a thread of its own (kill_later_start; join
 * kill_later_join before reaping the process). */
typedef struct {
    pid_t pid;
    unsigned delay_ms;
    pthread_t th;
} kill_later;
void kill_later_start(kill_later *k);
void kill_later_join(kill_later *k);

/* Entries of a directory other than dot files (0 when it cannot be read). */
unsigned dir_entries(const char *path);

void resp_free(resp *r);

/* One request. addr is HOST:PORT or unix:PATH. extra_header may be NULL. The path is sent
 * as given (dot segments too). */
bool http_ex(resp *r, const char *addr, const char *method, const char *path,
             const char *ctype, const void *body, size_t len, const char *extra_header);

bool http(resp *r, const char *addr, const char *method, const char *path, const char *json);

const char *jstr(json_t *o, const char *k);

bool add_key(const char *addr, const char *id, const char *circuit);

/* Submits a job of n copies of the circuit's fixture witness. Returns the job id (a
 * malloc'd string) or NULL; *status gets the HTTP status. */
char *submit(const char *addr, const char *key, const char *circuit, const char *prio,
             int n, long *status);

/* Long-polls a job until it is final (up to timeout_s; a 503 is waited out); returns its
 * JSON (owned) or NULL. */
json_t *wait_final(const char *addr, const char *id, double timeout_s);

/* The proofs of a job done (f: wait_final's JSON, NULL or not done: none), each checked with
 * `cuzk verify` against vk (the files written to tmp_dir as TAG-proof_I_P.json and
 * TAG-public_I_P.json); CHECKs that there are `parts` of them and that each verifies. Adds
 * to *n_proofs; returns how many verified. With ms, every 8th job's (i % 8 == 0) triples
 * "vk<TAB>public<TAB>proof" are written there (for snarkjs). */
int verify_job_proofs(json_t *f, const char *vk, const char *tag, int i, int parts,
                      int *n_proofs, FILE *ms);

/* The file's bytes, 0-terminated (the test reads JSON as text too); NULL when unreadable. */
char *read_file(const char *path, size_t *len);

char *b64(const unsigned char *p, size_t n);

int count_in_file(const char *path, const char *needle);

bool snarkjs_present(void);

/* One scenario of a test program: its name on the command line and its function (0: pass). */
typedef struct {
    const char *name;
    int (*run)(void);
} daemon_scenario;

/* main of a daemon test program: `PROG SCENARIO`, with CUZK_BIN and CUZK_SRC set; makes
 * tmp_dir, kills every daemon at exit or on a fatal signal, removes tmp_dir when it passes. */
int daemon_test_main(int argc, char **argv, const char *prog, const daemon_scenario *sc,
                     size_t n);

#endif
