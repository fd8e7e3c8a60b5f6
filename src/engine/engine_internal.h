/* Internal state of the engine (include/cuzk/engine.h): one mutex guards everything below
 * except the device locks and what a partition's owner thread touches outside the lock. */
#ifndef CUZK_ENGINE_INTERNAL_H
#define CUZK_ENGINE_INTERNAL_H

#include <pthread.h>

#include "cuzk/engine.h"
#include "cuzk/groth16.h"
#include "cuzk/params.h"
#include "groth16/pk.h"

typedef enum { KEY_UNLOADED = 0, KEY_LOADING = 1, KEY_LOADED = 2 } key_state;
typedef enum { KEY_ZKEY = 0, KEY_PARAMS = 1 } key_kind;

/* A loaded key of either kind, its verification key, and the prover's view of it (which
 * points into zk, or into pa and bc). */
typedef struct {
    cuzk_zkey *zk;                 /* KEY_ZKEY */
    cuzk_params *pa;               /* KEY_PARAMS */
    cuzk_bellman_circuit *bc;      /* KEY_PARAMS: the circuit of the .r1cs */
    cuzk_vk *vk;
    cuzk_pk_view view;
} key_obj;

typedef struct key_entry {
    char id[128];
    char path[4096];
    key_kind kind;
    char r1cs[4096];          /* KEY_PARAMS */
    unsigned pflags;          /* KEY_PARAMS: CUZK_PARAMS_* load flags */
    unsigned refs;            /* 1 while registered + 1 per unretired job */
    bool registered;
    key_state st;
    key_obj obj;              /* valid while LOADED; not evicted while in_flight > 0 */
    uint32_t n_vars, n_public, domain_size;
    uint64_t key_bytes, part_bytes;
    unsigned in_flight;       /* partitions holding a reservation */
    double last_used;
    uint64_t loads;
    cuzk_gpu_key *gk[CUZK_ENGINE_MAX_DEVICES]; /* resident copies per GPU, made on first use */
    struct key_entry *next;
} key_entry;

typedef struct job {
    uint64_t id;
    key_entry *key;           /* NULL once retired */
    char key_id[128];
    cuzk_priority prio;
    cuzk_job_state state;
    char error[512];
    size_t n;
    char **paths;             /* n entries, NULL where uploaded */
    unsigned char **data;     /* n entries, NULL where a path */
    size_t *len;
    size_t next_part;         /* next partition to hand to synthesis */
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

/* A partition in flight: synthesis -> ready -> device -> finalise. */
typedef struct part {
    job *j;
    size_t idx;
    key_entry *key;
    cuzk_wtns *w;
    cuzk_fr *pub;             /* n_public copied before the witness is freed */
    cuzk_pending *pend;
    double t_ready;
    struct part *next;
} part;

#define ENGINE_WPOOL_MAX 8 /* idle witness buffers kept, at most */

struct cuzk_engine {
    cuzk_engine_config cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv_synth;  /* queue, lookahead slots, memory, key loads */
    pthread_cond_t cv_ready;  /* device workers */
    pthread_cond_t cv_fin;    /* finalisers */
    pthread_cond_t cv_job;    /* a job reached its final state; reaper wake-ups */
    pthread_mutex_t log_mu;
    double t0;                /* monotonic seconds at creation */

    key_entry *keys;
    job *jobs, *jobs_tail;
    job *qhead[CUZK_PRIO_COUNT], *qtail[CUZK_PRIO_COUNT];
    part *ready;              /* sorted: priority desc, job id, partition */
    part *fin_head, *fin_tail;
    uint64_t next_id;

    unsigned n_synth, n_ready, n_device, n_fin, n_reserved;
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

    uint64_t c_submitted, c_done, c_failed, c_cancelled, c_rejected;
    uint64_t c_parts, c_verified, c_loads, c_evictions, c_wreuse;
    double stage_s[6];
};

double engine_now(const cuzk_engine *e);

#endif
