/* SPDX-License-Identifier: Apache-2.0 */
/* GET /v1/status (JSON) and GET /metrics (Prometheus text format 0.0.4). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

json_t *server_key_json(const cuzk_engine_key_info *k)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "id", k->id,
                          "path", k->path, "format", k->format, "loaded", k->loaded, "n_vars",
                          (json_int_t)k->n_vars, "n_public", (json_int_t)k->n_public,
                          "domain_size", (json_int_t)k->domain_size, "key_bytes",
                          (json_int_t)k->key_bytes, "partition_bytes",
                          (json_int_t)k->partition_bytes, "in_flight", (json_int_t)k->in_flight,
                          "loads", (json_int_t)k->loads);
    if (o && k->r1cs[0]) {   /* a .params key: its circuit and load flags */
        json_object_set_new(o, "r1cs", json_string(k->r1cs));
        json_object_set_new(o, "trusted", json_boolean(k->trusted));
        json_object_set_new(o, "cache", json_boolean(k->cache));
    }
    return o;
}

static json_t *keys_json(cuzk_engine *e)
{
    size_t n = cuzk_engine_keys(e, NULL, 0);
    cuzk_engine_key_info *ks = calloc(n + 1, sizeof *ks);
    json_t *arr = json_array();
    if (ks && arr) {
        n = cuzk_engine_keys(e, ks, n);   /* may have shrunk meanwhile */
        for (size_t i = 0; i < n; i++)
            json_array_append_new(arr, server_key_json(&ks[i]));
    }
    free(ks);
    return arr;
}

/* The farm: this daemon's claims, every daemon seen and what it proves (null when the
 * daemon is not in a farm). */
static json_t *cluster_json(cuzk_engine *e)
{
    cuzk_cluster_info ci;
    cuzk_engine_cluster(e, &ci);
    if (!ci.owner[0])
        return json_null();
    json_t *hosts = json_array(), *leases = json_array();
    for (size_t i = 0; i < ci.n_hosts; i++) {
        const cuzk_cluster_host *h = &ci.hosts[i];
        json_array_append_new(hosts,
                              json_pack("{s:s, s:s, s:f, s:f, s:I, s:f, s:I}", "owner", h->owner,
                                        "node", h->node, "seen_ago_s", h->seen_ago_s, "up_s",
                                        h->up_s, "partitions", (json_int_t)h->partitions,
                                        "partitions_per_min", h->partitions_per_min, "leases",
                                        (json_int_t)h->leases));
    }
    for (size_t i = 0; i < ci.n_leases; i++) {
        const cuzk_cluster_lease *l = &ci.leases[i];
        json_array_append_new(leases,
                              json_pack("{s:s, s:I, s:I, s:s, s:f, s:f}", "job", l->job,
                                        "partition", (json_int_t)l->partition, "attempt",
                                        (json_int_t)l->attempt, "owner", l->owner, "age_s",
                                        l->age_s, "left_s", l->left_s));
    }
    json_t *o = json_pack(
        "{s:s, s:s, s:f, s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:f, s:o, s:o}",
        "owner", ci.owner, "node", ci.node, "lease_s", ci.lease_s, "store_up", ci.store_up,
        "store_error", ci.store_error, "leases_held", (json_int_t)ci.leases_held, "claims",
        (json_int_t)ci.claims, "reclaims", (json_int_t)ci.reclaims, "leases_lost",
        (json_int_t)ci.leases_lost, "store_errors", (json_int_t)ci.store_errors, "claim_calls",
        (json_int_t)ci.claim_calls, "claim_ms_mean",
        ci.claim_calls ? ci.claim_s * 1e3 / (double)ci.claim_calls : 0.0, "jobs_completed",
        (json_int_t)ci.jobs_completed, "partitions_per_min", ci.partitions_per_min, "hosts",
        hosts, "leases", leases);
    cuzk_cluster_info_release(&ci);
    return o;
}

