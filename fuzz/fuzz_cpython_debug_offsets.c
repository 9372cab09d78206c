/*
 * libFuzzer target: CPython 3.13's _Py_DebugOffsets (cpython/debug_offsets.c), the block at
 * the start of _PyRuntime that tally reads 3.13's layout from. The input is the block; a
 * layout accepted must keep every field inside the structure the block declares for it
 * (at most 16 MiB), _co_firsttraceable before the bytecode, and say it is 3.13's. The
 * seeds are pyenv's 3.13.0 block and a few of its fields pushed to the edges.
 */
#include <stdint.h>
#include <stdlib.h>

#include "cpython/layout.h"

#define LIMIT (16u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpy_layout l = { .sz = sizeof(l) };
	if (cpy_debug_offsets_parse(data, size, 0x030d00f0, "fuzz", &l))
		return 0;
	const uint32_t offs[] = { l.runtime.interpreters_head, l.interp.next,
				  l.interp.threads_head, l.thread.next, l.thread_current_frame,
				  l.thread.native_thread_id, l.frame.f_code, l.frame.previous,
				  l.frame.prev_instr, l.frame.owner, l.code.qualname,
				  l.code.filename, l.code.linetable, l.code.code_adaptive,
				  l.object.bytes_sval, l.unicode.length, l.unicode.ascii_size };
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		if (offs[i] > LIMIT)
			abort();
	if (l.variant != CPY_VARIANT_313 || l.source != CPY_FROM_DEBUG_OFFSETS ||
	    l.code.firsttraceable + 4 > l.code.code_adaptive ||
	    l.unicode.compact_size != l.unicode.ascii_size + 16)
		abort();
	return 0;
}
