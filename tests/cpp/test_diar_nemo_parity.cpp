// The Sortformer diarizer against NeMo 3.0.0 itself (tools/fixtures/make_sortformer_fixtures.py):
// for both fixture models (offline-style with encoder_proj, streaming-style without) and the
// parakeet.cpp-schema rewrite of the offline one (tools/fixtures/make_pcpp_diar_gguf.py), at
// every ISA level: the offline per-frame probabilities within 1e-4 of NeMo's diarize(), and
// the post-processed segments equal to NeMo's at 10 ms, with the default and with tuned
// post-processing parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "audio/wav_reader.h"
#include "gguf/gguf_reader.h"
#include "isa_levels.h"
#include "model/diar/diar_model.h"
#include "model/diar/diar_segments.h"
#include "nemo_fixtures.h"

namespace {

constexpr double kProbTolerance = 1e-4;

struct Case {
    std::string model_file;  // under tests/data/nemo/
    std::string ref_dir;     // the folder of diarref_conversation.gguf
};

const std::vector<Case>& cases() {
    static const std::vector<Case> c{
        {"sortformer_offline/model.gguf", "sortformer_offline"},
        {"sortformer_stream/model.gguf", "sortformer_stream"},
        {"sortformer_offline/model-pcpp.gguf", "sortformer_offline"},
    };
    return c;
}

using Seg = std::tuple<int, long, long>;  // speaker, start and end in 10 ms units

std::vector<Seg> nemo_segments(const pk::GgufReader& ref, const std::string& prefix) {
    const auto spk = ref.get_i64_array(prefix + ".speaker");
    const auto st = ref.get_f32_array(prefix + ".start");
    const auto en = ref.get_f32_array(prefix + ".end");
    std::vector<Seg> out;
    for (size_t i = 0; i < spk.size(); ++i)
        out.emplace_back(static_cast<int>(spk[i]), std::lround(st[i] * 100.0), std::lround(en[i] * 100.0));
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<Seg> our_segments(const std::vector<pk::DiarSegment>& segs) {
    std::vector<Seg> out;
    for (const pk::DiarSegment& s : segs)
        out.emplace_back(s.speaker, std::lround(s.start * 100.0), std::lround(s.end * 100.0));
    std::sort(out.begin(), out.end());
    return out;
}

class DiarNemoParity : public isa_test::LevelTest {};

TEST_P(DiarNemoParity, OfflineProbabilitiesAndSegmentsMatchNemo) {
    const std::string root = nemo_fixtures::data_dir() + "/nemo/";
    const pk::WavAudio wav = pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/conversation_16k.wav", 0);
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.model_file);
        const auto model = pk::DiarModel::load(root + c.model_file, isa_test::load_options_at(level()));
        const pk::GgufReader ref = pk::GgufReader::open(root + c.ref_dir + "/diarref_conversation.gguf");
        const pk::GgufTensor* probs = ref.find_tensor("probs");
        ASSERT_NE(probs, nullptr);
        const int n_spk = model->config().n_speakers;
        ASSERT_EQ(probs->ne[0], n_spk);
        const int64_t frames = probs->ne[1];
        const float* want = reinterpret_cast<const float*>(probs->data);

        const pk::SpeakerProbabilities got =
            model->probabilities(wav.samples.data(), static_cast<int64_t>(wav.samples.size()), wav.sample_rate);
        ASSERT_EQ(got.frames, frames);
        ASSERT_EQ(got.n_speakers, n_spk);
        double worst = 0.0;
        for (int64_t i = 0; i < frames * n_spk; ++i) worst = std::max(worst, std::fabs(double(got.data[i]) - want[i]));
        EXPECT_LE(worst, kProbTolerance) << "largest probability difference against NeMo";

        // The fixture is only a test of the thresholds if the probabilities swing across them.
        int above = 0;
        for (int64_t i = 0; i < frames * n_spk; ++i) above += want[i] > 0.5f;
        EXPECT_GT(above, frames * n_spk / 10);
        EXPECT_LT(above, frames * n_spk * 9 / 10);

        const int units = model->config().upsample_factor;
        const auto defaults = pk::speaker_segments(got.data.data(), frames, n_spk, units, pk::DiarPostProcessing{});
        EXPECT_EQ(our_segments(defaults), nemo_segments(ref, "seg"));

        pk::DiarPostProcessing tuned;
        tuned.onset = ref.get_f32("post.onset");
        tuned.offset = ref.get_f32("post.offset");
        tuned.pad_onset = ref.get_f32("post.pad_onset");
        tuned.pad_offset = ref.get_f32("post.pad_offset");
        tuned.min_duration_on = ref.get_f32("post.min_duration_on");
        tuned.min_duration_off = ref.get_f32("post.min_duration_off");
        const auto filtered = pk::speaker_segments(got.data.data(), frames, n_spk, units, tuned);
        EXPECT_EQ(our_segments(filtered), nemo_segments(ref, "segpp"));
        EXPECT_LT(filtered.size(), defaults.size());  // the filters did something
    }
}

