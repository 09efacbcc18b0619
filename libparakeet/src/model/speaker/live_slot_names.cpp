#include "model/speaker/live_slot_names.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/errors.h"
#include "model/speaker/clean_voice.h"

namespace pk::speaker {

void validate_live_naming(const LiveNamingOptions& o) {
    std::string why;
    if (!(o.min_voice_sec > 0)) why = "min_voice_sec must be > 0";
    else if (!(o.refresh_sec > 0)) why = "refresh_sec must be > 0";
    else if (!(o.max_voice_sec >= o.min_voice_sec)) why = "max_voice_sec must be >= min_voice_sec";
    else if (!(o.accept >= -1 && o.accept <= 1)) why = "accept_threshold must be in [-1, 1]";
    else if (!(o.margin >= 0)) why = "margin must be >= 0";
    if (!why.empty()) throw InvalidArgument("invalid speaker options: " + why);
}

LiveSlotNames::LiveSlotNames(Embed embed, Identify identify, int sample_rate, const LiveNamingOptions& o)
    : embed_(std::move(embed)), identify_(std::move(identify)), rate_(sample_rate), o_(o) {
    validate_live_naming(o_);
    o_.ring_sec = std::max(o_.ring_sec, o_.max_voice_sec);
}

void LiveSlotNames::push(const float* samples, int64_t n) {
    if (n <= 0) return;
    ring_.insert(ring_.end(), samples, samples + n);
    total_ += n;
    // Trimmed a second at a time, so the erase is rare.
    const int64_t cap = std::llround(static_cast<double>(o_.ring_sec) * rate_);
    if (static_cast<int64_t>(ring_.size()) > cap + rate_) {
        const int64_t drop = static_cast<int64_t>(ring_.size()) - cap;
        ring_.erase(ring_.begin(), ring_.begin() + drop);
        ring_start_ += drop;
    }
}

void LiveSlotNames::add_audio(Slot& slot, double start, double end) {
    const int64_t a = std::max(ring_start_, static_cast<int64_t>(std::llround(start * rate_)));
    const int64_t b = std::min(total_, static_cast<int64_t>(std::llround(end * rate_)));
    if (b <= a) return;
    slot.voice.insert(slot.voice.end(), ring_.begin() + (a - ring_start_), ring_.begin() + (b - ring_start_));
    slot.gained_sec += static_cast<double>(b - a) / rate_;
    const size_t cap = static_cast<size_t>(std::llround(static_cast<double>(o_.max_voice_sec) * rate_));
    if (slot.voice.size() > cap) slot.voice.erase(slot.voice.begin(), slot.voice.end() - static_cast<std::ptrdiff_t>(cap));
}

void LiveSlotNames::consume(const DiarSegment& seg, const std::vector<DiarSegment>& open, bool growing) {
    Slot& slot = slots_[seg.speaker];  // a slot is known from its first segment
    const double from = std::max(seg.start, slot.cursor);
    if (seg.end <= from) return;
    // The new part of the segment and every other slot's recent or open segment: clean_voice's
    // pieces of it (all of them: max_voice is applied to the slot's audio).
    std::vector<DiarSegment> scene = {{seg.speaker, from, seg.end}};
    for (const DiarSegment& g : history_)
        if (g.speaker != seg.speaker) scene.push_back(g);
    for (const DiarSegment& g : open)
        if (g.speaker != seg.speaker) scene.push_back(g);
    const CleanVoiceRules rules{CleanVoiceRules{}.min_piece_sec, 1e30};
    const std::vector<TimeSpan> pieces = clean_voice(scene, seg.speaker, rules);
    for (const TimeSpan& p : pieces) add_audio(slot, p.start, p.end);
    // A closed segment is done; an open one is taken up to its last piece, so a clean tail too
    // short for a piece yet is looked at again when the segment has grown.
    slot.cursor = growing ? (pieces.empty() ? slot.cursor : std::max(slot.cursor, pieces.back().end)) : seg.end;
}

void LiveSlotNames::apply(Slot& slot, const SpeakerMatch& m) {
    if (m.name.empty()) {  // unknown: the name stays, a pending challenger loses its run
        slot.pending.clear();
        return;
    }
    if (slot.current.name.empty() || m.name == slot.current.name || m.name == slot.pending) {
        slot.current = {m.name, m.score};
        slot.pending.clear();
    } else {
        slot.pending = m.name;
    }
}

void LiveSlotNames::maybe_embed(Slot& slot, bool last) {
    if (static_cast<double>(slot.voice.size()) < static_cast<double>(o_.min_voice_sec) * rate_) return;
    if (slot.gained_sec <= 0) return;
    if (slot.embedded && slot.gained_sec < o_.refresh_sec && !last) return;
    const std::vector<float> e = embed_(slot.voice.data(), static_cast<int64_t>(slot.voice.size()));
    slot.embedded = true;
    slot.gained_sec = 0;
    apply(slot, identify_(e, o_.accept, o_.margin));
}

void LiveSlotNames::update(const std::vector<DiarSegment>& closed, const std::vector<DiarSegment>& open, bool last) {
    history_.insert(history_.end(), closed.begin(), closed.end());
    for (const DiarSegment& g : closed) consume(g, open, false);
    for (const DiarSegment& g : open) consume(g, open, true);
    const double horizon = static_cast<double>(ring_start_) / rate_;
    history_.erase(std::remove_if(history_.begin(), history_.end(), [&](const DiarSegment& g) { return g.end < horizon; }),
                   history_.end());
    for (auto& [id, slot] : slots_) maybe_embed(slot, last);
}

SlotName LiveSlotNames::name(int slot) const {
    const auto it = slots_.find(slot);
    return it == slots_.end() ? SlotName{} : it->second.current;
}

std::map<int, SlotName> LiveSlotNames::names() const {
    std::map<int, SlotName> out;
    for (const auto& [id, slot] : slots_) out[id] = slot.current;
    return out;
}

}  // namespace pk::speaker
