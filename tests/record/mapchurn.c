/* Maps ever new files executable, and forks short-lived children, for argv[2] seconds: what
 * tally record must follow without holding more memory as time goes by. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void churn_spin(void) { for (int i = 0; i < 20000; i++) sink += i; }
int main(int argc, char **argv)
{
	const char *dir = argv[1];
	double secs = atof(argv[2]);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	static char page[4096];
	unsigned long k = 0;
	for (;; k++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
		char p[4096];
		snprintf(p, sizeof(p), "%s/mapped-file-number-%lu.so", dir, k);
		int fd = open(p, O_CREAT | O_RDWR | O_TRUNC, 0600);
		if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page))
			return 1;
		void *m = mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m != MAP_FAILED)
			munmap(m, sizeof(page));
		unlink(p);
		if (k % 64 == 0) {
			pid_t c = fork();
			if (c == 0)
				_exit(0);
			waitpid(c, NULL, 0);
		}
		churn_spin();
	}
	printf("%lu\n", k);
	return 0;
}
