#include "capi/transcript_json.h"

#include "capi/attention_json.h"

namespace pk::capi {

void write_words(JsonWriter& j, const std::vector<TranscriptWord>& words) {
    j.begin_array();
    for (const auto& w : words) {
        j.begin_object();
        j.key("w").value(w.text);
        j.key("start").value(w.start_sec, 3);
        j.key("end").value(w.end_sec, 3);
        j.key("conf").value(static_cast<double>(w.confidence), 4);
        j.end_object();
    }
    j.end_array();
}

void write_token_fields(JsonWriter& j, const TranscriptToken& token, double frame_sec) {
    j.key("id").value(token.id);
    j.key("t").value(token.frame * frame_sec, 3);
    j.key("conf").value(static_cast<double>(token.confidence), 4);
    j.key("dur").value(token.duration);
}

void write_tokens(JsonWriter& j, const std::vector<TranscriptToken>& tokens, double frame_sec) {
    j.begin_array();
    for (const auto& tok : tokens) {
        j.begin_object();
        write_token_fields(j, tok, frame_sec);
        j.end_object();
    }
    j.end_array();
}

std::string transcript_to_json(const Transcript& t, double audio_seconds) {
    JsonWriter j;
    j.begin_object();
    j.key("text").value(t.text);
    j.key("frame_sec").value(t.frame_sec, 4);
    j.key("duration").value(audio_seconds, 3);
    j.key("words");
    write_words(j, t.words);
    j.key("tokens");
    write_tokens(j, t.tokens, t.frame_sec);
    j.key("attention");
    write_attention(j, t.attention);
    if (t.context) {
        // parakeet.cpp's contextual documents: its keys, in its order.
        j.key("context").begin_object();
        j.key("transitions").value(static_cast<int64_t>(t.context->transitions));
        j.key("candidate_checks").value(static_cast<int64_t>(t.context->candidate_checks));
        j.key("completed_phrases").value(static_cast<int64_t>(t.context->completed_phrases));
        j.key("failed_prefixes").value(static_cast<int64_t>(t.context->failed_prefixes));
        j.key("final_rollback").value(t.context->final_rollback, 4);
        j.end_object();
    }
    j.end_object();
    return j.str();
}

}  // namespace pk::capi
