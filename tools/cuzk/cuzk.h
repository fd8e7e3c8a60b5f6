/* Subcommands of the cuzk program that live in the library (argv without the program and
 * command names; exit status 0 on success, 1 for a failed check, 2 for an error). */
#ifndef CUZK_CLI_H
#define CUZK_CLI_H

int cuzk_cli_setup(int argc, char **argv);
int cuzk_cli_gen(int argc, char **argv);

#endif
