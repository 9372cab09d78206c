/*
 * The Lua walk (record/lua_walk.h) against a live Debian lua5.4 running tests/lua/chain.lua,
 * stopped with ptrace at 200 moments while it loops: every stack holds the chain the
 * script itself reported with debug.getinfo (sources, linedefined, the callers' current
 * lines, the names callers give: chain_b, chain_a), the innermost frame being the bytecode
 * leaf (a line of its own, named leaf), string.rep (a C frame under chain_c's line that
 * calls it, named string.rep) or chain_c on one of its loop's lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "lua/lua.h"
#include "record/lua_interp.h"
#include "record/lua_walk.h"
#include "replay/sources/lua/payload.h"

#define LUA_BIN "/usr/bin/lua5.4"
#define SAMPLES 200

struct oracle_level {
	char what[8], source[256], name[64];
	int linedefined, currentline;
};

struct proto {
	uint64_t addr;
	char source[256];
	int32_t linedefined;
	int8_t *lineinfo;
	uint32_t nline;
	int32_t *abs;
	uint32_t nabs;
	struct lua_names names;
	struct lua_kname k[256];
	struct lua_locvar loc[256];
	const char *upv[64];
	uint8_t *block; /* the record's code and names, which names points into */
};

struct got {
	struct proto protos[64];
	size_t nprotos;
	struct perf_lua_stack_head head;
	struct perf_lua_frame frames[64];
	struct perf_lua_frame *all; /* NULL, or room for every frame */
};

/* The record's names block as arrays (replay's parser checked it), NUL-terminated copies
 * of its strings in p->block. */
static void read_names(struct proto *p, const void *payload, size_t size)
{
	struct replay_lua_payload pl;
	assert_int_equal(replay_lua_parse(payload, size, &pl), 0);
	p->block = malloc((size_t)pl.ncode * 4 + 2 * pl.names_len + 1);
	memcpy(p->block, pl.code, (size_t)pl.ncode * 4);
	char *str = (char *)p->block + (size_t)pl.ncode * 4;
	const uint8_t *d = pl.names;
	p->names = (struct lua_names){ .code = p->block, .ncode = pl.ncode, .k = p->k,
				       .loc = p->loc, .upv = p->upv };
	for (unsigned i = 0; i < pl.nkstr && i < 256; i++, p->names.nk++) {
		memcpy(&p->k[i].index, d, 4);
		p->k[i].name = memcpy(str, d + 5, d[4]);
		str[d[4]] = 0, str += d[4] + 1, d += 5 + d[4];
	}
	for (unsigned i = 0; i < pl.nlocvars && i < 256; i++, p->names.nloc++) {
		memcpy(&p->loc[i].startpc, d, 4);
		memcpy(&p->loc[i].endpc, d + 4, 4);
		p->loc[i].name = memcpy(str, d + 9, d[8]);
		str[d[8]] = 0, str += d[8] + 1, d += 9 + d[8];
	}
	for (unsigned i = 0; i < pl.nupvals && i < 64; i++, p->names.nupv++) {
		p->upv[i] = memcpy(str, d + 1, d[0]);
		str[d[0]] = 0, str += d[0] + 1, d += 1 + d[0];
	}
}

static int collect(const void *payload, size_t size, void *arg)
{
	struct got *g = arg;
	uint32_t magic;
	uint16_t type;
	assert_true(size >= 8);
	memcpy(&magic, payload, 4);
	memcpy(&type, (const uint8_t *)payload + 4, 2);
	assert_int_equal(magic, PERF_LUA_MAGIC);
	if (type == PERF_LUA_PROTO) {
		struct perf_lua_proto_head h;
		memcpy(&h, payload, sizeof(h));
		assert_true(g->nprotos < 64);
		struct proto *p = &g->protos[g->nprotos++];
		const uint8_t *d = (const uint8_t *)payload + sizeof(h);
		p->addr = h.proto;
		p->linedefined = h.linedefined;
		snprintf(p->source, sizeof(p->source), "%.*s", (int)h.source_len, (const char *)d);
		p->nline = h.lineinfo_len;
		p->lineinfo = malloc(h.lineinfo_len + 1);
		memcpy(p->lineinfo, d + h.source_len, h.lineinfo_len);
		p->nabs = h.nabs;
		p->abs = malloc((size_t)h.nabs * 8 + 8);
		memcpy(p->abs, d + h.source_len + h.lineinfo_len, (size_t)h.nabs * 8);
		read_names(p, payload, size);
		return 0;
	}
	assert_int_equal(type, PERF_LUA_STACK);
	memcpy(&g->head, payload, sizeof(g->head));
	size_t n = g->head.nframes < 64 ? g->head.nframes : 64;
	memcpy(g->frames, (const uint8_t *)payload + sizeof(g->head), n * sizeof(g->frames[0]));
	if (g->all)
		memcpy(g->all, (const uint8_t *)payload + sizeof(g->head),
		       g->head.nframes * sizeof(g->frames[0]));
	return 0;
}

