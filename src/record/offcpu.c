/*
 * The sched_switch event of tally record --off-cpu. Its id is read from tracefs, which is
 * mounted at /sys/kernel/tracing when neither that nor the old debugfs place has it (perf
 * mounts it the same way, and leaves it mounted: other tools expect it there). Its format
 * goes into the file as perf's tracing data, for perf script.
 */
#include "record/offcpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/vec.h"

#define TRACEFS "/sys/kernel/tracing"
#define DEBUG_TRACEFS "/sys/kernel/debug/tracing"
#define SWITCH_ID "/events/sched/sched_switch/id"

static int read_id(const char *dir, long long *id)
{
	char path[128];
	snprintf(path, sizeof(path), "%s" SWITCH_ID, dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int n = fscanf(f, "%lld", id);
	fclose(f);
	return n == 1 && *id >= 0 ? 0 : -EINVAL;
}

static int no_access(int r)
{
	return err_set(r, "--off-cpu: " TRACEFS SWITCH_ID ": %s (tracefs is readable by root "
			  "only here: run as root, or let tally's user read " TRACEFS ")",
		       strerror(-r));
}

/* The tracepoint id of sched:sched_switch. */
static int switch_id(long long *id, const char **dir)
{
	*dir = TRACEFS;
	int r = read_id(TRACEFS, id);
	if (!r)
		return 0;
	if (!read_id(DEBUG_TRACEFS, id)) {
		*dir = DEBUG_TRACEFS;
		return 0;
	}
	if (r == -EACCES || r == -EPERM)
		return no_access(r);
	struct stat st;
	if (stat(TRACEFS "/events", &st) && errno == ENOENT &&
	    mount("nodev", TRACEFS, "tracefs", 0, NULL))
		return err_set(-errno, "--off-cpu: tracefs is not mounted and mounting it at "
				       TRACEFS " failed: %s (run as root, or mount it: "
				       "mount -t tracefs nodev " TRACEFS ")",
			       strerror(errno));
	if ((r = read_id(TRACEFS, id)) == -EACCES || r == -EPERM)
		return no_access(r);
	if (r)
		return err_set(r, "--off-cpu: " TRACEFS SWITCH_ID ": %s (a kernel without "
				  "scheduler tracepoints?)",
			       strerror(-r));
	return 0;
}

typedef VEC(uint8_t) bytes;

static bool put_bytes(bytes *b, const void *p, size_t n)
{
	if (!vec_reserve(b, n))
		return false;
	memcpy(b->v + b->n, p, n);
	b->n += n;
	return true;
}

/* A tracefs file (its size is unknown until read: tracefs says 0), after its size in
 * size_len bytes. */
static int put_file(bytes *b, const char *dir, const char *name, size_t size_len)
{
	char path[160], buf[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return err_set(-errno, "--off-cpu: %s: %s", path, strerror(errno));
	size_t at = b->n, n;
	uint64_t len = 0;
	bool ok = put_bytes(b, &len, size_len);
	while (ok && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		ok = put_bytes(b, buf, n);
		len += n;
	}
	fclose(f);
	if (!ok)
		return err_set(-ENOMEM, "out of memory");
	memcpy(b->v + at, &len, size_len); /* little-endian: the first size_len bytes */
	return 0;
}

/* perf's tracing data (tools/perf/util/trace-event-read.c reads it): a magic and version,
 * byte order, long and page sizes, the ring's page and event headers, no ftrace events,
 * one system ("sched") with one event's format, and empty kallsyms, printk formats and
 * saved command lines. */
static int tracing_data(const char *dir, bytes *b)
{
	static const uint8_t magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	uint8_t sizes[2] = { 0 /* little-endian */, (uint8_t)sizeof(long) };
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE), none = 0, one = 1;
	uint64_t none8 = 0;
	int r = put_bytes(b, magic, sizeof(magic)) && put_bytes(b, "0.6", 4) &&
			put_bytes(b, sizes, 2) && put_bytes(b, &page, 4) &&
			put_bytes(b, "header_page", 12)
		? 0 : err_set(-ENOMEM, "out of memory");
	if (!r)
		r = put_file(b, dir, "events/header_page", 8);
	if (!r && !put_bytes(b, "header_event", 13))
		r = err_set(-ENOMEM, "out of memory");
	if (!r)
		r = put_file(b, dir, "events/header_event", 8);
	if (!r && !(put_bytes(b, &none, 4) && put_bytes(b, &one, 4) && put_bytes(b, "sched", 6) &&
		    put_bytes(b, &one, 4)))
		r = err_set(-ENOMEM, "out of memory");
	if (!r)
		r = put_file(b, dir, "events/sched/sched_switch/format", 8);
	if (!r && !(put_bytes(b, &none, 4) && put_bytes(b, &none, 4) && put_bytes(b, &none8, 8)))
		r = err_set(-ENOMEM, "out of memory");
	return r;
}

int rec_offcpu_setup(struct perf_event_attr *cpu, struct perf_event_attr *sw)
{
	long long id;
	const char *dir;
	int r = switch_id(&id, &dir);
	if (r)
		return r;
	cpu->sample_type |= PERF_SAMPLE_IDENTIFIER;
	cpu->context_switch = 1;
	*sw = (struct perf_event_attr){
		.size = sizeof(*sw),
		.type = PERF_TYPE_TRACEPOINT,
		.config = (unsigned long long)id,
		.sample_period = 1,
		.sample_type = cpu->sample_type,
		.sample_regs_user = cpu->sample_regs_user,
		.sample_stack_user = cpu->sample_stack_user,
		.exclude_callchain_user = cpu->exclude_callchain_user,
		.disabled = 1,
		.inherit = 1,
		.enable_on_exec = cpu->enable_on_exec,
		.sample_id_all = 1,
		.exclude_hv = 1,
		.exclude_guest = 1,
		.use_clockid = cpu->use_clockid,
		.clockid = cpu->clockid,
		.wakeup_watermark = cpu->wakeup_watermark,
		.watermark = cpu->watermark,
	};
	return 0;
}

int rec_offcpu_write_format(struct perf_writer *w)
{
	long long id;
	const char *dir;
	int r = switch_id(&id, &dir);
	bytes b = { 0 };
	if (!r && !(r = tracing_data(dir, &b)))
		r = perf_writer_set_tracing_data(w, b.v, b.n);
	vec_free(&b);
	return r;
}
