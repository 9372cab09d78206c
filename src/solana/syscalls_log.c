/*
 * The logging syscalls, charged as the Solana runtime (agave) charges them with its default
 * execution costs: syscall_base_cost 100, log_64_units 100, log_pubkey_units 100. Log
 * lines are spelled as agave's log collector spells them ("Program log: ...",
 * "Program data: ..."); text a program logs must be UTF-8 (sol_check_utf8, which
 * sol_panic_ uses too). Also the reference VM's test syscall `log` (0 CU), which the
 * conformance ELFs call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "sbpf/vm.h"
#include "solana/encoding.h"
#include "solana/syscalls.h"

enum {
	SYSCALL_BASE_COST = 100,
	LOG_64_UNITS = 100,
	LOG_PUBKEY_UNITS = 100,
};

/* Logs "Program log: " + text, as agave's ic_logger_msg does for sol_log_. */
static int program_log(struct sbpf_vm *vm, const char *text, size_t len)
{
	char *line = malloc(len + 14);
	if (!line)
		return -ENOMEM;
	memcpy(line, "Program log: ", 13);
	if (len)
		memcpy(line + 13, text, len);
	int rc = sbpf_vm_log(vm, line, len + 13);
	free(line);
	return rc;
}

/* Where Rust's str::from_utf8 stops: the valid prefix's length, and the length of the
 * invalid sequence after it (its error_len), 0 when the input ends inside a sequence
 * that was valid so far. Returns false when all n bytes are UTF-8. */
static bool utf8_error(const uint8_t *p, size_t n, size_t *valid_up_to, size_t *error_len)
{
	for (size_t i = 0; i < n;) {
		uint8_t c = p[i];
		size_t width = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
			     : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		/* the second byte's range narrows for E0, ED, F0 and F4 (no overlong forms,
		 * surrogates, or code points past U+10FFFF) */
		uint8_t lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		uint8_t hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
		size_t k = 1;
		for (; width && k < width && i + k < n; k++) {
			uint8_t b = p[i + k];
			if (k == 1 ? b < lo || b > hi : (b & 0xc0) != 0x80)
				break;
		}
		if (width && k == width) {
			i += width;
			continue;
		}
		*valid_up_to = i;
		*error_len = width && i + k >= n ? 0 : k;
		return true;
	}
	return false;
}

int sol_check_utf8(struct sbpf_vm *vm, const uint8_t *p, size_t n)
{
	size_t at, len;
	if (!utf8_error(p, n, &at, &len))
		return 0;
	/* agave lists every byte; a list too long for the detail could never be logged whole
	 * (vm.h), so it is cut there */
	char bytes[SBPF_DETAIL_MAX - 96];
	size_t o = 0;
	for (size_t i = 0; i < n && o + 12 < sizeof(bytes); i++)
		o += (size_t)snprintf(bytes + o, sizeof(bytes) - o, "%s%u", i ? ", " : "", p[i]);
	const char *cut = o + 12 >= sizeof(bytes) ? ", ..." : "";
	if (!len)
		return sbpf_vm_syscall_error(vm, "InvalidString",
					     "incomplete utf-8 byte sequence from index %zu: [%s%s]",
					     at, bytes, cut);
	return sbpf_vm_syscall_error(vm, "InvalidString",
				     "invalid utf-8 sequence of %zu bytes from index %zu: [%s%s]", len,
				     at, bytes, cut);
}

/* The reference VM's test syscall: logs the bytes up to the first NUL, charges nothing. */
static int sys_test_log(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (a[1] == 0)
		return 0;
	uint8_t *p;
	if (sbpf_vm_map(vm, a[0], a[1], false, &p))
		return -EFAULT;
	size_t len = strnlen((const char *)p, a[1]);
	if (!utf8_valid(p, len))
		return sbpf_vm_log(vm, "Invalid UTF-8 String", 20);
	return sbpf_vm_log(vm, (const char *)p, len);
}

