// RelPositionTable: the sinusoidal embeddings of relative positions used by rel_pos attention
// (NeMo RelPositionalEncoding): row r of a request of T frames is the embedding of position
// T-1-r, for r = 0 .. 2T-2.
//
// The table is built once per model for the longest request seen so far and shared read-only
// by all requests: a request takes a snapshot (shared_ptr), so a concurrent growth never
// disturbs it. Embeddings follow NeMo's float32 recipe: div_k = exp(2k · −ln(10000)/d),
// pe[pos][2k] = sin(pos · div_k), pe[pos][2k+1] = cos(pos · div_k).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "model/encoder/attention_setting.h"

namespace pk {

// The rows of relative positions that a sequence of T frames reads with a resolved attention
// (ConformerLayer::forward's pos): full, T-1 .. -(T-1); local [L, R], L .. -R; chunked [L, R],
// L+R .. -R. Consecutive rows of any table that reaches them.
struct PositionRows {
    int64_t top = 0;   // the largest position
    int64_t rows = 0;  // positions top down to top - rows + 1

    static PositionRows of(const AttentionSetting& resolved, int64_t T);
    // The table length (RelPositionTable::get) that holds them.
    int64_t reach() const { return std::max(top, rows - 1 - top) + 1; }
};

class RelPositionTable {
public:
    explicit RelPositionTable(int64_t d_model) : d_model_(d_model) {}

    // Holds positions P-1 down to -(P-1) in 2P-1 rows of d_model floats.
    struct Table {
        int64_t max_len = 0;  // P
        std::vector<float> rows;
        // The 2T-1 rows for a request of T <= P frames (positions T-1 .. -(T-1)).
        const float* for_length(int64_t T, int64_t d_model) const {
            return rows.data() + (max_len - T) * d_model;
        }
        // The first of `p`'s rows (position p.top); max_len >= p.reach().
        const float* at(const PositionRows& p, int64_t d_model) const {
            return rows.data() + (max_len - 1 - p.top) * d_model;
        }
    };

    // A table with max_len >= T (built or grown on demand; thread-safe).
    std::shared_ptr<const Table> get(int64_t T) const;

private:
    int64_t d_model_;
    mutable std::mutex mu_;
    mutable std::shared_ptr<const Table> table_;
};

}  // namespace pk
