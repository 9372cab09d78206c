/*
 * Every reader on real files cut short: each seed of fuzz/corpus/ (an ELF executable and
 * objects, perf.data from perf and from tally, pprof gzipped and plain, jitdumps, perf
 * maps, kallsyms listings, folded stacks) and the Solana fixtures of tests/solana/fixtures/
 * is read whole and then cut at up to 1,500 points, each cut in a buffer of exactly its
 * size (so that ASan sees any read past it). Every read must succeed or fail with a message,
 * and all the cuts of one file together within 20 s (boundedness, not speed: ASan's runs
 * take a few hundred milliseconds). Run from the repository root, as tests/run.sh does.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "base/err.h"
#include "base/file.h"
#include "elf/elf.h"
#include "perf/perf.h"
#include "profile/profile.h"
#include "profile/read.h"
#include "replay/sources/jitdump/jitdump.h"
#include "replay/kallsyms.h"
#include "replay/sources/perfmap/perfmap.h"
#include "solana/fixture.h"

enum { MAX_CUTS = 1500, SECONDS_PER_FILE = 20 };

/* Reads data (size bytes, malloc'd just so): 0, or negative with the message set. */
typedef int (*reader_fn)(const uint8_t *data, size_t size);

static int read_elf(const uint8_t *data, size_t size)
{
	struct elf_file *f;
	int rc = elf_open_mem("cut.elf", data, size, &f);
	if (rc)
		return rc;
	for (size_t i = 0; i < f->nsections; i++) {
		const uint8_t *p;
		size_t n;
		elf_section_data(f, &f->sections[i], &p, &n);
	}
	struct elf_symtab t;
	if (!elf_symbols(f, ELF_SYMS_BOTH, true, &t))
		elf_symtab_free(&t);
	elf_close(f);
	return 0;
}

static int count_record(const struct perf_event_rec *ev, void *arg)
{
	++*(size_t *)arg;
	return 0;
}

static int read_perf_data(const uint8_t *data, size_t size)
{
	struct perf_data *d;
	int rc = perf_data_open_mem("cut.data", data, size, &d);
	if (rc)
		return rc;
	size_t n = 0;
	rc = perf_data_each(d, count_record, &n);
	perf_data_close(d);
	return rc < 0 ? rc : 0;
}

static int read_pprof(const uint8_t *data, size_t size)
{
	struct prof *p;
	int rc = prof_read_pprof("cut.pb", data, size, &p);
	if (!rc)
		prof_free(p);
	return rc;
}

static int read_folded(const uint8_t *data, size_t size)
{
	struct prof *p;
	int rc = prof_read_folded("cut.folded", data, size, &p);
	if (!rc)
		prof_free(p);
	return rc;
}

static int read_jitdump(const uint8_t *data, size_t size)
{
	struct replay_jitdump *d;
	int rc = replay_jitdump_parse("cut.dump", data, size, &d);
	if (!rc)
		replay_jitdump_free(d);
	return rc;
}

static int read_perfmap(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct replay_perfmap *m;
	if (!f) /* glibc's fmemopen refuses an empty buffer: an empty map reads as nothing */
		return size ? err_set(-1, "fmemopen failed") : 0;
	int rc = replay_perfmap_read(f, "cut.map", NULL, &m);
	fclose(f);
	if (!rc)
		replay_perfmap_free(m);
	return rc;
}

static int read_kallsyms(const uint8_t *data, size_t size)
{
	/* The listing becomes the reader's: a copy it may keep and frees. */
	char *text = malloc(size ? size : 1);
	if (!text)
		return err_set(-1, "out of memory");
	memcpy(text, data, size);
	struct replay_kallsyms k;
	replay_kallsyms_from_text(&k, text, size);
	replay_kallsyms_free(&k);
	return 0;
}

static int read_fixture(const uint8_t *data, size_t size)
{
	struct sol_fixture *f;
	int rc = sol_fixture_parse("tests/solana/fixtures/cut.json", (const char *)data, size, &f);
	if (!rc)
		sol_fixture_free(f);
	return rc;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Reads path whole, then each cut; returns how many cuts were read. */
static size_t cut_file(const char *path, reader_fn read)
{
	uint8_t *whole;
	size_t size;
	if (file_read(path, &whole, &size))
		fail_msg("%s: %s", path, err_msg());
	size_t step = size / MAX_CUTS + 1, cuts = 0;
	double t0 = now();
	for (size_t len = 0; len <= size; len += len < 256 ? 1 : step) {
		uint8_t *cut = malloc(len ? len : 1);
		assert_non_null(cut);
		memcpy(cut, whole, len);
		err_clear();
		int rc = read(cut, len);
		free(cut);
		if (rc > 0 || (rc < 0 && !*err_msg()))
			fail_msg("%s cut at %zu bytes: returned %d without a message", path, len, rc);
		cuts++;
	}
	double took = now() - t0;
	if (took > SECONDS_PER_FILE)
		fail_msg("%s: %zu cuts took %.1f s", path, cuts, took);
	free(whole);
	return cuts;
}

/* Every regular file of dir; returns how many. */
static size_t cut_dir(const char *dir, reader_fn read)
{
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("%s: cannot open (run from the repository root)", dir);
	struct dirent *e;
	size_t files = 0;
	char path[512];
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		cut_file(path, read);
		files++;
	}
	closedir(d);
	assert_true(files > 0);
	return files;
}

static void elf_cut_anywhere_fails_cleanly(void **state)
{
	cut_dir("fuzz/corpus/elf", read_elf);
	cut_dir("fuzz/corpus/symbolize", read_elf);
}

static void perf_data_cut_anywhere_fails_cleanly(void **state)
{
	cut_dir("fuzz/corpus/perf_data", read_perf_data);
}

static void pprof_cut_anywhere_fails_cleanly(void **state)
{
	cut_dir("fuzz/corpus/pprof", read_pprof);
}

static void folded_cut_anywhere_reads(void **state)
{
	cut_dir("fuzz/corpus/folded", read_folded);
}

static void jitdump_cut_anywhere_fails_cleanly(void **state)
{
	cut_dir("fuzz/corpus/jitdump", read_jitdump);
}

static void perfmap_cut_anywhere_reads(void **state)
{
	cut_dir("fuzz/corpus/perfmap", read_perfmap);
}

static void kallsyms_cut_anywhere_reads(void **state)
{
	cut_dir("fuzz/corpus/kallsyms", read_kallsyms);
}

static void fixture_cut_anywhere_fails_cleanly(void **state)
{
	cut_dir("tests/solana/fixtures", read_fixture);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(elf_cut_anywhere_fails_cleanly),
		cmocka_unit_test(perf_data_cut_anywhere_fails_cleanly),
		cmocka_unit_test(pprof_cut_anywhere_fails_cleanly),
		cmocka_unit_test(folded_cut_anywhere_reads),
		cmocka_unit_test(jitdump_cut_anywhere_fails_cleanly),
		cmocka_unit_test(perfmap_cut_anywhere_reads),
		cmocka_unit_test(kallsyms_cut_anywhere_reads),
		cmocka_unit_test(fixture_cut_anywhere_fails_cleanly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
