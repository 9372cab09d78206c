/*
 * VM setup and the services syscalls use: the memory map (the Solana runtime's layout:
 * read-only data, stack, heap, input), compute-unit charging, access violations described
 * as the reference describes them, logs and return data.
 */
#include "sbpf/vm_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

static const char *const error_names[] = {
	[SBPF_OK] = "Ok",
	[SBPF_E_CALL_DEPTH_EXCEEDED] = "CallDepthExceeded",
	[SBPF_E_DIVIDE_BY_ZERO] = "DivideByZero",
	[SBPF_E_DIVIDE_OVERFLOW] = "DivideOverflow",
	[SBPF_E_EXECUTION_OVERRUN] = "ExecutionOverrun",
	[SBPF_E_CALL_OUTSIDE_TEXT_SEGMENT] = "CallOutsideTextSegment",
	[SBPF_E_EXCEEDED_MAX_INSTRUCTIONS] = "ExceededMaxInstructions",
	[SBPF_E_ACCESS_VIOLATION] = "AccessViolation",
	[SBPF_E_STACK_ACCESS_VIOLATION] = "StackAccessViolation",
	[SBPF_E_INVALID_INSTRUCTION] = "InvalidInstruction",
	[SBPF_E_UNSUPPORTED_INSTRUCTION] = "UnsupportedInstruction",
	[SBPF_E_SYSCALL_ERROR] = "SyscallError",
};

const char *sbpf_error_name(enum sbpf_error e)
{
	return (unsigned)e < sizeof(error_names) / sizeof(error_names[0]) ? error_names[e]
									    : "Unknown";
}

void sbpf_result_describe(const struct sbpf_result *r, char *buf, size_t size)
{
	const char *access = r->store ? "writing" : "reading";
	switch (r->error) {
	case SBPF_OK:
		snprintf(buf, size, "success");
		return;
	case SBPF_E_ACCESS_VIOLATION:
		snprintf(buf, size, "Access violation %s %llu bytes at address 0x%llx (in %s region)",
			 access, (unsigned long long)r->size, (unsigned long long)r->addr,
			 r->region);
		return;
	case SBPF_E_STACK_ACCESS_VIOLATION:
		snprintf(buf, size, "Access violation in stack frame %lld at address 0x%llx of size %llu",
			 (long long)r->stack_frame, (unsigned long long)r->addr,
			 (unsigned long long)r->size);
		return;
	case SBPF_E_SYSCALL_ERROR:
		snprintf(buf, size, "Syscall error: %s%s%s", r->syscall_error,
			 r->detail[0] ? ": " : "", r->detail);
		return;
	default:
		break;
	}
	/* the reference's Display texts */
	static const char *const text[] = {
		[SBPF_E_CALL_DEPTH_EXCEEDED] = "exceeded max BPF to BPF call depth",
		[SBPF_E_DIVIDE_BY_ZERO] = "divide by zero at BPF instruction",
		[SBPF_E_DIVIDE_OVERFLOW] = "division overflow at BPF instruction",
		[SBPF_E_EXECUTION_OVERRUN] =
			"attempted to execute past the end of the text segment at BPF instruction",
		[SBPF_E_CALL_OUTSIDE_TEXT_SEGMENT] = "callx attempted to call outside of the text segment",
		[SBPF_E_EXCEEDED_MAX_INSTRUCTIONS] = "exceeded CUs meter at BPF instruction",
		[SBPF_E_INVALID_INSTRUCTION] = "invalid BPF instruction",
		[SBPF_E_UNSUPPORTED_INSTRUCTION] = "unsupported BPF instruction",
	};
	const char *t = (unsigned)r->error < sizeof(text) / sizeof(text[0]) ? text[r->error] : NULL;
	snprintf(buf, size, "%s", t ? t : sbpf_error_name(r->error));
}

