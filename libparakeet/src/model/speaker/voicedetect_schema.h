// The `voicedetect` GGUF schema (voice-detect.cpp's convert_voicedetect_to_gguf.py): the keys
// the speaker encoder reads. Tensor names are SpeechBrain's state-dict names verbatim
// (ecapa_tdnn.h). parakeet_py/convert/voicedetect_schema.py writes the same keys.
#pragma once

namespace pk::schema::voicedetect {

inline constexpr char kArch[] = "voicedetect.arch";  // "ecapa_tdnn", "wespeaker_resnet34", ...
inline constexpr char kArchEcapa[] = "ecapa_tdnn";
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

}  // namespace pk::schema::voicedetect
