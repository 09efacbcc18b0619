// How many compute threads to use when the caller does not say.
#pragma once

namespace pk {

// Number of physical cores (hyper-threads of one core count once), read from Linux sysfs,
// falling back to std::thread::hardware_concurrency(). At least 1.
int physical_core_count();

// The default thread budget: PARAKEET_THREADS when it is set to a positive integer,
// otherwise physical_core_count().
int default_thread_count();

}  // namespace pk
