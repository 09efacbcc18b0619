// Model's beam search requests: the transducer's tokens of a request (greedy or the best beam
// hypothesis) and the N-best list (transcribe_nbest). The search is NeMo's (beam_search.h);
// its state lives in the request's arena, so it runs in a pool like any request.
#include <string>

#include "common/errors.h"
#include "model/model.h"

namespace pk {
namespace {

void check_beam(const BeamOptions& beam) {
    if (beam.beam_size < 1 || beam.nbest < 1 || beam.nbest > beam.beam_size)
        throw InvalidArgument("N-best decoding requires beam_size >= nbest >= 1 (got beam_size " +
                           std::to_string(beam.beam_size) + ", nbest " + std::to_string(beam.nbest) + ")");
}

}  // namespace

std::vector<TranscriptToken> Model::transducer_tokens(Backend& b, const float* enc, int64_t frames,
                                                      const RequestOptions& options) const {
    if (options.beam.beam_size <= 0) return transducer_->decode(b.team(), b.arena(), enc, frames, frames);
    std::vector<BeamHypothesis> hyps = transducer_->decode_beam(b.team(), b.arena(), enc, frames, frames, options.beam);
    return std::move(hyps.front().tokens);
}

std::vector<ScoredTranscript> Model::transcribe_nbest(const float* samples, int64_t n, int sample_rate,
                                                      const RequestOptions& options) const {
    if (!transducer_)
        throw Unsupported(std::string("N-best decoding requires a TDT or RNN-T head; this ") + arch_name(config_.arch) +
                           " model has none");
    check_beam(options.beam);
    const BackendLease lease = lease_backend();
    Backend& b = lease.backend();
    return with_encoded_request(b, samples, n, sample_rate, options, nullptr, [&](const EncodedRequest& enc) {
        std::vector<BeamHypothesis> hyps =
            transducer_->decode_beam(b.team(), b.arena(), enc.data, enc.frames, enc.frames, options.beam, enc.decoding);
        const auto nbest = static_cast<size_t>(options.beam.nbest);
        if (hyps.size() > nbest) hyps.resize(nbest);
        std::vector<ScoredTranscript> out;
        for (BeamHypothesis& h : hyps) {
            ScoredTranscript s;
            s.transcript = builder_->build(std::move(h.tokens), transducer_->timestamp_rule());
            s.transcript.attention = enc.attention;
            s.score = h.score;
            s.normalized_score = h.normalized_score;
            out.push_back(std::move(s));
        }
        return out;
    });
}

}  // namespace pk
