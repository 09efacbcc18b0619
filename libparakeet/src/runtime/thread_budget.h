// How many compute threads to use when the caller does not say.
#pragma once

namespace pk {

// Number of physical cores (hyper-threads of one core count once), read from Linux sysfs,
// falling back to std::thread::hardware_concurrency(). At least 1.
int physical_core_count();

// The process-wide default thread budget: what set_default_thread_count() last set (the C ABI
// sets PARAKEET_THREADS there), otherwise physical_core_count(). Thread-safe.
int default_thread_count();

// Sets the default thread budget (n >= 1; n <= 0 goes back to physical_core_count()). Backends
// created afterwards use it; the process-wide backend, if it already exists, keeps its team.
void set_default_thread_count(int n);

}  // namespace pk
