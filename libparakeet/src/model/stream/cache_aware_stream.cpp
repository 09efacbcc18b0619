#include "model/stream/cache_aware_stream.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/errors.h"

namespace pk {

CacheAwareSchedule CacheAwareSchedule::of(const AttContext& c, int f) {
    CacheAwareSchedule s;
    s.first_chunk = 1 + int64_t{f} * c.right;
    s.chunk = f + int64_t{f} * c.right;
    s.pre_cache = f + 1;
    s.drop = 1 + (s.pre_cache - 1) / f;
    s.min_first = 1;
    s.min_chunk = f;
    return s;
}

namespace {

const AttContext& checked_context(const Model& model, const AttContext& c) {
    const EncoderConfig& e = model.config().enc;
    if (!e.cache_aware())
        throw InvalidArgument("this model is not a cache-aware streaming model (it has no chunked_limited attention "
                              "with causal convolutions); it streams with left/chunk/right windows");
    for (const AttContext& k : e.att_contexts)
        if (k == c) return c;
    std::string known;
    for (const AttContext& k : e.att_contexts)
        known += (known.empty() ? "" : ", ") + ("[" + std::to_string(k.left) + ", " + std::to_string(k.right) + "]");
    throw InvalidArgument("att_context [" + std::to_string(c.left) + ", " + std::to_string(c.right) +
                          "] is not one of this model's (" + known + ")");
}

}  // namespace

CacheAwareStream::CacheAwareStream(const Model& model, const AttContext& context, DecoderChoice decoder,
                                   const std::string& language)
    : model_(model),
      schedule_(CacheAwareSchedule::of(checked_context(model, context), model.config().enc.subsampling_factor)),
      frame_sec_(model.config().frame_seconds()),
      n_mels_(model.config().pre.n_mels),
      prompt_(model.prompt_id(language)),
      cache_(model.encoder().stream_cache(context)),
      decoder_(model, decoder) {}

void CacheAwareStream::take_audio(const float* samples, int64_t n) {
    check_feed(samples, n, received_, ended_);
    audio_.insert(audio_.end(), samples, samples + n);
    received_ += n;
}

void CacheAwareStream::end_audio() {
    if (ended_) throw InvalidArgument("the stream is already finalized");
    ended_ = true;
}

int64_t CacheAwareStream::next_start() const {
    return steps_ == 0 ? 0 : schedule_.first_chunk + (steps_ - 1) * schedule_.chunk;
}

bool CacheAwareStream::chunk_ready() const {
    int64_t start = 0, size = 0;
    return next_chunk(start, size);
}

bool CacheAwareStream::next_chunk(int64_t& start, int64_t& size) const {
    if (finalized_) return false;
    const LogMel& mel = model_.log_mel();
    start = next_start();
    size = steps_ == 0 ? schedule_.first_chunk : schedule_.chunk;
    if (!ended_) return mel.frame_ready(start + size - 1, received_);
    // NeMo's buffer holds every frame of the whole clip: the valid ones and one zero frame.
    const int64_t total = mel.valid_frames(received_) + 1;
    if (start >= total) return false;
    size = std::min(size, total - start);
    return size >= (steps_ == 0 ? schedule_.min_first : schedule_.min_chunk);
}

StreamUpdate CacheAwareStream::take_update() {
    StreamUpdate u;
    const bool final = ended_ && !finalized_;
    if (final) {
        finalized_ = true;
        std::vector<float>().swap(audio_);
        std::vector<float>().swap(mel_);
        audio_start_ = received_;
    }
    decoder_.fill_update(final, steps_ != steps_reported_, u);
    steps_reported_ = steps_;
    u.chunks = steps_;
    u.audio_sec = static_cast<double>(received_) / model_.config().pre.sample_rate;
    u.final_sec = final ? u.audio_sec : static_cast<double>(decoder_.decoded_frames()) * frame_sec_;
    u.finalized = finalized_;
    return u;
}

void CacheAwareStream::extend_mel(Backend& b, int64_t end) {
    if (end <= mel_end_) return;
    const LogMel& mel = model_.log_mel();
    const int64_t valid = ended_ ? mel.valid_frames(received_) : end;
    const int64_t computed_end = std::min(end, valid);
    mel_.resize(static_cast<size_t>((end - mel_start_) * n_mels_), 0.0f);
    if (computed_end > mel_end_) {
        mel.compute_frames(b.team(), audio_.data(), audio_start_, received_, mel_end_, computed_end,
                           mel_.data() + (mel_end_ - mel_start_) * n_mels_);
    }
    // past the valid frames (only at the end): NeMo's zero frame, which resize() left at 0
    mel_end_ = end;
    // Samples no later frame reads, once more than a second's worth (amortised O(1)).
    const int64_t keep = mel.first_sample_needed(mel_end_);
    if (keep - audio_start_ > model_.config().pre.sample_rate) {
        audio_.erase(audio_.begin(), audio_.begin() + (keep - audio_start_));
        audio_start_ = keep;
    }
}

bool CacheAwareStream::prepare_step(Backend& b, EncoderStep& step) {
    int64_t start = 0, size = 0;
    if (!next_chunk(start, size)) return false;
    extend_mel(b, start + size);
    const bool first = steps_ == 0;
    const int64_t lead = first ? 0 : schedule_.pre_cache;  // mel frames in front of the chunk
    const int64_t rows = lead + size;
    float* in = b.arena().alloc_array<float>(static_cast<size_t>(rows * n_mels_));
    // Rows [start - lead, start + size) of the stream's mel; rows before the stream start are
    // NeMo's zero padding of the pre-encode cache.
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t t = start - lead + r;
        float* dst = in + r * n_mels_;
        if (t < 0) std::fill(dst, dst + n_mels_, 0.0f);
        else std::copy_n(mel_.data() + (t - mel_start_) * n_mels_, n_mels_, dst);
    }
    step = EncoderStep{in, rows, first ? 0 : schedule_.drop, &cache_};
    return true;
}

void CacheAwareStream::prompt_step(Backend& b, float* enc, int64_t T) { model_.apply_prompt(b, enc, T, prompt_); }

void CacheAwareStream::finish_step() {
    ++steps_;
    // The next chunk reads its pre-encode cache from the frames before it (a last, short
    // chunk has no next one: keep what was computed).
    const int64_t next = std::min(next_start(), mel_end_);
    const int64_t keep_from = std::max<int64_t>(0, next - schedule_.pre_cache);
    if (keep_from - mel_start_ > 4 * schedule_.chunk) {
        mel_.erase(mel_.begin(), mel_.begin() + (keep_from - mel_start_) * n_mels_);
        mel_start_ = keep_from;
    }
}

Transcript CacheAwareStream::transcript() const {
    Transcript t = decoder_.transcript();
    t.attention = AttentionSetting::chunked(cache_.context.left, cache_.context.right);
    return t;
}

}  // namespace pk
