/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk-daemon's state directory: where the job journal, the spool of uploaded witnesses, the
 * token and the key caches live. One daemon at a time uses it (a lock). */
#ifndef CUZK_DAEMON_STATE_H
#define CUZK_DAEMON_STATE_H

#include <stddef.h>

/* Creates dir (and missing parents, mode 0700) unless it exists; refuses one that is not a
 * directory, a symbolic link, not owned by this user, or writable by group or others. Then
 * takes dir/lock (flock, the file holds the pid): a second daemon on the same directory is
 * refused, naming the first one's pid. Returns the lock's fd (kept open for the process's
 * life), or -1 with the reason in why. */
int daemon_state_open(const char *dir, char *why, size_t wlen);

#endif
