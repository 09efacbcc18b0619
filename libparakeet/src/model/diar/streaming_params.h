// The parameters of Sortformer's streaming inference, in NeMo's names and units (80 ms
// diarization frames), as SortformerModules (nemo/collections/asr/modules/sortformer_modules.py,
// NeMo 3.0.0) holds them. The defaults are that class's constructor defaults; a checkpoint's
// own values come from its config (the GGUF's diar.* keys). The rates and thresholds are doubles
// as in NeMo (Python floats): the slot counts are floors of double products, and the thresholds
// are rounded to float where NeMo compares or adds them to float tensors.
#pragma once

namespace pk {

struct DiarStreamingParams {
    int chunk_len = 188;              // frames a step adds
    int chunk_left_context = 1;       // frames of context before the chunk (not the first one)
    int chunk_right_context = 1;      // look-ahead frames (encoded, never cached)
    int fifo_len = 0;                 // frames of the FIFO queue
    int spkcache_len = 188;           // frames of the speaker cache
    int spkcache_update_period = 188; // frames moved from the FIFO to the cache at once
    int spkcache_sil_frames_per_spk = 3;  // silence slots closing each speaker's block
    double sil_threshold = 0.2;       // summed probabilities below it: a silence frame
    double pred_score_threshold = 0.25;  // floor of p and 1-p in the compression scores
    double scores_boost_latest = 0.05;   // added to the scores of frames new to the cache
    double strong_boost_rate = 0.75;  // share of a speaker's slots given +2 log 2
    double weak_boost_rate = 1.5;     // share given +log 2
    double min_pos_scores_rate = 0.5; // positive scores that make a speaker drop its others

    // Throws InvalidArgument when NeMo's _check_streaming_parameters would raise: every length
    // non-negative, chunk_len and spkcache_update_period >= 1, spkcache_len >=
    // (1 + spkcache_sil_frames_per_spk) * n_spk. An update period outside [chunk_len, fifo_len +
    // chunk_len] is legal; NeMo only warns, and streaming_update's pop-out rule clamps it.
    void check(int n_spk) const;
};

}  // namespace pk
