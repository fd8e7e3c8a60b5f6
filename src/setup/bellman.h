/* SPDX-License-Identifier: Apache-2.0 */
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
#ifndef CUZK_SETUP_BELLMAN_H
#define CUZK_SETUP_BELLMAN_H

#include <stdio.h>

#include "cuzk/params.h"
#include "cuzk/setup.h"

/* Draws the five values from getrandom (CUZK_ERANDOM). */
cuzk_err cuzk_setup_toxic_random(cuzk_setup_toxic *t) CUZK_WUR;

/* A new key (path "") for circuit c. Errors: CUZK_EINVAL (a zero alpha, beta, gamma or
 * delta, or tau in the domain; an aux wire in no constraint, whose l point
 * would be infinity, as bellman refuses; or a dense wire whose polynomial vanishes at
 * tau), CUZK_ENOMEM. nthreads = 0: cuzk_parallel_threads(). */
cuzk_err cuzk_setup_bellman(cuzk_params **out, const cuzk_bellman_circuit *c,
                            const cuzk_setup_toxic *t, unsigned nthreads) CUZK_WUR;

/* The same with setup options: opts->backend picks where the vector points are computed
 * (cuzk_setup_fb below), opts->progress gets one line per vector (which backend, timing),
 * opts->nthreads the CPU threads; opts->test_toxic is ignored (the toxic waste is t). opts
 * may be NULL (AUTO, silent). */
cuzk_err cuzk_setup_bellman_opts(cuzk_params **out, const cuzk_bellman_circuit *c,
                                 const cuzk_setup_toxic *t,
                                 const cuzk_setup_opts *opts) CUZK_WUR;

/* The fixed-base backend of one setup run (see cuzk_setup_opts in cuzk/setup.h). */
typedef struct {
    int gpu;            /* 0: CPU only; 1: the device for vectors of CUZK_SETUP_GPU_MIN points
                           or more (AUTO), falling back to the CPU on a device failure;
                           2: the device for every vector, failures returned (GPU) */
    int device;
    unsigned nthreads;  /* CPU threads (0: cuzk_parallel_threads()) */
} cuzk_setup_fb;

/* Resolves opts (NULL: AUTO) into fb. CUZK_EUNSUPPORTED for the GPU backend in a build
 * without CUDA, CUZK_EGPU when it was asked for and no device answers. */
cuzk_err cuzk_setup_fb_init(cuzk_setup_fb *fb, const cuzk_setup_opts *opts) CUZK_WUR;
/* Whether a vector of n points goes to the device. */
bool cuzk_setup_fb_wants_gpu(const cuzk_setup_fb *fb, size_t n);
/* out[i] = s[i] G on the device when cuzk_setup_fb_wants_gpu(fb, n): *done is then set.
 * Otherwise, or after a device failure under AUTO (fb then falls back to the CPU for the
 * rest of the run, and the failure is reported on opts->progress), *done is false and the
 * caller computes the points on the CPU. Errors only under the GPU backend. */
cuzk_err cuzk_setup_fb_gpu_g1(cuzk_setup_fb *fb, cuzk_g1_affine *out, const cuzk_fr *s,
                              size_t n, const cuzk_setup_opts *opts, bool *done) CUZK_WUR;
cuzk_err cuzk_setup_fb_gpu_g2(cuzk_setup_fb *fb, cuzk_g2_affine *out, const cuzk_fr *s,
                              size_t n, const cuzk_setup_opts *opts, bool *done) CUZK_WUR;
/* "gpu" or "cpu": the backend a vector of n points uses. */
const char *cuzk_setup_fb_name(const cuzk_setup_fb *fb, size_t n);

/* out[i] = s[i] * G (standard generator) for i < n, affine, on the CPU on nthreads threads,
 * with a fixed-base window table built for the call (src/setup/fixed_base.c: 8-bit windows,
 * 12-bit from 2^16 points; variable time: fine for a development setup whose toxic waste
 * is discarded, not for a ceremony). The CPU fixed-base step of the setup (the reference
 * of the device's), exposed for the setup command, the tests and the benchmarks. */
cuzk_err cuzk_setup_g1_batch_var(cuzk_g1_affine *out, const cuzk_fr *s, size_t n, unsigned nthreads) CUZK_WUR;
cuzk_err cuzk_setup_g2_batch_var(cuzk_g2_affine *out, const cuzk_fr *s, size_t n, unsigned nthreads) CUZK_WUR;

#endif
