// glibc's malloc introspection lives in <malloc.h>, which Swift's Glibc module does not export.
#include "CBenchSupport.h"

#include <stdlib.h>  // defines __GLIBC__ (through features.h) where glibc is the C library

#if defined(__GLIBC__)
#include <malloc.h>
#endif

long long strata_bench_heap_bytes_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}

void strata_bench_trim_heap(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
