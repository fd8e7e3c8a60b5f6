/* Subgroup checks on the device (cuzk_gpu_subgroup_check) against the CPU's: points of G1
 * and G2 (made by the GPU fixed-base kernels from random scalars, checked on the CPU too),
 * on-curve points outside the subgroup at chosen positions (the first one must be found,
 * also across the streaming chunks), infinity, and a random mix compared point by point
 * with cuzk_g1/g2_affine_in_subgroup. The .params reader's use of it is covered by
 * test_gpu_groth16 (cuzk_gpu_opts.params_check_min 1 against the CPU's checks). */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_device.h"
#include "test_points.h"

#include "cuzk/gpu.h"

#define CHUNK ((size_t)1 << 21) /* the kernel's streaming chunk (src/gpu/subgroup.cu) */

/* n subgroup points: `distinct` made from random scalars, repeated to fill n */
static void *subgroup_points(int group, size_t n, size_t distinct)
{
    size_t ps = group == 1 ? sizeof(cuzk_g1_affine) : sizeof(cuzk_g2_affine);
    uint8_t *pts = malloc(n * ps);
    cuzk_fr *s = malloc(distinct * sizeof *s);
    if (!pts || !s) {
        free(pts);
        free(s);
        return NULL;
    }
    test_rand_frs(s, distinct);
    cuzk_err e = group == 1 ? cuzk_gpu_fixed_base_g1(0, (cuzk_g1_affine *)pts, s, distinct)
                            : cuzk_gpu_fixed_base_g2(0, (cuzk_g2_affine *)pts, s, distinct);
    CHECK_EQ_ERR(e, CUZK_OK);
    free(s);
    for (size_t i = distinct; i < n; i++)
        memcpy(pts + i * ps, pts + (i % distinct) * ps, ps);
    /* the CPU agrees that they are in the subgroup (a few of them) */
    for (size_t i = 0; i < distinct && i < 8; i++)
        CHECK(group == 1 ? cuzk_g1_affine_in_subgroup((cuzk_g1_affine *)pts + i)
                         : cuzk_g2_affine_in_subgroup((cuzk_g2_affine *)pts + i));
    return pts;
}

static size_t gpu_first_bad(const void *pts, size_t n, int group)
{
    size_t bad = (size_t)-1;
    CHECK_EQ_ERR(cuzk_gpu_subgroup_check(pts, n, group, 0, &bad), CUZK_OK);
    return bad;
}

static void positions(int group, size_t n)
{
    void *pts = subgroup_points(group, n, n < 512 ? n : 512);
    if (!pts)
        return;
    CHECK(gpu_first_bad(pts, n, group) == n);
    cuzk_g1_affine o1;
    cuzk_g2_affine o2;
    test_g1_off_subgroup(&o1);
    test_g2_off_subgroup(&o2);
    size_t ps = group == 1 ? sizeof o1 : sizeof o2;
    const void *o = group == 1 ? (const void *)&o1 : (const void *)&o2;
    /* off-subgroup points at a, b (a < b): the first is reported */
    size_t at[][2] = {{0, n - 1}, {n - 1, n - 1}, {n / 2, n - 1}, {n > CHUNK + 3 ? CHUNK + 3 : n / 3, n - 1}};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        uint8_t *p = pts;
        uint8_t save[2][sizeof(cuzk_g2_affine)];
        memcpy(save[0], p + at[k][0] * ps, ps);
        memcpy(save[1], p + at[k][1] * ps, ps);
        memcpy(p + at[k][1] * ps, o, ps);
        memcpy(p + at[k][0] * ps, o, ps);
        CHECK(gpu_first_bad(pts, n, group) == at[k][0]);
        memcpy(p + at[k][1] * ps, save[1], ps);
        memcpy(p + at[k][0] * ps, save[0], ps);
    }
    /* infinity (0, 0) passes, as on the CPU */
    memset(pts, 0, ps);
    CHECK(gpu_first_bad(pts, n, group) == n);
    free(pts);
    printf("G%d, %zu points: first off-subgroup point found\n", group, n);
}

/* a random mix, point by point against the CPU (each point checked alone) */
static void mix(int group, size_t n)
{
    size_t ps = group == 1 ? sizeof(cuzk_g1_affine) : sizeof(cuzk_g2_affine);
    uint8_t *pts = subgroup_points(group, n, n);
    if (!pts)
        return;
    bool *out = calloc(n, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (test_rand64() & 1) {
            out[i] = true;
            if (group == 1)
                test_g1_off_subgroup((cuzk_g1_affine *)(pts + i * ps));
            else
                test_g2_off_subgroup((cuzk_g2_affine *)(pts + i * ps));
        }
    }
    size_t agree = 0;
    for (size_t i = 0; i < n; i++) {
        bool cpu_in = group == 1 ? cuzk_g1_affine_in_subgroup((cuzk_g1_affine *)(pts + i * ps))
                                 : cuzk_g2_affine_in_subgroup((cuzk_g2_affine *)(pts + i * ps));
        size_t b = gpu_first_bad(pts + i * ps, 1, group);
        CHECK(cpu_in == !out[i]);
        agree += (b == 0) == !cpu_in;
    }
    CHECK(agree == n);
    free(out);
    free(pts);
    printf("G%d, %zu mixed points: device == CPU for each\n", group, n);
}

int main(void)
{
    test_init("test_gpu_subgroup");
    test_gpu_require();
    size_t bad = 7;
    CHECK_EQ_ERR(cuzk_gpu_subgroup_check(NULL, 0, 1, 0, &bad), CUZK_OK);
    CHECK(bad == 0);
    CHECK_EQ_ERR(cuzk_gpu_subgroup_check(NULL, 1, 1, 0, &bad), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_gpu_subgroup_check(&bad, 1, 3, 0, &bad), CUZK_EINVAL);
    size_t sizes[] = {1, 2, 3, 1000, CHUNK - 1, CHUNK, 2 * CHUNK + 5};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        positions(1, sizes[i]);
        positions(2, sizes[i] > CHUNK ? CHUNK + 7 : sizes[i]);
    }
    mix(1, 256);
    mix(2, 128);
    return test_finish();
}
