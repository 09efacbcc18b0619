// Parity with NeMo 3.0.0 on three minutes of audio under full and local attention: for every
// model, head and attention setting in tests/data/nemo/<model>/longref_*.gguf (full, local
// [128, 128] and local [64, 32]; NeMo's change_attention_model("rel_pos_local_attn", [L, R])),
// our token ids, frames, durations and text are identical to NeMo's, with confidences and word
// times within bounds. The clip is rebuilt bit for bit from the committed clips
// (nemo_fixtures::assemble_long_clip). Auto mode on it must choose local [128, 128] and give the
// local [128, 128] result, and local attention gives the same bytes at 1, 2 and 4 threads. At
// every ISA level this CPU has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "model/model.h"
#include "nemo_fixtures.h"
#include "nemo_transcript_check.h"

namespace {

// Bound on max |ours - NeMo| of the encoder output, relative to its max |value| (as in
// test_nemo_parity; 2250 frames of two layers).
constexpr double kEncBound = 2e-3;

struct Case {
    std::string model_dir, model_name, ref_path, setting, head;  // setting: "full", "local128x128", …
};

std::string setting_name(const std::string& ref_path) {
    const size_t slash = ref_path.rfind('/');
    const std::string file = ref_path.substr(slash + 1);           // longref_3min_local64x32.gguf
    const size_t a = file.rfind('_'), b = file.rfind('.');
    return file.substr(a + 1, b - a - 1);
}

// Every (model, long reference, head) there is.
std::vector<Case> all_cases() {
    std::vector<Case> out;
    for (const auto& f : nemo_fixtures::all("longref_")) {
        const pk::GgufReader ref = pk::GgufReader::open(f.ref_path);
        for (const char* head : {"tdt", "rnnt", "ctc"})
            if (ref.has_key(std::string("ref.") + head + ".ids"))
                out.push_back({f.model_dir, f.model_name, f.ref_path, setting_name(f.ref_path), head});
    }
    return out;
}

const std::vector<Case>& cases() {
    static const std::vector<Case> c = all_cases();
    return c;
}

// The long clip of a reference, rebuilt once per clip name.
const std::vector<float>& clip_for(const pk::GgufReader& ref) {
    static std::map<std::string, std::vector<float>> cache;
    auto& c = cache[ref.get_string("ref.clip")];
    if (c.empty()) c = nemo_fixtures::assemble_long_clip(ref);
    return c;
}

pk::AttentionSetting attention_of(const pk::GgufReader& ref) {
    if (ref.get_string("ref.attention") == "full") return pk::AttentionSetting::full();
    const auto ctx = ref.get_i64_array("ref.att_context");
    return pk::AttentionSetting::local(static_cast<int>(ctx.at(0)), static_cast<int>(ctx.at(1)));
}

pk::DecoderChoice decoder_of(const std::string& head) {
    return head == "ctc" ? pk::DecoderChoice::Ctc : pk::DecoderChoice::Transducer;
}

// Where NeMo's decoding met its first near-tie (verify.TIE_MARGIN in the generator): the tokens
// before it must match exactly, the rest may legitimately differ.
int64_t first_tie(const pk::GgufReader& ref, const std::string& head) {
    const int64_t tie = ref.get_i64("ref." + head + ".first_tie_token");
    if (tie >= 0)
        std::printf("  %s %s: NeMo near-tie at token %lld of %zu, compared up to there\n",
                    ref.get_string("ref.model").c_str(), head.c_str(), static_cast<long long>(tie),
                    ref.get_i64_array("ref." + head + ".ids").size());
    return tie;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.ref_path << " " << c.head; }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    return info.param.model_name + "_" + info.param.setting + "_" + info.param.head;
}

TEST(NemoParityLong, FixturesExist) {
    // all five models x 3 settings, the hybrids with two heads
    EXPECT_EQ(cases().size(), 21u) << "longref_*.gguf under " << nemo_fixtures::data_dir() << "/nemo";
}

// The C++ rebuild of every long clip is bitwise the clip NeMo ran on.
TEST(NemoParityLong, ClipIsRebuiltBitwise) {
    ASSERT_FALSE(cases().empty());
    for (const auto& c : cases()) {
        SCOPED_TRACE(c.ref_path);
        const pk::GgufReader ref = pk::GgufReader::open(c.ref_path);
        const std::vector<float>& samples = clip_for(ref);
        ASSERT_EQ(static_cast<int64_t>(samples.size()), ref.get_i64("ref.n_samples"));
        EXPECT_EQ(nemo_fixtures::clip_checksum(samples), ref.get_string("ref.clip_checksum"));
    }
}

class LongClip : public ::testing::TestWithParam<Case> {};

