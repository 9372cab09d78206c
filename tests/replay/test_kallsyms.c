/*
 * Kernel symbols found by binary search in the listing agree with a plain parse of
 * /proc/kallsyms (the oracle: every text line, sorted), for the kernel's own symbols and
 * for modules'; a cache copy is used only when it matches the running kernel's listing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "elf/elf.h"
#include "perf/keep.h"
#include "replay/kallsyms.h"

struct sym {
	uint64_t addr;
	char name[128];
};

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Every t/T line of /proc/kallsyms, sorted; 0 symbols without root. BPF programs
 * ("[bpf]") and ftrace's trampolines ("[__builtin__ftrace]") are left out: they come and
 * go whenever any process loads a BPF program or a probe, as the tests beside this one do,
 * so the listing read a moment later need not hold the same ones. */
static struct sym *oracle(size_t *n)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t cap = 1 << 17;
	struct sym *v = malloc(cap * sizeof(*v));
	char line[512], type, module[64];
	unsigned long long addr;
	*n = 0;
	while (f && v && fgets(line, sizeof(line), f)) {
		struct sym s;
		int got = sscanf(line, "%llx %c %127s %63s", &addr, &type, s.name, module);
		if (got < 3 || !addr || (type != 't' && type != 'T'))
			continue;
		if (got == 4 && (!strcmp(module, "[bpf]") || !strncmp(module, "[__builtin__", 12)))
			continue;
		s.addr = addr;
		if (*n == cap)
			v = realloc(v, (cap *= 2) * sizeof(*v));
		if (v)
			v[(*n)++] = s;
	}
	if (f)
		fclose(f);
	qsort(v, *n, sizeof(*v), by_addr);
	return v;
}

/* Names at a spread of addresses: each symbol's start and a byte into it, where the
 * oracle has one symbol per address (aliases make the choice among several arbitrary). */
static void check_against_oracle(struct replay_kallsyms *k, const struct sym *v, size_t n)
{
	size_t checked = 0, modules = 0;
	for (size_t i = 0; i < n; i += (i % 97 == 0 ? 1 : 37)) {
		if ((i && v[i - 1].addr == v[i].addr) || (i + 1 < n && v[i + 1].addr == v[i].addr))
			continue;
		for (uint64_t off = 0; off < 2; off++) {
			if (off && i + 1 < n && v[i + 1].addr == v[i].addr + 1)
				continue;
			const char *name = replay_kallsyms_find(k, v[i].addr + off);
			if (!name || strcmp(name, v[i].name))
				fail_msg("0x%llx: %s, expected %s", (unsigned long long)(v[i].addr + off),
					 name ? name : "(none)", v[i].name);
			checked++;
		}
		modules += v[i].addr >= 0xffffffffc0000000ull;
	}
	/* the last symbol: a module's (or ftrace's trampoline, tagged like one) */
	const char *last = replay_kallsyms_find(k, v[n - 1].addr + 1);
	assert_non_null(last);
	assert_true(!strcmp(last, v[n - 1].name) || v[n - 2].addr == v[n - 1].addr);
	modules += v[n - 1].addr >= 0xffffffffc0000000ull;
	assert_true(checked > 1000);
	print_message("%zu lookups (%zu in module space) agree\n", checked, modules);
	assert_null(replay_kallsyms_find(k, v[0].addr - 1));
}

static char cache_dir[64];

/* Without root the listing has no addresses: skipped, except under CI (which runs as
 * root), where a skip would hide a broken setup. */
static void need_addresses(size_t n, bool have_build_id)
{
	if (n && have_build_id)
		return;
	const char *ci = getenv("CI");
	if (ci && !strcmp(ci, "true"))
		fail_msg("/proc/kallsyms shows no addresses or the kernel has no build-id");
	skip();
}

static void kallsyms_lookup_matches_proc(void **state)
{
	size_t n;
	struct sym *v = oracle(&n);
	need_addresses(n, true);
	setenv("PERF_BUILDID_DIR", cache_dir, 1); /* empty: read /proc/kallsyms */
	struct replay_kallsyms k;
	replay_kallsyms_load(&k);
	assert_false(k.mapped);
	check_against_oracle(&k, v, n);
	replay_kallsyms_free(&k);
	free(v);
}

static void kallsyms_cache_copy_is_used_when_it_matches(void **state)
{
	size_t n;
	struct sym *v = oracle(&n);
	uint8_t id[20];
	need_addresses(n, elf_kernel_build_id(id) > 0);
	setenv("PERF_BUILDID_DIR", cache_dir, 1);
	perf_kallsyms_save();
	struct replay_kallsyms k;
	replay_kallsyms_load(&k);
	assert_true(k.mapped);
	check_against_oracle(&k, v, n);
	replay_kallsyms_free(&k);

	/* A copy from another boot (addresses moved) is not used. */
	char hex[41], path[256];
	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s/kallsyms", cache_dir, hex);
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	fputs("ffffffff00000000", f);
	fclose(f);
	replay_kallsyms_load(&k);
	assert_false(k.mapped);
	check_against_oracle(&k, v, n);
	replay_kallsyms_free(&k);
	free(v);
}

int main(void)
{
	snprintf(cache_dir, sizeof(cache_dir), "/tmp/tally-ksyms.%d", (int)getpid());
	mkdir(cache_dir, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kallsyms_lookup_matches_proc),
		cmocka_unit_test(kallsyms_cache_copy_is_used_when_it_matches),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache_dir);
	if (system(cmd))
		r = r ? r : 1;
	return r;
}
