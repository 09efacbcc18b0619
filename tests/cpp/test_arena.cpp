// Arena: alignment, scopes give memory back, growth settles at the high-water mark.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "runtime/arena.h"

namespace {

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % pk::Arena::kAlignment == 0; }

TEST(Arena, AllocationsAreAlignedAndDisjoint) {
    pk::Arena arena;
    arena.reset();
    char* a = static_cast<char*>(arena.alloc(3));
    char* b = static_cast<char*>(arena.alloc(100));
    char* c = static_cast<char*>(arena.alloc(0));
    EXPECT_TRUE(aligned(a) && aligned(b) && aligned(c));
    std::memset(a, 1, 3);
    std::memset(b, 2, 100);
    EXPECT_GE(b - a, 3);
    EXPECT_EQ(a[2], 1);
    EXPECT_GE(arena.used_bytes(), 103u);
}

TEST(Arena, ScopeGivesBackItsAllocations) {
    pk::Arena arena;
    arena.alloc(1000);
    const size_t before = arena.used_bytes();
    void* first_in_scope = nullptr;
    {
        pk::ArenaScope scope(arena);
        first_in_scope = arena.alloc(5000);
        arena.alloc(3 << 20);  // forces a second block
        EXPECT_GT(arena.used_bytes(), before);
    }
    EXPECT_EQ(arena.used_bytes(), before);
    {
        pk::ArenaScope scope(arena);
        EXPECT_EQ(arena.alloc(5000), first_in_scope);  // same memory reused
    }
}

TEST(Arena, GrowsToHighWaterThenStopsAllocating) {
    pk::Arena arena;
    for (int request = 0; request < 3; ++request) {
        arena.reset();
        for (int i = 0; i < 40; ++i) arena.alloc(100000);  // 4 MB in 40 pieces
    }
    EXPECT_GE(arena.high_water_bytes(), 4000000u);
    arena.reset();
    const size_t reserved = arena.reserved_bytes();
    EXPECT_EQ(reserved, arena.high_water_bytes());  // one block of the high-water size
    for (int i = 0; i < 40; ++i) arena.alloc(100000);
    EXPECT_EQ(arena.reserved_bytes(), reserved);  // the steady state allocates nothing new
}

TEST(Arena, RewoundLoopDoesNotGrow) {
    pk::Arena arena;
    arena.reset();
    for (int layer = 0; layer < 100; ++layer) {
        pk::ArenaScope scope(arena);
        arena.alloc(2 << 20);
        arena.alloc(2 << 20);
    }
    EXPECT_LE(arena.high_water_bytes(), size_t{4 << 20} + 128);
    EXPECT_LE(arena.reserved_bytes(), size_t{6 << 20});
}

}  // namespace

TEST(Arena, ReleaseIfAboveGivesBackOnlyLargeArenasAndStartsSmallAgain) {
    pk::Arena arena;
    arena.alloc(3 << 20);
    arena.reset();
    EXPECT_FALSE(arena.release_if_above(8 << 20));  // small: kept for the next request
    EXPECT_GE(arena.reserved_bytes(), size_t{3} << 20);
    arena.alloc(10 << 20);
    EXPECT_TRUE(arena.release_if_above(8 << 20));
    EXPECT_EQ(arena.reserved_bytes(), 0u);
    EXPECT_EQ(arena.used_bytes(), 0u);
    EXPECT_EQ(arena.high_water_bytes(), 0u);
    // The next request grows it from nothing and the next reset settles at that request's size.
    arena.reset();
    void* p = arena.alloc(1 << 20);
    ASSERT_NE(p, nullptr);
    arena.reset();
    EXPECT_LT(arena.reserved_bytes(), size_t{8} << 20);
}
