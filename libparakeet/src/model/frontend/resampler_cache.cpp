#include "model/frontend/resampler_cache.h"

namespace pk {

ResamplerCache::Entry ResamplerCache::find_locked(int in_rate, int out_rate) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if ((*it)->in_rate() == in_rate && (*it)->out_rate() == out_rate) {
            entries_.splice(entries_.begin(), entries_, it);
            return entries_.front();
        }
    }
    return nullptr;
}

std::shared_ptr<const Resampler> ResamplerCache::get(int in_rate, int out_rate) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (Entry hit = find_locked(in_rate, out_rate)) return hit;
    }
    auto built = std::make_shared<const Resampler>(in_rate, out_rate);
    std::lock_guard<std::mutex> lock(mu_);
    if (Entry raced = find_locked(in_rate, out_rate)) return raced;
    entries_.push_front(built);
    // The evicted resamplers are freed here, or by their last holder.
    while (entries_.size() > capacity_) entries_.pop_back();
    return built;
}

size_t ResamplerCache::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
}

}  // namespace pk
