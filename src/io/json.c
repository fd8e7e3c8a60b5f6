/* SPDX-License-Identifier: Apache-2.0 */
/* snarkjs JSON: proof.json, public.json, verification_key.json (jansson). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/io.h"
#include "cuzk/pairing.h"
#include "io/binfile.h"

#define DEC_MAX_DIGITS 116   /* p < 10^116: longer strings cannot be canonical */

/* ---- writing ---- */

static cuzk_err write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return cuzk_error_set(CUZK_EIO, "%s: cannot create: %s", path, strerror(errno));
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, fp) == n;
    int e = errno;
    if (fclose(fp) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok)
        return cuzk_error_set(CUZK_EIO, "%s: cannot write: %s", path, strerror(e));
    return CUZK_OK;
}

/* snarkjs writes with bfj, one space of indentation and no final newline, which is what
 * jansson's JSON_INDENT(1) gives for non-empty arrays and objects. */
static cuzk_err dump(const char *path, json_t *root)
{
    if (!root)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!text)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    cuzk_err e = write_text(path, text);
    free(text);
    return e;
}

static json_t *j_fp(const cuzk_fp *a)
{
    char s[CUZK_FP_DEC_MAX];
    cuzk_fp_to_dec(s, a);
    return json_string(s);
}

static json_t *j_fp2(const cuzk_fp2 *a)
{
    return json_pack("[oo]", j_fp(&a->c0), j_fp(&a->c1));
}

/* G1 as snarkjs's projective triple: [x, y, "1"], infinity ["0", "1", "0"]. */
static json_t *j_g1(const cuzk_g1_affine *p)
{
    if (cuzk_g1_affine_is_inf(p))
        return json_pack("[sss]", "0", "1", "0");
    return json_pack("[oos]", j_fp(&p->x), j_fp(&p->y), "1");
}

static json_t *j_g2(const cuzk_g2_affine *p)
{
    if (cuzk_g2_affine_is_inf(p))
        return json_pack("[[ss][ss][ss]]", "0", "0", "1", "0", "0", "0");
    return json_pack("[oo[ss]]", j_fp2(&p->x), j_fp2(&p->y), "1", "0");
}

static json_t *j_fp6(const cuzk_fp6 *a)
{
    return json_pack("[ooo]", j_fp2(&a->c0), j_fp2(&a->c1), j_fp2(&a->c2));
}

json_t *cuzk_proof_json(const cuzk_proof *p)
{
    return json_pack("{s:o, s:o, s:o, s:s, s:s}", "pi_a", j_g1(&p->a), "pi_b", j_g2(&p->b),
                     "pi_c", j_g1(&p->c), "protocol", "groth16", "curve", "bls12381");
}

