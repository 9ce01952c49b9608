/* The GEMV kernels (real_gemv_template.h) on scalars with a bfloat16 or float16 S read in place, each value widened
 * exactly as read (convert.h), x and y float: the portable path's few-row / few-column 16-bit products. */
#include "../kernel.h"
#include "../convert.h"

#define T float
#define GV_MANY_ROWS 1
#define GEMV_ROWS_FN gemv_rows_bf16_generic
#define GEMV_DOTS_FN gemv_dots_bf16_generic
#define GV_S_T uint16_t
#define GV_LOAD_S(p) gk_bf16_to_f32(*(p))
#define GV_S_VAL(v) gk_bf16_to_f32(v)
#include "real_gemv_template.h"
#undef GEMV_ROWS_FN
#undef GEMV_DOTS_FN

#define GV_MANY_ROWS 1
#define GEMV_ROWS_FN gemv_rows_f16_generic
#define GEMV_DOTS_FN gemv_dots_f16_generic
#define GV_S_T uint16_t
#define GV_LOAD_S(p) gk_f16_to_f32(*(p))
#define GV_S_VAL(v) gk_f16_to_f32(v)
#include "real_gemv_template.h"
#undef GEMV_ROWS_FN
#undef GEMV_DOTS_FN

const gk_half_gemv_t gk_half_gemv_generic = {gemv_rows_bf16_generic, gemv_dots_bf16_generic, gemv_rows_f16_generic,
                                             gemv_dots_f16_generic};
