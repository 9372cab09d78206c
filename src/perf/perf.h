/*
 * perf_event: the perf.data file format (reading perf's and our own recordings, writing ours
 * so `perf script` reads them), perf_event_open with messages that say what to change, ring
 * buffers, and /proc/PID/maps. The record layouts are the kernel's (linux/perf_event.h) and
 * perf's (tools/perf/util/header.h): no format of our own.
 */
#ifndef TALLY_PERF_H
#define TALLY_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Records perf itself writes into perf.data (tools/perf/lib/include/perf/event.h); the
 * HEADER_ ones only in the pipe format (perf record -o -), where they stand for the file
 * header's attribute section and features. */
enum {
	PERF_RECORD_HEADER_ATTR = 64,
	PERF_RECORD_HEADER_TRACING_DATA = 66, /* followed by that many bytes, 8-aligned */
	PERF_RECORD_HEADER_BUILD_ID = 67,
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_AUXTRACE = 71,            /* followed by its size of AUX data */
	PERF_RECORD_COMPRESSED = 81,
};

/* Feature bits of the perf.data header (tools/perf/util/header.h). */
enum { PERF_FEAT_TRACING_DATA = 1, PERF_FEAT_BUILD_ID = 2, PERF_FEAT_OSRELEASE = 4, PERF_FEAT_ARCH = 6,
       PERF_FEAT_NRCPUS = 7,
       /* u32 count, then per PMU its u32 type and name (a header string): the recording
	* machine's /sys/bus/event_source/devices/NAME/type */
       PERF_FEAT_PMU_MAPPINGS = 16,
       /* the samples' clock: its resolution (u64 ns); and {u32 version 1, u32 clockid,
	* u64 wall-clock ns, u64 ns on the clock at the same moment} */
       PERF_FEAT_CLOCKID = 23, PERF_FEAT_CLOCK_DATA = 29,
       PERF_FEAT_COMPRESSED = 27,
       /* tally's own, the last of the 256 bits (perf reads the table of every bit set and
        * skips the ones it does not know): a perf header string, why the recording
        * stopped early (strerror of the failed write). */
       PERF_FEAT_TALLY_STOPPED = 255,
       /* tally's own too, read only: the user parts of the samples' callchains are stacks
	* tally unwound while recording, not a kernel's frame-pointer walk (tally record
	* --stacks=unwound until December 2026, whose attributes had no copies; a u32, 1).
	* Now each such sample carries its own mark (perf_sample_unwound_note) and no bit is
	* written: perf inject (6.1) crashes on a feature bit it does not know. */
       PERF_FEAT_TALLY_UNWOUND = 254 };

/* x86-64 user registers as perf numbers them (arch/x86/include/uapi/asm/perf_regs.h). */
enum {
	PERF_X86_AX, PERF_X86_BX, PERF_X86_CX, PERF_X86_DX, PERF_X86_SI, PERF_X86_DI,
	PERF_X86_BP, PERF_X86_SP, PERF_X86_IP, PERF_X86_FLAGS, PERF_X86_CS, PERF_X86_SS,
	PERF_X86_R8 = 16, PERF_X86_R15 = 23, PERF_X86_NREGS = 24,
};
/* sample_regs_user is a 64-bit mask: no architecture has more. */
#define PERF_REGS_MAX 64
/* AX..SS and R8..R15: what perf record --call-graph dwarf asks for. */
#define PERF_X86_REGS_USER_MASK 0xff0fffull

/* ---- reading ---- */

struct perf_attr_info {
	struct perf_event_attr attr; /* zero-extended to our struct size */
	const uint8_t *ids;          /* nids u64s, in the file */
	size_t nids;
};

/* A PMU of the machine that recorded the file (PERF_FEAT_PMU_MAPPINGS): the attr.type
 * its events took there. */
struct perf_pmu_name {
	uint32_t type;
	const char *name; /* in the file */
};

struct perf_build_id {
	uint32_t pid;
	uint8_t id[20];
	uint8_t len;
	const char *filename; /* in the file */
};

/* A record's place in time order. A file's index pass reads a sample's dyn_size (near its
 * end) with the next record's header: tail, read tail_back bytes before the end (0: not
 * read). */
struct perf_order {
	uint64_t time, off;
	uint64_t tail;
	uint32_t head;     /* the first head_len bytes of a file's record, kept by the index */
	uint16_t head_len; /* pass at perf_data.heads + head; 0: not kept */
	uint16_t size;
	uint8_t tail_back;
};

