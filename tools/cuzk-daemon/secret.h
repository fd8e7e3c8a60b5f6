/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk-daemon's secrets in its state directory: the client token (state_dir/token) and the
 * operator's token (state_dir/admin-token). */
#ifndef CUZK_DAEMON_SECRET_H
#define CUZK_DAEMON_SECRET_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of a token's text, the terminator included: 64 hex digits. */
#define DAEMON_TOKEN_MAX 512

/* The token in dir/name: read when the file exists (it must be a regular file owned by this
 * user, not readable or writable by group or others, its first line not empty), else made:
 * 32 bytes from getrandom as 64 hex digits and a newline, created with O_EXCL | O_NOFOLLOW
 * mode 0600 and fsynced (the directory too). *made tells which. Returns false with the reason
 * in why. */
bool daemon_secret_get(const char *dir, const char *name, char *out, size_t n, bool *made,
                       char *why, size_t wlen);

/* The first line of an operator-given token file (--token-file), refused when it is not a
 * regular file, cannot be read or the line is empty. */
bool daemon_secret_read_file(const char *path, char *out, size_t n, char *why, size_t wlen);

#endif
