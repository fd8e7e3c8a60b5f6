/* SPDX-License-Identifier: Apache-2.0 */
/* /v1/keys: register, list, show and remove proving keys. */
#include <stdio.h>
#include <string.h>

#include "server/server_internal.h"

enum MHD_Result api_key_add(server *s, struct MHD_Connection *c, const req *rq)
{
    if (!auth_admin(s, c))
        return send_error(s, c, 403, "registering a key is the operator's: it takes the admin "
                                     "token (state_dir/admin-token), not the clients'");
    json_error_t jerr;
    json_t *root = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return send_error(s, c, 400, "malformed JSON: line %d column %d: %s", jerr.line,
                          jerr.column, jerr.text);
    json_t *ji = json_object_get(root, "id"), *jp = json_object_get(root, "path");
    json_t *jr = json_object_get(root, "r1cs"), *jt = json_object_get(root, "trusted");
    json_t *jc = json_object_get(root, "cache");
    enum MHD_Result ret;
    char why[1200];
    cuzk_engine_stats st;
    cuzk_engine_get_stats(s->e, &st);
    static const char *const fields[] = {"id", "path", "r1cs", "trusted", "cache", NULL};
    const char *unknown = json_is_object(root) ? api_unknown_field(root, fields) : NULL;
    if (!json_is_object(root) || !json_is_string(ji) || !json_is_string(jp)) {
        ret = send_error(s, c, 400, "expected {\"id\": ID, \"path\": PATH} with two strings");
    } else if (unknown) {
        ret = send_error(s, c, 400,
                         "unknown field \"%.60s\": expected id, path, r1cs, trusted, cache",
                         unknown);
    } else if ((jr && !json_is_string(jr)) || (jt && !json_is_boolean(jt)) ||
               (jc && !json_is_boolean(jc))) {
        ret = send_error(s, c, 400,
                         "\"r1cs\" must be a string (the circuit's .r1cs), \"trusted\" and "
                         "\"cache\" booleans");
    } else if (st.shutting_down) {
        ret = send_error(s, c, 503, "shutting down");
    } else if (!path_allowed(s, json_string_value(jp), why, sizeof why) ||
               (jr && !path_allowed(s, json_string_value(jr), why, sizeof why))) {
        ret = send_error(s, c, 403, "%s", why);
    } else {
        cuzk_engine_key_info ki;
        cuzk_engine_key_opts ko = {.r1cs = jr ? json_string_value(jr) : NULL,
                                   .trusted = jt && json_is_true(jt),
                                   .cache = jc && json_is_true(jc)};
        cuzk_err r = cuzk_engine_key_add_ex(s->e, &ki, json_string_value(ji),
                                            json_string_value(jp), &ko);
        /* a key or r1cs file that does not exist (CUZK_ENOTFOUND) is, like one that cannot be
         * read, a 422: the request names it, it is not the resource addressed */
        if (r == CUZK_OK)
            ret = send_json(s, c, ki.existed ? 200 : 201, server_key_json(&ki));
        else
            ret = send_error(s, c,
                             r == CUZK_EINVAL  ? 400
                             : r == CUZK_EBUSY ? 409
                             : r == CUZK_EUNAVAILABLE ? 503
                             : r == CUZK_ENOMEM ? 500
                                                : 422,
                             "%s", cuzk_error_detail());
    }
    json_decref(root);
    return ret;
}


enum MHD_Result api_key_list(server *s, struct MHD_Connection *c)
{
    json_t *st = server_status_json(s->e);
    json_t *keys = json_incref(json_object_get(st, "keys"));
    json_decref(st);
    return send_json(s, c, 200, json_pack("{s:o}", "keys", keys ? keys : json_array()));
}

enum MHD_Result api_key_get(server *s, struct MHD_Connection *c, const char *id)
{
    cuzk_engine_key_info ki;
    if (cuzk_engine_key_get(s->e, &ki, id) != CUZK_OK)
        return send_error(s, c, 404, "unknown key \"%.100s\"", id);
    return send_json(s, c, 200, server_key_json(&ki));
}

enum MHD_Result api_key_remove(server *s, struct MHD_Connection *c, const char *id)
{
    if (!auth_admin(s, c))
        return send_error(s, c, 403, "removing a key is the operator's: it takes the admin "
                                     "token (state_dir/admin-token), not the clients'");
    cuzk_err r = cuzk_engine_key_remove(s->e, id);
    if (r == CUZK_EUNAVAILABLE)
        return send_error(s, c, 503, "%s", cuzk_error_detail());
    if (r != CUZK_OK)
        return send_error(s, c, 404, "unknown key \"%.100s\"", id);
    return send_json(s, c, 200, json_pack("{s:s, s:b}", "id", id, "removed", 1));
}
