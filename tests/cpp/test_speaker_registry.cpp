// The voice registry through the C ABI on constructed embeddings: a known speaker, an impostor
// under the threshold, two close speakers within the margin, averaging of a repeated name,
// the add errors and fingerprint rules, and the PKSR file (round trip, v1 and v2, truncation,
// trailing bytes, unknown versions).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "parakeet_capi.h"
#include "model/speaker/speaker_registry.h"

namespace {

constexpr int kDim = 8;

struct RegDeleter {
    void operator()(parakeet_speaker_registry* r) const { parakeet_capi_speaker_registry_free(r); }
};
using Reg = std::unique_ptr<parakeet_speaker_registry, RegDeleter>;

std::vector<float> axis(int i, float scale = 1.0f) {
    std::vector<float> v(kDim, 0.0f);
    v[i] = scale;
    return v;
}

std::vector<float> mix(const std::vector<float>& a, float wa, const std::vector<float>& b, float wb) {
    std::vector<float> v(kDim);
    for (int i = 0; i < kDim; ++i) v[i] = wa * a[i] + wb * b[i];
    return v;
}

void add(parakeet_speaker_registry* r, const char* name, const std::vector<float>& v) {
    ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding(r, name, v.data(), kDim))
        << parakeet_capi_speaker_registry_last_error(r);
}

// The registry's match for v, through the model class the C calls use (the C ABI identifies
// PCM only).
pk::speaker::SpeakerMatch match(const std::vector<std::pair<std::string, std::vector<float>>>& speakers,
                                const std::vector<float>& v) {
    pk::speaker::SpeakerRegistry r;
    for (const auto& [name, e] : speakers) r.add(name, e.data(), kDim);
    return r.identify(v.data());
}

TEST(SpeakerRegistry, KnownSpeakerImpostorAndCloseSpeakers) {
    // A known speaker: near alice's axis, far from bob's.
    auto m = match({{"alice", axis(0)}, {"bob", axis(1)}}, mix(axis(0), 1.0f, axis(2), 0.2f));
    EXPECT_EQ(m.name, "alice");
    EXPECT_NEAR(m.score, 1.0 / std::sqrt(1.04), 1e-6);
    // An impostor: cosine 0.3 to alice, under the 0.5 threshold.
    m = match({{"alice", axis(0)}, {"bob", axis(1)}}, mix(axis(0), 0.3f, axis(3), std::sqrt(1 - 0.09f)));
    EXPECT_EQ(m.name, "");
    EXPECT_NEAR(m.score, 0.3, 1e-6);
    // Two close speakers: alice at cosine 1, carol at 0.99 to the query: within the margin.
    const auto carol = mix(axis(0), 0.99f, axis(1), std::sqrt(1 - 0.99f * 0.99f));
    m = match({{"alice", axis(0)}, {"carol", carol}}, axis(0));
    EXPECT_EQ(m.name, "");
    EXPECT_NEAR(m.score, 1.0, 1e-6);
    // ... and alone, carol is named.
    EXPECT_EQ(match({{"carol", carol}}, axis(0)).name, "carol");
    // Empty registry: no name, score 0.
    m = match({}, axis(0));
    EXPECT_EQ(m.name, "");
    EXPECT_EQ(m.score, 0.0f);
}

TEST(SpeakerRegistry, RepeatedNameAveragesNormalisedVectors) {
    // alice gets axis 0 at length 5 and axis 1 at length 1: normalised first, so her centroid is
    // the diagonal and axis 0 scores 1/sqrt(2).
    const auto m = match({{"alice", axis(0, 5.0f)}, {"alice", axis(1)}}, axis(0));
    EXPECT_EQ(m.name, "alice");
    EXPECT_NEAR(m.score, 1.0 / std::sqrt(2.0), 1e-6);
    Reg r(parakeet_capi_speaker_registry_new());
    add(r.get(), "alice", axis(0, 5.0f));
    add(r.get(), "alice", axis(1));
    EXPECT_EQ(parakeet_capi_speaker_registry_size(r.get()), 1);
}

