/* libscatterptx C ABI: out[index[i], :] += src[i, :] on sm_90+ GPUs.
 *
 * Equivalent to PyTorch's
 *   out.scatter_add_(0, index.unsqueeze(-1).expand(-1, cols), src)
 *   out.index_add_(0, index, src)
 * for 2-D row-major out and src whose rows may be padded (row stride >= cols).
 *
 * Every entry point returns a status; on failure a readable message for the
 * calling thread is available from scatterptx_last_error_message(). Nothing is
 * launched and nothing is written when the arguments are rejected.
 *
 * The CUDA driver is loaded at run time: linking this library needs no
 * libcuda, and a machine without a driver gets SCATTERPTX_ERROR_NO_DRIVER. */
#ifndef SCATTERPTX_SCATTERPTX_H
#define SCATTERPTX_SCATTERPTX_H

#include <stddef.h>
#include <stdint.h>

/* The entry points below are the library's whole dynamic interface: the
 * shared library is built with hidden visibility, and only what carries
 * SCATTERPTX_API is exported. Linking the static library into a shared
 * library of your own, link it with -Wl,--exclude-libs,libscatterptx.a to
 * keep the entry points out of that library's exports (the archive's
 * objects carry default visibility whatever this header says). */
#ifndef SCATTERPTX_API
#if defined(__GNUC__)
#define SCATTERPTX_API __attribute__((visibility("default")))
#else
#define SCATTERPTX_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The same opaque type as cuda.h's CUstream. C11 and C++ take the typedef
 * twice; C99 does not: there, include cuda.h (if at all) before this header. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L) || \
    !defined(__cuda_cuda_h__)
typedef struct CUstream_st* CUstream;
#endif

typedef enum scatterptx_status {
  SCATTERPTX_SUCCESS = 0,
  SCATTERPTX_ERROR_INVALID_ARGUMENT = 1,  /* shapes, strides, dtypes, pointers */
  SCATTERPTX_ERROR_NO_DRIVER = 2,         /* libcuda.so.1 missing or too old */
  SCATTERPTX_ERROR_NO_CONTEXT = 3,        /* no current CUDA context on this thread */
  SCATTERPTX_ERROR_UNSUPPORTED_DEVICE = 4, /* compute capability below 9.0 */
  SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE = 5, /* checked mode found index outside [0, out_rows) */
  /* A driver call failed; the message names it. A launch refused part way
   * through a problem of more than 2^31 source rows (several launches) names
   * the source rows of the launches already enqueued: they stay enqueued and
   * add those rows when they run. */
  SCATTERPTX_ERROR_DRIVER = 6,
  SCATTERPTX_ERROR_OUT_OF_MEMORY = 7      /* a workspace could not be had and falling back was forbidden */
} scatterptx_status;

typedef enum scatterptx_dtype {
  SCATTERPTX_F32 = 0,
  SCATTERPTX_F16 = 1,
  SCATTERPTX_BF16 = 2,
  SCATTERPTX_F64 = 3
} scatterptx_dtype;

typedef enum scatterptx_index_type {
  SCATTERPTX_INDEX_INT32 = 0,
  SCATTERPTX_INDEX_INT64 = 1
} scatterptx_index_type;

/* What happens to a row whose index lies outside [0, out_rows), negative
 * included. In both modes that row is skipped (nothing outside out is ever
 * written) and every row with a valid index is still added. */
typedef enum scatterptx_index_check {
  /* Stream-ordered, no host synchronisation: the smallest offending position
   * is recorded in a per-context device record that
   * scatterptx_take_index_error() reads. */
  SCATTERPTX_INDEX_RECORD = 0,
  /* Synchronises the stream after the launch and returns
   * SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE naming the first offending position
   * and its value. Not capturable in a CUDA graph. CHECKED calls in one
   * context run one at a time (they share a record), so a CHECKED call must
   * not wait, through events, on another thread's CHECKED call. */
  SCATTERPTX_INDEX_CHECKED = 1
} scatterptx_index_check;

/* Which kernel family runs. AUTO lets the planner choose; the others force a
 * path and fail with INVALID_ARGUMENT when the inputs are not eligible. */
typedef enum scatterptx_path {
  SCATTERPTX_PATH_AUTO = 0,
  SCATTERPTX_PATH_TMA = 1, /* tensor-map loads + cp.reduce.async.bulk; 16-byte rows */
  SCATTERPTX_PATH_RED = 2, /* red.global.add, any alignment */
  /* Few targets: per-CTA sums in shared memory, one bulk reduce per target;
   * the TMA path's layout rules and out_rows <= 4096 */
  SCATTERPTX_PATH_PRIVATE = 3
} scatterptx_path;

