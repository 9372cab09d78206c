/*
 * libFuzzer target for the jitdump reader: the input is a jit-PID.dump. Every place it
 * records is looked up at its ends and middle, at its time and without one, with the line
 * of every code offset probed; then the dump's code and CFI go to an unwinder (the feed of
 * sources/jitdump/unwind.c), which walks a stack from each place. Nothing may be read outside the
 * input. Seeds: fuzz/corpus/
 * fuzz_jitdump/ (a dump Node wrote, cut down, and hand-built ones in both byte orders).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "base/err.h"
#include "replay/sources/jitdump/jitdump.h"
#include "unwind/unwind.h"

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

/* The places' code, with its CFI, in anonymous executable memory, and a walk from each
 * place's start over a stack of a few words. */
static void unwind_places(const struct replay_jitdump *d)
{
	struct unw_ctx *c;
	struct unw_space s = { 0 };
	struct replay_jit_feed f;
	if (unw_ctx_new(UNW_AUTO, &c))
		return;
	if (!replay_jit_feed_init(&f, d) &&
	    !unw_space_map(c, &s, 0x1000, UINT64_MAX, 0, PROT_READ | PROT_EXEC, "//anon") &&
	    !replay_jit_feed_apply(&f, d, c, &s, 0, false)) {
		uint64_t stack[8];
		memset(stack, 0, sizeof(stack));
		struct unw_frame frames[8];
		enum unw_end end;
		for (size_t i = 0; i < d->nplaces && i < 256; i++) {
			struct unw_regs regs = { .valid = 1ull << UNW_X86_RIP | 1ull << UNW_X86_RSP };
			regs.r[UNW_X86_RIP] = d->places[i].start;
			regs.r[UNW_X86_RSP] = 0x7ff0000;
			unw_unwind(c, &s, &regs, (const uint8_t *)stack, sizeof(stack), frames, 8,
				   &end);
		}
	}
	err_clear();
	replay_jit_feed_free(&f);
	unw_space_clear(&s);
	unw_ctx_free(c);
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
	unwind_places(d);
	replay_jitdump_free(d);
	return 0;
}
