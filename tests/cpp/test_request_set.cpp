// A set of requests given at once (model/offline/request_set.h, the C ABI's batch calls): the
// plan batches what the request batcher would (long audio, beam search and hotwords alone), in
// batches of at most kRequestSetMaxBatch cut from the requests sorted longest first, as many as
// a multiple of the backends; and every transcript is bitwise what Model::transcribe gives the
// request alone, for sets of 1 to 25 requests mixing lengths (nothing, a tenth of a second to
// 31 s), input rates and a hybrid's two heads, on the TDT, RNN-T, CTC and hybrid fixture models
// (f32, and q8_0), at 1 and 2 threads with 1 and 2 backends (PARAKEET_STRESS_QUICK, under
// ThreadSanitizer: 2 x 2 only). A request's bad audio is its own error, the one it gets alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "model/offline/request_batcher.h"
#include "model/offline/request_set.h"
#include "nemo_fixtures.h"
#include "pool_test_support.h"
#include "speech_clips.h"
#include "transcript_checks.h"

namespace {

using transcript_checks::expect_same;

using speech_clips::cut;
using speech_clips::kRate;
using speech_clips::speech;

// ---- the plan ------------------------------------------------------------------------------

// Requests of these lengths (samples at `rate`), all with `options`.
std::vector<pk::OfflineRequest> requests_of(const std::vector<int64_t>& lengths, int rate,
                                            const pk::RequestOptions& options) {
    std::vector<pk::OfflineRequest> r(lengths.size());
    for (size_t i = 0; i < lengths.size(); ++i) r[i] = {nullptr, lengths[i], rate, &options, {}, nullptr};
    return r;
}

std::vector<pk::OfflineRequest*> pointers(std::vector<pk::OfflineRequest>& requests) {
    std::vector<pk::OfflineRequest*> p;
    for (pk::OfflineRequest& r : requests) p.push_back(&r);
    return p;
}

std::vector<size_t> sizes_of(const pk::RequestSetPlan& plan) {
    std::vector<size_t> sizes;
    for (const auto& b : plan.batches) sizes.push_back(b.size());
    return sizes;
}

// Every request is in the plan once, and the batches, read in order, run longest first.
void expect_whole_and_longest_first(const pk::RequestSetPlan& plan, std::vector<pk::OfflineRequest>& requests) {
    std::multiset<const pk::OfflineRequest*> seen(plan.alone.begin(), plan.alone.end());
    int64_t previous = std::numeric_limits<int64_t>::max();
    for (const auto& batch : plan.batches) {
        for (const pk::OfflineRequest* r : batch) {
            seen.insert(r);
            EXPECT_LE(r->n, previous);
            previous = r->n;
        }
    }
    ASSERT_EQ(seen.size(), requests.size());
    for (const pk::OfflineRequest& r : requests) EXPECT_EQ(seen.count(&r), 1u);
}

TEST(RequestSetPlan, BatchesOfAtMostTheMaxShareTheRequestsEvenly) {
    ASSERT_EQ(pk::kRequestSetMaxBatch, 16) << "the expected sizes below assume 16";
    const pk::RequestOptions greedy;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int64_t> seconds(1, 5);
    struct Case {
        size_t requests;
        int backends;
        std::vector<size_t> sizes;
    };
    const Case cases[] = {
        {0, 1, {}},           {1, 1, {1}},         {1, 4, {1}},          {5, 2, {3, 2}},
        {16, 1, {16}},        {17, 1, {9, 8}},     {40, 1, {14, 13, 13}}, {40, 2, {10, 10, 10, 10}},
        {64, 1, {16, 16, 16, 16}}, {64, 2, {16, 16, 16, 16}}, {7, 3, {3, 2, 2}}, {33, 2, {9, 8, 8, 8}},
    };
    for (const Case& c : cases) {
        std::vector<int64_t> lengths;
        for (size_t i = 0; i < c.requests; ++i) lengths.push_back(seconds(rng) * kRate + static_cast<int64_t>(i));
        std::vector<pk::OfflineRequest> requests = requests_of(lengths, kRate, greedy);
        const pk::RequestSetPlan plan = pk::plan_request_set(pointers(requests), c.backends);
        const std::string what = std::to_string(c.requests) + " requests on " + std::to_string(c.backends);
        EXPECT_EQ(sizes_of(plan), c.sizes) << what;
        EXPECT_TRUE(plan.alone.empty()) << what;
        expect_whole_and_longest_first(plan, requests);
    }
}

TEST(RequestSetPlan, LongestFirstIsInSecondsAtEachRequestsRate) {
    const pk::RequestOptions greedy;
    std::vector<pk::OfflineRequest> requests = requests_of({3 * kRate, 2 * kRate, kRate}, kRate, greedy);
    requests[2].sample_rate = kRate / 4;  // 4 s
    const pk::RequestSetPlan plan = pk::plan_request_set(pointers(requests), 1);
    ASSERT_EQ(plan.batches.size(), 1u);
    EXPECT_EQ(plan.batches[0], (std::vector<pk::OfflineRequest*>{&requests[2], &requests[0], &requests[1]}));
}

TEST(RequestSetPlan, WhatTheRequestBatcherRunsAloneRunsAlone) {
    const pk::RequestOptions greedy;
    const auto max = static_cast<int64_t>(pk::RequestBatcher::kMaxBatchedSeconds);
    // At 16 kHz: just past the limit, at it, far past it, short; at 8 kHz the same count of
    // samples is twice as long.
    std::vector<pk::OfflineRequest> requests =
        requests_of({max * kRate + 1, max * kRate, 3 * max * kRate, kRate}, kRate, greedy);
    pk::RequestSetPlan plan = pk::plan_request_set(pointers(requests), 1);
    EXPECT_EQ(plan.alone, (std::vector<pk::OfflineRequest*>{&requests[2], &requests[0]}));  // longest first
    EXPECT_EQ(sizes_of(plan), std::vector<size_t>{2});
    expect_whole_and_longest_first(plan, requests);
    std::vector<pk::OfflineRequest> at_8k = requests_of({max * kRate}, kRate / 2, greedy);
    EXPECT_EQ(pk::plan_request_set(pointers(at_8k), 1).alone.size(), 1u);

    pk::RequestOptions beam;
    beam.beam.beam_size = 2;
    std::vector<pk::OfflineRequest> searched = requests_of({kRate, 2 * kRate}, kRate, beam);
    plan = pk::plan_request_set(pointers(searched), 2);
    EXPECT_EQ(plan.alone.size(), 2u);
    EXPECT_TRUE(plan.batches.empty());
}

// ---- the transcripts -----------------------------------------------------------------------

// A set of clips, all at one rate.
struct ClipSet {
    std::string name;
    std::vector<std::vector<float>> clips;
    int rate;
};

// Sets of 1, 3, 17, 6 and 25 clips: one clip alone; nothing, a tenth of a second (a couple of
// encoder frames: the matrix-vector kernels) and 4 s; 17 of 0.05 to 6 s, more than a batch
// holds, and 6 of them read as 8 kHz audio (resampled); 24 of 1 to 4 s with a 31 s one, which
// runs alone.
const std::vector<ClipSet>& clip_sets() {
    static const std::vector<ClipSet> sets = [] {
        std::vector<ClipSet> s;
        s.push_back({"one clip", cut(1, 2.0, 2.0, 1), kRate});
        s.push_back({"three", {{}, cut(1, 0.1, 0.1, 2)[0], cut(1, 4.0, 4.0, 3)[0]}, kRate});
        s.push_back({"17 short", cut(17, 0.05, 6.0, 4), kRate});
        s.push_back({"6 short at 8 kHz", {s.back().clips.begin(), s.back().clips.begin() + 6}, kRate / 2});
        ClipSet mixed{"24 of 1-4 s and a 31 s one", cut(24, 1.0, 4.0, 5), kRate};
        std::vector<float> long_clip = speech_clips::wav("long_30s_16k.wav");
        long_clip.insert(long_clip.end(), speech().begin(), speech().begin() + kRate);
        mixed.clips.insert(mixed.clips.begin() + 11, long_clip);
        s.push_back(mixed);
        return s;
    }();
    return sets;
}

// The decoder head of clip i: a hybrid's CTC head for every third, else the model's own.
pk::RequestOptions options_for(const pk::Model& m, size_t i) {
    const bool hybrid = m.ctc() != nullptr && m.transducer() != nullptr;
    return pk::RequestOptions(hybrid && i % 3 == 1 ? pk::DecoderChoice::Ctc : pk::DecoderChoice::Default);
}

std::unique_ptr<pk::Model> load(const std::string& file, int threads) {
    pk::LoadOptions o;
    o.threads = threads;
    return pk::Model::load(nemo_fixtures::data_dir() + "/nemo/" + file, o);
}

class RequestSetRun : public ::testing::TestWithParam<std::string> {};

TEST_P(RequestSetRun, EveryRequestGetsItsTranscriptAlone) {
    // The one-by-one path, on one thread: the reference for every set.
    const std::unique_ptr<pk::Model> single = load(GetParam(), 1);
    std::vector<std::vector<pk::Transcript>> alone;
    size_t tokens = 0;
    for (const ClipSet& set : clip_sets()) {
        alone.emplace_back();
        for (size_t i = 0; i < set.clips.size(); ++i) {
            const auto& c = set.clips[i];
            alone.back().push_back(single->transcribe(c.data(), static_cast<int64_t>(c.size()), set.rate,
                                                      options_for(*single, i)));
            tokens += alone.back().back().tokens.size();
        }
    }
    ASSERT_GT(tokens, 100u) << "the clips decode to little: the comparison would say little";
    // PARAKEET_STRESS_QUICK (the ThreadSanitizer run): the one setting where batches run at once.
    const std::vector<std::pair<int, int>> settings =
        pool_test::quick() ? std::vector<std::pair<int, int>>{{2, 2}}
                           : std::vector<std::pair<int, int>>{{1, 1}, {1, 2}, {2, 1}, {2, 2}};
    for (const auto& [threads, backends] : settings) {
        const std::unique_ptr<pk::Model> model = load(GetParam(), threads);
        ASSERT_EQ(model->set_concurrency(backends, threads), backends);
        for (size_t s = 0; s < clip_sets().size(); ++s) {
            const ClipSet& set = clip_sets()[s];
            std::vector<pk::RequestOptions> options;
            for (size_t i = 0; i < set.clips.size(); ++i) options.push_back(options_for(*model, i));
            std::vector<pk::OfflineRequest> requests;
            for (size_t i = 0; i < set.clips.size(); ++i)
                requests.push_back({set.clips[i].data(), static_cast<int64_t>(set.clips[i].size()), set.rate,
                                    &options[i], {}, nullptr});
            pk::transcribe_request_set(*model, requests);
            for (size_t i = 0; i < requests.size(); ++i) {
                const std::string what = set.name + ", clip " + std::to_string(i) + ", " + std::to_string(threads) +
                                         " threads x " + std::to_string(backends);
                ASSERT_FALSE(requests[i].error) << what;
                expect_same(alone[s][i], requests[i].transcript, what);
            }
        }
    }
}

// Bad requests among good ones: each bad one gets the error it gets alone (its checks, or its
// samples inside a batch), the good ones their transcripts.
TEST_P(RequestSetRun, ABadRequestsErrorIsItsOwn) {
    const std::unique_ptr<pk::Model> model = load(GetParam(), 2);
    std::vector<std::vector<float>> clips = cut(6, 0.5, 3.0, 9);
    clips[1][100] = std::nanf("");
    const pk::RequestOptions options;
    std::vector<pk::OfflineRequest> requests;
    for (const auto& c : clips)
        requests.push_back({c.data(), static_cast<int64_t>(c.size()), kRate, &options, {}, nullptr});
    requests[3].samples = nullptr;  // with samples to read
    requests[4].sample_rate = 0;
    for (const int backends : {1, 2}) {
        ASSERT_EQ(model->set_concurrency(backends, 1), backends);
        std::vector<pk::OfflineRequest> set = requests;
        pk::transcribe_request_set(*model, set);
        for (size_t i = 0; i < set.size(); ++i) {
            const pk::OfflineRequest& r = requests[i];
            std::string error_alone;
            pk::Transcript t;
            try {
                t = model->transcribe(r.samples, r.n, r.sample_rate, options);
            } catch (const std::exception& e) {
                error_alone = e.what();
            }
            const std::string what = "request " + std::to_string(i) + " on " + std::to_string(backends);
            ASSERT_EQ(!error_alone.empty(), static_cast<bool>(set[i].error)) << what << ": " << error_alone;
            if (error_alone.empty()) {
                expect_same(t, set[i].transcript, what);
                continue;
            }
            try {
                std::rethrow_exception(set[i].error);
            } catch (const std::exception& e) {
                EXPECT_EQ(std::string(e.what()), error_alone) << what;
            }
        }
    }
}

std::string file_name(const testing::TestParamInfo<std::string>& info) {
    std::string name = info.param;
    for (char& c : name)
        if (c == '/' || c == '-' || c == '.') c = '_';
    return name;
}

INSTANTIATE_TEST_SUITE_P(Models, RequestSetRun,
                         ::testing::Values("tdt/model.gguf", "rnnt/model.gguf", "ctc/model.gguf",
                                           "hybrid_tdt_ctc/model.gguf", "hybrid_rnnt_ctc/model.gguf",
                                           "hybrid_tdt_ctc/model-q8_0.gguf"),
                         file_name);

}  // namespace
