/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk_key: a proving key of either format behind one handle (include/cuzk/key.h), over the
 * prover's view of a key (groth16/pk.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/key.h"
#include "cuzk/params.h"
#include "groth16/bellman.h"
#include "groth16/gpu_prover.h"
#include "groth16/pk.h"
#include "io/binfile.h"

struct cuzk_key {
    cuzk_key_format format;
    cuzk_zkey *zk;             /* CUZK_KEY_ZKEY */
    cuzk_params *pa;           /* CUZK_KEY_PARAMS */
    cuzk_bellman_circuit *bc;  /* CUZK_KEY_PARAMS: the circuit of the .r1cs */
    cuzk_vk *vk;
    cuzk_pk_view view;         /* points into zk, or into pa and bc */
    uint64_t bytes;
};

const char *cuzk_key_format_name(cuzk_key_format f)
{
    return f == CUZK_KEY_ZKEY ? "zkey" : f == CUZK_KEY_PARAMS ? "params" : "?";
}

/* ---- sizes ---- */

static uint64_t csr_bytes(const cuzk_csr *m)
{
    uint64_t nnz = m->row ? m->row[m->n_rows] : 0;
    return (m->n_rows + 1) * sizeof(uint64_t) + nnz * (sizeof(uint32_t) + sizeof(cuzk_fr));
}

/* A .zkey: its rows a and b, IC, A, B1, B2, C, H, and its verification key with its IC. */
static uint64_t zkey_bytes(const cuzk_zkey *z)
{
    uint64_t nv = z->n_vars, n = z->domain_size, np = z->n_public;
    return sizeof *z + csr_bytes(&z->a) + csr_bytes(&z->b) + (np + 1) * sizeof(cuzk_g1_affine) * 2 +
           nv * (2 * sizeof(cuzk_g1_affine) + sizeof(cuzk_g2_affine)) +
           (nv - np - 1) * sizeof(cuzk_g1_affine) + n * sizeof(cuzk_g1_affine) + sizeof(cuzk_vk);
}

/* A .params: its vectors, its circuit (the A, B, C rows with bellman's input rows, the two
 * density bit vectors) and its verification key with its IC. */
static uint64_t params_bytes(const cuzk_params *p, const cuzk_bellman_circuit *c)
{
    uint64_t g1 = sizeof(cuzk_g1_affine), g2 = sizeof(cuzk_g2_affine);
    uint64_t dens_words = ((uint64_t)c->n_vars + 63) / 64;
    return sizeof *p + sizeof *c +
           ((uint64_t)p->n_ic + p->n_h + p->n_l + p->n_a + p->n_b_g1) * g1 +
           (uint64_t)p->n_b_g2 * g2 + csr_bytes(&c->a) + csr_bytes(&c->b) + csr_bytes(&c->c) +
           2 * dens_words * sizeof(uint64_t) + sizeof(cuzk_vk) + (uint64_t)p->n_ic * g1;
}

/* ---- loading ---- */

void cuzk_key_free(cuzk_key *k)
{
    if (!k)
        return;
    cuzk_zkey_free(k->zk);
    cuzk_params_free(k->pa);
    cuzk_bellman_circuit_free(k->bc);
    cuzk_vk_free(k->vk);
    free(k);
}

/* CUZK_EIO when path names something other than a regular file: a directory, a device, or
 * a FIFO (opening one without a writer blocks for ever). A path that cannot be stat'ed is
 * left to the loader, whose error names the file and the reason. */
static cuzk_err regular_file(const char *path)
{
    const char *what = io_not_regular(path);
    return what ? cuzk_error_set(CUZK_EIO, "%s: not a regular file (%s)", path, what) : CUZK_OK;
}

/* The format of the key at path: the "zkey" magic makes a .zkey; another file is a .params
 * when an r1cs is given. A file that cannot be read is left to the .zkey loader (its error
 * names the file). */
static cuzk_err format_of(cuzk_key_format *f, const char *path, const char *r1cs)
{
    static const char zkey_magic[4] = {'z', 'k', 'e', 'y'};   /* a .zkey's first 4 bytes */
    char head[4] = {0};
    cuzk_err r = regular_file(path);
    if (r == CUZK_OK && r1cs)
        r = regular_file(r1cs);
    if (r != CUZK_OK)
        return r;
    FILE *fp = NULL;
    if (io_fopen_regular(&fp, path) != CUZK_OK)
        cuzk_error_clear();
    bool is_zkey = fp && fread(head, 1, sizeof head, fp) == sizeof head &&
                   memcmp(head, zkey_magic, sizeof head) == 0;
    if (fp)
        fclose(fp);
    size_t n = strlen(path);
    bool dot_params = n >= 7 && strcmp(path + n - 7, ".params") == 0;
    if (is_zkey && r1cs)
        return cuzk_error_set(CUZK_EINVAL,
                              "%s is a snarkjs .zkey (its circuit is inside): \"r1cs\" is only "
                              "for a bellman .params key", path);
    if (!is_zkey && !r1cs && dot_params)
        return cuzk_error_set(CUZK_EINVAL,
                              "%s: a bellman .params key needs the circuit's .r1cs "
                              "(\"r1cs\": PATH)", path);
    *f = !is_zkey && r1cs ? CUZK_KEY_PARAMS : CUZK_KEY_ZKEY;
    return CUZK_OK;
}

