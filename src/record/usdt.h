/*
 * tally record -e usdt:PROVIDER:NAME: a sample at every hit of USDT probes, in the native
 * recorder's format (user registers and a copy of the user stack), so that every report
 * unwinds and symbolizes probe hits like timer samples.
 */
#ifndef TALLY_RECORD_USDT_H
#define TALLY_RECORD_USDT_H

#include <stddef.h>

#include "probes/probes.h"
#include "record/record.h"

/* "usdt:PROVIDER:NAME" (globs on each side) or "usdt:PROVIDER" (all its probes) to the
 * pattern tally probes count takes; false if spec is not a usdt event. */
bool rec_usdt_pattern(const char *spec, char *out, size_t len);

/* Records o->argv or the one process o->pids[0] at every hit of the probes patterns
 * select. hits receives the kernel's hit count per probe (usdt_count_result_free). */
int rec_usdt_run(const struct rec_opts *o, char *const *patterns, size_t npatterns,
		 struct rec_result *res, struct usdt_count_result *hits);

#endif
