/* SPDX-License-Identifier: Apache-2.0 */
/*
 * x86-64 MULX/ADX Montgomery multiplication for Fp (6 limbs) and Fr (4 limbs), and the
 * run-time choice of back end.
 *
 * Algorithm: CIOS (coarsely integrated operand scanning), fully unrolled. Round i adds
 * a*b[i] to the running sum t, then adds m*p with m = t[0]*n0 mod 2^64 (so the low word
 * becomes zero) and drops that word. Each of the two passes runs two carry chains at once:
 * the low halves of the mulx products go through adox (OF chain) into t[j], the high halves
 * through adcx (CF chain) into t[j+1].
 *
 * Both moduli leave the top bit of their top limb clear with room to spare (p < 2^382,
 * r < 2^255), so t stays below 2p and every intermediate sum t + a*b[i] + m*p fits in n+1
 * words: no (n+2)-th carry word is needed. One conditional subtraction of p ends the job.
 * Instead of shifting t down one word per round, the register holding t[0] (zero after the
 * reduction) becomes the next round's top word: the unrolled rounds rotate register names.
 *
 * The routines are written as top-level assembly (System V ABI, ELF); any other target
 * gets the portable code. Squaring calls the multiplication.
 */
#include <stdlib.h>
#include <string.h>

#include "cuzk/ff.h"
#include "ff/ff_internal.h"

int cuzk_ff_adx_enabled_ = 0;
static int ff_adx_available_ = 0;

#if defined(__x86_64__) && defined(__ELF__)
#define CUZK_FF_HAVE_ADX_ASM 1
#include <cpuid.h>

#if defined(__CET__)
#define ENDBR_ "endbr64\n\t"
#else
#define ENDBR_ ""
#endif

#define I_(s) s "\n\t"

/* ---- Fp, 6 limbs. a in %rsi, b in %rcx, zero in %rax, product halves in %r8:%r9. ---- */

/* T0..T6 = a * %rdx (t was empty). */
#define FP_MUL_FIRST(T0, T1, T2, T3, T4, T5, T6)                                      \
    I_("xorl %eax, %eax")                                                             \
    I_("mulxq 0(%rsi), " T0 ", " T1)                                                  \
    I_("mulxq 8(%rsi), %r8, " T2) I_("adcxq %r8, " T1)                                \
    I_("mulxq 16(%rsi), %r8, " T3) I_("adcxq %r8, " T2)                               \
    I_("mulxq 24(%rsi), %r8, " T4) I_("adcxq %r8, " T3)                               \
    I_("mulxq 32(%rsi), %r8, " T5) I_("adcxq %r8, " T4)                               \
    I_("mulxq 40(%rsi), %r8, " T6) I_("adcxq %r8, " T5) I_("adcxq %rax, " T6)

/* T0..T6 = T0..T5 + a * %rdx. */
#define FP_MUL_ACC(T0, T1, T2, T3, T4, T5, T6)                                        \
    I_("xorl %eax, %eax")                                                             \
    I_("mulxq 0(%rsi), %r8, %r9") I_("adoxq %r8, " T0) I_("adcxq %r9, " T1)           \
    I_("mulxq 8(%rsi), %r8, %r9") I_("adoxq %r8, " T1) I_("adcxq %r9, " T2)           \
    I_("mulxq 16(%rsi), %r8, %r9") I_("adoxq %r8, " T2) I_("adcxq %r9, " T3)          \
    I_("mulxq 24(%rsi), %r8, %r9") I_("adoxq %r8, " T3) I_("adcxq %r9, " T4)          \
    I_("mulxq 32(%rsi), %r8, %r9") I_("adoxq %r8, " T4) I_("adcxq %r9, " T5)          \
    I_("mulxq 40(%rsi), %r8, " T6) I_("adoxq %r8, " T5) I_("adcxq %rax, " T6)         \
    I_("adoxq %rax, " T6)

