/* SPDX-License-Identifier: Apache-2.0 */
/* The cases every job store backend passes (tests/unit/test_store*.c): jobs put, listed
 * oldest first with their witness sources and results, finished, expired (their spool files
 * named), the store reopened with everything in it; partitions claimed under leases. */
#ifndef CUZK_TEST_STORE_CASES_H
#define CUZK_TEST_STORE_CASES_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "test.h"

#define CHECK_OK(x) CHECK((x) == CUZK_OK)

typedef struct {
    unsigned n;
    store_job j[8];   /* copies of the scalar fields */
    char src0[8][64];
    bool spooled0[8], done[8][3];
    cuzk_proof p1[8];
    cuzk_fr pub1[8][2];
} listing;

static int collect(void *arg, const store_job *j)
{
    listing *l = arg;
    if (l->n >= 8)
        return 1;
    l->j[l->n] = *j;
    snprintf(l->src0[l->n], sizeof l->src0[0], "%s", j->src[0]);
    l->spooled0[l->n] = j->spooled[0];
    for (uint32_t i = 0; i < j->n && i < 3; i++)
        l->done[l->n][i] = j->part_done[i];
    if (j->n > 1 && j->part_done[1]) {
        l->p1[l->n] = j->proofs[1];
        memcpy(l->pub1[l->n], j->publics + j->n_public, sizeof(cuzk_fr) * j->n_public);
    }
    l->n++;
    return 0;
}

typedef struct {
    unsigned n;
    char names[8][64];
} spools;

static void spool_seen(void *arg, const char *name)
{
    spools *s = arg;
    if (s->n < 8)
        snprintf(s->names[s->n++], sizeof s->names[0], "%s", name);
}

static void job_make(store_job *j, char **src, bool *spooled, const char *id, uint32_t n,
                     double t)
{
    memset(j, 0, sizeof *j);
    memcpy(j->id, id, sizeof j->id - 1);
    snprintf(j->key, sizeof j->key, "example");
    j->prio = CUZK_PRIO_HIGH;
    j->n = n;
    j->n_public = 2;
    j->submitted = t;
    j->src = src;
    j->spooled = spooled;
}

/* Opens the store under test (the same one each time: the reopen sees what was written). */
typedef cuzk_err (*store_open_fn)(store **s);

