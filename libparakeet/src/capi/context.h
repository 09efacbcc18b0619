// parakeet_ctx, the C ABI's handle, and the error bookkeeping every entry point shares.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/errors.h"
#include "model/diar/diar_model.h"
#include "model/model.h"
#include "model/model_kind.h"
#include "model/offline/request_batcher.h"
#include "model/sound/ced_model.h"
#include "model/speaker/speaker_encoder.h"
#include "model/vad/silero_model.h"

struct parakeet_ctx {
    // What the context holds; the member of that kind is set, the others are null.
    pk::ModelKind kind = pk::ModelKind::None;
    std::unique_ptr<pk::Model> model;  // kind Asr
    std::unique_ptr<pk::SileroVad> vad;  // kind Vad (shared read-only by its streams)
    std::unique_ptr<pk::DiarModel> diar;  // kind Diarization
    std::unique_ptr<pk::CedModel> sound;  // kind Sound (shared read-only by its calls and streams)
    std::unique_ptr<pk::speaker::SpeakerEncoder> speaker;  // kind Speaker

    // Kind Asr: the batcher of its offline requests (parakeet_capi_set_request_batching), null
    // when off. A request holds its own reference, so turning batching off or changing it never
    // pulls it from under a running request.
    std::mutex batching_mu;
    std::shared_ptr<pk::RequestBatcher> request_batcher;

    // The message and code of the most recently finished call on this context ("" and None
    // after a success).
    std::mutex error_mu;
    std::string last_error;
    pk::ErrorCode last_error_code = pk::ErrorCode::None;
    // Kind Speaker: the fingerprint warning of the last registry call that used this encoder
    // ("" when it matched), under error_mu.
    std::string speaker_warning;
};

namespace pk::capi {

// The request batcher of an ASR context (null: batching is off), as the context holds it now.
std::shared_ptr<RequestBatcher> request_batcher(parakeet_ctx* ctx);

// Records the outcome of a call: on the calling thread (exact, read by
// parakeet_capi_thread_last_error[_code]) and, when ctx is not NULL, on the context.
void set_error(parakeet_ctx* ctx, ErrorCode code, const std::string& message);
void clear_error(parakeet_ctx* ctx);

// The calling thread's last error ("" and None when its last call succeeded).
const std::string& thread_error();
ErrorCode thread_error_code();

// The code a caller sees for `e`: its own for the library's errors (common/errors.h),
// OutOfMemory for std::bad_alloc, Internal for anything else.
ErrorCode error_code_of(const std::exception& e);

// Runs `body` (which returns a result of type R), turning every exception into an error
// recorded by set_error and the `failure` result. A success clears the errors.
template <class R, class Body>
R guarded(parakeet_ctx* ctx, R failure, Body&& body) noexcept {
    try {
        R result = body();
        clear_error(ctx);
        return result;
    } catch (const std::bad_alloc&) {
        set_error(ctx, ErrorCode::OutOfMemory, "out of memory");
    } catch (const std::exception& e) {
        set_error(ctx, error_code_of(e), e.what());
    } catch (...) {
        set_error(ctx, ErrorCode::Internal, "unknown error");
    }
    return failure;
}

// The ASR model of a context, for the entry points that transcribe: throws InvalidArgument
// for ctx NULL and Unsupported when the context holds another kind of model.
Model& asr_model(parakeet_ctx* ctx);

// The Silero VAD model of a context, for the VAD entry points: throws InvalidArgument for ctx
// NULL and Unsupported when the context holds another kind of model.
const SileroVad& vad_model(parakeet_ctx* ctx);

// The diarization model of a context, for the diarize entry points: throws InvalidArgument for
// ctx NULL and Unsupported (parakeet.cpp's message) when the context holds another kind.
DiarModel& diar_model(parakeet_ctx* ctx);

// The CED sound tagger of a context, for the sound entry points: throws InvalidArgument for ctx
// NULL and Unsupported (parakeet.cpp's message) when the context holds another kind.
const CedModel& sound_model(const parakeet_ctx* ctx);

// The speaker encoder of a context, for the speaker entry points: throws InvalidArgument for
// ctx NULL and Unsupported when the context holds another kind of model.
const speaker::SpeakerEncoder& speaker_model(parakeet_ctx* ctx);

// A malloc'd copy of s for the caller (freed with parakeet_capi_free_string). Throws
// std::bad_alloc.
char* to_c_string(const std::string& s);

}  // namespace pk::capi
