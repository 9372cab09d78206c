/*
 * A recording's drain ahead of its targets: see priority.h.
 */
#include "record/priority.h"

#include <errno.h>
#include <sys/resource.h>

void rec_priority_raise(struct rec_priority *saved)
{
	*saved = (struct rec_priority){ .policy = sched_getscheduler(0) };
	sched_getparam(0, &saved->param);
	errno = 0;
	saved->nice = getpriority(PRIO_PROCESS, 0);
	if (saved->policy != SCHED_OTHER || saved->nice != 0 || errno)
		return; /* a priority whoever started tally chose */
	struct sched_param fifo = { .sched_priority = sched_get_priority_min(SCHED_FIFO) };
	saved->fifo = !sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo);
	saved->niced = !saved->fifo && !setpriority(PRIO_PROCESS, 0, -20);
}

void rec_priority_restore(const struct rec_priority *saved)
{
	if (saved->fifo)
		sched_setscheduler(0, saved->policy, &saved->param);
	if (saved->niced)
		setpriority(PRIO_PROCESS, 0, saved->nice);
}
