/* SPDX-License-Identifier: Apache-2.0 */
/* Long polls (GET /v1/proofs/ID?wait=S) without a thread each: the request's connection is
 * suspended (MHD_suspend_connection) and a waiter thread resumes it when the job may have
 * ended or the wait is over; the handler, called again, then answers with the job as it is.
 * The waiter looks at the engine's count of ended jobs every tick and asks about each
 * waiting job only when that count moved, so a thousand polls cost nothing while no job
 * ends. The job id is the handler's string, passed back to its `final` function as is. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server_internal.h"
#include "util/timing.h"

#define LONGPOLL_TICK_MS 20

struct longpoll_waiter {
    struct longpoll_waiter *next;
    struct MHD_Connection *c;
    conn_track *t;
    longpoll_final_fn final;
    double deadline_ms;
    bool fresh;   /* not looked at by the waiter yet: the job may have ended meanwhile */
    char id[];
};

/* Jobs that ended (any final state) so far: when it moves, waiting jobs are looked at. */
static uint64_t ended_count(server *s)
{
    cuzk_engine_stats st;
    cuzk_engine_get_stats(s->e, &st);
    return st.jobs_done + st.jobs_failed + st.jobs_cancelled + st.jobs_ended_seen +
           (st.shutting_down ? 1 : 0);
}

/* Resumes w's connection and frees w; s->lp_mu held. */
static void waiter_resume(longpoll_waiter *w)
{
    atomic_store(&w->t->poll, LONGPOLL_RESUMED);
    MHD_resume_connection(w->c);
    free(w);
}

static void *longpoll_thread(void *arg)
{
    server *s = arg;
    uint64_t seen = ended_count(s);
    pthread_mutex_lock(&s->lp_mu);
    while (!s->lp_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += LONGPOLL_TICK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->lp_cv, &s->lp_mu, &ts);
        if (s->lp_stop || !s->lp_head)
            continue;
        pthread_mutex_unlock(&s->lp_mu);
        uint64_t now_count = ended_count(s);
        pthread_mutex_lock(&s->lp_mu);
        bool moved = now_count != seen;
        seen = now_count;
        double now = cuzk_now_ms();
        for (longpoll_waiter **pp = &s->lp_head; *pp;) {
            longpoll_waiter *w = *pp;
            bool look = moved || w->fresh;
            w->fresh = false;
            if (now >= w->deadline_ms || (look && w->final(s, w->id))) {
                *pp = w->next;
                s->lp_n--;
                waiter_resume(w);
            } else {
                pp = &w->next;
            }
        }
    }
    pthread_mutex_unlock(&s->lp_mu);
    return NULL;
}

bool longpoll_wait(server *s, struct MHD_Connection *c, const char *id, double wait_s,
                   longpoll_final_fn final)
{
    conn_track *t = conns_of(c);
    if (!t)
        return false;   /* untracked (out of memory at connect): answered at once */
    if (atomic_load(&t->poll) == LONGPOLL_RESUMED) {
        atomic_store(&t->poll, LONGPOLL_NONE);   /* this request's wait is over */
        return false;
    }
    if (!(wait_s > 0) || final(s, id))
        return false;
    size_t n = strlen(id);
    longpoll_waiter *w = malloc(sizeof *w + n + 1);
    if (!w)
        return false;
    memcpy(w->id, id, n + 1);
    w->c = c;
    w->t = t;
    w->final = final;
    w->deadline_ms = cuzk_now_ms() + wait_s * 1e3;
    w->fresh = true;
    pthread_mutex_lock(&s->lp_mu);
    if (s->lp_stop || !s->lp_running) {   /* stopping: no new suspension */
        pthread_mutex_unlock(&s->lp_mu);
        free(w);
        return false;
    }
    atomic_store(&t->poll, LONGPOLL_WAITING);
    /* under the lock: the waiter cannot resume it before it is suspended */
    MHD_suspend_connection(c);
    w->next = s->lp_head;
    s->lp_head = w;
    s->lp_n++;
    pthread_mutex_unlock(&s->lp_mu);
    return true;
}

unsigned longpoll_count(server *s)
{
    pthread_mutex_lock(&s->lp_mu);
    unsigned n = s->lp_n;
    pthread_mutex_unlock(&s->lp_mu);
    return n;
}

cuzk_err longpoll_start(server *s)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int r = pthread_cond_init(&s->lp_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (r != 0 || pthread_mutex_init(&s->lp_mu, NULL) != 0)
        return cuzk_error_set(CUZK_ENOMEM, "server: cannot make the long poll waiter's lock");
    s->lp_init = true;
    if (pthread_create(&s->lp_thread, NULL, longpoll_thread, s) != 0)
        return cuzk_error_set(CUZK_ENOMEM, "server: cannot start the long poll waiter");
    s->lp_running = true;
    return CUZK_OK;
}

void longpoll_stop(server *s)
{
    if (!s->lp_init)
        return;
    pthread_mutex_lock(&s->lp_mu);
    s->lp_stop = true;
    pthread_cond_signal(&s->lp_cv);
    pthread_mutex_unlock(&s->lp_mu);
    if (s->lp_running)
        pthread_join(s->lp_thread, NULL);
    s->lp_running = false;
    /* libmicrohttpd must not stop with suspended connections: every poll is answered */
    pthread_mutex_lock(&s->lp_mu);
    while (s->lp_head) {
        longpoll_waiter *w = s->lp_head;
        s->lp_head = w->next;
        s->lp_n--;
        waiter_resume(w);
    }
    pthread_mutex_unlock(&s->lp_mu);
}

void longpoll_free(server *s)
{
    if (!s->lp_init)
        return;
    pthread_mutex_destroy(&s->lp_mu);
    pthread_cond_destroy(&s->lp_cv);
    s->lp_init = false;
}
