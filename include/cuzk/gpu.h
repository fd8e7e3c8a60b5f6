/*
 * GPU backend (CUDA), behind a plain C interface: nothing of CUDA or C++ crosses this header.
 *
 * Data layouts are the CPU's: cuzk_fr / cuzk_fp arrays (Montgomery form, little-endian 64-bit
 * limbs) and cuzk_g1_affine points are copied to the device byte for byte, and device
 * arithmetic uses the same Montgomery representation (Fp R = 2^384, Fr R = 2^256).
 *
 * Errors: every CUDA call is checked; a failure returns CUZK_EGPU with cuzk_error_detail()
 * naming the call, file and line and CUDA's message. The functions exist only in a build
 * with the CUDA backend (libcuzk is then compiled with CUZK_HAVE_CUDA=1, a public
 * definition): callers guard their use with #ifdef CUZK_HAVE_CUDA, then test
 * cuzk_gpu_available() (false without a driver or device).
 *
 * Contexts (cuzk_gpu_domain, cuzk_gpu_msm) belong to one device and one CUDA stream; they
 * are not safe to use from two threads at once; distinct contexts are independent. Every
 * call returns when its results are on the host (synchronous).
 */
#ifndef CUZK_GPU_H
#define CUZK_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/ec.h"
#include "cuzk/error.h"
#include "cuzk/ff.h"
#include "cuzk/io.h"
#include "cuzk/msm.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* ---- devices ---- */
typedef struct {
    char name[256];
    int cc_major, cc_minor;  /* compute capability */
    int sm_count;            /* multiprocessors */
    size_t total_mem;        /* bytes of device memory */
    size_t free_mem;         /* bytes free at the time of the query */
} cuzk_gpu_device_info;

/* True when this build has the CUDA backend and at least one device answers. Never fails;
 * the reason for false is in cuzk_error_detail(). */
bool cuzk_gpu_available(void);
/* Number of CUDA devices (0 without a driver or device; never negative). */
int cuzk_gpu_device_count(void);
cuzk_err cuzk_gpu_device_query(cuzk_gpu_device_info *info, int device) CUZK_WUR;

/* Page-locked host memory (faster copies); free with cuzk_gpu_host_free (NULL is a no-op). */
cuzk_err cuzk_gpu_host_alloc(void **p, size_t bytes) CUZK_WUR;
void cuzk_gpu_host_free(void *p);
/* Page-locks an existing host range in place (cudaHostRegister, portable to every device),
 * so copies from it run at full speed without a page-locked copy; fails (and leaves the
 * device state clean) e.g. when a page of it is registered already. Undo with
 * cuzk_gpu_host_unregister(p) once no copy reads it any more. */
cuzk_err cuzk_gpu_host_register(void *p, size_t bytes) CUZK_WUR;
void cuzk_gpu_host_unregister(void *p);

/* Subgroup membership of n affine points on the curve (group 1: cuzk_g1_affine, 2:
 * cuzk_g2_affine; infinity passes), on the device: *first_bad = the index of the first
 * point outside the r-torsion, or n when all are in it. The same tests as
 * cuzk_g1/g2_affine_in_subgroup; the points are streamed from host memory. */
cuzk_err cuzk_gpu_subgroup_check(const void *pts, size_t n, int group, int device,
                                 size_t *first_bad) CUZK_WUR;

/* ---- field arithmetic, element-wise over arrays (mainly for tests) ----
 * r[i] = a[i] op b[i] for i < n (b ignored for SQR and NEG). r may alias a or b. */
typedef enum {
    CUZK_GPU_ADD = 0,
    CUZK_GPU_SUB = 1,
    CUZK_GPU_MUL = 2,
    CUZK_GPU_SQR = 3,
    CUZK_GPU_NEG = 4
} cuzk_gpu_field_op;
cuzk_err cuzk_gpu_fr_op(int device, cuzk_gpu_field_op op, cuzk_fr *r, const cuzk_fr *a,
                        const cuzk_fr *b, size_t n) CUZK_WUR;
