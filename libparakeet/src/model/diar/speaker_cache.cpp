#include "model/diar/speaker_cache.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "common/errors.h"

namespace pk {

namespace {

// NeMo's placeholder for top-k picks whose score is -inf (SortformerModules.max_index).
constexpr int64_t kMaxIndex = 99999;
constexpr float kInf = std::numeric_limits<float>::infinity();

// The indices of the k largest of values[0..n), in the order torch's CPU topk (sorted=False)
// leaves them: its (value, index) queue, std::partial_sort when k * 64 <= n, else
// std::nth_element at k - 1, comparing values only (NaN first).
std::vector<int64_t> torch_topk(const std::vector<float>& values, int64_t k) {
    using Elem = std::pair<double, int64_t>;
    const int64_t n = static_cast<int64_t>(values.size());
    k = std::min(k, n);
    std::vector<int64_t> out;
    if (k <= 0) return out;
    std::vector<Elem> queue(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) queue[j] = {values[j], j};
    const auto greater = [](const Elem& x, const Elem& y) {
        return (std::isnan(x.first) && !std::isnan(y.first)) || x.first > y.first;
    };
    if (k * 64 <= n)
        std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), greater);
    else
        std::nth_element(queue.begin(), queue.begin() + (k - 1), queue.end(), greater);
    out.reserve(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) out.push_back(queue[j].second);
    return out;
}

}  // namespace

SpeakerCache::SpeakerCache(const DiarStreamingParams& params, int n_spk, int emb_dim)
    : p_(params), n_spk_(n_spk), emb_dim_(emb_dim), mean_sil_emb_(static_cast<size_t>(emb_dim), 0.0f) {
    if (n_spk < 1 || emb_dim < 1) throw InvalidArgument("speaker cache needs n_spk >= 1 and emb_dim >= 1");
    p_.check(n_spk);
}

void SpeakerCache::copy_prefix(float* out) const {
    std::copy(fifo_.begin(), fifo_.end(), std::copy(cache_.begin(), cache_.end(), out));
}

std::vector<float> SpeakerCache::update(const float* chunk, int chunk_frames, const float* preds, int lc,
                                        int rc) {
    const size_t D = static_cast<size_t>(emb_dim_), S = static_cast<size_t>(n_spk_);
    const int n_cache = cache_frames(), n_fifo = fifo_frames();
    const int n_chunk = chunk_frames - lc - rc;
    if (lc < 0 || rc < 0 || n_chunk < 0) throw InvalidArgument("speaker cache update: bad chunk contexts");

    // The FIFO's predictions come from this step; the chunk's own frames join it.
    fifo_preds_.assign(preds + n_cache * S, preds + (n_cache + n_fifo) * S);
    const float* chunk_preds = preds + (n_cache + n_fifo + lc) * S;
    std::vector<float> out(chunk_preds, chunk_preds + n_chunk * S);
    fifo_.insert(fifo_.end(), chunk + lc * D, chunk + (lc + n_chunk) * D);
    fifo_preds_.insert(fifo_preds_.end(), out.begin(), out.end());

    if (n_fifo + n_chunk <= p_.fifo_len) return out;

    // Pop the FIFO's front: the update period, at least the overflow, at most everything.
    int pop = p_.spkcache_update_period;
    pop = std::max(pop, n_chunk - p_.fifo_len + n_fifo);
    pop = std::min(pop, n_fifo + n_chunk);
    update_silence_profile(fifo_.data(), fifo_preds_.data(), pop);
    cache_.insert(cache_.end(), fifo_.begin(), fifo_.begin() + pop * D);
    if (has_cache_preds_) cache_preds_.insert(cache_preds_.end(), fifo_preds_.begin(), fifo_preds_.begin() + pop * S);
    if (cache_frames() > p_.spkcache_len) {
        if (!has_cache_preds_) {  // the first compression: the cache's predictions from this step
            cache_preds_.assign(preds, preds + n_cache * S);
            cache_preds_.insert(cache_preds_.end(), fifo_preds_.begin(), fifo_preds_.begin() + pop * S);
            has_cache_preds_ = true;
        }
        compress();
    }
    fifo_.erase(fifo_.begin(), fifo_.begin() + pop * D);
    fifo_preds_.erase(fifo_preds_.begin(), fifo_preds_.begin() + pop * S);
    return out;
}

