// GgufReader::prefixed_view: one component of a bundle read as a file of its own. The keys and
// tensors keep pointing into the one mapping; only their names lose the prefix, so the model
// loaders read a component exactly as they read the file it came from.
#include "gguf/gguf_reader.h"

namespace pk {

namespace {

bool strip(const std::string& prefix, const std::string& name, std::string& out) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
    out = name.substr(prefix.size());
    return true;
}

}  // namespace

GgufReader GgufReader::prefixed_view(const std::string& prefix, std::string name) const {
    GgufReader v;
    v.file_ = file_;
    v.data_ = data_;
    v.size_ = size_;
    v.name_ = std::move(name);
    v.version_ = version_;
    v.alignment_ = alignment_;
    v.data_offset_ = data_offset_;
    std::string stripped;
    for (size_t i = 0; i < keys_.size(); ++i) {
        if (!strip(prefix, keys_[i].name, stripped)) continue;
        v.key_index_.emplace(stripped, v.keys_.size());
        v.keys_.push_back(keys_[i]);
        v.keys_.back().name = stripped;
        v.value_pos_.push_back(value_pos_[i]);
    }
    for (const GgufTensor& t : tensors_) {
        if (!strip(prefix, t.name, stripped)) continue;
        v.tensor_index_.emplace(stripped, v.tensors_.size());
        v.tensors_.push_back(t);
        v.tensors_.back().name = stripped;
    }
    if (v.keys_.empty() && v.tensors_.empty())
        throw error("no key or tensor is stored under the prefix '" + prefix + "'");
    return v;
}

}  // namespace pk
