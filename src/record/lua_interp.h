/*
 * Lua 5.4 among the interpreters ptrace mode reads (record/interp.h): Debian's lua5.4,
 * liblua5.4.so.0 and any file named like them that carries Lua 5.4's ident.
 */
#ifndef TALLY_RECORD_LUA_INTERP_H
#define TALLY_RECORD_LUA_INTERP_H

#include <stdint.h>

#include "record/interp.h"

extern const struct rec_interp_type rec_lua_interp;

/* Which 5.4 release the file at path (mapped by process pid) is: 0 with *release set; 1
 * when it holds no Lua ident; a negative code with the message set when it is another Lua
 * or a release without a layout, or cannot be read. */
int rec_lua_release_of(uint32_t pid, const char *path, unsigned *release);

#endif