cuzk_err cuzk_gpu_fp_op(int device, cuzk_gpu_field_op op, cuzk_fp *r, const cuzk_fp *a,
                        const cuzk_fp *b, size_t n) CUZK_WUR;

/* ---- Fr NTT ----
 * A domain of size n = 2^log2_n (1 <= log2_n <= CUZK_GPU_NTT_LOG2_MAX) and one root family,
 * with the same conventions as cuzk/poly.h: forward X_j = sum_i x_i omega^(ij), inverse
 * with the factor 1/n, natural order in and out. It holds its twiddle tables (at most 4 MiB,
 * and above 2^18 one more of n/2 entries: 16 n bytes, 2 GiB at 2^27) and three device
 * buffers of n elements ("slots" 0, 1, 2), allocated at first use.
 * Transforms: passes of up to 10 radix-2 stages in shared memory (one stage a trip),
 * twiddles from tables (one multiplication a butterfly); the H steps pair
 * decimation-in-frequency with decimation-in-time passes (no bit reversal in snarkjs's, one
 * in bellman's) with the coset scalings and the a b - c fused into the passes. */
#define CUZK_GPU_NTT_LOG2_MAX 28
typedef struct cuzk_gpu_domain cuzk_gpu_domain;
cuzk_err cuzk_gpu_domain_new(cuzk_gpu_domain **out, int device, unsigned log2_n,
                             cuzk_roots family) CUZK_WUR;
void cuzk_gpu_domain_free(cuzk_gpu_domain *d); /* NULL is a no-op */

/* Host arrays of n elements, transformed in place (copies in and out included). */
cuzk_err cuzk_gpu_ntt_forward(cuzk_gpu_domain *d, cuzk_fr *x) CUZK_WUR;
cuzk_err cuzk_gpu_ntt_inverse(cuzk_gpu_domain *d, cuzk_fr *x) CUZK_WUR;
/* The snarkjs H step (see cuzk_h_snarkjs in cuzk/poly.h): a, b, c are the n values of A*w,
 * B*w, C*w; on return a[j] = a'_j b'_j - c'_j with a', b', c' the values of the
 * interpolating polynomials at omega_2n^(2j+1). b and c are not modified. The domain must
 * be of family CUZK_ROOTS_SNARKJS (CUZK_EINVAL otherwise). */
cuzk_err cuzk_gpu_h_snarkjs(cuzk_gpu_domain *d, cuzk_fr *a, const cuzk_fr *b,
                            const cuzk_fr *c) CUZK_WUR;
/* The bellman H step (see cuzk_h_bellman in cuzk/poly.h): a, b, c are the n values of A*w,
 * B*w, C*w; on return a[i] (i < n) is coefficient i of (A*B - C)/Z, Z = X^n - 1, computed
 * on the coset g*omega^j (g = 7): a[i] for i < n-1 are the scalars of the H points, a[n-1]
 * the coefficient of X^(n-1) (0 when Z divides A*B - C). b and c are not modified. The
 * domain must be of family CUZK_ROOTS_BELLMAN (CUZK_EINVAL otherwise). */
cuzk_err cuzk_gpu_h_bellman(cuzk_gpu_domain *d, cuzk_fr *a, const cuzk_fr *b,
                            const cuzk_fr *c) CUZK_WUR;

/* Device-resident variants (for pipelines and benchmarks): load/store copy n elements
 * between the host and a slot; ntt transforms a slot in place (its first call above 2^10
 * makes a second buffer of n elements for the domain, through which the last pass stores
 * in natural order; without the memory for it, a bit reversal follows); h_snarkjs reads
 * slots 0, 1, 2 (a, b, c) and leaves the result in slot 0 (slots 1 and 2 are
 * overwritten). */
