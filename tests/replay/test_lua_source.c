/*
 * The Lua frame source's splice (replay/sources/lua/source.c), driven record by record:
 * prototype and stack records as the walk writes them (perf/interp_records.h), then stacks
 * whose native frames lie in the real, stripped /usr/bin/lua5.4: its VM's frames (in
 * lua_pcallk, which its dynamic symbols name), the frames of two of its functions taken as
 * C functions Lua called (their starts are FDE starts of its .eh_frame, which the records
 * name), and frames of another module. Lines come from lineinfo written here by ldebug.c's
 * rule (a signed delta per instruction after the absolute line of abslineinfo).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "dwarf/cfi.h"
#include "elf/elf.h"
#include "perf/interp_records.h"
#include "replay/namer.h"
#include "replay/sources/lua/lua.h"

#define INTERP "/usr/bin/lua5.4"
#define PID 200
#define TID 201
#define MAIN_P 0x7f0000001000ull
#define F_P 0x7f0000002000ull
#define BIAS 0x555555554000ull /* where the test "maps" lua5.4 */

static struct unw_module interp = { .path = INTERP }, other = { .path = "/lib/libc.so.6" };
static uint64_t vm_at, cfun[2];

struct fixture {
	struct perf_attr_info rec;
	struct perf_data d;
	struct replay_lua_stats stats;
	struct replay_namer *nm;
	uint64_t time;
	struct replay_sym_stack out;
	char names[512];
};

static int pick(uint64_t start, uint64_t end, void *arg)
{
	unsigned *n = arg;
	if (start + 0x40 < end && (start > vm_at + 0x100 || start + 0x100 < vm_at) && *n < 2)
		cfun[(*n)++] = start;
	return 0;
}

static void open_interp(void)
{
	static bool tried;
	struct elf_symtab t;
	struct dwarf_cfi *cfi;
	if (tried)
		return;
	tried = true;
	if (elf_open(INTERP, &interp.elf) || elf_symbols(interp.elf, ELF_SYMS_BOTH, false, &t)) {
		err_clear();
		return;
	}
	for (size_t i = 0; i < t.n; i++)
		if (!strcmp(t.syms[i].name, "lua_pcallk"))
			vm_at = t.syms[i].addr;
	elf_symtab_free(&t);
	unsigned n = 0;
	if (!vm_at || dwarf_cfi_open_elf(interp.elf, NULL, &cfi))
		return;
	dwarf_cfi_each_fde(cfi, pick, &n);
	dwarf_cfi_close(cfi);
}

static int setup(void **state)
{
	open_interp();
	struct fixture *f = calloc(1, sizeof(*f));
	f->rec.attr.type = PERF_TYPE_SOFTWARE;
	f->rec.attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	f->d.path = "t.data";
	f->d.attrs = &f->rec;
	f->d.nattrs = 1;
	struct replay_frame_source src;
	assert_int_equal(replay_lua_source_new(&f->d, &f->stats, &src), 0);
	assert_non_null(src.ops);
	assert_int_equal(replay_namer_new(&src, 1, &f->nm), 0);
	f->time = 1000;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	replay_namer_free(f->nm);
	free(f);
	return 0;
}

static void need_interp(void)
{
	if (!vm_at || !cfun[1])
		skip();
}

static void put(uint8_t **p, const void *v, size_t n)
{
	if (n)
		memcpy(*p, v, n);
	*p += n;
}

static void payload(struct fixture *f, const uint8_t *b, size_t n)
{
	struct perf_event_rec ev = { .type = PERF_RECORD_SAMPLE, .attr = &f->rec,
				     .time = f->time++, .raw_data = b, .raw_size = (uint32_t)n };
	assert_int_equal(replay_namer_record(f->nm, &ev), 0);
}

/* A prototype defined at line def: instructions at def+1, def+2, def+4, def+5 (the first
 * by abslineinfo, the others by deltas), and the code given (ncode instructions, up to
 * 4), its string constants (k[0], k[1]) and one upvalue, _ENV. */
