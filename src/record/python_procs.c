/*
 * Which processes of a session run CPython 3.8-3.13, found from their records as they arrive
 * (python.h): an executable mapping of a file that defines _PyRuntime starts reading its
 * frames, with the layout from that file's debug information and the load bias of the
 * mapping; exec and exit stop it; fork copies it (same addresses in the child). The BPF
 * map is only told; the program does the reading at each sample.
 */
#include "record/python.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/err.h"
#include "base/vec.h"
#include "cpython/code.h"
#include "cpython/layout.h"
#include "elf/elf.h"
#include "record/modules.h"
#include "record/python_walk.h"

/* A thread-state list longer than this is not walked to its end (the sample then has no
 * Python frames, counted): a bound on the program's time per sample. */
#define MAX_THREADS 1024
/* Mapped files checked and held at most (see forget_others). */
#define MAX_FILES 1024

/* A mapped file, checked once: an interpreter with its layout, or not. */
struct rec_pyfile {
	uint32_t maj, min;
	uint64_t ino;
	int status; /* 0: a CPython 3.8-3.13 with its layout; 1: no interpreter; < 0: unusable */
	struct cpy_layout layout;
	struct elf_segment load[8]; /* its PT_LOAD segments, for load biases */
	size_t nload;
};

struct rec_pyproc {
	uint32_t pid;
	struct py_proc_cfg cfg;
	struct cpy_layout layout; /* its interpreter's, for the names of its threads */
};

void rec_pyprocs_init(struct rec_pyprocs *pp, struct rec_ptrace *trace)
{
	memset(pp, 0, sizeof(*pp));
	int r = rec_python_open(&pp->bpf);
	if (!r)
		return;
	pp->bpf = NULL;
	pp->why = strdup(err_msg());
	err_clear();
	if (r == -EPERM || r == -EACCES)
		pp->trace = trace;
}

bool rec_pyprocs_on(const struct rec_pyprocs *pp) { return pp->bpf || pp->trace; }

/* Stops reading process pid's frames, in whichever mode. */
static void unset(struct rec_pyprocs *pp, uint32_t pid)
{
	if (pp->bpf)
		rec_python_unset(pp->bpf, pid);
	else if (pp->trace)
		rec_ptrace_stop(pp->trace, pid);
}

void rec_pyprocs_disable(struct rec_pyprocs *pp)
{
	for (size_t i = 0; i < pp->nprocs; i++)
		unset(pp, pp->procs[i].pid);
	pp->nprocs = 0;
	pp->seen = 0;
	rec_python_close(pp->bpf);
	pp->bpf = NULL;
	pp->trace = NULL;
	pp->warned_why = true; /* the warning said why */
}

void rec_pyprocs_regen(struct rec_pyprocs *pp)
{
	for (size_t i = 0; pp->bpf && i < pp->nprocs; i++) {
		pp->procs[i].cfg.gen = ++pp->gen;
		if (rec_python_set(pp->bpf, pp->procs[i].pid, &pp->procs[i].cfg))
			err_clear(); /* gone meanwhile: its EXIT record stops it */
	}
}

void rec_pyprocs_free(struct rec_pyprocs *pp)
{
	rec_python_close(pp->bpf);
	free(pp->why);
	free(pp->files);
	free(pp->procs);
	memset(pp, 0, sizeof(*pp));
}

static struct rec_pyproc *find_proc(struct rec_pyprocs *pp, uint32_t pid)
{
	for (size_t i = 0; i < pp->nprocs; i++)
		if (pp->procs[i].pid == pid)
			return &pp->procs[i];
	return NULL;
}

static void stop_proc(struct rec_pyprocs *pp, uint32_t pid)
{
	struct rec_pyproc *p = find_proc(pp, pid);
	if (!p)
		return;
	unset(pp, pid);
	*p = pp->procs[--pp->nprocs];
}

