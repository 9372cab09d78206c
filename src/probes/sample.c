/*
 * Argument sampling for `tally probes count --args` (see sample.h). Records are parsed
 * through the bounds-checked cursor: the kernel writes them, but a record that wraps the
 * ring is copied out first. An unsigned 8-byte argument that points at a printable C
 * string is shown as that string (read when the sample is processed, at the latest at the
 * task's exit stop (session.c), so a string the program changed within those milliseconds
 * shows its new text).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/err.h"
#include "probes/sample.h"

#define RING_PAGES 128 /* data pages per task: 512 KiB */
#define FRAME_BYTES 1024 /* copied when an argument is relative to a frame pointer */
#define MAX_ARGS 12

struct hist_entry {
	char text[48];
	uint64_t count;
	uint64_t hash;
};

struct usdt_hist {
	struct hist_entry *e; /* open addressing, cap a power of two, empty when count == 0 */
	size_t n, cap;
};

#if defined(__x86_64__)
#define HOST_ARCH USDT_ARCH_X86_64
/* perf_regs bits of rax..rdi, rbp, rsp, rip, r8..r15 (arch/x86/include/uapi/asm/perf_regs.h). */
static const int perf_bit[USDT_X86_NREGS] = { 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8 };
#define SP_REG USDT_X86_SP
#define IP_REG USDT_X86_IP
#define REGS_MASK 0xff01ffull
#elif defined(__aarch64__)
#define HOST_ARCH USDT_ARCH_AARCH64
/* x0..x30 are bits 0..30, sp 31 (arch/arm64/include/uapi/asm/perf_regs.h). */
static const int perf_bit[USDT_A64_NREGS] = {
	0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};
#define SP_REG USDT_A64_SP
#define IP_REG (-2) /* no pc operand on aarch64; the sampled pc is not decoded */
#define REGS_MASK 0xffffffffull
#endif

int usdt_sampler_init(struct usdt_sampler *s, const struct usdt_objects *objs, size_t nsites,
		      size_t nrows)
{
	memset(s, 0, sizeof(*s));
#ifdef HOST_ARCH
	for (size_t i = 0; i < objs->n; i++)
		if (objs->v[i].probes.n && objs->v[i].probes.arch != HOST_ARCH)
			return err_set(-ENOTSUP, "%s: --args: not this machine's architecture",
				       objs->v[i].path);
	s->arch = HOST_ARCH;
	s->cfg.regs_mask = REGS_MASK;
#else
	return err_set(-ENOTSUP, "--args is supported on x86-64 and aarch64 only");
#endif
	s->sites = calloc(nsites ? nsites : 1, sizeof(*s->sites));
	s->nsites = nsites;
	s->nhists = nrows * MAX_ARGS;
	s->hists = calloc(s->nhists ? s->nhists : 1, sizeof(*s->hists));
	if (!s->sites || !s->hists)
		return err_set(-ENOMEM, "out of memory");
	return 0;
}

const struct uprobe_sampling *usdt_sampler_config(const struct usdt_sampler *s)
{
	return &s->cfg;
}

/* Copies of the stack cost ring space on every hit: only as much as the stack-relative
 * arguments reach, a fixed frame when they are relative to the frame pointer. */
static uint32_t stack_reach(const struct usdt_probe *p, enum usdt_arch arch)
{
	uint64_t reach = 0;
	int fp = arch == USDT_ARCH_X86_64 ? USDT_X86_BP : 29;
	int sp = arch == USDT_ARCH_X86_64 ? USDT_X86_SP : USDT_A64_SP;
	for (size_t i = 0; i < p->nargs; i++) {
		const struct usdt_arg *a = &p->args[i];
		if (a->kind != USDT_ARG_MEM || a->index != USDT_NO_REG || a->symbol)
			continue;
		if (a->reg == sp && a->value >= 0 && a->value < 65536 - 16)
			reach = reach > (uint64_t)a->value + 16 ? reach : (uint64_t)a->value + 16;
		else if (a->reg == fp)
			reach = reach > FRAME_BYTES ? reach : FRAME_BYTES;
	}
	return (uint32_t)((reach + 7) & ~7ull);
}

