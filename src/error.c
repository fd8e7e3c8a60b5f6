/* SPDX-License-Identifier: Apache-2.0 */
#include "cuzk/error.h"

static const char *const err_msg[] = {
#define M_(name, msg) msg,
    CUZK_ERRORS(M_)
#undef M_
};
static const char *const err_name[] = {
#define N_(name, msg) #name,
    CUZK_ERRORS(N_)
#undef N_
};

const char *cuzk_strerror(cuzk_err e)
{
    if ((unsigned)e >= CUZK_ERR_COUNT_)
        return "unknown error";
    return err_msg[e];
}

const char *cuzk_errname(cuzk_err e)
{
    if ((unsigned)e >= CUZK_ERR_COUNT_)
        return "CUZK_E?";
    return err_name[e];
}

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char err_detail[512];

const char *cuzk_error_detail(void) { return err_detail; }

void cuzk_error_clear(void) { err_detail[0] = 0; }

cuzk_err cuzk_error_set(cuzk_err e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_detail, sizeof err_detail, fmt, ap);
    va_end(ap);
    return e;
}
