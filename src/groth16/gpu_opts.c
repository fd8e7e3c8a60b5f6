/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk_gpu_opts: the defaults and the names the daemon's ini and the programs' --gpu use. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"

void cuzk_gpu_opts_default(cuzk_gpu_opts *o) { memset(o, 0, sizeof *o); }

/* Index of value in the NULL-terminated names, or -1. */
static int name_index(const char *const *names, const char *value)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], value))
            return i;
    return -1;
}

/* A positive decimal count. */
static bool parse_count(size_t *out, const char *value)
{
    if (!value[0] || value[0] == '-' || value[0] == '+')
        return false;
    char *end;
    unsigned long long v = strtoull(value, &end, 10);
    if (*end || v == 0 || v > SIZE_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

cuzk_err cuzk_gpu_opts_set(cuzk_gpu_opts *o, const char *name, const char *value)
{
    if (!o || !name || !value)
        return cuzk_error_set(CUZK_EINVAL, "gpu option: NULL argument");
    static const char *const synth[] = {"auto", "full", "dedup", "off", NULL};
    static const char *const bases[] = {"auto", "resident", "stream", NULL};
    static const char *const witness[] = {"auto", "copy", "register", NULL};
    static const char *const b_g2[] = {"device", "cpu", NULL};
    static const char *const precompute[] = {"auto", "off", "on", NULL};
    static const struct {
        const char *name, *const *names, *takes;
    } enums[] = {
        {"synth", synth, "auto, full, dedup or off"},
        {"bases", bases, "auto, resident or stream"},
        {"witness", witness, "auto, copy or register"},
        {"b_g2", b_g2, "device or cpu"},
        {"precompute", precompute, "auto, off or on"},
    };
    for (size_t i = 0; i < sizeof enums / sizeof enums[0]; i++) {
        if (strcmp(name, enums[i].name))
            continue;
        int v = name_index(enums[i].names, value);
        if (v < 0)
            return cuzk_error_set(CUZK_EINVAL, "gpu option %s: '%s' is not one of %s", name,
                                  value, enums[i].takes);
        switch (i) {
        case 0: o->synth = (cuzk_gpu_synth)v; break;
        case 1: o->bases = (cuzk_gpu_bases)v; break;
        case 2: o->witness = (cuzk_gpu_witness)v; break;
        case 3: o->b_g2 = (cuzk_gpu_b_g2)v; break;
        default: o->precompute = (cuzk_gpu_precompute)v; break;
        }
        return CUZK_OK;
    }
    size_t *count = !strcmp(name, "msm_chunk")          ? &o->msm_chunk
                    : !strcmp(name, "params_check_min") ? &o->params_check_min
                                                        : NULL;
    if (!count)
        return cuzk_error_set(CUZK_EINVAL, "gpu option '%s' is unknown (synth, bases, msm_chunk, "
                                           "witness, b_g2, precompute, params_check_min)", name);
    if (!parse_count(count, value))
        return cuzk_error_set(CUZK_EINVAL, "gpu option %s: '%s' is not a positive count", name,
                              value);
    return CUZK_OK;
}
