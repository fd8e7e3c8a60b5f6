/*
 * Whole-file helpers for the tests that build corrupt copies of fixtures: read a file into
 * memory, write one out. Either exits with status 2 (the harness's "could not run") when the
 * file system fails, naming the file.
 */
#ifndef CUZK_TEST_FILES_H
#define CUZK_TEST_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
