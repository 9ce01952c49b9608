/* The thread pool, thread counts and thresholds, work partitioning, and the per-thread workspaces of the drivers
 * (csrc/threading.c), each workspace slot named for what it holds. */
#ifndef GEMMKIT_THREADS_H
#define GEMMKIT_THREADS_H

#include "platform.h"
#include "atomics.h"

typedef void (*gk_task_fn)(void *ctx, int tid, int nthreads);
/* Runs fn(ctx, tid, n) for tid in [0, n) concurrently on the pool (the caller runs tid 0) and returns
 * when all end. Where n threads cannot run at once (another caller holds the pool), it calls
 * fn(ctx, 0, 1) instead: a task given nthreads == 1 does all the work. */
void gk_parallel_run(gk_task_fn fn, void *ctx, int nthreads);

/* Spin barrier for the threads of one gk_parallel_run call. */
typedef struct { GK_SHARED long count, phase; int n; } gk_barrier_t;
void gk_barrier_init(gk_barrier_t *b, int n);
void gk_barrier_wait(gk_barrier_t *b);
int gk_num_threads(void);
/* Threads worth using for an M x N x K product (1 for small ones): one per this many multiply-adds by
 * default (tuning key threads.min_macs; gk_thread_macs()). */
int gk_threads_for(int64_t M, int64_t N, int64_t K);
#define GK_THREAD_MACS_DEFAULT ((double)(1 << 19))
/* A batch of products spreads over at most one thread per this many multiply-adds of the whole batch. */
#define GK_BATCH_MACS_PER_THREAD ((double)(1 << 18))

/* The calling thread's buffer in workspace `slot`: 64-byte aligned, grown on demand and kept for reuse; the
 * slots are independent, so one call may hold all three at once:
 *   GK_WS_A      the packed A block (and what stands for it: a small path's copy of op(A) or of the vectors)
 *   GK_WS_B      the packed B block (shared by the threads of a call when one thread packs it), or the
 *                sums of a dot path
 *   GK_WS_STATE  a thread's running state beside the blocks (int8 sums and compensation terms, a C block
 *                accumulated in float32 for a 16-bit C) */
enum { GK_WS_A = 0, GK_WS_B = 1, GK_WS_STATE = 2, GK_WS_SLOTS = 3 };
void *gk_thread_workspace(int slot, size_t bytes);
/* What a thread's workspace may keep between calls; larger slots are freed by gk_thread_workspace_trim(). */
#define GK_WS_KEEP_BYTES ((size_t)16 << 20)
void gk_thread_workspace_trim(void);

/* Split the M x N output among nthreads into a tm x tn grid (tm * tn <= nthreads). */
void gk_partition_2d(int64_t m, int64_t n, int mr, int nr, int nthreads, int *tm, int *tn);
/* Thread tid's block [m0, m1) x [n0, n1) of an M x N output split among nthreads: row slices over all
 * threads when `row_slices` (they share one packed B, so every thread takes part even with no rows:
 * returns 1), else a tm x tn grid (returns 0 for a thread outside the grid or with an empty block). */
int gk_thread_block(int64_t M, int64_t N, int mr, int nr, int tm, int tn, int row_slices, int tid, int nthreads,
                    int64_t *m0, int64_t *m1, int64_t *n0, int64_t *n1);
/* [begin, end) of part `idx` of `parts` over `total`, in units of `unit`. */
void gk_split_range(int64_t total, int unit, int parts, int idx, int64_t *begin, int64_t *end);

#endif /* GEMMKIT_THREADS_H */
