/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's reaper: fails jobs past job_timeout_s and forgets final jobs result_ttl_s
 * after their end, waking every 100 ms; once a second it deletes the journal's expired jobs
 * (in a farm also: the farm's jobs past their time failed, its queue aged). */
#include <stdio.h>

#include "engine/engine_internal.h"

void *reaper_main(void *arg)
{
    cuzk_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    while (!e->stop) {
        struct timespec ts;
        engine_deadline(&ts, 0.1);
        pthread_cond_timedwait(&e->cv_job, &e->mu, &ts);
        double now = engine_now(e);
        if (e->st && now - e->journal_expired_at >= 1.0) {
            e->journal_expired_at = now;
            pthread_mutex_unlock(&e->mu);
            journal_expire(e);
            if (e->cluster && e->cfg.job_timeout_s > 0) {   /* the farm's jobs, by any daemon */
                char why[128];
                unsigned n = 0;
                snprintf(why, sizeof why, "timed out after %.3g s (job_timeout_s)",
                         e->cfg.job_timeout_s);
                if (store_cluster(e->st)->fail_older(e->st, engine_wall() - e->cfg.job_timeout_s,
                                                     why, engine_wall(), &n) == CUZK_OK && n)
                    LOG(e, CUZK_LOG_WARN, "event=jobs_timed_out jobs=%u", n);
            }
            unsigned aged = 0;   /* the farm's queue ages as the local one does */
            if (e->cluster && e->cfg.priority_aging_s > 0 &&
                store_cluster(e->st)->age(e->st, e->cfg.priority_aging_s, &aged) == CUZK_OK &&
                aged)
                LOG(e, CUZK_LOG_DEBUG, "event=queue_aged partitions=%u", aged);
            pthread_mutex_lock(&e->mu);
            now = engine_now(e);
        }
        job **pp = &e->jobs, *prev = NULL;
        while (*pp) {
            job *j = *pp;
            if (!j->shadow && !is_final(j->state) && !j->committing_done &&
                e->cfg.job_timeout_s > 0 &&
                now - j->submitted > e->cfg.job_timeout_s) {
                char why[128];
                snprintf(why, sizeof why, "timed out after %.3g s (job_timeout_s)",
                         e->cfg.job_timeout_s);
                job_finish(e, j, CUZK_JOB_FAILED, why);
            }
            if (is_final(j->state) && j->outstanding == 0 &&
                (j->shadow || now - j->finished > e->cfg.result_ttl_s)) {
                *pp = j->next;
                if (e->jobs_tail == j)
                    e->jobs_tail = prev;
                job_free(e, j);
                continue;
            }
            prev = j;
            pp = &j->next;
        }
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}
