// RUN: cairn-opt %s -split-input-file --cairn-grow-workspaces | FileCheck %s
// RUN: cairn-opt %s -split-input-file --cairn-grow-workspaces --cairn-verify-arena | FileCheck %s

// Tests that a convolution's workspace takes the bytes above it that no
// buffer live at its kernel holds, as spare bytes, up to what oneDNN can use
// (runtime/kernels/ConvLibrary.h: conv2dLibraryWorkspaceBytes), and that the
// arena and every offset stay. The convolution: 2 images of 16 channels,
// 6x6, 16 outputs, 3x3, padding 1. im2col's workspace: 2 images a GEMM, 2 *
// 36 * (144 + 16) = 11520 floats = 46080 bytes. oneDNN's most: 4 * (2 * (16
// * 36 + 16 * 36) + 3 * 16 * 16 * 9) + 65536 = 102400 bytes, 56320 spare.

// Nothing above it but the arena's end, far enough: all that oneDNN can use.
// CHECK-LABEL: cairn.program "Free"
// CHECK-SAME: arena_bytes = 200704
// CHECK: cairn.buffer workspace "conv.workspace" at 18432 spare 56320 : memref<11520xf32>
cairn.program "Free" attributes {arena_bytes = 200704 : i64, batch = 2 : i64, optimizer = "SGD(lr=0.1)", source = "grow.cairn", target = "cpu"} {
  %w = cairn.buffer param "conv.weight" at 0 : memref<16x16x3x3xf32>
  %x = cairn.buffer input "image" at 9216 : memref<2x16x6x6xf32>
  %y = cairn.buffer output "output" at 13824 : memref<2x16x6x6xf32>
  cairn.step forward {
    %ws = cairn.buffer workspace "conv.workspace" at 18432 : memref<11520xf32>
    cairn.kernel.conv2d ins(%x, %w, _ : memref<2x16x6x6xf32>, memref<16x16x3x3xf32>) outs(%y : memref<2x16x6x6xf32>) workspace(%ws : memref<11520xf32>) {shape = array<i64: 2, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 6, 6>, workspace_elements = 11520 : i64}
  }
}

// -----

// A buffer live across the convolution, at 65536, stops it there: 47104
// bytes, 1024 spare.
// CHECK-LABEL: cairn.program "Live"
// CHECK: cairn.buffer workspace "conv.workspace" at 18432 spare 1024 : memref<11520xf32>
cairn.program "Live" attributes {arena_bytes = 200704 : i64, batch = 2 : i64, optimizer = "SGD(lr=0.1)", source = "grow.cairn", target = "cpu"} {
  %w = cairn.buffer param "conv.weight" at 0 : memref<16x16x3x3xf32>
  %x = cairn.buffer input "image" at 9216 : memref<2x16x6x6xf32>
  %y = cairn.buffer output "output" at 13824 : memref<2x16x6x6xf32>
  cairn.step forward {
    %t = cairn.buffer temp "before" at 65536 : memref<64xf32>
    cairn.kernel.fill outs(%t : memref<64xf32>) {n = 64 : i64, value = 0.0 : f64}
    %ws = cairn.buffer workspace "conv.workspace" at 18432 : memref<11520xf32>
    cairn.kernel.conv2d ins(%x, %w, _ : memref<2x16x6x6xf32>, memref<16x16x3x3xf32>) outs(%y : memref<2x16x6x6xf32>) workspace(%ws : memref<11520xf32>) {shape = array<i64: 2, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 6, 6>, workspace_elements = 11520 : i64}
    %u = cairn.buffer temp "after" at 66048 : memref<64xf32>
    cairn.kernel.relu ins(%t : memref<64xf32>) outs(%u : memref<64xf32>) {n = 64 : i64}
  }
}

// -----

// A buffer written only after the convolution does not count: the
// workspace takes its bytes (it is dead at the kernel); a persistent one
// right above does.
// CHECK-LABEL: cairn.program "Later"
// CHECK: cairn.buffer workspace "conv.workspace" at 18432 spare 3584 : memref<11520xf32>
cairn.program "Later" attributes {arena_bytes = 200704 : i64, batch = 2 : i64, optimizer = "SGD(lr=0.1)", source = "grow.cairn", target = "cpu"} {
  %w = cairn.buffer param "conv.weight" at 0 : memref<16x16x3x3xf32>
  %x = cairn.buffer input "image" at 9216 : memref<2x16x6x6xf32>
  %y = cairn.buffer output "output" at 13824 : memref<2x16x6x6xf32>
  %z = cairn.buffer output "other" at 68096 : memref<64xf32>
  cairn.step forward {
    %ws = cairn.buffer workspace "conv.workspace" at 18432 : memref<11520xf32>
    cairn.kernel.conv2d ins(%x, %w, _ : memref<2x16x6x6xf32>, memref<16x16x3x3xf32>) outs(%y : memref<2x16x6x6xf32>) workspace(%ws : memref<11520xf32>) {shape = array<i64: 2, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 6, 6>, workspace_elements = 11520 : i64}
    %u = cairn.buffer temp "after" at 64512 : memref<64xf32>
    cairn.kernel.fill outs(%u : memref<64xf32>) {n = 64 : i64, value = 0.0 : f64}
    cairn.kernel.relu ins(%u : memref<64xf32>) outs(%z : memref<64xf32>) {n = 64 : i64}
  }
}

// -----

// On CUDA, cuDNN's budget stays the im2col rule: nothing spare.
// CHECK-LABEL: cairn.program "Cuda"
// CHECK: cairn.buffer workspace "conv.workspace" at 18432 : memref<11520xf32>
cairn.program "Cuda" attributes {arena_bytes = 200704 : i64, batch = 2 : i64, optimizer = "SGD(lr=0.1)", source = "grow.cairn", target = "cuda"} {
  %w = cairn.buffer param "conv.weight" at 0 : memref<16x16x3x3xf32>
  %x = cairn.buffer input "image" at 9216 : memref<2x16x6x6xf32>
  %y = cairn.buffer output "output" at 13824 : memref<2x16x6x6xf32>
  cairn.step forward {
    %ws = cairn.buffer workspace "conv.workspace" at 18432 : memref<11520xf32>
    cairn.kernel.conv2d ins(%x, %w, _ : memref<2x16x6x6xf32>, memref<16x16x3x3xf32>) outs(%y : memref<2x16x6x6xf32>) workspace(%ws : memref<11520xf32>) {shape = array<i64: 2, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 6, 6>, workspace_elements = 11520 : i64}
  }
}

// -----

// Double convolutions stay on im2col.
// CHECK-LABEL: cairn.program "Double"
// CHECK: cairn.buffer workspace "conv.workspace" at 36864 : memref<11520xf64>
cairn.program "Double" attributes {arena_bytes = 262144 : i64, batch = 2 : i64, optimizer = "SGD(lr=0.1)", source = "grow.cairn", target = "cpu"} {
  %w = cairn.buffer param "conv.weight" at 0 : memref<16x16x3x3xf64>
  %x = cairn.buffer input "image" at 18432 : memref<2x16x6x6xf64>
  %y = cairn.buffer output "output" at 27648 : memref<2x16x6x6xf64>
  cairn.step forward {
    %ws = cairn.buffer workspace "conv.workspace" at 36864 : memref<11520xf64>
    cairn.kernel.conv2d ins(%x, %w, _ : memref<2x16x6x6xf64>, memref<16x16x3x3xf64>) outs(%y : memref<2x16x6x6xf64>) workspace(%ws : memref<11520xf64>) {shape = array<i64: 2, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 6, 6>, workspace_elements = 11520 : i64}
  }
}
