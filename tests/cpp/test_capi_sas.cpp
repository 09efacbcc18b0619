// Speaker-attributed ASR through the C ABI (parakeet_capi_transcribe_and_diarize, _json,
// free_sas_results) on the committed fixtures: the three-voice conversation, an ASR fixture
// model and the offline Sortformer fixture. Each word's speaker is recomputed here, by the rule
// written out independently of the library's, from the words transcribe_pcm_json gives and the
// segments diarize_pcm gives; the struct results are the JSON's utterances; errors land on the
// context parakeet.cpp names (input errors on asr, a diarization failure on diar).
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "capi_handles.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

std::string data(const std::string& rel) { return nemo_fixtures::data_dir() + "/" + rel; }

using capi_handles::Ctx;
using capi_handles::take;

struct Item {
    int speaker = -1;
    std::string text;
    double start = 0, end = 0;
};

// The fields (regex groups of `member_re`) of each object of the array under `key`, in order.
// The documents are the library's own, with fixed key order.
std::vector<std::vector<std::string>> objects(const std::string& doc, const std::string& key,
                                              const std::string& member_re) {
    const size_t at = doc.find("\"" + key + "\":[");
    EXPECT_NE(at, std::string::npos) << key;
    const std::string array = doc.substr(at, doc.find(']', at) - at);
    std::vector<std::vector<std::string>> out;
    const std::regex re(member_re);
    for (std::sregex_iterator it(array.begin(), array.end(), re), e; it != e; ++it) {
        std::vector<std::string> fields;
        for (size_t g = 1; g < it->size(); ++g) fields.push_back((*it)[g]);
        out.push_back(fields);
    }
    return out;
}