static void proto_code(struct fixture *f, uint64_t addr, int32_t def, const char *source,
		       const uint32_t *code, uint32_t ncode, const char *k0, const char *k1)
{
	uint8_t b[512], *p = b, names[256], *q = names;
	uint32_t magic = PERF_LUA_MAGIC, pid = PID, zero = 0, nline = 4, nabs = 1;
	uint16_t type = PERF_LUA_PROTO, flags = 0, sl = (uint16_t)strlen(source), z16 = 0;
	uint16_t nk = 0, nloc = 0, nup = 1;
	int32_t last = def + 6, abs[2] = { 0, def + 1 };
	int8_t lineinfo[4] = { -0x80, 1, 2, 1 };
	uint32_t sizecode = 4;
	const char *ks[2] = { k0, k1 };
	for (uint32_t i = 0; i < 2; i++)
		if (ks[i]) {
			uint8_t len = (uint8_t)strlen(ks[i]);
			put(&q, &i, 4), put(&q, &len, 1), put(&q, ks[i], len);
			nk++;
		}
	uint8_t env = 4;
	put(&q, &env, 1), put(&q, "_ENV", 4);
	uint32_t names_len = (uint32_t)(q - names);
	put(&p, &magic, 4), put(&p, &type, 2), put(&p, &flags, 2), put(&p, &pid, 4);
	put(&p, &zero, 4), put(&p, &addr, 8), put(&p, &def, 4), put(&p, &last, 4);
	put(&p, &sizecode, 4), put(&p, &sl, 2), put(&p, &z16, 2), put(&p, &nline, 4);
	put(&p, &nabs, 4), put(&p, &ncode, 4), put(&p, &names_len, 4), put(&p, &nk, 2);
	put(&p, &nloc, 2), put(&p, &nup, 2), put(&p, &z16, 2);
	put(&p, source, sl), put(&p, lineinfo, 4), put(&p, abs, 8);
	put(&p, code, ncode * 4), put(&p, names, names_len);
	payload(f, b, (size_t)(p - b));
}

static void proto(struct fixture *f, uint64_t addr, int32_t def, const char *source)
{
	proto_code(f, addr, def, source, NULL, 0, NULL, NULL);
}

struct lf {
	uint64_t addr;
	int32_t pc;
	uint32_t flags;
};

static void stack(struct fixture *f, uint16_t flags, const struct lf *v, uint32_t n)
{
	uint8_t b[512], *p = b;
	uint32_t magic = PERF_LUA_MAGIC, pid = PID, tid = TID, release = 4;
	uint16_t type = PERF_LUA_STACK;
	put(&p, &magic, 4), put(&p, &type, 2), put(&p, &flags, 2), put(&p, &pid, 4);
	put(&p, &tid, 4), put(&p, &n, 4), put(&p, &release, 4);
	for (uint32_t i = 0; i < n; i++)
		put(&p, &v[i].addr, 8), put(&p, &v[i].pc, 4), put(&p, &v[i].flags, 4);
	payload(f, b, (size_t)(p - b));
}

/* Names a sample whose native frames are given innermost first: 'v' the VM (lua_pcallk),
 * 'a' and 'b' the two C functions, 'x' another module; f->names: the named stack
 * outermost first, Lua frames as NAME@LINE, native ones by their letter ('R': named
 * string.rep). */