/* Optional schedule override for the TMA path, for tuning sweeps. A zero
 * field keeps the planner's choice for that field. With path AUTO a schedule
 * keeps the TMA path wherever the input is eligible for it; a forced
 * PRIVATE path takes `stages` as its pipeline depth and `warps_per_cta` as
 * its consumer warps (at most 31; each CTA adds one producer warp). */
typedef struct scatterptx_schedule {
  uint32_t chunk_bytes;   /* bytes of one row moved per pipeline stage */
  uint32_t stages;        /* shared-memory stages per worker warp */
  uint32_t warps_per_cta; /* independent pipelines per CTA */
  uint32_t ctas_per_sm;   /* persistent CTAs per multiprocessor */
} scatterptx_schedule;

/* Whether the default call may group the rows by target first (see
 * "Grouped execution" below): with args.path AUTO and no schedule override,
 * scatterptx_scatter_add groups where the planner expects grouping to win
 * (rows of 256 bytes or more, 16-byte aligned, at least 65536 of them, into
 * an out beyond 16 MiB or onto hot targets, unless the privatised path takes
 * them). Grouping needs a workspace for the call: from the call's own
 * allocator (scatterptx_scatter_add_with_allocator()), else the one
 * registered with scatterptx_set_allocator(), else a stream-ordered pool of
 * the library's (cuMemAllocFromPoolAsync, capturable). Its size is
 * scatterptx_plan_workspace_size()'s for SEGMENTED, at most
 * 16*M + 4*256*ceil(M/2048) + 4*ceil(M/256)*row_bytes + 4 KB (row_bytes of
 * f32 sums, f64 for f64, rounded up to 16), plus 8*M for weights of 2 or 4
 * bytes, which the sort carries beside the positions: the call's peak extra
 * memory. */
typedef enum scatterptx_grouping {
  /* Group where it wins; if no workspace can be had, take the streaming
   * paths instead (nothing is written before that choice). */
  SCATTERPTX_GROUPING_AUTO = 0,
  /* Never group and never allocate: the streaming paths only. */
  SCATTERPTX_GROUPING_OFF = 1,
  /* Group where it wins; a workspace that cannot be had is
   * SCATTERPTX_ERROR_OUT_OF_MEMORY, with nothing written. */
  SCATTERPTX_GROUPING_NO_FALLBACK = 2
} scatterptx_grouping;

/* What each reached target row becomes: torch's
 *   out.scatter_reduce_(0, index.unsqueeze(-1).expand(-1, cols), src, reduce, include_self)
 * with reduce "sum", "mean", "amax" or "amin". A target that no row reaches
 * (no index equals it) is left as it was, whatever the reduce; a reached
 * target's own value joins its rows only with include_self (as one more row,
 * counted by MEAN). A NaN among the values a target combines makes its
 * result NaN (AMAX and AMIN included). Every reduce but SUM with
 * include_self runs grouped only (see "Grouped execution"): rows combined in
 * f32 (f64 for f64) and each reached row written once, deterministically;
 * MEAN divides the sum by the count there. scatterptx_scatter_add refuses
 * such a reduce with grouping OFF, a forced path or a schedule, and an
 * input grouping cannot take (more than 2^32 - 1 source rows or 2^32 - 2
 * targets): the hardware's red.max/red.min have no f32/f64 form and do not
 * propagate NaN, so there is no streaming path for them. Without a workspace it fails with
 * SCATTERPTX_ERROR_OUT_OF_MEMORY rather than stream. */
typedef enum scatterptx_reduce {
  SCATTERPTX_REDUCE_SUM = 0,  /* the sum of the rows, weighted where weights is set */
  SCATTERPTX_REDUCE_MEAN = 1, /* the sum over the number of rows; no weights */
  SCATTERPTX_REDUCE_AMAX = 2, /* the element-wise maximum; no weights */
  SCATTERPTX_REDUCE_AMIN = 3  /* the element-wise minimum; no weights */
} scatterptx_reduce;

