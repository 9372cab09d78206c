/*
 * The code registry: functions by id, in chunks of AGENT_CHUNK entries whose pointers are
 * published with release stores, so that the sampler thread finds an entry without a lock
 * while another thread registers more. Unregistered entries are retired, not freed, until
 * the agent is: a sample read just before the unregistration may still name it. JIT
 * regions go to perf-PID.map, one "START SIZE NAME" line each (hex, no 0x), as perf reads
 * it (tools/perf/Documentation/jit-interface.txt), and with opts.jitdump to jit-PID.dump
 * too (jitdump.c).
 */
#include "agent/agent_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/opts.h"
#include "profile/profile.h"

const struct agent_fn *agent_fn_get(const struct tally_agent *a, uint32_t id)
{
	if (!id || id >= AGENT_CHUNK * AGENT_NCHUNKS)
		return NULL;
	struct agent_fn **chunk = __atomic_load_n(&a->chunks[id >> AGENT_CHUNK_BITS], __ATOMIC_ACQUIRE);
	if (!chunk)
		return NULL;
	return __atomic_load_n(&chunk[id & (AGENT_CHUNK - 1)], __ATOMIC_ACQUIRE);
}

uint32_t agent_fn_line(const struct agent_fn *f, uint64_t pc)
{
	size_t lo = 0, hi = f->nlines;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->lines[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? f->lines[lo - 1].line : f->line;
}

uint32_t agent_fn_frame(struct prof *p, const struct agent_fn *f)
{
	struct prof_frame_desc d = {
		.kind = PROF_VM,
		.function = f ? f->name : "[unregistered]",
		.file = f ? f->file : NULL,
		.line = f ? f->line : 0,
		.module = PROF_NONE,
		.addr = f ? f->start : 0,
	};
	return prof_frame(p, &d);
}

static void fn_free(struct agent_fn *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->file);
	free(f->code);
	free(f->lines);
	free(f->insns);
	free(f->insn_text);
	free(f);
}

static void *dup_bytes(const void *p, size_t n)
{
	void *d = malloc(n ? n : 1);
	if (d && n)
		memcpy(d, p, n);
	return d;
}

/* The instruction texts of f, copied into one block that e->insns point into. */
static int copy_insns(const struct tally_agent_function *f, struct agent_fn *e)
{
	size_t bytes = 0;
	for (size_t i = 0; i < f->ninsns; i++) {
		if (!f->insns[i].text || (i && f->insns[i].pc <= f->insns[i - 1].pc))
			return err_set(-EINVAL, "agent: %s: instructions need a text each and "
						"increasing pcs", f->name);
		bytes += strlen(f->insns[i].text) + 1;
	}
	e->insns = dup_bytes(f->insns, f->ninsns * sizeof(*f->insns));
	char *t = e->insn_text = malloc(bytes ? bytes : 1);
	if (!e->insns || !t)
		return err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; i < f->ninsns; i++) {
		size_t n = strlen(f->insns[i].text) + 1;
		e->insns[i].text = memcpy(t, f->insns[i].text, n);
		t += n;
	}
	e->ninsns = f->ninsns;
	return 0;
}

/* A copy of what the caller describes, checked. */
static int fn_copy(const struct tally_agent_function *in, struct agent_fn **out)
{
	struct tally_agent_function f;
	int rc = OPTS_READ(tally_agent_function, ninsns, &f, in);
	if (rc)
		return rc;
	if (!f.name || f.end < f.start || (f.code_size && !f.code) || (f.nlines && !f.lines) ||
	    (f.ninsns && !f.insns))
		return err_set(-EINVAL, "agent: a function needs a name, a range [start, end) "
					"and the bytes and lines it says it has");
	for (size_t i = 1; i < f.nlines; i++)
		if (f.lines[i].pc < f.lines[i - 1].pc)
			return err_set(-EINVAL, "agent: %s: line table not sorted by pc", f.name);
	struct agent_fn *e = calloc(1, sizeof(*e));
	if (!e)
		return err_set(-ENOMEM, "out of memory");
	e->name = strdup(f.name);
	e->file = f.file ? strdup(f.file) : NULL;
	e->line = f.line;
	e->start = f.start;
	e->end = f.end;
	e->code_size = f.code_size;
	e->code = f.code_size ? dup_bytes(f.code, f.code_size) : NULL;
	e->nlines = f.nlines;
	e->lines = f.nlines ? dup_bytes(f.lines, f.nlines * sizeof(*f.lines)) : NULL;
	if (!e->name || (f.file && !e->file) || (f.code_size && !e->code) || (f.nlines && !e->lines)) {
		fn_free(e);
		return err_set(-ENOMEM, "out of memory");
	}
	if (f.ninsns && (rc = copy_insns(&f, e))) {
		fn_free(e);
		return rc;
	}
	*out = e;
	return 0;
}

