// Small owners for the C ABI's results in tests: a loaded context freed at scope end, and a
// returned string taken over as std::string.
#pragma once

#include <string>

#include "parakeet_capi.h"

namespace capi_handles {

struct Ctx {
    parakeet_ctx* p;
    explicit Ctx(const std::string& path) : p(parakeet_capi_load(path.c_str())) {}
    ~Ctx() { parakeet_capi_free(p); }
    Ctx(const Ctx&) = delete;
    Ctx& operator=(const Ctx&) = delete;
};

// Takes over a returned string ("" for NULL).
inline std::string take(char* s) {
    if (s == nullptr) return "";
    std::string out(s);
    parakeet_capi_free_string(s);
    return out;
}

}  // namespace capi_handles
