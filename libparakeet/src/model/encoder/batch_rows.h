// The stacked rows of a batched offline encoder pass (FastConformerEncoder::forward_batch) and
// the kernels each product runs them by.
//
// A product's row depends only on that row given its kernels (kernels::MatmulPath), so the
// utterances of a batch keep their bits when their rows are stacked, provided that every row
// takes the path its utterance's pass alone gives it. Alone, a stage runs a product on a run of
// rows (the whole sequence, or a chunk of it) by auto_path of that run's length: few rows by
// the matrix-vector kernel, more by the GEMM tiles. RowPaths expresses "the first rows by the
// matrix-vector kernel, the rest by GEMM"; RowSegments cuts the stacked rows into segments of
// that form. The utterances with few frames come first, so a batch is one segment unless a
// long utterance ends in a short chunk.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/matmul.h"
#include "model/encoder/attention_setting.h"
#include "model/layers/linear.h"

namespace pk {

// Rows [begin, begin + rows) of the stack, run with `paths` (relative to row `begin`).
struct RowSegment {
    int64_t begin = 0;
    int64_t rows = 0;
    RowPaths paths{true, 0};
};

class RowSegments {
public:
    // Appends the rows of a product that runs them alone as one call (its path: auto_path(rows)).
    void add_whole(int64_t rows) { add(rows, kernels::auto_path(rows)); }
    // Appends the rows of a product that runs them alone in calls of `chunk` rows (the last
    // one shorter).
    void add_chunked(int64_t rows, int64_t chunk);

    const std::vector<RowSegment>& segments() const { return segments_; }

    // Calls body(r0, n, paths) for runs [r0, r0 + n) of at most `chunk` rows of each segment.
    template <class Body>
    void for_each_chunk(int64_t chunk, Body&& body) const {
        for (const RowSegment& s : segments_)
            for (int64_t r = 0; r < s.rows; r += chunk)
                body(s.begin + r, std::min(chunk, s.rows - r), s.paths.from(r));
    }

private:
    void add(int64_t rows, kernels::MatmulPath path);
    std::vector<RowSegment> segments_;
    int64_t end_ = 0;
};

// Told, by name, of each stage of a batched offline pass as it ends (several calls may name
// the same stage); bench/native/bench_batch_stages.cpp times the stages with it. May be empty.
using BatchStageMark = std::function<void(const char* stage)>;
inline void end_stage(const BatchStageMark& mark, const char* stage) {
    if (mark) mark(stage);
}

// One utterance's part of a batched offline pass (ConformerLayer::forward_batch).
struct UtteranceRows {
    int64_t row = 0;             // its first row in the stack
    int64_t rows = 0;            // its encoder frames (> 0)
    AttentionSetting attention;  // resolved for its length: Full, Local or Chunked
    const float* pos = nullptr;  // its relative positions, as ConformerLayer::forward takes them
    int64_t pos_rows = 0;        //   (rows of the batch's RelPositionTable snapshot)
    bool pos_shared = false;     // its positions lie in BatchRows::shared_pos and take GEMM alone
};

struct BatchRows {
    std::vector<UtteranceRows> utterances;
    int64_t total = 0;
    RowSegments row_wise;   // the stages that run alone in chunks of ConformerLayer::kRowChunk rows
    RowSegments attention;  // the attention's projections: the whole sequence alone (full,
                            // chunked), or chunks (local)
    // The rows of the position table that hold every shared utterance's positions: projected
    // once per layer by GEMM, which gives each of those rows the bits it gets alone.
    const float* shared_pos = nullptr;
    int64_t shared_pos_rows = 0;

    // Appends an utterance of `rows` frames (after the earlier ones).
    void add(int64_t rows, const AttentionSetting& resolved, const float* pos, int64_t pos_rows);
    // Sets shared_pos to the span of the positions of the utterances that project theirs by
    // GEMM alone (more than kernels::kMatvecMaxRows rows) and marks them. d: the row width.
    void share_positions(int64_t d);
};

}  // namespace pk
