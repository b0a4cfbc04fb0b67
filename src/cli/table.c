/* table.c - kubectl-like tables (table.h). */
#include "cli/table.h"

#include <stdarg.h>
#include <string.h>

#include "common/mu.h"

void mu_table_init(struct mu_table *t, int ncols)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols < 1 ? 1 : ncols > MU_TABLE_MAX_COLS ? MU_TABLE_MAX_COLS
                                                         : ncols;
}

void mu_table_add(struct mu_table *t, ...)
{
    va_list ap;

    mu_xgrow((void **)&t->cells, &t->cap, (t->nrows + 1) * (size_t)t->ncols,
             sizeof(*t->cells));
    va_start(ap, t);
    for (int i = 0; i < t->ncols; i++) {
        const char *c = va_arg(ap, const char *);

        t->cells[t->nrows * (size_t)t->ncols + (size_t)i] =
            mu_xstrdup(c ? c : "-");
    }
    va_end(ap);
    t->nrows++;
}

void mu_table_print(const struct mu_table *t, FILE *f)
{
    size_t w[MU_TABLE_MAX_COLS] = {0};

    for (size_t r = 0; r < t->nrows; r++)
        for (int i = 0; i < t->ncols; i++) {
            size_t n = strlen(t->cells[r * (size_t)t->ncols + (size_t)i]);

            if (n > w[i])
                w[i] = n;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (int i = 0; i < t->ncols; i++) {
            const char *c = t->cells[r * (size_t)t->ncols + (size_t)i];

            if (i + 1 < t->ncols)
                fprintf(f, "%-*s  ", (int)w[i], c);
            else
                fprintf(f, "%s\n", c);
        }
    }
}

void mu_table_release(struct mu_table *t)
{
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}