cuzk_err cuzk_gpu_domain_load(cuzk_gpu_domain *d, unsigned slot, const cuzk_fr *x) CUZK_WUR;
cuzk_err cuzk_gpu_domain_store(cuzk_gpu_domain *d, unsigned slot, cuzk_fr *x) CUZK_WUR;
cuzk_err cuzk_gpu_domain_ntt(cuzk_gpu_domain *d, unsigned slot, bool inverse) CUZK_WUR;
cuzk_err cuzk_gpu_domain_h_snarkjs(cuzk_gpu_domain *d) CUZK_WUR;
/* The same for bellman: reads slots 0, 1, 2, result in slot 0 (1 and 2 overwritten). */
cuzk_err cuzk_gpu_domain_h_bellman(cuzk_gpu_domain *d) CUZK_WUR;
/* The H step of the domain's family (bellman or snarkjs) from host arrays a, b, c (n values
 * each, read until the call returns), result in slot 0 as above: the copies overlap the
 * transforms (slot i's work waits for slot i's copy only), fully when the arrays are
 * page-locked. */
cuzk_err cuzk_gpu_domain_h_host(cuzk_gpu_domain *d, const cuzk_fr *a, const cuzk_fr *b,
                                const cuzk_fr *c) CUZK_WUR;
/* The same for arrays still being filled: before slot i's copy starts (i = 0, 1, 2: a, b,
 * c), ready(ctx, i) is called and must return once array i is complete (the transforms of
 * the slots before it run meanwhile); an error it returns ends the call with that error
 * (the copies already started are waited for). ready NULL: as cuzk_gpu_domain_h_host. */
cuzk_err cuzk_gpu_domain_h_host_ready(cuzk_gpu_domain *d, const cuzk_fr *a, const cuzk_fr *b,
                                      const cuzk_fr *c, cuzk_err (*ready)(void *ctx, int i),
                                      void *ctx) CUZK_WUR;
/* The device address of a slot (n values, allocated on first use) and the domain size, for
 * the library's other kernels; the domain's pending work on it is finished first. */
cuzk_err cuzk_gpu_domain_slot_dev(cuzk_gpu_domain *d, unsigned slot, void **ptr,
                                  size_t *n) CUZK_WUR;
/* ---- synthesis on the device ----
 * A constraint system's matrices resident on a device (rows 0 .. n_rows-1 of A, B and C in
 * cuzk_csr form; c NULL: the snarkjs convention, c = a o b) and a witness buffer of n_vars
 * values. cuzk_gpu_synthesize uploads w (n_vars Montgomery values; page-locked memory
 * uploads fastest) and writes a = A.w, b = B.w, c into slots 0, 1, 2 of d, zero from n_rows
 * to the domain size: the values the CPU's synthesis gives. cuzk_gpu_r1cs_bytes: the device
 * memory cuzk_gpu_r1cs_new will take. Errors: CUZK_EINVAL (a column outside the witness,
 * matrices shorter than n_rows), CUZK_ESIZE (more rows than the domain), CUZK_EGPU. */
typedef struct cuzk_gpu_r1cs cuzk_gpu_r1cs;
size_t cuzk_gpu_r1cs_bytes(const cuzk_csr *a, const cuzk_csr *b, const cuzk_csr *c, size_t n_rows,
                           size_t n_vars);
cuzk_err cuzk_gpu_r1cs_new(cuzk_gpu_r1cs **out, int device, const cuzk_csr *a, const cuzk_csr *b,
                           const cuzk_csr *c, size_t n_rows, size_t n_vars) CUZK_WUR;
/* The same with the coefficients deduplicated (a circuit with few distinct coefficients:
 * 8 instead of 36 bytes a term): idx[m][k] indexes tab (n_tab values) for term k of matrix
 * m (A, B, C; idx[2] unused without C). cuzk_gpu_r1cs_bytes_dedup: its device memory. */
size_t cuzk_gpu_r1cs_bytes_dedup(const cuzk_csr *a, const cuzk_csr *b, const cuzk_csr *c,
                                 size_t n_rows, size_t n_vars, size_t n_tab);
