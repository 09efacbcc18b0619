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
// x [T, C] under the weights w[t * C + c] (positive; each column is divided by its own total),
// or under equal weights when w is null.
void column_stats(ThreadTeam& team, const float* x, int64_t T, int64_t C, const float* w, float* mean, float* std,
                  float var_floor);

// a[t * C + c] = exp(a[t * C + c] - max over t of column c), in place: a softmax over time
// without its division, which column_stats's weights make.
void exp_over_time(ThreadTeam& team, float* a, int64_t T, int64_t C);

}  // namespace pk::speaker
