// The `voicedetect` GGUF schema (voice-detect.cpp's convert_voicedetect_to_gguf.py): the keys
// the speaker encoder reads. ECAPA's tensor names are SpeechBrain's state-dict names verbatim
// (ecapa_tdnn.h); CAM++ lists its tensors in the campplus keys (campplus.h).
// parakeet_py/convert/voicedetect_schema.py writes the same keys.
#pragma once

namespace pk::schema::voicedetect {

inline constexpr char kArch[] = "voicedetect.arch";  // "ecapa_tdnn", "wespeaker_resnet34", ...
inline constexpr char kArchEcapa[] = "ecapa_tdnn";
inline constexpr char kArchCampplus[] = "campplus";
inline constexpr char kEmbeddingDim[] = "voicedetect.embedding_dim";  // u32; absent or 0: no speaker head
inline constexpr char kL2Normalize[] = "voicedetect.l2_normalize";   // bool, default true

// The Kaldi fbank front end (defaults as voice-detect.cpp's loader has them).
inline constexpr char kFbankSampleRate[] = "voicedetect.fbank.sample_rate";  // u32, 16000
inline constexpr char kFbankNMels[] = "voicedetect.fbank.n_mels";            // u32, 80
inline constexpr char kFbankNFft[] = "voicedetect.fbank.n_fft";              // u32, 512
inline constexpr char kFbankWinLength[] = "voicedetect.fbank.win_length";    // u32, 400
inline constexpr char kFbankHopLength[] = "voicedetect.fbank.hop_length";    // u32, 160
inline constexpr char kFbankPreemph[] = "voicedetect.fbank.preemph";         // f32, 0.97
inline constexpr char kFbankLowFreq[] = "voicedetect.fbank.low_freq";        // f32, 20
inline constexpr char kFbankHighFreq[] = "voicedetect.fbank.high_freq";      // f32, 0 (Nyquist)
inline constexpr char kFbankUseEnergy[] = "voicedetect.fbank.use_energy";    // bool, false
inline constexpr char kFbankCmn[] = "voicedetect.fbank.cmn";                 // bool, true
inline constexpr char kFbankWindow[] = "voicedetect.fbank.window";           // string, "povey"

// CAM++: its convolutions and BatchNorms in forward order (campplus.h).
inline constexpr char kCampplusConvWeight[] = "voicedetect.campplus.conv_weight";  // string array
inline constexpr char kCampplusConvBias[] = "voicedetect.campplus.conv_bias";      // string array, "": none
inline constexpr char kCampplusBnPrefix[] = "voicedetect.campplus.bn_prefix";      // string array
inline constexpr char kCampplusEmbBnMean[] = "voicedetect.campplus.emb_bn_mean";   // string
inline constexpr char kCampplusEmbBnVar[] = "voicedetect.campplus.emb_bn_var";     // string
inline constexpr char kCampplusBnEps[] = "voicedetect.campplus.bn_eps";            // f32, 1e-5

}  // namespace pk::schema::voicedetect
