// AVX2/FMA build of the attention row body (see attention_rel_pos_rows.h).
#define PK_ATTENTION_NS avx2_attention
#include "kernels/attention_rel_pos_rows.h"

namespace pk::kernels::avx2 {

void attend_row(const float* kT, const float* pT, const float* v, int64_t ld, int64_t T,
                int64_t dk, int64_t i, const float* qu, const float* qv, float* scores, float* out) {
    avx2_attention::attend_row({kT, pT, v, ld, T, dk}, i, qu, qv, scores, out);
}

}  // namespace pk::kernels::avx2
