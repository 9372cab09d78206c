/*
 * What every reader of an interpreter's frames shares (interp.h): the read of a target's
 * memory and the attribute its records are written under.
 */
#include "record/interp.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

int rec_mem_read_process(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv((pid_t)(uintptr_t)arg, &local, 1, &remote, 1, 0);
	return got == (ssize_t)n ? 0 : -EIO;
}

/* Samples of a bpf-output event (the BPF program's, or as if): one per record, with the
 * same clock as the CPU samples (the order of a thread's stacks and samples is their
 * times'), and an identifier first so that readers tell them from the CPU samples. Replay
 * takes every sample of this kind of attribute for an interpreter's record (each
 * section's magic says whose). */
void rec_interp_output_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_hv = 1;
	a->exclude_guest = 1;
}
