// RUN: cairn-opt %s -o %t.before.mlir
// RUN: cairn-opt %s --cairn-verify-arena -o %t.after.mlir
// RUN: diff %t.before.mlir %t.after.mlir
// RUN: FileCheck %s --input-file %t.after.mlir

// Tests that a sound plan passes and comes out unchanged. The plan uses
// every freedom the verifier allows (times in half-kernels: kernel k reads
// and writes during [2k, 2k + 1)):
//   - a (dead after kernel 1) and c (from kernel 2) share offset 0;
//   - d and e are written in place over the inputs their element-wise
//     kernels read last (c by the relu, m by the sigmoid);
//   - m at 512 starts where d (0-512) ends, at the kernel that reads d;
//   - "never", which no kernel touches, overlaps everything (no bytes used);
//   - "empty" has no bytes and no offset;
//   - the forward pass reuses the training step's bytes (the steps never
//     run at once); its workspace (kernel 7 only) and z (from kernel 8)
//     share offset 0;
//   - y lives until the add reads it, also through y.view;
//   - flat is a view of the persistent input x.
cairn.program "Legal" attributes {arena_bytes = 2560 : i64, batch = 4 : i64, optimizer = "", plan_method = "greedy-by-size", source = "legal.cairn", target = "cuda"} {
  %w = cairn.buffer param "w" at 1280 {init = #cairn.init<uniform, 0.35>} : memref<16x8xf32>
  %x = cairn.buffer input "x" at 1792 : memref<4x2x4xf32>
  %loss = cairn.buffer output "loss" at 2048 : memref<f32>
  %out = cairn.buffer output "output" at 2304 : memref<4x16xf32>
  %empty = cairn.buffer input "empty" : memref<0xf32>
  cairn.step train_step {
    %a = cairn.buffer temp "a" at 0 : memref<256xf32>
    cairn.kernel.fill outs(%a : memref<256xf32>) {n = 256 : i64, value = 1.0 : f64}
    %s = cairn.buffer temp "s" at 1024 : memref<f32>
    cairn.kernel.reduce_sum ins(%a : memref<256xf32>) outs(%s : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
    %c = cairn.buffer temp "c" at 0 : memref<128xf32>
    cairn.kernel.fill outs(%c : memref<128xf32>) {n = 128 : i64, value = 2.0 : f64}
    %d = cairn.buffer temp "d" at 0 in_place(%c : memref<128xf32>) : memref<128xf32>
    cairn.kernel.relu ins(%c : memref<128xf32>) outs(%d : memref<128xf32>) {n = 128 : i64}
    %m = cairn.buffer temp "m" at 512 : memref<128xf32>
    cairn.kernel.mul ins(%d, %s : memref<128xf32>, memref<f32>) outs(%m : memref<128xf32>) {lhs_strides = array<i64: 1>, n = 128 : i64, rhs_strides = array<i64: 0>}
    %e = cairn.buffer temp "e" at 512 in_place(%m : memref<128xf32>) : memref<128xf32>
    cairn.kernel.sigmoid ins(%m : memref<128xf32>) outs(%e : memref<128xf32>) {n = 128 : i64}
    cairn.kernel.reduce_sum ins(%e : memref<128xf32>) outs(%loss : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
    %never = cairn.buffer temp "never" at 0 : memref<512xf32>
  }
  cairn.step forward {
    %flat = cairn.view activation "flat" %x : memref<4x2x4xf32> to memref<4x8xf32>
    %ws = cairn.buffer workspace "ws" at 0 : memref<64xf32>
    %y = cairn.buffer activation "y" at 256 : memref<4x16xf32>
    cairn.kernel.linear ins(%flat, %w, _ : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) workspace(%ws : memref<64xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}
    %yv = cairn.view activation "y.view" %y : memref<4x16xf32> to memref<64xf32>
    %z = cairn.buffer activation "z" at 0 : memref<64xf32>
    cairn.kernel.tanh ins(%yv : memref<64xf32>) outs(%z : memref<64xf32>) {n = 64 : i64}
    cairn.kernel.add ins(%y, %z : memref<4x16xf32>, memref<64xf32>) outs(%out : memref<4x16xf32>) {lhs_strides = array<i64: 16, 1>, n = 64 : i64, rhs_strides = array<i64: 16, 1>}
  }
}

// CHECK-LABEL: cairn.program "Legal" attributes {arena_bytes = 2560 : i64,
// CHECK:         %d = cairn.buffer temp "d" at 0 in_place(%c : memref<128xf32>) : memref<128xf32>
// CHECK:         %e = cairn.buffer temp "e" at 512 in_place(%m : memref<128xf32>) : memref<128xf32>
