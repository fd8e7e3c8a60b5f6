/* SPDX-License-Identifier: Apache-2.0 */
/* Internal state of the engine (include/cuzk/engine.h) and what its files share:
 *
 *   engine.c     lifecycle: configuration, new, shutdown, free, stats
 *   log.c        the engine clock, the log, the names of priorities, states and levels
 *   keys.c       key registry: loading a key of either kind, LRU eviction, the keys' part
 *                of the memory budget, the resident GPU copies
 *   jobs.c       jobs: admission (submit), cancel, queries, final states
 *   sched.c      scheduler: the priority queue, memory reservations, the ready list, a
 *                partition's retirement
 *   wpool.c      witness buffers kept for later loads
 *   loader.c     witness loaders
 *   device.c     the devices and their workers
 *   finalizer.c  finalisers
 *   reaper.c     job timeouts and the expiry of finished jobs
 *   cluster.c    several daemons on one PostgreSQL store: claims, heartbeat, listener
 *
 * One mutex (mu) guards everything below except the device locks and what a partition's
 * owner thread touches outside the lock. Functions marked "lock held" expect mu held. */
#ifndef CUZK_ENGINE_INTERNAL_H
#define CUZK_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "cuzk/engine.h"
#include "cuzk/key.h"
#include "store/store.h"

typedef enum { KEY_UNLOADED = 0, KEY_LOADING = 1, KEY_LOADED = 2 } key_state;

typedef struct key_entry {
    char id[128];
    char path[4096];
    cuzk_key_format format;
    char r1cs[4096];          /* CUZK_KEY_PARAMS */
    unsigned pflags;          /* CUZK_KEY_PARAMS: CUZK_PARAMS_* load flags */
    unsigned refs;            /* 1 while registered + 1 per unretired job */
    bool registered;
    key_state st;
    cuzk_key *key;            /* valid while LOADED; not evicted while in_flight > 0 */
    uint32_t n_vars, n_public, domain_size;
    uint64_t key_bytes, part_bytes;
    unsigned in_flight;       /* partitions holding a reservation */
    double last_used;
    uint64_t loads;
    cuzk_gpu_key *gk[CUZK_ENGINE_MAX_DEVICES]; /* resident copies per GPU, made on first use */
    struct key_entry *next;
} key_entry;

typedef struct job {
    char id[CUZK_JOB_ID_CHARS + 1];
    uint64_t seq;             /* submission order */
    key_entry *key;           /* NULL once retired */
    char key_id[128];
    cuzk_priority prio;
    cuzk_job_state state;
    char error[512];
    size_t n;
    char **paths;             /* n entries, NULL where uploaded */
    unsigned char **data;     /* n entries: uploads held in memory (no journal), else NULL */
    size_t *len;
    char **spool;             /* n entries: the spool file of an upload (journal), else NULL */
    int *fds;                 /* n entries: the opened witness file of a path, else -1 */
    bool *pdone;              /* n entries or NULL: partitions recorded before a restart */
    size_t n_recorded;        /* partitions whose proofs are being or were journaled */
    bool shadow;              /* cluster.c: partitions of a job of the store this engine
                                 claimed (pdone marks the others); not a job of its own */
    size_t n_claimed;         /* shadow: its partitions claimed */
    unsigned reclaimed;       /* shadow: of those, claimed before by another (lease ran out) */
    bool committing_done;     /* the last proof and the job's done being journaled: a cancel
                                 waits for it, a timeout lets it be (the journal's word wins) */
    size_t next_part;         /* next partition to hand to a loader */
    size_t n_done;
    size_t outstanding;       /* partitions between dispatch and retirement */
    bool in_queue, inputs_freed;
    uint32_t n_public;
    cuzk_proof *proofs;       /* n */
    cuzk_fr *publics;         /* n * n_public */
    cuzk_job_timings t;
    double submitted, finished;
    struct job *qnext;        /* priority queue (FIFO per priority) */
    struct job *next;         /* all jobs */
} job;

typedef struct device {
    char name[64];
    int gpu;                  /* CUDA device index; -1 for the CPU pseudo-device */
    pthread_mutex_t lock;     /* held from the device work of prove_start to its return */
    unsigned workers, busy;
    double busy_s;
    double last_end_s;        /* end of the latest device work (engine clock) */
    double gap_s, gap_max_s;  /* idle time between consecutive partitions: total, longest */
    uint64_t gaps;
    uint64_t partitions;
} device;

