#include "kernels/ops_dot.h"

namespace pk::kernels {
namespace {

// Eight independent partial sums (a vector's lanes at the SSE2 baseline, which the compiler
// forms without reassociating anything itself), combined pairwise at the end.
float dot_scalar(const float* a, const float* b, int64_t n) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
    for (; i < n; ++i) acc[i & 7] += a[i] * b[i];
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

}  // namespace

void add_ops_dot_scalar(KernelTable& t) { t.dot.dot = dot_scalar; }

}  // namespace pk::kernels
