/*
 * Source text for annotation: files are read whole on first use and split into lines; a
 * file that cannot be read is remembered as missing, so it is tried once. Files larger
 * than 64 MiB are not read (a listing needs a few lines, not a data dump).
 */
#include "report/annotate_impl.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

#define MAX_SOURCE (64u << 20)

struct src_file {
	char *path;
	char *data; /* NULL when missing */
	size_t size;
	VEC(size_t) starts; /* offset of each line */
};

struct annot_sources {
	VEC(struct src_file) files;
};

struct annot_sources *annot_sources_new(void)
{
	return calloc(1, sizeof(struct annot_sources));
}

static int add_start(struct src_file *f, size_t off)
{
	size_t *s = vec_push(&f->starts);
	if (!s)
		return -1;
	*s = off;
	return 0;
}

static void load(struct src_file *f)
{
	FILE *in = fopen(f->path, "rb");
	if (!in)
		return;
	VEC(char) buf = { 0 };
	for (;;) {
		if (buf.n == buf.cap && (buf.cap >= MAX_SOURCE || !vec_reserve(&buf, 65536))) {
			vec_free(&buf);
			fclose(in);
			return;
		}
		size_t got = fread(buf.v + buf.n, 1, buf.cap - buf.n, in);
		buf.n += got;
		if (!got)
			break;
	}
	fclose(in);
	f->data = buf.v;
	f->size = buf.n;
	if (add_start(f, 0))
		return;
	for (size_t i = 0; i + 1 < f->size; i++)
		if (f->data[i] == '\n' && add_start(f, i + 1))
			return;
}

const char *annot_source_line(struct annot_sources *s, const char *path, uint32_t line,
			      size_t *len)
{
	if (!s || !path || !line)
		return NULL;
	struct src_file *f = NULL;
	for (size_t i = 0; i < s->files.n; i++)
		if (!strcmp(s->files.v[i].path, path))
			f = &s->files.v[i];
	if (!f) {
		char *copy = strdup(path);
		if (!copy || !(f = vec_push(&s->files))) {
			free(copy);
			return NULL;
		}
		f->path = copy;
		load(f);
	}
	if (!f->data || line > f->starts.n)
		return NULL;
	size_t a = f->starts.v[line - 1], b = a;
	while (b < f->size && f->data[b] != '\n')
		b++;
	*len = b - a;
	return f->data + a;
}

void annot_sources_free(struct annot_sources *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->files.n; i++) {
		free(s->files.v[i].path);
		free(s->files.v[i].data);
		vec_free(&s->files.v[i].starts);
	}
	vec_free(&s->files);
	free(s);
}