void SpeakerCache::update_silence_profile(const float* embs, const float* preds, int n) {
    const size_t D = static_cast<size_t>(emb_dim_), S = static_cast<size_t>(n_spk_);
    const float threshold = static_cast<float>(p_.sil_threshold);
    std::vector<float> sum(D, 0.0f);
    int64_t count = 0;
    for (int t = 0; t < n; ++t) {
        float p = 0.0f;
        for (size_t s = 0; s < S; ++s) p += preds[t * S + s];
        if (!(p < threshold)) continue;
        ++count;
        for (size_t d = 0; d < D; ++d) sum[d] += embs[t * D + d];
    }
    if (count == 0) return;
    // NeMo: (mean * n_old + sum) / max(n_new, 1), in float.
    const int64_t n_new = n_sil_frames_ + count;
    for (size_t d = 0; d < D; ++d)
        mean_sil_emb_[d] = (mean_sil_emb_[d] * static_cast<float>(n_sil_frames_) + sum[d]) /
                           static_cast<float>(std::max<int64_t>(n_new, 1));
    n_sil_frames_ = n_new;
}

void SpeakerCache::compress() {
    const size_t D = static_cast<size_t>(emb_dim_), S = static_cast<size_t>(n_spk_);
    const int n = cache_frames();
    const int per_spk = p_.spkcache_len / n_spk_ - p_.spkcache_sil_frames_per_spk;
    const int64_t strong = static_cast<int64_t>(std::floor(per_spk * p_.strong_boost_rate));
    const int64_t weak = static_cast<int64_t>(std::floor(per_spk * p_.weak_boost_rate));
    const int64_t min_pos = static_cast<int64_t>(std::floor(per_spk * p_.min_pos_scores_rate));
    const float floor_p = static_cast<float>(p_.pred_score_threshold);
    const float log_half = static_cast<float>(std::log(0.5));
    const float* P = cache_preds_.data();

    // Scores per speaker over the frames (speaker-major, as NeMo flattens them), padded with
    // the silence rows: log(p) - log(1-p) + sum_j log(1-p_j) - log(0.5), floors at 0.25.
    const int sil = p_.spkcache_sil_frames_per_spk;
    const int rows = n + sil;
    std::vector<float> score(S * rows);
    for (int t = 0; t < n; ++t) {
        float log1_sum = 0.0f;
        for (size_t s = 0; s < S; ++s) log1_sum += std::log(std::max(1.0f - P[t * S + s], floor_p));
        for (size_t s = 0; s < S; ++s) {
            const float p = P[t * S + s];
            const float lp = std::log(std::max(p, floor_p)), l1 = std::log(std::max(1.0f - p, floor_p));
            score[s * rows + t] = lp - l1 + log1_sum - log_half;
        }
    }
    for (size_t s = 0; s < S; ++s) {
        float* sc = &score[s * rows];
        // Non-speech frames drop out; so do non-positive ones of a speaker with enough positives.
        int64_t n_pos = 0;
        for (int t = 0; t < n; ++t) {
            if (!(P[t * S + s] > 0.5f)) sc[t] = -kInf;
            if (sc[t] > 0) ++n_pos;
        }
        if (n_pos >= min_pos)
            for (int t = 0; t < n; ++t)
                if (P[t * S + s] > 0.5f && !(sc[t] > 0)) sc[t] = -kInf;
        if (p_.scores_boost_latest > 0)
            for (int t = p_.spkcache_len; t < n; ++t) sc[t] += static_cast<float>(p_.scores_boost_latest);
        // Strong then weak boost of the speaker's best frames (-inf stays -inf).
        for (const auto& [k, scale] : {std::pair<int64_t, double>{strong, 2.0}, {weak, 1.0}}) {
            const std::vector<float> col(sc, sc + n);
            const float add = static_cast<float>(scale * std::log(0.5));
            for (int64_t t : torch_topk(col, k)) sc[t] -= add;
        }
        for (int t = n; t < rows; ++t) sc[t] = kInf;
    }

    // The spkcache_len best (speaker, frame) pairs, in flattened order: grouped by speaker,
    // frames in their order, each block ending with its silence slots; -inf picks go last.
    const int64_t keep = p_.spkcache_len;
    std::vector<int64_t> idx = torch_topk(score, keep);
    for (int64_t& i : idx)
        if (score[i] == -kInf) i = kMaxIndex;
    std::sort(idx.begin(), idx.end());
    std::vector<float> cache(keep * D), preds(keep * S, 0.0f);
    for (int64_t j = 0; j < keep; ++j) {
        const bool placeholder = idx[j] == kMaxIndex;
        const int64_t t = idx[j] % rows;
        if (placeholder || t >= n) {
            std::copy(mean_sil_emb_.begin(), mean_sil_emb_.end(), cache.begin() + j * D);
        } else {
            std::copy(cache_.begin() + t * D, cache_.begin() + (t + 1) * D, cache.begin() + j * D);
            std::copy(P + t * S, P + (t + 1) * S, preds.begin() + j * S);
        }
    }
    cache_ = std::move(cache);
    cache_preds_ = std::move(preds);
}

}  // namespace pk
