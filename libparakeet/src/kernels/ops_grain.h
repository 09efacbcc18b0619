// How finely the ops and conv kernels split their work across a ThreadTeam.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::kernels {

// Every chunk handed to a thread should carry at least this many multiply-adds (or
// element operations). A dispatch costs well under a microsecond, so this keeps it a small
// fraction of a chunk's time, and a tiny tensor (a decoder step's row) runs inline on the
// caller with no dispatch at all.
constexpr int64_t kMinChunkWork = 16384;

// The parallel_for grain, in items, for items that each cost `work_per_item` operations.
inline int64_t grain_for(int64_t work_per_item) {
    if (work_per_item < 1) work_per_item = 1;
    return (kMinChunkWork + work_per_item - 1) / work_per_item;
}

// Runs run(ith, item_begin, item_end) on team thread ith for one contiguous run of `items`
// each, at least `grain` items a thread (fewer threads for few items): the attention kernels'
// split, whose items go head by head so that a thread loads each of its heads once, and whose
// per-thread scratch is indexed by ith.
template <class Run>
void split_items(ThreadTeam& team, int64_t items, int64_t grain, const Run& run) {
    team.run([&](int ith, int n_threads) {
        const int64_t chunks = std::min<int64_t>(n_threads, (items + grain - 1) / grain);
        if (ith >= chunks) return;
        run(ith, items * ith / chunks, items * (ith + 1) / chunks);
    });
}

}  // namespace pk::kernels