void sbpf_vm_access_fault(const struct sbpf_vm *vm, uint64_t addr, uint64_t size, bool store,
			  struct sbpf_result *res)
{
	res->addr = addr;
	res->size = size;
	res->store = store;
	/* The reference blames a stack frame for anything within a frame of the stack region
	 * (division truncates toward zero, so frame -1 and 0 both reach below the stack). */
	int64_t a = (int64_t)addr, base = (int64_t)SBPF_MM_STACK;
	int64_t diff = a < INT64_MIN + base ? INT64_MIN : a - base;
	int64_t frame = diff / (int64_t)SBPF_STACK_FRAME_SIZE;
	if (!sbpf_manual_stack_frame_bump(vm->prog->version) && frame >= -1 &&
	    frame <= (int64_t)vm->max_depth) {
		res->error = SBPF_E_STACK_ACCESS_VIOLATION;
		res->stack_frame = frame;
		return;
	}
	res->error = SBPF_E_ACCESS_VIOLATION;
	uint64_t idx = addr >> 32;
	const struct sbpf_region *r = idx < SBPF_NREGIONS ? &vm->regions[idx] : NULL;
	uint64_t span = r ? (r->gap_shift ? r->len * 2 : r->len) : 0;
	if (!r || (addr & 0xffffffffu) >= span)
		res->region = "unallocated";
	else
		res->region = (const char *[]){ "allocated", "program", "stack", "heap", "input" }[idx];
}

int sbpf_vm_create(const struct sbpf_program *p, const struct sbpf_vm_config *cfg,
		   struct sbpf_vm **out)
{
	static const struct sbpf_vm_config defaults;
	if (!cfg)
		cfg = &defaults;
	struct sbpf_vm *vm = calloc(1, sizeof(*vm));
	if (!vm)
		return err_set(-ENOMEM, "out of memory");
	vm->prog = p;
	vm->max_depth = SBPF_MAX_CALL_DEPTH;
	vm->budget = cfg->compute_budget ? cfg->compute_budget : 200000;
	vm->remaining = vm->budget;
	vm->stack_len = (uint64_t)SBPF_STACK_FRAME_SIZE * vm->max_depth;
	uint32_t heap_size = cfg->heap_size ? cfg->heap_size : SBPF_HEAP_SIZE_DEFAULT;
	vm->stack = calloc(vm->stack_len, 1);
	vm->heap = calloc(heap_size, 1);
	if (!vm->stack || !vm->heap) {
		sbpf_vm_free(vm);
		return err_set(-ENOMEM, "out of memory");
	}
	bool gaps = sbpf_stack_frame_gaps(p->version) && !cfg->no_stack_frame_gaps;
	struct sbpf_region *ro = &vm->regions[p->ro_vaddr >> 32];
	ro->host = (uint8_t *)p->ro;
	ro->len = p->ro_len;
	vm->regions[2] = (struct sbpf_region){ vm->stack, vm->stack_len, true, gaps ? 12 : 0 };
	vm->regions[3] = (struct sbpf_region){ vm->heap, heap_size, true, 0 };
	if (sbpf_manual_stack_frame_bump(p->version)) {
		vm->reg[10] = SBPF_MM_STACK + vm->stack_len;
	} else {
		vm->reg[10] = SBPF_MM_STACK + SBPF_STACK_FRAME_SIZE;
		vm->frame_step = (uint64_t)SBPF_STACK_FRAME_SIZE * (gaps ? 2 : 1);
	}
	vm->reg[1] = SBPF_MM_INPUT;
	vm->pc = p->entry_pc;
	*out = vm;
	return 0;
}

void sbpf_vm_free(struct sbpf_vm *vm)
{
	if (!vm)
		return;
	free(vm->stack);
	free(vm->heap);
	for (size_t i = 0; i < vm->logs.n; i++)
		free(vm->logs.v[i]);
	vec_free(&vm->logs);
	free(vm->return_data);
	arena_free(&vm->arena);
	free(vm);
}

void sbpf_vm_set_input(struct sbpf_vm *vm, uint8_t *input, size_t len, bool writable)
{
	vm->regions[4] = (struct sbpf_region){ input, len, writable, 0 };
}

void sbpf_vm_set_hooks(struct sbpf_vm *vm, const struct sbpf_hooks *hooks)
{
	vm->has_hooks = hooks != NULL;
	if (hooks)
		vm->hooks = *hooks;
}

void sbpf_vm_publish_pc(struct sbpf_vm *vm, struct tally_agent_thread *t)
{
	vm->published = t;
}

void sbpf_vm_set_user(struct sbpf_vm *vm, void *user)
{
	vm->user = user;
}

void *sbpf_vm_user(struct sbpf_vm *vm)
{
	return vm->user;
}

const struct sbpf_program *sbpf_vm_program(const struct sbpf_vm *vm)
{
	return vm->prog;
}

