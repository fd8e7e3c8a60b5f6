/* SPDX-License-Identifier: Apache-2.0 */
/* The programs' shared configuration (config.h): the environment read once, checked and
 * applied; the --gpu flag. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/ff.h"
#include "config.h"
#include "util/parallel.h"

const char tool_env_help[] =
    "environment (read once at start-up; an empty value counts as unset):\n"
    "  CUZK_THREADS=N             worker threads, 1 to 4096 (default: the online CPUs;\n"
    "                             --threads overrides it)\n"
    "  CUZK_FF_IMPL=portable|adx  field multiplication back end (default: adx when the CPU\n"
    "                             has MULX/ADX)\n"
    "  CUZK_BACKEND=cpu|gpu       where proofs and setups run (default: the GPU when this\n"
    "                             build has CUDA and a device answers); cpu also keeps the\n"
    "                             subgroup checks of a .params key on the CPU\n";

/* The variable's value, or NULL when it is unset or empty. */
static const char *env_get(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

static tool_env env_read; /* what tool_env_init read last (zero: all unset) */

const tool_env *tool_env_get(void) { return &env_read; }

static int env_parse(tool_env *env, const char *prog)
{
    env->backend = CUZK_BACKEND_AUTO;
    env->threads = 0;
    env->state_home[0] = 0;
    const char *sh = env_get("XDG_STATE_HOME"), *home = env_get("HOME");
    if (sh && sh[0] == '/')   /* a relative value is ignored, as the XDG spec says */
        snprintf(env->state_home, sizeof env->state_home, "%s", sh);
    else if (home)
        snprintf(env->state_home, sizeof env->state_home, "%s/.local/state", home);
    const char *v = env_get("CUZK_THREADS");
    if (v) {
        char *end;
        long t = strtol(v, &end, 10);
        if (*end || t < 1 || t > 4096) {
            fprintf(stderr, "%s: CUZK_THREADS=%s: not a thread count from 1 to 4096\n", prog, v);
            return 2;
        }
        env->threads = (unsigned)t;
        cuzk_parallel_set_threads(env->threads);
    }
    if ((v = env_get("CUZK_FF_IMPL"))) {
        cuzk_ff_impl impl;
        cuzk_err e = cuzk_ff_impl_parse(&impl, v);
        if (e == CUZK_OK)
            e = cuzk_ff_set_impl(impl);
        if (e != CUZK_OK) {
            fprintf(stderr, "%s: CUZK_FF_IMPL=%s: %s\n", prog, v, cuzk_error_detail());
            return 2;
        }
    }
    if ((v = env_get("CUZK_BACKEND"))) {
        if (!strcmp(v, "cpu")) {
            env->backend = CUZK_BACKEND_CPU;
        } else if (!strcmp(v, "gpu")) {
            env->backend = CUZK_BACKEND_GPU;
        } else if (strcmp(v, "auto")) {
            fprintf(stderr, "%s: CUZK_BACKEND=%s: not a backend (cpu, gpu or auto)\n", prog, v);
            return 2;
        }
    }
    return 0;
}

int tool_env_init(tool_env *env, const char *prog)
{
    int rc = env_parse(env, prog);
    if (rc == 0)
        env_read = *env;
    return rc;
}

bool tool_default_state_dir(const tool_env *env, char *out, size_t n)
{
    const char *d = geteuid() == 0 ? "/var/lib" : env->state_home;
    if (!d[0])
        return false;
    int w = snprintf(out, n, "%s/cuzk", d);
    return w > 0 && (size_t)w < n;
}

void tool_env_gpu_opts(const tool_env *env, cuzk_gpu_opts *o)
{
    cuzk_gpu_opts_default(o);
    if (env->backend == CUZK_BACKEND_CPU)
        o->params_check_min = SIZE_MAX;
}

const char tool_gpu_help[] =
    "  --gpu NAME=VALUE (repeatable): how the GPU backend uses its devices\n"
    "      synth=auto|full|dedup|off    a, b, c synthesised on the device: the whole matrices\n"
    "                                   when they fit, else deduplicated coefficients (auto),\n"
    "                                   forced to one, or on the CPU (off)\n"
    "      bases=auto|resident|stream   the key's bases resident on the device when they fit\n"
    "                                   (auto), or forced resident or streamed from host memory\n"
    "      msm_chunk=N                  streamed bases: N bases a chunk (default 2^22)\n"
    "      witness=auto|copy|register   witness upload: page-locked in place from 1 GiB up\n"
    "                                   (auto), or always copied / always in place\n"
    "      b_g2=device|cpu              the B_G2 MSM on the device, or on its own CPU thread\n"
    "      params_check_min=N           .params subgroup checks on the device for vectors of\n"
    "                                   N points and more (default 65536)\n";

int tool_gpu_flag(cuzk_gpu_opts *o, const char *arg, const char *prog)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        fprintf(stderr, "%s: --gpu %s: not NAME=VALUE (e.g. synth=off; --help lists them)\n",
                prog, arg);
        return 2;
    }
    char name[64];
    size_t n = (size_t)(eq - arg);
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, arg, n);
    name[n] = 0;
    if (cuzk_gpu_opts_set(o, name, eq + 1) != CUZK_OK) {
        fprintf(stderr, "%s: --gpu %s: %s\n", prog, arg, cuzk_error_detail());
        return 2;
    }
    return 0;
}
