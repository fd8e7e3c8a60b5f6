/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File helpers for the tests (header-only): the paths of the fixtures (the circuits under
 * tests/data), a fresh temporary directory and its removal, and whole-file reads and writes
 * for the tests that build corrupt copies of fixtures. What cannot do its job exits with
 * status 2 (the harness's "could not run"), naming the file.
 */
#ifndef CUZK_TEST_FILES_H
#define CUZK_TEST_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static inline void test_path_fits_(int len, size_t n, const char *what)
{
    if (len < 0 || (size_t)len >= n) {
        fprintf(stderr, "the path of %s is longer than %zu bytes\n", what, n);
        exit(2);
    }
}

/* The path of REL under the tests/data directory in buf (n bytes); returns buf. The
 * directory: $CUZK_TEST_DATA (CTest sets it for the unit, GPU and interop tests), else
 * $CUZK_SRC/tests/data (the daemon tests get the source tree), else tests/data (a test run
 * by hand from the source tree). No state: threads may call it at once. */
static inline char *test_data_path(char *buf, size_t n, const char *rel)
{
    const char *d = getenv("CUZK_TEST_DATA"), *src = getenv("CUZK_SRC");
    int len = d     ? snprintf(buf, n, "%s/%s", d, rel)
              : src ? snprintf(buf, n, "%s/tests/data/%s", src, rel)
                    : snprintf(buf, n, "tests/data/%s", rel);
    test_path_fits_(len, n, rel);
    return buf;
}

/* The path of FILE of the fixture circuit CIRCUIT (tests/data/circuits/CIRCUIT/FILE) in
 * buf (n bytes); returns buf. */
static inline char *test_fixture_path(char *buf, size_t n, const char *circuit, const char *file)
{
    char rel[512];
    test_path_fits_(snprintf(rel, sizeof rel, "circuits/%s/%s", circuit, file), sizeof rel, file);
    return test_data_path(buf, n, rel);
}

/* The same in new memory (freed with free). */
static inline char *test_fixture_dup(const char *circuit, const char *file)
{
    char buf[2048];
    test_fixture_path(buf, sizeof buf, circuit, file);
    char *p = strdup(buf);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* Makes a new directory /tmp/PREFIX_XXXXXX (mkdtemp) and writes its path into buf (n
 * bytes). */
static inline void test_tmpdir_make(char *buf, size_t n, const char *prefix)
{
    snprintf(buf, n, "/tmp/%s_XXXXXX", prefix);
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        exit(2);
    }
}

/* Removes the directory dir and everything in it; says so on stderr when it cannot. */
static inline void test_dir_remove(const char *dir)
{
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* The file's bytes (one 0 byte appended, not counted) and their count in *n; NULL when it
 * cannot be read (a test that expects the file then fails a check rather than exiting). */
static inline uint8_t *read_all_or_null(const char *path, size_t *n)
{
    *n = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (b && fread(b, 1, (size_t)len, fp) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    if (!b)
        return NULL;
    b[len] = 0;
    *n = (size_t)len;
    return b;
}

/* The same, exiting with status 2 naming the file when it cannot be read. */
static inline uint8_t *read_all(const char *path, size_t *n)
{
    uint8_t *b = read_all_or_null(path, n);
    if (!b) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    return b;
}

static inline void write_all(const char *path, const void *b, size_t n)
{
    unlink(path); /* rewriting an existing file in place makes ext4 flush it: slow */
    FILE *fp = fopen(path, "wb");
    if (!fp || (n && fwrite(b, 1, n, fp) != n) || fclose(fp) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
}

#endif
