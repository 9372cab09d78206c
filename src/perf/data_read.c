/*
 * Reading perf.data (the "PERFILE2" file format of tools/perf/util/header.c): attributes
 * with their sample ids, the data section, the build-id and PMU-mappings features. Records
 * are decoded through a cursor; the kernel writes them per ring buffer, so the data section
 * is only ordered within rounds, and perf_data_each() sorts them by time first. A file's
 * records are read with pread rather than through its mapping, a sample's stack copy only
 * as far as a walk reads it (see PREFIX_START).
 */
#include "perf/perf.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "base/bulk.h"
#include "base/cursor.h"
#include "base/err.h"
#include "base/radix.h"
#include "base/vec.h"

#define PERF_MAGIC2 0x32454c4946524550ull /* "PERFILE2" */
#define HEADER_SIZE 104

/* Records of a mapped file are read with pread rather than through the mapping: touching
 * a 32 KiB sample there faults in (and maps) 64 KiB around it, pages that then have to be
 * dropped again with madvise for a long recording not to stay resident whole, which costs
 * more than copying the bytes a walk reads. Of a record, the first d->prefix bytes are
 * read: a sample's fields and the top of its stack copy, where nearly every walk ends.
 * The index pass reads (and keeps) the first PREFIX_START bytes of every record anyway,
 * for its time and size: a page's worth, so that a walk of a sample with a usual stack
 * needs no second read. In bench/report_first.sh's recording half of the walks end
 * within 1.4 KiB of the copy and 99% within 2.5; reading them again, past a first
 * KiB, was 950 more preads and 3 ms of a 30 ms report. A walk that goes further reads
 * more (perf_sample_stack); when many do (PREFIX_GROWS), the prefix grows to what such a
 * walk needed, with a margin: one deep walk does not make every record read more, since
 * copying what no walk reads costs as much as the walk. */
#define PREFIX_START 4096
#define PREFIX_MARGIN 512
/* The prefix grows when more than one walk in PREFIX_GROWS read past it, of at least
 * PREFIX_WALKS since it last grew. */
#define PREFIX_GROWS 8
#define PREFIX_WALKS 16
/* What the index pass keeps of the records, at most: a second read of each record later
 * costs as much as the first (the page cache's pages are cold by then). Past it (some
 * 16,000 samples) records are read again as they are decoded. */
#define HEADS_MAX (64u << 20)

static int bad(const struct perf_data *d, uint64_t off, const char *what)
{
	return err_set(-EINVAL, "%s: at 0x%llx: %s", d->path, (unsigned long long)off, what);
}

/* One build-id record (the feature section's and the pipe format's HEADER_BUILD_ID have
 * the same layout): pid, 24 bytes of id with its length in byte 20, a file name. */
static int add_build_id(struct perf_data *d, struct cur *r, uint64_t at)
{
	struct perf_build_id b = { .pid = cur_u32(r) };
	const uint8_t *id = cur_bytes(r, 24);
	if (!cur_ok(r))
		return bad(d, at, "build-id record too short");
	memcpy(b.id, id, 20);
	b.len = id[20] && id[20] <= 20 ? id[20] : 20;
	size_t n = cur_left(r);
	if (!memchr(r->p, 0, n))
		return bad(d, at, "build-id record's file name is not terminated");
	b.filename = (const char *)r->p;
	struct perf_build_id *slot = vec_push_raw((void **)&d->build_ids, &d->nbuild_ids,
						  &d->cap_build_ids, sizeof(*d->build_ids));
	if (!slot)
		return err_set(-ENOMEM, "%s: out of memory", d->path);
	*slot = b;
	return 0;
}

/* The size bytes of a feature's section at off: a bad cursor when they run past the file. */
static struct cur feature(const struct perf_data *d, uint64_t off, uint64_t size)
{
	struct cur c = cur_make(d->map, d->size, false);
	cur_seek(&c, off);
	return cur_sub(&c, size);
}

static int read_build_ids(struct perf_data *d, uint64_t off, uint64_t size)
{
	struct cur s = feature(d, off, size);
	if (!cur_ok(&s))
		return bad(d, off, "build-id feature runs past the end of the file");
	while (!cur_eof(&s)) {
		uint64_t at = cur_off(&s);
		cur_u32(&s);
		cur_u16(&s);
		uint16_t len = cur_u16(&s);
		struct cur r = cur_sub(&s, len < 8 ? 0 : len - 8u);
		if (!cur_ok(&s) || len < 8 + 4 + 24)
			return bad(d, at, "build-id record runs past its feature section");
		int e = add_build_id(d, &r, at);
		if (e)
			return e;
	}
	return 0;
}

/* tally's STOPPED feature: a perf header string (u32 length, then the NUL-terminated
 * text), kept whole when it fits d->stopped. */
static int read_stopped(struct perf_data *d, uint64_t off, uint64_t size)
{
	struct cur s = feature(d, off, size);
	uint32_t len = cur_u32(&s);
	const uint8_t *text = cur_bytes(&s, len);
	if (!cur_ok(&s) || !len || !memchr(text, 0, len))
		return bad(d, off, "stopped feature is not a string");
	snprintf(d->stopped, sizeof(d->stopped), "%s", (const char *)text);
	return 0;
}

/* The smallest PMU entry: its type, a string's length and one byte, the NUL. */
#define PMU_ENTRY_MIN (4 + 4 + 1)

/* perf's PMU_MAPPINGS feature: u32 count, then per PMU its u32 type and name, a header
 * string (u32 length, then that many bytes: the name, NUL-padded; tools/perf/util/header.c,
 * write_pmu_mappings). No alignment between entries. Names stay in the file. */
