/* SPDX-License-Identifier: Apache-2.0 */
#include "util/timing.h"

#include <stdlib.h>
#include <time.h>

double cuzk_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cuzk_sort_doubles(double *v, size_t n) { qsort(v, n, sizeof *v, cmp_double); }

double cuzk_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    cuzk_sort_doubles(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
