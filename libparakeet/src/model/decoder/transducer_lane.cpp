#include "model/decoder/transducer_lane.h"

#include <cstring>
#include <utility>
#include <vector>

namespace pk {

TransducerLane::TransducerLane(Arena& arena, const PredictionNet& pred, const Joint& joint, const float* enc_proj_,
                               int blank_id, const TransducerCarry* carry)
    : enc_proj(enc_proj_), pending(blank_id), last(-1) {
    const size_t state = static_cast<size_t>(pred.state_size());
    h = arena.alloc_array<float>(state);
    c = arena.alloc_array<float>(state);
    h_next = arena.alloc_array<float>(state);
    c_next = arena.alloc_array<float>(state);
    pred_proj = arena.alloc_array<float>(static_cast<size_t>(joint.hidden()));
    std::memset(h, 0, state * sizeof(float));
    std::memset(c, 0, state * sizeof(float));
    if (carry != nullptr && carry->last_token >= 0) {
        std::memcpy(h, carry->h.data(), state * sizeof(float));
        std::memcpy(c, carry->c.data(), state * sizeof(float));
        pending = last = carry->last_token;
    }
}

void TransducerLane::emit(int token) {
    std::swap(h, h_next);
    std::swap(c, c_next);
    pending = last = token;
}

void TransducerLane::save(TransducerCarry& carry, int64_t state_size) const {
    if (last < 0) return;
    carry.h.assign(h, h + state_size);
    carry.c.assign(c, c + state_size);
    carry.last_token = last;
}

void run_predictions(ThreadTeam& team, Arena& arena, const PredictionNet& pred, const Joint& joint,
                     TransducerLane* const* lanes, int64_t n) {
    if (n == 0) return;
    ArenaScope scope(arena);
    const auto rows = static_cast<size_t>(n);
    std::vector<int> tokens(rows);
    std::vector<const float*> h(rows), c(rows);
    std::vector<float*> h_out(rows), c_out(rows);
    for (size_t i = 0; i < rows; ++i) {
        tokens[i] = lanes[i]->pending;
        h[i] = lanes[i]->h;
        c[i] = lanes[i]->c;
        h_out[i] = lanes[i]->h_next;
        c_out[i] = lanes[i]->c_next;
    }
    pred.step_rows(team, arena, n, tokens.data(), h.data(), c.data(), h_out.data(), c_out.data());

    // The output of each step is the last layer's h; the joint projects them all at once.
    const int64_t H = pred.hidden();
    const int64_t J = joint.hidden();
    float* g = arena.alloc_array<float>(rows * static_cast<size_t>(H));
    float* proj = arena.alloc_array<float>(rows * static_cast<size_t>(J));
    for (size_t i = 0; i < rows; ++i)
        std::memcpy(g + i * H, lanes[i]->h_next + (pred.layers() - 1) * H, static_cast<size_t>(H) * sizeof(float));
    joint.project_predictions(team, arena, g, n, proj);
    for (size_t i = 0; i < rows; ++i) {
        std::memcpy(lanes[i]->pred_proj, proj + i * J, static_cast<size_t>(J) * sizeof(float));
        lanes[i]->pending = -1;
    }
}

void run_joints(ThreadTeam& team, Arena& arena, const Joint& joint, TransducerLane* const* lanes, const int* frames,
                int64_t n, float* logits) {
    if (n == 0) return;
    ArenaScope scope(arena);
    const int64_t J = joint.hidden();
    const auto rows = static_cast<size_t>(n);
    std::vector<const float*> enc_rows(rows);
    float* pred_proj = arena.alloc_array<float>(rows * static_cast<size_t>(J));
    for (size_t i = 0; i < rows; ++i) {
        enc_rows[i] = lanes[i]->enc_proj + static_cast<int64_t>(frames[i]) * J;
        std::memcpy(pred_proj + i * J, lanes[i]->pred_proj, static_cast<size_t>(J) * sizeof(float));
    }
    joint.logits_rows(team, arena, n, enc_rows.data(), pred_proj, logits);
}

}  // namespace pk
