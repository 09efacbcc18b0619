#include "model/hotword_decode.h"

#include <string>

#include "common/errors.h"

namespace pk {

bool hotwords_use_ctc(const Model& model, const RequestOptions& options) {
    if (options.beam.beam_size > 0) throw InvalidArgument("hotwords work with greedy decoding only (beam size 0)");
    const TransducerDecoder* tdt = model.transducer() != nullptr && model.transducer()->is_tdt() ? model.transducer()
                                                                                                   : nullptr;
    const std::string no_head = std::string("parakeet: contextual decoding needs a TDT or CTC head (arch '") +
                                arch_name(model.config().arch) + "')";
    switch (options.decoder) {
        case DecoderChoice::Ctc: return model.uses_ctc(DecoderChoice::Ctc);
        case DecoderChoice::Transducer:
            model.uses_ctc(DecoderChoice::Transducer);  // throws without a transducer
            if (tdt == nullptr) throw Unsupported(no_head);
            return false;
        case DecoderChoice::Default: break;
    }
    if (tdt != nullptr) return false;
    if (model.ctc() != nullptr) return true;
    throw Unsupported(no_head);
}

std::vector<TranscriptToken> hotword_tokens(const Model& model, Backend& b, const float* enc, int64_t frames,
                                            bool use_ctc, const RequestOptions& options, ContextStats* stats) {
    const ContextGraph& graph = *options.hotwords;
    if (use_ctc)
        return model.ctc()->decode_biased(b.team(), b.arena(), enc, frames, frames, graph, options.acoustic_top_m,
                                          stats);
    return model.transducer()->decode_biased(b.team(), b.arena(), enc, frames, frames, graph,
                                             options.acoustic_top_m, stats);
}

}  // namespace pk
