/* SPDX-License-Identifier: Apache-2.0 */
/* The routes of the HTTP API (docs/API.md), and what the handlers share. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server/server_internal.h"

/* A misspelt field ("priorty") is an error rather than silently ignored. */
const char *api_unknown_field(json_t *obj, const char *const *known)
{
    const char *name;
    json_t *v;
    json_object_foreach(obj, name, v) {
        size_t i = 0;
        while (known[i] && strcmp(known[i], name) != 0)
            i++;
        if (!known[i])
            return name;
    }
    return NULL;
}

bool api_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return true;
}

enum MHD_Result api_route(server *s, struct MHD_Connection *c, const char *url,
                          const char *method, const req *rq)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0, del = strcmp(method, "DELETE") == 0;

    if (strcmp(url, "/healthz") == 0) {
        if (!get)
            return send_error(s, c, 405, "use GET");
        cuzk_engine_stats st;
        cuzk_engine_get_stats(s->e, &st);
        return send_json(s, c, st.shutting_down ? 503 : 200,
                         json_pack("{s:s}", "status", st.shutting_down ? "shutting down" : "ok"));
    }
    if (strcmp(url, "/v1/status") == 0) {
        if (!get)
            return send_error(s, c, 405, "use GET");
        return send_json(s, c, 200, server_status_json(s->e));
    }
    if (strcmp(url, "/metrics") == 0) {
        if (!get)
            return send_error(s, c, 405, "use GET");
        uint64_t counts[SERVER_N_CODES];
        for (size_t i = 0; i < SERVER_N_CODES; i++)
            counts[i] = atomic_load(&s->counts[i]);
        server_http_stats h = {.codes = server_http_codes, .counts = counts,
                               .n_codes = SERVER_N_CODES,
                               .body_bytes = (uint64_t)atomic_load(&s->body_bytes),
                               .long_polls = longpoll_count(s)};
        pthread_mutex_lock(&s->conns_mu);
        h.connections = s->n_conns;
        h.connections_cut = s->conns_cut;
        pthread_mutex_unlock(&s->conns_mu);
        char *t = server_metrics_text(s->e, &h);
        if (!t)
            return send_error(s, c, 500, "out of memory");
        return send_text(s, c, 200, t, "text/plain; version=0.0.4");
    }
    if (strcmp(url, "/v1/keys") == 0) {
        if (post)
            return api_key_add(s, c, rq);
        if (get)
            return api_key_list(s, c);
        return send_error(s, c, 405, "use POST or GET");
    }
    if (strncmp(url, "/v1/keys/", 9) == 0) {
        if (get)
            return api_key_get(s, c, url + 9);
        if (del)
            return api_key_remove(s, c, url + 9);
        return send_error(s, c, 405, "use GET or DELETE");
    }
    if (strcmp(url, "/v1/proofs") == 0) {
        if (!post)
            return send_error(s, c, 405, "use POST");
        return api_job_submit(s, c, rq);
    }
    if (strncmp(url, "/v1/proofs/", 11) == 0) {
        if (del)
            return api_job_cancel(s, c, url + 11);
        if (get)
            return api_job_get(s, c, url + 11);
        return send_error(s, c, 405, "use GET or DELETE");
    }
    return send_error(s, c, 404, "no such endpoint: %s %.200s", method, url);
}
