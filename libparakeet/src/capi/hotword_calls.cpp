// The hotword (context biasing) entry points of the C ABI: parakeet.cpp's
// parakeet_capi_context_* and parakeet_capi_transcribe_*_contextual_json, with its signatures,
// semantics and error messages; clear errors where parakeet.cpp crashes (NULL phrase entries,
// NULL id lists).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "audio/wav_reader.h"
#include "capi/context.h"
#include "capi/transcript_json.h"
#include "common/errors.h"
#include "model/decoder/context_graph.h"
#include "model/text/bpe_encoder.h"
#include "parakeet_capi.h"

// The handle owns one reference: requests that use the graph take their own, so freeing the
// handle while they run (or after the model's context is freed) is safe.
struct parakeet_context_graph {
    std::shared_ptr<const pk::ContextGraph> graph;
};

using pk::capi::guarded;

namespace {


float weight_of(const float* weights, int i) { return weights != nullptr ? weights[i] : 1.f; }

parakeet_context_graph* wrap(std::shared_ptr<const pk::ContextGraph> g) {
    return new parakeet_context_graph{std::move(g)};
}

std::vector<pk::ContextPhrase> phrases_from_text(const pk::Model& model, const char** phrases, const float* weights,
                                                 int n) {
    const pk::BpeEncoder encoder(model.config().pieces, model.config().scores);
    std::vector<pk::ContextPhrase> out;
    for (int i = 0; i < n; ++i) {
        if (phrases[i] == nullptr) throw pk::InvalidArgument("phrase " + std::to_string(i) + " is NULL");
        const pk::BpeEncoding e = encoder.encode(phrases[i]);
        if (e.ids.empty()) throw pk::InvalidArgument("parakeet: phrase is empty");
        if (!e.first_unknown.empty())
            throw pk::InvalidArgument(std::string("parakeet: phrase '") + phrases[i] +
                                   "' contains a character this model's tokenizer cannot represent");
        out.push_back({e.ids, weight_of(weights, i)});
    }
    return out;
}

pk::Transcript run_contextual(parakeet_ctx* ctx, const float* samples, int64_t n, int sample_rate,
                              std::vector<float>* owned, const parakeet_context_graph* graph, int acoustic_top_m,
                              const char* lang) {
    pk::RequestOptions options;  // the default head: TDT when there is one, else CTC (hotword_decode.h)
    if (lang != nullptr) options.language = lang;  // a prompt model's locale; other models ignore it
    options.hotwords = graph->graph;
    options.acoustic_top_m = acoustic_top_m;
    if (owned != nullptr) return pk::capi::asr_model(ctx).transcribe(std::move(*owned), sample_rate, options);
    return pk::capi::asr_model(ctx).transcribe(samples, n, sample_rate, options);
}

void check_graph(const parakeet_context_graph* graph) {
    if (graph == nullptr || !graph->graph) throw pk::InvalidArgument("context graph is NULL");
}

}  // namespace

extern "C" {

parakeet_context_graph* parakeet_capi_context_create_text(parakeet_ctx* ctx, const char** phrases,
                                                          const float* weights, int n_phrases, float score) {
    return guarded<parakeet_context_graph*>(ctx, nullptr, [&] {
        pk::capi::asr_model(ctx);
        if (phrases == nullptr || n_phrases <= 0) throw pk::InvalidArgument("phrases is NULL");
        const auto list = phrases_from_text(pk::capi::asr_model(ctx), phrases, weights, n_phrases);
        return wrap(pk::ContextGraph::build(list, score, pk::capi::asr_model(ctx).config().vocab_size));
    });
}

parakeet_context_graph* parakeet_capi_context_create_tokens(parakeet_ctx* ctx, const int32_t** ids,
                                                            const int* lens, const float* weights, int n_phrases,
                                                            float score) {
    return guarded<parakeet_context_graph*>(ctx, nullptr, [&] {
        pk::capi::asr_model(ctx);
        if (ids == nullptr || lens == nullptr || n_phrases <= 0) throw pk::InvalidArgument("phrases is NULL");
        std::vector<pk::ContextPhrase> list;
        for (int i = 0; i < n_phrases; ++i) {
            if (lens[i] > 0 && ids[i] == nullptr)
                throw pk::InvalidArgument("context phrase " + std::to_string(i) + ": its token ids are NULL");
            pk::ContextPhrase p;
            if (lens[i] > 0) p.ids.assign(ids[i], ids[i] + lens[i]);
            p.weight = weight_of(weights, i);
            list.push_back(std::move(p));
        }
        return wrap(pk::ContextGraph::build(list, score, pk::capi::asr_model(ctx).config().vocab_size));
    });
}

void parakeet_capi_context_free(parakeet_context_graph* graph) { delete graph; }

void parakeet_capi_context_info(const parakeet_context_graph* graph, int* n_states, int* n_arcs, int* n_phrases,
                                double* build_ms) {
    if (graph == nullptr || !graph->graph) return;
    const pk::ContextGraph& g = *graph->graph;
    if (n_states != nullptr) *n_states = g.n_states();
    if (n_arcs != nullptr) *n_arcs = g.n_arcs();
    if (n_phrases != nullptr) *n_phrases = g.n_phrases();
    if (build_ms != nullptr) *build_ms = g.build_ms();
}

char* parakeet_capi_transcribe_path_contextual_json(parakeet_ctx* ctx, const char* wav_path,
                                                    const parakeet_context_graph* graph, int acoustic_top_m,
                                                    const char* lang) {
    return guarded<char*>(ctx, nullptr, [&] {
        pk::capi::asr_model(ctx);
        if (wav_path == nullptr) throw pk::InvalidArgument("WAV path is NULL");
        check_graph(graph);
        pk::WavAudio wav = pk::read_wav_file(wav_path, 0);
        const double seconds = static_cast<double>(wav.samples.size()) / wav.sample_rate;
        const pk::Transcript t = run_contextual(ctx, nullptr, 0, wav.sample_rate, &wav.samples, graph, acoustic_top_m,
                                                 lang);
        return pk::capi::to_c_string(pk::capi::transcript_to_json(t, seconds));
    });
}

char* parakeet_capi_transcribe_pcm_contextual_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                   int sample_rate, const parakeet_context_graph* graph,
                                                   int acoustic_top_m, const char* lang) {
    return guarded<char*>(ctx, nullptr, [&] {
        pk::capi::asr_model(ctx);
        check_graph(graph);
        const pk::Transcript t = run_contextual(ctx, samples, n_samples, sample_rate, nullptr, graph, acoustic_top_m,
                                                 lang);
        const double seconds = sample_rate > 0 ? static_cast<double>(n_samples) / sample_rate : 0.0;
        return pk::capi::to_c_string(pk::capi::transcript_to_json(t, seconds));
    });
}

}  // extern "C"
