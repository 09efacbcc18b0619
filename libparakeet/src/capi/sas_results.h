// Utterances as the C ABI hands them out: a malloc'd parakeet_sas_result array, each text its
// own allocation, freed by parakeet_capi_free_sas_results.
#pragma once

#include <vector>

#include "model/sas/speaker_words.h"
#include "parakeet_capi.h"

namespace pk::capi {

// NULL when items is empty. Throws std::bad_alloc (nothing leaks).
parakeet_sas_result* to_c_results(const std::vector<SasItem>& items);

}  // namespace pk::capi
