/*
 * Disassembler backends, chosen by the ELF machine of the module. capstone decodes x86-64,
 * i386 and aarch64; sBPF (EM_BPF 247, EM_SBPF 263) is decoded by src/sbpf's disassembler,
 * the version taken from e_flags (0..4 are v0..v4). Jump targets print as addresses, like
 * the listing's own column (`tally sbpf disasm` numbers them by pc instead: lbb_PC).
 */
#include "report/annotate_impl.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "elf/elf.h"
#include "report/capstone_load.h"
#include "sbpf/disasm.h"

/* Decodes one instruction as annot_disasm_one() does; elf_flags is the module's e_flags
 * (sBPF keeps its version there). */
typedef size_t (*decode_fn)(uint32_t elf_flags, const uint8_t *code, size_t size, uint64_t addr,
			    char *text, size_t text_size);

/* "jne r1, 0, lbb_N" (N in slots of the file's address space) -> "jne r1, 0, 0xADDR". */
static void label_to_address(char *text, size_t size)
{
	char *l = strstr(text, "lbb_");
	if (!l)
		return;
	unsigned long long slot = strtoull(l + 4, NULL, 10);
	snprintf(l, size - (size_t)(l - text), "%#llx", slot * SBPF_INSN_SIZE);
}

/* One sBPF slot, or both slots of lddw. */
static size_t decode_sbpf(uint32_t elf_flags, const uint8_t *code, size_t size, uint64_t addr,
			  char *text, size_t text_size)
{
	if (size < SBPF_INSN_SIZE)
		return 0;
	enum sbpf_version v = elf_flags <= SBPF_V4 ? (enum sbpf_version)elf_flags : SBPF_V0;
	bool lddw = sbpf_kind_of(v, code[0]) == SBPF_K_LDDW && size >= 2 * SBPF_INSN_SIZE;
	sbpf_disasm_raw(v, code, lddw ? code + SBPF_INSN_SIZE : NULL, addr / SBPF_INSN_SIZE, text,
			text_size);
	label_to_address(text, text_size);
	return lddw ? 2 * SBPF_INSN_SIZE : SBPF_INSN_SIZE;
}

struct backend {
	uint16_t machine;
	const char *arch;
	cs_arch cs_arch;
	cs_mode cs_mode;
	size_t granule;	  /* instruction alignment: what to skip over bytes that do not decode */
	decode_fn decode; /* a decoder of our own instead of capstone (the sBPF hook) */
};

static const struct backend backends[] = {
	{ EM_X86_64, "x86-64", CS_ARCH_X86, CS_MODE_64, 1, NULL },
	{ EM_386, "i386", CS_ARCH_X86, CS_MODE_32, 1, NULL },
	{ EM_AARCH64, "aarch64", CS_ARCH_ARM64, CS_MODE_ARM, 4, NULL },
	{ ELF_EM_BPF, "sbpf", 0, 0, 8, decode_sbpf },
	{ ELF_EM_SBPF, "sbpf", 0, 0, 8, decode_sbpf },
};

struct annot_disasm {
	const struct backend *b;
	uint32_t elf_flags;
	const struct capstone_api *cs_api;
	csh cs;
	cs_insn *insn;
};

int annot_disasm_open(uint16_t machine, uint32_t elf_flags, struct annot_disasm **out)
{
	const struct backend *b = NULL;
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i].machine == machine)
			b = &backends[i];
	if (!b)
		return err_set(-ENOTSUP, "no disassembler for ELF machine %u", machine);
	struct annot_disasm *d = calloc(1, sizeof(*d));
	if (!d)
		return err_set(-ENOMEM, "out of memory");
	d->b = b;
	d->elf_flags = elf_flags;
	if (!b->decode) {
		if (!(d->cs_api = capstone_api())) {
			free(d);
			return -ENOTSUP;
		}
		if (d->cs_api->open(b->cs_arch, b->cs_mode, &d->cs) != CS_ERR_OK) {
			free(d);
			return err_set(-ENOTSUP, "capstone cannot disassemble %s", b->arch);
		}
		d->insn = d->cs_api->malloc(d->cs);
		if (!d->insn) {
			d->cs_api->close(&d->cs);
			free(d);
			return err_set(-ENOMEM, "out of memory");
		}
	}
	*out = d;
	return 0;
}

const char *annot_disasm_arch(const struct annot_disasm *d)
{
	return d->b->arch;
}

size_t annot_disasm_granule(const struct annot_disasm *d)
{
	return d->b->granule;
}

size_t annot_disasm_one(struct annot_disasm *d, const uint8_t *code, size_t size, uint64_t addr,
			char *text, size_t text_size)
{
	if (d->b->decode)
		return d->b->decode(d->elf_flags, code, size, addr, text, text_size);
	const uint8_t *p = code;
	uint64_t a = addr;
	if (!d->cs_api->disasm_iter(d->cs, &p, &size, &a, d->insn))
		return 0;
	if (d->insn->op_str[0])
		snprintf(text, text_size, "%s %s", d->insn->mnemonic, d->insn->op_str);
	else
		snprintf(text, text_size, "%s", d->insn->mnemonic);
	return d->insn->size;
}

void annot_disasm_close(struct annot_disasm *d)
{
	if (!d)
		return;
	if (d->insn)
		d->cs_api->free(d->insn, 1);
	if (!d->b->decode)
		d->cs_api->close(&d->cs);
	free(d);
}