static const struct proto *proto_of(const struct got *g, uint64_t addr)
{
	for (size_t i = 0; i < g->nprotos; i++)
		if (g->protos[i].addr == addr)
			return &g->protos[i];
	return NULL;
}

static int line_of(const struct got *g, const struct perf_lua_frame *f)
{
	const struct proto *p = proto_of(g, f->addr);
	assert_non_null(p);
	return lua_line_of(p->lineinfo, p->nline, p->abs, p->nabs, p->linedefined, f->pc);
}

/* The name frame f's caller (the frame after it) gives it, as replay works it out: "?"
 * when none; "T.name" for a field of global table T. */
static const char *name_of(const struct got *g, const struct perf_lua_frame *f, char *buf,
			   size_t cap)
{
	const struct perf_lua_frame *caller = f + 1;
	const struct proto *p = (caller->fflags & PERF_LUA_FRAME_C) ? NULL : proto_of(g, caller->addr);
	const char *name, *table;
	if (!p || !lua_funcname(&p->names, caller->pc, &name, &table))
		return "?";
	if (table)
		snprintf(buf, cap, "%s.%s", table, name);
	else
		snprintf(buf, cap, "%s", name);
	return buf;
}

/* Waits for the script's "ready" in path; kills pid and fails after 5 s without it. */
static void wait_ready(const char *path, pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		size_t n;
		char *text = file_read_text(path, &n);
		bool ready = text && strstr(text, "ready\n");
		free(text);
		if (ready)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	fail_msg("%s: the script never said ready", path);
}

/* The script under test, a child that dies with the test (a failed assertion leaves
 * no interpreter behind). */
static pid_t run_lua(const char *bin, const char *script, const char *out, const char *mode)
{
	pid_t pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(bin, bin, script, out, mode, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The oracle's levels (from chain_c's caller out) and the lines chain_c calls from. */
static size_t read_oracle(const char *path, struct oracle_level *lv, size_t cap, int *c_def,
			  int *leaf_line, int *rep_line)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[512];
	size_t n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "calls %d %d %d", c_def, leaf_line, rep_line) == 3)
			continue;
		if (!strcmp(line, "ready\n"))
			break;
		assert_true(n < cap);
		assert_int_equal(sscanf(line, "%7s %255s %d %d %63s", lv[n].what, lv[n].source,
					&lv[n].linedefined, &lv[n].currentline, lv[n].name), 5);
		n++;
	}
	fclose(f);
	return n;
}

