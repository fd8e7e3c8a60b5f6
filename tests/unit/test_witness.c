/* SPDX-License-Identifier: Apache-2.0 */
/* Witness paths confined beneath the allowed directories (src/engine/witness.c), with
 * openat2 and with the component walk that stands in for it on older kernels: regular files
 * beneath open; a link anywhere on the way, a ".." leaving the directory, a sibling whose
 * name merely starts with the directory's, and anything outside are refused as such; a FIFO
 * is refused without waiting for a writer; no directory listed means no path, unless the
 * caller asks for any path. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "test.h"
#include "test_files.h"

static char dir[256];

static void touch(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs("x", f);
        fclose(f);
    }
}

static void sub(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    mkdir(p, 0700);
}

static void link_(const char *target, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    if (symlink(target, p) != 0)
        perror(p);
}

/* witness_open of dir/rel: its error code (fd closed) */
static cuzk_err try_open(const cuzk_engine *e, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    int fd = -1;
    cuzk_err r = witness_open(e, p, &fd);
    if (r == CUZK_OK) {
        struct stat st;
        CHECK(fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode));
        close(fd);
    } else {
        CHECK(fd == -1);
    }
    cuzk_error_clear();
    return r;
}

static void check_confined(bool openat2)
{
    witness_use_openat2 = openat2;
    cuzk_engine *e = calloc(1, sizeof *e);
    char allow[300];
    snprintf(allow, sizeof allow, "%s/A", dir);
    const char *dirs[1] = {allow};
    e->cfg.allow_dirs = dirs;
    e->cfg.n_allow_dirs = 1;
    CHECK(witness_dirs_open(e) == CUZK_OK);
    snprintf(test_ctx, sizeof test_ctx, "%s", openat2 ? "openat2" : "walk");
    CHECK(try_open(e, "A/w") == CUZK_OK);
    CHECK(try_open(e, "A/d/w2") == CUZK_OK);
    CHECK(try_open(e, "A/./d//w2") == CUZK_OK);
    CHECK(try_open(e, "A/lnk") == CUZK_EUNSUPPORTED);       /* a link to a file inside */
    CHECK(try_open(e, "A/dl/w2") == CUZK_EUNSUPPORTED);     /* through a linked directory */
    CHECK(try_open(e, "A/esc") == CUZK_EUNSUPPORTED);       /* a link out */
    CHECK(try_open(e, "A/../O/x") == CUZK_EUNSUPPORTED);    /* ".." out */
    CHECK(try_open(e, "A/d/../../A/w") == CUZK_EUNSUPPORTED);
    CHECK(try_open(e, "O/x") == CUZK_EUNSUPPORTED);         /* outside */
    CHECK(try_open(e, "A2/w") == CUZK_EUNSUPPORTED);        /* a sibling named A2 */
    CHECK(try_open(e, "A") == CUZK_EUNSUPPORTED);           /* the directory itself */
    CHECK(try_open(e, "A/d") == CUZK_EFORMAT);              /* a directory */
    CHECK(try_open(e, "A/fifo") == CUZK_EFORMAT);           /* opened without blocking */
    CHECK(try_open(e, "A/missing") == CUZK_EIO);
    witness_dirs_close(e);

    /* none listed: refused, unless any path is asked for */
    e->cfg.allow_dirs = NULL;
    e->cfg.n_allow_dirs = 0;
    CHECK(witness_dirs_open(e) == CUZK_OK);
    CHECK(try_open(e, "O/x") == CUZK_EUNSUPPORTED);
    e->cfg.witness_any_path = true;
    CHECK(try_open(e, "O/x") == CUZK_OK);
    CHECK(try_open(e, "A/fifo") == CUZK_EFORMAT);
    free(e);
    test_ctx[0] = 0;
}

int main(void)
{
    test_init("test_witness");
    test_tmpdir_make(dir, sizeof dir, "test_witness");
    sub("A");
    sub("A/d");
    sub("A2");
    sub("O");
    touch("A/w");
    touch("A/d/w2");
    touch("A2/w");
    touch("O/x");
    link_("w", "A/lnk");
    link_("d", "A/dl");
    link_("../O/x", "A/esc");
    char p[512];
    snprintf(p, sizeof p, "%s/A/fifo", dir);
    CHECK(mkfifo(p, 0600) == 0);
    check_confined(true);
    check_confined(false);
    test_dir_remove(dir);
    return test_finish();
}