static void start_proc(struct rec_pyprocs *pp, uint32_t pid, const struct py_proc_cfg *cfg,
		       const struct cpy_layout *layout)
{
	struct rec_pyproc *p = find_proc(pp, pid);
	if (!p) {
		p = vec_push_raw((void **)&pp->procs, &pp->nprocs, &pp->capprocs, sizeof(*p));
		if (!p)
			return;
		pp->seen++;
	}
	pp->awaited = false;
	p->pid = pid;
	p->cfg = *cfg;
	p->cfg.gen = ++pp->gen;
	p->layout = *layout;
	struct rec_interp_proc ip;
	int r = pp->bpf ? rec_python_set(pp->bpf, pid, &p->cfg)
		: rec_python_interp(&p->cfg, &ip) ?: rec_ptrace_start(pp->trace, pid, ip);
	if (r) {
		if (r != -ESRCH) /* not one that ended meanwhile */
			fprintf(stderr, "tally record: warning: %s%s; recording its native frames "
					"only\n", err_msg(),
				pp->bpf ? "" : " (Python frames by ptrace: a process of another user "
					       "needs BPF mode: root, or CAP_BPF and CAP_PERFMON)");
		err_clear();
		pp->nprocs--;
	} else if (pp->trace && !pp->warned_why) {
		fprintf(stderr, "tally record: process %u: Python frames read in ptrace mode: "
				"each sampled thread is stopped while they are read (allowed for "
				"your own processes); BPF mode reads them without stopping it and "
				"needs root, or CAP_BPF and CAP_PERFMON (docs/python.md)\n", pid);
		pp->warned_why = true;
	}
}

/* The offsets the program reads blocks at must lie in its blocks, and all in 16 bits. */
static bool fits(uint32_t off, uint32_t size, uint32_t limit) { return off + size <= limit; }

static uint16_t end_of(const uint32_t *offs, const uint8_t *sizes, size_t n)
{
	uint32_t end = 0;
	for (size_t i = 0; i < n; i++)
		if (offs[i] + sizes[i] > end)
			end = offs[i] + sizes[i];
	return (uint16_t)end;
}

/* The fields the program reads in a frame, with their sizes: how many. */
static size_t frame_fields(const struct cpy_layout *l, uint32_t *offs, uint8_t *sizes)
{
	if (CPY_FRAME_OBJECTS(l->variant)) {
		const uint32_t o[] = { l->frame.f_code, l->frame.previous, l->frame_lasti };
		const uint8_t z[] = { 8, 8, 4 };
		memcpy(offs, o, sizeof(o));
		memcpy(sizes, z, sizeof(z));
		return 3;
	}
	const uint32_t o[] = { l->frame.f_code, l->frame.previous, l->frame.prev_instr,
			       l->frame.owner, l->frame.is_entry };
	const uint8_t z[] = { 8, 8, 8, 1, 1 };
	memcpy(offs, o, sizeof(o));
	memcpy(sizes, z, sizeof(z));
	return l->variant == CPY_VARIANT_311 ? 5 : 4; /* is_entry: 3.11's only */
}

/* Where the program finds the current frame, and how it tells activations apart. */
static void version_cfg(const struct cpy_layout *l, struct py_proc_cfg *c)
{
	c->code_flags = l->linetable_format == CPY_LINES_LNOTAB ? PERF_PY_CODE_LINES_LNOTAB
			: l->linetable_format == CPY_LINES_310  ? PERF_PY_CODE_LINES_310
								: 0;
	if (CPY_FRAME_OBJECTS(l->variant)) {
		c->flags |= PY_CFG_FRAME_OBJECTS | PY_CFG_THREAD_POINTER;
		if (l->variant != CPY_VARIANT_310)
			c->flags |= PY_CFG_LASTI_BYTES;
		c->tstate_frame = (uint16_t)l->thread_current_frame;
		c->frame_lasti = (uint16_t)l->frame_lasti;
		return;
	}
	if (l->variant == CPY_VARIANT_313) {
		c->tstate_frame = (uint16_t)l->thread_current_frame;
	} else {
		c->flags |= PY_CFG_CFRAME;
		c->tstate_frame = (uint16_t)l->thread.cframe;
		c->cframe_current_frame = (uint16_t)l->cframe.current_frame;
	}
	if (l->variant != CPY_VARIANT_311) {
		c->flags |= PY_CFG_CSTACK_ENTRY;
		c->owner_cstack = CPY_FRAME_OWNED_BY_CSTACK;
	}
	c->frame_is_entry = (uint16_t)l->frame.is_entry;
}

