/* The one atomics shim of the C core: loads, stores and counters on the few words threads share (the pool's
 * generation and counts, barriers, the thread count, lazily built dispatch and tuning state, claimed chunks). */
#ifndef GEMMKIT_ATOMICS_H
#define GEMMKIT_ATOMICS_H

/* GK_SHARED qualifies every object these macros touch: volatile on MSVC, where volatile accesses are the
 * acquire loads and release stores (x86-64, /volatile:ms) and keep a polled word from being hoisted out of a
 * spin loop; nothing with the GCC / Clang builtins.
 *   GK_LOAD_RELAXED / GK_STORE_RELAXED: the old or the new value, no ordering (the thread count)
 *   GK_LOAD_ACQUIRE / GK_STORE_RELEASE: publish a value and what was written before it
 *   GK_INC_ACQ_REL(p): ++*p on a long, returns the new value (barriers)
 *   GK_CLAIM_RELAXED(p): (*p)++ on an int64_t, returns the old value (chunks claimed in turn) */
#if defined(__GNUC__) || defined(__clang__)
#define GK_SHARED
#define GK_LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define GK_STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define GK_LOAD_ACQUIRE(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GK_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define GK_INC_ACQ_REL(p) __atomic_add_fetch((p), 1, __ATOMIC_ACQ_REL)
#define GK_CLAIM_RELAXED(p) __atomic_fetch_add((p), 1, __ATOMIC_RELAXED)
#elif defined(_MSC_VER)
#include <intrin.h>
#define GK_SHARED volatile
#define GK_LOAD_RELAXED(p) (*(p))
#define GK_STORE_RELAXED(p, v) (*(p) = (v))
#define GK_LOAD_ACQUIRE(p) (_ReadWriteBarrier(), *(p))
#define GK_STORE_RELEASE(p, v) (_ReadWriteBarrier(), *(p) = (v), _ReadWriteBarrier())
#define GK_INC_ACQ_REL(p) _InterlockedIncrement((volatile long *)(p))
#define GK_CLAIM_RELAXED(p) _InterlockedExchangeAdd64((volatile __int64 *)(p), 1)
#else
#error "gemmkit: no atomics for this compiler (csrc/atomics.h)"
#endif

#endif /* GEMMKIT_ATOMICS_H */
