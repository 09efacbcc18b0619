// parakeet_capi_load_with: each load option gives exactly what its environment variable gives
// (the same model description and the same transcript bits), a key overrides its variable,
// and the options document is strict.
#include <gtest/gtest.h>

#include <clocale>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "capi/load_options_json.h"
#include "capi/stream_options.h"
#include "common/errors.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"
#include "process_threads.h"
#include "runtime/cpu_features.h"

namespace {

std::string fixture(const std::string& file) { return nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc/" + file; }

std::vector<float> tone() {
    std::vector<float> s(16000 * 2);
    for (size_t i = 0; i < s.size(); ++i) s[i] = 0.1f * std::sin(0.031f * static_cast<float>(i));
    return s;
}

// What a loaded context gives: its description and a transcript (a JSON document, so every
// token, time and confidence is compared). Empty when the load failed.
struct Outcome {
    std::string info, transcript, error;
    int code = 0;
};

std::string take(char* s) {
    std::string out = s != nullptr ? s : "";
    parakeet_capi_free_string(s);
    return out;
}

Outcome outcome_of(parakeet_ctx* ctx) {
    Outcome o;
    if (ctx == nullptr) {
        o.error = parakeet_capi_load_error();
        o.code = parakeet_capi_thread_last_error_code();
        return o;
    }
    o.info = take(parakeet_capi_model_info_json(ctx));
    const std::vector<float> s = tone();
    o.transcript = take(parakeet_capi_transcribe_pcm_json(ctx, s.data(), static_cast<int>(s.size()), 16000, 0));
    parakeet_capi_free(ctx);
    return o;
}

Outcome with_env(const std::string& path, const char* var, const char* value) {
    setenv(var, value, 1);
    Outcome o = outcome_of(parakeet_capi_load(path.c_str()));
    unsetenv(var);
    return o;
}

Outcome with_json(const std::string& path, const std::string& json) {
    return outcome_of(parakeet_capi_load_with(path.c_str(), json.c_str()));
}

void expect_same(const Outcome& a, const Outcome& b) {
    EXPECT_EQ(a.error, b.error);
    EXPECT_EQ(a.info, b.info);
    EXPECT_EQ(a.transcript, b.transcript);
}

bool has(const Outcome& o, const std::string& piece) { return o.info.find(piece) != std::string::npos; }

TEST(LoadOptions, EachKeyGivesWhatItsVariableGives) {
    const std::string f32 = fixture("model.gguf");
    const std::string q8 = fixture("model-q8_0.gguf");
    const Outcome plain = with_json(f32, "{}");
    ASSERT_EQ(plain.error, "");
    expect_same(plain, outcome_of(parakeet_capi_load(f32.c_str())));
    expect_same(plain, with_json(f32, ""));

    // Every level name of both architectures: the other architecture's are refused as above the CPU's are.
    for (pk::IsaLevel level : {pk::IsaLevel::Scalar, pk::IsaLevel::Avx2, pk::IsaLevel::Avx512, pk::IsaLevel::Neon,
                               pk::IsaLevel::Dotprod, pk::IsaLevel::I8mm}) {
        const char* name = pk::isa_level_name(level);
        SCOPED_TRACE(name);
        const Outcome env = with_env(f32, "PARAKEET_CPU", name);
        expect_same(env, with_json(f32, std::string("{\"isa\": \"") + name + "\"}"));
        if (pk::cpu_features().supports(level)) {
            EXPECT_TRUE(has(env, std::string("\"isa\":\"") + name + "\"")) << env.info;
        } else {
            EXPECT_EQ(env.code, PARAKEET_ERROR_UNSUPPORTED) << env.error;
        }
    }

    const Outcome local = with_env(f32, "PARAKEET_ATT_CONTEXT", "16");
    expect_same(local, with_json(f32, "{\"attention\": [16, 16]}"));
    EXPECT_TRUE(has(local, "\"mode\":\"local\",\"left\":16,\"right\":16")) << local.info;
    const Outcome full = with_env(f32, "PARAKEET_ATT_CONTEXT", "0");
    expect_same(full, with_json(f32, "{\"attention\": \"full\"}"));
    EXPECT_TRUE(has(full, "\"mode\":\"full\"")) << full.info;
    expect_same(plain, with_json(f32, "{\"attention\": \"auto\"}"));

    const Outcome q8_kept = with_env(q8, "PARAKEET_Q8_ALL", "0");
    expect_same(q8_kept, with_json(q8, "{\"q8_all\": false}"));
    expect_same(with_env(q8, "PARAKEET_Q8_ALL", "1"), with_json(q8, "{\"q8_all\": true}"));
    EXPECT_NE(q8_kept.info, with_json(q8, "{}").info);  // the packed bytes differ
    expect_same(with_env(q8, "PARAKEET_Q8_SUBSAMPLING", "1"), with_json(q8, "{\"q8_subsampling\": true}"));
    // (That q8_subsampling changes the encoder at all: test_q8_at_load.cpp.)

    const Outcome bf16 = with_env(f32, "PARAKEET_BF16", "1");
    expect_same(bf16, with_json(f32, "{\"bf16\": true}"));
    if (bf16.error.empty()) {
        EXPECT_TRUE(has(bf16, "\"bf16_encoder\":true"));
    } else {
        EXPECT_EQ(bf16.code, PARAKEET_ERROR_UNSUPPORTED) << bf16.error;
    }

    // The thread budget changes no result.
    expect_same(plain, with_json(f32, "{\"threads\": 1}"));
    expect_same(plain, with_json(f32, "{\"threads\": 3}"));
}

// "threads" gives the context a backend of its own with that many threads (the caller and
// n - 1 workers, started with it), which set_concurrency(K, 0) then divides among K backends.
TEST(LoadOptions, ThreadsIsTheContextsOwnBudget) {
    const int before = process_thread_count();
    parakeet_ctx* ctx = parakeet_capi_load_with(fixture("model.gguf").c_str(), "{\"threads\": 3}");
    ASSERT_NE(ctx, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(process_thread_count_settling_to(before + 2), before + 2);
    EXPECT_EQ(parakeet_capi_set_concurrency(ctx, 2, 0), 2);  // 3 / 2: one thread each, no workers
    EXPECT_EQ(process_thread_count_settling_to(before), before);
    EXPECT_EQ(parakeet_capi_set_concurrency(ctx, 1, 0), 1);  // back to its own 3 threads
    EXPECT_EQ(process_thread_count_settling_to(before + 2), before + 2);
    parakeet_capi_free(ctx);
    EXPECT_EQ(process_thread_count_settling_to(before), before);
}

TEST(LoadOptions, KeyOverridesItsVariable) {
    const std::string f32 = fixture("model.gguf");
    setenv("PARAKEET_ATT_CONTEXT", "16", 1);
    const Outcome o = with_json(f32, "{\"attention\": \"full\"}");
    unsetenv("PARAKEET_ATT_CONTEXT");
    EXPECT_TRUE(has(o, "\"mode\":\"full\"")) << o.info;
    setenv("PARAKEET_CPU", "scalar", 1);
    // The level above scalar on this architecture, given by the option over the variable.
    const pk::IsaLevel second = pk::isa_levels_of_build().size() > 1 ? pk::isa_levels_of_build()[1] : pk::IsaLevel::Scalar;
    const std::string name = pk::isa_level_name(second);
    const Outcome over = with_json(f32, "{\"isa\": \"" + name + "\"}");
    unsetenv("PARAKEET_CPU");
    if (pk::cpu_features().supports(second)) EXPECT_TRUE(has(over, "\"isa\":\"" + name + "\"")) << over.info;
}

TEST(LoadOptions, MalformedVariablesAreErrors) {
    const std::string f32 = fixture("model.gguf");
    for (const auto& [var, value] : std::vector<std::pair<const char*, const char*>>{
             {"PARAKEET_CPU", "avx1024"}, {"PARAKEET_ATT_CONTEXT", "-3"}, {"PARAKEET_Q8_ALL", "yes"},
             {"PARAKEET_Q8_SUBSAMPLING", "on"}, {"PARAKEET_BF16", "2"}}) {
        const Outcome o = with_env(f32, var, value);
        EXPECT_EQ(o.code, PARAKEET_ERROR_INVALID_ARGUMENT) << var;
        EXPECT_NE(o.error.find(var), std::string::npos) << o.error;
    }
}

TEST(LoadOptions, DocumentIsStrict) {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"{\"bf17\": true}", "unknown key \"bf17\""},
        {"{\"bf16\": 1}", "expected true or false"},
        {"{\"isa\": \"avx1024\"}", "isa must be"},
        {"{\"isa\": 2}", "expected a quoted string"},
        {"{\"attention\": \"wide\"}", "attention must be"},
        {"{\"attention\": [0, 4]}", "left context must be a whole number"},
        {"{\"attention\": [4]}", "','"},
        {"{\"threads\": 0}", "threads must be a whole number from 1 to 1024"},
        {"{\"threads\": 2.5}", "threads must be a whole number"},
        {"{\"q8_all\": true} x", "unexpected text after the object"},
        {"[1]", "expected a JSON object"},
    };
    for (const auto& [json, message] : bad) {
        pk::LoadOptions o;
        try {
            pk::capi::apply_load_options_json(json.c_str(), o);
            ADD_FAILURE() << json << " was accepted";
        } catch (const pk::InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << json << ": " << e.what();
        }
    }
    pk::LoadOptions o;
    pk::capi::apply_load_options_json(
        " {\"isa\": \"scalar\", \"attention\": [8, 4], \"q8_all\": false, \"q8_subsampling\": true, \"bf16\": true, "
        "\"threads\": 6} ",
        o);
    EXPECT_EQ(o.isa, pk::IsaLevel::Scalar);
    EXPECT_EQ(o.attention, pk::AttentionSetting::local(8, 4));
    EXPECT_FALSE(o.q8_all);
    EXPECT_TRUE(o.q8_subsampling);
    EXPECT_TRUE(o.bf16);
    EXPECT_EQ(o.threads, 6);
}

// Sets LC_NUMERIC to a locale with a decimal comma: an installed one, or else de_DE compiled
// with localedef into a temporary LOCPATH (most machines have the sources, not the locale).
// Returns its name, or nullptr when neither works.
const char* set_decimal_comma_locale() {
    const char* names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    for (const char* n : names)
        if (std::setlocale(LC_NUMERIC, n) != nullptr) return n;
    char dir[] = "/tmp/parakeet_locale_XXXXXX";
    if (mkdtemp(dir) == nullptr) return nullptr;
    const std::string make = std::string("localedef -i de_DE -f UTF-8 ") + dir + "/de_DE.UTF-8 >/dev/null 2>&1";
    if (std::system(make.c_str()) != 0) return nullptr;
    setenv("LOCPATH", dir, 1);  // setlocale reads LOCPATH at each call
    return std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr ? "de_DE.UTF-8 (generated)" : nullptr;
}

TEST(LoadOptions, NumbersIgnoreTheNumericLocale) {
    const char* locale = set_decimal_comma_locale();
    if (locale == nullptr) GTEST_SKIP() << "no decimal-comma locale installed and localedef could not make one";
    // The locale is really in effect: strtod stops at the '.' of "2.5".
    const double by_strtod = std::strtod("2.5", nullptr);
    pk::StreamSettings s;
    pk::LoadOptions o;
    std::string error;
    try {
        s = pk::capi::parse_stream_options("{\"chunk_sec\": 2.5, \"left_sec\": 1e1, \"right_sec\": 0.75}").settings;
        pk::capi::apply_load_options_json("{\"attention\": [8.0, 4], \"threads\": 2.0}", o);
    } catch (const std::exception& e) {
        error = e.what();
    }
    std::setlocale(LC_NUMERIC, "C");
    ASSERT_EQ(by_strtod, 2.0) << locale << " does not have a decimal comma";
    ASSERT_EQ(error, "");
    EXPECT_EQ(s.chunk_sec, 2.5);
    EXPECT_EQ(s.left_sec, 10.0);
    EXPECT_EQ(s.right_sec, 0.75);
    EXPECT_EQ(o.attention, pk::AttentionSetting::local(8, 4));
    EXPECT_EQ(o.threads, 2);
}

}  // namespace
