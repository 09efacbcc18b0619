// Every ISA level in one process: kernel and parity tests are parameterised over all levels of
// the build's architecture (scalar, avx2, avx512 on x86-64; scalar, neon, dotprod, i8mm on
// AArch64) and check each one on its own against the test's reference; a level
// this CPU lacks is skipped with the reason printed, so a run shows what it covered.
//
//   class KernelFoo : public isa_test::LevelTest {};
//   TEST_P(KernelFoo, Bar) { ... kernels() ... level() ... }
//   INSTANTIATE_ISA_LEVELS(KernelFoo);
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/kernel_table.h"
#include "model/load_options.h"
#include "runtime/cpu_features.h"

namespace isa_test {

// Every level of the build's architecture, lowest first.
inline const std::vector<pk::IsaLevel>& all_levels() { return pk::isa_levels_of_build(); }

// For tests that are not about the levels: the CPU's highest level, at which a model loads by
// default, and its kernels.
inline pk::IsaLevel highest_level() { return pk::cpu_features().detected; }
inline const pk::kernels::KernelTable& highest_kernels() {
    return pk::kernels::kernel_table(highest_level());
}

// Load options that run a model at `level`.
inline pk::LoadOptions load_options_at(pk::IsaLevel level) {
    pk::LoadOptions o;
    o.isa = level;
    return o;
}

// PARAKEET_TEST_LEVELS narrows a run to some levels: "highest" (the CPU's) or a comma-separated
// list of level names; unset or empty, every level the CPU has. The ThreadSanitizer run of
// .ci/run sets "highest": the races it looks for live in the runtime and model code that every
// level shares, and the plain run covers each level (docs/ci.md).
inline bool selected_by_environment(pk::IsaLevel level) {
    const char* v = std::getenv("PARAKEET_TEST_LEVELS");
    if (v == nullptr || *v == '\0') return true;
    const std::string list = std::string(",") + v + ",";
    if (list == ",highest,") return level == highest_level();
    return list.find(std::string(",") + pk::isa_level_name(level) + ",") != std::string::npos;
}

// Why `level` is skipped here (empty when it runs).
inline std::string missing_reason(pk::IsaLevel level) {
    if (!pk::cpu_features().supports(level))
        return std::string("this CPU has no ") + pk::isa_level_name(level) + " level (its highest is " +
               pk::isa_level_name(pk::cpu_features().detected) + ")";
    if (!selected_by_environment(level))
        return std::string("PARAKEET_TEST_LEVELS=") + std::getenv("PARAKEET_TEST_LEVELS") + " leaves it out";
    return "";
}

// Why a test that compares `levels` with each other is skipped here (empty when it runs).
inline std::string missing_reason(std::initializer_list<pk::IsaLevel> levels) {
    for (pk::IsaLevel l : levels)
        if (std::string why = missing_reason(l); !why.empty()) return why;
    return "";
}

// A test parameterised by level; levels the CPU lacks are skipped.
class LevelTest : public testing::TestWithParam<pk::IsaLevel> {
protected:
    void SetUp() override {
        const std::string why = missing_reason(GetParam());
        if (!why.empty()) GTEST_SKIP() << why;
    }
    pk::IsaLevel level() const { return GetParam(); }
    const pk::kernels::KernelTable& kernels() const { return pk::kernels::kernel_table(GetParam()); }
};

inline std::string level_name(const testing::TestParamInfo<pk::IsaLevel>& info) {
    return pk::isa_level_name(info.param);
}

// For a test that covers every level inside one TEST (the parity tests, whose parameters are
// fixtures): runs body(level) for each level this CPU has, under a trace naming the level, and
// prints the levels it lacks.
template <class Body>
void for_each_level(Body&& body) {
    for (pk::IsaLevel l : all_levels()) {
        const std::string why = missing_reason(l);
        if (!why.empty()) {
            std::printf("[  SKIPPED ] %s: %s\n", pk::isa_level_name(l), why.c_str());
            continue;
        }
        SCOPED_TRACE(std::string("at the ") + pk::isa_level_name(l) + " level");
        body(l);
    }
}

}  // namespace isa_test

// Runs every TEST_P of `Suite` once per level, named .../scalar, .../avx2, .../avx512 (or
// .../neon, .../dotprod, .../i8mm).
#define INSTANTIATE_ISA_LEVELS(Suite) \
    INSTANTIATE_TEST_SUITE_P(Isa, Suite, ::testing::ValuesIn(isa_test::all_levels()), \
                             isa_test::level_name)
