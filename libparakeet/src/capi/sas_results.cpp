#include "capi/sas_results.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace pk::capi {

parakeet_sas_result* to_c_results(const std::vector<SasItem>& items) {
    if (items.empty()) return nullptr;
    auto* out = static_cast<parakeet_sas_result*>(std::calloc(items.size(), sizeof(parakeet_sas_result)));
    if (out == nullptr) throw std::bad_alloc();
    for (size_t i = 0; i < items.size(); ++i) {
        out[i].speaker = items[i].speaker;
        out[i].start = static_cast<float>(items[i].start);
        out[i].end = static_cast<float>(items[i].end);
        out[i].conf = items[i].confidence;
        out[i].text = static_cast<char*>(std::malloc(items[i].text.size() + 1));
        if (out[i].text == nullptr) {
            parakeet_capi_free_sas_results(out, static_cast<int>(i));
            throw std::bad_alloc();
        }
        std::memcpy(out[i].text, items[i].text.c_str(), items[i].text.size() + 1);
    }
    return out;
}

}  // namespace pk::capi

extern "C" void parakeet_capi_free_sas_results(parakeet_sas_result* results, int n) {
    if (results == nullptr) return;
    for (int i = 0; i < n; ++i) std::free(results[i].text);
    std::free(results);
}
