/*
 * ELF files: header, sections, segments, symbols, notes, address translation, separate
 * debug files. A file is mapped read-only; section contents are returned in place, or
 * decompressed (SHF_COMPRESSED zlib/zstd, legacy .zdebug_*) and, in relocatable objects,
 * with relocations applied to .debug_* sections. Both are done once per section and cached:
 * elf_section_data() may run on several threads at once for different sections, not for
 * the same one. Everything else only reads.
 *
 * Ownership: struct elf_file owns its mapping, its arena (names, tables) and the buffers of
 * decompressed sections. elf_close() frees all of it.
 */
#ifndef TALLY_ELF_H
#define TALLY_ELF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

/* e_machine values beyond what every <elf.h> has. */
#define ELF_EM_BPF 247
#define ELF_EM_SBPF 263

struct elf_buf;
struct elf_stream;

struct elf_section {
	const char *name; /* as in the file: ".zdebug_info" stays so */
	uint32_t index;
	uint32_t type;
	uint64_t flags;
	uint64_t addr;
	uint64_t offset;
	uint64_t size; /* in the file (compressed size for compressed sections) */
	uint32_t link;
	uint32_t info;
	uint64_t addralign;
	uint64_t entsize;
	/* Filled by elf_section_data() on first use: */
	const uint8_t *data;
	size_t data_size;
	bool loaded;
	struct elf_stream *stream; /* a compressed section inflated only in part so far */
};

struct elf_segment {
	uint32_t type;
	uint32_t flags;
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t memsz;
	uint64_t align;
};

struct elf_symbol {
	const char *name;
	uint64_t addr;
	uint64_t size;
	uint8_t type; /* STT_* */
	uint8_t bind; /* STB_* */
	uint16_t shndx;
	bool dynamic; /* from .dynsym */
	const char *file; /* for a local symbol, the STT_FILE symbol before it, or NULL */
	uint32_t order;   /* position in the file's tables, .symtab first */
};

struct elf_note {
	uint32_t type;
	const char *name;   /* owner, NUL-terminated inside the file */
	const uint8_t *desc;
	uint32_t desc_size;
	uint64_t addr;      /* virtual address of desc (0 in ET_REL), for stapsdt */
	uint64_t offset;    /* file offset of desc */
};

struct elf_file {
	const char *path;
	const uint8_t *map;
	size_t size;
	bool owns_map;
	uint64_t dev, ino; /* of the file mapped (elf_open), for elf_reopen() */
	bool is64;
	bool big_endian;
	uint16_t type;    /* ET_* */
	uint16_t machine; /* EM_* */
	uint64_t entry;
	uint32_t flags;   /* e_flags (sBPF keeps its version here) */
	struct elf_section *sections;
	size_t nsections;
	struct elf_segment *segments;
	size_t nsegments;
	struct arena arena;
	struct elf_buf *bufs; /* section buffers made by decompression or relocation */
	size_t nbufs, capbufs;
	pthread_mutex_t bufs_lock; /* sections may be loaded on several threads at once */
	struct elf_file *minidebug; /* elf_attach_minidebuginfo()'s file, or NULL: owned */
};

/* Maps and parses the file. Errors name the path and the offset of what is wrong. */
int elf_open(const char *path, struct elf_file **out);
/* Parses an ELF image held in memory, which must outlive the result (fuzzing, tests). */
int elf_open_mem(const char *name, const void *data, size_t size, struct elf_file **out);
void elf_close(struct elf_file *f);

/* The first section of that name; ".debug_X" also finds a legacy ".zdebug_X". */
struct elf_section *elf_section_by_name(struct elf_file *f, const char *name);
/* Section contents, decompressed and (ET_REL .debug_*) relocated. SHT_NOBITS is empty. */
int elf_section_data(struct elf_file *f, struct elf_section *s, const uint8_t **data,
		     size_t *size);
/* The front of the section's contents, at least its first want bytes (or all of them):
 * a large compressed section is inflated only as far as asked, and later calls (and
 * elf_section_data()) go on from there. *avail bytes of *data are valid, out of *total.
 * Other sections come whole. */
int elf_section_prefix(struct elf_file *f, struct elf_section *s, size_t want,
		       const uint8_t **data, size_t *avail, size_t *total);
/* Where section s's bytes lie in the file, when they are read as they are stored there
 * (neither compressed nor to be relocated, nor NOBITS): true and *off, else false. */
bool elf_section_stored_at(const struct elf_file *f, const struct elf_section *s,
			   uint64_t *off);
/* The file f maps, opened again, for reading small pieces of it with pread: through the
 * mapping each piece far from the last costs a page fault, and on a virtual machine a
 * fault costs as much as ten such reads. A descriptor for the caller to close, or -1 when
 * f maps no file (elf_open_mem) or its path now names another file. */
