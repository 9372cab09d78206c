/*
 * Reading perf.data from a file (records read with pread, a sample's stack copy a prefix at
 * a time) against reading the same bytes from memory (every record whole): the same
 * records, fields, stack bytes and errors. Files are written here with perf_writer,
 * samples laid out as the kernel lays them out (linux/perf_event.h, PERF_RECORD_SAMPLE).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "perf/perf.h"

static char path[64];

static int setup(void **state)
{
	strcpy(path, "/tmp/tally-perf-read.XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	return remove(path);
}

#define REGS_MASK 0xff0fffull /* what perf record --call-graph dwarf asks for: 20 registers */

static struct perf_event_attr attr_of(uint64_t extra)
{
	struct perf_event_attr a = { 0 };
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
			PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
			extra;
	a.sample_regs_user = REGS_MASK;
	a.sample_stack_user = 16384;
	return a;
}

/* One sample: nchain callchain entries, a stack copy of size bytes of which dyn are valid
 * (a pattern that tells each byte's place), and data_src after it when the attribute asks. */
static size_t sample(uint8_t *buf, uint64_t t, uint64_t nchain, uint64_t size, uint64_t dyn,
		     bool data_src)
{
	uint8_t *p = buf + 8;
	uint64_t v;
#define PUT(x) (v = (x), memcpy(p, &v, 8), p += 8)
	PUT(0x401000 + t);
	PUT(42ull | 43ull << 32);
	PUT(1000 * t);
	PUT(1000000);
	PUT(nchain);
	for (uint64_t i = 0; i < nchain; i++)
		PUT(0xffffffff81000000ull + i);
	PUT(2); /* PERF_SAMPLE_REGS_ABI_64 */
	for (int i = 0; i < __builtin_popcountll(REGS_MASK); i++)
		PUT(0x7ffd0000ull + (uint64_t)i);
	PUT(size);
	for (uint64_t i = 0; i < size; i++)
		p[i] = (uint8_t)(i * 7 + t);
	p += size;
	if (size) /* an empty copy has no dyn_size */
		PUT(dyn);
	if (data_src)
		PUT(0x5555);
#undef PUT
	uint16_t hdr[4] = { PERF_RECORD_SAMPLE, 0, 0, (uint16_t)(p - buf) };
	memcpy(buf, hdr, 8);
	return (size_t)(p - buf);
}

/* Writes count samples to path, the t-th of shapes[(t - 1) % nshapes]: callchain entries,
 * copy size, valid bytes. */
static void write_samples(const uint64_t (*shapes)[3], size_t nshapes, uint64_t count,
			  bool data_src)
{
	struct perf_event_attr a = attr_of(data_src ? PERF_SAMPLE_DATA_SRC : 0);
	struct perf_writer *w;
	assert_int_equal(perf_writer_open(path, &a, &w), 0);
	uint8_t *rec = malloc(65536);
	for (uint64_t t = 1; t <= count; t++) {
		const uint64_t *s = shapes[(t - 1) % nshapes];
		size_t n = sample(rec, t, s[0], s[1], s[2], data_src);
		assert_int_equal(perf_writer_add(w, rec, n), 0);
	}
	free(rec);
	uint64_t id = 1;
	assert_int_equal(perf_writer_close(w, &id, 1), 0);
}

/* Samples of several shapes: deep and shallow copies, a callchain longer than what a file
 * read takes up front, a copy with no valid bytes. */
static uint8_t *write_file(bool data_src, size_t *len)
{
	static const uint64_t shapes[][3] = {
		{ 3, 16384, 16384 }, { 3, 16384, 5000 }, { 300, 8192, 8192 },
		{ 3, 4096, 0 },      { 1, 0, 0 },        { 3, 16384, 700 },
	};
	write_samples(shapes, 6, 12, data_src);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t *all = malloc(1 << 20);
	*len = fread(all, 1, 1 << 20, f);
	fclose(f);
	return all;
}

struct seen {
	struct perf_data *d;
	int n;
	uint64_t ip[16], nchain[16], chain_last[16], regs_sp[16], total[16], sum[16];
	uint64_t partial; /* samples whose copy was not all read up front */
};

static int each(const struct perf_event_rec *ev, void *arg)
{
	struct seen *s = arg;
	if (ev->type != PERF_RECORD_SAMPLE || s->n == 16)
		return 0;
	int i = s->n++;
	s->ip[i] = ev->ip;
	s->nchain[i] = ev->nr_callchain;
	s->chain_last[i] = ev->nr_callchain ? perf_callchain_at(ev, ev->nr_callchain - 1) : 0;
	s->regs_sp[i] = ev->regs[PERF_X86_SP];
	s->total[i] = ev->stack_total;
	s->partial += ev->stack_size < ev->stack_total;
	const uint8_t *data = NULL;
	uint64_t size = 0;
	if (ev->stack_total) {
		assert_int_equal(perf_sample_stack(s->d, ev, ev->stack_total, &data, &size), 0);
		assert_true(size >= ev->stack_total);
	}
	for (uint64_t k = 0; k < ev->stack_total; k++)
		s->sum[i] = s->sum[i] * 31 + data[k];
	return 0;
}

