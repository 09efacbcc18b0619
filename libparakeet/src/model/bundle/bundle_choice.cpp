// Which component of a bundle to load, and its view (bundle.h).
#include <string>

#include "common/errors.h"
#include "model/bundle/bundle.h"

namespace pk {

namespace {

// The component kinds this library loads. A new model kind plugs in with one line here (and its
// loader in the C ABI's dispatch); kinds not listed are shown but skipped.
struct LoadableKind {
    const char* kind;
    ModelKind model;
};
constexpr LoadableKind kLoadable[] = {
    {"asr", ModelKind::Asr},
    {"vad", ModelKind::Vad},
    {"diar", ModelKind::Diarization},
    {"ced", ModelKind::Sound},
    {"voice", ModelKind::Speaker},
};

// "a (asr), v (vad), ..." for messages.
std::string listing(const std::vector<BundleComponent>& cs) {
    std::string s;
    for (const BundleComponent& c : cs) s += (s.empty() ? "" : ", ") + c.name + " (" + c.kind + ")";
    return s;
}

std::string loadable_kinds() {
    std::string s;
    for (const LoadableKind& k : kLoadable) s += (s.empty() ? "" : ", ") + std::string(k.kind);
    return s;
}

// The only component `pick` accepts; `what` names them for the errors ("asr", "loadable").
const BundleComponent* only(const GgufReader& g, const std::vector<BundleComponent>& cs, const std::string& what,
                            bool (*pick)(const BundleComponent&)) {
    const BundleComponent* found = nullptr;
    for (const BundleComponent& c : cs) {
        if (!pick(c)) continue;
        if (found != nullptr)
            throw g.error("bundle has several " + what +
                          " components, pick one by name (parakeet_capi_load_component, or --component); components: " +
                          listing(cs));
        found = &c;
    }
    return found;
}

}  // namespace

ModelKind bundle_kind_model(const std::string& kind) {
    for (const LoadableKind& k : kLoadable)
        if (kind == k.kind) return k.model;
    return ModelKind::None;
}

const BundleComponent& choose_component(const GgufReader& gguf, const std::vector<BundleComponent>& components,
                                        const std::string& name) {
    if (!name.empty()) {
        for (const BundleComponent& c : components) {
            if (c.name != name) continue;
            if (bundle_kind_model(c.kind) == ModelKind::None)
                throw gguf.error("component '" + name + "' is of kind '" + c.kind +
                                 "', which this library does not load (it loads " + loadable_kinds() + ")");
            return c;
        }
        throw gguf.error("bundle has no component '" + name + "'; components: " + listing(components));
    }
    if (const BundleComponent* c = only(gguf, components, "asr", [](const BundleComponent& c) { return c.kind == "asr"; }))
        return *c;
    if (const BundleComponent* c = only(gguf, components, "loadable",
                                        [](const BundleComponent& c) { return bundle_kind_model(c.kind) != ModelKind::None; }))
        return *c;
    throw gguf.error("bundle has no component this library loads (kinds " + loadable_kinds() +
                     "); components: " + listing(components));
}

GgufReader component_view(const GgufReader& gguf, const BundleComponent& component) {
    GgufReader view = gguf.prefixed_view(component.name + ".", gguf.name() + ":" + component.name);
    const ModelKind declared = bundle_kind_model(component.kind);
    const ModelKind held = detect_model_kind(view);
    if (held != declared)
        throw gguf.error("component '" + component.name + "' is declared '" + component.kind + "' but holds " +
                         (held == ModelKind::None ? std::string("no model this library knows")
                                                  : std::string("a model of kind ") + model_kind_name(held)));
    return view;
}

}  // namespace pk
