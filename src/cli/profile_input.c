/*
 * Profile input for commands: the whole file is read into memory and the first reader whose
 * sniffer accepts the bytes parses it. The table is the one place a new input format is
 * added; folded stacks come last, their sniffer is the loosest. perf.data is the exception:
 * not read whole (it holds 32 KiB per sample, of which unwinding reads the top; from stdin
 * it is copied to a temporary file first), and unwound by src/record.
 */
#include "cli/profile_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/err.h"
#include "base/file.h"
#include "base/vec.h"
#include "cli/cli.h"
#include "perf/keep.h"
#include "profile/profile.h"
#include "profile/read.h"
#include "replay/replay.h"
#include "report/pprof_segments.h"

struct input_format {
	const char *name;
	bool (*sniff)(const void *data, size_t size);
	int (*read)(const char *name, const void *data, size_t size, struct prof **out);
};

static bool sniff_perf_data(const void *data, size_t size)
{
	return size >= 8 && !memcmp(data, "PERFILE2", 8);
}

int cli_unwind_option(const struct cli_cmd *cmd, const char *method, enum unw_method *out)
{
	static const char *const names[] = { [UNW_AUTO] = "auto", [UNW_CFI] = "cfi", [UNW_FP] = "fp" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(method, names[i])) {
			*out = (enum unw_method)i;
			return 0;
		}
	return cli_usage(cmd, "--unwind: expected auto, cfi or fp: %s", method);
}

/* rc: what opening d returned. */
static int profile_of_perf_data(struct perf_data *d, int rc, enum unw_method unwind,
				struct prof **out)
{
	if (!rc)
		rc = replay_profile(d, unwind, out);
	perf_data_close(d);
	return rc;
}

/* perf.data in memory: from stdin, where no temporary file could hold it. */
static int read_perf_data(const char *name, const void *data, size_t size,
			  enum unw_method unwind, struct prof **out)
{
	struct perf_data *d = NULL;
	int rc = perf_data_open_mem(name, data, size, &d);
	return profile_of_perf_data(d, rc, unwind, out);
}

/* A perf.data file is not read whole: src/perf reads each record, and of a sample the part
 * unwinding needs, as it comes to it, so a large recording never sits in memory. */
static bool is_perf_data_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	bool yes = f && fread(magic, 1, 8, f) == 8 && sniff_perf_data(magic, 8);
	if (f)
		fclose(f);
	return yes;
}

static const struct input_format formats[] = {
	{ "pprof", prof_sniff_pprof, rep_read_pprof },
	{ "folded", prof_sniff_folded, prof_read_folded },
};

/* The whole of f, after the n bytes of head already read from it. */
static int slurp(FILE *f, const char *path, const uint8_t *head, size_t n, uint8_t **data,
		 size_t *size)
{
	VEC(uint8_t) buf = { 0 };
	bool room = vec_reserve(&buf, 1 << 16);
	if (room && n)
		memcpy(buf.v, head, buf.n = n);
	while (room) {
		buf.n += fread(buf.v + buf.n, 1, buf.cap - buf.n, f);
		if (buf.n < buf.cap)
			break;
		room = vec_reserve(&buf, buf.cap); /* doubles it */
	}
	if (!room) {
		vec_free(&buf);
		return err_set(-ENOMEM, "%s: out of memory reading the file", path);
	}
	if (ferror(f)) {
		vec_free(&buf);
		return err_set(-EIO, "%s: read error: %s", path, strerror(errno));
	}
	*data = buf.v;
	*size = buf.n;
	return 0;
}

/* perf.data on stdin (perf record -o - | tally report -) is spooled into an unlinked
 * temporary file and read like any file: read whole, a long recording would sit in
 * memory, 32 KiB a sample. head holds the n bytes already read. */
