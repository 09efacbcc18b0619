#include "model/decoder/confidence.h"

#include <cmath>

namespace pk {

float max_prob_confidence(const float* logits, int n, const ConfidenceOptions& opt) {
    float top = logits[0];
    for (int i = 1; i < n; ++i) top = std::fmax(top, logits[i]);
    // max log-probability = top - logsumexp = -log(sum exp(x - top)); double keeps the sum
    // of a thousand small terms exact enough to match PyTorch's float result to ~1e-7.
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - top);
    const double max_logp = -std::log(sum);
    const double N = n;
    if (opt.alpha == 1.0f) return static_cast<float>((N * std::exp(max_logp) - 1.0) / (N - 1.0));
    const double a = opt.alpha;
    const double na = std::pow(N, a);
    return static_cast<float>((na * std::exp(a * max_logp) - 1.0) / (na - 1.0));
}

}  // namespace pk
