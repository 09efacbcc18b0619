// f16 and q8_0 models against the f32 model they were converted from, on every fixture clip:
// prints the encoder's relative max |diff| and the token agreement (1 - edit distance / f32
// token count) per head, and bounds the encoder drift. q8_0 runs twice: as stored
// (LoadOptions::q8_all off, type "q8_0") and with the remaining F32 matrices quantised at load
// (q8_all on, "q8all"). "bf16" is the f32 model itself loaded with LoadOptions::bf16
// (where the CPU has AVX512_BF16); its encoder must also be the same bits on 1 and 3
// threads. The figures are reported, not hidden:
// random-weight fixture models amplify small numeric differences far more than trained ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "audio/wav_reader.h"
#include "kernels/matmul.h"
#include "model/model.h"
#include "nemo_fixtures.h"
#include "token_agreement.h"

namespace {

using token_agreement::edit_distance;

std::vector<int> ids(const pk::Transcript& t) {
    std::vector<int> out;
    for (const auto& tok : t.tokens) out.push_back(tok.id);
    return out;
}

// Encoder output of `model` on `samples`, copied out of the backend's arena.
std::vector<float> encode(const pk::Model& model, const std::vector<float>& samples, int threads = 2) {
    pk::Backend b(threads);
    b.arena().reset();
    const auto mel = model.compute_mel(b, samples.data(), static_cast<int64_t>(samples.size()));
    const auto enc = model.encode(b, mel);
    return std::vector<float>(enc.data, enc.data + enc.frames * model.config().enc.d_model);
}

// Bounds on the encoder's max |diff| relative to its max |value|, against f32.
const std::map<std::string, double> kEncoderBound = {
    {"f16", 2e-2}, {"q8_0", 1e-1}, {"q8all", 1e-1}, {"bf16", 5e-2}};

// The file each type is read from (model<suffix>.gguf), and the options it is loaded with.
struct Variant {
    std::string type, suffix;
    bool q8_all, bf16;
};
const Variant kVariants[] = {{"f16", "-f16", false, false},
                             {"q8_0", "-q8_0", false, false},
                             {"q8all", "-q8_0", true, false},
                             {"bf16", "", true, true}};

TEST(QuantizedAgreement, F16AndQ8_0AgainstF32) {
    const auto fixtures = nemo_fixtures::all();
    ASSERT_FALSE(fixtures.empty());
    std::printf("\n%-34s %-5s %12s %14s %14s\n", "fixture", "type", "enc rel diff", "transducer agr", "ctc agr");
    int compared = 0;
    for (const auto& f : fixtures) {
        const pk::GgufReader ref = pk::GgufReader::open(f.ref_path);
        std::string wav = ref.get_string("ref.clip_file");
        if (wav.find('/') == std::string::npos) wav = nemo_fixtures::data_dir() + "/audio/" + wav;
        std::vector<float> samples = nemo_fixtures::tensor(ref, "audio");
        if (samples.empty()) samples = pk::read_wav_file(wav, 0).samples;
        const auto f32 = pk::Model::load(f.model_dir + "/model.gguf");
        const auto enc32 = encode(*f32, samples);
        double scale = 1e-30;
        for (float v : enc32) scale = std::max(scale, double(std::fabs(v)));
        for (const Variant& v : kVariants) {
            const std::string& type = v.type;
            const std::string path = f.model_dir + "/model" + v.suffix + ".gguf";
            if (FILE* probe = std::fopen(path.c_str(), "rb")) std::fclose(probe);
            else continue;
            if (type == "bf16" && !pk::kernels::PackedWeights::bf16_available(f32->isa())) continue;
            SCOPED_TRACE(path + " (" + type + ") on " + f.ref_path);
            pk::LoadOptions options;
            options.q8_all = v.q8_all;
            options.bf16 = v.bf16;
            const auto q = pk::Model::load(path, options);
            EXPECT_EQ(q->bf16_encoder(), type == "bf16");
            const auto encq = encode(*q, samples);
            ASSERT_EQ(encq.size(), enc32.size());
            if (type == "bf16") EXPECT_EQ(encode(*q, samples, 1), encq) << "bf16: 1 thread differs from 2";
            if (type == "bf16") EXPECT_EQ(encode(*q, samples, 3), encq) << "bf16: 3 threads differ from 2";
            double diff = 0;
            for (size_t i = 0; i < enc32.size(); ++i) diff = std::max(diff, double(std::fabs(enc32[i] - encq[i])));
            EXPECT_LT(diff / scale, kEncoderBound.at(type));
            double agreement[2] = {-1, -1};
            int head = 0;
            for (auto d : {pk::DecoderChoice::Transducer, pk::DecoderChoice::Ctc}) {
                if ((d == pk::DecoderChoice::Ctc) ? f32->ctc() != nullptr : f32->transducer() != nullptr) {
                    pk::Backend backend(2);
                    const int64_t n = static_cast<int64_t>(samples.size());
                    const auto a = ids(f32->transcribe_on(backend, samples.data(), n, 16000, d));
                    const auto b = ids(q->transcribe_on(backend, samples.data(), n, 16000, d));
                    agreement[head] = a.empty() ? (b.empty() ? 1.0 : 0.0)
                                                : std::max(0.0, 1.0 - double(edit_distance(a, b)) / double(a.size()));
                }
                ++head;
            }
            std::printf("%-34s %-5s %12.2e %14.3f %14.3f\n",
                        (f.model_name + "/" + ref.get_string("ref.clip")).c_str(), type.c_str(), diff / scale,
                        agreement[0], agreement[1]);
            ++compared;
        }
    }
    std::printf("(agreement = max(0, 1 - token edit distance / f32 token count); -1 = head absent)\n");
    EXPECT_GT(compared, 0) << "no model-f16.gguf / model-q8_0.gguf next to the fixtures";
}

}  // namespace
