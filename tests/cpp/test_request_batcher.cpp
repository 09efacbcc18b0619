// Batched offline transcription (OfflineBatch, RequestBatcher): every request's transcript is
// bitwise what Model::transcribe gives it alone (text, tokens with their confidences, words,
// attention), for batches that mix lengths from a tenth of a second to 30 s, input rates,
// decoder heads (a hybrid model's TDT and CTC) and weight types (f32, q8_0); a request's bad
// audio is its own error; concurrent transcribe calls gather into batches while the backend is
// busy and a lone request runs at once; beam search runs alone. On the fixture models
// (docs/fixtures.md).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "audio/wav_reader.h"
#include "common/errors.h"
#include "model/model.h"
#include "model/offline/offline_batch.h"
#include "model/offline/request_batcher.h"
#include "nemo_fixtures.h"
#include "transcript_checks.h"

namespace {

using transcript_checks::expect_same;

pk::Model& model_file(const std::string& file) {
    static std::map<std::string, std::unique_ptr<pk::Model>> cache;
    auto& m = cache[file];
    if (!m) m = pk::Model::load(nemo_fixtures::data_dir() + "/nemo/" + file);
    return *m;
}

// One request of the tests: a part of a clip, at the clip's rate, with a decoder head.
struct Clip {
    std::string file;
    int64_t offset, samples;  // samples < 0: to the end
    pk::DecoderChoice decoder;
};

struct Audio {
    std::vector<float> samples;
    int rate;
};

Audio audio_of(const Clip& c) {
    static std::map<std::string, pk::WavAudio> wavs;
    pk::WavAudio& w = wavs[c.file];
    if (w.samples.empty()) w = pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + c.file, 0);
    const auto begin = w.samples.begin() + c.offset;
    const auto end = c.samples < 0 ? w.samples.end() : begin + c.samples;
    return {std::vector<float>(begin, end), w.sample_rate};
}

const pk::DecoderChoice kDefault = pk::DecoderChoice::Default, kCtc = pk::DecoderChoice::Ctc;

// Lengths from 0.1 s (a couple of encoder frames) to 30 s, a 44.1 kHz stereo file (resampled
// per request), and both heads of a hybrid model.
const std::vector<Clip>& clips() {
    static const std::vector<Clip> c = {
        {"speech_16k.wav", 0, -1, kDefault},          {"short_0p1s_16k.wav", 0, -1, kDefault},
        {"conversation_16k.wav", 16000, 48000, kCtc}, {"speech_44k_stereo.wav", 0, -1, kDefault},
        {"short_1s_16k.wav", 0, -1, kCtc},            {"long_30s_16k.wav", 0, -1, kDefault},
        {"conversation_16k.wav", 0, 3000, kDefault},  {"speech_16k.wav", 8000, 40000, kCtc},
    };
    return c;
}

// The clip's head where the model has it, else the model's own.
pk::RequestOptions options_for(const pk::Model& m, pk::DecoderChoice d) {
    return pk::RequestOptions(m.ctc() != nullptr ? d : kDefault);
}

class OfflineBatchRun : public ::testing::TestWithParam<std::string> {};

// Every clip alone, then batches of the first 1, 2, 3 and all of them, run by OfflineBatch.
TEST_P(OfflineBatchRun, EveryRequestGetsItsTranscriptAlone) {
    const pk::Model& model = model_file(GetParam());
    std::vector<Audio> audio;
    std::vector<pk::Transcript> alone;
    std::vector<pk::RequestOptions> options;
    for (const Clip& c : clips()) {
        audio.push_back(audio_of(c));
        options.push_back(options_for(model, c.decoder));
        alone.push_back(model.transcribe(audio.back().samples.data(), static_cast<int64_t>(audio.back().samples.size()),
                                         audio.back().rate, options.back()));
    }
    size_t tokens = 0;
    for (const pk::Transcript& t : alone) tokens += t.tokens.size();
    ASSERT_GT(tokens, 0u) << "the clips decode to nothing: the comparison would be empty";
    const pk::OfflineBatch batch(model);
    for (const size_t n : {size_t{1}, size_t{2}, size_t{3}, clips().size()}) {
        std::vector<pk::OfflineRequest> requests(n);
        std::vector<pk::OfflineRequest*> pointers;
        for (size_t i = 0; i < n; ++i) {
            requests[i] = {audio[i].samples.data(), static_cast<int64_t>(audio[i].samples.size()), audio[i].rate,
                           &options[i], {}, nullptr};
            pointers.push_back(&requests[i]);
        }
        const pk::BackendLease lease = model.lease_backend();
        batch.run(lease.backend(), pointers);
        for (size_t i = 0; i < n; ++i) {
            ASSERT_FALSE(requests[i].error) << clips()[i].file;
            expect_same(alone[i], requests[i].transcript,
                        clips()[i].file + " in a batch of " + std::to_string(n));
        }
    }
}