/* The program's view of a layout; false when it cannot take it (fields beyond its blocks,
 * state bits not in one 32-bit word). */
static bool cfg_of(const struct cpy_layout *l, struct py_proc_cfg *c)
{
	uint32_t foffs[5];
	uint8_t fsizes[5];
	size_t nf = frame_fields(l, foffs, fsizes);
	/* _co_firsttraceable (3.11+; 0 before, where ob_type's 8 bytes already reach past it) */
	const uint32_t coffs[] = { l->object.ob_type, l->code.qualname, l->code.filename,
				   l->code.firstlineno, l->code.linetable, l->code.firsttraceable };
	const uint8_t csizes[] = { 8, 8, 8, 4, 8, 4 };
	uint32_t word = l->unicode.compact.bit_offset / 32;
	if (end_of(foffs, fsizes, nf) > PY_BLOCK || end_of(coffs, csizes, 6) > PY_BLOCK ||
	    word != l->unicode.ascii.bit_offset / 32 ||
	    !fits(l->unicode.compact_size, 0, PY_BLOCK) || !fits(word * 4, 4, PY_BLOCK) ||
	    !fits(l->unicode.length, 8, PY_BLOCK) || !fits(l->unicode.utf8, 8, PY_BLOCK) ||
	    !fits(l->unicode.utf8_length, 8, PY_BLOCK))
		return false;
	const uint32_t wide[] = { l->runtime.interpreters_head, l->interp.next,
				  l->interp.threads_head, l->thread.next,
				  l->thread.native_thread_id, l->thread.thread_id, l->thread.cframe,
				  l->thread_current_frame, l->cframe.current_frame,
				  l->object.ob_size, l->object.bytes_sval, l->code.code_adaptive,
				  l->unicode.ascii_size, l->gil.interp, l->thread.interp,
				  l->gil.locked, l->gil.last_holder };
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		if (wide[i] > UINT16_MAX)
			return false;
	memset(c, 0, sizeof(*c));
	version_cfg(l, c);
	c->runtime_interp_head = (uint16_t)l->runtime.interpreters_head;
	c->interp_next = (uint16_t)l->interp.next;
	c->interp_threads_head = (uint16_t)l->interp.threads_head;
	c->tstate_next = (uint16_t)l->thread.next;
	c->tstate_native_tid = (uint16_t)(CPY_FRAME_OBJECTS(l->variant) ? l->thread.thread_id
									 : l->thread.native_thread_id);
	c->frame_code = (uint16_t)l->frame.f_code;
	c->frame_previous = (uint16_t)l->frame.previous;
	c->frame_prev_instr = (uint16_t)l->frame.prev_instr;
	c->frame_owner = (uint16_t)l->frame.owner;
	c->frame_size = end_of(foffs, fsizes, nf);
	c->code_size = end_of(coffs, csizes, 6);
	c->code_qualname = (uint16_t)l->code.qualname;
	c->code_filename = (uint16_t)l->code.filename;
	c->code_firstlineno = (uint16_t)l->code.firstlineno;
	c->code_linetable = (uint16_t)l->code.linetable;
	c->code_adaptive = (uint16_t)l->code.code_adaptive;
	c->code_firsttraceable = (uint16_t)l->code.firsttraceable;
	c->bytes_size = (uint16_t)l->object.ob_size;
	c->bytes_sval = (uint16_t)l->object.bytes_sval;
	c->str_state = (uint16_t)(word * 4);
	c->str_length = (uint16_t)l->unicode.length;
	c->str_ascii_data = (uint16_t)l->unicode.ascii_size;
	c->str_compact_data = (uint16_t)l->unicode.compact_size;
	c->str_utf8 = (uint16_t)l->unicode.utf8;
	c->str_utf8_len = (uint16_t)l->unicode.utf8_length;
	c->gil_runtime = l->gil.runtime;
	c->gil_interp = (uint16_t)l->gil.interp;
	c->tstate_interp = (uint16_t)l->thread.interp;
	c->gil_locked = (uint16_t)l->gil.locked;
	c->gil_last_holder = (uint16_t)l->gil.last_holder;
	c->state_kind_shift = (uint8_t)(l->unicode.kind.bit_offset % 32);
	c->state_compact_bit = (uint8_t)(l->unicode.compact.bit_offset % 32);
	c->state_ascii_bit = (uint8_t)(l->unicode.ascii.bit_offset % 32);
	c->owner_generator = CPY_FRAME_OWNED_BY_GENERATOR;
	c->max_threads = MAX_THREADS;
	return true;
}

