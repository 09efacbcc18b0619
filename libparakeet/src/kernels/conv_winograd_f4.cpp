// The Winograd F(4x4, 3x3) transforms at the scalar level: conv_winograd_f4_body.h's loops
// compiled with this file's flags.
#include "kernels/conv_winograd_f4_body.h"
#include "kernels/kernel_table.h"

namespace pk::kernels {

void add_conv_winograd_f4_scalar(KernelTable& t) {
    t.conv.winograd_f4_input = winograd_f4::input;
    t.conv.winograd_f4_output = winograd_f4::output;
}

}  // namespace pk::kernels