// A request with a NaN sample fails with its own error; its batch-mates are transcribed.
TEST_P(OfflineBatchRun, BadAudioIsItsOwnError) {
    const pk::Model& model = model_file(GetParam());
    const Audio good = audio_of(clips()[0]);
    Audio bad = good;
    bad.samples[100] = std::numeric_limits<float>::quiet_NaN();
    const pk::RequestOptions options;
    pk::OfflineRequest a{good.samples.data(), static_cast<int64_t>(good.samples.size()), good.rate, &options, {},
                         nullptr};
    pk::OfflineRequest b{bad.samples.data(), static_cast<int64_t>(bad.samples.size()), bad.rate, &options, {}, nullptr};
    pk::OfflineRequest c = a;
    {
        const pk::BackendLease lease = model.lease_backend();
        pk::OfflineBatch(model).run(lease.backend(), {&a, &b, &c});
    }
    EXPECT_THROW(std::rethrow_exception(b.error), pk::InvalidAudio);
    ASSERT_FALSE(a.error);
    ASSERT_FALSE(c.error);
    const pk::Transcript alone = model.transcribe(good.samples.data(), static_cast<int64_t>(good.samples.size()),
                                                  good.rate, options);
    expect_same(alone, a.transcript, "the first good request");
    expect_same(alone, c.transcript, "the second good request");
}

INSTANTIATE_TEST_SUITE_P(Files, OfflineBatchRun, ::testing::Values("hybrid_tdt_ctc/model.gguf", "rnnt/model-q8_0.gguf"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name = info.param.substr(0, info.param.find('.'));
                             for (char& c : name)
                                 if (c == '/' || c == '-') c = '_';
                             return name;
                         });

constexpr int kHour = 3600 * 1000;

// Concurrent calls: while the test holds the model's only backend, a first request is taken
// into a batch of its own (it was alone) and waits for the backend; the next max_batch
// requests gather into one batch, whatever max_wait says: a request waits at most max_wait
// for batch-mates only while a backend is free. Every transcript is the one alone.
void expect_gathering_while_the_backend_is_busy(int max_wait_ms) {
    const pk::Model& model = model_file("hybrid_tdt_ctc/model.gguf");
    const size_t n = clips().size();
    std::vector<Audio> audio;
    std::vector<pk::RequestOptions> options;
    std::vector<pk::Transcript> alone, batched(n);
    for (const Clip& c : clips()) {
        audio.push_back(audio_of(c));
        options.push_back(options_for(model, c.decoder));
        alone.push_back(model.transcribe(audio.back().samples.data(), static_cast<int64_t>(audio.back().samples.size()),
                                         audio.back().rate, options.back()));
    }
    pk::RequestBatcher batcher(model, static_cast<int>(n - 1), max_wait_ms);
    std::vector<std::thread> threads;
    const auto call = [&](size_t i) {
        batched[i] = batcher.transcribe(audio[i].samples.data(), static_cast<int64_t>(audio[i].samples.size()),
                                        audio[i].rate, options[i]);
    };
    // Whether a batch of `size` was taken within a minute (a broken batcher may never take one;
    // the test then goes on, so that the backend is given back and every call ends).
    const auto taken = [&](size_t size) {
        for (int ms = 0; ms < 60000 && batcher.stats().batch_sizes[size - 1] == 0; ++ms)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return batcher.stats().batch_sizes[size - 1] > 0;
    };
    {
        const pk::BackendLease held = model.lease_backend();
        threads.emplace_back(call, 0);
        EXPECT_TRUE(taken(1)) << "the first request, alone, was not taken at once";
        for (size_t i = 1; i < n; ++i) threads.emplace_back(call, i);
        EXPECT_TRUE(taken(n - 1)) << "the others did not gather into one batch";
    }
    for (std::thread& t : threads) t.join();
    const pk::RequestBatcher::Stats stats = batcher.stats();
    for (size_t size = 1; size <= n - 1; ++size)
        EXPECT_EQ(stats.batch_sizes[size - 1], size == 1 || size == n - 1 ? 1 : 0) << "batches of " << size;
    for (size_t i = 0; i < n; ++i) expect_same(alone[i], batched[i], clips()[i].file + " through the batcher");
}

