/*
 * The jitdump frame source (sources/source.h). A runtime writing jit-PID.dump maps
 * the file executable as a marker (perf's convention), so the recording holds an mmap of
 * it: the markers are found in one pass before the replay, and each dump is read from the
 * marker's path, or beside the recording when it was moved with it. A frame in no file is
 * named by the code the process's dump had at its pc at the sample's time: the recording's
 * clock must then be CLOCK_MONOTONIC, the dump's (tally record, perf record -k 1); on any
 * other, the latest code at the address is taken, with one warning. The same dumps give the
 * unwinder their code's CFI (before_unwind, unwind.c).
 */
#include "replay/sources/jitdump/jitdump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/vec.h"
#include "perf/keep.h"

struct dump {
	uint32_t pid;
	struct replay_jitdump *d;
	struct replay_jit_feed feed; /* its code for the unwinder */
};

struct jitdump_source {
	VEC(struct dump) dumps;
	bool timed;
	const char *data_path;
};

static bool known(const struct jitdump_source *y, uint32_t pid, const char *path)
{
	for (size_t i = 0; i < y->dumps.n; i++)
		if (y->dumps.v[i].pid == pid && !strcmp(y->dumps.v[i].d->path, path))
			return true;
	return false;
}

/* The dump at the marker's path, or under the marker's name beside the recording. */
static int read_dump(const struct jitdump_source *y, const char *path,
		     struct replay_jitdump **out)
{
	int rc = replay_jitdump_read(path, out);
	if (!rc || rc == -ENOMEM)
		return rc;
	const char *slash = strrchr(y->data_path, '/'), *base = strrchr(path, '/');
	char beside[4096];
	snprintf(beside, sizeof(beside), "%.*s%s", slash ? (int)(slash - y->data_path + 1) : 0,
		 y->data_path, base ? base + 1 : path);
	if (!strcmp(beside, path))
		return rc;
	err_clear();
	return replay_jitdump_read(beside, out) ? rc : 0;
}

static int on_record(const struct perf_event_rec *ev, void *arg)
{
	struct jitdump_source *y = arg;
	if ((ev->type != PERF_RECORD_MMAP && ev->type != PERF_RECORD_MMAP2) ||
	    !perf_jitdump_marker(ev->filename) || known(y, ev->pid, ev->filename))
		return 0;
	struct replay_jitdump *d;
	int rc = read_dump(y, ev->filename, &d);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		fprintf(stderr, "tally: warning: %s; its JIT frames stay unnamed\n", err_msg());
		err_clear();
		return 0;
	}
	if (d->warning[0])
		fprintf(stderr, "tally: warning: %s\n", d->warning);
	struct dump *slot = vec_push(&y->dumps);
	if (!slot) {
		replay_jitdump_free(d);
		return -ENOMEM;
	}
	*slot = (struct dump){ ev->pid, d, { 0 } };
	return replay_jit_feed_init(&slot->feed, d);
}

/* The code at a frame's pc: a return address points after its call, the sampled pc at
 * the instruction itself. */
static const struct replay_jit_code *code_at(const struct jitdump_source *y,
					     const struct replay_stack *st, size_t i,
					     const struct replay_jitdump **in)
{
	uint64_t pc = st->frames[i].pc - (i > 0);
	for (size_t k = y->dumps.n; k > 0; k--) {
		const struct dump *dp = &y->dumps.v[k - 1];
		if (dp->pid != st->ev->pid)
			continue;
		const struct replay_jit_code *c = replay_jitdump_find(dp->d, pc, st->ev->time,
								      y->timed);
		if (c) {
			*in = dp->d;
			return c;
		}
	}
	return NULL;
}

static int name_frame(void *self, const struct replay_stack *st, size_t i,
		      struct replay_frames *out)
{
	const struct jitdump_source *y = self;
	const struct unw_frame *fr = &st->frames[i];
	const struct replay_jitdump *d;
	/* Code in a file is the ELF source's; JIT code lies in anonymous memory (//anon). */
	const struct replay_jit_code *c = fr->mod && fr->mod->elf ? NULL : code_at(y, st, i, &d);
	if (!c)
		return 0;
	struct replay_sym_frame *f = replay_frames_push(out, PROF_JIT);
	if (!f)
		return 1;
	f->function = c->name;
	f->module = d->path;
	f->pc = fr->pc;
	f->addr = fr->pc;
	f->sym_start = c->addr;
	const struct replay_jit_line *l = replay_jitdump_line(d, c, fr->pc - (i > 0) - c->addr);
	if (l) {
		f->file = l->file;
		f->line = l->line;
	}
	return 1;
}

static void close_source(void *self)
{
	struct jitdump_source *y = self;
	for (size_t i = 0; i < y->dumps.n; i++) {
		replay_jit_feed_free(&y->dumps.v[i].feed);
		replay_jitdump_free(y->dumps.v[i].d);
	}
	vec_free(&y->dumps);
	free(y);
}

/* Before a sample is unwound: its process's JIT code up to the sample's time, with CFI. */
static int before_sample(void *self, struct unw_ctx *c, struct unw_space *s,
			 const struct perf_event_rec *ev)
{
	struct jitdump_source *y = self;
	for (size_t i = 0; i < y->dumps.n; i++) {
		struct dump *dp = &y->dumps.v[i];
		int r = dp->pid == ev->pid ? replay_jit_feed_apply(&dp->feed, dp->d, c, s, ev->time,
								   y->timed)
					   : 0;
		if (r)
			return r;
	}
	return 0;
}

static const struct replay_frame_source_ops jitdump_ops = {
	.name_frame = name_frame,
	.before_unwind = before_sample,
	.close = close_source,
	.per_sample = true,
};

/* Whether the samples' times are CLOCK_MONOTONIC, as the dumps' are. */
static bool monotonic(const struct perf_data *data)
{
	for (size_t i = 0; i < data->nattrs; i++)
		if (!data->attrs[i].attr.use_clockid ||
		    data->attrs[i].attr.clockid != CLOCK_MONOTONIC)
			return false;
	return data->nattrs > 0;
}

static void check_clock(struct jitdump_source *y, const struct perf_data *data)
{
	bool arch = false;
	for (size_t i = 0; i < y->dumps.n; i++)
		arch |= (y->dumps.v[i].d->flags & REPLAY_JITDUMP_ARCH_TIMESTAMP) != 0;
	y->timed = monotonic(data) && !arch;
	if (!y->timed)
		fprintf(stderr,
			"tally: warning: %s: %s: JIT code is named by the last code each address "
			"held (record with perf record -k 1, or tally record)\n",
			data->path,
			arch ? "a jitdump has the CPU's timestamps, not CLOCK_MONOTONIC"
			     : "the samples' clock is not CLOCK_MONOTONIC, the jitdump's");
}

static int open_source(struct perf_data *data, struct replay_frame_source *out)
{
	struct jitdump_source *y = calloc(1, sizeof(*y));
	if (!y)
		return err_set(-ENOMEM, "out of memory");
	y->data_path = data->path;
	int rc = perf_data_each(data, on_record, y);
	if (rc || !y->dumps.n) {
		close_source(y);
		*out = (struct replay_frame_source){ NULL, NULL };
		return rc;
	}
	check_clock(y, data);
	*out = (struct replay_frame_source){ &jitdump_ops, y };
	return 0;
}

const struct replay_source_type replay_jitdump_source = { open_source };
