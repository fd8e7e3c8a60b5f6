/*
 * Internal: a Groth16 setup in bellman's convention (include/cuzk/params.h) from given
 * toxic waste, following bellman's generator: with n = 2^log2_domain, omega from 7 and
 * L_j(tau) = omega^j (tau^n - 1) / (n (tau - omega^j)) the Lagrange basis at tau,
 *   u_i = sum over A rows j of A[j][i] L_j(tau), v_i over B, w_i over C (the input rows
 *   of the circuit included),
 *   a = u_i G1 for A-dense wires, b_g1 = v_i G1, b_g2 = v_i G2 for B-dense wires,
 *   ic_i = (beta u_i + alpha v_i + w_i)/gamma G1 for inputs i <= n_public,
 *   l_i = (beta u_i + alpha v_i + w_i)/delta G1 for the aux wires,
 *   h_i = tau^i (tau^n - 1)/delta G1 for i < n - 1,
 *   alpha1, beta1, delta1 in G1 and beta2, gamma2, delta2 in G2 from the standard generators.
 * Used by the tests and by `cuzk setup`. The toxic waste is the caller's to wipe.
 */
#ifndef CUZK_GROTH16_SETUP_BELLMAN_H
#define CUZK_GROTH16_SETUP_BELLMAN_H

#include "cuzk/params.h"

typedef struct {
    cuzk_fr tau, alpha, beta, gamma, delta;
} cuzk_toxic_waste;

/* Draws the five values from getrandom (CUZK_ERANDOM). */
cuzk_err cuzk_toxic_waste_random(cuzk_toxic_waste *t) CUZK_WUR;

/* A new key (path "") for circuit c. Errors: CUZK_EINVAL (a zero alpha, beta, gamma or
 * delta, or tau in the domain; an aux wire in no constraint, whose l point
 * would be infinity, as bellman refuses; or a dense wire whose polynomial vanishes at
 * tau), CUZK_ENOMEM. nthreads = 0: cuzk_parallel_threads(). */
cuzk_err cuzk_setup_bellman(cuzk_params **out, const cuzk_bellman_circuit *c,
                            const cuzk_toxic_waste *t, unsigned nthreads) CUZK_WUR;

/* out[i] = s[i] * G (standard generator) for i < n, affine, on nthreads threads, with a
 * fixed-base table of 8-bit windows (variable time: fine for a development setup whose
 * toxic waste is discarded, not for a ceremony). The
 * fixed-base step of the setup, exposed for the setup command and its benchmarks. */
cuzk_err cuzk_setup_g1_batch_var(cuzk_g1_affine *out, const cuzk_fr *s, size_t n, unsigned nthreads) CUZK_WUR;
cuzk_err cuzk_setup_g2_batch_var(cuzk_g2_affine *out, const cuzk_fr *s, size_t n, unsigned nthreads) CUZK_WUR;

#endif
