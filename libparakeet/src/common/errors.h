// The library's error types. Everything derives from std::runtime_error; the C ABI turns any
// exception into an error string, and uses the type to tell a caller's mistake from a
// problem of the model file.
#pragma once

#include <stdexcept>

namespace pk {

// The caller gave something unusable: bad audio (unreadable, not PCM, non-finite samples,
// too long), a bad argument (NULL, negative length, unknown decoder).
class InvalidInput : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The model file is readable GGUF but not a model this engine can run (another architecture,
// a missing tensor, a wrong shape, an unsupported setting).
class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The caller's progress callback asked to stop the request (see RequestControl).
class Cancelled : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace pk