static int read_pmus(struct perf_data *d, uint64_t off, uint64_t size)
{
	struct cur s = feature(d, off, size);
	uint32_t n = cur_u32(&s);
	if (!cur_ok(&s) || n > cur_left(&s) / PMU_ENTRY_MIN)
		return bad(d, off, "pmu mappings feature: its count runs past its section");
	if (!n)
		return 0;
	if (!(d->pmus = calloc(n, sizeof(*d->pmus))))
		return err_set(-ENOMEM, "%s: out of memory", d->path);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t at = cur_off(&s);
		uint32_t type = cur_u32(&s), len = cur_u32(&s);
		const uint8_t *name = cur_bytes(&s, len);
		if (!cur_ok(&s))
			return bad(d, at, "pmu mappings feature: an entry runs past its section");
		if (!memchr(name, 0, len))
			return bad(d, at, "pmu mappings feature: a name is not terminated");
		d->pmus[d->npmus++] = (struct perf_pmu_name){ type, (const char *)name };
	}
	return 0;
}

const char *perf_data_pmu_name(const struct perf_data *d, uint32_t type)
{
	for (size_t i = 0; i < d->npmus; i++)
		if (d->pmus[i].type == type)
			return d->pmus[i].name;
	return NULL;
}

static int read_features(struct perf_data *d)
{
	struct cur c = cur_make(d->map, d->size, false);
	cur_seek(&c, d->data_off + d->data_size);
	for (int bit = 0; bit < 256; bit++) {
		if (!(d->features[bit / 64] >> (bit % 64) & 1))
			continue;
		uint64_t off = cur_u64(&c), size = cur_u64(&c);
		if (!cur_ok(&c))
			return bad(d, d->data_off + d->data_size, "feature table runs past the end");
		int r = bit == PERF_FEAT_BUILD_ID ? read_build_ids(d, off, size)
			: bit == PERF_FEAT_PMU_MAPPINGS ? read_pmus(d, off, size)
			: bit == PERF_FEAT_TALLY_STOPPED ? read_stopped(d, off, size) : 0;
		if (r)
			return r;
	}
	return 0;
}

/* Whether a record header of the kernel's or perf's own types lies at off, its record in
 * the file. Where a feature table lies instead, its first offset reads as the type: at
 * least 104 (past the file header), more than any record type. */
static bool starts_a_record(const struct perf_data *d, uint64_t off)
{
	if (off > d->size || d->size - off < 8)
		return false;
	uint32_t type = load_u32(d->map + off, false);
	uint16_t size = load_u16(d->map + off + 6, false);
	return type && (type < PERF_RECORD_MAX || (type >= PERF_RECORD_HEADER_ATTR &&
						   type <= PERF_RECORD_COMPRESSED)) &&
	       size >= 8 && size <= d->size - off;
}

/* A data size of 0 with records after the data offset (or nothing), not a feature table:
 * the header as the recorder wrote it first, which it never came back to. The records run
 * to the end of the file; the feature bits set in that header have no table. */
static int unfinished(struct perf_data *d)
{
	d->unfinished = true;
	d->data_size = d->size - d->data_off;
	snprintf(d->stopped, sizeof(d->stopped), "the recorder never finished the file");
	return 0;
}

/* One attribute (attr_size bytes at a) with its ids; attributes with different sample
 * layouts need PERF_SAMPLE_IDENTIFIER to tell their records apart. */
static int add_attr(struct perf_data *d, uint64_t at, const uint8_t *a, size_t attr_size,
		    const uint8_t *ids, size_t nids)
{
	if (d->nattrs == 4096)
		return bad(d, at, "more than 4096 event attributes");
	bool first = !d->nattrs;
	struct perf_attr_info *i =
		vec_push_raw((void **)&d->attrs, &d->nattrs, &d->cap_attrs, sizeof(*d->attrs));
	if (!i)
		return err_set(-ENOMEM, "%s: out of memory", d->path);
	memcpy(&i->attr, a, attr_size < sizeof(i->attr) ? attr_size : sizeof(i->attr));
	i->ids = ids;
	i->nids = nids;
	if (!first && i->attr.sample_type != d->attrs[0].attr.sample_type &&
	    !(d->attrs[0].attr.sample_type & PERF_SAMPLE_IDENTIFIER)) {
		d->nattrs--;
		return bad(d, at, "events with different sample layouts but no "
				  "PERF_SAMPLE_IDENTIFIER");
	}
	return 0;
}

/* The pipe format's header is the magic and its own size: everything else comes as
 * records (HEADER_ATTR, HEADER_BUILD_ID, ...) among the kernel's. */
#define PIPE_HEADER_SIZE 16

