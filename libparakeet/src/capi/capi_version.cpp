#include "parakeet_capi.h"

extern "C" int parakeet_capi_abi_version(void) { return PARAKEET_CAPI_ABI_VERSION; }
