/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuzk engine: the resident-key proving service behind cuzk-daemon (DESIGN.md section 3),
 * usable in-process without HTTP (cuzk-bench's in-process mode, tests).
 *
 *   submit ─► priority queue of partitions (priority, then job age, then partition index)
 *          ─► loaders: reserve memory, load the key if evicted, read and check the
 *             witness; at most `lookahead` loaded partitions wait for a device
 *          ─► device workers (N per device, sharing the device lock): prove_start (the
 *             prover's CPU side, a, b, c synthesised on the device or the CPU, the MSMs)
 *          ─► finalisers: prove_finish, self-verify, store the result
 *
 * Keys: registered by id and path; loaded at registration (sizes are then known), kept
 * resident, evicted least-recently-used when the memory budget needs room and no partition
 * of theirs is in flight, reloaded on demand (the job's "srs" time).
 * Memory budget: resident keys plus, for every partition from its load to the end of its
 * finalisation, an estimate of its bytes (cuzk_engine_key_info.partition_bytes). A job whose
 * key plus one partition exceeds the budget is refused at submission (CUZK_ESIZE).
 * Every accepted job ends in exactly one final state: done, failed (with its reason) or
 * cancelled. Thread safety: every function may be called from any thread.
 * Errors carry a detail in cuzk_error_detail() for the calling thread.
 */
#ifndef CUZK_ENGINE_H
#define CUZK_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cuzk/groth16.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

typedef enum {
    CUZK_PRIO_LOW = 0,
    CUZK_PRIO_NORMAL = 1,
    CUZK_PRIO_HIGH = 2,
    CUZK_PRIO_CRITICAL = 3
} cuzk_priority;
#define CUZK_PRIO_COUNT 4
/* "low", "normal", "high", "critical"; parse returns false for anything else. */
const char *cuzk_priority_name(cuzk_priority p);
bool cuzk_priority_parse(cuzk_priority *out, const char *s);

typedef enum {
    CUZK_JOB_QUEUED = 0,     /* accepted, no partition started */
    CUZK_JOB_RUNNING = 1,    /* at least one partition started */
    CUZK_JOB_DONE = 2,       /* final: every proof made (and verified) */
    CUZK_JOB_FAILED = 3,     /* final: reason in error */
    CUZK_JOB_CANCELLED = 4   /* final */
} cuzk_job_state;
const char *cuzk_job_state_name(cuzk_job_state s);   /* "queued", "running", ... */

typedef enum { CUZK_LOG_ERROR = 0, CUZK_LOG_WARN = 1, CUZK_LOG_INFO = 2, CUZK_LOG_DEBUG = 3 } cuzk_log_level;
bool cuzk_log_level_parse(cuzk_log_level *out, const char *s);

typedef struct {
    unsigned loader_threads;         /* witness loaders */
    unsigned lookahead;              /* loaded partitions that may wait for a device
                                        (0: one per device worker, at least 2) */
    unsigned workers_per_device;     /* device workers sharing each device lock */
    unsigned finalizers;             /* finaliser pool size */
    unsigned prove_threads;          /* threads inside one prove call; 0: all CPUs */
    uint64_t memory_budget;          /* bytes: resident keys + in-flight partitions */
    bool verify;                     /* self-verify every proof before returning it */
    double job_timeout_s;            /* a job not final after this fails; 0: no limit */
    unsigned max_queued_jobs;        /* non-final jobs; submit beyond gives CUZK_EBUSY */
    double result_ttl_s;             /* final jobs are forgotten this long after the end */
    unsigned max_partitions;         /* witnesses per job */
    double priority_aging_s;         /* a waiting job's priority rises one level per this
                                        many seconds, up to critical; 0: no aging */
    unsigned max_keys;               /* registered keys; a new id beyond gives CUZK_EBUSY
                                        (0: no limit, the default; cuzk-daemon's is 16) */
    const char *cache_dir;           /* the .params keys' decoded caches (cuzk_params_load_ex;
                                        kept by the caller while the engine lives); NULL:
                                        beside each key. A removed key's cache is deleted;
                                        beyond max_keys (or 64) caches there, those of no
                                        registered key, the oldest first */
    unsigned debug_device_delay_ms;  /* testing: extra time holding the device lock */
    unsigned debug_journal_delay_ms; /* testing: extra time journaling a job's last proof */
    cuzk_log_level log_level;
    FILE *log;                       /* NULL: stderr */
    cuzk_gpu_opts gpu;               /* how the resident GPU keys are made, and where a
                                        .params key's subgroup checks run (params_check_min) */
    cuzk_backend backend;            /* AUTO: every visible GPU when the build has CUDA and
                                        a device answers, else the CPU; CPU: the CPU only
                                        (.params subgroup checks too); GPU: the GPUs */
    /* The job journal: with state_dir set (an existing directory the caller owns), every
     * accepted job is on disk before submit returns (state_dir/journal.db, SQLite), uploaded
     * witnesses are spooled to files in state_dir/spool (held on disk, not in memory), and
     * cuzk_engine_recover brings the jobs back after a restart. NULL: jobs live in memory
     * only and end with the process. Copied at cuzk_engine_new. */
    const char *state_dir;
    /* Where the journal's jobs are kept, with state_dir set: NULL or "" for the SQLite file
     * state_dir/journal.db, or a PostgreSQL URL (postgresql://user@host:port/db?...), the
     * schema created and migrated there, its queue shared by every engine on that database
     * (a farm: see lease_s below). Read at cuzk_engine_new only. */
    const char *store;
    /* Witness paths: opened once at submission, only beneath one of these directories
     * (without following a symbolic link on the way), and read later from that descriptor.
     * With none listed, path witnesses are refused (CUZK_EUNSUPPORTED) unless
     * witness_any_path (in-process callers trusting their own paths). At most 32; copied at
     * cuzk_engine_new. */
    const char *const *allow_dirs;
    unsigned n_allow_dirs;
    bool witness_any_path;
    /* A farm: with store a PostgreSQL URL, every daemon on that database shares its queue
     * (docs/cluster.md). Jobs are rows: any engine accepts them and answers for any of them;
     * each claims partitions as its pipeline has room, under a lease of lease_s seconds
     * (0: 30) its heartbeat renews every lease_s / 3; a lease that runs out puts the
     * partition back for any engine. node_name names this host in the status (NULL: the
     * host name). Uploaded witnesses up to db_upload_max bytes (0: 16 MiB) are kept in the
     * database; larger ones go to spool_dir (a directory on storage every host sees, the
     * same path on each), refused when it is not set. */
    double lease_s;
    const char *node_name;
    uint64_t db_upload_max;
    const char *spool_dir;
} cuzk_engine_config;

/* Defaults sized from the machine: CPUs, physical memory (half of it as budget). */
void cuzk_engine_config_default(cuzk_engine_config *c);

typedef struct cuzk_engine cuzk_engine;

cuzk_err cuzk_engine_new(cuzk_engine **out, const cuzk_engine_config *c) CUZK_WUR;
/* Stops accepting jobs; queued jobs that have not started fail ("shutting down"); running
 * jobs get grace_s seconds to end, then fail. Every job then has its final state (each is
 * logged). Safe to call more than once. */
void cuzk_engine_shutdown(cuzk_engine *e, double grace_s);
/* With a journal (state_dir): brings back every job it holds, after the keys are registered
 * and before jobs are submitted. Unfinished jobs are queued again (partitions whose proofs
 * were recorded are not proved again); a job whose key is not registered fails with that
 * reason; finished jobs keep their state and proofs until result_ttl_s after their end (wall
 * clock: the time before the restart counts). Spool files no unfinished job needs are
 * deleted. *requeued and *kept (may be NULL) count the unfinished and the finished jobs.
 * Without a journal: CUZK_OK, nothing to do. Errors: the journal's (CUZK_EFORMAT, CUZK_EIO). */
cuzk_err cuzk_engine_recover(cuzk_engine *e, unsigned *requeued, unsigned *kept) CUZK_WUR;
/* Shuts down (grace 0 if not done before) and frees everything. NULL is a no-op. With a
 * journal, jobs the shutdown fails are left unfinished there: the next start resumes them. */
void cuzk_engine_free(cuzk_engine *e);

/* ---- keys ---- */
typedef struct {
    char id[128];
    char path[4096];
    bool loaded;                 /* resident now */
    uint32_t n_vars, n_public, domain_size;
    uint64_t key_bytes;          /* resident size */
    uint64_t partition_bytes;    /* reserved per partition in flight: a, b, c counted in
                                    host memory unless the engine proves on GPUs and its
                                    resident copies synthesise on the device */
    unsigned in_flight;          /* partitions of this key between their load and the end */
    double last_used_s;          /* engine clock */
    uint64_t loads;              /* times loaded (1 + reloads after eviction) */
    bool existed;                /* key_add: already registered with this path (a no-op) */
    char format[8];              /* "zkey" (snarkjs) or "params" (bellman/bellperson) */
    char r1cs[4096];             /* "params": the circuit's .r1cs ("" for a zkey) */
    bool trusted, cache;         /* "params": the load flags it was registered with */
} cuzk_engine_key_info;

/* How to load a key (cuzk_engine_key_add_ex). A file that starts with the "zkey" magic is a
 * snarkjs .zkey and takes no options; any other file with r1cs set is a bellman/bellperson
 * .params key (include/cuzk/params.h) for the circuit of that .r1cs. */
typedef struct {
    const char *r1cs;   /* .params: the circuit's .r1cs (required); NULL for a .zkey */
    bool trusted;       /* .params: CUZK_PARAMS_TRUSTED (skip the vectors' subgroup checks) */
    bool cache;         /* .params: CUZK_PARAMS_CACHE (read or write PATH.cuzkcache) */
} cuzk_engine_key_opts;

/* Registers id for the .zkey at path and loads it (a no-op when id is registered with the
 * same path: info->existed). Errors: CUZK_EINVAL (bad id, id taken
 * by another path), CUZK_ESIZE (the key alone exceeds the budget), the loader's errors. */
cuzk_err cuzk_engine_key_add(cuzk_engine *e, cuzk_engine_key_info *info, const char *id,
                             const char *path) CUZK_WUR;
/* The same for either kind of key (opts NULL: a .zkey). A no-op when id is registered with
 * the same path, r1cs and flags. More errors: CUZK_EINVAL for a .params without r1cs, an
 * r1cs given with a .zkey; CUZK_ESIZE when the key does not fit the circuit (both files
 * named); the .params and .r1cs loaders' errors. */
cuzk_err cuzk_engine_key_add_ex(cuzk_engine *e, cuzk_engine_key_info *info, const char *id,
                                const char *path, const cuzk_engine_key_opts *opts) CUZK_WUR;
/* Unregisters id; its memory is freed when no queued or running job uses it. CUZK_ENOTFOUND
 * if unknown. */
/* In a farm the key leaves the shared table too (and so every daemon), also when this one
 * had not registered it yet; CUZK_EUNAVAILABLE when the table cannot be written. */
cuzk_err cuzk_engine_key_remove(cuzk_engine *e, const char *id) CUZK_WUR;
/* Info of one registered key; CUZK_ENOTFOUND if unknown. */
cuzk_err cuzk_engine_key_get(cuzk_engine *e, cuzk_engine_key_info *info, const char *id) CUZK_WUR;
/* Copies up to cap keys' info; returns the number of keys. */
size_t cuzk_engine_keys(cuzk_engine *e, cuzk_engine_key_info *out, size_t cap);

/* ---- jobs ---- */
/* A job id: 128 random bits (getrandom) as 32 lowercase hex characters, never reused. */
#define CUZK_JOB_ID_CHARS 32
typedef struct {
    char s[CUZK_JOB_ID_CHARS + 1];
} cuzk_job_id;
/* True when s is a well-formed job id (32 lowercase hex characters). */
bool cuzk_job_id_valid(const char *s);

/* One witness: a path the engine reads, or the bytes of a .wtns file (copied at submit). */
typedef struct {
    const char *path;
    const void *data;
    size_t len;
} cuzk_witness_src;

/* Accepts a job of n partitions (one witness each) for key_id. Each witness is read and checked
 * against the key first (a path opened once, as allow_dirs says, and kept open). Errors:
 * CUZK_ENOTFOUND (unknown key), CUZK_EINVAL (n = 0 or > max_partitions), CUZK_ESIZE (key + one
 * partition exceed the budget, or a witness of another size than the key's), CUZK_EUNSUPPORTED
 * (a path refused: outside the allowed directories, a link on the way, path witnesses off),
 * CUZK_EIO (a witness file that cannot be opened or read), the .wtns reader's errors
 * (CUZK_EFORMAT, ...) for a malformed witness, CUZK_EBUSY (queue full, or shutting down:
 * cuzk_error_detail says which), CUZK_ENOMEM. */
cuzk_err cuzk_engine_submit(cuzk_engine *e, cuzk_job_id *job_id, const char *key_id,
                            cuzk_priority prio, const cuzk_witness_src *w, size_t n) CUZK_WUR;
/* Cancels a non-final job (CUZK_OK; also when it was already cancelled), CUZK_ENOTFOUND when
 * unknown (a malformed id too), CUZK_EBUSY when it already ended done or failed. */
cuzk_err cuzk_engine_cancel(cuzk_engine *e, const char *job_id) CUZK_WUR;

typedef struct {
    double queue_ms;      /* submit to the first partition's load */
    double srs_ms;        /* waiting for or loading the key */
    double load_ms;       /* reading and checking the witnesses, summed over partitions */
    double prove_ms;      /* prove_start under the device lock (a GPU or the CPU), summed */
    double finalize_ms;   /* prove_finish, summed */
    double verify_ms;     /* self-verification, summed */
    double total_ms;      /* submit to the final state */
} cuzk_job_timings;

typedef struct {
    char id[CUZK_JOB_ID_CHARS + 1];
    char key[128];
    cuzk_priority priority;
    cuzk_job_state state;
    char error[512];            /* reason when failed ("" otherwise) */
    size_t n_partitions;
    size_t n_done;              /* partitions finished */
    cuzk_job_timings timings;
    double submitted_s, finished_s;  /* engine clock; finished_s = 0 until final */
    /* When done: n_partitions proofs and public inputs (n_public values each). */
    uint32_t n_public;
    cuzk_proof *proofs;
    cuzk_fr *publics;           /* n_partitions * n_public */
} cuzk_job_info;

/* Waits up to timeout_s (0: no wait, < 0: forever) for the job to be final, then fills
 * *info (results only when want_results and done). CUZK_ENOTFOUND for an unknown or
 * malformed job id. */
cuzk_err cuzk_engine_job_get(cuzk_engine *e, cuzk_job_info *info, const char *job_id,
                             double timeout_s, bool want_results) CUZK_WUR;
void cuzk_job_info_release(cuzk_job_info *info);   /* frees proofs and publics */

/* ---- status ---- */
typedef struct {
    char name[64];
    unsigned workers;
    unsigned busy;               /* workers inside prove_start now */
    double busy_s;               /* total time the device worked (GPU: the prover's own
                                  * figure; CPU: the whole prove_start) */
    uint64_t partitions;         /* partitions proved */
    /* Idle time of the device between the end of one partition and the start of the next,
     * idle periods without work included: total, longest, count (partitions - 1). */
    double gap_s, gap_max_s;
    uint64_t gaps;
} cuzk_engine_device_info;

#define CUZK_ENGINE_MAX_DEVICES 16
typedef struct {
    double uptime_s;
    bool shutting_down;
    unsigned jobs_queued, jobs_running;          /* now */
    unsigned partitions_queued;                  /* not yet taken by a loader */
    unsigned partitions_load, partitions_ready;  /* being loaded; waiting for a device */
    unsigned partitions_device, partitions_finalize;
    uint64_t jobs_submitted, jobs_done, jobs_failed, jobs_cancelled, jobs_rejected;
    uint64_t partitions_proved, proofs_verified, key_loads, key_evictions;
    uint64_t witness_buffers_reused;             /* loads into a kept buffer (no fresh one) */
    uint64_t memory_budget, memory_used;         /* used: keys, partitions, kept buffers */
    unsigned n_devices;
    cuzk_engine_device_info devices[CUZK_ENGINE_MAX_DEVICES];
    double stage_s[6];           /* summed seconds: srs, load, prove, finalize, verify, total */
    unsigned loader_threads, finalizers, lookahead;
    bool journal;                                /* a job journal is kept (state_dir) */
    uint64_t journal_commits;                    /* durable writes of the journal */
    uint64_t spool_files, spool_bytes;           /* uploaded witnesses on disk now */
    bool cluster;                                /* in a farm (cuzk_engine_cluster) */
    uint64_t jobs_ended_seen;                    /* farm: jobs ended anywhere (notices) */
    cuzk_engine_config config;
} cuzk_engine_stats;

void cuzk_engine_get_stats(cuzk_engine *e, cuzk_engine_stats *s);

/* ---- the farm (cfg.store a PostgreSQL URL) ---- */
typedef struct {
    char owner[96];              /* the daemon process's name in the store */
    char node[96];               /* its host's */
    double seen_ago_s;           /* since its last heartbeat */
    double up_s;                 /* since it started */
    uint64_t partitions;         /* proved since it started */
    double partitions_per_min;   /* over its last minute */
    unsigned leases;             /* partitions it proves now */
} cuzk_cluster_host;

typedef struct {
    char job[CUZK_JOB_ID_CHARS + 1];
    uint32_t partition, attempt; /* attempt: 1 the first time, more after a lease ran out */
    char owner[96];
    double age_s, left_s;        /* since the claim; of the lease left */
} cuzk_cluster_lease;

typedef struct {
    char owner[96], node[96];    /* this engine's */
    double lease_s;
    bool store_up;               /* the store answered this engine's latest call */
    char store_error[300];       /* why not, or why the listing below failed */
    unsigned leases_held;
    uint64_t claims, reclaims;   /* partitions claimed; of those, after another's lease ran out */
    uint64_t leases_lost;        /* leases of this engine that ran out while it proved */
    uint64_t store_errors;       /* store calls that failed (after the store's own retries) */
    uint64_t claim_calls;        /* claims asked of the store, and their time */
    double claim_s;
    uint64_t jobs_completed;     /* jobs whose last result this engine recorded */
    double partitions_per_min;   /* this engine's, over the last minute */
    /* every daemon seen within 3 leases, and the live leases (at most 1000) */
    cuzk_cluster_host *hosts;
    size_t n_hosts;
    cuzk_cluster_lease *leases;
    size_t n_leases;
} cuzk_cluster_info;

/* Fills *info (release it with cuzk_cluster_info_release); returns the number of hosts, 0
 * with everything zero when the engine is not in a farm. */
size_t cuzk_engine_cluster(cuzk_engine *e, cuzk_cluster_info *info);
void cuzk_cluster_info_release(cuzk_cluster_info *info);
/* Counts a refused submission made outside the engine (server-side checks). */
void cuzk_engine_count_rejected(cuzk_engine *e);

/* Log through the engine's logger (timestamped, levelled). */
void cuzk_engine_log(cuzk_engine *e, cuzk_log_level lv, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
