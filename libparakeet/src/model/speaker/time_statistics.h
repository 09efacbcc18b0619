// Per-channel statistics over time of time-major maps x[t * C + c], for ECAPA-TDNN's
// squeeze-excitation and attentive statistics pooling.
//
// The channels are split over the team; each channel is summed over time in order by one thread,
// in float over runs of frames whose sums join a double total, so results do not depend on the
// split (bitwise identical for any team size). The loops run over contiguous channels in plain
// float arithmetic, which the compiler vectorises, and calls no per-ISA kernel: every level
// gives the same bits.
#pragma once

#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::speaker {

// mean[c] and, when std is not null, std[c] = sqrt(max(variance, var_floor)) of column c of
// x [T, C].
void column_stats(ThreadTeam& team, const float* x, int64_t T, int64_t C, float* mean, float* std, float var_floor);

// The same under the softmax over time of each column of a [T, C] (attention logits), which is
// left in a unnormalised: a[t * C + c] = exp(a[t * C + c] - max over t of column c). Here std
// must not be null.
void softmax_stats(ThreadTeam& team, const float* x, float* a, int64_t T, int64_t C, float* mean, float* std,
                   float var_floor);

}  // namespace pk::speaker
