/* Complex packing for the 1m method (Van Zee and Smith, SIAM J. Sci. Comput. 2020): op(A) and op(B)
 * become real panels such that the real microkernels compute the complex product (see pack.h). */
#include <string.h>
#include "pack.h"

#define GK_CAT_(a, b) a##b
#define GK_CAT(a, b) GK_CAT_(a, b)

#define T float
#define SFX f32
#include "pack_complex_template.h"
#undef T
#undef SFX

#define T double
#define SFX f64
#include "pack_complex_template.h"
#undef T
#undef SFX
