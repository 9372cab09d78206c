/*
 * A tiny JIT for tests/jit/jit_cfi.test.sh: it copies a hand-assembled function into
 * anonymous executable memory and writes a jitdump (jitdump-specification.txt) announcing
 * it, then spins in a C callback that the JIT code calls. The JIT function keeps no frame
 * pointer: it uses %rbp as a scratch register (zeroed) across its call, as code built
 * without frame pointers may, so a frame-pointer walk cannot cross it. Its CFI, built here,
 * describes every instruction; with argument "cfi" the dump carries it in a
 * JIT_CODE_UNWINDING_INFO record before the JIT_CODE_LOAD, with "nocfi" it does not.
 *
 * The call chain, which the test checks: main -> run_jit -> jit_spin (JIT code) -> spin.
 * Usage: jit_cfi_prog cfi|nocfi MILLISECONDS (the dump is written in the working directory)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* push %rbp; sub $16,%rsp; xor %ebp,%ebp; call *%rdi; add $16,%rsp; pop %rbp; ret */
static const uint8_t code[] = {
	0x55,                   /* 0: push %rbp */
	0x48, 0x83, 0xec, 0x10, /* 1: sub $16, %rsp */
	0x31, 0xed,             /* 5: xor %ebp, %ebp */
	0xff, 0xd7,             /* 7: call *%rdi */
	0x48, 0x83, 0xc4, 0x10, /* 9: add $16, %rsp */
	0x5d,                   /* 13: pop %rbp */
	0xc3,                   /* 14: ret */
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t deadline;
static volatile uint64_t sink;

__attribute__((noinline)) static void spin(void)
{
	while (now_ns() < deadline)
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i * i;
}

struct buf {
	uint8_t v[1024];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->v))
		abort();
	memcpy(b->v + b->n, p, n);
	b->n += n;
}
static void put8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void pad4(struct buf *b, size_t from)
{
	while ((b->n - from) % 4)
		put8(b, 0); /* DW_CFA_nop */
}

/* .eh_frame (a CIE, the code's FDE, the terminator) and .eh_frame_hdr, as they lie when the
 * .eh_frame starts at eh (an address) and the header follows it; the code at at. */
static void build_cfi(struct buf *b, size_t *hdr_size, uint64_t at, uint64_t eh)
{
	/* CIE: version 1, "zR", code alignment 1, data alignment -8, return address column
	 * 16, FDE pointers pcrel|sdata4; CFA = rsp + 8, return address at CFA - 8. */
	put32(b, 0);
	size_t cie = b->n;
	put32(b, 0);
	const uint8_t cie_body[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
				     0x0c, 7, 8, 0x90, 1 };
	put(b, cie_body, sizeof(cie_body));
	pad4(b, cie - 4);
	memcpy(b->v + cie - 4, &(uint32_t){ (uint32_t)(b->n - cie) }, 4);
	/* FDE for [at, at + sizeof(code)). */
	size_t fde_start = b->n;
	put32(b, 0);
	size_t fde = b->n;
	put32(b, (uint32_t)(fde - (cie - 4))); /* back to the CIE */
	put32(b, (uint32_t)(int32_t)(at - (eh + b->n)));
	put32(b, sizeof(code));
	put8(b, 0); /* augmentation data length */
	const uint8_t insns[] = {
		0x41, 0x0e, 16, 0x86, 2, /* after push: CFA = rsp + 16, rbp at CFA - 16 */
		0x44, 0x0e, 32,          /* after sub: CFA = rsp + 32 */
		0x48, 0x0e, 16,          /* after add (13): CFA = rsp + 16 */
		0x41, 0x0e, 8, 0xc6,     /* after pop (14): CFA = rsp + 8, rbp restored */
	};
	put(b, insns, sizeof(insns));
	pad4(b, fde_start);
	memcpy(b->v + fde_start, &(uint32_t){ (uint32_t)(b->n - fde) }, 4);
	put32(b, 0); /* terminator */
	/* .eh_frame_hdr: version 1, eh_frame_ptr pcrel|sdata4, count udata4, table
	 * datarel|sdata4. */
	uint64_t hdr = eh + b->n;
	size_t h0 = b->n;
	const uint8_t head[] = { 1, 0x1b, 0x03, 0x3b };
	put(b, head, sizeof(head));
	put32(b, (uint32_t)(int32_t)(eh - (hdr + 4)));
	put32(b, 1);
	put32(b, (uint32_t)(int32_t)(at - hdr));
	put32(b, (uint32_t)(int32_t)(eh + fde_start - hdr));
	*hdr_size = b->n - h0;
}

static void record(FILE *f, uint32_t id, const void *body, size_t n, const void *tail,
		   size_t tail_n)
{
	size_t total = 16 + n + tail_n, padded = (total + 7) & ~(size_t)7;
	uint32_t h[2] = { id, (uint32_t)padded };
	uint64_t t = now_ns();
	fwrite(h, 4, 2, f);
	fwrite(&t, 8, 1, f);
	fwrite(body, 1, n, f);
	fwrite(tail, 1, tail_n, f);
	static const uint8_t zero[8];
	fwrite(zero, 1, padded - total, f);
}

__attribute__((noinline)) static void run_jit(void (*jit)(void (*)(void)))
{
	jit(spin);
	sink++; /* not a tail call */
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int with_cfi = !strcmp(argv[1], "cfi");
	deadline = now_ns() + (uint64_t)atoi(argv[2]) * 1000000u;
	uint8_t *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	/* Some distance into the page, as a JIT's code is, so that a lookup counted from the
	 * mapping's start instead of the code's would miss. */
	uint64_t at = (uint64_t)(uintptr_t)mem + 0x100;
	memcpy(mem + 0x100, code, sizeof(code));
	/* The CFI behind the code, where V8 keeps it and perf inject puts it. */
	uint64_t eh = (at + sizeof(code) + 7) & ~7ull;
	struct buf cfi = { .n = 0 };
	size_t hdr_size;
	build_cfi(&cfi, &hdr_size, at, eh);
	memcpy(mem + (eh - (uint64_t)(uintptr_t)mem), cfi.v, cfi.n);

	char path[64];
	snprintf(path, sizeof(path), "jit-%d.dump", getpid());
	FILE *f = fopen(path, "w+");
	if (!f)
		return 1;
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} header = { 0x4A695444, 1, 40, 62 /* EM_X86_64 */, 0, (uint32_t)getpid(), now_ns(), 0 };
	fwrite(&header, sizeof(header), 1, f);
	/* The marker: the dump mapped executable, which the recording sees. */
	fflush(f);
	void *marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0);
	if (marker == MAP_FAILED)
		return 1;
	if (with_cfi) {
		uint64_t u[3] = { cfi.n, hdr_size, cfi.n }; /* sizes: all, header, mapped */
		record(f, 4 /* JIT_CODE_UNWINDING_INFO */, u, sizeof(u), cfi.v, cfi.n);
	}
	struct {
		uint32_t pid, tid;
		uint64_t vma, code_addr, code_size, code_index;
	} load = { (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid), at, at, sizeof(code), 1 };
	char name_and_code[64 + sizeof(code)];
	static const char name[] = "jit_spin";
	memcpy(name_and_code, name, sizeof(name));
	memcpy(name_and_code + sizeof(name), code, sizeof(code));
	record(f, 0 /* JIT_CODE_LOAD */, &load, sizeof(load), name_and_code,
	       sizeof(name) + sizeof(code));
	fclose(f);
	run_jit((void (*)(void (*)(void)))(uintptr_t)at);
	munmap(marker, 4096);
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
