#include "model/stream/chunked_stream.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/errors.h"

namespace pk {
namespace {

int piece_id(const std::vector<std::string>& pieces, const char* piece) {
    const auto it = std::find(pieces.begin(), pieces.end(), piece);
    return it == pieces.end() ? -1 : static_cast<int>(it - pieces.begin());
}

}  // namespace

ChunkedStream::ChunkedStream(const Model& model, const StreamSettings& settings)
    : model_(model),
      ctx_(stream_context(settings, model.config().pre, model.config().enc.subsampling_factor)),
      schedule_(ctx_),
      use_ctc_(model.uses_ctc(settings.decoder)),
      frame_sec_(model.config().frame_seconds()),
      eou_id_(piece_id(model.config().pieces, "<EOU>")),
      eob_id_(piece_id(model.config().pieces, "<EOB>")) {}

ChunkedStream::~ChunkedStream() = default;

TimestampRule ChunkedStream::rule() const {
    return use_ctc_ ? TimestampRule::Ctc : model_.transducer()->timestamp_rule();
}

StreamUpdate ChunkedStream::feed(const float* samples, int64_t n) {
    if (finalized_) throw InvalidArgument("the stream is finalized: it takes no more audio");
    if (n < 0) throw InvalidArgument("the number of samples is negative (" + std::to_string(n) + ")");
    if (n > 0 && samples == nullptr) throw InvalidArgument("the sample buffer is NULL");
    for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(samples[i]))
            throw InvalidAudio("sample " + std::to_string(received_ + i) + " is not a finite number (NaN or Inf)");
    }
    audio_.insert(audio_.end(), samples, samples + n);
    received_ += n;
    return run_ready(false);
}

StreamUpdate ChunkedStream::finalize() {
    if (finalized_) throw InvalidArgument("the stream is already finalized");
    return run_ready(true);
}

StreamUpdate ChunkedStream::run_ready(bool final) {
    const int64_t chunks_before = schedule_.chunks_run();
    while (const auto w = schedule_.next(received_, final)) {
        run_chunk(*w);
        schedule_.advance(*w);
    }
    StreamUpdate u;
    if (final) {
        finalized_ = true;
        tentative_.clear();
        std::vector<float>().swap(audio_);
        audio_start_ = received_;
    } else {
        // Drop what no later window reads, once that is more than a window (amortised O(1)).
        const int64_t drop = schedule_.keep_from(received_) - audio_start_;
        if (drop > ctx_.window()) {
            audio_.erase(audio_.begin(), audio_.begin() + drop);
            audio_start_ += drop;
        }
    }
    // Words and the partial text change only when a chunk was decoded (or at the end): most
    // feeds of a live stream (0.1 s each) decode none and skip this.
    if (final || schedule_.chunks_run() != chunks_before) {
        commit_words(final, u);
        std::vector<TranscriptToken> open(tokens_.begin() + static_cast<std::ptrdiff_t>(committed_), tokens_.end());
        open.insert(open.end(), tentative_.begin(), tentative_.end());
        partial_ = model_.transcript_builder().build(std::move(open), rule()).text;
    }
    u.partial = partial_;
    u.events = std::move(pending_events_);
    pending_events_.clear();
    u.chunks = schedule_.chunks_run();
    const double rate = model_.config().pre.sample_rate;
    u.audio_sec = static_cast<double>(received_) / rate;
    u.final_sec = final ? u.audio_sec : static_cast<double>(decoded_frames_) * frame_sec_;
    u.finalized = finalized_;
    return u;
}

void ChunkedStream::decode_frames(Backend& b, const float* enc, int64_t n_frames, int64_t first_frame,
                                  StreamCarry& carry, std::vector<TranscriptToken>& out,
                                  std::vector<StreamEvent>* events) const {
    const size_t before = out.size();
    if (use_ctc_) {
        model_.ctc()->decode_chunk(b.team(), b.arena(), enc, n_frames, static_cast<int>(first_frame), carry.ctc, out);
    } else {
        for (TranscriptToken t : model_.transducer()->decode_chunk(b.team(), b.arena(), enc, n_frames,
                                                                   carry.transducer)) {
            t.frame += static_cast<int>(first_frame);
            out.push_back(t);
        }
    }
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

void ChunkedStream::run_chunk(const ChunkWindow& w) {
    const BackendLease lease = model_.lease_backend();
    Backend& b = lease.backend();
    b.arena().reset();
    const float* audio = audio_.data() + (w.window_start - audio_start_);
    const MelFeatures mel = model_.compute_mel(b, audio, w.window_end - w.window_start);
    const int64_t frames = FastConformerEncoder::output_frames(mel.valid);
    const EncoderOutput enc = model_.encode(b, mel, {}, model_.attention().resolve(frames));
    const int64_t d_model = model_.config().enc.d_model;

    const int64_t left = std::min(w.left_frames, enc.frames);
    const int64_t n_decode = w.last ? enc.frames - left : std::min(w.decode_frames, enc.frames - left);
    const float* chunk = enc.frames > 0 ? enc.data + left * d_model : nullptr;
    decode_frames(b, chunk, n_decode, decoded_frames_, carry_, tokens_, &pending_events_);
    decoded_frames_ += n_decode;

    // The right context, decoded from a copy of the state: the tentative text after the final.
    tentative_.clear();
    const int64_t n_right = enc.frames - left - n_decode;
    if (!w.last && n_right > 0) {
        StreamCarry copy = carry_;
        decode_frames(b, chunk + n_decode * d_model, n_right, decoded_frames_, copy, tentative_, nullptr);
    }
    b.arena().release_if_above(kArenaKeepBytes);
}

void ChunkedStream::commit_words(bool all, StreamUpdate& u) {
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

Transcript ChunkedStream::transcript() const {
    Transcript t = model_.transcript_builder().build(tokens_, rule());
    t.attention = model_.attention().resolve(ctx_.window() / ctx_.frame_samples);  // of a whole window
    return t;
}

}  // namespace pk
