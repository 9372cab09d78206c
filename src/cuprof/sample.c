/*
 * The sampled sBPF run (sample.h). Frames are named as the exact profile names them
 * (cuprof's frames: DWARF names, else .symtab, "syscall:NAME"), so that the two profiles
 * of a run compare function by function; each is registered with the agent the first
 * time the VM enters it, in the VM's thread, never in the sampler's. The sampled profile
 * has no inline frames: a sample knows its function, not yet its inline chain.
 */
#include "cuprof/sample.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "cuprof/frames.h"
#include "profile/profile.h"
#include "profile/read.h"
#include "sbpf/vm.h"
#include "tally/agent.h"

/* Keys: a function's entry pc, or SYSCALL_KEY | a syscall's hash. */
#define SYSCALL_KEY (1ull << 63)

struct known {
	uint64_t key;
	uint32_t id; /* 0: empty slot */
};

struct sampling {
	struct tally_agent *agent;
	struct tally_agent_thread *t;
	struct cuprof_frames names;
	struct prof *scratch; /* where names interns its frames */
	struct known *known;  /* open-addressed by key */
	size_t nknown, cap;
	int rc; /* the first failure inside a hook */
};

static size_t slot_of(const struct sampling *s, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (s->cap - 1);
	while (s->known[i].id && s->known[i].key != key)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int grow(struct sampling *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	struct known *old = s->known, *k = calloc(cap, sizeof(*k));
	if (!k)
		return err_set(-ENOMEM, "out of memory");
	size_t oldcap = s->cap;
	s->known = k;
	s->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].id)
			s->known[slot_of(s, old[i].key)] = old[i];
	free(old);
	return 0;
}

/* The agent's id of key's frame, registered on first use; 0 on failure (s->rc set). */
static uint32_t id_of(struct sampling *s, uint64_t key, const char *syscall)
{
	if (s->rc)
		return 0;
	if (2 * (s->nknown + 1) > s->cap && (s->rc = grow(s)))
		return 0;
	struct known *k = &s->known[slot_of(s, key)];
	if (k->id)
		return k->id;
	uint32_t frame = syscall ? cuprof_frames_syscall(&s->names, syscall)
				 : cuprof_frames_function(&s->names, key);
	if (frame == PROF_NONE) {
		s->rc = -ENOMEM;
		return 0;
	}
	const struct prof_frame *f = prof_frame_at(s->scratch, frame);
	struct tally_agent_function d = {
		.sz = sizeof(d),
		.name = prof_str(s->scratch, f->label),
		.file = prof_str(s->scratch, f->file),
		.line = f->line,
		.start = syscall ? 0 : key,
		.end = syscall ? 0 : key + 1,
	};
	if ((s->rc = tally_agent_register(s->agent, &d, &k->id)))
		return 0;
	k->key = key;
	s->nknown++;
	return k->id;
}

static void on_call(void *ctx, uint64_t call_pc, uint64_t target_pc, unsigned depth)
{
	(void)depth;
	struct sampling *s = ctx;
	TALLY_AGENT_PUSH(s->t, id_of(s, target_pc, NULL), call_pc);
}

static void on_return(void *ctx, uint64_t exit_pc, unsigned depth)
{
	(void)exit_pc;
	(void)depth;
	struct sampling *s = ctx;
	TALLY_AGENT_POP(s->t);
}

static void on_syscall_enter(void *ctx, uint64_t pc, const struct sbpf_syscall *sc)
{
	struct sampling *s = ctx;
	TALLY_AGENT_PUSH(s->t, id_of(s, SYSCALL_KEY | sc->hash, sc->name), pc);
}

static void on_syscall_exit(void *ctx, const struct sbpf_syscall *sc, uint64_t cost)
{
	(void)sc;
	(void)cost;
	struct sampling *s = ctx;
	TALLY_AGENT_POP(s->t);
}

/* A temporary file for the stream, beside the others of TMPDIR. */
static int temp_stream(char *path, size_t size)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, size, "%s/tally-sample-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return err_set(-errno, "%s: %s", path, strerror(errno));
	close(fd);
	return 0;
}

static int read_stream(const char *path, const char *source, struct prof **out)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc = file_read(path, &data, &len);
	if (!rc && !len)
		rc = err_set(-ENODATA, "the run ended before the sampler took a sample "
				       "(a longer run, or a higher --sample rate)");
	if (!rc)
		rc = prof_read_folded(source, data, len, out);
	if (!rc && (rc = prof_set_source(*out, source)))
		prof_free(*out);
	free(data);
	return rc;
}

int cuprof_sample_run(struct sbpf_vm *vm, const char *path, uint32_t hz,
		      struct sbpf_result *res, struct prof **out)
{
	struct sampling s = { 0 };
	char stream[4096];
	int rc = temp_stream(stream, sizeof(stream));
	if (rc)
		return rc;
	const struct sbpf_program *prog = sbpf_vm_program(vm);
	struct tally_agent_opts o = { .sz = sizeof(o), .output = stream, .freq_hz = hz,
				      .omit_thread = true };
	bool started = false;
	rc = prof_new(&s.scratch);
	rc = rc ? rc : cuprof_frames_init(&s.names, prog, path, s.scratch);
	if (rc) {
		prof_free(s.scratch);
		unlink(stream);
		return rc;
	}
	rc = tally_agent_new(&o, &s.agent);
	rc = rc ? rc : tally_agent_thread_register(s.agent, &s.t);
	if (!rc) {
		TALLY_AGENT_PUSH(s.t, id_of(&s, prog->entry_pc, NULL), 0);
		rc = s.rc;
	}
	if (!rc && !(rc = tally_agent_start(s.agent))) {
		started = true;
		struct sbpf_hooks hooks = { .ctx = &s, .on_call = on_call, .on_return = on_return,
					    .on_syscall_enter = on_syscall_enter,
					    .on_syscall_exit = on_syscall_exit };
		sbpf_vm_set_hooks(vm, &hooks);
		sbpf_vm_publish_pc(vm, s.t);
		rc = sbpf_vm_run(vm, res);
		TALLY_AGENT_POP(s.t);
	}
	int stop = started ? tally_agent_stop(s.agent) : 0;
	rc = rc ? rc : s.rc ? s.rc : stop;
	if (!rc) {
		char source[512];
		snprintf(source, sizeof(source), "sbpf (sampled at %u Hz): %s", hz,
			 path ? path : prog->name);
		rc = read_stream(stream, source, out);
	}
	tally_agent_free(s.agent);
	cuprof_frames_free(&s.names);
	prof_free(s.scratch);
	free(s.known);
	unlink(stream);
	return rc;
}
