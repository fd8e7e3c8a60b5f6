/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's clock and log, and the names of its priorities, job states and log levels. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "engine/engine_internal.h"

/* ---- names ---- */

static const char *const prio_names[CUZK_PRIO_COUNT] = {"low", "normal", "high", "critical"};

const char *cuzk_priority_name(cuzk_priority p)
{
    return (unsigned)p < CUZK_PRIO_COUNT ? prio_names[p] : "?";
}

bool cuzk_priority_parse(cuzk_priority *out, const char *s)
{
    for (unsigned i = 0; i < CUZK_PRIO_COUNT; i++)
        if (s && strcmp(s, prio_names[i]) == 0) {
            *out = (cuzk_priority)i;
            return true;
        }
    return false;
}

const char *cuzk_job_state_name(cuzk_job_state s)
{
    static const char *const n[] = {"queued", "running", "done", "failed", "cancelled"};
    return (unsigned)s < 5 ? n[s] : "?";
}

bool cuzk_log_level_parse(cuzk_log_level *out, const char *s)
{
    static const char *const n[] = {"error", "warn", "info", "debug"};
    for (unsigned i = 0; i < 4; i++)
        if (s && strcmp(s, n[i]) == 0) {
            *out = (cuzk_log_level)i;
            return true;
        }
    return false;
}

/* ---- clock ---- */

double engine_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double engine_now(const cuzk_engine *e) { return engine_mono_s() - e->t0; }

void engine_deadline(struct timespec *ts, double s)
{
    clock_gettime(CLOCK_REALTIME, ts);
    double whole = (double)(long)s;
    ts->tv_sec += (time_t)whole;
    ts->tv_nsec += (long)((s - whole) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* ---- log ---- */

static void vlog(cuzk_engine *e, cuzk_log_level lv, const char *fmt, va_list ap)
{
    static const char *const lvn[] = {"ERROR", "WARN ", "INFO ", "DEBUG"};
    if (lv > e->cfg.log_level)
        return;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char ts[40];
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    /* One event a line: control characters from requests (a key path with a newline) must
     * not forge lines of their own. */
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    for (char *p = msg; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    FILE *f = e->cfg.log ? e->cfg.log : stderr;
    pthread_mutex_lock(&e->log_mu);
    fprintf(f, "%s.%06ldZ %s t=%.3f %s\n", ts, (long)tv.tv_usec, lvn[lv], engine_now(e) * 1e3,
            msg ? msg : "(out of memory)");
    fflush(f);
    pthread_mutex_unlock(&e->log_mu);
    free(msg);
}

void cuzk_engine_log(cuzk_engine *e, cuzk_log_level lv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(e, lv, fmt, ap);
    va_end(ap);
}