/* The process read, counted. */
static size_t nreads;
static int counted_read(void *arg, uint64_t addr, void *buf, size_t n)
{
	nreads++;
	return rec_mem_read_process(arg, addr, buf, n);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static void chain_in_every_sample(void **state)
{
	char dir[] = "/tmp/tally-lua-walk-XXXXXX", script[512], out[512];
	assert_non_null(mkdtemp(dir));
	snprintf(script, sizeof(script), "%s/chain.lua", dir);
	snprintf(out, sizeof(out), "%s/oracle", dir);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "cp %s/tests/lua/chain.lua %s", getenv("ROOT") ? getenv("ROOT") : ".",
		 script);
	assert_int_equal(system(cmd), 0);
	unsigned release;
	assert_int_equal(rec_lua_release_of(0, LUA_BIN, &release), 0);
	pid_t pid = run_lua(LUA_BIN, script, out, NULL);
	wait_ready(out, pid);
	struct oracle_level lv[16];
	int c_def = 0, leaf_line = 0, rep_line = 0;
	size_t nlv = read_oracle(out, lv, 16, &c_def, &leaf_line, &rep_line);
	/* chain_b, chain_a, the main chunk, then the C level of lua.c (pmain) */
	assert_true(nlv >= 3);

	struct rec_lua_proc *p = calloc(1, sizeof(*p));
	p->lay = lua_layout_of(release);
	p->pid = (uint32_t)pid;
	struct rec_mem mem = { counted_read, (void *)(uintptr_t)pid };
	static struct got g;
	assert_int_equal(ptrace(PTRACE_SEIZE, pid, 0, 0), 0);
	nreads = 0;
	int whole = 0, in_leaf = 0, in_rep = 0, in_c = 0, rep_under_line = 0, leaf_pc_reg = 0;
	static long long walk_ns[SAMPLES];
	for (int s = 0; s < SAMPLES; s++) {
		int st;
		assert_int_equal(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
		assert_int_equal(waitpid(pid, &st, __WALL), pid);
		struct user_regs_struct regs;
		assert_int_equal(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
		uint64_t cache = 0;
		struct rec_interp_thread th = { (uint32_t)pid, (uint32_t)pid, (uint64_t)pid, &regs,
						&cache };
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(rec_lua_walk(p, &mem, &th, collect, &g), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		walk_ns[s] = (t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec);
		assert_int_equal(ptrace(PTRACE_CONT, pid, 0, 0), 0);
		struct timespec ts = { 0, 1000000 + (s % 7) * 131000 };
		nanosleep(&ts, NULL);

		/* innermost first: [leaf | string.rep]? chain_c chain_b chain_a main pmain */
		uint32_t n = g.head.nframes, k = 0;
		if (g.head.flags || n < nlv + 1)
			continue;
		const struct perf_lua_frame *f = g.frames;
		bool ok = true;
		char nb[160];
		if (f[0].fflags & PERF_LUA_FRAME_C) {
			/* named as debug.traceback names it: "[C]: in function 'string.rep'" */
			k = 1;
			in_rep++;
			rep_under_line += line_of(&g, &f[1]) == rep_line &&
					  !strcmp(name_of(&g, &f[0], nb, sizeof(nb)), "string.rep");
		} else if (line_of(&g, &f[0]) != -1 && proto_of(&g, f[0].addr)->linedefined != c_def) {
			/* leaf's own line, from the VM's pc register: its loop, lines 8 and 9
			 * (or its return, line 10) */
			int def = proto_of(&g, f[0].addr)->linedefined, at = line_of(&g, &f[0]);
			k = 1;
			in_leaf++;
			leaf_pc_reg += (f[0].fflags & PERF_LUA_FRAME_PC_REG) != 0;
			ok &= at > def && at <= def + 3 && line_of(&g, &f[1]) == leaf_line &&
			      !strcmp(name_of(&g, &f[0], nb, sizeof(nb)), "leaf");
		} else {
			in_c++;
		}
		ok &= proto_of(&g, f[k].addr)->linedefined == c_def;
		for (size_t i = 0; ok && i < nlv; i++) {
			const struct perf_lua_frame *fr = &f[k + 1 + i];
			if (!strcmp(lv[i].what, "C")) {
				ok &= (fr->fflags & PERF_LUA_FRAME_C) != 0;
				continue;
			}
			const struct proto *pr = proto_of(&g, fr->addr);
			ok &= !strcmp(name_of(&g, fr, nb, sizeof(nb)), lv[i].name);
			ok &= pr && !strcmp(pr->source, lv[i].source) &&
			      pr->linedefined == lv[i].linedefined &&
			      line_of(&g, fr) == lv[i].currentline;
		}
		ok &= n == k + 1 + nlv;
		whole += ok;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	print_message("whole chain %d/%d (leaf %d, %d with its pc from a register; string.rep "
		      "%d, %d under its line; chain_c %d)\n", whole, SAMPLES, in_leaf, leaf_pc_reg,
		      in_rep, rep_under_line, in_c);
	qsort(walk_ns, SAMPLES, sizeof(walk_ns[0]), cmp_ll);
	print_message("a walk of the chain's 6 frames: median %.1f us, the first %.1f us "
		      "(its prototype records); %.1f reads a walk\n", walk_ns[SAMPLES / 2] / 1000.0,
		      walk_ns[SAMPLES - 1] / 1000.0, (double)nreads / SAMPLES);
	assert_true(whole * 100 >= SAMPLES * 98);
	assert_true(in_leaf > 0 && in_rep > 0);
	assert_true(rep_under_line * 100 >= in_rep * 95);
	for (size_t i = 0; i < g.nprotos; i++) {
		free(g.protos[i].lineinfo);
		free(g.protos[i].abs);
		free(g.protos[i].block);
	}
	free(p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Lua's name against ours: equal, or ours qualified by the global table it comes from
 * (Lua's getinfo says "resume" where its traceback says "coroutine.resume"). */
static bool same_name(const char *ours, const char *lua)
{
	size_t a = strlen(ours), b = strlen(lua);
	return !strcmp(ours, lua) ||
	       (a > b + 1 && ours[a - b - 1] == '.' && !strcmp(ours + a - b, lua));
}

struct row {
	char what[8], source[256], name[64], tail[8];
	int linedefined, currentline;
};

/* Runs tests/lua/shapes.lua's shape, stops it SAMPLES / 4 times: every stack is hot (or
 * string.rep over it) over the rows Lua reported, in order, with their lines, names and
 * tail calls. The fraction of such stacks. */
static double shape_in(const char *bin, const char *lib, const char *shape, unsigned *nrows)
{
	char dir[] = "/tmp/tally-lua-shape-XXXXXX", script[512], out[512], cmd[1200];
	assert_non_null(mkdtemp(dir));
	snprintf(script, sizeof(script), "%s/shapes.lua", dir);
	snprintf(out, sizeof(out), "%s/oracle", dir);
	snprintf(cmd, sizeof(cmd), "cp %s/tests/lua/shapes.lua %s",
		 getenv("ROOT") ? getenv("ROOT") : ".", script);
	assert_int_equal(system(cmd), 0);
	unsigned release;
	assert_int_equal(rec_lua_release_of(0, lib, &release), 0);
	pid_t pid = run_lua(bin, script, out, shape);
	wait_ready(out, pid);
	static struct row rows[400];
	unsigned n = 0;
	int hot_def = -1;
	FILE *f = fopen(out, "r");
	char line[700];
	while (f && fgets(line, sizeof(line), f) && strcmp(line, "ready\n")) {
		if (sscanf(line, "hot %d", &hot_def) == 1)
			continue;
		assert_true(n < 400);
		struct row *r = &rows[n++];
		assert_int_equal(sscanf(line, "%7s %255s %d %d %63s %7s", r->what, r->source,
					&r->linedefined, &r->currentline, r->name, r->tail), 6);
	}
	if (f)
		fclose(f);
	*nrows = n;

	struct rec_lua_proc *p = calloc(1, sizeof(*p));
	p->lay = lua_layout_of(release);
	p->pid = (uint32_t)pid;
	struct rec_mem mem = { rec_mem_read_process, (void *)(uintptr_t)pid };
	static struct got g;
	memset(&g, 0, sizeof(g));
	assert_int_equal(ptrace(PTRACE_SEIZE, pid, 0, 0), 0);
	int good = 0, total = SAMPLES / 4;
	static struct perf_lua_frame frames[PERF_LUA_MAX_FRAMES];
	for (int s = 0; s < total; s++) {
		int st;
		assert_int_equal(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
		assert_int_equal(waitpid(pid, &st, __WALL), pid);
		struct user_regs_struct regs;
		assert_int_equal(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
		uint64_t cache = 0;
		struct rec_interp_thread th = { (uint32_t)pid, (uint32_t)pid, (uint64_t)pid, &regs,
						&cache };
		g.all = frames;
		assert_int_equal(rec_lua_walk(p, &mem, &th, collect, &g), 0);
		assert_int_equal(ptrace(PTRACE_CONT, pid, 0, 0), 0);
		struct timespec ts = { 0, 1000000 + (s % 7) * 131000 };
		nanosleep(&ts, NULL);
		uint32_t k = frames[0].fflags & PERF_LUA_FRAME_C ? 1 : 0;
		const struct proto *hp = proto_of(&g, frames[k].addr);
		bool ok = !g.head.flags && g.head.nframes == k + 1 + n && hp &&
			  hp->linedefined == hot_def;
		char nb[160];
		for (unsigned i = 0; ok && i < n; i++) {
			const struct perf_lua_frame *fr = &frames[k + 1 + i];
			const struct row *r = &rows[i];
			const char *ours = i + 1 < n ? name_of(&g, fr, nb, sizeof(nb)) : "?";
			ok &= same_name(ours, r->name);
			if (!strcmp(r->what, "C")) {
				ok &= (fr->fflags & PERF_LUA_FRAME_C) != 0;
				continue;
			}
			const struct proto *pr = proto_of(&g, fr->addr);
			ok &= pr && !strcmp(pr->source, r->source) &&
			      pr->linedefined == r->linedefined && line_of(&g, fr) == r->currentline &&
			      !(fr->fflags & PERF_LUA_FRAME_TAIL) == !strcmp(r->tail, "false");
		}
		good += ok;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	for (size_t i = 0; i < g.nprotos; i++) {
		free(g.protos[i].lineinfo);
		free(g.protos[i].abs);
		free(g.protos[i].block);
	}
	free(p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	print_message("%s: %d of %d stacks whole (%u levels below hot)\n", shape, good, total, n);
	return (double)good / total;
}

static double shape_in_samples(const char *shape, unsigned *nrows)
{
	return shape_in(LUA_BIN, LUA_BIN, shape, nrows);
}

static void a_coroutine_over_its_resumer(void **state)
{
	unsigned n;
	assert_true(shape_in_samples("co", &n) >= 0.98);
	assert_int_equal(n, 5); /* body; coroutine.resume, outer, main chunk, pmain */
}

static void deep_recursion_whole(void **state)
{
	unsigned n;
	assert_true(shape_in_samples("rec", &n) >= 0.98);
	assert_int_equal(n, 151 + 3); /* rec x 151, the closure, main chunk, pmain */
}

static void a_tail_call_marked(void **state)
{
	unsigned n;
	assert_true(shape_in_samples("tail", &n) >= 0.98);
	assert_int_equal(n, 3); /* tail_b (tail called), main chunk, pmain */
}

static void pcall_after_a_caught_error(void **state)
{
	unsigned n;
	assert_true(shape_in_samples("pcall", &n) >= 0.98);
	assert_int_equal(n, 5); /* pcall_b, pcall, pcall_a, main chunk, pmain */
}

/* A C program linking Debian's liblua5.4.so.0 (tests/lua/embed.c, built here with the
 * headers of liblua5.4-dev): the same walk, the C program's main under the main chunk. */
static void a_program_embedding_liblua(void **state)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/liblua5.4.so.0";
	char dir[] = "/tmp/tally-lua-embed-XXXXXX", cmd[1200], bin[512];
	assert_non_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/embed", dir);
	snprintf(cmd, sizeof(cmd), "cc -O1 -o %s %s/tests/lua/embed.c $(pkg-config --cflags --libs "
		 "lua5.4)", bin, getenv("ROOT") ? getenv("ROOT") : ".");
	assert_int_equal(system(cmd), 0);
	unsigned n;
	assert_true(shape_in(bin, lib, "pcall", &n) >= 0.98);
	assert_int_equal(n, 4); /* pcall_b, pcall, pcall_a, main chunk: no pmain */
	assert_true(shape_in(bin, lib, "co", &n) >= 0.98);
	assert_int_equal(n, 4);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chain_in_every_sample),
		cmocka_unit_test(a_coroutine_over_its_resumer),
		cmocka_unit_test(deep_recursion_whole),
		cmocka_unit_test(a_tail_call_marked),
		cmocka_unit_test(pcall_after_a_caught_error),
		cmocka_unit_test(a_program_embedding_liblua),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
