#include "model/encoder/batch_rows.h"

#include <algorithm>

#include "model/encoder/conformer_layer.h"

namespace pk {

void RowSegments::add_chunked(int64_t rows, int64_t chunk) {
    for (int64_t r = 0; r < rows; r += chunk) add_whole(std::min(chunk, rows - r));
}

void RowSegments::add(int64_t rows, kernels::MatmulPath path) {
    if (rows <= 0) return;
    const bool matvec = path == kernels::MatmulPath::Matvec;
    // A segment's matrix-vector rows come first: matrix-vector rows after GEMM rows open a new one.
    if (segments_.empty() || (matvec && segments_.back().rows > segments_.back().paths.matvec_rows))
        segments_.push_back({end_, 0, {true, 0}});
    RowSegment& s = segments_.back();
    s.rows += rows;
    if (matvec) s.paths.matvec_rows += rows;
    end_ += rows;
}

void BatchRows::add(int64_t rows, const AttentionSetting& resolved, const float* pos, int64_t pos_rows) {
    utterances.push_back({total, rows, resolved, pos, pos_rows, false});
    row_wise.add_chunked(rows, ConformerLayer::kRowChunk);
    if (resolved.mode == AttentionSetting::Mode::Local) attention.add_chunked(rows, ConformerLayer::kRowChunk);
    else attention.add_whole(rows);
    total += rows;
}

void BatchRows::share_positions(int64_t d) {
    const float* lo = nullptr;
    const float* hi = nullptr;
    for (UtteranceRows& u : utterances) {
        if (kernels::auto_path(u.pos_rows) != kernels::MatmulPath::Gemm) continue;
        u.pos_shared = true;
        const float* end = u.pos + u.pos_rows * d;
        lo = lo ? std::min(lo, u.pos) : u.pos;
        hi = hi ? std::max(hi, end) : end;
    }
    shared_pos = lo;
    shared_pos_rows = lo ? (hi - lo) / d : 0;
}

}  // namespace pk
