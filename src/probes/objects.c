/*
 * The ELF objects of a target and their probes: one file, or every file a running process
 * maps (from /proc/PID/maps, opened through /proc/PID/root so that a process in another
 * mount namespace works too). Mappings are kept to place semaphores in the process.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "elf/elf.h"
#include "probes/attach.h"

int usdt_objects_add_file(struct usdt_objects *o, const char *path, const char *open_path)
{
	struct elf_file *f;
	int e = elf_open(open_path, &f);
	if (e)
		return e;
	struct usdt_object *obj = vec_push(o);
	if (!obj) {
		elf_close(f);
		return err_set(-ENOMEM, "out of memory");
	}
	obj->path = strdup(path);
	obj->open_path = strdup(open_path);
	e = !obj->path || !obj->open_path ? err_set(-ENOMEM, "out of memory")
					  : usdt_read(f, &obj->probes);
	elf_close(f);
	if (e) {
		free(obj->path);
		free(obj->open_path);
		o->n--;
	}
	return e;
}

/* Calls fn for each file-backed mapping of pid: start, end, offset, path. */
static int each_mapping(pid_t pid, int (*fn)(uint64_t, uint64_t, uint64_t, const char *, void *),
			void *ctx)
{
	char name[64];
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	FILE *fp = fopen(name, "re");
	if (!fp)
		return err_set(errno == ENOENT ? -ESRCH : -errno, "%s: %s",
			       errno == ENOENT ? "no such process" : name, strerror(errno));
	char line[4352];
	int e = 0;
	while (!e && fgets(line, sizeof(line), fp)) {
		uint64_t start, end, off;
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*u %n", &start, &end,
			   &off, &pos) != 3 || !pos)
			continue;
		char *path = line + pos;
		path[strcspn(path, "\n")] = 0;
		if (path[0] != '/' || strstr(path, " (deleted)"))
			continue;
		e = fn(start, end, off, path, ctx);
	}
	fclose(fp);
	return e;
}

static int add_mapping(uint64_t start, uint64_t end, uint64_t off, const char *path, void *ctx)
{
	struct usdt_object *obj = ctx;
	if (strcmp(path, obj->path))
		return 0;
	struct usdt_mapping *m = realloc(obj->maps, (obj->nmaps + 1) * sizeof(*m));
	if (!m)
		return err_set(-ENOMEM, "out of memory");
	obj->maps = m;
	m[obj->nmaps++] = (struct usdt_mapping){ start, end, off };
	return 0;
}

int usdt_object_load_maps(struct usdt_object *obj, pid_t pid)
{
	free(obj->maps);
	obj->maps = NULL;
	obj->nmaps = 0;
	return each_mapping(pid, add_mapping, obj);
}

struct pid_ctx {
	struct usdt_objects *o;
	pid_t pid;
	bool keep_empty;
};

static int add_mapped_file(uint64_t start, uint64_t end, uint64_t off, const char *path,
			   void *ctx)
{
	struct pid_ctx *p = ctx;
	for (size_t i = 0; i < p->o->n; i++)
		if (!strcmp(p->o->v[i].path, path))
			return 0;
	char open_path[4400];
	snprintf(open_path, sizeof(open_path), "/proc/%d/root%s", (int)p->pid, path);
	/* Not every mapped file is ELF (locale archives, caches): those are skipped. */
	if (usdt_objects_add_file(p->o, path, open_path))
		return 0;
	struct usdt_object *obj = &p->o->v[p->o->n - 1];
	if (!obj->probes.n && !p->keep_empty) {
		usdt_list_free(&obj->probes);
		free(obj->path);
		free(obj->open_path);
		p->o->n--;
	}
	return 0;
}

int usdt_objects_of_pid(struct usdt_objects *o, pid_t pid, bool keep_empty)
{
	struct pid_ctx p = { o, pid, keep_empty };
	int e = each_mapping(pid, add_mapped_file, &p);
	for (size_t i = 0; !e && i < o->n; i++)
		e = usdt_object_load_maps(&o->v[i], pid);
	return e;
}

void usdt_objects_free(struct usdt_objects *o)
{
	for (size_t i = 0; i < o->n; i++) {
		usdt_list_free(&o->v[i].probes);
		free(o->v[i].path);
		free(o->v[i].open_path);
		free(o->v[i].maps);
	}
	vec_free(o);
}
