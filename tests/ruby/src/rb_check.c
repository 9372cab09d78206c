/*
 * Test driver of Ruby's frame reader (record/ruby_walk.h) on a live ruby, before and
 * beside tally record: stops each thread of process PID (PTRACE_SEIZE, PTRACE_INTERRUPT)
 * ROUNDS times, INTERVAL_US apart, walks it as the sampler does, parses every record with
 * replay's parser and prints each stack's frames, innermost first, as Ruby's backtrace
 * names them:
 *   S TID FLAGS NFRAMES
 *   F LABEL<TAB>PATH<TAB>LINE<TAB>FINISH     an iseq frame
 *   C NAME<TAB>PATH<TAB>LINE<TAB>FUNC        a C function's: the path and line of the
 *                                            Ruby frame that called it, as Ruby gives them
 * then "W NS", the time the walk took (its records' parsing and printing included), and
 * "E MESSAGE" when the process cannot be read. A fourth argument "main" stops the main
 * thread alone (as a CPU-clock sampler would: the others sleep). Usage: rb_check PID ROUNDS INTERVAL_US
 * With --lib FILE instead, prints what tally reads of a libruby (ruby/lib.h) as
 * "version V", "tls MODEL GOT OFFSET", "symbols ADDR", "vm_exec LO HI" (hex addresses).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "elf/elf.h"
#include "record/ruby_interp.h"
#include "replay/sources/ruby/payload.h"
#include "ruby/lib.h"
#include "ruby/lines.h"

#define MAX_THREADS 64
#define MAX_NAMES 65536

struct name {
	uint64_t addr, func;
	uint16_t flags;
	char label[PERF_RB_LABEL_MAX + 1], path[PERF_RB_PATH_MAX + 1];
	int32_t first;
	uint32_t n;
	uint32_t *pos;
	int32_t *line;
};

static struct name names[MAX_NAMES];
static size_t nnames;

static const struct name *find(uint64_t addr)
{
	for (size_t i = nnames; i > 0; i--)
		if (names[i - 1].addr == addr)
			return &names[i - 1];
	return NULL;
}

/* A name as replay shows it: one that could not be read is marked. */
static const char *shown(const struct name *n, const char *s)
{
	return !*s && n->flags & PERF_RB_NAME_READ_FAILED ? "[read failed]" : s;
}

static void print_stack(const struct replay_rb_payload *p)
{
	printf("S %u %u %u\n", p->tid, p->flags, p->nframes);
	for (uint32_t i = 0; i < p->nframes; i++) {
		struct perf_rb_frame f = replay_rb_frame_at(p, i);
		const struct name *n = find(f.addr);
		if (!n) {
			printf("? %llx\n", (unsigned long long)f.addr);
			continue;
		}
		if (!(f.fflags & PERF_RB_FRAME_CFUNC)) {
			printf("F %s\t%s\t%d\t%u\n", shown(n, n->label), shown(n, n->path),
			       rb_line_at(n->pos, n->line, n->n, f.pc), f.fflags & PERF_RB_FRAME_FINISH);
			continue;
		}
		/* Ruby gives a C frame the path and line of the next Ruby frame out. */
		const struct name *caller = NULL;
		int32_t line = 0;
		for (uint32_t k = i + 1; k < p->nframes && !caller; k++) {
			struct perf_rb_frame g = replay_rb_frame_at(p, k);
			const struct name *c = find(g.addr);
			if (c && !(g.fflags & PERF_RB_FRAME_CFUNC)) {
				caller = c;
				line = rb_line_at(c->pos, c->line, c->n, g.pc);
			}
		}
		printf("C %s\t%s\t%d\t%llx\n", shown(n, n->label), caller ? shown(caller, caller->path) : "", line,
		       (unsigned long long)n->func);
	}
}

static int on_record(const void *payload, size_t size, void *arg)
{
	(void)arg;
	struct replay_rb_payload p;
	if (replay_rb_parse(payload, size, &p)) {
		printf("E %s\n", err_msg());
		return 1;
	}
	if (p.type == PERF_RB_STACK) {
		print_stack(&p);
		return 0;
	}
	if (nnames == MAX_NAMES)
		return 0;
	struct name *n = &names[nnames++];
	memset(n, 0, sizeof(*n));
	n->addr = p.addr;
	n->func = p.func;
	n->flags = p.flags;
	n->first = p.first_lineno;
	memcpy(n->label, p.label, p.label_len);
	if (p.path)
		memcpy(n->path, p.path, p.path_len);
	n->n = p.nlines;
	n->pos = calloc(p.nlines + 1, sizeof(*n->pos));
	n->line = calloc(p.nlines + 1, sizeof(*n->line));
	for (uint32_t i = 0; i < p.nlines && n->pos && n->line; i++) {
		struct perf_rb_line l = replay_rb_line_at(&p, i);
		n->pos[i] = l.pos;
		n->line[i] = l.line;
	}
	return 0;
}

