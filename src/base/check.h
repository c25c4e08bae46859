// CHECK for broken invariants (bugs), never for bad input.
#ifndef AIPROF_SRC_BASE_CHECK_H_
#define AIPROF_SRC_BASE_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define AIPROF_CHECK(cond)                                                   \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                          \
    }                                                                        \
  } while (0)

#endif  // AIPROF_SRC_BASE_CHECK_H_