static int read_header(struct perf_data *d)
{
	struct cur c = cur_make(d->map, d->size, false);
	if (cur_u64(&c) != PERF_MAGIC2)
		return err_set(-EINVAL, "%s: not a perf.data file (no PERFILE2 magic)", d->path);
	uint64_t hsize = cur_u64(&c);
	if (cur_ok(&c) && hsize == PIPE_HEADER_SIZE) {
		d->pipe = true;
		d->data_off = PIPE_HEADER_SIZE;
		d->data_size = d->size - PIPE_HEADER_SIZE;
		return 0;
	}
	uint64_t attr_size = cur_u64(&c);
	uint64_t attrs_off = cur_u64(&c), attrs_size = cur_u64(&c);
	d->data_off = cur_u64(&c);
	d->data_size = cur_u64(&c);
	cur_skip(&c, 16); /* event_types: unused since 2010 */
	for (int i = 0; i < 4; i++)
		d->features[i] = cur_u64(&c);
	/* A mark whose content says nothing more: read from the bit, so that a recording
	 * tally never finished (its provisional header has the bit, no feature table) has it. */
	d->unwound = d->features[PERF_FEAT_TALLY_UNWOUND / 64] >> (PERF_FEAT_TALLY_UNWOUND % 64) & 1;
	if (!cur_ok(&c) || hsize < HEADER_SIZE)
		return bad(d, 0, "truncated file header");
	if (d->data_off > d->size || d->data_size > d->size - d->data_off)
		return bad(d, 40, "data section runs past the end of the file");
	if (attr_size < 16 + PERF_ATTR_SIZE_VER0 || attr_size > 4096)
		return bad(d, 16, "implausible attribute size");
	size_t nattrs = attrs_size / attr_size;
	if (nattrs == 0 || nattrs > 4096)
		return bad(d, 32, "no event attributes");
	cur_seek(&c, attrs_off);
	for (size_t i = 0; i < nattrs; i++) {
		uint64_t at = cur_off(&c);
		const uint8_t *a = cur_bytes(&c, attr_size - 16);
		uint64_t ids_off = cur_u64(&c), ids_size = cur_u64(&c);
		if (!cur_ok(&c))
			return bad(d, at, "event attribute runs past the end of the file");
		if (ids_off > d->size || ids_size > d->size - ids_off)
			return bad(d, at, "event ids run past the end of the file");
		int r = add_attr(d, at, a, attr_size - 16, d->map + ids_off, ids_size / 8);
		if (r)
			return r;
	}
	if (!d->data_size && (d->data_off == d->size || starts_a_record(d, d->data_off)))
		return unfinished(d);
	return read_features(d);
}

/* The pipe format's HEADER_ATTR: the attribute (its own size field says how long), then
 * the ids of its events up to the end of the record. */
static int pipe_attr(struct perf_data *d, uint64_t off, uint16_t size)
{
	struct cur c = cur_make(d->recs + off + 8, size - 8u, false);
	cur_u32(&c);
	uint32_t attr_size = cur_u32(&c);
	if (!attr_size)
		attr_size = PERF_ATTR_SIZE_VER0;
	if (!cur_ok(&c) || attr_size < PERF_ATTR_SIZE_VER0 || attr_size > size - 8u)
		return bad(d, off, "attribute record shorter than its attribute");
	return add_attr(d, off, d->recs + off + 8, attr_size, d->recs + off + 8 + attr_size,
			(size - 8u - attr_size) / 8);
}

static int pipe_build_id(struct perf_data *d, uint64_t off, uint16_t size)
{
	struct cur r = cur_make(d->recs + off + 8, size - 8u, false);
	return add_build_id(d, &r, off);
}

/* The bytes the record at off (its first bytes at h, at least 16 or all up to end) takes
 * in the stream: tracing data and AUX data follow their record (tools/perf/util/session.c
 * reads them separately). 0 when that runs past end. */
static uint64_t record_span(const uint8_t *h, uint64_t off, uint64_t end)
{
	uint32_t type = load_u32(h, false);
	uint16_t size = load_u16(h + 6, false);
	uint64_t extra = 0;
	if (size < 8 || size > end - off)
		return 0;
	if (type == PERF_RECORD_HEADER_TRACING_DATA && size >= 12)
		extra = (load_u32(h + 8, false) + 7ull) & ~7ull;
	else if (type == PERF_RECORD_AUXTRACE && size >= 16)
		extra = load_u64(h + 8, false);
	return extra > end - off - size ? 0 : size + extra;
}

/* perf record -z wraps runs of records in PERF_RECORD_COMPRESSED records: one zstd stream
 * across all of them, in which a record may span two. The stream is inflated once into
 * one buffer of plain records (the rest of the data section is copied between). */
#define INFLATED_MAX (1ull << 32)

static int inflate_compressed(struct perf_data *d)
{
	/* perf sets the COMPRESSED feature when it writes such records (the pipe format has
	 * no features: the index pass sets it on finding one); looking for them here instead
	 * would read the whole file. */
	if (!(d->features[0] >> PERF_FEAT_COMPRESSED & 1))
		return 0;
	uint64_t off = d->data_off, end = d->data_off + d->data_size;
	ZSTD_DStream *z = ZSTD_createDStream();
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	int r = 0;
	if (!z || !buf || ZSTD_isError(ZSTD_initDStream(z))) {
		r = err_set(-ENOMEM, "%s: out of memory", d->path);
		goto out;
	}
	while (off + 8 <= end && !r) {
		uint32_t type = load_u32(d->recs + off, false);
		uint64_t size = record_span(d->recs + off, off, end);
		if (!size) {
			r = bad(d, off, "record size runs past the data section");
			break;
		}
		ZSTD_inBuffer in = { d->recs + off + 8, type == PERF_RECORD_COMPRESSED ? size - 8u : 0, 0 };
		if (type != PERF_RECORD_COMPRESSED) {
			in.src = d->recs + off;
			in.size = size;
		}
		bool full = false; /* zstd may hold output back until it has room */
		while ((in.pos < in.size || full) && !r) {
			if (cap - n < (1 << 16)) {
				if (cap >= INFLATED_MAX) {
					r = bad(d, off, "compressed records inflate beyond 4 GiB");
					break;
				}
				if (!vec_reserve_grow((void **)&buf, n, &cap, 1, 1 << 16)) {
					r = err_set(-ENOMEM, "%s: out of memory", d->path);
					break;
				}
			}
			if (type != PERF_RECORD_COMPRESSED) {
				size_t k = in.size - in.pos < cap - n ? in.size - in.pos : cap - n;
				memcpy(buf + n, (const uint8_t *)in.src + in.pos, k);
				n += k;
				in.pos += k;
				continue;
			}
			ZSTD_outBuffer o = { buf, cap, n };
			size_t zr = ZSTD_decompressStream(z, &o, &in);
			if (ZSTD_isError(zr))
				r = bad(d, off, "compressed records do not decompress (zstd)");
			full = o.pos == o.size;
			n = o.pos;
		}
		off += size;
	}
	if (!r) {
		d->inflated = buf;
		d->recs = buf;
		d->recs_size = n;
		d->data_off = 0;
		d->data_size = n;
		buf = NULL;
	}
out:
	ZSTD_freeDStream(z);
	free(buf);
	return r;
}

