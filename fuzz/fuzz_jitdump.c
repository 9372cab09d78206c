/*
 * libFuzzer target for the jitdump reader: the input is a jit-PID.dump. Every place it
 * records is looked up at its ends and middle, at its time and without one, with the line
 * of every code offset probed; nothing may be read outside the input. Seeds: fuzz/corpus/
 * fuzz_jitdump/ (a dump Node wrote, cut down, and hand-built ones in both byte orders).
 */
#include <stddef.h>
#include <stdint.h>

#include "replay/jitdump.h"

static void probe(const struct replay_jitdump *d, uint64_t pc, uint64_t time)
{
	for (int timed = 0; timed < 2; timed++) {
		const struct replay_jit_code *c = replay_jitdump_find(d, pc, time, timed);
		if (!c)
			continue;
		uint64_t off = pc - c->addr;
		if (c->bytes && off < c->size)
			(void)*(volatile const uint8_t *)&c->bytes[off];
		replay_jitdump_line(d, c, off);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_jitdump *d;
	if (replay_jitdump_parse("fuzz.dump", data, size, &d))
		return 0;
	for (size_t i = 0; i < d->nplaces; i++) {
		const struct replay_jit_place *p = &d->places[i];
		probe(d, p->start, p->time);
		probe(d, p->start + (p->end - p->start) / 2, p->time + 1);
		probe(d, p->end - 1, p->until);
		probe(d, p->end, UINT64_MAX);
	}
	for (size_t i = 0; i < d->ncodes; i++) {
		const struct replay_jit_code *c = &d->codes[i];
		for (size_t k = 0; k < c->nlines; k++)
			(void)*(volatile const char *)d->lines[c->line0 + k].file;
		if (c->eh_frame)
			(void)*(volatile const uint8_t *)&c->eh_frame[c->eh_frame_size - 1];
		if (c->eh_frame_hdr)
			(void)*(volatile const uint8_t *)&c->eh_frame_hdr[c->eh_frame_hdr_size - 1];
	}
	replay_jitdump_free(d);
	return 0;
}
