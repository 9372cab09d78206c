/*
 * The priority of a recording's drain. A target that makes many threads runnable at once
 * (1,000 on 2 CPUs) leaves the one thread emptying the rings a share in a thousand of the
 * CPUs under the fair scheduler: it waits longer than its rings take to fill (8 MiB per
 * CPU: a quarter of a second of samples) and records are lost. While it drains (from the
 * release of its command on), tally runs SCHED_FIFO at the lowest real-time priority
 * (what perf record -r 1 asks for), reset in any child it forks; where that is refused, at
 * nice -20; without either privilege, or when whoever started tally chose its priority
 * (nice, chrt), as it was.
 */
#ifndef TALLY_RECORD_PRIORITY_H
#define TALLY_RECORD_PRIORITY_H

#include <sched.h>
#include <stdbool.h>

struct rec_priority {
	int policy, nice;
	struct sched_param param;
	bool fifo, niced; /* what raising changed */
};

/* Raises the calling thread's priority, saving what it was in saved. */
void rec_priority_raise(struct rec_priority *saved);
/* Gives the calling thread back the priority saved held. */
void rec_priority_restore(const struct rec_priority *saved);

#endif