static int build_index(struct perf_data *d);

/* Forgets what the index pass collected from a pipe-format stream, to read it again. */
static void reset_pipe(struct perf_data *d)
{
	free(d->attrs);
	free(d->build_ids);
	free(d->order);
	d->attrs = NULL;
	d->build_ids = NULL;
	d->order = NULL;
	d->nattrs = d->cap_attrs = d->nbuild_ids = d->cap_build_ids = d->norder = 0;
}

/* A mapped file (fd >= 0, kept open: its records are read with pread) is owned from the
 * start. On failure the image is unmapped and fd closed with d. */
static int open_image(const char *name, const void *data, size_t size, int fd,
		      struct perf_data **out)
{
	bool mapped = fd >= 0;
	struct perf_data *d = calloc(1, sizeof(*d));
	if (!d) {
		if (mapped) {
			munmap((void *)data, size);
			close(fd);
		}
		return err_set(-ENOMEM, "%s: out of memory", name);
	}
	d->path = name;
	d->prefix = PREFIX_START;
	d->map = data;
	d->size = size;
	d->owns_map = mapped;
	d->fd = fd;
	int r = read_header(d);
	if (!r) {
		d->recs = d->map;
		d->recs_size = d->data_off + d->data_size;
		r = inflate_compressed(d);
	}
	if (!r)
		r = build_index(d);
	if (!r && d->pipe && (d->features[0] >> PERF_FEAT_COMPRESSED & 1)) {
		/* perf record -z -o -: only now is it known that the stream is compressed */
		reset_pipe(d);
		r = inflate_compressed(d);
		if (!r)
			r = build_index(d);
	}
	if (!r && !d->nattrs)
		r = bad(d, 0, "no event attributes");
	if (r) {
		perf_data_close(d);
		return r;
	}
	*out = d;
	return 0;
}

int perf_data_open_mem(const char *name, const void *data, size_t size, struct perf_data **out)
{
	return open_image(name, data, size, -1, out);
}

int perf_data_open(const char *path, struct perf_data **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(-errno, "%s: %s", path, strerror(errno));
	return perf_data_open_fd(path, fd, out);
}

int perf_data_open_fd(const char *path, int fd, struct perf_data **out)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size < PIPE_HEADER_SIZE) {
		close(fd);
		return err_set(-EINVAL, "%s: too small for a perf.data file", path);
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		close(fd);
		return err_set(-e, "%s: mmap: %s", path, strerror(e));
	}
	return open_image(path, m, (size_t)st.st_size, fd, out);
}

void perf_data_close(struct perf_data *d)
{
	if (!d)
		return;
	if (d->owns_map)
		munmap((void *)d->map, d->size);
	if (d->fd >= 0)
		close(d->fd);
	free(d->attrs);
	free(d->build_ids);
	free(d->pmus);
	free(d->order);
	free(d->inflated);
	free(d->rec_buf);
	free(d->stack_buf);
	huge_unmap(d->heads_map, d->heads_len);
	free(d);
}

uint64_t perf_callchain_at(const struct perf_event_rec *ev, uint64_t i)
{
	return i < ev->nr_callchain ? load_u64(ev->callchain + 8 * i, false) : 0;
}

/* ---- records ---- */

static const struct perf_attr_info *attr_by_id(const struct perf_data *d, uint64_t id)
{
	for (size_t i = 0; i < d->nattrs; i++)
		for (size_t k = 0; k < d->attrs[i].nids; k++)
			if (load_u64(d->attrs[i].ids + 8 * k, false) == id)
				return &d->attrs[i];
	return NULL;
}

static void skip_read_values(struct cur *c, uint64_t fmt)
{
	unsigned per = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
	if (fmt & PERF_FORMAT_GROUP) {
		uint64_t nr = cur_u64(c);
		cur_skip(c, 8 * (!!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				 !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)));
		if (nr > cur_left(c) / 8)
			c->bad = true;
		else
			cur_skip(c, nr * per * 8);
	} else {
		cur_skip(c, 8 * (per + !!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				 !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)));
	}
}

/* decode_image's answer when the bytes read of a record end before the fields it needs. */
#define NEED_ALL 1

static bool from_file(const struct perf_data *d)
{
	return d->fd >= 0 && d->recs == d->map;
}

/* n bytes of the file at off into buf. */
static int pread_all(struct perf_data *d, void *buf, size_t n, uint64_t off)
{
	ssize_t k = pread(d->fd, buf, n, (off_t)off);
	if (k < 0)
		return err_set(-errno, "%s: at 0x%llx: %s", d->path, (unsigned long long)off,
			       strerror(errno));
	return (size_t)k == n ? 0 : bad(d, off, "file shorter than when it was opened");
}

