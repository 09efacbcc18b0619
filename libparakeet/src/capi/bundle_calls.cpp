// Bundles through the C ABI: load a component by name, and list the components
// (model/bundle/bundle.h; docs/bundles.md).
#include "capi/context_loader.h"
#include "common/json_writer.h"
#include "model/bundle/bundle.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

std::string components_json(const std::vector<pk::BundleComponent>& cs) {
    pk::JsonWriter j;
    j.begin_array();
    for (const pk::BundleComponent& c : cs) {
        j.begin_object();
        const std::pair<const char*, const std::string*> fields[] = {
            {"name", &c.name},       {"kind", &c.kind},
            {"license", &c.license}, {"license_url", &c.license_url},
            {"source", &c.source},   {"attribution", &c.attribution},
            {"changes", &c.changes}, {"source_sha256", &c.source_sha256},
            {"content_sha256", &c.content_sha256}};
        for (const auto& [key, value] : fields) j.key(key).value(*value);
        j.key("tensors").value(static_cast<int64_t>(c.tensors));
        j.key("bytes").value(static_cast<int64_t>(c.bytes));
        j.end_object();
    }
    j.end_array();
    return j.str();
}

}  // namespace

extern "C" {

parakeet_ctx* parakeet_capi_load_component(const char* gguf_path, const char* component) {
    return guarded<parakeet_ctx*>(nullptr, nullptr,
                                  [&] { return pk::capi::load_context(gguf_path, nullptr, component); });
}

char* parakeet_capi_bundle_components_json(const char* gguf_path) {
    return guarded<char*>(nullptr, nullptr, [&]() -> char* {
        if (gguf_path == nullptr) throw pk::InvalidArgument("bundle path is NULL");
        const pk::GgufReader gguf = pk::GgufReader::open(gguf_path);
        if (!pk::is_bundle(gguf)) throw pk::InvalidArgument(gguf.name() + " is not a bundle (general.architecture is not 'parakeet-bundle')");
        return pk::capi::to_c_string(components_json(pk::read_bundle(gguf)));
    });
}

}  // extern "C"