static void warn(const struct rec_mmap *mm, const char *what)
{
	fprintf(stderr, "tally record: warning: process %u (%s): %s; recording its native "
			"frames only\n", mm->pid, mm->path, what);
}

/* Opens what the process maps: the path when it is still that file, else through
 * /proc/PID/root (another mount namespace) or map_files. */
static int open_mapped(const struct rec_mmap *mm, struct elf_file **f)
{
	char cand[3][4200];
	snprintf(cand[0], sizeof(cand[0]), "%s", mm->path);
	snprintf(cand[1], sizeof(cand[1]), "/proc/%u/root%s", mm->pid, mm->path);
	snprintf(cand[2], sizeof(cand[2]), "/proc/%u/map_files/%llx-%llx", mm->pid,
		 (unsigned long long)mm->start, (unsigned long long)mm->end);
	for (int i = 0; i < 3; i++) {
		struct stat st;
		if (stat(cand[i], &st) || st.st_ino != mm->ino || major(st.st_dev) != mm->maj ||
		    minor(st.st_dev) != mm->min)
			continue;
		if (!elf_open(cand[i], f))
			return 0;
		err_clear();
	}
	return -ENOENT;
}

/* Whether the mapped file is an interpreter (status 1 if not) and, when load, its layout
 * (status 0, or the error with its message set); -ENOTSUP: one, not loaded. */
static void check_file(const struct rec_mmap *mm, struct rec_pyfile *pf, bool load)
{
	struct elf_file *f;
	pf->status = 1;
	if (open_mapped(mm, &f))
		return;
	if (!cpy_is_interpreter(f)) {
		pf->status = 1;
	} else if (!load) {
		pf->status = -ENOTSUP;
	} else {
		pf->layout.sz = sizeof(pf->layout);
		struct cpy_layout_opts lo = { .sz = sizeof(lo) };
		pf->status = cpy_layout_load_elf(f, &lo, &pf->layout);
		for (size_t i = 0; i < f->nsegments && pf->nload < 8; i++)
			if (f->segments[i].type == 1 /* PT_LOAD */)
				pf->load[pf->nload++] = f->segments[i];
	}
	elf_close(f);
}

static struct rec_pyfile *find_file(struct rec_pyprocs *pp, const struct rec_mmap *mm)
{
	for (size_t i = 0; i < pp->nfiles; i++)
		if (pp->files[i].ino == mm->ino && pp->files[i].maj == mm->maj &&
		    pp->files[i].min == mm->min)
			return &pp->files[i];
	return NULL;
}

