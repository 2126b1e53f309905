// RUN: cairn-opt %s -split-input-file -cairn-fuse-elementwise | FileCheck %s

// Tests that a half linear's float32 round trip through a relu (what
// cairn-compute-half-in-float32 leaves on CUDA, whose half GEMMs stay half)
// folds into the linear's epilogue: the linear writes the narrowing cast's
// half result with relu = true, and the product, its float32 copy and the
// float32 relu have no buffer any more.
// CHECK-LABEL: cairn.step forward
// CHECK-NOT: "fc.linear"
// CHECK-NOT: "widened"
// CHECK-NOT: "relu32"
// CHECK: %[[H:.+]] = cairn.buffer activation "h" : memref<4x8xbf16>
// CHECK-NEXT: cairn.kernel.linear ins(%x, %w, %b : memref<4x8xbf16>, memref<8x8xbf16>, memref<8xbf16>) outs(%[[H]] : memref<4x8xbf16>) {in = 8 : i64, out = 8 : i64, relu = true, rows = 4 : i64}
// CHECK-NEXT: cairn.kernel.cast ins(%[[H]] : memref<4x8xbf16>) outs(%output : memref<4x8xf32>)
// CHECK-NOT: cairn.kernel.relu
module attributes {cairn.batch = 4 : i64, cairn.model = "Half"} {
  cairn.program "Half" attributes {batch = 4 : i64, optimizer = "SGD(lr=0.1)", source = "half.cairn", target = "cuda"} {
    %x = cairn.buffer input "x" : memref<4x8xbf16>
    %w = cairn.buffer input "w" : memref<8x8xbf16>
    %b = cairn.buffer input "b" : memref<8xbf16>
    %output = cairn.buffer output "output" : memref<4x8xf32>
    cairn.step forward {
      %fc.linear = cairn.buffer activation "fc.linear" : memref<4x8xbf16>
      cairn.kernel.linear ins(%x, %w, %b : memref<4x8xbf16>, memref<8x8xbf16>, memref<8xbf16>) outs(%fc.linear : memref<4x8xbf16>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
      %widened = cairn.buffer activation "widened" : memref<4x8xf32>
      cairn.kernel.cast ins(%fc.linear : memref<4x8xbf16>) outs(%widened : memref<4x8xf32>) {n = 32 : i64}
      %relu32 = cairn.buffer activation "relu32" : memref<4x8xf32>
      cairn.kernel.relu ins(%widened : memref<4x8xf32>) outs(%relu32 : memref<4x8xf32>) {n = 32 : i64}
      %h = cairn.buffer activation "h" : memref<4x8xbf16>
      cairn.kernel.cast ins(%relu32 : memref<4x8xf32>) outs(%h : memref<4x8xbf16>) {n = 32 : i64}
      cairn.kernel.cast ins(%h : memref<4x8xbf16>) outs(%output : memref<4x8xf32>) {n = 32 : i64}
    }
  }
}

// -----

// Tests that the round trip does not fold when the float32 relu is read by
// another kernel besides the narrowing cast (its float32 values are needed).
// CHECK-LABEL: cairn.step forward
// CHECK: cairn.kernel.linear {{.*}}outs(%fc.linear : memref<4x8xbf16>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
// CHECK: cairn.kernel.relu ins(%widened : memref<4x8xf32>) outs(%relu32 : memref<4x8xf32>)
module attributes {cairn.batch = 4 : i64, cairn.model = "Half"} {
  cairn.program "Half" attributes {batch = 4 : i64, optimizer = "SGD(lr=0.1)", source = "half.cairn", target = "cuda"} {
    %x = cairn.buffer input "x" : memref<4x8xbf16>
    %w = cairn.buffer input "w" : memref<8x8xbf16>
    %b = cairn.buffer input "b" : memref<8xbf16>
    %output = cairn.buffer output "output" : memref<4x8xbf16>
    %sum = cairn.buffer output "sum" : memref<4x8xf32>
    cairn.step forward {
      %fc.linear = cairn.buffer activation "fc.linear" : memref<4x8xbf16>
      cairn.kernel.linear ins(%x, %w, %b : memref<4x8xbf16>, memref<8x8xbf16>, memref<8xbf16>) outs(%fc.linear : memref<4x8xbf16>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
      %widened = cairn.buffer activation "widened" : memref<4x8xf32>
      cairn.kernel.cast ins(%fc.linear : memref<4x8xbf16>) outs(%widened : memref<4x8xf32>) {n = 32 : i64}
      %relu32 = cairn.buffer activation "relu32" : memref<4x8xf32>
      cairn.kernel.relu ins(%widened : memref<4x8xf32>) outs(%relu32 : memref<4x8xf32>) {n = 32 : i64}
      cairn.kernel.cast ins(%relu32 : memref<4x8xf32>) outs(%output : memref<4x8xbf16>) {n = 32 : i64}
      cairn.kernel.sigmoid ins(%relu32 : memref<4x8xf32>) outs(%sum : memref<4x8xf32>) {n = 32 : i64}
    }
  }
}

// -----

// Tests the CPU's shape of the same relu: a half linear (halfGemm, in its
// float32 workspace) and a relu on half storage. The relu reads the half
// product directly, as in float32, and folds: the linear writes the relu's
// result with relu = true, and the product has no buffer any more.
// CHECK-LABEL: cairn.step forward
// CHECK-NOT: "fc.linear"
// CHECK: cairn.kernel.linear ins(%x, %w, %b : memref<4x8xbf16>, memref<8x8xbf16>, memref<8xbf16>) outs(%output : memref<4x8xbf16>) workspace(%ws : memref<224xbf16>) {in = 8 : i64, out = 8 : i64, relu = true, rows = 4 : i64, workspace_bytes = 448 : i64}
// CHECK-NOT: cairn.kernel.relu
module attributes {cairn.batch = 4 : i64, cairn.model = "Half"} {
  cairn.program "Half" attributes {batch = 4 : i64, optimizer = "SGD(lr=0.1)", source = "half.cairn", target = "cpu"} {
    %x = cairn.buffer input "x" : memref<4x8xbf16>
    %w = cairn.buffer input "w" : memref<8x8xbf16>
    %b = cairn.buffer input "b" : memref<8xbf16>
    %output = cairn.buffer output "output" : memref<4x8xbf16>
    cairn.step forward {
      %ws = cairn.buffer workspace "ws" : memref<224xbf16>
      %fc.linear = cairn.buffer activation "fc.linear" : memref<4x8xbf16>
      cairn.kernel.linear ins(%x, %w, %b : memref<4x8xbf16>, memref<8x8xbf16>, memref<8xbf16>) outs(%fc.linear : memref<4x8xbf16>) workspace(%ws : memref<224xbf16>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64, workspace_bytes = 448 : i64}
      cairn.kernel.relu ins(%fc.linear : memref<4x8xbf16>) outs(%output : memref<4x8xbf16>) {n = 32 : i64}
    }
  }
}

// -----

// Tests that the CPU's shape does not fold when the half product is read by
// another kernel besides the relu (its values before the relu are needed),
// and that a relu on half storage starts no element-wise chain (a chain
// computes in its buffers' type): the relu and the sigmoid after it stay.
// CHECK-LABEL: cairn.step forward
// CHECK: cairn.kernel.linear {{.*}}outs(%fc.linear : memref<4x8xbf16>) workspace(%ws : memref<224xbf16>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64, workspace_bytes = 448 : i64}
// CHECK: cairn.kernel.relu ins(%fc.linear : memref<4x8xbf16>) outs(%h : memref<4x8xbf16>)
// CHECK-NEXT: cairn.kernel.sigmoid ins(%h : memref<4x8xbf16>) outs(%output : memref<4x8xbf16>)
// CHECK-NOT: elementwise_chain
module attributes {cairn.batch = 4 : i64, cairn.model = "Half"} {
  cairn.program "Half" attributes {batch = 4 : i64, optimizer = "SGD(lr=0.1)", source = "half.cairn", target = "cpu"} {
    %x = cairn.buffer input "x" : memref<4x8xbf16>
    %w = cairn.buffer input "w" : memref<8x8xbf16>
    %b = cairn.buffer input "b" : memref<8xbf16>
    %output = cairn.buffer output "output" : memref<4x8xbf16>
    %copy = cairn.buffer output "copy" : memref<4x8xf32>
    cairn.step forward {
      %ws = cairn.buffer workspace "ws" : memref<224xbf16>
      %fc.linear = cairn.buffer activation "fc.linear" : memref<4x8xbf16>
      cairn.kernel.linear ins(%x, %w, %b : memref<4x8xbf16>, memref<8x8xbf16>, memref<8xbf16>) outs(%fc.linear : memref<4x8xbf16>) workspace(%ws : memref<224xbf16>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64, workspace_bytes = 448 : i64}
      %h = cairn.buffer activation "h" : memref<4x8xbf16>
      cairn.kernel.relu ins(%fc.linear : memref<4x8xbf16>) outs(%h : memref<4x8xbf16>) {n = 32 : i64}
      cairn.kernel.sigmoid ins(%h : memref<4x8xbf16>) outs(%output : memref<4x8xbf16>) {n = 32 : i64}
      cairn.kernel.cast ins(%fc.linear : memref<4x8xbf16>) outs(%copy : memref<4x8xf32>) {n = 32 : i64}
    }
  }
}