int elf_reopen(const struct elf_file *f);
/* Same, by name: -ENOENT (no message set) when the file has no such section. */
int elf_section_data_by_name(struct elf_file *f, const char *name, const uint8_t **data,
			     size_t *size);

/* MiniDebugInfo (minidebuginfo.c): when f has no .symtab, opens the ELF file that f's
 * .gnu_debugdata holds xz-compressed (Fedora's and others' stripped files) as
 * f->minidebug; from then on the symbol functions below read its .symtab as f's own, with
 * f's .dynsym always beside it (the inner table holds only what .dynsym lacks). Its
 * decompressed size is capped. 0; -ENOENT (no message) when f has a .symtab or no
 * .gnu_debugdata; another code, with the message set, when the section cannot be read (f
 * is left as it was). Call it before other threads read f's symbols. */
int elf_attach_minidebuginfo(struct elf_file *f);

/* Symbols: .symtab and .dynsym. */
struct elf_symtab {
	struct elf_symbol *syms; /* sorted by address, then size, then table order */
	size_t n;
	size_t n_symtab; /* how many came from .symtab (before merging) */
	void *map;       /* what syms lies in (mapped: elf_symtab_free unmaps it) */
	size_t map_len;
	void *sort_room; /* in map past syms: room for sorting them (base/radix.h), or NULL */
};
/* Function-like symbols (STT_FUNC, STT_GNU_IFUNC, and STT_NOTYPE/STT_OBJECT when
 * want_all), defined, from .symtab and .dynsym. Caller frees with
 * elf_symtab_free(). which: ELF_SYMS_BOTH, ELF_SYMS_SYMTAB_ELSE_DYNSYM. */
enum elf_syms_which { ELF_SYMS_BOTH, ELF_SYMS_SYMTAB_ELSE_DYNSYM };
int elf_symbols(struct elf_file *f, enum elf_syms_which which, bool want_all,
		struct elf_symtab *out);
/* The same in two steps: reading (and checking) the tables, in table order, then sorting
 * them; a caller can answer errors early and sort later, elsewhere. */
int elf_symbols_unsorted(struct elf_file *f, enum elf_syms_which which, bool want_all,
			 struct elf_symtab *out);
int elf_symtab_sort(struct elf_symtab *t); /* 0 or -ENOMEM */
/* The symbol of the sorted table that an upper bound search for addr lands on, found by
 * one pass over the file's tables, with no table built: of the symbols at or below addr,
 * the one sorting last by (address, size, table order); with first_alias, the first in
 * table order of those with its address and size. false when there is none. */
bool elf_symbol_at_or_below(struct elf_file *f, enum elf_syms_which which, bool want_all,
			    uint64_t addr, bool first_alias, struct elf_symbol *out);
void elf_symtab_free(struct elf_symtab *t);

/* Notes from SHT_NOTE sections (or PT_NOTE segments when there are no sections). Calls
 * fn for each; a non-zero return stops the walk and is returned. */
int elf_notes(struct elf_file *f, int (*fn)(const struct elf_note *n, void *ctx), void *ctx);
/* The GNU build-id, or -ENOENT. */
int elf_build_id(struct elf_file *f, const uint8_t **id, size_t *len);

/* Address translation through PT_LOAD segments. -ERANGE when not mapped from the file. */
int elf_vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *offset);
int elf_offset_to_vaddr(const struct elf_file *f, uint64_t offset, uint64_t *vaddr);
/* The n bytes the file holds at vaddr (its initial contents there), or NULL when they are
 * not all in the file. */
const uint8_t *elf_vaddr_bytes(const struct elf_file *f, uint64_t vaddr, uint64_t n);
/* The section holding vaddr (SHF_ALLOC), or NULL. */
struct elf_section *elf_section_at(struct elf_file *f, uint64_t vaddr);

/* Separate debug information: looks for the file's debug companion by build-id
 * (DIR/.build-id/xx/rest.debug) in the debug cache cache_dir (a copy whose build-id
 * matches), then in debug_dir, then in /usr/lib/debug; then by .gnu_debuglink (next to the
 * file, in .debug/, in DIR/ + the file's directory; the CRC must match) in debug_dir and
 * /usr/lib/debug. Either directory may be NULL. Returns 0 and the file opened in *out;
 * -ENOENT (no message) when there is none; another negative code, with the message set,
 * when the one found cannot be opened. */
int elf_open_debug_file(struct elf_file *f, const char *debug_dir, const char *cache_dir,
			struct elf_file **out);
/* Separate debug information from debuginfod (debuginfod.c): when $DEBUGINFOD_URLS names
 * servers and $TALLY_DEBUGINFOD is not "off", f's debug file by build-id, from an earlier
 * download or else from the servers, through libdebuginfod loaded on first use. Downloads
 * go to $DEBUGINFOD_CACHE_PATH, else to elf_cache_root()/debuginfod (neither: nothing is
 * asked). 0 and the file; -ENOENT (no message) when it is not to be had, and for every
 * lookup after the process's first failure; another code with the message set, once, when
 * a server fails or does not answer within a few seconds, or the library is missing. */