int tally_agent_register(struct tally_agent *a, const struct tally_agent_function *f,
			 uint32_t *id)
{
	struct agent_fn *e = NULL;
	int rc = fn_copy(f, &e);
	if (rc)
		return rc;
	pthread_mutex_lock(&a->lock);
	uint32_t n = a->next_id;
	struct agent_fn ***chunk = &a->chunks[n >> AGENT_CHUNK_BITS];
	if (n >= AGENT_CHUNK * AGENT_NCHUNKS) {
		rc = err_set(-ENOSPC, "agent: more than %u functions registered", n - 1);
	} else if (!*chunk) {
		struct agent_fn **c = calloc(AGENT_CHUNK, sizeof(*c));
		if (c)
			__atomic_store_n(chunk, c, __ATOMIC_RELEASE);
		else
			rc = err_set(-ENOMEM, "out of memory");
	}
	if (!rc && (a->o.mode & TALLY_AGENT_MIXED))
		rc = agent_vmdump_add(a, n, e);
	if (!rc) {
		__atomic_store_n(&(*chunk)[n & (AGENT_CHUNK - 1)], e, __ATOMIC_RELEASE);
		a->next_id = n + 1;
		*id = n;
	}
	pthread_mutex_unlock(&a->lock);
	if (rc)
		fn_free(e);
	return rc;
}

int tally_agent_unregister(struct tally_agent *a, uint32_t id)
{
	int rc = 0;
	pthread_mutex_lock(&a->lock);
	struct agent_fn *e = (struct agent_fn *)agent_fn_get(a, id);
	struct agent_fn **slot = vec_push(&a->retired);
	if (!e)
		rc = err_set(-ENOENT, "agent: no function %u registered", id);
	else if (!slot)
		rc = err_set(-ENOMEM, "out of memory");
	if (!rc) {
		*slot = e;
		__atomic_store_n(&a->chunks[id >> AGENT_CHUNK_BITS][id & (AGENT_CHUNK - 1)], NULL,
				 __ATOMIC_RELEASE);
	} else if (slot) {
		a->retired.n--;
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

void agent_registry_free(struct tally_agent *a)
{
	for (size_t c = 0; c < AGENT_NCHUNKS; c++) {
		if (!a->chunks[c])
			continue;
		for (size_t i = 0; i < AGENT_CHUNK; i++)
			fn_free(a->chunks[c][i]);
		free(a->chunks[c]);
	}
	for (size_t i = 0; i < a->retired.n; i++)
		fn_free(a->retired.v[i]);
	vec_free(&a->retired);
	if (a->perfmap_fd >= 0)
		close(a->perfmap_fd);
	agent_jitdump_close(a);
	agent_vmdump_close(a);
}

/* Names go on one line of their own: a newline would start a bogus entry. */
static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

int tally_agent_register_jit(struct tally_agent *a, const char *name, const void *addr,
			     size_t size)
{
	if (!name || !size)
		return err_set(-EINVAL, "agent: a JIT region needs a name and a size");
	char line[1024];
	int n = snprintf(line, sizeof(line), "%" PRIxPTR " %zx %s", (uintptr_t)addr, size, name);
	if (n < 0)
		return err_set(-EINVAL, "agent: bad JIT region name");
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n] = 0;
	one_line(line);
	line[n++] = '\n';
	int rc = 0;
	pthread_mutex_lock(&a->lock);
	if (a->perfmap_fd < 0) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/perf-%d.map", a->o.jit_dir ? a->o.jit_dir : "/tmp",
			 (int)getpid());
		a->perfmap_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (a->perfmap_fd < 0)
			rc = err_set(-errno, "%s: %s", path, strerror(errno));
	}
	/* one write per line, O_APPEND: several agents of the process share the file */
	if (!rc && write(a->perfmap_fd, line, (size_t)n) != n)
		rc = err_set(-EIO, "agent: perf map: short write");
	if (!rc && a->o.jitdump)
		rc = agent_jitdump_add(a, name, addr, size);
	pthread_mutex_unlock(&a->lock);
	return rc;
}
