/*
 * libFuzzer target for the Ruby records and their splice (replay/sources/ruby/). The whole
 * input is parsed as one record (what it says must lie within it); then it is read as a
 * sequence of chunks (u8 kind, u16 length, bytes) fed to the Ruby frame source in time
 * order: even kinds as records, odd kinds as samples of a process running Debian's libruby
 * 3.1 (u32 pid, u32 tid, then one native frame per byte: odd bytes inside rb_vm_exec, even
 * ones elsewhere in libruby; kind & 2: the stack is whole). Every Ruby frame named must
 * have a name and a file; nothing may read outside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "elf/elf.h"
#include "replay/namer.h"
#include "replay/sources/ruby/payload.h"
#include "replay/sources/ruby/ruby.h"

#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"

static struct unw_module lib = { .path = LIBRUBY };
static uint64_t vm_exec_at;

static void open_lib(void)
{
	static bool tried;
	if (tried)
		return;
	tried = true;
	struct elf_symtab t;
	if (elf_open(LIBRUBY, &lib.elf) || elf_symbols(lib.elf, ELF_SYMS_BOTH, false, &t)) {
		err_clear();
		return;
	}
	for (size_t i = 0; i < t.n; i++)
		if (!strcmp(t.syms[i].name, "rb_vm_exec"))
			vm_exec_at = t.syms[i].addr;
	elf_symtab_free(&t);
}

static void parse_whole(const uint8_t *data, size_t size)
{
	struct replay_rb_payload p;
	if (replay_rb_parse(data, size, &p)) {
		err_clear();
		return;
	}
	const uint8_t *end = data + size;
	if (p.type == PERF_RB_STACK) {
		if (p.nframes > PERF_RB_MAX_FRAMES ||
		    (p.nframes && (p.frames < data || p.frames + 16 * (size_t)p.nframes > end)))
			abort();
		for (uint32_t i = 0; i < p.nframes; i++)
			(void)replay_rb_frame_at(&p, i);
		return;
	}
	if ((const uint8_t *)p.label + p.label_len > end ||
	    (p.path && (const uint8_t *)p.path + p.path_len > end) ||
	    (p.nlines && p.lines + 8 * (size_t)p.nlines > end))
		abort();
	for (uint32_t i = 0; i < p.nlines; i++)
		(void)replay_rb_line_at(&p, i);
}

static void sample(struct replay_namer *nm, const uint8_t *b, size_t n, bool whole,
		   uint64_t time)
{
	if (n < 8)
		return;
	struct perf_event_rec ev = { .type = PERF_RECORD_SAMPLE, .time = time };
	memcpy(&ev.pid, b, 4);
	memcpy(&ev.tid, b + 4, 4);
	struct unw_frame frames[64];
	size_t nf = 0;
	for (size_t i = 8; i < n && nf < 64; i++, nf++) {
		uint64_t rel = b[i] & 1 ? vm_exec_at + (b[i] >> 1) + 1 : 0x43000 + b[i];
		frames[nf] = (struct unw_frame){ .pc = rel, .mod = &lib, .rel = rel };
	}
	struct replay_stack st = { &ev, frames, nf, whole ? UNW_END_OUTERMOST : UNW_END_FP_CHAIN,
				   0, "ruby3.1" };
	struct replay_sym_stack out;
	if (replay_namer_name(nm, &st, &out)) {
		err_clear();
		return;
	}
	for (size_t i = 0; i < out.n; i++)
		if (out.frames[i].kind == PROF_RUBY && (!out.frames[i].function || !out.frames[i].file))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse_whole(data, size);
	open_lib();
	struct perf_attr_info out = { .attr = { .type = PERF_TYPE_SOFTWARE,
						.config = PERF_COUNT_SW_BPF_OUTPUT } };
	struct perf_data d = { .path = "fuzz", .attrs = &out, .nattrs = 1 };
	struct replay_ruby_stats stats;
	struct replay_frame_source src;
	struct replay_namer *nm;
	if (replay_ruby_source_new(&d, &stats, &src) || !src.ops || replay_namer_new(&src, 1, &nm)) {
		err_clear();
		return 0;
	}
	uint64_t time = 1;
	for (size_t at = 0; at + 3 <= size;) {
		uint8_t kind = data[at];
		size_t n = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
		at += 3;
		if (n > size - at)
			n = size - at;
		if (kind & 1) {
			sample(nm, data + at, n, kind & 2, time++);
		} else {
			struct perf_event_rec ev = { .type = PERF_RECORD_SAMPLE, .attr = &out,
						     .time = time++, .raw_data = data + at,
						     .raw_size = (uint32_t)n };
			if (replay_namer_record(nm, &ev))
				err_clear();
		}
		at += n;
	}
	replay_namer_free(nm);
	return 0;
}