/* Room for n bytes at *buf. */
static int grow_buf(struct perf_data *d, uint8_t **buf, size_t *cap, size_t n)
{
	if (*cap >= n)
		return 0;
	size_t c = n < PREFIX_START ? PREFIX_START : n;
	void *nb = realloc(*buf, c);
	if (!nb)
		return err_set(-ENOMEM, "%s: out of memory", d->path);
	*buf = nb;
	*cap = c;
	return 0;
}

/* n bytes of the file at off into *buf (grown as needed). */
static int read_at(struct perf_data *d, uint8_t **buf, size_t *cap, uint64_t off, size_t n)
{
	int r = grow_buf(d, buf, cap, n);
	return r ? r : pread_all(d, *buf, n, off);
}

/* A sample's dyn_size, at off in the file when it was not among the bytes read: as the
 * index pass read it, or read now. */
static int dyn_size(struct perf_data *d, const struct perf_order *o, uint64_t off,
		    uint64_t *dyn)
{
	uint8_t b[8];
	if (o->tail_back && off + o->tail_back == o->off + o->size) {
		*dyn = o->tail;
		return 0;
	}
	if (!from_file(d))
		return bad(d, off, "sample runs past its record");
	int r = pread_all(d, b, 8, off);
	if (!r)
		*dyn = load_u64(b, false);
	return r;
}

/* The stack copy: size bytes, then its valid size (dyn_size). c holds what was read of the
 * record after the size field; missing bytes of it were not read. */
static int stack_copy(struct perf_data *d, struct cur *c, uint64_t size, uint64_t missing,
		      const struct perf_order *o, struct perf_event_rec *ev)
{
	uint64_t here = cur_left(c), left = here + missing;
	if (size > left || left - size < 8)
		return bad(d, ev->file_off, "sample runs past its record");
	uint64_t got = size < here ? size : here, dyn = 0;
	/* An area of 8 bytes is an unwound sample's mark (perf_sample_unwound_note), read
	 * with the rest: only the record of a chain hundreds of frames deep ends past the
	 * prefix. */
	if (size == 8 && got < size && missing)
		return NEED_ALL;
	ev->stack_off = o->off + (uint64_t)(c->p - ev->raw);
	ev->stack_area = got;
	ev->stack = cur_bytes(c, got);
	if (here - got >= 8) {
		dyn = cur_u64(c);
	} else {
		int r = dyn_size(d, o, ev->stack_off + size, &dyn);
		if (r)
			return r;
	}
	ev->stack_total = dyn < size ? dyn : size;
	ev->stack_size = got < ev->stack_total ? got : ev->stack_total;
	d->walks++;
	return 0;
}

/* A sample's fields; the cursor holds what was read of it, missing bytes were not. */
static int decode_sample(struct perf_data *d, struct cur *c, uint64_t missing,
			 const struct perf_order *o, struct perf_event_rec *ev)
{
	const struct perf_event_attr *a = &ev->attr->attr;
	uint64_t t = a->sample_type;
	if (t & PERF_SAMPLE_IDENTIFIER) cur_u64(c);
	if (t & PERF_SAMPLE_IP) ev->ip = cur_u64(c);
	if (t & PERF_SAMPLE_TID) { ev->pid = cur_u32(c); ev->tid = cur_u32(c); }
	if (t & PERF_SAMPLE_TIME) ev->time = cur_u64(c);
	if (t & PERF_SAMPLE_ADDR) cur_u64(c);
	if (t & PERF_SAMPLE_ID) cur_u64(c);
	if (t & PERF_SAMPLE_STREAM_ID) cur_u64(c);
	if (t & PERF_SAMPLE_CPU) { ev->cpu = cur_u32(c); cur_u32(c); }
	if (t & PERF_SAMPLE_PERIOD) ev->period = cur_u64(c);
	if (t & PERF_SAMPLE_READ) skip_read_values(c, a->read_format);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		ev->nr_callchain = cur_u64(c);
		if (ev->nr_callchain > cur_left(c) / 8)
			return missing ? NEED_ALL
				       : bad(d, ev->file_off, "callchain runs past the record");
		ev->callchain = cur_bytes(c, 8 * ev->nr_callchain);
	}
	if (t & PERF_SAMPLE_RAW) {
		ev->raw_size = cur_u32(c);
		ev->raw_data = cur_bytes(c, ev->raw_size);
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = cur_u64(c);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			cur_u64(c);
		if (nr > cur_left(c) / 24)
			return missing ? NEED_ALL
				       : bad(d, ev->file_off, "branch stack runs past the record");
		cur_skip(c, 24 * nr);
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		ev->regs_abi = cur_u64(c);
		if (ev->regs_abi) {
			/* One bounds check for all of them: this runs for every sample. */
			ev->regs_mask = a->sample_regs_user;
			const uint8_t *v = cur_bytes(c, 8u * (unsigned)__builtin_popcountll(ev->regs_mask));
			unsigned k = 0;
			for (uint64_t left = v ? ev->regs_mask : 0; left; left &= left - 1)
				ev->regs[__builtin_ctzll(left)] = load_u64(v + 8 * k++, false);
		}
	}
	uint64_t size = t & PERF_SAMPLE_STACK_USER ? cur_u64(c) : 0;
	if (!cur_ok(c))
		return missing ? NEED_ALL : bad(d, ev->file_off, "sample runs past its record");
	return size ? stack_copy(d, c, size, missing, o, ev) : 0;
}

/* The sample_id_all trailer of a non-sample record: TID, TIME, ID, STREAM_ID, CPU,
 * IDENTIFIER, whichever the attribute has, at the very end. */
