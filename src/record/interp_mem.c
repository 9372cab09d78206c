/*
 * The read of a live process's memory for the interpreters' walks (interp.h), with
 * process_vm_readv (the lead's record/interp:, until it lands on main).
 */
#include "record/interp.h"

#include <errno.h>
#include <sys/uio.h>

int rec_mem_read_process(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv((pid_t)(uintptr_t)arg, &local, 1, &remote, 1, 0);
	return got == (ssize_t)n ? 0 : -EIO;
}
