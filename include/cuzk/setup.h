/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Groth16 setup with fresh random toxic waste (BLS12-381), for development and benchmarks.
 *
 * The toxic waste tau, alpha, beta, gamma, delta is drawn from the operating system
 * (cuzk_random_fr, getrandom), used, and wiped (explicit_bzero) before the call returns; it
 * is never printed or stored. Whoever runs a setup could still forge proofs while it runs,
 * so keys made this way are for development, tests and benchmarks only: production keys
 * come from a multi-party ceremony (snarkjs powers of tau + phase 2, or Filecoin's).
 *
 * The snarkjs key (cuzk_setup_zkey) is the key snarkjs's `zkey new` + contributions would
 * give for the same toxic waste, in snarkjs's conventions (roots of unity from 5, rows
 * w_s * 1 for s = 0 .. n_public after the circuit's constraints):
 *   n = domain_size = smallest power of two > n_constraints + n_public, omega = omega_n,
 *   L_j(X) the Lagrange basis of the n-domain (L_j(omega^j) = 1),
 *   u_i, v_i, w_i = sum_j A[j][i] L_j(tau), sum_j B[j][i] L_j(tau), sum_j C[j][i] L_j(tau),
 *   alpha1 = alpha G1, beta1 = beta G1, beta2 = beta G2, gamma2 = gamma G2,
 *   delta1 = delta G1, delta2 = delta G2,
 *   A_i = u_i G1, B1_i = v_i G1, B2_i = v_i G2 (every wire),
 *   IC_i = (beta u_i + alpha v_i + w_i)/gamma G1 (i <= n_public),
 *   C_i = (beta u_i + alpha v_i + w_i)/delta G1 (i > n_public),
 *   H_j = L'_(2j+1)(tau)/delta G1 for j < n, L' the Lagrange basis of the 2n-domain: the
 *     basis of snarkjs's prover, which evaluates a*b - c at the odd points of the 2n-domain.
 *
 * The vector points are computed with variable-time fixed-base multiplication (precomputed
 * window tables of the generators): their scalars derive from the toxic waste, so a timing
 * side channel on the machine that runs the setup could leak it; the vk points use the
 * constant-time cuzk_g1_mul_fr / cuzk_g2_mul_fr. Another reason these keys are for
 * development only. The same holds for the device's fixed-base kernels (the GPU backend,
 * below): variable time as well.
 */
#ifndef CUZK_SETUP_H
#define CUZK_SETUP_H

#include <stdio.h>

#include "cuzk/groth16.h"
#include "cuzk/params.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* The secret scalars of a Groth16 setup. */
typedef struct {
    cuzk_fr tau, alpha, beta, gamma, delta;
} cuzk_setup_toxic;

/* Where the vector points (s_i G for the scalars of A, B1, B2, C or L, H, IC) are
 * computed. CUZK_BACKEND_AUTO: in a build with CUDA and with a device that answers, every
 * vector of at least CUZK_SETUP_GPU_MIN points runs on the device (cuzk_gpu_fixed_base_g1/
 * _g2, cuzk/gpu.h) and the smaller ones on the CPU; a device failure there falls back to
 * the CPU (with a progress line). CUZK_BACKEND_GPU: every vector on the device, and a
 * device failure is returned (CUZK_EGPU; CUZK_EUNSUPPORTED in a build without CUDA).
 * CUZK_BACKEND_CPU: the CPU's window tables on nthreads threads. The backends give
 * bit-identical keys. Only the options choose (the programs map CUZK_BACKEND onto them). */
#define CUZK_SETUP_GPU_MIN ((size_t)1 << 16)

typedef struct {
    unsigned nthreads;                 /* 0: cuzk_parallel_threads() */
    FILE *progress;                    /* NULL: silent; else one line per stage (timings) */
    const cuzk_setup_toxic *test_toxic; /* tests only: fixed toxic waste (never production).
                                          tau must not be a 2n-th root of unity and none of
                                          alpha..delta zero (CUZK_EINVAL otherwise). */
    cuzk_backend backend;              /* fixed-base backend (above); 0 = AUTO */
    int device;                        /* the CUDA device of the GPU backend (default 0) */
} cuzk_setup_opts;

/* Makes a snarkjs Groth16 proving key for the circuit r (see above). The key is owned by
 * the caller (cuzk_zkey_free). opts may be NULL. Errors: CUZK_ESIZE (domain 2^32 or more:
 * snarkjs's H needs the 2n-domain), CUZK_ERANDOM, CUZK_ENOMEM, CUZK_EINVAL. */
cuzk_err cuzk_setup_zkey(cuzk_zkey **out, const cuzk_r1cs *r,
                         const cuzk_setup_opts *opts) CUZK_WUR;

/* Makes bellman/bellperson parameters for the circuit c in bellman's convention (see
 * include/cuzk/params.h: roots of unity from 7, H points tau^i Z(tau)/delta for i < n-1,
 * a, b_g1, b_g2 filtered by density, l for the aux wires, ic for the inputs). The
 * parameters are owned by the caller (cuzk_params_free). Errors as cuzk_setup_zkey, and
 * CUZK_EINVAL when a vector point would be infinity (a dense wire whose column sums to
 * zero at tau: a circuit with cancelling terms), which bellman's format cannot hold. */
cuzk_err cuzk_setup_params(cuzk_params **out, const cuzk_bellman_circuit *c,
                           const cuzk_setup_opts *opts) CUZK_WUR;

/* Writes a Groth16 .zkey (snarkjs's format, iden3 container v1, sections 1..10) from a
 * key in memory: points in snarkjs's encoding, section 4 from z->a and z->b (values stored
 * as v*R^2 mod r as snarkjs does), section 10 with an all-zero 64-byte circuit hash and no
 * contributions (this key comes from no phase-2 ceremony; `snarkjs zkey verify` therefore
 * refuses it, while `groth16 prove` and `zkey export verificationkey` accept it).
 * Written to a temporary file next to path and renamed into place. CUZK_EIO naming the
 * file, CUZK_EINVAL for an inconsistent key. */
cuzk_err cuzk_zkey_write(const char *path, const cuzk_zkey *z) CUZK_WUR;

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
