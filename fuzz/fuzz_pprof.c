/*
 * libFuzzer target for the pprof reader (gzipped or plain profile.proto). Whatever it
 * accepts is also pushed through every writer and filter, which must cope with any profile
 * a reader can produce.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile/profile.h"
#include "profile/read.h"
#include "report/report.h"

static void exercise(const struct prof *p)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	struct rep_text_opts t = { .metric = -1 };
	struct rep_folded_opts fo = { .metric = -1, .annotate_kinds = true };
	struct rep_diff_opts d = { -1, -1, 0 };
	rep_text(f, p, &t);
	t.tree = true;
	rep_text(f, p, &t);
	rep_folded(f, p, &fo);
	rep_speedscope(f, p, "fuzz", false);
	rep_pprof(f, p);
	rep_diff(f, p, p, &d);
	fclose(f);
	free(buf);
	struct prof *q;
	if (!prof_fold_recursion(p, &q))
		prof_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof *p;
	if (!prof_sniff_pprof(data, size) && size && data[0] != 0x1f)
		return 0;
	if (prof_read_pprof("fuzz.pb", data, size, &p))
		return 0;
	exercise(p);
	prof_free(p);
	return 0;
}
