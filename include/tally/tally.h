/*
 * libtally: the public API. Functions that can fail return 0 or a negative errno-style
 * code; tally_errmsg() then describes the failure for this thread, naming the file.
 * Structs that may grow carry their size, so that a program built against this header
 * keeps working with a later libtally.so.0 (rules below, at each struct; docs/library.md).
 * The shared library exports the functions marked TALLY_API and nothing else.
 */
#ifndef TALLY_TALLY_H
#define TALLY_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TALLY_VERSION "0.1.0"
#define TALLY_VERSION_MAJOR 0
#define TALLY_VERSION_MINOR 1

#if defined(__GNUC__)
#define TALLY_API __attribute__((visibility("default")))
#else
#define TALLY_API
#endif

/* The message of the last failure on this thread. */
TALLY_API const char *tally_errmsg(void);

/* The version of the libtally running, which may be later than the TALLY_VERSION a
 * program was built with: "MAJOR.MINOR.PATCH", and its first two numbers. */
TALLY_API const char *tally_version(void);
TALLY_API uint32_t tally_version_major(void);
TALLY_API uint32_t tally_version_minor(void);

/* Declares name, a struct type of options, with sz set, the fields given set and every
 * other byte zero, padding included (an initializer alone may leave padding as it was,
 * and the library refuses a non-zero byte past the fields it knows):
 *   TALLY_OPTS(tally_symbolizer_opts, o, .debug_dir = "/opt/debug");  */
#define TALLY_OPTS(type, name, ...)                                                  \
	struct type name = ({                                                        \
		memset(&name, 0, sizeof(struct type));                               \
		(struct type){ .sz = sizeof(struct type), __VA_ARGS__ };             \
	})

/* ---- symbolization ---- */

struct tally_symbolizer;

/* Options, libbpf style: declare them with TALLY_OPTS (or clear the struct with memset and
 * set .sz = sizeof(struct tally_symbolizer_opts)) and leave what you do not use zero. A
 * later version only appends fields, after the last one (into the tail padding too). The
 * library reads the struct by sz:
 *   - sz smaller than sz itself (0 included): -EINVAL;
 *   - sz short of a field (a program built against an older header): it reads as zero;
 *   - sz past the last field the library knows (a newer header, or this one's padding):
 *     accepted when every byte past that field is zero, else -EINVAL: a newer option is
 *     refused, not ignored. */
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
	 * ~/.cache/tally/debug; TALLY_CACHE=off turns it off. It also lets a debug file on no
	 * disk be asked of the debuginfod servers in DEBUGINFOD_URLS (none when unset, or
	 * when TALLY_DEBUGINFOD=off), kept in $TALLY_CACHE/debuginfod: docs/symbolize.md. */
	bool debug_cache;
};

/* One frame of an address. A later version only appends fields, past this version's
 * sizeof; the library is told the size of the caller's frames (tally_symbolize does it)
 * and writes exactly that many bytes per frame: the fields both know, zero in fields it
 * does not know, nothing past the caller's frames. */
struct tally_frame {
	const char *function; /* NULL when unknown */
	const char *file;     /* directory and name as stored in DWARF; NULL when unknown */
	uint32_t line;        /* 0 when unknown */
	uint32_t column;      /* 0 when unknown */
	uint32_t discriminator; /* DWARF line-table discriminator of the innermost frame */
	bool inlined;         /* an inlined call: the next frame is its caller */
	uint64_t sym_start;   /* start address of the function's symbol, 0 if none */
	/* The outermost frame of an address no symbol and no DWARF name (function NULL, as
	 * llvm-symbolizer has it) but that the unwind tables (CFI: an FDE of .eh_frame or
	 * .debug_frame) place in a function: from_cfi is true and [sym_start, sym_end) is that
	 * function's range. tally's own outputs name it MODULE!fn_START (docs/symbolize.md). */
	bool from_cfi;
	uint64_t sym_end;     /* end of the range when from_cfi, else 0 */
};

/* Opens an ELF file (executable, shared object, relocatable object or debug file) and
 * indexes it. opts may be NULL (all defaults). */
TALLY_API int tally_symbolizer_open(const char *path, const struct tally_symbolizer_opts *opts,
				    struct tally_symbolizer **out);
/* Frames for a virtual address of the file, innermost inline frame first, in frames of
 * frame_sz bytes each (a struct tally_frame of some version; -EINVAL when smaller than
 * its first field). Writes at most max frames and returns how many there are (which may
 * exceed max), or a negative code. The strings live as long as the symbolizer. Safe to
 * call from several threads at once. */
TALLY_API int tally_symbolize_sized(struct tally_symbolizer *s, uint64_t addr,
				    struct tally_frame *frames, size_t max, size_t frame_sz);
/* tally_symbolize_sized with the size of struct tally_frame as this header declares it. */
static inline int tally_symbolize(struct tally_symbolizer *s, uint64_t addr,
				  struct tally_frame *frames, size_t max)
{
	return tally_symbolize_sized(s, addr, frames, max, sizeof(struct tally_frame));
}
TALLY_API void tally_symbolizer_close(struct tally_symbolizer *s);

#ifdef __cplusplus
}
#endif

#endif