/* A partition in flight: load -> ready -> device -> finalise. */
typedef struct part {
    job *j;
    size_t idx;
    key_entry *key;
    uint64_t reserved;        /* bytes of the memory budget it holds (0: no reservation) */
    cuzk_wtns *w;
    cuzk_fr *pub;             /* n_public copied before the witness is freed */
    cuzk_pending *pend;
    double t_ready;
    struct part *next;
} part;

#define ENGINE_WPOOL_MAX 8 /* idle witness buffers kept, at most */
#define ENGINE_MAX_ALLOW 32

struct cuzk_engine {
    cuzk_engine_config cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv_load;   /* loaders: queue, lookahead slots, memory, key loads */
    pthread_cond_t cv_ready;  /* device workers */
    pthread_cond_t cv_fin;    /* finalisers */
    pthread_cond_t cv_job;    /* a job reached its final state; reaper wake-ups */
    pthread_mutex_t log_mu;
    double t0;                /* monotonic seconds at creation */

    key_entry *keys;
    job *jobs, *jobs_tail;
    job *qhead[CUZK_PRIO_COUNT], *qtail[CUZK_PRIO_COUNT];
    part *ready;              /* sorted: priority desc, submission, partition */
    part *fin_head, *fin_tail;
    uint64_t next_seq;

    unsigned n_load, n_ready, n_device, n_fin, n_reserved;
    unsigned jobs_open;       /* non-final jobs */
    uint64_t mem_used;
    bool accepting, stop, shut_done;
    /* Witness buffers of finished partitions, kept for the next loads (a fresh buffer costs
     * its page faults and zeroing each time): counted in mem_used while idle, and the first
     * thing given back when a reservation does not fit. */
    struct wbuf {
        cuzk_fr *p;
        size_t cap;   /* values */
    } wpool[ENGINE_WPOOL_MAX];
    unsigned n_wpool;

    unsigned n_devices;
    device devices[CUZK_ENGINE_MAX_DEVICES];
    pthread_t *threads;
    unsigned n_threads;
    pthread_t reaper;
    bool reaper_started;

    /* directories path witnesses may be opened beneath (witness.c) */
    struct engine_allow {
        int fd;
        char *given, *real;   /* as configured, and its realpath */
    } allow[ENGINE_MAX_ALLOW];
    unsigned n_allow;
    /* the journal (cfg.state_dir set): the store, and the spool directory's descriptor */
    store *st;
    int spool_fd;
    char *state_dir;
    double journal_expired_at;   /* engine clock of the latest store expiry */
    uint64_t c_commits, spool_files, spool_bytes;

    /* cluster.c (cluster: the store is shared by several daemons) */
    bool cluster;
    char owner[96], node[96];   /* this process's name in the store, the host's */
    double lease_s, started_wall;
    uint64_t db_upload_max;
    pthread_cond_t cv_claim;    /* the claimer: work announced */
    pthread_cond_t cv_beat;     /* the heartbeat's pace (stop) */
    bool cv_claim_init;
    pthread_t cl_threads[3];
    unsigned n_cl_threads;
    bool work_hint, keys_hint, store_down;
    char store_why[300];
    uint64_t c_claims, c_reclaims, c_lease_lost, c_store_errors, c_claim_calls;
    uint64_t c_ended_seen, c_cl_done;
    double claim_s;
#define CLUSTER_RING 512
    double cl_ring[CLUSTER_RING];   /* engine clock of the latest partitions proved */
    unsigned cl_ring_i;

    uint64_t c_submitted, c_done, c_failed, c_cancelled, c_rejected;
    uint64_t c_parts, c_verified, c_loads, c_evictions, c_wreuse;
    double stage_s[6];
};

/* Indices of cuzk_engine.stage_s (cuzk_engine_stats.stage_s). */
enum { STAGE_SRS, STAGE_LOAD, STAGE_PROVE, STAGE_FINALIZE, STAGE_VERIFY, STAGE_TOTAL };

