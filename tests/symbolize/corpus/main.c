/*
 * Symbolizer corpus, main program: chains of static inline functions several deep,
 * always_inline wrappers around noinline leaves, direct and mutual recursion, and functions
 * whose error paths gcc moves into separate .cold parts (unlikely branches ending in cold
 * noreturn calls). Never run by the tests: only its machine code and DWARF matter, so every
 * input comes from argv or volatile data to keep the optimizer from folding it away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "util.h"

volatile int sink;

struct shape {
	int kind;
	int w, h;
	const char *name;
};

/* A static inline chain four levels deep: each level adds a frame at -O2 and -O3. */
static inline int chain_d(int x)
{
	int r = x;
	for (int i = 0; i < (x & 7); i++)
		r = r * 3 + i;
	return r;
}

static inline int chain_c(int x)
{
	return chain_d(x + 1) ^ chain_d(x >> 1);
}

static inline int chain_b(int x)
{
	int a = chain_c(x);
	if (a & 1)
		a += chain_c(a & 0xff);
	return a;
}

static inline int chain_a(int x)
{
	return chain_b(x) + scaled(x, 3);
}

/* always_inline calling noinline: the leaf keeps its own frame inside the inlined caller. */
static NOINLINE int leaf_work(int x)
{
	sink = x;
	return x * 7 + sink;
}

static ALWAYS_INLINE int wrap_leaf(int x)
{
	int r = leaf_work(x);
	return r + leaf_work(r & 0xf);
}

static ALWAYS_INLINE int wrap_wrap(int x)
{
	return wrap_leaf(x) - wrap_leaf(x >> 2);
}

/* Recursion: direct, mutual, and a tree walk with an inlined visitor. */
static NOINLINE unsigned fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int is_odd(unsigned n);

static NOINLINE int is_even(unsigned n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

static NOINLINE int is_odd(unsigned n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

struct node {
	struct node *left, *right;
	int value;
};

static inline int visit(const struct node *n, int depth)
{
	return n->value * depth + clamp_int(depth, 0, 5);
}

static int walk(const struct node *n, int depth)
{
	if (!n)
		return 0;
	return visit(n, depth) + walk(n->left, depth + 1) + walk(n->right, depth + 1);
}

/* Hot/cold splitting: gcc -O2 moves the unlikely branches into main_checked.cold etc. */
static __attribute__((cold, noreturn, noinline)) void die(const char *what, int code)
{
	fprintf(stderr, "corpus: %s (%d)\n", what, code);
	exit(2);
}

static NOINLINE int checked_div(int a, int b)
{
	if (unlikely(b == 0))
		die("division by zero", a);
	if (unlikely(a == -2147483647 - 1 && b == -1)) {
		fprintf(stderr, "corpus: overflow dividing %d by %d\n", a, b);
		abort();
	}
	return a / b;
}

static NOINLINE int parse_level(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (unlikely(*end != '\0')) {
		fprintf(stderr, "corpus: not a number: %s\n", s);
		fprintf(stderr, "corpus: stopped at '%c' after %ld\n", *end, v);
		exit(2);
	}
	if (unlikely(v < 0 || v > 30))
		die("level out of range", (int)v);
	return (int)v;
}

/* A whole function marked cold: placed in .text.unlikely, far from its callers. */
static __attribute__((cold, noinline)) int rare_fixup(int x)
{
	int r = 0;
	for (int i = 0; i < x; i++)
		r += scaled(i, x);
	return r;
}

static NOINLINE int area(const struct shape *s)
{
	switch (s->kind) {
	case 0:
		return s->w * s->h;
	case 1:
		return s->w * s->h / 2;
	case 2:
		return 3 * s->w * s->w;
	case 3:
		return chain_c(s->w) + s->h;
	case 4:
		return wrap_leaf(s->w * s->h);
	default:
		if (unlikely(s->kind > 100))
			return rare_fixup(s->kind);
		return -1;
	}
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static NOINLINE int sort_and_sum(int *v, size_t n)
{
	qsort(v, n, sizeof *v, by_value);
	int s = 0;
	for (size_t i = 0; i < n; i++)
		s += scaled(v[i], (int)i + 1);
	return s;
}

int main(int argc, char **argv)
{
	int level = argc > 1 ? parse_level(argv[1]) : 5;
	int total = chain_a(level) + wrap_wrap(level);

	total += (int)fib((unsigned)level);
	total += is_even((unsigned)level * 3);

	struct node leaves[3] = { { 0, 0, level }, { 0, 0, level * 2 }, { 0, 0, 3 } };
	struct node root = { &leaves[0], &leaves[1], 1 };
	leaves[1].left = &leaves[2];
	total += walk(&root, 0);

	struct shape shapes[] = { { 0, level, 2, "rect" }, { 1, 3, level, "tri" },
				  { 2, level, 0, "hex" }, { 3, level, 1, "odd" },
				  { 4, 2, level, "leaf" }, { argc * 200, 1, 1, "rare" } };
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		total += area(&shapes[i]);

	int values[16];
	for (int i = 0; i < 16; i++)
		values[i] = (i * 7919 + level) % 31;
	total += sort_and_sum(values, 16);
	total += checked_div(total, argc - 1 + level);

	total += util_checksum(argv[0], strlen(argv[0]));
	total += util_matrix(level);
	printf("%d\n", total);
	return 0;
}
