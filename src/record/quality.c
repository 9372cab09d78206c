/*
 * The unwind-quality header every native report starts with: how many samples, how many
 * lost, how many stacks are complete, single-frame or truncated and why, where they
 * stopped. Frame-pointer-only unwinding gets a warning: on code built without frame
 * pointers (Debian's libraries) it completes few stacks.
 */
#include "record/record.h"

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0; }

void rec_quality_print(FILE *out, const struct rec_quality *q)
{
	const struct unw_stats *s = &q->stats;
	static const char *const methods[] = { "DWARF CFI, frame pointers as fallback",
					       "DWARF CFI only", "frame pointers only" };
	fprintf(out, "# samples: %llu, lost: %llu records, %llu samples; throttled %llu times\n",
		(unsigned long long)q->info.samples, (unsigned long long)q->info.lost,
		(unsigned long long)q->info.lost_samples, (unsigned long long)q->info.throttled);
	if (q->info.fp_recorded)
		fprintf(out, "# unwinding: recorded with frame pointers (--call-graph fp) for %llu "
			     "samples; %s for the rest\n",
			(unsigned long long)q->info.fp_recorded, methods[q->method]);
	else
		fprintf(out, "# unwinding: %s\n", methods[q->method]);
	fprintf(out, "# stacks: %.1f%% complete, %.1f%% truncated, %.1f%% single-frame, "
		     "average depth %.1f\n",
		pct(s->complete, s->samples), pct(s->truncated, s->samples),
		pct(s->single, s->samples), s->samples ? (double)s->frames / s->samples : 0);
	for (int e = 1; e < UNW_END_COUNT; e++)
		if (s->ends[e])
			fprintf(out, "#   truncated: %llu (%s)\n", (unsigned long long)s->ends[e],
				unw_end_name((enum unw_end)e));
	for (int k = 0; k < 3 && q->stop_counts[k]; k++)
		fprintf(out, "#   stopped in %s: %llu\n", q->stop_modules[k],
			(unsigned long long)q->stop_counts[k]);
	if (q->info.fp_recorded)
		fprintf(out, "# warning: recorded with frame pointers only: code built without "
			     "them (most distribution libraries) loses its callers; record with "
			     "--call-graph dwarf (the default)\n");
	else if (q->method == UNW_FP)
		fprintf(out, "# warning: frame pointers only: code built without them (most "
			     "distribution libraries) loses its callers; use --unwind=auto\n");
}