cuzk_err cuzk_gpu_r1cs_new_dedup(cuzk_gpu_r1cs **out, int device, const cuzk_csr *a,
                                 const cuzk_csr *b, const cuzk_csr *c, size_t n_rows,
                                 size_t n_vars, const uint32_t *const idx[3], const cuzk_fr *tab,
                                 size_t n_tab) CUZK_WUR;
void cuzk_gpu_r1cs_free(cuzk_gpu_r1cs *s);
cuzk_err cuzk_gpu_synthesize(cuzk_gpu_r1cs *s, cuzk_gpu_domain *d, const cuzk_fr *w) CUZK_WUR;

/* ---- G1 MSM and batch add ----
 * A context holding n_max affine bases resident in device memory (uploaded once, infinity
 * (0, 0) allowed, repeats and P next to -P allowed) plus the work buffers, which are sized
 * for n_max at the first call and reused. Each call uses the first n <= n_max bases.
 * Algorithm: Pippenger with signed digits (buckets 1..2^(c-1), negative digits subtract),
 * the (window, bucket) indices radix-sorted on the device, XYZZ buckets accumulated by
 * segments, buckets summed by running sums; the windows are combined on the host. */
typedef struct cuzk_gpu_msm cuzk_gpu_msm;
cuzk_err cuzk_gpu_msm_new(cuzk_gpu_msm **out, int device, const cuzk_g1_affine *bases,
                          size_t n_max) CUZK_WUR;
void cuzk_gpu_msm_free(cuzk_gpu_msm *m); /* NULL is a no-op */
/* r = sum_{i<n} s_i P_i. window 0 lets the library choose (cuzk_gpu_msm_window_auto, or the
 * precomputed multiples' window), else 1..22.
 * Canonical scalars must be below 2^255 (CUZK_EINVAL otherwise, r = infinity); Montgomery
 * scalars are converted on the device. n = 0 gives infinity. */
cuzk_err cuzk_gpu_g1_msm(cuzk_gpu_msm *m, cuzk_g1_jac *r, const cuzk_msm_scalar *scalars,
                         size_t n, unsigned window) CUZK_WUR;
cuzk_err cuzk_gpu_g1_msm_fr(cuzk_gpu_msm *m, cuzk_g1_jac *r, const cuzk_fr *scalars,
                            size_t n, unsigned window) CUZK_WUR;
/* The same with the n Montgomery scalars already in device memory on the context's device
 * (e.g. a domain slot, cuzk_gpu_domain_slot_dev): no upload. */
cuzk_err cuzk_gpu_g1_msm_fr_dev(cuzk_gpu_msm *m, cuzk_g1_jac *r, const void *scalars, size_t n,
                                unsigned window) CUZK_WUR;
/* r = sum of the first n bases whose bit is set (bit i of word i/64; bits past n ignored). */
cuzk_err cuzk_gpu_g1_batch_add(cuzk_gpu_msm *m, cuzk_g1_jac *r, const uint64_t *bits,
                               size_t n) CUZK_WUR;
/* The window model's c for n points (0 for n = 0): XYZZ in G1 (cuzk_gpu_msm_window_auto says
 * what window 0 runs). */
unsigned cuzk_gpu_msm_window(size_t n);
#define CUZK_GPU_MSM_WINDOW_MAX 22

