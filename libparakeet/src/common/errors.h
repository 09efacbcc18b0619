// The library's error types. Each carries an ErrorCode, which the C ABI hands to callers
// beside the message (parakeet_capi_*last_error_code), so that a server can tell a caller's
// mistake from a problem of the model file or a failure inside the library.
//
// Throw the class that says whose fault it is; the C ABI's guard maps every other exception to
// Internal (std::bad_alloc to OutOfMemory).
#pragma once

#include <stdexcept>
#include <string>

namespace pk {

// The values of the C ABI's PARAKEET_ERROR_* (include/parakeet_capi.h); never renumber.
enum class ErrorCode : int {
    None = 0,
    InvalidArgument = 1,
    InvalidAudio = 2,
    BadModel = 3,
    Unsupported = 4,
    Cancelled = 5,
    OutOfMemory = 6,
    Internal = 7,
};

class Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
    ErrorCode code() const noexcept { return code_; }

private:
    ErrorCode code_;
};

// The caller gave an unusable argument or option: NULL, a negative length, an unknown
// decoder or key, a value out of range.
class InvalidArgument : public Error {
public:
    explicit InvalidArgument(const std::string& what) : Error(ErrorCode::InvalidArgument, what) {}
};

// The audio cannot be used: an unreadable or unsupported file, non-finite samples, a sample
// rate out of range.
class InvalidAudio : public Error {
public:
    explicit InvalidAudio(const std::string& what) : Error(ErrorCode::InvalidAudio, what) {}
};

// The model file is not a model this engine can run: not GGUF, truncated, another
// architecture, a missing tensor, a wrong shape, an unsupported setting.
class ModelError : public Error {
public:
    explicit ModelError(const std::string& what) : Error(ErrorCode::BadModel, what) {}
};

// A well-formed request this model or machine cannot serve: a head or model kind it lacks
// (beam search on a CTC-only model, a VAD context asked to transcribe), or an instruction set
// the CPU lacks.
class Unsupported : public Error {
public:
    explicit Unsupported(const std::string& what) : Error(ErrorCode::Unsupported, what) {}
};

// The caller's progress callback asked to stop the request (see RequestControl).
class Cancelled : public Error {
public:
    explicit Cancelled(const std::string& what) : Error(ErrorCode::Cancelled, what) {}
};

}  // namespace pk
