#include "model/stream/stream_decoder.h"

#include <algorithm>
#include <stdexcept>

namespace pk {
namespace {

int piece_id(const std::vector<std::string>& pieces, const char* piece) {
    const auto it = std::find(pieces.begin(), pieces.end(), piece);
    return it == pieces.end() ? -1 : static_cast<int>(it - pieces.begin());
}

}  // namespace

StreamDecoder::StreamDecoder(const Model& model, DecoderChoice decoder)
    : model_(model),
      use_ctc_(model.uses_ctc(decoder)),
      eou_id_(piece_id(model.config().pieces, "<EOU>")),
      eob_id_(piece_id(model.config().pieces, "<EOB>")) {}

TimestampRule StreamDecoder::rule() const {
    return use_ctc_ ? TimestampRule::Ctc : model_.transducer()->timestamp_rule();
}

void StreamDecoder::decode(Backend& b, const float* enc, int64_t n) {
    decode_into(b, enc, n, decoded_frames_, carry_, tokens_, &pending_events_);
    decoded_frames_ += n;
}

void StreamDecoder::decode_tentative(Backend& b, const float* enc, int64_t n) {
    tentative_.clear();
    if (n <= 0) return;
    StreamCarry copy = carry_;
    decode_into(b, enc, n, decoded_frames_, copy, tentative_, nullptr);
}

void StreamDecoder::decode_batch(Backend& b, const std::vector<StreamDecoder*>& decoders,
                                 const std::vector<const float*>& encs, const std::vector<int64_t>& ns) {
    run_batch(b, decoders, encs, ns, false);
}

void StreamDecoder::decode_tentative_batch(Backend& b, const std::vector<StreamDecoder*>& decoders,
                                           const std::vector<const float*>& encs, const std::vector<int64_t>& ns) {
    run_batch(b, decoders, encs, ns, true);
}

void StreamDecoder::run_batch(Backend& b, const std::vector<StreamDecoder*>& decoders,
                              const std::vector<const float*>& encs, const std::vector<int64_t>& ns, bool tentative) {
    std::vector<ChunkDecode> chunks;
    std::vector<StreamDecoder*> batched;
    // The tentative decodes continue from copies of the states (sized up front: chunks point
    // into it).
    std::vector<TransducerCarry> copies(tentative ? decoders.size() : 0);
    for (size_t i = 0; i < decoders.size(); ++i) {
        StreamDecoder& d = *decoders[i];
        if (d.use_ctc_) {
            if (tentative) d.decode_tentative(b, encs[i], ns[i]);
            else d.decode(b, encs[i], ns[i]);
            continue;
        }
        TransducerCarry* carry = &d.carry_.transducer;
        if (tentative) {
            copies[i] = *carry;
            carry = &copies[i];
        }
        chunks.push_back({encs[i], ns[i], carry, {}});
        batched.push_back(&d);
    }
    if (batched.empty()) return;
    batched[0]->model_.transducer()->decode_chunks(b.team(), b.arena(), chunks);
    for (size_t i = 0; i < batched.size(); ++i) {
        StreamDecoder& d = *batched[i];
        if (tentative) {
            d.tentative_.clear();
            append_chunk(chunks[i].tokens, d.decoded_frames_, d.tentative_);
            d.take_events(0, d.tentative_, nullptr);
            continue;
        }
        const size_t before = d.tokens_.size();
        append_chunk(chunks[i].tokens, d.decoded_frames_, d.tokens_);
        d.take_events(before, d.tokens_, &d.pending_events_);
        d.decoded_frames_ += chunks[i].n_frames;
    }
}

void StreamDecoder::decode_into(Backend& b, const float* enc, int64_t n, int64_t first_frame, StreamCarry& carry,
                                std::vector<TranscriptToken>& out, std::vector<StreamEvent>* events) const {
    const size_t before = out.size();
    if (use_ctc_) {
        model_.ctc()->decode_chunk(b.team(), b.arena(), enc, n, static_cast<int>(first_frame), carry.ctc, out);
    } else {
        append_chunk(model_.transducer()->decode_chunk(b.team(), b.arena(), enc, n, carry.transducer), first_frame,
                     out);
    }
    take_events(before, out, events);
}

void StreamDecoder::append_chunk(const std::vector<TranscriptToken>& chunk, int64_t first_frame,
                                 std::vector<TranscriptToken>& out) {
    for (TranscriptToken t : chunk) {
        t.frame += static_cast<int>(first_frame);
        out.push_back(t);
    }
}

void StreamDecoder::take_events(size_t before, std::vector<TranscriptToken>& out,
                                std::vector<StreamEvent>* events) const {
    // <EOU>/<EOB> are events, not text.
    auto keep = out.begin() + static_cast<std::ptrdiff_t>(before);
    for (auto it = keep; it != out.end(); ++it) {
        if (it->id == eou_id_ || it->id == eob_id_) {
            if (events != nullptr) events->push_back({it->id, it->id == eob_id_, it->frame});
        } else {
            *keep++ = *it;
        }
    }
    out.erase(keep, out.end());
}

void StreamDecoder::fill_update(bool final, bool changed, StreamUpdate& u) {
    if (final) tentative_.clear();
    // Words and the partial text change only when frames were decoded (or at the end): most
    // feeds of a live stream (0.1 s each) decode none and skip this.
    if (final || changed) {
        commit_words(final, u);
        std::vector<TranscriptToken> open(tokens_.begin() + static_cast<std::ptrdiff_t>(committed_), tokens_.end());
        open.insert(open.end(), tentative_.begin(), tentative_.end());
        partial_ = model_.transcript_builder().build(std::move(open), rule()).text;
    }
    u.partial = partial_;
    u.events = std::move(pending_events_);
    pending_events_.clear();
}

void StreamDecoder::commit_words(bool all, StreamUpdate& u) {
    if (committed_ == tokens_.size()) return;
    // The tail with one token before it: CTC start offsets and TDT punctuation refer to the
    // token before, so the tail's words get the times the whole transcript gives them.
    const size_t context = committed_ > 0 ? 1 : 0;
    std::vector<TranscriptToken> tail(tokens_.begin() + static_cast<std::ptrdiff_t>(committed_ - context),
                                      tokens_.end());
    const size_t n_tail = tail.size();
    const Transcript t = model_.transcript_builder().build(std::move(tail), rule());

    // A word is complete once the next word has begun and the token after that word's first is
    // known too (whether a " " piece starts a word depends on the token after it).
    size_t end_token = all ? n_tail : context;  // tail tokens [context, end_token) are committed
    std::vector<const TranscriptWord*> done;
    for (size_t i = 0; i < t.words.size(); ++i) {
        const TranscriptWord& word = t.words[i];
        if (static_cast<size_t>(word.first_token) < context) continue;  // the context's word
        if (!all) {
            if (i + 1 >= t.words.size()) break;
            const size_t next = static_cast<size_t>(t.words[i + 1].first_token);
            if (next + 1 >= n_tail) break;
            end_token = next;
        }
        done.push_back(&word);
    }
    if (end_token <= context) return;

    const size_t first = committed_;
    committed_ = first + (end_token - context);
    for (const TranscriptWord* w : done) {
        TranscriptWord word = *w;
        word.first_token += static_cast<int>(first - context);
        u.words.push_back(std::move(word));
    }
    u.tokens.assign(tokens_.begin() + static_cast<std::ptrdiff_t>(first),
                    tokens_.begin() + static_cast<std::ptrdiff_t>(committed_));
    // The text of everything committed, so the updates' texts add up to the final text exactly.
    std::vector<TranscriptToken> prefix(tokens_.begin(), tokens_.begin() + static_cast<std::ptrdiff_t>(committed_));
    std::string text = model_.transcript_builder().build(std::move(prefix), rule()).text;
    if (text.compare(0, committed_text_.size(), committed_text_) != 0)
        throw std::logic_error("stream text is not an extension of the text already returned");
    u.text = text.substr(committed_text_.size());
    committed_text_ = std::move(text);
}

Transcript StreamDecoder::transcript() const { return model_.transcript_builder().build(tokens_, rule()); }

}  // namespace pk
