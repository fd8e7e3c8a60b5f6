/* SPDX-License-Identifier: Apache-2.0 */
/* bellman/bellperson parameters from fresh toxic waste: draws it, runs the bellman-convention
 * setup of src/setup/bellman.c, wipes it. */
#include "setup/bellman.h"
#include "setup/setup_internal.h"

cuzk_err cuzk_setup_params(cuzk_params **out, const cuzk_bellman_circuit *c,
                           const cuzk_setup_opts *opts)
{
    if (!out || !c)
        return cuzk_error_set(CUZK_EINVAL, "setup: NULL argument");
    *out = NULL;
    double t0 = setup_now_ms();
    cuzk_setup_toxic tw;
    /* tau outside the 2n-domain (which contains the n-domain) */
    cuzk_err e = setup_toxic_get(&tw, opts, c->log2_domain + 1);
    if (e != CUZK_OK)
        return e;
    setup_log(opts, &t0, "domain 2^%u, %u wires, %u public, %u rows: toxic waste drawn",
              c->log2_domain, c->n_vars, c->n_public, c->n_rows);
    cuzk_setup_opts o = opts ? *opts : (cuzk_setup_opts){0};
    o.nthreads = setup_threads(opts);
    e = cuzk_setup_bellman_opts(out, c, &tw, &o);
    setup_wipe(&tw, sizeof tw);
    if (e == CUZK_OK)
        setup_log(opts, &t0, "bellman parameters: %u h, %u l, %u a, %u b points", (*out)->n_h,
                  (*out)->n_l, (*out)->n_a, (*out)->n_b_g1);
    return e;
}
