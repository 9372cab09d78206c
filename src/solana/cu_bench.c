/*
 * Mollusk's compute_units.md tables (cu_bench.h): read back the newest, write the next.
 */
#include "solana/cu_bench.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

enum { CELLS = 3 }; /* Name, CUs, Delta */

/* One cell of a table row: [p, p + len), its spaces trimmed. */
struct cell {
	const char *p;
	size_t len;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static void trim(const char **p, size_t *len)
{
	while (*len && is_space(**p))
		(*p)++, (*len)--;
	while (*len && is_space((*p)[*len - 1]))
		(*len)--;
}

/* Whether the line is a table row ("| a | b | c |"), and if so its cells (more than CELLS
 * counts as CELLS + 1, for the message). */
static bool split_row(const char *line, size_t len, struct cell *cells, size_t *ncells)
{
	trim(&line, &len);
	if (len < 2 || line[0] != '|' || line[len - 1] != '|')
		return false;
	*ncells = 0;
	const char *p = line + 1, *end = line + len - 1;
	while (p <= end && *ncells <= CELLS) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		const char *stop = bar ? bar : end;
		struct cell c = { p, (size_t)(stop - p) };
		trim(&c.p, &c.len);
		if (*ncells < CELLS)
			cells[*ncells] = c;
		(*ncells)++;
		p = stop + 1;
	}
	return true;
}

static bool cell_is(const struct cell *c, const char *s)
{
	return c->len == strlen(s) && !memcmp(c->p, s, c->len);
}

static bool is_header(const struct cell *c, size_t n)
{
	return n == CELLS && cell_is(&c[0], "Name") && cell_is(&c[1], "CUs") &&
	       cell_is(&c[2], "Delta");
}

/* "---", ":--", "--:": the row under a markdown table's header. */
static bool is_rule(const struct cell *c)
{
	size_t start = c->len && c->p[0] == ':' ? 1 : 0;
	size_t end = c->len && c->p[c->len - 1] == ':' ? c->len - 1 : c->len;
	if (start >= end)
		return false;
	for (size_t i = start; i < end; i++)
		if (c->p[i] != '-')
			return false;
	return true;
}

/* Digits with optional thousands separators ("4645", "1,204"): true and *out, or false for
 * anything else or a count past 2^64 - 1. */
static bool parse_count(const char *p, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t digits = 0;
	for (size_t i = 0; i < len; i++) {
		if (p[i] == ',' && digits && i + 1 < len)
			continue;
		if (p[i] < '0' || p[i] > '9')
			return false;
		unsigned d = (unsigned)(p[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		digits++;
	}
	*out = v;
	return digits > 0;
}

static bool is_delta(const struct cell *c)
{
	uint64_t v;
	if (cell_is(c, "--") || cell_is(c, "- new -"))
		return true;
	return c->len > 1 && (c->p[0] == '+' || c->p[0] == '-') &&
	       parse_count(c->p + 1, c->len - 1, &v);
}

static bool bad_name_char(unsigned char c)
{
	return c == '|' || c < 0x20 || c == 0x7f;
}

static int check_name(const char *name, size_t len)
{
	if (!len || is_space(name[0]) || is_space(name[len - 1]))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (bad_name_char((unsigned char)name[i]))
			return -EINVAL;
	return 0;
}

static int push_row(struct sol_bench *b, const char *name, size_t len, uint64_t cu)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct sol_bench_row *rows = realloc(b->rows, cap * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		b->rows = rows;
		b->cap = cap;
	}
	char *copy = strndup(name, len);
	if (!copy)
		return -ENOMEM;
	b->rows[b->n++] = (struct sol_bench_row){ copy, cu };
	return 0;
}

int sol_bench_add(struct sol_bench *b, const char *name, uint64_t cu)
{
	size_t len = strlen(name);
	if (check_name(name, len))
		return err_set(-EINVAL, "%s: a name a table row cannot hold (empty, with `|`, a "
				"control character or spaces at either end)", name);
	return push_row(b, name, len, cu) ? err_set(-ENOMEM, "out of memory") : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sol_bench_row *)a)->name,
		      ((const struct sol_bench_row *)b)->name);
}

const struct sol_bench_row *sol_bench_find(const struct sol_bench *sorted, const char *name)
{
	struct sol_bench_row key = { .name = (char *)name };
	return sorted->n ? bsearch(&key, sorted->rows, sorted->n, sizeof(key), by_name) : NULL;
}

void sol_bench_free(struct sol_bench *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->rows[i].name);
	free(b->rows);
	memset(b, 0, sizeof(*b));
}

/* What the parser is reading: text before the table, the rule under its header, its rows. */
enum state { BEFORE, RULE, ROWS };

/* 0 for a line read, 1 for the first line after the rows (the table ended), or a
 * negative code with the message set. */