static int spool_perf_data(FILE *in, const uint8_t *head, size_t n, enum unw_method unwind,
			   struct prof **out)
{
	const char *dir = getenv("TMPDIR");
	int fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) { /* a file system without O_TMPFILE: read it whole after all */
		uint8_t *data;
		size_t size;
		int rc = slurp(in, "-", head, n, &data, &size);
		if (rc)
			return rc;
		rc = read_perf_data("-", data, size, unwind, out);
		free(data);
		return rc;
	}
	static uint8_t buf[1 << 16];
	bool ok = write(fd, head, n) == (ssize_t)n;
	for (size_t k; ok && (k = fread(buf, 1, sizeof(buf), in)) > 0;)
		ok = write(fd, buf, k) == (ssize_t)k;
	if (!ok || ferror(in)) {
		int e = errno;
		close(fd);
		return err_set(-EIO, "-: copying perf.data from stdin: %s", strerror(e));
	}
	struct perf_data *d = NULL;
	int rc = perf_data_open_fd("-", fd, &d);
	return profile_of_perf_data(d, rc, unwind, out);
}

/* A recording of path that tally was killed while writing lies beside it, as the hidden
 * temporary it never renamed (perf/data_write.c: readable to its last whole record), later
 * than any file at path. When path is missing that is most likely what the user wants:
 * the error names it; when path is older, a note does. */
static int check_leftover(const char *path)
{
	char *left;
	if (afile_leftover(path, &left))
		return 0;
	int rc = 0;
	/* another output's temporary (an export's) holds no recording */
	if (is_perf_data_file(left)) {
		if (access(path, F_OK) && errno == ENOENT)
			rc = err_set(-ENOENT, "%s: no such file, but tally was killed while "
					      "recording to it: what it wrote is in %s",
				     path, left);
		else
			fprintf(stderr, "tally: note: %s is a later recording to %s, which tally "
					"was killed before finishing\n", left, path);
	}
	free(left);
	return rc;
}

static int read_profile(const char *path, enum unw_method unwind, struct prof **out)
{
	bool is_stdin = !strcmp(path, "-");
	int leftover = is_stdin ? 0 : check_leftover(path);
	if (leftover)
		return leftover;
	if (!is_stdin && is_perf_data_file(path)) {
		struct perf_data *d = NULL;
		int rc = perf_data_open(path, &d);
		return profile_of_perf_data(d, rc, unwind, out);
	}
	uint8_t magic[8];
	size_t nmagic = 0;
	if (is_stdin) {
		nmagic = fread(magic, 1, sizeof(magic), stdin);
		if (sniff_perf_data(magic, nmagic))
			return spool_perf_data(stdin, magic, nmagic, unwind, out);
	}
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	char newest[4096];
	if (!f && errno == ENOENT && perf_series_newest(path, newest, sizeof(newest)))
		return err_set(-ENOENT, "%s: no such file, but tally record --rotate wrote a series "
				      "of files beside it, the newest %s (`ls %s.*Z` lists them)",
			       path, newest, path);
	if (!f)
		return err_set(-errno, "%s: %s", path, strerror(errno));
	uint8_t *data = NULL;
	size_t size = 0;
	int rc = slurp(f, path, magic, nmagic, &data, &size);
	if (!is_stdin)
		fclose(f);
	if (rc)
		return rc;
	size_t i = 0, n = sizeof(formats) / sizeof(formats[0]);
	while (size && i < n && !formats[i].sniff(data, size))
		i++;
	if (!size)
		rc = err_set(-EINVAL, "%s: empty file", path);
	else if (i == n)
		rc = err_set(-EINVAL, "%s: not a profile (pprof, folded stacks or perf.data)", path);
	else
		rc = formats[i].read(path, data, size, out);
	free(data);
	return rc;
}

/* stdout is flushed, not closed: the process's other output may follow. */
static int write_stdout(const char *source, int (*write)(FILE *f, void *ctx), void *ctx)
{
	int e;
	FILE *out = fflush(stdout) ? NULL : file_stream_keeping_errno(STDOUT_FILENO, &e);
	if (!out)
		return err_set(-EIO, "stdout: write error");
	int err = write(out, ctx);
	if (fflush(out) || ferror(out)) {
		cli_end_if_reader_gone(out, STDOUT_FILENO);
		err = e ? err_set(-e, "stdout: write error: %s", strerror(e))
			: err_set(-EIO, "stdout: write error");
	} else if (err) {
		err_prefix(err, "%s", source);
	}
	fclose(out);
	return err;
}