static cuzk_err load_zkey(cuzk_key *k, const char *path)
{
    cuzk_err r = cuzk_zkey_load(&k->zk, path);
    if (r == CUZK_OK)
        r = cuzk_vk_from_zkey(&k->vk, k->zk);
    if (r != CUZK_OK)
        return r;
    cuzk_pk_view_from_zkey(&k->view, k->zk);
    k->bytes = zkey_bytes(k->zk);
    return CUZK_OK;
}

static cuzk_err load_params(cuzk_key *k, const char *path, const char *r1cs, unsigned flags,
                            const cuzk_gpu_opts *gpu, const char *cache_dir)
{
    cuzk_err r = cuzk_params_load_ex(&k->pa, path, flags, gpu, cache_dir);
    if (r == CUZK_OK)
        r = cuzk_bellman_circuit_load_for(&k->bc, r1cs, k->pa);
    if (r == CUZK_OK && (r = cuzk_params_check_circuit(k->pa, k->bc)) != CUZK_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", cuzk_error_detail());
        return cuzk_error_set(r, "%s does not fit the circuit %s: %s", path, r1cs, why);
    }
    if (r == CUZK_OK)
        r = cuzk_vk_from_params(&k->vk, k->pa);
    if (r != CUZK_OK)
        return r;
    cuzk_pk_view_from_params(&k->view, k->pa, k->bc);
    k->bytes = params_bytes(k->pa, k->bc);
    return CUZK_OK;
}

cuzk_err cuzk_key_load(cuzk_key **out, const char *path, const cuzk_key_opts *opts)
{
    *out = NULL;
    if (!path)
        return cuzk_error_set(CUZK_EINVAL, "key: no path");
    const char *r1cs = opts && opts->r1cs && opts->r1cs[0] ? opts->r1cs : NULL;
    unsigned flags = opts ? opts->params_flags : 0;
    if (!r1cs && flags)
        return cuzk_error_set(CUZK_EINVAL,
                              "%s: the .params load flags (trusted, cache) need the circuit's "
                              ".r1cs", path);
    cuzk_key_format f = CUZK_KEY_ZKEY;
    cuzk_err r = format_of(&f, path, r1cs);
    if (r != CUZK_OK)
        return r;
    cuzk_key *k = calloc(1, sizeof *k);
    if (!k)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    k->format = f;
    r = f == CUZK_KEY_ZKEY ? load_zkey(k, path)
                           : load_params(k, path, r1cs, flags, opts ? opts->gpu : NULL,
                                         opts ? opts->cache_dir : NULL);
    if (r != CUZK_OK) {
        cuzk_key_free(k);
        return r;
    }
    *out = k;
    return CUZK_OK;
}

/* ---- reading ---- */

cuzk_key_format cuzk_key_format_of(const cuzk_key *k) { return k->format; }
uint64_t cuzk_key_bytes(const cuzk_key *k) { return k->bytes; }
uint32_t cuzk_key_n_vars(const cuzk_key *k) { return k->view.n_vars; }
uint32_t cuzk_key_n_public(const cuzk_key *k) { return k->view.n_public; }
uint32_t cuzk_key_domain_size(const cuzk_key *k) { return (uint32_t)1 << k->view.log2_domain; }
const cuzk_vk *cuzk_key_vk(const cuzk_key *k) { return k->vk; }

cuzk_err cuzk_key_check_witness(const cuzk_key *k, const cuzk_fr *w, size_t n)
{
    return cuzk_pk_view_check_witness(&k->view, w, n);
}

/* ---- proving ---- */

cuzk_err cuzk_key_prove_start(cuzk_pending **out, const cuzk_key *k,
                              const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                              const cuzk_prove_opts *opts)
{
    *out = NULL;
    if (!k)
        return cuzk_error_set(CUZK_EINVAL, "prove: no key");
    return cuzk_groth16_prove_start_view(out, &k->view, witnesses, n_wit, wit_len, opts);
}

cuzk_err cuzk_key_prove(cuzk_proof *proofs, cuzk_prove_timings *timings, const cuzk_key *k,
                        const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                        const cuzk_prove_opts *opts)
{
    cuzk_pending *p = NULL;
    cuzk_err r = cuzk_key_prove_start(&p, k, witnesses, n_wit, wit_len, opts);
    if (r != CUZK_OK)
        return r;
    r = cuzk_groth16_prove_finish(proofs, timings, p);
    cuzk_groth16_pending_free(p);
    return r;
}

/* ---- the resident GPU copy ---- */

cuzk_err cuzk_key_gpu_new(cuzk_gpu_key **out, const cuzk_key *k, int device,
                          const cuzk_gpu_opts *opts)
{
    *out = NULL;
    if (!k)
        return cuzk_error_set(CUZK_EINVAL, "gpu key: no key");
    return cuzk_gpu_key_from_view(out, &k->view, device, opts);
}

void cuzk_gpu_key_get_info(const cuzk_gpu_key *gk, cuzk_gpu_key_info *info)
{
    memset(info, 0, sizeof *info);
    if (!gk)
        return;
    info->synth_device = cuzk_gpu_key_synth(gk);
    info->b_g2_device = cuzk_gpu_key_b_g2(gk);
    info->streamed = cuzk_gpu_key_streamed(gk);
    info->precomputed = cuzk_gpu_key_precomputed(gk);
}
