/*
 * Mutexes for locks held a few hundred nanoseconds at a time by threads that take them
 * thousands of times: an adaptive mutex spins a little before sleeping in the kernel, where
 * a context switch would cost more than the wait.
 */
#ifndef TALLY_BASE_MUTEX_H
#define TALLY_BASE_MUTEX_H

#include <pthread.h>

static inline void mutex_init_adaptive(pthread_mutex_t *m)
{
	pthread_mutexattr_t spin;
	pthread_mutexattr_init(&spin);
	pthread_mutexattr_settype(&spin, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(m, &spin);
	pthread_mutexattr_destroy(&spin);
}

#endif
