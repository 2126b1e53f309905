// RUN: cairn-opt %s --cairn-plan-arena=reuse=false --cairn-write-in-place | FileCheck %s
// RUN: cairn-opt %s --cairn-plan-arena=reuse=false --cairn-write-in-place --cairn-plan-arena --cairn-verify-arena | FileCheck %s --check-prefix=REPLANNED

// Tests that a pass that changes lifetimes drops a plan made before it: the
// no-reuse plan gives relu's result bytes of its own, and writing it in
// place over its dying input would contradict those offsets. The stale plan
// goes (no offsets, no arena); a new one is consistent and verifies.

// CHECK-LABEL: cairn.program "Stale"
// CHECK-NOT: arena_bytes
// CHECK-NOT: plan_method
// CHECK-NOT: {{ at [0-9]+}}
// CHECK: %r = cairn.buffer activation "r" in_place(%t : memref<64xf32>) : memref<64xf32>

// REPLANNED-LABEL: cairn.program "Stale" attributes {arena_bytes = 768 : i64
// REPLANNED: %t = cairn.buffer activation "t" at [[T:[0-9]+]] : memref<64xf32>
// REPLANNED: %r = cairn.buffer activation "r" at [[T]] in_place(%t : memref<64xf32>) : memref<64xf32>

cairn.program "Stale" attributes {batch = 1 : i64, optimizer = "", source = "s.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<64xf32>
  %y = cairn.buffer output "y" : memref<64xf32>
  cairn.step forward {
    %t = cairn.buffer activation "t" : memref<64xf32>
    cairn.kernel.add ins(%x, %x : memref<64xf32>, memref<64xf32>) outs(%t : memref<64xf32>) {lhs_strides = array<i64: 1>, n = 64 : i64, rhs_strides = array<i64: 1>}
    %r = cairn.buffer activation "r" : memref<64xf32>
    cairn.kernel.relu ins(%t : memref<64xf32>) outs(%r : memref<64xf32>) {n = 64 : i64}
    cairn.kernel.sigmoid ins(%r : memref<64xf32>) outs(%y : memref<64xf32>) {n = 64 : i64}
  }
}