TEST(SpeakerRegistry, BadEmbeddingsAreRefusedOnTheRegistry) {
    Reg r(parakeet_capi_speaker_registry_new());
    const auto v = axis(0);
    EXPECT_NE(0, parakeet_capi_speaker_registry_add_embedding(r.get(), "", v.data(), kDim));
    EXPECT_STREQ(parakeet_capi_speaker_registry_last_error(r.get()), "speaker name is empty");
    EXPECT_NE(0, parakeet_capi_speaker_registry_add_embedding(r.get(), "a", nullptr, kDim));
    EXPECT_STREQ(parakeet_capi_speaker_registry_last_error(r.get()), "no embedding");
    const std::vector<float> zero(kDim, 0.0f);
    EXPECT_NE(0, parakeet_capi_speaker_registry_add_embedding(r.get(), "a", zero.data(), kDim));
    EXPECT_STREQ(parakeet_capi_speaker_registry_last_error(r.get()), "speaker embedding is all zero or not finite");
    auto nan = axis(0);
    nan[3] = std::nanf("");
    EXPECT_NE(0, parakeet_capi_speaker_registry_add_embedding(r.get(), "a", nan.data(), kDim));
    add(r.get(), "a", v);
    EXPECT_STREQ(parakeet_capi_speaker_registry_last_error(r.get()), "");
    EXPECT_NE(0, parakeet_capi_speaker_registry_add_embedding(r.get(), "b", v.data(), kDim - 1));
    EXPECT_STREQ(parakeet_capi_speaker_registry_last_error(r.get()), "speaker embedding has 7 values, registry expects 8");
    EXPECT_STREQ(parakeet_capi_thread_last_error(), "speaker embedding has 7 values, registry expects 8");
    EXPECT_EQ(parakeet_capi_speaker_registry_size(r.get()), 1);
}

TEST(SpeakerRegistry, FingerprintRules) {
    Reg r(parakeet_capi_speaker_registry_new());
    const auto v = axis(0);
    EXPECT_STREQ(parakeet_capi_speaker_registry_encoder_family(r.get()), "");
    ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(r.get(), "a", v.data(), kDim, "fam", "w1"));
    EXPECT_STREQ(parakeet_capi_speaker_registry_encoder_family(r.get()), "fam");
    EXPECT_STREQ(parakeet_capi_speaker_registry_encoder_weights(r.get()), "w1");
    EXPECT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(r.get(), "b", v.data(), kDim, "fam", "w2"));
    EXPECT_NE(0, parakeet_capi_speaker_registry_add_embedding_fp(r.get(), "c", v.data(), kDim, "other", "w1"));
    EXPECT_NE(std::string(parakeet_capi_speaker_registry_last_error(r.get())).find("encoder family 'other'"),
              std::string::npos);
    // Mixing: a fingerprinted embedding into a registry whose entries have none.
    Reg plain(parakeet_capi_speaker_registry_new());
    add(plain.get(), "a", v);
    EXPECT_NE(0, parakeet_capi_speaker_registry_add_embedding_fp(plain.get(), "b", v.data(), kDim, "fam", "w"));
    // NULL or empty strings make it a plain add.
    EXPECT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(plain.get(), "b", v.data(), kDim, "", nullptr));

    pk::speaker::SpeakerRegistry model;
    model.add("a", v.data(), kDim, {"fam", "w1"});
    EXPECT_EQ(model.check_encoder(kDim, {"fam", "w1"}), "");
    EXPECT_EQ(model.check_encoder(kDim, {"fam", "w2"}), "other weights");
    EXPECT_THROW(model.check_encoder(kDim, {"other", "w1"}), std::exception);
    EXPECT_THROW(model.check_encoder(kDim + 1, {"fam", "w1"}), std::exception);
}

