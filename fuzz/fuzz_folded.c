/*
 * libFuzzer target for the folded-stacks reader; accepted profiles go through the writers
 * (folded must read back, since tally's own folded output is its input too).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile/profile.h"
#include "profile/read.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof *p, *q;
	if (prof_read_folded("fuzz.folded", data, size, &p))
		return 0;
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		struct rep_folded_opts fo = { .metric = -1, .annotate_kinds = true };
		struct rep_text_opts t = { .metric = -1, .tree = true };
		int rc = rep_folded(f, p, &fo);
		fclose(f);
		/* Our own folded output must read back (unless every weight was 0). */
		if (!rc && len && prof_read_folded("again", buf, len, &q) == 0)
			prof_free(q);
		else if (!rc && len)
			abort();
		free(buf);
		f = open_memstream(&buf, &len);
		if (f) {
			rep_text(f, p, &t);
			rep_speedscope(f, p, "fuzz", false);
			fclose(f);
			free(buf);
		}
	}
	prof_free(p);
	return 0;
}
