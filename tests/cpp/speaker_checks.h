// The checks every speaker encoder's tests make on its fixtures (speaker_fixtures.h): features
// and embeddings against the references, and the same bits for any thread count.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "model/speaker/speaker_encoder.h"
#include "speaker_fixtures.h"

namespace speaker_checks {

inline std::unique_ptr<pk::speaker::SpeakerEncoder> load_at(const std::string& model, pk::IsaLevel level,
                                                            int threads) {
    pk::LoadOptions o = isa_test::load_options_at(level);
    o.threads = threads;
    return pk::speaker::SpeakerEncoder::load(model, o);
}

inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
    return m;
}

inline double cosine(const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
    return ab / std::sqrt(aa * bb);
}

// Per clip: the features to 1e-4 of the reference fbank, the embedding to cosine 0.9999 and
// 1e-4 per value of the reference embedding.
inline void expect_matches_references(const pk::speaker::SpeakerEncoder& enc, const std::vector<std::string>& clips) {
    for (const std::string& clip : clips) {
        SCOPED_TRACE(clip);
        const auto ref = speaker_fixtures::load(clip);
        const int64_t n = static_cast<int64_t>(ref.pcm.size());
        const std::vector<float> feats = enc.features(ref.pcm.data(), n);
        ASSERT_EQ(feats.size(), ref.fbank.size());
        EXPECT_LE(max_abs_diff(feats, ref.fbank), 1e-4);
        const std::vector<float> emb = enc.embed(ref.pcm.data(), n, 16000);
        ASSERT_EQ(emb.size(), ref.embedding.size());
        EXPECT_GE(cosine(emb, ref.embedding), 0.9999);
        EXPECT_LE(max_abs_diff(emb, ref.embedding), 1e-4);
    }
}

// 2 and 3 threads give the bits 1 thread gives on `clip`, at `level`.
inline void expect_thread_count_changes_no_bit(const std::string& model, pk::IsaLevel level,
                                               const std::string& clip) {
    const auto ref = speaker_fixtures::load(clip);
    const int64_t n = static_cast<int64_t>(ref.pcm.size());
    const std::vector<float> one = load_at(model, level, 1)->embed(ref.pcm.data(), n, 16000);
    for (int threads : {2, 3}) {
        const std::vector<float> more = load_at(model, level, threads)->embed(ref.pcm.data(), n, 16000);
        EXPECT_EQ(0, std::memcmp(one.data(), more.data(), one.size() * sizeof(float))) << threads << " threads";
    }
}

}  // namespace speaker_checks
