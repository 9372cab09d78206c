/*
 * Lua 5.4 as an interpreter read in ptrace mode (struct rec_interp_type, interp.h): a
 * file mapped executable whose name is Lua's (lua5.4, lua, liblua5.4.so.0, ...) is read
 * once for its "$LuaVersion: Lua 5.4.N" ident, which picks the layout (lua/lua.h); the
 * process's walks then run lua_walk.c. A Lua of another version or release is refused
 * with a message saying which (the session warns once and keeps native frames).
 */
#include "record/lua_interp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/file.h"
#include "record/lua_walk.h"

static bool may_be(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!strncmp(base, "liblua", 6))
		return strstr(base, ".so") != NULL;
	if (strncmp(base, "lua", 3))
		return false;
	for (const char *c = base + 3; *c; c++)
		if (!((*c >= '0' && *c <= '9') || *c == '.'))
			return false;
	return true;
}

static int walk(void *self, const struct rec_mem *mem, const struct rec_interp_thread *th,
		rec_interp_emit_fn emit, void *arg)
{
	return rec_lua_walk(self, mem, th, emit, arg);
}

static void regen(void *self)
{
	rec_lua_regen(self);
}

static void free_proc(void *self)
{
	free(self);
}

static const struct rec_interp_ops lua_ops = { walk, regen, free_proc };

/* The file's bytes: its path as mapped, else through the process's root (another
 * mount namespace). */
static int read_file(uint32_t pid, const char *path, uint8_t **buf, size_t *n)
{
	if (!file_read(path, buf, n))
		return 0;
	char alt[4096];
	snprintf(alt, sizeof(alt), "/proc/%u/root%s", pid, path);
	err_clear();
	return file_read(alt, buf, n);
}

int rec_lua_release_of(uint32_t pid, const char *path, unsigned *release)
{
	uint8_t *buf;
	size_t n;
	int r = read_file(pid, path, &buf, &n);
	if (r)
		return r;
	unsigned major = 0, minor = 0;
	r = lua_release_in(buf, n, &major, &minor, release);
	free(buf);
	if (r == -ENOENT)
		return 1;
	if (r == -ENOTSUP)
		return err_set(r, "%s: Lua %u.%u: only Lua 5.4's frames are read (native frames "
			       "only)", path, major, minor);
	if (!lua_layout_of(*release))
		return err_set(-ENOTSUP, "%s: Lua 5.4.%u: a release whose layout tally does not "
			       "know (5.4.0-5.4.8; native frames only)", path, *release);
	return 0;
}

static int open_proc(uint32_t pid, const char *path, uint64_t start, uint64_t pgoff,
		     struct rec_interp_proc *out)
{
	unsigned release;
	int r = rec_lua_release_of(pid, path, &release);
	if (r)
		return r;
	struct rec_lua_proc *p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(-ENOMEM, "out of memory");
	p->lay = lua_layout_of(release);
	p->pid = pid;
	*out = (struct rec_interp_proc){ &lua_ops, p };
	return 0;
}

const struct rec_interp_type rec_lua_interp = { "Lua", may_be, open_proc };
