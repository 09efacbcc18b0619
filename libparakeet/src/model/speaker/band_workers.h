// Work the speaker networks give a thread to run alone: bands of a map's time rows that the 2-D
// networks (ERes2Net, ResNet34) run a block at a time, and ranges of frames that CAM++ runs through
// a chain of passes. A band's passes are too small to split over the team (its threads waited on
// each other more than they ran: 2 threads took as long as one), and a band's maps stay in the
// core's cache between the block's passes where whole maps (10-20 MB in a first stage) went
// through memory between every two.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

// The calling thread's team of one and arena for the bands it runs alone. They live as long as
// the thread (the backends' threads are persistent), so that their memory is mapped once rather
// than per call (a fresh arena per call and thread cost ResNet34 some 700 page faults per 10 s at
// 2 threads); it is bounded by a band's maps, not by the audio's length.
struct BandWorker {
    ThreadTeam team{1};
    Arena arena;
};
BandWorker& this_threads_band_worker();

// fn(team, arena, i0, i1) over [0, n) cut into `parts` runs of consecutive items, each run alone
// on a thread of the team with that thread's BandWorker; a single part runs on `team` and `arena`
// themselves.
template <typename Fn>
void run_parts_alone(ThreadTeam& team, Arena& arena, int64_t n, int64_t parts, Fn& fn) {
    if (parts <= 1) {
        fn(team, arena, int64_t{0}, n);
        return;
    }
    team.run_chunks(parts, [&](int64_t c, int) {
        BandWorker& w = this_threads_band_worker();
        w.arena.reset();  // nothing of its is live between runs
        fn(w.team, w.arena, n * c / parts, n * (c + 1) / parts);
    });
}

// fn(team, arena, k0, k1) runs bands [k0, k1) of `bands`: the team splits the bands into runs of
// consecutive ones, each thread running its runs alone; a team of one, or one with fewer than two
// bands a thread, runs them all itself (a band's own passes then run on `team` and `arena`). A
// band's bits must not depend on who runs it, nor on where a run starts.
template <typename Fn>
void for_bands(ThreadTeam& team, Arena& arena, int64_t bands, Fn fn) {
    const bool split = team.size() > 1 && bands >= 2 * team.size();
    const int64_t parts = split ? std::min<int64_t>(bands, kParallelForChunksPerThread * team.size()) : 1;
    run_parts_alone(team, arena, bands, parts, fn);
}

// fn(team, arena, r0, r1) for the rows [0, rows) cut into one contiguous range per thread of the
// team (fewer where a range would have under `min_rows` rows), each range run alone. For a chain
// of passes over the same rows that would otherwise meet the team at a barrier after each pass (a
// range recomputes the halo rows its passes read). fn's bits must not depend on the cut.
template <typename Fn>
void for_row_ranges(ThreadTeam& team, Arena& arena, int64_t rows, int64_t min_rows, Fn fn) {
    run_parts_alone(team, arena, rows, std::min<int64_t>(team.size(), rows / min_rows), fn);
}

}  // namespace pk::speaker
