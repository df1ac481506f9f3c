#ifndef C_BENCH_SUPPORT_H
#define C_BENCH_SUPPORT_H

#include <stddef.h>

/// Bytes the C heap has handed out and not taken back (glibc mallinfo2: arena bytes in use plus mmapped
/// blocks), or -1 where glibc's malloc introspection is missing.
long long strata_bench_heap_bytes_in_use(void);

/// Returns freed heap memory to the system where the C library can (glibc malloc_trim); else does nothing.
void strata_bench_trim_heap(void);

#endif
