/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the programs (cuzk, cuzk-bench, cuzk-daemon) share of their configuration: the
 * environment variables they honour and the --gpu NAME=VALUE flag.
 *
 * The environment variables the programs honour (cuzk, cuzk-bench, cuzk-daemon), read once at
 * start-up by tool_env_init; the library itself reads none:
 *   CUZK_THREADS=N             default worker threads, 1 to 4096 (cuzk_parallel_set_threads;
 *                              a --threads flag overrides it)
 *   CUZK_FF_IMPL=portable|adx  the field multiplication back end (cuzk_ff_set_impl; by default
 *                              MULX/ADX when the CPU has it)
 *   CUZK_BACKEND=cpu|gpu       where proofs and setups run (cuzk_prove_opts.backend,
 *                              cuzk_setup_opts.backend; by default the GPU when one answers),
 *                              and with cpu the .params subgroup checks stay on the CPU
 *   XDG_STATE_HOME, HOME       where cuzk-daemon keeps its state when not root and not told
 *                              (tool_default_state_dir)
 * An empty variable counts as unset.
 */
#ifndef CUZK_TOOLS_CONFIG_H
#define CUZK_TOOLS_CONFIG_H

#include "cuzk/groth16.h"

typedef struct {
    cuzk_backend backend; /* CUZK_BACKEND, or CUZK_BACKEND_AUTO */
    unsigned threads;     /* CUZK_THREADS, or 0 */
    char state_home[4096];  /* $XDG_STATE_HOME, else $HOME/.local/state, else "" */
} tool_env;

/* Reads the variables above into *env and applies the process-wide ones (the thread count
 * and the field back end). On a value it cannot use it prints "PROG: VAR=VALUE: why" on
 * stderr and returns 2 (the programs' status for bad usage); else 0. */
int tool_env_init(tool_env *env, const char *prog);
/* What the last tool_env_init read (all unset before it), for the parts of a program that
 * main does not hand it to. */
const tool_env *tool_env_get(void);

/* The GPU options the environment implies: the defaults, with the .params subgroup checks
 * kept on the CPU under CUZK_BACKEND=cpu (params_check_min SIZE_MAX). */
void tool_env_gpu_opts(const tool_env *env, cuzk_gpu_opts *o);

/* cuzk-daemon's default state directory into out: /var/lib/cuzk as root, else
 * STATE_HOME/cuzk; false when neither applies (no XDG_STATE_HOME nor HOME). */
bool tool_default_state_dir(const tool_env *env, char *out, size_t n);

/* The paragraph on these variables for the programs' --help. */
extern const char tool_env_help[];

/* One --gpu argument, NAME=VALUE, into o (cuzk_gpu_opts_set). On a bad one it prints
 * "PROG: --gpu ARG: why" on stderr and returns 2; else 0. */
int tool_gpu_flag(cuzk_gpu_opts *o, const char *arg, const char *prog);

/* The paragraph on --gpu for the programs' --help: the names and values it takes. */
extern const char tool_gpu_help[];

#endif
