/* The traversal shared by the dot-product paths (few rows of A against a transposed B): columns in
 * groups of 4 (then singly) outer, rows in groups of up to 4 inner, so 4 rows of B stream once. */
#ifndef GEMMKIT_DOT_WALK_H
#define GEMMKIT_DOT_WALK_H

/* BLOCK(mm, nj) must expand to `case mm: <the mm x nj block at rows i, columns j>; break;` with
 * constant mm (1..4) and nj (4 or 1); i and j are in scope. */
#define GK_DOT_WALK(m, n, BLOCK)                                                                     \
    do {                                                                                             \
        int64_t j = 0;                                                                               \
        for (; j + 4 <= (n); j += 4)                                                                 \
            for (int64_t i = 0; i < (m); i += 4) switch (GK_MIN((int64_t)4, (m) - i)) {              \
                BLOCK(1, 4) BLOCK(2, 4) BLOCK(3, 4) BLOCK(4, 4)                                      \
            }                                                                                        \
        for (; j < (n); j++)                                                                         \
            for (int64_t i = 0; i < (m); i += 4) switch (GK_MIN((int64_t)4, (m) - i)) {              \
                BLOCK(1, 1) BLOCK(2, 1) BLOCK(3, 1) BLOCK(4, 1)                                      \
            }                                                                                        \
    } while (0)

#endif /* GEMMKIT_DOT_WALK_H */
