// Loading, freeing and describing models through the C ABI.
#include <algorithm>
#include <map>
#include <string>

#include "capi/attention_json.h"
#include "capi/context.h"
#include "capi/environment.h"
#include "capi/load_options_json.h"
#include "common/json_writer.h"
#include "parakeet_capi.h"
#include "runtime/cpu_features.h"

using pk::capi::guarded;

namespace {

// The class of a GGUF tensor, for reporting storage types per class: which weights a
// quantised file stores small (ffn, attention, joint; subsampling's output projection) and
// which stay F32.
const char* tensor_class(const std::string& name) {
    auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
    if (has(".norm")) return "norm";
    if (has("preprocessor.")) return "featurizer";
    if (has(".feed_forward")) return "ffn";
    if (has(".self_attn.")) return "attention";
    if (has(".conv.")) return "conv";
    if (has("encoder.pre_encode.out.")) return "subsampling_out";
    if (has("encoder.pre_encode.")) return "subsampling";
    if (has("joint.enc.")) return "joint_enc";
    if (has("joint.pred.")) return "joint_pred";
    if (has("joint.")) return "joint_out";
    if (has("ctc_decoder.") || (name.rfind("decoder.decoder_layers.", 0) == 0)) return "ctc";
    if (has("decoder.")) return "prediction";
    return "other";
}

// The model-info JSON document (see parakeet_capi_model_info_json in the header).
std::string describe(const pk::Model& m) {
    const pk::ModelConfig& c = m.config();
    pk::JsonWriter j;
    j.begin_object();
    j.key("path").value(m.path());
    j.key("arch").value(pk::arch_name(c.arch));
    j.key("sample_rate").value(c.pre.sample_rate);
    j.key("n_mels").value(c.pre.n_mels);
    j.key("d_model").value(c.enc.d_model);
    j.key("n_layers").value(c.enc.n_layers);
    j.key("n_heads").value(c.enc.n_heads);
    j.key("ff_dim").value(c.enc.ff_dim);
    j.key("subsampling_factor").value(c.enc.subsampling_factor);
    j.key("vocab_size").value(c.vocab_size);
    j.key("frame_sec").value(c.frame_seconds(), 4);
    j.key("has_ctc").value(c.has_ctc());
    j.key("has_transducer").value(c.has_transducer());
    if (c.has_transducer()) {
        j.key("pred_hidden").value(c.pred_hidden);
        j.key("joint_hidden").value(c.joint_hidden);
        j.key("max_symbols").value(c.max_symbols);
    }
    if (c.is_tdt()) {
        j.key("durations").begin_array();
        for (int d : c.durations) j.value(d);
        j.end_array();
    }
    // Tensor storage types and how many tensors use each.
    std::map<std::string, int64_t> type_counts;
    std::map<std::string, std::map<std::string, int64_t>> class_counts;
    for (const auto& t : m.gguf().tensors()) {
        const char* type = pk::ggml_type_name(static_cast<uint32_t>(t.type));
        ++type_counts[type];
        ++class_counts[tensor_class(t.name)][type];
    }
    j.key("tensor_types").begin_object();
    for (const auto& [type, count] : type_counts) j.key(type.c_str()).value(count);
    j.end_object();
    j.key("tensor_classes").begin_object();
    for (const auto& [cls, counts] : class_counts) {
        j.key(cls.c_str()).begin_object();
        for (const auto& [type, count] : counts) j.key(type.c_str()).value(count);
        j.end_object();
    }
    j.end_object();
    j.key("file_bytes").value(static_cast<int64_t>(m.gguf().file_size()));
    j.key("packed_bytes").value(static_cast<int64_t>(m.packed_bytes()));
    j.key("attention");
    pk::capi::write_attention(j, c.enc.chunked_limited() ? pk::AttentionSetting::chunked(c.enc.att_contexts[0].left,
                                                                                       c.enc.att_contexts[0].right)
                                                      : m.attention());
    j.key("auto_full_max_frames").value(pk::kAutoFullMaxFrames);
    // How streams run on this model: NeMo's buffered windows, or cache-aware with the contexts
    // it was trained with (the first is the default); a chunk is (right + 1) encoder frames.
    j.key("streaming").begin_object();
    j.key("mode").value(c.enc.chunked_limited() ? "cache_aware" : "buffered");
    if (c.enc.chunked_limited()) {
        const double frame_ms = 1000.0 * c.frame_seconds();
        j.key("contexts").begin_array();
        for (const pk::AttContext& a : c.enc.att_contexts) {
            j.begin_object();
            j.key("left").value(a.left);
            j.key("right").value(a.right);
            j.key("chunk_ms").value(frame_ms * (a.right + 1), 1);
            j.end_object();
        }
        j.end_array();
    }
    j.end_object();
    // Whether the vocabulary has <EOU>: the stream then reports end-of-utterance events (the
    // server's semantic_vad turn detection needs them).
    j.key("end_of_utterance").value(std::find(c.pieces.begin(), c.pieces.end(), "<EOU>") != c.pieces.end());
    // A prompt-conditioned model's locales (the _lang calls' target_lang); absent for the
    // others, which take any language and ignore it.
    if (c.prompt.present) {
        j.key("languages").begin_object();
        j.key("default").value(c.prompt.default_lang);
        j.key("locales").begin_array();
        for (const std::string& l : c.prompt.locales) j.value(l);
        j.end_array();
        j.end_object();
    }
    j.key("isa").value(pk::isa_level_name(m.isa()));
    j.key("bf16_encoder").value(m.bf16_encoder());
    j.end_object();
    return j.str();
}

}  // namespace

