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

#ifdef __cplusplus
extern "C" {
#endif

/* The same opaque type as cuda.h's CUstream; repeating the typedef is legal. */
typedef struct CUstream_st* CUstream;

typedef enum scatterptx_status {
  SCATTERPTX_SUCCESS = 0,
  SCATTERPTX_ERROR_INVALID_ARGUMENT = 1,  /* shapes, strides, dtypes, pointers */
  SCATTERPTX_ERROR_NO_DRIVER = 2,         /* libcuda.so.1 missing or too old */
  SCATTERPTX_ERROR_NO_CONTEXT = 3,        /* no current CUDA context on this thread */
  SCATTERPTX_ERROR_UNSUPPORTED_DEVICE = 4, /* compute capability below 9.0 */
  SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE = 5, /* checked mode found index outside [0, out_rows) */
  SCATTERPTX_ERROR_DRIVER = 6             /* a driver call failed; the message names it */
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
 * field keeps the planner's choice for that field. */
typedef struct scatterptx_schedule {
  uint32_t chunk_bytes;   /* bytes of one row moved per pipeline stage */
  uint32_t stages;        /* shared-memory stages per worker warp */
  uint32_t warps_per_cta; /* independent pipelines per CTA */
  uint32_t ctas_per_sm;   /* persistent CTAs per multiprocessor */
} scatterptx_schedule;

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
} scatterptx_scatter_add_args;

/* Fills args with the defaults: zero sizes, NULL pointers, f32, int64 index,
 * RECORD mode, AUTO path, no schedule override. */
void scatterptx_scatter_add_args_init(scatterptx_scatter_add_args* args);

/* out[index[i], :] += src[i, :] for i in [0, src_rows), on the caller's
 * stream in the current CUDA context. Stream-ordered: no host
 * synchronisation (except in CHECKED mode) and no allocation once the
 * context is prepared. src_rows == 0 or cols == 0 is a no-op. */
scatterptx_status scatterptx_scatter_add(const scatterptx_scatter_add_args* args, CUstream stream);

/* Loads the kernels and the index-error record for the current context.
 * Called implicitly by the first scatter_add in a context; call it yourself
 * before capturing a CUDA graph, since module loading cannot be captured. */
scatterptx_status scatterptx_prepare(void);

/* Synchronises the current context, then reads and clears its index-error
 * record: *position receives the smallest source position whose index was
 * outside [0, out_rows) in any RECORD-mode launch since the last call, or -1
 * when there was none. The read and the clear are two steps: a launch that
 * another thread enqueues while this call runs may have its record cleared
 * unread, so take the record when no other thread is launching into the
 * context (or use CHECKED mode for those calls). */
scatterptx_status scatterptx_take_index_error(int64_t* position);

/* Describes the plan scatter_add would run for args on the current device,
 * without launching ("path=tma variant=... chunk_bytes=... grid=..."). */
scatterptx_status scatterptx_describe_plan(const scatterptx_scatter_add_args* args, char* buffer,
                                           size_t buffer_size);

/* The calling thread's message for its last failed call ("" if none). */
const char* scatterptx_last_error_message(void);

/* "SCATTERPTX_SUCCESS", "SCATTERPTX_ERROR_INVALID_ARGUMENT", ... */
const char* scatterptx_status_name(scatterptx_status status);

/* Bytes per element of dtype (4, 2, 2, 8), or 0 for an unknown value. */
size_t scatterptx_dtype_size(scatterptx_dtype dtype);

/* "f32", "f16", "bf16", "f64", or "unknown". */
const char* scatterptx_dtype_name(scatterptx_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* SCATTERPTX_SCATTERPTX_H */
