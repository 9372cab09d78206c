/*
 * Parser of the CPython frame payloads (payload.h). A payload is read through a
 * cursor over the raw bytes; anything that runs past them, an unknown type, more frames
 * than the cap or a reserved field that is not 0 makes the payload malformed.
 */
#include "replay/sources/python/payload.h"

#include <errno.h>

#include "base/cursor.h"
#include "base/err.h"

int replay_py_is_payload(const uint8_t *raw, size_t size)
{
	struct cur c = cur_make(raw, size, false);
	return cur_u32(&c) == PERF_PY_MAGIC && cur_ok(&c);
}

static int parse_stack(struct cur *c, struct replay_py_payload *out)
{
	out->pid = cur_u32(c);
	out->tid = cur_u32(c);
	out->nframes = cur_u32(c);
	uint32_t reserved = cur_u32(c);
	if (!cur_ok(c))
		return err_set(-EINVAL, "python payload: stack header runs past the record");
	if (reserved)
		return err_set(-EINVAL, "python payload: stack's reserved field is 0x%x, not 0",
			       reserved);
	if (out->nframes > PERF_PY_MAX_FRAMES)
		return err_set(-EINVAL, "python payload: %u frames, more than %u", out->nframes,
			       PERF_PY_MAX_FRAMES);
	out->frames = cur_bytes(c, (uint64_t)out->nframes * sizeof(struct perf_py_frame));
	if (!cur_ok(c))
		return err_set(-EINVAL, "python payload: %u frames run past the record",
			       out->nframes);
	return 0;
}

static int parse_code(struct cur *c, struct replay_py_payload *out)
{
	out->pid = cur_u32(c);
	uint32_t reserved = cur_u32(c);
	out->code = cur_u64(c);
	out->firstlineno = (int32_t)cur_u32(c);
	out->qualname_len = cur_u16(c);
	out->filename_len = cur_u16(c);
	out->linetable_len = cur_u32(c);
	if (!cur_ok(c))
		return err_set(-EINVAL, "python payload: code header runs past the record");
	if (reserved)
		return err_set(-EINVAL, "python payload: code's reserved field is 0x%x, not 0",
			       reserved);
	out->qualname = (const char *)cur_bytes(c, out->qualname_len);
	out->filename = (const char *)cur_bytes(c, out->filename_len);
	out->linetable = cur_bytes(c, out->linetable_len);
	if (!cur_ok(c))
		return err_set(-EINVAL, "python payload: code of %u+%u+%u bytes runs past the record",
			       out->qualname_len, out->filename_len, out->linetable_len);
	return 0;
}

int replay_py_parse(const uint8_t *raw, size_t size, struct replay_py_payload *out)
{
	*out = (struct replay_py_payload){ 0 };
	struct cur c = cur_make(raw, size, false);
	uint32_t magic = cur_u32(&c);
	uint16_t type = cur_u16(&c);
	out->flags = cur_u16(&c);
	if (!cur_ok(&c) || magic != PERF_PY_MAGIC)
		return err_set(-EINVAL, "python payload: no TPY1 magic");
	out->type = type;
	if (type == PERF_PY_STACK)
		return parse_stack(&c, out);
	if (type == PERF_PY_CODE)
		return parse_code(&c, out);
	return err_set(-EINVAL, "python payload: unknown type %u", type);
}

struct perf_py_frame replay_py_frame_at(const struct replay_py_payload *p, uint32_t i)
{
	struct cur c = cur_make(p->frames + (size_t)i * sizeof(struct perf_py_frame),
				sizeof(struct perf_py_frame), false);
	struct perf_py_frame f;
	f.code = cur_u64(&c);
	f.lasti = (int32_t)cur_u32(&c);
	f.fflags = cur_u32(&c);
	return f;
}
