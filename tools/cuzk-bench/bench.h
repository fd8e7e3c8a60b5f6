/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk-bench internals: jobs, the two back ends that run them (a cuzk-daemon over HTTP, or
 * the library in this process), and the report (per-proof lines, latency percentiles,
 * throughput, the stage table, JSON).
 */
#ifndef CUZK_BENCH_H
#define CUZK_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cuzk/groth16.h"

/* The stages of a job's timings, in the order of the report. The daemon calls them
 * queue, srs, load, gpu, finalize, verify, total (milliseconds); BENCH_GPU is the proving
 * stage on whichever backend ran it, which the report calls "prove" (bench_stage_labels; the
 * JSON report gives it under both names, "gpu" kept for the scripts that read it). */
enum { BENCH_QUEUE, BENCH_SRS, BENCH_LOAD, BENCH_GPU, BENCH_FINALIZE, BENCH_VERIFY, BENCH_TOTAL,
       BENCH_NSTAGES };
extern const char *const bench_stage_names[BENCH_NSTAGES];
extern const char *const bench_stage_labels[BENCH_NSTAGES];

/* Priorities as the daemon names them; BENCH_PRIO_MIXED cycles through the four. */
enum { BENCH_PRIO_LOW, BENCH_PRIO_NORMAL, BENCH_PRIO_HIGH, BENCH_PRIO_CRITICAL, BENCH_NPRIO,
       BENCH_PRIO_MIXED = BENCH_NPRIO };
extern const char *const bench_prio_names[BENCH_NPRIO];

typedef struct {
    /* what to run */
    const char *addr;         /* HOST:PORT, http://HOST:PORT or unix:PATH */
    const char *token;        /* bearer token or NULL */
    const char *key;          /* key id at the daemon */
    const char *zkey;         /* proving key path (registered with the daemon / loaded here) */
    const char **witness;     /* partitions of one job */
    size_t n_witness;
    int priority;             /* BENCH_PRIO_* */
    const char *verify_with;  /* verification_key.json or NULL */
    const char *out_dir;      /* single: write proof_N.json, public_N.json here */
    long count, concurrency;
    double timeout_s;         /* per job */
    unsigned threads;         /* in-process: library threads (0: default) */
    cuzk_gpu_opts gpu;        /* in-process: how the GPU backend uses the device (--gpu) */
    bool in_process, direct;  /* in this process: through the engine, or the prover directly */
    bool engine_log;          /* in-process engine: its info-level log on stderr */
    bool json, progress, quiet;
} bench_opts;

/* One job: its partitions' proofs, its timings and what the client saw. */
typedef struct {
    long index;               /* 0 .. count-1, submission order */
    int priority;             /* BENCH_PRIO_LOW .. CRITICAL */
    char id[64];              /* the daemon's job id ("" in-process) */
    char state[16];           /* done, failed, cancelled, timeout, error */
    char error[512];
    double t[BENCH_NSTAGES];  /* ms; negative where the back end did not report a stage */
    double latency_ms;        /* measured by the client: submit to result */
    size_t n_proofs;
    cuzk_proof *proofs;       /* n_proofs */
    cuzk_fr *pub;             /* n_proofs * n_pub, row by row */
    size_t n_pub;
    bool checked;             /* its proofs were checked against --verify-with */
    long verify_fail;         /* proofs that did not pass --verify-with */
    char verify_error[256];   /* the first failure */
} bench_job;

void bench_job_clear(bench_job *j);
/* Copies src into dst[n], cut to fit, always NUL-terminated. */
void bench_copy(char *dst, size_t n, const char *src);
double bench_now_ms(void);

/* ---- back ends: run one job to its final state; return 0, or -1 for a transport failure
 * (state "error", error filled: the daemon could not be reached or answered nonsense). ---- */
typedef struct bench_conn bench_conn;

/* Daemon (tools/cuzk-bench/http.c). One connection per client thread. */
int bench_http_global_init(void);
bench_conn *bench_conn_new(const bench_opts *o);
void bench_conn_free(bench_conn *c);
/* A request; *body is the answer (malloc'd, NUL-terminated, caller frees), *status the
 * HTTP status. On a transport failure returns -1 with err filled (naming the address). */
