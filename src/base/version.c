/*
 * The library's identity (the version of the libtally running, as tally.h declared it when
 * the library was built) and its error-message accessor (the messages live in base/err.c).
 */
#include "base/err.h"
#include "tally/tally.h"

const char *tally_version(void)
{
	return TALLY_VERSION;
}

uint32_t tally_version_major(void)
{
	return TALLY_VERSION_MAJOR;
}

uint32_t tally_version_minor(void)
{
	return TALLY_VERSION_MINOR;
}

const char *tally_errmsg(void)
{
	return err_msg();
}
