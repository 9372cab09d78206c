/*
 * Reads the listing the agent writes of an interpreter's functions (src/agent/listing.c),
 * laid out as objdump -dl lays out machine code: "START <NAME>:" opens a function,
 * "FILE:LINE" gives the source position of the instructions after it, "  PC:<TAB>TEXT" is
 * an instruction (hex numbers). Only the function asked for is taken; a line of it that is
 * none of these is an error, as are pcs that do not increase. The listing is hostile input:
 * every number is bounded and every line is read within the text.
 */
#include "report/annotate_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/err.h"

struct text_line {
	const char *s;
	size_t n;
};

/* Up to 16 hex digits at *s (advanced); false when there are none or too many. */
static bool hex_number(struct text_line *t, uint64_t *out)
{
	size_t i = 0;
	*out = 0;
	for (; i < t->n && i <= 16; i++) {
		char c = t->s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			break;
		*out = *out << 4 | (uint64_t)d;
	}
	if (!i || i > 16)
		return false;
	t->s += i;
	t->n -= i;
	return true;
}

static bool starts(const struct text_line *t, const char *prefix)
{
	size_t n = strlen(prefix);
	return t->n >= n && !memcmp(t->s, prefix, n);
}

/* Whether the listing's name (line breaks written as '_') is the profile's name. */
static bool same_name(const char *listed, size_t n, const char *name)
{
	size_t i = 0;
	for (; i < n && name[i]; i++)
		if (listed[i] != (name[i] == '\n' || name[i] == '\r' ? '_' : name[i]))
			return false;
	return i == n && !name[i];
}

/* "START <NAME>:": the start and name, or false for a line that is no function header. */
static bool header(struct text_line t, uint64_t *start, struct text_line *name)
{
	if (!hex_number(&t, start) || !starts(&t, " <") || t.n < 4 || memcmp(t.s + t.n - 2, ">:", 2))
		return false;
	name->s = t.s + 2;
	name->n = t.n - 4;
	return true;
}

/* "FILE:LINE", LINE decimal and not 0. */
static bool position(struct text_line t, struct text_line *file, uint32_t *line)
{
	const char *colon = NULL;
	for (size_t i = 0; i < t.n; i++)
		if (t.s[i] == ':')
			colon = t.s + i;
	if (!colon || colon == t.s || colon + 1 == t.s + t.n)
		return false;
	uint64_t v = 0;
	for (const char *c = colon + 1; c < t.s + t.n; c++) {
		if (*c < '0' || *c > '9' || (v = v * 10 + (uint64_t)(*c - '0')) > UINT32_MAX)
			return false;
	}
	*file = (struct text_line){ t.s, (size_t)(colon - t.s) };
	*line = (uint32_t)v;
	return v != 0;
}

/* "  PC:<TAB>TEXT". */
static bool instruction(struct text_line t, uint64_t *pc, struct text_line *text)
{
	while (t.n && (*t.s == ' ' || *t.s == '\t'))
		t.s++, t.n--;
	if (!hex_number(&t, pc) || !starts(&t, ":\t"))
		return false;
	*text = (struct text_line){ t.s + 2, t.n - 2 };
	return true;
}

/* Takes one instruction line of the function into l. */
static int take(struct annot_listing *l, const char *path, size_t lineno, struct text_line t,
		const char *file, uint32_t line)
{
	uint64_t pc;
	struct text_line text;
	if (!instruction(t, &pc, &text))
		return err_set(-EINVAL, "%s: line %zu: neither an instruction nor FILE:LINE", path,
			       lineno);
	bool first = !l->insns.n;
	if (pc == UINT64_MAX)
		return err_set(-EINVAL, "%s: line %zu: pc %#" PRIx64 " is out of range", path, lineno, pc);
	if (first ? pc < l->lo : pc <= l->insns.v[l->insns.n - 1].addr)
		return err_set(-EINVAL, "%s: line %zu: pc %#" PRIx64 " does not follow the one before",
			       path, lineno, pc);
	char *copy = arena_strndup(&l->arena, text.s, text.n);
	struct annot_insn *in = copy ? annot_add_insn(l, pc, 1, "") : NULL;
	if (!in)
		return err_set(-ENOMEM, "out of memory");
	in->text = copy;
	/* an instruction covers the pcs up to the next one (pcs may be byte offsets) */
	if (!first) {
		uint64_t size = pc - in[-1].addr;
		in[-1].size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	}
	in->file = file;
	in->line = line;
	l->hi = pc + 1;
	return 0;
}

/* The start of the function to take: of those named name, the last one starting at or
 * before pc (the one that holds it, as the listing is by pc), else the first; false when
 * none has the name. */
static bool pick(const char *text, size_t len, const char *name, uint64_t pc, uint64_t *start)
{
	bool found = false, holds = false;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		struct text_line t = { text + pos, (nl ? (size_t)(nl - text) : len) - pos }, s;
		uint64_t at;
		pos += t.n + 1;
		if (!header(t, &at, &s) || !same_name(s.s, s.n, name))
			continue;
		if (!found || (at <= pc && (!holds || at > *start)))
			*start = at;
		holds |= at <= pc;
		found = true;
	}
	return found;
}

int annot_bytecode_parse(const char *path, const char *text, size_t len, const char *name,
			 uint64_t pc, struct annot_listing *l)
{
	uint64_t start = 0;
	if (!pick(text, len, name, pc, &start))
		return err_set(-ENOENT, "%s: no function %s", path, name);
	bool inside = false;
	const char *file = NULL;
	uint32_t line = 0;
	size_t lineno = 0;
	l->lo = l->hi = start;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		struct text_line t = { text + pos, (nl ? (size_t)(nl - text) : len) - pos }, s;
		uint64_t at;
		pos += t.n + 1;
		lineno++;
		if (!t.n)
			continue;
		if (header(t, &at, &s)) {
			if (inside)
				break;
			inside = at == start && same_name(s.s, s.n, name);
			continue;
		}
		if (!inside)
			continue;
		if (*t.s != ' ' && *t.s != '\t' && position(t, &s, &line)) {
			if (!(file = arena_strndup(&l->arena, s.s, s.n)))
				return err_set(-ENOMEM, "out of memory");
			l->has_source = true;
			continue;
		}
		int rc = take(l, path, lineno, t, file, line);
		if (rc)
			return rc;
	}
	return 0;
}
