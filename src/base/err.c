/*
 * Per-thread last-error message: see err.h.
 */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char msg[1024];

int err_set(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return code;
}

int err_prefix(int code, const char *fmt, ...)
{
	char old[sizeof(msg)], prefix[sizeof(msg)];
	snprintf(old, sizeof(old), "%s", msg[0] ? msg : "error");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	/* Truncation keeps the start of the message, which names the file. */
	if (snprintf(msg, sizeof(msg), "%.500s: %.500s", prefix, old) < 0)
		msg[0] = 0;
	return code;
}

const char *err_msg(void)
{
	return msg[0] ? msg : "unknown error";
}

void err_clear(void)
{
	msg[0] = 0;
}