/* Forgets the files found not to be interpreters, once MAX_FILES are held: over a long
 * recording of a machine that maps ever new files the list stays bounded (such a file
 * is checked again should it be mapped again). Interpreters and files warned about stay. */
static void forget_others(struct rec_pyprocs *pp)
{
	size_t k = 0;
	for (size_t i = 0; i < pp->nfiles; i++)
		if (pp->files[i].status != 1)
			pp->files[k++] = pp->files[i];
	pp->nfiles = k;
}

static struct rec_pyfile *add_file(struct rec_pyprocs *pp, const struct rec_mmap *mm)
{
	if (pp->nfiles >= MAX_FILES)
		forget_others(pp);
	if (pp->nfiles >= MAX_FILES)
		return NULL;
	struct rec_pyfile *pf =
		vec_push_raw((void **)&pp->files, &pp->nfiles, &pp->capfiles, sizeof(*pf));
	if (pf) {
		pf->maj = mm->maj;
		pf->min = mm->min;
		pf->ino = mm->ino;
	}
	return pf;
}

static struct rec_pyfile *file_of(struct rec_pyprocs *pp, const struct rec_mmap *mm)
{
	struct rec_pyfile *pf = find_file(pp, mm);
	if (pf || !(pf = add_file(pp, mm)))
		return pf;
	/* No capture: Python is still looked for, to say once why its frames are missing. */
	if (!rec_pyprocs_on(pp) && pp->warned_why)
		pf->status = 1;
	else
		check_file(mm, pf, rec_pyprocs_on(pp));
	if (pf->status == -ENOTSUP) {
		warn(mm, pp->why ? pp->why : "Python frames are off");
		pp->warned_why = true;
	} else if (pf->status < 0) {
		warn(mm, err_msg());
		err_clear();
	}
	return pf;
}

/* The file execvp would run for cmd, or false. */
static bool find_command(const char *cmd, char *path, size_t size, struct stat *st)
{
	if (strchr(cmd, '/'))
		return snprintf(path, size, "%s", cmd) < (int)size && !stat(path, st);
	const char *dirs = getenv("PATH");
	for (const char *d = dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; *d;) {
		size_t n = strcspn(d, ":");
		if (snprintf(path, size, "%.*s%s%s", (int)n, d, n ? "/" : "", cmd) < (int)size &&
		    !stat(path, st) && S_ISREG(st->st_mode) && !access(path, X_OK))
			return true;
		d += n + (d[n] == ':');
	}
	return false;
}

void rec_pyprocs_preload(struct rec_pyprocs *pp, const char *cmd)
{
	char path[4096];
	struct stat st;
	if (!rec_pyprocs_on(pp) || !find_command(cmd, path, sizeof(path), &st))
		return;
	struct rec_mmap mm = { .maj = major(st.st_dev), .min = minor(st.st_dev),
			       .ino = st.st_ino, .path = path };
	struct rec_pyfile *pf = find_file(pp, &mm) ? NULL : add_file(pp, &mm);
	if (!pf)
		return;
	check_file(&mm, pf, true);
	pp->awaited = pf->status == 0;
	if (pf->status < 0) { /* said when a process maps it, with its pid */
		err_clear();
		pp->nfiles--;
	}
}

/* Link-time address to run-time: the bias of the segment the mapping's offset lies in. */
static bool bias_of(const struct rec_pyfile *pf, const struct rec_mmap *mm, uint64_t pgoff,
		    uint64_t *bias)
{
	for (size_t i = 0; i < pf->nload; i++) {
		const struct elf_segment *s = &pf->load[i];
		uint64_t lo = s->offset & ~0xfffull;
		if (pgoff >= lo && pgoff < s->offset + s->filesz) {
			*bias = mm->start - pgoff - (s->vaddr - s->offset);
			return true;
		}
	}
	return false;
}

static bool pidns_of(uint32_t pid, struct py_proc_cfg *c)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%u/ns/pid", pid);
	if (stat(path, &st))
		return false;
	c->pidns_dev = st.st_dev;
	c->pidns_ino = st.st_ino;
	return true;
}

