/*
 * Commands started held (base/spawn.h): an exec failure comes back to the caller with its
 * errno and the command's name, a command runs once released (after the caller's hook),
 * one never released exits unrun, and no path leaves a descriptor open (counted in
 * /proc/self/fd before and after), also when a pipe cannot be made (the open-files limit
 * lowered).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/spawn.h"

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int exit_code(pid_t pid)
{
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Starts the command, releases it and reaps it: what the release returned, the exit code
 * in *code; every descriptor opened on the way is closed again. */
static int start_release_reap(const struct spawn_opts *o, struct spawn_cmd *c, int *code)
{
	int before = open_fds();
	assert_int_equal(spawn_start(o, c), 0);
	int r = spawn_release(c);
	spawn_close(c);
	*code = exit_code(c->pid);
	assert_int_equal(open_fds(), before);
	return r;
}

static void exec_failure_names_the_command(void **state)
{
	char *argv[] = { "/nonexistent/tally-spawn-test", NULL };
	struct spawn_opts o = { .path = argv[0], .argv = argv };
	struct spawn_cmd c;
	int code;
	assert_int_equal(start_release_reap(&o, &c, &code), -ENOENT);
	assert_int_equal(c.exec_errno, ENOENT);
	assert_string_equal(err_msg(), "/nonexistent/tally-spawn-test: No such file or directory");
	err_clear();
	assert_int_equal(code, 127);
}

static void missing_command_in_path_is_reported(void **state)
{
	char *argv[] = { "tally-spawn-test-no-such-command", NULL };
	struct spawn_opts o = { .argv = argv };
	struct spawn_cmd c;
	int code;
	assert_int_equal(start_release_reap(&o, &c, &code), -ENOENT);
	assert_string_equal(err_msg(),
			    "tally-spawn-test-no-such-command: No such file or directory");
	err_clear();
	assert_int_equal(code, 127);
}

static void ignore_term(void *arg)
{
	signal(SIGTERM, SIG_IGN);
}

/* The hook runs before exec: the shell inherits SIGTERM ignored and outlives its own. */
static void released_command_runs_after_the_hook(void **state)
{
	char *argv[] = { "sh", "-c", "kill -TERM $$; exit 7", NULL };
	struct spawn_opts o = { .argv = argv, .before_exec = ignore_term };
	struct spawn_cmd c;
	int code;
	assert_int_equal(start_release_reap(&o, &c, &code), 0);
	assert_int_equal(c.exec_errno, 0);
	assert_int_equal(code, 7);
}

static void unreleased_command_exits_unrun(void **state)
{
	char *argv[] = { "sh", "-c", "exit 7", NULL };
	struct spawn_opts o = { .argv = argv };
	int before = open_fds();
	struct spawn_cmd c;
	assert_int_equal(spawn_start(&o, &c), 0);
	spawn_close(&c);
	assert_int_equal(exit_code(c.pid), 127);
	assert_int_equal(open_fds(), before);
}

/* Room for one pipe but not two: the limit just above the two lowest free descriptors,
 * which the first pipe takes. It is closed again. */
static void failed_pipe_leaks_nothing(void **state)
{
	char *argv[] = { "true", NULL };
	struct spawn_opts o = { .argv = argv };
	int probe[2];
	assert_int_equal(pipe(probe), 0);
	close(probe[0]);
	close(probe[1]);
	struct rlimit old;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	struct rlimit low = { (rlim_t)(probe[0] > probe[1] ? probe[0] : probe[1]) + 1,
			      old.rlim_max };
	int before = open_fds();
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	struct spawn_cmd c;
	int r = spawn_start(&o, &c);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(r, -EMFILE);
	assert_string_equal(err_msg(), "pipe: Too many open files");
	err_clear();
	assert_int_equal(c.go, -1);
	assert_int_equal(c.failed, -1);
	assert_int_equal(open_fds(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exec_failure_names_the_command),
		cmocka_unit_test(missing_command_in_path_is_reported),
		cmocka_unit_test(released_command_runs_after_the_hook),
		cmocka_unit_test(unreleased_command_exits_unrun),
		cmocka_unit_test(failed_pipe_leaks_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
