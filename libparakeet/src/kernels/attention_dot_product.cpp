#include "kernels/attention_dot_product.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/kernel_table.h"
#include "kernels/matmul.h"
#include "kernels/ops_grain.h"
#include "kernels/round_up.h"
#include "kernels/transpose.h"

namespace pk::kernels {
namespace {

// The block products' tiles (attention_local_rel_pos_block.h).
namespace blocks = local_attention;

// One head's keys transposed ([dk, ldk], columns past T zeroed: the products may read them)
// and values as contiguous rows ([T, dk]: the weighted sum's rows stay in L1 instead of
// falling H*dk floats apart into a few cache sets).
struct HeadOperands {
    float* kT;
    float* vs;
    int64_t ldk;
    int64_t head = -1;

    void load(const KernelTable& kt, const float* k, const float* v, int64_t ld, int64_t T, int64_t dk, int64_t h) {
        transpose_padded(kt, k + h * dk, T, dk, ld, kT, ldk);
        for (int64_t t = 0; t < T; ++t) std::copy_n(v + t * ld + h * dk, dk, vs + t * dk);
        head = h;
    }
};

// One item = one (head, block of kRowBlock query rows): about 2 * kRowBlock * T * dk
// multiply-adds.
int64_t row_blocks(int64_t T) { return (T + blocks::kRowBlock - 1) / blocks::kRowBlock; }
int64_t item_grain(int64_t T, int64_t dk) { return grain_for(2 * blocks::kRowBlock * T * dk); }

void attention_f32(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q, const float* k,
                   const float* v, int64_t ld, int64_t T, int64_t H, int64_t dk, float scale, float* out,
                   int64_t ldo) {
    const int64_t ldk = round_up(T, blocks::kColumnPad);
    // Per thread: the head's operands, and a block's queries (rows padded to kRowPad), scores,
    // probabilities (rows T apart, as the weighted sum takes them) and weighted sums.
    const int64_t per_thread = dk * ldk + T * dk + blocks::kRowBlock * (2 * dk + ldk + T);
    float* scratch = arena.alloc_array<float>(static_cast<size_t>(team.size() * per_thread));
    const int64_t blocks_per_head = row_blocks(T);
    split_items(team, H * blocks_per_head, item_grain(T, dk), [&](int ith, int64_t item_begin, int64_t item_end) {
        float* mine = scratch + ith * per_thread;
        HeadOperands head{mine, mine + dk * ldk, ldk};
        float* qb = head.vs + T * dk;
        float* scores = qb + blocks::kRowBlock * dk;
        float* probs = scores + blocks::kRowBlock * ldk;
        float* sums = probs + blocks::kRowBlock * T;
        for (int64_t item = item_begin; item < item_end; ++item) {
            const int64_t h = item / blocks_per_head;
            const int64_t i0 = (item % blocks_per_head) * blocks::kRowBlock;
            const int64_t nr = std::min(blocks::kRowBlock, T - i0);
            const int64_t padded_rows = round_up(nr, blocks::kRowPad);
            if (h != head.head) head.load(kt, k, v, ld, T, dk, h);
            for (int64_t r = 0; r < nr; ++r) std::copy_n(q + (i0 + r) * ld + h * dk, dk, qb + r * dk);
            std::fill(qb + nr * dk, qb + padded_rows * dk, 0.0f);

            kt.attention.local_block_products(qb, padded_rows, dk, head.kT, ldk, 0, T, scores, ldk);
            for (int64_t r = 0; r < nr; ++r) {
                float* s = scores + r * ldk;
                for (int64_t j = 0; j < T; ++j) s[j] *= scale;
                kt.ops.softmax_rows(s, 1, T, probs + r * T);
            }
            kt.attention.rel_pos_weighted_sums(probs, head.vs, dk, T, dk, nr, sums);
            for (int64_t r = 0; r < nr; ++r) std::copy_n(sums + r * dk, dk, out + (i0 + r) * ldo + h * dk);
        }
    });
}

void attention_int8_bf16(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q, const float* k,
                    const float* v, int64_t ld, int64_t T, int64_t H, int64_t dk, float scale, float* out,
                    int64_t ldo) {
    namespace b = dot_product_int8_bf16;
    // Per thread: the head's packed keys and values, and attend_rows' scratch.
    const int64_t key_words = b::keys_words(T, dk), head_words = key_words + b::values_words(T, dk);
    const int64_t attend_floats = b::attend_scratch_floats(T, dk);
    uint32_t* heads = arena.alloc_array<uint32_t>(static_cast<size_t>(team.size() * head_words));
    float* attend = arena.alloc_array<float>(static_cast<size_t>(team.size() * attend_floats));
    const int64_t blocks_per_head = row_blocks(T);
    split_items(team, H * blocks_per_head, item_grain(T, dk), [&](int ith, int64_t item_begin, int64_t item_end) {
        uint32_t* keys = heads + ith * head_words;
        int64_t loaded = -1;
        for (int64_t item = item_begin; item < item_end; ++item) {
            const int64_t h = item / blocks_per_head;
            const int64_t i0 = (item % blocks_per_head) * blocks::kRowBlock;
            if (h != loaded) kt.attention.int8_bf16_pack_head(k + h * dk, v + h * dk, ld, T, dk, keys, keys + key_words);
            loaded = h;
            kt.attention.int8_bf16_attend_rows(keys, keys + key_words, T, dk, q + i0 * ld + h * dk, ld,
                                          std::min(blocks::kRowBlock, T - i0), scale, attend + ith * attend_floats,
                                          out + i0 * ldo + h * dk, ldo);
        }
    });
}

}  // namespace

bool int8_bf16_attention_available(const KernelTable& kt) {
    return kt.attention.int8_bf16_attend_rows != nullptr && PackedWeights::bf16_available(kt.level);
}

void dot_product_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                           const float* k, const float* v, int64_t ld, int64_t T, int64_t H,
                           int64_t dk, float scale, float* out, int64_t ldo, AttentionProducts products) {
    if (T < 0 || H < 1 || dk < 1 || ld < H * dk || ldo < H * dk)
        throw std::invalid_argument("dot_product_attention: needs T >= 0, H >= 1, dk >= 1 and strides >= H * dk");
    if (products == AttentionProducts::Int8Bf16 && !int8_bf16_attention_available(kt))
        throw std::invalid_argument("dot_product_attention: int8/bf16 products need AVX512_BF16 at the avx512 level");
    if (T == 0) return;
    ArenaScope scope(arena);
    if (products == AttentionProducts::Int8Bf16)
        attention_int8_bf16(kt, team, arena, q, k, v, ld, T, H, dk, scale, out, ldo);
    else
        attention_f32(kt, team, arena, q, k, v, ld, T, H, dk, scale, out, ldo);
}

}  // namespace pk::kernels
