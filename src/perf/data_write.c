/*
 * Writing perf.data: a provisional header with the attributes known when the recording
 * begins, the records as the kernel produced them, then the feature table (build-ids, the
 * machine and its PMUs, the samples' clock), the event ids and the attributes, and finally
 * the real header over the provisional one. Offsets are free in the format, so only whole
 * records and the build-id list are buffered. The file is a temporary renamed into place
 * when finished (base/atomic_file.h); a failed write (a full disk) ends the records there
 * and the file is still finished, with tally's STOPPED feature saying why.
 *
 * The provisional header is what perf leaves in a file it never finished: a data size of
 * 0, the attributes and their ids, no features. Should tally be killed, its temporary
 * holds that header and the records written so far, and readers take them to the last
 * whole one (perf/data_read.c).
 */
#include "perf/perf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/err.h"
#include "base/vec.h"

#define PERF_MAGIC2 0x32454c4946524550ull
#define HEADER_SIZE 104

/* Records are gathered into whole-record buffers of this size and written with write(2),
 * so that after a failed write the last record wholly on disk is known. */
#define BUF_SIZE (1u << 20)
/* Room held in an unlinked file beside the output for the ids, the attribute and the
 * features, given back when a write fails, so that a full disk still gets them: about
 * 1,500 build-ids of 160 bytes. */
#define RESERVE_SIZE (256u << 10)

struct more_attr {
	struct perf_event_attr attr;
	uint64_t *ids;
	size_t nids;
};

struct perf_writer {
	struct afile *out;
	int fd;
	int reserve; /* the unlinked file holding RESERVE_SIZE bytes, or -1 */
	int error; /* errno of the write that failed; 0 while none has */
	struct perf_event_attr attr;
	uint8_t *tracing; /* perf_writer_set_tracing_data, NULL when none */
	size_t ntracing;
	bool begun; /* the provisional header is written: records go to the file */
	uint64_t data_off; /* where the records begin, past the provisional header */
	uint64_t off; /* where the next record goes: the bytes written and buffered */
	uint64_t samples; /* PERF_RECORD_SAMPLE records written and buffered */
	uint64_t bytes; /* of the records written and buffered */
	uint8_t *buf; /* whole records not yet written */
	size_t nbuf;
	uint8_t *bids; /* build-id records, in the file's layout */
	size_t nbids, capbids;
	uint8_t *pmus; /* the PMU_MAPPINGS feature, npmus bytes (0: none) */
	size_t npmus;
	/* With attr.use_clockid: the clock's resolution and one moment on it and on the wall
	 * clock, taken together when the recording began (perf's CLOCKID and CLOCK_DATA). */
	uint64_t clock_res_ns, clock_ns, tod_ns;
	struct more_attr *more; /* attributes after the first (perf_writer_add_attr) */
	size_t nmore;
};

static const char *path_of(const struct perf_writer *w) { return afile_target(w->out); }

