// Bands of a map's time rows that the 2-D speaker networks (ERes2Net, ResNet34) run a block at a
// time, a thread per band: a band's passes are too small to split over the team (its threads
// waited on each other more than they ran: 2 threads took as long as one), and a band's maps stay
// in the core's cache between the block's passes where whole maps (10-20 MB in a first stage) went
// through memory between every two.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

// A thread's team of one and arena, for the bands it runs alone.
struct BandWorker {
    ThreadTeam team{1};
    Arena arena;
};
using BandWorkers = std::vector<std::unique_ptr<BandWorker>>;

// One worker per thread of `team`, none for a team of one (its bands run on the team itself).
inline BandWorkers band_workers(const ThreadTeam& team) {
    BandWorkers workers;
    if (team.size() > 1)
        for (int i = 0; i < team.size(); ++i) workers.push_back(std::make_unique<BandWorker>());
    return workers;
}

// fn(team, arena, k0, k1) runs bands [k0, k1) of `bands`: the team splits the bands into runs of
// consecutive ones, each thread running its runs alone with its worker's team of one and arena;
// with fewer than two bands a thread (or no workers) the whole team runs them all. A band's bits
// must not depend on who runs it, nor on where a run starts.
template <typename Fn>
void for_bands(ThreadTeam& team, Arena& arena, BandWorkers& workers, int64_t bands, Fn fn) {
    if (workers.empty() || bands < 2 * team.size()) {
        fn(team, arena, int64_t{0}, bands);
        return;
    }
    const int64_t chunks = std::min<int64_t>(bands, kParallelForChunksPerThread * team.size());
    team.run_chunks(chunks, [&](int64_t c, int thread) {
        BandWorker& w = *workers[static_cast<size_t>(thread)];
        fn(w.team, w.arena, bands * c / chunks, bands * (c + 1) / chunks);
    });
}

}  // namespace pk::speaker
