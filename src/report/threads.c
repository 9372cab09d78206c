/*
 * What every output with --threads does with a profile's threads: their order (by pid, then
 * tid), and the one error for a profile that keeps none. Apart from the text report so that
 * libtally's pprof writer takes only this.
 */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>

#include "base/err.h"
#include "profile/profile.h"

static int by_pid_tid(const void *a, const void *b, void *ctx)
{
	const struct prof_thread *x = prof_thread_at(ctx, *(const uint32_t *)a),
				 *y = prof_thread_at(ctx, *(const uint32_t *)b);
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int rep_no_threads(void)
{
	return err_set(-EINVAL, "the profile keeps no threads (only perf.data recordings say "
				"which thread each sample came from)");
}

uint32_t *rep_threads_sorted(const struct prof *p)
{
	size_t n = prof_nthreads(p);
	uint32_t *t = malloc((n ? n : 1) * sizeof(*t));
	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++)
		t[i] = (uint32_t)i;
	qsort_r(t, n, sizeof(*t), by_pid_tid, (void *)p);
	return t;
}