static inline bool is_final(cuzk_job_state s) { return s >= CUZK_JOB_DONE; }

/* ---- log.c ---- */
double engine_mono_s(void);                 /* CLOCK_MONOTONIC seconds */
double engine_now(const cuzk_engine *e);    /* seconds since the engine was made */
/* The CLOCK_REALTIME time s seconds from now, for pthread_cond_timedwait. */
void engine_deadline(struct timespec *ts, double s);
#define LOG(e, lv, ...) cuzk_engine_log(e, lv, __VA_ARGS__)

/* ---- keys.c ---- */
key_entry *key_find(cuzk_engine *e, const char *id);         /* lock held */
void key_unload(cuzk_engine *e, key_entry *k);               /* lock held */
void key_unref(cuzk_engine *e, key_entry *k);                /* lock held */
/* Evicts the least recently used loaded key with nothing in flight, other than keep;
 * false when there is none. Lock held. */
bool key_evict_one(cuzk_engine *e, const key_entry *keep);
/* Loads k again after its eviction, for job_id's partition that reserved its bytes (st
 * LOADING). Lock held; released during the load. On failure the key is UNLOADED again, its
 * bytes given back, and why holds the reason. */
bool key_reload(cuzk_engine *e, key_entry *k, const char *job_id, char *why, size_t whylen);
/* The resident copy of k on GPU device d, made on first use under d's lock with the
 * engine's cuzk_gpu_opts. Lock not held. */
cuzk_err key_gpu(cuzk_engine *e, key_entry *k, device *d, cuzk_gpu_key **out) CUZK_WUR;

/* ---- journal.c ---- */
double engine_wall(void);                  /* CLOCK_REALTIME seconds */
/* Opens state_dir's journal and spool directory (engine_new). */
cuzk_err journal_open(cuzk_engine *e) CUZK_WUR;
void journal_close(cuzk_engine *e);
/* Spools j's uploads (w) and records j (lock not held; j not yet listed). */
cuzk_err journal_put(cuzk_engine *e, job *j, const cuzk_witness_src *w) CUZK_WUR;
/* Records a final state other than done (lock held). */
void journal_finish(cuzk_engine *e, const job *j);
/* Deletes the spool files of j (lock held). */
void journal_unspool(cuzk_engine *e, job *j);
/* Deletes journaled jobs ended more than result_ttl_s ago (lock not held). */
void journal_expire(cuzk_engine *e);
/* Opens spool file name for reading (-1 and errno on failure). */
int journal_spool_open(cuzk_engine *e, const char *name);

/* The engine clock of wall-clock time t. */
double engine_time_of(const cuzk_engine *e, double t);

/* ---- cluster.c ---- */
/* Starts the claimer, heartbeat and listener when the store is shared (engine_new). */
cuzk_err cluster_start(cuzk_engine *e) CUZK_WUR;
/* Stops them, gives the leases back, leaves the farm (shutdown). */
void cluster_stop(cuzk_engine *e);
/* The key table: id's row written or deleted after its local registration or removal. */
cuzk_err cluster_key_put(cuzk_engine *e, const char *id) CUZK_WUR;
cuzk_err cluster_key_del(cuzk_engine *e, const char *id) CUZK_WUR;
/* The API on the store (cluster): submit's record (j not linked), cancel, job_get. */
cuzk_err cluster_submit(cuzk_engine *e, job *j, const cuzk_witness_src *w) CUZK_WUR;
cuzk_err cluster_cancel(cuzk_engine *e, const char *id) CUZK_WUR;
cuzk_err cluster_job_get(cuzk_engine *e, cuzk_job_info *info, const char *id, double timeout_s,
                         bool want_results) CUZK_WUR;
/* Whether the store answers (lock held); why when not. */
void cluster_store_state(cuzk_engine *e, bool up, const char *why);
/* Registers the keys of the table this engine lacks, and removes those the table lost
 * (recover, and the heartbeat when the table changed). */
void cluster_keys_sync(cuzk_engine *e);
/* A partition proved and recorded (lock held): the host's rate. */
void cluster_part_done(cuzk_engine *e);

/* ---- keys.c: registration without the key table ---- */
cuzk_err key_add_local(cuzk_engine *e, cuzk_engine_key_info *info, const char *id,
                       const char *path, const cuzk_engine_key_opts *opts) CUZK_WUR;
