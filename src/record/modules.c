/*
 * What unwinding needs later, captured while recording: the build-id of every executable
 * mapping (perf.data's build-id feature), and a copy in perf's build-id cache of what a
 * later report could not reach by path: the vDSO (in no file), files deleted or replaced
 * since they were mapped, files in another mount namespace (containers). Those are read
 * through /proc/PID/map_files and /proc/PID/root while the process still runs, which is
 * why this happens as the mmap records arrive and not at the end.
 */
#include "record/modules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/err.h"
#include "base/vec.h"
#include "elf/elf.h"
#include "perf/keep.h"

static uint64_t hash_of(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

/* The slot of path: its entry's, or the free one it would take. */
static uint32_t *slot_of(const struct rec_modules *m, const char *path)
{
	size_t mask = m->nslots - 1;
	for (size_t i = hash_of(path) & mask;; i = (i + 1) & mask) {
		uint32_t *s = &m->slots[i];
		if (!*s || !strcmp(m->v[*s - 1].path, path))
			return s;
	}
}

/* Room for one more entry in a table kept at most half full. */
static bool grow_slots(struct rec_modules *m)
{
	if ((m->n + 1) * 2 <= m->nslots)
		return true;
	size_t n = m->nslots ? m->nslots * 2 : 256;
	uint32_t *old = m->slots;
	size_t nold = m->nslots;
	if (!(m->slots = calloc(n, sizeof(*m->slots)))) {
		m->slots = old;
		return false;
	}
	m->nslots = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i])
			*slot_of(m, m->v[old[i] - 1].path) = old[i];
	free(old);
	return true;
}

static struct rec_module *add(struct rec_modules *m, const char *path)
{
	if (m->n >= REC_MODULES_MAX) {
		m->dropped++;
		return NULL;
	}
	if (!grow_slots(m))
		return NULL;
	struct rec_module *e = vec_push(m);
	if (e && !(e->path = strdup(path))) {
		m->n--;
		return NULL;
	}
	if (e)
		*slot_of(m, path) = (uint32_t)m->n;
	return e;
}

static bool build_id_of(struct elf_file *f, struct rec_module *e)
{
	const uint8_t *id;
	size_t len;
	if (elf_build_id(f, &id, &len) || len == 0 || len > 20) {
		err_clear();
		return false;
	}
	memcpy(e->id, id, len);
	e->len = (uint8_t)len;
	return true;
}

static void note_vdso(struct rec_module *e)
{
	struct elf_file *f;
	if (elf_open_vdso(&f)) {
		err_clear();
		return;
	}
	if (build_id_of(f, e))
		elf_buildid_cache_store(ELF_CACHED_VDSO, e->id, e->len, f->map, f->size);
	elf_close(f);
}

/* The mapped file is not the one at path (gone, replaced, or in another mount namespace):
 * read what the process maps and keep a copy under its build-id. */
static void note_unreachable(const struct rec_mmap *mm, struct rec_module *e)
{
	char cand[2][4200];
	snprintf(cand[0], sizeof(cand[0]), "/proc/%u/map_files/%llx-%llx", mm->pid,
		 (unsigned long long)mm->start, (unsigned long long)mm->end);
	snprintf(cand[1], sizeof(cand[1]), "/proc/%u/root%s", mm->pid, mm->path);
	for (int i = 0; i < 2; i++) {
		struct stat st;
		struct elf_file *f;
		if (stat(cand[i], &st) || st.st_ino != mm->ino || elf_open(cand[i], &f)) {
			err_clear();
			continue;
		}
		if (build_id_of(f, e))
			elf_buildid_cache_store(ELF_CACHED_FILE, e->id, e->len, f->map, f->size);
		elf_close(f);
		return;
	}
}

bool rec_mmap_of(const void *rec, size_t size, struct rec_mmap *mm)
{
	const struct perf_record_mmap2 {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min; /* or, with PERF_RECORD_MISC_MMAP_BUILD_ID, the build-id */
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
		char name[];
	} *m = rec;
	if (size <= sizeof(*m) || m->h.type != PERF_RECORD_MMAP2 || !(m->prot & PROT_EXEC) ||
	    !memchr(m->name, 0, size - sizeof(*m)))
		return false;
	*mm = (struct rec_mmap){ m->pid, m->addr, m->addr + m->len, m->maj, m->min, m->ino,
				 m->name, m->pgoff };
	return true;
}

void rec_modules_note(struct rec_modules *m, const struct rec_mmap *mm)
{
	const char *path = mm->path;
	if (!path[0] || (path[0] == '[' && strcmp(path, "[vdso]")) || !strncmp(path, "//", 2))
		return;
	if (m->nslots && *slot_of(m, path))
		return;
	struct rec_module *e = add(m, path);
	if (!e)
		return;
	if (!strcmp(path, "[vdso]")) {
		note_vdso(e);
		return;
	}
	struct stat st;
	struct elf_file *f;
	if (stat(path, &st) || st.st_ino != mm->ino || major(st.st_dev) != mm->maj ||
	    minor(st.st_dev) != mm->min) {
		note_unreachable(mm, e);
		return;
	}
	if (!elf_open(path, &f)) {
		build_id_of(f, e);
		elf_close(f);
	}
	err_clear();
}

static void cache_debug_of(const char *path, const char *cache)
{
	struct elf_file *f, *dbg;
	if (elf_open(path, &f))
		return;
	if (!elf_open_debug_file(f, NULL, cache, &dbg)) {
		elf_debug_cache_store(dbg, cache);
		elf_close(dbg);
	}
	elf_close(f);
}

void rec_modules_cache_debug(const struct rec_modules *m)
{
	const char *cache = elf_debug_cache_dir();
	for (size_t i = 0; cache && i < m->n; i++)
		if (m->v[i].path[0] == '/')
			cache_debug_of(m->v[i].path, cache);
	err_clear();
}

void rec_modules_write(struct rec_modules *m, struct perf_writer *w, bool kallsyms)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].len)
			perf_writer_add_build_id(w, UINT32_MAX, PERF_RECORD_MISC_USER, m->v[i].id,
						 m->v[i].len, m->v[i].path);
	/* The kernel as perf names it, with its symbols in the cache beside it: perf report
	 * and tally report then read the copy rather than /proc/kallsyms. */
	uint8_t id[20];
	size_t len = elf_kernel_build_id(id);
	if (len) {
		perf_writer_add_build_id(w, UINT32_MAX, PERF_RECORD_MISC_KERNEL, id, len,
					 "[kernel.kallsyms]");
		if (kallsyms)
			perf_kallsyms_save();
	}
}

void rec_modules_free(struct rec_modules *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
