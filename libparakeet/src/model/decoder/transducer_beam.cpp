// TransducerDecoder::decode_beam: the beam searches on one request's encoder output, with the
// networks' per-request state (projections, prediction cache) in the request's arena.
#include <string>

#include "common/errors.h"
#include "model/decoder/beam_rnnt.h"
#include "model/decoder/beam_tdt.h"
#include "model/decoder/transducer_decoder.h"

namespace pk {

std::vector<BeamHypothesis> TransducerDecoder::decode_beam(ThreadTeam& team, Arena& arena, const float* enc,
                                                           int64_t T, int64_t enc_len, const BeamOptions& beam,
                                                           const ProgressSpan& progress) const {
    if (enc_len < 0 || enc_len > T)
        throw InvalidArgument("encoder length " + std::to_string(enc_len) + " is outside [0, " + std::to_string(T) + "]");
    if (beam.beam_size < 1) throw InvalidArgument("beam size must be at least 1 (got " + std::to_string(beam.beam_size) + ")");
    BeamSearchOptions o;
    o.beam_size = beam.beam_size;
    o.score_norm = beam.score_norm;
    o.blank_id = options_.blank_id;
    o.durations = options_.durations;
    o.confidence = options_.confidence;
    if (progress.progress != nullptr) o.on_frame = [&progress](int t, int n) { progress.at(static_cast<double>(t) / n); };
    ArenaScope scope(arena);
    float* enc_proj = arena.alloc_array<float>(static_cast<size_t>((enc_len > 0 ? enc_len : 1) * joint_.hidden()));
    if (enc_len > 0) joint_.project_encoder(team, arena, enc, enc_len, enc_proj);
    PredictionCache net(team, arena, prediction_, joint_, enc_proj, options_.blank_id);
    const int n = static_cast<int>(enc_len);
    return is_tdt() ? beam_tdt(net, n, o) : beam_rnnt(net, n, o);
}

}  // namespace pk
