// RUN: cairn build %S/Inputs/checkpoint-regions.cairn --emit=mlir --stop-after=recompute | FileCheck %s
// RUN: cairn build %S/Inputs/checkpoint-regions.cairn --emit=mlir --stop-after=recompute | cairn-opt | FileCheck %s
// RUN: cairn build %S/Inputs/checkpoint-regions.cairn --emit=mlir --stop-after=recompute --no-recompute | FileCheck %s --check-prefix=OFF
// RUN: cairn build %S/Inputs/checkpoint-regions.cairn --emit=mlir --stop-after=lower | cairn-opt -cairn-recompute-checkpoints | FileCheck %s
// RUN: cairn build %S/Inputs/checkpoint-regions.cairn --emit=mlir --stop-after=verify | FileCheck %s --check-prefix=PLANNED
// RUN: cairn build %S/Inputs/checkpoint-regions.cairn --emit=mlir --stop-after=lower | cairn-opt -cairn-recompute-checkpoints -cairn-recompute-checkpoints | FileCheck %s --check-prefix=TWICE

// The first region (conv, bn, relu, dropout, reshape, fc1) keeps its input
// (the image) and its output (fc1.linear, which the second region reads);
// everything the backward reads of the rest is computed again.
// CHECK-LABEL: cairn.step train_step
// CHECK:      %conv.conv2d = cairn.buffer activation "conv.conv2d"
// CHECK:      cairn.kernel.conv2d {{.*}}cairn.checkpoint = [[R1:[0-9]+]] : i64
// CHECK:      cairn.kernel.batch_norm_training {{.*}}cairn.checkpoint = [[R1]] : i64
// The running statistics are updated in the forward part, once.
// CHECK:      cairn.kernel.batch_norm_running_update ins(%conv.conv2d,
// CHECK:      %relu = cairn.buffer activation "relu"
// CHECK:      %drop.dropout = cairn.buffer activation "drop.dropout"
// CHECK:      %reshape = cairn.view activation "reshape" %drop.dropout
// CHECK:      %fc1.linear = cairn.buffer saved "fc1.linear"
// CHECK:      %tanh = cairn.buffer saved "tanh"
// CHECK:      cairn.kernel.cross_entropy
// The second region's output (tanh) is kept; fc2's input is the first
// region's output, kept too.
// CHECK:      cairn.kernel.linear_grad_weight ins(%cross_entropy_grad, %tanh
// CHECK:      cairn.kernel.linear_grad_weight ins(%tanh_grad, %fc1.linear
// fc1's weight gradient reads the reshape: the conv (with a workspace of its
// own), bn, relu and dropout (the same stream: the same mask) run again
// right before it, glued there.
// CHECK:      %conv.conv2d.recomputed = cairn.buffer temp "conv.conv2d.recomputed"
// CHECK-NEXT: %conv.workspace.recomputed = cairn.buffer workspace "conv.workspace.recomputed"
// CHECK-NEXT: cairn.kernel.conv2d ins(%image, %conv.weight, %conv.bias {{.*}} outs(%conv.conv2d.recomputed {{.*}} workspace(%conv.workspace.recomputed {{.*}}cairn.before_first_use
// CHECK-NOT:  cairn.checkpoint
// CHECK:      cairn.kernel.batch_norm_training ins(%conv.conv2d.recomputed, {{.*}}cairn.before_first_use
// CHECK-NOT:  batch_norm_running_update
// CHECK:      cairn.kernel.relu ins(%bn.batch_norm.recomputed {{.*}}cairn.before_first_use
// CHECK:      cairn.kernel.dropout ins(%relu.recomputed {{.*}} outs(%drop.dropout.recomputed {{.*}}stream = 0 : i64, cairn.before_first_use
// CHECK-NEXT: %reshape.recomputed = cairn.view temp "reshape.recomputed" %drop.dropout.recomputed
// CHECK-NEXT: cairn.kernel.linear_grad_weight ins(%fc2.linear_grad_input, %reshape.recomputed
// Later readers share the copies.
// CHECK:      cairn.kernel.relu_grad ins(%drop.dropout.1, %relu.recomputed
// CHECK:      cairn.kernel.batch_norm_grad ins(%relu_grad, %conv.conv2d.recomputed,
// CHECK-NOT:  .recomputed =
// CHECK-LABEL: cairn.step forward
// CHECK-NOT:  recomputed

// OFF-NOT: recomputed
// OFF:     %relu = cairn.buffer saved "relu"

// Planned: the schedule keeps every copy after the loss (never hoisted into
// the forward part), and the plan verifies.
// PLANNED-LABEL: cairn.step train_step
// PLANNED:       cairn.kernel.cross_entropy
// PLANNED:       cairn.kernel.conv2d {{.*}}cairn.before_first_use
// PLANNED-LABEL: cairn.step forward

// A second run finds nothing more to recompute.
// TWICE-COUNT-4: .recomputed = cairn.buffer
// TWICE-NOT:     .recomputed.recomputed
