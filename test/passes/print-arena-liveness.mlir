// RUN: cairn-opt %s -split-input-file --cairn-print-arena-liveness -o /dev/null | FileCheck %s
// RUN: cairn-opt %s -split-input-file -o %t.before.mlir
// RUN: cairn-opt %s -split-input-file --cairn-print-arena-liveness -o %t.after.mlir > /dev/null
// RUN: diff %t.before.mlir %t.after.mlir

// The liveness the ArenaLiveness analysis computes, printed: the schedule
// (training step, then forward pass), the bytes live at each kernel (each
// buffer rounded up to 256; persistent buffers at every index; an in-place
// output counted from the kernel after the one that writes it, its input
// until then), the first peak, and what is live there, largest first
// (unrounded sizes, intervals of schedule indices). The IR is not changed.

// Tests that the liveness of the program of plan-arena.mlir (before its
// plan) is printed as worked out here.
// Persistent: w 512 + x 256 + loss 256 + output 256 = 1280 at every index.
//   0 fill a          1280 + a 1024                        = 2304
//   1 reduce_sum a    1280 + a 1024 + s 256                = 2560
//   2 fill c          1280 + s 256 + c 512                 = 2048
//   3 relu c -> d     1280 + s 256 + c 512 (d in its bytes) = 2048
//   4 mul d, s -> m   1280 + s 256 + d 512 + m 512         = 2560
//   5 reduce_sum m    1280 + m 512                         = 1792
//   6 linear -> y     1280 + y 256                         = 1536
//   7 relu y          1280 + y 256                         = 1536
// The first of the two peaks is at 1.
cairn.program "Plan" attributes {batch = 4 : i64, optimizer = "", source = "plan.cairn", target = "cpu"} {
  %w = cairn.buffer param "w" {init = #cairn.init<uniform, 0.35>} : memref<16x8xf32>
  %x = cairn.buffer input "x" : memref<4x8xf32>
  %loss = cairn.buffer output "loss" : memref<f32>
  %out = cairn.buffer output "output" : memref<4x16xf32>
  cairn.step train_step {
    %a = cairn.buffer temp "a" : memref<256xf32>
    cairn.kernel.fill outs(%a : memref<256xf32>) {n = 256 : i64, value = 1.0 : f64}
    %s = cairn.buffer temp "s" : memref<f32>
    cairn.kernel.reduce_sum ins(%a : memref<256xf32>) outs(%s : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
    %c = cairn.buffer temp "c" : memref<128xf32>
    cairn.kernel.fill outs(%c : memref<128xf32>) {n = 128 : i64, value = 2.0 : f64}
    %d = cairn.buffer temp "d" in_place(%c : memref<128xf32>) : memref<128xf32>
    cairn.kernel.relu ins(%c : memref<128xf32>) outs(%d : memref<128xf32>) {n = 128 : i64}
    %m = cairn.buffer temp "m" : memref<128xf32>
    cairn.kernel.mul ins(%d, %s : memref<128xf32>, memref<f32>) outs(%m : memref<128xf32>) {lhs_strides = array<i64: 1>, n = 128 : i64, rhs_strides = array<i64: 0>}
    cairn.kernel.reduce_sum ins(%m : memref<128xf32>) outs(%loss : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
  }
  cairn.step forward {
    %y = cairn.buffer activation "y" : memref<4x16xf32>
    cairn.kernel.linear ins(%x, %w, _ : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
    cairn.kernel.relu ins(%y : memref<4x16xf32>) outs(%out : memref<4x16xf32>) {n = 64 : i64}
  }
}

// CHECK:      0 train_step kernel 0: cairn.kernel.fill: 2304 bytes live
// CHECK-NEXT: 1 train_step kernel 1: cairn.kernel.reduce_sum: 2560 bytes live
// CHECK-NEXT: 2 train_step kernel 2: cairn.kernel.fill: 2048 bytes live
// CHECK-NEXT: 3 train_step kernel 3: cairn.kernel.relu: 2048 bytes live
// CHECK-NEXT: 4 train_step kernel 4: cairn.kernel.mul: 2560 bytes live
// CHECK-NEXT: 5 train_step kernel 5: cairn.kernel.reduce_sum: 1792 bytes live
// CHECK-NEXT: 6 forward kernel 0: cairn.kernel.linear: 1536 bytes live
// CHECK-NEXT: 7 forward kernel 1: cairn.kernel.relu: 1536 bytes live
// CHECK-NEXT: peak: 2560 bytes at schedule index 1 (train_step kernel 1: cairn.kernel.reduce_sum)
// CHECK-NEXT:   live: a 1024 bytes temp [0, 1]
// CHECK-NEXT:   live: w 512 bytes param [0, 7]
// CHECK-NEXT:   live: output 256 bytes output [0, 7]
// CHECK-NEXT:   live: x 128 bytes input [0, 7]
// CHECK-NEXT:   live: loss 4 bytes output [0, 7]
// CHECK-NEXT:   live: s 4 bytes temp [1, 4]

// -----

// Tests that at a peak where an in-place output is live, d takes over
// c's bytes after the relu (index 1), so c and d never count twice.
// Persistent: loss 256.
//   0 fill c          256 + c 512             = 768
//   1 relu c -> d     256 + c 512             = 768
//   2 fill e          256 + d 512 + e 512     = 1280
//   3 mul d, e -> m   256 + d + e + m 512     = 1792
//   4 reduce_sum m    256 + m 512             = 768
cairn.program "InPlacePeak" attributes {batch = 1 : i64, optimizer = "", source = "inplacepeak.cairn", target = "cpu"} {
  %loss = cairn.buffer output "loss" : memref<f32>
  cairn.step train_step {
    %c = cairn.buffer temp "c" : memref<128xf32>
    cairn.kernel.fill outs(%c : memref<128xf32>) {n = 128 : i64, value = 1.0 : f64}
    %d = cairn.buffer temp "d" in_place(%c : memref<128xf32>) : memref<128xf32>
    cairn.kernel.relu ins(%c : memref<128xf32>) outs(%d : memref<128xf32>) {n = 128 : i64}
    %e = cairn.buffer temp "e" : memref<128xf32>
    cairn.kernel.fill outs(%e : memref<128xf32>) {n = 128 : i64, value = 2.0 : f64}
    %m = cairn.buffer temp "m" : memref<128xf32>
    cairn.kernel.mul ins(%d, %e : memref<128xf32>, memref<128xf32>) outs(%m : memref<128xf32>) {lhs_strides = array<i64: 1>, n = 128 : i64, rhs_strides = array<i64: 1>}
    cairn.kernel.reduce_sum ins(%m : memref<128xf32>) outs(%loss : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
  }
  cairn.step forward {
  }
}


// CHECK:      0 train_step kernel 0: cairn.kernel.fill: 768 bytes live
// CHECK-NEXT: 1 train_step kernel 1: cairn.kernel.relu: 768 bytes live
// CHECK-NEXT: 2 train_step kernel 2: cairn.kernel.fill: 1280 bytes live
// CHECK-NEXT: 3 train_step kernel 3: cairn.kernel.mul: 1792 bytes live
// CHECK-NEXT: 4 train_step kernel 4: cairn.kernel.reduce_sum: 768 bytes live
// CHECK-NEXT: peak: 1792 bytes at schedule index 3 (train_step kernel 3: cairn.kernel.mul)
// CHECK-NEXT:   live: d 512 bytes temp [1, 3]
// CHECK-NEXT:   live: e 512 bytes temp [2, 3]
// CHECK-NEXT:   live: m 512 bytes temp [3, 4]
// CHECK-NEXT:   live: loss 4 bytes output [0, 4]

// -----

// Tests that a program without kernels has no peak.

cairn.program "Empty" attributes {batch = 1 : i64, optimizer = "", source = "empty.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4xf32>
  cairn.step train_step {
  }
  cairn.step forward {
  }
}

// CHECK:      no kernels
// CHECK-NOT:  peak
