/*
 * LLVM's spelling of demangled C++ names. libiberty (addr2line's demangler, and ours) and
 * LLVM's Itanium demangler agree except on a few constructs, which llvm-symbolizer users
 * see in LLVM's words:
 *   {lambda(int)#1}, {lambda(int)#2}   ->  'lambda'(int), 'lambda0'(int)
 *   {unnamed type#1}, #2               ->  'unnamed', 'unnamed0'
 *   f() [clone .isra.0] [clone .cold]  ->  f() (.isra.0.cold)
 * (LLVM numbers from the second instance, starting at 0; libiberty from 1.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/symbolize.h"

struct out {
	char *p, *end;
};

static void put(struct out *o, const char *s, size_t n)
{
	while (n-- && o->p < o->end)
		*o->p++ = *s++;
}

/* After "#N}": the LLVM suffix of instance N, "" for the first. */
static const char *instance(const char *s, char *num, size_t size)
{
	unsigned long n = strtoul(s, NULL, 10);
	if (n <= 1)
		num[0] = 0;
	else
		snprintf(num, size, "%lu", n - 2);
	return num;
}

static const char *rewrite(struct out *o, const char *s, const char *stop);

/* s at "{lambda(": writes 'lambdaK'(ARGS) and returns what follows "#N}", or NULL. */
static const char *lambda(struct out *o, const char *s)
{
	const char *args = s + strlen("{lambda"), *p = args;
	int depth = 0;
	do {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (!*p)
			return NULL;
		p++;
	} while (depth > 0);
	if (p[0] != '#')
		return NULL;
	const char *close = strchr(p, '}');
	if (!close)
		return NULL;
	char num[24];
	put(o, "'lambda", 7);
	instance(p + 1, num, sizeof(num));
	put(o, num, strlen(num));
	put(o, "'", 1);
	rewrite(o, args, p);
	return close + 1;
}

/* s at " [clone ": writes " (S1S2...)" for the run of clone suffixes and returns the rest,
 * or NULL (nothing written) when the first is not closed. */
static const char *clones(struct out *o, const char *s)
{
	if (!strchr(s + 8, ']'))
		return NULL;
	put(o, " (", 2);
	while (!strncmp(s, " [clone ", 8)) {
		const char *end = strchr(s + 8, ']');
		if (!end)
			break;
		put(o, s + 8, (size_t)(end - s - 8));
		s = end + 1;
	}
	put(o, ")", 1);
	return s;
}

static const char *rewrite(struct out *o, const char *s, const char *stop)
{
	while (s < stop && *s) {
		const char *next = NULL;
		if (!strncmp(s, "{lambda(", 8)) {
			next = lambda(o, s);
		} else if (!strncmp(s, "{unnamed type#", 14)) {
			const char *close = strchr(s, '}');
			char num[24];
			if (close) {
				put(o, "'unnamed", 8);
				instance(s + 14, num, sizeof(num));
				put(o, num, strlen(num));
				put(o, "'", 1);
				next = close + 1;
			}
		} else if (!strncmp(s, " [clone ", 8)) {
			next = clones(o, s);
		}
		if (next) {
			s = next;
			continue;
		}
		put(o, s++, 1);
	}
	return s;
}

const char *sym_llvm_spelling(const char *name, char *buf, size_t size)
{
	if (!name || size == 0 || (!strchr(name, '{') && !strstr(name, " [clone ")))
		return name;
	struct out o = { buf, buf + size - 1 };
	rewrite(&o, name, name + strlen(name));
	*o.p = 0;
	return o.p < o.end ? buf : name; /* too long for buf: keep libiberty's words */
}
