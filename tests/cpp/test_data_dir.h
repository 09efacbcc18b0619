#pragma once
// Where the committed fixtures (tests/data) are: $PARAKEET_TEST_DATA when set (ctest sets it),
// else the source tree's tests/data that CMake compiled in, so a test binary run by hand from
// any folder finds them too.
#include <cstdlib>
#include <string>

#ifndef PARAKEET_TEST_DATA_DEFAULT
#define PARAKEET_TEST_DATA_DEFAULT "tests/data"
#endif

inline std::string test_data_dir() {
    const char* d = std::getenv("PARAKEET_TEST_DATA");
    return d ? d : PARAKEET_TEST_DATA_DEFAULT;
}