std::vector<Item> asr_words(const std::string& transcript) {
    std::vector<Item> out;
    for (const auto& m : objects(transcript, "words", R"re(\{"w":"((?:[^"\\]|\\.)*)","start":([0-9.]+),"end":([0-9.]+))re"))
        out.push_back({-1, m[0], std::stod(m[1]), std::stod(m[2])});
    return out;
}

std::vector<Item> diar_segments(const std::string& doc) {
    std::vector<Item> out;
    for (const auto& m : objects(doc, "segments", R"(\{"speaker":([0-9]+),"start":([0-9.]+),"end":([0-9.]+)\})"))
        out.push_back({std::stoi(m[0]), "", std::stod(m[1]), std::stod(m[2])});
    return out;
}

std::vector<Item> sas_items(const std::string& doc, const std::string& key) {
    std::vector<Item> out;
    for (const auto& m : objects(doc, key, R"re(\{"speaker":(-?[0-9]+),"text":"((?:[^"\\]|\\.)*)","start":([0-9.]+),"end":([0-9.]+))re"))
        out.push_back({std::stoi(m[0]), m[1], std::stod(m[2]), std::stod(m[3])});
    return out;
}

// The rule, written out here on its own: the most overlap (first on ties), else the nearest
// segment within 0.5 s (later on ties), else -1.
int expected_speaker(const Item& w, const std::vector<Item>& segs) {
    int best = -1;
    double most = 1e-9;
    for (const Item& s : segs) {
        const double ov = std::min(w.end, s.end) - std::max(w.start, s.start);
        if (ov > most + (best < 0 ? 0 : 1e-9)) most = ov, best = s.speaker;
    }
    if (best >= 0) return best;
    double nearest = 0.5 + 1e-9;
    for (const Item& s : segs) {
        double gap = 0;  // a segment around a zero-length word is at distance 0
        if (w.end <= s.start) gap = s.start - w.end;
        if (w.start >= s.end) gap = w.start - s.end;
        if (gap <= nearest + (best < 0 ? 0 : 1e-9)) nearest = std::min(nearest, gap), best = s.speaker;
    }
    return best;
}

class CapiSas : public ::testing::Test {
protected:
    Ctx asr{data("nemo/hybrid_tdt_ctc/model.gguf")};
    Ctx diar{data("nemo/sortformer_offline/model.gguf")};
    std::vector<float> pcm = pk::read_wav_file(data("audio/conversation_16k.wav"), 0).samples;
    int n() const { return static_cast<int>(pcm.size()); }
    void SetUp() override {
        ASSERT_NE(asr.p, nullptr) << parakeet_capi_load_error();
        ASSERT_NE(diar.p, nullptr) << parakeet_capi_load_error();
    }
};

TEST_F(CapiSas, EachWordTakesTheSpeakerTheRuleGivesFromTheLibrarysWordsAndSegments) {
    const std::string doc = take(parakeet_capi_transcribe_and_diarize_json(asr.p, diar.p, pcm.data(), n(), 16000));
    ASSERT_NE(doc, "") << parakeet_capi_thread_last_error();
    EXPECT_EQ(doc.rfind("{\"speakers\":4,\"utterances\":[", 0), 0u) << doc.substr(0, 60);
    const std::vector<Item> words =
        asr_words(take(parakeet_capi_transcribe_pcm_json(asr.p, pcm.data(), n(), 16000, PARAKEET_DECODER_DEFAULT)));
    const std::vector<Item> segs = diar_segments(take(parakeet_capi_diarize_pcm(diar.p, pcm.data(), n(), 16000)));
    ASSERT_GT(words.size(), 5u);
    ASSERT_GT(segs.size(), 2u);
    EXPECT_EQ(diar_segments(doc).size(), segs.size());
    const std::vector<Item> got = sas_items(doc, "words");
    ASSERT_EQ(got.size(), words.size());
    std::vector<int> seen(5, 0);
    for (size_t i = 0; i < words.size(); ++i) {
        EXPECT_EQ(got[i].text, words[i].text) << i;
        EXPECT_EQ(got[i].speaker, expected_speaker(words[i], segs)) << i << " " << words[i].text;
        ++seen[static_cast<size_t>(got[i].speaker + 1)];
    }
    // More than one speaker is heard, so the test tells speakers apart.
    int speakers_heard = 0;
    for (size_t s = 1; s < seen.size(); ++s) speakers_heard += seen[s] > 0;
    EXPECT_GE(speakers_heard, 2);

    // The struct call gives the document's utterances.
    parakeet_sas_result* res = nullptr;
    int n_res = -1;
    ASSERT_EQ(parakeet_capi_transcribe_and_diarize(asr.p, diar.p, pcm.data(), n(), 16000, &res, &n_res), 0)
        << parakeet_capi_thread_last_error();
    const std::vector<Item> utt = sas_items(doc, "utterances");
    ASSERT_EQ(static_cast<size_t>(n_res), utt.size());
    ASSERT_GT(n_res, 1);
    std::string joined;
    for (int i = 0; i < n_res; ++i) {
        EXPECT_EQ(res[i].speaker, utt[static_cast<size_t>(i)].speaker);
        EXPECT_EQ(std::string(res[i].text), utt[static_cast<size_t>(i)].text);
        EXPECT_NEAR(res[i].start, utt[static_cast<size_t>(i)].start, 0.006);
        if (i > 0) EXPECT_TRUE(res[i].speaker != res[i - 1].speaker || res[i].start - res[i - 1].end > 0.5 - 0.01);
        joined += (i ? " " : "") + std::string(res[i].text);
    }
    std::string all_words;
    for (size_t i = 0; i < words.size(); ++i) all_words += (i ? " " : "") + words[i].text;
    EXPECT_EQ(joined, all_words);
    parakeet_capi_free_sas_results(res, n_res);
}

TEST_F(CapiSas, NoAudioGivesNoUtterances) {
    parakeet_sas_result* res = reinterpret_cast<parakeet_sas_result*>(1);
    int n_res = -1;
    ASSERT_EQ(parakeet_capi_transcribe_and_diarize(asr.p, diar.p, pcm.data(), 0, 16000, &res, &n_res), 0)
        << parakeet_capi_thread_last_error();
    EXPECT_EQ(res, nullptr);
    EXPECT_EQ(n_res, 0);
    EXPECT_EQ(take(parakeet_capi_transcribe_and_diarize_json(asr.p, diar.p, pcm.data(), 0, 16000))
                  .rfind("{\"speakers\":4,\"utterances\":[],\"words\":[],\"segments\":[],", 0),
              0u);
}

TEST_F(CapiSas, InputErrorsGoToTheAsrContextAndDiarizationFailuresToTheDiarizationContext) {
    parakeet_sas_result* res = nullptr;
    int n_res = 0;
    // A bad buffer: asr's error, diar untouched.
    EXPECT_EQ(parakeet_capi_transcribe_and_diarize(asr.p, diar.p, nullptr, 10, 16000, &res, &n_res), 1);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "invalid samples buffer");
    EXPECT_STREQ(parakeet_capi_last_error(diar.p), "");
    // Swapped contexts, NULL contexts, NULL out pointers: asr's (or only the thread's).
    EXPECT_EQ(parakeet_capi_transcribe_and_diarize_json(diar.p, asr.p, pcm.data(), n(), 16000), nullptr);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_UNSUPPORTED);
    EXPECT_EQ(parakeet_capi_transcribe_and_diarize_json(asr.p, nullptr, pcm.data(), n(), 16000), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(parakeet_capi_transcribe_and_diarize_json(nullptr, diar.p, pcm.data(), n(), 16000), nullptr);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(parakeet_capi_transcribe_and_diarize(asr.p, diar.p, pcm.data(), n(), 16000, nullptr, &n_res), 1);
    EXPECT_EQ(parakeet_capi_transcribe_and_diarize(asr.p, diar.p, pcm.data(), n(), 16000, &res, nullptr), 1);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_INVALID_ARGUMENT);
    // A bad sample rate is input: asr's.
    EXPECT_EQ(parakeet_capi_transcribe_and_diarize_json(asr.p, diar.p, pcm.data(), n(), 5), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_INVALID_AUDIO);
    // A success clears both.
    char* ok = parakeet_capi_transcribe_and_diarize_json(asr.p, diar.p, pcm.data(), n(), 16000);
    EXPECT_NE(ok, nullptr);
    parakeet_capi_free_string(ok);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "");
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), 0);
    parakeet_capi_free_sas_results(nullptr, 3);  // a no-op
}

}  // namespace
