#include "capi/decoder_number.h"

#include <string>

#include "common/errors.h"
#include "parakeet_capi.h"

namespace pk::capi {

DecoderChoice decoder_from_int(int decoder) {
    switch (decoder) {
        case PARAKEET_DECODER_DEFAULT: return DecoderChoice::Default;
        case PARAKEET_DECODER_CTC: return DecoderChoice::Ctc;
        case PARAKEET_DECODER_TRANSDUCER: return DecoderChoice::Transducer;
        default: break;
    }
    throw InvalidArgument("unknown decoder " + std::to_string(decoder) + " (0 = default, 1 = CTC, 2 = TDT/RNN-T)");
}

}  // namespace pk::capi