static int sys_log(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, a[1] > SYSCALL_BASE_COST ? a[1] : SYSCALL_BASE_COST))
		return -1;
	uint8_t *p;
	if (sbpf_vm_map(vm, a[0], a[1], false, &p))
		return -EFAULT;
	int rc = sol_check_utf8(vm, p, a[1]);
	return rc ? rc : program_log(vm, (const char *)p, a[1]);
}

static int sys_log_64(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, LOG_64_UNITS))
		return -1;
	char buf[160];
	int n = snprintf(buf, sizeof(buf), "0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx",
			 (unsigned long long)a[0], (unsigned long long)a[1],
			 (unsigned long long)a[2], (unsigned long long)a[3],
			 (unsigned long long)a[4]);
	return program_log(vm, buf, (size_t)n);
}

static int sys_log_compute_units(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, SYSCALL_BASE_COST))
		return -1;
	char buf[80];
	int n = snprintf(buf, sizeof(buf), "Program consumption: %llu units remaining",
			 (unsigned long long)sbpf_vm_remaining(vm));
	return sbpf_vm_log(vm, buf, (size_t)n);
}

static int sys_log_pubkey(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, LOG_PUBKEY_UNITS))
		return -1;
	uint8_t *p;
	if (sbpf_vm_map(vm, a[0], 32, false, &p))
		return -EFAULT;
	char b58[64];
	sol_base58_encode(p, 32, b58, sizeof(b58));
	return program_log(vm, b58, strlen(b58));
}

/* sol_log_data(fields: &[&[u8]]): "Program data: " + each field in base64, space-separated. */
static int sys_log_data(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (sbpf_vm_consume(vm, SYSCALL_BASE_COST))
		return -1;
	uint8_t *fields;
	if (a[1] > UINT32_MAX / 16 || sbpf_vm_map(vm, a[0], a[1] * 16, false, &fields))
		return -EFAULT;
	if (a[1] && a[0] % 8) /* a slice table (&[&[u8]]) is 8-byte aligned */
		return sbpf_vm_syscall_error(vm, "UnalignedPointer", "Unaligned pointer");
	if (sbpf_vm_consume(vm, SYSCALL_BASE_COST * a[1]))
		return -1;
	uint64_t total = 0;
	size_t cap = 16;
	for (uint64_t i = 0; i < a[1]; i++) {
		uint64_t len;
		memcpy(&len, fields + i * 16 + 8, 8);
		total += len;
		cap += (len / 3 + 1) * 4 + 1;
		if (len > UINT32_MAX)
			return sbpf_vm_syscall_error(vm, "InvalidLength", "field %llu too long",
						     (unsigned long long)i);
	}
	if (sbpf_vm_consume(vm, total))
		return -1;
	char *line = malloc(cap);
	if (!line)
		return -ENOMEM;
	size_t o = (size_t)snprintf(line, cap, "Program data: ");
	for (uint64_t i = 0; i < a[1]; i++) {
		uint64_t addr, len;
		memcpy(&addr, fields + i * 16, 8);
		memcpy(&len, fields + i * 16 + 8, 8);
		uint8_t *p;
		if (sbpf_vm_map(vm, addr, len, false, &p)) {
			free(line);
			return -EFAULT;
		}
		if (i)
			line[o++] = ' ';
		o += sol_base64_encode(p, len, line + o, cap - o);
	}
	int rc = sbpf_vm_log(vm, line, o);
	free(line);
	return rc;
}

int sol_syscalls_log(struct sbpf_syscalls *s, unsigned flags)
{
	static const struct sol_syscall_def calls[] = {
		{ "sol_log_", sys_log },
		{ "sol_log_64_", sys_log_64 },
		{ "sol_log_compute_units_", sys_log_compute_units },
		{ "sol_log_pubkey", sys_log_pubkey },
		{ "sol_log_data", sys_log_data },
	};
	int rc = sol_syscalls_add_all(s, calls, sizeof(calls) / sizeof(calls[0]));
	if (!rc && (flags & SOL_SYSCALLS_TEST_LOG))
		rc = sbpf_syscalls_add(s, "log", sys_test_log);
	return rc;
}
