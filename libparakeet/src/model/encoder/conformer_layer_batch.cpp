// ConformerLayer::forward_batch: a batch of independent utterances through one layer, each
// utterance's rows with the bits ConformerLayer::forward gives them alone (conformer_layer.h).
#include <algorithm>
#include <vector>

#include "kernels/attention_local_rel_pos.h"
#include "kernels/attention_rel_pos.h"
#include "kernels/attention_windowed_rel_pos.h"
#include "kernels/conv_depthwise1d.h"
#include "kernels/ops_elementwise.h"
#include "kernels/ops_layer_norm.h"
#include "model/encoder/conformer_layer.h"

namespace pk {
namespace {

// Key windows of NeMo's chunked_limited mask for rows [0, T) of one sequence: chunks of
// right + 1 frames, each frame seeing its own chunk and the left / (right + 1) chunks before it.
void chunked_windows(int64_t T, int left, int right, int64_t* begin, int64_t* end) {
    const int64_t chunk = right + 1, before = left / chunk;
    for (int64_t i = 0; i < T; ++i) {
        const int64_t c = i / chunk;
        begin[i] = std::max<int64_t>(0, (c - before) * chunk);
        end[i] = std::min(T, (c + 1) * chunk);
    }
}

}  // namespace

void ConformerLayer::attend(ThreadTeam& team, Arena& arena, const float* q, const float* k, const float* v,
                            const float* p, int64_t T, const AttentionSetting& attention, float* out) const {
    const int64_t d = d_model_, dk = d / n_heads_;
    const int left = attention.left, right = attention.right;
    if (attention.mode == AttentionSetting::Mode::Local) {
        // Every query row is computed on its own, so all T rows at once give the bits of
        // forward()'s chunks of queries (kernels/attention_local_rel_pos.h).
        kernels::local_rel_pos_attention(*kernels_, team, arena, q, k, v, p, pos_bias_u_, pos_bias_v_, T, 0, T,
                                         n_heads_, dk, left, right, out);
    } else {
        ArenaScope scope(arena);
        const int64_t P = left + 2 * right + 1;
        int64_t* begin = arena.alloc_array<int64_t>(static_cast<size_t>(T));
        int64_t* end = arena.alloc_array<int64_t>(static_cast<size_t>(T));
        chunked_windows(T, left, right, begin, end);
        float* pT = arena.alloc_array<float>(static_cast<size_t>(d * kernels::positions_stride(P)));
        kernels::transpose_positions(*kernels_, p, P, n_heads_, dk, pT);
        kernels::windowed_rel_pos_attention(*kernels_, team, arena, q, T, k, v, T, pT, P, left + right, pos_bias_u_,
                                            pos_bias_v_, n_heads_, dk, 0, begin, end, out);
    }
}

void ConformerLayer::batch_attention(ThreadTeam& team, Arena& arena, float* x, const BatchRows& batch,
                                     const BatchStageMark& mark) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_, total = batch.total;
    float* h = arena.alloc_array<float>(static_cast<size_t>(total * d));
    float* q = arena.alloc_array<float>(static_cast<size_t>(total * d));
    float* k = arena.alloc_array<float>(static_cast<size_t>(total * d));
    float* v = arena.alloc_array<float>(static_cast<size_t>(total * d));
    kernels::layer_norm(*kernels_, team, x, total, d, norm_att_.weight, norm_att_.bias, kLayerNormEps, h);
    end_stage(mark, "layer norms");
    for (const RowSegment& s : batch.attention.segments()) {
        const int64_t o = s.begin * d;
        q_.forward(team, arena, h + o, s.rows, q + o, s.paths);
        k_.forward(team, arena, h + o, s.rows, k + o, s.paths);
        v_.forward(team, arena, h + o, s.rows, v + o, s.paths);
    }
    end_stage(mark, "attention projections");
    float* shared = nullptr;
    if (batch.shared_pos_rows > 0) {
        shared = arena.alloc_array<float>(static_cast<size_t>(batch.shared_pos_rows * d));
        pos_.forward(team, arena, batch.shared_pos, batch.shared_pos_rows, shared, RowPaths{true, 0});
        end_stage(mark, "position projections");
    }
    // Each utterance attends over its own rows; the result goes to h, free after the
    // projections. The full attention of all utterances that have it runs as one batch (their
    // positions stay in the arena until then), the other kinds utterance by utterance.
    std::vector<kernels::RelPosSequence> full;
    for (const UtteranceRows& u : batch.utterances) {
        const float* p = nullptr;
        if (u.pos_shared) {
            p = shared + (u.pos - batch.shared_pos);
        } else {
            float* own = arena.alloc_array<float>(static_cast<size_t>(u.pos_rows * d));
            pos_.forward(team, arena, u.pos, u.pos_rows, own);
            p = own;
        }
        const int64_t o = u.row * d;
        if (u.attention.mode == AttentionSetting::Mode::Full) full.push_back({q + o, k + o, v + o, p, u.rows, h + o});
        else attend(team, arena, q + o, k + o, v + o, p, u.rows, u.attention, h + o);
    }
    kernels::rel_pos_attention_batch(*kernels_, team, arena, full.data(), static_cast<int64_t>(full.size()),
                                     pos_bias_u_, pos_bias_v_, n_heads_, d / n_heads_);
    end_stage(mark, "attention (scores, softmax, sums)");
    for (const RowSegment& s : batch.attention.segments())
        out_.forward(team, arena, h + s.begin * d, s.rows, q + s.begin * d, s.paths);
    end_stage(mark, "attention projections");
    kernels::add(team, x, q, total * d, x);
    end_stage(mark, "residual adds, x-scaling");
}

