/*
 * Every arity of TALLY_TRACEPOINT, 0 to 12, with arguments of many types, and
 * TALLY_TRACEPOINT_ACTIVE. Compiled as C99/C11/C17/C23 and C++11/17/20 by gcc and clang with
 * strict warnings (trace.test.sh). Run with nothing attached, it checks that no argument
 * was evaluated; with -DTALLY_NO_TRACEPOINTS, the same. Valid C and C++ alike.
 */
#include <stdio.h>

#include <tally/trace.h>

static int evaluations;

static int side(int v)
{
	evaluations++;
	return v;
}

enum colour { RED, GREEN };
struct pair {
	int a;
	long b;
};

static void fire_all(const char *s, struct pair *p, double d, unsigned char u)
{
	long arr[3] = { 1, 2, 3 };
	enum colour c = GREEN;
	float f = 0.5f;
	TALLY_TRACEPOINT(arity, a0);
	TALLY_TRACEPOINT(arity, a1, side(1));
	TALLY_TRACEPOINT(arity, a2, side(1), s);
	TALLY_TRACEPOINT(arity, a3, side(1), s, p->b);
	TALLY_TRACEPOINT(arity, a4, side(1), s, p->b, d);
	TALLY_TRACEPOINT(arity, a5, side(1), s, p->b, d, u);
	TALLY_TRACEPOINT(arity, a6, side(1), s, p->b, d, u, arr);
	TALLY_TRACEPOINT(arity, a7, side(1), s, p->b, d, u, arr, c);
	TALLY_TRACEPOINT(arity, a8, side(1), s, p->b, d, u, arr, c, 42);
	TALLY_TRACEPOINT(arity, a9, side(1), s, p->b, d, u, arr, c, 42, &p->a);
	TALLY_TRACEPOINT(arity, a10, side(1), s, p->b, d, u, arr, c, 42, &p->a, side(2) + 1);
	TALLY_TRACEPOINT(arity, a11, side(1), s, p->b, d, u, arr, c, 42, &p->a, side(2), f);
	TALLY_TRACEPOINT(arity, a12, side(1), s, p->b, d, u, arr, c, 42, &p->a, side(2), f,
			 side(3));
	if (TALLY_TRACEPOINT_ACTIVE(arity, a12))
		side(4);
	if (TALLY_TRACEPOINT_ACTIVE(arity, guarded)) {
		int costly = side(5);
		TALLY_TRACEPOINT(arity, guarded, costly);
	}
}

/* A probe inside a C++ namespace still names the one global semaphore. */
#ifdef __cplusplus
namespace arity_ns {
#endif
static void in_namespace(int v)
{
	TALLY_TRACEPOINT(arity, a1, side(v));
}
#ifdef __cplusplus
}
#define NS arity_ns::
#else
#define NS
#endif

int main(void)
{
	struct pair p = { 1, 2 };
	fire_all("x", &p, 1.5, 200);
	NS in_namespace(7);
	if (evaluations) {
		printf("%d probe arguments evaluated with nothing attached\n", evaluations);
		return 1;
	}
	return 0;
}
