#include "model/decoder/word_timestamps.h"

#include <algorithm>
#include <string>

#include "common/errors.h"

namespace pk {

TranscriptBuilder::TranscriptBuilder(const Tokenizer& tokenizer, double window_stride_sec,
                                     int subsampling_factor)
    : tokenizer_(&tokenizer), window_stride_sec_(window_stride_sec), subsampling_factor_(subsampling_factor) {
    const int n = tokenizer.vocab_size();
    std::vector<std::string> pieces;
    pieces.reserve(static_cast<size_t>(n));
    for (int id = 0; id < n; ++id) pieces.push_back(tokenizer.piece(id));
    punctuation_ = SupportedPunctuation(pieces);

    token_text_.resize(static_cast<size_t>(n));
    starts_word_.resize(static_cast<size_t>(n));
    is_mark_.resize(static_cast<size_t>(n));
    starts_with_mark_.resize(static_cast<size_t>(n));
    is_separator_piece_.resize(static_cast<size_t>(n));
    for (int id = 0; id < n; ++id) {
        const size_t i = static_cast<size_t>(id);
        token_text_[i] = tokenizer.decode({id});
        starts_word_[i] = pieces[i] != token_text_[i];
        is_mark_[i] = punctuation_.is_mark(token_text_[i]);
        starts_with_mark_[i] = punctuation_.starts_with_mark(token_text_[i]);
        is_separator_piece_[i] = pieces[i] == " " || pieces[i] == "_" || pieces[i] == "\xE2\x96\x81";
    }
}

double TranscriptBuilder::seconds(int offset) const {
    // Same operation order as NeMo: start_offset * window_stride * subsampling_factor.
    return static_cast<double>(offset) * window_stride_sec_ * static_cast<double>(subsampling_factor_);
}

std::vector<TranscriptBuilder::Offsets> TranscriptBuilder::token_offsets(
    const std::vector<TranscriptToken>& tokens, TimestampRule rule) const {
    const size_t n = tokens.size();
    std::vector<Offsets> off(n);
    for (size_t i = 0; i < n; ++i) {
        const TranscriptToken& t = tokens[i];
        switch (rule) {
            case TimestampRule::Tdt: off[i] = {t.frame, t.frame + t.duration}; break;
            case TimestampRule::Rnnt: off[i] = {t.frame, t.frame + 1}; break;
            case TimestampRule::Ctc:
                off[i] = {i == 0 ? std::max(0, t.frame - 1) : tokens[i - 1].frame, t.frame};
                break;
        }
    }
    if (punctuation_.empty()) return off;
    for (size_t i = 1; i < n; ++i) {
        const size_t id = static_cast<size_t>(tokens[i].id);
        if (rule == TimestampRule::Tdt && is_mark_[id]) {
            off[i].start = off[i].end = off[i - 1].end;
        } else if (rule == TimestampRule::Ctc && starts_with_mark_[id]) {
            off[i].end = off[i].start;
        }
    }
    return off;
}

std::vector<TranscriptWord> TranscriptBuilder::words(const std::vector<TranscriptToken>& tokens,
                                                     const std::vector<Offsets>& off) const {
    struct Span {
        std::string text;
        int start, end;  // offsets
        int first, last; // token indices, inclusive
    };
    std::vector<Span> spans;
    std::vector<int> built;  // ids of the word being built
    int previous = 0;        // index of its first token
    const int n = static_cast<int>(tokens.size());
    const auto text_of = [&](int i) -> const std::string& {
        return token_text_[static_cast<size_t>(tokens[static_cast<size_t>(i)].id)];
    };

    for (int i = 0; i < n; ++i) {
        const size_t id = static_cast<size_t>(tokens[static_cast<size_t>(i)].id);
        const std::string& text = text_of(i);
        const bool punct = is_mark_[id];
        bool starts = starts_word_[id] != 0;
        if (!starts && text == " ") {
            // NeMo looks ahead for the next token whose text is not empty and not " ".
            const std::string* next = nullptr;
            for (int j = i + 1; j < n && (next == nullptr || next->empty()); ++j)
                next = text_of(j) == " " ? nullptr : &text_of(j);
            starts = next == nullptr || !punctuation_.is_mark(*next);
        }
        if (starts && !punct) {
            if (!built.empty())
                spans.push_back({tokenizer_->decode(built), off[static_cast<size_t>(previous)].start,
                                 off[static_cast<size_t>(i - 1)].end, previous, i - 1});
            built.clear();
            if (text != " ") {
                built.push_back(static_cast<int>(id));
                previous = i;
            }
        } else if (punct && built.empty() && !spans.empty()) {
            Span& last = spans.back();
            last.end = off[static_cast<size_t>(i)].end;
            last.last = i;
            if (!last.text.empty() && last.text.back() == ' ') last.text.pop_back();
            last.text += text;
        } else if (punct && !built.empty()) {
            if (is_separator_piece_[static_cast<size_t>(built.back())]) built.pop_back();
            built.push_back(static_cast<int>(id));
        } else {
            if (built.empty()) previous = i;
            built.push_back(static_cast<int>(id));
        }
    }
    if (spans.empty()) {
        if (!built.empty())
            spans.push_back({tokenizer_->decode(built), off.front().start, off.back().end, 0, n - 1});
    } else {
        spans.front().start = off.front().start;
        spans.front().first = 0;
        if (!built.empty())
            spans.push_back({tokenizer_->decode(built), off[static_cast<size_t>(previous)].start,
                             off.back().end, previous, n - 1});
    }

    std::vector<TranscriptWord> out;
    out.reserve(spans.size());
    for (Span& s : spans) {
        TranscriptWord w;
        w.text = std::move(s.text);
        w.start_sec = seconds(s.start);
        w.end_sec = seconds(s.end);
        w.first_token = s.first;
        w.n_tokens = s.last - s.first + 1;
        w.confidence = tokens[static_cast<size_t>(s.first)].confidence;
        for (int i = s.first + 1; i <= s.last; ++i)
            w.confidence = std::min(w.confidence, tokens[static_cast<size_t>(i)].confidence);
        out.push_back(std::move(w));
    }
    return out;
}

Transcript TranscriptBuilder::build(std::vector<TranscriptToken> tokens, TimestampRule rule) const {
    Transcript tr;
    tr.frame_sec = seconds(1);
    std::vector<int> ids;
    ids.reserve(tokens.size());
    for (const TranscriptToken& t : tokens) {
        if (t.id < 0 || t.id >= tokenizer_->vocab_size())
            throw InvalidArgument("token id " + std::to_string(t.id) + " is outside the vocabulary");
        ids.push_back(t.id);
    }
    tr.text = punctuation_.strip_space_before_marks(tokenizer_->decode(ids));
    tr.words = words(tokens, token_offsets(tokens, rule));
    tr.tokens = std::move(tokens);
    return tr;
}

}  // namespace pk
