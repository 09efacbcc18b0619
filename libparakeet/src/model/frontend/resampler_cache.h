// ResamplerCache: the resamplers a model has built, by input rate, for calls that bring audio
// at other rates than the model's. A resampler's filter table costs up to about 11 MB (rates
// whose ratio to the model's rate has many phases), so the cache keeps only the few most
// recently used: a caller sending every sample at a new rate cannot grow the process without
// bound. Callers hold their resampler by shared_ptr, so an eviction never frees one in use.
// A resampler is built outside the lock, so one slow build does not hold up calls at rates
// already cached; two threads missing on one rate at once may both build, and one copy wins.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

#include "model/frontend/resample.h"

namespace pk {

class ResamplerCache {
public:
    static constexpr size_t kDefaultCapacity = 4;

    explicit ResamplerCache(size_t capacity = kDefaultCapacity) : capacity_(capacity < 1 ? 1 : capacity) {}

    // The resampler from `in_rate` to `out_rate`, built on a miss (throws as Resampler does).
    std::shared_ptr<const Resampler> get(int in_rate, int out_rate);

    // Resamplers held now (at most the capacity).
    size_t size() const;

private:
    using Entry = std::shared_ptr<const Resampler>;
    // Moves the entry for the rates to the front and returns it; null when absent. Needs mu_.
    Entry find_locked(int in_rate, int out_rate);

    const size_t capacity_;
    mutable std::mutex mu_;
    std::list<Entry> entries_;  // most recently used first
};

}  // namespace pk
