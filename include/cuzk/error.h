/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk error codes: one enum, generated with its names and messages from one table. */
#ifndef CUZK_ERROR_H
#define CUZK_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* X(name, message) */
#define CUZK_ERRORS(X)                                                              \
    X(CUZK_OK, "success")                                                           \
    X(CUZK_EINVAL, "invalid argument")                                              \
    X(CUZK_ENOMEM, "out of memory")                                                 \
    X(CUZK_EIO, "input/output error")                                               \
    X(CUZK_ENONCANONICAL, "field element is not canonical (not below the modulus)") \
    X(CUZK_ENOT_ON_CURVE, "point is not on the curve")                              \
    X(CUZK_ENOT_IN_SUBGROUP, "point is not in the prime-order subgroup")            \
    X(CUZK_EFLAGS, "invalid encoding flag bits")                                    \
    X(CUZK_ENOT_SQUARE, "no square root exists (no point with this x)")             \
    X(CUZK_EPARSE, "malformed text")                                                \
    X(CUZK_EFORMAT, "malformed file")                                               \
    X(CUZK_ECURVE, "unsupported curve or field")                                    \
    X(CUZK_ESIZE, "sizes do not match")                                             \
    X(CUZK_EVERIFY, "proof does not verify")                                        \
    X(CUZK_ERANDOM, "operating-system random source failed")                        \
    X(CUZK_EUNSUPPORTED, "not supported by this build or machine")                  \
    X(CUZK_EGPU, "GPU error")                                                       \
    X(CUZK_ECANCELLED, "cancelled")                                                 \
    X(CUZK_EBUSY, "busy")                                                           \
    X(CUZK_ENOTFOUND, "not found")                                                  \
    X(CUZK_EUNAVAILABLE, "a service the call needs is unavailable (try again later)")

typedef enum {
#define CUZK_ERR_ENUM_(name, msg) name,
    CUZK_ERRORS(CUZK_ERR_ENUM_)
#undef CUZK_ERR_ENUM_
    CUZK_ERR_COUNT_
} cuzk_err;

#if defined(__GNUC__)
#define CUZK_WUR __attribute__((warn_unused_result))
#else
#define CUZK_WUR
#endif

/* Human-readable message for an error code ("unknown error" for out-of-range values). */
const char *cuzk_strerror(cuzk_err e);
/* The enum's name as a string, e.g. "CUZK_ENOT_ON_CURVE". */
const char *cuzk_errname(cuzk_err e);

/* Detail for the last error of this thread: which file, section, index and what was wrong
 * ("key.zkey: section 5 (A points): point 17: not on the curve"). Functions that fail set
 * it with cuzk_error_set(); it is "" when nothing was set. Never contains secrets. */
const char *cuzk_error_detail(void);
/* Sets this thread's detail (printf format) and returns e, for `return cuzk_error_set(...)`. */
cuzk_err cuzk_error_set(cuzk_err e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cuzk_error_clear(void);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