struct perf_data {
	const char *path;
	const uint8_t *map;
	size_t size;
	bool owns_map;
	int fd;    /* the mapped file, -1 for an image in memory */
	bool pipe; /* the pipe format: attributes and build-ids come as records */
	struct perf_attr_info *attrs;
	size_t nattrs;
	uint64_t data_off, data_size;
	/* The records: the data section of the map, or the decompressed stream of a file
	 * written with perf record -z (then owned, with data_off 0). */
	const uint8_t *recs;
	size_t recs_size;
	uint8_t *inflated;
	uint64_t features[4];
	char stopped[64]; /* why the recording ended early (PERF_FEAT_TALLY_STOPPED), or "" */
	bool unwound;     /* PERF_FEAT_TALLY_UNWOUND: every user chain unwound while recording */
	/* A file its recorder never finished (perf record or tally record killed, or perf's
	 * command failed to start): the header's data size is still 0 and no feature table
	 * was written. Its records are read from the data offset up to the first that does
	 * not fit in the file or does not decode; stopped says so. */
	bool unfinished;
	struct perf_build_id *build_ids;
	size_t nbuild_ids;
	struct perf_pmu_name *pmus; /* PERF_FEAT_PMU_MAPPINGS, in the file's order */
	size_t npmus;
	struct perf_order *order; /* every record, sorted by time (built on opening) */
	size_t norder;
	size_t cap_attrs, cap_build_ids;
	/* A file's records are read with pread, not through the mapping (see data_read.c):
	 * the record being decoded, and the stack copy perf_sample_stack() reads. */
	uint8_t *rec_buf, *stack_buf;
	size_t rec_cap, stack_cap;
	size_t prefix; /* bytes of a record read up front */
	/* Samples with a stack copy decoded since the prefix last grew, those whose walk read
	 * past it, and the last of them (its file_off). */
	size_t walks, walks_over;
	uint64_t over_off;
	uint8_t *heads; /* what the index pass kept of the records (perf_order.head) */
	size_t nheads, capheads;
	void *heads_map; /* the mapping heads lies in, heads_len bytes */
	size_t heads_len;
};

/* One record, decoded as far as unwinding needs. Pointers point into the file. */
struct perf_event_rec {
	uint32_t type;
	uint16_t misc;
	uint64_t time;
	uint32_t pid, tid;
	uint32_t cpu;
	const struct perf_attr_info *attr;
	const uint8_t *raw; /* the record, header included, as far as it was read */
	uint16_t size;
	uint64_t file_off;
	/* PERF_RECORD_SAMPLE */
	uint64_t ip, period;
	const uint8_t *callchain; /* nr_callchain u64s */
	uint64_t nr_callchain;
	uint64_t regs_abi;
	uint64_t regs[PERF_REGS_MAX]; /* by perf register number, 0 where not sampled */
	uint64_t regs_mask;
	/* The user stack copy: stack_total valid bytes (dyn_size), of which the first
	 * stack_size are at stack. From a file only a prefix of a large sample is read;
	 * perf_sample_stack() reads the rest. */
	const uint8_t *stack;
	uint64_t stack_size, stack_total;
	uint64_t stack_area; /* bytes of the copy's area at stack, valid or not */
	uint64_t stack_off; /* where the copy starts among the records */
	/* PERF_SAMPLE_RAW: raw_size bytes (the kernel pads them to keep the record 8-aligned:
	 * formats inside say their own lengths) */
	const uint8_t *raw_data;
	uint32_t raw_size;
	/* MMAP / MMAP2 */
	uint64_t map_start, map_len, map_pgoff;
	uint32_t map_prot;
	const char *filename; /* NUL-terminated inside the record, checked */
	/* COMM, FORK, EXIT */
	const char *comm;
	uint32_t ppid, ptid;
	/* LOST, THROTTLE */
	uint64_t lost;
};

/* Both layouts: the file format, and the pipe format perf record -o - writes (a 16-byte
 * header, then records only). */
int perf_data_open(const char *path, struct perf_data **out);
/* The same on an open regular file, which d owns from then on (closed on failure too);
 * path names it in messages. */
int perf_data_open_fd(const char *path, int fd, struct perf_data **out);
/* A perf.data image in memory (stdin, fuzzing), which must outlive the result. */
int perf_data_open_mem(const char *name, const void *data, size_t size, struct perf_data **out);
void perf_data_close(struct perf_data *d);

