/*
 * Which Lua a file is (lua/lua.h, record/lua_interp.h): Debian's lua5.4 and
 * liblua5.4.so.0 name the release `lua5.4 -v` prints (5.4.4 here); another Lua's ident or a release past the
 * table is refused with a message naming it; names that may be Lua's; and the line rule
 * over an abslineinfo entry (ldebug.c: an instruction marked ABSLINEINFO takes its pair's
 * line, the deltas count from there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "lua/lua.h"
#include "record/lua_interp.h"

static void debians_lua_release_is_what_lua_v_says(void **state)
{
	const char *files[] = { "/usr/bin/lua5.4", "/usr/lib/x86_64-linux-gnu/liblua5.4.so.0" };
	char cmd[128], out[128] = "";
	FILE *v = popen("lua5.4 -v", "r");
	assert_non_null(v);
	assert_non_null(fgets(out, sizeof(out), v));
	pclose(v);
	unsigned want;
	assert_int_equal(sscanf(out, "Lua 5.4.%u", &want), 1);
	for (size_t i = 0; i < 2; i++) {
		unsigned release = 99;
		if (access(files[i], R_OK))
			continue;
		snprintf(cmd, sizeof(cmd), "%s", files[i]);
		assert_int_equal(rec_lua_release_of(0, cmd, &release), 0);
		assert_int_equal(release, want);
		assert_non_null(lua_layout_of(release));
	}
}

static void other_versions_are_refused_by_name(void **state)
{
	static const char v53[] = "x$LuaVersion: Lua 5.3.6  Copyright";
	static const char v549[] = "$LuaVersion: Lua 5.4.9  Copyright";
	unsigned major, minor, release;
	assert_int_equal(lua_release_in(v53, sizeof(v53), &major, &minor, &release), -ENOTSUP);
	assert_int_equal(major * 10 + minor, 53);
	assert_int_equal(lua_release_in("no ident", 8, &major, &minor, &release), -ENOENT);
	char path[] = "/tmp/tally-lua-ident-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, v549, sizeof(v549)), (ssize_t)sizeof(v549));
	close(fd);
	assert_int_equal(rec_lua_release_of(0, path, &release), -ENOTSUP);
	assert_non_null(strstr(err_msg(), "Lua 5.4.9"));
	assert_non_null(strstr(err_msg(), "native frames only"));
	err_clear();
	unlink(path);
}

static void names_that_may_be_lua(void **state)
{
	assert_true(rec_lua_interp.may_be("/usr/bin/lua5.4"));
	assert_true(rec_lua_interp.may_be("/usr/local/bin/lua"));
	assert_true(rec_lua_interp.may_be("/usr/lib/x86_64-linux-gnu/liblua5.4.so.0.0.0"));
	assert_false(rec_lua_interp.may_be("/usr/bin/luac5.4"));
	assert_false(rec_lua_interp.may_be("/usr/lib/liblua5.4.a"));
	assert_false(rec_lua_interp.may_be("/usr/bin/python3.11"));
}

static void lines_from_an_absolute_entry(void **state)
{
	/* pc 0-2 by deltas from linedefined 10; pc 3 absolute, line 200; pc 4 one more */
	const int8_t li[] = { 1, 1, 0, LUA_ABSLINEINFO, 1 };
	const int32_t abs[] = { 3, 200 };
	const int32_t want[] = { 11, 12, 12, 200, 201 };
	for (int32_t pc = 0; pc < 5; pc++)
		assert_int_equal(lua_line_of(li, 5, abs, 1, 10, pc), want[pc]);
	assert_int_equal(lua_line_of(li, 5, abs, 1, 10, 5), -1);
	assert_int_equal(lua_line_of(NULL, 0, NULL, 0, 10, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debians_lua_release_is_what_lua_v_says),
		cmocka_unit_test(other_versions_are_refused_by_name),
		cmocka_unit_test(names_that_may_be_lua),
		cmocka_unit_test(lines_from_an_absolute_entry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
