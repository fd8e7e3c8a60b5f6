/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: shared by the .params reader/writer (params.c) and its cache (params_cache.c). */
#ifndef CUZK_IO_PARAMS_INTERNAL_H
#define CUZK_IO_PARAMS_INTERNAL_H

#include <sys/stat.h>

#include "cuzk/params.h"

#define PARAMS_NVEC 6   /* ic, h, l, a, b_g1, b_g2: the vectors in file order */
extern const char *const params_vec_names[PARAMS_NVEC];

typedef struct {
    uint32_t n;
    void *pts;
    bool g2;   /* only b_g2 */
} params_vec;

void params_vectors(params_vec v[PARAMS_NVEC], const cuzk_params *p);
void params_set_vector(cuzk_params *p, int i, uint32_t n, void *pts);
cuzk_params *params_new(const char *path);   /* zeroed, path copied; NULL when out of memory */

typedef struct {
    uint8_t *map;
    uint64_t len;
    struct stat st;
    int guard;   /* the mapping's slot in io's truncation guard, or -1 */
} params_mapping;

cuzk_err params_map(params_mapping *mp, const char *path) CUZK_WUR;
void params_unmap(params_mapping *mp);
/* CUZK_EIO naming path when a read of the mapping found the file truncated (io's guard). */
cuzk_err params_mapping_check(const params_mapping *mp, const char *path) CUZK_WUR;

/* Decodes a whole .params image (m, len) into a new object; flags as cuzk_params_load,
 * gpu_min as cuzk_gpu_opts.params_check_min. */
cuzk_err params_decode(cuzk_params **out, const char *path, const uint8_t *m, uint64_t len,
                       unsigned flags, size_t gpu_min) CUZK_WUR;

/* The cache records whether its source was decoded with the subgroup checks; a load that
 * wants them (need_checked) refuses a cache made without. cache_dir: the cache there,
 * authenticated (NULL: beside the key, trusted). */
cuzk_err params_cache_write_flagged(const cuzk_params *p, const char *params_path, bool checked,
                                    const char *cache_dir) CUZK_WUR;
cuzk_err params_cache_load_checked(cuzk_params **out, const char *params_path, bool need_checked,
                                   const char *cache_dir) CUZK_WUR;

#endif
