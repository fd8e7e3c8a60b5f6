/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: the prover's key view of a bellman/bellperson key (include/cuzk/params.h). */
#ifndef CUZK_GROTH16_BELLMAN_H
#define CUZK_GROTH16_BELLMAN_H

#include "cuzk/params.h"
#include "groth16/pk.h"

/* The view of key p for circuit c (conv CUZK_CONV_BELLMAN, density-filtered a, b_g1, b_g2,
 * C rows given). Check them first with cuzk_params_check_circuit. The view points into
 * p and c. */
void cuzk_pk_view_from_params(cuzk_pk_view *v, const cuzk_params *p, const cuzk_bellman_circuit *c);

#endif