static void decode_trailer(struct cur body, struct perf_event_rec *ev)
{
	const struct perf_event_attr *a = &ev->attr->attr;
	if (!a->sample_id_all)
		return;
	uint64_t t = a->sample_type;
	unsigned n = !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		     !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		     !!(t & PERF_SAMPLE_IDENTIFIER);
	if (cur_left(&body) < 8u * n)
		return;
	cur_skip(&body, cur_left(&body) - 8u * n);
	if (t & PERF_SAMPLE_TID) { /* records that carry their own pid/tid set them after */
		ev->pid = cur_u32(&body);
		ev->tid = cur_u32(&body);
	}
	if (t & PERF_SAMPLE_TIME) ev->time = cur_u64(&body);
	if (t & PERF_SAMPLE_ID) cur_u64(&body);
	if (t & PERF_SAMPLE_STREAM_ID) cur_u64(&body);
	if (t & PERF_SAMPLE_CPU) ev->cpu = cur_u32(&body);
}

static int read_name(const struct perf_data *d, struct cur *c, const char **out,
		     struct perf_event_rec *ev)
{
	if (!memchr(c->p, 0, cur_left(c)))
		return bad(d, ev->file_off, "file or command name is not terminated");
	*out = (const char *)c->p;
	return 0;
}

/* The record o at img, of which avail bytes are at hand (all of it, or a file's prefix). */
static int decode_image(struct perf_data *d, const struct perf_order *o, const uint8_t *img,
			size_t avail, struct perf_event_rec *ev)
{
	uint64_t off = o->off;
	memset(ev, 0, sizeof(*ev));
	struct cur c = cur_make(img, avail, false);
	ev->file_off = off;
	ev->type = cur_u32(&c);
	ev->misc = cur_u16(&c);
	ev->size = cur_u16(&c);
	ev->raw = img;
	struct cur body = cur_sub(&c, ev->size >= 8 ? ev->size - 8u : 0);
	uint64_t missing = 0;
	if (!cur_ok(&c) && ev->size >= 8 && avail >= 8 && avail < ev->size) {
		body = cur_make(img + 8, avail - 8, false);
		missing = ev->size - avail;
	} else if (!cur_ok(&c) || ev->size < 8) {
		return bad(d, off, "record runs past the data section");
	}
	ev->attr = &d->attrs[0];
	if (ev->type >= PERF_RECORD_MAX)
		return 0; /* perf's own records (rounds, build-ids, ...) */
	if (missing && ev->type != PERF_RECORD_SAMPLE)
		return NEED_ALL;
	if (d->nattrs > 1 && (d->attrs[0].attr.sample_type & PERF_SAMPLE_IDENTIFIER)) {
		struct cur idc = body;
		if (ev->type != PERF_RECORD_SAMPLE && cur_left(&idc) >= 8)
			cur_skip(&idc, cur_left(&idc) - 8);
		const struct perf_attr_info *a = attr_by_id(d, cur_u64(&idc));
		if (a)
			ev->attr = a;
	}
	if (ev->type == PERF_RECORD_SAMPLE)
		return decode_sample(d, &body, missing, o, ev);
	decode_trailer(body, ev);
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		ev->pid = cur_u32(&body);
		ev->tid = cur_u32(&body);
		ev->map_start = cur_u64(&body);
		ev->map_len = cur_u64(&body);
		ev->map_pgoff = cur_u64(&body);
		if (ev->type == PERF_RECORD_MMAP2) {
			cur_skip(&body, 24);
			ev->map_prot = cur_u32(&body);
			cur_u32(&body);
		} else {
			ev->map_prot = ev->misc & PERF_RECORD_MISC_MMAP_DATA ? 1 : 5;
		}
		if (!cur_ok(&body))
			return bad(d, off, "mmap record too short");
		return read_name(d, &body, &ev->filename, ev);
	case PERF_RECORD_COMM:
		ev->pid = cur_u32(&body);
		ev->tid = cur_u32(&body);
		if (!cur_ok(&body))
			return bad(d, off, "comm record too short");
		return read_name(d, &body, &ev->comm, ev);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		ev->pid = cur_u32(&body);
		ev->ppid = cur_u32(&body);
		ev->tid = cur_u32(&body);
		ev->ptid = cur_u32(&body);
		return cur_ok(&body) ? 0 : bad(d, off, "fork/exit record too short");
	case PERF_RECORD_LOST:
		cur_u64(&body);
		ev->lost = cur_u64(&body);
		return cur_ok(&body) ? 0 : bad(d, off, "lost record too short");
	case PERF_RECORD_LOST_SAMPLES:
		ev->lost = cur_u64(&body);
		return cur_ok(&body) ? 0 : bad(d, off, "lost-samples record too short");
	}
	return 0;
}

int perf_record_decode(const char *name, uint64_t off, const struct perf_attr_info *attrs,
		       size_t nattrs, const void *rec, size_t size, struct perf_event_rec *ev)
{
	if (!nattrs || size > UINT16_MAX)
		return err_set(-EINVAL, "%s: at 0x%llx: a record of %zu bytes, or no attribute to "
					"read it by",
			       name, (unsigned long long)off, size);
	/* A reader of no file: only the fields decode_image reads are set. */
	struct perf_data d = { .path = name, .fd = -1, .attrs = (struct perf_attr_info *)attrs,
			       .nattrs = nattrs };
	struct perf_order o = { .off = off, .size = (uint16_t)size };
	memset(ev, 0, sizeof(*ev));
	if (size < 8)
		return bad(&d, off, "record shorter than its header");
	int r = decode_image(&d, &o, rec, size, ev);
	if (r == NEED_ALL || (!r && ev->size != size))
		r = bad(&d, off, "record size differs from its header's");
	return r;
}

