#include "model/request_progress.h"

#include <algorithm>

#include "common/errors.h"

namespace pk {

void RequestProgress::report(double fraction) {
    if (!fn_) return;
    last_ = std::max(last_, std::min(1.0, std::max(0.0, fraction)));
    if (!fn_(last_)) throw Cancelled("cancelled by the progress callback");
}

}  // namespace pk
