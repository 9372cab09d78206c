/*
 * libFuzzer target for ptrace mode's reader of a Lua 5.4 thread's frames
 * (record/lua_walk.h), whose input is the target's memory. The input is the release (one
 * byte, of 5.4.0-5.4.8, then 7 bytes of padding), the thread's registers (struct
 * user_regs_struct, rsp where the stack search starts) and then the memory image, mapped at
 * BASE; every other address is unreadable. The walk must end within a bounded number of
 * reads, and every record it writes must be one replay's parser takes whole, its lines
 * computable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "lua/lua.h"
#include "record/lua_walk.h"
#include "replay/sources/lua/payload.h"

#define BASE 0x10000u
/* Reads a walk may make at most: the registers' and the stack's candidates (three reads
 * each), each state's Lua stack, each frame (CallInfo, function value, closure, prototype)
 * and each new
 * prototype's record (prototype, source, six arrays, two reads per name), with room to
 * spare. */
#define MAX_READS (3 * (15 + REC_LUA_SCAN_BYTES / 8) + 16 + REC_LUA_MAX_STATES + \
		   4 * (PERF_LUA_MAX_FRAMES + 1) + \
		   64 * (9 + 2 * (PERF_LUA_KSTR_MAX + PERF_LUA_LOCVARS_MAX +            \
				  PERF_LUA_UPVALS_MAX)) + 16)

struct image {
	const uint8_t *b;
	size_t n;
	size_t reads;
};

static int read_image(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct image *im = arg;
	if (++im->reads > MAX_READS)
		abort();
	if (addr < BASE || addr - BASE > im->n || n > im->n - (addr - BASE))
		return -1;
	memcpy(buf, im->b + (addr - BASE), n);
	return 0;
}

static int check_record(const void *payload, size_t size, void *arg)
{
	struct replay_lua_payload p;
	if (replay_lua_parse(payload, size, &p))
		abort();
	if (p.type == PERF_LUA_PROTO) {
		int32_t abs[2 * PERF_LUA_ABS_MAX];
		memcpy(abs, p.abs, (size_t)p.nabs * 8);
		for (uint32_t pc = 0; pc <= p.lineinfo_len && pc < 64; pc++)
			lua_line_of(p.lineinfo, p.lineinfo_len, abs, p.nabs, p.linedefined,
				    (int32_t)pc);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct user_regs_struct regs;
	if (size < 8 + sizeof(regs))
		return 0;
	const struct lua_layout *lay = lua_layout_of(data[0] % 9);
	memcpy(&regs, data + 8, sizeof(regs));
	static struct rec_lua_proc p;
	memset(&p, 0, sizeof(p));
	p.lay = lay;
	p.pid = 7;
	struct image im = { data + 8 + sizeof(regs), size - 8 - sizeof(regs), 0 };
	struct rec_mem mem = { read_image, &im };
	uint64_t cache = 0;
	struct rec_interp_thread th = { 7, 1, 1, &regs, &cache };
	for (int pass = 0; pass < 2; pass++) { /* the second finds the prototypes seen */
		im.reads = 0;
		rec_lua_walk(&p, &mem, &th, check_record, NULL);
	}
	err_clear();
	return 0;
}
