/*
 * Writing perf.data: a header placeholder, the records as the kernel produced them, then
 * the feature table (build-ids), the event ids and the attribute, and finally the real
 * header. Offsets are free in the format, so nothing is buffered but the build-id list.
 */
#include "perf/perf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/err.h"
#include "base/vec.h"

#define PERF_MAGIC2 0x32454c4946524550ull
#define HEADER_SIZE 104

struct perf_writer {
	FILE *f;
	char *path;
	struct perf_event_attr attr;
	uint64_t off;
	uint8_t *bids; /* build-id records, in the file's layout */
	size_t nbids, capbids;
};

static int put(struct perf_writer *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n)
		return err_set(-errno, "%s: write: %s", w->path, strerror(errno));
	w->off += n;
	return 0;
}

static int put_u64(struct perf_writer *w, uint64_t v) { return put(w, &v, 8); }

int perf_writer_open(const char *path, const struct perf_event_attr *attr,
		     struct perf_writer **out)
{
	struct perf_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return err_set(-ENOMEM, "out of memory");
	}
	w->attr = *attr;
	w->f = fopen(path, "wb");
	if (!w->f) {
		int r = err_set(-errno, "%s: %s", path, strerror(errno));
		free(w->path);
		free(w);
		return r;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	uint8_t zero[HEADER_SIZE] = { 0 };
	int r = put(w, zero, sizeof(zero));
	if (r) {
		perf_writer_abort(w);
		return r;
	}
	*out = w;
	return 0;
}

int perf_writer_add(struct perf_writer *w, const void *rec, size_t size)
{
	return put(w, rec, size);
}

int perf_writer_add_build_id(struct perf_writer *w, uint32_t pid, uint16_t misc,
			     const uint8_t *id, size_t len, const char *filename)
{
	size_t name = strlen(filename) + 1, padded = (name + 63) / 64 * 64;
	size_t size = 8 + 4 + 24 + padded;
	if (len > 20 || size > 0xffff)
		return 0;
	if (w->capbids - w->nbids < size &&
	    !vec_reserve_grow((void **)&w->bids, w->nbids, &w->capbids, 1, size))
		return err_set(-ENOMEM, "out of memory");
	uint8_t *p = w->bids + w->nbids;
	memset(p, 0, size);
	struct perf_event_header h = { PERF_RECORD_HEADER_BUILD_ID,
				       (uint16_t)(misc | 1u << 15 /* BUILD_ID_SIZE */),
				       (uint16_t)size };
	memcpy(p, &h, 8);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, id, len);
	p[12 + 20] = (uint8_t)len;
	memcpy(p + 36, filename, name);
	w->nbids += size;
	return 0;
}

static void free_writer(struct perf_writer *w)
{
	free(w->bids);
	free(w->path);
	free(w);
}

void perf_writer_abort(struct perf_writer *w)
{
	if (!w)
		return;
	if (w->f) {
		fclose(w->f);
		remove(w->path); /* a file without its header would only mislead */
	}
	free_writer(w);
}

/* A perf header string: u32 length (NUL and padding to 64 bytes included), then the bytes. */
static size_t header_string(uint8_t *out, const char *str)
{
	size_t n = strlen(str) + 1, len = (n + 63) / 64 * 64;
	uint32_t l = (uint32_t)len;
	memcpy(out, &l, 4);
	memset(out + 4, 0, len);
	memcpy(out + 4, str, n);
	return 4 + len;
}

int perf_writer_close(struct perf_writer *w, const uint64_t *ids, size_t nids)
{
	uint64_t data_end = w->off;
	/* Features: build-ids, and the machine's description. perf needs the architecture to
	 * pick its DWARF unwinder for the file; without it perf script shows only the ip. */
	struct utsname u;
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	uint8_t osrel[4 + 128], arch[4 + 128], cpus[8];
	size_t nosrel = header_string(osrel, u.release), narch = header_string(arch, u.machine);
	long conf = sysconf(_SC_NPROCESSORS_CONF), onln = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t c[2] = { (uint32_t)(conf > 0 ? conf : 1), (uint32_t)(onln > 0 ? onln : 1) };
	memcpy(cpus, c, 8);
	struct { const void *data; size_t size; } feat[] = {
		{ w->bids, w->nbids }, { osrel, nosrel }, { arch, narch }, { cpus, 8 },
	};
	const int bits[] = { PERF_FEAT_BUILD_ID, PERF_FEAT_OSRELEASE, PERF_FEAT_ARCH,
			     PERF_FEAT_NRCPUS };
	size_t nfeat = sizeof(bits) / sizeof(bits[0]);
	uint64_t at = data_end + 16 * nfeat, features = 0;
	int r = 0;
	for (size_t i = 0; i < nfeat && !r; i++) {
		r = put_u64(w, at);
		if (!r)
			r = put_u64(w, feat[i].size);
		at += feat[i].size;
		features |= 1ull << bits[i];
	}
	for (size_t i = 0; i < nfeat && !r; i++)
		r = put(w, feat[i].data, feat[i].size);
	uint64_t ids_off = w->off;
	if (!r) r = put(w, ids, nids * 8);
	uint64_t attr_off = w->off;
	w->attr.size = sizeof(w->attr);
	if (!r) r = put(w, &w->attr, sizeof(w->attr));
	if (!r) r = put_u64(w, ids_off);
	if (!r) r = put_u64(w, nids * 8);
	uint64_t hdr[13] = {
		PERF_MAGIC2, HEADER_SIZE, sizeof(w->attr) + 16,
		attr_off, sizeof(w->attr) + 16,
		HEADER_SIZE, data_end - HEADER_SIZE,
		0, 0,
		features, 0, 0, 0,
	};
	if (!r && fseek(w->f, 0, SEEK_SET))
		r = err_set(-errno, "%s: seek: %s", w->path, strerror(errno));
	if (!r && fwrite(hdr, 1, sizeof(hdr), w->f) != sizeof(hdr))
		r = err_set(-errno, "%s: write: %s", w->path, strerror(errno));
	if (fclose(w->f) && !r)
		r = err_set(-errno, "%s: %s", w->path, strerror(errno));
	free_writer(w);
	return r;
}