INSTANTIATE_ISA_LEVELS(DiarNemoParity);

// A parakeet.cpp-schema file names no transformer sizes: they come off the tensors (layers,
// inner size) and the encoder (heads), and equal what our file says.
TEST(DiarConfig, AParakeetCppFileGivesTheSameSizesAsOurs) {
    const std::string root = nemo_fixtures::data_dir() + "/nemo/sortformer_offline/";
    const auto ours = pk::DiarModel::load(root + "model.gguf");
    const auto pcpp = pk::DiarModel::load(root + "model-pcpp.gguf");
    const pk::GgufReader g = pk::GgufReader::open(root + "model-pcpp.gguf");
    ASSERT_FALSE(g.has_key("parakeet.diar.tf_n_layers"));
    EXPECT_EQ(pcpp->config().tf_n_layers, ours->config().tf_n_layers);
    EXPECT_EQ(pcpp->config().tf_inner_size, ours->config().tf_inner_size);
    EXPECT_EQ(pcpp->config().tf_n_heads, ours->config().tf_n_heads);
    EXPECT_EQ(pcpp->config().streaming.chunk_len, ours->config().streaming.chunk_len);  // still in the file
    EXPECT_EQ(ours->config().streaming.chunk_len, 188);
    EXPECT_FALSE(ours->config().streaming_mode);
}

// The network on given mel features (what the streaming path starts from) is the offline path's:
// the peak-scaled clip's mel gives the same bits as probabilities().
TEST(DiarModelPieces, MelProbabilitiesEqualTheOfflinePathOnTheScaledClip) {
    const std::string root = nemo_fixtures::data_dir() + "/nemo/";
    const auto model = pk::DiarModel::load(root + "sortformer_offline/model.gguf");
    const pk::WavAudio wav = pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/conversation_16k.wav", 0);
    const int64_t n = static_cast<int64_t>(wav.samples.size());
    const pk::SpeakerProbabilities want = model->probabilities(wav.samples.data(), n, 16000);
    float peak = wav.samples[0];
    for (float x : wav.samples) peak = std::max(peak, x);
    std::vector<float> scaled(wav.samples);
    const float scale = 1.0f / (peak + 1e-3f);
    for (float& x : scaled) x = scale * x;
    const pk::BackendLease lease = model->lease_backend();
    pk::Backend& b = lease.backend();
    b.arena().reset();
    std::vector<float> mel(static_cast<size_t>(model->log_mel().n_frames(n) * model->config().pre.n_mels));
    model->log_mel().compute(b.team(), b.arena(), scaled.data(), n, mel.data());
    const int64_t mel_frames = model->mel_frames(n);
    ASSERT_EQ(model->output_frames(mel_frames), want.frames);
    std::vector<float> got(want.data.size());
    model->mel_probabilities(b.team(), b.arena(), mel.data(), mel_frames, got.data());
    EXPECT_EQ(got, want.data);
}

// NeMo's rule for a segment still open at the end: it closes at the last 10 ms unit's index.
TEST(DiarSegments, ASegmentOpenAtTheEndClosesAtTheLastUnit) {
    const std::vector<float> p{0.1f, 0.9f, 0.9f};  // one speaker, three frames of 8 units
    const auto s = pk::speaker_segments(p.data(), 3, 1, 8, {});
    ASSERT_EQ(s.size(), 1u);
    EXPECT_DOUBLE_EQ(s[0].start, 0.08);
    EXPECT_DOUBLE_EQ(s[0].end, 0.23);  // unit 23, not 24 (0.24 s is the audio's end)
}

TEST(DiarSegments, AThresholdValueKeepsTheState) {
    const std::vector<float> p{0.5f, 0.7f, 0.5f, 0.2f};
    const auto s = pk::speaker_segments(p.data(), 4, 1, 1, {});  // 10 ms frames
    ASSERT_EQ(s.size(), 1u);
    EXPECT_DOUBLE_EQ(s[0].start, 0.01);  // 0.5 does not open
    EXPECT_DOUBLE_EQ(s[0].end, 0.03);    // 0.5 does not close; 0.2 does
}

}  // namespace
