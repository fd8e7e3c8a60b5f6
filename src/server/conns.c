/* SPDX-License-Identifier: Apache-2.0 */
/* Deadlines of the connections: libmicrohttpd's own timeout is an idle timeout that every
 * byte restarts, so a client sending a byte now and then would hold its connection for
 * ever. Here each connection is tracked from libmicrohttpd's connect notification to its
 * close notification, and a timer thread shuts down (shutdown(2), not close: the descriptor
 * stays libmicrohttpd's) a connection whose request headers are not complete header_timeout
 * seconds after the connection opened or its previous request ended, or whose body arrives
 * slower than header_timeout seconds plus one second per body_min_rate bytes received.
 *
 * Descriptor reuse: libmicrohttpd calls the close notification before it closes the
 * socket, and the notification takes the list's lock to leave the list; the timer calls
 * shutdown under the same lock, so the descriptor it shuts down is always still the
 * connection's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "server/server_internal.h"
#include "util/timing.h"

#define CONNS_TICK_MS 100

conn_track *conns_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void conns_phase(conn_track *t, conn_phase phase)
{
    if (!t)
        return;
    atomic_store(&t->since_ms, cuzk_now_ms());
    atomic_store(&t->body_bytes, 0);
    atomic_store(&t->phase, phase);
}

void conns_body_bytes(conn_track *t, size_t n)
{
    if (t)
        atomic_fetch_add(&t->body_bytes, (uint64_t)n);
}

void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                  enum MHD_ConnectionNotificationCode code)
{
    server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_track *t = calloc(1, sizeof *t);
        *socket_context = t;
        if (!t)
            return;   /* untracked: libmicrohttpd's idle timeout still applies */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        t->fd = ci ? ci->connect_fd : -1;
        conns_phase(t, CONN_HEADERS);
        pthread_mutex_lock(&s->conns_mu);
        t->next = s->conns;
        if (s->conns)
            s->conns->prev = t;
        s->conns = t;
        s->n_conns++;
        pthread_mutex_unlock(&s->conns_mu);
        return;
    }
    conn_track *t = *socket_context;
    *socket_context = NULL;
    if (!t)
        return;
    pthread_mutex_lock(&s->conns_mu);   /* the socket is closed after this returns */
    if (t->prev)
        t->prev->next = t->next;
    else
        s->conns = t->next;
    if (t->next)
        t->next->prev = t->prev;
    s->n_conns--;
    pthread_mutex_unlock(&s->conns_mu);
    free(t);
}

/* Whether t is past its deadline at now_ms. */
static bool conns_late(const server *s, conn_track *t, double now_ms)
{
    conn_phase ph = atomic_load(&t->phase);
    double waited_s = (now_ms - atomic_load(&t->since_ms)) / 1e3;
    double limit = s->cfg.header_timeout_s;
    if (limit <= 0)
        return false;
    if (ph == CONN_HEADERS)
        return waited_s > limit;
    if (ph == CONN_BODY) {
        if (s->cfg.body_min_rate == 0)
            return false;
        return waited_s > limit + (double)atomic_load(&t->body_bytes) / (double)s->cfg.body_min_rate;
    }
    return false;   /* answering, or a long poll: libmicrohttpd's idle timeout, the poll's wait */
}

static void *conns_timer(void *arg)
{
    server *s = arg;
    pthread_mutex_lock(&s->conns_mu);
    while (!s->conns_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += CONNS_TICK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->conns_cv, &s->conns_mu, &ts);
        if (s->conns_stop)
            break;
        double now = cuzk_now_ms();
        unsigned cut = 0;
        for (conn_track *t = s->conns; t; t = t->next) {
            if (t->cut || t->fd < 0 || !conns_late(s, t, now))
                continue;
            t->cut = true;
            shutdown(t->fd, SHUT_RDWR);   /* libmicrohttpd sees the end and closes it */
            cut++;
        }
        if (cut) {
            s->conns_cut += cut;
            cuzk_engine_log(s->e, CUZK_LOG_DEBUG, "event=http_deadline connections=%u", cut);
        }
    }
    pthread_mutex_unlock(&s->conns_mu);
    return NULL;
}

cuzk_err conns_start(server *s)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int r = pthread_cond_init(&s->conns_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (r != 0 || pthread_mutex_init(&s->conns_mu, NULL) != 0)
        return cuzk_error_set(CUZK_ENOMEM, "server: cannot make the connection timer's lock");
    s->conns_init = true;
    if (pthread_create(&s->conns_thread, NULL, conns_timer, s) != 0)
        return cuzk_error_set(CUZK_ENOMEM, "server: cannot start the connection timer");
    s->conns_running = true;
    return CUZK_OK;
}

void conns_stop(server *s)
{
    if (s->conns_running) {
        pthread_mutex_lock(&s->conns_mu);
        s->conns_stop = true;
        pthread_cond_signal(&s->conns_cv);
        pthread_mutex_unlock(&s->conns_mu);
        pthread_join(s->conns_thread, NULL);
        s->conns_running = false;
    }
}

void conns_free(server *s)
{
    if (!s->conns_init)
        return;
    pthread_mutex_destroy(&s->conns_mu);
    pthread_cond_destroy(&s->conns_cv);
    s->conns_init = false;
}
