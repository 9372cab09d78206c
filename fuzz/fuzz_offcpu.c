/*
 * Fuzzes what an off-CPU recording goes through after perf.data parsing: pairing switch
 * samples with switch-in records (replay/offcpu.c), the profile with threads and its
 * sample log, and the outputs that read them (report --threads, the Firefox export).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile/profile.h"
#include "replay/replay.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data *d;
	if (perf_data_open_mem("fuzz", data, size, &d))
		return 0;
	struct prof *p;
	if (!replay_profile(d, UNW_FP, &p)) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (f) {
			struct rep_text_opts o = { .metric = -1, .threshold = -1, .threads = true };
			rep_text(f, p, &o);
			rep_firefox(f, p, -1, "fuzz");
			rep_pprof_threads(f, p);
			rep_speedscope(f, p, "fuzz", true);
			fclose(f);
		}
		free(buf);
		prof_free(p);
	}
	perf_data_close(d);
	return 0;
}
