// The kernel tables (kernels/kernel_table.h): every slot is filled at every level (a slot the
// scalar fill forgot would crash only when first called), each table says its level, and a
// level the CPU lacks is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "isa_levels.h"
#include "kernels/kernel_table.h"

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
    EXPECT_EQ(null_slots(k.attention), 0);
    EXPECT_EQ(null_slots(k.fft), 0);
    // The matmul slots below the VNNI ones are filled everywhere; the VNNI and BF16 ones only
    // at avx512 (matmul_layout.h), where the driver uses them when they are there.
    const int avx512_only = 7;
    EXPECT_EQ(null_slots(k.matmul), level() >= pk::IsaLevel::Avx512 ? 0 : avx512_only);
    EXPECT_EQ(k.matmul.tile_q8_vnni != nullptr, level() >= pk::IsaLevel::Avx512);
}

TEST(KernelTable, RefusesALevelTheCpuLacks) {
    if (pk::cpu_features().supports(pk::IsaLevel::Avx512)) GTEST_SKIP() << "this CPU has every level";
    EXPECT_THROW(pk::kernels::kernel_table(pk::IsaLevel::Avx512), std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(KernelTableLevels);

}  // namespace
