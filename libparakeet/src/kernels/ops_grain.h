// How finely the ops and conv kernels split their work across a ThreadTeam.
#pragma once

#include <cstdint>

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

}  // namespace pk::kernels
