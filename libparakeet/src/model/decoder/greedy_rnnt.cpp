#include "model/decoder/greedy_rnnt.h"

#include "model/decoder/argmax.h"
#include "model/decoder/greedy_cursor.h"

namespace pk {

std::vector<TranscriptToken> greedy_rnnt(TransducerSteps& net, int n_frames, const GreedyOptions& o) {
    std::vector<TranscriptToken> out;
    GreedyCursor cursor(o, n_frames);
    while (!cursor.done()) {
        const float* logits = net.joint(cursor.frame());
        const int token = argmax(logits, o.blank_id + 1);
        if (cursor.advance(logits, token, out)) net.emit(token);
    }
    return out;
}

}  // namespace pk
