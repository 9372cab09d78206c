/*
 * Loading the Python-frames BPF program (python.h). The object clang built from
 * bpf/python_stack.bpf.c is embedded here with .incbin (the Makefile passes its path), so
 * tally and libtally carry it and nothing is looked up at run time. libbpf loads it; its
 * own messages are silenced, the failure that matters is reported with what to change.
 */
#include "record/python.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/err.h"
#include "base/vec.h"

#ifndef PY_BPF_OBJECT
#error "PY_BPF_OBJECT: the path of the compiled python_stack.bpf.o (set by the Makefile)"
#endif

__asm__(".pushsection .rodata\n"
	".balign 8\n"
	"py_bpf_object:\n"
	".incbin \"" PY_BPF_OBJECT "\"\n"
	"py_bpf_object_end:\n"
	".popsection\n");
extern const char py_bpf_object[], py_bpf_object_end[];

struct rec_python {
	struct bpf_object *obj;
	int prog_fd, procs_fd, events_fd, counters_fd;
	struct perf_event_attr attr;
	uint32_t task_fsbase; /* py_settings.task_fsbase */
	VEC(int) out_fds;
	VEC(uint64_t) out_ids;
};

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int map_fd(struct rec_python *p, const char *name)
{
	return bpf_object__find_map_fd_by_name(p->obj, name);
}

/* The byte offset of member name in the struct type called type (BTF), or 0. */
static uint32_t member_offset(const struct btf *btf, const char *type, const char *name)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	if (!t)
		return 0;
	const struct btf_member *m = btf_members(t);
	for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		if (n && !strcmp(n, name) && !btf_member_bitfield_size(t, i))
			return btf_member_bit_offset(t, i) / 8;
	}
	return 0;
}

/* Where the running kernel keeps a task's FS base, task_struct.thread.fsbase (x86-64), by
 * its BTF: 0 when it has none or the members are not there. */
static uint32_t task_fsbase_offset(void)
{
#if defined(__x86_64__)
	struct btf *btf = btf__load_vmlinux_btf();
	if (!btf)
		return 0;
	uint32_t thread = member_offset(btf, "task_struct", "thread"),
		 fsbase = member_offset(btf, "thread_struct", "fsbase");
	btf__free(btf);
	return thread && fsbase ? thread + fsbase : 0;
#else
	return 0;
#endif
}

uint32_t rec_python_task_fsbase(const struct rec_python *p)
{
	return p ? p->task_fsbase : 0;
}

/* The map's keys are pids as tally sees them: the program asks for them in tally's pid
 * namespace (which may not be the kernel's first). */
static int set_settings(struct rec_python *p)
{
	struct stat st;
	if (stat("/proc/self/ns/pid", &st))
		return err_set(-errno, "Python frames: /proc/self/ns/pid: %s", strerror(errno));
	p->task_fsbase = task_fsbase_offset();
	struct py_settings s = { .pidns_dev = st.st_dev, .pidns_ino = st.st_ino,
				 .task_fsbase = p->task_fsbase };
	uint32_t zero = 0;
	if (bpf_map_update_elem(map_fd(p, "settings"), &zero, &s, BPF_ANY))
		return err_set(-errno, "Python frames: BPF map update: %s", strerror(errno));
	return 0;
}

static int load_error(int e)
{
	if (e == EPERM || e == EACCES)
		return err_set(-e, "Python frames need BPF: loading the program: %s (run as root, "
				   "or give tally CAP_BPF and CAP_PERFMON)", strerror(e));
	return err_set(-e, "Python frames need BPF: loading the program: %s", strerror(e));
}

int rec_python_open(struct rec_python **out)
{
	struct rec_python *p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(-ENOMEM, "out of memory");
	libbpf_set_print(silent);
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "tally_python");
	p->obj = bpf_object__open_mem(py_bpf_object, (size_t)(py_bpf_object_end - py_bpf_object),
				      &oo);
	int r;
	if (!p->obj) {
		r = load_error(errno ? errno : EINVAL);
		free(p);
		return r;
	}
	if (bpf_object__load(p->obj)) {
		r = load_error(errno ? errno : EINVAL);
		rec_python_close(p);
		return r;
	}
	struct bpf_program *prog = bpf_object__find_program_by_name(p->obj, "python_stack");
	p->prog_fd = prog ? bpf_program__fd(prog) : -1;
	p->procs_fd = map_fd(p, "procs");
	p->events_fd = map_fd(p, "events");
	p->counters_fd = map_fd(p, "counters");
	if (p->prog_fd < 0 || p->procs_fd < 0 || p->events_fd < 0 || p->counters_fd < 0) {
		rec_python_close(p);
		return err_set(-EINVAL, "Python frames: the embedded BPF object lacks its program "
					"or maps");
	}
	if ((r = set_settings(p))) {
		rec_python_close(p);
		return r;
	}
	*out = p;
	return 0;
}

