/* SPDX-License-Identifier: Apache-2.0 */
/* cuzk gen --constraints N [--partitions P] [--profile porep|dense] [--seed S] -o DIR */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk.h"
#include "cuzk/gen.h"
#include "outfile.h"
#include "progress.h"
#include "util/parallel.h"

static void gen_usage(FILE *f)
{
    fprintf(f,
            "usage: cuzk gen (--constraints N | --domain K) [--partitions P] [--profile porep|dense]\n"
            "                [--seed S] [--public K] [--threads T] [-q] -o DIR\n"
            "  Writes a satisfiable circuit DIR/circuit.r1cs with exactly N constraints (N may be\n"
            "  written 2^k) and one witness per partition, DIR/witness-0.wtns .. witness-(P-1).wtns\n"
            "  (same constraints, different inputs). Synthetic: for tests and benchmarks.\n"
            "  --profile porep: a Filecoin PoRep partition's statistics (S-boxes x^5, bit\n"
            "      decompositions, XOR/AND, ~99.7%% of wires in A, ~25%% in B, ~90%% of values\n"
            "      0 or 1); dense: random field values everywhere. Default porep.\n"
            "  --domain K: the largest N that fits domain 2^K for snarkjs and bellman alike\n"
            "      (N + public + 1 <= 2^K; 2^K - 328 with the default 327 public inputs).\n"
            "  --public K: public inputs besides the one (default min(327, iterations)).\n"
            "  --seed S: same seed, same files (default 1). On a terminal, a progress line on\n"
            "  stderr after 2 s; -q: no summary and no progress.\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    if (s[0] == '2' && s[1] == '^') {
        unsigned long k = strtoul(s + 2, &end, 10);
        if (*end || end == s + 2 || k > 63)
            return -1;
        *v = (uint64_t)1 << k;
        return 0;
    }
    unsigned long long x = strtoull(s, &end, 0);
    if (*end)
        return -1;
    *v = x;
    return 0;
}

/* The share of constraints written, into the progress line (on a terminal only). */
static void gen_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress_fraction(ctx, total ? (double)done / (double)total : 0.0);
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

/* cuzk_gen_write into a temporary directory inside dir, then each file renamed into dir
 * (outfile.h): a run that fails leaves none of its files, and existing ones are replaced
 * whole. */
static cuzk_err gen_write(cuzk_gen_stats *st, const char *dir, const cuzk_gen_opts *o)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return cuzk_error_set(CUZK_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    size_t dlen = strlen(dir), n = (size_t)o->n_partitions + 1;
    char *tmpdir = malloc(dlen + 32);
    tool_out *out = calloc(n, sizeof *out);
    char **names = calloc(n, sizeof *names);
    cuzk_err e = CUZK_OK;
    if (!tmpdir || !out || !names)
        e = cuzk_error_set(CUZK_ENOMEM, "out of memory");
    if (e == CUZK_OK) {
        snprintf(tmpdir, dlen + 32, "%s/.cuzk-gen.XXXXXX", dir);
        if (!mkdtemp(tmpdir)) {
            e = cuzk_error_set(CUZK_EIO, "%s: cannot create a temporary directory in it: %s", dir,
                               strerror(errno));
            free(tmpdir);
            tmpdir = NULL;
        }
    }
    for (size_t i = 0; e == CUZK_OK && i < n; i++) {
        char base[48];
        if (i == 0)
            snprintf(base, sizeof base, "circuit.r1cs");
        else
            snprintf(base, sizeof base, "witness-%zu.wtns", i - 1);
        size_t len = dlen + strlen(tmpdir) + 2 * sizeof base;
        names[i] = malloc(len);
        out[i].tmp = malloc(len);
        if (!names[i] || !out[i].tmp) {
            e = cuzk_error_set(CUZK_ENOMEM, "out of memory");
            break;
        }
        snprintf(names[i], len, "%s/%s", dir, base);
        snprintf(out[i].tmp, len, "%s/%s", tmpdir, base);
        out[i].path = names[i];
    }
    if (e == CUZK_OK && (e = cuzk_gen_write(st, tmpdir, o)) != CUZK_OK) {
        char d[512];
        snprintf(d, sizeof d, "%s", cuzk_error_detail());
        const char *at = strstr(d, tmpdir); /* the detail names dir, not the temporary */
        if (at)
            cuzk_error_set(e, "%.*s%s%s", (int)(at - d), d, dir, at + strlen(tmpdir));
    }
    if (e == CUZK_OK)
        e = tool_out_commit(out, n);
    else if (out)
        tool_out_discard(out, n);
    if (tmpdir)
        (void)rmdir(tmpdir);
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    free(out);
    free(tmpdir);
    return e;
}

