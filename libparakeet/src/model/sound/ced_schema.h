// ced.cpp's `ced` GGUF schema: the keys and tensor names of a CED sound-event tagger (written
// by parakeet_py/convert/ced_checkpoint.py as ced.cpp's convert_ced_to_gguf.py writes them;
// the tensors keep the PyTorch state_dict names). docs/sound.md describes each.
#pragma once

namespace pk::schema::ced {

inline constexpr char kEmbedDim[] = "ced.embed_dim";        // u32: 192 (tiny) .. 768 (base)
inline constexpr char kDepth[] = "ced.depth";               // u32: 12
inline constexpr char kNumHeads[] = "ced.num_heads";        // u32
inline constexpr char kMlpRatio[] = "ced.mlp_ratio";        // f32: 4
inline constexpr char kOutputDim[] = "ced.outputdim";       // u32: 527 AudioSet classes
inline constexpr char kPatchSize[] = "ced.patch_size";      // u32: 16
inline constexpr char kPatchStride[] = "ced.patch_stride";  // u32: 16 (= patch_size)
inline constexpr char kTargetLength[] = "ced.target_length";  // u32: 1012 frames per chunk
inline constexpr char kPooling[] = "ced.pooling";           // str: "mean"
inline constexpr char kLnEpsEncoder[] = "ced.ln_eps_encoder";  // f32: 1e-6
inline constexpr char kLnEpsHead[] = "ced.ln_eps_head";        // f32: 1e-5
inline constexpr char kBnEps[] = "ced.bn_eps";                 // f32: 1e-5
inline constexpr char kSampleRate[] = "ced.sample_rate";    // u32: 16000
inline constexpr char kNMels[] = "ced.n_mels";              // u32: 64
inline constexpr char kNFft[] = "ced.n_fft";                // u32: 512
inline constexpr char kWinSize[] = "ced.win_size";          // u32: 512
inline constexpr char kHopSize[] = "ced.hop_size";          // u32: 160
inline constexpr char kTopDb[] = "ced.a2db_top_db";         // f32: 120
inline constexpr char kAmin[] = "ced.a2db_amin";            // f32: 1e-10
inline constexpr char kLabels[] = "ced.labels";             // string array, outputdim entries

inline constexpr char kMelFilterbank[] = "ced.mel_filterbank";  // [n_mels, n_fft/2+1]
inline constexpr char kMelWindow[] = "ced.mel_window";          // [win_size], periodic Hann
inline constexpr char kInitBn[] = "encoder.init_bn";            // .weight .bias .running_mean .running_var
inline constexpr char kPatchProj[] = "encoder.patch_embed.proj";  // .weight [D,1,p,p] .bias [D]
inline constexpr char kTimePos[] = "encoder.time_pos_embed";    // [1, D, 1, target_length/stride]
inline constexpr char kFreqPos[] = "encoder.freq_pos_embed";    // [1, D, n_mels/stride, 1]
inline constexpr char kBlocks[] = "encoder.blocks.";            // N.{norm1,attn.qkv,attn.proj,norm2,mlp.fc1,mlp.fc2}
inline constexpr char kNorm[] = "encoder.norm";                 // final LayerNorm
inline constexpr char kHeadNorm[] = "outputlayer.0";            // head LayerNorm
inline constexpr char kHeadLinear[] = "outputlayer.1";          // Linear(D, outputdim)

}  // namespace pk::schema::ced
