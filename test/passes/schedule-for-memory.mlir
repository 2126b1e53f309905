// RUN: cairn-opt %s -split-input-file --cairn-schedule-for-memory | FileCheck %s
// RUN: cairn-opt %s -split-input-file --cairn-schedule-for-memory --cairn-schedule-for-memory | FileCheck %s --check-prefix=TWICE

// The memory-aware order and what the pass records. A step's peak counts
// its own buffers only (persistent ones are the same in any order), each
// rounded up to 256 bytes, live from the kernel that defines it to the last
// kernel that touches it (before in-place).

// Tests that an optimizer update moves to right after its gradient, so the
// gradient dies there, and that the step records the drop.
//
// Per-step buffers of train_step, in the lowered order (kernels 0-4):
//   d               4x16xf32 256 B  fill (0), read by 1 and 2   [0, 2]
//   grad.fc.weight  16x8xf32 512 B  linear_grad_weight (1)      [1, 3]
//   grad.fc.bias    16xf32    64 B  reduce_sum (2)              [2, 4]
// Live bytes: 256, 768, 256+512+256 = 1024, 768, 256: peak_before = 1024.
// The scheduler runs 0 and 1 (nothing frees earlier), then the update of
// fc.weight (3: frees 512, allocates nothing) before the reduce_sum (2:
// frees d's 256 but allocates 256), then 4. Order 0, 1, 3, 2, 4: two
// kernels moved. Lifetimes d [0, 3], grad.fc.weight [1, 2], grad.fc.bias
// [3, 4]; live bytes 256, 768, 768, 512, 256: peak_after = 768.
//
// The forward pass is a chain (one ready kernel at a time): nothing moves.
// fc.linear [0, 1] and relu [1, 2], 256 B each: 256, 512, 256, peak 512.
cairn.program "Sched" attributes {batch = 4 : i64, optimizer = "SGD(lr=0.1)", source = "sched.cairn", target = "cpu"} {
  %fc.weight = cairn.buffer param "fc.weight" : memref<16x8xf32>
  %fc.bias = cairn.buffer param "fc.bias" : memref<16xf32>
  %head.weight = cairn.buffer param "head.weight" : memref<3x16xf32>
  %x = cairn.buffer input "x" : memref<4x8xf32>
  %output = cairn.buffer output "output" : memref<4x3xf32>
  cairn.step train_step {
    %d = cairn.buffer temp "d" : memref<4x16xf32>
    cairn.kernel.fill outs(%d : memref<4x16xf32>) {n = 64 : i64, value = 1.0 : f64}
    %gw = cairn.buffer grad "grad.fc.weight" : memref<16x8xf32>
    cairn.kernel.linear_grad_weight ins(%d, %x : memref<4x16xf32>, memref<4x8xf32>) outs(%gw : memref<16x8xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
    %gb = cairn.buffer grad "grad.fc.bias" : memref<16xf32>
    cairn.kernel.reduce_sum ins(%d : memref<4x16xf32>) outs(%gb : memref<16xf32>) {alpha = 1.0 : f64, reduced = array<i1: true, false>}
    cairn.kernel.sgd_update ins(%fc.weight, %gw, _, _ : memref<16x8xf32>, memref<16x8xf32>) outs(%fc.weight, _ : memref<16x8xf32>) {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.0 : f64, n = 128 : i64, nesterov = false, weight_decay = 0.0 : f64}
    cairn.kernel.sgd_update ins(%fc.bias, %gb, _, _ : memref<16xf32>, memref<16xf32>) outs(%fc.bias, _ : memref<16xf32>) {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.0 : f64, n = 16 : i64, nesterov = false, weight_decay = 0.0 : f64}
  }
  cairn.step forward {
    %y = cairn.buffer activation "fc.linear" : memref<4x16xf32>
    cairn.kernel.linear ins(%x, %fc.weight, %fc.bias : memref<4x8xf32>, memref<16x8xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
    %r = cairn.buffer activation "relu" : memref<4x16xf32>
    cairn.kernel.relu ins(%y : memref<4x16xf32>) outs(%r : memref<4x16xf32>) {n = 64 : i64}
    cairn.kernel.linear ins(%r, %head.weight, _ : memref<4x16xf32>, memref<3x16xf32>) outs(%output : memref<4x3xf32>) {in = 16 : i64, out = 3 : i64, rows = 4 : i64}
  }
}

// CHECK-LABEL: cairn.program "Sched"
// CHECK:         cairn.step train_step attributes {moved_kernels = 2 : i64, peak_after = 768 : i64, peak_before = 1024 : i64} {
// Each declaration moves with the first kernel that touches it.
// CHECK-NEXT:      %d = cairn.buffer temp "d" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.fill outs(%d : memref<4x16xf32>)
// CHECK-NEXT:      %grad.fc.weight = cairn.buffer grad "grad.fc.weight" : memref<16x8xf32>
// CHECK-NEXT:      cairn.kernel.linear_grad_weight ins(%d, %x : memref<4x16xf32>, memref<4x8xf32>) outs(%grad.fc.weight : memref<16x8xf32>)
// CHECK-NEXT:      cairn.kernel.sgd_update ins(%fc.weight, %grad.fc.weight, _, _ : memref<16x8xf32>, memref<16x8xf32>) outs(%fc.weight, _ : memref<16x8xf32>)
// CHECK-NEXT:      %grad.fc.bias = cairn.buffer grad "grad.fc.bias" : memref<16xf32>
// CHECK-NEXT:      cairn.kernel.reduce_sum ins(%d : memref<4x16xf32>) outs(%grad.fc.bias : memref<16xf32>)
// CHECK-NEXT:      cairn.kernel.sgd_update ins(%fc.bias, %grad.fc.bias, _, _ : memref<16xf32>, memref<16xf32>) outs(%fc.bias, _ : memref<16xf32>)
// CHECK-NEXT:    {{^ *}}}{{$}}
// CHECK-NEXT:    cairn.step forward attributes {moved_kernels = 0 : i64, peak_after = 512 : i64, peak_before = 512 : i64} {
// CHECK-NEXT:      %fc.linear = cairn.buffer activation "fc.linear" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.linear ins(%x, %fc.weight, %fc.bias
// CHECK-NEXT:      %relu = cairn.buffer activation "relu" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.relu ins(%fc.linear
// CHECK-NEXT:      cairn.kernel.linear ins(%relu, %head.weight, _
// CHECK-NEXT:    {{^ *}}}{{$}}

// A second run finds the order it left: the peak before is the first run's
// peak after, and nothing moves.
// TWICE-LABEL: cairn.program "Sched"
// TWICE:         cairn.step train_step attributes {moved_kernels = 0 : i64, peak_after = 768 : i64, peak_before = 768 : i64} {
// TWICE:         cairn.step forward attributes {moved_kernels = 0 : i64, peak_after = 512 : i64, peak_before = 512 : i64} {

// -----

// Tests that a new order is kept only when its peak is strictly lower, and
// that an empty step records zeros.
//
// Forward kernels: 0 fill a (256xf32, 1024 B), 1 fill b (64xf32, 256 B,
// never read), 2 reduce_sum a -> s (f32, 256 B), 3 fill big (1024xf32,
// 4096 B), 4 mul big * s -> output. Lifetimes: a [0, 2], b [1, 1],
// s [2, 4], big [3, 4]; live bytes 1024, 1280, 1280, 4352, 4352.
// The scheduler would run 2 before 1 (it frees a's 1024 for s's 256; the
// next case shows it):
// order 0, 2, 1, 3, 4, live bytes 1024, 1280, 512, 4352, 4352. The peak,
// at the mul, is 256 + 4096 = 4352 in both orders, so the lowered order
// stays: moved_kernels = 0, peak_before = peak_after = 4352.

cairn.program "SamePeak" attributes {batch = 1 : i64, optimizer = "", source = "same.cairn", target = "cpu"} {
  %output = cairn.buffer output "output" : memref<1024xf32>
  cairn.step train_step {
  }
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<256xf32>
    cairn.kernel.fill outs(%a : memref<256xf32>) {n = 256 : i64, value = 1.0 : f64}
    %b = cairn.buffer activation "b" : memref<64xf32>
    cairn.kernel.fill outs(%b : memref<64xf32>) {n = 64 : i64, value = 2.0 : f64}
    %s = cairn.buffer activation "s" : memref<f32>
    cairn.kernel.reduce_sum ins(%a : memref<256xf32>) outs(%s : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
    %big = cairn.buffer activation "big" : memref<1024xf32>
    cairn.kernel.fill outs(%big : memref<1024xf32>) {n = 1024 : i64, value = 3.0 : f64}
    cairn.kernel.mul ins(%big, %s : memref<1024xf32>, memref<f32>) outs(%output : memref<1024xf32>) {lhs_strides = array<i64: 1>, n = 1024 : i64, rhs_strides = array<i64: 0>}
  }
}

// CHECK-LABEL: cairn.program "SamePeak"
// CHECK:         cairn.step train_step attributes {moved_kernels = 0 : i64, peak_after = 0 : i64, peak_before = 0 : i64} {
// CHECK-NEXT:    {{^ *}}}{{$}}
// CHECK-NEXT:    cairn.step forward attributes {moved_kernels = 0 : i64, peak_after = 4352 : i64, peak_before = 4352 : i64} {
// CHECK-NEXT:      %a = cairn.buffer activation "a"
// CHECK-NEXT:      cairn.kernel.fill outs(%a
// CHECK-NEXT:      %b = cairn.buffer activation "b"
// CHECK-NEXT:      cairn.kernel.fill outs(%b
// CHECK-NEXT:      %s = cairn.buffer activation "s"
// CHECK-NEXT:      cairn.kernel.reduce_sum ins(%a
// CHECK-NEXT:      %big = cairn.buffer activation "big"
// CHECK-NEXT:      cairn.kernel.fill outs(%big
// CHECK-NEXT:      cairn.kernel.mul ins(%big, %s
// CHECK-NEXT:    {{^ *}}}{{$}}

// -----

// Tests the same program with b 16 times larger (1024xf32, 4096 B): now the
// order that runs the reduce_sum first is kept. Lowered: 1024, a + b =
// 5120, 1280, 4352, 4352. Order 0, 2, 1, 3, 4: 1024, 1280, s + b = 4352,
// 4352, 4352. Two kernels moved, 5120 -> 4352.
cairn.program "BigB" attributes {batch = 1 : i64, optimizer = "", source = "bigb.cairn", target = "cpu"} {
  %output = cairn.buffer output "output" : memref<1024xf32>
  cairn.step train_step {
  }
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<256xf32>
    cairn.kernel.fill outs(%a : memref<256xf32>) {n = 256 : i64, value = 1.0 : f64}
    %b = cairn.buffer activation "b" : memref<1024xf32>
    cairn.kernel.fill outs(%b : memref<1024xf32>) {n = 1024 : i64, value = 2.0 : f64}
    %s = cairn.buffer activation "s" : memref<f32>
    cairn.kernel.reduce_sum ins(%a : memref<256xf32>) outs(%s : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
    %big = cairn.buffer activation "big" : memref<1024xf32>
    cairn.kernel.fill outs(%big : memref<1024xf32>) {n = 1024 : i64, value = 3.0 : f64}
    cairn.kernel.mul ins(%big, %s : memref<1024xf32>, memref<f32>) outs(%output : memref<1024xf32>) {lhs_strides = array<i64: 1>, n = 1024 : i64, rhs_strides = array<i64: 0>}
  }
}

// CHECK-LABEL: cairn.program "BigB"
// CHECK:         cairn.step forward attributes {moved_kernels = 2 : i64, peak_after = 4352 : i64, peak_before = 5120 : i64} {
// CHECK-NEXT:      %a = cairn.buffer activation "a"
// CHECK-NEXT:      cairn.kernel.fill outs(%a
// CHECK-NEXT:      %s = cairn.buffer activation "s"
// CHECK-NEXT:      cairn.kernel.reduce_sum ins(%a
// CHECK-NEXT:      %b = cairn.buffer activation "b"
// CHECK-NEXT:      cairn.kernel.fill outs(%b
// CHECK-NEXT:      %big = cairn.buffer activation "big"
// CHECK-NEXT:      cairn.kernel.fill outs(%big
// CHECK-NEXT:      cairn.kernel.mul ins(%big, %s
// CHECK-NEXT:    {{^ *}}}{{$}}
