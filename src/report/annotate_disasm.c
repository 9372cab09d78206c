/*
 * Disassembler backends, chosen by the ELF machine of the module. capstone decodes x86-64,
 * i386 and aarch64. sBPF (EM_BPF 247, EM_SBPF 263) is decoded by src/sbpf, which main does
 * not have yet: its row will name a `decode` function instead of a capstone architecture,
 * an adapter over sbpf_disasm_raw() (on the sbpf branch) taking the version from e_flags
 * (0..4 are v0..v4) and returning 16 for lddw, 8 for any other slot. Until then annotate
 * reports that there is no disassembler and lists weights by address with source lines.
 */
#include "report/annotate_impl.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "elf/elf.h"

/* Decodes one instruction as annot_disasm_one() does; elf_flags is the module's e_flags
 * (sBPF keeps its version there). */
typedef size_t (*decode_fn)(uint32_t elf_flags, const uint8_t *code, size_t size, uint64_t addr,
			    char *text, size_t text_size);

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
};

struct annot_disasm {
	const struct backend *b;
	uint32_t elf_flags;
	csh cs;
	cs_insn *insn;
};

int annot_disasm_open(uint16_t machine, uint32_t elf_flags, struct annot_disasm **out)
{
	const struct backend *b = NULL;
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i].machine == machine)
			b = &backends[i];
	if (!b) {
		if (machine == ELF_EM_BPF || machine == ELF_EM_SBPF)
			return err_set(-ENOTSUP, "no sBPF disassembler yet");
		return err_set(-ENOTSUP, "no disassembler for ELF machine %u", machine);
	}
	struct annot_disasm *d = calloc(1, sizeof(*d));
	if (!d)
		return err_set(-ENOMEM, "out of memory");
	d->b = b;
	d->elf_flags = elf_flags;
	if (!b->decode) {
		if (cs_open(b->cs_arch, b->cs_mode, &d->cs) != CS_ERR_OK) {
			free(d);
			return err_set(-ENOTSUP, "capstone cannot disassemble %s", b->arch);
		}
		d->insn = cs_malloc(d->cs);
		if (!d->insn) {
			cs_close(&d->cs);
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
	if (!cs_disasm_iter(d->cs, &p, &size, &a, d->insn))
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
		cs_free(d->insn, 1);
	if (!d->b->decode)
		cs_close(&d->cs);
	free(d);
}
