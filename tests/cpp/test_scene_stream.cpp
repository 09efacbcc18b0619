// The scene stream (model/scene/scene_stream.h through the C ABI's scene_stream_*) on the
// conversation fixture with the ASR, streaming Sortformer, CED and ECAPA fixtures, in every part
// combination: ASR alone commits the same words for every feed size; with diarization the words
// and speakers are the speaker-attributed stream's; the sound part closes the sound stream's
// segments; the speaker part names the slots and the words said after; a failing part is named;
// and the errors go where parakeet.cpp sends them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "capi_handles.h"
#include "ced_fixtures.h"
#include "model/diar/latency_presets.h"
#include "model/sas/sas_stream.h"
#include "model/scene/scene_stream.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"
#include "speaker_fixtures.h"

namespace {

using capi_handles::Ctx;
using capi_handles::take;

std::string data(const std::string& rel) { return nemo_fixtures::data_dir() + "/" + rel; }
const char* kAsr = "nemo/hybrid_tdt_ctc/model.gguf";
const char* kDiar = "nemo/sortformer_stream/model.gguf";

std::vector<float> conversation() { return pk::read_wav_file(data("audio/conversation_16k.wav"), 0).samples; }

// The JSON value (array or object) after "key": in doc, brackets matched outside strings.
std::string value_of(const std::string& doc, const std::string& key) {
    const size_t at = doc.find("\"" + key + "\":");
    if (at == std::string::npos) return "";
    const size_t begin = at + key.size() + 3;
    int depth = 0;
    bool in_string = false;
    for (size_t i = begin; i < doc.size(); ++i) {
        const char c = doc[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if ((c == ']' || c == '}') && --depth == 0) {
            return doc.substr(begin, i - begin + 1);
        }
    }
    return "";
}

// The elements of a JSON array of objects, as text.
std::vector<std::string> elements(const std::string& array) {
    std::vector<std::string> out;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i < array.size(); ++i) {
        if (array[i] == '{' && depth++ == 0) start = i;
        if (array[i] == '}' && --depth == 0) out.push_back(array.substr(start, i - start + 1));
    }
    return out;
}

struct Feeds {
    std::vector<std::string> docs;
    std::vector<std::string> words, speakers, sounds;  // every feed's, in order
};

// Feeds the clip in pieces of `feed` samples and gathers the documents.
Feeds feed_all(parakeet_scene_stream* s, const std::vector<float>& pcm, int feed) {
    Feeds r;
    const int n = static_cast<int>(pcm.size());
    for (int at = 0; at < n; at += feed) {
        const int len = std::min(feed, n - at);
        const std::string doc = take(parakeet_capi_scene_stream_feed_json(s, pcm.data() + at, len, at + len == n));
        EXPECT_NE(doc, "") << parakeet_capi_scene_stream_last_error(s);
        if (doc.empty()) break;
        r.docs.push_back(doc);
        for (const char* key : {"words", "speakers", "sounds"}) {
            std::vector<std::string>& into = key[0] == 'w' ? r.words : key[1] == 'p' ? r.speakers : r.sounds;
            for (const std::string& e : elements(value_of(doc, key))) into.push_back(e);
        }
    }
    return r;
}

TEST(SceneStream, AsrAloneCommitsTheSameWordsForEveryFeedSize) {
    Ctx asr(data(kAsr));
    ASSERT_NE(asr.p, nullptr);
    const std::vector<float> pcm = conversation();
    std::vector<std::string> first;
    for (int feed : {1600, 8000, 80000}) {
        parakeet_scene_stream* s = parakeet_capi_scene_stream_begin(asr.p, nullptr, nullptr, nullptr);
        ASSERT_NE(s, nullptr) << parakeet_capi_last_error(asr.p);
        const Feeds r = feed_all(s, pcm, feed);
        parakeet_capi_scene_stream_free(s);
        ASSERT_GT(r.words.size(), 5u);
        if (first.empty()) first = r.words;
        EXPECT_EQ(r.words, first) << "feed " << feed;
        EXPECT_TRUE(r.speakers.empty());
        EXPECT_EQ(r.docs[0].find("\"names\""), std::string::npos);  // no speaker part
        EXPECT_NE(r.docs.back().find("\"active\":{\"speakers\":[],\"sounds\":[]}"), std::string::npos);
        char t[32];
        std::snprintf(t, sizeof t, "{\"t\":%.3f,", pcm.size() / 16000.0);
        EXPECT_EQ(r.docs.back().rfind(t, 0), 0u) << r.docs.back();
        for (const std::string& w : r.words) EXPECT_NE(w.find("\"speaker\":-1"), std::string::npos);
    }
}

TEST(SceneStream, WithDiarizationTheWordsAreTheSpeakerAttributedStreams) {
    Ctx asr(data(kAsr)), diar(data(kDiar));
    ASSERT_NE(diar.p, nullptr);
    const std::vector<float> pcm = conversation();
    // The speaker-attributed stream's words (it commits the same windows).
    const auto asr_model = pk::Model::load(data(kAsr));
    const auto diar_model = pk::DiarModel::load(data(kDiar));
    pk::SasStream sas(*asr_model, *diar_model,
                      pk::diar_latency_preset(PARAKEET_DIAR_LATENCY_LOW, diar_model->config().streaming));
    std::vector<std::pair<std::string, int>> expected;
    for (int64_t at = 0, n = pcm.size(); at < n; at += sas.step_samples()) {
        const int64_t len = std::min(sas.step_samples(), n - at);
        sas.diarize(pcm.data() + at, len, at + len == n);
        const pk::SasWords w = sas.commit(pcm.data() + at, len, at + len == n);
        for (size_t i = 0; i < w.words.size(); ++i) expected.emplace_back(w.words[i].text, w.speakers[i]);
    }
    parakeet_scene_opts o;
    parakeet_capi_scene_opts_default(&o);
    o.diar_latency = PARAKEET_DIAR_LATENCY_LOW;
    for (int feed : {1600, 80000}) {
        parakeet_scene_stream* s = parakeet_capi_scene_stream_begin(asr.p, diar.p, nullptr, &o);
        ASSERT_NE(s, nullptr) << parakeet_capi_last_error(diar.p);
        const Feeds r = feed_all(s, pcm, feed);
        parakeet_capi_scene_stream_free(s);
        ASSERT_EQ(r.words.size(), expected.size()) << "feed " << feed;
        for (size_t i = 0; i < expected.size(); ++i) {
            EXPECT_NE(r.words[i].find("\"text\":\"" + expected[i].first + "\""), std::string::npos) << r.words[i];
            EXPECT_NE(r.words[i].find("\"speaker\":" + std::to_string(expected[i].second) + "}"), std::string::npos)
                << r.words[i];
        }
        EXPECT_GT(r.speakers.size(), 2u);
        // Every segment is closed by the end and handed out once.
        EXPECT_NE(r.docs.back().find("\"active\":{\"speakers\":[]"), std::string::npos);
        EXPECT_NE(value_of(r.docs.back(), "utterances"), "[]");
    }
}

TEST(SceneStream, TheSoundPartClosesTheSoundStreamsSegments) {
    Ctx asr(data(kAsr)), tagger(ced_fixtures::model_path());
    ASSERT_NE(tagger.p, nullptr);
    const std::vector<float> pcm = conversation();
    const int n = static_cast<int>(pcm.size());
    // The sound stream's segments on the same audio.
    parakeet_sound_stream* ss = parakeet_capi_sound_stream_begin(tagger.p, nullptr);
    parakeet_sound_segment* segs = nullptr;
    int n_segs = 0;
    ASSERT_EQ(parakeet_capi_sound_stream_feed(ss, pcm.data(), n, 1, &segs, &n_segs), 0);
    std::vector<std::string> expected;
    for (int i = 0; i < n_segs; ++i) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "{\"index\":%d,\"label\":\"%s\",\"start\":%.3f,\"end\":%.3f,\"peak\":%.4f}",
                      segs[i].class_index, segs[i].label, segs[i].start, segs[i].end, segs[i].peak);
        expected.push_back(buf);
    }
    parakeet_capi_free_sound_segments(segs);
    const std::string scores = take(parakeet_capi_sound_stream_drain_scores_json(ss));
    parakeet_capi_sound_stream_free(ss);
    ASSERT_FALSE(expected.empty());
    for (int feed : {3200, 80000}) {
        parakeet_scene_stream* s = parakeet_capi_scene_stream_begin(asr.p, nullptr, tagger.p, nullptr);
        ASSERT_NE(s, nullptr) << parakeet_capi_last_error(tagger.p);
        const Feeds r = feed_all(s, pcm, feed);
        EXPECT_EQ(r.sounds, expected) << "feed " << feed;
        EXPECT_FALSE(r.words.empty());
        EXPECT_EQ(take(parakeet_capi_scene_stream_drain_scores_json(s)), scores);
        EXPECT_EQ(take(parakeet_capi_scene_stream_drain_scores_json(s)), "[]");
        parakeet_capi_scene_stream_free(s);
    }
}

