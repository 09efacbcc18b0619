#include <cstdlib>
#include <cstring>
#include <new>

#include "capi/context.h"
#include "parakeet_capi.h"

namespace pk::capi {
namespace {

thread_local std::string t_error;

}  // namespace

void set_error(parakeet_ctx* ctx, const std::string& message) {
    t_error = message;
    if (ctx != nullptr) {
        std::lock_guard<std::mutex> lock(ctx->error_mu);
        ctx->last_error = message;
    }
}

void clear_error(parakeet_ctx* ctx) {
    t_error.clear();
    if (ctx != nullptr) {
        std::lock_guard<std::mutex> lock(ctx->error_mu);
        ctx->last_error.clear();
    }
}

const std::string& thread_error() { return t_error; }

char* to_c_string(const std::string& s) {
    char* out = static_cast<char*>(std::malloc(s.size() + 1));
    if (out == nullptr) throw std::bad_alloc();
    std::memcpy(out, s.data(), s.size());
    out[s.size()] = '\0';
    return out;
}

}  // namespace pk::capi

extern "C" {

const char* parakeet_capi_last_error(parakeet_ctx* ctx) {
    if (ctx == nullptr) return "context is NULL";
    std::lock_guard<std::mutex> lock(ctx->error_mu);
    ctx->returned_error = ctx->last_error;
    return ctx->returned_error.c_str();
}

const char* parakeet_capi_thread_last_error(void) { return pk::capi::thread_error().c_str(); }

void parakeet_capi_free_string(char* s) { std::free(s); }

}  // extern "C"
