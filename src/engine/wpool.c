/* SPDX-License-Identifier: Apache-2.0 */
/* Witness buffers of finished partitions, kept for the next loads (cuzk_wtns_load_into): a
 * fresh buffer costs its page faults and zeroing each time. Idle buffers count in the
 * memory budget and are the first thing given back when a reservation does not fit. Every
 * function here runs with the engine lock held. */
#include <stdlib.h>

#include "engine/engine_internal.h"

cuzk_fr *wpool_take(cuzk_engine *e, size_t n, size_t *cap)
{
    unsigned best = e->n_wpool;
    for (unsigned i = 0; i < e->n_wpool; i++)
        if (e->wpool[i].cap >= n && (best == e->n_wpool || e->wpool[i].cap < e->wpool[best].cap))
            best = i;
    if (best == e->n_wpool) {
        *cap = 0;
        return NULL;
    }
    cuzk_fr *b = e->wpool[best].p;
    *cap = e->wpool[best].cap;
    e->mem_used -= *cap * sizeof(cuzk_fr);
    e->wpool[best] = e->wpool[--e->n_wpool];
    return b;
}

void wpool_put(cuzk_engine *e, cuzk_fr *b, size_t cap)
{
    uint64_t bytes = (uint64_t)cap * sizeof(cuzk_fr);
    if (!b)
        return;
    if (e->stop || e->n_wpool == ENGINE_WPOOL_MAX ||
        e->mem_used + bytes > e->cfg.memory_budget) {
        free(b);
        return;
    }
    e->wpool[e->n_wpool++] = (struct wbuf){b, cap};
    e->mem_used += bytes;
}

bool wpool_drop(cuzk_engine *e)
{
    if (e->n_wpool == 0)
        return false;
    unsigned big = 0;
    for (unsigned i = 1; i < e->n_wpool; i++)
        if (e->wpool[i].cap > e->wpool[big].cap)
            big = i;
    e->mem_used -= (uint64_t)e->wpool[big].cap * sizeof(cuzk_fr);
    free(e->wpool[big].p);
    e->wpool[big] = e->wpool[--e->n_wpool];
    return true;
}

void witness_release(cuzk_engine *e, part *p)
{
    if (!p->w)
        return;
    cuzk_fr *b = p->w->w;
    size_t cap = p->w->cap;
    p->w->w = NULL; /* the buffer is the pool's now, borrowed or not */
    cuzk_wtns_free(p->w);
    p->w = NULL;
    wpool_put(e, b, cap);
}
