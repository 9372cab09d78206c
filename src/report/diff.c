/*
 * The per-function diff table: from the diff model (prof_diff: frames matched by name,
 * module, file and kind), each function's self and total weight before and after, the
 * change, and the relative change; sorted by the absolute change of self weight, then of
 * total weight, then by name, so the biggest movers come first and ties are stable.
 */
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "base/err.h"
#include "profile/profile.h"

struct row {
	size_t i;
	int64_t dself, dtotal;
};

static int64_t mag(int64_t v)
{
	return v < 0 ? -v : v;
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (mag(x->dself) != mag(y->dself))
		return mag(x->dself) > mag(y->dself) ? -1 : 1;
	if (mag(x->dtotal) != mag(y->dtotal))
		return mag(x->dtotal) > mag(y->dtotal) ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* "+12.5%", "new" or "gone": the relative change, right-aligned in width columns. */
static void relative(FILE *f, int width, int64_t before, int64_t after)
{
	char buf[32];
	if (before == after)
		snprintf(buf, sizeof(buf), "0%%");
	else if (!before)
		snprintf(buf, sizeof(buf), "new");
	else if (!after)
		snprintf(buf, sizeof(buf), "gone");
	else
		snprintf(buf, sizeof(buf), "%+.1f%%", 100.0 * (double)(after - before) / (double)mag(before));
	fprintf(f, "%*s", width, buf);
}

static void print_row(FILE *f, const struct prof *d, const struct prof_funcs *fs, size_t i)
{
	const int64_t *s = fs->self + i * 2, *t = fs->total + i * 2;
	fprintf(f, "%12" PRId64 " %12" PRId64 " %+12" PRId64 " ", s[PROF_DIFF_BEFORE],
		s[PROF_DIFF_AFTER], s[PROF_DIFF_AFTER] - s[PROF_DIFF_BEFORE]);
	relative(f, 8, s[PROF_DIFF_BEFORE], s[PROF_DIFF_AFTER]);
	fprintf(f, " %12" PRId64 " %12" PRId64 " %+12" PRId64 " ", t[PROF_DIFF_BEFORE],
		t[PROF_DIFF_AFTER], t[PROF_DIFF_AFTER] - t[PROF_DIFF_BEFORE]);
	relative(f, 8, t[PROF_DIFF_BEFORE], t[PROF_DIFF_AFTER]);
	const struct prof_frame *fr = prof_frame_at(d, fs->frame[i]);
	fprintf(f, "  %s", prof_frame_label(d, fs->frame[i]));
	if (fr->kind != PROF_NATIVE && fr->kind != PROF_TRUNCATED)
		fprintf(f, " [%s]", prof_kind_name(fr->kind));
	fputc('\n', f);
}

static int table(FILE *f, const struct prof *d, const struct rep_diff_opts *o)
{
	struct prof_funcs fs;
	int rc = prof_func_stats(d, &fs);
	if (rc)
		return rc;
	struct row *rows = malloc((fs.n ? fs.n : 1) * sizeof(*rows));
	if (!rows) {
		prof_funcs_free(&fs);
		return err_set(-ENOMEM, "out of memory");
	}
	size_t n = 0;
	for (size_t i = 0; i < fs.n; i++) {
		struct row r = { i, fs.self[i * 2 + 1] - fs.self[i * 2],
				 fs.total[i * 2 + 1] - fs.total[i * 2] };
		if (r.dself || r.dtotal)
			rows[n++] = r;
	}
	qsort(rows, n, sizeof(*rows), row_cmp);
	fprintf(f, "%12s %12s %12s %8s %12s %12s %12s %8s  %s\n", "self before", "self after",
		"self change", "", "total before", "total after", "total change", "", "function");
	for (size_t r = 0; r < n && (!o->top || r < o->top); r++)
		print_row(f, d, &fs, rows[r].i);
	if (!n)
		fputs("(no function changed)\n", f);
	free(rows);
	prof_funcs_free(&fs);
	return 0;
}

int rep_diff(FILE *f, const struct prof *before, const struct prof *after,
	     const struct rep_diff_opts *o)
{
	struct prof *d;
	int rc = prof_diff(before, o->metric_before, after, o->metric_after, &d);
	if (rc)
		return rc;
	int64_t total[2];
	prof_grand_total(d, total);
	const struct prof_metric *m = prof_metric(d, PROF_DIFF_AFTER);
	const char *bs = prof_info(before)->source, *as = prof_info(after)->source;
	fprintf(f, "before:   %s: %" PRId64 "\nafter:    %s: %" PRId64 " (%+" PRId64 ", ",
		bs ? bs : "(unknown)", total[0], as ? as : "(unknown)", total[1],
		total[1] - total[0]);
	relative(f, 0, total[0], total[1]);
	fprintf(f, ")\nmetric:   %s/%s\n\n", prof_str(d, m->type) + 6, prof_str(d, m->unit));
	rc = table(f, d, o);
	prof_free(d);
	if (!rc && ferror(f))
		rc = err_set(-EIO, "write error");
	return rc;
}
