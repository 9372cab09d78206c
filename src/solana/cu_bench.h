/*
 * Compute-unit benchmark tables in the markdown layout of Mollusk's bencher
 * (mollusk-svm-bencher, its compute_units.md), which Solana projects commit and review:
 *
 *   #### 2025-08-28 10:58:36.299232 UTC
 *
 *   Solana CLI Version: ...
 *
 *   | Name | CUs | Delta |
 *   |------|------|-------|
 *   | create | 3223 | +1 |
 *   | transfer | 4645 | -- |
 *   | close | 2906 | - new - |
 *
 * Each run's table goes before the previous ones, so the first table of a file is the
 * newest: that is the one read back. Delta is the change from that table ("--" none,
 * "- new -" a row it lacked), with thousands separators ("+2,361", "-1,355").
 */
#ifndef TALLY_SOLANA_CU_BENCH_H
#define TALLY_SOLANA_CU_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sol_bench_row {
	char *name;
	uint64_t cu;
};

/* Ownership: the rows and their names. */
struct sol_bench {
	struct sol_bench_row *rows;
	size_t n, cap;
};

/* The newest table of a bench file's text (its first `| Name | CUs | Delta |` table), its
 * rows sorted by name. Text holding only whitespace has no table: 0 rows. 0, or -EINVAL
 * with the message "PATH: line N: what" (also for text with no such table, a row that is
 * not a name, a count of CU and a delta, and a name given twice), or -ENOMEM. */
int sol_bench_parse(const char *path, const char *text, size_t len, struct sol_bench *out);

/* Appends a row: 0, -ENOMEM, or -EINVAL with the message set for a name that cannot be a
 * table cell (empty, with `|`, a control character or white space at either end). */
int sol_bench_add(struct sol_bench *b, const char *name, uint64_t cu);

/* The row of that name in a table sol_bench_parse made (sorted), or NULL. */
const struct sol_bench_row *sol_bench_find(const struct sol_bench *sorted, const char *name);

void sol_bench_free(struct sol_bench *b);

/* Whether now differs from prev (NULL: no previous table): a CU changed, a row came or went. */
bool sol_bench_changed(const struct sol_bench *now, const struct sol_bench *prev);

/* Writes now as a table headed by the date and version lines, each row's delta against
 * prev (sorted; NULL: every row new), followed by an empty line. */
void sol_bench_write(FILE *f, const char *date, const char *version,
		     const struct sol_bench *now, const struct sol_bench *prev);

/* How much a row's CU may grow: an absolute count, or a percentage of the previous CU. */
struct sol_bench_threshold {
	uint64_t value;
	bool percent;
};

/* "N" (CU) or "N%": 0, or -EINVAL with the message set. */
int sol_bench_threshold_parse(const char *s, struct sol_bench_threshold *out);

/* Whether going from prev to now CU grows past the threshold. */
bool sol_bench_exceeds(const struct sol_bench_threshold *t, uint64_t prev, uint64_t now);

#endif