/* The first n bytes of the record o into d->rec_buf: what the index pass kept of them
 * copied, the rest read (walks that need 5 KiB of each stack copy read 4 then, not 5). */
static int read_prefix(struct perf_data *d, const struct perf_order *o, size_t n)
{
	size_t kept = o->head_len < n ? o->head_len : 0;
	if (!kept)
		return read_at(d, &d->rec_buf, &d->rec_cap, o->off, n);
	int r = grow_buf(d, &d->rec_buf, &d->rec_cap, n);
	if (!r) {
		memcpy(d->rec_buf, d->heads + o->head, kept);
		r = pread_all(d, d->rec_buf + kept, n - kept, o->off + kept);
	}
	return r;
}

/* The record o, decoded: in memory, from what the index pass kept of it, or read from the
 * file (its first d->prefix bytes); all of it when the fields run past those. */
static int decode(struct perf_data *d, const struct perf_order *o, struct perf_event_rec *ev)
{
	if (!from_file(d))
		return decode_image(d, o, d->recs + o->off, d->recs_size - o->off, ev);
	int r;
	size_t n = o->size < d->prefix ? o->size : d->prefix;
	/* Kept, and as long as walks have needed so far (else read as far as they have). */
	if (o->head_len && (o->head_len == o->size || o->head_len >= d->prefix))
		r = decode_image(d, o, d->heads + o->head, o->head_len, ev);
	else if (!(r = read_prefix(d, o, n)))
		r = decode_image(d, o, d->rec_buf, n, ev);
	if (r == NEED_ALL && !(r = read_at(d, &d->rec_buf, &d->rec_cap, o->off, o->size)))
		r = decode_image(d, o, d->rec_buf, o->size, ev);
	return r;
}

/* Whether the walk of ev, which read past the prefix, makes the walks that did so since it
 * last grew more than one in PREFIX_GROWS (counted once a sample: a walk may read on more
 * than once). Records start past the file's header, so no sample is at file_off 0. */
static bool prefix_short(struct perf_data *d, const struct perf_event_rec *ev)
{
	if (d->over_off != ev->file_off) {
		d->over_off = ev->file_off;
		d->walks_over++;
	}
	if (d->walks < PREFIX_WALKS || d->walks_over * PREFIX_GROWS <= d->walks)
		return false;
	d->walks = d->walks_over = 0;
	return true;
}

int perf_sample_stack(struct perf_data *d, const struct perf_event_rec *ev, uint64_t need,
		      const uint8_t **data, uint64_t *size)
{
	if (need <= ev->stack_size) {
		*data = ev->stack;
		*size = ev->stack_size;
		return 0;
	}
	uint64_t n = need + PREFIX_MARGIN < ev->stack_total ? need + PREFIX_MARGIN : ev->stack_total;
	int r = read_at(d, &d->stack_buf, &d->stack_cap, ev->stack_off, n);
	if (r)
		return r;
	uint64_t upfront = ev->stack_off - ev->file_off + n;
	if (upfront > d->prefix && prefix_short(d, ev))
		d->prefix = upfront < UINT16_MAX ? (size_t)upfront : UINT16_MAX;
	*data = d->stack_buf;
	*size = n;
	return 0;
}

/* The attribute of a sample (its first bytes at h: at least 40, or the whole record). */
static const struct perf_attr_info *sample_attr(const struct perf_data *d, const uint8_t *h,
						uint16_t size)
{
	const struct perf_attr_info *a = &d->attrs[0];
	if (d->nattrs > 1 && (a->attr.sample_type & PERF_SAMPLE_IDENTIFIER) && size >= 16) {
		const struct perf_attr_info *by_id = attr_by_id(d, load_u64(h + 8, false));
		if (by_id)
			a = by_id;
	}
	return a;
}

/* The time of a sample without decoding it. It follows the id, ip and pid/tid, whichever
 * the attribute has; 0 when it has none (or the record is too short: decoding it later
 * says so). */
static uint64_t sample_time(const struct perf_attr_info *a, const uint8_t *h, uint16_t size)
{
	uint64_t t = a->attr.sample_type;
	unsigned at = 8 + 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
			       !!(t & PERF_SAMPLE_TID));
	if (!(t & PERF_SAMPLE_TIME) || at + 8u > size)
		return 0;
	return load_u64(h + at, false);
}

/* Where a sample's dyn_size lies, in bytes back from the end of the record: after it come
 * only fields of 8 bytes (weight, data_src, perf record's default, ...); 0 when one of
 * variable size follows (interrupt registers, AUX data) or there is no stack copy. */
static uint8_t dyn_size_back(const struct perf_attr_info *a)
{
	uint64_t t = a->attr.sample_type;
	if (!(t & PERF_SAMPLE_STACK_USER) || (t & (PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_AUX)))
		return 0;
	return (uint8_t)(8 * (1 + !!(t & PERF_SAMPLE_WEIGHT_TYPE) + !!(t & PERF_SAMPLE_DATA_SRC) +
			      !!(t & PERF_SAMPLE_TRANSACTION) + !!(t & PERF_SAMPLE_PHYS_ADDR) +
			      !!(t & PERF_SAMPLE_CGROUP) + !!(t & PERF_SAMPLE_DATA_PAGE_SIZE) +
			      !!(t & PERF_SAMPLE_CODE_PAGE_SIZE)));
}

