/*
 * Unit heads: the first bytes of a unit (its header and root DIE) read from the file with
 * pread rather than through the mapping. Opening a reader reads every unit's header and
 * root DIE and nothing else of .debug_info; when units are large, each header lies on a
 * page of its own, and touching it through the mapping costs a page fault. On the virtual
 * machines tally runs on a fault costs 10 to 20 us, a read of a few hundred bytes 1 to 2:
 * python3.11d's 180 units, 55 KiB each on average, took 2.4 to 3.8 ms of page faults and
 * take 0.3 ms of reads. Runs of small units are read through the mapping as before: the
 * kernel maps 64 KiB around a fault, so their headers share a fault; libc6-dbg's 2,000
 * units of 3 KiB on average took 100 faults, and would take 2,000 reads.
 */
#include <errno.h>
#include <unistd.h>

#include "dwarf/dwarf_internal.h"

/* Below this .debug_info takes a few faults whatever its units are. Fuzzing builds read
 * heads of any, as front.c reads any front. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define HEADS_MIN_SECTION 1
#else
#define HEADS_MIN_SECTION (1u << 20)
#endif
/* The kernel maps this much around a fault (fault-around), when the pages are cached. */
#define WINDOW_SHIFT 16
/* Units shorter than this put eight or more headers in such a window, and eight reads cost
 * about one fault: after two of them in a row, the next are read through the mapping. */
#define SMALL_UNIT (8u << 10)
#define SMALL_RUN 2

void dwarf_heads_open(struct dwarf *d, struct dwarf_heads *h)
{
	const struct elf_section *s = elf_section_by_name(d->elf, ".debug_info");
	*h = (struct dwarf_heads){ .fd = -1 };
	bool sbpf = d->elf->machine == ELF_EM_BPF || d->elf->machine == ELF_EM_SBPF;
	if (!s || s->size < HEADS_MIN_SECTION || sbpf || !elf_section_stored_at(d->elf, s, &h->at))
		return; /* (sBPF DWARF is repaired in memory: the file's bytes are not it) */
	h->fd = elf_reopen(d->elf);
}

void dwarf_heads_close(struct dwarf_heads *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}

size_t dwarf_head_read(struct dwarf *d, struct dwarf_heads *h, uint64_t off,
		       uint8_t buf[DWARF_HEAD_MAX])
{
	uint64_t window = ((h->at + off) >> WINDOW_SHIFT) + 1;
	if (h->fd < 0 || window == h->window || h->small_run >= SMALL_RUN || off >= d->info.size) {
		h->window = window;
		return 0;
	}
	size_t want = d->info.size - off < DWARF_HEAD_MAX ? d->info.size - off : DWARF_HEAD_MAX;
	ssize_t n;
	do
		n = pread(h->fd, buf, want, (off_t)(h->at + off));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)want ? want : 0;
}

void dwarf_heads_note(struct dwarf_heads *h, const struct dwarf_unit *u)
{
	h->small_run = u->end - u->offset < SMALL_UNIT ? h->small_run + 1 : 0;
}

/* Where the mapping holds the byte the head holds at p. */
static const uint8_t *in_mapping(const struct dwarf *d, const struct dwarf_unit *u,
				 const uint8_t *p)
{
	return d->info.data + u->offset + (size_t)(p - u->head);
}

static bool in_head(const struct dwarf_unit *u, const void *p)
{
	uintptr_t at = (uintptr_t)p, lo = (uintptr_t)u->head;
	return at >= lo && at < lo + u->head_size;
}

void dwarf_head_repoint(const struct dwarf *d, const struct dwarf_unit *u, struct dwarf_die *die)
{
	for (uint16_t i = 0; i < die->nvals; i++) {
		struct dwarf_value *v = &die->vals[i];
		if (v->cls == DWC_STRING && v->str && in_head(u, v->str))
			v->str = (const char *)in_mapping(d, u, (const uint8_t *)v->str);
		else if (v->cls == DWC_BLOCK && v->block && in_head(u, v->block))
			v->block = in_mapping(d, u, v->block);
	}
}
