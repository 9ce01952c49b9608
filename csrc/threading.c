/* Thread pool, thread count and per-thread packing workspaces for the drivers: persistent workers
 * woken per call (the caller runs part 0), pthreads on POSIX and Win32 threads on Windows. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include <stdlib.h>
#include <string.h>
#include "include/gemmkit.h"
#include "include/gemmkit_introspect.h"
#include "atomics.h"
#include "threads.h"

#if defined(_WIN32)
#include <windows.h>
typedef CRITICAL_SECTION gk_mutex_t;
typedef CONDITION_VARIABLE gk_cond_t;
#define gk_mutex_init(m) InitializeCriticalSection(m)
#define gk_mutex_lock(m) EnterCriticalSection(m)
#define gk_mutex_trylock(m) (TryEnterCriticalSection(m) ? 0 : 1)
#define gk_mutex_unlock(m) LeaveCriticalSection(m)
#define gk_cond_init(c) InitializeConditionVariable(c)
#define gk_cond_wait(c, m) SleepConditionVariableCS(c, m, INFINITE)
#define gk_cond_broadcast(c) WakeAllConditionVariable(c)
#else
#include <pthread.h>
#include <unistd.h>
#include <sched.h>
#include <sys/mman.h> /* madvise */
typedef pthread_mutex_t gk_mutex_t;
typedef pthread_cond_t gk_cond_t;
#define gk_mutex_init(m) pthread_mutex_init(m, NULL)
#define gk_mutex_lock(m) pthread_mutex_lock(m)
#define gk_mutex_trylock(m) pthread_mutex_trylock(m)
#define gk_mutex_unlock(m) pthread_mutex_unlock(m)
#define gk_cond_init(c) pthread_cond_init(c, NULL)
#define gk_cond_wait(c, m) pthread_cond_wait(c, m)
#define gk_cond_broadcast(c) pthread_cond_broadcast(c)
#endif

#define GK_MAX_THREADS 256

/* ---- thread count -------------------------------------------------------------------------- */

int gemmkit_parse_num_threads(const char *text) {
    if (text == NULL) return 0;
    while (*text == ' ' || *text == '\t') text++;
    int n = 0, digits = 0;
    for (; *text >= '0' && *text <= '9'; text++, digits++) {
        n = n * 10 + (*text - '0');
        if (n > GK_MAX_THREADS) return 0; /* checked per digit: a long number cannot overflow */
    }
    while (*text == ' ' || *text == '\t') text++;
    return digits > 0 && *text == '\0' && n > 0 ? n : 0;
}

static int default_threads(void) {
    /* a text that is not a count (3abc, 2.5, 0) means the default; gemmkit/__init__.py warns of it */
    const int from_env = gemmkit_parse_num_threads(getenv("GEMMKIT_NUM_THREADS"));
    if (from_env > 0) return from_env;
    int n = 1;
#if defined(_WIN32)
    DWORD_PTR proc_mask, sys_mask;
    if (GetProcessAffinityMask(GetCurrentProcess(), &proc_mask, &sys_mask)) {
        n = 0;
        for (; proc_mask; proc_mask &= proc_mask - 1) n++;
    }
#elif defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
    else n = (int)sysconf(_SC_NPROCESSORS_ONLN);
#else
    n = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
    return GK_MAX(1, GK_MIN(n, GK_MAX_THREADS));
}

/* Read and written from any thread: relaxed atomics (a reader sees the old or the new count). */
static GK_SHARED int num_threads = 0;

int gemmkit_get_num_threads(void) {
    int n = GK_LOAD_RELAXED(&num_threads);
    if (n <= 0) {
        n = default_threads();
        GK_STORE_RELAXED(&num_threads, n);
    }
    return n;
}

void gemmkit_set_num_threads(int n) {
    GK_STORE_RELAXED(&num_threads, n <= 0 ? default_threads() : GK_MIN(n, GK_MAX_THREADS));
}

/* A per-thread cap on the threads of the calls this thread makes (0: none), so that a caller such as a
 * Dask task can run its products on one thread without changing the process-wide count. */
#if defined(_MSC_VER)
static __declspec(thread) int thread_limit = 0;
#else
static __thread int thread_limit = 0;
#endif

void gemmkit_set_thread_limit(int n) { thread_limit = n <= 0 ? 0 : GK_MIN(n, GK_MAX_THREADS); }

int gemmkit_get_thread_limit(void) { return thread_limit; }

int gk_num_threads(void) {
    const int n = gemmkit_get_num_threads(), cap = thread_limit;
    return cap > 0 && cap < n ? cap : n;
}

/* Spin loops poll without `pause`: under a hypervisor, pause-loop exiting turns a tight pause loop into a VM exit
 * that can deschedule the virtual CPU for milliseconds (see docs/decisions.md, GK_PAUSE). The polled loads alone keep
 * the loop cheap. */
