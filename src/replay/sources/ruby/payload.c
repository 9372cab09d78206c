/*
 * Parser of the Ruby records (payload.h), through a cursor over the raw bytes: anything
 * that runs past them, an unknown type, more frames or lines than the caps or a reserved
 * field that is not 0 makes the record malformed.
 */
#include "replay/sources/ruby/payload.h"

#include <errno.h>

#include "base/cursor.h"
#include "base/err.h"

bool replay_rb_is_payload(const uint8_t *raw, size_t size)
{
	struct cur c = cur_make(raw, size, false);
	return cur_u32(&c) == PERF_RB_MAGIC && cur_ok(&c);
}

static int parse_stack(struct cur *c, struct replay_rb_payload *out)
{
	out->pid = cur_u32(c);
	out->tid = cur_u32(c);
	out->nframes = cur_u32(c);
	uint32_t reserved = cur_u32(c);
	if (!cur_ok(c))
		return err_set(-EINVAL, "ruby record: stack header runs past the record");
	if (reserved)
		return err_set(-EINVAL, "ruby record: stack's reserved field is 0x%x, not 0", reserved);
	if (out->nframes > PERF_RB_MAX_FRAMES)
		return err_set(-EINVAL, "ruby record: %u frames, more than %u", out->nframes,
			       PERF_RB_MAX_FRAMES);
	out->frames = cur_bytes(c, (uint64_t)out->nframes * sizeof(struct perf_rb_frame));
	if (!cur_ok(c))
		return err_set(-EINVAL, "ruby record: %u frames run past the record", out->nframes);
	return 0;
}

static int parse_iseq(struct cur *c, struct replay_rb_payload *out)
{
	out->pid = cur_u32(c);
	uint32_t reserved = cur_u32(c);
	out->addr = cur_u64(c);
	out->first_lineno = (int32_t)cur_u32(c);
	out->label_len = cur_u16(c);
	out->path_len = cur_u16(c);
	out->nlines = cur_u32(c);
	if (!cur_ok(c))
		return err_set(-EINVAL, "ruby record: iseq header runs past the record");
	if (reserved)
		return err_set(-EINVAL, "ruby record: iseq's reserved field is 0x%x, not 0", reserved);
	if (out->label_len > PERF_RB_LABEL_MAX || out->path_len > PERF_RB_PATH_MAX ||
	    out->nlines > PERF_RB_LINES_MAX)
		return err_set(-EINVAL, "ruby record: iseq of %u, %u bytes and %u lines, over the caps",
			       out->label_len, out->path_len, out->nlines);
	out->label = (const char *)cur_bytes(c, out->label_len);
	out->path = (const char *)cur_bytes(c, out->path_len);
	out->lines = cur_bytes(c, (uint64_t)out->nlines * sizeof(struct perf_rb_line));
	if (!cur_ok(c))
		return err_set(-EINVAL, "ruby record: iseq of %u+%u bytes and %u lines runs past the record",
			       out->label_len, out->path_len, out->nlines);
	return 0;
}

static int parse_cfunc(struct cur *c, struct replay_rb_payload *out)
{
	out->pid = cur_u32(c);
	uint32_t reserved = cur_u32(c);
	out->addr = cur_u64(c);
	out->func = cur_u64(c);
	out->label_len = cur_u16(c);
	reserved |= cur_u16(c);
	reserved |= cur_u32(c);
	if (!cur_ok(c))
		return err_set(-EINVAL, "ruby record: cfunc header runs past the record");
	if (reserved)
		return err_set(-EINVAL, "ruby record: cfunc's reserved fields are not 0");
	if (out->label_len > PERF_RB_LABEL_MAX)
		return err_set(-EINVAL, "ruby record: cfunc name of %u bytes, over %u",
			       out->label_len, PERF_RB_LABEL_MAX);
	out->label = (const char *)cur_bytes(c, out->label_len);
	if (!cur_ok(c))
		return err_set(-EINVAL, "ruby record: cfunc name runs past the record");
	return 0;
}

int replay_rb_parse(const uint8_t *raw, size_t size, struct replay_rb_payload *out)
{
	*out = (struct replay_rb_payload){ 0 };
	struct cur c = cur_make(raw, size, false);
	uint32_t magic = cur_u32(&c);
	uint16_t type = cur_u16(&c);
	out->flags = cur_u16(&c);
	if (!cur_ok(&c) || magic != PERF_RB_MAGIC)
		return err_set(-EINVAL, "ruby record: no TRB1 magic");
	out->type = type;
	if (type == PERF_RB_STACK)
		return parse_stack(&c, out);
	if (type == PERF_RB_ISEQ)
		return parse_iseq(&c, out);
	if (type == PERF_RB_CFUNC)
		return parse_cfunc(&c, out);
	return err_set(-EINVAL, "ruby record: unknown type %u", type);
}

struct perf_rb_frame replay_rb_frame_at(const struct replay_rb_payload *p, uint32_t i)
{
	struct cur c = cur_make(p->frames + (size_t)i * sizeof(struct perf_rb_frame),
				sizeof(struct perf_rb_frame), false);
	struct perf_rb_frame f;
	f.addr = cur_u64(&c);
	f.pc = (int32_t)cur_u32(&c);
	f.fflags = cur_u32(&c);
	return f;
}

struct perf_rb_line replay_rb_line_at(const struct replay_rb_payload *p, uint32_t i)
{
	struct cur c = cur_make(p->lines + (size_t)i * sizeof(struct perf_rb_line),
				sizeof(struct perf_rb_line), false);
	struct perf_rb_line l;
	l.pos = cur_u32(&c);
	l.line = (int32_t)cur_u32(&c);
	return l;
}
