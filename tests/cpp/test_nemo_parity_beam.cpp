// Beam search against NeMo 3.0.0's `beam` strategy (BeamTDTInfer / BeamRNNTInfer
// default_beam_search; greedy_search for RNN-T at beam 1): tests/data/nemo/<model>/
// beamref_<clip>.gguf (tools/fixtures/nemo_fixtures/beam.py, docs/fixtures.md) holds NeMo's whole N-best
// list for beam sizes 1, 2 and 4, decoded from NeMo's own encoder output (`enc` of the
// ref_<clip>.gguf next to it). The engine's decoder, fed that tensor, must return the same
// hypotheses in the same order — labels, timestamps and text exactly, scores to 1e-4 — under
// score_norm on and off, and bitwise the same result with 1 and 2 threads. Through Model (our
// own encoder) the clip's N-best list must be NeMo's too, alone and in a pool. Skipped when the
// converted model.gguf is missing. At every ISA level this CPU has.
#include <gtest/gtest.h>

#include <cctype>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "audio/wav_reader.h"
#include "gguf/gguf_reader.h"
#include "isa_levels.h"
#include "model/decoder/transducer_decoder.h"
#include "model/model.h"
#include "model/model_config.h"
#include "model/tensor_loader.h"
#include "model/text/tokenizer.h"
#include "model/transcript/word_timestamps.h"
#include "nemo_fixtures.h"

namespace {

// A beamref_<clip>.gguf and its model folder.
using BeamFixture = nemo_fixtures::Fixture;

using nemo_fixtures::ints;

// NeMo's scores are sums of a few hundred float32 log-probabilities; ours come from logits that
// differ from PyTorch's in the last bits.
constexpr double kScoreTolerance = 1e-4;


bool bitwise_equal(const std::vector<pk::BeamHypothesis>& a, const std::vector<pk::BeamHypothesis>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].score != b[i].score || a[i].tokens.size() != b[i].tokens.size()) return false;
        for (size_t k = 0; k < a[i].tokens.size(); ++k) {
            const auto &x = a[i].tokens[k], &y = b[i].tokens[k];
            if (x.id != y.id || x.frame != y.frame || x.duration != y.duration || x.confidence != y.confidence)
                return false;
        }
    }
    return true;
}

class NemoBeam : public ::testing::TestWithParam<BeamFixture> {};

TEST_P(NemoBeam, NBestListEqualsNeMo) {
    const BeamFixture& fx = GetParam();
    const std::string model_path = fx.model_dir + "/model.gguf";
    if (!std::ifstream(model_path).good()) GTEST_SKIP() << model_path << " is missing (convert model.nemo first)";
    nemo_fixtures::ModelParts m(model_path);
    const pk::GgufReader ref = pk::GgufReader::open(fx.ref_path);
    const pk::GgufReader enc_ref = pk::GgufReader::open(fx.model_dir + "/" + ref.get_string("ref.enc_source"));
    const int64_t enc_len = ref.get_i64("ref.enc_len");
    const std::vector<float> enc = nemo_fixtures::tensor(enc_ref, "enc");
    ASSERT_EQ(static_cast<int64_t>(enc.size()), enc_len * m.cfg.enc.d_model);

    isa_test::for_each_level([&](pk::IsaLevel isa) {
        pk::ThreadTeam team1(1), team2(2);
        pk::Arena arena;
        const pk::TensorLoader loader(m.gguf, isa);
        const pk::TransducerDecoder dec = pk::TransducerDecoder::load(loader, m.cfg, team2, arena);
        ASSERT_EQ(dec.is_tdt(), ref.get_string("ref.head") == "tdt");
        const std::vector<int> beam_sizes = ints(ref, "ref.beam_sizes");
        ASSERT_EQ(beam_sizes, (std::vector<int>{1, 2, 4}));

        for (int beam : beam_sizes) {
            const std::string p = "ref.beam" + std::to_string(beam) + ".";
            const int n_hyps = static_cast<int>(ref.get_i64(p + "n_hyps"));
            const std::vector<int> raw_order = ints(ref, p + "raw_order");
            for (bool norm : {true, false}) {
                SCOPED_TRACE("beam " + std::to_string(beam) + (norm ? " score_norm" : " raw scores"));
                pk::BeamOptions o;
                o.beam_size = beam;
                o.score_norm = norm;
                const auto hyps = dec.decode_beam(team2, arena, enc.data(), enc_len, enc_len, o);
                ASSERT_EQ(static_cast<int>(hyps.size()), n_hyps);
                for (int i = 0; i < n_hyps; ++i) {
                    // NeMo's i-th hypothesis in this order
                    const int nemo_i = norm ? i : raw_order[static_cast<size_t>(i)];
                    const std::string q = p + "hyp" + std::to_string(nemo_i) + ".";
                    const std::vector<int> ids = ints(ref, q + "ids");
                    const std::vector<int> stamps = ints(ref, q + "timestamps");
                    const pk::BeamHypothesis& h = hyps[static_cast<size_t>(i)];
                    ASSERT_EQ(h.tokens.size(), ids.size()) << "hypothesis " << i;
                    for (size_t k = 0; k < ids.size(); ++k) {
                        ASSERT_EQ(h.tokens[k].id, ids[k]) << "hypothesis " << i << " token " << k;
                        // NeMo's TDT beam timestamp is the frame the token's duration leads to
                        const int stamp = h.tokens[k].frame + (dec.is_tdt() ? h.tokens[k].duration : 0);
                        ASSERT_EQ(stamp, stamps[k]) << "hypothesis " << i << " token " << k;
                    }
                    const double score = ref.get_f64(q + "score");
                    EXPECT_NEAR(h.score, score, kScoreTolerance) << "hypothesis " << i;
                    EXPECT_NEAR(h.normalized_score, score / static_cast<double>(ids.size() + 1), kScoreTolerance);
                    EXPECT_EQ(m.builder.build(h.tokens, dec.timestamp_rule()).text, ref.get_string(q + "text"))
                        << "hypothesis " << i;
                }
                // the search runs on a thread team: any team size gives the same bits
                EXPECT_TRUE(bitwise_equal(hyps, dec.decode_beam(team1, arena, enc.data(), enc_len, enc_len, o)));
            }
        }
    });
}

