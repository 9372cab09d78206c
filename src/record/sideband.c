/*
 * Side-band records shared by the recording sessions (sideband.h). Synthesized records
 * carry the trailer of sample_id_all for sample types with TID, TIME and CPU (and no ID):
 * pid/tid, time 0 (so that they sort before everything the kernel wrote), cpu 0.
 */
#include "record/sideband.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/err.h"

struct synth {
	rec_emit_fn emit;
	void *arg;
	int pid;
};

static int put_trailer(uint8_t *p, int pid, int tid)
{
	uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid };
	memcpy(p, ids, 8);
	memset(p + 8, 0, 16); /* time 0, cpu 0 */
	return 24;
}

static int synth_map(const struct perf_map_entry *m, void *arg)
{
	struct synth *y = arg;
	/* Data mappings of files too, as mmap_data reports them for new mappings: perf's
	 * unwinder reaches .eh_frame_hdr through them. */
	if (!(m->prot & PROT_EXEC) && m->path[0] != '/')
		return 0;
	uint8_t buf[8192];
	size_t name = strlen(m->path) + 1, pad = (name + 7) / 8 * 8;
	if (pad > 4096)
		return 0;
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
				       (uint16_t)(8 + 8 + 24 + 24 + 8 + pad + 24) };
	uint8_t *p = buf;
	memcpy(p, &h, 8); p += 8;
	uint32_t ids[2] = { (uint32_t)y->pid, (uint32_t)y->pid };
	memcpy(p, ids, 8); p += 8;
	uint64_t v[3] = { m->start, m->end - m->start, m->pgoff };
	memcpy(p, v, 24); p += 24;
	uint32_t dev[2] = { m->maj, m->min };
	uint64_t ino[2] = { m->ino, 0 };
	memcpy(p, dev, 8); memcpy(p + 8, ino, 16); p += 24;
	uint32_t pf[2] = { m->prot, m->flags };
	memcpy(p, pf, 8); p += 8;
	memset(p, 0, pad);
	memcpy(p, m->path, name); p += pad;
	p += put_trailer(p, y->pid, y->pid);
	return y->emit(buf, (size_t)(p - buf), y->arg);
}

int rec_synth_maps(int pid, rec_emit_fn emit, void *arg)
{
	struct synth y = { emit, arg, pid };
	return perf_proc_maps(pid, synth_map, &y);
}

int rec_each_task(int pid, int (*fn)(int pid, int tid, void *arg), void *arg)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return err_set(-ESRCH, "no process %d", pid);
	int r = 0;
	for (struct dirent *e; !r && (e = readdir(d));)
		if (atoi(e->d_name) > 0)
			r = fn(pid, atoi(e->d_name), arg);
	closedir(d);
	return r;
}

/* A COMM record of thread tid at time (0: before everything the kernel wrote). */
static int put_comm(int pid, int tid, const char *comm, uint64_t time, rec_emit_fn emit,
		    void *arg)
{
	uint8_t buf[8 + 8 + 80 + 24], *p = buf;
	size_t len = strnlen(comm, 79), pad = (len + 1 + 7) / 8 * 8;
	struct perf_event_header h = { PERF_RECORD_COMM, PERF_RECORD_MISC_USER,
				       (uint16_t)(8 + 8 + pad + 24) };
	memcpy(p, &h, 8); p += 8;
	uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid };
	memcpy(p, ids, 8); p += 8;
	memset(p, 0, pad);
	memcpy(p, comm, len); p += pad;
	p += put_trailer(p, pid, tid);
	memcpy(p - 16, &time, 8);
	return emit(buf, (size_t)(p - buf), arg);
}

int rec_synth_comm(int pid, int tid, rec_emit_fn emit, void *arg)
{
	char path[64], comm[32] = "";
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(comm, 16, f))
			comm[0] = 0;
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = 0;
	return put_comm(pid, tid, comm, 0, emit, arg);
}

int rec_synth_named(int pid, int tid, const char *name, uint64_t time, rec_emit_fn emit,
		    void *arg)
{
	return put_comm(pid, tid, name, time, emit, arg);
}

void rec_account(struct rec_result *res, struct rec_modules *m, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	switch (h->type) {
	case PERF_RECORD_SAMPLE: res->samples++; break;
	case PERF_RECORD_LOST: res->lost += ((const uint64_t *)rec)[2]; break;
	case PERF_RECORD_THROTTLE: res->throttled++; break;
	case PERF_RECORD_MMAP2: {
		struct rec_mmap mm;
		if (rec_mmap_of(rec, size, &mm))
			rec_modules_note(m, &mm);
		break;
	}
	}
	res->bytes += size;
}
