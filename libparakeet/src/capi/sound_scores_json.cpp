#include "capi/sound_scores_json.h"

#include "common/json_writer.h"

namespace pk::capi {

std::string scored_windows_json(const std::vector<ScoredWindow>& windows, const std::vector<std::string>& labels) {
    JsonWriter j;
    j.begin_array();
    for (const ScoredWindow& w : windows) {
        j.begin_object();
        j.key("start").value(w.start, 3);
        j.key("end").value(w.end, 3);
        j.key("tags").begin_array();
        for (const auto& [index, score] : w.top) {
            j.begin_object();
            j.key("index").value(index);
            j.key("label").value(labels[static_cast<size_t>(index)]);
            j.key("score").value(static_cast<double>(score), 4);
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    return j.str();
}

}  // namespace pk::capi