static const char *sample(struct fixture *f, const char *shape, bool whole)
{
	struct perf_event_rec ev = { .type = PERF_RECORD_SAMPLE, .pid = PID, .tid = TID,
				     .time = f->time++ };
	struct unw_frame fr[16];
	size_t n = strlen(shape);
	for (size_t i = 0; i < n; i++) {
		uint64_t rel = shape[i] == 'v' ? vm_at + 0x20 + i
			       : shape[i] == 'a' ? cfun[0] + 0x10
			       : shape[i] == 'b' ? cfun[1] + 0x10 : 0x1000 + i;
		fr[i] = (struct unw_frame){ .pc = rel + BIAS, .mod = shape[i] == 'x' ? &other : &interp,
					    .rel = rel };
	}
	struct replay_stack st = { &ev, fr, n, whole ? UNW_END_OUTERMOST : UNW_END_FP_CHAIN, 0, "l" };
	assert_int_equal(replay_namer_name(f->nm, &st, &f->out), 0);
	char *w = f->names;
	*w = 0;
	for (size_t i = 0; i < f->out.n; i++) {
		const struct replay_sym_frame *s = &f->out.frames[i];
		size_t left = sizeof(f->names) - (size_t)(w - f->names);
		if (s->kind == PROF_VM) {
			assert_null(s->module); /* bytecode, as the agent's VM frames */
			w += snprintf(w, left, "%s%s@%u", i ? ";" : "", s->function, s->line);
		} else if (s->kind == PROF_NATIVE || s->kind == PROF_TRUNCATED) {
			uint64_t a = s->addr;
			char c = s->kind == PROF_TRUNCATED ? 'T'
				 : s->function && !strcmp(s->function, "string.rep") ? 'R'
				 : s->module && !strcmp(s->module, other.path) ? 'x'
				 : a >= vm_at && a < vm_at + 0x40 ? 'v'
				 : a == cfun[0] + 0x10 ? 'a' : a == cfun[1] + 0x10 ? 'b' : '?';
			w += snprintf(w, left, "%s%c", i ? ";" : "", c);
		}
	}
	return f->names;
}

static void protos(struct fixture *f)
{
	proto(f, MAIN_P, 0, "@chain.lua");
	proto(f, F_P, 10, "@chain.lua");
}

/* Innermost first: C function a (string.rep, say) called by f at its third instruction,
 * called by the main chunk at its second, run by C function b (lua.c's pmain). */
static const struct lf *chain(void)
{
	static struct lf v[4];
	v[0] = (struct lf){ BIAS + cfun[0], -1, PERF_LUA_FRAME_C };
	v[1] = (struct lf){ F_P, 2, 0 };
	v[2] = (struct lf){ MAIN_P, 1, 0 };
	v[3] = (struct lf){ BIAS + cfun[1], -1, PERF_LUA_FRAME_C | PERF_LUA_FRAME_THREAD };
	return v;
}

static void lua_frames_replace_the_vm_between_c_functions(void **state)
{
	struct fixture *f = *state;
	need_interp();
	protos(f);
	stack(f, 0, chain(), 4);
	/* memcpy above string.rep, above f's line 14, the main chunk's line 2; pmain under */
	assert_string_equal(sample(f, "xavvvbvx", true),
			    "x;v;b;main chunk@2;chain.lua:10@14;a;x");
	assert_int_equal(f->stats.samples, 1);
	assert_int_equal(f->stats.frames, 2);
}

static void the_innermost_lua_frame_runs_in_the_vm(void **state)
{
	struct fixture *f = *state;
	need_interp();
	protos(f);
	stack(f, 0, chain() + 1, 3);
	assert_string_equal(sample(f, "vvbx", true), "x;b;main chunk@2;chain.lua:10@14");
	/* a C function called but not yet entered: no frame of its own, nothing shown */
	stack(f, 0, chain(), 4);
	assert_string_equal(sample(f, "vvbx", true), "x;b;main chunk@2;chain.lua:10@14");
}

static void frames_that_disagree_stay_native(void **state)
{
	struct fixture *f = *state;
	need_interp();
	protos(f);
	stack(f, 0, chain(), 4); /* no VM frame between a and b for the Lua frames */
	assert_string_equal(sample(f, "abx", true), "x;b;a");
	stack(f, 0, chain() + 1, 3); /* pmain's frame is missing from a whole stack */
	assert_string_equal(sample(f, "vvx", true), "x;v;v");
	assert_int_equal(f->stats.inconsistent, 2);
	assert_int_equal(f->stats.samples, 0);
}