static int write_all(int fd, const void *p, size_t n, size_t *done)
{
	for (*done = 0; *done < n;) {
		ssize_t k = write(fd, (const uint8_t *)p + *done, n - *done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		*done += (size_t)k;
	}
	return 0;
}

/* The end of the last record of buf[0..n) wholly within its first k bytes. */
static size_t whole_records(const uint8_t *buf, size_t n, size_t k, uint64_t *samples)
{
	size_t at = 0;
	*samples = 0;
	while (at + 8 <= n) {
		struct perf_event_header h;
		memcpy(&h, buf + at, sizeof(h));
		if (at + h.size > k)
			break;
		*samples += h.type == PERF_RECORD_SAMPLE;
		at += h.size;
	}
	return at;
}

static int write_provisional(struct perf_writer *w, const uint64_t *ids, size_t nids,
			     const struct perf_writer_event *more, size_t nmore);

/* Writes the buffered records, after the provisional header (the first attribute alone,
 * when perf_writer_begin has not come). When that fails the file ends at the last whole
 * record written, the writer keeps the error and later records are dropped. */
static int flush(struct perf_writer *w)
{
	if (!w->begun) {
		int r = write_provisional(w, NULL, 0, NULL, 0);
		if (r)
			return r;
	}
	size_t done;
	int e = write_all(w->fd, w->buf, w->nbuf, &done);
	if (e) {
		uint64_t all, kept;
		whole_records(w->buf, w->nbuf, w->nbuf, &all);
		size_t keep = whole_records(w->buf, w->nbuf, done, &kept);
		w->off -= w->nbuf - keep;
		w->samples -= all - kept;
		w->error = e;
	}
	w->nbuf = 0;
	return e ? err_set(-e, "%s: %s", path_of(w), strerror(e)) : 0;
}

/* Holds room for the trailer on the output's file system (best effort: without O_TMPFILE
 * or the room, a full disk may leave no space for it). */
static int make_reserve(const char *target)
{
	const char *slash = strrchr(target, '/');
	char dir[PATH_MAX];
	int n = !slash ? 1 : slash == target ? 1 : (int)(slash - target);
	snprintf(dir, sizeof(dir), "%.*s", n, slash ? target : ".");
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 && posix_fallocate(fd, 0, RESERVE_SIZE)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* As perf record does (record__init_clock): the wall clock, then the samples' clock. */
static void read_clocks(struct perf_writer *w)
{
	struct timespec res, tod, clk;
	clockid_t id = (clockid_t)w->attr.clockid;
	if (!clock_getres(id, &res))
		w->clock_res_ns = ns_of(&res);
	if (!clock_gettime(CLOCK_REALTIME, &tod) && !clock_gettime(id, &clk)) {
		w->tod_ns = ns_of(&tod);
		w->clock_ns = ns_of(&clk);
	}
}

static int read_pmus(struct perf_writer *w);

int perf_writer_open(const char *path, const struct perf_event_attr *attr,
		     struct perf_writer **out)
{
	struct perf_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->buf = malloc(BUF_SIZE))) {
		free(w);
		return err_set(-ENOMEM, "out of memory");
	}
	w->attr = *attr;
	w->reserve = -1;
	if (attr->use_clockid)
		read_clocks(w);
	int r = read_pmus(w);
	if (!r)
		r = afile_open(path, AFILE_SYNC, &w->out);
	if (r) {
		free(w->pmus);
		free(w->buf);
		free(w);
		return r;
	}
	w->fd = afile_fd(w->out);
	w->reserve = make_reserve(afile_target(w->out));
	w->data_off = w->off = HEADER_SIZE;
	*out = w;
	return 0;
}

/* The file header (13 words) for attributes at attrs_off, data at data_off. */
static void put_header(uint64_t hdr[13], uint64_t attrs_off, size_t nattrs, uint64_t data_off,
		       uint64_t data_size, const uint64_t features[4])
{
	uint64_t attr_size = sizeof(struct perf_event_attr) + 16;
	uint64_t h[13] = { PERF_MAGIC2, HEADER_SIZE, attr_size, attrs_off, attr_size * nattrs,
			   data_off, data_size, 0, 0,
			   features[0], features[1], features[2], features[3] };
	memcpy(hdr, h, sizeof(h));
}

/* Appends attr as the file's attribute section holds it: the attribute, then the offset
 * and size of its ids. */
static uint8_t *put_attr(uint8_t *p, const struct perf_event_attr *attr, uint64_t ids_off,
			 size_t nids)
{
	struct perf_event_attr a = *attr;
	a.size = sizeof(a);
	uint64_t ids[2] = { ids_off, nids * 8 };
	memcpy(p, &a, sizeof(a));
	memcpy(p + sizeof(a), ids, sizeof(ids));
	return p + sizeof(a) + sizeof(ids);
}

/* The provisional header at the start of the file: the header (data size 0), the
 * attributes (the first, then more[]), their ids; the records follow. A failed write is
 * the writer's error, as a failed flush's. */