/* T0..T6 += m*p with m = T0*n0; afterwards T0 = 0 and the value sits in T1..T6. */
#define FP_REDUCE(T0, T1, T2, T3, T4, T5, T6)                                         \
    I_("movq " T0 ", %rdx")                                                           \
    I_("imulq cuzk_fp_n0_x86_(%rip), %rdx")                                           \
    I_("xorl %eax, %eax")                                                             \
    I_("mulxq cuzk_fp_p_x86_+0(%rip), %r8, %r9") I_("adoxq %r8, " T0) I_("adcxq %r9, " T1)  \
    I_("mulxq cuzk_fp_p_x86_+8(%rip), %r8, %r9") I_("adoxq %r8, " T1) I_("adcxq %r9, " T2)  \
    I_("mulxq cuzk_fp_p_x86_+16(%rip), %r8, %r9") I_("adoxq %r8, " T2) I_("adcxq %r9, " T3) \
    I_("mulxq cuzk_fp_p_x86_+24(%rip), %r8, %r9") I_("adoxq %r8, " T3) I_("adcxq %r9, " T4) \
    I_("mulxq cuzk_fp_p_x86_+32(%rip), %r8, %r9") I_("adoxq %r8, " T4) I_("adcxq %r9, " T5) \
    I_("mulxq cuzk_fp_p_x86_+40(%rip), %r8, %r9") I_("adoxq %r8, " T5) I_("adcxq %r9, " T6) \
    I_("adoxq %rax, " T6)

