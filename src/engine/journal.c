/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's job journal (cfg.state_dir): the store (src/store: SQLite, or PostgreSQL
 * with cfg.store) holding every accepted job, and the spool directory (state_dir/spool,
 * 0700) holding uploaded witnesses, one file each, created O_EXCL|O_NOFOLLOW 0600 and
 * fsynced with the directory before the job's commit. Recovery after a restart (cuzk_engine_recover) and expiry are here too. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_internal.h"

double engine_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

cuzk_err journal_open(cuzk_engine *e)
{
    e->spool_fd = -1;
    if (!e->cfg.state_dir)
        return CUZK_OK;
    const char *dir = e->cfg.state_dir;
    if (!(e->state_dir = strdup(dir)))
        return cuzk_error_set(CUZK_ENOMEM, "engine: out of memory");
    e->cfg.state_dir = e->state_dir;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return cuzk_error_set(CUZK_EIO, "state directory %s: %s", dir, strerror(errno));
    const char *sp = e->cfg.store && *e->cfg.store && e->cfg.spool_dir ? e->cfg.spool_dir : NULL;
    if (sp) {   /* the farm's spool, on storage every host sees */
        close(dfd);
        e->spool_fd = open(sp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (e->spool_fd < 0)
            return cuzk_error_set(CUZK_EIO, "spool_dir %s: %s", sp, strerror(errno));
        if (fstat(e->spool_fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022))
            return cuzk_error_set(CUZK_EIO, "spool_dir %s: not a directory of this user's that "
                                  "only it may write", sp);
        return store_postgres_open(&e->st, e->cfg.store, false);
    }
    if (mkdirat(dfd, "spool", 0700) != 0 && errno != EEXIST) {
        cuzk_err r = cuzk_error_set(CUZK_EIO, "%s/spool: %s", dir, strerror(errno));
        close(dfd);
        return r;
    }
    e->spool_fd = openat(dfd, "spool", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    close(dfd);
    struct stat st;
    if (e->spool_fd < 0)
        return cuzk_error_set(CUZK_EIO, "%s/spool: %s", dir,
                              err == ELOOP || err == ENOTDIR ? "not a directory (a link?)"
                                                             : strerror(err));
    if (fstat(e->spool_fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077))
        return cuzk_error_set(CUZK_EIO, "%s/spool: not a directory of this user's with mode 0700",
                              dir);
    if (e->cfg.store && *e->cfg.store)   /* a farm: every daemon on it shares its queue */
        return store_postgres_open(&e->st, e->cfg.store, false);
    return store_sqlite_open(&e->st, dir);
}

void journal_close(cuzk_engine *e)
{
    store_close(e->st);
    e->st = NULL;
    if (e->spool_fd >= 0)
        close(e->spool_fd);
    e->spool_fd = -1;
    free(e->state_dir);
    e->state_dir = NULL;
}

int journal_spool_open(cuzk_engine *e, const char *name)
{
    return openat(e->spool_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
}

/* Writes len bytes at p to a new spool file name, fsynced. */
static cuzk_err spool_write(cuzk_engine *e, const char *name, const void *p, size_t len)
{
    int fd = openat(e->spool_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return cuzk_error_set(CUZK_EIO, "spool %s: %s", name, strerror(errno));
    const unsigned char *b = p;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, b + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int err = done < len ? (errno ? errno : ENOSPC) : 0;
    if (!err && fsync(fd) != 0)
        err = errno;
    close(fd);
    if (err) {
        unlinkat(e->spool_fd, name, 0);
        return cuzk_error_set(CUZK_EIO, "spool %s: %s", name, strerror(err));
    }
    return CUZK_OK;
}

cuzk_err journal_put(cuzk_engine *e, job *j, const cuzk_witness_src *w)
{
    if (!e->st)
        return CUZK_OK;
    cuzk_err r = CUZK_OK;
    size_t spooled = 0, bytes = 0;
    bool *sp = calloc(j->n, sizeof *sp);
    char **src = calloc(j->n, sizeof *src);
    if (!sp || !src)
        r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
    const unsigned char **data = e->cluster ? calloc(j->n, sizeof *data) : NULL;
    size_t *dlen = e->cluster ? calloc(j->n, sizeof *dlen) : NULL;
    if (e->cluster && (!data || !dlen))
        r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
    for (size_t i = 0; r == CUZK_OK && i < j->n; i++) {
        if (j->paths[i]) {
            src[i] = j->paths[i];
            continue;
        }
        if (e->cluster && w[i].len <= e->db_upload_max) {   /* kept in the database */
            src[i] = "";
            data[i] = w[i].data;
            dlen[i] = w[i].len;
            continue;
        }
        if (e->cluster && !e->cfg.spool_dir) {
            r = cuzk_error_set(CUZK_ESIZE,
                               "witness %zu: an upload of %zu bytes: a farm keeps uploads up to "
                               "%llu bytes (db_upload_max) in its database, larger ones in "
                               "spool_dir, which is not set: give the witness by path",
                               i, w[i].len, (unsigned long long)e->db_upload_max);
            break;
        }
        char name[64];
        snprintf(name, sizeof name, "%s.%zu.wtns", j->id, i);
        if (!(j->spool[i] = strdup(name))) {
            r = cuzk_error_set(CUZK_ENOMEM, "out of memory");
            break;
        }
        r = spool_write(e, name, w[i].data, w[i].len);
        if (r != CUZK_OK) {
            free(j->spool[i]);
            j->spool[i] = NULL;
            break;
        }
        src[i] = j->spool[i];
        sp[i] = true;
        spooled++;
        bytes += w[i].len;
    }
    if (r == CUZK_OK && spooled && fsync(e->spool_fd) != 0)
        r = cuzk_error_set(CUZK_EIO, "%s/spool: fsync: %s", e->state_dir, strerror(errno));
    if (r == CUZK_OK) {
        store_job sj;
        memset(&sj, 0, sizeof sj);
        memcpy(sj.id, j->id, sizeof sj.id);
        snprintf(sj.key, sizeof sj.key, "%s", j->key_id);
        sj.prio = j->prio;
        sj.n = (uint32_t)j->n;
        sj.n_public = j->n_public;
        sj.submitted = engine_wall();
        sj.src = src;
        sj.spooled = sp;
        sj.data = data;
        sj.len = dlen;
        r = store_put_job(e->st, &sj);
    }
    if (r != CUZK_OK) {
        for (size_t i = 0; i < j->n; i++)
            if (j->spool[i]) {
                unlinkat(e->spool_fd, j->spool[i], 0);
                free(j->spool[i]);
                j->spool[i] = NULL;
            }
    } else {
        pthread_mutex_lock(&e->mu);
        e->c_commits++;
        e->spool_files += spooled;
        e->spool_bytes += bytes;
        pthread_mutex_unlock(&e->mu);
    }
    free(sp);
    free(src);
    free(data);
    free(dlen);
    return r;
}

void journal_finish(cuzk_engine *e, const job *j)
{
    if (!e->st)
        return;
    if (store_finish(e->st, j->id, j->state, j->error, engine_wall()) != CUZK_OK)
        LOG(e, CUZK_LOG_ERROR, "event=journal_failed job=%s reason=\"%s\"", j->id,
            cuzk_error_detail());
    else
        e->c_commits++;
}

void journal_unspool(cuzk_engine *e, job *j)
{
    for (size_t i = 0; j->spool && i < j->n; i++) {
        if (!j->spool[i])
            continue;
        struct stat st;
        if (j->shadow) {   /* the farm's file: deleted with its job's expiry */
        } else if (fstatat(e->spool_fd, j->spool[i], &st, AT_SYMLINK_NOFOLLOW) == 0) {
            e->spool_bytes -= (uint64_t)st.st_size <= e->spool_bytes ? (uint64_t)st.st_size
                                                                      : e->spool_bytes;
            if (e->spool_files)
                e->spool_files--;
        }
        if (!j->shadow)
            unlinkat(e->spool_fd, j->spool[i], 0);
        free(j->spool[i]);
        j->spool[i] = NULL;
    }
}

static void unspool_name(void *arg, const char *name)
{
    cuzk_engine *e = arg;
    if (name && !strchr(name, '/'))
        unlinkat(e->spool_fd, name, 0);   /* usually gone already, with the job's end */
}

void journal_expire(cuzk_engine *e)
{
    if (!e->st)
        return;
    unsigned n = 0;
    if (store_expire(e->st, engine_wall() - e->cfg.result_ttl_s, unspool_name, e, &n) != CUZK_OK)
        LOG(e, CUZK_LOG_ERROR, "event=journal_failed reason=\"%s\"", cuzk_error_detail());
    else if (n)
        LOG(e, CUZK_LOG_DEBUG, "event=journal_expired jobs=%u", n);
}

/* ---- recovery ---- */

typedef struct {
    cuzk_engine *e;
    unsigned requeued, kept;
    cuzk_err err;
} recover_ctx;

double engine_time_of(const cuzk_engine *e, double t)
{
    return engine_now(e) - (engine_wall() - t);
}

static int recover_one(void *arg, const store_job *sj)
{
    recover_ctx *rc = arg;
    cuzk_engine *e = rc->e;
    if (is_final((cuzk_job_state)sj->state) &&
        engine_wall() - sj->finished > e->cfg.result_ttl_s)
        return 0;   /* expired: journal_expire deletes it */
    job *j = calloc(1, sizeof *j);
    bool ok = j != NULL;
    if (ok) {
        memcpy(j->id, sj->id, sizeof j->id);
        snprintf(j->key_id, sizeof j->key_id, "%s", sj->key);
        j->prio = (cuzk_priority)sj->prio;
        j->n = sj->n;
        j->n_public = sj->n_public;
        j->paths = calloc(j->n, sizeof *j->paths);
        j->data = calloc(j->n, sizeof *j->data);
        j->len = calloc(j->n, sizeof *j->len);
        j->spool = calloc(j->n, sizeof *j->spool);
        j->pdone = calloc(j->n, sizeof *j->pdone);
        j->fds = malloc(j->n * sizeof *j->fds);
        for (size_t i = 0; j->fds && i < j->n; i++)
            j->fds[i] = -1;
        j->proofs = calloc(j->n, sizeof *j->proofs);
        j->publics = calloc((size_t)j->n * j->n_public + 1, sizeof *j->publics);
        ok = j->paths && j->data && j->len && j->spool && j->pdone && j->fds && j->proofs &&
             j->publics;
    }
    for (size_t i = 0; ok && j && i < j->n; i++)
        ok = (sj->spooled[i] ? (j->spool[i] = strdup(sj->src[i]))
                             : (j->paths[i] = strdup(sj->src[i]))) != NULL;
    if (!ok) {
        rc->err = cuzk_error_set(CUZK_ENOMEM, "recovery: out of memory");
        if (j) {
            j->state = CUZK_JOB_CANCELLED;
            j->inputs_freed = false;
            job_free(e, j);
        }
        return 1;
    }
    memcpy(j->proofs, sj->proofs, sizeof(cuzk_proof) * j->n);
    memcpy(j->publics, sj->publics, sizeof(cuzk_fr) * j->n * j->n_public);
    for (size_t i = 0; i < j->n; i++) {
        j->pdone[i] = sj->part_done[i];
        j->n_done += sj->part_done[i];
    }
    j->n_recorded = j->n_done;
    /* path witnesses of an unfinished job: opened again, as confined as at submission */
    char werr[sizeof j->error] = "";
    for (size_t i = 0; !is_final((cuzk_job_state)sj->state) && i < j->n && !werr[0]; i++)
        if (j->paths[i] && !j->pdone[i] && witness_open(e, j->paths[i], &j->fds[i]) != CUZK_OK)
            snprintf(werr, sizeof werr, "witness %zu after the restart: %.400s", i,
                     cuzk_error_detail());
    pthread_mutex_lock(&e->mu);
    j->submitted = engine_time_of(e, sj->submitted);
    j->seq = e->next_seq++;
    key_entry *k = key_find(e, j->key_id);
    if (is_final((cuzk_job_state)sj->state)) {
        j->state = (cuzk_job_state)sj->state;
        snprintf(j->error, sizeof j->error, "%s", sj->error);
        j->finished = engine_time_of(e, sj->finished);
        j->t.total_ms = (sj->finished - sj->submitted) * 1e3;
        j->inputs_freed = true;   /* none kept: a final job needs no witness */
        for (size_t i = 0; i < j->n; i++) {
            free(j->paths[i]);
            free(j->spool[i]);
        }
        free(j->paths), free(j->data), free(j->len), free(j->spool), free(j->fds), free(j->pdone);
        j->paths = NULL, j->data = NULL, j->len = NULL, j->spool = NULL, j->fds = NULL;
        j->pdone = NULL;
        if (j->state != CUZK_JOB_DONE) {
            free(j->proofs), free(j->publics);
            j->proofs = NULL, j->publics = NULL;
        }
        job_link(e, j);
        rc->kept++;
    } else {
        j->state = CUZK_JOB_QUEUED;
        /* not queued without its key: failed after the listing (its reason kept here) */
        if (werr[0])
            snprintf(j->error, sizeof j->error, "%s", werr), k = NULL;
        else if (!k)
            snprintf(j->error, sizeof j->error,
                     "key %.100s is not registered after the restart", j->key_id);
        else if (k->n_public != j->n_public)
            snprintf(j->error, sizeof j->error,
                     "key %.100s has another number of public inputs after the restart",
                     j->key_id), k = NULL;
        if (k)
            k->refs++;
        j->key = k;
        e->jobs_open++;
        job_link(e, j);
        rc->requeued++;
        LOG(e, CUZK_LOG_INFO, "event=job_recovered job=%s key=%s priority=%s partitions=%zu "
            "partitions_done=%zu", j->id, j->key_id, cuzk_priority_name(j->prio), j->n, j->n_done);
    }
    pthread_mutex_unlock(&e->mu);
    return 0;
}

/* Deletes spool files no unfinished job names (a crash between a spool write and its job's
 * commit, or between a job's end and the deletion of its files). Lock held. */
static void spool_sweep(cuzk_engine *e)
{
    int fd = dup(e->spool_fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    rewinddir(d);
    struct dirent *de;
    unsigned removed = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        bool used = false;
        for (job *j = e->jobs; j && !used; j = j->next)
            for (size_t i = 0; j->spool && i < j->n && !used; i++)
                used = j->spool[i] && !strcmp(j->spool[i], de->d_name);
        if (used) {
            struct stat st;
            if (fstatat(e->spool_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                e->spool_files++;
                e->spool_bytes += (uint64_t)st.st_size;
            }
        } else if (unlinkat(e->spool_fd, de->d_name, 0) == 0) {
            removed++;
        }
    }
    closedir(d);
    if (removed)
        LOG(e, CUZK_LOG_INFO, "event=spool_swept files=%u", removed);
}

cuzk_err cuzk_engine_recover(cuzk_engine *e, unsigned *requeued, unsigned *kept)
{
    if (requeued)
        *requeued = 0;
    if (kept)
        *kept = 0;
    if (!e->st)
        return CUZK_OK;
    if (e->cluster) {   /* the jobs are the farm's: the keys of its table are this one's */
        cluster_keys_sync(e);
        return CUZK_OK;
    }
    journal_expire(e);
    recover_ctx rc = {e, 0, 0, CUZK_OK};
    cuzk_err r = store_list(e->st, recover_one, &rc);
    if (r == CUZK_OK)
        r = rc.err;
    pthread_mutex_lock(&e->mu);
    /* jobs whose key is not there (or is another now) fail, in the journal too */
    for (job *j = e->jobs; j; j = j->next) {
        if (is_final(j->state))
            continue;
        if (!j->key) {
            char why[sizeof j->error];
            memcpy(why, j->error, sizeof why);
            job_finish(e, j, CUZK_JOB_FAILED, why);
        }
    }
    spool_sweep(e);
    pthread_cond_broadcast(&e->cv_load);
    pthread_mutex_unlock(&e->mu);
    LOG(e, r == CUZK_OK ? CUZK_LOG_INFO : CUZK_LOG_ERROR,
        "event=journal_recovered requeued=%u kept=%u%s%s%s", rc.requeued, rc.kept,
        r == CUZK_OK ? "" : " reason=\"", r == CUZK_OK ? "" : cuzk_error_detail(),
        r == CUZK_OK ? "" : "\"");
    if (requeued)
        *requeued = rc.requeued;
    if (kept)
        *kept = rc.kept;
    return r;
}