json_t *server_status_json(cuzk_engine *e)
{
    cuzk_engine_stats s;
    cuzk_engine_get_stats(e, &s);
    json_t *devs = json_array();
    for (unsigned i = 0; i < s.n_devices; i++) {
        const cuzk_engine_device_info *d = &s.devices[i];
        json_array_append_new(devs, json_pack("{s:s, s:I, s:I, s:f, s:I, s:f, s:f, s:I}", "name",
                                              d->name, "workers", (json_int_t)d->workers, "busy",
                                              (json_int_t)d->busy, "busy_s", d->busy_s,
                                              "partitions", (json_int_t)d->partitions, "gap_s",
                                              d->gap_s, "gap_max_s", d->gap_max_s, "gaps",
                                              (json_int_t)d->gaps));
    }
    json_t *q = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "jobs_queued",
                          (json_int_t)s.jobs_queued, "jobs_running", (json_int_t)s.jobs_running,
                          "partitions_queued", (json_int_t)s.partitions_queued, "partitions_load",
                          (json_int_t)s.partitions_load, "partitions_ready",
                          (json_int_t)s.partitions_ready, "partitions_device",
                          (json_int_t)s.partitions_device, "partitions_finalize",
                          (json_int_t)s.partitions_finalize, "max_queued_jobs",
                          (json_int_t)s.config.max_queued_jobs);
    json_t *jobs = json_pack("{s:I, s:I, s:I, s:I, s:I}", "submitted", (json_int_t)s.jobs_submitted,
                             "done", (json_int_t)s.jobs_done, "failed", (json_int_t)s.jobs_failed,
                             "cancelled", (json_int_t)s.jobs_cancelled, "rejected",
                             (json_int_t)s.jobs_rejected);
    json_t *workers = json_pack("{s:I, s:I, s:I, s:I, s:I, s:b}", "loader_threads",
                                (json_int_t)s.loader_threads, "lookahead", (json_int_t)s.lookahead,
                                "workers_per_device", (json_int_t)s.config.workers_per_device,
                                "finalizers", (json_int_t)s.finalizers, "prove_threads",
                                (json_int_t)s.config.prove_threads, "verify", s.config.verify);
    json_t *mem = json_pack("{s:I, s:I}", "budget_bytes", (json_int_t)s.memory_budget,
                            "used_bytes", (json_int_t)s.memory_used);
    json_t *jr = json_pack("{s:b, s:I, s:I, s:I}", "on", s.journal, "commits",
                           (json_int_t)s.journal_commits, "spool_files",
                           (json_int_t)s.spool_files, "spool_bytes", (json_int_t)s.spool_bytes);
    return json_pack("{s:f, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "uptime_s",
                     s.uptime_s, "shutting_down", s.shutting_down, "queue", q, "jobs", jobs,
                     "workers", workers, "devices", devs, "memory", mem, "journal", jr, "keys",
                     keys_json(e), "cluster", cluster_json(e));
}

