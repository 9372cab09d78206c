/*
 * The library's identity and its error-message accessor (the messages live in base/err.c).
 */
#include "base/err.h"
#include "tally/tally.h"

const char *tally_errmsg(void)
{
	return err_msg();
}
