// Helpers of the C-ABI tests on fixture models: an owning context handle loaded from a model
// directory, and taking a returned string.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "parakeet_capi.h"

namespace capi_test {

struct CtxDeleter {
    void operator()(parakeet_ctx* c) const { parakeet_capi_free(c); }
};
using Ctx = std::unique_ptr<parakeet_ctx, CtxDeleter>;

// <model_dir>/model.gguf; a failure to load is a test failure (and a null handle).
inline Ctx load(const std::string& model_dir) {
    Ctx c(parakeet_capi_load((model_dir + "/model.gguf").c_str()));
    if (!c) ADD_FAILURE() << parakeet_capi_load_error();
    return c;
}

// A returned string's text ("(null)" for NULL), freed.
inline std::string take(char* s) {
    std::string out = s != nullptr ? s : "(null)";
    parakeet_capi_free_string(s);
    return out;
}

}  // namespace capi_test
