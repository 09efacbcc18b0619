#include "model/decoder/greedy_tdt.h"

#include "model/decoder/argmax.h"
#include "model/decoder/greedy_tdt_search.h"

namespace pk {
namespace {

struct ArgmaxPolicy {
    int n_tokens;
    int choose(const float* logits) const { return argmax(logits, n_tokens); }
    void emitted(int) const {}
};

}  // namespace

std::vector<TranscriptToken> greedy_tdt(TransducerSteps& net, int n_frames, const GreedyOptions& o, int first_frame,
                                        int* end_frame) {
    ArgmaxPolicy policy{o.blank_id + 1};
    return greedy_tdt_search(net, n_frames, o, first_frame, end_frame, policy);
}

}  // namespace pk
