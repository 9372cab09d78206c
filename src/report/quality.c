/*
 * The unwind-quality line that opens the text report of a recording ("unwind:   N stacks: ...% complete, ...%
 * truncated, ...% single-frame, average depth D"), from the counters replay_profile gives
 * the profile, so that it reads the same on a profile merged or read back from pprof. Shares
 * are printed with as many decimals as it takes not to round 3 truncated stacks in 1,000
 * to 0% or 999 to 100%. Recordings with Python frames get a second line, "python:", with
 * the share of stacks that have them and of those that kept native frames, by reason;
 * recordings with an agent's VM frames (mixed mode) a "vm:" line, with the loop records
 * that did not become VM frames, by reason.
 */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

#include "profile/counters.h"
#include "profile/profile.h"

const char *rep_share(char *buf, size_t size, uint64_t part, uint64_t whole)
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
		rep_share(a, sizeof(a), complete, samples), rep_share(b, sizeof(b), truncated, samples),
		rep_share(c, sizeof(c), single, samples),
		samples ? (double)frames / (double)samples : 0);
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

/* "python:   N stacks with Python frames (S%); native frames kept: ..." for the samples
 * the CPython frame source did not splice, by reason; then "gil: ..." the shares of the
 * samples of threads with a Python thread state that held the GIL, and did not. */
static void python_summary(FILE *out, const struct prof *p, uint64_t samples)
{
	static const struct { const char *counter, *what; } kept[] = {
		{ PROF_COUNTER_PY_INCONSISTENT, "inconsistent" },
		{ PROF_COUNTER_PY_CODE_UNKNOWN, "code unknown" },
		{ PROF_COUNTER_PY_UNRECORDED, "not recorded" },
	};
	uint64_t with, n;
	char a[32];
	if (!counter(p, PROF_COUNTER_PY_SAMPLES, &with))
		return;
	fprintf(out, "python:   %llu stacks with Python frames (%s); native frames kept:",
		(unsigned long long)with, rep_share(a, sizeof(a), with, samples));
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		fprintf(out, "%s %s %s", i ? "," : "",
			rep_share(a, sizeof(a), counter(p, kept[i].counter, &n) ? n : 0, samples),
			kept[i].what);
	fputc('\n', out);
	uint64_t held, not_held;
	if (counter(p, PROF_COUNTER_PY_GIL_HELD, &held) &&
	    counter(p, PROF_COUNTER_PY_GIL_NOT_HELD, &not_held) && held + not_held) {
		char b[32];
		fprintf(out, "gil:      %llu samples of Python threads: %s held the GIL, %s did not\n",
			(unsigned long long)(held + not_held),
			rep_share(a, sizeof(a), held, held + not_held),
			rep_share(b, sizeof(b), not_held, held + not_held));
	}
}

/* "ruby:     N stacks with Ruby frames (S%); native frames kept: ..." as Python's, and
 * the stacks whose read failed (marked frames) when there were some. */
static void ruby_summary(FILE *out, const struct prof *p, uint64_t samples)
{
	static const struct { const char *counter, *what; } kept[] = {
		{ PROF_COUNTER_RB_INCONSISTENT, "inconsistent" },
		{ PROF_COUNTER_RB_UNKNOWN, "iseq unknown" },
		{ PROF_COUNTER_RB_UNRECORDED, "not recorded" },
	};
	uint64_t with, n;
	char a[32];
	if (!counter(p, PROF_COUNTER_RB_SAMPLES, &with))
		return;
	fprintf(out, "ruby:     %llu stacks with Ruby frames (%s); native frames kept:",
		(unsigned long long)with, rep_share(a, sizeof(a), with, samples));
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		fprintf(out, "%s %s %s", i ? "," : "",
			rep_share(a, sizeof(a), counter(p, kept[i].counter, &n) ? n : 0, samples),
			kept[i].what);
	if (counter(p, PROF_COUNTER_RB_READ_FAILED, &n) && n)
		fprintf(out, "; %llu stacks read failed", (unsigned long long)n);
	fputc('\n', out);
}

/* "vm:       N stacks with VM frames (S%); loop records left native: ..." (the reasons
 * that occurred; "none" without any). */
static void vm_summary(FILE *out, const struct prof *p, uint64_t samples)
{
	static const struct { const char *counter, *what; } kept[] = {
		{ PROF_COUNTER_VM_CHANGING, "changing" },
		{ PROF_COUNTER_VM_EMPTY, "without frames" },
		{ PROF_COUNTER_VM_TOO_DEEP, "too deep" },
		{ PROF_COUNTER_VM_UNREADABLE, "outside the copy" },
		{ PROF_COUNTER_VM_NO_REGISTRY, "no registry" },
		{ PROF_COUNTER_VM_UNKNOWN, "function not registered" },
		{ PROF_COUNTER_VM_PC_OUTSIDE, "pc outside its function" },
		{ PROF_COUNTER_VM_MALFORMED, "another layout" },
	};
	uint64_t with, n;
	char a[32];
	if (!counter(p, PROF_COUNTER_VM_SAMPLES, &with))
		return;
	fprintf(out, "vm:       %llu stacks with VM frames (%s); loop records left native:",
		(unsigned long long)with, rep_share(a, sizeof(a), with, samples));
	bool any = false;
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (counter(p, kept[i].counter, &n) && n) {
			fprintf(out, "%s %llu %s", any ? "," : "", (unsigned long long)n, kept[i].what);
			any = true;
		}
	fputs(any ? "\n" : " none\n", out);
}

void rep_quality_summary(FILE *out, const struct prof *p)
{
	uint64_t samples, complete, truncated, single, frames;
	if (!counter(p, PROF_COUNTER_SAMPLES, &samples) ||
	    !counter(p, PROF_COUNTER_COMPLETE, &complete) ||
	    !counter(p, PROF_COUNTER_TRUNCATED, &truncated) ||
	    !counter(p, PROF_COUNTER_SINGLE, &single) || !counter(p, PROF_COUNTER_FRAMES, &frames))
		return;
	fprintf(out, "unwind:   %llu stacks: ", (unsigned long long)samples);
	print_shares(out, samples, complete, truncated, single, frames);
	fputc('\n', out);
	python_summary(out, p, samples);
	ruby_summary(out, p, samples);
	vm_summary(out, p, samples);
}
