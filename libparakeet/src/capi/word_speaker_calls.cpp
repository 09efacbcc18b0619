// The word-to-speaker rule and the utterance rule on their own through the C ABI
// (parakeet_capi_word_speakers): callers
// that hold words and diarization segments from elsewhere (the server's realtime sessions, whose
// words come from an ASR stream and segments from a diarization stream) attribute them by the
// library's rules, pk::word_speakers and pk::utterance_numbers (model/sas/speaker_words.h), not
// a restatement of them.
#include <cmath>
#include <string>
#include <vector>

#include "capi/context.h"
#include "model/diar/diar_segments.h"
#include "model/sas/speaker_words.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

void check_span(double start, double end, const char* what, int i) {
    if (!std::isfinite(start) || !std::isfinite(end))
        throw pk::InvalidArgument(std::string(what) + " " + std::to_string(i) + " has a time that is not finite");
    if (end < start)
        throw pk::InvalidArgument(std::string(what) + " " + std::to_string(i) + " ends before it starts");
}

}  // namespace

extern "C" {

int parakeet_capi_word_speakers(const parakeet_diar_segment* segments, int n_segments, const double* word_starts,
                                const double* word_ends, int n_words, int* speakers_out, int* utterances_out) {
    return guarded<int>(nullptr, 1, [&] {
        if (n_segments < 0 || (n_segments > 0 && segments == nullptr))
            throw pk::InvalidArgument("invalid segments buffer");
        if (n_words < 0 || (n_words > 0 && (word_starts == nullptr || word_ends == nullptr || speakers_out == nullptr)))
            throw pk::InvalidArgument("invalid words buffers");
        std::vector<pk::DiarSegment> segs;
        segs.reserve(static_cast<size_t>(n_segments));
        for (int i = 0; i < n_segments; ++i) {
            const parakeet_diar_segment& g = segments[i];
            if (g.speaker < 0) throw pk::InvalidArgument("segment " + std::to_string(i) + " has a negative speaker");
            check_span(g.start, g.end, "segment", i);
            // Back to the 10 ms grid the library's own segments lie on (the struct narrows them to
            // float), so a 0.5 s gap written in 10 ms units is 0.5 here as it is in SAS streams.
            segs.push_back({g.speaker, pk::round_to_diar_unit(g.start), pk::round_to_diar_unit(g.end)});
        }
        std::vector<pk::TranscriptWord> words(static_cast<size_t>(n_words));
        for (int i = 0; i < n_words; ++i) {
            check_span(word_starts[i], word_ends[i], "word", i);
            words[static_cast<size_t>(i)].start_sec = word_starts[i];
            words[static_cast<size_t>(i)].end_sec = word_ends[i];
        }
        const std::vector<int> speakers = pk::word_speakers(words, segs);
        for (int i = 0; i < n_words; ++i) speakers_out[i] = speakers[static_cast<size_t>(i)];
        if (utterances_out != nullptr) {
            const std::vector<int> numbers = pk::utterance_numbers(words, speakers);
            for (int i = 0; i < n_words; ++i) utterances_out[i] = numbers[static_cast<size_t>(i)];
        }
        return 0;
    });
}

}  // extern "C"
