// Bundles through the C ABI (docs/bundles.md): a bundle of the committed ASR, diarization and
// speaker-encoder fixtures loads each component by name and gives bitwise the same results as
// the source files;
// the default choice; the components' listing; and every header fault refused with its reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bundle_test_builder.h"
#include "capi_handles.h"
#include "common/sha256.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"
#include "speaker_fixtures.h"

namespace {

using capi_handles::take;

std::string fixture(const std::string& family) { return nemo_fixtures::data_dir() + "/nemo/" + family + "/model.gguf"; }

const std::string kAsr = fixture("hybrid_tdt_ctc");
const std::string kDiar = fixture("sortformer_offline");
const std::string kRnnt = fixture("rnnt");

struct Component {
    std::string name, path, kind;
};

std::string make_bundle(const std::string& file, const std::vector<Component>& cs) {
    gguf_test::GgufBuilder b;
    std::vector<std::string> names;
    for (const Component& c : cs) names.push_back(c.name);
    bundle_test::add_header(b, names);
    for (const Component& c : cs) bundle_test::add_component(b, c.path, c.name, c.kind);
    return bundle_test::write(b, testing::TempDir() + file);
}

// Two seconds of a tone under deterministic noise, so that the models have something to say.
std::vector<float> audio() {
    std::vector<float> s(32000);
    uint32_t x = 12345;
    for (size_t i = 0; i < s.size(); ++i) {
        x = x * 1664525u + 1013904223u;
        s[i] = 0.2f * std::sin(0.05f * static_cast<float>(i)) + 0.05f * (static_cast<float>(x >> 8) / 16777216.f - 0.5f);
    }
    return s;
}

struct Loaded {
    parakeet_ctx* p;
    explicit Loaded(parakeet_ctx* ctx) : p(ctx) {}
    ~Loaded() { parakeet_capi_free(p); }
    Loaded(const Loaded&) = delete;
    Loaded& operator=(const Loaded&) = delete;
};

// Whether the component and its source file both loaded, as models of `kind`.
testing::AssertionResult both_hold(const Loaded& component, const Loaded& file, int kind) {
    if (component.p == nullptr || file.p == nullptr) return testing::AssertionFailure() << parakeet_capi_load_error();
    if (parakeet_capi_model_kind(component.p) != kind || parakeet_capi_model_kind(file.p) != kind)
        return testing::AssertionFailure() << "kinds " << parakeet_capi_model_kind(component.p) << " and "
                                           << parakeet_capi_model_kind(file.p) << ", wanted " << kind;
    return testing::AssertionSuccess();
}

std::string transcript(parakeet_ctx* ctx, const std::vector<float>& a) {
    return take(parakeet_capi_transcribe_pcm_json(ctx, a.data(), static_cast<int>(a.size()), 16000, 0));
}

std::vector<float> logits(parakeet_ctx* ctx, const std::vector<float>& a) {
    float* out = nullptr;
    int t = 0, v = 0;
    EXPECT_EQ(parakeet_capi_transcribe_pcm_logits(ctx, a.data(), static_cast<int>(a.size()), 16000, &out, &t, &v), 0);
    std::vector<float> copy(out, out + static_cast<size_t>(t) * v);
    parakeet_capi_free_logits(out);
    return copy;
}

std::string diarization(parakeet_ctx* ctx, const std::vector<float>& a) {
    return take(parakeet_capi_diarize_pcm_with(ctx, a.data(), static_cast<int>(a.size()), 16000,
                                               "{\"probabilities\": true}"));
}

TEST(CapiBundle, EachComponentGivesTheSourceFilesResultsBitwise) {
    const std::string bundle = make_bundle("asr_diar.gguf", {{"asr", kAsr, "asr"}, {"d", kDiar, "diar"}});
    const std::vector<float> a = audio();
    Loaded asr(parakeet_capi_load_component(bundle.c_str(), "asr")), asr_file(parakeet_capi_load(kAsr.c_str()));
    ASSERT_TRUE(both_hold(asr, asr_file, PARAKEET_MODEL_KIND_ASR));
    const std::string text = transcript(asr.p, a);
    EXPECT_NE(text.find("\"text\""), std::string::npos) << text;
    EXPECT_EQ(text, transcript(asr_file.p, a));
    const std::vector<float> from_bundle = logits(asr.p, a), from_file = logits(asr_file.p, a);
    ASSERT_FALSE(from_bundle.empty());
    ASSERT_EQ(from_bundle.size(), from_file.size());
    EXPECT_EQ(std::memcmp(from_bundle.data(), from_file.data(), from_file.size() * sizeof(float)), 0);

    Loaded diar(parakeet_capi_load_component(bundle.c_str(), "d")), diar_file(parakeet_capi_load(kDiar.c_str()));
    ASSERT_TRUE(both_hold(diar, diar_file, PARAKEET_MODEL_KIND_DIARIZATION));
    const std::string doc = diarization(diar.p, a);
    EXPECT_NE(doc.find("\"probabilities\""), std::string::npos) << doc;
    EXPECT_EQ(doc, diarization(diar_file.p, a));
}

std::vector<float> embedding(parakeet_ctx* ctx, const std::vector<float>& a) {
    float* out = nullptr;
    int dim = 0;
    EXPECT_EQ(parakeet_capi_speaker_embed_pcm(ctx, a.data(), static_cast<int>(a.size()), 16000, &out, &dim), 0)
        << parakeet_capi_load_error();
    std::vector<float> copy(out, out + dim);
    parakeet_capi_free_floats(out);
    return copy;
}

// The hex sha256 of the file at `path`, as a bundle writer records it in source_sha256.
std::string file_sha256(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    pk::Sha256 hash;
    hash.update(bytes.data(), bytes.size());
    return pk::digest_hex(hash.finish());
}

// A speaker encoder's component (one-letter name: ECAPA's tensor names take 61 of ggml's 63
// bytes) embeds bitwise as its source file, and its identity is the recorded source hash, which
// is the source file's own identity.
TEST(CapiBundle, AVoiceComponentEmbedsAsItsSourceFileWithTheSourceIdentity) {
    const std::string voice = speaker_fixtures::model_path(), sha = file_sha256(voice);
    gguf_test::GgufBuilder b;
    bundle_test::add_header(b, {"asr", "v"});
    bundle_test::add_component(b, kAsr, "asr", "asr");
    bundle_test::add_component(b, voice, "v", "voice");
    b.kv_string("parakeet.bundle.v.source_sha256", sha);
    const std::string bundle = bundle_test::write(b, testing::TempDir() + "asr_voice.gguf");
    Loaded v(parakeet_capi_load_component(bundle.c_str(), "v")), file(parakeet_capi_load(voice.c_str()));
    ASSERT_TRUE(both_hold(v, file, PARAKEET_MODEL_KIND_SPEAKER));
    const std::vector<float> pcm = speaker_fixtures::load("speech").pcm;
    const std::vector<float> from_bundle = embedding(v.p, pcm), from_file = embedding(file.p, pcm);
    ASSERT_FALSE(from_bundle.empty());
    ASSERT_EQ(from_bundle.size(), from_file.size());
    EXPECT_EQ(std::memcmp(from_bundle.data(), from_file.data(), from_file.size() * sizeof(float)), 0);
    EXPECT_STREQ(parakeet_capi_speaker_encoder_family(v.p), parakeet_capi_speaker_encoder_family(file.p));
    EXPECT_EQ(std::string(parakeet_capi_speaker_identity(v.p)), "sha256:" + sha);
    EXPECT_STREQ(parakeet_capi_speaker_identity(v.p), parakeet_capi_speaker_identity(file.p));
}

TEST(CapiBundle, AVoiceComponentWithoutItsSourceHashIsRefused) {
    const std::string bundle = make_bundle("voice_unhashed.gguf", {{"v", speaker_fixtures::model_path(), "voice"}});
    EXPECT_EQ(parakeet_capi_load(bundle.c_str()), nullptr);
    EXPECT_EQ(std::string(parakeet_capi_load_error()),
              bundle + ":v: a voice component needs its source_sha256 key, its speaker identity is the source "
                       "file's hash");
}

TEST(CapiBundle, PlainLoadTakesTheOnlyAsrComponentElseTheOnlyLoadableOne) {
    const std::string both = make_bundle("default_asr.gguf", {{"d", kDiar, "diar"}, {"asr", kAsr, "asr"}});
    Loaded asr(parakeet_capi_load(both.c_str()));
    ASSERT_NE(asr.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_model_kind(asr.p), PARAKEET_MODEL_KIND_ASR);
    const std::string diar_only = make_bundle("default_diar.gguf", {{"d", kDiar, "diar"}});
    Loaded diar(parakeet_capi_load(diar_only.c_str()));
    ASSERT_NE(diar.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_model_kind(diar.p), PARAKEET_MODEL_KIND_DIARIZATION);
    Loaded by_option(parakeet_capi_load_with(both.c_str(), "{\"component\": \"d\"}"));
    ASSERT_NE(by_option.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_model_kind(by_option.p), PARAKEET_MODEL_KIND_DIARIZATION);
}

TEST(CapiBundle, SeveralCandidatesAreRefusedWithTheList) {
    const std::string two_asr = make_bundle("two_asr.gguf", {{"a", kAsr, "asr"}, {"b", kRnnt, "asr"}, {"d", kDiar, "diar"}});
    EXPECT_EQ(parakeet_capi_load(two_asr.c_str()), nullptr);
    EXPECT_EQ(std::string(parakeet_capi_load_error()),
              two_asr + ": bundle has several asr components, pick one by name (parakeet_capi_load_component, or "
                        "--component); components: a (asr), b (asr), d (diar)");
    Loaded b(parakeet_capi_load_component(two_asr.c_str(), "b"));
    ASSERT_NE(b.p, nullptr) << parakeet_capi_load_error();
    const std::string info = take(parakeet_capi_model_info_json(b.p));
    EXPECT_NE(info.find("\"arch\":\"rnnt\""), std::string::npos) << info;
    EXPECT_NE(info.find("\"path\":\"" + two_asr + ":b\""), std::string::npos) << info;
}

TEST(CapiBundle, ComponentsJsonListsEveryComponentFromTheHeader) {
    const std::string bundle = make_bundle("listed.gguf", {{"asr", kAsr, "asr"}, {"x", kDiar, "future"}});
    const std::string json = take(parakeet_capi_bundle_components_json(bundle.c_str()));
    const pk::GgufReader asr = pk::GgufReader::open(kAsr), diar = pk::GgufReader::open(kDiar);
    auto bytes = [](const pk::GgufReader& r) {
        size_t n = 0;
        for (const pk::GgufTensor& t : r.tensors()) n += t.n_bytes;
        return std::to_string(n);
    };
    const std::string want =
        "[{\"name\":\"asr\",\"kind\":\"asr\",\"license\":\"license of asr\",\"license_url\":\"license_url of asr\","
        "\"source\":\"source of asr\",\"attribution\":\"attribution of asr\",\"changes\":\"changes of asr\","
        "\"source_sha256\":\"\",\"content_sha256\":\"\",\"tensors\":" + std::to_string(asr.tensors().size()) +
        ",\"bytes\":" + bytes(asr) + "},{\"name\":\"x\",\"kind\":\"future\",\"license\":\"license of x\","
        "\"license_url\":\"license_url of x\",\"source\":\"source of x\",\"attribution\":\"attribution of x\","
        "\"changes\":\"changes of x\",\"source_sha256\":\"\",\"content_sha256\":\"\",\"tensors\":" +
        std::to_string(diar.tensors().size()) + ",\"bytes\":" + bytes(diar) + "}]";
    EXPECT_EQ(json, want);
    // A kind this library does not load is listed, skipped by the default choice, refused by name.
    Loaded asr_ctx(parakeet_capi_load(bundle.c_str()));
    EXPECT_NE(asr_ctx.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_load_component(bundle.c_str(), "x"), nullptr);
    EXPECT_EQ(std::string(parakeet_capi_load_error()),
              bundle + ": component 'x' is of kind 'future', which this library does not load (it loads asr, vad, "
                       "diar, ced, voice)");
}

// A load of `path` (component `name`, NULL for the default) fails with `message` in its error.
void expect_refused(const std::string& path, const char* name, const std::string& message) {
    EXPECT_EQ(parakeet_capi_load_component(path.c_str(), name), nullptr);
    EXPECT_NE(std::string(parakeet_capi_load_error()).find(message), std::string::npos)
        << "got: " << parakeet_capi_load_error() << "\nwanted: " << message;
}

// A small bundle for header faults: component "a" holds a (tiny, unloadable) Silero-kind file.
gguf_test::GgufBuilder small(const std::vector<std::string>& listed, uint32_t version = 1) {
    gguf_test::GgufBuilder b;
    bundle_test::add_header(b, listed, version);
    b.kv_string("a.general.architecture", "silero_vad");
    b.tensor("a.w", gguf_test::kTypeF32, {1}, {0, 0, 0, 0});
    bundle_test::add_component_keys(b, "a", "vad");
    return b;
}

TEST(CapiBundle, HostileHeadersAreRefusedWithTheirReason) {
    const std::string dir = testing::TempDir();
    expect_refused(bundle_test::write(small({"a"}, 2), dir + "v2.gguf"), nullptr,
                   "bundle version 2 is not supported (this library reads version 1)");
    expect_refused(bundle_test::write(small({}), dir + "none.gguf"), nullptr, "parakeet.bundle.components lists no component");
    expect_refused(bundle_test::write(small({"a", "A"}), dir + "upper.gguf"), nullptr, "bad component name 'A'");
    expect_refused(bundle_test::write(small({"a", "general"}), dir + "reserved.gguf"), nullptr,
                   "bad component name 'general'");
    expect_refused(bundle_test::write(small({"a", std::string(33, 'b')}), dir + "long.gguf"), nullptr,
                   "bad component name 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'");
    expect_refused(bundle_test::write(small({"a", "x\ny" + std::string(100, 'z')}), dir + "hostile.gguf"), nullptr,
                   "bad component name 'x?y" + std::string(37, 'z') + "...' (names are");
    expect_refused(bundle_test::write(small({"a", "a"}), dir + "twice.gguf"), nullptr, "component 'a' is listed twice");
    expect_refused(bundle_test::write(small({"a", "b"}), dir + "keyless.gguf"), nullptr,
                   "component 'b' has no key parakeet.bundle.b.kind");
    gguf_test::GgufBuilder empty = small({"a", "b"});
    bundle_test::add_component_keys(empty, "b", "vad");
    expect_refused(bundle_test::write(empty, dir + "empty.gguf"), "b",
                   "component 'b' holds no key or tensor (nothing is stored under 'b.')");
    expect_refused(bundle_test::write(small({"a"}).tensor("loose.w", gguf_test::kTypeF32, {1}, {0, 0, 0, 0}),
                                      dir + "loose_tensor.gguf"),
                   nullptr, "tensor loose.w belongs to no component");
    expect_refused(bundle_test::write(small({"a"}).kv_u32("loose.key", 1), dir + "loose_key.gguf"), nullptr,
                   "key loose.key belongs to no component");
    expect_refused(bundle_test::write(small({"a"}).kv_u32("parakeet.bundle.z.kind", 1), dir + "unlisted.gguf"), nullptr,
                   "key parakeet.bundle.z.kind belongs to no component");
    const std::string ok = bundle_test::write(small({"a"}), dir + "ok.gguf");
    expect_refused(ok, "zz", "bundle has no component 'zz'; components: a (vad)");
    // The component's own loader then reports what is wrong with the model itself.
    expect_refused(ok, nullptr, "silero_vad.encoder.n_layers");
    expect_refused(kAsr, "asr", kAsr + " is not a bundle, so it has no component 'asr'");
}

TEST(CapiBundle, AComponentMustHoldTheModelItsKindNames) {
    const std::string bundle = make_bundle("mislabelled.gguf", {{"a", kAsr, "diar"}});
    expect_refused(bundle, "a", "component 'a' is declared 'diar' but holds a model of kind ASR");
}

TEST(CapiBundle, ComponentsJsonRefusesAPlainFileAndNull) {
    EXPECT_EQ(parakeet_capi_bundle_components_json(kAsr.c_str()), nullptr);
    EXPECT_EQ(std::string(parakeet_capi_thread_last_error()),
              kAsr + " is not a bundle (general.architecture is not 'parakeet-bundle')");
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(parakeet_capi_bundle_components_json(nullptr), nullptr);
    EXPECT_EQ(std::string(parakeet_capi_thread_last_error()), "bundle path is NULL");
}

}  // namespace