std::string fixture_name(const ::testing::TestParamInfo<BeamFixture>& info) {
    std::string clip = info.param.ref_path.substr(info.param.ref_path.rfind("/beamref_") + 9);
    clip = clip.substr(0, clip.size() - 5);
    std::string name = info.param.model_name + "_" + clip;
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

}  // namespace

// The whole pipeline (our front end and encoder) through Model: beam requests give NeMo's
// N-best list on the clip as well, the same bits on the default backend and in a pool of
// concurrent requests, and transcribe() with beam options returns the best hypothesis.
namespace {

bool same_transcript(const pk::Transcript& a, const pk::Transcript& b) {
    if (a.text != b.text || a.tokens.size() != b.tokens.size() || a.words.size() != b.words.size()) return false;
    for (size_t i = 0; i < a.tokens.size(); ++i)
        if (a.tokens[i].id != b.tokens[i].id || a.tokens[i].frame != b.tokens[i].frame ||
            a.tokens[i].duration != b.tokens[i].duration || a.tokens[i].confidence != b.tokens[i].confidence)
            return false;
    return true;
}

bool same_nbest(const std::vector<pk::ScoredTranscript>& a, const std::vector<pk::ScoredTranscript>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].score != b[i].score || !same_transcript(a[i].transcript, b[i].transcript)) return false;
    return true;
}

TEST_P(NemoBeam, ModelNBestEqualsNeMoAndIsTheSameInAPool) {
    const BeamFixture& fx = GetParam();
    const std::string model_path = fx.model_dir + "/model.gguf";
    if (!std::ifstream(model_path).good()) GTEST_SKIP() << model_path << " is missing (convert model.nemo first)";
    const pk::GgufReader ref = pk::GgufReader::open(fx.ref_path);
    pk::WavAudio wav = pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + ref.get_string("ref.clip_file"), 0);
    // A clip NeMo resampled or downmixed: its reference holds the 16 kHz mono input NeMo ran on
    // (our resampler differs from soxr in the last bits, which a beam's ranking may amplify).
    const std::vector<float> nemo_input =
        nemo_fixtures::tensor(pk::GgufReader::open(fx.model_dir + "/" + ref.get_string("ref.enc_source")), "audio");
    if (!nemo_input.empty()) {
        wav.samples = nemo_input;
        wav.sample_rate = 16000;
    }
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        auto model = pk::Model::load(model_path, isa_test::load_options_at(isa));
        pk::RequestOptions o(pk::DecoderChoice::Transducer);
        o.beam.beam_size = 4;
        o.beam.nbest = 4;
        const auto alone = model->transcribe_nbest(wav.samples.data(), static_cast<int64_t>(wav.samples.size()),
                                                   wav.sample_rate, o);
        const int n_hyps = static_cast<int>(ref.get_i64("ref.beam4.n_hyps"));
        ASSERT_EQ(static_cast<int>(alone.size()), std::min(n_hyps, 4));
        for (size_t i = 0; i < alone.size(); ++i) {
            const std::string q = "ref.beam4.hyp" + std::to_string(i) + ".";
            std::vector<int> ids;
            for (const auto& t : alone[i].transcript.tokens) ids.push_back(t.id);
            EXPECT_EQ(ids, ints(ref, q + "ids")) << "hypothesis " << i;
            EXPECT_NEAR(alone[i].score, ref.get_f64(q + "score"), 1e-3) << "hypothesis " << i;
        }
        const pk::Transcript best = model->transcribe(wav.samples.data(), static_cast<int64_t>(wav.samples.size()),
                                                      wav.sample_rate, o);
        EXPECT_TRUE(same_transcript(best, alone.front().transcript));

        ASSERT_EQ(model->set_concurrency(2, 1), 2);
        std::vector<std::vector<pk::ScoredTranscript>> got(4);
        std::vector<std::thread> threads;
        for (auto& g : got)
            threads.emplace_back([&] {
                g = model->transcribe_nbest(wav.samples.data(), static_cast<int64_t>(wav.samples.size()),
                                            wav.sample_rate, o);
            });
        for (auto& t : threads) t.join();
        for (const auto& g : got) EXPECT_TRUE(same_nbest(g, alone));
    });
}

}  // namespace

namespace {
INSTANTIATE_TEST_SUITE_P(Fixtures, NemoBeam, ::testing::ValuesIn(nemo_fixtures::all("beamref_")), fixture_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NemoBeam);

}  // namespace
