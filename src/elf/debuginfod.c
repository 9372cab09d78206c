/*
 * Separate debug files from the debuginfod servers named in $DEBUGINFOD_URLS, through
 * libdebuginfod. The library pulls in libcurl and its TLS stack, so it is loaded with
 * dlopen when a lookup first needs it, as libdw does: a command that finds everything on
 * disk does not pay for it, and tally runs where it is not installed. A server that does
 * not answer costs at most WAIT_BUDGET_NS of waiting per process, and the first failure
 * ends the asking. Process-wide state (the library, one client, the wait spent, the
 * build-ids no server has), under one lock.
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "base/hex.h"
#include "base/vec.h"
#include "elf/elf.h"

/* The time a command may spend waiting on servers that send nothing, all lookups
 * together: a few seconds, where libdebuginfod's own DEBUGINFOD_TIMEOUT is 90 s per
 * lookup. Time in which bytes arrive does not count: a large download may take longer. */
#define WAIT_BUDGET_NS (5 * 1000000000LL)
#define MAX_ID 64

struct api {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
	__typeof__(debuginfod_get_url) *get_url;
};

typedef char id_hex[2 * MAX_ID + 1];

static struct {
	pthread_mutex_t lock;
	struct api api;
	bool given_up; /* after the first failure */
	debuginfod_client *client;
	/* The progress callback's clock: when it last ran, the bytes it saw then, and the
	 * waiting spent so far. */
	long long last_ns, waited_ns;
	long last_bytes;
	bool timed_out;
	VEC(id_hex) missing;
} dbg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Where downloads go: $DEBUGINFOD_CACHE_PATH when the user chose it (shared with gdb, say),
 * else $TALLY_CACHE/debuginfod, so that deleting tally's cache deletes them and
 * ~/.cache/debuginfod_client is not filled behind the user's back. NULL: tally's cache is
 * off and no other was chosen, so nothing is fetched. */
static const char *download_dir(char *buf, size_t size)
{
	const char *user = getenv("DEBUGINFOD_CACHE_PATH");
	if (user && *user)
		return user;
	const char *root = elf_cache_root();
	int n = root ? snprintf(buf, size, "%s/debuginfod", root) : -1;
	return n < 0 || (size_t)n >= size ? NULL : buf;
}

static bool wanted(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS"), *mode = getenv("TALLY_DEBUGINFOD");
	return urls && *urls && !(mode && !strcmp(mode, "off"));
}

/* An earlier download of id: libdebuginfod keeps a file as DIR/HEX/debuginfo (the path its
 * lookups return). Opening it here spares loading the library and libcurl. */
static int open_downloaded(struct elf_file *f, const char *dir, const char *hex,
			   struct elf_file **out)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s/debuginfo", dir, hex);
	if (n < 0 || (size_t)n >= sizeof(path) || access(path, R_OK))
		return -ENOENT;
	struct elf_file *d;
	if (elf_open(path, &d)) {
		err_clear();
		return -ENOENT;
	}
	const uint8_t *id;
	size_t len;
	if (elf_build_id(f, &id, &len) || !elf_build_id_is(d, id, len)) {
		elf_close(d);
		return -ENOENT;
	}
	*out = d;
	return 0;
}

/* NULL once the functions are found, else why not. */
static const char *load(void)
{
	void *h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return dlerror();
	dbg.api.begin = (__typeof__(dbg.api.begin))dlsym(h, "debuginfod_begin");
	dbg.api.find_debuginfo =
		(__typeof__(dbg.api.find_debuginfo))dlsym(h, "debuginfod_find_debuginfo");
	dbg.api.set_progressfn =
		(__typeof__(dbg.api.set_progressfn))dlsym(h, "debuginfod_set_progressfn");
	dbg.api.get_url = (__typeof__(dbg.api.get_url))dlsym(h, "debuginfod_get_url");
	bool all = dbg.api.begin && dbg.api.find_debuginfo && dbg.api.set_progressfn &&
		   dbg.api.get_url;
	return all ? NULL : "a function is missing";
}

/* Called about once a second while a lookup runs. Until a server starts sending the file,
 * bytes counts the calls and total is 0; then they are the bytes received and the file's
 * size. Time counts as waiting unless bytes of a file came in since the last call (a
 * download whose size is not known counts too). Non-zero stops the lookup. */
