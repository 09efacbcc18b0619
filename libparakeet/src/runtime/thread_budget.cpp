#include "runtime/thread_budget.h"

#include <atomic>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace pk {
namespace {

std::atomic<int> g_default_threads{0};  // 0: physical_core_count()

bool read_int(const std::string& path, int& out) {
    std::ifstream in(path);
    return static_cast<bool>(in >> out);
}

int count_physical_cores_sysfs() {
    // Distinct (package, core) pairs over the online CPUs.
    std::set<std::pair<int, int>> cores;
    for (int cpu = 0; cpu < 4096; ++cpu) {
        const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        int core = 0, package = 0;
        if (!read_int(base + "core_id", core)) {
            if (cpu == 0) return 0;
            break;
        }
        read_int(base + "physical_package_id", package);
        cores.emplace(package, core);
    }
    return static_cast<int>(cores.size());
}

}  // namespace

int physical_core_count() {
    static const int n = [] {
        int cores = count_physical_cores_sysfs();
        if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
        return cores > 0 ? cores : 1;
    }();
    return n;
}

int default_thread_count() {
    const int n = g_default_threads.load(std::memory_order_relaxed);
    return n > 0 ? n : physical_core_count();
}

void set_default_thread_count(int n) { g_default_threads.store(n > 0 ? n : 0, std::memory_order_relaxed); }

}  // namespace pk