static void read_both(bool data_src)
{
	size_t len;
	uint8_t *bytes = write_file(data_src, &len);
	struct seen file = { 0 }, mem = { 0 };
	assert_int_equal(perf_data_open(path, &file.d), 0);
	assert_int_equal(perf_data_each(file.d, each, &file), 0);
	assert_int_equal(perf_data_open_mem("mem", bytes, len, &mem.d), 0);
	assert_int_equal(perf_data_each(mem.d, each, &mem), 0);
	assert_int_equal(file.n, 12);
	assert_int_equal(mem.n, 12);
	assert_memory_equal(file.ip, mem.ip, sizeof(file.ip));
	assert_memory_equal(file.nchain, mem.nchain, sizeof(file.nchain));
	assert_memory_equal(file.chain_last, mem.chain_last, sizeof(file.chain_last));
	assert_memory_equal(file.regs_sp, mem.regs_sp, sizeof(file.regs_sp));
	assert_memory_equal(file.total, mem.total, sizeof(file.total));
	assert_memory_equal(file.sum, mem.sum, sizeof(file.sum));
	/* the shapes as written: dyn_size caps the valid bytes */
	assert_int_equal(mem.total[0], 16384);
	assert_int_equal(mem.total[1], 5000);
	assert_int_equal(mem.nchain[2], 300);
	assert_int_equal(mem.total[3], 0);
	assert_int_equal(mem.total[5], 700);
	/* from the file, deep copies were not read whole up front; from memory they all were */
	assert_true(file.partial > 0);
	assert_int_equal(mem.partial, 0);
	perf_data_close(file.d);
	perf_data_close(mem.d);
	free(bytes);
}

static void file_and_memory_read_the_same_samples(void **state)
{
	read_both(false);
}

/* perf record's default layout puts data_src after dyn_size. */
static void file_and_memory_agree_with_fields_after_the_stack(void **state)
{
	read_both(true);
}

/* A stack copy claiming more bytes than its record holds: the same error either way. */
static void stack_past_its_record_is_the_same_error(void **state)
{
	size_t len;
	uint8_t *bytes = write_file(false, &len);
	/* The first sample's stack size field: after the record's header, ip, tid, time,
	 * period, the callchain (3) and the registers. The first record is at the data
	 * offset (the file header's sixth word). */
	uint64_t data_off;
	memcpy(&data_off, bytes + 40, 8);
	size_t at = data_off + 8 + 4 * 8 + 8 + 3 * 8 + 8 + 8 * __builtin_popcountll(REGS_MASK);
	uint64_t big = 60000;
	memcpy(bytes + at, &big, 8);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	fclose(f);
	struct seen file = { 0 }, mem = { 0 };
	char msg[256];
	assert_int_equal(perf_data_open(path, &file.d), 0);
	assert_int_equal(perf_data_each(file.d, each, &file), -EINVAL);
	snprintf(msg, sizeof(msg), "%s", err_msg());
	char where[64];
	snprintf(where, sizeof(where), "at %#llx: sample runs past its record",
		 (unsigned long long)data_off);
	assert_non_null(strstr(msg, where));
	assert_int_equal(perf_data_open_mem(path, bytes, len, &mem.d), 0);
	assert_int_equal(perf_data_each(mem.d, each, &mem), -EINVAL);
	assert_string_equal(err_msg(), msg);
	perf_data_close(file.d);
	perf_data_close(mem.d);
	free(bytes);
}

struct deep_walks {
	struct perf_data *d;
	uint64_t deep; /* a bit a sample: its walk reads 6,000 bytes into the copy */
	uint64_t upfront[40]; /* the bytes of each copy at hand up front (stack_size) */
	int n;
};

static int walk(const struct perf_event_rec *ev, void *arg)
{
	struct deep_walks *w = arg;
	if (ev->type != PERF_RECORD_SAMPLE || w->n == 40)
		return 0;
	int i = w->n++;
	w->upfront[i] = ev->stack_size;
	if (w->deep >> i & 1) {
		const uint8_t *data;
		uint64_t size;
		assert_int_equal(perf_sample_stack(w->d, ev, 6000, &data, &size), 0);
		assert_true(size >= 6000);
		assert_int_equal(data[5999], (uint8_t)(5999 * 7 + i + 1));
	}
	return 0;
}