int cuzk_cli_gen(int argc, char **argv)
{
    cuzk_gen_opts o = {.n_partitions = 1, .profile = CUZK_GEN_POREP, .seed = 1, .n_public = -1};
    const char *dir = NULL;
    uint64_t domain = 0;
    int quiet = 0, have_n = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t v = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            gen_usage(stdout);
            return 0;
        } else if (!strcmp(a, "-q")) {
            quiet = 1;
            continue;
        }
        int bad = 0;
        if (!strcmp(a, "--constraints")) {
            bad = parse_u64(val, &o.n_constraints) || o.n_constraints < 1 ||
                  o.n_constraints > UINT32_MAX;
            have_n = 1;
        } else if (!strcmp(a, "--domain")) {
            bad = parse_u64(val, &domain) || domain < 1 || domain > 32;
        } else if (!strcmp(a, "--partitions")) {
            bad = parse_u64(val, &v) || v < 1 || v > CUZK_GEN_MAX_PARTITIONS;
            o.n_partitions = (uint32_t)v;
        } else if (!strcmp(a, "--profile")) {
            if (val && !strcmp(val, "porep"))
                o.profile = CUZK_GEN_POREP;
            else if (val && !strcmp(val, "dense"))
                o.profile = CUZK_GEN_DENSE;
            else
                bad = 1;
        } else if (!strcmp(a, "--seed")) {
            bad = parse_u64(val, &o.seed);
        } else if (!strcmp(a, "--public")) {
            bad = parse_u64(val, &v) || v > ((uint64_t)1 << 24);
            o.n_public = (int64_t)v;
        } else if (!strcmp(a, "--threads")) {
            bad = parse_u64(val, &v) || v < 1 || v > 4096;
            o.nthreads = (unsigned)v;
        } else if (!strcmp(a, "-o")) {
            bad = !val;
            dir = val;
        } else {
            fprintf(stderr, "cuzk gen: unknown argument '%s'\n", a);
            gen_usage(stderr);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "cuzk gen: bad or missing value for %s\n", a);
            return 2;
        }
        i++;
    }
    if (!dir || have_n == !!domain) {
        fprintf(stderr, "cuzk gen: %s\n", !dir ? "-o DIR is required"
                                              : "give exactly one of --constraints and --domain");
        gen_usage(stderr);
        return 2;
    }
    if (domain) {
        o.n_constraints = cuzk_gen_fit_domain(&o, (unsigned)domain);
        if (o.n_constraints < 1) {
            fprintf(stderr, "cuzk gen: no circuit fits domain 2^%" PRIu64 "\n", domain);
            return 2;
        }
    }
    if (o.nthreads)
        cuzk_parallel_set_threads(o.nthreads);
    unsigned threads = o.nthreads ? o.nthreads : cuzk_parallel_threads();
    cli_progress *pg = quiet ? NULL : cli_progress_start("cuzk gen", "writing the circuit and "
                                                         "the witnesses");
    if (pg) {
        o.progress = gen_progress;
        o.progress_ctx = pg;
    }
    cuzk_gen_stats st;
    cuzk_err e = gen_write(&st, dir, &o);
    cli_progress_end(pg);
    if (e != CUZK_OK) {
        const char *d = cuzk_error_detail();
        fprintf(stderr, "cuzk gen: %s\n", d[0] ? d : cuzk_strerror(e));
        return 2;
    }
    if (quiet)
        return 0;
    uint64_t np = st.n_public;
    unsigned lg = 0;
    while (((uint64_t)1 << lg) < st.n_constraints + np + 1)
        lg++;
    printf("cuzk gen: %s profile, seed %" PRIu64 ", %u partition%s -> %s\n",
           o.profile == CUZK_GEN_POREP ? "porep" : "dense", o.seed, o.n_partitions,
           o.n_partitions == 1 ? "" : "s", dir);
    printf("  constraints %" PRIu64 ", wires %u (public %u + the one, private inputs %u), "
           "domain 2^%u for snarkjs and bellman\n",
           st.n_constraints, st.n_wires, st.n_public, st.n_prv_in, lg);
    printf("  terms A %" PRIu64 ", B %" PRIu64 ", C %" PRIu64 " (%.2f per constraint)\n",
           st.n_terms[0], st.n_terms[1], st.n_terms[2],
           (double)(st.n_terms[0] + st.n_terms[1] + st.n_terms[2]) / (double)st.n_constraints);
    printf("  private wires %" PRIu64 ": in A %.2f%%, in B %.2f%%; values 0 or 1 %.2f%%; "
           "public inputs in A %u, in B %u of %u\n",
           st.n_private, pct(st.private_in_a, st.n_private), pct(st.private_in_b, st.n_private),
           pct(st.private_01, st.n_private * o.n_partitions), st.public_in_a, st.public_in_b,
           st.n_public);
    printf("  circuit.r1cs %.1f MB, witness %.1f MB each\n", (double)st.r1cs_bytes / 1e6,
           (double)st.wtns_bytes / 1e6);
    printf("  %.3f s, %.2f M constraints/s on %u threads (%.2f M/s per thread)\n", st.seconds,
           (double)st.n_constraints / st.seconds / 1e6, threads,
           (double)st.n_constraints / st.seconds / 1e6 / threads);
    return 0;
}
