// The JSON object that names an attention setting, shared by the transcript document (what
// ran) and the model-info document (the context's setting).
#pragma once

#include "common/json_writer.h"
#include "model/encoder/attention_setting.h"

namespace pk::capi {

// Writes {"mode": "auto"|"full"} or {"mode": "local", "left": L, "right": R} as the next value.
void write_attention(JsonWriter& j, const AttentionSetting& a);

}  // namespace pk::capi