typedef struct scatterptx_scatter_add_args {
  void* out;              /* device pointer, out_rows x cols */
  int64_t out_rows;
  int64_t out_row_stride; /* in elements, >= cols */
  const void* src;        /* device pointer, src_rows x cols */
  int64_t src_rows;       /* M, also the length of index */
  int64_t src_row_stride; /* in elements, >= cols */
  int64_t cols;           /* D, shared by out and src */
  scatterptx_dtype dtype; /* of out and src alike */
  const void* index;      /* device pointer, src_rows entries */
  scatterptx_index_type index_type;
  scatterptx_index_check index_check;
  scatterptx_path path;
  const scatterptx_schedule* schedule; /* NULL: the planner's schedule */
  scatterptx_grouping grouping;        /* scatterptx_scatter_add only; plans and grouped calls ignore it */
  /* Fields below were added later, at the end. The library reads the
   * struct as its own header declares it (no size is passed): build against
   * the header of the library you load. Fill it with
   * scatterptx_scatter_add_args_init() first: a zero-filled struct means
   * include_self = 0. */
  /* NULL, or a device pointer to src_rows factors of weights_dtype, one per
   * source row: out[index[i], :] += weights[i] * src[i, :], the product
   * taken in f32 (f64 for f64 rows). With reduce SUM only. A plan reads it
   * at every execute, from the pointer given at create. */
  const void* weights;
  scatterptx_dtype weights_dtype; /* SCATTERPTX_F32, or dtype itself */
  scatterptx_reduce reduce;       /* see scatterptx_reduce */
  int include_self;               /* nonzero: each reached out row joins its own reduce */
} scatterptx_scatter_add_args;

/* Fills args with the defaults: zero sizes, NULL pointers, f32, int64 index,
 * RECORD mode, AUTO path, no schedule override, grouping AUTO, no weights
 * (weights_dtype f32), reduce SUM, include_self 1: out[index[i], :] += src[i, :]. */
SCATTERPTX_API
void scatterptx_scatter_add_args_init(scatterptx_scatter_add_args* args);

/* out[index[i], :] += src[i, :] for i in [0, src_rows) (weights[i] * src[i, :]
 * with weights; args.reduce and args.include_self for torch's other
 * scatter_reduce_ forms), on the caller's stream in the current CUDA context. Stream-ordered: no host
 * synchronisation (except in CHECKED mode). It takes the fastest path the
 * library has for the input, grouping the rows by target where that wins
 * (args.grouping says whether it may, and where its workspace comes from);
 * grouped sums of f16/bf16 rows accumulate in f32. Where it lets the
 * index's order choose between grouping and streaming (f32 sums), outside
 * a capture, part of its work runs on a stream of the library's own, at the
 * caller's stream's priority, forked from and joined back to the caller's:
 * work queued on the caller's stream after the call still runs after all
 * of it. Capturable in a CUDA graph once the context is prepared.
 * src_rows == 0 or cols == 0 is a no-op. */
SCATTERPTX_API
scatterptx_status scatterptx_scatter_add(const scatterptx_scatter_add_args* args, CUstream stream);

/* Loads the kernels and the index-error record for the current context.
 * Called implicitly by the first scatter_add in a context; call it yourself
 * before capturing a CUDA graph, since module loading cannot be captured. */
SCATTERPTX_API
scatterptx_status scatterptx_prepare(void);

/* Synchronises the current context, then reads and clears its index-error
 * record: *position receives the smallest source position whose index was
 * outside [0, out_rows) in any RECORD-mode launch since the last call, or -1
 * when there was none. The read and the clear are one atomic exchange on the
 * device, so no record is lost: the bad rows of a launch that another thread
 * runs meanwhile are reported by this call or the next (split between the
 * two when the launch is running at the exchange). Not while a stream of
 * this context is being captured: the context synchronisation would fail. */
SCATTERPTX_API
scatterptx_status scatterptx_take_index_error(int64_t* position);

/* Describes the plan scatter_add would run for args on the current device,
 * without launching: "path=tma variant=... chunk_elems=... grid=..." for a
 * streaming path, "mode=segmented ... workspace_bytes=..." where it groups. */
SCATTERPTX_API
scatterptx_status scatterptx_describe_plan(const scatterptx_scatter_add_args* args, char* buffer,
                                           size_t buffer_size);

/* ---- Grouped execution -------------------------------------------------
 *
 * The streaming paths above reduce every source row into out on its own: a
 * random index into an out far larger than L2 pays a DRAM read-modify-write
 * of out per source row, and a hot target serialises on the L2 atomics.
 * Grouped execution first groups the source positions by target (a stable
 * radix sort of the index on the GPU), then sums each target's rows on chip
 * and adds each sum to its out row once.
 *
 * A plan holds that grouping for one index and may be executed many times on
 * new src and out values; scatterptx_scatter_add_grouped() builds and
 * executes one in a single stream-ordered call. */