json_t *cuzk_public_json(const cuzk_fr *pub, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        char s[CUZK_FR_DEC_MAX];
        cuzk_fr_to_dec(s, &pub[i]);
        if (json_array_append_new(a, json_string(s)) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

char *cuzk_proof_to_json(const cuzk_proof *p)
{
    json_t *root = cuzk_proof_json(p);
    if (!root)
        return NULL;
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return text;
}

cuzk_err cuzk_proof_write_json(const char *path, const cuzk_proof *p)
{
    char *text = cuzk_proof_to_json(p);
    if (!text)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    cuzk_err e = write_text(path, text);
    free(text);
    return e;
}

char *cuzk_public_to_json(const cuzk_fr *pub, size_t n)
{
    /* Written by hand: bfj writes an empty array as "[\n]", jansson as "[]". */
    size_t cap = 4 + n * (CUZK_FR_DEC_MAX + 5);
    char *text = malloc(cap), *o = text;
    if (!text)
        return NULL;
    *o++ = '[';
    for (size_t i = 0; i < n; i++) {
        char s[CUZK_FR_DEC_MAX];
        cuzk_fr_to_dec(s, &pub[i]);
        o += sprintf(o, "%s\n \"%s\"", i ? "," : "", s);
    }
    *o++ = '\n';
    *o++ = ']';
    *o = 0;
    return text;
}

cuzk_err cuzk_public_write_json(const char *path, const cuzk_fr *pub, size_t n)
{
    char *text = cuzk_public_to_json(pub, n);
    if (!text)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    cuzk_err e = write_text(path, text);
    free(text);
    return e;
}

cuzk_err cuzk_vk_from_zkey(cuzk_vk **out, const cuzk_zkey *z)
{
    *out = NULL;
    cuzk_vk *vk = calloc(1, sizeof *vk);
    cuzk_g1_affine *ic = malloc(((size_t)z->n_public + 1) * sizeof *ic);
    if (!vk || !ic) {
        free(vk);
        free(ic);
        return cuzk_error_set(CUZK_ENOMEM, "verification key: out of memory");
    }
    memcpy(ic, z->ic, ((size_t)z->n_public + 1) * sizeof *ic);
    vk->ic = ic;
    vk->n_public = z->n_public;
    vk->alpha1 = z->alpha1;
    vk->beta2 = z->beta2;
    vk->gamma2 = z->gamma2;
    vk->delta2 = z->delta2;
    cuzk_pairing(&vk->alphabeta, &vk->alpha1, &vk->beta2);
    vk->has_alphabeta = true;
    *out = vk;
    return CUZK_OK;
}

void cuzk_vk_free(cuzk_vk *vk)
{
    if (!vk)
        return;
    free(vk->ic);
    free(vk);
}

cuzk_err cuzk_vk_write_json(const char *path, const cuzk_vk *vk)
{
    cuzk_fp12 ab = vk->alphabeta;
    if (!vk->has_alphabeta)
        cuzk_pairing(&ab, &vk->alpha1, &vk->beta2);
    json_t *ic = json_array();
    for (size_t i = 0; ic && i <= vk->n_public; i++)
        if (json_array_append_new(ic, j_g1(&vk->ic[i])) != 0) {
            json_decref(ic);
            ic = NULL;
        }
    if (!ic)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    json_t *root = json_pack("{s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:[oo], s:o}", "protocol",
                             "groth16", "curve", "bls12381", "nPublic", (json_int_t)vk->n_public,
                             "vk_alpha_1", j_g1(&vk->alpha1), "vk_beta_2", j_g2(&vk->beta2),
                             "vk_gamma_2", j_g2(&vk->gamma2), "vk_delta_2", j_g2(&vk->delta2),
                             "vk_alphabeta_12", j_fp6(&ab.c0), j_fp6(&ab.c1), "IC", ic);
    return dump(path, root);
}

/* ---- reading ---- */

static cuzk_err load_json(json_t **root, const char *path)
{
    json_error_t je;
    FILE *f;
    *root = NULL;
    cuzk_err e = io_fopen_regular(&f, path); /* not json_load_file: a FIFO would block it */
    if (e != CUZK_OK)
        return e;
    *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (*root)
        return CUZK_OK;
    if (json_error_code(&je) == json_error_cannot_open_file)
        return cuzk_error_set(CUZK_EIO, "%s: cannot open", path);
    if (json_error_code(&je) == json_error_out_of_memory)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    /* jansson's text quotes the bytes near the error ("... near 'root'"): the message keeps
     * what was expected, never the file's own bytes, which its reader may not see */
    char why[sizeof je.text];
    snprintf(why, sizeof why, "%s", je.text);
    char *near = strstr(why, " near ");
    if (near)
        *near = 0;
    return cuzk_error_set(CUZK_EPARSE, "%s: line %d, column %d: not valid JSON (%s)", path,
                          je.line, je.column, why);
}

/* A canonical decimal string: digits only, no sign, no leading zero (except "0"). */
static cuzk_err get_dec(const char *path, const char *what, json_t *v, const char **out)
{
    if (!json_is_string(v))
        return cuzk_error_set(CUZK_EFORMAT, "%s: %s: expected a decimal string", path, what);
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n == 0 || n > DEC_MAX_DIGITS || strlen(s) != n)
        return cuzk_error_set(CUZK_EPARSE, "%s: %s: not a canonical decimal (%zu characters)",
                              path, what, n);
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return cuzk_error_set(CUZK_EPARSE, "%s: %s: not a canonical decimal (character %zu "
                                  "is not a digit)", path, what, i);
    if (s[0] == '0' && n > 1)
        return cuzk_error_set(CUZK_EPARSE, "%s: %s: a decimal with a leading zero", path, what);
    *out = s;
    return CUZK_OK;
}

static cuzk_err get_fp(const char *path, const char *what, json_t *v, cuzk_fp *r)
{
    const char *s;
    cuzk_err e = get_dec(path, what, v, &s);
    if (e)
        return e;
    e = cuzk_fp_from_dec(r, s);
    if (e)
        return cuzk_error_set(e, "%s: %s: %s", path, what, cuzk_strerror(e));
    return CUZK_OK;
}

static bool dec_is(json_t *v, const char *s)
{
    return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

static cuzk_err get_array(const char *path, const char *what, json_t *v, size_t n)
{
    if (!json_is_array(v) || json_array_size(v) != n)
        return cuzk_error_set(CUZK_EFORMAT, "%s: %s: expected an array of %zu", path, what, n);
    return CUZK_OK;
}

static cuzk_err get_g1(const char *path, const char *what, json_t *v, unsigned flags,
                       cuzk_g1_affine *r)
{
    cuzk_err e = get_array(path, what, v, 3);
    if (e)
        return e;
    char w[128];
    const char *xy[2];
    for (int i = 0; i < 2; i++) {
        snprintf(w, sizeof w, "%s[%d]", what, i);
        if ((e = get_dec(path, w, json_array_get(v, (size_t)i), &xy[i])))
            return e;
    }
    json_t *z = json_array_get(v, 2);
    if (dec_is(z, "0")) {
        if (strcmp(xy[0], "0") != 0 || strcmp(xy[1], "1") != 0)
            return cuzk_error_set(CUZK_EFORMAT, "%s: %s: infinity must be [\"0\", \"1\", \"0\"]",
                                  path, what);
        cuzk_g1_affine_set_inf(r);
        return CUZK_OK;
    }
    if (!dec_is(z, "1"))
        return cuzk_error_set(CUZK_EFORMAT, "%s: %s[2]: expected \"1\" (affine) or \"0\"", path,
                              what);
    e = cuzk_g1_from_dec(r, xy[0], xy[1], flags);
    if (e)
        return cuzk_error_set(e, "%s: %s: %s", path, what, cuzk_strerror(e));
    return CUZK_OK;
}

static cuzk_err get_g2(const char *path, const char *what, json_t *v, unsigned flags,
                       cuzk_g2_affine *r)
{
    cuzk_err e = get_array(path, what, v, 3);
    if (e)
        return e;
    char w[128];
    const char *c[6];
    for (int i = 0; i < 3; i++) {
        json_t *pair = json_array_get(v, (size_t)i);
        snprintf(w, sizeof w, "%s[%d]", what, i);
        if ((e = get_array(path, w, pair, 2)))
            return e;
        for (int j = 0; j < 2; j++) {
            snprintf(w, sizeof w, "%s[%d][%d]", what, i, j);
            if ((e = get_dec(path, w, json_array_get(pair, (size_t)j), &c[2 * i + j])))
                return e;
        }
    }
    if (strcmp(c[4], "0") == 0 && strcmp(c[5], "0") == 0) {
        if (strcmp(c[0], "0") || strcmp(c[1], "0") || strcmp(c[2], "1") || strcmp(c[3], "0"))
            return cuzk_error_set(CUZK_EFORMAT,
                                  "%s: %s: infinity must be [[\"0\",\"0\"],[\"1\",\"0\"],[\"0\",\"0\"]]",
                                  path, what);
        cuzk_g2_affine_set_inf(r);
        return CUZK_OK;
    }
    if (strcmp(c[4], "1") != 0 || strcmp(c[5], "0") != 0)
        return cuzk_error_set(CUZK_EFORMAT, "%s: %s[2]: expected [\"1\", \"0\"] (affine)", path,
                              what);
    e = cuzk_g2_from_dec(r, c, flags);
    if (e)
        return cuzk_error_set(e, "%s: %s: %s", path, what, cuzk_strerror(e));
    return CUZK_OK;
}

static cuzk_err check_tags(const char *path, json_t *root)
{
    json_t *p = json_object_get(root, "protocol"), *c = json_object_get(root, "curve");
    if (!json_is_string(p))
        return cuzk_error_set(CUZK_EFORMAT, "%s: protocol: missing or not a string", path);
    if (strcmp(json_string_value(p), "groth16") != 0)
        return cuzk_error_set(CUZK_EUNSUPPORTED, "%s: protocol: not \"groth16\", the only one "
                              "supported", path);
    if (!json_is_string(c))
        return cuzk_error_set(CUZK_EFORMAT, "%s: curve: missing or not a string", path);
    if (strcmp(json_string_value(c), "bls12381") != 0)
        return cuzk_error_set(CUZK_ECURVE, "%s: curve: not \"bls12381\": only BLS12-381 is "
                              "supported", path);
    return CUZK_OK;
}

static json_t *member(json_t *root, const char *key) { return json_object_get(root, key); }

cuzk_err cuzk_proof_read_json(cuzk_proof *p, const char *path)
{
    json_t *root;
    cuzk_err e = load_json(&root, path);
    if (e)
        return e;
    if (!json_is_object(root))
        e = cuzk_error_set(CUZK_EFORMAT, "%s: expected a JSON object", path);
    if (!e)
        e = check_tags(path, root);
    if (!e)
        e = get_g1(path, "pi_a", member(root, "pi_a"), CUZK_DECODE_CHECK_SUBGROUP, &p->a);
    if (!e)
        e = get_g2(path, "pi_b", member(root, "pi_b"), CUZK_DECODE_CHECK_SUBGROUP, &p->b);
    if (!e)
        e = get_g1(path, "pi_c", member(root, "pi_c"), CUZK_DECODE_CHECK_SUBGROUP, &p->c);
    json_decref(root);
    return e;
}

cuzk_err cuzk_public_read_json(cuzk_fr **pub, size_t *n, const char *path)
{
    *pub = NULL;
    *n = 0;
    json_t *root;
    cuzk_err e = load_json(&root, path);
    if (e)
        return e;
    if (!json_is_array(root)) {
        json_decref(root);
        return cuzk_error_set(CUZK_EFORMAT, "%s: expected an array of decimal strings", path);
    }
    size_t len = json_array_size(root);
    cuzk_fr *v = malloc((len ? len : 1) * sizeof *v);
    if (!v) {
        json_decref(root);
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < len && !e; i++) {
        char w[48];
        const char *s;
        snprintf(w, sizeof w, "[%zu]", i);
        e = get_dec(path, w, json_array_get(root, i), &s);
        if (!e && (e = cuzk_fr_from_dec(&v[i], s)))
            cuzk_error_set(e, "%s: %s: %s", path, w, cuzk_strerror(e));
    }
    json_decref(root);
    if (e) {
        free(v);
        return e;
    }
    *pub = v;
    *n = len;
    return CUZK_OK;
}

static cuzk_err read_alphabeta(const char *path, json_t *v, cuzk_fp12 *r)
{
    cuzk_err e = get_array(path, "vk_alphabeta_12", v, 2);
    for (int i = 0; i < 2 && !e; i++) {
        char w[64];
        json_t *a = json_array_get(v, (size_t)i);
        cuzk_fp6 *f6 = i ? &r->c1 : &r->c0;
        snprintf(w, sizeof w, "vk_alphabeta_12[%d]", i);
        e = get_array(path, w, a, 3);
        for (int j = 0; j < 3 && !e; j++) {
            json_t *b = json_array_get(a, (size_t)j);
            cuzk_fp2 *f2 = j == 0 ? &f6->c0 : j == 1 ? &f6->c1 : &f6->c2;
            snprintf(w, sizeof w, "vk_alphabeta_12[%d][%d]", i, j);
            e = get_array(path, w, b, 2);
            for (int k = 0; k < 2 && !e; k++) {
                snprintf(w, sizeof w, "vk_alphabeta_12[%d][%d][%d]", i, j, k);
                e = get_fp(path, w, json_array_get(b, (size_t)k), k ? &f2->c1 : &f2->c0);
            }
        }
    }
    return e;
}

static cuzk_err read_vk(const char *path, json_t *root, cuzk_vk *vk)
{
    if (!json_is_object(root))
        return cuzk_error_set(CUZK_EFORMAT, "%s: expected a JSON object", path);
    cuzk_err e = check_tags(path, root);
    if (e)
        return e;
    json_t *np = member(root, "nPublic");
    if (!json_is_integer(np) || json_integer_value(np) < 0 ||
        json_integer_value(np) >= (json_int_t)UINT32_MAX)
        return cuzk_error_set(CUZK_EFORMAT, "%s: nPublic: expected a non-negative integer", path);
    vk->n_public = (uint32_t)json_integer_value(np);
    const unsigned sub = CUZK_DECODE_CHECK_SUBGROUP;
    if ((e = get_g1(path, "vk_alpha_1", member(root, "vk_alpha_1"), sub, &vk->alpha1)) ||
        (e = get_g2(path, "vk_beta_2", member(root, "vk_beta_2"), sub, &vk->beta2)) ||
        (e = get_g2(path, "vk_gamma_2", member(root, "vk_gamma_2"), sub, &vk->gamma2)) ||
        (e = get_g2(path, "vk_delta_2", member(root, "vk_delta_2"), sub, &vk->delta2)))
        return e;
    json_t *ab = member(root, "vk_alphabeta_12");
    if (ab) {
        if ((e = read_alphabeta(path, ab, &vk->alphabeta)))
            return e;
        vk->has_alphabeta = true;
    }
    json_t *ic = member(root, "IC");
    if (!json_is_array(ic) || json_array_size(ic) != (size_t)vk->n_public + 1)
        return cuzk_error_set(CUZK_EFORMAT, "%s: IC: expected an array of nPublic + 1 = %llu points",
                              path, (unsigned long long)vk->n_public + 1);
    vk->ic = malloc(((size_t)vk->n_public + 1) * sizeof *vk->ic);
    if (!vk->ic)
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i <= vk->n_public; i++) {
        char w[48];
        snprintf(w, sizeof w, "IC[%zu]", i);
        if ((e = get_g1(path, w, json_array_get(ic, i), sub, &vk->ic[i])))
            return e;
    }
    return CUZK_OK;
}

cuzk_err cuzk_vk_read_json(cuzk_vk **out, const char *path)
{
    *out = NULL;
    json_t *root;
    cuzk_err e = load_json(&root, path);
    if (e)
        return e;
    cuzk_vk *vk = calloc(1, sizeof *vk);
    if (!vk) {
        json_decref(root);
        return cuzk_error_set(CUZK_ENOMEM, "%s: out of memory", path);
    }
    e = read_vk(path, root, vk);
    json_decref(root);
    if (e) {
        cuzk_vk_free(vk);
        return e;
    }
    *out = vk;
    return CUZK_OK;
}
