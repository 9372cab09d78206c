/*
 * Giving a sample's Python records the sample's time (python.h, struct rec_pypair). The
 * records are the kernel's, laid out by the attributes tally opened: a bpf-output sample is
 * header, identifier, pid/tid, time, cpu, raw size, raw (the payload); a CPU sample header,
 * identifier, ip, pid/tid, time, ...
 */
#include "record/python.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"

#define PY_TIME_AT 24     /* bpf-output sample: the time */
#define PY_RAW_AT 44      /* its payload (after the raw size) */
#define CPU_TID_AT 28     /* CPU sample: the tid */
#define CPU_TIME_AT 32    /* and the time */

/* A CPython record's type, 0 for any other (another interpreter's, by its magic). */
static uint16_t payload_type(const void *rec, size_t size)
{
	struct perf_py_stack_head h;
	if (size < PY_RAW_AT + sizeof(h))
		return 0;
	memcpy(&h, (const uint8_t *)rec + PY_RAW_AT, sizeof(h));
	return h.magic == PERF_PY_MAGIC ? h.type : 0;
}

static int hold(struct rec_pypair *pp, const void *rec, size_t size)
{
	if (!vec_reserve_grow((void **)&pp->buf, pp->n, &pp->cap, 1, size))
		return err_set(-ENOMEM, "out of memory");
	memcpy(pp->buf + pp->n, rec, size);
	pp->n += size;
	const size_t tid_at = PY_RAW_AT + offsetof(struct perf_py_stack_head, tid);
	if (payload_type(rec, size) == PERF_PY_STACK)
		memcpy(&pp->tid, (const uint8_t *)rec + tid_at, sizeof(pp->tid));
	return 0;
}

/* The records held, each with the time given (0: as they are); stacks only when paired. */
static int release(struct rec_pypair *pp, bool paired, uint64_t time,
		   int (*emit)(const void *rec, size_t size, void *arg), void *arg)
{
	int r = 0;
	for (size_t at = 0; at + 8 <= pp->n && !r;) {
		uint8_t *rec = pp->buf + at;
		struct perf_event_header h;
		memcpy(&h, rec, sizeof(h));
		/* hold() keeps whole records of the caller's size, each its header's: a header
		 * that says otherwise ends the walk rather than looping on a size of 0 */
		if (h.size < sizeof(h) || h.size > pp->n - at)
			break;
		at += h.size;
		if (payload_type(rec, h.size) == PERF_PY_STACK && !paired) {
			pp->dropped++;
			continue;
		}
		if (paired)
			memcpy(rec + PY_TIME_AT, &time, 8);
		r = emit(rec, h.size, arg);
	}
	pp->n = 0;
	pp->tid = 0;
	return r;
}

void rec_python_account(struct rec_result *res, const void *rec, size_t size)
{
	uint16_t type = payload_type(rec, size);
	res->py_stacks += type == PERF_PY_STACK;
	res->py_codes += type == PERF_PY_CODE;
	res->bytes += size;
}

int rec_pypair_add(struct rec_pypair *pp, bool ours, const void *rec, size_t size,
		   int (*emit)(const void *rec, size_t size, void *arg), void *arg)
{
	if (ours && size >= PY_TIME_AT + 8)
		return hold(pp, rec, size);
	int r = 0;
	if (pp->n) {
		const struct perf_event_header *h = rec;
		uint32_t tid = 0;
		uint64_t time = 0;
		if (h->type == PERF_RECORD_SAMPLE && size >= CPU_TIME_AT + 8) {
			memcpy(&tid, (const uint8_t *)rec + CPU_TID_AT, 4);
			memcpy(&time, (const uint8_t *)rec + CPU_TIME_AT, 8);
		}
		bool paired = pp->tid && h->type == PERF_RECORD_SAMPLE && tid == pp->tid;
		r = release(pp, paired, time, emit, arg);
	}
	return r ? r : emit(rec, size, arg);
}

int rec_pypair_flush(struct rec_pypair *pp, int (*emit)(const void *rec, size_t size,
							  void *arg), void *arg)
{
	return release(pp, false, 0, emit, arg);
}

void rec_pypair_free(struct rec_pypair *pp)
{
	free(pp->buf);
	memset(pp, 0, sizeof(*pp));
}

uint64_t rec_python_time(const void *rec, size_t size)
{
	uint64_t time = 0;
	if (size >= PY_TIME_AT + 8)
		memcpy(&time, (const uint8_t *)rec + PY_TIME_AT, 8);
	return time;
}