void usdt_sampler_set_site(struct usdt_sampler *s, size_t i, struct usdt_object *obj,
			   struct usdt_probe *probe, size_t row)
{
	s->sites[i] = (struct sampler_site){ obj, probe, row };
	uint32_t reach = stack_reach(probe, s->arch);
	if (reach > s->cfg.stack_bytes)
		s->cfg.stack_bytes = reach;
}

bool usdt_sampler_needs_stop(const struct usdt_sampler *s, const struct usdt_probe *p)
{
	int fp = s->arch == USDT_ARCH_X86_64 ? USDT_X86_BP : 29;
	int sp = s->arch == USDT_ARCH_X86_64 ? USDT_X86_SP : USDT_A64_SP;
	for (size_t i = 0; i < p->nargs; i++) {
		const struct usdt_arg *a = &p->args[i];
		if (a->kind == USDT_ARG_MEM &&
		    (a->symbol || a->index != USDT_NO_REG || (a->reg != sp && a->reg != fp)))
			return true;
	}
	return false;
}

int usdt_sampler_add(struct usdt_sampler *s, int fd, pid_t tid, size_t site)
{
	uint64_t id;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id))
		return err_set(-errno, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	struct sampler_id *ids = realloc(s->ids, (s->nids + 1) * sizeof(*ids));
	if (!ids)
		return err_set(-ENOMEM, "out of memory");
	s->ids = ids;
	ids[s->nids++] = (struct sampler_id){ id, site };
	for (size_t i = 0; i < s->nrings; i++)
		if (s->rings[i].tid == tid)
			return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[i].fd)
				       ? err_set(-errno, "PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno))
				       : 0;
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)page * (RING_PAGES + 1);
	void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return err_set(-errno, "mapping a perf ring buffer: %s", strerror(errno));
	struct sampler_ring *r = realloc(s->rings, (s->nrings + 1) * sizeof(*r));
	if (!r) {
		munmap(base, len);
		return err_set(-ENOMEM, "out of memory");
	}
	s->rings = r;
	r[s->nrings++] = (struct sampler_ring){ fd, tid, base, (size_t)page * RING_PAGES };
	return 0;
}

static uint64_t hash_text(const char *t)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *t; t++)
		h = (h ^ (uint8_t)*t) * 1099511628211ull;
	return h | 1;
}

static void hist_add(struct usdt_hist *h, const char *text)
{
	if (2 * (h->n + 1) > h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct hist_entry *e = calloc(cap, sizeof(*e));
		if (!e)
			return;
		for (size_t i = 0; i < h->cap; i++) {
			if (!h->e[i].count)
				continue;
			size_t j = h->e[i].hash & (cap - 1);
			while (e[j].count)
				j = (j + 1) & (cap - 1);
			e[j] = h->e[i];
		}
		free(h->e);
		h->e = e, h->cap = cap;
	}
	uint64_t hash = hash_text(text);
	size_t j = hash & (h->cap - 1);
	while (h->e[j].count && (h->e[j].hash != hash || strcmp(h->e[j].text, text)))
		j = (j + 1) & (h->cap - 1);
	if (!h->e[j].count) {
		snprintf(h->e[j].text, sizeof(h->e[j].text), "%s", text);
		h->e[j].hash = hash;
		h->n++;
	}
	h->e[j].count++;
}

struct hit {
	uint32_t pid;
	const uint64_t *regs; /* by perf bit order; NULL if none */
	size_t nregs;
	const uint8_t *stack;
	uint64_t stack_size;
};

static bool reg_value(const struct hit *h, int reg, uint64_t *v)
{
	if (reg < 0 || !h->regs)
		return false;
	int bit = perf_bit[reg];
	size_t idx = (size_t)__builtin_popcountll(REGS_MASK & ((1ull << bit) - 1));
	if (idx >= h->nregs)
		return false;
	*v = h->regs[idx];
	return true;
}

