// RequestOptions: what a caller may choose for one transcription request besides the audio —
// the decoder head, the attention mode, greedy or beam search, and a progress callback that
// can cancel.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "model/decoder/beam_search.h"
#include "model/decoder/context_graph.h"
#include "model/encoder/attention_setting.h"

namespace pk {

// Which head decodes: the model's own (the transducer for hybrids), CTC or the transducer.
enum class DecoderChoice { Default = 0, Ctc = 1, Transducer = 2 };

// Called from the request's thread with the fraction of the work done (0..1, never
// decreasing); returns false to cancel the request, which then throws Cancelled.
using ProgressFn = std::function<bool(double fraction)>;

struct RequestOptions {
    // Implicit, so a plain DecoderChoice is a complete set of options.
    RequestOptions(DecoderChoice d = DecoderChoice::Default) : decoder(d) {}  // NOLINT

    DecoderChoice decoder;
    // Unset: the model's current setting (Model::set_attention, PARAKEET_ATT_CONTEXT).
    std::optional<AttentionSetting> attention;
    ProgressFn progress;  // may be empty
    // beam.beam_size 0: greedy decoding; >= 1: NeMo's transducer beam search (beam_search.h),
    // the best hypothesis as the transcript (Model::transcribe_nbest gives the N-best list).
    BeamOptions beam;
    // Set: greedy decoding biased towards these phrases (hotwords, context_bias.h); the
    // transcript then carries the graph's statistics. Shared, immutable, any thread.
    std::shared_ptr<const ContextGraph> hotwords;
    int acoustic_top_m = 8;  // acoustic candidates per step with hotwords (<= 0: 8)
    // Prompt-conditioned models: the locale whose prompt the heads see (empty: the model's
    // default); an unknown one is an InvalidArgument. Other models ignore it.
    std::string language;
};

}  // namespace pk