static void test_roundtrip(store_open_fn open_store)
{
    store *s = NULL;
    CHECK_OK(open_store(&s));
    if (!s)
        return;
    const char *ida = "00000000000000000000000000000001", *idb = "ffffffffffffffffffffffffffffffff",
               *idc = "0123456789abcdef0123456789abcdef";
    char *srca[3] = {"/w/a0.wtns", "spool-a1", "/w/a2.wtns"};
    bool spa[3] = {false, true, false};
    char *srcb[1] = {"spool-b0"};
    bool spb[1] = {true};
    char *srcc[1] = {"/w/c0.wtns"};
    bool spc[1] = {false};
    store_job j;
    job_make(&j, srca, spa, ida, 3, 1000.0);
    CHECK_OK(store_put_job(s, &j));
    CHECK(store_put_job(s, &j) == CUZK_EIO);   /* one id, one job */
    cuzk_error_clear();
    job_make(&j, srcb, spb, idb, 1, 1001.0);
    CHECK_OK(store_put_job(s, &j));
    job_make(&j, srcc, spc, idc, 1, 1002.0);
    CHECK_OK(store_put_job(s, &j));

    cuzk_proof proof;
    memset(&proof, 0x5a, sizeof proof);
    cuzk_fr pub[2];
    memset(pub, 0xa5, sizeof pub);
    CHECK_OK(store_put_part(s, ida, 1, &proof, pub, 2, 0));            /* a: 1 of 3 */
    CHECK_OK(store_put_part(s, idb, 0, &proof, pub, 2, 1010.0));       /* b: done */
    CHECK_OK(store_finish(s, idc, CUZK_JOB_FAILED, "partition 0: bad witness", 1020.0));
    unsigned all = 0, open_ = 0;
    CHECK_OK(store_count(s, &all, &open_));
    CHECK(all == 3 && open_ == 1);
    store_close(s);

    /* reopened: the same jobs, oldest first */
    s = NULL;
    CHECK_OK(open_store(&s));
    if (!s)
        return;
    listing l;
    memset(&l, 0, sizeof l);
    CHECK_OK(store_list(s, collect, &l));
    CHECK(l.n == 3);
    CHECK(!strcmp(l.j[0].id, ida) && !strcmp(l.j[1].id, idb) && !strcmp(l.j[2].id, idc));
    CHECK(l.j[0].state == CUZK_JOB_QUEUED && l.j[0].n == 3 && l.j[0].prio == CUZK_PRIO_HIGH &&
          l.j[0].submitted == 1000.0 && !strcmp(l.j[0].key, "example"));
    CHECK(!strcmp(l.src0[0], "/w/a0.wtns") && !l.spooled0[0]);
    CHECK(!l.done[0][0] && l.done[0][1] && !l.done[0][2]);
    CHECK(!memcmp(&l.p1[0], &proof, sizeof proof) && !memcmp(l.pub1[0], pub, sizeof pub));
    CHECK(l.j[1].state == CUZK_JOB_DONE && l.j[1].finished == 1010.0 && l.spooled0[1] &&
          !strcmp(l.src0[1], "spool-b0") && l.done[1][0]);
    CHECK(l.j[2].state == CUZK_JOB_FAILED && l.j[2].finished == 1020.0 &&
          !strcmp(l.j[2].error, "partition 0: bad witness"));

    /* expiry: only final jobs that ended before the time; their spool files are named */
    spools sp;
    memset(&sp, 0, sizeof sp);
    unsigned gone = 99;
    CHECK_OK(store_expire(s, 1005.0, spool_seen, &sp, &gone));
    CHECK(gone == 0 && sp.n == 0);
    CHECK_OK(store_expire(s, 1015.0, spool_seen, &sp, &gone));
    CHECK(gone == 1 && sp.n == 1 && !strcmp(sp.names[0], "spool-b0"));
    CHECK_OK(store_expire(s, 1e12, spool_seen, &sp, &gone));
    CHECK(gone == 1 && sp.n == 1);   /* c had no spool file; a is not final */
    CHECK_OK(store_count(s, &all, &open_));
    CHECK(all == 1 && open_ == 1);
    /* a finishes later; then it goes too, with its spool file */
    CHECK_OK(store_put_part(s, ida, 0, &proof, pub, 2, 0));
    CHECK_OK(store_put_part(s, ida, 2, &proof, pub, 2, 1100.0));
    CHECK_OK(store_expire(s, 1e12, spool_seen, &sp, &gone));
    CHECK(gone == 1 && sp.n == 2 && !strcmp(sp.names[1], "spool-a1"));
    CHECK_OK(store_count(s, &all, &open_));
    CHECK(all == 0 && open_ == 0);
    store_close(s);
}

static bool claim_has(const store_claim *c, unsigned n, const char *id, uint32_t idx,
                      uint32_t attempt)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(c[i].id, id) && c[i].idx == idx && c[i].attempt == attempt)
            return true;
    return false;
}

/* Claims: the most urgent, then oldest, partitions first; never one under a live lease;
 * one given back or whose lease ran out is claimed again (its attempt counted); the first
 * proof of a partition wins, and exactly one proof completes its job. */