TEST(SceneStream, TheSpeakerPartNamesSlotsAndTheWordsSaidAfter) {
    Ctx asr(data(kAsr)), diar(data(kDiar)), tagger(ced_fixtures::model_path()), spk(speaker_fixtures::model_path());
    ASSERT_NE(spk.p, nullptr);
    const std::vector<float> pcm = conversation();
    // One voice enrolled, accepted at any cosine: every slot that gets embedded is named Ada.
    parakeet_speaker_registry* reg = parakeet_capi_speaker_registry_new();
    ASSERT_EQ(parakeet_capi_speaker_enroll(reg, spk.p, "Ada", pcm.data(), 64000, 16000), 0);
    parakeet_scene_opts o;
    parakeet_capi_scene_opts_default(&o);
    o.diar_latency = PARAKEET_DIAR_LATENCY_LOW;
    o.speaker_accept_threshold = -1.f;
    // The random-weight diarizer cuts this clip into short overlapping turns: less voice per name.
    o.speaker_min_voice_sec = 0.5f;
    o.speaker_refresh_sec = 1.f;
    std::vector<std::string> first_words;
    for (int feed : {1600, 48000}) {
        parakeet_scene_stream* s = parakeet_capi_scene_stream_begin_speaker(asr.p, diar.p, tagger.p, spk.p, reg, &o);
        ASSERT_NE(s, nullptr) << parakeet_capi_last_error(spk.p);
        const Feeds r = feed_all(s, pcm, feed);
        parakeet_capi_scene_stream_free(s);
        for (const std::string& doc : r.docs) EXPECT_NE(doc.find("\"names\":{"), std::string::npos) << doc;
        if (feed == 1600) EXPECT_NE(r.docs[0].find("\"names\":{}"), std::string::npos) << "a slot before any segment";
        const std::string names = value_of(r.docs.back(), "names");
        EXPECT_NE(names.find("\"name\":\"Ada\""), std::string::npos) << names;
        int named_words = 0;
        for (const std::string& w : r.words) {
            EXPECT_NE(w.find("\"name_score\":"), std::string::npos);
            named_words += w.find("\"name\":\"Ada\"") != std::string::npos;
        }
        EXPECT_GT(named_words, 0);
        for (const std::string& g : r.speakers) EXPECT_NE(g.find("\"name\":"), std::string::npos);
        if (first_words.empty()) first_words = r.words;
        EXPECT_EQ(r.words, first_words) << "feed " << feed;
    }
    parakeet_capi_speaker_registry_free(reg);
}

