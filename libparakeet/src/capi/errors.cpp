#include <cstdlib>
#include <cstring>
#include <new>

#include "capi/context.h"
#include "parakeet_capi.h"

namespace pk::capi {
namespace {

thread_local std::string t_error;
thread_local ErrorCode t_error_code = ErrorCode::None;
// What parakeet_capi_last_error() last returned to this thread: a copy of its own, so no
// other thread's call (or last_error call) can change or free it under the caller.
thread_local std::string t_returned_error;

}  // namespace

void set_error(parakeet_ctx* ctx, ErrorCode code, const std::string& message) {
    t_error = message;
    t_error_code = code;
    if (ctx != nullptr) {
        std::lock_guard<std::mutex> lock(ctx->error_mu);
        ctx->last_error = message;
        ctx->last_error_code = code;
    }
}

void clear_error(parakeet_ctx* ctx) {
    t_error.clear();
    t_error_code = ErrorCode::None;
    if (ctx != nullptr) {
        std::lock_guard<std::mutex> lock(ctx->error_mu);
        ctx->last_error.clear();
        ctx->last_error_code = ErrorCode::None;
    }
}

const std::string& thread_error() { return t_error; }

ErrorCode thread_error_code() { return t_error_code; }

ErrorCode error_code_of(const std::exception& e) {
    if (const auto* ours = dynamic_cast<const Error*>(&e)) return ours->code();
    if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return ErrorCode::OutOfMemory;
    return ErrorCode::Internal;
}

Model& asr_model(parakeet_ctx* ctx) {
    if (ctx == nullptr) throw InvalidArgument("context is NULL");
    if (ctx->kind == ModelKind::Diarization)  // parakeet.cpp's words
        throw Unsupported("context holds a diarization model; use parakeet_capi_diarize_*");
    if (ctx->kind == ModelKind::Sound)  // parakeet.cpp's words
        throw Unsupported("context holds a CED sound model; an ASR model is needed here");
    if (ctx->kind != ModelKind::Asr)
        throw Unsupported(std::string("this context holds a ") + model_kind_name(ctx->kind) +
                          " model, not a speech-recognition (ASR) model");
    return *ctx->model;
}

const SileroVad& vad_model(parakeet_ctx* ctx) {
    if (ctx == nullptr) throw InvalidArgument("context is NULL");
    if (ctx->kind != ModelKind::Vad)
        throw Unsupported(std::string("this context holds a ") + model_kind_name(ctx->kind) +
                          " model, not a Silero VAD model");
    return *ctx->vad;
}

DiarModel& diar_model(parakeet_ctx* ctx) {
    if (ctx == nullptr) throw InvalidArgument("context is NULL");
    if (ctx->kind == ModelKind::Asr)  // parakeet.cpp's words
        throw Unsupported("context holds an ASR model; diarize_* needs a diarization model");
    if (ctx->kind != ModelKind::Diarization)
        throw Unsupported(std::string("this context holds a ") + model_kind_name(ctx->kind) +
                          " model, not a diarization model");
    return *ctx->diar;
}

const CedModel& sound_model(const parakeet_ctx* ctx) {
    if (ctx == nullptr) throw InvalidArgument("context is NULL");
    if (ctx->kind != ModelKind::Sound)
        throw Unsupported(ctx->kind == ModelKind::None ? std::string("context has no loaded model")
                                                       : std::string("context holds ") +
                                                             (ctx->kind == ModelKind::Asr ? "an " : "a ") +
                                                             model_kind_name(ctx->kind) +
                                                             " model; a CED sound model is needed here");
    return *ctx->sound;
}

const speaker::SpeakerEncoder& speaker_model(parakeet_ctx* ctx) {
    if (ctx == nullptr) throw InvalidArgument("context is NULL");
    if (ctx->kind == ModelKind::None) throw Unsupported("context has no loaded model");  // parakeet.cpp's words
    if (ctx->kind != ModelKind::Speaker)
        throw Unsupported(std::string("context holds ") + (ctx->kind == ModelKind::Asr ? "an " : "a ") +
                          model_kind_name(ctx->kind) + " model; a speaker model is needed here");
    return *ctx->speaker;
}

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
    std::string copy;
    {
        std::lock_guard<std::mutex> lock(ctx->error_mu);
        copy = ctx->last_error;
    }
    pk::capi::t_returned_error.swap(copy);
    return pk::capi::t_returned_error.c_str();
}

int parakeet_capi_last_error_code(parakeet_ctx* ctx) {
    if (ctx == nullptr) return static_cast<int>(pk::ErrorCode::InvalidArgument);
    std::lock_guard<std::mutex> lock(ctx->error_mu);
    return static_cast<int>(ctx->last_error_code);
}

const char* parakeet_capi_thread_last_error(void) { return pk::capi::thread_error().c_str(); }

int parakeet_capi_thread_last_error_code(void) { return static_cast<int>(pk::capi::thread_error_code()); }

void parakeet_capi_free_string(char* s) { std::free(s); }

}  // extern "C"
