// The C ABI's decoder numbers (PARAKEET_DECODER_* in parakeet_capi.h) and the model's
// DecoderChoice: the one place that validates them.
#pragma once

#include "model/request_options.h"

namespace pk::capi {

// PARAKEET_DECODER_DEFAULT / _CTC / _TRANSDUCER as a DecoderChoice; throws InvalidArgument for
// any other value.
DecoderChoice decoder_from_int(int decoder);

}  // namespace pk::capi
