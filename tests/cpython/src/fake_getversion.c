/*
 * Not an interpreter: just what tally reads of one before 3.11 to learn its version, for
 * tests/cpython/layout.test.sh. _PyRuntime and Py_Initialize as CPython exports them, and
 * Py_GetVersion() formatting PY_VERSION (-DVERSION) as CPython's does, so that the
 * compiler loads the constant's address as it would there: a rip-relative lea when built
 * with -pie, a mov of an absolute address without.
 */
#include <stdio.h>
char _PyRuntime[64];
void Py_Initialize(void) {}
__attribute__((noinline)) const char *Py_GetBuildInfo(void) { return "main, Jan 1 2024"; }
__attribute__((noinline)) const char *Py_GetCompiler(void) { return "[GCC 12.2.0]"; }
#ifndef VERSION
#define VERSION "3.7.2"
#endif
const char *Py_GetVersion(void)
{
	static char version[250];
	snprintf(version, sizeof(version), "%.80s (%.80s) %.80s", VERSION, Py_GetBuildInfo(), Py_GetCompiler());
	return version;
}
int main(void) { puts(Py_GetVersion()); return 0; }
