// The inner loops of the local and windowed attention (attention_local_rel_pos_block.h) at every
// ISA level: the block products and weighted sums against a double-precision reference, for
// row counts that use every tile (2, 4, 6 rows) and head sizes with and without a tail of
// channels; a row's bits do not depend on the rows computed with it (the streams of a batched
// cache-aware step rely on it); and on x86-64 the AVX-512 kernels give the AVX2 kernels' bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "isa_levels.h"
#include "kernels/attention_local_rel_pos_block.h"
#include "kernels/kernel_table.h"
#include "test_kernel_ops_util.h"

namespace {

using pk::kernels::local_attention::BlockRows;
using pk::kernels::local_attention::kColumnPad;

class AttentionBlocks : public isa_test::LevelTest {};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Columns [col0, col1) of an x · m product: m has ldm columns, past col1 up to the padding.
struct Product {
    int64_t rows, dk, col0, col1, ldm;
};

std::vector<Product> products() {
    return {{2, 64, 0, 73, 96}, {4, 64, 48, 130, 144}, {6, 40, 0, 100, 144}, {2, 128, 0, 48, 48}};
}

// The product's rows, each holding columns [0, ldm) of which [col0, col1) are the result (a
// kernel may compute more of them, up to the padding).
std::vector<float> run_products(const pk::kernels::KernelTable& k, const Product& p, const std::vector<float>& x,
                                const std::vector<float>& m) {
    std::vector<float> out(static_cast<size_t>(p.rows * p.ldm), 0.0f);
    k.attention.local_block_products(x.data(), p.rows, p.dk, m.data(), p.ldm, p.col0, p.col1, out.data(), p.ldm);
    return out;
}

// Columns [col0, col1) of every row of run_products' output.
std::vector<float> result_columns(const Product& p, const std::vector<float>& out) {
    std::vector<float> r;
    for (int64_t row = 0; row < p.rows; ++row)
        r.insert(r.end(), out.begin() + row * p.ldm + p.col0, out.begin() + row * p.ldm + p.col1);
    return r;
}

TEST_P(AttentionBlocks, ProductsMatchTheReferenceAndKeepEachRowsBits) {
    for (const Product& p : products()) {
        SCOPED_TRACE("rows " + std::to_string(p.rows) + " dk " + std::to_string(p.dk));
        const std::vector<float> x = kt::random_vector(static_cast<size_t>(p.rows * p.dk), 11, -1, 1);
        const std::vector<float> m = kt::random_vector(static_cast<size_t>(p.dk * p.ldm), 12, -1, 1);
        const std::vector<float> out = run_products(kernels(), p, x, m);
        for (int64_t r = 0; r < p.rows; ++r)
            for (int64_t col = p.col0; col < p.col1; ++col) {
                double want = 0.0;
                for (int64_t c = 0; c < p.dk; ++c) want += double(x[r * p.dk + c]) * m[c * p.ldm + col];
                ASSERT_NEAR(out[r * p.ldm + col], want, 1e-4 * (1.0 + std::fabs(want))) << "row " << r << " col " << col;
            }
        // The last two rows alone (a tile of two) get the bits they got among the others.
        const Product two{2, p.dk, p.col0, p.col1, p.ldm};
        const std::vector<float> last(x.end() - 2 * p.dk, x.end());
        const std::vector<float> alone = run_products(kernels(), two, last, m);
        for (int64_t r = 0; r < 2; ++r)
            EXPECT_EQ(std::memcmp(alone.data() + r * p.ldm + p.col0, out.data() + (p.rows - 2 + r) * p.ldm + p.col0,
                                  static_cast<size_t>(p.col1 - p.col0) * sizeof(float)),
                      0)
                << "row " << r << " of the last two";
    }
}

// Three rows with different windows over n keys; head sizes with a tail of channels too.
struct Sums {
    int64_t dk, ld, n;
};

std::vector<float> run_sums(const pk::kernels::KernelTable& k, const Sums& s, const BlockRows& rows,
                            const std::vector<float>& prob, int64_t ldp, const std::vector<float>& v) {
    std::vector<float> out(static_cast<size_t>(rows.n * s.dk), -1.0f);
    k.attention.local_block_weighted_sums(rows, prob.data(), ldp, v.data(), s.ld, s.dk, out.data(), s.dk);
    return out;
}

BlockRows three_rows(int64_t n) {
    BlockRows rows{};
    rows.n = 3;
    const int64_t begin[] = {0, 5, n - 70}, end[] = {n, 70, n};
    for (int r = 0; r < 3; ++r) rows.begin[r] = begin[r], rows.end[r] = end[r];
    return rows;
}

TEST_P(AttentionBlocks, WeightedSumsMatchTheReference) {
    for (const Sums& s : {Sums{64, 512, 72}, Sums{40, 80, 150}, Sums{128, 1024, 140}}) {
        SCOPED_TRACE("dk " + std::to_string(s.dk) + " keys " + std::to_string(s.n));
        const int64_t ldp = s.n + 5;
        const BlockRows rows = three_rows(s.n);
        const std::vector<float> prob = kt::random_vector(static_cast<size_t>(rows.n * ldp), 21, 0, 1);
        const std::vector<float> v = kt::random_vector(static_cast<size_t>(s.n * s.ld), 22, -1, 1);
        const std::vector<float> out = run_sums(kernels(), s, rows, prob, ldp, v);
        for (int64_t r = 0; r < rows.n; ++r)
            for (int64_t c = 0; c < s.dk; ++c) {
                double want = 0.0;
                for (int64_t t = rows.begin[r]; t < rows.end[r]; ++t) want += double(prob[r * ldp + t]) * v[t * s.ld + c];
                ASSERT_NEAR(out[r * s.dk + c], want, 1e-4 * (1.0 + std::fabs(want))) << "row " << r << " channel " << c;
            }
    }
}

INSTANTIATE_ISA_LEVELS(AttentionBlocks);

#if defined(PARAKEET_HAVE_X86)
// The AVX-512 kernels run each value's multiply-adds in the AVX2 kernels' order.
TEST(AttentionBlocksAvx512, GivesTheAvx2Bits) {
    const std::string why = isa_test::missing_reason({pk::IsaLevel::Avx2, pk::IsaLevel::Avx512});
    if (!why.empty()) GTEST_SKIP() << why;
    const pk::kernels::KernelTable &avx2 = pk::kernels::kernel_table(pk::IsaLevel::Avx2),
                                   &avx512 = pk::kernels::kernel_table(pk::IsaLevel::Avx512);
    ASSERT_TRUE(avx512.attention.local_block_products != avx2.attention.local_block_products &&
                avx512.attention.local_block_weighted_sums != avx2.attention.local_block_weighted_sums)
        << "the avx512 level has its own kernels";
    for (const Product& p : products()) {
        const std::vector<float> x = kt::random_vector(static_cast<size_t>(p.rows * p.dk), 31, -1, 1);
        const std::vector<float> m = kt::random_vector(static_cast<size_t>(p.dk * p.ldm), 32, -1, 1);
        EXPECT_TRUE(same_bits(result_columns(p, run_products(avx2, p, x, m)), result_columns(p, run_products(avx512, p, x, m)))) << "products, rows " << p.rows;
    }
    for (const Sums& s : {Sums{64, 512, 72}, Sums{40, 80, 150}}) {
        const int64_t ldp = s.n;
        const BlockRows rows = three_rows(s.n);
        const std::vector<float> prob = kt::random_vector(static_cast<size_t>(rows.n * ldp), 41, 0, 1);
        const std::vector<float> v = kt::random_vector(static_cast<size_t>(s.n * s.ld), 42, -1, 1);
        EXPECT_TRUE(same_bits(run_sums(avx2, s, rows, prob, ldp, v), run_sums(avx512, s, rows, prob, ldp, v))) << "dk " << s.dk;
    }
}
#endif

}  // namespace