cuzk_err key_remove_local(cuzk_engine *e, const char *id) CUZK_WUR;

/* ---- witness.c ---- */
cuzk_err witness_dirs_open(cuzk_engine *e) CUZK_WUR;
extern atomic_bool witness_use_openat2;   /* false: the O_NOFOLLOW walk only */
void witness_dirs_close(cuzk_engine *e);
/* Opens the witness at path as allow_dirs says: a regular file, no link followed beneath an
 * allowed directory. *fd the descriptor. */
cuzk_err witness_open(const cuzk_engine *e, const char *path, int *fd) CUZK_WUR;
/* Loads the witness open at fd (called name in errors) into buf (room for cap values). */
cuzk_err witness_load_fd(cuzk_wtns **w, int fd, const char *name, cuzk_fr *buf,
                         size_t cap) CUZK_WUR;
/* The submission's check of the witness open at fd: cuzk_wtns_check (every value below r,
 * none kept; (*w)->w holds the first alone). */
cuzk_err witness_check_fd(cuzk_wtns **w, int fd, const char *name) CUZK_WUR;

/* ---- jobs.c (lock held) ---- */
job *job_find(cuzk_engine *e, const char *id);
/* Sets the final state once; false when the job was already final. */
bool job_finish(cuzk_engine *e, job *j, cuzk_job_state st, const char *reason);
/* The same; journal false leaves the job unfinished in the journal (shutdown). */
bool job_finish_ex(cuzk_engine *e, job *j, cuzk_job_state st, const char *reason, bool journal);
/* Lists j (new or recovered) and queues it when it has partitions to run. */
void job_link(cuzk_engine *e, job *j);
/* Frees the job's inputs and its key reference once it is final and nothing of it is in
 * flight any more. */
void job_retire_inputs(cuzk_engine *e, job *j);
/* Frees a job taken off the list (its inputs first, when still there). */
void job_free(cuzk_engine *e, job *j);

/* ---- sched.c (lock held) ---- */
void sched_queue_remove(cuzk_engine *e, job *j);
/* The job whose partition goes next (highest priority, oldest), or NULL. */
job *sched_queue_head(cuzk_engine *e);
/* Hands out j's next partition (NULL when out of memory: the job failed). */
part *sched_take(cuzk_engine *e, job *j);
/* Reserves memory for partition p (and its key when evicted). Returns 1 when reserved and
 * the caller must load the key (key_reload), 0 when reserved with the key loaded, -1 when
 * the job ended or the partition can never fit (job failed). May wait. */
int sched_reserve(cuzk_engine *e, part *p);
/* The ready list, in order: priority desc, then submission order, then partition. */
void sched_ready_put(cuzk_engine *e, part *p);
part *sched_ready_take(cuzk_engine *e);   /* NULL when empty */
/* A partition leaves the pipeline: its reservation and witness go back. */
void part_retire(cuzk_engine *e, part *p);
/* The same, failing its job with "partition I: what: detail". */
void part_fail(cuzk_engine *e, part *p, const char *what, cuzk_err err, const char *detail);

/* ---- wpool.c (lock held) ---- */
/* An idle buffer with room for n values (the smallest that fits), or NULL; *cap its room. */
cuzk_fr *wpool_take(cuzk_engine *e, size_t n, size_t *cap);
/* Keeps b (room for cap values) when there is room in the pool and the budget, else frees it. */
void wpool_put(cuzk_engine *e, cuzk_fr *b, size_t cap);
/* Frees the largest idle buffer; false when there is none. */
bool wpool_drop(cuzk_engine *e);
/* The partition's witness goes: its buffer to the pool. */
void witness_release(cuzk_engine *e, part *p);

/* ---- the threads: loader.c, device.c, finalizer.c, reaper.c ---- */
void loader_main(cuzk_engine *e);
/* Fills e->devices: every visible GPU when the GPU backend is chosen, else the CPU. */
void devices_init(cuzk_engine *e);
void device_worker_main(cuzk_engine *e, device *d, unsigned widx);
void finalizer_main(cuzk_engine *e);
void *reaper_main(void *arg);

#endif
