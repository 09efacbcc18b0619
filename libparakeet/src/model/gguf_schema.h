// The Parakeet ASR schema of a GGUF file: every metadata key and tensor name the loaders read,
// in one table (docs/gguf.md describes each). It is the schema of the published parakeet.cpp
// files, plus `parakeet.tokenizer.scores`; the converter (parakeet_py/convert/gguf_schema.py)
// writes the same names, and tests/python/test_gguf_schema.py checks the two agree, so a
// name is spelt here once for C++.
//
// Model knowledge, so it lives in model/: gguf/ reads any GGUF file and knows none of these.
// Other model kinds (cache-aware streaming, Silero VAD, Sortformer) add their own sections.
//
// Tensor names are NeMo's state_dict keys verbatim: a module's path (`encoder.layers.3.
// self_attn.linear_q`) and its parameter (`.weight`, `.bias`, BatchNorm's running stats).
#pragma once

#include <string>

namespace pk::schema {

// ---- general.* ----------------------------------------------------------------------------
inline constexpr char kGeneralArchitecture[] = "general.architecture";
inline constexpr char kArchitecture[] = "parakeet";  // its value in every Parakeet file
// general.architecture of the other model kinds parakeet.cpp loads (model/model_kind.h); a
// diarization model is a "parakeet" file whose parakeet.arch is kArchDiarization.
inline constexpr char kArchitectureSileroVad[] = "silero_vad";
inline constexpr char kArchitectureCed[] = "ced";
inline constexpr char kArchitectureVoicedetect[] = "voicedetect";
// Written by the converters, not read by the engine.
inline constexpr char kGeneralName[] = "general.name";
inline constexpr char kGeneralFileType[] = "general.file_type";

// ---- parakeet.*: the model ------------------------------------------------------------------
// Every parakeet.* key starts with this.
inline constexpr char kPrefix[] = "parakeet.";
inline constexpr char kArch[] = "parakeet.arch";  // ctc, rnnt, tdt, hybrid_rnnt_ctc, hybrid_tdt_ctc
inline constexpr char kArchDiarization[] = "diarization";  // its value in a Sortformer file

// Front end (NeMo's AudioToMelSpectrogramPreprocessor).
inline constexpr char kPreprocessorSampleRate[] = "parakeet.preprocessor.sample_rate";
inline constexpr char kPreprocessorNMels[] = "parakeet.preprocessor.n_mels";
inline constexpr char kPreprocessorNFft[] = "parakeet.preprocessor.n_fft";
inline constexpr char kPreprocessorWinLength[] = "parakeet.preprocessor.win_length";
inline constexpr char kPreprocessorHopLength[] = "parakeet.preprocessor.hop_length";
inline constexpr char kPreprocessorPreemph[] = "parakeet.preprocessor.preemph";
inline constexpr char kPreprocessorMagPower[] = "parakeet.preprocessor.mag_power";
inline constexpr char kPreprocessorNormalize[] = "parakeet.preprocessor.normalize";
inline constexpr char kPreprocessorLogZeroGuard[] = "parakeet.preprocessor.log_zero_guard";

// Encoder (NeMo's ConformerEncoder).
inline constexpr char kEncoderFeatIn[] = "parakeet.encoder.feat_in";
inline constexpr char kEncoderDModel[] = "parakeet.encoder.d_model";
inline constexpr char kEncoderNLayers[] = "parakeet.encoder.n_layers";
inline constexpr char kEncoderNHeads[] = "parakeet.encoder.n_heads";
inline constexpr char kEncoderFfDim[] = "parakeet.encoder.ff_dim";
inline constexpr char kEncoderConvKernel[] = "parakeet.encoder.conv_kernel";
inline constexpr char kEncoderConvNormType[] = "parakeet.encoder.conv_norm_type";
inline constexpr char kEncoderSubsamplingFactor[] = "parakeet.encoder.subsampling_factor";
inline constexpr char kEncoderSubsamplingConvChannels[] = "parakeet.encoder.subsampling_conv_channels";
inline constexpr char kEncoderXscaling[] = "parakeet.encoder.xscaling";
inline constexpr char kEncoderPosEmbMaxLen[] = "parakeet.encoder.pos_emb_max_len";
inline constexpr char kEncoderUseBias[] = "parakeet.encoder.use_bias";
// Cache-aware streaming encoders (parakeet.cpp's keys): chunked_limited attention with [L, R]
// contexts (the default pair as left/right, every pair flattened in presets), causal
// subsampling and causal depthwise convolutions. Absent in offline models (style "regular").
inline constexpr char kEncoderAttContextStyle[] = "parakeet.encoder.att_context_style";
inline constexpr char kEncoderAttContextLeft[] = "parakeet.encoder.att_context_left";
inline constexpr char kEncoderAttContextRight[] = "parakeet.encoder.att_context_right";
inline constexpr char kEncoderAttContextPresets[] = "parakeet.encoder.att_context_presets";
inline constexpr char kEncoderCausalDownsampling[] = "parakeet.encoder.causal_downsampling";
inline constexpr char kEncoderConvCausal[] = "parakeet.encoder.conv_causal";
// NeMo's streaming_cfg for the default pair. Derived data: the engine computes them from [L, R]
// (model/stream/cache_aware_schedule.h) and does not read them; the converter writes them for
// parakeet.cpp.
inline constexpr char kStreamingChunkSize[] = "parakeet.streaming.chunk_size";
inline constexpr char kStreamingShiftSize[] = "parakeet.streaming.shift_size";
inline constexpr char kStreamingPreEncodeCacheSize[] = "parakeet.streaming.pre_encode_cache_size";
inline constexpr char kStreamingCacheDropSize[] = "parakeet.streaming.cache_drop_size";
inline constexpr char kStreamingLastChannelCacheSize[] = "parakeet.streaming.last_channel_cache_size";
inline constexpr char kStreamingValidOutLen[] = "parakeet.streaming.valid_out_len";
inline constexpr char kStreamingDropExtraPreEncoded[] = "parakeet.streaming.drop_extra_pre_encoded";

// Vocabulary.
inline constexpr char kVocabSize[] = "parakeet.vocab_size";
inline constexpr char kBlankId[] = "parakeet.blank_id";
inline constexpr char kTokenizerPieces[] = "parakeet.tokenizer.pieces";
inline constexpr char kTokenizerScores[] = "parakeet.tokenizer.scores";

// Transducer heads (rnnt, tdt, hybrid_*).
inline constexpr char kDecoderPredHidden[] = "parakeet.decoder.pred_hidden";
inline constexpr char kDecoderPredRnnLayers[] = "parakeet.decoder.pred_rnn_layers";
inline constexpr char kJointJointHidden[] = "parakeet.joint.joint_hidden";
inline constexpr char kJointActivation[] = "parakeet.joint.activation";
inline constexpr char kDecodingMaxSymbols[] = "parakeet.decoding.max_symbols";
inline constexpr char kTdtDurations[] = "parakeet.tdt.durations";

// A key without its "parakeet." prefix ("encoder.d_model"), as error messages name it.
inline std::string short_key(const char* key) {
    const std::string k(key);
    const std::string prefix(kPrefix);
    return k.compare(0, prefix.size(), prefix) == 0 ? k.substr(prefix.size()) : k;
}

// ---- tensor names ---------------------------------------------------------------------------
// A module's parameters.
inline std::string weight(const std::string& module) { return module + ".weight"; }
inline std::string bias(const std::string& module) { return module + ".bias"; }
inline std::string running_mean(const std::string& module) { return module + ".running_mean"; }
inline std::string running_var(const std::string& module) { return module + ".running_var"; }

// Front end: the Hann window and the mel filterbank (the only preprocessor.* tensors kept).
inline constexpr char kMelWindow[] = "preprocessor.featurizer.window";
inline constexpr char kMelFilterbank[] = "preprocessor.featurizer.fb";

// Every encoder tensor starts with this.
inline constexpr char kEncoderTensorPrefix[] = "encoder.";

// The dw_striding subsampling: "encoder.pre_encode." + one of these modules.
inline constexpr char kSubsamplingPrefix[] = "encoder.pre_encode.";
inline constexpr char kSubsamplingConv0[] = "conv.0";       // 3x3, 1 -> C channels, stride 2
inline constexpr char kSubsamplingDepthwise1[] = "conv.2";  // 3x3 depthwise, stride 2
inline constexpr char kSubsamplingPointwise1[] = "conv.3";  // 1x1
inline constexpr char kSubsamplingDepthwise2[] = "conv.5";  // 3x3 depthwise, stride 2
inline constexpr char kSubsamplingPointwise2[] = "conv.6";  // 1x1
inline constexpr char kSubsamplingOut[] = "out";            // Linear C * F/8 -> d_model
inline std::string subsampling_module(const std::string& module) { return kSubsamplingPrefix + module; }

// Conformer layer i: "encoder.layers.<i>." + one of these modules.
inline constexpr char kLayerPrefix[] = "encoder.layers.";
inline constexpr char kNormFeedForward1[] = "norm_feed_forward1";
inline constexpr char kFeedForward1Linear1[] = "feed_forward1.linear1";
inline constexpr char kFeedForward1Linear2[] = "feed_forward1.linear2";
inline constexpr char kNormSelfAtt[] = "norm_self_att";
inline constexpr char kSelfAttnLinearQ[] = "self_attn.linear_q";
inline constexpr char kSelfAttnLinearK[] = "self_attn.linear_k";
inline constexpr char kSelfAttnLinearV[] = "self_attn.linear_v";
inline constexpr char kSelfAttnLinearOut[] = "self_attn.linear_out";
inline constexpr char kSelfAttnLinearPos[] = "self_attn.linear_pos";
inline constexpr char kSelfAttnPosBiasU[] = "self_attn.pos_bias_u";  // a tensor, not a module
inline constexpr char kSelfAttnPosBiasV[] = "self_attn.pos_bias_v";  // a tensor, not a module
inline constexpr char kNormConv[] = "norm_conv";
inline constexpr char kConvPointwise1[] = "conv.pointwise_conv1";
inline constexpr char kConvDepthwise[] = "conv.depthwise_conv";
// NeMo's attribute name for the conv module's norm, BatchNorm (with running stats) or
// LayerNorm (conv_norm_type).
inline constexpr char kConvNorm[] = "conv.batch_norm";
inline constexpr char kConvPointwise2[] = "conv.pointwise_conv2";
inline constexpr char kNormFeedForward2[] = "norm_feed_forward2";
inline constexpr char kFeedForward2Linear1[] = "feed_forward2.linear1";
inline constexpr char kFeedForward2Linear2[] = "feed_forward2.linear2";
inline constexpr char kNormOut[] = "norm_out";
inline std::string layer_module(int layer, const std::string& module) {
    return kLayerPrefix + std::to_string(layer) + "." + module;
}

// The CTC head, a 1x1 Conv1d d_model -> V+1: the decoder of a ctc model, the auxiliary
// decoder of a hybrid one.
inline constexpr char kCtcHead[] = "decoder.decoder_layers.0";
inline constexpr char kHybridCtcHead[] = "ctc_decoder.decoder_layers.0";

// The prediction net: the embedding (V+1 rows, blank last) and the LSTM, whose parameters are
// "<kPredictionLstm>.<param>_l<layer>" with param weight_ih, weight_hh, bias_ih or bias_hh.
inline constexpr char kPredictionEmbed[] = "decoder.prediction.embed";
inline constexpr char kPredictionLstm[] = "decoder.prediction.dec_rnn.lstm";
inline std::string lstm_param(const char* param, int layer) {
    return kPredictionLstm + std::string(".") + param + "_l" + std::to_string(layer);
}

// The joint: encoder and prediction projections, then ReLU and the output layer
// (V+1 token logits, then the TDT duration logits).
inline constexpr char kJointEnc[] = "joint.enc";
inline constexpr char kJointPred[] = "joint.pred";
inline constexpr char kJointOut[] = "joint.joint_net.2";

// ---- name patterns (ECMAScript regular expressions, matched against the whole name) --------
// The matrix weights a converter may store as f16 or q8_0 (when 2-D, both dimensions >= 32
// and the row length a whole number of blocks), as parakeet.cpp's converter and ours do:
// the FFNs, the attention projections, the subsampling output and the joint's projections.
inline constexpr char kQuantisableWeights[] =
    R"(encoder\.layers\.\d+\.feed_forward[12]\.linear[12]\.weight)"
    R"(|encoder\.layers\.\d+\.self_attn\.linear_(?:q|k|v|out|pos)\.weight)"
    R"(|encoder\.pre_encode\.out\.weight|joint\.(?:enc|pred)\.weight)";
// What a q8_0 model also quantises at load when stored F32 (model/layers/q8_at_load.h): the
// conv modules' pointwise convolutions and the subsampling output ...
inline constexpr char kQuantisedAtLoad[] =
    R"(encoder\.layers\.\d+\.conv\.pointwise_conv[12]\.weight|encoder\.pre_encode\.out\.weight)";
// ... and, opt-in (PARAKEET_Q8_SUBSAMPLING=1), the subsampling's pointwise convolutions.
inline constexpr char kQuantisedAtLoadSubsampling[] = R"(encoder\.pre_encode\.conv\.[36]\.weight)";

// ---- Sortformer diarization (parakeet.arch = kArchDiarization) -----------------------------
// parakeet.cpp's diarization keys: the encoder and preprocessor keys above, plus these.
inline constexpr char kDiarNSpeakers[] = "parakeet.diar.n_speakers";
inline constexpr char kDiarTfDModel[] = "parakeet.diar.tf_d_model";
inline constexpr char kDiarUpsampleFactor[] = "parakeet.diar.upsample_factor";  // 10 ms units a frame
inline constexpr char kDiarFrameResolutionSec[] = "parakeet.diar.frame_resolution_sec";
inline constexpr char kDiarOnsetThreshold[] = "parakeet.diar.onset_threshold";
inline constexpr char kDiarOffsetThreshold[] = "parakeet.diar.offset_threshold";
// The checkpoint's streaming configuration (NeMo's SortformerModules names); optional.
inline constexpr char kDiarStreamingMode[] = "parakeet.diar.streaming_mode";
inline constexpr char kDiarChunkLen[] = "parakeet.diar.chunk_len";
inline constexpr char kDiarSpkcacheLen[] = "parakeet.diar.spkcache_len";
inline constexpr char kDiarFifoLen[] = "parakeet.diar.fifo_len";
inline constexpr char kDiarSpkcacheUpdatePeriod[] = "parakeet.diar.spkcache_update_period";
inline constexpr char kDiarSpkcacheSilFramesPerSpk[] = "parakeet.diar.spkcache_sil_frames_per_spk";
inline constexpr char kDiarSilThreshold[] = "parakeet.diar.sil_threshold";
inline constexpr char kDiarPredScoreThreshold[] = "parakeet.diar.pred_score_threshold";
inline constexpr char kDiarScoresBoostLatest[] = "parakeet.diar.scores_boost_latest";
inline constexpr char kDiarStrongBoostRate[] = "parakeet.diar.strong_boost_rate";
inline constexpr char kDiarWeakBoostRate[] = "parakeet.diar.weak_boost_rate";
inline constexpr char kDiarMinPosScoresRate[] = "parakeet.diar.min_pos_scores_rate";
// Ours (parakeet.cpp's files lack them; the loader then reads the sizes off the tensors).
inline constexpr char kDiarTfNLayers[] = "parakeet.diar.tf_n_layers";
inline constexpr char kDiarTfNHeads[] = "parakeet.diar.tf_n_heads";
inline constexpr char kDiarTfInnerSize[] = "parakeet.diar.tf_inner_size";
inline constexpr char kDiarChunkLeftContext[] = "parakeet.diar.chunk_left_context";
inline constexpr char kDiarChunkRightContext[] = "parakeet.diar.chunk_right_context";

// Sortformer tensors, NeMo's names. The projection is absent when fc_d_model == tf_d_model.
inline constexpr char kDiarEncoderProj[] = "sortformer_modules.encoder_proj";
inline constexpr char kDiarHeadHidden[] = "sortformer_modules.first_hidden_to_hidden";
inline constexpr char kDiarHeadSpks[] = "sortformer_modules.single_hidden_to_spks";
// NeMo's post-LN TransformerEncoder, layer i: kTfLayerPrefix + "<i>." + module.
inline constexpr char kTfLayerPrefix[] = "transformer_encoder.layers.";
inline constexpr char kTfQuery[] = "first_sub_layer.query_net";
inline constexpr char kTfKey[] = "first_sub_layer.key_net";
inline constexpr char kTfValue[] = "first_sub_layer.value_net";
// NeMo's name of the output projection; too long for GGUF's 63 bytes: stored as kAttnOutProj.
inline constexpr char kTfOut[] = "first_sub_layer.out_projection";
inline constexpr char kTfNorm1[] = "layer_norm_1";
inline constexpr char kTfDenseIn[] = "second_sub_layer.dense_in";
inline constexpr char kTfDenseOut[] = "second_sub_layer.dense_out";
inline constexpr char kTfNorm2[] = "layer_norm_2";
inline std::string tf_layer_module(int layer, const char* module) {
    return kTfLayerPrefix + std::to_string(layer) + "." + module;
}
// A transformer layer's output projection, "<layer>.attn.out_proj" (parakeet.cpp's name).
// parakeet.cpp's diarization files may also fuse a layer's q/k/v projections into one
// "<layer>.attn.w_qkv" matrix (rows q, k, v), in the transformer and the conformer layers.
inline constexpr char kAttnWQkv[] = "attn.w_qkv";
inline constexpr char kAttnOutProj[] = "attn.out_proj";

}  // namespace pk::schema