/* The seven accumulator registers, rotated one place per round. */
#define FP_R0 "%rbx"
#define FP_R1 "%rbp"
#define FP_R2 "%r10"
#define FP_R3 "%r11"
#define FP_R4 "%r12"
#define FP_R5 "%r13"
#define FP_R6 "%r14"
#define FP_ROT0 FP_R0, FP_R1, FP_R2, FP_R3, FP_R4, FP_R5, FP_R6
#define FP_ROT1 FP_R1, FP_R2, FP_R3, FP_R4, FP_R5, FP_R6, FP_R0
#define FP_ROT2 FP_R2, FP_R3, FP_R4, FP_R5, FP_R6, FP_R0, FP_R1
#define FP_ROT3 FP_R3, FP_R4, FP_R5, FP_R6, FP_R0, FP_R1, FP_R2
#define FP_ROT4 FP_R4, FP_R5, FP_R6, FP_R0, FP_R1, FP_R2, FP_R3
#define FP_ROT5 FP_R5, FP_R6, FP_R0, FP_R1, FP_R2, FP_R3, FP_R4
#define FP_ROUND(OFF, ...) \
    I_("movq " #OFF "(%rcx), %rdx") FP_MUL_ACC(__VA_ARGS__) FP_REDUCE(__VA_ARGS__)
#define FP_EXPAND_(m, ...) m(__VA_ARGS__)

/* After round 5 the value is in R6, R0, R1, R2, R3, R4 (least significant first).
 * Subtract p into rax, rcx, rdx, rsi, r8, r9; keep the difference unless it borrowed. */
#define FP_FINAL                                                                      \
    I_("movq " FP_R6 ", %rax") I_("subq cuzk_fp_p_x86_+0(%rip), %rax")               \
    I_("movq " FP_R0 ", %rcx") I_("sbbq cuzk_fp_p_x86_+8(%rip), %rcx")               \
    I_("movq " FP_R1 ", %rdx") I_("sbbq cuzk_fp_p_x86_+16(%rip), %rdx")              \
    I_("movq " FP_R2 ", %rsi") I_("sbbq cuzk_fp_p_x86_+24(%rip), %rsi")              \
    I_("movq " FP_R3 ", %r8") I_("sbbq cuzk_fp_p_x86_+32(%rip), %r8")                \
    I_("movq " FP_R4 ", %r9") I_("sbbq cuzk_fp_p_x86_+40(%rip), %r9")                \
    I_("cmovcq " FP_R6 ", %rax") I_("cmovcq " FP_R0 ", %rcx")                         \
    I_("cmovcq " FP_R1 ", %rdx") I_("cmovcq " FP_R2 ", %rsi")                         \
    I_("cmovcq " FP_R3 ", %r8") I_("cmovcq " FP_R4 ", %r9")                           \
    I_("movq %rax, 0(%rdi)") I_("movq %rcx, 8(%rdi)") I_("movq %rdx, 16(%rdi)")       \
    I_("movq %rsi, 24(%rdi)") I_("movq %r8, 32(%rdi)") I_("movq %r9, 40(%rdi)")

#define PUSH_(reg) I_("pushq " reg) I_(".cfi_adjust_cfa_offset 8") I_(".cfi_rel_offset " reg ", 0")
#define POP_(reg) I_("popq " reg) I_(".cfi_adjust_cfa_offset -8") I_(".cfi_restore " reg)

__asm__(
    /* BLS12-381 base prime p, little-endian limbs (tests/unit/test_ff.c checks these
     * routines against GMP, which would catch a wrong constant here). */
    I_(".pushsection .rodata")
    I_(".p2align 6")
    I_(".type cuzk_fp_p_x86_, @object")
    I_("cuzk_fp_p_x86_:")
    I_(".quad 0xb9feffffffffaaab, 0x1eabfffeb153ffff, 0x6730d2a0f6b0f624")
    I_(".quad 0x64774b84f38512bf, 0x4b1ba7b6434bacd7, 0x1a0111ea397fe69a")
    I_(".size cuzk_fp_p_x86_, 48")
    /* -p^(-1) mod 2^64 */
    I_(".type cuzk_fp_n0_x86_, @object")
    I_("cuzk_fp_n0_x86_:")
    I_(".quad 0x89f3fffcfffcfffd")
    I_(".size cuzk_fp_n0_x86_, 8")
    /* BLS12-381 scalar prime r, little-endian limbs */
    I_(".p2align 5")
    I_(".type cuzk_fr_p_x86_, @object")
    I_("cuzk_fr_p_x86_:")
    I_(".quad 0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48")
    I_(".size cuzk_fr_p_x86_, 32")
    /* -r^(-1) mod 2^64 */
    I_(".type cuzk_fr_n0_x86_, @object")
    I_("cuzk_fr_n0_x86_:")
    I_(".quad 0xfffffffeffffffff")
    I_(".size cuzk_fr_n0_x86_, 8")
    I_(".popsection")

    /* void cuzk_fp_mul_adx_(uint64_t r[6], const uint64_t a[6], const uint64_t b[6]) */
    I_(".pushsection .text")
    I_(".p2align 5")
    I_(".globl cuzk_fp_mul_adx_")
    I_(".hidden cuzk_fp_mul_adx_")
    I_(".type cuzk_fp_mul_adx_, @function")
    I_("cuzk_fp_mul_adx_:")
    I_(".cfi_startproc")
    ENDBR_
    PUSH_("%rbx") PUSH_("%rbp") PUSH_("%r12") PUSH_("%r13") PUSH_("%r14")
    I_("movq %rdx, %rcx")
    I_("movq 0(%rcx), %rdx")
    FP_EXPAND_(FP_MUL_FIRST, FP_ROT0)
    FP_EXPAND_(FP_REDUCE, FP_ROT0)
    FP_EXPAND_(FP_ROUND, 8, FP_ROT1)
    FP_EXPAND_(FP_ROUND, 16, FP_ROT2)
    FP_EXPAND_(FP_ROUND, 24, FP_ROT3)
    FP_EXPAND_(FP_ROUND, 32, FP_ROT4)
    FP_EXPAND_(FP_ROUND, 40, FP_ROT5)
    FP_FINAL
    POP_("%r14") POP_("%r13") POP_("%r12") POP_("%rbp") POP_("%rbx")
    I_("ret")
    I_(".cfi_endproc")
    I_(".size cuzk_fp_mul_adx_, .-cuzk_fp_mul_adx_")
    I_(".popsection"));

/* ---- Fp addition and subtraction (plain x86-64; no MULX/ADX needed). ----
 * Both keep their flag chains unbroken: the compiler's version of the subtraction
 * rebuilt the carry with setb after every masked limb, a serial chain three times as long.
 * Addition: s = a + b (no carry out: a, b < p < 2^381), then s - p in a copy; keep s if
 * that borrowed. Subtraction: d = a - b; if it borrowed, add p (masked limbs made first,
 * since AND clears the carry flag). Constant time: no branch depends on the values. */
#define FP_LOAD6(SRC) \
    I_("movq 0(" SRC "), %rax") I_("movq 8(" SRC "), %rcx") I_("movq 16(" SRC "), %r8") \
    I_("movq 24(" SRC "), %r9") I_("movq 32(" SRC "), %r10") I_("movq 40(" SRC "), %r11")
#define FP_STORE6(A, B, C, D, E, F) \
    I_("movq " A ", 0(%rdi)") I_("movq " B ", 8(%rdi)") I_("movq " C ", 16(%rdi)") \
    I_("movq " D ", 24(%rdi)") I_("movq " E ", 32(%rdi)") I_("movq " F ", 40(%rdi)")
#define FP_FUNC_BEGIN(name) \
    I_(".p2align 5") I_(".globl " name) I_(".hidden " name) I_(".type " name ", @function") \
    I_(name ":") I_(".cfi_startproc") ENDBR_
#define FP_FUNC_END(name) I_(".cfi_endproc") I_(".size " name ", .-" name)

__asm__(
    I_(".pushsection .text")
    /* void cuzk_fp_add_x86_(uint64_t r[6], const uint64_t a[6], const uint64_t b[6]) */
    FP_FUNC_BEGIN("cuzk_fp_add_x86_")
    PUSH_("%rbx") PUSH_("%rbp") PUSH_("%r12") PUSH_("%r13")
    FP_LOAD6("%rsi")
    I_("addq 0(%rdx), %rax") I_("adcq 8(%rdx), %rcx") I_("adcq 16(%rdx), %r8")
    I_("adcq 24(%rdx), %r9") I_("adcq 32(%rdx), %r10") I_("adcq 40(%rdx), %r11")
    I_("movq %rax, %rdx") I_("subq cuzk_fp_p_x86_+0(%rip), %rdx")
    I_("movq %rcx, %rsi") I_("sbbq cuzk_fp_p_x86_+8(%rip), %rsi")
    I_("movq %r8, %rbx") I_("sbbq cuzk_fp_p_x86_+16(%rip), %rbx")
    I_("movq %r9, %rbp") I_("sbbq cuzk_fp_p_x86_+24(%rip), %rbp")
    I_("movq %r10, %r12") I_("sbbq cuzk_fp_p_x86_+32(%rip), %r12")
    I_("movq %r11, %r13") I_("sbbq cuzk_fp_p_x86_+40(%rip), %r13")
    I_("cmovcq %rax, %rdx") I_("cmovcq %rcx, %rsi") I_("cmovcq %r8, %rbx")
    I_("cmovcq %r9, %rbp") I_("cmovcq %r10, %r12") I_("cmovcq %r11, %r13")
    FP_STORE6("%rdx", "%rsi", "%rbx", "%rbp", "%r12", "%r13")
    POP_("%r13") POP_("%r12") POP_("%rbp") POP_("%rbx")
    I_("ret")
    FP_FUNC_END("cuzk_fp_add_x86_")

    /* void cuzk_fp_sub_x86_(uint64_t r[6], const uint64_t a[6], const uint64_t b[6]) */
    FP_FUNC_BEGIN("cuzk_fp_sub_x86_")
    PUSH_("%rbx") PUSH_("%rbp") PUSH_("%r12") PUSH_("%r13")
    FP_LOAD6("%rsi")
    I_("subq 0(%rdx), %rax") I_("sbbq 8(%rdx), %rcx") I_("sbbq 16(%rdx), %r8")
    I_("sbbq 24(%rdx), %r9") I_("sbbq 32(%rdx), %r10") I_("sbbq 40(%rdx), %r11")
    I_("sbbq %rdx, %rdx")
    I_("movq %rdx, %rsi") I_("movq %rdx, %rbx") I_("movq %rdx, %rbp")
    I_("movq %rdx, %r12") I_("movq %rdx, %r13")
    I_("andq cuzk_fp_p_x86_+0(%rip), %rdx") I_("andq cuzk_fp_p_x86_+8(%rip), %rsi")
    I_("andq cuzk_fp_p_x86_+16(%rip), %rbx") I_("andq cuzk_fp_p_x86_+24(%rip), %rbp")
    I_("andq cuzk_fp_p_x86_+32(%rip), %r12") I_("andq cuzk_fp_p_x86_+40(%rip), %r13")
    I_("addq %rdx, %rax") I_("adcq %rsi, %rcx") I_("adcq %rbx, %r8")
    I_("adcq %rbp, %r9") I_("adcq %r12, %r10") I_("adcq %r13, %r11")
    FP_STORE6("%rax", "%rcx", "%r8", "%r9", "%r10", "%r11")
    POP_("%r13") POP_("%r12") POP_("%rbp") POP_("%rbx")
    I_("ret")
    FP_FUNC_END("cuzk_fp_sub_x86_")
    I_(".popsection"));

/* ---- Fp products without reduction, and the reduction alone (for Fp2's lazy product). ---- */
__asm__(
    I_(".pushsection .text")
    /* void cuzk_fp_mul_wide_adx_(uint64_t r[12], const uint64_t a[6], const uint64_t b[6]):
     * r = a*b, the whole 768-bit product; a and b any 384-bit values. Row i adds a*b[i] to
     * the running sum, whose lowest word is then final. */
    FP_FUNC_BEGIN("cuzk_fp_mul_wide_adx_")
    PUSH_("%rbx") PUSH_("%rbp") PUSH_("%r12") PUSH_("%r13") PUSH_("%r14")
    I_("movq %rdx, %rcx")
    I_("movq 0(%rcx), %rdx")
    FP_EXPAND_(FP_MUL_FIRST, FP_ROT0)
    I_("movq " FP_R0 ", 0(%rdi)")
    I_("movq 8(%rcx), %rdx") FP_EXPAND_(FP_MUL_ACC, FP_ROT1) I_("movq " FP_R1 ", 8(%rdi)")
    I_("movq 16(%rcx), %rdx") FP_EXPAND_(FP_MUL_ACC, FP_ROT2) I_("movq " FP_R2 ", 16(%rdi)")
    I_("movq 24(%rcx), %rdx") FP_EXPAND_(FP_MUL_ACC, FP_ROT3) I_("movq " FP_R3 ", 24(%rdi)")
    I_("movq 32(%rcx), %rdx") FP_EXPAND_(FP_MUL_ACC, FP_ROT4) I_("movq " FP_R4 ", 32(%rdi)")
    I_("movq 40(%rcx), %rdx") FP_EXPAND_(FP_MUL_ACC, FP_ROT5)
    I_("movq " FP_R5 ", 40(%rdi)") I_("movq " FP_R6 ", 48(%rdi)") I_("movq " FP_R0 ", 56(%rdi)")
    I_("movq " FP_R1 ", 64(%rdi)") I_("movq " FP_R2 ", 72(%rdi)") I_("movq " FP_R3 ", 80(%rdi)")
    I_("movq " FP_R4 ", 88(%rdi)")
    POP_("%r14") POP_("%r13") POP_("%r12") POP_("%rbp") POP_("%rbx")
    I_("ret")
    FP_FUNC_END("cuzk_fp_mul_wide_adx_")

    /* void cuzk_fp_redc_adx_(uint64_t r[6], const uint64_t t[12]): r = t / 2^384 mod p
     * for t < p*2^384. Six reduction rounds over the low half (its value u = (t_lo + M p) /
     * 2^384 is at most p), then the high half (below p) added, then one conditional
     * subtraction: the result is below p. */
    FP_FUNC_BEGIN("cuzk_fp_redc_adx_")
    PUSH_("%rbx") PUSH_("%rbp") PUSH_("%r12") PUSH_("%r13") PUSH_("%r14")
    I_("movq 0(%rsi), " FP_R0) I_("movq 8(%rsi), " FP_R1) I_("movq 16(%rsi), " FP_R2)
    I_("movq 24(%rsi), " FP_R3) I_("movq 32(%rsi), " FP_R4) I_("movq 40(%rsi), " FP_R5)
    I_("movl $0, %r14d")
    FP_EXPAND_(FP_REDUCE, FP_ROT0)
    FP_EXPAND_(FP_REDUCE, FP_ROT1)
    FP_EXPAND_(FP_REDUCE, FP_ROT2)
    FP_EXPAND_(FP_REDUCE, FP_ROT3)
    FP_EXPAND_(FP_REDUCE, FP_ROT4)
    FP_EXPAND_(FP_REDUCE, FP_ROT5)
    I_("addq 48(%rsi), " FP_R6) I_("adcq 56(%rsi), " FP_R0) I_("adcq 64(%rsi), " FP_R1)
    I_("adcq 72(%rsi), " FP_R2) I_("adcq 80(%rsi), " FP_R3) I_("adcq 88(%rsi), " FP_R4)
    FP_FINAL
    POP_("%r14") POP_("%r13") POP_("%r12") POP_("%rbp") POP_("%rbx")
    I_("ret")
    FP_FUNC_END("cuzk_fp_redc_adx_")
    I_(".popsection"));

/* ---- Fr, 4 limbs: same register conventions, five accumulators. ---- */

#define FR_MUL_FIRST(T0, T1, T2, T3, T4)                                              \
    I_("xorl %eax, %eax")                                                             \
    I_("mulxq 0(%rsi), " T0 ", " T1)                                                  \
    I_("mulxq 8(%rsi), %r8, " T2) I_("adcxq %r8, " T1)                                \
    I_("mulxq 16(%rsi), %r8, " T3) I_("adcxq %r8, " T2)                               \
    I_("mulxq 24(%rsi), %r8, " T4) I_("adcxq %r8, " T3) I_("adcxq %rax, " T4)

#define FR_MUL_ACC(T0, T1, T2, T3, T4)                                                \
    I_("xorl %eax, %eax")                                                             \
    I_("mulxq 0(%rsi), %r8, %r9") I_("adoxq %r8, " T0) I_("adcxq %r9, " T1)           \
    I_("mulxq 8(%rsi), %r8, %r9") I_("adoxq %r8, " T1) I_("adcxq %r9, " T2)           \
    I_("mulxq 16(%rsi), %r8, %r9") I_("adoxq %r8, " T2) I_("adcxq %r9, " T3)          \
    I_("mulxq 24(%rsi), %r8, " T4) I_("adoxq %r8, " T3) I_("adcxq %rax, " T4)         \
    I_("adoxq %rax, " T4)

#define FR_REDUCE(T0, T1, T2, T3, T4)                                                 \
    I_("movq " T0 ", %rdx")                                                           \
    I_("imulq cuzk_fr_n0_x86_(%rip), %rdx")                                           \
    I_("xorl %eax, %eax")                                                             \
    I_("mulxq cuzk_fr_p_x86_+0(%rip), %r8, %r9") I_("adoxq %r8, " T0) I_("adcxq %r9, " T1)  \
    I_("mulxq cuzk_fr_p_x86_+8(%rip), %r8, %r9") I_("adoxq %r8, " T1) I_("adcxq %r9, " T2)  \
    I_("mulxq cuzk_fr_p_x86_+16(%rip), %r8, %r9") I_("adoxq %r8, " T2) I_("adcxq %r9, " T3) \
    I_("mulxq cuzk_fr_p_x86_+24(%rip), %r8, %r9") I_("adoxq %r8, " T3) I_("adcxq %r9, " T4) \
    I_("adoxq %rax, " T4)

#define FR_R0 "%r10"
#define FR_R1 "%r11"
#define FR_R2 "%rbx"
#define FR_R3 "%r12"
#define FR_R4 "%r13"
#define FR_ROT0 FR_R0, FR_R1, FR_R2, FR_R3, FR_R4
#define FR_ROT1 FR_R1, FR_R2, FR_R3, FR_R4, FR_R0
#define FR_ROT2 FR_R2, FR_R3, FR_R4, FR_R0, FR_R1
#define FR_ROT3 FR_R3, FR_R4, FR_R0, FR_R1, FR_R2
#define FR_ROUND(OFF, ...) \
    I_("movq " #OFF "(%rcx), %rdx") FR_MUL_ACC(__VA_ARGS__) FR_REDUCE(__VA_ARGS__)
#define FR_EXPAND_(m, ...) m(__VA_ARGS__)

/* After round 3 the value is in R4, R0, R1, R2. */
#define FR_FINAL                                                                      \
    I_("movq " FR_R4 ", %rax") I_("subq cuzk_fr_p_x86_+0(%rip), %rax")               \
    I_("movq " FR_R0 ", %rcx") I_("sbbq cuzk_fr_p_x86_+8(%rip), %rcx")               \
    I_("movq " FR_R1 ", %rdx") I_("sbbq cuzk_fr_p_x86_+16(%rip), %rdx")              \
    I_("movq " FR_R2 ", %rsi") I_("sbbq cuzk_fr_p_x86_+24(%rip), %rsi")              \
    I_("cmovcq " FR_R4 ", %rax") I_("cmovcq " FR_R0 ", %rcx")                         \
    I_("cmovcq " FR_R1 ", %rdx") I_("cmovcq " FR_R2 ", %rsi")                         \
    I_("movq %rax, 0(%rdi)") I_("movq %rcx, 8(%rdi)") I_("movq %rdx, 16(%rdi)")       \
    I_("movq %rsi, 24(%rdi)")

__asm__(
    /* void cuzk_fr_mul_adx_(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) */
    I_(".pushsection .text")
    I_(".p2align 5")
    I_(".globl cuzk_fr_mul_adx_")
    I_(".hidden cuzk_fr_mul_adx_")
    I_(".type cuzk_fr_mul_adx_, @function")
    I_("cuzk_fr_mul_adx_:")
    I_(".cfi_startproc")
    ENDBR_
    PUSH_("%rbx") PUSH_("%r12") PUSH_("%r13")
    I_("movq %rdx, %rcx")
    I_("movq 0(%rcx), %rdx")
    FR_EXPAND_(FR_MUL_FIRST, FR_ROT0)
    FR_EXPAND_(FR_REDUCE, FR_ROT0)
    FR_EXPAND_(FR_ROUND, 8, FR_ROT1)
    FR_EXPAND_(FR_ROUND, 16, FR_ROT2)
    FR_EXPAND_(FR_ROUND, 24, FR_ROT3)
    FR_FINAL
    POP_("%r13") POP_("%r12") POP_("%rbx")
    I_("ret")
    I_(".cfi_endproc")
    I_(".size cuzk_fr_mul_adx_, .-cuzk_fr_mul_adx_")
    I_(".popsection"));

void cuzk_fp_sqr_adx_(uint64_t r[6], const uint64_t a[6]) { cuzk_fp_mul_adx_(r, a, a); }
void cuzk_fr_sqr_adx_(uint64_t r[4], const uint64_t a[4]) { cuzk_fr_mul_adx_(r, a, a); }

/* CPUID leaf 7, subleaf 0, EBX: bit 8 BMI2 (mulx), bit 19 ADX (adcx/adox). */
static int ff_cpu_has_adx(void)
{
    unsigned eax, ebx, ecx, edx;
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    (void)eax;
    (void)ecx;
    (void)edx;
    return (ebx & (1u << 8)) && (ebx & (1u << 19));
}

#else /* not x86-64 ELF: the fast path is the portable code */
#define CUZK_FF_HAVE_ADX_ASM 0

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
void cuzk_fp_mul_wide_adx_(uint64_t r[12], const uint64_t a[6], const uint64_t b[6])
{
    (void)r, (void)a, (void)b;
    abort(); /* never called: the ADX back end cannot be chosen here */
}
void cuzk_fp_redc_adx_(uint64_t r[6], const uint64_t t[12])
{
    (void)r, (void)t;
    abort();
}
static int ff_cpu_has_adx(void) { return 0; }
#endif

/* Start-up: MULX/ADX when the CPU has it (cuzk_ff_set_impl changes it later). */
__attribute__((constructor)) static void ff_select_impl(void)
{
    ff_adx_available_ = ff_cpu_has_adx();
    cuzk_ff_adx_enabled_ = ff_adx_available_;
}

bool cuzk_ff_adx_available(void) { return ff_adx_available_ != 0; }

cuzk_ff_impl cuzk_ff_get_impl(void) { return cuzk_ff_adx_enabled_ ? CUZK_FF_ADX : CUZK_FF_PORTABLE; }

cuzk_err cuzk_ff_set_impl(cuzk_ff_impl impl)
{
    switch (impl) {
    case CUZK_FF_PORTABLE:
        cuzk_ff_adx_enabled_ = 0;
        return CUZK_OK;
    case CUZK_FF_ADX:
        if (!ff_adx_available_)
            return cuzk_error_set(CUZK_EUNSUPPORTED, "ff: this CPU lacks BMI2/ADX (mulx, adcx, adox)");
        cuzk_ff_adx_enabled_ = 1;
        return CUZK_OK;
    }
    return cuzk_error_set(CUZK_EINVAL, "ff: unknown back end %d", (int)impl);
}

const char *cuzk_ff_impl_name(cuzk_ff_impl impl)
{
    return impl == CUZK_FF_ADX ? "adx" : impl == CUZK_FF_PORTABLE ? "portable" : "unknown";
}

cuzk_err cuzk_ff_impl_parse(cuzk_ff_impl *out, const char *name)
{
    if (name && !strcmp(name, "portable"))
        *out = CUZK_FF_PORTABLE;
    else if (name && !strcmp(name, "adx"))
        *out = CUZK_FF_ADX;
    else
        return cuzk_error_set(CUZK_EINVAL, "ff: '%s' is not a back end (portable or adx)",
                              name ? name : "(null)");
    return CUZK_OK;
}
