/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk-bench's report: proof checks, per-job lines, percentiles, throughput, JSON. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "util/parallel.h"
#include "util/timing.h"

const char *const bench_stage_names[BENCH_NSTAGES] = {"queue", "srs",    "load",  "gpu",
                                                      "finalize", "verify", "total"};
const char *const bench_stage_labels[BENCH_NSTAGES] = {"queue", "srs",    "load",  "prove",
                                                       "finalize", "verify", "total"};
const char *const bench_prio_names[BENCH_NPRIO] = {"low", "normal", "high", "critical"};

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void bench_copy(char *dst, size_t n, const char *src)
{
    if (!n)
        return;
    size_t k = strlen(src);
    if (k >= n)
        k = n - 1;
    memcpy(dst, src, k);
    dst[k] = 0;
}

void bench_job_clear(bench_job *j)
{
    free(j->proofs);
    free(j->pub);
    j->proofs = NULL;
    j->pub = NULL;
    j->n_proofs = 0;
}

/* One proof's check (bench_verify_job runs them in parallel); the error detail is per
 * thread, so each failure keeps its own text. */
typedef struct {
    bench_job *j;
    const cuzk_vk *vk;
    char (*why)[256]; /* per proof: "" when it passed */
} verify_ctx;

static void verify_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    verify_ctx *c = vctx;
    for (size_t i = b; i < e; i++) {
        cuzk_err r = cuzk_groth16_verify(c->vk, &c->j->pub[i * c->j->n_pub], c->j->n_pub,
                                         &c->j->proofs[i]);
        c->why[i][0] = 0;
        if (r != CUZK_OK)
            snprintf(c->why[i], sizeof c->why[i], "%s",
                     cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(r));
    }
}

void bench_verify_job(bench_job *j, const cuzk_vk *vk)
{
    j->checked = true;
    if (!j->n_proofs)
        return;
    /* the proofs of a job at once (a 10-partition job's checks would otherwise add their sum
     * to its latency, and to the batch's wall time when it is the last) */
    verify_ctx c = {j, vk, calloc(j->n_proofs, sizeof *c.why)};
    if (!c.why) {
        snprintf(j->verify_error, sizeof j->verify_error, "out of memory for the checks");
        j->verify_fail = (long)j->n_proofs;
        return;
    }
    cuzk_parallel_for(j->n_proofs, 1, 0, verify_range, &c);
    for (size_t i = 0; i < j->n_proofs; i++)
        if (c.why[i][0]) {
            if (!j->verify_fail)
                snprintf(j->verify_error, sizeof j->verify_error, "proof %zu: %s", i, c.why[i]);
            j->verify_fail++;
        }
    free(c.why);
}

int bench_write_job(const bench_job *j, const char *dir, char *err, size_t errlen)
{
    for (size_t i = 0; i < j->n_proofs; i++) {
        char p[1024], q[1024];
        snprintf(p, sizeof p, "%s/proof_%zu.json", dir, i);
        snprintf(q, sizeof q, "%s/public_%zu.json", dir, i);
        cuzk_err e = cuzk_proof_write_json(p, &j->proofs[i]);
        if (e == CUZK_OK)
            e = cuzk_public_write_json(q, &j->pub[i * j->n_pub], j->n_pub);
        if (e != CUZK_OK) {
            snprintf(err, errlen, "%s", cuzk_error_detail()[0] ? cuzk_error_detail() : cuzk_strerror(e));
            return -1;
        }
    }
    return 0;
}