/* 40 samples with 16 KiB copies, walked as w->deep says. */
static void walk_deep(struct deep_walks *w)
{
	static const uint64_t deep_copy[][3] = { { 3, 16384, 16384 } };
	write_samples(deep_copy, 1, 40, false);
	assert_int_equal(perf_data_open(path, &w->d), 0);
	assert_int_equal(perf_data_each(w->d, walk, w), 0);
	assert_int_equal(w->n, 40);
	perf_data_close(w->d);
}

/* One deep walk does not make every later record read more up front. */
static void one_deep_walk_leaves_the_prefix(void **state)
{
	struct deep_walks w = { .deep = 1ull << 20 };
	walk_deep(&w);
	for (int i = 0; i < 40; i++)
		assert_int_equal(w.upfront[i], w.upfront[0]);
	assert_true(w.upfront[0] < 6000);
}

/* When every walk goes deep, the records after the first few are read as far as they go. */
static void many_deep_walks_grow_the_prefix(void **state)
{
	struct deep_walks w = { .deep = ~0ull };
	walk_deep(&w);
	assert_true(w.upfront[0] < 6000);
	assert_true(w.upfront[39] >= 6000);
}

/* ---- PMU mappings (perf's PMU_MAPPINGS feature) ---- */

/* A file with one attribute, no records and, when pmus is not NULL, the PMU_MAPPINGS
 * feature of n bytes, laid out as perf lays a file out (tools/perf/util/header.c): header,
 * attribute with its ids' section, the (empty) data section, the feature table, the
 * feature. */
static size_t file_with_pmus(uint8_t *out, const void *pmus, size_t n)
{
	struct perf_event_attr a = attr_of(0);
	uint64_t attr_size = sizeof(a) + 16, data_off = 104 + attr_size;
	uint64_t hdr[13] = { 0x32454c4946524550ull, 104, attr_size, 104, attr_size, data_off, 0 };
	hdr[9] = pmus ? 1ull << PERF_FEAT_PMU_MAPPINGS : 0;
	uint64_t no_ids[2] = { 0, 0 }, table[2] = { data_off + 16, n };
	memcpy(out, hdr, sizeof(hdr));
	memcpy(out + 104, &a, sizeof(a));
	memcpy(out + 104 + sizeof(a), no_ids, 16);
	if (!pmus)
		return data_off;
	memcpy(out + data_off, table, 16);
	memcpy(out + data_off + 16, pmus, n);
	return data_off + 16 + n;
}

/* One PMU's entry at p: its type and a header string of len bytes holding name. */
static size_t pmu_entry(uint8_t *p, uint32_t type, const char *name, uint32_t len)
{
	memcpy(p, &type, 4);
	memcpy(p + 4, &len, 4);
	memset(p + 8, 0, len);
	memcpy(p + 8, name, strlen(name) < len ? strlen(name) : len);
	return 8 + len;
}

/* The feature: count, then uprobe (type 8) and tracepoint (2), padded as perf pads. */
static size_t two_pmus(uint8_t *p, uint32_t count)
{
	memcpy(p, &count, 4);
	size_t n = 4 + pmu_entry(p + 4, 8, "uprobe", 64);
	return n + pmu_entry(p + n, 2, "tracepoint", 64);
}

/* Opens the file image with the feature pmus (n bytes): the error code, and *d on success. */
static int open_pmus(const void *pmus, size_t n, uint8_t *img, struct perf_data **d)
{
	return perf_data_open_mem("pmus.data", img, file_with_pmus(img, pmus, n), d);
}

static void pmu_mappings_name_the_files_types(void **state)
{
	uint8_t pmus[256], img[1024];
	struct perf_data *d;
	assert_int_equal(open_pmus(pmus, two_pmus(pmus, 2), img, &d), 0);
	assert_int_equal(d->npmus, 2);
	assert_string_equal(perf_data_pmu_name(d, 8), "uprobe");
	assert_string_equal(perf_data_pmu_name(d, 2), "tracepoint");
	assert_null(perf_data_pmu_name(d, 9));
	perf_data_close(d);
}

/* tally's recordings before the feature, and any file without it: no names. */
static void without_pmu_mappings_no_type_has_a_name(void **state)
{
	uint8_t img[1024];
	struct perf_data *d;
	assert_int_equal(open_pmus(NULL, 0, img, &d), 0);
	assert_int_equal(d->npmus, 0);
	assert_null(perf_data_pmu_name(d, 8));
	perf_data_close(d);
}

/* Whether the last error is "pmus.data: at OFF: pmu mappings feature: what...", OFF
 * counted from the feature's start (after the header, attribute and feature table). */
static bool pmu_error(size_t off, const char *what)
{
	char want[160];
	snprintf(want, sizeof(want), "pmus.data: at 0x%zx: pmu mappings feature: %s",
		 104 + sizeof(struct perf_event_attr) + 16 + 16 + off, what);
	return strncmp(err_msg(), want, strlen(want)) == 0;
}

