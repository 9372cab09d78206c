/*
 * The sched_switch event of tally record --off-cpu. Its id is read from tracefs, which is
 * mounted at /sys/kernel/tracing when neither that nor the old debugfs place has it (perf
 * mounts it the same way, and leaves it mounted: other tools expect it there).
 */
#include "record/offcpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/err.h"

#define TRACEFS "/sys/kernel/tracing"
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
static int switch_id(long long *id)
{
	int r = read_id(TRACEFS, id);
	if (!r || !read_id("/sys/kernel/debug/tracing", id))
		return 0;
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

int rec_offcpu_setup(struct perf_event_attr *cpu, struct perf_event_attr *sw)
{
	long long id;
	int r = switch_id(&id);
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
