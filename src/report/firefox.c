/*
 * Firefox Profiler export: the processed profile format at version FF_VERSION, the current
 * one of @firefox-devtools/profiler-cli 0.10.0's loader (its upgraders from 70 say what
 * changed since: flags columns in the frame and function tables, 0 for absent values).
 * One thread per thread of the profile (processes group them by pid), its samples in time
 * order with their stack and weight; the stack, frame, function, resource and string
 * tables are shared. A Firefox frame is a function at an address: the sample's pc for the
 * innermost one, the call site for its callers, inline frames at their caller's address
 * flagged as inlined. Categories come from frame kinds (one table row per kind). Off-CPU
 * intervals and USDT probe hits become markers with their stack, and so do the runs of a
 * thread's samples that held its interpreter's GIL, or did not.
 * A profile without a sample log (pprof, folded input) is one thread of its tree's weights.
 */
#include "base/json.h"
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/hex.h"
#include "base/vec.h"
#include "profile/idhash.h"
#include "profile/profile.h"

#define FF_VERSION 75
#define FF_GECKO_VERSION 36
#define NO_INDEX UINT32_MAX

/* The category of each frame kind: a new kind is one more row. */
static const struct {
	const char *name, *color;
} kind_category[PROF_NKINDS] = {
	[PROF_NATIVE] = { "Native", "blue" },
	[PROF_INLINE] = { "Inline", "lightblue" },
	[PROF_VM] = { "Interpreter", "green" },
	[PROF_SYSCALL] = { "Syscall", "orange" },
	[PROF_PROGRAM] = { "Program", "purple" },
	[PROF_KERNEL] = { "Kernel", "red" },
	[PROF_TRUNCATED] = { "Truncated", "grey" },
	[PROF_JIT] = { "JIT", "yellow" },
	[PROF_PYTHON] = { "Python", "magenta" },
	[PROF_RUBY] = { "Ruby", "red" },
};

/* A function (a profile frame) and a library (a profile module), with their strings. */
struct ff_func {
	uint32_t frame, name;
	uint32_t source; /* NO_INDEX when the file is unknown */
};

struct ff_lib {
	uint32_t module, name;
};

struct ff_frame {
	uint32_t frame; /* the profile's */
	uint32_t depth; /* inline depth */
	uint64_t addr;	/* module-relative; 0 when unknown */
	uint32_t line;
};

struct ff_stack {
	uint32_t node; /* key: the profile's node at addr */
	uint64_t addr;
	uint32_t line;
	uint32_t frame; /* value: ff frame, prefix ff stack or NO_INDEX */
	uint32_t prefix;
};

/* One sample as written: its thread, time and where its weight went. */
struct ff_sample {
	uint32_t thread; /* index into the sorted thread list */
	uint64_t time;
	uint32_t pcw;
	int64_t weight, off_cpu, hits;
	uint32_t stack;
	size_t order;
	uint8_t gil; /* enum prof_gil */
};

struct ff {
	FILE *f;
	const struct prof *p;
	int metric, off_metric, hits_metric;
	VEC(const char *) strs; /* the string table: pointers into p, or literals */
	struct idhash str_index;
	uint32_t *func_of;   /* by profile frame: function index, NO_INDEX until used */
	VEC(struct ff_func) funcs;
	uint32_t *lib_of;    /* by profile module: lib index, NO_INDEX until used */
	VEC(struct ff_lib) libs;
	VEC(uint32_t) sources; /* source -> string index of its file */
	struct idhash source_index;
	VEC(struct ff_frame) frames;
	struct idhash frame_index;
	VEC(struct ff_stack) stacks;
	struct idhash stack_index;
	VEC(struct ff_sample) samples;
	uint32_t *threads; /* sorted profile thread ids */
	size_t nthreads;   /* 0: one thread of the tree's weights */
	bool kind_used[PROF_NKINDS];
	uint32_t category_of[PROF_NKINDS];
	uint64_t t0, t_end; /* the first sample's time; the end of the last (off-CPU: its interval) */
};

static int oom(void)
{
	return err_set(-ENOMEM, "out of memory writing the Firefox profile");
}

static bool str_eq(const void *ctx, uint32_t id)
{
	const void *const *k = ctx;
	const struct ff *x = k[0];
	return !strcmp(x->strs.v[id], k[1]);
}

static uint32_t str_index(struct ff *x, const char *s)
{
	const void *k[2] = { x, s };
	uint32_t h = idhash_bytes(s, strlen(s));
	uint32_t id = idhash_find(&x->str_index, h, str_eq, k);
	if (id != NO_INDEX)
		return id;
	id = (uint32_t)x->strs.n;
	const char **slot = vec_push(&x->strs);
	if (!slot || idhash_add(&x->str_index, h, id))
		return NO_INDEX;
	*slot = s;
	return id;
}

