/*
 * libFuzzer target for the reader of a Ruby process's frames (record/ruby_walk.h), whose
 * input is the target's memory, with Ruby 3.1's layout. The input is a 48-byte head
 * (little-endian u64s: the TLS model, ruby_current_ec's GOT slot, its offset in the TLS
 * block, global_symbols, the thread's FS base, unused) and then the memory image
 * (memory_image.h). The walk must end within a bounded number of reads, and every record
 * it writes must be one replay's parser takes whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "memory_image.h"
#include "record/ruby_walk.h"
#include "replay/sources/ruby/payload.h"

#define HEAD 48
/* Reads a walk may make at most: the context and its slot, the control frames in batches,
 * per frame its environment, iseq and body or method entry, and per new record a body,
 * two strings and a path array, the line table and its positions, or a definition and the
 * name's four reads. */
#define MAX_READS (8 + 4096 / 16 + 4 * 4096 + 128 * 16)

static int check_record(const void *payload, size_t size, void *arg)
{
	(void)arg;
	struct replay_rb_payload p;
	if (replay_rb_parse(payload, size, &p))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h[HEAD / 8];
	if (size < HEAD)
		return 0;
	memcpy(h, data, HEAD);
	struct rec_rb_proc p = { 0 };
	p.lib.layout = rb_layout_for("3.1.2");
	p.lib.tls_model = h[0] & 1 ? RB_TLS_DYNAMIC : RB_TLS_INITIAL_EXEC;
	p.lib.ec_got = h[1];
	p.lib.ec_offset = h[2];
	p.lib.global_symbols = h[3];
	struct memory_image im = { data + HEAD, size - HEAD, 0, MAX_READS };
	struct rec_mem mem = { memory_image_read, &im };
	struct user_regs_struct regs = { 0 };
	regs.fs_base = h[4];
	for (int pass = 0; pass < 2; pass++) { /* the second finds the records written */
		uint64_t cache = 0;
		struct rec_interp_thread th = { 7, 1, 1, &regs, &cache };
		im.reads = 0;
		rec_rb_walk(&p, &mem, &th, check_record, NULL);
	}
	rec_rb_proc_free(&p);
	err_clear();
	return 0;
}
