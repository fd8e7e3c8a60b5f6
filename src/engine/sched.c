/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's scheduler: the priority queue of jobs (effective priority, then age), the
 * partitions it hands out, their memory reservations against the budget, the ready list the
 * device workers take from (effective priority, age, partition), and a partition's
 * retirement. Every function here runs with the engine lock held.
 *
 * Aging: a job's effective priority is its priority raised one level per priority_aging_s
 * seconds since its submission, up to critical, so a low job waits at most about three
 * such periods before it competes with critical jobs as an equal (then the older goes
 * first): a stream of critical jobs cannot starve it. priority_aging_s = 0: no aging. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/engine_internal.h"

static int sched_effective(const cuzk_engine *e, const job *j, double now)
{
    int p = (int)j->prio, top = CUZK_PRIO_COUNT - 1;
    double a = e->cfg.priority_aging_s;
    if (a > 0 && now > j->submitted) {
        double levels = (now - j->submitted) / a;
        p = levels >= top ? top : p + (int)levels;
    }
    return p < top ? p : top;
}

/* Whether job a goes before job b at now: higher effective priority, then older, then
 * higher priority of its own, then accepted earlier. */
static bool sched_job_before(const cuzk_engine *e, const job *a, const job *b, double now)
{
    int ea = sched_effective(e, a, now), eb = sched_effective(e, b, now);
    if (ea != eb)
        return ea > eb;
    if (a->submitted != b->submitted)
        return a->submitted < b->submitted;
    if (a->prio != b->prio)
        return a->prio > b->prio;
    return a->seq < b->seq;   /* jobs recovered together: in their order of acceptance */
}

/* ---- the queue of jobs with partitions still to start ---- */

void sched_queue_remove(cuzk_engine *e, job *j)
{
    if (!j->in_queue)
        return;
    job **pp = &e->qhead[j->prio], *prev = NULL;
    while (*pp && *pp != j) {
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    if (*pp) {
        *pp = j->qnext;
        if (e->qtail[j->prio] == j)
            e->qtail[j->prio] = prev;
    }
    j->qnext = NULL;
    j->in_queue = false;
}

/* Each priority's queue is in submission order, so its head is the one of its jobs that
 * has aged most: the best of the heads goes next. */
job *sched_queue_head(cuzk_engine *e)
{
    double now = engine_now(e);
    job *best = NULL;
    for (int pr = CUZK_PRIO_COUNT - 1; pr >= 0; pr--)
        if (e->qhead[pr] && (!best || sched_job_before(e, e->qhead[pr], best, now)))
            best = e->qhead[pr];
    return best;
}

part *sched_take(cuzk_engine *e, job *j)
{
    part *p = calloc(1, sizeof *p);
    if (!p) {
        job_finish(e, j, CUZK_JOB_FAILED, "out of memory");
        return NULL;
    }
    p->j = j;
    p->idx = j->next_part++;
    p->key = j->key;
    if (j->next_part == j->n)
        sched_queue_remove(e, j);
    j->outstanding++;
    if (j->state == CUZK_JOB_QUEUED) {
        j->state = CUZK_JOB_RUNNING;
        j->t.queue_ms = (engine_now(e) - j->submitted) * 1e3;
    }
    return p;
}

/* ---- memory reservations ---- */

int sched_reserve(cuzk_engine *e, part *p)
{
    key_entry *k = p->key;
    for (;;) {
        if (is_final(p->j->state))
            return -1;
        if (k->st == KEY_LOADING) {
            pthread_cond_wait(&e->cv_load, &e->mu);
            continue;
        }
        uint64_t need = k->part_bytes + (k->st == KEY_UNLOADED ? k->key_bytes : 0);
        if (e->mem_used + need <= e->cfg.memory_budget) {
            e->mem_used += need;
            p->reserved = k->part_bytes;
            k->in_flight++;
            e->n_reserved++;
            if (k->st == KEY_UNLOADED) {
                k->st = KEY_LOADING;
                return 1;
            }
            return 0;
        }
        if (wpool_drop(e) || key_evict_one(e, k))
            continue;
        if (e->n_reserved == 0) {
            char why[300];
            snprintf(why, sizeof why,
                     "memory budget: needs %llu bytes, %llu of %llu in use by keys, and "
                     "nothing in flight to wait for",
                     (unsigned long long)need, (unsigned long long)e->mem_used,
                     (unsigned long long)e->cfg.memory_budget);
            job_finish(e, p->j, CUZK_JOB_FAILED, why);
            return -1;
        }
        pthread_cond_wait(&e->cv_load, &e->mu);
    }
}

/* ---- the ready list ---- */

/* The ready list is short (lookahead): kept in arrival order, the order of taking is
 * decided at each take, with the effective priorities of that moment. */
void sched_ready_put(cuzk_engine *e, part *p)
{
    part **pp = &e->ready;
    while (*pp)
        pp = &(*pp)->next;
    p->next = NULL;
    *pp = p;
    e->n_ready++;
    pthread_cond_signal(&e->cv_ready);
}

part *sched_ready_take(cuzk_engine *e)
{
    if (!e->ready)
        return NULL;
    double now = engine_now(e);
    part **best = &e->ready;
    for (part **pp = &e->ready->next; *pp; pp = &(*pp)->next) {
        const part *a = *pp, *b = *best;
        bool before = a->j == b->j ? a->idx < b->idx : sched_job_before(e, a->j, b->j, now);
        if (before)
            best = pp;
    }
    part *p = *best;
    *best = p->next;
    p->next = NULL;
    e->n_ready--;
    pthread_cond_broadcast(&e->cv_load);   /* a lookahead slot is free */
    return p;
}

/* ---- retirement ---- */

void part_retire(cuzk_engine *e, part *p)
{
    if (p->reserved) {
        e->mem_used -= p->reserved;
        p->key->in_flight--;
        p->key->last_used = engine_now(e);
        e->n_reserved--;
    }
    p->j->outstanding--;
    job_retire_inputs(e, p->j);
    witness_release(e, p);
    free(p->pub);
    if (p->pend)
        cuzk_groth16_pending_free(p->pend);
    free(p);
    pthread_cond_broadcast(&e->cv_load);
    pthread_cond_broadcast(&e->cv_job);
}

void part_fail(cuzk_engine *e, part *p, const char *what, cuzk_err err, const char *detail)
{
    char why[512];
    snprintf(why, sizeof why, "partition %zu: %s: %.440s", p->idx, what,
             detail && detail[0] ? detail : cuzk_strerror(err));
    job_finish(e, p->j, CUZK_JOB_FAILED, why);
    part_retire(e, p);
}