int sbpf_vm_run(struct sbpf_vm *vm, struct sbpf_result *res)
{
	if (vm->ran)
		return err_set(-EINVAL, "an sBPF VM runs once");
	vm->ran = true;
	memset(res, 0, sizeof(*res));
	vm->res = res;
	int rc = vm->published ? sbpf_interp_run_published(vm)
		 : vm->has_hooks ? sbpf_interp_run_hooked(vm) : sbpf_interp_run(vm);
	res->cu_used = vm->budget - vm->remaining;
	res->insns = res->cu_used - vm->syscall_cu;
	vm->res = NULL;
	return rc;
}

size_t sbpf_vm_log_count(const struct sbpf_vm *vm)
{
	return vm->logs.n;
}

const char *sbpf_vm_log_at(const struct sbpf_vm *vm, size_t i)
{
	return i < vm->logs.n ? vm->logs.v[i] : NULL;
}

const uint8_t *sbpf_vm_return_data(const struct sbpf_vm *vm, size_t *len)
{
	*len = vm->return_len;
	return vm->return_len ? vm->return_data : NULL;
}

uint64_t sbpf_vm_remaining(const struct sbpf_vm *vm)
{
	return vm->remaining;
}

int sbpf_vm_consume(struct sbpf_vm *vm, uint64_t cu)
{
	if (cu > vm->remaining) {
		vm->remaining = 0;
		return sbpf_vm_syscall_error(vm, "ComputationalBudgetExceeded",
					     "Computational budget exceeded");
	}
	vm->remaining -= cu;
	return 0;
}

int sbpf_vm_map(struct sbpf_vm *vm, uint64_t addr, uint64_t len, bool store, uint8_t **host)
{
	if (len == 0) {
		*host = NULL;
		return 0;
	}
	uint8_t *p = len <= UINT32_MAX ? sbpf_xlate(vm, addr, len, store) : NULL;
	if (p) {
		*host = p;
		return 0;
	}
	if (vm->res)
		sbpf_vm_access_fault(vm, addr, len, store, vm->res);
	vm->failed = true;
	return -EFAULT;
}

int sbpf_vm_syscall_error(struct sbpf_vm *vm, const char *name, const char *fmt, ...)
{
	vm->failed = true;
	if (!vm->res)
		return -EINVAL;
	vm->res->error = SBPF_E_SYSCALL_ERROR;
	snprintf(vm->res->syscall_error, sizeof(vm->res->syscall_error), "%s", name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(vm->res->detail, sizeof(vm->res->detail), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

char *sbpf_log_encode(const char *msg, size_t len)
{
	size_t nuls = 0;
	for (size_t i = 0; i < len; i++)
		nuls += !msg[i];
	char *line = malloc(len + nuls + 1), *o = line;
	for (size_t i = 0; line && i < len; i++) {
		if (msg[i]) {
			*o++ = msg[i];
		} else {
			*o++ = (char)0xc0;
			*o++ = (char)0x80;
		}
	}
	if (line)
		*o = 0;
	return line;
}

size_t sbpf_log_decode(const char *line, char *buf)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)line; *p; p++, n++) {
		bool nul = p[0] == 0xc0 && p[1] == 0x80;
		if (buf)
			buf[n] = nul ? 0 : (char)*p;
		p += nul;
	}
	return n;
}

int sbpf_vm_log(struct sbpf_vm *vm, const char *msg, size_t len)
{
	char *copy = sbpf_log_encode(msg, len);
	char **slot = copy ? vec_push(&vm->logs) : NULL;
	if (!slot) {
		free(copy);
		return -ENOMEM;
	}
	*slot = copy;
	return 0;
}

int sbpf_vm_set_return_data(struct sbpf_vm *vm, const uint8_t *data, size_t len)
{
	uint8_t *copy = len ? malloc(len) : NULL;
	if (len && !copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, data, len);
	free(vm->return_data);
	vm->return_data = copy;
	vm->return_len = len;
	return 0;
}

uint64_t *sbpf_vm_heap_cursor(struct sbpf_vm *vm)
{
	return &vm->heap_pos;
}

uint64_t sbpf_vm_heap_size(const struct sbpf_vm *vm)
{
	return vm->regions[3].len;
}

const char *sbpf_vm_current_syscall(const struct sbpf_vm *vm)
{
	return vm->cur_sc ? vm->cur_sc->name : NULL;
}