typedef enum scatterptx_mode {
  SCATTERPTX_MODE_AUTO = 0,      /* the planner picks from shapes and dtype */
  SCATTERPTX_MODE_STREAMING = 1, /* no grouping: what scatterptx_scatter_add runs; args.path applies */
  /* Stable grouping by target; each segment's rows are summed on chip (f32
   * for f16/bf16, f64 for f64) and the sum is added to its out row once;
   * segments longer than a tile are summed in tile pieces combined in a
   * fixed order, never by atomics. */
  SCATTERPTX_MODE_SEGMENTED = 2,
  /* Removed: refused with SCATTERPTX_ERROR_INVALID_ARGUMENT (it was slower
   * than SEGMENTED on every measured shape). The value stays reserved. */
  SCATTERPTX_MODE_BUCKETED = 3
} scatterptx_mode;

typedef struct scatterptx_group_options {
  scatterptx_mode mode;
  /* Nonzero: the result is bitwise identical across runs, launches, streams
   * and warps_per_cta for the same inputs on the same GPU model with the same
   * library version. Selects SEGMENTED (with AUTO); STREAMING is refused. */
  int deterministic;
  /* Warps per CTA of the summing kernels, 1..32 (at most 24 for weighted f64
   * rows, whose warps stage 8-byte weights in shared memory); 0 keeps the
   * planner's. It changes the grid, not the result. Where a summing kernel's
   * registers allow fewer on the device (28 for some mean variants on sm_90),
   * the call or plan_create refuses it (INVALID_ARGUMENT) before launching. */
  uint32_t warps_per_cta;
} scatterptx_group_options;

/* AUTO, not deterministic, planner's warps_per_cta. */
SCATTERPTX_API
void scatterptx_group_options_init(scatterptx_group_options* options);

typedef struct scatterptx_plan_st* scatterptx_plan;

/* Bytes of device workspace a plan for args needs (0 for STREAMING and for
 * an empty problem, no source rows or no columns). Reads every field of args
 * but the pointers (out, src and index may be NULL; of weights, only whether
 * it is set) and takes the pointers to be 16-byte aligned: with AUTO, less
 * aligned pointers may make create pick STREAMING, which needs less. options
 * NULL means the defaults. For SEGMENTED with M = src_rows, T = out_rows, row_bytes of
 * the accumulator type (f32 for f16/bf16/f32, f64 for f64), rounded up to 16:
 *   about 16*M + 4*256*ceil(M/2048) + 4*ceil(M/256)*row_bytes + 1 KB,
 * plus up to 8*M for weights of 2 or 4 bytes (scatterptx_scatter_add and
 * scatterptx_scatter_add_grouped carry them through the sort beside the
 * positions; a plan's executes read them by source row, as they are then,
 * and use none of it). */
SCATTERPTX_API
scatterptx_status scatterptx_plan_workspace_size(const scatterptx_scatter_add_args* args,
                                                 const scatterptx_group_options* options, size_t* bytes);

/* Validates args, picks the mode and, for a plan that groups, builds the
 * grouping of args->index on stream, then synchronises the stream, so the
 * plan may be executed on any stream of the context afterwards (a STREAMING
 * plan neither launches nor synchronises here). A plan that groups is
 * therefore refused on a stream being captured (INVALID_ARGUMENT, nothing
 * enqueued): make it before capturing; its executes can be captured. args->out and args->src are checked like
 * scatter_add's and give the alignment later calls must keep; nothing is
 * written to out. workspace: NULL to have the plan allocate (and free on
 * destroy) its own, else a device allocation of at least
 * scatterptx_plan_workspace_size() bytes, 256-byte aligned, that the caller
 * keeps alive and untouched until destroy. A SEGMENTED plan reads the
 * index's contents once, here (later changes to it are not seen), and its
 * weights, if any, at each execute; a
 * STREAMING plan reads it at every execute, so it must stay valid.
 * RECORD mode: every execute records an out-of-range index, exactly as
 * scatter_add does (its row is skipped). CHECKED mode: such an index fails
 * this call with SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE (position and value
 * named) and no plan is made; for a STREAMING plan each execute checks. */
SCATTERPTX_API
scatterptx_status scatterptx_plan_create(const scatterptx_scatter_add_args* args,
                                         const scatterptx_group_options* options, void* workspace,
                                         size_t workspace_bytes, CUstream stream, scatterptx_plan* plan);

/* out[index[i], :] += src[i, :] with the plan's index, for new out and src
 * pointers with the shapes and strides given at create and at least the
 * alignment of the pointers given there. Stream-ordered, no allocation, no
 * synchronisation, capturable; but for a CHECKED STREAMING plan, which checks
 * the index and synchronises at each execute, and so cannot be captured. Executes of one plan share its workspace:
 * the caller orders executes on different streams (events), one at a time. */
