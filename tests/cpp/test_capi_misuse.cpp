// Misuses of the C ABI that used to crash or hang, now caught: a last_error(ctx) pointer that
// another thread's call overwrote, a stream freed while a call on it runs, and set_threads
// called from inside a progress callback (which held the backend set_threads waits for).
// Each waits on events, not on time; a watchdog turns a hang (the old behaviour) into a failure.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capi/stream_handle.h"
#include "parakeet_capi.h"
#include "pool_test_support.h"

namespace {

struct Ctx {
    parakeet_ctx* ctx = parakeet_capi_load(pool_test::model_path().c_str());
    ~Ctx() { parakeet_capi_free(ctx); }
};

// Ends the process if the test has not finished in `limit`: a deadlock is a failure, not a
// hung test run. Generous, since it guards against hangs only.
class Watchdog {
public:
    explicit Watchdog(std::chrono::seconds limit)
        : thread_([this, limit] {
              std::unique_lock<std::mutex> lock(mu_);
              if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
                  std::fprintf(stderr, "watchdog: the test hung (deadlock)\n");
                  std::_Exit(3);
              }
          }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// A one-shot event.
struct Event {
    std::mutex mu;
    std::condition_variable cv;
    bool set = false;
    void signal() {
        {
            std::lock_guard<std::mutex> lock(mu);
            set = true;
        }
        cv.notify_all();
    }
    void wait() {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [this] { return set; });
    }
};

TEST(CapiMisuse, LastErrorIsACopyOfTheCallingThread) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr) << parakeet_capi_load_error();
    const float sample = 0.0f;
    ASSERT_EQ(parakeet_capi_transcribe_pcm(c.ctx, &sample, -123456789, 16000, 0), nullptr);
    const char* mine = parakeet_capi_last_error(c.ctx);
    const std::string expected = mine;
    ASSERT_EQ(expected, "the number of samples is negative (-123456789)");
    // Another thread fails with a shorter message and reads last_error: a buffer shared by
    // the context would now hold its message (or be freed) under this thread's pointer.
    std::thread other([&] {
        EXPECT_EQ(parakeet_capi_transcribe_pcm(c.ctx, &sample, -1, 16000, 0), nullptr);
        EXPECT_STREQ(parakeet_capi_last_error(c.ctx), "the number of samples is negative (-1)");
    });
    other.join();
    EXPECT_EQ(std::string(mine), expected);
}

// Holds the default backend inside a progress callback until `release` is signalled.
struct BackendHolder {
    Event holding, release;
    static int on_progress(float, void* self) {
        auto* h = static_cast<BackendHolder*>(self);
        if (!h->holding.set) h->holding.signal();
        h->release.wait();
        return 0;
    }
};

TEST(CapiMisuse, StreamFreeDuringAFeedIsRefused) {
    Watchdog guard(std::chrono::seconds(300));
    Ctx c;
    ASSERT_NE(c.ctx, nullptr) << parakeet_capi_load_error();
    const std::vector<float> clip = pool_test::clips()[1];  // 1 s
    // 6 s of audio: the feed decodes a chunk, for which it needs the backend that `holder`
    // holds, so it is still running when stream_free comes.
    std::vector<float> audio;
    for (int i = 0; i < 6; ++i) audio.insert(audio.end(), clip.begin(), clip.end());
    parakeet_stream* s = parakeet_capi_stream_begin(c.ctx);
    ASSERT_NE(s, nullptr) << parakeet_capi_thread_last_error();

    BackendHolder holder;
    std::thread busy([&] {
        char* j = parakeet_capi_transcribe_pcm_json_progress(c.ctx, clip.data(), static_cast<int>(clip.size()),
                                                             16000, 0, &BackendHolder::on_progress, &holder);
        EXPECT_NE(j, nullptr) << parakeet_capi_thread_last_error();
        parakeet_capi_free_string(j);
    });
    holder.holding.wait();
    std::thread feeder([&] {
        char* text = parakeet_capi_stream_feed(s, audio.data(), static_cast<int>(audio.size()), nullptr);
        EXPECT_NE(text, nullptr) << parakeet_capi_thread_last_error();
        parakeet_capi_free_string(text);
    });
    while (pk::capi::stream_calls_in_flight(s) == 0) std::this_thread::yield();

    parakeet_capi_stream_free(s);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(parakeet_capi_thread_last_error()).find("in use"), std::string::npos)
        << parakeet_capi_thread_last_error();

    holder.release.signal();
    busy.join();
    feeder.join();
    // The stream survived the refused free and works on.
    char* last = parakeet_capi_stream_finalize(s);
    EXPECT_NE(last, nullptr) << parakeet_capi_thread_last_error();
    parakeet_capi_free_string(last);
    parakeet_capi_stream_free(s);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), 0);
}

TEST(CapiMisuse, SetThreadsInsideAProgressCallbackIsRefused) {
    Watchdog guard(std::chrono::seconds(300));
    Ctx c;
    ASSERT_NE(c.ctx, nullptr) << parakeet_capi_load_error();
    const std::vector<float> clip = pool_test::clips()[1];
    struct Seen {
        int result = 0;
        int code = 0;
        std::string error;
        bool called = false;
    } seen;
    const auto set_threads_inside = [](float, void* p) -> int {
        auto* s = static_cast<Seen*>(p);
        if (!s->called) {
            s->called = true;
            s->result = parakeet_capi_set_threads(2);
            s->code = parakeet_capi_thread_last_error_code();
            s->error = parakeet_capi_thread_last_error();
        }
        return 0;
    };
    char* j = parakeet_capi_transcribe_pcm_json_progress(c.ctx, clip.data(), static_cast<int>(clip.size()), 16000, 0,
                                                         set_threads_inside, &seen);
    EXPECT_NE(j, nullptr) << parakeet_capi_thread_last_error();
    parakeet_capi_free_string(j);
    ASSERT_TRUE(seen.called);
    EXPECT_EQ(seen.result, -1);
    EXPECT_EQ(seen.code, PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(seen.error.find("progress callback"), std::string::npos) << seen.error;
    // Outside a callback it works as before.
    EXPECT_EQ(parakeet_capi_set_threads(2), 2);
    EXPECT_GT(parakeet_capi_set_threads(0), 0);
}

}  // namespace