double bench_percentile(double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    cuzk_sort_doubles(v, n);
    /* nearest rank: the smallest value with at least p % of the values at or below it */
    size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

static void fmt_ms(char *out, size_t n, double ms)
{
    if (ms < 0)
        snprintf(out, n, "-");
    else
        snprintf(out, n, "%.1f", ms);
}

void bench_print_job(FILE *f, const bench_job *j, long count)
{
    const char *id = j->id[0] ? j->id : "-";
    if (strcmp(j->state, "done")) {
        fprintf(f, "[%ld/%ld] job %s (%s) %s: %s\n", j->index + 1, count, id, bench_prio_names[j->priority],
                j->state, j->error[0] ? j->error : "(no reason given)");
        return;
    }
    char s[BENCH_NSTAGES][32];
    for (int k = 0; k < BENCH_NSTAGES; k++)
        fmt_ms(s[k], sizeof s[k], j->t[k]);
    const char *check = !j->checked ? "" : j->verify_fail ? ", check FAILED" : ", checked ok";
    fprintf(f,
            "[%ld/%ld] job %s (%s) done, %zu proof%s%s  timings: total=%s ms (queue=%s ms, srs=%s ms, "
            "load=%s ms, prove=%s ms, finalize=%s ms, verify=%s ms) latency=%.1f ms\n",
            j->index + 1, count, id, bench_prio_names[j->priority], j->n_proofs, j->n_proofs == 1 ? "" : "s",
            check, s[BENCH_TOTAL],
            s[BENCH_QUEUE], s[BENCH_SRS], s[BENCH_LOAD], s[BENCH_GPU], s[BENCH_FINALIZE], s[BENCH_VERIFY],
            j->latency_ms);
    if (j->verify_fail)
        fprintf(f, "    check failed: %s\n", j->verify_error);
}

typedef struct {
    size_t n;
    double mean, min, p50, p95, p99, max;
} stats;

static stats stats_of(double *v, size_t n)
{
    stats s = {.n = n};
    if (!n)
        return s;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    s.mean = sum / (double)n;
    s.p50 = bench_percentile(v, n, 50);
    s.p95 = bench_percentile(v, n, 95);
    s.p99 = bench_percentile(v, n, 99);
    s.min = v[0];
    s.max = v[n - 1];
    return s;
}

static json_t *stats_json(const stats *s)
{
    return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)s->n, "mean", s->mean, "min", s->min,
                     "p50", s->p50, "p95", s->p95, "p99", s->p99, "max", s->max);
}

/* Busy fraction of device i over the batch; -1 when the snapshots do not match. */
static double dev_busy(const bench_devices *a, const bench_devices *b, unsigned i, double wall_s)
{
    if (!a || !b || a->n != b->n || i >= b->n || strcmp(a->name[i], b->name[i]) || wall_s <= 0)
        return -1;
    return (b->busy_s[i] - a->busy_s[i]) / wall_s;
}

