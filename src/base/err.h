/*
 * Error messages. Functions return 0 or a negative errno-style code; the words for the user
 * go into a per-thread buffer (like dlerror()), set where the failure is understood and read
 * by the command that prints `tally: MESSAGE`. Messages start with the file they concern.
 */
#ifndef TALLY_BASE_ERR_H
#define TALLY_BASE_ERR_H

/* Sets the message and returns code (negative), so callers can `return err_set(...)`. */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the current message with "prefix: ", keeping the code. */
int err_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *err_msg(void);
void err_clear(void);

#endif
