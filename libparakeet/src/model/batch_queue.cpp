#include "model/batch_queue.h"

#include <string>

#include "common/errors.h"

namespace pk {

BatchLimits::BatchLimits(const char* who, int max_batch_, int max_wait_ms)
    : max_batch(max_batch_), max_wait(max_wait_ms) {
    if (max_batch < 1) throw InvalidArgument(std::string(who) + ": max_batch must be at least 1");
    if (max_wait_ms < 0) throw InvalidArgument(std::string(who) + ": max_wait_ms must not be negative");
}

}  // namespace pk