static void test_claims(store_open_fn open_store)
{
    store *s = NULL;
    CHECK_OK(open_store(&s));
    if (!s)
        return;
    const char *ida = "a0000000000000000000000000000001", *idb = "b0000000000000000000000000000002",
               *idc = "c0000000000000000000000000000003";
    char *src[2] = {"/w/0.wtns", "/w/1.wtns"};
    bool sp[2] = {false, false};
    store_job j;
    job_make(&j, src, sp, ida, 2, 2000.0);
    j.prio = CUZK_PRIO_LOW;
    CHECK_OK(store_put_job(s, &j));
    job_make(&j, src, sp, idb, 1, 2001.0);
    j.prio = CUZK_PRIO_HIGH;
    CHECK_OK(store_put_job(s, &j));
    job_make(&j, src, sp, idc, 1, 2002.0);
    j.prio = CUZK_PRIO_NORMAL;
    CHECK_OK(store_put_job(s, &j));

    store_claim c[8];
    unsigned n = 99, held = 99;
    CHECK_OK(store_claim_parts(s, "h1", 0.4, c, 2, &n));
    CHECK(n == 2 && !strcmp(c[0].id, idb) && c[0].idx == 0 && c[0].attempt == 1 &&
          !strcmp(c[1].id, idc) && c[1].attempt == 1);
    CHECK_OK(store_claim_parts(s, "h2", 60, c, 8, &n));
    CHECK(n == 2 && claim_has(c, n, ida, 0, 1) && claim_has(c, n, ida, 1, 1));
    CHECK_OK(store_claim_parts(s, "h3", 60, c, 8, &n));
    CHECK(n == 0);
    /* given back by its holder only */
    CHECK_OK(store_release(s, "h1", ida, 1));
    CHECK_OK(store_claim_parts(s, "h3", 60, c, 8, &n));
    CHECK(n == 0);
    CHECK_OK(store_release(s, "h2", ida, 1));
    CHECK_OK(store_claim_parts(s, "h3", 60, c, 8, &n));
    CHECK(n == 1 && claim_has(c, n, ida, 1, 2));
    CHECK_OK(store_renew(s, "h2", 60, &held));
    CHECK(held == 1);
    /* h1's leases run out (no renewal): b and c go to h3, their second attempt */
    usleep(700 * 1000);
    CHECK_OK(store_renew(s, "h1", 60, &held));
    CHECK(held == 0);
    CHECK_OK(store_claim_parts(s, "h3", 60, c, 8, &n));
    CHECK(n == 2 && !strcmp(c[0].id, idb) && c[0].attempt == 2 && claim_has(c, n, idc, 0, 2));

    cuzk_proof p1, p2;
    memset(&p1, 1, sizeof p1);
    memset(&p2, 2, sizeof p2);
    cuzk_fr pub[2];
    memset(pub, 3, sizeof pub);
    bool completed = false;
    CHECK_OK(store_put_claimed(s, "h3", idb, 0, &p1, pub, 2, 2100.0, &completed));
    CHECK(completed);
    /* the late proof of h1 (its lease gone) changes nothing */
    CHECK_OK(store_put_claimed(s, "h1", idb, 0, &p2, pub, 2, 2101.0, &completed));
    CHECK(!completed);
    CHECK_OK(store_put_claimed(s, "h2", ida, 0, &p1, pub, 2, 2102.0, &completed));
    CHECK(!completed);
    CHECK_OK(store_put_claimed(s, "h3", ida, 1, &p1, pub, 2, 2103.0, &completed));
    CHECK(completed);
    /* proved partitions are not claimed again, done jobs' neither */
    CHECK_OK(store_release(s, "h3", idc, 0));
    CHECK_OK(store_claim_parts(s, "h4", 60, c, 8, &n));
    CHECK(n == 1 && !strcmp(c[0].id, idc) && c[0].attempt == 3);
    listing l;
    memset(&l, 0, sizeof l);
    CHECK_OK(store_list(s, collect, &l));
    CHECK(l.n == 3 && l.j[0].state == CUZK_JOB_DONE && l.j[0].finished == 2103.0 &&
          l.j[1].state == CUZK_JOB_DONE && l.j[1].finished == 2100.0 &&
          l.j[2].state == CUZK_JOB_QUEUED && l.done[0][0] && l.done[0][1]);
    CHECK(!memcmp(&l.p1[0], &p1, sizeof p1));
    CHECK_OK(store_finish(s, idc, CUZK_JOB_CANCELLED, "", 2200.0));
    CHECK_OK(store_claim_parts(s, "h4", 60, c, 8, &n));
    CHECK(n == 0);
    unsigned gone = 0;
    CHECK_OK(store_expire(s, 1e12, NULL, NULL, &gone));
    CHECK(gone == 3);
    store_close(s);
}

#endif
