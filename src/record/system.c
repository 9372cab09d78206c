/*
 * The machine's processes for tally record -a. /proc is read once, after the events are
 * open, so that a process started in between shows up in either the records or here
 * (possibly both: replay keeps the later mapping).
 */
#include "record/system.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "perf/perf.h"

struct synth {
	rec_emit_fn emit;
	void *arg;
};

static int comm_of_task(int pid, int tid, void *arg)
{
	struct synth *s = arg;
	return rec_synth_comm(pid, tid, s->emit, s->arg);
}

int rec_synth_system(rec_emit_fn emit, void *arg)
{
	DIR *d = opendir("/proc");
	if (!d)
		return err_set(-errno, "/proc: %s", strerror(errno));
	struct synth s = { emit, arg };
	int r = 0;
	for (struct dirent *e; !r && (e = readdir(d));) {
		int pid = atoi(e->d_name);
		if (pid <= 0)
			continue;
		r = rec_each_task(pid, comm_of_task, &s);
		if (!r)
			r = rec_synth_maps(pid, emit, arg);
		if (r == -ESRCH || r == -ENOENT || r == -EACCES) { /* ended, or not ours to read */
			err_clear();
			r = 0;
		}
	}
	closedir(d);
	return r;
}

int rec_system_open_error(int r)
{
	if (r != -EACCES && r != -EPERM)
		return r;
	return err_set(r, "-a: watching every CPU is not allowed here (perf_event_paranoid is "
			  "%d): run as root, give tally CAP_PERFMON (CAP_SYS_ADMIN before Linux "
			  "5.8), or set /proc/sys/kernel/perf_event_paranoid to 0 or lower",
		       perf_paranoid_level());
}
