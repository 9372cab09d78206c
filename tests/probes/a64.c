/*
 * Probes compiled for aarch64 (clang --target=aarch64-linux-gnu -c, no system headers) so
 * that `tally probes list` decodes real aarch64 argument operands: registers, stack and
 * register-relative memory, constants.
 */
#include <tally/trace.h>

struct rec {
	long id;
	int vals[8];
	double w;
};

void a64_probes(long x, int y, struct rec *r, double d, unsigned char c, short s);

void a64_probes(long x, int y, struct rec *r, double d, unsigned char c, short s)
{
	TALLY_TRACEPOINT(a64, regs, x, y, c, s);
	TALLY_TRACEPOINT(a64, mem, r->id, r->vals[3], r->w, d);
	TALLY_TRACEPOINT(a64, consts, 17, -5, x * 3 + y, r);
	TALLY_TRACEPOINT(a64, none);
}
