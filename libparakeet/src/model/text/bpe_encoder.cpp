#include "model/text/bpe_encoder.h"

#include <cstdio>

namespace pk {
namespace {

const std::string kWordMark = "\xE2\x96\x81";     // U+2581, SentencePiece's space
const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD, for malformed UTF-8

// Length of the well-formed UTF-8 character at s[i], or 0 when it is malformed.
size_t utf8_length(const std::string& s, size_t i) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    unsigned min = 0;
    if (b < 0x80) return 1;
    if ((b & 0xE0) == 0xC0) n = 2, min = 0x80;
    else if ((b & 0xF0) == 0xE0) n = 3, min = 0x800;
    else if ((b & 0xF8) == 0xF0) n = 4, min = 0x10000;
    else return 0;
    if (i + n > s.size()) return 0;
    unsigned cp = b & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
        const auto c = static_cast<unsigned char>(s[i + k]);
        if ((c & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

// The characters of a normalised text.
std::vector<std::string> characters(const std::string& s) {
    std::vector<std::string> out;
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_length(s, i);
        out.push_back(s.substr(i, n));  // normalize() left only well-formed characters
        i += n;
    }
    return out;
}

bool is_control_or_unknown(const std::string& p) {
    return p == "<unk>" || p == "<s>" || p == "</s>" || p == "<pad>";
}

int byte_piece_value(const std::string& p) {
    unsigned v = 0;
    char tail = 0;
    if (p.size() == 6 && std::sscanf(p.c_str(), "<0x%2X%c", &v, &tail) == 2 && tail == '>') return static_cast<int>(v);
    return -1;
}

}  // namespace

BpeEncoder::BpeEncoder(const std::vector<std::string>& pieces, const std::vector<float>& scores)
    : scores_(scores), exact_(!scores.empty() && scores.size() == pieces.size()) {
    for (int& id : byte_ids_) id = -1;
    for (size_t i = 0; i < pieces.size(); ++i) {
        const std::string& p = pieces[i];
        const int id = static_cast<int>(i);
        const int byte = byte_piece_value(p);
        if (p == "<unk>") {
            if (unknown_id_ < 0) unknown_id_ = id;
        } else if (byte >= 0) {
            byte_ids_[byte] = id;
            byte_fallback_ = true;
        } else if (!is_control_or_unknown(p) && !p.empty()) {
            ids_.emplace(p, id);  // the first id of a duplicated piece wins, as in SentencePiece
            if (p.size() > longest_piece_) longest_piece_ = p.size();
        }
    }
}

std::string BpeEncoder::normalize(const std::string& text) {
    std::string out;
    bool previous_space = true;  // drops leading spaces and collapses runs
    for (size_t i = 0; i < text.size();) {
        const size_t n = utf8_length(text, i);
        if (n == 0) {
            out += kReplacement;
            previous_space = false;
            i += 1;
            continue;
        }
        if (text[i] == ' ') {
            if (!previous_space) out += kWordMark;
            previous_space = true;
        } else {
            out.append(text, i, n);
            previous_space = false;
        }
        i += n;
    }
    while (out.size() >= kWordMark.size() && out.compare(out.size() - kWordMark.size(), kWordMark.size(), kWordMark) == 0)
        out.resize(out.size() - kWordMark.size());  // trailing spaces
    return out.empty() ? out : kWordMark + out;     // the dummy prefix
}

int BpeEncoder::find(const std::string& piece) const {
    const auto it = ids_.find(piece);
    return it == ids_.end() ? -1 : it->second;
}

std::vector<std::string> BpeEncoder::merge_by_score(const std::vector<std::string>& symbols) const {
    // Merging the best pair present (leftmost on ties) at each step is what SentencePiece's
    // agenda does: its heap holds every current pair, stale ones are skipped, ties go to the
    // smaller left index. Phrases are short, so the quadratic scan is cheap.
    std::vector<std::string> s = symbols;
    for (;;) {
        int best = -1;
        float best_score = 0.f;
        for (size_t i = 0; i + 1 < s.size(); ++i) {
            const int id = find(s[i] + s[i + 1]);
            if (id < 0) continue;
            const float score = scores_[static_cast<size_t>(id)];
            if (best < 0 || score > best_score) best = static_cast<int>(i), best_score = score;
        }
        if (best < 0) return s;
        s[static_cast<size_t>(best)] += s[static_cast<size_t>(best) + 1];
        s.erase(s.begin() + best + 1);
    }
}

std::vector<std::string> BpeEncoder::longest_match(const std::vector<std::string>& symbols) const {
    std::vector<std::string> out;
    for (size_t i = 0; i < symbols.size();) {
        std::string candidate, best;
        size_t best_end = i + 1;
        for (size_t j = i; j < symbols.size() && candidate.size() + symbols[j].size() <= longest_piece_; ++j) {
            candidate += symbols[j];
            if (find(candidate) >= 0) best = candidate, best_end = j + 1;
        }
        out.push_back(best.empty() ? symbols[i] : best);
        i = best_end;
    }
    return out;
}

void BpeEncoder::append_symbol(const std::string& symbol, BpeEncoding& out, bool& previous_unknown) const {
    const int id = find(symbol);
    if (id >= 0) {
        out.ids.push_back(id);
        previous_unknown = false;
        return;
    }
    if (byte_fallback_) {
        bool all = true;
        for (unsigned char b : symbol) all = all && byte_ids_[b] >= 0;
        if (all) {
            for (unsigned char b : symbol) out.ids.push_back(byte_ids_[b]);
            previous_unknown = false;
            return;
        }
    }
    if (out.first_unknown.empty()) out.first_unknown = symbol;
    if (!previous_unknown) out.ids.push_back(unknown_id_);  // a run of unknowns is one <unk>
    previous_unknown = true;
}

BpeEncoding BpeEncoder::encode(const std::string& text) const {
    const std::vector<std::string> chars = characters(normalize(text));
    const std::vector<std::string> symbols = exact_ ? merge_by_score(chars) : longest_match(chars);
    BpeEncoding out;
    bool previous_unknown = false;
    for (const std::string& s : symbols) append_symbol(s, out, previous_unknown);
    return out;
}

}  // namespace pk
