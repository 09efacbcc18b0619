#include "model/speaker/band_workers.h"

namespace pk::speaker {

BandWorker& this_threads_band_worker() {
    thread_local BandWorker worker;
    return worker;
}

}  // namespace pk::speaker
