/*
 * The perf-map frame source (replay.h): a frame in memory that no ELF file backs
 * (anonymous memory, where JIT runtimes put their code) of a process that wrote a
 * perf-PID.map is named from that map, as a JIT frame whose module is the map file. Each
 * process's map is read once, when a sample of it first needs one: from the recording's
 * copies when it has them (perf_jit_dir; tally record copied every map that was the
 * recorded processes' own, so /tmp is not asked: what is there may be another process's),
 * else /tmp/perf-PID.map as perf reads it.
 */
#include "replay/sources/perfmap/perfmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/idmap.h"
#include "base/vec.h"
#include "perf/keep.h"

struct pm_proc {
	struct replay_perfmap *map; /* NULL: the process has none */
	char *path;                 /* the file read, the JIT frames' module */
};

struct pm_source {
	char *jit_dir; /* the recording's copies; NULL: none, /tmp */
	struct idmap index; /* pid -> procs.v[] */
	VEC(struct pm_proc) procs;
};

/* The map of pid read from path; 1 when there is none, 0 when read, or -ENOMEM. */
static int load(struct pm_proc *p, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	int rc = replay_perfmap_read(f, path, stderr, &p->map);
	fclose(f);
	if (!rc && !(p->path = strdup(path))) {
		replay_perfmap_free(p->map);
		p->map = NULL;
		rc = err_set(-ENOMEM, "out of memory");
	}
	return rc;
}

/* The process's map, read on first use; NULL when it has none. */
static int map_of(struct pm_source *s, uint32_t pid, const struct pm_proc **out)
{
	uint32_t i = idmap_get(&s->index, pid);
	if (i != IDMAP_NONE) {
		*out = &s->procs.v[i];
		return 0;
	}
	struct pm_proc *p = vec_push(&s->procs);
	if (!p || idmap_put(&s->index, pid, (uint32_t)(s->procs.n - 1)))
		return err_set(-ENOMEM, "out of memory");
	*p = (struct pm_proc){ 0 };
	char path[4096];
	int n = s->jit_dir ? snprintf(path, sizeof(path), "%s/perf-%u.map", s->jit_dir, pid)
			   : snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	int rc = n < (int)sizeof(path) ? load(p, path) : 1;
	*out = p;
	return rc < 0 ? rc : 0;
}

static int name_frame(void *self, const struct replay_stack *st, size_t i,
		      struct replay_frames *out)
{
	struct pm_source *s = self;
	const struct unw_frame *fr = &st->frames[i];
	if ((fr->mod && fr->mod->elf) || !fr->pc)
		return 0;
	const struct pm_proc *p;
	int rc = map_of(s, st->ev->pid, &p);
	if (rc || !p->map)
		return rc;
	uint64_t start;
	/* A return address points after its call: name the call. The sampled pc is exact. */
	const char *name = replay_perfmap_find(p->map, i ? fr->pc - 1 : fr->pc, &start);
	if (!name)
		return 0;
	struct replay_sym_frame *f = replay_frames_push(out, PROF_JIT);
	if (f) {
		f->function = name;
		f->module = p->path;
		f->addr = fr->pc; /* the map's addresses are the process's: its base is 0 */
		f->pc = fr->pc;
		f->sym_start = start;
	}
	return 1;
}

static void close_source(void *self)
{
	struct pm_source *s = self;
	for (size_t i = 0; i < s->procs.n; i++) {
		replay_perfmap_free(s->procs.v[i].map);
		free(s->procs.v[i].path);
	}
	vec_free(&s->procs);
	idmap_free(&s->index);
	free(s->jit_dir);
	free(s);
}

static const struct replay_frame_source_ops perfmap_ops = { .name_frame = name_frame,
							     .close = close_source };

int replay_perfmap_source_new(const char *jit_dir, struct replay_frame_source *out)
{
	struct pm_source *s = calloc(1, sizeof(*s));
	struct stat st;
	bool copies = jit_dir && !stat(jit_dir, &st) && S_ISDIR(st.st_mode);
	if (s && copies && !(s->jit_dir = strdup(jit_dir))) {
		free(s);
		s = NULL;
	}
	if (!s)
		return err_set(-ENOMEM, "out of memory");
	*out = (struct replay_frame_source){ &perfmap_ops, s };
	return 0;
}

static int open_source(struct perf_data *d, struct replay_frame_source *out)
{
	char dir[4096];
	int r = perf_jit_dir(d->path, dir, sizeof(dir));
	return r ? r : replay_perfmap_source_new(dir, out);
}

const struct replay_source_type replay_perfmap_source = { open_source };
