/*
 * table.h - kubectl-like tables: a header row, then rows, columns padded
 * to their widest cell with two spaces between, the last column unpadded.
 *
 * Ownership: the table copies every cell; mu_table_release frees them.
 * Allocation failures abort (mu_x*). Threads: one table, one thread.
 */
#ifndef MU_CLI_TABLE_H
#define MU_CLI_TABLE_H

#include <stddef.h>
#include <stdio.h>

/* Most columns a table has. */
#define MU_TABLE_MAX_COLS 16

struct mu_table {
    int ncols;
    size_t nrows, cap;
    char **cells; /* nrows * ncols, row-major */
};

/* ncols in 1..MU_TABLE_MAX_COLS. */
void mu_table_init(struct mu_table *t, int ncols);
/* Appends a row of exactly t->ncols cells (NULL prints as "-"); the first
 * row is the header. */
void mu_table_add(struct mu_table *t, ...);
void mu_table_print(const struct mu_table *t, FILE *f);
void mu_table_release(struct mu_table *t);

#endif