static int read_mem(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };
	return process_vm_readv((pid_t)(uintptr_t)arg, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The executable mapping of libruby in /proc/PID/maps. */
static int find_lib(pid_t pid, char *path, size_t size, uint64_t *start, uint64_t *pgoff)
{
	char file[64], line[4352], perms[8], p[4096];
	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	FILE *f = fopen(file, "r");
	unsigned long long s, e, off;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, p) == 5 &&
		    perms[2] == 'x' && rec_ruby_interp.may_be(p)) {
			snprintf(path, size, "%s", p);
			*start = s;
			*pgoff = off;
			fclose(f);
			return 0;
		}
	if (f)
		fclose(f);
	return -1;
}

static int stop(pid_t tid, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		return -1;
	for (;;) {
		int st;
		if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st))
			return -1;
		if (st >> 16 == PTRACE_EVENT_STOP)
			return ptrace(PTRACE_GETREGS, tid, 0, regs);
		ptrace(PTRACE_CONT, tid, 0, WSTOPSIG(st)); /* a signal: delivered */
	}
}

static int print_lib(const char *path)
{
	struct elf_file *f;
	struct rb_lib lib;
	int r = elf_open(path, &f);
	if (!r) {
		r = rb_lib_read(f, &lib);
		elf_close(f);
	}
	if (r) {
		printf("E %s\n", r < 0 ? err_msg() : "not libruby");
		return 1;
	}
	printf("version %s\ntls %d %llx %llx\nsymbols %llx\nvm_exec %llx %llx\n", lib.version,
	       lib.tls_model, (unsigned long long)lib.ec_got, (unsigned long long)lib.ec_offset,
	       (unsigned long long)lib.global_symbols, (unsigned long long)lib.vm_exec_lo,
	       (unsigned long long)lib.vm_exec_hi);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--lib"))
		return print_lib(argv[2]);
	if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "main")))
		return 2;
	pid_t pid = atoi(argv[1]);
	int rounds = atoi(argv[2]);
	long interval = atol(argv[3]);
	char path[4096];
	uint64_t start, pgoff;
	struct rec_interp_proc proc;
	if (find_lib(pid, path, sizeof(path), &start, &pgoff)) {
		printf("E no libruby mapped\n");
		return 1;
	}
	int r = rec_ruby_interp.open((uint32_t)pid, path, start, pgoff, &proc);
	if (r) {
		printf("E %s\n", r < 0 ? err_msg() : "not libruby");
		return 1;
	}
	pid_t tids[MAX_THREADS];
	uint64_t cache[MAX_THREADS] = { 0 };
	int ntids = 0;
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d)) && ntids < MAX_THREADS;)
		if (e->d_name[0] != '.' && (argc == 4 || atoi(e->d_name) == pid) &&
		    !ptrace(PTRACE_SEIZE, atoi(e->d_name), 0, 0))
			tids[ntids++] = atoi(e->d_name);
	if (d)
		closedir(d);
	struct rec_mem mem = { read_mem, (void *)(uintptr_t)pid };
	for (int k = 0, live = ntids; k < rounds && live; k++) {
		live = 0;
		for (int i = 0; i < ntids; i++) {
			struct user_regs_struct regs;
			if (!tids[i] || stop(tids[i], &regs)) {
				tids[i] = 0; /* ended */
				continue;
			}
			live++;
			struct rec_interp_thread th = { (uint32_t)pid, (uint32_t)tids[i],
							(uint64_t)tids[i], &regs, &cache[i] };
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			proc.ops->walk(proc.self, &mem, &th, on_record, NULL);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			printf("W %lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000 +
						 (t1.tv_nsec - t0.tv_nsec));
			ptrace(PTRACE_CONT, tids[i], 0, 0);
		}
		fflush(stdout);
		struct timespec ts = { interval / 1000000, interval % 1000000 * 1000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < ntids; i++) {
		struct user_regs_struct regs;
		if (tids[i] && !stop(tids[i], &regs))
			ptrace(PTRACE_DETACH, tids[i], 0, 0);
	}
	proc.ops->free(proc.self);
	return 0;
}