/* Precomputed multiples of a context's resident bases (G1 or G2), for the MSMs on bases
 * that stay (an SRS): the context keeps, besides each base P_i, the W - 1 multiples
 * 2^(c j) P_i, j = 1 .. W - 1 (W = ceil(256 / c)), computed on the device (W n_max points of
 * device memory in all, 96 bytes each in G1, 192 in G2: 12 n_max at c = 22). An MSM with
 * window 0 or c then adds base i's digit of window j into one set of 2^(c - 1) buckets as
 * the multiple 2^(c j) P_i: one running sum over the buckets instead of W, so the window is
 * wider than without (fewer windows: fewer additions) and no window combination is left.
 * It is used where the window model prefers it (the cost of the terms' additions and sort
 * passes against that of the bucket sums), else the
 * MSM runs as before; results are the same. window: c, 1 .. CUZK_GPU_MSM_WINDOW_MAX, 0 for
 * the model's choice for n_max. Calling it again replaces the multiples. CUZK_EINVAL for a
 * NULL context, a streamed one, or a window out of range; CUZK_ESIZE when W n_max >=
 * 2^31; CUZK_ENOMEM (the context unchanged) when the device memory is short.
 * cuzk_gpu_msm_precomputed_used: whether the context's last Pippenger run used them. */
cuzk_err cuzk_gpu_msm_precompute(cuzk_gpu_msm *m, unsigned window) CUZK_WUR;
unsigned cuzk_gpu_msm_window_precomputed(size_t n);
bool cuzk_gpu_msm_precomputed_used(const cuzk_gpu_msm *m);
/* Whether the context holds precomputed multiples (false for NULL). */
bool cuzk_gpu_msm_precomputed(const cuzk_gpu_msm *m);

/* How a G1 context adds the bases into the buckets (every G1 MSM of the context, the split
 * MSM's included; G2 contexts always use XYZZ); the results are the same.
 *   XYZZ: each thread adds its runs of sorted bases into XYZZ sums (mixed additions, about
 *     10 field multiplications each).
 *   AFFINE: rounds of pairwise affine additions inside each bucket, the denominators of a
 *     round inverted together (Montgomery's trick, about 6 multiplications an addition),
 *     while a bucket holds 2 or more points on average, then XYZZ over what is left. The
 *     buckets are taken in slices of at most 2^26 (window, point) pairs whose intermediate
 *     points take about 100 bytes a pair (7 GB), allocated at the first use and kept by the
 *     context; when they cannot be allocated the MSM uses XYZZ (and frees them).
 *   AFFINE_FULL: AFFINE with rounds until every bucket holds one point (for tests).
 *   AUTO (a new context's): AFFINE for MSMs (a split MSM: its significant terms) of more
 *     than 2^25 terms, of more than 2^21 on precomputed multiples (cuzk_gpu_msm_precompute),
 *     and with window 0 of 2^20 to 10 2^20 terms (at window 16, cuzk_gpu_msm_window_auto),
 *     where it measured faster on the H200, else XYZZ; AUTO takes the affine buffers only
 *     while they leave at least as much device memory free as they take (else XYZZ), as the
 *     context keeps them.
 * CUZK_EINVAL for a NULL context or an unknown mode. cuzk_gpu_msm_accumulation_used: what
 * the context's last MSM did (AFFINE when it ran affine rounds, else XYZZ; XYZZ for NULL). */
typedef enum {
    CUZK_GPU_MSM_ACC_AUTO = 0,
    CUZK_GPU_MSM_ACC_XYZZ = 1,
    CUZK_GPU_MSM_ACC_AFFINE = 2,
    CUZK_GPU_MSM_ACC_AFFINE_FULL = 3
} cuzk_gpu_msm_acc;
cuzk_err cuzk_gpu_msm_set_accumulation(cuzk_gpu_msm *m, cuzk_gpu_msm_acc mode) CUZK_WUR;
cuzk_gpu_msm_acc cuzk_gpu_msm_accumulation_used(const cuzk_gpu_msm *m);
/* The window that window 0 takes for n terms (0 for n = 0) on a context of group 1 or 2
 * whose accumulation is mode, when the precomputed multiples are not used: the window
 * model's (cuzk_gpu_msm_window), except G1 under AUTO or AFFINE above 2^20 terms up to
 * 10 2^20: 16 (the batch-affine rounds there, under AUTO too), and G2: at most 16 (both
 * measured faster on the H200: bench/RESULTS.md, session 21). */
