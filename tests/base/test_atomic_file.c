/*
 * Outputs replaced only when complete (base/atomic_file.h), in a directory of the test's
 * own: an existing file keeps its bytes until commit and after an abort, the replacement
 * keeps its mode, symlinks are followed to the file they name, and device nodes and FIFOs
 * (made here: the test runs as root) are written directly and survive an abort.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/atomic_file.h"
#include "base/err.h"

static char dir[PATH_MAX / 2];

static const char *at(const char *name)
{
	static char buf[2][PATH_MAX];
	static int which;
	which ^= 1;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", dir, name);
	return buf[which];
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void assert_content(const char *path, const char *text)
{
	char buf[256] = { 0 };
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	assert_int_equal(n, strlen(text));
	assert_string_equal(buf, text);
}

/* Entries in the directory besides . and .., so that a temporary left behind is seen. */
static int entries(void)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static struct afile *open_write(const char *path, const char *text)
{
	struct afile *a;
	assert_int_equal(afile_open(path, 0, &a), 0);
	FILE *f = afile_stream(a);
	assert_non_null(f);
	fputs(text, f);
	return a;
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/tally-afile-XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	return rmdir(dir); /* every test removes what it made: a leftover fails here */
}

static void existing_file_keeps_its_bytes_until_commit(void **state)
{
	put_file(at("out"), "old");
	struct afile *a = open_write(at("out"), "new");
	assert_false(afile_is_direct(a));
	fflush(afile_stream(a));
	assert_content(at("out"), "old");
	assert_int_equal(afile_commit(a), 0);
	assert_content(at("out"), "new");
	assert_int_equal(entries(), 1);
	unlink(at("out"));
}

static void abort_leaves_the_file_and_no_temporary(void **state)
{
	put_file(at("out"), "old");
	afile_abort(open_write(at("out"), "partial"));
	assert_content(at("out"), "old");
	assert_int_equal(entries(), 1);
	unlink(at("out"));
}

static void abort_of_a_new_file_creates_nothing(void **state)
{
	afile_abort(open_write(at("new"), "partial"));
	assert_int_equal(entries(), 0);
}