TEST(SceneStream, AFailingPartIsNamed) {
    // A speaker part whose encoder refuses every voice (as the network refuses too little audio)
    // fails the feed that first embeds, and the stream says it was that part.
    const auto diar = pk::DiarModel::load(data(kDiar));
    pk::SceneParts parts;
    parts.diar = diar.get();
    parts.diar_params = pk::diar_latency_preset(PARAKEET_DIAR_LATENCY_LOW, diar->config().streaming);
    parts.naming.min_voice_sec = 0.2f;
    parts.speaker_embed = [](const float*, int64_t) -> std::vector<float> {
        throw pk::InvalidAudio("too little audio for the speaker encoder");
    };
    parts.speaker_identify = [](const std::vector<float>&, float, float) { return pk::speaker::SpeakerMatch{}; };
    pk::SceneStream s(parts);
    const std::vector<float> pcm = conversation();
    try {
        s.feed(pcm.data(), static_cast<int64_t>(pcm.size()), true);
        FAIL() << "the failing encoder was never called";
    } catch (const pk::InvalidAudio& e) {
        EXPECT_STREQ(e.what(), "too little audio for the speaker encoder");
        EXPECT_EQ(s.failed_part(), pk::ScenePart::Speaker);
    }
    EXPECT_THROW(pk::SceneStream(pk::SceneParts{}), pk::InvalidArgument);  // no part at all
}

