/*
 * Whether a descriptor's reader is gone (base/file.h), against the kernel's own answer: a
 * write that fails with EPIPE (SIGPIPE ignored here). Pipes and stream sockets with and
 * without their reader, a regular file, /dev/null.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/file.h"

/* The kernel's answer for fd: its write fails with EPIPE. */
static bool write_says_gone(int fd)
{
	return write(fd, "x", 1) < 0 && errno == EPIPE;
}

static void pipe_reader_gone_once_closed(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_false(file_reader_gone(p[1]));
	assert_false(write_says_gone(p[1]));
	close(p[0]);
	assert_true(file_reader_gone(p[1]));
	assert_true(write_says_gone(p[1]));
	close(p[1]);
}

static void socket_reader_gone_once_peer_closed(void **state)
{
	(void)state;
	int s[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	assert_false(file_reader_gone(s[0]));
	assert_false(write_says_gone(s[0]));
	close(s[1]);
	assert_true(file_reader_gone(s[0]));
	assert_true(write_says_gone(s[0]));
	close(s[0]);
}

static void files_and_devices_have_no_reader_to_lose(void **state)
{
	(void)state;
	int fd = memfd_create("regular", 0); /* a regular file on no disk */
	assert_true(fd >= 0);
	assert_false(file_reader_gone(fd));
	assert_false(write_says_gone(fd));
	close(fd);
	fd = open("/dev/null", O_WRONLY);
	assert_true(fd >= 0);
	assert_false(file_reader_gone(fd));
	close(fd);
	assert_false(file_reader_gone(-1));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pipe_reader_gone_once_closed),
		cmocka_unit_test(socket_reader_gone_once_peer_closed),
		cmocka_unit_test(files_and_devices_have_no_reader_to_lose),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
