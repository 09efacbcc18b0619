// SpeakerCache against NeMo 3.0.0's own SortformerModules.streaming_update, step by step
// (tests/data/diar_cache, made by tools/fixtures/make_sortformer_cache_fixtures.py): the chunk
// predictions, FIFO, speaker cache (column 0 of an embedding is the frame's index, so equal
// contents mean the same frames in the same slots), stored cache predictions, mean silence
// embedding and silence count after every recorded step. Plus NeMo's parameter checks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/errors.h"
#include "gguf/gguf_reader.h"
#include "model/diar/speaker_cache.h"
#include "nemo_fixtures.h"

namespace {

std::vector<std::string> fixture_files() {
    return nemo_fixtures::list(nemo_fixtures::data_dir() + "/diar_cache", "cache_", ".gguf");
}

pk::DiarStreamingParams params_of(const pk::GgufReader& ref) {
    pk::DiarStreamingParams p;
    p.chunk_len = ref.get_i32("param.chunk_len");
    p.chunk_left_context = ref.get_i32("param.chunk_left_context");
    p.chunk_right_context = ref.get_i32("param.chunk_right_context");
    p.fifo_len = ref.get_i32("param.fifo_len");
    p.spkcache_len = ref.get_i32("param.spkcache_len");
    p.spkcache_update_period = ref.get_i32("param.spkcache_update_period");
    p.spkcache_sil_frames_per_spk = ref.get_i32("param.spkcache_sil_frames_per_spk");
    // The NeMo module's defaults, stored as f32: the fixtures use the defaults of
    // DiarStreamingParams, which are NeMo's doubles.
    EXPECT_EQ(ref.get_f32("param.sil_threshold"), static_cast<float>(p.sil_threshold));
    EXPECT_EQ(ref.get_f32("param.pred_score_threshold"), static_cast<float>(p.pred_score_threshold));
    EXPECT_EQ(ref.get_f32("param.scores_boost_latest"), static_cast<float>(p.scores_boost_latest));
    EXPECT_EQ(ref.get_f32("param.strong_boost_rate"), static_cast<float>(p.strong_boost_rate));
    EXPECT_EQ(ref.get_f32("param.weak_boost_rate"), static_cast<float>(p.weak_boost_rate));
    EXPECT_EQ(ref.get_f32("param.min_pos_scores_rate"), static_cast<float>(p.min_pos_scores_rate));
    return p;
}

// Element-wise within `tol`; reports the first difference.
::testing::AssertionResult near(const std::vector<float>& got, const std::vector<float>& want, float tol) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
    for (size_t i = 0; i < got.size(); ++i)
        if (!(std::fabs(got[i] - want[i]) <= tol))
            return ::testing::AssertionFailure() << "at " << i << ": " << got[i] << " != " << want[i];
    return ::testing::AssertionSuccess();
}

TEST(DiarSpeakerCache, FixturesExist) {
    // Seven settings are committed; a lost folder must not pass as "nothing to compare".
    EXPECT_EQ(fixture_files().size(), 7u);
}

