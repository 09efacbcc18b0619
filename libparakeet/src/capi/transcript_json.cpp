#include "capi/transcript_json.h"

#include "capi/attention_json.h"
#include "common/json_writer.h"

namespace pk::capi {

std::string transcript_to_json(const Transcript& t, double audio_seconds) {
    JsonWriter j;
    j.begin_object();
    j.key("text").value(t.text);
    j.key("frame_sec").value(t.frame_sec, 4);
    j.key("duration").value(audio_seconds, 3);
    j.key("words").begin_array();
    for (const auto& w : t.words) {
        j.begin_object();
        j.key("w").value(w.text);
        j.key("start").value(w.start_sec, 3);
        j.key("end").value(w.end_sec, 3);
        j.key("conf").value(static_cast<double>(w.confidence), 4);
        j.end_object();
    }
    j.end_array();
    j.key("tokens").begin_array();
    for (const auto& tok : t.tokens) {
        j.begin_object();
        j.key("id").value(tok.id);
        j.key("t").value(t.token_seconds(tok), 3);
        j.key("conf").value(static_cast<double>(tok.confidence), 4);
        j.key("dur").value(tok.duration);
        j.end_object();
    }
    j.end_array();
    j.key("attention");
    write_attention(j, t.attention);
    j.end_object();
    return j.str();
}

}  // namespace pk::capi
