/* SPDX-License-Identifier: Apache-2.0 */
/* A progress line on stderr for long commands: when stderr is a terminal and the command has
 * run 2 s, one line, rewritten in place, names the stage and the time so far; it is cleared
 * when the command ends. Nothing is printed when stderr is not a terminal. */
#ifndef CUZK_CLI_PROGRESS_H
#define CUZK_CLI_PROGRESS_H

typedef struct cli_progress cli_progress;

/* NULL (and every call below a no-op) when stderr is not a terminal or no thread starts.
 * prog: the line's prefix, as "cuzk prove"; stage: a static string. */
cli_progress *cli_progress_start(const char *prog, const char *stage);
/* The stage now running (a static string, or one the caller keeps until the next call). */
void cli_progress_stage(cli_progress *p, const char *stage);
/* A stage's share done, 0 to 1 (shown as a percentage); negative: none shown. */
void cli_progress_fraction(cli_progress *p, double f);
/* Stops the line, clears it, frees p. */
void cli_progress_end(cli_progress *p);

#endif
