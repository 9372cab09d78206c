/*
 * The CU table of `tally sbpf test --bench` (sbpf_bench.h).
 */
#include "cli/sbpf_bench.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/atomic_file.h"
#include "base/err.h"
#include "base/file.h"
#include "cli/cli.h"
#include "tally/tally.h"

int cli_sbpf_bench_open(struct cli_sbpf_bench *b, const char *path,
		    const struct sol_bench_threshold *threshold)
{
	memset(b, 0, sizeof(*b));
	b->path = path;
	b->threshold = *threshold;
	int rc = file_read(path, &b->old, &b->old_len);
	if (rc == -ENOENT) {
		err_clear();
		return 0;
	}
	if (rc)
		return rc;
	return sol_bench_parse(path, (const char *)b->old, b->old_len, &b->prev);
}

int cli_sbpf_bench_record(struct cli_sbpf_bench *b, const char *name, uint64_t cu)
{
	return sol_bench_add(&b->now, name, cu);
}

void cli_sbpf_bench_free(struct cli_sbpf_bench *b)
{
	sol_bench_free(&b->prev);
	sol_bench_free(&b->now);
	free(b->old);
	b->old = NULL;
}

static void print_limit(FILE *f, const struct sol_bench_threshold *t)
{
	fprintf(f, "%" PRIu64 "%s", t->value, t->percent ? "%" : " CU");
}

/* One line per row whose CU grew past the threshold; how many there were. */
static size_t report_growth(const struct cli_sbpf_bench *b)
{
	size_t grew = 0;
	for (size_t i = 0; i < b->now.n; i++) {
		const struct sol_bench_row *r = &b->now.rows[i];
		const struct sol_bench_row *was = sol_bench_find(&b->prev, r->name);
		if (!was || !sol_bench_exceeds(&b->threshold, was->cu, r->cu))
			continue;
		fprintf(stderr, "tally: %s: %s: %" PRIu64 " CU, was %" PRIu64 " (+%" PRIu64,
			b->path, r->name, r->cu, was->cu, r->cu - was->cu);
		if (was->cu)
			fprintf(stderr, ", +%.2f%%", (double)(r->cu - was->cu) * 100 / (double)was->cu);
		fputs("): past --bench-threshold ", stderr);
		print_limit(stderr, &b->threshold);
		fputc('\n', stderr);
		grew++;
	}
	return grew;
}

static void report_removed(const struct cli_sbpf_bench *b)
{
	for (size_t i = 0; i < b->prev.n; i++) {
		const struct sol_bench_row *r = &b->prev.rows[i];
		bool kept = false;
		for (size_t j = 0; j < b->now.n && !kept; j++)
			kept = !strcmp(b->now.rows[j].name, r->name);
		if (!kept)
			printf("%s: %s is no longer benched (was %" PRIu64 " CU)\n", b->path,
			       r->name, r->cu);
	}
}

/* "2025-08-28 10:58:36.299232 UTC", as Mollusk dates its tables. */
static void format_now(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%06ld UTC", ts.tv_nsec / 1000);
}

static int write_table(const struct cli_sbpf_bench *b)
{
	struct afile *a;
	char date[64];
	if (afile_open(b->path, 0, &a))
		return -1;
	FILE *f = afile_stream(a);
	if (!f) {
		afile_abort(a);
		return -1;
	}
	format_now(date, sizeof(date));
	sol_bench_write(f, date, "tally " TALLY_VERSION " (tally's runtime)", &b->now,
			b->old ? &b->prev : NULL);
	if (b->old_len)
		fwrite(b->old, 1, b->old_len, f);
	return afile_commit(a);
}

int cli_sbpf_bench_finish(struct cli_sbpf_bench *b)
{
	const struct sol_bench *prev = b->old ? &b->prev : NULL;
	if (prev && report_growth(b))
		return CLI_FAIL;
	if (prev)
		report_removed(b);
	if (!sol_bench_changed(&b->now, prev)) {
		printf("%s: no CU changed\n", b->path);
		return CLI_OK;
	}
	if (write_table(b))
		return cli_fail_err();
	printf("%s: %zu fixtures benched\n", b->path, b->now.n);
	return CLI_OK;
}