static bool read_mem(const struct hit *h, uint64_t addr, void *out, size_t len)
{
	uint64_t sp;
	if (reg_value(h, SP_REG, &sp) && addr >= sp && addr - sp <= h->stack_size &&
	    h->stack_size - (addr - sp) >= len) {
		memcpy(out, h->stack + (addr - sp), len);
		return true;
	}
	struct iovec local = { out, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv((pid_t)h->pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* A printable NUL-terminated string at addr, or false. */
static bool read_string(const struct hit *h, uint64_t addr, char *out, size_t len)
{
	char buf[33];
	if (addr < 4096 || !read_mem(h, addr, buf, sizeof(buf)))
		return false;
	size_t n = 0;
	while (n < sizeof(buf) && buf[n] && isprint((unsigned char)buf[n]))
		n++;
	if (n == 0 || (n < sizeof(buf) && buf[n]))
		return false;
	snprintf(out, len, "\"%.*s%s\"", (int)(n < 32 ? n : 32), buf, n > 32 ? "..." : "");
	return true;
}

static bool arg_value(const struct hit *h, const struct usdt_probe *p, const struct usdt_arg *a,
		      uint64_t *v)
{
	uint64_t base = 0, index = 0, ip;
	switch (a->kind) {
	case USDT_ARG_CONST:
		*v = (uint64_t)a->value;
		return true;
	case USDT_ARG_REG:
		if (!reg_value(h, a->reg, v))
			return false;
		*v >>= a->reg_shift;
		return true;
	case USDT_ARG_MEM:
		/* A symbol is at its link-time address moved by the object's load bias, which
		 * the hit gives: the sampled ip less the probe's link-time address. With a
		 * symbol, %rip as base only says "position-independent": the symbol is the
		 * address (what the assembler made rip-relative). */
		if (a->symbol) {
			if (!a->symbol_found || !reg_value(h, IP_REG, &ip))
				return false;
			base = a->symbol_addr + (ip - p->pc);
			if (a->reg != USDT_NO_REG && a->reg != IP_REG && !reg_value(h, a->reg, &index))
				return false;
			base += index, index = 0;
		} else if (a->reg == IP_REG) {
			return false; /* relative to the next instruction, which the note does not give */
		} else if (a->reg != USDT_NO_REG && !reg_value(h, a->reg, &base)) {
			return false;
		}
		if (a->index != USDT_NO_REG && !reg_value(h, a->index, &index))
			return false;
		*v = 0;
		return read_mem(h, base + index * (uint64_t)a->scale + (uint64_t)a->value, v,
				a->size < 8 ? (size_t)a->size : 8);
	}
	return false;
}

static void format_arg(const struct hit *h, const struct usdt_probe *p, const struct usdt_arg *a,
		       char *out, size_t len)
{
	uint64_t v;
	if (!arg_value(h, p, a, &v)) {
		snprintf(out, len, "?");
		return;
	}
	int bits = a->size < 8 ? a->size * 8 : 64;
	if (bits < 64)
		v &= (1ull << bits) - 1;
	if (a->is_float && a->size == 4) {
		float f;
		uint32_t u = (uint32_t)v;
		memcpy(&f, &u, sizeof(f));
		snprintf(out, len, "%g", (double)f);
	} else if (a->is_float && a->size == 8) {
		double d;
		memcpy(&d, &v, sizeof(d));
		snprintf(out, len, "%g", d);
	} else if (a->is_signed) {
		int64_t sv = bits < 64 && (v >> (bits - 1)) ? (int64_t)(v | ~((1ull << bits) - 1))
							    : (int64_t)v;
		snprintf(out, len, "%" PRId64, sv);
	} else if (a->size == 8 && v >= 0x100000 && !read_string(h, v, out, len)) {
		snprintf(out, len, "0x%" PRIx64, v); /* a pointer, most likely */
	} else if (a->size != 8 || v < 0x100000) {
		snprintf(out, len, "%" PRIu64, v);
	}
}

static void handle_sample(struct usdt_sampler *s, const uint8_t *rec, size_t len)
{
	struct cur c = cur_make(rec, len, false);
	uint64_t id = cur_u64(&c);
	struct hit h = { .pid = cur_u32(&c) };
	cur_u32(&c); /* tid */
	uint64_t abi = cur_u64(&c);
	if (abi) {
		h.nregs = (size_t)__builtin_popcountll(s->cfg.regs_mask);
		h.regs = (const uint64_t *)cur_bytes(&c, h.nregs * 8);
	}
	uint64_t size = s->cfg.stack_bytes ? cur_u64(&c) : 0;
	const uint8_t *stack = cur_bytes(&c, size);
	uint64_t dyn = size ? cur_u64(&c) : 0;
	if (!cur_ok(&c))
		return;
	h.stack = stack;
	h.stack_size = dyn < size ? dyn : size;
	const struct sampler_site *site = NULL;
	for (size_t i = 0; i < s->nids && !site; i++)
		if (s->ids[i].id == id)
			site = &s->sites[s->ids[i].site];
	if (!site)
		return;
	size_t nargs = site->probe->nargs < MAX_ARGS ? site->probe->nargs : MAX_ARGS;
	for (size_t i = 0; i < nargs; i++) {
		char text[48];
		format_arg(&h, site->probe, &site->probe->args[i], text, sizeof(text));
		hist_add(&s->hists[site->row * MAX_ARGS + i], text);
	}
}

static void drain_ring(struct usdt_sampler *s, struct sampler_ring *r)
{
	struct perf_event_mmap_page *meta = (void *)r->base;
	const uint8_t *data = r->base + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	static uint8_t copy[65536];
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header hdr;
		for (size_t i = 0; i < sizeof(hdr); i++)
			((uint8_t *)&hdr)[i] = data[(tail + i) % r->size];
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;
		for (size_t i = 0; i < hdr.size; i++)
			copy[i] = data[(tail + i) % r->size];
		if (hdr.type == PERF_RECORD_SAMPLE)
			handle_sample(s, copy + sizeof(hdr), hdr.size - sizeof(hdr));
		else if (hdr.type == PERF_RECORD_LOST && hdr.size >= sizeof(hdr) + 16)
			s->lost += load_u64(copy + sizeof(hdr) + 8, false);
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void usdt_sampler_drain(struct usdt_sampler *s)
{
	for (size_t i = 0; i < s->nrings; i++)
		drain_ring(s, &s->rings[i]);
}

static int cmp_entries(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

void usdt_sampler_finish(struct usdt_sampler *s, struct usdt_count_result *res)
{
	res->lost = s->lost;
	for (size_t row = 0; row < res->n && row * MAX_ARGS < s->nhists; row++) {
		struct usdt_count_row *r = &res->v[row];
		for (size_t a = 0; a < r->nargs; a++) {
			struct usdt_hist *h = &s->hists[row * MAX_ARGS + a];
			size_t k = 0;
			for (size_t i = 0; i < h->cap; i++)
				if (h->e[i].count)
					h->e[k++] = h->e[i];
			qsort(h->e, k, sizeof(*h->e), cmp_entries);
			if (a == 0)
				for (size_t i = 0; i < k; i++)
					r->samples += h->e[i].count;
			r->ntop[a] = k < 5 ? k : 5;
			for (size_t i = 0; i < r->ntop[a]; i++) {
				snprintf(r->top[a][i].text, sizeof(r->top[a][i].text), "%s", h->e[i].text);
				r->top[a][i].count = h->e[i].count;
			}
			h->n = 0;
			memset(h->e, 0, h->cap * sizeof(*h->e));
		}
	}
}

void usdt_sampler_free(struct usdt_sampler *s)
{
	long page = sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < s->nrings; i++)
		munmap(s->rings[i].base, s->rings[i].size + (size_t)page);
	for (size_t i = 0; i < s->nhists; i++)
		free(s->hists[i].e);
	free(s->hists);
	free(s->rings);
	free(s->ids);
	free(s->sites);
	memset(s, 0, sizeof(*s));
}