static int write_provisional(struct perf_writer *w, const uint64_t *ids, size_t nids,
			     const struct perf_writer_event *more, size_t nmore)
{
	size_t attr_size = sizeof(struct perf_event_attr) + 16, nall = nids;
	for (size_t i = 0; i < nmore; i++)
		nall += more[i].nids;
	size_t size = HEADER_SIZE + (1 + nmore) * attr_size + nall * 8;
	uint8_t *buf = malloc(size);
	if (!buf)
		return err_set(-ENOMEM, "out of memory");
	uint64_t hdr[13], ids_off = HEADER_SIZE + (1 + nmore) * attr_size, features[4] = { 0 };
	put_header(hdr, HEADER_SIZE, 1 + nmore, size, 0, features);
	memcpy(buf, hdr, sizeof(hdr));
	uint8_t *p = put_attr(buf + HEADER_SIZE, &w->attr, ids_off, nids);
	uint8_t *q = buf + ids_off;
	if (nids)
		memcpy(q, ids, nids * 8);
	q += nids * 8;
	for (size_t i = 0; i < nmore; i++) {
		p = put_attr(p, more[i].attr, (uint64_t)(q - buf), more[i].nids);
		if (more[i].nids)
			memcpy(q, more[i].ids, more[i].nids * 8);
		q += more[i].nids * 8;
	}
	size_t done;
	int e = write_all(w->fd, buf, size, &done);
	free(buf);
	w->begun = true;
	w->data_off = size;
	if (e) { /* the buffered records are dropped, as a failed flush's */
		w->nbuf = 0;
		w->samples = 0;
		w->error = e;
	}
	w->off = size + w->nbuf;
	return e ? err_set(-e, "%s: %s", path_of(w), strerror(e)) : 0;
}

int perf_writer_begin(struct perf_writer *w, const uint64_t *ids, size_t nids,
		      const struct perf_writer_event *more, size_t nmore)
{
	if (w->begun || w->error)
		return w->error ? -w->error : 0;
	int r = write_provisional(w, ids, nids, more, nmore);
	return r ? r : w->nbuf ? flush(w) : 0;
}

int perf_writer_add(struct perf_writer *w, const void *rec, size_t size)
{
	if (w->error)
		return -w->error;
	if (w->nbuf + size > BUF_SIZE) {
		int r = flush(w);
		if (r)
			return r;
	}
	memcpy(w->buf + w->nbuf, rec, size);
	w->nbuf += size;
	w->off += size;
	w->samples += ((const struct perf_event_header *)rec)->type == PERF_RECORD_SAMPLE;
	w->bytes += size;
	return 0;
}

int perf_writer_flush(struct perf_writer *w)
{
	if (w->error)
		return -w->error;
	return w->begun && w->nbuf ? flush(w) : 0;
}

int perf_writer_error(const struct perf_writer *w) { return w->error; }

uint64_t perf_writer_samples(const struct perf_writer *w) { return w->samples; }

uint64_t perf_writer_bytes(const struct perf_writer *w) { return w->bytes; }

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

int perf_writer_add_attr(struct perf_writer *w, const struct perf_event_attr *attr,
			 const uint64_t *ids, size_t nids)
{
	struct more_attr *m = realloc(w->more, (w->nmore + 1) * sizeof(*m));
	if (!m)
		return err_set(-ENOMEM, "out of memory");
	w->more = m;
	m += w->nmore;
	m->attr = *attr;
	m->attr.size = sizeof(m->attr);
	m->nids = nids;
	if (!(m->ids = malloc(nids ? nids * 8 : 1)))
		return err_set(-ENOMEM, "out of memory");
	memcpy(m->ids, ids, nids * 8);
	w->nmore++;
	return 0;
}

static void free_writer(struct perf_writer *w)
{
	for (size_t i = 0; i < w->nmore; i++)
		free(w->more[i].ids);
	free(w->more);
	if (w->reserve >= 0)
		close(w->reserve);
	free(w->buf);
	free(w->bids);
	free(w->pmus);
	free(w->tracing);
	free(w);
}