static int parse_line(const char *path, unsigned long lineno, const char *line, size_t len,
		      enum state *st, struct sol_bench *out)
{
	struct cell c[CELLS];
	size_t n = 0;
	bool row = split_row(line, len, c, &n);
	switch (*st) {
	case BEFORE:
		if (row && is_header(c, n))
			*st = RULE;
		return 0;
	case RULE:
		if (!row || n != CELLS || !is_rule(&c[0]) || !is_rule(&c[1]) || !is_rule(&c[2]))
			return err_set(-EINVAL, "%s: line %lu: expected |---|---|---| under the "
					"table's header", path, lineno);
		*st = ROWS;
		return 0;
	case ROWS:
		if (!row)
			return 1;
		break;
	}
	uint64_t cu;
	if (n != CELLS)
		return err_set(-EINVAL, "%s: line %lu: a row has %s cells, not 3 (Name, CUs, "
				"Delta)", path, lineno, n > CELLS ? "more" : "fewer");
	if (check_name(c[0].p, c[0].len))
		return err_set(-EINVAL, "%s: line %lu: a row without a name", path, lineno);
	if (!parse_count(c[1].p, c[1].len, &cu))
		return err_set(-EINVAL, "%s: line %lu: CUs is not a count", path, lineno);
	if (!is_delta(&c[2]))
		return err_set(-EINVAL, "%s: line %lu: Delta is not --, - new -, +N or -N",
			       path, lineno);
	return push_row(out, c[0].p, c[0].len, cu) ? err_set(-ENOMEM, "out of memory") : 0;
}

static bool only_space(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_space(text[i]) && text[i] != '\n' && text[i] != '\r')
			return false;
	return true;
}

/* After a parse, the sorted rows must hold each name once. */
static int check_unique(const char *path, const struct sol_bench *b)
{
	for (size_t i = 1; i < b->n; i++)
		if (!strcmp(b->rows[i - 1].name, b->rows[i].name))
			return err_set(-EINVAL, "%s: the newest table lists %s twice", path,
				       b->rows[i].name);
	return 0;
}

int sol_bench_parse(const char *path, const char *text, size_t len, struct sol_bench *out)
{
	memset(out, 0, sizeof(*out));
	if (only_space(text, len))
		return 0;
	if (memchr(text, '\0', len))
		return err_set(-EINVAL, "%s: a NUL byte: not a markdown file", path);
	enum state st = BEFORE;
	unsigned long lineno = 0;
	int rc = 0;
	for (size_t at = 0; at < len && rc == 0;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - at;
		lineno++;
		if (n && text[at + n - 1] == '\r')
			n--;
		rc = parse_line(path, lineno, text + at, n, &st, out);
		at = end + 1;
	}
	if (rc > 0)
		rc = 0;
	if (!rc && st == BEFORE)
		rc = err_set(-EINVAL, "%s: no `| Name | CUs | Delta |` table", path);
	if (!rc && st == RULE)
		rc = err_set(-EINVAL, "%s: the table ends after its header", path);
	if (!rc && out->n)
		qsort(out->rows, out->n, sizeof(*out->rows), by_name);
	if (!rc)
		rc = check_unique(path, out);
	if (rc)
		sol_bench_free(out);
	return rc;
}

bool sol_bench_changed(const struct sol_bench *now, const struct sol_bench *prev)
{
	if (!prev || prev->n != now->n)
		return true;
	for (size_t i = 0; i < now->n; i++) {
		const struct sol_bench_row *was = sol_bench_find(prev, now->rows[i].name);
		if (!was || was->cu != now->rows[i].cu)
			return true;
	}
	return false;
}

/* "1,355": v with a comma every three digits, as Mollusk's deltas are written. */
static void print_grouped(FILE *f, uint64_t v)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			fputc(',', f);
		fputc(digits[i], f);
	}
}

static void print_delta(FILE *f, const struct sol_bench_row *was, uint64_t cu)
{
	if (!was) {
		fputs("- new -", f);
	} else if (was->cu == cu) {
		fputs("--", f);
	} else {
		fputc(cu > was->cu ? '+' : '-', f);
		print_grouped(f, cu > was->cu ? cu - was->cu : was->cu - cu);
	}
}

void sol_bench_write(FILE *f, const char *date, const char *version,
		     const struct sol_bench *now, const struct sol_bench *prev)
{
	fprintf(f, "#### %s\n\nSolana CLI Version: %s\n\n| Name | CUs | Delta |\n"
		   "|------|------|-------|\n", date, version);
	for (size_t i = 0; i < now->n; i++) {
		const struct sol_bench_row *r = &now->rows[i];
		fprintf(f, "| %s | %" PRIu64 " | ", r->name, r->cu);
		print_delta(f, prev ? sol_bench_find(prev, r->name) : NULL, r->cu);
		fputs(" |\n", f);
	}
	fputc('\n', f);
}

int sol_bench_threshold_parse(const char *s, struct sol_bench_threshold *out)
{
	size_t len = strlen(s);
	out->percent = len && s[len - 1] == '%';
	if (!parse_count(s, len - out->percent, &out->value) || strchr(s, ','))
		return err_set(-EINVAL, "--bench-threshold %s: expected N (CU) or N%%", s);
	return 0;
}

bool sol_bench_exceeds(const struct sol_bench_threshold *t, uint64_t prev, uint64_t now)
{
	if (now <= prev)
		return false;
	uint64_t growth = now - prev;
	if (!t->percent)
		return growth > t->value;
	/* growth / prev > value / 100, without the products overflowing */
	return (unsigned __int128)growth * 100 > (unsigned __int128)t->value * prev;
}
