#include "model/scene/scene_stream.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/errors.h"

namespace pk {

namespace {

void check_rate(const char* part, int rate, int expected) {
    if (rate != expected)
        throw InvalidArgument(std::string("the ") + part + " model runs at " + std::to_string(rate) +
                              " Hz, the scene stream at " + std::to_string(expected) + " Hz");
}

}  // namespace

SceneStream::SceneStream(const SceneParts& p) : rate_(p.sample_rate) {
    const bool speaker = static_cast<bool>(p.speaker_embed);
    if (p.asr == nullptr && p.diar == nullptr && !p.sound_scorer && !speaker)
        throw InvalidArgument("scene stream needs at least one model");
    if (speaker && p.diar == nullptr) throw InvalidArgument("speaker identification needs a diarization model");
    if (p.diar != nullptr) check_rate("diarization", p.diar->config().pre.sample_rate, rate_);
    if (p.sound_scorer) check_rate("sound", p.sound_rate, rate_);
    if (speaker) namer_.emplace(p.speaker_embed, p.speaker_identify, rate_, p.naming);
    if (p.asr != nullptr && p.diar != nullptr) {
        sas_.emplace(*p.asr, *p.diar, p.diar_params);
    } else if (p.diar != nullptr) {
        diar_.emplace(*p.diar, p.diar_params);
    } else if (p.asr != nullptr) {
        asr_.emplace(rate_, [m = p.asr, rate = rate_](const float* s, int64_t n) {
            return m->transcribe(s, n, rate, RequestOptions()).words;
        });
    }
    if (p.sound_scorer) sound_.emplace(p.sound_scorer, p.sound_classes, rate_, p.sound);
    step_ = p.diar != nullptr ? std::llround(p.diar->config().frame_sec * rate_) : std::llround(kAsrStepSec * rate_);
}

void SceneStream::transcribe(const float* samples, int64_t n, bool last, SceneUpdate& u) {
    std::vector<TranscriptWord> words;
    std::vector<int> speakers;
    if (sas_) {
        SasWords w = sas_->commit(samples, n, last);
        words = std::move(w.words);
        speakers = std::move(w.speakers);
    } else {
        asr_->append(samples, n);
        // The edge moves by whole steps: the commit rule is checked where a step ends.
        const int64_t fed = total_ + n;
        if (fed % step_ != 0 && !last) return;
        words = asr_->commit(static_cast<double>(fed) / rate_, last);
        speakers.assign(words.size(), -1);
    }
    for (size_t i = 0; i < words.size(); ++i)
        u.words.push_back({words[i], speakers[i], namer_ ? namer_->name(speakers[i]) : speaker::SlotName{}});
}

void SceneStream::step(const float* samples, int64_t n, bool last, SceneUpdate& u) {
    std::vector<DiarSegment> closed, open;
    if (sas_ || diar_) {
        part_ = ScenePart::Diarization;
        closed = sas_ ? sas_->diarize(samples, n, last) : diar_->feed(samples, n, last);
        open = sas_ ? sas_->open_segments() : open_diar_segments(*diar_);
        u.speakers.insert(u.speakers.end(), closed.begin(), closed.end());
    }
    if (namer_) {
        part_ = ScenePart::Speaker;
        namer_->push(samples, n);
        namer_->update(closed, open, last);
    }
    if (sas_ || asr_) {
        part_ = ScenePart::Asr;
        transcribe(samples, n, last, u);
    }
    if (sound_) {
        part_ = ScenePart::Sound;
        const std::vector<SoundSegment> s = sound_->feed(samples, n, last);
        u.sounds.insert(u.sounds.end(), s.begin(), s.end());
    }
    total_ += n;
}

SceneUpdate SceneStream::feed(const float* samples, int64_t n, bool last) {
    part_ = ScenePart::None;
    if (finished_) throw InvalidArgument("stream already finished");
    if (n < 0 || (n > 0 && samples == nullptr)) throw InvalidArgument("invalid samples buffer");
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(samples[i]))
            throw InvalidAudio("sample " + std::to_string(i) + " is not a finite number (NaN or Inf)");
    SceneUpdate u;
    int64_t at = 0;
    do {  // pieces that end on whole steps of the timeline
        const int64_t len = std::min(n - at, step_ - total_ % step_);
        step(samples == nullptr ? nullptr : samples + at, len, last && at + len == n, u);
        at += len;
    } while (at < n);
    finished_ = last;
    u.t = static_cast<double>(total_) / rate_;
    if (namer_) u.names = namer_->names();
    if (sas_) u.active_speakers = sas_->open_segments();
    if (diar_) u.active_speakers = open_diar_segments(*diar_);
    if (sound_) {
        u.active_sounds = sound_->active();
        for (SoundSegment& s : u.active_sounds) s.end = u.t;
    }
    part_ = ScenePart::None;
    return u;
}

std::vector<ScoredWindow> SceneStream::drain_scores() {
    return sound_ ? sound_->drain_scores() : std::vector<ScoredWindow>{};
}

}  // namespace pk