int perf_writer_set_tracing_data(struct perf_writer *w, const void *data, size_t len)
{
	free(w->tracing);
	if (!(w->tracing = malloc(len ? len : 1)))
		return err_set(-ENOMEM, "out of memory");
	memcpy(w->tracing, data, len);
	w->ntracing = len;
	return 0;
}

void perf_writer_abort(struct perf_writer *w)
{
	if (!w)
		return;
	afile_abort(w->out); /* a file without its header would only mislead */
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

/* This machine's PMUs as perf's PMU_MAPPINGS feature lists them (perf.h), all of /sys's as
 * perf record writes them: the types of events of dynamic PMUs (uprobe) differ between
 * machines and boots, and a report tells such events by these names, never by the /sys of
 * the machine it runs on. Sorted by name. Without /sys, no feature. */
static int read_pmus(struct perf_writer *w)
{
	struct dirent **ents;
	int n = scandir("/sys/bus/event_source/devices", &ents, NULL, alphasort);
	if (n < 0)
		return 0;
	/* the most an entry takes: its type, and its name as a header string, whose NAME_MAX
	 * bytes and NUL are a multiple of the 64 bytes strings are padded to */
	w->pmus = malloc(4 + (size_t)n * (4 + 4 + NAME_MAX + 1));
	uint32_t count = 0;
	size_t at = 4;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		int type = w->pmus && name[0] != '.' ? perf_pmu_type(name) : -1;
		if (type >= 0) {
			memcpy(w->pmus + at, &(uint32_t){ (uint32_t)type }, 4);
			at += 4 + header_string(w->pmus + at + 4, name);
			count++;
		}
		free(ents[i]);
	}
	free(ents);
	if (!w->pmus)
		return err_set(-ENOMEM, "out of memory");
	memcpy(w->pmus, &count, 4);
	w->npmus = count ? at : 0;
	return 0;
}

/* Trailer bytes (features, ids, attribute): written at once, any failure final. */
static int put(struct perf_writer *w, const void *p, size_t n)
{
	size_t done;
	int e = write_all(w->fd, p, n, &done);
	if (e)
		return err_set(-e, "%s: write: %s", path_of(w), strerror(e));
	w->off += n;
	return 0;
}

static int put_u64(struct perf_writer *w, uint64_t v) { return put(w, &v, 8); }

/* After a failed write: the room held back is given to the trailer, which goes right
 * after the last whole record (a record cut in two is dropped, as is a trailer cut short). */
static int give_back_room(struct perf_writer *w)
{
	if (w->reserve >= 0)
		close(w->reserve);
	w->reserve = -1;
	if (ftruncate(w->fd, (off_t)w->off) || lseek(w->fd, (off_t)w->off, SEEK_SET) < 0)
		return err_set(-errno, "%s: %s", path_of(w), strerror(errno));
	return 0;
}

