#include "model/offline/request_set.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>

#include "model/offline/request_batcher.h"

namespace pk {
namespace {

double seconds(const OfflineRequest* r) { return static_cast<double>(r->n) / r->sample_rate; }

void sort_longest_first(std::vector<OfflineRequest*>& requests) {
    std::stable_sort(requests.begin(), requests.end(),
                     [](const OfflineRequest* a, const OfflineRequest* b) { return seconds(a) > seconds(b); });
}

// One piece of work of a set: a batch, or a request alone (a batch of one that runs through
// Model::transcribe).
struct SetWork {
    std::vector<OfflineRequest*> requests;
    bool alone;
};

void run_work(const Model& model, const OfflineBatch& batch, const SetWork& work) {
    if (work.alone) {
        OfflineRequest& r = *work.requests.front();
        try {
            r.transcript = model.transcribe(r.samples, r.n, r.sample_rate, *r.options);
        } catch (...) {
            r.error = std::current_exception();
        }
        return;
    }
    batch.run_leased(work.requests);
}

}  // namespace

RequestSetPlan plan_request_set(const std::vector<OfflineRequest*>& requests, int backends) {
    RequestSetPlan plan;
    std::vector<OfflineRequest*> batched;
    for (OfflineRequest* r : requests)
        (RequestBatcher::runs_batched(*r->options, r->n, r->sample_rate) ? batched : plan.alone).push_back(r);
    sort_longest_first(plan.alone);
    sort_longest_first(batched);
    if (batched.empty()) return plan;
    const size_t n = batched.size(), k = static_cast<size_t>(std::max(1, backends));
    const size_t fewest = (n + kRequestSetMaxBatch - 1) / kRequestSetMaxBatch;
    const size_t count = std::min(n, (fewest + k - 1) / k * k);
    size_t next = 0;
    for (size_t i = 0; i < count; ++i) {
        const size_t size = n / count + (i < n % count ? 1 : 0);
        plan.batches.emplace_back(batched.begin() + next, batched.begin() + next + size);
        next += size;
    }
    return plan;
}

void transcribe_request_set(const Model& model, std::vector<OfflineRequest>& requests) {
    const OfflineBatch batch(model);
    std::vector<OfflineRequest*> checked;
    for (OfflineRequest& r : requests) {
        try {
            batch.check(r);
            checked.push_back(&r);
        } catch (...) {
            r.error = std::current_exception();
        }
    }
    const RequestSetPlan plan = plan_request_set(checked, model.backends());
    std::vector<SetWork> work;
    for (OfflineRequest* r : plan.alone) work.push_back({{r}, true});
    for (const auto& b : plan.batches) work.push_back({b, false});
    std::atomic<size_t> next{0};
    const auto worker = [&] {
        for (size_t i; (i = next.fetch_add(1)) < work.size();) run_work(model, batch, work[i]);
    };
    const size_t helpers = std::min<size_t>(static_cast<size_t>(model.backends()), work.size());
    std::vector<std::thread> threads;
    for (size_t t = 1; t < helpers; ++t) {
        try {
            threads.emplace_back(worker);
        } catch (const std::system_error&) {
            break;  // no more threads: those running (the caller at least) take the rest
        }
    }
    worker();
    for (std::thread& t : threads) t.join();
}

}  // namespace pk