extern "C" {

int parakeet_capi_abi_version(void) { return PARAKEET_CAPI_ABI_VERSION; }

parakeet_ctx* parakeet_capi_load_with(const char* gguf_path, const char* options_json) {
    return guarded<parakeet_ctx*>(nullptr, nullptr, [&]() -> parakeet_ctx* {
        if (gguf_path == nullptr) throw pk::InvalidArgument("model path is NULL");
        pk::capi::apply_thread_environment();
        pk::LoadOptions options = pk::capi::load_options_from_environment();
        pk::capi::apply_load_options_json(options_json, options);
        auto ctx = std::make_unique<parakeet_ctx>();
        // The file's kind decides the loader; a VAD model takes no ASR load options.
        const pk::GgufReader gguf = pk::GgufReader::open(gguf_path);
        if (pk::detect_model_kind(gguf) == pk::ModelKind::Vad) {
            ctx->vad = pk::SileroVad::load(gguf);
            ctx->kind = pk::ModelKind::Vad;
            return ctx.release();
        }
        if (pk::detect_model_kind(gguf) == pk::ModelKind::Speaker) {
            ctx->speaker = pk::speaker::SpeakerEncoder::load(gguf_path, options);
            ctx->kind = pk::ModelKind::Speaker;
            return ctx.release();
        }
        if (pk::detect_model_kind(gguf) == pk::ModelKind::Diarization) {
            ctx->diar = pk::DiarModel::load(gguf_path, options);
            ctx->kind = pk::ModelKind::Diarization;
            return ctx.release();
        }
        ctx->model = pk::Model::load(gguf_path, options);
        ctx->kind = pk::ModelKind::Asr;
        return ctx.release();
    });
}

parakeet_ctx* parakeet_capi_load(const char* gguf_path) { return parakeet_capi_load_with(gguf_path, nullptr); }

int parakeet_capi_model_kind(const parakeet_ctx* ctx) {
    return static_cast<int>(ctx == nullptr ? pk::ModelKind::None : ctx->kind);
}

// parakeet.cpp keeps a separate thread-local message for load failures; here it is the
// thread-local error every call sets, which after a failed load is that load's message.
const char* parakeet_capi_load_error(void) { return pk::capi::thread_error().c_str(); }

void parakeet_capi_free(parakeet_ctx* ctx) { delete ctx; }

char* parakeet_capi_model_info_json(parakeet_ctx* ctx) {
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        return pk::capi::to_c_string(describe(pk::capi::asr_model(ctx)));
    });
}

}  // extern "C"
