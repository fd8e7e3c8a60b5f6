/* SPDX-License-Identifier: Apache-2.0 */
/* The job journal's SQLite backend (src/store): the cases every backend passes
 * (store_cases.h: put, list, finish, expire, reopen), and a journal file that is torn,
 * overwritten or not one refused with an error naming it. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store_cases.h"
#include "test.h"

static char dir[256];

static void write_bytes(const char *path, const void *p, size_t n, bool truncate)
{
    int fd = open(path, O_WRONLY | O_CREAT | (truncate ? O_TRUNC : 0), 0600);
    if (fd < 0 || write(fd, p, n) != (ssize_t)n)
        perror(path);
    if (fd >= 0)
        close(fd);
}

static cuzk_err open_sqlite(store **s)
{
    return store_sqlite_open(s, dir);
}

/* A journal file damaged in the ways a crash or an operator can: each is refused with an
 * error naming the file, never a crash. */
static void test_damaged(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/journal.db", dir);
    store *s = NULL;
    unlink(path);
    /* not a database at all */
    write_bytes(path, "this is not an SQLite database, just some text\n", 47, true);
    cuzk_err r = store_sqlite_open(&s, dir);
    CHECK(r != CUZK_OK && s == NULL && strstr(cuzk_error_detail(), "journal.db"));
    cuzk_error_clear();

    /* a real journal, its pages overwritten in the middle (torn writes) */
    unlink(path);
    CHECK_OK(store_sqlite_open(&s, dir));
    if (s) {
        char *src[1] = {"/w/x.wtns"};
        bool sp[1] = {false};
        for (int i = 0; i < 200; i++) {
            char id[40];
            snprintf(id, sizeof id, "%032x", i + 1);
            store_job j;
            job_make(&j, src, sp, id, 1, 1.0 + i);
            CHECK_OK(store_put_job(s, &j));
        }
        store_close(s);
        s = NULL;
    }
    /* the WAL is checkpointed into the file at close: damage the file's later pages */
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size > 8192);
    int fd = open(path, O_WRONLY);
    char junk[4096];
    memset(junk, 0xEE, sizeof junk);
    CHECK(fd >= 0 && pwrite(fd, junk, sizeof junk, 4096) == (ssize_t)sizeof junk);
    if (fd >= 0)
        close(fd);
    r = store_sqlite_open(&s, dir);
    bool refused = r != CUZK_OK;
    if (!refused && s) {   /* a damage quick_check missed must still not crash a listing */
        listing l;
        memset(&l, 0, sizeof l);
        refused = store_list(s, collect, &l) != CUZK_OK;
        store_close(s);
        s = NULL;
    }
    CHECK(refused && strstr(cuzk_error_detail(), "journal.db"));
    cuzk_error_clear();

    /* the file cut short (a torn header) */
    CHECK(truncate(path, 50) == 0);
    r = store_sqlite_open(&s, dir);
    CHECK(r != CUZK_OK && s == NULL && strstr(cuzk_error_detail(), "journal.db"));
    cuzk_error_clear();

    /* a link in its place is not followed */
    unlink(path);
    CHECK(symlink("/etc/passwd", path) == 0);
    r = store_sqlite_open(&s, dir);
    CHECK(r != CUZK_OK && s == NULL);
    cuzk_error_clear();
    unlink(path);
}

int main(void)
{
    test_init("test_store");
    snprintf(dir, sizeof dir, "/tmp/cuzk-test-store-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_roundtrip(open_sqlite);
    test_claims(open_sqlite);
    test_damaged();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return test_finish();
}