unsigned cuzk_gpu_msm_window_auto(size_t n, int group, cuzk_gpu_msm_acc mode);

/* Stage timings of a context's MSMs (device events; for benchmarks), off by default:
 * cuzk_gpu_msm_set_profile(m, true) turns them on (CUZK_EINVAL for NULL). Then after each
 * MSM, split MSM or batch add call, cuzk_gpu_msm_profile_get gives that call's times in
 * milliseconds, summed over its Pippenger runs (a streamed context makes one a chunk; a
 * batch add none), and the last run's size. All zero while profiling is off. */
typedef struct {
    unsigned runs;            /* Pippenger runs of the call */
    size_t terms;             /* the last run's terms, */
    unsigned window, windows; /* its window c and its W windows, */
    bool affine;              /* and whether it accumulated with affine rounds */
    bool precomputed;         /* and whether it used the precomputed multiples */
    double upload_ms;         /* the scalars copied to the device */
    double digits_ms;         /* the signed digits: (bucket, base) pairs */
    double sort_ms;           /* the pairs sorted by bucket */
    double accumulate_ms;     /* the buckets filled (affine: plan, rounds, XYZZ pass) */
    double partials_ms;       /* XYZZ: the buckets cut by the threads' segments joined */
    double bucket_sums_ms;    /* the windows' running sums */
    double window_reduce_ms;  /* a window's segments added */
    double affine_plan_ms, affine_rounds_ms, affine_finish_ms; /* parts of accumulate_ms */
    unsigned affine_slices;   /* the affine plan's bucket slices, */
    unsigned affine_rounds;   /* the most rounds of one */
} cuzk_gpu_msm_profile;
cuzk_err cuzk_gpu_msm_set_profile(cuzk_gpu_msm *m, bool on) CUZK_WUR;
cuzk_err cuzk_gpu_msm_profile_get(const cuzk_gpu_msm *m, cuzk_gpu_msm_profile *out) CUZK_WUR;

/* ---- G2 MSM and batch add ----
 * The same context type holding G2 bases (cuzk_g2_affine, infinity (0, 0) allowed): the
 * same Pippenger with the point arithmetic over Fp2, the same rules. A context holds the
 * bases of one group: the g1 functions refuse a G2 context and the g2 functions a G1 one
 * (CUZK_EINVAL). Free it with cuzk_gpu_msm_free. */
cuzk_err cuzk_gpu_msm_new_g2(cuzk_gpu_msm **out, int device, const cuzk_g2_affine *bases,
                             size_t n_max) CUZK_WUR;
cuzk_err cuzk_gpu_g2_msm(cuzk_gpu_msm *m, cuzk_g2_jac *r, const cuzk_msm_scalar *scalars,
                         size_t n, unsigned window) CUZK_WUR;
cuzk_err cuzk_gpu_g2_msm_fr(cuzk_gpu_msm *m, cuzk_g2_jac *r, const cuzk_fr *scalars,
                            size_t n, unsigned window) CUZK_WUR;
cuzk_err cuzk_gpu_g2_batch_add(cuzk_gpu_msm *m, cuzk_g2_jac *r, const uint64_t *bits,
                               size_t n) CUZK_WUR;

/* ---- streamed bases ----
 * For bases that do not fit in device memory: a context of either group (1: bases are
 * cuzk_g1_affine, 2: cuzk_g2_affine) that keeps only `chunk` bases on the device, in two
 * stages. Every call above (MSM, batch add, split) then runs chunk by chunk: the next
 * chunk's bases are copied from host memory while the device works on the present one, and
 * the parts are added on the host. Results equal the resident context's. chunk 0 picks
 * CUZK_GPU_MSM_CHUNK_DEFAULT; it is rounded up to a multiple of 64. The host array is read
 * at every call: it must stay valid and unchanged until cuzk_gpu_msm_free. It is page-locked
 * in place (cudaHostRegister, read-only when allowed) for the life of the context, so that
 * the copies overlap the work; when that fails (or another context already page-locked it)
 * the copies are made from pageable memory, slower but the same. Device memory: about
 * 2 chunk (size of a base + 16) bytes plus the work buffers of a chunk-sized MSM. */
