/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The programs' output files. Each is written under a temporary name in its own directory
 * (created with O_CREAT | O_EXCL, mode 0666 less the umask), flushed to disk (fsync) and
 * renamed onto its name only when every output of the command is complete: an existing file
 * of that name is replaced whole or not at all, a symbolic link of that name is replaced, not
 * written through, and a command that fails leaves none of its outputs behind.
 *
 * Before anything is computed, tool_out_check refuses an output that is the same file as an
 * input (same device and inode: the name itself, a hard link, a symbolic link to it) or as
 * another output (same inode, or the same name in the same directory), and an output that
 * cannot be written: its directory missing, not a directory or not writable, or the output
 * itself an existing directory.
 */
#ifndef CUZK_TOOLS_OUTFILE_H
#define CUZK_TOOLS_OUTFILE_H

#include <stddef.h>

#include "cuzk/error.h"

typedef struct {
    const char *path; /* the name the file gets */
    char *tmp;        /* the temporary name a writer fills, or NULL (not open, or committed) */
} tool_out;

/* Refuses an output that cannot be written, or naming an input or another output: prints
 * "PROG: why" on stderr, naming the paths, and returns 2 (the programs' status for bad
 * usage); else 0. Inputs that do not exist are skipped (their reader names them); NULL
 * entries are skipped. */
int tool_out_check(const char *prog, const char *const *in, size_t n_in, const char *const *out,
                   size_t n_out);

/* Creates an empty temporary file beside path for a writer to fill by name (o->tmp). The
 * detail names path and the reason (CUZK_EIO, CUZK_ENOMEM). */
cuzk_err tool_out_open(tool_out *o, const char *path) CUZK_WUR;

/* Flushes each of the n temporaries to disk and renames it onto its name, then flushes the
 * directories. When a step fails, the temporaries left are removed, and so are the outputs
 * already renamed: no partial set of outputs remains. The detail names the file. */
cuzk_err tool_out_commit(tool_out *o, size_t n) CUZK_WUR;

/* Removes the temporaries of the n outputs (after a failed writer); their names are untouched. */
void tool_out_discard(tool_out *o, size_t n);

/* e, the result of a writer that filled o->tmp; when it failed, the detail names o->path
 * where it named o->tmp. */
cuzk_err tool_out_status(const tool_out *o, cuzk_err e);

/* Opens n outputs (paths[i]) into o[0..n-1]; on failure none stays open. */
cuzk_err tool_out_open_all(tool_out *o, const char *const *paths, size_t n) CUZK_WUR;

#endif