/* A growing text buffer. */
typedef struct {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static void metric(sbuf *b, const char *name, const char *type, const char *help)
{
    sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

char *server_metrics_text(cuzk_engine *e, const server_http_stats *h)
{
    cuzk_engine_stats s;
    cuzk_engine_get_stats(e, &s);
    sbuf b = {0};
    metric(&b, "cuzk_uptime_seconds", "gauge", "Seconds since the engine started.");
    sb_printf(&b, "cuzk_uptime_seconds %.3f\n", s.uptime_s);
    metric(&b, "cuzk_jobs_total", "counter", "Jobs by outcome (rejected: refused at submission).");
    sb_printf(&b,
              "cuzk_jobs_total{state=\"submitted\"} %llu\ncuzk_jobs_total{state=\"done\"} %llu\n"
              "cuzk_jobs_total{state=\"failed\"} %llu\ncuzk_jobs_total{state=\"cancelled\"} %llu\n"
              "cuzk_jobs_total{state=\"rejected\"} %llu\n",
              (unsigned long long)s.jobs_submitted, (unsigned long long)s.jobs_done,
              (unsigned long long)s.jobs_failed, (unsigned long long)s.jobs_cancelled,
              (unsigned long long)s.jobs_rejected);
    metric(&b, "cuzk_queue_jobs", "gauge", "Unfinished jobs by state.");
    sb_printf(&b, "cuzk_queue_jobs{state=\"queued\"} %u\ncuzk_queue_jobs{state=\"running\"} %u\n",
              s.jobs_queued, s.jobs_running);
    metric(&b, "cuzk_pipeline_partitions", "gauge", "Partitions by pipeline stage.");
    sb_printf(&b,
              "cuzk_pipeline_partitions{stage=\"queued\"} %u\n"
              "cuzk_pipeline_partitions{stage=\"load\"} %u\n"
              "cuzk_pipeline_partitions{stage=\"ready\"} %u\n"
              "cuzk_pipeline_partitions{stage=\"device\"} %u\n"
              "cuzk_pipeline_partitions{stage=\"finalize\"} %u\n",
              s.partitions_queued, s.partitions_load, s.partitions_ready, s.partitions_device,
              s.partitions_finalize);
    metric(&b, "cuzk_partitions_proved_total", "counter", "Partitions proved (and verified).");
    sb_printf(&b, "cuzk_partitions_proved_total %llu\n", (unsigned long long)s.partitions_proved);
    metric(&b, "cuzk_proofs_verified_total", "counter", "Proofs self-verified.");
    sb_printf(&b, "cuzk_proofs_verified_total %llu\n", (unsigned long long)s.proofs_verified);
    metric(&b, "cuzk_stage_seconds_total", "counter", "Seconds spent per pipeline stage.");
    static const char *const stages[6] = {"srs", "load", "prove", "finalize", "verify", "total"};
    for (int i = 0; i < 6; i++)
        sb_printf(&b, "cuzk_stage_seconds_total{stage=\"%s\"} %.6f\n", stages[i], s.stage_s[i]);
    metric(&b, "cuzk_device_busy_seconds_total", "counter", "Seconds each device lock was held proving.");
    for (unsigned i = 0; i < s.n_devices; i++)
        sb_printf(&b, "cuzk_device_busy_seconds_total{device=\"%s\"} %.6f\n", s.devices[i].name,
                  s.devices[i].busy_s);
    metric(&b, "cuzk_device_gap_seconds_total", "counter",
           "Seconds each device sat idle between consecutive partitions.");
    for (unsigned i = 0; i < s.n_devices; i++)
        sb_printf(&b, "cuzk_device_gap_seconds_total{device=\"%s\"} %.6f\n", s.devices[i].name,
                  s.devices[i].gap_s);
    metric(&b, "cuzk_device_gap_max_seconds", "gauge", "Longest idle time between two partitions.");
    for (unsigned i = 0; i < s.n_devices; i++)
        sb_printf(&b, "cuzk_device_gap_max_seconds{device=\"%s\"} %.6f\n", s.devices[i].name,
                  s.devices[i].gap_max_s);
    metric(&b, "cuzk_device_partitions_total", "counter", "Partitions proved per device.");
    for (unsigned i = 0; i < s.n_devices; i++)
        sb_printf(&b, "cuzk_device_partitions_total{device=\"%s\"} %llu\n", s.devices[i].name,
                  (unsigned long long)s.devices[i].partitions);
    metric(&b, "cuzk_memory_budget_bytes", "gauge", "Memory budget.");
    sb_printf(&b, "cuzk_memory_budget_bytes %llu\n", (unsigned long long)s.memory_budget);
    metric(&b, "cuzk_memory_used_bytes", "gauge", "Reserved: resident keys and in-flight partitions.");
    sb_printf(&b, "cuzk_memory_used_bytes %llu\n", (unsigned long long)s.memory_used);
    metric(&b, "cuzk_key_loads_total", "counter", "Key loads (registration and reloads).");
    sb_printf(&b, "cuzk_key_loads_total %llu\n", (unsigned long long)s.key_loads);
    metric(&b, "cuzk_key_evictions_total", "counter", "Keys evicted to make room.");
    sb_printf(&b, "cuzk_key_evictions_total %llu\n", (unsigned long long)s.key_evictions);
    metric(&b, "cuzk_witness_buffers_reused_total", "counter",
           "Witnesses loaded into a buffer kept from an earlier partition.");
    sb_printf(&b, "cuzk_witness_buffers_reused_total %llu\n",
              (unsigned long long)s.witness_buffers_reused);
    size_t nk = cuzk_engine_keys(e, NULL, 0);
    cuzk_engine_key_info *ks = calloc(nk + 1, sizeof *ks);
    if (ks) {
        nk = cuzk_engine_keys(e, ks, nk);
        metric(&b, "cuzk_key_loaded", "gauge", "1 when the key is resident.");
        for (size_t i = 0; i < nk; i++)
            sb_printf(&b, "cuzk_key_loaded{key=\"%s\"} %d\n", ks[i].id, ks[i].loaded);
        free(ks);
    }
    metric(&b, "cuzk_journal", "gauge", "1 when accepted jobs are journaled (state_dir), 0 in memory.");
    sb_printf(&b, "cuzk_journal %d\n", s.journal);
    metric(&b, "cuzk_journal_commits_total", "counter", "Durable writes of the job journal.");
    sb_printf(&b, "cuzk_journal_commits_total %llu\n", (unsigned long long)s.journal_commits);
    metric(&b, "cuzk_spool_files", "gauge", "Uploaded witnesses held in the spool now.");
    sb_printf(&b, "cuzk_spool_files %llu\n", (unsigned long long)s.spool_files);
    metric(&b, "cuzk_spool_bytes", "gauge", "Bytes of the uploaded witnesses in the spool now.");
    sb_printf(&b, "cuzk_spool_bytes %llu\n", (unsigned long long)s.spool_bytes);
    cuzk_cluster_info ci;
    cuzk_engine_cluster(e, &ci);
    if (ci.owner[0]) {
        metric(&b, "cuzk_cluster_store_up", "gauge", "1 when the farm's store answered the latest call.");
        sb_printf(&b, "cuzk_cluster_store_up %d\n", ci.store_up);
        metric(&b, "cuzk_cluster_leases_held", "gauge", "Partitions this daemon proves under a lease now.");
        sb_printf(&b, "cuzk_cluster_leases_held %u\n", ci.leases_held);
        metric(&b, "cuzk_cluster_claims_total", "counter", "Partitions claimed from the store.");
        sb_printf(&b, "cuzk_cluster_claims_total %llu\n", (unsigned long long)ci.claims);
        metric(&b, "cuzk_cluster_reclaims_total", "counter",
               "Partitions claimed after another daemon's lease on them ran out.");
        sb_printf(&b, "cuzk_cluster_reclaims_total %llu\n", (unsigned long long)ci.reclaims);
        metric(&b, "cuzk_cluster_lease_expiries_total", "counter",
               "Leases of this daemon that ran out while it proved their partitions.");
        sb_printf(&b, "cuzk_cluster_lease_expiries_total %llu\n", (unsigned long long)ci.leases_lost);
        metric(&b, "cuzk_cluster_store_errors_total", "counter",
               "Store calls that failed after the store's own retries.");
        sb_printf(&b, "cuzk_cluster_store_errors_total %llu\n", (unsigned long long)ci.store_errors);
        metric(&b, "cuzk_cluster_claim_seconds", "summary", "Time of the claims asked of the store.");
        sb_printf(&b, "cuzk_cluster_claim_seconds_sum %.6f\ncuzk_cluster_claim_seconds_count %llu\n",
                  ci.claim_s, (unsigned long long)ci.claim_calls);
        metric(&b, "cuzk_cluster_jobs_completed_total", "counter",
               "Jobs whose last result this daemon recorded.");
        sb_printf(&b, "cuzk_cluster_jobs_completed_total %llu\n", (unsigned long long)ci.jobs_completed);
        metric(&b, "cuzk_cluster_hosts", "gauge", "Daemons of the farm seen within three leases.");
        sb_printf(&b, "cuzk_cluster_hosts %zu\n", ci.n_hosts);
        cuzk_cluster_info_release(&ci);
    }
    metric(&b, "cuzk_http_body_bytes", "gauge",
           "Buffers of the request bodies being received now (bounded by max_body_total).");
    sb_printf(&b, "cuzk_http_body_bytes %llu\n", (unsigned long long)h->body_bytes);
    metric(&b, "cuzk_http_connections", "gauge", "Open HTTP connections now.");
    sb_printf(&b, "cuzk_http_connections %u\n", h->connections);
    metric(&b, "cuzk_http_connections_cut_total", "counter",
           "Connections shut down for sending their headers or body too slowly.");
    sb_printf(&b, "cuzk_http_connections_cut_total %llu\n",
              (unsigned long long)h->connections_cut);
    metric(&b, "cuzk_http_long_polls", "gauge", "Long polls (?wait=) waiting now.");
    sb_printf(&b, "cuzk_http_long_polls %u\n", h->long_polls);
    metric(&b, "cuzk_http_requests_total", "counter", "HTTP requests answered, by status code.");
    for (size_t i = 0; i < h->n_codes; i++)
        sb_printf(&b, "cuzk_http_requests_total{code=\"%u\"} %llu\n", h->codes[i],
                  (unsigned long long)h->counts[i]);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