int bench_http(bench_conn *c, const char *method, const char *path, const char *req_json,
               long *status, char **body, char *err, size_t errlen);
/* The "error" field of a JSON answer, or the body itself, shortened, into out. */
void bench_http_error_text(char *out, size_t outlen, long status, const char *body);
const char *bench_conn_addr(const bench_conn *c);
/* POST /v1/keys {"id", "path"}; an already-registered key counts as success. */
int bench_daemon_register_key(bench_conn *c, const bench_opts *o, char *err, size_t errlen);
int bench_daemon_run_job(bench_conn *c, const bench_opts *o, bench_job *j);

/* In-process (tools/cuzk-bench/inproc.c). */
typedef struct bench_inproc bench_inproc;
int bench_inproc_open(bench_inproc **out, const bench_opts *o, double *load_ms, char *err,
                      size_t errlen);
void bench_inproc_close(bench_inproc *ip);
int bench_inproc_run_job(bench_inproc *ip, const bench_opts *o, bench_job *j);

/* Devices' busy time (from GET /v1/status or the in-process engine's stats), taken before
 * and after a batch so the report can say what fraction of the wall time each was busy. */
#define BENCH_MAX_DEVICES 16
typedef struct {
    unsigned n;
    char name[BENCH_MAX_DEVICES][64];
    unsigned workers[BENCH_MAX_DEVICES];
    double busy_s[BENCH_MAX_DEVICES];     /* device lock held for proving, since start */
    double partitions[BENCH_MAX_DEVICES]; /* partitions proved, since start */
    double gap_s[BENCH_MAX_DEVICES];      /* idle between consecutive partitions, since start */
    double gaps[BENCH_MAX_DEVICES];       /* how many such gaps */
    double gap_max_s[BENCH_MAX_DEVICES];  /* the longest one, since start */
} bench_devices;
/* 0, or -1 when the back end does not report devices (direct mode, an older daemon). */
int bench_daemon_devices(bench_conn *c, bench_devices *d);
int bench_inproc_devices(bench_inproc *ip, bench_devices *d);

/* ---- checking and reporting (tools/cuzk-bench/report.c) ---- */
/* Checks every proof of a done job against vk; counts failures in j->verify_fail. */
void bench_verify_job(bench_job *j, const cuzk_vk *vk);
/* Writes proof_N.json and public_N.json (N = 0 .. n_proofs-1) into dir. */
int bench_write_job(const bench_job *j, const char *dir, char *err, size_t errlen);

void bench_print_job(FILE *f, const bench_job *j, long count);
/* The summary: counts, throughput, latency percentiles, the stage table; or JSON. */
/* dev0, dev1: devices before and after the batch, or NULL. */
void bench_report(FILE *f, const bench_opts *o, const char *mode, const bench_job *jobs, long n,
                  double wall_ms, double key_load_ms, const bench_devices *dev0,
                  const bench_devices *dev1);
/* Nearest-rank percentile p (0..100) of v[0..n-1] (sorted in place); 0 when n == 0. */
double bench_percentile(double *v, size_t n, double p);

/* ---- commands (tools/cuzk-bench/run.c): argc/argv after the command name; exit status ---- */
int bench_cmd_single(int argc, char **argv);
int bench_cmd_batch(int argc, char **argv);
int bench_cmd_status(int argc, char **argv);
int bench_cmd_metrics(int argc, char **argv);
int bench_cmd_health(int argc, char **argv);
int bench_cmd_preload(int argc, char **argv);
int bench_cmd_evict(int argc, char **argv);
void bench_usage_cmds(FILE *f);
/* The workload and kernel commands: porep (porep.c: the synthetic porep-k workload, per
 * stage), kernels (kernels.c: CPU and GPU NTT and MSM side by side), scale (scale.c: setup in
 * memory, batch proof, verification), prep (prep.c: the CPU side of a GPU partition). */
int cuzk_bench_porep(int argc, char **argv);
int cuzk_bench_kernels(int argc, char **argv);
int cuzk_bench_scale(int argc, char **argv);
int cuzk_bench_prep(int argc, char **argv);
int cuzk_bench_tails(int argc, char **argv);

#endif
