/* SPDX-License-Identifier: Apache-2.0 */
/* What the two sides of bench/cpu-msm-vs-blst.sh share: their clocks, the median's sort and
 * the exit on bad input. Each side defines SIDE_NAME before including it. */
#ifndef BENCH_MSM_SIDE_H
#define BENCH_MSM_SIDE_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* CPU time of the process: on a shared machine a single-threaded run's CPU time moves less
 * with the other load than its wall time does */
static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", SIDE_NAME, what);
    exit(2);
}

#endif
