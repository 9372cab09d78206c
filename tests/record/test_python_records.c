/*
 * The Python records on their way into the perf.data (record/python.h): a stack record
 * takes the time of the CPU sample that follows it in its ring, a stack whose sample never
 * came is dropped while code records stay, other records pass untouched and in order; and
 * a file with the bpf-output events' attribute second reads back with each sample on its
 * own attribute. Records are laid out as the kernel lays them out for the attributes tally
 * record opens (linux/perf_event.h, PERF_RECORD_SAMPLE).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/perf.h"
#include "record/python.h"

#define CPU_ID 11
#define PY_ID 22

/* A bpf-output sample: id, pid/tid, time, cpu, raw size, then a payload head of type. */
static size_t py_record(uint8_t *p, uint32_t tid, uint64_t time, uint16_t type)
{
	uint8_t raw[24] = { 0 };
	uint32_t magic = PERF_PY_MAGIC, ids[2] = { 7, tid }, raw_size = 4 + sizeof(raw);
	memcpy(raw, &magic, 4);
	memcpy(raw + 4, &type, 2);
	memcpy(raw + 8, ids, 8);
	uint64_t id = PY_ID, cpu = 0;
	size_t size = 8 + 8 + 8 + 8 + 8 + 4 + sizeof(raw);
	size = (size + 7) / 8 * 8;
	memset(p, 0, size);
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)size };
	memcpy(p, &h, 8);
	memcpy(p + 8, &id, 8);
	memcpy(p + 16, ids, 8);
	memcpy(p + 24, &time, 8);
	memcpy(p + 32, &cpu, 8);
	memcpy(p + 40, &raw_size, 4);
	memcpy(p + 44, raw, sizeof(raw));
	return size;
}

/* A CPU sample: id, ip, pid/tid, time. */
static size_t cpu_record(uint8_t *p, uint32_t tid, uint64_t time)
{
	uint64_t id = CPU_ID, ip = 0x401000;
	uint32_t ids[2] = { 7, tid };
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 40 };
	memcpy(p, &h, 8);
	memcpy(p + 8, &id, 8);
	memcpy(p + 16, &ip, 8);
	memcpy(p + 24, ids, 8);
	memcpy(p + 32, &time, 8);
	return 40;
}

/* A LOST record: id, count. */
static size_t lost_record(uint8_t *p)
{
	uint64_t v[2] = { CPU_ID, 3 };
	struct perf_event_header h = { PERF_RECORD_LOST, 0, 24 };
	memcpy(p, &h, 8);
	memcpy(p + 8, v, 16);
	return 24;
}

struct seen {
	int n;
	uint32_t type[8];
	uint16_t payload[8]; /* of a bpf-output sample, else 0 */
	uint64_t time[8];
};

static int collect(const void *rec, size_t size, void *arg)
{
	struct seen *s = arg;
	const uint8_t *p = rec;
	struct perf_event_header h;
	memcpy(&h, p, 8);
	assert_int_equal(h.size, size);
	assert_true(s->n < 8);
	uint64_t id;
	memcpy(&id, p + 8, 8);
	s->type[s->n] = h.type;
	s->payload[s->n] = 0;
	s->time[s->n] = 0;
	if (h.type == PERF_RECORD_SAMPLE && id == PY_ID) {
		memcpy(&s->payload[s->n], p + 48, 2);
		memcpy(&s->time[s->n], p + 24, 8);
	} else if (h.type == PERF_RECORD_SAMPLE) {
		memcpy(&s->time[s->n], p + 32, 8);
	}
	s->n++;
	return 0;
}

static void add(struct rec_pypair *pp, const uint8_t *rec, size_t size, struct seen *s)
{
	uint64_t id;
	memcpy(&id, rec + 8, 8);
	assert_int_equal(rec_pypair_add(pp, id == PY_ID && rec[0] == PERF_RECORD_SAMPLE, rec,
					size, collect, s), 0);
}

