// RUN: cairn build %S/../../examples/deep_mlp.cairn --batch 256 --emit=mlir --stop-after=lower | cairn-opt -cairn-choose-recomputation="budget=150000000" | FileCheck %s
// RUN: cairn build %S/../../examples/deep_mlp.cairn --batch 256 --emit=mlir --stop-after=lower | cairn-opt -cairn-choose-recomputation | FileCheck %s --check-prefix=NONE
// RUN: cairn build %S/../../examples/deep_mlp.cairn --batch 256 --emit=mlir --stop-after=lower | cairn-opt -cairn-choose-recomputation="budget=150000000" -cairn-recompute-checkpoints | FileCheck %s --check-prefix=COPIED

// The pass alone: under a budget it only decides, marking forward kernels of
// the training step `cairn.recompute` and recording the budget on the
// program; no kernel is copied yet. deep_mlp at batch 256 plans 161.13 MiB
// as it is, over 150 MB.
// CHECK:       cairn.program "DeepMLP" attributes {{{.*}}cairn.memory_budget = 150000000 : i64
// CHECK-LABEL: cairn.step train_step
// CHECK:       cairn.kernel.linear {{.*}}cairn.recompute
// CHECK-NOT:   before_first_use
// CHECK-LABEL: cairn.step forward
// CHECK-NOT:   cairn.recompute

// No budget: nothing is marked.
// NONE-NOT: cairn.recompute
// NONE-NOT: cairn.memory_budget

// The recompute pass copies what was marked, for the backward.
// COPIED: .recomputed = cairn.buffer temp
// COPIED: cairn.before_first_use
