#include "model/encoder/rel_position_table.h"

#include <cmath>

namespace pk {
namespace {

// Grow in steps so a stream of slightly longer requests does not rebuild the table each time.
constexpr int64_t kGrowthStep = 256;

}  // namespace

PositionRows PositionRows::of(const AttentionSetting& resolved, int64_t T) {
    const int L = resolved.left, R = resolved.right;
    switch (resolved.mode) {
    case AttentionSetting::Mode::Local:
        return {L, L + R + 1};
    case AttentionSetting::Mode::Chunked:
        return {L + R, L + 2 * R + 1};
    default:
        return {T - 1, 2 * T - 1};
    }
}

std::shared_ptr<const RelPositionTable::Table> RelPositionTable::get(int64_t T) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (table_ && table_->max_len >= T) return table_;
    auto t = std::make_shared<Table>();
    t->max_len = (T + kGrowthStep - 1) / kGrowthStep * kGrowthStep;
    const int64_t P = t->max_len, d = d_model_;
    t->rows.resize(static_cast<size_t>((2 * P - 1) * d));
    // NeMo: div_term = exp(arange(0, d, 2) * -(ln(10000) / d)) in float32.
    const float neg_log_base_over_d = static_cast<float>(-(std::log(10000.0) / static_cast<double>(d)));
    std::vector<float> div(static_cast<size_t>((d + 1) / 2));
    for (int64_t k = 0; k < (d + 1) / 2; ++k)
        div[static_cast<size_t>(k)] = std::exp(static_cast<float>(2 * k) * neg_log_base_over_d);
    for (int64_t r = 0; r < 2 * P - 1; ++r) {
        const float pos = static_cast<float>(P - 1 - r);
        float* row = t->rows.data() + r * d;
        for (int64_t k = 0; 2 * k < d; ++k) {
            const float angle = pos * div[static_cast<size_t>(k)];  // float32 product, as NeMo
            row[2 * k] = static_cast<float>(std::sin(static_cast<double>(angle)));
            if (2 * k + 1 < d) row[2 * k + 1] = static_cast<float>(std::cos(static_cast<double>(angle)));
        }
    }
    table_ = std::move(t);
    return table_;
}

}  // namespace pk
