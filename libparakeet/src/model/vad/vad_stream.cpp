#include "model/vad/vad_stream.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "common/errors.h"

namespace pk {

VadStream::VadStream(const SileroVad& model, int sample_rate, const VadOptions& options)
    : model_(model), branch_(model.branch(sample_rate)), seg_(SegmenterParams{}) {
    if (branch_ == nullptr)
        throw InvalidAudio("invalid sample rate " + std::to_string(sample_rate) +
                           ": the Silero VAD runs at 16000 or 8000 Hz");
    params_ = SegmenterParams::from(options, branch_->sample_rate, branch_->chunk);
    reset();
}

void VadStream::reset() {
    state_ = model_.initial_state(*branch_);
    seg_ = SpeechSegmenter(params_);
    pending_.clear();
    fed_ = 0;
    finished_ = false;
    starts_sent_ = ends_sent_ = 0;
}

VadFeedResult VadStream::feed(const float* pcm, int64_t n, bool is_last, ThreadTeam* team) {
    if (finished_) throw InvalidArgument("VAD stream already finished (is_last was given); reset it first");
    if (n < 0 || (n > 0 && pcm == nullptr)) throw InvalidArgument("invalid samples buffer");
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(pcm[i])) throw InvalidAudio("sample " + std::to_string(fed_ + i) + " is not finite");
    VadFeedResult out;
    out.first_frame = seg_.frames();
    const int chunk = branch_->chunk;
    int64_t i = 0;
    auto run = [&](const float* c) {
        const float p = model_.step(*branch_, state_, c);
        out.probabilities.push_back(p);
        seg_.push(p);
        emit(out, false);
    };
    if (!pending_.empty()) {
        const int64_t take = std::min<int64_t>(n, chunk - static_cast<int64_t>(pending_.size()));
        pending_.insert(pending_.end(), pcm, pcm + take);
        i = take;
        if (static_cast<int>(pending_.size()) == chunk) {
            run(pending_.data());
            pending_.clear();
        }
    }
    if (team != nullptr && team->size() > 1 && n - i >= 2 * static_cast<int64_t>(chunk)) {
        // Features of a block of whole chunks on the team, then the LSTM through them in order.
        // Chunk j's context is the previous chunk's tail (the state's for the first).
        constexpr int64_t kBlock = 2048;  // chunks: 1 MiB of features
        const int ctx = branch_->context, H = SileroVad::kHidden;
        std::vector<float> feats(static_cast<size_t>(kBlock) * H);
        while (n - i >= chunk) {
            const int64_t count = std::min<int64_t>(kBlock, (n - i) / chunk);
            const float* base = pcm + i;
            const float* first_context = state_.context.data();
            team->run([&](int ith, int nth) {
                for (int64_t j = ith; j < count; j += nth)
                    model_.features(*branch_, j == 0 ? first_context : base + j * chunk - ctx, base + j * chunk,
                                    &feats[static_cast<size_t>(j) * H]);
            });
            for (int64_t j = 0; j < count; ++j) {
                const float p = model_.decode(*branch_, state_, &feats[static_cast<size_t>(j) * H]);
                out.probabilities.push_back(p);
                seg_.push(p);
                emit(out, false);
            }
            std::copy(base + count * chunk - ctx, base + count * chunk, state_.context.begin());
            i += count * chunk;
        }
    }
    for (; i + chunk <= n; i += chunk) run(pcm + i);
    if (i < n) pending_.insert(pending_.end(), pcm + i, pcm + n);
    fed_ += n;
    if (is_last) {
        if (!pending_.empty()) {
            pending_.resize(chunk, 0.f);  // Silero zero-pads the last partial chunk
            run(pending_.data());
            pending_.clear();
        }
        seg_.finish(fed_);
        emit(out, true);
        finished_ = true;
    }
    return out;
}

// Emits every event that is now final. A start is final once its segment is certain to be
// kept (its padding needs only the previous segment's raw end); an end once the next kept
// segment's start is known, or once the audio is far enough past it that no later start can
// come within 2 * pad (its padding then is the plain pad), or at the end of the audio.
void VadStream::emit(VadFeedResult& out, bool at_end) {
    const auto& raw = seg_.raw();
    // Before the end, the audio's length never limits a padded end (the rules below wait until
    // it lies past e + pad), and the samples of this feed are not counted in fed_ yet.
    const int64_t length = at_end ? fed_ : INT64_MAX;
    const size_t known = raw.size() + (!at_end && seg_.open_certain() ? 1 : 0);
    auto start_of = [&](size_t i) { return i < raw.size() ? raw[i].start : seg_.open_start(); };
    while (starts_sent_ < known) {
        const size_t i = starts_sent_;
        if (i > 0 && ends_sent_ < i) {
            out.events.push_back({false, seg_.padded_end(i - 1, start_of(i), length)});
            ++ends_sent_;
        }
        // padded_start of the open segment: the same rule, with its start not yet in raw().
        int64_t s;
        if (i < raw.size()) {
            s = seg_.padded_start(i);
        } else {
            const int64_t st = seg_.open_start();
            const double pad = seg_.params().pad;
            const int64_t gap = i > 0 ? st - raw[i - 1].end : 0;
            s = (i > 0 && static_cast<double>(gap) < 2 * pad)
                    ? std::max<int64_t>(0, st - gap / 2)
                    : static_cast<int64_t>(std::max(0.0, static_cast<double>(st) - pad));
        }
        out.events.push_back({true, s});
        ++starts_sent_;
    }
    if (ends_sent_ < starts_sent_ && ends_sent_ < raw.size()) {
        const size_t i = ends_sent_;
        const int64_t e = raw[i].end;
        const double horizon = static_cast<double>(e) + 2 * seg_.params().pad;
        const int64_t next_frame = seg_.frames() * seg_.params().window;
        const bool later_start_far = !seg_.open() || static_cast<double>(seg_.open_start()) >= horizon;
        if (at_end || (i + 1 == raw.size() && later_start_far && static_cast<double>(next_frame) >= horizon)) {
            out.events.push_back({false, seg_.padded_end(i, -1, length)});
            ++ends_sent_;
        }
    }
}

}  // namespace pk
