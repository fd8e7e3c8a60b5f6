/* Multiplication back-end selection. The MULX/ADX routines are provided below. */
#include "cuzk/ff.h"
#include "ff/ff_internal.h"

int cuzk_ff_adx_enabled_ = 0;

void cuzk_fp_mul_adx_(uint64_t r[6], const uint64_t a[6], const uint64_t b[6])
{
    cuzk_fp_mul_portable((cuzk_fp *)r, (const cuzk_fp *)a, (const cuzk_fp *)b);
}
void cuzk_fp_sqr_adx_(uint64_t r[6], const uint64_t a[6])
{
    cuzk_fp_sqr_portable((cuzk_fp *)r, (const cuzk_fp *)a);
}
void cuzk_fr_mul_adx_(uint64_t r[4], const uint64_t a[4], const uint64_t b[4])
{
    cuzk_fr_mul_portable((cuzk_fr *)r, (const cuzk_fr *)a, (const cuzk_fr *)b);
}
void cuzk_fr_sqr_adx_(uint64_t r[4], const uint64_t a[4])
{
    cuzk_fr_sqr_portable((cuzk_fr *)r, (const cuzk_fr *)a);
}

bool cuzk_ff_adx_available(void) { return false; }
cuzk_ff_impl cuzk_ff_get_impl(void) { return cuzk_ff_adx_enabled_ ? CUZK_FF_ADX : CUZK_FF_PORTABLE; }
cuzk_err cuzk_ff_set_impl(cuzk_ff_impl impl)
{
    if (impl == CUZK_FF_PORTABLE) {
        cuzk_ff_adx_enabled_ = 0;
        return CUZK_OK;
    }
    return CUZK_EUNSUPPORTED;
}