TEST(SceneStream, ErrorsGoWhereParakeetCppSendsThem) {
    Ctx asr(data(kAsr)), diar(data(kDiar)), tagger(ced_fixtures::model_path()), spk(speaker_fixtures::model_path());
    parakeet_speaker_registry* reg = parakeet_capi_speaker_registry_new();
    EXPECT_EQ(parakeet_capi_scene_stream_begin(nullptr, nullptr, nullptr, nullptr), nullptr);
    EXPECT_EQ(parakeet_capi_scene_stream_begin_speaker(asr.p, nullptr, nullptr, spk.p, reg, nullptr), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(spk.p), "speaker identification needs a diarization model");
    EXPECT_EQ(parakeet_capi_scene_stream_begin_speaker(asr.p, diar.p, nullptr, spk.p, nullptr, nullptr), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(spk.p), "speaker identification needs a registry");
    EXPECT_EQ(parakeet_capi_scene_stream_begin(tagger.p, nullptr, nullptr, nullptr), nullptr);  // not an ASR model
    EXPECT_NE(std::string(parakeet_capi_last_error(tagger.p)), "");
    parakeet_scene_opts o;
    parakeet_capi_scene_opts_default(&o);
    EXPECT_EQ(o.size, static_cast<int>(sizeof(parakeet_scene_opts)));
    EXPECT_FLOAT_EQ(o.speaker_max_voice_sec, 10.f);
    o.flags = 1;
    EXPECT_EQ(parakeet_capi_scene_stream_begin(asr.p, diar.p, nullptr, &o), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "scene flags must be 0");
    o.flags = 0;
    o.diar_latency = 7;
    EXPECT_EQ(parakeet_capi_scene_stream_begin(asr.p, diar.p, nullptr, &o), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(diar.p), "unknown diarization latency mode 7");
    o.diar_latency = 0;
    o.speaker_min_voice_sec = -1.f;
    EXPECT_EQ(parakeet_capi_scene_stream_begin_speaker(asr.p, diar.p, nullptr, spk.p, reg, &o), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(spk.p), "invalid speaker options: min_voice_sec must be > 0");
    o.speaker_min_voice_sec = 2.f;
    const float three[3] = {1.f, 0.f, 0.f};
    ASSERT_EQ(parakeet_capi_speaker_registry_add_embedding(reg, "Bob", three, 3), 0);
    EXPECT_EQ(parakeet_capi_scene_stream_begin_speaker(asr.p, diar.p, nullptr, spk.p, reg, &o), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(spk.p), "registry holds 3-value embeddings, this model produces 192");
    o.sound.hop_sec = 0.1f;
    EXPECT_EQ(parakeet_capi_scene_stream_begin(asr.p, nullptr, tagger.p, &o), nullptr);
    EXPECT_EQ(std::string(parakeet_capi_last_error(tagger.p)).rfind("invalid sound options: ", 0), 0u);
    parakeet_capi_speaker_registry_free(reg);
    // A diarizer that cannot stream (it normalises per_feature) is refused on its context.
    Ctx offline(data("nemo/sortformer_offline/model.gguf"));
    EXPECT_EQ(parakeet_capi_scene_stream_begin(asr.p, offline.p, nullptr, nullptr), nullptr);
    EXPECT_NE(std::string(parakeet_capi_last_error(offline.p)).find("per_feature"), std::string::npos)
        << parakeet_capi_last_error(offline.p);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "");

    // Feeds: the stream's own errors, then a finished stream.
    parakeet_scene_stream* s = parakeet_capi_scene_stream_begin(asr.p, nullptr, nullptr, nullptr);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(take(parakeet_capi_scene_stream_drain_scores_json(s)), "[]");  // no tagger
    EXPECT_EQ(parakeet_capi_scene_stream_feed_json(s, nullptr, 5, 0), nullptr);
    EXPECT_STREQ(parakeet_capi_scene_stream_last_error(s), "invalid samples buffer");
    const float bad[2] = {0.f, std::numeric_limits<float>::quiet_NaN()};
    EXPECT_EQ(parakeet_capi_scene_stream_feed_json(s, bad, 2, 0), nullptr);
    EXPECT_STREQ(parakeet_capi_scene_stream_last_error(s), "sample 1 is not a finite number (NaN or Inf)");
    const float quiet[160] = {};
    EXPECT_NE(take(parakeet_capi_scene_stream_feed_json(s, quiet, 160, 1)), "");
    EXPECT_STREQ(parakeet_capi_scene_stream_last_error(s), "");
    EXPECT_EQ(parakeet_capi_scene_stream_feed_json(s, quiet, 160, 0), nullptr);
    EXPECT_STREQ(parakeet_capi_scene_stream_last_error(s), "stream already finished");
    parakeet_capi_scene_stream_free(s);
    EXPECT_STREQ(parakeet_capi_scene_stream_last_error(nullptr), "");
    parakeet_capi_scene_stream_free(nullptr);
}

}  // namespace
