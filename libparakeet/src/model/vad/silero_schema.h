// parakeet.cpp's `silero_vad` GGUF schema: the keys and tensor names of a Silero VAD v6 file
// (written by parakeet_py/convert/silero_onnx.py; parakeet.cpp's published silero-vad-f32/-f16
// files use the same). docs/vad.md describes each.
#pragma once

namespace pk::schema::silero {

inline constexpr char kSampleRates[] = "silero_vad.sample_rates";      // [8000, 16000]
inline constexpr char kEncoderNLayers[] = "silero_vad.encoder.n_layers";  // 4
inline constexpr char kEncoderStrides[] = "silero_vad.encoder.strides";   // [1, 2, 2, 1]
inline constexpr char kEncoderChannels[] = "silero_vad.encoder.channels";  // [128, 64, 64, 128]
inline constexpr char kEncoderKernel[] = "silero_vad.encoder.kernel";     // 3
inline constexpr char kLstmHidden[] = "silero_vad.lstm.hidden";           // 128
// Per rate R (16000, 8000): "silero_vad.R." + one of these.
inline constexpr char kChunkSamples[] = "chunk_samples";          // 512 | 256
inline constexpr char kContextSamples[] = "context_samples";      // 64 | 32
inline constexpr char kStftNFft[] = "stft.n_fft";                 // 256 | 128
inline constexpr char kStftHop[] = "stft.hop";                    // 128 | 64
inline constexpr char kStftRightReflectPad[] = "stft.right_reflect_pad";  // 64 | 32
// Tensors: the rate's prefix + the torch name.
inline constexpr char kPrefix16k[] = "vad16k.";
inline constexpr char kPrefix8k[] = "vad8k.";
inline constexpr char kStftBasis[] = "stft.forward_basis_buffer";        // [2 * bins, 1, n_fft]
// "encoder.<i>.reparam_conv.weight" [out, in, kernel] and ".bias" [out]
inline constexpr char kLstmWeightIh[] = "decoder.rnn.weight_ih";          // [4H, H]
inline constexpr char kLstmWeightHh[] = "decoder.rnn.weight_hh";          // [4H, H]
inline constexpr char kLstmBiasIh[] = "decoder.rnn.bias_ih";              // [4H]
inline constexpr char kLstmBiasHh[] = "decoder.rnn.bias_hh";              // [4H]
inline constexpr char kOutWeight[] = "decoder.decoder.2.weight";          // [1, H, 1]
inline constexpr char kOutBias[] = "decoder.decoder.2.bias";              // [1]

}  // namespace pk::schema::silero