void ConformerLayer::batch_convolution(ThreadTeam& team, Arena& arena, float* x, const BatchRows& batch,
                                       const BatchStageMark& mark) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_, total = batch.total;
    // As convolution(): a causal conv is the 'same' conv's middle rows on the input with
    // kernel-1 zero rows put in front.
    const int64_t lead = causal_conv_ ? kernel_ - 1 : 0, half = (kernel_ - 1) / 2;
    float* g = arena.alloc_array<float>(static_cast<size_t>(total * d));   // GLU output, stacked
    float* dw = arena.alloc_array<float>(static_cast<size_t>(total * d));  // depthwise output, stacked
    batch.row_wise.for_each_chunk(kRowChunk, [&](int64_t r0, int64_t n, const RowPaths& paths) {
        conv_in(team, arena, x + r0 * d, n, g + r0 * d, paths);
    });
    end_stage(mark, "conv module row-wise");
    if (lead == 0) {  // the utterances' rows are stacked back to back: one call for all of them
        std::vector<int64_t> lengths;
        for (const UtteranceRows& u : batch.utterances) lengths.push_back(u.rows);
        kernels::depthwise_conv1d_stacked(*kernels_, team, g, lengths.data(), static_cast<int64_t>(lengths.size()), d,
                                          depthwise_w_.data(), kernel_, depthwise_b_.data(), dw);
    } else {
        for (const UtteranceRows& u : batch.utterances) {
            ArenaScope per_utterance(arena);
            float* seq = arena.alloc_array<float>(static_cast<size_t>((lead + u.rows) * d));
            float* all = arena.alloc_array<float>(static_cast<size_t>((lead + u.rows) * d));
            std::fill(seq, seq + lead * d, 0.0f);
            std::copy_n(g + u.row * d, u.rows * d, seq + lead * d);
            kernels::depthwise_conv1d(*kernels_, team, seq, lead + u.rows, d, depthwise_w_.data(), kernel_,
                                      depthwise_b_.data(), all);
            std::copy_n(all + half * d, u.rows * d, dw + u.row * d);
        }
    }
    end_stage(mark, "depthwise conv");
    batch.row_wise.for_each_chunk(kRowChunk, [&](int64_t r0, int64_t n, const RowPaths& paths) {
        conv_out(team, arena, dw + r0 * d, n, x + r0 * d, paths);
    });
    end_stage(mark, "conv module row-wise");
}

void ConformerLayer::forward_batch(ThreadTeam& team, Arena& arena, float* x, const BatchRows& batch,
                                   const BatchStageMark& mark) const {
    if (batch.total <= 0) return;
    const int64_t d = d_model_;
    for (const RowSegment& s : batch.row_wise.segments())
        feed_forward(team, arena, x + s.begin * d, s.rows, norm_ff1_, ff1_linear1_, ff1_linear2_, {}, s.paths);
    end_stage(mark, "feed-forwards");
    batch_attention(team, arena, x, batch, mark);
    batch_convolution(team, arena, x, batch, mark);
    for (const RowSegment& s : batch.row_wise.segments())
        feed_forward(team, arena, x + s.begin * d, s.rows, norm_ff2_, ff2_linear1_, ff2_linear2_, {}, s.paths);
    end_stage(mark, "feed-forwards");
    kernels::layer_norm(*kernels_, team, x, batch.total, d, norm_out_.weight, norm_out_.bias, kLayerNormEps, x);
    end_stage(mark, "layer norms");
}

}  // namespace pk