int elf_debuginfod_open(struct elf_file *f, struct elf_file **out);
/* DIR/.build-id/xx/rest.debug for f's build-id: 0, or -ENOENT without a build-id. */
int elf_build_id_path(struct elf_file *f, const char *dir, char *buf, size_t size);

/* perf's build-id cache (buildid_cache.c): $PERF_BUILDID_DIR, else ~/.debug (/root/.debug
 * without HOME), where tally record and perf record keep copies of what a recording mapped,
 * by build-id: a file as .build-id/xx/rest/elf, the vDSO as [vdso]/ID/vdso, the kernel's
 * symbols as [kernel.kallsyms]/ID/kallsyms (ID: the build-id in hex). */
enum elf_cached { ELF_CACHED_FILE, ELF_CACHED_VDSO, ELF_CACHED_KALLSYMS };
const char *elf_buildid_cache_dir(char *buf, size_t size);
/* The path of the copy of that kind for build-id id (len bytes): 0, -ENOENT for an empty
 * (or, for a file, one-byte) build-id, -ENAMETOOLONG. */
int elf_buildid_cache_path(enum elf_cached kind, const uint8_t *id, size_t len, char *buf,
			   size_t size);
/* Keeps size bytes as that copy, making its directories. A copy already there is left as
 * it is (the same build-id: the same bytes). Failures are silent: it is a cache. */
void elf_buildid_cache_store(enum elf_cached kind, const uint8_t *id, size_t len,
			     const void *data, size_t size);
/* The file a recording saw: path itself (kind ELF_CACHED_FILE) when it is a regular file
 * whose GNU build-id is id (any when len is 0), else the copy of that kind in the build-id
 * cache with that build-id; for ELF_CACHED_VDSO (path unused) this process's vDSO image in
 * place of path. 0 and the file, with *opened (when not NULL) the path read, malloc'd (NULL
 * for the vDSO image); -ENOENT without a message when there is no such file. */
int elf_open_build_id(enum elf_cached kind, const char *path, const uint8_t *id, size_t len,
		      struct elf_file **out, char **opened);
/* Whether f's GNU build-id is the len bytes at id. */
bool elf_build_id_is(struct elf_file *f, const uint8_t *id, size_t len);
/* This process's vDSO (getauxval(AT_SYSINFO_EHDR)) as an ELF file in memory. */
int elf_open_vdso(struct elf_file **out);
/* The running kernel's build-id (/sys/kernel/notes): its length, 0 when there is none. */
size_t elf_kernel_build_id(uint8_t id[20]);

/* The debug cache (debug_cache.c): decompressed copies of separate debug files. Its
 * directory from the environment ($TALLY_CACHE/debug, $XDG_CACHE_HOME/tally/debug or
 * ~/.cache/tally/debug), or NULL when TALLY_CACHE is "off" or empty. */
const char *elf_debug_cache_dir(void);
/* tally's cache as a whole, the folder above debug/ ($TALLY_CACHE, $XDG_CACHE_HOME/tally or
 * ~/.cache/tally), or NULL when it is off. */
const char *elf_cache_root(void);
/* Whether any section is SHF_COMPRESSED. */
bool elf_has_compressed_sections(const struct elf_file *f);
/* Writes f, a debug file with compressed sections, into the cache under dir with those
 * sections decompressed (it inflates what was not yet). 0, -ENOENT when f has no
 * build-id or nothing compressed, or another negative code (nothing is left behind). */
int elf_debug_cache_store(struct elf_file *f, const char *dir);
/* Closes f, a debug file whose DWARF was used, once its copy is stored in the cache under
 * dir (best effort, as by elf_debug_cache_store; nothing for a file without compressed
 * sections): in this process now, or, in a process that called
 * elf_debug_cache_detach_stores, in the background, by a detached process started at this
 * process's exit, which does not wait for it (debug_cache_background.c); there too in this
 * process now when TALLY_CACHE_STORE is "wait", or at exit when the process has other
 * threads then or cannot start one. Each copy is stored once per
 * process: the paths taken on and the files waiting are kept in process-wide lists. */
void elf_debug_cache_close(struct elf_file *f, const char *dir);
/* The tally command's choice: its copies wait for its exit and a detached process stores
 * them. A program using libtally starts no process behind its back: without this call every
 * copy is stored at close. */
void elf_debug_cache_detach_stores(void);

/* The .gnu_debuglink name and CRC, or -ENOENT. */
int elf_debuglink(struct elf_file *f, const char **name, uint32_t *crc);

#endif