static void note_mmap(struct rec_pyprocs *pp, const struct rec_mmap *mm)
{
	if (mm->path[0] != '/')
		return;
	struct rec_pyfile *pf = file_of(pp, mm);
	struct py_proc_cfg cfg;
	uint64_t bias;
	if (!pf || pf->status || !rec_pyprocs_on(pp) || !bias_of(pf, mm, mm->pgoff, &bias))
		return;
	if (pp->bpf && CPY_FRAME_OBJECTS(pf->layout.variant) && !rec_python_task_fsbase(pp->bpf)) {
		pf->status = -EINVAL;
		warn(mm, "CPython 3.8-3.10's thread states are found by the thread's FS base, "
			 "whose place in the kernel's task_struct comes from its BTF "
			 "(/sys/kernel/btf/vmlinux), which this kernel does not have");
		return;
	}
	/* A build whose PyObject header is longer (Py_TRACE_REFS: two list pointers first) has
	 * every object's fields elsewhere than the program reads them: refused by name. */
	if (pf->layout.object.ob_type != 8) {
		pf->status = -EINVAL;
		warn(mm, "its objects' header is longer than a release build's (a build with "
			 "Py_TRACE_REFS, --with-trace-refs), which tally's BPF program does not "
			 "read");
		return;
	}
	if (!cfg_of(&pf->layout, &cfg)) {
		pf->status = -EINVAL;
		warn(mm, "its CPython layout has fields where tally's BPF program does not "
			 "read them");
		return;
	}
	cfg.runtime = bias + pf->layout.runtime_addr;
	cfg.code_type = bias + pf->layout.code_type_addr;
	cfg.str_type = bias + pf->layout.unicode_type_addr;
	cfg.bytes_type = bias + pf->layout.bytes_type_addr;
	if (pidns_of(mm->pid, &cfg))
		start_proc(pp, mm->pid, &cfg, &pf->layout);
}

/* FORK and EXIT: u32 pid, ppid, tid, ptid. */
static void note_task(struct rec_pyprocs *pp, uint32_t type, const uint8_t *body)
{
	uint32_t id[4];
	memcpy(id, body, sizeof(id));
	if (id[0] != id[2]) /* a thread, not a process */
		return;
	if (type == PERF_RECORD_EXIT) {
		stop_proc(pp, id[0]);
		return;
	}
	struct rec_pyproc *parent = find_proc(pp, id[1]);
	if (!parent || id[0] == id[1])
		return;
	struct py_proc_cfg cfg = parent->cfg;
	struct cpy_layout layout = parent->layout;
	pidns_of(id[0], &cfg);
	start_proc(pp, id[0], &cfg, &layout);
}

const struct cpy_layout *rec_pyprocs_layout(const struct rec_pyprocs *pp, uint32_t pid,
					    uint64_t *runtime)
{
	for (size_t i = 0; i < pp->nprocs; i++)
		if (pp->procs[i].pid == pid) {
			*runtime = pp->procs[i].cfg.runtime;
			return &pp->procs[i].layout;
		}
	return NULL;
}

void rec_pyprocs_note(struct rec_pyprocs *pp, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	const uint8_t *body = (const uint8_t *)rec + sizeof(*h);
	if (size < sizeof(*h) + 16)
		return;
	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		struct rec_mmap mm;
		if (rec_mmap_of(rec, size, &mm))
			note_mmap(pp, &mm);
		return;
	}
	case PERF_RECORD_COMM:
		if (rec_pyprocs_on(pp) && h->misc & PERF_RECORD_MISC_COMM_EXEC) {
			uint32_t pid;
			memcpy(&pid, body, 4);
			stop_proc(pp, pid);
		}
		return;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (rec_pyprocs_on(pp))
			note_task(pp, h->type, body);
		return;
	}
}