#define CUZK_GPU_MSM_CHUNK_DEFAULT ((size_t)1 << 22)
cuzk_err cuzk_gpu_msm_new_streamed(cuzk_gpu_msm **out, int device, int group, const void *bases,
                                   size_t n_max, size_t chunk) CUZK_WUR;
bool cuzk_gpu_msm_streamed(const cuzk_gpu_msm *m); /* false for NULL */
/* Device bytes of a resident context of n bases and as many uploaded scalars, at most: n
 * (base + 32) bytes (the scalars' array grows with the uploads; none when they stay on the
 * device). */
size_t cuzk_gpu_msm_bytes(int group, size_t n);

/* ---- the Groth16 split on resident bases (cuzk/msm.h's classification) ----
 * r = sum_{i < n, one bit i set} P_i + sum_{i < n, sig bit i set} s_i P_i
 * in one call, without uploading bases: the ones by batch add, the significant terms by
 * Pippenger over only those positions (compacted on the device from sig_bits). Bit vectors
 * hold CUZK_MSM_BITVEC_WORDS(n) words (bits past n ignored); one_bits or sig_bits may be
 * NULL (no such terms). Positions set in both vectors count in both sums. scalars:
 *   flags & CUZK_GPU_SCALARS_FR: cuzk_fr (Montgomery), else cuzk_msm_scalar (canonical,
 *     below 2^255: CUZK_EINVAL otherwise);
 *   flags & CUZK_GPU_SCALARS_GATHERED: only the scalars of the set sig positions, in order
 *     (cuzk_msm_gather_fr's output), else all n (those outside sig_bits are not read).
 * window 0 picks c from the significant count. */
#define CUZK_GPU_SCALARS_FR 1u
#define CUZK_GPU_SCALARS_GATHERED 2u
cuzk_err cuzk_gpu_g1_msm_split(cuzk_gpu_msm *m, cuzk_g1_jac *r, const void *scalars,
                               unsigned flags, const uint64_t *one_bits,
                               const uint64_t *sig_bits, size_t n, unsigned window) CUZK_WUR;
cuzk_err cuzk_gpu_g2_msm_split(cuzk_gpu_msm *m, cuzk_g2_jac *r, const void *scalars,
                               unsigned flags, const uint64_t *one_bits,
                               const uint64_t *sig_bits, size_t n, unsigned window) CUZK_WUR;

/* ---- fixed-base multiplication of the generators (the vector points of a setup) ----
 * out[i] = scalars[i] * G for i < n, G the standard generator of G1 (or G2), affine, the
 * point at infinity (0, 0) for a zero scalar: the same points, bit for bit, as the CPU's
 * cuzk_g1_generator_mul. Scalars are cuzk_fr (Montgomery form, converted on the device).
 * A window table of G (8, 12 or 16-bit windows, by n; at most 2^20 points) is built on the
 * device at each call; one thread per scalar adds one table point per nonzero window into
 * an XYZZ sum; the sums are made affine with one inversion per 16 points. n is streamed
 * in chunks (at most 2^22 scalars, fewer when device memory is short), so any n whose
 * host arrays fit works; device copies of the scalars are zeroed before they are freed.
 * VARIABLE TIME in the scalars: for development setups only (see cuzk/setup.h).
 * n = 0 does nothing. CUZK_EINVAL for NULL arrays, CUZK_EGPU. */
cuzk_err cuzk_gpu_fixed_base_g1(int device, cuzk_g1_affine *out, const cuzk_fr *scalars,
                                size_t n) CUZK_WUR;
cuzk_err cuzk_gpu_fixed_base_g2(int device, cuzk_g2_affine *out, const cuzk_fr *scalars,
                                size_t n) CUZK_WUR;

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
