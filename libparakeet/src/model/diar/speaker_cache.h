// SpeakerCache: the state Sortformer's streaming inference carries from one chunk to the next,
// computed exactly as NeMo 3.0.0's SortformerModules.streaming_update (the synchronous update
// that forward_streaming uses in eval) and its _compress_spkcache compute it:
//   * a FIFO of the latest chunks' pre-encode embeddings and their predictions (refreshed from
//     every step);
//   * a speaker cache of at most spkcache_len embeddings, filled from the FIFO's front
//     (spkcache_update_period frames at a time, at least what overflows the FIFO) and, when it
//     overflows, compressed to the spkcache_len frames with the best per-speaker scores;
//   * the running mean of the embeddings of popped frames whose summed probabilities are below
//     sil_threshold, which fills the cache's silence slots.
// The cache's predictions are taken from the current step at the first compression only; after
// that they are the ones stored then (NeMo's stale predictions, reproduced).
//
// Ties in the top-k selections are broken as torch's CPU topk breaks them (std::nth_element, or
// std::partial_sort when k * 64 <= n, on (value, index) pairs compared by value only). That is
// not "lowest index first", and breaking them otherwise changes every later chunk's output.
// The same standard library algorithm is what makes this match: libstdc++'s, as torch's CPU
// wheels and our builds use.
//
// Embeddings and predictions are frame-major: frame t of a [T, D] array is at t * D.
// Not thread-safe; one stream owns one cache.
#pragma once

#include <cstdint>
#include <vector>

#include "model/diar/streaming_params.h"

namespace pk {

class SpeakerCache {
public:
    // Checks the parameters (DiarStreamingParams::check) and starts empty: no cache, no FIFO,
    // a zero silence embedding.
    SpeakerCache(const DiarStreamingParams& params, int n_spk, int emb_dim);

    int n_spk() const { return n_spk_; }
    int emb_dim() const { return emb_dim_; }
    int cache_frames() const { return static_cast<int>(cache_.size() / emb_dim_); }
    int fifo_frames() const { return static_cast<int>(fifo_.size() / emb_dim_); }

    // Writes the cache's then the FIFO's embeddings to out ((cache_frames() + fifo_frames())
    // rows): the front of a step's input.
    void copy_prefix(float* out) const;

    // One step's update. `chunk` holds the step's chunk_frames pre-encode embeddings, of which
    // the first lc and the last rc are context; `preds` the step's predictions for [cache, FIFO,
    // chunk] (cache_frames() + fifo_frames() + chunk_frames rows of n_spk). Moves the chunk's
    // own frames into the FIFO, overflow into the cache, compresses the cache when it is over
    // spkcache_len, and returns the predictions of the chunk's own frames.
    std::vector<float> update(const float* chunk, int chunk_frames, const float* preds, int lc, int rc);

    // The state, for tests and for streams that report it.
    const std::vector<float>& cache() const { return cache_; }
    const std::vector<float>& cache_preds() const { return cache_preds_; }  // empty before the
    bool has_cache_preds() const { return has_cache_preds_; }               // first compression
    const std::vector<float>& fifo() const { return fifo_; }
    const std::vector<float>& fifo_preds() const { return fifo_preds_; }
    const std::vector<float>& mean_sil_emb() const { return mean_sil_emb_; }
    int64_t n_sil_frames() const { return n_sil_frames_; }

private:
    void update_silence_profile(const float* embs, const float* preds, int n);
    void compress();

    DiarStreamingParams p_;
    int n_spk_, emb_dim_;
    std::vector<float> cache_, cache_preds_, fifo_, fifo_preds_, mean_sil_emb_;
    bool has_cache_preds_ = false;
    int64_t n_sil_frames_ = 0;
};

}  // namespace pk
