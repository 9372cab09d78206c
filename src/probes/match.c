/*
 * Probe patterns: "PROVIDER:NAME" with shell globs on each side (python:function__*),
 * or a bare NAME glob.
 */
#include <fnmatch.h>
#include <string.h>

#include "probes/usdt.h"

bool usdt_match(const struct usdt_probe *p, const char *pattern)
{
	const char *colon = strchr(pattern, ':');
	if (!colon)
		return !fnmatch(pattern, p->name, 0);
	size_t plen = (size_t)(colon - pattern);
	char prov[256];
	if (plen >= sizeof(prov))
		return false;
	memcpy(prov, pattern, plen);
	prov[plen] = 0;
	return !fnmatch(prov, p->provider, 0) && !fnmatch(colon + 1, p->name, 0);
}
