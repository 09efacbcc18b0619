// The Gaussian tail Φ(-a) = erfc(a/√2)/2 for a in [0, kLimit), as 16 polynomials of degree 5:
// interval i = floor(a / kWidth) covers [i·kWidth, (i+1)·kWidth) and
//   Φ(-a) ≈ sum_k kTail[k][i] · u^k,   u = a - (i + 1/2)·kWidth,
// within 3.1e-8 absolute everywhere (float32 evaluation; past kLimit the tail is below 1e-9
// and taken as 0). The AVX-512 GELU (ops_vec_avx512.h) picks a row's 16 entries with one
// vpermps per coefficient: no division and no exp, about 2.7 times faster than the erfc fit of
// erfc_poly.h. Made by tools/gelu_tail_poly.py (its docstring gives the fit). Plain constexpr
// floats: safe to include from ISA-specific files.
#pragma once

namespace pk::kernels::gelu_tail_poly {

constexpr float kLimit = 6.0f;
constexpr int kIntervals = 16;
constexpr float kWidth = kLimit / kIntervals;
constexpr int kDegree = 5;

alignas(64) constexpr float kTail[kDegree + 1][kIntervals] = {
    {4.256343246e-01f, 2.868877053e-01f, 1.742507219e-01f, 9.467574209e-02f,
     4.575362429e-02f, 1.958007738e-02f, 7.394606248e-03f, 2.457901137e-03f,
     7.175425417e-04f, 1.836701849e-04f, 4.116759374e-05f, 8.070996046e-06f,
     1.382830305e-06f, 2.069014045e-07f, 2.701761659e-08f, 3.077503141e-09f},
    {-3.919909000e-01f, -3.405675888e-01f, -2.570739090e-01f, -1.685931832e-01f,
     -9.606150538e-02f, -4.755388945e-02f, -2.045267262e-02f, -7.642604876e-03f,
     -2.481190721e-03f, -6.998521276e-04f, -1.715062390e-04f, -3.651583029e-05f,
     -6.754763945e-06f, -1.085593226e-06f, -1.515836487e-07f, -1.838934161e-08f},
    {3.674811497e-02f, 9.578244388e-02f, 1.205017790e-01f, 1.106391177e-01f,
     8.105272800e-02f, 4.904084280e-02f, 2.492713556e-02f, 1.074744854e-02f,
     3.954272252e-03f, 1.246493310e-03f, 3.375871165e-04f, 7.871035632e-05f,
     1.582283039e-05f, 2.745652182e-06f, 4.116319587e-07f, 5.335652986e-08f},
    {6.303387135e-02f, 3.880148381e-02f, 5.189087708e-03f, -2.030498721e-02f,
     -2.958113700e-02f, -2.578949928e-02f, -1.684445515e-02f, -8.802101947e-03f,
     -3.788047004e-03f, -1.363681746e-03f, -4.145552521e-04f, -1.070824073e-04f,
     -2.360446888e-05f, -4.454219379e-06f, -7.212275932e-07f, -1.003886538e-07f},
    {-9.001159109e-03f, -2.125386894e-02f, -2.117701061e-02f, -1.176480297e-02f,
     -1.092299819e-03f, 5.056657828e-03f, 6.076650694e-03f, 4.395105876e-03f,
     2.369073685e-03f, 1.015746500e-03f, 3.568011743e-04f, 1.043686425e-04f,
     2.567973388e-05f, 5.350738775e-06f, 9.486573731e-07f, 1.436163330e-07f},
    {-9.050739929e-03f, -3.401132766e-03f, 3.172907513e-03f, 6.089932751e-03f,
     4.767354112e-03f, 1.764989458e-03f, -4.352146352e-04f, -1.143794856e-03f,
     -9.342232370e-04f, -5.143375602e-04f, -2.165590558e-04f, -7.312816888e-05f,
     -2.028364725e-05f, -4.686488865e-06f, -9.101830756e-07f, -1.495257891e-07f},
};

}  // namespace pk::kernels::gelu_tail_poly
