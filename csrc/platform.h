/* The build's platform: which ISA kernels this build has (GEMMKIT_X86 / GEMMKIT_ARM), compiler spellings
 * (restrict, alignment, forced inlining, prefetch, static asserts) and GK_MIN / GK_MAX. Every C file sees it. */
#ifndef GEMMKIT_PLATFORM_H
#define GEMMKIT_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* x86-64 kernels exist only where setup.py compiled them (it defines GEMMKIT_X86_KERNELS); a
 * 32-bit x86 or universal2 slice without them builds the portable path alone. */
#if defined(GEMMKIT_X86_KERNELS) && (defined(__x86_64__) || defined(_M_X64))
#define GEMMKIT_X86 1
#else
#define GEMMKIT_X86 0
#endif
/* AArch64 kernels (NEON, dot product) exist only where setup.py compiled them (GEMMKIT_ARM_KERNELS). */
#if defined(GEMMKIT_ARM_KERNELS) && (defined(__aarch64__) || defined(_M_ARM64))
#define GEMMKIT_ARM 1
#else
#define GEMMKIT_ARM 0
#endif

#if defined(_MSC_VER)
#define GK_RESTRICT __restrict
#define GK_ALIGN64 __declspec(align(64))
#else
#define GK_RESTRICT __restrict__
#define GK_ALIGN64 __attribute__((aligned(64)))
#endif
/* Inlined at every call: kernel helpers whose loops unroll into registers only where their arguments are
 * constants. */
#if defined(_MSC_VER)
#define GK_FORCEINLINE __forceinline
#else
#define GK_FORCEINLINE inline __attribute__((always_inline))
#endif

/* A read prefetch hint to all cache levels (never faults, even past a buffer's end). */
#if defined(__GNUC__) || defined(__clang__)
#define GK_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 3)
#elif defined(_M_X64) || defined(_M_IX86)
#include <xmmintrin.h>
#define GK_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define GK_PREFETCH(p) ((void)(p))
#endif
/* The same towards L2 only (a line wanted soon, not in the next few hundred cycles). */
#if defined(__GNUC__) || defined(__clang__)
#define GK_PREFETCH_L2(p) __builtin_prefetch((const void *)(p), 0, 2)
#elif defined(_M_X64) || defined(_M_IX86)
#define GK_PREFETCH_L2(p) _mm_prefetch((const char *)(p), _MM_HINT_T1)
#else
#define GK_PREFETCH_L2(p) ((void)(p))
#endif

/* A compile-time check (C11). */
#define GK_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)

#define GK_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GK_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif /* GEMMKIT_PLATFORM_H */
