/* The row-count int8 microkernels shared by the 256- and 512-bit templates: <kernel>_r<m> sums only the first
 * m (1 <= m < MR) rows of a full-width tile and finishes them; <kernel>_rows[m] is the kernel table's entry. */
/* Included at the end of a template, after int8_tile_sums_rows and the template's <kernel>_finish(m, ...). */
#define I8_DEFINE_ROWS(mm)                                                                           \
    static void I8_PASTE(I8_KERNEL_NAME, _r##mm)(int64_t kgroups, const void *GK_RESTRICT av,        \
                                                 const void *GK_RESTRICT bv, int32_t *GK_RESTRICT s, \
                                                 int accumulate, void *GK_RESTRICT c, int64_t ldc,    \
                                                 const gk_int8_epilogue_t *ep) {                       \
        int8_tile_sums_rows(mm, kgroups, (const uint8_t *)av, (const uint8_t *)bv, s, accumulate);     \
        if (ep != NULL) I8_PASTE(I8_KERNEL_NAME, _finish)(mm, s, c, ldc, ep);                        \
    }
INT8_PARTIAL_ROWS(I8_DEFINE_ROWS)

#define INT8_ROW_ENTRY(mm) I8_PASTE(I8_KERNEL_NAME, _r##mm),
static const gk_int8_ukernel_fn I8_PASTE(I8_KERNEL_NAME, _rows)[MR] = {NULL, INT8_PARTIAL_ROWS(INT8_ROW_ENTRY)};
