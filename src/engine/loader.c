/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's witness loaders: each takes the next partition from the queue (at most
 * `lookahead` loaded partitions wait for a device), reserves its memory, reloads its key
 * when it was evicted, reads and checks the witness, copies the public inputs, and puts the
 * partition on the ready list. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine_internal.h"

/* Loads witness idx of j into buf (room for cap values) when it fits (see cuzk_wtns_load_into). */
static cuzk_err load_witness(cuzk_engine *e, cuzk_wtns **w, const job *j, size_t idx,
                             cuzk_fr *buf, size_t cap)
{
    if (j->paths[idx]) /* opened at submission (or recovery), read from that descriptor */
        return witness_load_fd(w, j->fds[idx], j->paths[idx], buf, cap);
    if (j->spool && j->spool[idx]) {
        int fd = journal_spool_open(e, j->spool[idx]);
        if (fd < 0)
            return cuzk_error_set(CUZK_EIO, "uploaded witness (spool %s): %s", j->spool[idx],
                                  strerror(errno));
        cuzk_err r = witness_load_fd(w, fd, "uploaded witness", buf, cap);
        close(fd);
        return r;
    }
    return cuzk_wtns_load_mem_into(w, "uploaded witness", j->data[idx], j->len[idx], buf, cap);
}

/* The load of partition p (lock not held): the witness into a kept buffer when one fits,
 * checked against the key, and its public inputs. On failure the detail says why. */
static cuzk_err load_part(cuzk_engine *e, part *p, cuzk_fr *wbuf, size_t wcap)
{
    const job *j = p->j;
    const key_entry *k = p->key;
    cuzk_err r = load_witness(e, &p->w, j, p->idx, wbuf, wcap);
    if (wbuf) {
        pthread_mutex_lock(&e->mu);
        if (p->w && p->w->borrowed)
            e->c_wreuse++;
        else /* not taken (a failed load, or a witness too big for it) */
            wpool_put(e, wbuf, wcap);
        pthread_mutex_unlock(&e->mu);
    }
    if (r == CUZK_OK && (r = cuzk_key_check_witness(k->key, p->w->w, p->w->n)) != CUZK_OK) {
        char d[400];
        snprintf(d, sizeof d, "%s", cuzk_error_detail());
        const char *wn = j->paths[p->idx] ? j->paths[p->idx] : "uploaded witness";
        return cuzk_error_set(r, "%s: %s (key %s)", wn, d, k->path);
    }
    /* Public inputs: witness values 1 .. n_public, for both kinds of key. */
    if (r == CUZK_OK && k->n_public) {
        p->pub = malloc(sizeof(cuzk_fr) * k->n_public);
        if (!p->pub)
            return cuzk_error_set(CUZK_ENOMEM, "out of memory");
        memcpy(p->pub, p->w->w + 1, sizeof(cuzk_fr) * k->n_public);
    }
    return r;
}

void loader_main(cuzk_engine *e)
{
    pthread_mutex_lock(&e->mu);
    for (;;) {
        job *j = NULL;
        while (!e->stop &&
               (!(j = sched_queue_head(e)) || e->n_load + e->n_ready >= e->cfg.lookahead))
            pthread_cond_wait(&e->cv_load, &e->mu);
        if (e->stop)
            break;
        part *p = sched_take(e, j);
        if (!p)
            continue;
        if (j->pdone && j->pdone[p->idx]) {   /* proved before a restart */
            part_retire(e, p);
            continue;
        }
        e->n_load++;
        double t0 = engine_now(e);
        int rv = sched_reserve(e, p);
        if (rv < 0) {
            e->n_load--;
            part_retire(e, p);
            continue;
        }
        key_entry *k = p->key;
        char why[600];
        if (rv == 1 && !key_reload(e, k, j->id, why, sizeof why)) {
            e->n_load--;
            part_fail(e, p, "reloading the key", CUZK_EIO, why);
            continue;
        }
        double t1 = engine_now(e);
        j->t.srs_ms += (t1 - t0) * 1e3;
        e->stage_s[STAGE_SRS] += t1 - t0;
        k->last_used = t1;
        size_t wcap;
        cuzk_fr *wbuf = wpool_take(e, k->n_vars, &wcap);
        pthread_mutex_unlock(&e->mu);

        LOG(e, CUZK_LOG_INFO, "event=load_start job=%s part=%zu", j->id,
            p->idx);
        cuzk_err r = load_part(e, p, wbuf, wcap);
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        double t2 = engine_now(e);
        LOG(e, CUZK_LOG_INFO, "event=load_end job=%s part=%zu ms=%.3f%s",
            j->id, p->idx, (t2 - t1) * 1e3, r == CUZK_OK ? "" : " error=1");

        pthread_mutex_lock(&e->mu);
        e->n_load--;
        j->t.load_ms += (t2 - t1) * 1e3;
        e->stage_s[STAGE_LOAD] += t2 - t1;
        if (r != CUZK_OK) {
            part_fail(e, p, "witness", r, why);
            continue;
        }
        if (is_final(j->state)) {
            part_retire(e, p);
            continue;
        }
        p->t_ready = t2;
        sched_ready_put(e, p);
    }
    pthread_mutex_unlock(&e->mu);
}
