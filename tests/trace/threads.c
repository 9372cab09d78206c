/*
 * Threads for `tally probes count -p`: perf counts tasks, so tally must attach to every
 * thread that exists, and inherit into threads created later. usage: threads N EARLY LATE
 * GOFILE: EARLY threads start at once and, like the main thread, wait for GOFILE (created
 * by the test once tally says it is counting), then fire tally_test:thread N times each;
 * then LATE new threads fire N times each. Prints the total fired; fails if a thread cannot
 * be created (which an inherited uprobe event once caused: see src/probes/attach.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <tally/trace.h>

static unsigned long n;
static const char *gofile;

static void wait_go(void)
{
	for (int i = 0; i < 60000 && access(gofile, F_OK); i++)
		usleep(1000);
}

static void *fire(void *early)
{
	if (early)
		wait_go();
	for (unsigned long i = 0; i < n; i++)
		TALLY_TRACEPOINT(tally_test, thread, i);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	n = strtoul(argv[1], NULL, 10);
	int early = atoi(argv[2]), late = atoi(argv[3]);
	gofile = argv[4];
	pthread_t t[64];
	if (early + late > 64)
		return 2;
	for (int i = 0; i < early; i++)
		if (pthread_create(&t[i], NULL, fire, (void *)1))
			return perror("pthread_create"), 1;
	fire((void *)1);
	for (int i = 0; i < early; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < late; i++)
		if (pthread_create(&t[early + i], NULL, fire, NULL))
			return perror("pthread_create"), 1;
	for (int i = 0; i < late; i++)
		pthread_join(t[early + i], NULL);
	printf("fired %lu\n", n * (unsigned long)(early + late + 1));
	return 0;
}