int cli_write_output(const char *path, const char *source, int (*write)(FILE *f, void *ctx),
		     void *ctx)
{
	if (!path || !strcmp(path, "-"))
		return write_stdout(source, write, ctx);
	struct afile *a;
	int err = afile_open(path, 0, &a);
	if (err)
		return err;
	FILE *f = afile_stream(a);
	err = f ? write(f, ctx) : -EIO;
	if (f && afile_is_direct(a)) { /* -o /dev/stdout into | head */
		fflush(f);
		cli_end_if_reader_gone(f, afile_fd(a));
	}
	if (!err || (f && ferror(f))) /* a write error is the output's: commit says why */
		return afile_commit(a);
	if (f)
		err_prefix(err, "%s", source);
	afile_abort(a);
	return err;
}

static int replace(struct prof **p, int rc, struct prof *np)
{
	if (rc)
		return rc;
	prof_free(*p);
	*p = np;
	return 0;
}

static int filter_regex(struct prof **p, const char *re, bool focus)
{
	struct prof_regex *r;
	struct prof *np = NULL;
	int rc = prof_regex_compile(re, &r);
	if (rc)
		return rc;
	rc = focus ? prof_focus(*p, prof_regex_match_frame, r, &np)
		   : prof_hide(*p, prof_regex_match_frame, r, &np);
	prof_regex_free(r);
	return replace(p, rc, np);
}

static int filter_profile(struct prof **p, const struct cli_filters *f)
{
	int rc = 0;
	struct prof *np = NULL;
	if (f->gil) {
		rc = prof_gil_profile(*p, (enum prof_gil)f->gil, &np);
		rc = replace(p, rc, np);
	}
	if (!rc && f->focus)
		rc = filter_regex(p, f->focus, true);
	if (!rc && f->hide)
		rc = filter_regex(p, f->hide, false);
	if (!rc && f->fold) {
		rc = prof_fold_recursion(*p, &np);
		rc = replace(p, rc, np);
	}
	if (!rc && prof_is_empty(*p))
		rc = err_set(-EINVAL, "no samples left after filtering");
	return rc;
}

/* A profile with no samples before any filter: said with the path, and with why the
 * recording ended early where its figures say (a recorder that never finished its file, a
 * full disk). */
static int no_samples(const struct prof *p, const char *path)
{
	const char *early = "recording ended early: ", *name;
	int64_t value;
	for (size_t i = 0; i < prof_ncounters(p); i++) {
		prof_counter_at(p, i, &name, &value);
		if (!strncmp(name, early, strlen(early)))
			return err_set(-EINVAL, "%s: no samples (%s)", path, name + strlen(early));
	}
	return err_set(-EINVAL, "%s: no samples", path);
}

static int pick_metric(const struct prof *p, const char *path, const char *type)
{
	if (!type)
		return -1;
	int m = prof_find_metric(p, type, NULL);
	if (m >= 0)
		return m;
	char list[512] = "";
	size_t used = 0;
	for (size_t i = 0; i < prof_nmetrics(p) && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 prof_str(p, prof_metric(p, i)->type));
	return err_set(-ENOENT, "%s: no metric '%s' (it has: %s)", path, type, list);
}

int cli_load_profile(const char *path, enum unw_method unwind, const struct cli_filters *filters,
		     const char *metric, struct prof **out, int *m)
{
	struct prof *p;
	int rc = read_profile(path, unwind, &p);
	if (rc)
		return rc;
	if (filters && prof_is_empty(p))
		rc = no_samples(p, path);
	else if (filters)
		rc = filter_profile(&p, filters);
	*m = rc ? -1 : pick_metric(p, path, metric);
	if (*m < -1)
		rc = *m;
	if (rc) {
		prof_free(p);
		return rc;
	}
	*out = p;
	return 0;
}
