/*
 * libFuzzer target for the perf-PID.map reader: the input is the map. Lookups at every
 * number the input spells and around them must give NULL or a name whose line starts at or
 * below the pc, never read outside; warnings go nowhere.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/sources/perfmap/perfmap.h"

static void probe(const struct replay_perfmap *m, uint64_t pc)
{
	uint64_t start;
	const char *name = replay_perfmap_find(m, pc, &start);
	if (name && (start > pc || !name[0] || strlen(name) > 65536))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	struct replay_perfmap *m;
	int rc = replay_perfmap_read(f, "fuzz.map", NULL, &m);
	fclose(f);
	if (rc)
		return 0;
	/* every run of hex digits in the input, as an address, and its neighbours */
	for (size_t i = 0; i < size; i++) {
		uint64_t v = 0;
		size_t j = i;
		for (; j < size && j - i < 16 && strchr("0123456789abcdefABCDEF", data[j]) && data[j];
		     j++)
			v = v << 4 | (uint64_t)(data[j] <= '9' ? data[j] - '0' : (data[j] | 0x20) - 'a' + 10);
		if (j > i) {
			probe(m, v - 1);
			probe(m, v);
			probe(m, v + 1);
			i = j;
		}
	}
	probe(m, 0);
	probe(m, UINT64_MAX);
	replay_perfmap_free(m);
	return 0;
}