/* The name of PMU type on the machine that recorded d (its PMU mappings); NULL when the
 * file does not say (no such feature, as in tally's recordings before it wrote one, or in
 * the pipe format, whose features are not read). Never this machine's /sys: the same file
 * gives the same report anywhere. */
const char *perf_data_pmu_name(const struct perf_data *d, uint32_t type);

/* Calls fn for every record in time order (records without a time keep their place
 * before the timed ones that follow them in the file). A non-zero return stops the walk
 * and is returned; a malformed record gives an error naming the file and offset. */
int perf_data_each(struct perf_data *d, int (*fn)(const struct perf_event_rec *ev, void *arg),
		   void *arg);

/* At least need bytes (need <= stack_total) of a sample's stack copy, in *data and *size:
 * ev->stack when they are there already, else read into a buffer of d that the next call
 * reuses. Later records are then read that far up front. */
int perf_sample_stack(struct perf_data *d, const struct perf_event_rec *ev, uint64_t need,
		      const uint8_t **data, uint64_t *size);

/* One record as a ring or a pipe gives it (size bytes at rec, all of them), decoded by the
 * first of attrs (by its id among them when there are several with PERF_SAMPLE_IDENTIFIER).
 * name and off are for messages ("NAME: at 0xOFF: ..."; off is also ev->file_off); ev
 * points into rec. 0, or -EINVAL with the message set. */
int perf_record_decode(const char *name, uint64_t off, const struct perf_attr_info *attrs,
		       size_t nattrs, const void *rec, size_t size, struct perf_event_rec *ev);

/* The sample ev again, unwound (tally record's default): its callchain the kernel part of
 * ev's (everything before a PERF_CONTEXT_USER) followed by PERF_CONTEXT_USER and
 * user[0..nuser) (the sampled ip, then return addresses, as the kernel writes a
 * frame-pointer chain); in place of the user registers an ABI of 0 (no registers, as the
 * kernel writes for a sample without user context), in place of the stack copy an area of
 * 8 bytes with no valid byte in it (dyn_size 0) that holds the mark: PERF_UNWOUND_MARK in
 * the high 32 bits, note (the caller's: how the walk ended) in the low ones. perf finds no
 * registers and no copy and reads the chain as it reads --call-graph fp ones; such samples
 * and raw ones share one attribute (perf_sample_attr_unwound), so a recording may keep
 * some samples raw. Written to out (cap bytes); its size in *size. -E2BIG when it does
 * not fit (or exceeds a record's 64 KiB), -EINVAL for a sample type this cannot rewrite
 * (PERF_SAMPLE_READ, BRANCH_STACK or any field after the stack copy) or a record whose
 * fields run past it. */
#define PERF_UNWOUND_MARK 0x746c7977u /* "wylt" in memory */
int perf_sample_unwound(const struct perf_event_rec *ev, const uint64_t *user, size_t nuser,
			uint32_t note, void *out, size_t cap, size_t *size);
/* Whether ev is a sample perf_sample_unwound wrote; its note in *note. No file feature is
 * needed to tell: the kernel writes a copy only with the registers (ABI not 0), and the
 * 8 bytes must hold the mark. */
bool perf_sample_unwound_note(const struct perf_event_rec *ev, uint32_t *note);
/* Whether perf_sample_unwound can rewrite samples of this sample type: it must have the
 * callchain, the user registers and the stack copy. */
bool perf_sample_unwound_supports(uint64_t sample_type);
/* The attribute of a file of such samples: a's, with the kernel's user callchain no longer
 * excluded (unwound samples' chains have a user part; raw ones keep their copy). */
void perf_sample_attr_unwound(const struct perf_event_attr *a, struct perf_event_attr *out);

/* Reads the i-th callchain entry of a sample. */
uint64_t perf_callchain_at(const struct perf_event_rec *ev, uint64_t i);

/* ---- writing ---- */

struct perf_writer;

/* Starts path with one event attribute; records follow, then perf_writer_close(). */
int perf_writer_open(const char *path, const struct perf_event_attr *attr,
		     struct perf_writer **out);
/* Appends one record exactly as the kernel produced it. A failed write (ENOSPC, EIO) is
 * returned with the message set ("PATH: No space left on device") and kept: later records
 * are dropped, and perf_writer_close still finishes the file with the whole records
 * written before. */
int perf_writer_add(struct perf_writer *w, const void *rec, size_t size);
/* One more event attribute, with the ids of its events (copied), after the first in the
 * file; the records of all of them then need PERF_SAMPLE_IDENTIFIER to be told apart. */
