// The speaker networks' row passes at the scalar level (the baseline ISA's vectors, no FMA):
// ops_rows_body.h's loops compiled with this file's flags.
#include "kernels/kernel_table.h"
#include "kernels/ops_rows_body.h"

namespace pk::kernels {

void add_ops_rows_scalar(KernelTable& t) {
    t.ops.affine_clamp_rows = rows::affine_clamp_rows;
    t.ops.add_clamp = rows::add_clamp;
    t.ops.clamped_sum_rows = rows::clamped_sum_rows;
}

}  // namespace pk::kernels
