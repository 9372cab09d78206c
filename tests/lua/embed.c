/*
 * A C program that embeds Debian's liblua5.4.so.0, for the Lua walk's live test: runs the
 * script argv[1] with the global arg = { [0] = script, argv[2], argv[3], ... }, as lua5.4
 * would.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	lua_createtable(L, argc, 0);
	for (int i = 1; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	if (luaL_dofile(L, argv[1])) {
		fprintf(stderr, "embed: %s\n", lua_tostring(L, -1));
		return 1;
	}
	lua_close(L);
	return 0;
}
