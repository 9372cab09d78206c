/* dlopen/dlclose of two libraries in turn (mapped at the same place), a forked child
 * doing the same, then an exec of argv[3]: samples must be unwound and named by the
 * mappings of their instant. The library is loaded on one CPU and run on another, so that
 * its mmap record and its samples come through different rings (which a recorder drains
 * one after the other). usage: churn ROUNDS LIBDIR [EXEC-PATH] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void to_cpu(int k)
{
	int n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(n > 1 ? k % n : 0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

__attribute__((noinline)) static long call_lib(const char *dir, int i)
{
	char path[4096];
	to_cpu(i);
	snprintf(path, sizeof(path), "%s/lib%s.so", dir, i % 2 ? "churn_b" : "churn_a");
	void *h = dlopen(path, RTLD_NOW);
	if (!h) { fprintf(stderr, "%s\n", dlerror()); exit(1); }
	long (*w)(long) = (long (*)(long))dlsym(h, i % 2 ? "work_b" : "work_a");
	to_cpu(i + 1);
	long r = w(3000000);
	dlclose(h);
	return r;
}
int main(int argc, char **argv)
{
	int rounds = atoi(argv[1]);
	long s = 0;
	pid_t child = fork();
	for (int i = 0; i < rounds; i++)
		s += call_lib(argv[2], i + (child == 0));
	if (child == 0)
		return (int)(s & 1);
	waitpid(child, NULL, 0);
	printf("%ld\n", s);
	if (argc > 3) {
		fflush(stdout);
		execl(argv[3], argv[3], "100", (char *)NULL);
		return 1;
	}
	return 0;
}
