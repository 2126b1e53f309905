// RUN: cairn-opt %s -split-input-file --cairn-recompute-checkpoints | FileCheck %s

// How a marked kernel is copied when another copy is computed from it.
// Forward: a = relu(x), b = relu(a), the output relu(b); both a and b are
// marked. The backward reads b first (g1), then, later, a (g3).

// Tests that without `cairn.recompute_per_use` the copy of a computed for
// b's copy is the one g3 reads: made at g1, it lives until g3.
cairn.program "Shared" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<16xf32>
  %output = cairn.buffer output "output" : memref<16xf32>
  cairn.step train_step {
    %a = cairn.buffer saved "a" : memref<16xf32>
    cairn.kernel.relu ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) {cairn.recompute, n = 16 : i64}
    %b = cairn.buffer saved "b" : memref<16xf32>
    cairn.kernel.relu ins(%a : memref<16xf32>) outs(%b : memref<16xf32>) {cairn.recompute, n = 16 : i64}
    cairn.kernel.relu ins(%b : memref<16xf32>) outs(%output : memref<16xf32>) {n = 16 : i64}
    %g0 = cairn.buffer temp "g0" : memref<16xf32>
    cairn.kernel.fill outs(%g0 : memref<16xf32>) {n = 16 : i64, value = 1.0 : f64}
    %g1 = cairn.buffer temp "g1" : memref<16xf32>
    cairn.kernel.relu_grad ins(%g0, %b : memref<16xf32>, memref<16xf32>) outs(%g1 : memref<16xf32>) {n = 16 : i64}
    %g2 = cairn.buffer temp "g2" : memref<16xf32>
    cairn.kernel.relu ins(%g1 : memref<16xf32>) outs(%g2 : memref<16xf32>) {n = 16 : i64}
    %g3 = cairn.buffer temp "g3" : memref<16xf32>
    cairn.kernel.relu_grad ins(%g2, %a : memref<16xf32>, memref<16xf32>) outs(%g3 : memref<16xf32>) {n = 16 : i64}
  }
}

// CHECK-LABEL: cairn.program "Shared"
// CHECK:       %a.recomputed = cairn.buffer temp "a.recomputed"
// CHECK-NEXT:  cairn.kernel.relu ins(%x {{.*}} outs(%a.recomputed {{.*}}cairn.before_first_use
// CHECK-NEXT:  %b.recomputed = cairn.buffer temp "b.recomputed"
// CHECK-NEXT:  cairn.kernel.relu ins(%a.recomputed {{.*}} outs(%b.recomputed {{.*}}cairn.before_first_use
// CHECK-NEXT:  cairn.kernel.relu_grad ins(%g0, %b.recomputed
// CHECK:       cairn.kernel.relu_grad ins(%g2, %a.recomputed
// CHECK-NOT:   recomputed.2

// -----

// Tests that with it, a is computed for b's copy alone (dead after it),
// and again right before g3, which reads a copy of its own: each copy is
// named apart, and the marks leave the copies.
cairn.program "PerUse" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<16xf32>
  %output = cairn.buffer output "output" : memref<16xf32>
  cairn.step train_step {
    %a = cairn.buffer saved "a" : memref<16xf32>
    cairn.kernel.relu ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) {cairn.recompute, cairn.recompute_per_use, n = 16 : i64}
    %b = cairn.buffer saved "b" : memref<16xf32>
    cairn.kernel.relu ins(%a : memref<16xf32>) outs(%b : memref<16xf32>) {cairn.recompute, n = 16 : i64}
    cairn.kernel.relu ins(%b : memref<16xf32>) outs(%output : memref<16xf32>) {n = 16 : i64}
    %g0 = cairn.buffer temp "g0" : memref<16xf32>
    cairn.kernel.fill outs(%g0 : memref<16xf32>) {n = 16 : i64, value = 1.0 : f64}
    %g1 = cairn.buffer temp "g1" : memref<16xf32>
    cairn.kernel.relu_grad ins(%g0, %b : memref<16xf32>, memref<16xf32>) outs(%g1 : memref<16xf32>) {n = 16 : i64}
    %g2 = cairn.buffer temp "g2" : memref<16xf32>
    cairn.kernel.relu ins(%g1 : memref<16xf32>) outs(%g2 : memref<16xf32>) {n = 16 : i64}
    %g3 = cairn.buffer temp "g3" : memref<16xf32>
    cairn.kernel.relu_grad ins(%g2, %a : memref<16xf32>, memref<16xf32>) outs(%g3 : memref<16xf32>) {n = 16 : i64}
  }
}

// CHECK-LABEL: cairn.program "PerUse"
// CHECK:       %a = cairn.buffer activation "a"
// CHECK:       cairn.kernel.relu ins(%x {{.*}}cairn.recompute, cairn.recompute_per_use
// CHECK:       %a.recomputed = cairn.buffer temp "a.recomputed"
// CHECK-NEXT:  cairn.kernel.relu ins(%x {{.*}} outs(%a.recomputed {{.*}} {n = 16 : i64, cairn.before_first_use}
// CHECK-NEXT:  %b.recomputed = cairn.buffer temp "b.recomputed"
// CHECK-NEXT:  cairn.kernel.relu ins(%a.recomputed {{.*}} outs(%b.recomputed
// CHECK-NEXT:  cairn.kernel.relu_grad ins(%g0, %b.recomputed
// CHECK:       %a.recomputed.2 = cairn.buffer temp "a.recomputed.2"
// CHECK-NEXT:  cairn.kernel.relu ins(%x {{.*}} outs(%a.recomputed.2 {{.*}}cairn.before_first_use
// CHECK-NEXT:  cairn.kernel.relu_grad ins(%g2, %a.recomputed.2
// CHECK-NOT:   recompute_per_use