/* A count of more PMUs than the section can hold at all fails before anything is
 * allocated for them; one more than it holds fails at the first entry cut off; so does a
 * name longer than the section, and a name without its NUL. */
static void malformed_pmu_mappings_fail_naming_the_file(void **state)
{
	uint8_t pmus[256], img[1024];
	struct perf_data *d;
	size_t n = two_pmus(pmus, UINT32_MAX);
	assert_int_equal(open_pmus(pmus, n, img, &d), -EINVAL);
	assert_true(pmu_error(0, "its count runs past its section"));
	two_pmus(pmus, 3);
	assert_int_equal(open_pmus(pmus, n, img, &d), -EINVAL);
	assert_true(pmu_error(n, "an entry runs past its section"));
	memcpy(pmus, &(uint32_t){ 1 }, 4);
	pmu_entry(pmus + 4, 8, "uprobe", 200);
	assert_int_equal(open_pmus(pmus, 4 + 8 + 64, img, &d), -EINVAL);
	assert_true(pmu_error(4, "an entry runs past its section"));
	pmu_entry(pmus + 4, 8, "uprobe__", 8);
	assert_int_equal(open_pmus(pmus, 4 + 8 + 8, img, &d), -EINVAL);
	assert_true(pmu_error(4, "a name is not terminated"));
}

/* tally's own files map every PMU they list to its type in this machine's /sys (perf
 * report --header-only checks the list is all of them: tests/probes/hits.test.sh). */
static void written_file_maps_the_machines_pmus(void **state)
{
	static const uint64_t one[][3] = { { 1, 0, 0 } };
	write_samples(one, 1, 1, false);
	struct perf_data *d;
	assert_int_equal(perf_data_open(path, &d), 0);
	for (size_t i = 0; i < d->npmus; i++)
		assert_int_equal(perf_pmu_type(d->pmus[i].name), (int)d->pmus[i].type);
	if (perf_pmu_exists("software"))
		assert_string_equal(perf_data_pmu_name(d, PERF_TYPE_SOFTWARE), "software");
	perf_data_close(d);
}

/* A file its recorder never finished, as perf record leaves it: the header (its data size
 * still 0) and the attribute section, then records up to where the kill came, here inside
 * the seventh sample. The six whole samples are read, and the file says it was not
 * finished; with more records after, all twelve. */
static void unfinished_file_reads_its_whole_records(void **state)
{
	size_t len;
	uint8_t *done = write_file(false, &len);
	uint64_t attr_size, attrs_off, data_off, data_size;
	memcpy(&attr_size, done + 16, 8);
	memcpy(&attrs_off, done + 24, 8);
	memcpy(&data_off, done + 40, 8);
	memcpy(&data_size, done + 48, 8);
	uint8_t *img = calloc(1, len + attr_size);
	assert_non_null(img);
	uint64_t hdr[6] = { 0x32454c4946524550ull, 104, attr_size, 104, attr_size, 104 + attr_size };
	memcpy(img, hdr, sizeof(hdr));
	memcpy(img + 104, done + attrs_off, attr_size - 16); /* without ids */
	memcpy(img + 104 + attr_size, done + data_off, data_size);
	size_t samples = 0, off = 104 + attr_size;
	while (samples < 7) {
		struct perf_event_header h;
		memcpy(&h, img + off, sizeof(h));
		samples += h.type == PERF_RECORD_SAMPLE;
		off += samples == 7 ? h.size / 2u : h.size;
	}
	for (int cut = 0; cut < 2; cut++) {
		struct perf_data *d;
		struct seen seen = { 0 };
		assert_int_equal(perf_data_open_mem("cut", img, cut ? off : 104 + attr_size + data_size, &d), 0);
		seen.d = d;
		assert_true(d->unfinished);
		assert_string_equal(d->stopped, "the recorder never finished the file");
		assert_int_equal(perf_data_each(d, each, &seen), 0);
		assert_int_equal(seen.n, cut ? 6 : 12);
		perf_data_close(d);
	}
	free(img);
	free(done);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_and_memory_read_the_same_samples),
		cmocka_unit_test(file_and_memory_agree_with_fields_after_the_stack),
		cmocka_unit_test(stack_past_its_record_is_the_same_error),
		cmocka_unit_test(one_deep_walk_leaves_the_prefix),
		cmocka_unit_test(many_deep_walks_grow_the_prefix),
		cmocka_unit_test(pmu_mappings_name_the_files_types),
		cmocka_unit_test(without_pmu_mappings_no_type_has_a_name),
		cmocka_unit_test(malformed_pmu_mappings_fail_naming_the_file),
		cmocka_unit_test(written_file_maps_the_machines_pmus),
		cmocka_unit_test(unfinished_file_reads_its_whole_records),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
