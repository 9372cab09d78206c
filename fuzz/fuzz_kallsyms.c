/*
 * libFuzzer target for the kallsyms listing reader (/proc/kallsyms or a cache copy from
 * disk, which may be damaged): the input is the listing. Lookups at every address the
 * listing mentions and around them must return a name from it or NULL, never read outside.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1), *str = malloc(size + 1);
	if (!text || !str) {
		free(text);
		free(str);
		return 0;
	}
	memcpy(text, data, size);
	memcpy(str, data, size);
	str[size] = 0; /* for strtoull: the reader gets the listing without a terminator */
	struct replay_kallsyms k;
	replay_kallsyms_from_text(&k, text, size);
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		replay_kallsyms_find(&k, a);
		replay_kallsyms_find(&k, strtoull(str + i, NULL, 16) + (a & 0xff));
	}
	replay_kallsyms_find(&k, 0);
	replay_kallsyms_find(&k, UINT64_MAX);
	replay_kallsyms_free(&k);
	free(str);
	return 0;
}
