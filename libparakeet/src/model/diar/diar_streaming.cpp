#include "model/diar/diar_streaming.h"

#include <algorithm>

#include "model/diar/stream_schedule.h"

namespace pk {

DiarStreamingRunner::DiarStreamingRunner(const DiarModel& model, const DiarStreamingParams& params)
    : model_(model),
      params_(params),
      cache_(params, model.config().n_speakers, static_cast<int>(model.config().enc.d_model)) {}

std::vector<float> DiarStreamingRunner::step(Backend& b, const float* mel, int64_t rows, int lc, int rc,
                                             const ProgressSpan& progress) {
    Arena& arena = b.arena();
    arena.reset();
    const int64_t d = model_.config().enc.d_model;
    const int n_spk = model_.config().n_speakers;
    const int64_t chunk = model_.output_frames(rows);
    const int64_t prefix = cache_.cache_frames() + cache_.fifo_frames();
    const int64_t T = prefix + chunk;
    float* x = arena.alloc_array<float>(static_cast<size_t>(T * d));
    cache_.copy_prefix(x);
    model_.pre_encode(b.team(), arena, mel, rows, x + prefix * d);
    // The chunk's pre-encode embeddings go into the FIFO; the layers overwrite x.
    const std::vector<float> chunk_embs(x + prefix * d, x + T * d);
    model_.encode_layers(b.team(), arena, x, T, progress);
    float* probs = arena.alloc_array<float>(static_cast<size_t>(T * n_spk));
    model_.speaker_head(b.team(), arena, x, T, probs);
    return cache_.update(chunk_embs.data(), static_cast<int>(chunk), probs, lc, rc);
}

SpeakerProbabilities diar_streaming_probabilities(const DiarModel& model, const float* samples, int64_t n,
                                                  int sample_rate, const DiarStreamingParams& params,
                                                  const ProgressSpan& progress) {
    const DiarConfig& cfg = model.config();
    DiarStreamingRunner runner(model, params);
    const AudioInput audio(cfg.pre.sample_rate);
    SpeakerProbabilities out;
    out.n_speakers = cfg.n_speakers;
    out.frame_sec = cfg.frame_sec;
    const BackendLease lease = model.lease_backend();
    Backend& b = lease.backend();
    progress.at(0.0);
    b.arena().reset();
    int64_t got = 0;
    const float* x = audio.prepare(b, samples, n, sample_rate, &got);
    // The whole clip's mel, kept outside the arena that every step resets.
    const int n_mels = cfg.pre.n_mels;
    const LogMel& log_mel = model.log_mel();
    std::vector<float> mel(static_cast<size_t>(log_mel.n_frames(got) * n_mels));
    log_mel.compute(b.team(), b.arena(), x, got, mel.data());
    const int64_t feat_len = model.mel_frames(got);
    const int f = static_cast<int>(cfg.enc.subsampling_factor);
    const int64_t chunks = diar_chunk_count(params, f, feat_len);
    for (int64_t i = 0; i < chunks; ++i) {
        const DiarChunkWindow w = diar_chunk_window(params, f, i, feat_len);
        const double done = static_cast<double>(i) / static_cast<double>(chunks);
        const double next = static_cast<double>(i + 1) / static_cast<double>(chunks);
        const std::vector<float> p = runner.step(b, mel.data() + w.begin * n_mels, w.end - w.begin, w.lc, w.rc,
                                                 progress.sub(done, next));
        out.data.insert(out.data.end(), p.begin(), p.end());
        progress.at(next);
    }
    progress.at(1.0);  // a clip too short for a chunk
    out.frames = static_cast<int64_t>(out.data.size()) / cfg.n_speakers;
    b.arena().release_if_above(kArenaKeepBytes);
    return out;
}

}  // namespace pk
