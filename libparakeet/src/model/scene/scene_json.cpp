#include "model/scene/scene_json.h"

#include "common/json_writer.h"
#include "model/sas/speaker_words.h"

namespace pk {

namespace {

void write_name(JsonWriter& j, const speaker::SlotName& n) {
    j.key("name").value(n.name);
    j.key("name_score").value(static_cast<double>(n.score), 4);
}

speaker::SlotName slot_name(const SceneUpdate& u, int slot) {
    const auto it = u.names.find(slot);
    return it == u.names.end() ? speaker::SlotName{} : it->second;
}

void write_utterances(JsonWriter& j, const SceneUpdate& u, bool named) {
    std::vector<TranscriptWord> words;
    std::vector<int> speakers;
    for (const SceneWord& w : u.words) {
        words.push_back(w.word);
        speakers.push_back(w.speaker);
    }
    const std::vector<SasItem> items = speaker_utterances(words, speakers);
    const std::vector<int> numbers = utterance_numbers(words, speakers);
    j.key("utterances").begin_array();
    size_t first = 0;  // the utterance's first word: its name is the utterance's
    for (size_t k = 0; k < items.size(); ++k) {
        while (static_cast<size_t>(numbers[first]) != k) ++first;
        j.begin_object();
        j.key("speaker").value(items[k].speaker);
        if (named) write_name(j, u.words[first].name);
        j.key("text").value(items[k].text);
        j.key("start").value(items[k].start, 3);
        j.key("end").value(items[k].end, 3);
        j.key("conf").value(static_cast<double>(items[k].confidence), 4);
        j.end_object();
    }
    j.end_array();
}

void write_words(JsonWriter& j, const SceneUpdate& u, bool named) {
    j.key("words").begin_array();
    for (const SceneWord& w : u.words) {
        j.begin_object();
        j.key("text").value(w.word.text);
        j.key("start").value(w.word.start_sec, 3);
        j.key("end").value(w.word.end_sec, 3);
        j.key("conf").value(static_cast<double>(w.word.confidence), 4);
        j.key("speaker").value(w.speaker);
        if (named) write_name(j, w.name);
        j.end_object();
    }
    j.end_array();
}

// Segments of speakers; open ones (`with_end` false) give only their start.
void write_speakers(JsonWriter& j, const SceneUpdate& u, const std::vector<DiarSegment>& segs, bool named,
                    bool with_end) {
    j.begin_array();
    for (const DiarSegment& g : segs) {
        j.begin_object();
        j.key("speaker").value(g.speaker);
        if (named) write_name(j, slot_name(u, g.speaker));
        j.key("start").value(g.start, 3);
        if (with_end) j.key("end").value(g.end, 3);
        j.end_object();
    }
    j.end_array();
}

void write_sounds(JsonWriter& j, const std::vector<SoundSegment>& sounds, const std::vector<std::string>& labels) {
    j.begin_array();
    for (const SoundSegment& s : sounds) {
        j.begin_object();
        j.key("index").value(s.class_index);
        j.key("label").value(labels[static_cast<size_t>(s.class_index)]);
        j.key("start").value(s.start, 3);
        j.key("end").value(s.end, 3);
        j.key("peak").value(static_cast<double>(s.peak), 4);
        j.end_object();
    }
    j.end_array();
}

}  // namespace

std::string scene_update_json(const SceneUpdate& u, bool named, const std::vector<std::string>& labels) {
    JsonWriter j;
    j.begin_object();
    j.key("t").value(u.t, 3);
    if (named) {
        j.key("names").begin_object();
        for (const auto& [slot, n] : u.names) {
            j.key(std::to_string(slot).c_str()).begin_object();
            j.key("name").value(n.name);
            j.key("score").value(static_cast<double>(n.score), 4);
            j.end_object();
        }
        j.end_object();
    }
    write_utterances(j, u, named);
    write_words(j, u, named);
    j.key("speakers");
    write_speakers(j, u, u.speakers, named, true);
    j.key("sounds");
    write_sounds(j, u.sounds, labels);
    j.key("active").begin_object();
    j.key("speakers");
    write_speakers(j, u, u.active_speakers, named, false);
    j.key("sounds");
    write_sounds(j, u.active_sounds, labels);
    j.end_object();
    j.end_object();
    return j.str();
}

}  // namespace pk
