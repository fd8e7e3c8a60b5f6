/* SPDX-License-Identifier: Apache-2.0 */
/* What the two sides of bench/cpu-msm-vs-blst.sh share: their clocks, the median's sort and
 * the exit on bad input. Each side defines SIDE_NAME before including it. */
#ifndef BENCH_MSM_SIDE_H
#define BENCH_MSM_SIDE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The input file: MAGIC, the group (1 or 2), n (8 bytes, little-endian), then the points and
 * the scalars. */
#define MAGIC "CZMSM1\n"

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

/* Opens the input file at path and reads its header: *g the group, *n the points. */
static FILE *side_open(const char *path, int *g, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char magic[7];
    uint8_t hdr[8];
    if (!f || fread(magic, 7, 1, f) != 1 || memcmp(magic, MAGIC, 7) || (*g = fgetc(f)) < 1 ||
        *g > 2 || fread(hdr, 8, 1, f) != 1)
        die("cannot read the input file's header");
    *n = 0;
    for (int i = 0; i < 8; i++)
        *n |= (size_t)hdr[i] << (8 * i);
    return f;
}

#endif
