/*
 * The unwind-quality header every native report starts with: how many samples, how many
 * lost, how many stacks are complete, single-frame or truncated and why, where they
 * stopped. Frame-pointer-only unwinding gets a warning: on code built without frame
 * pointers (Debian's libraries) it completes few stacks. Shares are printed with as many
 * decimals as it takes not to round 3 truncated stacks in 1,000 to 0% or 999 to 100%.
 */
#include "replay/replay.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

const char *replay_share(char *buf, size_t size, uint64_t part, uint64_t whole)
{
	if (!whole || !part || part >= whole) {
		snprintf(buf, size, "%s", whole && part >= whole ? "100%" : "0%");
		return buf;
	}
	double v = 100.0 * (double)part / (double)whole;
	for (int prec = 1; prec <= 9; prec++) {
		snprintf(buf, size, "%.*f%%", prec, v);
		double shown = strtod(buf, NULL);
		if (shown > 0 && shown < 100)
			break;
	}
	return buf;
}

static void print_shares(FILE *out, uint64_t samples, uint64_t complete, uint64_t truncated,
			 uint64_t single, uint64_t frames)
{
	char a[32], b[32], c[32];
	fprintf(out, "%s complete, %s truncated, %s single-frame, average depth %.1f",
		replay_share(a, sizeof(a), complete, samples), replay_share(b, sizeof(b), truncated, samples),
		replay_share(c, sizeof(c), single, samples),
		samples ? (double)frames / (double)samples : 0);
}

void replay_quality_print(FILE *out, const struct replay_quality *q)
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
	fputs("# stacks: ", out);
	print_shares(out, s->samples, s->complete, s->truncated, s->single, s->frames);
	fputc('\n', out);
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

static bool counter(const struct prof *p, const char *name, uint64_t *out)
{
	for (size_t i = 0; i < prof_ncounters(p); i++) {
		const char *n;
		int64_t v;
		prof_counter_at(p, i, &n, &v);
		if (!strcmp(n, name)) {
			*out = v > 0 ? (uint64_t)v : 0;
			return true;
		}
	}
	return false;
}

void replay_quality_summary(FILE *out, const struct prof *p)
{
	uint64_t samples, complete, truncated, single, frames;
	if (!counter(p, REPLAY_COUNTER_SAMPLES, &samples) ||
	    !counter(p, REPLAY_COUNTER_COMPLETE, &complete) ||
	    !counter(p, REPLAY_COUNTER_TRUNCATED, &truncated) ||
	    !counter(p, REPLAY_COUNTER_SINGLE, &single) || !counter(p, REPLAY_COUNTER_FRAMES, &frames))
		return;
	fprintf(out, "unwind:   %llu stacks: ", (unsigned long long)samples);
	print_shares(out, samples, complete, truncated, single, frames);
	fputc('\n', out);
}
