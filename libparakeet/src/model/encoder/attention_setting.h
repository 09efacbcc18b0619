// Which self-attention the encoder runs. NeMo offers two on the same weights:
//   full   — RelPositionMultiHeadAttention ("rel_pos"), every frame attends to every frame:
//            cost and memory grow with the square of the length;
//   local  — RelPositionMultiHeadAttentionLongformer ("rel_pos_local_attn") with
//            att_context_size [left, right]: each frame attends to `left` frames before it
//            and `right` after it, cost O(T * (left + right + 1)). NVIDIA's route to hours of
//            audio: model.change_attention_model("rel_pos_local_attn", [128, 128]).
//   chunked — the chunked_limited attention of a cache-aware streaming model ([left, right]:
//            chunks of right + 1 frames, each frame seeing its chunk and the left frames before
//            it). Such a model runs only this, with the context it was trained with; NeMo's
//            transcribe() applies the same mask (model/encoder/encoder.h).
// `auto` picks full attention up to kAutoFullMaxFrames encoder frames and local [128, 128]
// above. The choice depends only on the setting and the audio's length, so a result never
// depends on anything but the audio and the settings.
#pragma once

#include <cstdint>
#include <string>

namespace pk {

struct AttentionSetting {
    enum class Mode { Auto, Full, Local, Chunked };
    Mode mode = Mode::Auto;
    int left = 0;   // Local and Chunked: frames of context before each frame (Local: > 0)
    int right = 0;  // Local: frames after (> 0); Chunked: a chunk is right + 1 frames

    static AttentionSetting automatic() { return {}; }
    static AttentionSetting full() { return {Mode::Full, 0, 0}; }
    // Throws InvalidArgument unless left > 0 and right > 0.
    static AttentionSetting local(int left, int right);
    static AttentionSetting chunked(int left, int right) { return {Mode::Chunked, left, right}; }

    // What runs on an encoder sequence of `frames` frames: Full or Local, never Auto.
    AttentionSetting resolve(int64_t frames) const;

    // "auto", "full", "local" or "chunked".
    const char* mode_name() const;
    // "auto", "full", "local[L,R]" or "chunked[L,R]".
    std::string describe() const;

    bool operator==(const AttentionSetting& o) const {
        return mode == o.mode && left == o.left && right == o.right;
    }
    bool operator!=(const AttentionSetting& o) const { return !(*this == o); }
};

// Auto mode: full attention for sequences up to this many encoder frames (0.08 s each: 48 s),
// local above. Measured on the 110M-size q8_0 model (docs/performance.md, "Long audio"): up to
// here full attention costs at most ~20 % more than local for the whole request, and it is
// exactly what NeMo's default transcribe() computes; above, its share grows with the square of
// the length (1.3-1.5x local at 60 s, 2.6x at 90 s, ~4x at 5 min) while local stays flat.
constexpr int64_t kAutoFullMaxFrames = 600;
// Auto mode's local window, NVIDIA's recommendation for long audio.
constexpr int kAutoLocalContext = 128;

}  // namespace pk
