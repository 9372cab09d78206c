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
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static void wait_ready(const char *path)
{
	for (int i = 0; i < 500; i++) {
		char buf[4096];
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = 0;
		if (strstr(buf, "ready\n"))
			return;
		usleep(10000);
	}
	fail_msg("%s: the script never said ready", path);
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
	pid_t pid = fork();
	if (!pid) {
		execl(LUA_BIN, LUA_BIN, script, out, (char *)NULL);
		_exit(127);
	}
	wait_ready(out);
	struct oracle_level lv[16];
	int c_def = 0, leaf_line = 0, rep_line = 0;
	size_t nlv = read_oracle(out, lv, 16, &c_def, &leaf_line, &rep_line);
	/* chain_b, chain_a, the main chunk, then the C level of lua.c (pmain) */
	assert_true(nlv >= 3);

	struct rec_lua_proc *p = calloc(1, sizeof(*p));
	p->lay = lua_layout_of(release);
	p->pid = (uint32_t)pid;
	struct rec_mem mem = { rec_mem_read_process, (void *)(uintptr_t)pid };
	static struct got g;
	assert_int_equal(ptrace(PTRACE_SEIZE, pid, 0, 0), 0);
	int whole = 0, in_leaf = 0, in_rep = 0, in_c = 0, rep_under_line = 0, leaf_pc_reg = 0;
	for (int s = 0; s < SAMPLES; s++) {
		int st;
		assert_int_equal(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
		assert_int_equal(waitpid(pid, &st, __WALL), pid);
		struct user_regs_struct regs;
		assert_int_equal(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
		uint64_t cache = 0;
		struct rec_interp_thread th = { (uint32_t)pid, (uint32_t)pid, (uint64_t)pid, &regs,
						&cache };
		assert_int_equal(rec_lua_walk(p, &mem, &th, collect, &g), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chain_in_every_sample),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
