// The decoders fed NeMo's own encoder output (tests/data/nemo/<model>/ref_<clip>.gguf, tensor
// `enc`) against the converted model (model.gguf next to it), compared with what NeMo 3.0.0
// decoded from the same tensor: token ids, frames and durations exactly; confidences, word
// times and word confidences to 1e-4; text and words exactly. This isolates the decoders from
// the encoder. Both NeMo greedy TDT loops are checked (GreedyTDTInfer, and the label-looping
// greedy_batch when the fixture records it). Skipped when the fixtures or the converted model
// are missing.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "isa_levels.h"
#include "model/decoder/ctc_decoder.h"
#include "model/decoder/transducer_decoder.h"
#include "model/model_config.h"
#include "model/tensor_loader.h"
#include "model/text/tokenizer.h"
#include "model/transcript/word_timestamps.h"
#include "nemo_fixtures.h"

namespace {

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

using nemo_fixtures::ints;

// Compares one head's decode with NeMo's record under `ref.<head>.`.
void expect_matches_nemo(const pk::GgufReader& ref, const std::string& head, const pk::Transcript& tr,
                         bool has_durations) {
    const std::string p = "ref." + head + ".";
    const std::vector<int> ids = ints(ref, p + "ids");
    const std::vector<int> frames = ints(ref, p + "frames");
    ASSERT_EQ(tr.tokens.size(), ids.size()) << head;
    for (size_t i = 0; i < ids.size(); ++i) {
        ASSERT_EQ(tr.tokens[i].id, ids[i]) << head << " token " << i;
        ASSERT_EQ(tr.tokens[i].frame, frames[i]) << head << " token " << i;
    }
    if (has_durations) {
        const std::vector<int> durations = ints(ref, p + "durations");
        for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(tr.tokens[i].duration, durations[i]) << head << " token " << i;
    }
    const std::vector<float> conf = ref.get_f32_array(p + "token_conf");
    ASSERT_EQ(conf.size(), ids.size()) << head;
    for (size_t i = 0; i < ids.size(); ++i) EXPECT_NEAR(tr.tokens[i].confidence, conf[i], 1e-4) << head << " token " << i;

    EXPECT_EQ(tr.text, ref.get_string(p + "text")) << head;
    const std::vector<std::string> words = ref.get_string_array(p + "words");
    const std::vector<float> start = ref.get_f32_array(p + "word_start");
    const std::vector<float> end = ref.get_f32_array(p + "word_end");
    ASSERT_EQ(tr.words.size(), words.size()) << head;
    for (size_t i = 0; i < words.size(); ++i) {
        EXPECT_EQ(tr.words[i].text, words[i]) << head << " word " << i;
        EXPECT_NEAR(tr.words[i].start_sec, start[i], 1e-4) << head << " word " << i;
        EXPECT_NEAR(tr.words[i].end_sec, end[i], 1e-4) << head << " word " << i;
    }
    // NeMo pairs its word confidences with text.split(); they line up with our words when the
    // counts agree (they do unless "<unk>" or "▁."-like pieces occur).
    const std::vector<float> word_conf = ref.get_f32_array(p + "word_conf");
    if (word_conf.size() == tr.words.size())
        for (size_t i = 0; i < word_conf.size(); ++i)
            EXPECT_NEAR(tr.words[i].confidence, word_conf[i], 1e-4) << head << " word " << i;
}

class NemoDecoders : public ::testing::TestWithParam<nemo_fixtures::Fixture> {};

TEST_P(NemoDecoders, DecodeNeMoEncoderOutputLikeNeMo) {
    const nemo_fixtures::Fixture& fx = GetParam();
    const std::string model_path = fx.model_dir + "/model.gguf";
    if (!file_exists(model_path)) GTEST_SKIP() << model_path << " is missing (convert model.nemo first)";
    nemo_fixtures::ModelParts m(model_path);
    const pk::GgufReader ref = pk::GgufReader::open(fx.ref_path);
    const int64_t enc_len = ref.get_i64("ref.enc_len");
    const std::vector<float> enc = nemo_fixtures::tensor(ref, "enc");
    ASSERT_EQ(static_cast<int64_t>(enc.size()), enc_len * m.cfg.enc.d_model);

    for (int threads : {1, 3}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        pk::ThreadTeam team(threads);
        pk::Arena arena;
        const pk::TensorLoader loader(m.gguf, isa_test::highest_level());
        if (m.cfg.has_transducer()) {
            const pk::TransducerDecoder dec = pk::TransducerDecoder::load(loader, m.cfg, team, arena);
            const std::string head = dec.is_tdt() ? "tdt" : "rnnt";
            const pk::Transcript tr =
                m.builder.build(dec.decode(team, arena, enc.data(), enc_len, enc_len), dec.timestamp_rule());
            expect_matches_nemo(ref, head, tr, dec.is_tdt());
        }
        if (m.cfg.has_transducer() && m.cfg.is_tdt() && ref.has_key("ref.tdt.batch.ids")) {
            // NeMo's label-looping loop ("greedy_batch"), recorded with ids, frames, durations,
            // confidences and text.
            pk::TransducerDecoder dec = pk::TransducerDecoder::load(loader, m.cfg, team, arena);
            dec.set_tdt_loop(pk::TdtLoop::GreedyBatch);
            const pk::Transcript tr =
                m.builder.build(dec.decode(team, arena, enc.data(), enc_len, enc_len), dec.timestamp_rule());
            const std::vector<int> ids = ints(ref, "ref.tdt.batch.ids");
            const std::vector<int> frames = ints(ref, "ref.tdt.batch.frames");
            const std::vector<int> durations = ints(ref, "ref.tdt.batch.durations");
            const std::vector<float> conf = ref.get_f32_array("ref.tdt.batch.token_conf");
            ASSERT_EQ(tr.tokens.size(), ids.size());
            for (size_t i = 0; i < ids.size(); ++i) {
                ASSERT_EQ(tr.tokens[i].id, ids[i]) << "batch token " << i;
                ASSERT_EQ(tr.tokens[i].frame, frames[i]) << "batch token " << i;
                ASSERT_EQ(tr.tokens[i].duration, durations[i]) << "batch token " << i;
                EXPECT_NEAR(tr.tokens[i].confidence, conf[i], 1e-4) << "batch token " << i;
            }
            EXPECT_EQ(tr.text, ref.get_string("ref.tdt.batch.text"));
        }
        if (m.cfg.has_ctc()) {
            const pk::CtcDecoder dec = pk::CtcDecoder::load(loader, m.cfg);
            const pk::Transcript tr =
                m.builder.build(dec.decode(team, arena, enc.data(), enc_len, enc_len), pk::TimestampRule::Ctc);
            expect_matches_nemo(ref, "ctc", tr, false);
        }
    }
}

TEST_P(NemoDecoders, FirstPredictionAndJointStepAndCtcLogitsMatch) {
    const nemo_fixtures::Fixture& fx = GetParam();
    const std::string model_path = fx.model_dir + "/model.gguf";
    if (!file_exists(model_path)) GTEST_SKIP() << model_path << " is missing (convert model.nemo first)";
    nemo_fixtures::ModelParts m(model_path);
    const pk::GgufReader ref = pk::GgufReader::open(fx.ref_path);
    const int64_t enc_len = ref.get_i64("ref.enc_len");
    if (enc_len == 0) GTEST_SKIP() << "no encoder frames";
    const std::vector<float> enc = nemo_fixtures::tensor(ref, "enc");
    pk::ThreadTeam team(2);
    pk::Arena arena;
    const pk::TensorLoader loader(m.gguf, isa_test::highest_level());

    if (m.cfg.has_transducer()) {
        // pred0: the prediction net on the blank/SOS input from a zero state; joint0: the raw
        // joint logits of encoder frame 0 against it.
        const pk::PredictionNet pred = pk::PredictionNet::load(loader, m.cfg, team, arena);
        const pk::Joint joint = pk::Joint::load(loader, m.cfg);
        const size_t n = static_cast<size_t>(pred.state_size());
        std::vector<float> zero(n, 0.f), h(n), c(n);
        pred.step(team, arena, m.cfg.blank_id, zero.data(), zero.data(), h.data(), c.data());
        const std::vector<float> pred0 = nemo_fixtures::tensor(ref, "pred0");
        ASSERT_EQ(pred0.size(), static_cast<size_t>(pred.hidden()));
        const float* g = h.data() + (pred.layers() - 1) * pred.hidden();
        for (size_t i = 0; i < pred0.size(); ++i) EXPECT_NEAR(g[i], pred0[i], 1e-5) << i;

        std::vector<float> enc_proj(static_cast<size_t>(joint.hidden())), pred_proj(enc_proj.size());
        std::vector<float> logits(static_cast<size_t>(joint.outputs()));
        joint.project_encoder(team, arena, enc.data(), 1, enc_proj.data());
        joint.project_prediction(team, arena, g, pred_proj.data());
        joint.logits(team, arena, enc_proj.data(), pred_proj.data(), logits.data());
        const std::vector<float> joint0 = nemo_fixtures::tensor(ref, "joint0");
        ASSERT_EQ(joint0.size(), logits.size());
        for (size_t i = 0; i < joint0.size(); ++i) EXPECT_NEAR(logits[i], joint0[i], 1e-4) << i;
    }
    if (m.cfg.has_ctc()) {
        const pk::CtcDecoder dec = pk::CtcDecoder::load(loader, m.cfg);
        const std::vector<float> want = nemo_fixtures::tensor(ref, "ctc_logprobs");
        const int C = dec.classes();
        ASSERT_EQ(static_cast<int64_t>(want.size()), enc_len * C);
        std::vector<float> logits(want.size());
        dec.logits(team, arena, enc.data(), enc_len, logits.data());
        for (int64_t t = 0; t < enc_len; ++t) {
            const float* row = logits.data() + t * C;
            double m_ = row[0], sum = 0;
            for (int k = 1; k < C; ++k) m_ = std::max(m_, double(row[k]));
            for (int k = 0; k < C; ++k) sum += std::exp(row[k] - m_);
            const double lse = m_ + std::log(sum);
            for (int k = 0; k < C; ++k) EXPECT_NEAR(row[k] - lse, want[size_t(t * C + k)], 1e-4) << t << "," << k;
        }
    }
}

std::string fixture_name(const ::testing::TestParamInfo<nemo_fixtures::Fixture>& info) {
    std::string clip = info.param.ref_path.substr(info.param.ref_path.rfind("/ref_") + 5);
    clip = clip.substr(0, clip.size() - 5);
    std::string name = info.param.model_name + "_" + clip;
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NemoDecoders, ::testing::ValuesIn(nemo_fixtures::all()), fixture_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NemoDecoders);

}  // namespace
