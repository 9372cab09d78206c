/* Symbolizer corpus: the second translation unit of the main program (util.c). */
#ifndef CORPUS_UTIL_H
#define CORPUS_UTIL_H

#include <stddef.h>

int util_checksum(const char *s, size_t n);
int util_matrix(int n);
int util_unused(int n);

#endif
