#include "capi/batch_stats_json.h"

namespace pk::capi {

void write_batch_stats(JsonWriter& j, const std::vector<int64_t>& batch_sizes, double waited_ms_max,
                       double waited_ms_total) {
    int64_t batches = 0, members = 0;
    for (size_t i = 0; i < batch_sizes.size(); ++i) {
        batches += batch_sizes[i];
        members += batch_sizes[i] * static_cast<int64_t>(i + 1);
    }
    j.key("batches").value(batches);
    j.key("batch_sizes").begin_array();
    for (const int64_t n : batch_sizes) j.value(n);
    j.end_array();
    j.key("waited_ms_max").value(waited_ms_max, 3);
    j.key("waited_ms_mean").value(members > 0 ? waited_ms_total / static_cast<double>(members) : 0.0, 3);
}

}  // namespace pk::capi
