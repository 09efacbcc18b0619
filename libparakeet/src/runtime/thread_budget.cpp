#include "runtime/thread_budget.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace pk {
namespace {

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
    if (const char* v = std::getenv("PARAKEET_THREADS")) {
        char* end = nullptr;
        const long n = std::strtol(v, &end, 10);
        if (end != v && *end == '\0' && n > 0 && n <= 1024) return static_cast<int>(n);
    }
    return physical_core_count();
}

}  // namespace pk
