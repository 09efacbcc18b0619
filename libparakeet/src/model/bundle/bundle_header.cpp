// read_bundle: checks a bundle's header and lists its components (bundle.h).
#include <set>

#include "model/bundle/bundle.h"
#include "model/gguf_schema.h"

namespace pk {

namespace {

constexpr char kVersionKey[] = "parakeet.bundle.version";
constexpr char kComponentsKey[] = "parakeet.bundle.components";
constexpr char kComponentKeyPrefix[] = "parakeet.bundle.";
// The names a component may not take: they would collide with the bundle's own keys.
const char* const kReserved[] = {"general", "parakeet", "bundle"};

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool valid_name(const std::string& n) {
    if (n.empty() || n.size() > 32 || n[0] < 'a' || n[0] > 'z') return false;
    for (char c : n)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    for (const char* r : kReserved)
        if (n == r) return false;
    return true;
}

// A hostile name as a message shows it: printable ASCII only, at most 40 characters, so that
// the error stays one short line.
std::string shown(const std::string& n) {
    std::string out;
    for (char c : n.substr(0, 40)) out += (c >= ' ' && c <= '~') ? c : '?';
    return n.size() > 40 ? out + "..." : out;
}

std::vector<std::string> component_names(const GgufReader& g) {
    const uint32_t version = g.get_u32(kVersionKey);
    if (version != kBundleVersion)
        throw g.error("bundle version " + std::to_string(version) + " is not supported (this library reads version " +
                      std::to_string(kBundleVersion) + ")");
    const std::vector<std::string> names = g.get_string_array(kComponentsKey);
    if (names.empty()) throw g.error(std::string(kComponentsKey) + " lists no component");
    std::set<std::string> seen;
    for (const std::string& n : names) {
        if (!valid_name(n))
            throw g.error("bad component name '" + shown(n) +
                          "' (names are [a-z][a-z0-9_]{0,31}, and not general, parakeet or bundle)");
        if (!seen.insert(n).second) throw g.error("component '" + n + "' is listed twice");
    }
    return names;
}

// Which component `name` (a key or tensor name) is stored under; nullptr for none.
BundleComponent* owner(std::vector<BundleComponent>& cs, const std::string& name) {
    for (BundleComponent& c : cs)
        if (starts_with(name, c.name + ".")) return &c;
    return nullptr;
}

// A key of the bundle's own: general.*, the version and list, and parakeet.bundle.<c>.<field> of
// a listed component (read_component_keys reads those).
bool bundle_key(const std::vector<BundleComponent>& cs, const std::string& key) {
    if (starts_with(key, "general.") || key == kVersionKey || key == kComponentsKey) return true;
    for (const BundleComponent& c : cs)
        if (starts_with(key, kComponentKeyPrefix + c.name + ".")) return true;
    return false;
}

void read_component_keys(const GgufReader& g, BundleComponent& c) {
    const std::string p = kComponentKeyPrefix + c.name + ".";
    // The format requires every key but the two hashes.
    const std::pair<const char*, std::string*> required[] = {
        {"kind", &c.kind},     {"license", &c.license},         {"license_url", &c.license_url},
        {"source", &c.source}, {"attribution", &c.attribution}, {"changes", &c.changes}};
    for (const auto& [field, value] : required) {
        if (!g.has_key(p + field)) throw g.error("component '" + c.name + "' has no key " + p + field);
        *value = g.get_string(p + field);
    }
    if (g.has_key(p + "source_sha256")) c.source_sha256 = g.get_string(p + "source_sha256");
    if (g.has_key(p + "content_sha256")) c.content_sha256 = g.get_string(p + "content_sha256");
}

}  // namespace

bool is_bundle(const GgufReader& gguf) {
    return gguf.has_key(schema::kGeneralArchitecture) &&
           gguf.find_key(schema::kGeneralArchitecture)->type == GgufValueType::String &&
           gguf.get_string(schema::kGeneralArchitecture) == kArchitectureBundle;
}

std::vector<BundleComponent> read_bundle(const GgufReader& gguf) {
    std::vector<BundleComponent> cs;
    for (const std::string& n : component_names(gguf)) {
        cs.emplace_back();
        cs.back().name = n;
        read_component_keys(gguf, cs.back());
    }
    std::set<std::string> with_keys;
    for (const GgufKeyInfo& k : gguf.keys()) {
        if (bundle_key(cs, k.name)) continue;
        BundleComponent* c = owner(cs, k.name);
        if (c == nullptr) throw gguf.error("key " + k.name + " belongs to no component");
        with_keys.insert(c->name);
    }
    for (const GgufTensor& t : gguf.tensors()) {
        BundleComponent* c = owner(cs, t.name);
        if (c == nullptr) throw gguf.error("tensor " + t.name + " belongs to no component");
        ++c->tensors;
        c->bytes += t.n_bytes;
    }
    for (const BundleComponent& c : cs)
        if (c.tensors == 0 && with_keys.count(c.name) == 0)
            throw gguf.error("component '" + c.name + "' holds no key or tensor (nothing is stored under '" + c.name +
                             ".')");
    return cs;
}

}  // namespace pk
