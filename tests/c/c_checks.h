/* The checking macro of the plain-C test programs: counts checks and failures, reports each
 * failure with its line, and lets the program go on (it prints "N passed, N failed" at the end
 * with report_checks()). */
#ifndef PARAKEET_TESTS_C_CHECKS_H
#define PARAKEET_TESTS_C_CHECKS_H

#include <stdio.h>
#include <string.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        ++g_checks;                                                                  \
        if (!(cond)) {                                                               \
            ++g_failures;                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

static int contains(const char* haystack, const char* needle) {
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

/* Prints the closing line and returns the exit status. */
static int report_checks(void) {
    printf("%d passed, %d failed\n", g_checks - g_failures, g_failures);
    return g_failures == 0 ? 0 : 1;
}

#endif