#define GK_PAUSE() ((void)0)

/* Poll this many times (some tens of microseconds) for the next job, or for the workers to finish,
 * before sleeping on a condition variable: waking a sleeping thread costs tens of microseconds, as
 * much as a whole 256^3 product. Longer spins cost more than they save on a shared virtual machine. */
#define GK_SPIN_STEPS (1 << 15)

/* ---- pool ---------------------------------------------------------------------------------- */

typedef struct {
    gk_mutex_t lock;          /* guards everything below */
    gk_cond_t wake, done;
    gk_mutex_t busy;          /* held by the one caller using the pool; others run serially */
    int started;              /* workers alive */
    GK_SHARED unsigned long generation; /* bumped per job */
    gk_task_fn fn;
    void *ctx;
    int nthreads;
    GK_SHARED int remaining;
} gk_pool_t;

static gk_pool_t pool;
static int pool_ready = 0;

#if defined(_WIN32)
static INIT_ONCE pool_once = INIT_ONCE_STATIC_INIT;
static BOOL CALLBACK pool_init_cb(PINIT_ONCE o, PVOID p, PVOID *c) {
    (void)o; (void)p; (void)c;
    gk_mutex_init(&pool.lock); gk_mutex_init(&pool.busy);
    gk_cond_init(&pool.wake); gk_cond_init(&pool.done);
    pool_ready = 1;
    return TRUE;
}
static void pool_init(void) { InitOnceExecuteOnce(&pool_once, pool_init_cb, NULL, NULL); }
#else
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static void pool_reset_after_fork(void) {
    /* The child has none of the parent's workers: start over with a fresh, unlocked pool. */
    memset(&pool, 0, sizeof(pool));
    gk_mutex_init(&pool.lock); gk_mutex_init(&pool.busy);
    gk_cond_init(&pool.wake); gk_cond_init(&pool.done);
}
static void pool_init_once(void) {
    pool_reset_after_fork();
    pthread_atfork(NULL, NULL, pool_reset_after_fork);
    pool_ready = 1;
}
static void pool_init(void) { pthread_once(&pool_once, pool_init_once); }
#endif

typedef struct { int tid; unsigned long start_gen; } worker_arg_t;
static worker_arg_t worker_args[GK_MAX_THREADS];

#if defined(_WIN32)
static DWORD WINAPI worker_main(LPVOID p)
#else
static void *worker_main(void *p)
#endif
{
    int tid = ((worker_arg_t *)p)->tid;
    gk_mutex_lock(&pool.lock);
    /* The generation when this worker was created: a job posted before it first ran is still seen. */
    unsigned long seen = ((worker_arg_t *)p)->start_gen;
    for (;;) {
        if (pool.generation == seen) { /* spin a while for the next job before sleeping */
            gk_mutex_unlock(&pool.lock);
            for (int i = 0; i < GK_SPIN_STEPS && (unsigned long)GK_LOAD_ACQUIRE(&pool.generation) == seen; i++)
                GK_PAUSE();
            gk_mutex_lock(&pool.lock);
        }
        while (pool.generation == seen) gk_cond_wait(&pool.wake, &pool.lock);
        seen = pool.generation;
        if (tid >= pool.nthreads) continue;
        gk_task_fn fn = pool.fn;
        void *ctx = pool.ctx;
        int n = pool.nthreads;
        gk_mutex_unlock(&pool.lock);
        fn(ctx, tid, n);
        gk_mutex_lock(&pool.lock);
        GK_STORE_RELEASE(&pool.remaining, pool.remaining - 1); /* (read unlocked by the spinning caller) */
        if (pool.remaining == 0) gk_cond_broadcast(&pool.done);
    }
#if defined(_WIN32)
    return 0;
#else
    return NULL;
#endif
}