static void stack_takes_its_samples_time(void **state)
{
	struct rec_pypair pp = { 0 };
	struct seen s = { 0 };
	uint8_t a[128], b[128], c[64];
	size_t na = py_record(a, 42, 1000500, PERF_PY_CODE);
	size_t nb = py_record(b, 42, 1000600, PERF_PY_STACK);
	size_t nc = cpu_record(c, 42, 1000000);
	add(&pp, a, na, &s);
	add(&pp, b, nb, &s);
	assert_int_equal(s.n, 0); /* held until the ring's next record */
	add(&pp, c, nc, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.payload[0], PERF_PY_CODE);
	assert_int_equal(s.payload[1], PERF_PY_STACK);
	assert_int_equal(s.payload[2], 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(s.time[i], 1000000);
	assert_int_equal(pp.dropped, 0);
	rec_pypair_free(&pp);
}

static void stack_without_its_sample_is_dropped(void **state)
{
	struct rec_pypair pp = { 0 };
	struct seen s = { 0 };
	uint8_t a[128], b[128], c[64], d[64];
	size_t na = py_record(a, 42, 2000500, PERF_PY_CODE);
	size_t nb = py_record(b, 42, 2000600, PERF_PY_STACK);
	size_t nc = lost_record(c);
	add(&pp, a, na, &s);
	add(&pp, b, nb, &s);
	add(&pp, c, nc, &s);
	/* the code record with its own time, the lost record; the stack is gone */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.payload[0], PERF_PY_CODE);
	assert_int_equal(s.time[0], 2000500);
	assert_int_equal(s.type[1], PERF_RECORD_LOST);
	assert_int_equal(pp.dropped, 1);
	/* another thread's sample does not take a stack either */
	add(&pp, b, nb, &s);
	size_t nd = cpu_record(d, 43, 2000000);
	add(&pp, d, nd, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.payload[2], 0);
	assert_int_equal(pp.dropped, 2);
	/* held records at the end: code kept, stack dropped */
	add(&pp, a, na, &s);
	add(&pp, b, nb, &s);
	assert_int_equal(rec_pypair_flush(&pp, collect, &s), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.payload[3], PERF_PY_CODE);
	assert_int_equal(pp.dropped, 3);
	rec_pypair_free(&pp);
}

static void other_records_pass_in_order(void **state)
{
	struct rec_pypair pp = { 0 };
	struct seen s = { 0 };
	uint8_t a[64], b[64], c[64];
	size_t na = cpu_record(a, 42, 10), nb = lost_record(b), nc = cpu_record(c, 42, 30);
	add(&pp, a, na, &s);
	add(&pp, b, nb, &s);
	add(&pp, c, nc, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.time[0], 10);
	assert_int_equal(s.type[1], PERF_RECORD_LOST);
	assert_int_equal(s.time[2], 30);
	rec_pypair_free(&pp);
}

struct walk {
	int n;
	const struct perf_attr_info *attr[4];
	uint32_t tid[4];
	uint64_t time[4];
};

static int walk(const struct perf_event_rec *ev, void *arg)
{
	struct walk *w = arg;
	if (ev->type != PERF_RECORD_SAMPLE)
		return 0;
	assert_true(w->n < 4);
	w->attr[w->n] = ev->attr;
	w->tid[w->n] = ev->tid;
	w->time[w->n++] = ev->time;
	return 0;
}

static void second_attribute_reads_back(void **state)
{
	char path[] = "/tmp/tally-py-attr.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct perf_event_attr cpu = { .size = sizeof(cpu), .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_CPU_CLOCK, .sample_id_all = 1,
				       .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
						      PERF_SAMPLE_TID | PERF_SAMPLE_TIME };
	struct perf_event_attr out = { .size = sizeof(out), .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_BPF_OUTPUT, .sample_id_all = 1,
				       .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
						      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
						      PERF_SAMPLE_RAW };
	struct perf_writer *w;
	assert_int_equal(perf_writer_open(path, &cpu, &w), 0);
	uint8_t a[128], b[64];
	size_t na = py_record(a, 42, 500, PERF_PY_STACK), nb = cpu_record(b, 42, 500);
	assert_int_equal(perf_writer_add(w, a, na), 0);
	assert_int_equal(perf_writer_add(w, b, nb), 0);
	uint64_t cpu_ids[] = { CPU_ID, 12 }, py_ids[] = { PY_ID };
	assert_int_equal(perf_writer_add_attr(w, &out, py_ids, 1), 0);
	assert_int_equal(perf_writer_close(w, cpu_ids, 2), 0);

	struct perf_data *d;
	assert_int_equal(perf_data_open(path, &d), 0);
	assert_int_equal(d->nattrs, 2);
	assert_int_equal(d->attrs[0].attr.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(d->attrs[0].nids, 2);
	assert_int_equal(d->attrs[1].attr.config, PERF_COUNT_SW_BPF_OUTPUT);
	assert_int_equal(d->attrs[1].nids, 1);
	struct walk wk = { 0 };
	assert_int_equal(perf_data_each(d, walk, &wk), 0);
	assert_int_equal(wk.n, 2);
	/* the same time: file order, the stack first */
	assert_ptr_equal(wk.attr[0], &d->attrs[1]);
	assert_ptr_equal(wk.attr[1], &d->attrs[0]);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(wk.tid[i], 42);
		assert_int_equal(wk.time[i], 500);
	}
	perf_data_close(d);
	remove(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stack_takes_its_samples_time),
		cmocka_unit_test(stack_without_its_sample_is_dropped),
		cmocka_unit_test(other_records_pass_in_order),
		cmocka_unit_test(second_attribute_reads_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