static void replacement_keeps_the_mode(void **state)
{
	put_file(at("out"), "old");
	chmod(at("out"), 0640);
	assert_int_equal(afile_commit(open_write(at("out"), "new")), 0);
	struct stat st;
	assert_int_equal(stat(at("out"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	unlink(at("out"));
}

static void new_file_gets_the_umask_mode(void **state)
{
	mode_t old = umask(027);
	assert_int_equal(afile_commit(open_write(at("new"), "x")), 0);
	umask(old);
	struct stat st;
	assert_int_equal(stat(at("new"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	unlink(at("new"));
}

static void symlink_is_followed_to_its_target(void **state)
{
	mkdir(at("sub"), 0755);
	put_file(at("sub/target"), "old");
	assert_int_equal(symlink("sub/target", at("link")), 0);
	afile_abort(open_write(at("link"), "partial"));
	assert_content(at("sub/target"), "old");
	assert_int_equal(afile_commit(open_write(at("link"), "new")), 0);
	struct stat st;
	assert_int_equal(lstat(at("link"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_content(at("sub/target"), "new");
	unlink(at("link"));
	unlink(at("sub/target"));
	rmdir(at("sub"));
}

static void dangling_symlink_creates_its_target(void **state)
{
	assert_int_equal(symlink("made", at("link")), 0);
	afile_abort(open_write(at("link"), "partial"));
	assert_int_equal(access(at("made"), F_OK), -1);
	assert_int_equal(afile_commit(open_write(at("link"), "new")), 0);
	assert_content(at("made"), "new");
	unlink(at("link"));
	unlink(at("made"));
}

static void fifo_is_written_directly_and_kept(void **state)
{
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	int rd = open(at("fifo"), O_RDWR | O_NONBLOCK); /* a reader, so the open does not wait */
	assert_true(rd >= 0);
	struct afile *a = open_write(at("fifo"), "through");
	assert_true(afile_is_direct(a));
	fflush(afile_stream(a));
	char buf[16] = { 0 };
	assert_int_equal(read(rd, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "through");
	afile_abort(a);
	struct stat st;
	assert_int_equal(lstat(at("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	close(rd);
	unlink(at("fifo"));
}

static void device_survives_abort_and_failed_commit(void **state)
{
	assert_int_equal(mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)), 0);
	assert_int_equal(mknod(at("full"), S_IFCHR | 0666, makedev(1, 7)), 0);
	afile_abort(open_write(at("null"), "partial"));
	assert_int_equal(afile_commit(open_write(at("null"), "x")), 0);
	err_clear();
	assert_int_equal(afile_commit(open_write(at("full"), "x")), -ENOSPC);
	assert_non_null(strstr(err_msg(), "full: write error: No space left on device"));
	struct stat st;
	assert_int_equal(lstat(at("null"), &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(lstat(at("full"), &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(entries(), 2);
	unlink(at("null"));
	unlink(at("full"));
}

static void proc_fd_link_is_written_directly(void **state)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[1]);
	struct afile *a = open_write(path, "piped");
	assert_true(afile_is_direct(a));
	assert_int_equal(afile_commit(a), 0);
	char buf[16] = { 0 };
	assert_int_equal(read(fds[0], buf, sizeof(buf)), 5);
	close(fds[0]);
	close(fds[1]);
}

static void dev_fd_of_a_shell_redirection_is_written_in_place(void **state)
{
	put_file(at("shell"), "old");
	int fd = open(at("shell"), O_WRONLY); /* as the shell opens `> shell` */
	assert_true(fd >= 0);
	struct stat before, after;
	assert_int_equal(fstat(fd, &before), 0);
	char path[64];
	snprintf(path, sizeof(path), "/dev/fd/%d", fd);
	struct afile *a = open_write(path, "appended");
	assert_true(afile_is_direct(a));
	assert_int_equal(afile_commit(a), 0);
	close(fd);
	assert_int_equal(stat(at("shell"), &after), 0); /* the same file, not a replacement */
	assert_int_equal(after.st_ino, before.st_ino);
	assert_content(at("shell"), "appended");
	assert_int_equal(entries(), 1);
	unlink(at("shell"));
}

static void missing_directory_is_an_error_naming_the_path(void **state)
{
	struct afile *a;
	assert_int_equal(afile_open(at("no/such/out"), 0, &a), -ENOENT);
	assert_non_null(strstr(err_msg(), "no/such/out: No such file or directory"));
	assert_int_equal(entries(), 0);
}

/* A pid no process has: a child's, once it has been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	if (!pid)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void set_mtime(const char *path, time_t sec)
{
	struct timespec times[2] = { { sec, 0 }, { sec, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

/* A writer killed before its commit leaves its temporary: found, the newest of those
 * whose process is gone, when it is later than the file at the path; a live writer's (this
 * process's), another file's and a malformed name are not. */
static void leftover_of_a_killed_writer_is_found(void **state)
{
	pid_t dead = dead_pid();
	char name[64], older[64];
	snprintf(name, sizeof(name), ".out.tally-%d-1", (int)dead);
	snprintf(older, sizeof(older), ".out.tally-%d-0", (int)dead);
	put_file(at(older), "older");
	set_mtime(at(older), 1000);
	put_file(at(name), "killed");
	set_mtime(at(name), 2000);
	struct afile *live = open_write(at("out"), "live");
	put_file(at(".other.tally-1-0"), "other");
	put_file(at(".out.tally-x-0"), "malformed");
	char *left = NULL;
	assert_int_equal(afile_leftover(at("out"), &left), 0); /* no file at the path */
	assert_string_equal(left, at(name));
	free(left);
	put_file(at("out"), "earlier");
	set_mtime(at("out"), 1500);
	assert_int_equal(afile_leftover(at("out"), &left), 0); /* an older file there */
	assert_string_equal(left, at(name));
	free(left);
	set_mtime(at("out"), 3000); /* a file later than both */
	assert_int_equal(afile_leftover(at("out"), &left), -ENOENT);
	unlink(at("out"));
	afile_abort(live);
	unlink(at(name));
	unlink(at(older));
	assert_int_equal(afile_leftover(at("out"), &left), -ENOENT);
	unlink(at(".other.tally-1-0"));
	unlink(at(".out.tally-x-0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(existing_file_keeps_its_bytes_until_commit),
		cmocka_unit_test(abort_leaves_the_file_and_no_temporary),
		cmocka_unit_test(abort_of_a_new_file_creates_nothing),
		cmocka_unit_test(replacement_keeps_the_mode),
		cmocka_unit_test(new_file_gets_the_umask_mode),
		cmocka_unit_test(symlink_is_followed_to_its_target),
		cmocka_unit_test(dangling_symlink_creates_its_target),
		cmocka_unit_test(fifo_is_written_directly_and_kept),
		cmocka_unit_test(device_survives_abort_and_failed_commit),
		cmocka_unit_test(proc_fd_link_is_written_directly),
		cmocka_unit_test(dev_fd_of_a_shell_redirection_is_written_in_place),
		cmocka_unit_test(missing_directory_is_an_error_naming_the_path),
		cmocka_unit_test(leftover_of_a_killed_writer_is_found),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
