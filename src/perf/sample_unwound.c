/*
 * A sample rewritten with its user stack unwound (tally record's default): the kernel's
 * fields as they were, the callchain made of the kernel's part and the unwound user frames
 * after PERF_CONTEXT_USER (as the kernel lays out a chain it walked itself,
 * linux/perf_event.h), and the user registers and stack copy emptied in the ways the kernel
 * itself writes them: an ABI of 0 (no registers, as for a kernel thread) and a copy with
 * dyn_size 0 (nothing valid in it, as when the kernel could not read the stack), whose 8
 * bytes hold tally's mark. perf script and perf report then find nothing to unwind and
 * read the chain as they read --call-graph fp ones.
 */
#include "perf/perf.h"

#include <errno.h>
#include <string.h>

/* The fields this rewrites around; a sample type with any other is refused. */
#define SUPPORTED                                                                          \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |       \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |         \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | \
	 PERF_SAMPLE_STACK_USER)
#define NEEDED (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

bool perf_sample_unwound_supports(uint64_t t)
{
	return !(t & ~(uint64_t)SUPPORTED) && (t & NEEDED) == NEEDED;
}

void perf_sample_attr_unwound(const struct perf_event_attr *a, struct perf_event_attr *out)
{
	*out = *a;
	out->exclude_callchain_user = 0;
}

bool perf_sample_unwound_note(const struct perf_event_rec *ev, uint32_t *note)
{
	uint64_t mark;
	if (ev->type != PERF_RECORD_SAMPLE || ev->regs_abi || ev->stack_total ||
	    ev->stack_area != 8 || !ev->stack)
		return false;
	memcpy(&mark, ev->stack, 8);
	if (mark >> 32 != PERF_UNWOUND_MARK)
		return false;
	*note = (uint32_t)mark;
	return true;
}

static bool put(uint8_t *out, size_t cap, size_t *at, const void *p, size_t n)
{
	if (n > cap - *at)
		return false;
	memcpy(out + *at, p, n);
	*at += n;
	return true;
}

int perf_sample_unwound(const struct perf_event_rec *ev, const uint64_t *user, size_t nuser,
			uint32_t note, void *out, size_t cap, size_t *size)
{
	const uint64_t t = ev->attr->attr.sample_type;
	if (ev->type != PERF_RECORD_SAMPLE || !perf_sample_unwound_supports(t) || !ev->raw ||
	    ev->size < 8)
		return -EINVAL;
	/* The fields before the callchain are fixed-size: copied as they are. */
	size_t chain_at = 8 + 8 * (size_t)(!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
					   !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
					   !!(t & PERF_SAMPLE_ADDR) + !!(t & PERF_SAMPLE_ID) +
					   !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
					   !!(t & PERF_SAMPLE_PERIOD));
	uint64_t nold = ev->nr_callchain;
	if (chain_at + 8 > ev->size || nold > (ev->size - chain_at - 8) / 8)
		return -EINVAL;
	size_t raw_at = chain_at + 8 + 8 * (size_t)nold, raw_len = 0;
	if (t & PERF_SAMPLE_RAW) {
		uint32_t n;
		if (raw_at + 4 > ev->size)
			return -EINVAL;
		memcpy(&n, ev->raw + raw_at, 4);
		raw_len = 4 + (size_t)n;
		if (raw_len > ev->size - raw_at)
			return -EINVAL;
	}
	/* The kernel's part: everything before its user context, if it has one. */
	uint64_t nkern = 0;
	while (nkern < nold && perf_callchain_at(ev, nkern) != PERF_CONTEXT_USER)
		nkern++;
	uint64_t nnew = nkern + (nuser ? 1 + nuser : 0);
	uint8_t *o = out;
	size_t at = 0;
	uint64_t ctx = PERF_CONTEXT_USER;
	/* No registers (ABI 0); an area of 8 bytes holding the mark, none of them valid. */
	const uint64_t tail[4] = { 0, 8, (uint64_t)PERF_UNWOUND_MARK << 32 | note, 0 };
	if (!put(o, cap, &at, ev->raw, chain_at) || !put(o, cap, &at, &nnew, 8) ||
	    !put(o, cap, &at, ev->raw + chain_at + 8, 8 * (size_t)nkern) ||
	    (nuser && (!put(o, cap, &at, &ctx, 8) || !put(o, cap, &at, user, 8 * nuser))) ||
	    !put(o, cap, &at, ev->raw + raw_at, raw_len) || !put(o, cap, &at, tail, sizeof(tail)))
		return -E2BIG;
	/* The kernel keeps records 8-aligned (PERF_SAMPLE_RAW's size says how much is
	 * payload): the padding of the original raw field came along with it. */
	if (at > UINT16_MAX || at % 8)
		return at % 8 ? -EINVAL : -E2BIG;
	struct perf_event_header h;
	memcpy(&h, o, sizeof(h));
	h.size = (uint16_t)at;
	memcpy(o, &h, sizeof(h));
	*size = at;
	return 0;
}