TEST_P(LongClip, MatchesNeMo) {
    const Case& c = GetParam();
    const pk::GgufReader ref = pk::GgufReader::open(c.ref_path);
    const std::vector<float>& samples = clip_for(ref);
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        const pk::Model& model = nemo_fixtures::cached_model(c.model_dir, isa);
        pk::RequestOptions opts(decoder_of(c.head));
        opts.attention = attention_of(ref);
        const pk::Transcript t = model.transcribe(samples.data(), static_cast<int64_t>(samples.size()), 16000, opts);
        EXPECT_EQ(t.attention, *opts.attention) << t.attention.describe();
        nemo_fixtures::expect_transcript_matches(t, ref, c.head, first_tie(ref, c.head));
    });
}

INSTANTIATE_TEST_SUITE_P(NemoParityLong, LongClip, ::testing::ValuesIn(cases()), case_name);

// Where a reference stores NeMo's encoder output (ref.has_enc), ours is within kEncBound: tells
// an encoder difference from a decoder one.
TEST(NemoParityLong, EncoderOutputMatchesNeMo) {
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        int checked = 0;
        std::set<std::string> seen;
        for (const auto& c : cases()) {
            if (!seen.insert(c.ref_path).second) continue;  // once per reference file, not per head
            const pk::GgufReader ref = pk::GgufReader::open(c.ref_path);
            if (!ref.get_bool("ref.has_enc")) continue;
            SCOPED_TRACE(c.ref_path);
            const pk::Model& model = nemo_fixtures::cached_model(c.model_dir, isa);
            const std::vector<float>& samples = clip_for(ref);
            pk::Backend b(2);
            b.arena().reset();
            const pk::MelFeatures mel = model.compute_mel(b, samples.data(), static_cast<int64_t>(samples.size()));
            const pk::EncoderOutput enc = model.encode(b, mel, {}, attention_of(ref));
            ASSERT_EQ(enc.frames, ref.get_i64("ref.enc_len"));
            const auto want = nemo_fixtures::tensor(ref, "enc");
            const size_t n = static_cast<size_t>(enc.frames * model.config().enc.d_model);
            ASSERT_EQ(want.size(), n);
            double diff = 0, scale = 1;
            for (size_t i = 0; i < n; ++i) {
                diff = std::max(diff, std::fabs(double(enc.data[i]) - double(want[i])));
                scale = std::max(scale, std::fabs(double(want[i])));
            }
            std::printf("%s (%s): encoder max |ours - NeMo| / max |NeMo| = %.2e\n", c.ref_path.c_str(),
                        pk::isa_level_name(isa), diff / scale);
            EXPECT_LT(diff / scale, kEncBound);
            ++checked;
        }
        EXPECT_EQ(checked, 3) << "hybrid_tdt_ctc stores the encoder output for each of the three settings";
    });
}

// Auto mode on three minutes (2250 encoder frames, above kAutoFullMaxFrames) runs local
// [128, 128] and gives exactly NeMo's local [128, 128] result.
TEST(NemoParityLong, AutoModeChoosesLocal128) {
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        int checked = 0;
        for (const auto& c : cases()) {
            if (c.setting != "local128x128") continue;
            SCOPED_TRACE(c.model_name + " " + c.head);
            const pk::GgufReader ref = pk::GgufReader::open(c.ref_path);
            ASSERT_GT(ref.get_i64("ref.enc_len"), pk::kAutoFullMaxFrames);
            const pk::Model& model = nemo_fixtures::cached_model(c.model_dir, isa);
            const std::vector<float>& samples = clip_for(ref);
            pk::RequestOptions opts(decoder_of(c.head));
            opts.attention = pk::AttentionSetting::automatic();
            const pk::Transcript t =
                model.transcribe(samples.data(), static_cast<int64_t>(samples.size()), 16000, opts);
            ASSERT_EQ(t.attention, pk::AttentionSetting::local(pk::kAutoLocalContext, pk::kAutoLocalContext))
                << t.attention.describe();
            nemo_fixtures::expect_transcript_matches(t, ref, c.head, first_tie(ref, c.head));
            ++checked;
        }
        EXPECT_GT(checked, 0);
    });
}

// Local attention gives the same bytes at 1, 2 and 4 threads (both heads of a hybrid, the
// asymmetric window).
TEST(NemoParityLong, LocalAttentionDoesNotDependOnThreadCount) {
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        int checked = 0;
        for (const auto& c : cases()) {
            if (c.model_name != "hybrid_tdt_ctc" || c.setting != "local64x32") continue;
            SCOPED_TRACE(c.head);
            const pk::GgufReader ref = pk::GgufReader::open(c.ref_path);
            const pk::Model& model = nemo_fixtures::cached_model(c.model_dir, isa);
            const std::vector<float>& samples = clip_for(ref);
            pk::RequestOptions opts(decoder_of(c.head));
            opts.attention = attention_of(ref);
            std::vector<pk::Transcript> results;
            for (int threads : {1, 2, 4}) {
                pk::Backend b(threads);
                results.push_back(
                    model.transcribe_on(b, samples.data(), static_cast<int64_t>(samples.size()), 16000, opts));
            }
            for (size_t i = 1; i < results.size(); ++i) nemo_fixtures::expect_identical(results[i], results[0]);
            ++checked;
        }
        EXPECT_EQ(checked, 2);
    });
}

}  // namespace
