/* SPDX-License-Identifier: Apache-2.0 */
/* Clock and order statistics for stage timings and benchmarks. */
#ifndef CUZK_UTIL_TIMING_H
#define CUZK_UTIL_TIMING_H

#include <stddef.h>

/* CLOCK_MONOTONIC in milliseconds. */
double cuzk_now_ms(void);
/* Sorts v ascending. */
void cuzk_sort_doubles(double *v, size_t n);
/* The median of v (sorting it); 0 when n is 0. */
double cuzk_median(double *v, size_t n);

#endif
