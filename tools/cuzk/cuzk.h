/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of the cuzk program in files of their own (argv without the program and
 * command names; exit status 0 on success, 1 for a failed check, 2 for an error). */
#ifndef CUZK_CLI_H
#define CUZK_CLI_H

#include "config.h"

/* env: the environment main read (CUZK_BACKEND chooses setup's backend unless --backend does) */
int cuzk_cli_setup(int argc, char **argv, const tool_env *env);
int cuzk_cli_gen(int argc, char **argv);

#endif
