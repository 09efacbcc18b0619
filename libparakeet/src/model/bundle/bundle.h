// Bundles: one GGUF file ("parakeet-bundle", parakeet.cpp's format, docs/bundles.md) that holds
// several models, each stored under its component's name ("asr.general.architecture",
// "asr.encoder.layers.0..."), with per-component licence keys and content hashes
// (parakeet.bundle.<c>.{kind, license, ...}).
//
// read_bundle() validates the whole header of a hostile file before anything is loaded;
// choose_component() picks what to load and component_view() hands the model loaders a
// prefixed view of the one mapping (GgufReader::prefixed_view), which they read unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/model_kind.h"

namespace pk {

inline constexpr char kArchitectureBundle[] = "parakeet-bundle";
inline constexpr uint32_t kBundleVersion = 1;

// One component, as the header describes it.
struct BundleComponent {
    std::string name;  // [a-z][a-z0-9_]{0,31}; its keys and tensors are stored under "<name>."
    std::string kind;  // "asr", "vad", "diar", "ced", "voice", or one this library does not know
    std::string license, license_url, source, attribution, changes, source_sha256, content_sha256;
    size_t tensors = 0;  // how many tensors it holds
    uint64_t bytes = 0;  // their data's bytes
};

// Whether general.architecture is "parakeet-bundle".
bool is_bundle(const GgufReader& gguf);

// The components of a bundle in their listed order, after checking the header: the version,
// the component names (valid, unique, not reserved), each one's keys, that each holds keys or
// tensors, and that no tensor or key lies outside every component. Throws ModelError (GgufError)
// with a one-line reason.
std::vector<BundleComponent> read_bundle(const GgufReader& gguf);

// The model kind a component kind loads as; ModelKind::None for a kind this library does not load
// (it is listed but skipped).
ModelKind bundle_kind_model(const std::string& kind);

// The component called `name`, or for "" the default: the only asr component, else the only
// one this library can load. Throws ModelError naming the components when there is none or
// more than one to choose from, or `name` is not there or not loadable.
const BundleComponent& choose_component(const GgufReader& gguf, const std::vector<BundleComponent>& components,
                                        const std::string& name);

// The component as a file of its own, checked to hold the model its kind says.
GgufReader component_view(const GgufReader& gguf, const BundleComponent& component);

}  // namespace pk