static void an_unknown_prototype_keeps_the_sample_native(void **state)
{
	struct fixture *f = *state;
	need_interp();
	proto(f, MAIN_P, 0, "@chain.lua");
	stack(f, 0, chain() + 1, 3);
	assert_string_equal(sample(f, "vvbx", true), "x;b;v;v");
	assert_int_equal(f->stats.proto_unknown, 1);
}

static void a_failed_read_is_marked(void **state)
{
	struct fixture *f = *state;
	need_interp();
	protos(f);
	struct lf v[2] = { { F_P, 3, 0 }, { 0, -1, PERF_LUA_FRAME_FAILED } };
	stack(f, PERF_LUA_STACK_READ_FAILED, v, 2);
	/* on the VM's innermost frame: where the unread part of its run ends is not known */
	assert_string_equal(sample(f, "vvbx", true), "x;b;v;[read failed]@0;chain.lua:10@15");
	assert_int_equal(f->stats.read_failed, 1);
}

static void a_stack_record_is_taken_once(void **state)
{
	struct fixture *f = *state;
	need_interp();
	protos(f);
	stack(f, 0, chain() + 1, 3);
	sample(f, "vvbx", true);
	assert_string_equal(sample(f, "vvbx", true), "x;b;v;v");
	assert_int_equal(f->stats.samples, 1);
}

/* Lua 5.4 instructions (lopcodes.h): op, A << 7, B << 16, C << 24. */
#define GETTABUP(a, b, c) (11u | (a) << 7 | (b) << 16 | (uint32_t)(c) << 24)
#define GETFIELD(a, b, c) (14u | (a) << 7 | (b) << 16 | (uint32_t)(c) << 24)
#define CALL(a) (68u | (a) << 7 | 1u << 16 | 1u << 24)

static void frames_go_by_the_names_their_callers_give(void **state)
{
	struct fixture *f = *state;
	need_interp();
	/* main: f() at pc 1; f: string.rep(...) at pc 2 */
	const uint32_t main_code[] = { GETTABUP(0, 0, 0), CALL(0) };
	const uint32_t f_code[] = { GETTABUP(0, 0, 0), GETFIELD(0, 0, 1), CALL(0) };
	proto_code(f, MAIN_P, 0, "@chain.lua", main_code, 2, "f", NULL);
	proto_code(f, F_P, 10, "@chain.lua", f_code, 3, "string", "rep");
	stack(f, 0, chain(), 4);
	assert_string_equal(sample(f, "xavvvbvx", true), "x;v;b;main chunk@2;f@14;R;x");
	/* a tail-called frame's caller is gone: by its source */
	struct lf v[4];
	memcpy(v, chain(), sizeof(v));
	v[1].flags |= PERF_LUA_FRAME_TAIL;
	stack(f, 0, v, 4);
	assert_string_equal(sample(f, "xavvvbvx", true), "x;v;b;main chunk@2;chain.lua:10@14;R;x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(lua_frames_replace_the_vm_between_c_functions, setup, teardown),
		cmocka_unit_test_setup_teardown(the_innermost_lua_frame_runs_in_the_vm, setup, teardown),
		cmocka_unit_test_setup_teardown(frames_that_disagree_stay_native, setup, teardown),
		cmocka_unit_test_setup_teardown(an_unknown_prototype_keeps_the_sample_native, setup, teardown),
		cmocka_unit_test_setup_teardown(a_failed_read_is_marked, setup, teardown),
		cmocka_unit_test_setup_teardown(a_stack_record_is_taken_once, setup, teardown),
		cmocka_unit_test_setup_teardown(frames_go_by_the_names_their_callers_give, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
