// NeMo's TransformerEncoder as Sortformer uses it (pre_ln false, eval): per layer
//   x = LN1(x + out_proj(attention(q(x), k(x), v(x))))
//   x = LN2(x + dense_out(relu(dense_in(x))))
// with plain scaled dot-product attention over all frames (one unpadded sequence: NeMo's
// length mask masks nothing), no positional encoding and no final norm.
#pragma once

#include <cstdint>
#include <vector>

#include "model/diar/diar_config.h"
#include "model/encoder/conformer_layer.h"
#include "model/layers/linear.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk {

class TransformerLayer {
public:
    TransformerLayer(const TensorLoader& t, const DiarConfig& cfg, int index);
    // x: [T, tf_d_model], updated in place.
    void forward(ThreadTeam& team, Arena& arena, float* x, int64_t T) const;
    size_t packed_bytes() const;

private:
    int64_t d_ = 0, heads_ = 0, inner_ = 0;
    Linear q_, k_, v_, out_, dense_in_, dense_out_;
    LayerNormWeights norm1_, norm2_;
    const kernels::KernelTable* kernels_;
};

class TransformerEncoder {
public:
    TransformerEncoder(const TensorLoader& t, const DiarConfig& cfg);
    void forward(ThreadTeam& team, Arena& arena, float* x, int64_t T) const;
    size_t packed_bytes() const;

private:
    std::vector<TransformerLayer> layers_;
};

}  // namespace pk