SCATTERPTX_API
scatterptx_status scatterptx_plan_execute(scatterptx_plan plan, void* out, const void* src, CUstream stream);

/* Frees what the plan allocated, in the plan's context, from any thread
 * (whatever context is current there, or none, stays current). The caller
 * makes sure no execute of it is still running. The handle is gone even
 * when an error is returned. NULL is a no-op. */
SCATTERPTX_API
scatterptx_status scatterptx_plan_destroy(scatterptx_plan plan);

/* "mode=segmented passes=3 ..." for the plan. */
SCATTERPTX_API
scatterptx_status scatterptx_plan_describe(scatterptx_plan plan, char* buffer, size_t buffer_size);

/* Builds a plan in the caller's workspace and executes it, stream-ordered,
 * without synchronising (except in CHECKED mode, which behaves as
 * scatter_add's: every valid row is added, then the first bad position is
 * reported). workspace must hold scatterptx_plan_workspace_size() bytes
 * (NULL is allowed only when that is 0). */
SCATTERPTX_API
scatterptx_status scatterptx_scatter_add_grouped(const scatterptx_scatter_add_args* args,
                                                 const scatterptx_group_options* options, void* workspace,
                                                 size_t workspace_bytes, CUstream stream);

/* Where the default call's grouping workspaces come from: for every call,
 * registered with scatterptx_set_allocator(), or for one, given to
 * scatterptx_scatter_add_with_allocator(). allocate returns `bytes` of device memory of the calling thread's current
 * context, 256-byte aligned, usable by work enqueued on `stream` after the
 * call, or NULL when it cannot (the call then streams, or fails with
 * SCATTERPTX_ERROR_OUT_OF_MEMORY under SCATTERPTX_GROUPING_NO_FALLBACK).
 * release takes it back once the call has enqueued its work on `stream`:
 * the memory may be reused by work enqueued on that stream afterwards (the
 * semantics of cudaFreeAsync and of PyTorch's caching allocator). Both are
 * called from the thread making the call. */
typedef struct scatterptx_allocator {
  void* (*allocate)(size_t bytes, CUstream stream, void* user_data);
  void (*release)(void* pointer, size_t bytes, CUstream stream, void* user_data);
  void* user_data;
} scatterptx_allocator;

/* Registers allocator (copied) for every call in the process that brings no
 * allocator of its own; NULL returns to the library's stream-ordered pool.
 * allocate and release must both be set. Takes effect for calls that start
 * after it returns. */
SCATTERPTX_API
scatterptx_status scatterptx_set_allocator(const scatterptx_allocator* allocator);

/* Hands back to the device the memory the current context's workspace pool
 * keeps for reuse, as torch.cuda.empty_cache() does for torch's allocator.
 * The pool keeps what the default call's grouping workspaces took, so that
 * calls in a loop reuse it: at most the largest set of workspaces in use at
 * once. Workspaces of work not yet finished stay; a later call refills the
 * pool as it needs. In a context where no call has run yet there is nothing
 * to trim and nothing is loaded. Does not synchronise; not while the current
 * context has a stream being captured. */
SCATTERPTX_API
scatterptx_status scatterptx_trim_workspace_pool(void);

/* scatterptx_scatter_add, with its grouping workspace from allocator in place
 * of the registered one: an allocator that serves its own caller's calls and
 * nobody else's (the Python package passes torch's caching allocator so).
 * allocate and release must both be set; NULL allocator is
 * scatterptx_scatter_add itself. */
SCATTERPTX_API
scatterptx_status scatterptx_scatter_add_with_allocator(const scatterptx_scatter_add_args* args,
                                                        const scatterptx_allocator* allocator, CUstream stream);

/* The message of the calling thread's last call: why it failed, or "" after
 * a success (every call but this one sets it), so read it right away. */
SCATTERPTX_API
const char* scatterptx_last_error_message(void);

/* "SCATTERPTX_SUCCESS", "SCATTERPTX_ERROR_INVALID_ARGUMENT", ... */
SCATTERPTX_API
const char* scatterptx_status_name(scatterptx_status status);

/* Bytes per element of dtype (4, 2, 2, 8), or 0 for an unknown value. */
SCATTERPTX_API
size_t scatterptx_dtype_size(scatterptx_dtype dtype);

/* "f32", "f16", "bf16", "f64", or "unknown". */
SCATTERPTX_API
const char* scatterptx_dtype_name(scatterptx_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* SCATTERPTX_SCATTERPTX_H */
