/* SPDX-License-Identifier: Apache-2.0 */
/* /v1/proofs: submit a job (JSON with paths or base64 uploads, or a raw .wtns body), poll
 * it (long poll with ?wait=), cancel it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/server_internal.h"

/* ---- base64 (RFC 4648, padding optional, whitespace ignored) ---- */

static int b64_val(int ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

static unsigned char *b64_decode(const char *in, size_t *out_len)
{
    size_t n = strlen(in);
    unsigned char *out = malloc(n / 4 * 3 + 3);
    if (!out)
        return NULL;
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    bool pad = false;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)in[i];
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (ch == '=') {
            pad = true;
            continue;
        }
        int v = b64_val(ch);
        if (v < 0 || pad) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    if (bits >= 6) {   /* one dangling sextet: not valid base64 */
        free(out);
        return NULL;
    }
    *out_len = o;
    return out;
}

static json_t *job_json(const cuzk_job_info *ji)
{
    const char *id = ji->id;
    char err[sizeof ji->error];
    snprintf(err, sizeof err, "%s", ji->error);   /* a reason cut short may end mid-character */
    utf8_scrub(err);
    const cuzk_job_timings *t = &ji->timings;
    /* prove_ms: the proving stage on whichever device ran it; gpu_ms, the same figure under
     * its earlier name, is kept for the clients written against it */
    json_t *tj = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "queue_ms", t->queue_ms,
                           "srs_ms", t->srs_ms, "load_ms", t->load_ms, "prove_ms", t->prove_ms,
                           "gpu_ms", t->prove_ms, "finalize_ms", t->finalize_ms, "verify_ms",
                           t->verify_ms, "total_ms", t->total_ms);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:o}", "id", id, "key", ji->key,
                          "priority", cuzk_priority_name(ji->priority), "state",
                          cuzk_job_state_name(ji->state), "error",
                          err[0] ? json_string(err) : json_null(), "partitions",
                          (json_int_t)ji->n_partitions, "partitions_done", (json_int_t)ji->n_done,
                          "timings", tj);
    if (!o)
        return NULL;
    if (ji->state == CUZK_JOB_DONE && ji->proofs) {
        json_t *pa = json_array(), *pu = json_array();
        bool ok = pa && pu;
        for (size_t i = 0; ok && i < ji->n_partitions; i++)
            ok = json_array_append_new(pa, cuzk_proof_json(&ji->proofs[i])) == 0 &&
                 json_array_append_new(pu, cuzk_public_json(ji->publics + i * ji->n_public,
                                                            ji->n_public)) == 0;
        ok = ok && json_object_set(o, "proofs", pa) == 0 && json_object_set(o, "public", pu) == 0;
        json_decref(pa);
        json_decref(pu);
        if (!ok) {   /* out of memory: a 500 rather than an answer without its proofs */
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

enum MHD_Result api_job_submit(server *s, struct MHD_Connection *c, const req *rq)
{
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    const char *key = NULL, *prio_s = NULL;
    json_t *root = NULL;
    cuzk_witness_src *ws = NULL;
    unsigned char **bufs = NULL;
    size_t n = 0;
    enum MHD_Result ret;

    if (ctype && strncasecmp(ctype, "application/octet-stream", 24) == 0) {
        key = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key");
        prio_s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "priority");
        if (!key)
            return send_error(s, c, 400, "a raw .wtns upload needs ?key=ID in the URL");
        if (rq->len == 0)
            return send_error(s, c, 400, "empty body: expected the bytes of a .wtns file");
        n = 1;
        ws = calloc(1, sizeof *ws);
        if (!ws)
            return send_error(s, c, 500, "out of memory");
        ws[0].data = rq->body;
        ws[0].len = rq->len;
    } else {
        json_error_t jerr;
        root = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
            return send_error(s, c, 400, "malformed JSON: line %d column %d: %s", jerr.line,
                              jerr.column, jerr.text);
        if (!json_is_object(root)) {
            ret = send_error(s, c, 400, "the body must be a JSON object");
            goto out;
        }
        static const char *const fields[] = {"key", "priority", "witnesses", NULL};
        const char *unknown = api_unknown_field(root, fields);
        if (unknown) {
            ret = send_error(s, c, 400,
                             "unknown field \"%.60s\": expected key, priority, witnesses", unknown);
            goto out;
        }
        json_t *jk = json_object_get(root, "key"), *jp = json_object_get(root, "priority");
        json_t *jw = json_object_get(root, "witnesses");
        if (!json_is_string(jk)) {
            ret = send_error(s, c, 400, "\"key\" must be a string (the key id)");
            goto out;
        }
        key = json_string_value(jk);
        if (jp && !json_is_null(jp)) {
            if (!json_is_string(jp)) {
                ret = send_error(s, c, 400, "\"priority\" must be a string: low, normal, high or critical");
                goto out;
            }
            prio_s = json_string_value(jp);
        }
        if (!json_is_array(jw) || json_array_size(jw) == 0) {
            ret = send_error(s, c, 400, "\"witnesses\" must be a non-empty array (one per partition)");
            goto out;
        }
        n = json_array_size(jw);
        ws = calloc(n, sizeof *ws);
        bufs = calloc(n, sizeof *bufs);
        if (!ws || !bufs) {
            ret = send_error(s, c, 500, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *w = json_array_get(jw, i), *x;
            bool one = json_is_object(w) && json_object_size(w) == 1;   /* path or upload */
            if (json_is_string(w)) {
                ws[i].path = json_string_value(w);
            } else if (one && json_is_string(x = json_object_get(w, "path"))) {
                ws[i].path = json_string_value(x);
            } else if (one && json_is_string(x = json_object_get(w, "wtns_base64"))) {
                bufs[i] = b64_decode(json_string_value(x), &ws[i].len);
                if (!bufs[i]) {
                    ret = send_error(s, c, 400, "witnesses[%zu].wtns_base64: not valid base64", i);
                    goto out;
                }
                ws[i].data = bufs[i];
            } else {
                ret = send_error(s, c, 400,
                                 "witnesses[%zu]: expected a path string, {\"path\": P} or "
                                 "{\"wtns_base64\": B}",
                                 i);
                goto out;
            }
        }
    }
    cuzk_priority prio = CUZK_PRIO_NORMAL;
    if (prio_s && !cuzk_priority_parse(&prio, prio_s)) {
        ret = send_error(s, c, 400, "unknown priority \"%.40s\": use low, normal, high or critical",
                         prio_s);
        goto out;
    }
    if (prio == CUZK_PRIO_CRITICAL && !s->cfg.critical_any && !auth_admin(s, c)) {
        ret = send_error(s, c, 403, "priority critical takes the admin token (the operator's "
                                    "choice: critical = any lets every client)");
        goto out;
    }
    cuzk_engine_key_info ki;
    if (cuzk_engine_key_get(s->e, &ki, key) != CUZK_OK) {
        cuzk_engine_count_rejected(s->e);
        ret = send_error(s, c, 404, "unknown key \"%.100s\" (register it with POST /v1/keys)", key);
        goto out;
    }
    cuzk_job_id id;
    cuzk_err r = cuzk_engine_submit(s->e, &id, key, prio, ws, n);
    if (r == CUZK_OK) {
        ret = send_json(s, c, 202, json_pack("{s:s, s:s, s:I}", "id", id.s, "state", "queued",
                                             "partitions", (json_int_t)n));
    } else {
        /* the engine opens and checks the witnesses: a path it may not open is 403, a witness
         * it cannot read or that does not fit the key 422 */
        unsigned code = r == CUZK_EBUSY || r == CUZK_EUNAVAILABLE ? 503
                        : r == CUZK_ENOMEM       ? 500
                        : r == CUZK_EINVAL       ? 400
                        : r == CUZK_EUNSUPPORTED ? 403
                        : r == CUZK_ENOTFOUND    ? 404   /* the key unregistered meanwhile */
                                                 : 422;
        ret = send_error(s, c, code, "%s", cuzk_error_detail());
    }
out:
    for (size_t i = 0; bufs && i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(ws);
    json_decref(root);
    return ret;
}


/* The job id of a URL: 32 lowercase hex characters (anything else is no job: 404). */
static bool job_id_of(const char *ids)
{
    return cuzk_job_id_valid(ids);
}

/* longpoll.c's question: is job ids final (or unknown)? */
static bool job_final(server *s, const char *ids)
{
    cuzk_job_info ji;
    if (!job_id_of(ids) || cuzk_engine_job_get(s->e, &ji, ids, 0, false) != CUZK_OK)
        return true;
    bool final = ji.state != CUZK_JOB_QUEUED && ji.state != CUZK_JOB_RUNNING;
    cuzk_job_info_release(&ji);
    return final;
}

enum MHD_Result api_job_get(server *s, struct MHD_Connection *c, const char *ids)
{
    if (!job_id_of(ids))
        return send_error(s, c, 404, "unknown job \"%.40s\"", ids);
    double wait = 0;
    const char *w = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "wait");
    if (w) {
        char *end;
        wait = strtod(w, &end);
        if (*end || !(wait >= 0))
            return send_error(s, c, 400, "wait=%.40s: expected seconds (a number >= 0)", w);
        if (wait > s->cfg.max_wait_s)
            wait = s->cfg.max_wait_s;
    }
    /* the wait on a suspended connection (no thread held); called again when it is over */
    if (longpoll_wait(s, c, ids, wait, job_final))
        return MHD_YES;
    cuzk_job_info ji;
    cuzk_err r = cuzk_engine_job_get(s->e, &ji, ids, 0, true);
    if (r == CUZK_ENOTFOUND)
        return send_error(s, c, 404, "unknown job %s", ids);
    if (r != CUZK_OK)
        return send_error(s, c, r == CUZK_EUNAVAILABLE ? 503 : 500, "%s", cuzk_error_detail());
    json_t *o = job_json(&ji);
    cuzk_job_info_release(&ji);
    return send_json(s, c, 200, o);
}

enum MHD_Result api_job_cancel(server *s, struct MHD_Connection *c, const char *ids)
{
    if (!job_id_of(ids))
        return send_error(s, c, 404, "unknown job \"%.40s\"", ids);
    cuzk_err r = cuzk_engine_cancel(s->e, ids);
    if (r == CUZK_ENOTFOUND)
        return send_error(s, c, 404, "unknown job %s", ids);
    if (r == CUZK_EBUSY)
        return send_error(s, c, 409, "%s", cuzk_error_detail());
    if (r != CUZK_OK)
        return send_error(s, c, r == CUZK_EUNAVAILABLE ? 503 : 500, "%s", cuzk_error_detail());
    return send_json(s, c, 200, json_pack("{s:s, s:s}", "id", ids, "state", "cancelled"));
}
