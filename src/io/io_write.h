/* SPDX-License-Identifier: Apache-2.0 */
/* Writers' internals: the byte layout of .r1cs v1 and .wtns v2 prefixes, for streaming
 * writers (the generator) that fill the big sections themselves with pwrite. */
#ifndef CUZK_IO_WRITE_H
#define CUZK_IO_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/error.h"

#define IO_W_FILE_HEADER 12     /* magic, u32 version, u32 section count */
#define IO_W_SEC_HEADER 12      /* u32 id, u64 size */
#define IO_W_R1CS_SEC1 64       /* u32 n8, 32-byte prime, 5 x u32 + 1 x u64 counts */
#define IO_W_WTNS_SEC1 40       /* u32 n8, 32-byte prime, u32 n */
/* Bytes before the first constraint of a .r1cs: file header, section 1, section 2 header. */
#define IO_W_R1CS_PREFIX (IO_W_FILE_HEADER + IO_W_SEC_HEADER + IO_W_R1CS_SEC1 + IO_W_SEC_HEADER)
/* Bytes before the first value of a .wtns: file header, section 1, section 2 header. */
#define IO_W_WTNS_PREFIX (IO_W_FILE_HEADER + IO_W_SEC_HEADER + IO_W_WTNS_SEC1 + IO_W_SEC_HEADER)
#define IO_W_TERM_BYTES 36      /* u32 wire + 32-byte coefficient */

typedef struct {
    uint32_t n_wires, n_pub_out, n_pub_in, n_prv_in;
    uint64_t n_labels;
    uint32_t n_constraints;
} io_r1cs_counts;

/* .r1cs prefix for a constraints section of sec2_size bytes; n_sections is 3 when a wire
 * label section (id 3, n_wires * 8 bytes) follows section 2, else 2. */
void io_r1cs_prefix(uint8_t out[IO_W_R1CS_PREFIX], const io_r1cs_counts *c, uint64_t sec2_size,
                    uint32_t n_sections);
/* Header of section 3 (wire labels) for n_wires labels. */
void io_r1cs_sec3_header(uint8_t out[IO_W_SEC_HEADER], uint32_t n_wires);
/* .wtns prefix for n values. */
void io_wtns_prefix(uint8_t out[IO_W_WTNS_PREFIX], uint32_t n);

/* Writes all len bytes at offset off (pwrite, retried on short writes and EINTR). Returns
 * 0 or an errno value. */
int io_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);

#endif
