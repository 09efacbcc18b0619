// The batching statistics that stream groups and request batching report as JSON: "batches",
// "batch_sizes" (batches of 1, of 2, ...), "waited_ms_max" and "waited_ms_mean" (per member of
// a batch).
#pragma once

#include <cstdint>
#include <vector>

#include "common/json_writer.h"

namespace pk::capi {

// Writes those four keys into the object `j` is in.
void write_batch_stats(JsonWriter& j, const std::vector<int64_t>& batch_sizes, double waited_ms_max,
                       double waited_ms_total);

}  // namespace pk::capi