int perf_writer_add_attr(struct perf_writer *w, const struct perf_event_attr *attr,
			 const uint64_t *ids, size_t nids);
/* An attribute and the ids of its events, for perf_writer_begin. */
struct perf_writer_event {
	const struct perf_event_attr *attr;
	const uint64_t *ids;
	size_t nids;
};
/* The recording begins: writes the provisional header, which lists the first attribute
 * with ids and the attributes of more[] (those the records may carry; later
 * perf_writer_add_attr calls and the ids given to perf_writer_close are for the finished
 * file), and the records so far. It is what a reader finds should the file never be
 * finished (tally killed). Without this call the header is written with the first flush,
 * holding the first attribute alone. 0 or a negative code, as perf_writer_add. */
int perf_writer_begin(struct perf_writer *w, const uint64_t *ids, size_t nids,
		      const struct perf_writer_event *more, size_t nmore);
/* Writes the records buffered so far (after perf_writer_begin; before it, nothing), so that
 * a recording killed later keeps them: records are otherwise written 1 MiB at a time, which
 * is 30 ms of raw samples but seconds of unwound ones. 0 or a negative code, as
 * perf_writer_add. */
int perf_writer_flush(struct perf_writer *w);
/* The errno of the write that failed, 0 while none has. */
int perf_writer_error(const struct perf_writer *w);
/* The samples (PERF_RECORD_SAMPLE) the file holds: written or buffered, never the ones a
 * failed write dropped. */
uint64_t perf_writer_samples(const struct perf_writer *w);
/* The bytes of the records added so far (written and buffered; the header and trailer
 * not counted). */
uint64_t perf_writer_bytes(const struct perf_writer *w);
/* Remembers a build-id for the HEADER_BUILD_ID feature; misc is PERF_RECORD_MISC_USER
 * or _KERNEL. */
int perf_writer_add_build_id(struct perf_writer *w, uint32_t pid, uint16_t misc,
			     const uint8_t *id, size_t len, const char *filename);
/* The tracepoints' formats, in perf's tracing-data layout (tools/perf/util/
 * trace-event-info.c), written as the HEADER_TRACING_DATA feature: perf script needs it to
 * read a file with tracepoint events. Copied. */
int perf_writer_set_tracing_data(struct perf_writer *w, const void *data, size_t len);
/* Writes the attribute with its ids, the features and the header, and renames the file
 * into place (after a failed write too: the recording so far is kept); frees w. */
int perf_writer_close(struct perf_writer *w, const uint64_t *ids, size_t nids);
/* Frees w without finishing the file (after an error). */
void perf_writer_abort(struct perf_writer *w);

/* ---- recording ---- */

/* /proc/sys/kernel/perf_event_paranoid (2, the kernel's default, when unreadable). */
int perf_paranoid_level(void);
/* perf_event_open; the error message says what to change (paranoid level, capability). */
int perf_open(struct perf_event_attr *attr, int pid, int cpu, int group_fd, unsigned long flags,
	      int *fd_out);
/* Whether an event named by type/config opens on this machine (probing, no message). */
bool perf_event_available(uint32_t type, uint64_t config);
/* The identifier of a sample record whose sample type begins with PERF_SAMPLE_IDENTIFIER
 * (as the rings of tally's recordings hold them): false when rec is not a sample. */
bool perf_sample_id(const void *rec, size_t size, uint64_t *id);
/* Whether a PMU named name exists (/sys/bus/event_source/devices/NAME). */
bool perf_pmu_exists(const char *name);
/* The type number of the PMU named name (/sys/bus/event_source/devices/NAME/type), the
 * perf_event_attr.type its events take on this machine; -1 when there is no such PMU.
 * For recording only: a report takes a file's types from the file (perf_data_pmu_name). */
int perf_pmu_type(const char *name);

/* A mmap'd ring buffer of one event. */
struct perf_ring {
	int fd;
	void *base;
	size_t size;     /* data area, a power of two */
	size_t page;
	uint8_t *scratch; /* for records that wrap around the end */
};

int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages);
void perf_ring_unmap(struct perf_ring *r);
/* Calls fn on every record now in the ring and releases them. */
int perf_ring_drain(struct perf_ring *r, int (*fn)(const void *rec, size_t size, void *arg),
		    void *arg);

/* /proc/PID/maps: calls fn for each line's mapping. */
struct perf_map_entry {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min, prot, flags;
	const char *path; /* "" for anonymous mappings */
};
int perf_proc_maps(int pid, int (*fn)(const struct perf_map_entry *m, void *arg), void *arg);

#endif
