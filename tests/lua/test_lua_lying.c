/*
 * The Lua walk (record/lua_walk.h) over memory images that lie, the fuzz target's seeds
 * (fuzz/lua_walk_seed.py, laid out as Lua 5.4.4 lays its structures): the plain chain
 * gives its four frames in order, a CallInfo chain that comes back on itself ends in a
 * frame marked failed within a bounded number of reads, and a source string that claims
 * 2^40 bytes gives a prototype record cut to the cap, with its lines still.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "record/lua_walk.h"
#include "replay/sources/lua/payload.h"

#define BASE 0x10000u

struct image {
	const uint8_t *b;
	size_t n, reads;
};

static int read_image(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct image *im = arg;
	im->reads++;
	if (addr < BASE || addr - BASE > im->n || n > im->n - (addr - BASE))
		return -1;
	memcpy(buf, im->b + (addr - BASE), n);
	return 0;
}

struct got {
	struct perf_lua_stack_head head;
	struct perf_lua_frame f[8];
	uint16_t proto_flags[8];
	unsigned nprotos;
};

static int collect(const void *payload, size_t size, void *arg)
{
	struct got *g = arg;
	struct replay_lua_payload p;
	assert_int_equal(replay_lua_parse(payload, size, &p), 0);
	if (p.type == PERF_LUA_PROTO) {
		assert_true(g->nprotos < 8);
		g->proto_flags[g->nprotos++] = p.flags;
		assert_int_equal(p.lineinfo_len, p.linedefined ? 3 : 5);
		return 0;
	}
	memcpy(&g->head, payload, sizeof(g->head));
	for (uint32_t i = 0; i < p.nframes && i < 8; i++)
		g->f[i] = replay_lua_frame_at(&p, i);
	return 0;
}

static size_t walk_seed(const char *name, struct got *g)
{
	char path[512];
	snprintf(path, sizeof(path), "fuzz/corpus/lua_walk/%s.bin", name);
	uint8_t *b;
	size_t n;
	struct user_regs_struct regs;
	assert_int_equal(file_read(path, &b, &n), 0);
	assert_true(n > 8 + sizeof(regs));
	memcpy(&regs, b + 8, sizeof(regs));
	struct rec_lua_proc *p = calloc(1, sizeof(*p));
	p->lay = lua_layout_of(b[0]);
	struct image im = { b + 8 + sizeof(regs), n - 8 - sizeof(regs), 0 };
	struct rec_mem mem = { read_image, &im };
	uint64_t cache = 0;
	struct rec_interp_thread th = { 7, 1, 1, &regs, &cache };
	memset(g, 0, sizeof(*g));
	assert_int_equal(rec_lua_walk(p, &mem, &th, collect, g), 0);
	free(p);
	free(b);
	return im.reads;
}

static void the_chain_reads_in_order(void **state)
{
	struct got g;
	walk_seed("chain", &g);
	assert_int_equal(g.head.flags, 0);
	assert_int_equal(g.head.nframes, 4);
	assert_int_equal(g.head.release, 4);
	assert_true(g.f[0].fflags & PERF_LUA_FRAME_C);
	assert_int_equal(g.f[0].addr, 0x402000);
	assert_int_equal(g.f[1].pc, 1); /* savedpc: its code + 8, the next instruction */
	assert_int_equal(g.f[2].pc, 3);
	assert_true(g.f[3].fflags & PERF_LUA_FRAME_C);
	assert_true(g.f[3].fflags & PERF_LUA_FRAME_THREAD);
	assert_int_equal(g.f[3].addr, 0x401000);
	assert_int_equal(g.nprotos, 2);
	assert_int_equal(g.proto_flags[0] | g.proto_flags[1], 0);
}

static void a_cycle_ends_in_a_failed_frame(void **state)
{
	struct got g;
	size_t reads = walk_seed("cycle", &g);
	assert_true(g.head.flags & PERF_LUA_STACK_READ_FAILED);
	assert_true(g.head.nframes >= 4 && g.head.nframes <= 16);
	assert_true(g.f[g.head.nframes < 8 ? g.head.nframes - 1 : 7].fflags &
		    (PERF_LUA_FRAME_FAILED | PERF_LUA_FRAME_C) );
	assert_true(reads < 200);
}

static void a_string_too_long_is_cut(void **state)
{
	struct got g;
	walk_seed("badstring", &g);
	assert_int_equal(g.head.flags, 0);
	assert_int_equal(g.nprotos, 2);
	/* the main chunk's source is the long string: cut to its cap */
	assert_true((g.proto_flags[0] | g.proto_flags[1]) & PERF_LUA_PROTO_CUT);
	assert_false((g.proto_flags[0] | g.proto_flags[1]) & PERF_LUA_PROTO_READ_FAILED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_chain_reads_in_order),
		cmocka_unit_test(a_cycle_ends_in_a_failed_frame),
		cmocka_unit_test(a_string_too_long_is_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
