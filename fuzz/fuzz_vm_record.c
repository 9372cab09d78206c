/*
 * libFuzzer target for mixed mode's loop records (replay/sources/vm/record.h): the input is a
 * registry and a stack copy, "LEN(u32) REGISTRY(LEN bytes, a jitdump) BASE(u64) STACK";
 * the copy is scanned whole and in two halves, as native frames would split it, with the
 * registry given for every agent number. Nothing may be read outside the input, and every
 * frame found must name a function of the registry at a pc inside it. Seeds:
 * fuzz/corpus/vm_record/ (a record with three frames, built by hand).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "replay/sources/vm/record.h"

static int registry(void *arg, uint32_t agent, const struct replay_vm_registry **out)
{
	(void)agent;
	*out = arg;
	return 0;
}

static void scan(const struct replay_vm_copy *c, uint64_t lo, uint64_t hi,
		 struct replay_vm_registry *reg)
{
	struct replay_vm_lookup lk = { registry, reg };
	struct replay_vm_stats st = { 0 };
	replay_vm_frames out = { 0 };
	bool found;
	if (replay_vm_scan(c, lo, hi, &lk, &st, &out, &found))
		err_clear();
	for (size_t i = 0; i < out.n; i++)
		if (out.v[i].pc - out.v[i].code->addr >= out.v[i].code->size)
			abort();
	vec_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t len;
	uint64_t base;
	if (size < 4)
		return 0;
	memcpy(&len, data, 4);
	if (len > size - 4 || size - 4 - len < 8)
		return 0;
	memcpy(&base, data + 4 + len, 8);
	struct replay_vm_registry reg = { 0 };
	if (replay_jitdump_parse("fuzz", data + 4, len, &reg.dump) ||
	    replay_vm_registry_index(&reg)) {
		err_clear();
		replay_vm_registry_free(&reg);
		return 0;
	}
	struct replay_vm_copy c = { data + 12 + len, base, size - 12 - len };
	scan(&c, base, base + c.size, &reg);
	scan(&c, base, base + c.size / 2, &reg);
	scan(&c, base + c.size / 2, base + c.size, &reg);
	replay_vm_registry_free(&reg);
	return 0;
}