void bench_report(FILE *f, const bench_opts *o, const char *mode, const bench_job *jobs, long n, double wall_ms,
                  double key_load_ms, const bench_devices *dev0, const bench_devices *dev1)
{
    if (!dev0 || !dev1 || dev0->n != dev1->n)
        dev0 = dev1 = NULL;
    long done = 0, failed = 0, proofs = 0, vfail = 0, checked = 0;
    double *v = calloc((size_t)n + 1, sizeof *v);
    double *lat = calloc((size_t)n + 1, sizeof *lat);
    if (!v || !lat) {
        fprintf(stderr, "cuzk-bench: out of memory\n");
        free(v);
        free(lat);
        return;
    }
    size_t nl = 0;
    for (long i = 0; i < n; i++) {
        const bench_job *j = &jobs[i];
        if (!strcmp(j->state, "done")) {
            done++;
            proofs += (long)j->n_proofs;
            lat[nl++] = j->latency_ms;
            if (o->verify_with)
                checked += (long)j->n_proofs;
            vfail += j->verify_fail;
        } else {
            failed++;
        }
    }
    stats ls = stats_of(lat, nl);
    stats st[BENCH_NSTAGES];
    for (int s = 0; s < BENCH_NSTAGES; s++) {
        size_t m = 0;
        for (long i = 0; i < n; i++)
            if (!strcmp(jobs[i].state, "done") && jobs[i].t[s] >= 0)
                v[m++] = jobs[i].t[s];
        st[s] = stats_of(v, m);
    }
    double wall_s = wall_ms / 1e3;
    double per_min = wall_s > 0 ? (double)proofs * 60.0 / wall_s : 0;
    double s_per = proofs ? wall_s / (double)proofs : 0;

    if (o->json) {
        json_t *r = json_object();
        json_object_set_new(r, "mode", json_string(mode));
        json_object_set_new(r, "target", json_string(o->in_process ? "in-process" : o->addr));
        json_object_set_new(r, "key", json_string(o->key ? o->key : ""));
        json_object_set_new(r, "jobs", json_integer(n));
        json_object_set_new(r, "partitions_per_job", json_integer((json_int_t)o->n_witness));
        json_object_set_new(r, "concurrency", json_integer(o->concurrency));
        json_object_set_new(r, "done", json_integer(done));
        json_object_set_new(r, "failed", json_integer(failed));
        json_object_set_new(r, "proofs", json_integer(proofs));
        json_object_set_new(r, "verify_with", o->verify_with ? json_string(o->verify_with) : json_null());
        json_object_set_new(r, "verified", json_integer(checked - vfail));
        json_object_set_new(r, "verify_failures", json_integer(vfail));
        json_object_set_new(r, "wall_s", json_real(wall_s));
        if (key_load_ms >= 0)
            json_object_set_new(r, "key_load_ms", json_real(key_load_ms));
        json_object_set_new(r, "throughput", json_pack("{s:f, s:f}", "proofs_per_min", per_min, "s_per_proof", s_per));
        json_object_set_new(r, "latency_ms", stats_json(&ls));
        json_t *sj = json_object();
        for (int s = 0; s < BENCH_NSTAGES; s++)
            json_object_set_new(sj, bench_stage_names[s], stats_json(&st[s]));
        json_object_set_new(sj, bench_stage_labels[BENCH_GPU], stats_json(&st[BENCH_GPU]));
        json_object_set_new(r, "stages_ms", sj);
        /* mean latency by priority, for mixed-priority runs */
        json_t *bp = json_object();
        for (int p = 0; p < BENCH_NPRIO; p++) {
            size_t m = 0;
            for (long i = 0; i < n; i++)
                if (!strcmp(jobs[i].state, "done") && jobs[i].priority == p)
                    v[m++] = jobs[i].latency_ms;
            if (m) {
                stats ps = stats_of(v, m);
                json_object_set_new(bp, bench_prio_names[p], stats_json(&ps));
            }
        }
        json_object_set_new(r, "latency_by_priority_ms", bp);
        json_t *ja = json_array();
        for (long i = 0; i < n; i++) {
            const bench_job *j = &jobs[i];
            json_t *t = json_object();
            for (int s = 0; s < BENCH_NSTAGES; s++)
                json_object_set_new(t, bench_stage_names[s], j->t[s] >= 0 ? json_real(j->t[s]) : json_null());
            json_object_set_new(t, bench_stage_labels[BENCH_GPU],
                                j->t[BENCH_GPU] >= 0 ? json_real(j->t[BENCH_GPU]) : json_null());
            json_t *jj = json_pack("{s:I, s:s, s:s, s:s, s:I, s:f, s:o, s:I}", "index", (json_int_t)j->index, "id",
                                   j->id, "priority", bench_prio_names[j->priority], "state", j->state, "proofs",
                                   (json_int_t)j->n_proofs, "latency_ms", j->latency_ms, "timings", t,
                                   "verify_failures", (json_int_t)j->verify_fail);
            if (j->error[0])
                json_object_set_new(jj, "error", json_string(j->error));
            if (j->verify_error[0])
                json_object_set_new(jj, "verify_error", json_string(j->verify_error));
            json_array_append_new(ja, jj);
        }
        json_t *da = json_array();
        for (unsigned i = 0; dev1 && i < dev1->n; i++) {
            double fr = dev_busy(dev0, dev1, i, wall_s);
            double ng = dev1->gaps[i] - dev0->gaps[i];
            json_array_append_new(da, json_pack("{s:s, s:i, s:f, s:o, s:f, s:f, s:o, s:f}", "name", dev1->name[i],
                                                "workers", (int)dev1->workers[i], "busy_s",
                                                dev1->busy_s[i] - dev0->busy_s[i], "busy_fraction",
                                                fr >= 0 ? json_real(fr) : json_null(), "partitions",
                                                dev1->partitions[i] - dev0->partitions[i], "gaps", ng,
                                                "gap_mean_ms",
                                                ng > 0 ? json_real(1e3 * (dev1->gap_s[i] - dev0->gap_s[i]) / ng)
                                                       : json_null(),
                                                "gap_max_ms_since_start", 1e3 * dev1->gap_max_s[i]));
        }
        json_object_set_new(r, "devices", da);
        json_object_set_new(r, "job_results", ja);
        char *txt = json_dumps(r, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
        if (txt)
            fprintf(f, "%s\n", txt);
        free(txt);
        json_decref(r);
    } else {
        fprintf(f, "\n%s: %ld job%s x %zu partition%s, concurrency %ld, %s\n", mode, n, n == 1 ? "" : "s",
                o->n_witness, o->n_witness == 1 ? "" : "s", o->concurrency,
                o->in_process ? "in-process" : o->addr);
        if (key_load_ms >= 0)
            fprintf(f, "  key %s loaded in %.1f ms (not in the figures below)\n", o->zkey, key_load_ms);
        fprintf(f, "  jobs done %ld, failed %ld; proofs %ld", done, failed, proofs);
        if (o->verify_with)
            fprintf(f, "; checked against %s: %ld ok, %ld FAILED", o->verify_with, checked - vfail, vfail);
        fprintf(f, "\n  wall %.3f s; throughput %.1f proofs/min, %.3f s/proof\n", wall_s, per_min, s_per);
        for (unsigned i = 0; dev1 && i < dev1->n; i++) {
            double fr = dev_busy(dev0, dev1, i, wall_s);
            double ng = dev1->gaps[i] - dev0->gaps[i];
            if (fr >= 0)
                fprintf(f, "  device %s (%u worker%s): busy %.1f %% of the wall time, %.0f partitions\n",
                        dev1->name[i], dev1->workers[i], dev1->workers[i] == 1 ? "" : "s", 100.0 * fr,
                        dev1->partitions[i] - dev0->partitions[i]);
            if (fr >= 0 && ng > 0)
                fprintf(f, "    gap between consecutive partitions: mean %.2f ms over %.0f (longest since "
                           "start %.2f ms)\n",
                        1e3 * (dev1->gap_s[i] - dev0->gap_s[i]) / ng, ng, 1e3 * dev1->gap_max_s[i]);
        }
        fprintf(f, "  latency per job (client): p50 %.1f ms, p95 %.1f ms, p99 %.1f ms (mean %.1f, max %.1f)\n",
                ls.p50, ls.p95, ls.p99, ls.mean, ls.max);
        fprintf(f, "  %-10s %10s %10s %10s %10s %10s\n", "stage (ms)", "mean", "p50", "p95", "p99", "max");
        for (int s = 0; s < BENCH_NSTAGES; s++) {
            if (!st[s].n)
                fprintf(f, "  %-10s %10s %10s %10s %10s %10s\n", bench_stage_labels[s], "-", "-", "-", "-", "-");
            else
                fprintf(f, "  %-10s %10.1f %10.1f %10.1f %10.1f %10.1f\n", bench_stage_labels[s], st[s].mean,
                        st[s].p50, st[s].p95, st[s].p99, st[s].max);
        }
    }
    free(v);
    free(lat);
}