TEST(DiarSpeakerCache, MatchesNemoStreamingUpdateEveryStep) {
    const std::string dir = nemo_fixtures::data_dir() + "/diar_cache/";
    for (const std::string& file : fixture_files()) {
        SCOPED_TRACE(file);
        const pk::GgufReader ref = pk::GgufReader::open(dir + file);
        const int n_spk = ref.get_i32("n_spk"), D = ref.get_i32("emb_dim");
        pk::SpeakerCache cache(params_of(ref), n_spk, D);
        int compared = 0, after_compression = 0;
        for (int step = 0; step < ref.get_i32("n_steps"); ++step) {
            SCOPED_TRACE("step " + std::to_string(step));
            const std::string p = "step" + std::to_string(step) + ".";
            const std::vector<float> chunk = nemo_fixtures::tensor(ref, p + "chunk");
            const std::vector<float> preds = nemo_fixtures::tensor(ref, p + "preds");
            ASSERT_EQ(preds.size(), static_cast<size_t>(cache.cache_frames() + cache.fifo_frames()) * n_spk +
                                        chunk.size() / D * n_spk);
            const std::vector<float> out = cache.update(chunk.data(), static_cast<int>(chunk.size() / D),
                                                        preds.data(), ref.get_i32(p + "lc"), ref.get_i32(p + "rc"));
            // Copies of NeMo's inputs: bitwise.
            ASSERT_EQ(out, nemo_fixtures::tensor(ref, p + "chunk_preds"));
            if (!ref.get_bool(p + "has_state")) continue;
            ASSERT_EQ(cache.cache_frames(), ref.get_i32(p + "cache_frames"));
            ASSERT_EQ(cache.fifo_frames(), ref.get_i32(p + "fifo_frames"));
            ASSERT_EQ(cache.has_cache_preds(), ref.get_bool(p + "has_cache_preds"));
            ASSERT_EQ(cache.n_sil_frames(), ref.get_i32(p + "n_sil_frames"));
            // The silence mean is a float sum whose order torch chooses: 1e-6.
            ASSERT_TRUE(near(cache.mean_sil_emb(), nemo_fixtures::tensor(ref, p + "mean_sil_emb"), 1e-6f));
            ASSERT_EQ(cache.fifo(), nemo_fixtures::tensor(ref, p + "fifo"));
            ASSERT_EQ(cache.fifo_preds(), nemo_fixtures::tensor(ref, p + "fifo_preds"));
            ASSERT_EQ(cache.cache_preds(), nemo_fixtures::tensor(ref, p + "cache_preds"));
            // Kept frames are copies (bitwise, and column 0 names them); silence slots hold the
            // mean (1e-6).
            ASSERT_TRUE(near(cache.cache(), nemo_fixtures::tensor(ref, p + "cache"), 1e-6f));
            for (int t = 0; t < cache.cache_frames(); ++t)
                ASSERT_EQ(cache.cache()[t * D], nemo_fixtures::tensor(ref, p + "cache")[t * D]) << "slot " << t;
            ++compared;
            after_compression += cache.has_cache_preds();
        }
        EXPECT_GT(compared, 4);
        EXPECT_GT(after_compression, 1) << "the setting never compressed its cache";
    }
}

TEST(DiarSpeakerCache, RejectsWhatNemoRejects) {
    const auto rejects = [](auto edit, int n_spk, const std::string& what) {
        pk::DiarStreamingParams p;
        edit(p);
        try {
            pk::SpeakerCache cache(p, n_spk, 4);
            ADD_FAILURE() << "accepted: " << what;
        } catch (const pk::InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    rejects([](pk::DiarStreamingParams& p) { p.spkcache_len = 15; }, 4, "spkcache_len must be at least 16, got 15");
    rejects([](pk::DiarStreamingParams& p) { p.spkcache_len = 31; }, 8, "spkcache_len must be at least 32");
    rejects([](pk::DiarStreamingParams& p) { p.chunk_len = 0; }, 4, "chunk_len must be at least 1");
    rejects([](pk::DiarStreamingParams& p) { p.fifo_len = -1; }, 4, "fifo_len must be at least 0");
    rejects([](pk::DiarStreamingParams& p) { p.spkcache_update_period = 0; }, 4, "spkcache_update_period");
    rejects([](pk::DiarStreamingParams& p) { p.chunk_left_context = -1; }, 4, "chunk_left_context");
    rejects([](pk::DiarStreamingParams& p) { p.chunk_right_context = -2; }, 4, "chunk_right_context");
    // The smallest legal cache, an update period above fifo_len + chunk_len (NeMo warns and
    // clamps through its pop-out rule): accepted.
    pk::DiarStreamingParams ok;
    ok.spkcache_len = 16;
    ok.spkcache_update_period = 10000;
    EXPECT_NO_THROW(pk::SpeakerCache(ok, 4, 4));
}

TEST(DiarSpeakerCache, UpdatePeriodAboveFifoPlusChunkPopsEverything) {
    // fifo_len 4, chunk 3, period 100: once the FIFO overflows, all of it goes to the cache
    // (NeMo: min(period, fifo + chunk)).
    pk::DiarStreamingParams p;
    p.chunk_len = 3;
    p.fifo_len = 4;
    p.spkcache_len = 64;
    p.spkcache_update_period = 100;
    pk::SpeakerCache cache(p, 4, 2);
    std::vector<float> chunk(3 * 2, 1.0f), preds;
    for (int step = 0; step < 2; ++step) {
        preds.assign(static_cast<size_t>(cache.cache_frames() + cache.fifo_frames() + 3) * 4, 0.9f);
        cache.update(chunk.data(), 3, preds.data(), 0, 0);
    }
    EXPECT_EQ(cache.fifo_frames(), 0);
    EXPECT_EQ(cache.cache_frames(), 6);
}

}  // namespace
