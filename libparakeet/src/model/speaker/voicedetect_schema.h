// The `voicedetect` GGUF schema (voice-detect.cpp's convert_voicedetect_to_gguf.py): the keys
// the speaker encoder reads. ECAPA's tensor names are SpeechBrain's state-dict names verbatim
// (ecapa_tdnn.h); ResNet34, ERes2Net and CAM++ list theirs in their manifest keys
// (wespeaker_resnet.h, eres2net.h, campplus.h).
// parakeet_py/convert/voicedetect_schema.py writes the same keys.
#pragma once

namespace pk::schema::voicedetect {

inline constexpr char kArch[] = "voicedetect.arch";  // "ecapa_tdnn", "wespeaker_resnet34", ...
inline constexpr char kArchEcapa[] = "ecapa_tdnn";
inline constexpr char kArchResnet34[] = "wespeaker_resnet34";
inline constexpr char kArchEres2net[] = "eres2net";
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

// WeSpeaker ResNet34's manifest: the tensor names of its convolutions (BatchNorm folded in), in
// the order they run.
inline constexpr char kResnetStemWeight[] = "voicedetect.resnet.stem_weight";    // string
inline constexpr char kResnetStemBias[] = "voicedetect.resnet.stem_bias";        // string
inline constexpr char kResnetConv1Weight[] = "voicedetect.resnet.conv1_weight";  // string[], per block
inline constexpr char kResnetConv1Bias[] = "voicedetect.resnet.conv1_bias";      // string[]
inline constexpr char kResnetConv2Weight[] = "voicedetect.resnet.conv2_weight";  // string[]
inline constexpr char kResnetConv2Bias[] = "voicedetect.resnet.conv2_bias";      // string[]
inline constexpr char kResnetDownWeight[] = "voicedetect.resnet.down_weight";    // string[], "": identity
inline constexpr char kResnetDownBias[] = "voicedetect.resnet.down_bias";        // string[]
inline constexpr char kResnetStride[] = "voicedetect.resnet.stride";             // i32[], conv1's and down's
inline constexpr char kResnetSegWeight[] = "voicedetect.resnet.seg_weight";      // string, [dim, 2 * C * F']
inline constexpr char kResnetSegBias[] = "voicedetect.resnet.seg_bias";          // string
inline constexpr char kResnetMeanVec[] = "voicedetect.resnet.mean_vec";          // string, "": none
inline constexpr char kResnetVarEps[] = "voicedetect.resnet.var_eps";            // f32, 1e-8

// 3D-Speaker ERes2Net's manifest: every convolution (BatchNorm folded in) in the order the
// forward runs them (eres2net.h).
inline constexpr char kEres2netConvWeight[] = "voicedetect.eres2net.conv_weight";  // string[]
inline constexpr char kEres2netConvBias[] = "voicedetect.eres2net.conv_bias";      // string[], "": none
inline constexpr char kEres2netConvStride[] = "voicedetect.eres2net.conv_stride";  // i32[]
inline constexpr char kEres2netNumBlocks[] = "voicedetect.eres2net.num_blocks";    // i32[4], [3, 4, 6, 3]
inline constexpr char kEres2netMChannels[] = "voicedetect.eres2net.m_channels";    // u32, the stem's width
inline constexpr char kEres2netScale[] = "voicedetect.eres2net.scale";             // u32, 2
inline constexpr char kEres2netSegWeight[] = "voicedetect.eres2net.seg_weight";    // string
inline constexpr char kEres2netSegBias[] = "voicedetect.eres2net.seg_bias";        // string
inline constexpr char kEres2netReluClamp[] = "voicedetect.eres2net.relu_clamp";    // f32, 20
inline constexpr char kEres2netVarEps[] = "voicedetect.eres2net.var_eps";          // f32, 1e-8

// CAM++: its convolutions and BatchNorms in forward order (campplus.h).
inline constexpr char kCampplusConvWeight[] = "voicedetect.campplus.conv_weight";  // string[]
inline constexpr char kCampplusConvBias[] = "voicedetect.campplus.conv_bias";      // string[], "": none
inline constexpr char kCampplusBnPrefix[] = "voicedetect.campplus.bn_prefix";      // string[]
inline constexpr char kCampplusEmbBnMean[] = "voicedetect.campplus.emb_bn_mean";   // string
inline constexpr char kCampplusEmbBnVar[] = "voicedetect.campplus.emb_bn_var";     // string
inline constexpr char kCampplusBnEps[] = "voicedetect.campplus.bn_eps";            // f32, 1e-5

}  // namespace pk::schema::voicedetect
