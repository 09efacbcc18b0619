// The Winograd F(2x2, 3x3) transforms at the avx512 level: conv_winograd_f2_body.h's loops
// compiled with this file's flags.
#include "kernels/conv_winograd_f2_body.h"
#include "kernels/kernel_table.h"

namespace pk::kernels {

void add_conv_winograd_f2_avx512(KernelTable& t) {
    t.conv.winograd_f2_input = winograd_f2::input;
    t.conv.winograd_f2_output = winograd_f2::output;
}

}  // namespace pk::kernels
