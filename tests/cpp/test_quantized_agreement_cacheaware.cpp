// f16 and q8_0 cache-aware models against the f32 model they were converted from
// (tests/data/nemo/ca_*/model-{f16,q8_0}.gguf, tools/fixtures/convert_fixture_models.sh), on the
// speech clip of every cawref_* reference: bounds the drift of the encoder's (offline, limited
// context) output relative to its max |value|, and prints the streamed token agreement (1 - edit distance / f32
// token count) per context and head, against f32 and against NeMo's streamed ids. Reported,
// not hidden: random-weight fixture models amplify small numeric differences far more than
// trained ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "isa_levels.h"
#include "model/model.h"
#include "model/stream/cache_aware_stream.h"
#include "nemo_fixtures.h"
#include "token_agreement.h"

namespace {

using token_agreement::edit_distance;

double agreement(const std::vector<int64_t>& want, const std::vector<int64_t>& got) {
    if (want.empty()) return got.empty() ? 1.0 : 0.0;
    return std::max(0.0, 1.0 - double(edit_distance(want, got)) / double(want.size()));
}

// The token ids of a whole-clip cache-aware stream (<EOU>/<EOB> are events, not tokens).
std::vector<int64_t> streamed_ids(const pk::Model& model, const pk::AttContext& c, pk::DecoderChoice d,
                                  const std::string& lang, const std::vector<float>& samples) {
    pk::CacheAwareStream s(model, c, d, lang);
    s.feed(samples.data(), static_cast<int64_t>(samples.size()));
    s.finalize();
    std::vector<int64_t> out;
    for (const auto& t : s.tokens()) out.push_back(t.id);
    return out;
}

std::vector<float> offline_encoder(const pk::Model& model, const std::vector<float>& samples) {
    pk::Backend b(2);
    b.arena().reset();
    const auto mel = model.compute_mel(b, samples.data(), static_cast<int64_t>(samples.size()));
    const auto enc = model.encode(b, mel);
    return std::vector<float>(enc.data, enc.data + enc.frames * model.config().enc.d_model);
}

const std::map<std::string, double> kEncoderBound = {{"-f16", 2e-2}, {"-q8_0", 1e-1}};

TEST(QuantizedAgreementCacheAware, F16AndQ8_0StreamsAgainstF32) {
    std::printf("\n%-44s %-6s %12s %10s %10s\n", "reference", "type", "enc rel diff", "vs f32", "vs NeMo");
    int compared = 0;
    for (const auto& f : nemo_fixtures::all("cawref_speech_")) {
        const pk::GgufReader ref = pk::GgufReader::open(f.ref_path);
        const auto ctx = ref.get_i64_array("ref.att_context");
        const pk::AttContext c{static_cast<int>(ctx.at(0)), static_cast<int>(ctx.at(1))};
        const pk::DecoderChoice d = ref.get_string("ref.head") == "ctc" ? pk::DecoderChoice::Ctc
                                                                         : pk::DecoderChoice::Transducer;
        const std::string lang = ref.has_key("ref.language") ? ref.get_string("ref.language") : "";
        const std::vector<float> samples = nemo_fixtures::clip_samples(ref);
        const pk::Model& f32 = nemo_fixtures::cached_model(f.model_dir, isa_test::highest_level());
        const auto want = streamed_ids(f32, c, d, lang, samples);
        const auto enc32 = offline_encoder(f32, samples);
        double scale = 1e-30;
        for (float v : enc32) scale = std::max(scale, double(std::fabs(v)));
        for (const auto& [suffix, bound] : kEncoderBound) {
            const std::string path = f.model_dir + "/model" + suffix + ".gguf";
            if (FILE* probe = std::fopen(path.c_str(), "rb")) std::fclose(probe);
            else continue;
            SCOPED_TRACE(path + " on " + f.ref_path);
            const auto q = pk::Model::load(path);
            const auto encq = offline_encoder(*q, samples);
            ASSERT_EQ(encq.size(), enc32.size());
            double diff = 0;
            for (size_t i = 0; i < enc32.size(); ++i) diff = std::max(diff, double(std::fabs(enc32[i] - encq[i])));
            EXPECT_LT(diff / scale, bound);
            const auto got = streamed_ids(*q, c, d, lang, samples);
            std::printf("%-44s %-6s %12.2e %10.3f %10.3f\n", f.ref_path.substr(f.ref_path.rfind("/nemo/") + 6).c_str(),
                        suffix.c_str() + 1, diff / scale, agreement(want, got),
                        agreement(ref.get_i64_array("ref.stream.ids"), got));
            ++compared;
        }
    }
    std::printf("(agreement = max(0, 1 - token edit distance / reference token count); NeMo's ids include "
                "<EOU>/<EOB>)\n");
    EXPECT_GT(compared, 0) << "no model-f16.gguf / model-q8_0.gguf next to the cache-aware fixtures";
}

}  // namespace