std::string temp_path(const char* tag) {
    return ::testing::TempDir() + "speaker_registry_" + tag + "_" + std::to_string(::getpid()) + ".pksr";
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(SpeakerRegistry, FileRoundTripKeepsSumsCountsAndFingerprint) {
    for (bool fingerprinted : {false, true}) {
        SCOPED_TRACE(fingerprinted ? "v2" : "v1");
        Reg r(parakeet_capi_speaker_registry_new());
        const char* fam = fingerprinted ? "fam" : nullptr;
        ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(r.get(), "ada", axis(0).data(), kDim, fam, "w"));
        ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(r.get(), "ada", axis(1).data(), kDim, fam, "w"));
        ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(r.get(), "bo", axis(2).data(), kDim, fam, "w"));
        const std::string path = temp_path(fingerprinted ? "v2" : "v1");
        ASSERT_EQ(0, parakeet_capi_speaker_registry_save(r.get(), path.c_str()))
            << parakeet_capi_speaker_registry_last_error(r.get());
        EXPECT_TRUE(read_file(path + ".tmp").empty());  // renamed away
        const std::string bytes = read_file(path);
        EXPECT_EQ(bytes.substr(0, 5), std::string("PKSR") + char(fingerprinted ? 2 : 1));

        Reg back(parakeet_capi_speaker_registry_load(path.c_str()));
        ASSERT_NE(back, nullptr) << parakeet_capi_thread_last_error();
        EXPECT_EQ(parakeet_capi_speaker_registry_size(back.get()), 2);
        EXPECT_STREQ(parakeet_capi_speaker_registry_encoder_family(back.get()), fingerprinted ? "fam" : "");
        // Saving the loaded registry gives the same bytes, so names, counts and sums survived.
        const std::string again = temp_path("again");
        ASSERT_EQ(0, parakeet_capi_speaker_registry_save(back.get(), again.c_str()));
        EXPECT_EQ(read_file(again), bytes);
        // ... and a repeated name keeps averaging from the stored sum (count 2 -> 3).
        ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(back.get(), "ada", axis(2).data(), kDim, fam, "w"));
        std::remove(path.c_str());
        std::remove(again.c_str());
    }
}

TEST(SpeakerRegistry, DamagedFilesAreRefused) {
    Reg r(parakeet_capi_speaker_registry_new());
    ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(r.get(), "ada", axis(0).data(), kDim, "f", "w"));
    const std::string path = temp_path("damaged");
    ASSERT_EQ(0, parakeet_capi_speaker_registry_save(r.get(), path.c_str()));
    const std::string bytes = read_file(path);
    for (size_t n = 0; n < bytes.size(); ++n) {
        write_file(path, bytes.substr(0, n));
        EXPECT_EQ(parakeet_capi_speaker_registry_load(path.c_str()), nullptr) << n << " bytes";
    }
    write_file(path, bytes + "x");
    EXPECT_EQ(parakeet_capi_speaker_registry_load(path.c_str()), nullptr);
    EXPECT_NE(std::string(parakeet_capi_thread_last_error()).find("trailing bytes"), std::string::npos);
    std::string v3 = bytes;
    v3[4] = 3;
    write_file(path, v3);
    EXPECT_EQ(parakeet_capi_speaker_registry_load(path.c_str()), nullptr);
    EXPECT_NE(std::string(parakeet_capi_thread_last_error()).find("unknown version 3"), std::string::npos);
    std::remove(path.c_str());
    EXPECT_EQ(parakeet_capi_speaker_registry_load(path.c_str()), nullptr);
    EXPECT_EQ(parakeet_capi_speaker_registry_save(r.get(), "/nonexistent-dir/x.pksr"), 1);
    EXPECT_NE(std::string(parakeet_capi_speaker_registry_last_error(r.get())).find("cannot write"), std::string::npos);
}

}  // namespace
