/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's devices and their workers: each worker takes the first ready partition,
 * runs prove_start under its device's lock (on a GPU the prover holds the lock around its
 * device work only, with the key's resident copy on that device), accounts the device's
 * busy time and idle gaps, and hands the partition to the finalisers. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/engine_internal.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif

void devices_init(cuzk_engine *e)
{
    /* every visible GPU when the GPU backend is chosen (the config's, or AUTO with a device
     * present), else the CPU pseudo-device */
    e->n_devices = 0;
#ifdef CUZK_HAVE_CUDA
    const cuzk_prove_opts bo = {.backend = e->cfg.backend};
    if (cuzk_groth16_backend(&bo) == CUZK_BACKEND_GPU) {
        int ng = cuzk_gpu_device_count();
        for (int g = 0; g < ng && e->n_devices < CUZK_ENGINE_MAX_DEVICES; g++) {
            device *dv = &e->devices[e->n_devices++];
            snprintf(dv->name, sizeof dv->name, "gpu%d", g);
            dv->gpu = g;
        }
    }
#endif
    if (e->n_devices == 0) {
        e->n_devices = 1;
        snprintf(e->devices[0].name, sizeof e->devices[0].name, "cpu0");
        e->devices[0].gpu = -1;
    }
}

/* The device's occupancy after a partition whose device work ran from ds to de (engine
 * clock): busy time, and the gap since the latest end before it (0 when they touch;
 * workers may report out of order). Lock held. */
static void device_account(device *d, double ds, double de)
{
    d->busy_s += de - ds;
    if (d->partitions > 0) {
        double gap = ds > d->last_end_s ? ds - d->last_end_s : 0;
        d->gap_s += gap;
        d->gaps++;
        if (gap > d->gap_max_s)
            d->gap_max_s = gap;
    }
    if (de > d->last_end_s)
        d->last_end_s = de;
    d->partitions++;
}

void device_worker_main(cuzk_engine *e, device *d, unsigned widx)
{
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->stop && !e->ready)
            pthread_cond_wait(&e->cv_ready, &e->mu);
        if (e->stop)
            break;
        part *p = sched_ready_take(e);
        job *j = p->j;
        if (is_final(j->state)) {
            part_retire(e, p);
            continue;
        }
        e->n_device++;
        d->busy++;
        key_entry *k = p->key;
        pthread_mutex_unlock(&e->mu);

        LOG(e, CUZK_LOG_INFO, "event=prove_pickup job=%s part=%zu dev=%s worker=%u",
            j->id, p->idx, d->name, widx);
        cuzk_prove_opts po = {.nthreads = e->cfg.prove_threads};
        cuzk_err r = CUZK_OK;
        if (d->gpu >= 0) {
            /* GPU: the prover holds the device lock around its device work only */
            po.backend = CUZK_BACKEND_GPU;
            po.device_lock = &d->lock;
            r = key_gpu(e, k, d, &po.gpu_key);
        } else {
            po.backend = CUZK_BACKEND_CPU;
            pthread_mutex_lock(&d->lock);
        }
        double t0 = engine_now(e);
        LOG(e, CUZK_LOG_INFO, "event=prove_start job=%s part=%zu dev=%s worker=%u",
            j->id, p->idx, d->name, widx);
        const cuzk_fr *wv = p->w->w;
        if (r == CUZK_OK)
            r = cuzk_key_prove_start(&p->pend, k->key, &wv, 1, p->w->n, &po);
        char why[600];
        snprintf(why, sizeof why, "%s", r == CUZK_OK ? "" : cuzk_error_detail());
        if (e->cfg.debug_device_delay_ms) {
            struct timespec ts = {e->cfg.debug_device_delay_ms / 1000,
                                  (long)(e->cfg.debug_device_delay_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        double t1 = engine_now(e);
        if (d->gpu < 0)
            pthread_mutex_unlock(&d->lock);
        /* the prover's own split: CPU side (synthesis, bit vectors) and device lock held */
        cuzk_prove_timings pt;
        memset(&pt, 0, sizeof pt);
        if (r == CUZK_OK)
            cuzk_groth16_pending_timings(p->pend, &pt);
        LOG(e, CUZK_LOG_INFO,
            "event=prove_end job=%s part=%zu dev=%s worker=%u ms=%.3f prep_ms=%.3f device_ms=%.3f"
            " abc_ms=%.3f ntt_ms=%.3f h_msm_ms=%.3f batch_add_ms=%.3f tail_ms=%.3f b2_ms=%.3f"
            " split_wait_ms=%.3f%s",
            j->id, p->idx, d->name, widx, (t1 - t0) * 1e3, pt.prep_ms, pt.device_ms,
            pt.dev_abc_ms, pt.dev_ntt_ms, pt.dev_h_msm_ms, pt.dev_batch_add_ms, pt.dev_tail_ms,
            pt.dev_b2_ms, pt.dev_split_wait_ms, r == CUZK_OK ? "" : " error=1");
        /* Device occupancy: on a GPU the prover reports when it held the device; the CPU
         * pseudo-device is held for the whole call. */
        double ds = t0, de = t1;
        if (d->gpu >= 0 && r == CUZK_OK) {
            ds = pt.device_first_ms / 1e3 - e->t0;
            de = pt.device_last_ms / 1e3 - e->t0;
        }

        pthread_mutex_lock(&e->mu);
        /* The pending proof holds its own copy of the witness, or (the GPU) no longer reads
         * it: its buffer is free for the next load. */
        witness_release(e, p);
        e->n_device--;
        d->busy--;
        device_account(d, ds, de);
        j->t.prove_ms += (t1 - t0) * 1e3;
        e->stage_s[STAGE_PROVE] += t1 - t0;
        if (r != CUZK_OK) {
            part_fail(e, p, "prove", r, why);
            continue;
        }
        if (is_final(j->state)) {
            part_retire(e, p);
            continue;
        }
        if (e->fin_tail)
            e->fin_tail->next = p;
        else
            e->fin_head = p;
        e->fin_tail = p;
        pthread_cond_signal(&e->cv_fin);
    }
    pthread_mutex_unlock(&e->mu);
}
