// The library's environment variables, read here and nowhere else: the rest of the library
// takes options as data (model/load_options.h, the thread budget).
//   PARAKEET_CPU, PARAKEET_ATT_CONTEXT, PARAKEET_Q8_ALL, PARAKEET_Q8_SUBSAMPLING, PARAKEET_BF16:
//     the defaults of the load options (parakeet_capi_load_with's keys override them);
//   PARAKEET_THREADS: the process-wide default thread budget.
#pragma once

#include "model/load_options.h"

namespace pk::capi {

// The load options the environment gives, read afresh at each load. Throws InvalidArgument
// naming the variable for a malformed value.
LoadOptions load_options_from_environment();

// Applies PARAKEET_THREADS (a whole number 1..1024; anything else is ignored) to the default
// thread budget, once per process; every entry point that may create a backend calls it first.
void apply_thread_environment();

}  // namespace pk::capi
