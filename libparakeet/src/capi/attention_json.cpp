#include "capi/attention_json.h"

namespace pk::capi {

void write_attention(JsonWriter& j, const AttentionSetting& a) {
    j.begin_object();
    j.key("mode").value(a.mode_name());
    if (a.mode == AttentionSetting::Mode::Local || a.mode == AttentionSetting::Mode::Chunked) {
        j.key("left").value(a.left);
        j.key("right").value(a.right);
    }
    j.end_object();
}

}  // namespace pk::capi