/* The first bytes of the record at off: as many as record_span and sample_attr read from
 * memory; from a file with pread, the first PREFIX_START of them (the fields and the top
 * of a sample's stack copy, which the index keeps: see HEADS_MAX), with the back bytes
 * before them, from which the previous record's dyn_size is taken (then *before points at
 * them). *avail: the bytes of the record at hand from there. */
#define BACK_MAX (8 * 8)

static const uint8_t *peek(const struct perf_data *d, uint64_t off, uint64_t end,
			   unsigned back, uint8_t buf[BACK_MAX + PREFIX_START],
			   const uint8_t **before, size_t *avail)
{
	*before = NULL;
	*avail = 0;
	uint64_t from = back && off >= d->data_off + back ? off - back : off;
	size_t want = end - off < PREFIX_START ? (size_t)(end - off) : PREFIX_START;
	size_t n = (size_t)(off - from) + want;
	if (!from_file(d) || pread(d->fd, buf, n, (off_t)from) != (ssize_t)n)
		return d->recs + off;
	if (from < off)
		*before = buf;
	*avail = want;
	return buf + (off - from);
}

/* Room for what the index pass keeps of a file's records (records in memory are decoded
 * where they are), mapped once as large as they could need, within HEADS_MAX (on huge
 * pages from 1 MiB): grown by realloc and faulted in 4 KiB at a time, the 5 MiB of a
 * 5,000-sample file cost a tenth of reporting it. No room: nothing is kept. */
static void map_heads(struct perf_data *d)
{
	if (!from_file(d) || d->heads_map)
		return;
	size_t room = d->data_size < HEADS_MAX ? d->data_size : HEADS_MAX;
	d->heads = huge_map(room, &d->heads_map, &d->heads_len);
	d->capheads = d->heads ? room : 0;
}

/* Keeps the first n bytes of the record o read by the index pass, where there is room. */
static void keep_head(struct perf_data *d, struct perf_order *o, const uint8_t *h, size_t n)
{
	if (n < 8 || d->nheads + n > d->capheads)
		return;
	memcpy(d->heads + d->nheads, h, n);
	o->head = (uint32_t)d->nheads;
	o->head_len = (uint16_t)n;
	d->nheads += n;
}

/* Every record's place in time order, and, in the pipe format, the attributes and
 * build-ids its records carry. */
static int build_index(struct perf_data *d)
{
	uint64_t off = d->data_off, end = d->data_off + d->data_size, last = 0;
	size_t cap = 0;
	struct perf_event_rec ev;
	uint8_t buf[BACK_MAX + PREFIX_START];
	unsigned back = 0; /* where the previous record's dyn_size lies, back from here */
	map_heads(d);
	while (off + 8 <= end) {
		const uint8_t *before;
		size_t avail;
		const uint8_t *h = peek(d, off, end, back, buf, &before, &avail);
		uint64_t span = record_span(h, off, end);
		if (!span && d->unfinished)
			break; /* the last record, cut short when the recorder died */
		if (!span)
			return bad(d, off, "record size runs past the data section");
		uint32_t type = load_u32(h, false);
		uint16_t size = load_u16(h + 6, false);
		struct perf_order o = { .off = off, .size = size };
		/* perf's own records whole (a FINISHED_ROUND every round: 8 bytes, a read each
		 * later), the kernel's as far as read */
		if (type < PERF_RECORD_MAX || size <= avail)
			keep_head(d, &o, h, avail < size ? avail : size);
		if (before) {
			d->order[d->norder - 1].tail = load_u64(before, false);
			d->order[d->norder - 1].tail_back = (uint8_t)back;
		}
		back = 0;
		int r = 0;
		if (d->pipe && type == PERF_RECORD_HEADER_ATTR)
			r = pipe_attr(d, off, size);
		else if (d->pipe && type == PERF_RECORD_HEADER_BUILD_ID)
			r = pipe_build_id(d, off, size);
		else if (type == PERF_RECORD_COMPRESSED)
			d->features[0] |= 1ull << PERF_FEAT_COMPRESSED;
		else if (type >= PERF_RECORD_MAX)
			; /* perf's own records carry no time */
		else if (!d->nattrs)
			r = bad(d, off, "record before any event attribute");
		else if (type == PERF_RECORD_SAMPLE) {
			const struct perf_attr_info *a = sample_attr(d, h, size);
			o.time = sample_time(a, h, size);
			/* Only where it lies inside the record, and the next one follows it. */
			back = span == size && dyn_size_back(a) < size ? dyn_size_back(a) : 0;
		} else if (!(r = decode(d, &o, &ev))) {
			o.time = ev.time;
		}
		if (r && d->unfinished) {
			err_clear(); /* what the recorder was writing when it died */
			break;
		}
		if (r)
			return r;
		if (o.time)
			last = o.time;
		struct perf_order *slot =
			vec_push_raw((void **)&d->order, &d->norder, &cap, sizeof(*d->order));
		if (!slot)
			return err_set(-ENOMEM, "%s: out of memory", d->path);
		o.time = o.time ? o.time : last;
		*slot = o;
		off += span;
	}
	/* Stable: records of one time stay in file order. */
	if (radix_sort(d->order, d->norder, sizeof(*d->order), offsetof(struct perf_order, time)))
		return err_set(-ENOMEM, "%s: out of memory", d->path);
	return 0;
}

int perf_data_each(struct perf_data *d, int (*fn)(const struct perf_event_rec *ev, void *arg),
		   void *arg)
{
	struct perf_event_rec ev;
	int r = 0;
	for (size_t i = 0; i < d->norder && !r; i++) {
		r = decode(d, &d->order[i], &ev);
		if (!r)
			r = fn(&ev, arg);
	}
	return r;
}
