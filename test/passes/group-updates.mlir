// RUN: cairn-opt %s -split-input-file -cairn-group-updates | FileCheck %s
// RUN: cairn-opt %s -split-input-file -cairn-group-updates | cairn-opt -split-input-file | FileCheck %s
// RUN: cairn-opt %s -split-input-file -cairn-group-updates -cairn-schedule-for-memory | FileCheck %s --check-prefix=REORDERED
// RUN: cairn build %S/Inputs/tiny-mlp.cairn --target cuda --emit=mlir --stop-after=schedule --no-reorder | FileCheck %s --check-prefix=TINY
// RUN: cairn build %S/Inputs/tiny-mlp.cairn --emit=mlir --stop-after=schedule --no-reorder | FileCheck %s --check-prefix=TINY-CPU

// Tests which updates one CUDA launch runs: a run of adjacent updates of one
// kind and settings is marked on its first kernel. p and q share lr 0.1; r's
// lr is 0.2, so it starts a run of its own, which the relu between r and s
// ends there: neither r nor s is marked.

// CHECK-LABEL: cairn.step train_step
// CHECK:      cairn.kernel.sgd_update ins(%p, {{.*}}lr = 1.000000e-01 : f64{{.*}}cairn.update_group = 2 : i64}
// CHECK-NEXT: cairn.kernel.sgd_update ins(%q,
// CHECK-NOT:  update_group
// CHECK-NEXT: cairn.kernel.sgd_update ins(%r,
// CHECK-NEXT: cairn.kernel.relu
// CHECK-NEXT: cairn.kernel.sgd_update ins(%s,
// CHECK-NOT:  update_group

// A pass that reorders the step drops the marks: the runs may be runs no
// more (the schedule moves each update right after its gradient).
// REORDERED-LABEL: cairn.step train_step
// REORDERED-NOT: update_group

// The pipeline marks the runs for CUDA only, once the order is final: with
// --no-reorder the tiny MLP's four updates end the step, one launch.
// TINY: cairn.kernel.sgd_update {{.*}}cairn.update_group = 4 : i64}
// TINY-CPU-NOT: update_group

cairn.program "Updates" attributes {batch = 4 : i64, optimizer = "", source = "updates.cairn", target = "cuda"} {
  %p = cairn.buffer param "p" : memref<8xf32>
  %q = cairn.buffer param "q" : memref<8xf32>
  %r = cairn.buffer param "r" : memref<8xf32>
  %s = cairn.buffer param "s" : memref<8xf32>
  %out = cairn.buffer output "out" : memref<8xf32>
  cairn.step train_step {
    %grad.p = cairn.buffer grad "grad.p" : memref<8xf32>
    cairn.kernel.fill outs(%grad.p : memref<8xf32>) {n = 8 : i64, value = 1.000000e+00 : f64}
    %grad.q = cairn.buffer grad "grad.q" : memref<8xf32>
    cairn.kernel.fill outs(%grad.q : memref<8xf32>) {n = 8 : i64, value = 1.000000e+00 : f64}
    %grad.r = cairn.buffer grad "grad.r" : memref<8xf32>
    cairn.kernel.fill outs(%grad.r : memref<8xf32>) {n = 8 : i64, value = 1.000000e+00 : f64}
    %grad.s = cairn.buffer grad "grad.s" : memref<8xf32>
    cairn.kernel.fill outs(%grad.s : memref<8xf32>) {n = 8 : i64, value = 1.000000e+00 : f64}
    cairn.kernel.sgd_update ins(%p, %grad.p, _, _ : memref<8xf32>, memref<8xf32>) outs(%p, _ : memref<8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    cairn.kernel.sgd_update ins(%q, %grad.q, _, _ : memref<8xf32>, memref<8xf32>) outs(%q, _ : memref<8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    cairn.kernel.sgd_update ins(%r, %grad.r, _, _ : memref<8xf32>, memref<8xf32>) outs(%r, _ : memref<8xf32>) {dampening = 0.000000e+00 : f64, lr = 2.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    cairn.kernel.relu ins(%p : memref<8xf32>) outs(%out : memref<8xf32>) {n = 8 : i64}
    cairn.kernel.sgd_update ins(%s, %grad.s, _, _ : memref<8xf32>, memref<8xf32>) outs(%s, _ : memref<8xf32>) {dampening = 0.000000e+00 : f64, lr = 2.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
  }
}
