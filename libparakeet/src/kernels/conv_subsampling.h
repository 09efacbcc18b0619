// The strided 2-D convolutions of a dw_striding subsampling stage (NeMo ConvSubsampling,
// factor 8): a single-channel 3x3 stride-2 conv on the [time, features] log-mel image, then
// (depthwise 3x3 stride-2 conv, pointwise 1x1 conv, see conv_pointwise.h) twice; and the
// reshape that feeds the stage's final Linear.
//
// Layout: channels-last. A C-channel feature map is [T, F, C]: element (t, f, c) at
// (t * F + f) * C + c. One time step is a contiguous block of F * C floats, each pixel's
// channels are contiguous (the 3x3 convs vectorise over channels), and the same buffer read
// as [T * F, C] is the pointwise conv's input matrix. PyTorch's NCHW tensor x[c][t][f] maps
// to map[(t * F + f) * C + c].
//
// Every 3x3 conv here has stride 2 (the single-channel one also 1) and zero padding 1 in both
// dimensions. Time steps are split across the team; the convs run k's kernels (kernel_table.h).
#pragma once

#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// Output size of a 3x3, padding-1 conv of stride `stride` along one dimension:
// floor((in + 2 * 1 - 3) / stride) + 1; 0 stays 0.
inline int64_t conv3x3_output_size(int64_t in, int64_t stride) { return in <= 0 ? 0 : (in - 1) / stride + 1; }
// The same for stride 2: also the valid length after such a conv when `in` is the valid length
// before it (NeMo's calc_length).
inline int64_t conv3x3_s2_output_size(int64_t in) { return conv3x3_output_size(in, 2); }

// The first conv, Conv2d(1 -> C, 3x3, padding 1) of stride `stride` (1 or 2) along both axes,
// optionally followed by ReLU. x is the single-channel image [T, F] (time-major log-mel frames);
// y is [T', F', C] with T' = conv3x3_output_size(T, stride), F' likewise. packed_weight is
// [9, C], tap 3 i + j reading row t' stride + i - 1 and column f' stride + j - 1 (from
// pack_depthwise_weight(weight, C, 9, ...) of the PyTorch [C, 1, 3, 3] weight of an image
// whose rows are time); bias [C]. (The subsampling's stride 2; the 2-D speaker networks' stem,
// stride 1, model/speaker/conv2d_gemm.h.)
void conv2d_3x3_single_channel(const KernelTable& k, ThreadTeam& team, const float* x, int64_t T, int64_t F,
                               int stride, const float* packed_weight, const float* bias, int64_t C, bool relu,
                               float* y);

// Depthwise Conv2d(C -> C, 3x3, stride 2, padding 1, groups C): x is [T, F, C], y is
// [T', F', C] (sizes as above). packed_weight is [9, C] from pack_depthwise_weight(weight,
// C, 9, ...) of the PyTorch [C, 1, 3, 3] weight; bias [C]. y must not overlap x.
void depthwise_conv2d_3x3_s2(const KernelTable& k, ThreadTeam& team, const float* x, int64_t T,
                             int64_t F, int64_t C, const float* packed_weight, const float* bias,
                             float* y);

// Zeroes time steps [valid, T) of a time-major tensor whose time step holds step_elems floats
// ([T, F, C] maps: F * C; the [T, F] image: F). NeMo 3.0 (MaskedConvSequential) multiplies
// the input of every layer of the stage, and its output, by the time mask of the current
// valid length, which changes after each stride-2 conv to conv3x3_s2_output_size(length).
// Since 1x1 convs and ReLU act per pixel, this sequence reproduces it exactly:
//   image rows >= mel_len zero      conv2d_3x3_single_channel(relu)     zero >= L1
//   depthwise_conv2d_3x3_s2         pointwise_conv(relu)                zero >= L2
//   depthwise_conv2d_3x3_s2         pointwise_conv(relu)                zero >= L3
// with L1 = conv3x3_s2_output_size(mel_len), L2 and L3 likewise. A memset of a few steps,
// so it runs on the caller without the team.
void zero_time_steps(float* x, int64_t T, int64_t step_elems, int64_t valid);

// The input of the stage's final Linear (NeMo pre_encode.out). NeMo flattens its NCHW output
// [B, C, T, F] as x.transpose(1, 2).reshape(B, T, C * F), so each frame's vector is
// channel-major: y[t][c * F + f] = x[c][t][f]. Here x is the channels-last [T, F, C] map and
// y is [T, C * F]; y must not overlap x.
void flatten_channel_major(ThreadTeam& team, const float* x, int64_t T, int64_t F, int64_t C,
                           float* y);

}  // namespace pk::kernels
