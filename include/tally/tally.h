/*
 * libtally: the public API. Functions that can fail return 0 or a negative errno-style
 * code; tally_errmsg() then describes the failure for this thread, naming the file.
 * Option structs start with their size (libbpf style) so they can grow compatibly:
 * set .sz = sizeof(struct ...) and leave unknown fields zero.
 */
#ifndef TALLY_TALLY_H
#define TALLY_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TALLY_VERSION "0.1.0"

/* The message of the last failure on this thread. */
const char *tally_errmsg(void);

/* ---- symbolization ---- */

struct tally_symbolizer;

struct tally_symbolizer_opts {
	size_t sz;
	/* Extra directory searched for separate debug files (by build-id and debuglink),
	 * before /usr/lib/debug. NULL for none. */
	const char *debug_dir;
	/* Print names as stored (no C++/Rust demangling). */
	bool no_demangle;
	/* Use tally's debug cache: separate debug files are looked up there first, and a
	 * compressed one is stored there decompressed when the symbolizer is closed. Its
	 * directory is $TALLY_CACHE/debug, else $XDG_CACHE_HOME/tally/debug, else
	 * ~/.cache/tally/debug; TALLY_CACHE=off turns it off. */
	bool debug_cache;
};

struct tally_frame {
	const char *function; /* NULL when unknown */
	const char *file;     /* directory and name as stored in DWARF; NULL when unknown */
	uint32_t line;        /* 0 when unknown */
	uint32_t column;      /* 0 when unknown */
	uint32_t discriminator; /* DWARF line-table discriminator of the innermost frame */
	bool inlined;         /* an inlined call: the next frame is its caller */
	uint64_t sym_start;   /* start address of the function's symbol, 0 if none */
};

/* Opens an ELF file (executable, shared object, relocatable object or debug file) and
 * indexes it. opts may be NULL. */
int tally_symbolizer_open(const char *path, const struct tally_symbolizer_opts *opts,
			  struct tally_symbolizer **out);
/* Frames for a virtual address of the file, innermost inline frame first. Writes at most
 * max frames and returns how many there are (which may exceed max), or a negative code.
 * The strings live as long as the symbolizer. Safe to call from several threads at once. */
int tally_symbolize(struct tally_symbolizer *s, uint64_t addr, struct tally_frame *frames,
		    size_t max);
void tally_symbolizer_close(struct tally_symbolizer *s);

#ifdef __cplusplus
}
#endif

#endif
