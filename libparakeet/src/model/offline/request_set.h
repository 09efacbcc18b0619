// A set of offline requests given at once (the C ABI's batch calls, parakeet_capi_transcribe_pcm_batch*):
// the requests that the request batcher would batch (RequestBatcher::runs_batched) are grouped
// into OfflineBatches, each run on a backend of the model's pool, as many at once as the pool
// has backends; the others (long audio, beam search, hotwords) run alone through
// Model::transcribe. Every transcript is bitwise what Model::transcribe gives the request alone
// (offline_batch.h), and a request's own error stays its own.
#pragma once

#include <vector>

#include "model/offline/offline_batch.h"

namespace pk {

// At most this many requests share a batch. 64 clips of 2-5 s run as fast in batches of at
// most 8, 32 or 64 as of 16 (within 3 %, bench/bench_batch_calls.py, docs/performance.md
// "Batch calls"): a batch of 8 already stacks hundreds of rows per product. 16 is also what the
// server batches uploads by (--upload-batch), and bounds a batch's arena.
constexpr int kRequestSetMaxBatch = 16;

// How a set runs: batches, each one OfflineBatch::run, and the requests that run alone.
struct RequestSetPlan {
    std::vector<std::vector<OfflineRequest*>> batches;
    std::vector<OfflineRequest*> alone;
};

// The plan for `requests` on a pool of `backends`. The batched ones are sorted longest first
// and cut into consecutive batches, so a batch's requests have similar lengths: its greedy
// decode steps them in lockstep until the longest is done, and similar lengths keep every
// step's products full. The batches are as few as hold kRequestSetMaxBatch each, rounded up to
// a multiple of `backends` (every backend gets as many) and no more than the requests; the
// requests are shared evenly among them (sizes differ by at most one). The longest go first, so
// the backends finish close together. The lone ones are longest first too.
RequestSetPlan plan_request_set(const std::vector<OfflineRequest*>& requests, int backends);

// Transcribes every request, filling its transcript or its own error: its checks
// (OfflineBatch::check) first, then the plan for those that pass, run by the calling thread and
// helper threads (one per backend beyond the first, living for the call), each batch on a
// backend of its own. Returns when all are done.
void transcribe_request_set(const Model& model, std::vector<OfflineRequest>& requests);

}  // namespace pk