void rec_python_close(struct rec_python *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->out_fds.n; i++)
		close(p->out_fds.v[i]);
	vec_free(&p->out_fds);
	vec_free(&p->out_ids);
	bpf_object__close(p->obj);
	free(p);
}

int rec_python_attach(struct rec_python *p, int perf_fd)
{
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, p->prog_fd) < 0)
		return err_set(-errno, "Python frames: attaching the BPF program to the sampling "
				       "event: %s", strerror(errno));
	return 0;
}


static int open_output(struct rec_python *p, int cpu, int ring_fd)
{
	int fd;
	int r = perf_open(&p->attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC, &fd);
	if (r)
		return err_prefix(r, "Python frames: the bpf-output event of CPU %d", cpu);
	uint64_t id = 0;
	uint32_t key = (uint32_t)cpu, val = (uint32_t)fd;
	if (!vec_reserve(&p->out_fds, 1) || !vec_reserve(&p->out_ids, 1)) {
		close(fd);
		return err_set(-ENOMEM, "out of memory");
	}
	*vec_push(&p->out_fds) = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return err_set(-errno, "Python frames: bpf-output event id: %s", strerror(errno));
	*vec_push(&p->out_ids) = id;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) < 0)
		return err_set(-errno, "Python frames: redirecting the bpf-output event of CPU %d: "
				       "%s", cpu, strerror(errno));
	if (bpf_map_update_elem(p->events_fd, &key, &val, BPF_ANY))
		return err_set(-errno, "Python frames: BPF map update: %s", strerror(errno));
	return 0;
}

int rec_python_outputs(struct rec_python *p, const int *cpu, const int *ring_fd, int n)
{
	rec_interp_output_attr(&p->attr);
	for (int i = 0; i < n; i++) {
		int r = open_output(p, cpu[i], ring_fd[i]);
		if (r)
			return r;
	}
	return 0;
}

const struct perf_event_attr *rec_python_attr(const struct rec_python *p) { return &p->attr; }

const uint64_t *rec_python_ids(const struct rec_python *p, size_t *n)
{
	*n = p->out_ids.n;
	return p->out_ids.v;
}

bool rec_python_owns(const struct rec_python *p, const void *rec, size_t size)
{
	uint64_t id;
	if (!perf_sample_id(rec, size, &id))
		return false;
	for (size_t i = 0; i < p->out_ids.n; i++)
		if (p->out_ids.v[i] == id)
			return true;
	return false;
}

int rec_python_set(struct rec_python *p, uint32_t pid, const struct py_proc_cfg *cfg)
{
	if (bpf_map_update_elem(p->procs_fd, &pid, cfg, BPF_ANY))
		return err_set(-errno, "Python frames: process %u: BPF map update: %s", pid,
			       strerror(errno));
	return 0;
}

void rec_python_unset(struct rec_python *p, uint32_t pid)
{
	bpf_map_delete_elem(p->procs_fd, &pid);
}

void rec_python_counters(const struct rec_python *p, struct py_counters *sum)
{
	memset(sum, 0, sizeof(*sum));
	int n = libbpf_num_possible_cpus();
	if (n <= 0)
		return;
	struct py_counters *per = calloc((size_t)n, sizeof(*per));
	uint32_t zero = 0;
	if (!per || bpf_map_lookup_elem(p->counters_fd, &zero, per)) {
		free(per);
		return;
	}
	for (int i = 0; i < n; i++) {
		sum->stacks += per[i].stacks;
		sum->codes += per[i].codes;
		sum->output_lost += per[i].output_lost;
		sum->no_thread += per[i].no_thread;
		sum->runs += per[i].runs;
		sum->run_ns += per[i].run_ns;
	}
	free(per);
}