static bool source_eq(const void *ctx, uint32_t id)
{
	const void *const *k = ctx;
	const struct ff *x = k[0];
	return x->sources.v[id] == *(const uint32_t *)k[1];
}

static uint32_t source_index(struct ff *x, uint32_t file_str)
{
	const void *k[2] = { x, &file_str };
	uint32_t h = idhash_mix(file_str, 0);
	uint32_t id = idhash_find(&x->source_index, h, source_eq, k);
	if (id != NO_INDEX)
		return id;
	id = (uint32_t)x->sources.n;
	uint32_t *slot = vec_push(&x->sources);
	if (!slot || idhash_add(&x->source_index, h, id))
		return NO_INDEX;
	*slot = file_str;
	return id;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

static uint32_t lib_index(struct ff *x, uint32_t module)
{
	if (module == PROF_NONE)
		return NO_INDEX;
	if (x->lib_of[module] == NO_INDEX) {
		const char *path = prof_str(x->p, prof_module_at(x->p, module)->path);
		struct ff_lib l = { module, str_index(x, base_name(path)) };
		struct ff_lib *slot = l.name == NO_INDEX ? NULL : vec_push(&x->libs);
		if (!slot)
			return NO_INDEX;
		*slot = l;
		x->lib_of[module] = (uint32_t)x->libs.n - 1;
	}
	return x->lib_of[module];
}

/* The function of a profile frame, made with its name, library and source file. */
static int func_index(struct ff *x, uint32_t frame, uint32_t *out)
{
	if (x->func_of[frame] == NO_INDEX) {
		const struct prof_frame *fr = prof_frame_at(x->p, frame);
		struct ff_func fn = { frame, str_index(x, prof_str(x->p, fr->label)), NO_INDEX };
		uint32_t file = fr->file ? str_index(x, prof_str(x->p, fr->file)) : NO_INDEX;
		if (file != NO_INDEX)
			fn.source = source_index(x, file);
		struct ff_func *slot = vec_push(&x->funcs);
		if (!slot || fn.name == NO_INDEX || (fr->file && fn.source == NO_INDEX) ||
		    (fr->module != PROF_NONE && lib_index(x, fr->module) == NO_INDEX))
			return oom();
		*slot = fn;
		x->func_of[frame] = (uint32_t)x->funcs.n - 1;
		x->kind_used[fr->kind] = true;
	}
	*out = x->func_of[frame];
	return 0;
}

static bool frame_eq(const void *ctx, uint32_t id)
{
	const void *const *k = ctx;
	const struct ff *x = k[0];
	const struct ff_frame *a = &x->frames.v[id], *b = k[1];
	return a->frame == b->frame && a->depth == b->depth && a->addr == b->addr &&
	       a->line == b->line;
}

static uint32_t frame_index(struct ff *x, const struct ff_frame *fr)
{
	uint32_t func;
	if (func_index(x, fr->frame, &func))
		return NO_INDEX;
	const void *k[2] = { x, fr };
	uint32_t h = idhash_mix((uint64_t)fr->frame << 32 | fr->depth, fr->addr ^ (uint64_t)fr->line << 48);
	uint32_t id = idhash_find(&x->frame_index, h, frame_eq, k);
	if (id != NO_INDEX)
		return id;
	id = (uint32_t)x->frames.n;
	struct ff_frame *slot = vec_push(&x->frames);
	if (!slot || idhash_add(&x->frame_index, h, id)) {
		oom();
		return NO_INDEX;
	}
	*slot = *fr;
	return id;
}

static bool stack_eq(const void *ctx, uint32_t id)
{
	const void *const *k = ctx;
	const struct ff *x = k[0];
	const struct ff_stack *a = &x->stacks.v[id], *b = k[1];
	return a->node == b->node && a->addr == b->addr && a->line == b->line;
}

static uint32_t stack_hash(const struct ff_stack *s)
{
	return idhash_mix((uint64_t)s->node << 32 | s->line, s->addr);
}

/* The stack of node at (addr, line): its callers' stacks first (each at the call site of
 * the next), made where missing. Iterative: stacks may be thousands of frames deep. */
static uint32_t stack_index(struct ff *x, uint32_t node, uint64_t addr, uint32_t line)
{
	VEC(struct ff_stack) path = { 0 };
	uint32_t prefix = NO_INDEX, id = NO_INDEX;
	for (;;) {
		struct ff_stack key = { .node = node, .addr = addr, .line = line };
		const void *k[2] = { x, &key };
		if (node == PROF_ROOT)
			break;
		if ((id = idhash_find(&x->stack_index, stack_hash(&key), stack_eq, k)) != NO_INDEX) {
			prefix = id;
			break;
		}
		struct ff_stack *slot = vec_push(&path);
		if (!slot) {
			vec_free(&path);
			oom();
			return NO_INDEX;
		}
		*slot = key;
		const struct prof_node *n = prof_node_at(x->p, node);
		addr = n->call_pc;
		line = n->call_line;
		node = n->parent;
	}
	uint32_t prefix_depth = prefix == NO_INDEX ? 0 : x->frames.v[x->stacks.v[prefix].frame].depth;
	while (path.n) {
		struct ff_stack s = path.v[--path.n];
		const struct prof_node *n = prof_node_at(x->p, s.node);
		bool inl = prof_frame_at(x->p, n->frame)->kind == PROF_INLINE && prefix != NO_INDEX;
		struct ff_frame fr = { n->frame, inl ? prefix_depth + 1 : 0, s.addr, s.line };
		s.frame = frame_index(x, &fr);
		s.prefix = prefix;
		id = (uint32_t)x->stacks.n;
		struct ff_stack *slot = s.frame == NO_INDEX ? NULL : vec_push(&x->stacks);
		if (!slot || idhash_add(&x->stack_index, stack_hash(&s), id)) {
			vec_free(&path);
			oom();
			return NO_INDEX;
		}
		*slot = s;
		prefix = id;
		prefix_depth = fr.depth;
	}
	vec_free(&path);
	return prefix;
}

static int add_sample(struct ff *x, uint32_t thread, uint64_t time, uint32_t node,
		      uint32_t pcw, const int64_t *w, uint8_t gil)
{
	struct ff_sample s = {
		.thread = thread, .time = time, .weight = w[x->metric],
		.off_cpu = x->off_metric >= 0 ? w[x->off_metric] : 0,
		.hits = x->hits_metric >= 0 ? w[x->hits_metric] : 0,
		.order = x->samples.n, .gil = gil,
	};
	if (s.weight <= 0 && s.off_cpu <= 0 && s.hits <= 0)
		return 0;
	const struct prof_pcw *e = prof_pcw_at(x->p, pcw);
	if ((s.stack = stack_index(x, node, e->pc, e->line)) == NO_INDEX)
		return -ENOMEM;
	struct ff_sample *slot = vec_push(&x->samples);
	if (!slot)
		return oom();
	*slot = s;
	return 0;
}

static int by_thread_time(const void *a, const void *b)
{
	const struct ff_sample *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The samples to write: the log's, by thread and time, or the tree's weights as samples
 * of one thread when there is no log. */
static int collect(struct ff *x)
{
	const struct prof *p = x->p;
	int rc = 0;
	if (x->nthreads) {
		uint32_t *pos = malloc(x->nthreads * sizeof(*pos)); /* thread id -> sorted index */
		if (!pos)
			return oom();
		for (size_t i = 0; i < x->nthreads; i++)
			pos[x->threads[i]] = (uint32_t)i;
		x->t0 = UINT64_MAX;
		for (size_t i = 0; !rc && i < prof_nsamples(p); i++) {
			const struct prof_sample *e = prof_sample_at(p, i);
			const int64_t *w = prof_sample_weights(p, i);
			int64_t off = x->off_metric >= 0 ? w[x->off_metric] : 0;
			uint64_t end = e->time + (off > 0 ? (uint64_t)off : 0);
			x->t0 = e->time < x->t0 ? e->time : x->t0;
			x->t_end = end > x->t_end ? end : x->t_end;
			rc = add_sample(x, pos[e->thread], e->time, e->node, e->pcw, w, e->gil);
		}
		free(pos);
		if (x->t0 == UINT64_MAX)
			x->t0 = 0;
	} else {
		for (uint32_t n = 1; !rc && n < prof_nnodes(p); n++)
			for (uint32_t e = prof_node_at(p, n)->first_pc; !rc && e != PROF_NONE;
			     e = prof_pcw_at(p, e)->next)
				rc = add_sample(x, 0, 0, n, e, prof_pcw_weights(p, e),
						PROF_GIL_UNKNOWN);
	}
	if (!rc && x->samples.n)
		qsort(x->samples.v, x->samples.n, sizeof(*x->samples.v), by_thread_time);
	return rc;
}

/* ---- writing ---- */

/* Nanoseconds as milliseconds, exactly, without floating point. */
static void print_ms(FILE *f, int64_t ns)
{
	if (ns < 0) {
		fputc('-', f);
		ns = -ns;
	}
	fprintf(f, "%" PRId64 ".%06" PRId64, ns / 1000000, ns % 1000000);
}

/* The breakpad id of an ELF build-id (what dump_syms and samply compute): its first 16
 * bytes (zero-padded) as a GUID, whose first three fields are little-endian, in
 * upper-case hex, then an age of 0. Empty when the build-id is unknown or not hex. */
static void breakpad_id(const char *hex, char out[34])
{
	uint8_t b[16] = { 0 };
	size_t len = strlen(hex);
	out[0] = 0;
	if (!len || len % 2)
		return;
	for (size_t i = 0; i < len / 2 && i < 16; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	for (size_t i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02X", b[order[i]]);
	out[32] = '0';
	out[33] = 0;
}

static void print_categories(FILE *f, struct ff *x)
{
	fputs("\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]}", f);
	uint32_t next = 1;
	for (int k = 0; k < PROF_NKINDS; k++) {
		if (!x->kind_used[k])
			continue;
		x->category_of[k] = next++;
		fputs(",{\"name\":", f);
		json_print_string(f, kind_category[k].name ? kind_category[k].name
							   : prof_kind_name((enum prof_kind)k));
		fputs(",\"color\":", f);
		json_print_string(f, kind_category[k].color ? kind_category[k].color : "grey");
		fputs(",\"subcategories\":[\"Other\"]}", f);
	}
	fputc(']', f);
}

static bool weights_are_ms(const struct ff *x)
{
	const struct prof_metric *m = prof_metric(x->p, (size_t)x->metric);
	return !strcmp(prof_str(x->p, m->unit), "nanoseconds");
}

static const char marker_schema[] =
	"\"markerSchema\":["
	"{\"name\":\"OffCPU\",\"tooltipLabel\":\"off-CPU\",\"tableLabel\":\"off-CPU\","
	"\"chartLabel\":\"off-CPU\",\"display\":[\"marker-chart\",\"marker-table\","
	"\"timeline-overview\"],\"fields\":[],\"description\":\"The thread was off CPU "
	"(blocked, sleeping or waiting for a CPU); the stack is where it blocked\"},"
	"{\"name\":\"USDT\",\"tooltipLabel\":\"probe hit\",\"tableLabel\":\"probe hit\","
	"\"chartLabel\":\"probe hit\",\"display\":[\"marker-chart\",\"marker-table\"],"
	"\"fields\":[],\"description\":\"A hit of a USDT probe; the stack is where it fired\"},"
	"{\"name\":\"GIL\",\"tooltipLabel\":\"{marker.name}\",\"tableLabel\":\"{marker.name}\","
	"\"chartLabel\":\"{marker.name}\",\"display\":[\"marker-chart\",\"marker-table\"],"
	"\"fields\":[],\"description\":\"Samples of a Python thread from first to last, all "
	"taken while the thread held its interpreter's GIL, or all while it did not\"}]";

static void print_meta(FILE *f, struct ff *x, const char *name)
{
	const struct prof *p = x->p;
	const struct prof_info *info = prof_info(p);
	const struct prof_metric *m = prof_metric(p, (size_t)x->metric);
	int64_t interval = info->period > 0 &&
					   !strcmp(prof_str(p, info->period_type.unit), "nanoseconds")
				   ? info->period
				   : 1000000;
	fputs("\"meta\":{\"interval\":", f);
	print_ms(f, interval);
	fputs(",\"startTime\":", f);
	print_ms(f, info->time_ns);
	if (x->nthreads) {
		/* Without them, the profiler's range is the samples' (the last one's time and an
		 * interval), and off-CPU intervals that end past it lose their markers: a
		 * thread that sleeps to the end of the recording showed 4 of its 5 sleeps. */
		fputs(",\"profilingStartTime\":0,\"profilingEndTime\":", f);
		print_ms(f, (int64_t)(x->t_end - x->t0) + interval);
	}
	fputs(",\"processType\":0,\"product\":", f);
	json_print_string(f, name);
	fprintf(f, ",\"stackwalk\":1,\"version\":%d,\"preprocessedProfileVersion\":%d,"
		   "\"symbolicated\":true,\"importedFrom\":\"tally\",",
		FF_GECKO_VERSION, FF_VERSION);
	fputs("\"extra\":[{\"label\":\"tally\",\"entries\":[{\"label\":\"Sample weight\","
	      "\"format\":\"string\",\"value\":", f);
	char b[160];
	snprintf(b, sizeof(b), "%s/%s", prof_str(p, m->type), prof_str(p, m->unit));
	json_print_string(f, b);
	fputs("}]}],", f);
	print_categories(f, x);
	fputc(',', f);
	fputs(marker_schema, f);
	fputc('}', f);
}

static void print_libs(FILE *f, const struct ff *x)
{
	fputs("\"libs\":[", f);
	for (size_t i = 0; i < x->libs.n; i++) {
		const struct prof_module *m = prof_module_at(x->p, x->libs.v[i].module);
		const char *path = prof_str(x->p, m->path), *bid = prof_str(x->p, m->build_id);
		char bp[34];
		breakpad_id(bid, bp);
		fputs(i ? ",{\"arch\":\"x86_64\",\"name\":" : "{\"arch\":\"x86_64\",\"name\":", f);
		json_print_string(f, base_name(path));
		fputs(",\"path\":", f);
		json_print_string(f, path);
		fputs(",\"debugName\":", f);
		json_print_string(f, base_name(path));
		fputs(",\"debugPath\":", f);
		json_print_string(f, path);
		fputs(",\"breakpadId\":", f);
		json_print_string(f, bp);
		fputs(",\"codeId\":", f);
		json_print_string(f, bid[0] ? bid : NULL);
		fputc('}', f);
	}
	fputc(']', f);
}

/* Marker names, string indexes: off-CPU, probe hit, GIL held, GIL not held. */
enum { NAME_OFF_CPU, NAME_HIT, NAME_GIL_HELD, NAME_GIL_NOT_HELD, NNAMES };
enum { MK_DATA, MK_NAME, MK_START, MK_END, MK_PHASE, MK_CATEGORY, MK_NCOLS };

/* The last sample of the run of samples in one GIL state that sample i of [lo, hi)
 * begins; SIZE_MAX when it begins none (its state unknown, or its predecessor's the
 * same). */
static size_t gil_run(const struct ff *x, size_t lo, size_t hi, size_t i)
{
	const struct ff_sample *v = x->samples.v;
	if (v[i].gil == PROF_GIL_UNKNOWN || (i > lo && v[i - 1].gil == v[i].gil))
		return SIZE_MAX;
	size_t j = i;
	while (j + 1 < hi && v[j + 1].gil == v[i].gil)
		j++;
	return j;
}

/* Column c of the GIL marker of the run of samples [i, j]: an interval from the first
 * sample's time to the last's, the first one's stack its cause. */
static void print_gil_marker(FILE *f, const struct ff *x, size_t i, size_t j, int c,
			     const uint32_t names[NNAMES])
{
	const struct ff_sample *s = &x->samples.v[i];
	if (c == MK_DATA)
		fprintf(f, "{\"type\":\"GIL\",\"cause\":{\"stack\":%" PRIu32 "}}", s->stack);
	else if (c == MK_NAME)
		fprintf(f, "%" PRIu32,
			names[s->gil == PROF_GIL_HELD ? NAME_GIL_HELD : NAME_GIL_NOT_HELD]);
	else if (c == MK_START)
		print_ms(f, (int64_t)(s->time - x->t0));
	else if (c == MK_END)
		print_ms(f, (int64_t)(x->samples.v[j].time - x->t0));
	else if (c == MK_PHASE)
		fputs("1", f);
	else
		fputs("0", f);
}

/* The column c of the markers of a thread's samples [lo, hi): an interval per off-CPU
 * sample (from the moment it blocked, for as long as it was off), an instant per probe
 * hit; each with the sample's stack as its cause; and an interval per run of samples
 * that held the GIL, or did not. Returns the number of markers. */
static size_t print_marker_column(FILE *f, const struct ff *x, size_t lo, size_t hi, int c,
				  const uint32_t names[NNAMES])
{
	size_t n = 0;
	for (size_t i = lo; i < hi; i++) {
		const struct ff_sample *s = &x->samples.v[i];
		size_t j = gil_run(x, lo, hi, i);
		if (j != SIZE_MAX) {
			fputs(n++ ? "," : "", f);
			print_gil_marker(f, x, i, j, c, names);
		}
		bool off = s->off_cpu > 0;
		if (!off && s->hits <= 0)
			continue;
		int64_t t = (int64_t)(s->time - x->t0);
		fputs(n++ ? "," : "", f);
		if (c == MK_DATA)
			fprintf(f, "{\"type\":\"%s\",\"cause\":{\"stack\":%" PRIu32 "}}",
				off ? "OffCPU" : "USDT", s->stack);
		else if (c == MK_NAME)
			fprintf(f, "%" PRIu32, names[off ? NAME_OFF_CPU : NAME_HIT]);
		else if (c == MK_START)
			print_ms(f, t);
		else if (c == MK_END && off)
			print_ms(f, t + s->off_cpu);
		else if (c == MK_END)
			fputs("null", f);
		else if (c == MK_PHASE)
			fputs(off ? "1" : "0", f);
		else
			fputs("0", f);
	}
	return n;
}

static void print_markers(FILE *f, const struct ff *x, size_t lo, size_t hi,
			  const uint32_t names[NNAMES])
{
	static const char *const cols[MK_NCOLS] = { "data", "name", "startTime", "endTime",
						    "phase", "category" };
	size_t n = 0;
	fputs("\"markers\":{", f);
	for (int c = 0; c < MK_NCOLS; c++) {
		fprintf(f, "%s\"%s\":[", c ? "," : "", cols[c]);
		n = print_marker_column(f, x, lo, hi, c, names);
		fputc(']', f);
	}
	fprintf(f, ",\"length\":%zu}", n);
}

static void print_samples(FILE *f, const struct ff *x, size_t lo, size_t hi)
{
	bool ms = weights_are_ms(x);
	size_t n = 0;
	for (int col = 0; col < 3; col++) {
		fputs(col == 0 ? "\"samples\":{\"stack\":[" : col == 1 ? "],\"time\":[" : "],\"weight\":[", f);
		n = 0;
		for (size_t i = lo; i < hi; i++) {
			const struct ff_sample *s = &x->samples.v[i];
			if (s->weight <= 0)
				continue;
			fputs(n++ ? "," : "", f);
			if (col == 0)
				fprintf(f, "%" PRIu32, s->stack);
			else if (col == 1)
				print_ms(f, (int64_t)(s->time - x->t0));
			else if (ms)
				print_ms(f, s->weight);
			else
				fprintf(f, "%" PRId64, s->weight);
		}
	}
	fprintf(f, "],\"weightType\":\"%s\",\"length\":%zu}", ms ? "tracing-ms" : "samples", n);
}

/* A process is named after its main thread, or when that has no samples after its
 * first thread that has. */
static const char *process_name(const struct ff *x, uint32_t pid, const char *fallback)
{
	const char *first = NULL;
	for (size_t k = 0; k < x->nthreads; k++) {
		const struct prof_thread *m = prof_thread_at(x->p, x->threads[k]);
		if (m->pid == pid && m->tid == pid)
			return prof_str(x->p, m->name);
		if (m->pid == pid && !first)
			first = prof_str(x->p, m->name);
	}
	return first ? first : fallback;
}

static void print_threads(FILE *f, const struct ff *x, const char *name,
			  const uint32_t names[NNAMES])
{
	fputs("\"threads\":[", f);
	size_t nt = x->nthreads ? x->nthreads : 1, lo = 0;
	for (size_t t = 0; t < nt; t++) {
		size_t hi = lo;
		while (hi < x->samples.n && x->samples.v[hi].thread == t)
			hi++;
		uint32_t pid = 0, tid = 0;
		const char *tname = name;
		if (x->nthreads) {
			const struct prof_thread *th = prof_thread_at(x->p, x->threads[t]);
			pid = th->pid;
			tid = th->tid;
			tname = prof_str(x->p, th->name);
		}
		fprintf(f, "%s{\"processType\":\"default\",\"processStartupTime\":0,"
			   "\"processShutdownTime\":null,\"registerTime\":0,\"unregisterTime\":null,"
			   "\"pausedRanges\":[],\"name\":",
			t ? "," : "");
		json_print_string(f, tname);
		fputs(",\"processName\":", f);
		json_print_string(f, process_name(x, pid, tname));
		fprintf(f, ",\"isMainThread\":%s,\"pid\":\"%" PRIu32 "\",\"tid\":%" PRIu32 ",",
			pid == tid ? "true" : "false", pid, tid);
		print_samples(f, x, lo, hi);
		fputc(',', f);
		print_markers(f, x, lo, hi, names);
		fputc('}', f);
		lo = hi;
	}
	fputc(']', f);
}

/* A column of n values: get(x, i) or null where it says NO_INDEX. */
static void print_column(FILE *f, const char *name, const struct ff *x, size_t n,
			 uint64_t (*get)(const struct ff *x, size_t i), const char *none)
{
	fprintf(f, "\"%s\":[", name);
	for (size_t i = 0; i < n; i++) {
		uint64_t v = get(x, i);
		fputs(i ? "," : "", f);
		if (v == NO_INDEX)
			fputs(none, f);
		else
			fprintf(f, "%" PRIu64, v);
	}
	fputs("],", f);
}

static void print_repeat(FILE *f, const char *name, size_t n, const char *value)
{
	fprintf(f, "\"%s\":[", name);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", value);
	fputs("],", f);
}

static uint64_t stack_frame(const struct ff *x, size_t i) { return x->stacks.v[i].frame; }
static uint64_t stack_prefix_offset(const struct ff *x, size_t i)
{
	uint32_t p = x->stacks.v[i].prefix;
	return p == NO_INDEX ? 0 : i - p;
}

static const struct prof_frame *ff_prof_frame(const struct ff *x, size_t i)
{
	return prof_frame_at(x->p, x->frames.v[i].frame);
}
static uint64_t frame_address(const struct ff *x, size_t i)
{
	const struct prof_frame *fr = ff_prof_frame(x, i);
	return fr->module == PROF_NONE || !x->frames.v[i].addr ? NO_INDEX : x->frames.v[i].addr;
}
static uint64_t frame_lib(const struct ff *x, size_t i)
{
	const struct prof_frame *fr = ff_prof_frame(x, i);
	return fr->module == PROF_NONE || !x->frames.v[i].addr ? NO_INDEX : x->lib_of[fr->module];
}
static uint64_t frame_category(const struct ff *x, size_t i)
{
	return x->category_of[ff_prof_frame(x, i)->kind];
}
static uint64_t frame_func(const struct ff *x, size_t i)
{
	return x->func_of[x->frames.v[i].frame];
}
static uint64_t frame_line(const struct ff *x, size_t i)
{
	return x->frames.v[i].line ? x->frames.v[i].line : NO_INDEX;
}

/* Which optional columns of a frame hold a value (the others hold 0), and whether it is
 * inlined into its caller: the frame table's flags since processed version 71. */
enum { FRAME_INLINED = 1, FRAME_HAS_ADDRESS = 2, FRAME_HAS_CATEGORY = 4, FRAME_HAS_LINE = 16 };
static uint64_t frame_flags(const struct ff *x, size_t i)
{
	return (x->frames.v[i].depth ? FRAME_INLINED : 0) |
	       (frame_address(x, i) != NO_INDEX ? FRAME_HAS_ADDRESS : 0) | FRAME_HAS_CATEGORY |
	       (frame_line(x, i) != NO_INDEX ? FRAME_HAS_LINE : 0);
}

static const struct prof_frame *func_frame(const struct ff *x, size_t i)
{
	return prof_frame_at(x->p, x->funcs.v[i].frame);
}
static uint64_t func_name(const struct ff *x, size_t i) { return x->funcs.v[i].name; }
static uint64_t func_resource(const struct ff *x, size_t i)
{
	const struct prof_frame *fr = func_frame(x, i);
	return fr->module == PROF_NONE ? NO_INDEX : x->lib_of[fr->module];
}
static uint64_t func_source(const struct ff *x, size_t i) { return x->funcs.v[i].source; }
static uint64_t func_line(const struct ff *x, size_t i)
{
	return func_frame(x, i)->line ? func_frame(x, i)->line : NO_INDEX;
}
/* Which optional columns of a function hold a value: the function table's flags since
 * processed version 75 (tally's functions are never JS). */
enum { FUNC_HAS_RESOURCE = 4, FUNC_HAS_SOURCE = 8, FUNC_HAS_LINE = 16 };
static uint64_t func_flags(const struct ff *x, size_t i)
{
	return (func_resource(x, i) != NO_INDEX ? FUNC_HAS_RESOURCE : 0) |
	       (func_source(x, i) != NO_INDEX ? FUNC_HAS_SOURCE : 0) |
	       (func_line(x, i) != NO_INDEX ? FUNC_HAS_LINE : 0);
}
static uint64_t lib_name(const struct ff *x, size_t i) { return x->libs.v[i].name; }
static uint64_t source_file(const struct ff *x, size_t i) { return x->sources.v[i]; }

static void print_shared(FILE *f, const struct ff *x)
{
	size_t ns = x->stacks.n, nf = x->frames.n, nfn = x->funcs.n, nl = x->libs.n;
	fputs("\"shared\":{\"stackTable\":{", f);
	print_column(f, "frame", x, ns, stack_frame, "null");
	print_column(f, "prefixOffset", x, ns, stack_prefix_offset, "0");
	fprintf(f, "\"length\":%zu},\"frameTable\":{", ns);
	print_column(f, "flags", x, nf, frame_flags, "0");
	print_column(f, "address", x, nf, frame_address, "0");
	print_column(f, "lib", x, nf, frame_lib, "0");
	print_column(f, "category", x, nf, frame_category, "0");
	print_repeat(f, "subcategory", nf, "0");
	print_column(f, "func", x, nf, frame_func, "0");
	print_repeat(f, "nativeSymbol", nf, "0");
	print_repeat(f, "innerWindowID", nf, "0");
	print_column(f, "line", x, nf, frame_line, "0");
	print_repeat(f, "column", nf, "0");
	print_repeat(f, "originalLocation", nf, "0");
	fprintf(f, "\"length\":%zu},\"funcTable\":{", nf);
	print_column(f, "name", x, nfn, func_name, "0");
	print_column(f, "flags", x, nfn, func_flags, "0");
	print_column(f, "resource", x, nfn, func_resource, "0");
	print_column(f, "source", x, nfn, func_source, "0");
	print_column(f, "lineNumber", x, nfn, func_line, "0");
	print_repeat(f, "columnNumber", nfn, "0");
	print_repeat(f, "originalLocation", nfn, "0");
	fprintf(f, "\"length\":%zu},\"resourceTable\":{", nfn);
	print_column(f, "name", x, nl, lib_name, "0");
	print_repeat(f, "host", nl, "null");
	print_repeat(f, "type", nl, "1");
	fprintf(f, "\"length\":%zu},\"nativeSymbols\":{\"libIndex\":[],\"address\":[],"
		   "\"name\":[],\"functionSize\":[],\"length\":0},", nl);
	fprintf(f, "\"sources\":{\"length\":%zu,", x->sources.n);
	print_repeat(f, "id", x->sources.n, "null");
	print_column(f, "filename", x, x->sources.n, source_file, "0");
	print_repeat(f, "startLine", x->sources.n, "1");
	print_repeat(f, "startColumn", x->sources.n, "1");
	print_repeat(f, "sourceMapURL", x->sources.n, "null");
	fputs("\"content\":[", f);
	for (size_t i = 0; i < x->sources.n; i++)
		fputs(i ? ",null" : "null", f);
	fputs("]},\"sourceLocationTable\":{\"source\":[],\"line\":[],\"column\":[],\"length\":0},"
	      "\"stringArray\":[", f);
	for (size_t i = 0; i < x->strs.n; i++) {
		fputs(i ? "," : "", f);
		json_print_string(f, x->strs.v[i]);
	}
	fputs("]}", f);
}

static void ff_free(struct ff *x)
{
	vec_free(&x->strs);
	idhash_free(&x->str_index);
	free(x->func_of);
	vec_free(&x->funcs);
	free(x->lib_of);
	vec_free(&x->libs);
	vec_free(&x->sources);
	idhash_free(&x->source_index);
	vec_free(&x->frames);
	idhash_free(&x->frame_index);
	vec_free(&x->stacks);
	idhash_free(&x->stack_index);
	vec_free(&x->samples);
	free(x->threads);
}

static int metric_of(const struct prof *p, const char *type)
{
	int m = prof_find_metric(p, type, NULL);
	return m < 0 ? -1 : m;
}

int rep_firefox(FILE *f, const struct prof *p, int metric, const char *name)
{
	struct ff x = {
		.f = f, .p = p,
		.metric = metric < 0 ? prof_info(p)->default_metric : metric,
		.off_metric = metric_of(p, PROF_OFF_CPU_METRIC),
		.hits_metric = metric_of(p, "hits"),
		.nthreads = prof_nthreads(p),
	};
	if ((size_t)x.metric >= prof_nmetrics(p))
		return err_set(-EINVAL, "the profile has no metric %d", x.metric);
	size_t nf = prof_nframes(p) ? prof_nframes(p) : 1, nm = prof_nmodules(p) ? prof_nmodules(p) : 1;
	x.func_of = malloc(nf * sizeof(*x.func_of));
	x.lib_of = malloc(nm * sizeof(*x.lib_of));
	x.threads = rep_threads_sorted(p);
	uint32_t names[NNAMES];
	int rc = x.func_of && x.lib_of && x.threads ? 0 : oom();
	if (!rc) {
		memset(x.func_of, 0xff, nf * sizeof(*x.func_of));
		memset(x.lib_of, 0xff, nm * sizeof(*x.lib_of));
		names[NAME_OFF_CPU] = str_index(&x, "off-CPU");
		names[NAME_HIT] = str_index(&x, "probe hit");
		names[NAME_GIL_HELD] = str_index(&x, "GIL held");
		names[NAME_GIL_NOT_HELD] = str_index(&x, "GIL not held");
		for (int k = 0; k < NNAMES; k++)
			if (names[k] == NO_INDEX)
				rc = oom();
	}
	if (!rc)
		rc = collect(&x);
	if (!rc) {
		fputc('{', f);
		print_meta(f, &x, name);
		fputc(',', f);
		print_libs(f, &x);
		fputc(',', f);
		print_threads(f, &x, name, names);
		fputc(',', f);
		print_shared(f, &x);
		fputs("}\n", f);
		if (ferror(f))
			rc = err_set(-EIO, "write error");
	}
	ff_free(&x);
	return rc;
}
