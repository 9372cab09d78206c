/*
 * libFuzzer target for the records tally record --stacks=unwound reads from its rings and
 * rewrites (perf_record_decode, perf_sample_unwound). Byte 0 picks the attribute's optional
 * fields (identifier, addr, id, stream id, raw, a register mask of 1-3 registers), byte 1
 * how many user frames the rewrite is given (and the note); the rest is the record. A record
 * that decodes and rewrites must decode again by the unwound attribute with the same ip,
 * pid, tid, time, cpu and period, and the chain and the note it was given; nothing may read
 * outside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "perf/perf.h"

static uint8_t out[65536 + 64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 + 8)
		return 0;
	uint8_t pick = data[0], nuser = data[1];
	struct perf_attr_info in = { 0 }, un = { 0 };
	struct perf_event_attr *a = &in.attr;
	a->size = sizeof(*a);
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			 PERF_SAMPLE_STACK_USER;
	if (pick & 1) a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (pick & 2) a->sample_type |= PERF_SAMPLE_ADDR;
	if (pick & 4) a->sample_type |= PERF_SAMPLE_ID;
	if (pick & 8) a->sample_type |= PERF_SAMPLE_STREAM_ID;
	if (pick & 16) a->sample_type |= PERF_SAMPLE_RAW;
	a->sample_regs_user = (1ull << PERF_X86_IP) | (pick & 32 ? 1ull << PERF_X86_SP : 0) |
			      (pick & 64 ? 1ull << PERF_X86_BP : 0);
	a->sample_stack_user = 4096;
	a->sample_id_all = 1;
	struct perf_event_rec ev, back;
	const uint8_t *rec = data + 2;
	size_t n = size - 2;
	if (perf_record_decode("fuzz", 0, &in, 1, rec, n, &ev)) {
		err_clear();
		return 0;
	}
	if (ev.type != PERF_RECORD_SAMPLE)
		return 0;
	uint64_t user[255];
	for (unsigned i = 0; i < nuser; i++)
		user[i] = 0x400000 + 16ull * i;
	size_t got;
	uint32_t note;
	if (perf_sample_unwound(&ev, user, nuser, nuser * 0x10001u, out, sizeof(out), &got))
		return 0;
	perf_sample_attr_unwound(&in.attr, &un.attr);
	if (perf_record_decode("fuzz", 0, &un, 1, out, got, &back))
		abort(); /* what was rewritten must read back */
	if (back.ip != ev.ip || back.pid != ev.pid || back.tid != ev.tid || back.time != ev.time ||
	    back.cpu != ev.cpu || back.period != ev.period || back.stack_total || back.regs_abi ||
	    !perf_sample_unwound_note(&back, &note) || note != nuser * 0x10001u)
		abort();
	uint64_t k = back.nr_callchain;
	if (nuser && (k < nuser + 1u || perf_callchain_at(&back, k - nuser - 1) != PERF_CONTEXT_USER))
		abort();
	for (unsigned i = 0; i < nuser; i++)
		if (perf_callchain_at(&back, k - nuser + i) != user[i])
			abort();
	return 0;
}