/* Start workers 1..n-1 if not yet running; returns how many threads the pool can use. */
static int pool_grow(int n) {
    while (pool.started + 1 < n) {
        int tid = pool.started + 1;
        worker_args[tid].tid = tid;
        worker_args[tid].start_gen = pool.generation;
#if defined(_WIN32)
        HANDLE h = CreateThread(NULL, 0, worker_main, &worker_args[tid], 0, NULL);
        if (h == NULL) break;
        CloseHandle(h);
#else
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* at least 1 MiB of stack: the tiny kernel keeps a copy of B (up to 32 KiB) on it, and musl's
         * default for a new thread is 128 KiB (glibc's follows ulimit -s, usually 8 MiB) */
        size_t stack = 0;
        if (pthread_attr_getstacksize(&attr, &stack) == 0 && stack < ((size_t)1 << 20))
            pthread_attr_setstacksize(&attr, (size_t)1 << 20);
        int rc = pthread_create(&th, &attr, worker_main, &worker_args[tid]);
        pthread_attr_destroy(&attr);
        if (rc != 0) break;
#endif
        pool.started++;
    }
    return pool.started + 1;
}

/* No concurrency to be had: one call that does all the work (tasks treat nthreads == 1 as "all"). */
static void run_serially(gk_task_fn fn, void *ctx, int parts) {
    (void)parts;
    fn(ctx, 0, 1);
}

void gk_parallel_run(gk_task_fn fn, void *ctx, int nthreads) {
    const int requested = nthreads;
    if (nthreads <= 1) { fn(ctx, 0, 1); return; }
    pool_init();
    if (gk_mutex_trylock(&pool.busy) != 0) {
        /* Another caller thread is using the pool: run every part here rather than oversubscribe. */
        run_serially(fn, ctx, nthreads);
        return;
    }
    gk_mutex_lock(&pool.lock);
    /* The pool may hold more workers than this call wants: only `requested` take part. */
    nthreads = GK_MIN(requested, pool_grow(requested));
    if (nthreads < requested) nthreads = 1; /* workers could not be started: run serially */
    if (nthreads <= 1) { /* no worker could be started */
        gk_mutex_unlock(&pool.lock);
        gk_mutex_unlock(&pool.busy);
        run_serially(fn, ctx, requested);
        return;
    }
    pool.fn = fn;
    pool.ctx = ctx;
    pool.nthreads = nthreads;
    pool.remaining = nthreads - 1;
    GK_STORE_RELEASE(&pool.generation, pool.generation + 1); /* (read unlocked by spinning workers) */
    gk_cond_broadcast(&pool.wake);
    gk_mutex_unlock(&pool.lock);
    fn(ctx, 0, nthreads);
    for (int i = 0; i < GK_SPIN_STEPS && GK_LOAD_ACQUIRE(&pool.remaining) > 0; i++) GK_PAUSE();
    gk_mutex_lock(&pool.lock);
    while (pool.remaining > 0) gk_cond_wait(&pool.done, &pool.lock);
    gk_mutex_unlock(&pool.lock);
    gk_mutex_unlock(&pool.busy);
}

/* ---- barrier -------------------------------------------------------------------------------- */


void gk_barrier_init(gk_barrier_t *b, int n) {
    b->count = 0;
    b->phase = 0;
    b->n = n;
}

/* Sense-counting spin barrier: the threads of one call are all running (they are the pool's), so a
 * short spin beats sleeping; after a while it yields the core. */
void gk_barrier_wait(gk_barrier_t *b) {
    long phase = GK_LOAD_ACQUIRE(&b->phase);
    if (GK_INC_ACQ_REL(&b->count) == b->n) {
        GK_STORE_RELEASE(&b->count, 0);
        GK_STORE_RELEASE(&b->phase, phase + 1);
        return;
    }
    for (long spins = 0; GK_LOAD_ACQUIRE(&b->phase) == phase; spins++) {
        GK_PAUSE();
#if defined(_WIN32)
        if (spins > 100000) SwitchToThread();
#else
        if (spins > 100000) sched_yield();
#endif
    }
}

/* ---- per-thread workspaces ------------------------------------------------------------------ */

typedef struct { void *ptr[GK_WS_SLOTS]; size_t size[GK_WS_SLOTS]; } gk_ws_t;

static void ws_free(void *p) {
    gk_ws_t *ws = (gk_ws_t *)p;
    if (!ws) return;
    for (int i = 0; i < GK_WS_SLOTS; i++) {
#if defined(_WIN32)
        _aligned_free(ws->ptr[i]);
#else
        free(ws->ptr[i]);
#endif
    }
    free(ws);
}

#if defined(_WIN32)
static DWORD ws_key = FLS_OUT_OF_INDEXES;
static INIT_ONCE ws_once = INIT_ONCE_STATIC_INIT;
static VOID WINAPI ws_free_cb(PVOID p) { ws_free(p); }
static BOOL CALLBACK ws_init_cb(PINIT_ONCE o, PVOID p, PVOID *c) {
    (void)o; (void)p; (void)c;
    ws_key = FlsAlloc(ws_free_cb);
    return TRUE;
}
static gk_ws_t *ws_get(void) {
    InitOnceExecuteOnce(&ws_once, ws_init_cb, NULL, NULL);
    gk_ws_t *ws = (gk_ws_t *)FlsGetValue(ws_key);
    if (!ws) { ws = (gk_ws_t *)calloc(1, sizeof(gk_ws_t)); if (ws) FlsSetValue(ws_key, ws); }
    return ws;
}
#else
static pthread_key_t ws_key;
static pthread_once_t ws_once = PTHREAD_ONCE_INIT;
static void ws_init(void) { pthread_key_create(&ws_key, ws_free); }
static gk_ws_t *ws_get(void) {
    pthread_once(&ws_once, ws_init);
    gk_ws_t *ws = (gk_ws_t *)pthread_getspecific(ws_key);
    if (!ws) { ws = (gk_ws_t *)calloc(1, sizeof(gk_ws_t)); if (ws) pthread_setspecific(ws_key, ws); }
    return ws;
}
#endif

void *gk_thread_workspace(int slot, size_t bytes) {
    gk_ws_t *ws = ws_get();
    if (!ws || slot < 0 || slot >= GK_WS_SLOTS) return NULL;
    if (ws->size[slot] >= bytes && ws->ptr[slot]) return ws->ptr[slot];
    bytes = (bytes + 4095) & ~(size_t)4095;
#if defined(_WIN32)
    _aligned_free(ws->ptr[slot]);
    ws->ptr[slot] = _aligned_malloc(bytes, 64);
#else
    free(ws->ptr[slot]);
    /* Packed blocks of 2 MiB and more go on transparent huge pages where the kernel offers them on
     * request: a 4096-wide B block spans thousands of 4 KiB pages (TLB misses in every column panel). */
    const size_t huge = (size_t)2 << 20;
    const int use_huge = bytes >= huge;
    if (use_huge) bytes = (bytes + huge - 1) & ~(huge - 1);
    if (posix_memalign(&ws->ptr[slot], use_huge ? huge : 64, bytes) != 0) ws->ptr[slot] = NULL;
#if defined(MADV_HUGEPAGE)
    else if (use_huge) (void)madvise(ws->ptr[slot], bytes, MADV_HUGEPAGE);
#endif
#endif
    ws->size[slot] = ws->ptr[slot] ? bytes : 0;
    return ws->ptr[slot];
}

/* Gives back, on the calling thread, any workspace slot larger than GK_WS_KEEP_BYTES: the cache
 * blocks never need more, so only a transient copy (op(A) of a long dot product) is that large, and it
 * must not stay allocated for the thread's life. */
void gk_thread_workspace_trim(void) {
    gk_ws_t *ws = ws_get();
    if (!ws) return;
    for (int i = 0; i < GK_WS_SLOTS; i++) {
        if (ws->size[i] <= GK_WS_KEEP_BYTES) continue;
#if defined(_WIN32)
        _aligned_free(ws->ptr[i]);
#else
        free(ws->ptr[i]);
#endif
        ws->ptr[i] = NULL;
        ws->size[i] = 0;
    }
}

/* ---- work partitioning ---------------------------------------------------------------------- */

void gk_split_range(int64_t total, int unit, int parts, int idx, int64_t *begin, int64_t *end) {
    int64_t units = (total + unit - 1) / unit;
    int64_t base = units / parts, extra = units % parts;
    int64_t ub = idx * base + GK_MIN((int64_t)idx, extra);
    int64_t ue = ub + base + (idx < extra ? 1 : 0);
    *begin = GK_MIN(ub * unit, total);
    *end = GK_MIN(ue * unit, total);
}

int gk_thread_block(int64_t M, int64_t N, int mr, int nr, int tm, int tn, int row_slices, int tid, int nthreads,
                    int64_t *m0, int64_t *m1, int64_t *n0, int64_t *n1) {
    if (row_slices) {
        gk_split_range(M, mr, nthreads, tid, m0, m1);
        *n0 = 0;
        *n1 = N;
        return 1;
    }
    const int ti = tid / tn, tj = tid % tn;
    if (ti >= tm) return 0;
    gk_split_range(M, mr, tm, ti, m0, m1);
    gk_split_range(N, nr, tn, tj, n0, n1);
    return *m0 < *m1 && *n0 < *n1;
}

void gk_partition_2d(int64_t m, int64_t n, int mr, int nr, int nthreads, int *tm, int *tn) {
    /* Pick a tm x tn grid (tm * tn <= nthreads) minimising the largest per-thread block (the
     * critical path) plus its perimeter (what each thread packs); no thread gets an empty slice. */
    int64_t mt = (m + mr - 1) / mr, nt = (n + nr - 1) / nr;
    int best_m = 1, best_n = 1;
    double best = -1.0;
    /* Ties go to more row slices: each thread then packs a smaller share of A (the transposing,
     * costlier pack for row-major A) and reads B's packed block once. */
    for (int a = nthreads; a >= 1; a--) {
        int b = nthreads / a;
        if (a > mt) continue;
        if (b > nt) b = (int)nt;
        double bm = (double)GK_MIN(((mt + a - 1) / a) * mr, m), bn = (double)GK_MIN(((nt + b - 1) / b) * nr, n);
        double cost = bm * bn + 8.0 * (bm + bn);
        if (best < 0 || cost < best) { best = cost; best_m = a; best_n = b; }
    }
    *tm = best_m;
    *tn = best_n;
}