/* The feature table, then the features' contents, the ids and the attribute. */
static int put_trailer(struct perf_writer *w, const uint64_t *ids, size_t nids,
		       uint64_t features[4], uint64_t *attr_off)
{
	/* Features: build-ids, and the machine's description. perf needs the architecture to
	 * pick its DWARF unwinder for the file; without it perf script shows only the ip. */
	struct utsname u;
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	uint8_t osrel[4 + 128], arch[4 + 128], cpus[8], why[4 + 128];
	size_t nosrel = header_string(osrel, u.release), narch = header_string(arch, u.machine);
	size_t nwhy = w->error ? header_string(why, strerror(w->error)) : 0;
	long conf = sysconf(_SC_NPROCESSORS_CONF), onln = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t c[2] = { (uint32_t)(conf > 0 ? conf : 1), (uint32_t)(onln > 0 ? onln : 1) };
	memcpy(cpus, c, 8);
	/* The samples' clock, when it is not the default one: perf shows it (perf report
	 * --header-only) and converts times to the wall clock with it (perf script -F tod). */
	uint64_t res = w->clock_res_ns;
	struct { uint32_t version, clockid; uint64_t tod_ns, clock_ns; } clock_data = {
		1, (uint32_t)w->attr.clockid, w->tod_ns, w->clock_ns };
	bool clock = w->attr.use_clockid;
	/* In the order of their bits, as readers take the table. */
	struct { const void *data; size_t size; int bit; bool on; } all[] = {
		{ w->tracing, w->ntracing, PERF_FEAT_TRACING_DATA, w->tracing != NULL },
		{ w->bids, w->nbids, PERF_FEAT_BUILD_ID, true },
		{ osrel, nosrel, PERF_FEAT_OSRELEASE, true },
		{ arch, narch, PERF_FEAT_ARCH, true },
		{ cpus, 8, PERF_FEAT_NRCPUS, true },
		{ w->pmus, w->npmus, PERF_FEAT_PMU_MAPPINGS, w->npmus != 0 },
		{ &res, 8, PERF_FEAT_CLOCKID, clock },
		{ &clock_data, sizeof(clock_data), PERF_FEAT_CLOCK_DATA, clock },
		{ why, nwhy, PERF_FEAT_TALLY_STOPPED, w->error != 0 },
	};
	size_t nall = sizeof(all) / sizeof(all[0]), nfeat = 0;
	for (size_t i = 0; i < nall; i++)
		nfeat += all[i].on;
	uint64_t at = w->off + 16 * nfeat;
	int r = 0;
	for (size_t i = 0; i < nall && !r; i++) {
		if (!all[i].on)
			continue;
		r = put_u64(w, at);
		if (!r)
			r = put_u64(w, all[i].size);
		at += all[i].size;
		features[all[i].bit / 64] |= 1ull << all[i].bit % 64;
	}
	for (size_t i = 0; i < nall && !r; i++)
		if (all[i].on)
			r = put(w, all[i].data, all[i].size);
	uint64_t ids_off = w->off;
	if (!r) r = put(w, ids, nids * 8);
	for (size_t i = 0; i < w->nmore && !r; i++)
		r = put(w, w->more[i].ids, w->more[i].nids * 8);
	*attr_off = w->off;
	uint8_t a[sizeof(struct perf_event_attr) + 16];
	put_attr(a, &w->attr, ids_off, nids);
	if (!r) r = put(w, a, sizeof(a));
	ids_off += nids * 8;
	for (size_t i = 0; i < w->nmore && !r; i++) {
		put_attr(a, &w->more[i].attr, ids_off, w->more[i].nids);
		r = put(w, a, sizeof(a));
		ids_off += w->more[i].nids * 8;
	}
	return r;
}

int perf_writer_close(struct perf_writer *w, const uint64_t *ids, size_t nids)
{
	int r = (w->nbuf || !w->begun) && !w->error ? flush(w) : 0;
	if (w->error) {
		err_clear(); /* the session reported it; the file is still finished */
		r = give_back_room(w);
	}
	uint64_t data_end = w->off, features[4] = { 0 }, attr_off = 0;
	if (!r)
		r = put_trailer(w, ids, nids, features, &attr_off);
	if (r && w->reserve >= 0) { /* the disk filled under the trailer: use the room held */
		err_clear();
		w->off = data_end;
		memset(features, 0, sizeof(features));
		r = give_back_room(w);
		if (!r)
			r = put_trailer(w, ids, nids, features, &attr_off);
	}
	uint64_t hdr[13];
	put_header(hdr, attr_off, 1 + w->nmore, w->data_off, data_end - w->data_off, features);
	if (!r && pwrite(w->fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		r = err_set(-errno, "%s: write: %s", path_of(w), strerror(errno));
	if (!r)
		r = afile_commit(w->out);
	else
		afile_abort(w->out);
	free_writer(w);
	return r;
}
