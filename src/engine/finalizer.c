/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's finalisers: each takes the next partition the devices finished, runs
 * prove_finish (B_G2's join, the randomisation), self-verifies the proof when the engine
 * verifies, and stores it in its job (done when it was the job's last). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/engine_internal.h"

void finalizer_main(cuzk_engine *e)
{
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->fin_head && !(e->stop && e->n_device == 0 && !e->ready))
            pthread_cond_wait(&e->cv_fin, &e->mu);
        if (!e->fin_head)
            break;
        part *p = e->fin_head;
        e->fin_head = p->next;
        if (!e->fin_head)
            e->fin_tail = NULL;
        p->next = NULL;
        e->n_fin++;
        job *j = p->j;
        const cuzk_vk *vk = cuzk_key_vk(p->key->key);
        uint32_t npub = p->key->n_public;
        bool verify = e->cfg.verify;
        pthread_mutex_unlock(&e->mu);

        double t0 = engine_now(e);
        cuzk_proof proof;
        cuzk_err r = cuzk_groth16_prove_finish(&proof, NULL, p->pend);
        char why[600];
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        cuzk_groth16_pending_free(p->pend);
        p->pend = NULL;
        double t1 = engine_now(e);
        LOG(e, CUZK_LOG_INFO, "event=finalize_end job=%s part=%zu ms=%.3f%s",
            j->id, p->idx, (t1 - t0) * 1e3, r == CUZK_OK ? "" : " error=1");
        cuzk_err vr = CUZK_OK;
        if (r == CUZK_OK && verify) {
            vr = cuzk_groth16_verify(vk, p->pub, npub, &proof);
            if (vr != CUZK_OK)
                snprintf(why, sizeof why, "%s", cuzk_error_detail());
        }
        double t2 = engine_now(e);
        if (verify && r == CUZK_OK)
            LOG(e, vr == CUZK_OK ? CUZK_LOG_DEBUG : CUZK_LOG_ERROR,
                "event=verify_end job=%s part=%zu ms=%.3f ok=%d", j->id,
                p->idx, (t2 - t1) * 1e3, vr == CUZK_OK);

        pthread_mutex_lock(&e->mu);
        e->n_fin--;
        j->t.finalize_ms += (t1 - t0) * 1e3;
        j->t.verify_ms += (t2 - t1) * 1e3;
        e->stage_s[STAGE_FINALIZE] += t1 - t0;
        e->stage_s[STAGE_VERIFY] += t2 - t1;
        if (r != CUZK_OK) {
            part_fail(e, p, "finish", r, why);
            continue;
        }
        if (vr != CUZK_OK) {
            part_fail(e, p, "self-verification failed (the witness likely does not satisfy "
                      "the circuit)", vr, why);
            continue;
        }
        if (j->shadow && !is_final(j->state)) {
            /* the farm's partition: recorded in the store, tried until it answers (the
             * lease may run out meanwhile: then the first proof recorded wins) */
            j->committing_done = true;
            pthread_mutex_unlock(&e->mu);
            bool completed = false;
            cuzk_err jr;
            unsigned waits = 0;
            for (;;) {
                jr = store_put_claimed(e->st, e->owner, j->id, (uint32_t)p->idx, &proof, p->pub,
                                       npub, engine_wall(), &completed);
                if (jr == CUZK_OK || jr != CUZK_EIO)
                    break;
                snprintf(why, sizeof why, "%s", cuzk_error_detail());
                pthread_mutex_lock(&e->mu);
                e->c_store_errors++;
                cluster_store_state(e, false, why);
                bool stop = e->stop;
                pthread_mutex_unlock(&e->mu);
                if (stop || waits++ > 600)
                    break;
                struct timespec ts = {1, 0};
                nanosleep(&ts, NULL);
            }
            snprintf(why, sizeof why, "%s", jr == CUZK_OK ? "" : cuzk_error_detail());
            pthread_mutex_lock(&e->mu);
            j->committing_done = false;
            pthread_cond_broadcast(&e->cv_job);
            if (jr != CUZK_OK) {
                /* not recorded: the lease runs out and another daemon proves it */
                LOG(e, CUZK_LOG_WARN, "event=record_failed job=%s part=%zu reason=\"%s\"",
                    j->id, p->idx, why);
                job_finish_ex(e, j, CUZK_JOB_FAILED, why, false);
                part_retire(e, p);
                continue;
            }
            cluster_store_state(e, true, NULL);
            j->n_recorded++;
            cluster_part_done(e);
            e->c_commits++;
            if (completed) {
                e->c_cl_done++;
                LOG(e, CUZK_LOG_INFO, "event=job_done job=%s partitions=%zu owner=%s", j->id,
                    j->n, e->owner);
            }
        } else if (e->st && !is_final(j->state)) {
            /* the proof is on disk before it counts; the last one makes the job done there */
            bool last = ++j->n_recorded == j->n;
            j->committing_done = last;
            pthread_mutex_unlock(&e->mu);
            if (last && e->cfg.debug_journal_delay_ms) {
                struct timespec ts = {e->cfg.debug_journal_delay_ms / 1000,
                                      (long)(e->cfg.debug_journal_delay_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
            }
            cuzk_err jr = store_put_part(e->st, j->id, (uint32_t)p->idx, &proof, p->pub, npub,
                                         last ? engine_wall() : 0);
            snprintf(why, sizeof why, "%s", jr == CUZK_OK ? "" : cuzk_error_detail());
            pthread_mutex_lock(&e->mu);
            if (last) {
                j->committing_done = false;
                pthread_cond_broadcast(&e->cv_job);   /* a cancel waiting for the commit */
            }
            if (jr != CUZK_OK) {
                part_fail(e, p, "journal", jr, why);
                continue;
            }
            e->c_commits++;
        }
        e->c_parts++;
        if (verify)
            e->c_verified++;
        if (!is_final(j->state)) {
            j->proofs[p->idx] = proof;
            if (npub)
                memcpy(j->publics + p->idx * npub, p->pub, sizeof(cuzk_fr) * npub);
            if (++j->n_done == (j->shadow ? j->n_claimed : j->n))
                job_finish(e, j, CUZK_JOB_DONE, NULL);
        }
        part_retire(e, p);
    }
    pthread_mutex_unlock(&e->mu);
}
