/* SPDX-License-Identifier: Apache-2.0 */
/* The progress line of long commands (progress.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define PROGRESS_AFTER_S 2.0 /* silent before */
#define PROGRESS_TICK_MS 250

struct cli_progress {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, shown;
    const char *prog, *stage, *last_stage; /* last_*: the line shown */
    double t0, frac;
    long last_s, last_pct;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *progress_main(void *arg)
{
    cli_progress *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_nsec += PROGRESS_TICK_MS * 1000000L;
        dl.tv_sec += dl.tv_nsec / 1000000000L;
        dl.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&p->cv, &p->mu, &dl);
        double t = now_s() - p->t0;
        if (p->stop || t < PROGRESS_AFTER_S)
            continue;
        long secs = (long)t;
        if (p->shown && p->stage == p->last_stage && secs == p->last_s &&
            (long)(p->frac * 100) == p->last_pct)
            continue; /* the same line */
        p->last_stage = p->stage;
        p->last_s = secs;
        p->last_pct = (long)(p->frac * 100);
        char pct[16] = "";
        if (p->frac >= 0)
            snprintf(pct, sizeof pct, " %3.0f%%", 100.0 * (p->frac > 1 ? 1 : p->frac));
        fprintf(stderr, "\r\033[K%s: %s%s (%ld s)", p->prog, p->stage, pct, secs);
        fflush(stderr);
        p->shown = true;
    }
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

cli_progress *cli_progress_start(const char *prog, const char *stage)
{
    if (!isatty(STDERR_FILENO))
        return NULL;
    cli_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->prog = prog;
    p->stage = stage;
    p->frac = -1;
    p->t0 = now_s();
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&p->mu, NULL);
    if (pthread_create(&p->th, NULL, progress_main, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

void cli_progress_stage(cli_progress *p, const char *stage)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stage = stage;
    p->frac = -1;
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_fraction(cli_progress *p, double f)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->frac = f;
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_end(cli_progress *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