static int progress(debuginfod_client *c, long bytes, long total)
{
	long long t = now_ns();
	if (total <= 0 || bytes == dbg.last_bytes)
		dbg.waited_ns += t - dbg.last_ns;
	dbg.last_ns = t;
	dbg.last_bytes = bytes;
	dbg.timed_out = dbg.waited_ns > WAIT_BUDGET_NS;
	return dbg.timed_out;
}

/* The library and the client, at the first lookup: 0, or an error (and no second try). */
static int start(const char *dir)
{
	if (dbg.client)
		return 0;
	const char *why = load();
	if (why)
		return err_set(-ELIBACC, "DEBUGINFOD_URLS is set but %s cannot be loaded (%s): "
				       "no debug information is fetched",
			       DEBUGINFOD_SONAME, why);
	/* The library makes only the last folder of its cache's path, and reads the path from
	 * the environment at each lookup: it has no call for it. */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", dir);
	int err = file_mkdirs(path, 0700);
	if (err)
		return err_set(err, "debuginfod: %s: %s", dir, strerror(-err));
	if (setenv("DEBUGINFOD_CACHE_PATH", dir, 1) || !(dbg.client = dbg.api.begin()))
		return err_set(-ENOMEM, "debuginfod: cannot start a client: out of memory");
	dbg.api.set_progressfn(dbg.client, progress);
	return 0;
}

static bool is_missing(const char *hex)
{
	for (size_t i = 0; i < dbg.missing.n; i++)
		if (!strcmp(dbg.missing.v[i], hex))
			return true;
	return false;
}

static void note_missing(const char *hex)
{
	id_hex *slot = vec_push(&dbg.missing);
	if (slot)
		snprintf(*slot, sizeof(*slot), "%s", hex);
}

/* The error of a lookup that failed other than by the file not being there. */
static int lookup_error(const char *hex, int rc)
{
	const char *url = dbg.api.get_url(dbg.client);
	if (!url)
		url = getenv("DEBUGINFOD_URLS");
	if (dbg.timed_out)
		return err_set(-ETIMEDOUT,
			       "debuginfod: %s: no answer for build-id %s within %lld s; "
			       "not asking again",
			       url, hex, WAIT_BUDGET_NS / 1000000000LL);
	return err_set(rc, "debuginfod: %s: build-id %s: %s; not asking again", url, hex,
		       strerror(-rc));
}

/* Asks the servers for id, the lock held: 0 and the file, -ENOENT, or an error. */
static int fetch(struct elf_file *f, const char *dir, const char *hex, struct elf_file **out)
{
	int err = start(dir);
	if (err) {
		dbg.given_up = true;
		return err;
	}
	const uint8_t *id;
	size_t len;
	elf_build_id(f, &id, &len);
	dbg.last_ns = now_ns();
	dbg.last_bytes = 0;
	char *path = NULL;
	int fd = dbg.api.find_debuginfo(dbg.client, id, (int)len, &path);
	if (fd >= 0)
		close(fd);
	if (fd < 0 && (fd != -ENOENT || dbg.timed_out)) {
		dbg.given_up = true;
		return lookup_error(hex, fd);
	}
	err = fd < 0 ? -ENOENT : elf_open(path, out);
	free(path);
	if (err)
		note_missing(hex);
	else if (!elf_build_id_is(*out, id, len)) {
		elf_close(*out);
		note_missing(hex);
		return err_set(-EINVAL, "debuginfod: %s: the file sent for build-id %s has another "
					"build-id; ignored",
			       dbg.api.get_url(dbg.client), hex);
	}
	return err;
}

int elf_debuginfod_open(struct elf_file *f, struct elf_file **out)
{
	const uint8_t *id;
	size_t len;
	char buf[PATH_MAX];
	const char *dir;
	if (!wanted() || elf_build_id(f, &id, &len) || len < 2 || len > MAX_ID ||
	    !(dir = download_dir(buf, sizeof(buf))))
		return -ENOENT;
	id_hex hex;
	hex_encode(id, len, hex);
	if (!open_downloaded(f, dir, hex, out))
		return 0;
	pthread_mutex_lock(&dbg.lock);
	int err = dbg.given_up || is_missing(hex) ? -ENOENT : fetch(f, dir, hex, out);
	pthread_mutex_unlock(&dbg.lock);
	return err;
}
