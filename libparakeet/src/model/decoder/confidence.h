// Token confidence as NeMo's "max_prob" measure computes it (asr_confidence_utils.py,
// get_confidence_measure_bank): the largest probability of a step's distribution, rescaled so
// that a uniform distribution scores 0 and a certain one 1.
//
// The distribution is log_softmax over the N = V+1 token logits only (blank included, TDT
// duration logits excluded: GreedyTDTInfer applies log_softmax to logits[:-D]; the CTC and
// RNN-T heads have exactly V+1 outputs). With m = max log-probability:
//   alpha == 1:  (N * exp(m) - 1) / (N - 1)
//   otherwise:   (N^alpha * exp(alpha * m) - 1) / (N^alpha - 1)
// NeMo's ConfidenceMethodConfig defaults alpha to 0.33; (N p - 1)/(N - 1) is alpha = 1.
#pragma once

namespace pk {

struct ConfidenceOptions {
    float alpha = 1.0f;
};

// Confidence of the distribution softmax(logits[0, n)), n >= 2.
float max_prob_confidence(const float* logits, int n, const ConfidenceOptions& opt);

}  // namespace pk