TEST(RequestBatcher, ConcurrentRequestsGatherWhileTheBackendIsBusy) {
    expect_gathering_while_the_backend_is_busy(kHour);
}

TEST(RequestBatcher, ConcurrentRequestsGatherPastTheirMaxWaitWhileTheBackendIsBusy) {
    expect_gathering_while_the_backend_is_busy(0);
}

// A lone request runs at once: it does not wait the hour of max_wait for batch-mates.
TEST(RequestBatcher, ALoneRequestRunsAtOnce) {
    const pk::Model& model = model_file("rnnt/model-q8_0.gguf");
    const Audio a = audio_of(clips()[0]);
    pk::RequestBatcher batcher(model, 8, kHour);
    const auto start = std::chrono::steady_clock::now();
    const pk::Transcript t = batcher.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), a.rate, {});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(10));
    expect_same(model.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), a.rate, {}), t, "alone");
    EXPECT_EQ(batcher.stats().batch_sizes[0], 1);
}

// Beam search is not batched: it runs alone, with the result Model::transcribe gives.
TEST(RequestBatcher, BeamSearchRunsAlone) {
    const pk::Model& model = model_file("rnnt/model-q8_0.gguf");
    const Audio a = audio_of(clips()[0]);
    pk::RequestOptions beam;
    beam.beam.beam_size = 4;
    pk::RequestBatcher batcher(model, 8, 0);
    const pk::Transcript t =
        batcher.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), a.rate, beam);
    expect_same(model.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), a.rate, beam), t, "beam");
    const pk::RequestBatcher::Stats stats = batcher.stats();
    EXPECT_EQ(stats.unbatched, 1);
    EXPECT_EQ(stats.batch_sizes[0], 0);
}

// A batched request's progress callback hears 0 before it queues and 1 when its transcript is
// ready; a callback that says stop at 0 cancels the request before it joins a batch.
TEST(RequestBatcher, ProgressIsToldTheStartAndTheEnd) {
    const pk::Model& model = model_file("rnnt/model-q8_0.gguf");
    const Audio a = audio_of(clips()[0]);
    pk::RequestBatcher batcher(model, 8, 0);
    std::vector<double> heard;
    pk::RequestOptions told;
    told.progress = [&](double f) {
        heard.push_back(f);
        return true;
    };
    const pk::Transcript t = batcher.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), a.rate, told);
    EXPECT_EQ(heard, (std::vector<double>{0.0, 1.0}));
    expect_same(model.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), a.rate, {}), t, "told");
    pk::RequestOptions stop;
    stop.progress = [](double) { return false; };
    EXPECT_THROW(batcher.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), a.rate, stop),
                 pk::Cancelled);
    EXPECT_EQ(batcher.stats().batch_sizes[0], 1) << "the cancelled request ran in no batch";
}

// A request's options and audio rate are checked before it queues: a head the model lacks
// and a sample rate of 0 are its errors.
TEST(RequestBatcher, ErrorsAreClear) {
    const pk::Model& model = model_file("rnnt/model-q8_0.gguf");
    EXPECT_THROW(pk::RequestBatcher(model, 0, 10), pk::InvalidArgument);
    EXPECT_THROW(pk::RequestBatcher(model, 4, -1), pk::InvalidArgument);
    pk::RequestBatcher batcher(model, 4, 0);
    const Audio a = audio_of(clips()[0]);
    EXPECT_THROW(batcher.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), a.rate,
                                    pk::RequestOptions(pk::DecoderChoice::Ctc)),
                 pk::Unsupported);
    EXPECT_THROW(batcher.transcribe(a.samples.data(), static_cast<int64_t>(a.samples.size()), 0, {}),
                 pk::InvalidAudio);
}

}  // namespace
