/*
 * capstone's instruction tables hold some 77,000 pointers, which the dynamic loader
 * relocates when the library is loaded: linked in, they added 0.7 ms to the start of every
 * tally process (a tenth of a small report), for the annotator alone. Loaded on first use
 * instead, by the soname of the major version whose header we compiled against, since
 * cs_insn's layout changes between majors.
 */
#include "report/capstone_load.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "base/err.h"

#define STR(x) #x
#define SONAME(major) "libcapstone.so." STR(major)

static struct capstone_api api;
static char load_error[256]; /* dlerror()'s text lives only until the next dl call */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen(SONAME(CS_API_MAJOR), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_error, sizeof(load_error), "%s", dlerror());
		return;
	}
	api.open = (cs_err(*)(cs_arch, cs_mode, csh *))dlsym(h, "cs_open");
	api.malloc = (cs_insn * (*)(csh)) dlsym(h, "cs_malloc");
	api.disasm_iter = (bool (*)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *))dlsym(
		h, "cs_disasm_iter");
	api.free = (void (*)(cs_insn *, size_t))dlsym(h, "cs_free");
	api.close = (cs_err(*)(csh *))dlsym(h, "cs_close");
	if (!api.open || !api.malloc || !api.disasm_iter || !api.free || !api.close)
		snprintf(load_error, sizeof(load_error), "a capstone function is missing");
}

const struct capstone_api *capstone_api(void)
{
	pthread_once(&once, load);
	if (load_error[0]) {
		err_set(-ENOTSUP, "cannot load %s: %s", SONAME(CS_API_MAJOR), load_error);
		return NULL;
	}
	return &api;
}
