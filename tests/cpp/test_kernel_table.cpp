// The kernel tables (kernels/kernel_table.h): every slot is filled at every level (a slot the
// scalar fill forgot would crash only when first called), each table says its level, and a
// level the CPU lacks is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "isa_levels.h"
#include "kernels/kernel_table.h"
#include "kernels/matmul_layout.h"

namespace {

using pk::kernels::KernelTable;

class KernelTableLevels : public isa_test::LevelTest {};

// Counts the null slots of a family struct, which holds nothing but function pointers.
template <class Family>
int null_slots(const Family& f) {
    using Slot = void (*)();
    static_assert(sizeof(Family) % sizeof(Slot) == 0, "a family struct holds function pointers only");
    Slot slots[sizeof(Family) / sizeof(Slot)];
    std::memcpy(slots, &f, sizeof f);
    int nulls = 0;
    for (Slot s : slots) nulls += s == nullptr;
    return nulls;
}

TEST_P(KernelTableLevels, EverySlotIsFilled) {
    const KernelTable& k = kernels();
    EXPECT_EQ(k.level, level());
    EXPECT_EQ(null_slots(k.ops), 0);
    EXPECT_EQ(null_slots(k.conv), 0);
    EXPECT_EQ(null_slots(k.fft), 0);
    // The matmul slots below the VNNI ones are filled everywhere; the VNNI ones (3) only where
    // Q8_0 is packed in quads (avx512, dotprod, i8mm; matmul_layout.h), the BF16 ones (4) and the
    // two-panel tiles (2) only at avx512, and the driver uses them when they are there.
    const bool quads = pk::kernels::matmul_detail::q8_uses_quads(level());
    const bool avx512 = pk::isa_includes(level(), pk::IsaLevel::Avx512);
    EXPECT_EQ(null_slots(k.matmul), (quads ? 0 : 3) + (avx512 ? 0 : 4 + 2));
    EXPECT_EQ(k.matmul.tile_q8_vnni != nullptr, quads);
    EXPECT_EQ(k.matmul.tile_q8_vnni_pair != nullptr, avx512);
    EXPECT_EQ(k.matmul.tile_f32_pair != nullptr, avx512);
    // The attention's bf16 kernels (2) are there only at avx512, like the BF16 matmul's.
    EXPECT_EQ(null_slots(k.attention), avx512 ? 0 : 2);
}

// The i8mm level runs its own SMMLA integer kernels (matmul_kernels_i8mm.cpp,
// matmul_kquant_i8mm.cpp), not the dotprod level's inherited ones; with the level-by-level
// equality tests of test_kernel_matmul_q8_0 / _kquant this is what shows the SMMLA code ran.
TEST(KernelTable, I8mmHasItsOwnIntegerKernels) {
    if (!pk::cpu_features().supports(pk::IsaLevel::I8mm)) GTEST_SKIP() << "this CPU has no i8mm level";
    const auto& i8mm = pk::kernels::kernel_table(pk::IsaLevel::I8mm).matmul;
    const auto& dotprod = pk::kernels::kernel_table(pk::IsaLevel::Dotprod).matmul;
    EXPECT_NE(i8mm.tile_q8_vnni, dotprod.tile_q8_vnni);
    EXPECT_NE(i8mm.matvec_q8_vnni, dotprod.matvec_q8_vnni);
    EXPECT_NE(i8mm.tile_kq, dotprod.tile_kq);
    EXPECT_NE(i8mm.decode_kq_units, dotprod.decode_kq_units);
    EXPECT_EQ(i8mm.quantize_q8_vnni, dotprod.quantize_q8_vnni);
    EXPECT_TRUE(pk::kernels::matmul_detail::q8_uses_mmla(pk::IsaLevel::I8mm));
    EXPECT_FALSE(pk::kernels::matmul_detail::q8_uses_mmla(pk::IsaLevel::Dotprod));
}

TEST(KernelTable, RefusesALevelTheCpuLacks) {
    const pk::IsaLevel top = isa_test::all_levels().back();
    if (pk::cpu_features().supports(top)) GTEST_SKIP() << "this CPU has every level";
    EXPECT_THROW(pk::kernels::kernel_table(top), std::invalid_argument);
}

// The other architecture's levels are neither above nor below this one's.
TEST(KernelTable, RefusesTheOtherArchitecturesLevels) {
    for (pk::IsaLevel l : {pk::IsaLevel::Avx2, pk::IsaLevel::Avx512, pk::IsaLevel::Neon,
                           pk::IsaLevel::Dotprod, pk::IsaLevel::I8mm}) {
        const auto& mine = isa_test::all_levels();
        if (std::find(mine.begin(), mine.end(), l) != mine.end()) continue;
        EXPECT_FALSE(pk::cpu_features().supports(l)) << pk::isa_level_name(l);
        EXPECT_THROW(pk::kernels::kernel_table(l), std::invalid_argument) << pk::isa_level_name(l);
    }
}

// The levels' order: scalar under everything, each chain ordered, the chains apart.
TEST(KernelTable, LevelOrder) {
    using pk::IsaLevel;
    using pk::isa_includes;
    EXPECT_TRUE(isa_includes(IsaLevel::Neon, IsaLevel::Scalar));
    EXPECT_TRUE(isa_includes(IsaLevel::Avx2, IsaLevel::Scalar));
    EXPECT_TRUE(isa_includes(IsaLevel::I8mm, IsaLevel::Dotprod));
    EXPECT_TRUE(isa_includes(IsaLevel::Dotprod, IsaLevel::Neon));
    EXPECT_TRUE(isa_includes(IsaLevel::Avx512, IsaLevel::Avx2));
    EXPECT_TRUE(isa_includes(IsaLevel::Dotprod, IsaLevel::Dotprod));
    EXPECT_FALSE(isa_includes(IsaLevel::Neon, IsaLevel::Dotprod));
    EXPECT_FALSE(isa_includes(IsaLevel::Scalar, IsaLevel::Neon));
    EXPECT_FALSE(isa_includes(IsaLevel::Neon, IsaLevel::Avx2));
    EXPECT_FALSE(isa_includes(IsaLevel::I8mm, IsaLevel::Avx512));
    EXPECT_FALSE(isa_includes(IsaLevel::Avx512, IsaLevel::Neon));
}

INSTANTIATE_ISA_LEVELS(KernelTableLevels);

}  // namespace
