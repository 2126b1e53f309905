// RUN: cairn-opt %s -split-input-file --cairn-write-in-place | FileCheck %s
// RUN: cairn-opt %s -split-input-file --cairn-write-in-place | cairn-opt -split-input-file | FileCheck %s
// RUN: cairn build %S/Inputs/tiny-mlp.cairn --emit=mlir --stop-after=lower | cairn-opt --cairn-write-in-place | FileCheck %s --check-prefix=TINY

// Which element-wise outputs take over the bytes of a dying input
// (`in_place`), and which must not: an input still read later (itself or
// through a view), a persistent input or output, a view, an input of
// another size, a kernel that is not element-wise.

// Tests that a chain of element-wise kernels is written over its dying
// inputs, and where it stops.
//   relu over fc.linear: fc.linear dies at the relu.        in place
//   sigmoid over relu: relu dies there (a chain goes on).    in place
//   tanh over sigmoid: the mul reads sigmoid later.          not
//   softmax over tanh: softmax is not element-wise.          not
//   mul over softmax (first dying input of its size; sigmoid
//     dies there too, but one input is enough).             in place
//   add into output: a persistent output is never in place. not
cairn.program "InPlace" attributes {batch = 4 : i64, optimizer = "", source = "inplace.cairn", target = "cpu"} {
  %w = cairn.buffer param "w" : memref<16x8xf32>
  %bias = cairn.buffer param "bias" : memref<16xf32>
  %x = cairn.buffer input "x" : memref<4x8xf32>
  %out = cairn.buffer output "output" : memref<4x16xf32>
  cairn.step train_step {
  }
  cairn.step forward {
    %y = cairn.buffer activation "fc.linear" : memref<4x16xf32>
    cairn.kernel.linear ins(%x, %w, %bias : memref<4x8xf32>, memref<16x8xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
    %r = cairn.buffer activation "relu" : memref<4x16xf32>
    cairn.kernel.relu ins(%y : memref<4x16xf32>) outs(%r : memref<4x16xf32>) {n = 64 : i64}
    %s = cairn.buffer activation "sigmoid" : memref<4x16xf32>
    cairn.kernel.sigmoid ins(%r : memref<4x16xf32>) outs(%s : memref<4x16xf32>) {n = 64 : i64}
    %t = cairn.buffer activation "tanh" : memref<4x16xf32>
    cairn.kernel.tanh ins(%s : memref<4x16xf32>) outs(%t : memref<4x16xf32>) {n = 64 : i64}
    %sm = cairn.buffer activation "softmax" : memref<4x16xf32>
    cairn.kernel.softmax ins(%t : memref<4x16xf32>) outs(%sm : memref<4x16xf32>) {dim = 16 : i64, inner = 1 : i64, outer = 4 : i64}
    %m = cairn.buffer activation "mul" : memref<4x16xf32>
    cairn.kernel.mul ins(%sm, %s : memref<4x16xf32>, memref<4x16xf32>) outs(%m : memref<4x16xf32>) {lhs_strides = array<i64: 16, 1>, n = 64 : i64, rhs_strides = array<i64: 16, 1>}
    cairn.kernel.add ins(%m, %bias : memref<4x16xf32>, memref<16xf32>) outs(%out : memref<4x16xf32>) {lhs_strides = array<i64: 16, 1>, n = 64 : i64, rhs_strides = array<i64: 0, 1>}
  }
}

// CHECK-LABEL: cairn.program "InPlace"
// CHECK:         cairn.step forward {
// CHECK-NEXT:      %fc.linear = cairn.buffer activation "fc.linear" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.linear
// CHECK-NEXT:      %relu = cairn.buffer activation "relu" in_place(%fc.linear : memref<4x16xf32>) : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.relu ins(%fc.linear : memref<4x16xf32>) outs(%relu : memref<4x16xf32>)
// CHECK-NEXT:      %sigmoid = cairn.buffer activation "sigmoid" in_place(%relu : memref<4x16xf32>) : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.sigmoid ins(%relu : memref<4x16xf32>) outs(%sigmoid : memref<4x16xf32>)
// CHECK-NEXT:      %tanh = cairn.buffer activation "tanh" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.tanh ins(%sigmoid : memref<4x16xf32>) outs(%tanh : memref<4x16xf32>)
// CHECK-NEXT:      %softmax = cairn.buffer activation "softmax" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.softmax ins(%tanh : memref<4x16xf32>) outs(%softmax : memref<4x16xf32>)
// CHECK-NEXT:      %mul = cairn.buffer activation "mul" in_place(%softmax : memref<4x16xf32>) : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.mul ins(%softmax, %sigmoid : memref<4x16xf32>, memref<4x16xf32>) outs(%mul : memref<4x16xf32>)
// CHECK-NEXT:      cairn.kernel.add ins(%mul, %bias : memref<4x16xf32>, memref<16xf32>) outs(%output : memref<4x16xf32>)

// -----

// Tests the inputs that are never written over, and that an in_place the
// input IR claims is recomputed (here dropped: its input is read later).
//   relu of x: a persistent input.                            not
//   sigmoid of a.view: a view (a itself dies there).          not
//   tanh over b: b dies there, viewed by nobody.              in place
//   add of c.view (a view) and row (16 elements, not 64).     not
//   dropout over d: the sub reads d later; the in_place
//     written in the input is dropped.                        not
cairn.program "NotInPlace" attributes {batch = 4 : i64, optimizer = "", source = "notinplace.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4x16xf32>
  %out = cairn.buffer output "output" : memref<4x16xf32>
  cairn.step train_step {
  }
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4x16xf32>
    cairn.kernel.relu ins(%x : memref<4x16xf32>) outs(%a : memref<4x16xf32>) {n = 64 : i64}
    %av = cairn.view activation "a.view" %a : memref<4x16xf32> to memref<64xf32>
    %b = cairn.buffer activation "b" : memref<64xf32>
    cairn.kernel.sigmoid ins(%av : memref<64xf32>) outs(%b : memref<64xf32>) {n = 64 : i64}
    %c = cairn.buffer activation "c" : memref<64xf32>
    cairn.kernel.tanh ins(%b : memref<64xf32>) outs(%c : memref<64xf32>) {n = 64 : i64}
    %cv = cairn.view activation "c.view" %c : memref<64xf32> to memref<4x16xf32>
    %row = cairn.buffer activation "row" : memref<16xf32>
    cairn.kernel.reduce_sum ins(%cv : memref<4x16xf32>) outs(%row : memref<16xf32>) {alpha = 1.0 : f64, reduced = array<i1: true, false>}
    %d = cairn.buffer activation "d" : memref<4x16xf32>
    cairn.kernel.add ins(%cv, %row : memref<4x16xf32>, memref<16xf32>) outs(%d : memref<4x16xf32>) {lhs_strides = array<i64: 16, 1>, n = 64 : i64, rhs_strides = array<i64: 0, 1>}
    %e = cairn.buffer activation "e" in_place(%d : memref<4x16xf32>) : memref<4x16xf32>
    cairn.kernel.dropout ins(%d : memref<4x16xf32>) outs(%e : memref<4x16xf32>) {n = 64 : i64, p = 0.5 : f64, stream = 0 : i64}
    cairn.kernel.sub ins(%e, %d : memref<4x16xf32>, memref<4x16xf32>) outs(%out : memref<4x16xf32>) {lhs_strides = array<i64: 16, 1>, n = 64 : i64, rhs_strides = array<i64: 16, 1>}
  }
}

// CHECK-LABEL: cairn.program "NotInPlace"
// CHECK:         cairn.step forward {
// CHECK-NEXT:      %a = cairn.buffer activation "a" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.relu ins(%x : memref<4x16xf32>) outs(%a : memref<4x16xf32>)
// CHECK-NEXT:      %a.view = cairn.view activation "a.view" %a
// CHECK-NEXT:      %b = cairn.buffer activation "b" : memref<64xf32>
// CHECK-NEXT:      cairn.kernel.sigmoid ins(%a.view : memref<64xf32>) outs(%b : memref<64xf32>)
// CHECK-NEXT:      %c = cairn.buffer activation "c" in_place(%b : memref<64xf32>) : memref<64xf32>
// CHECK-NEXT:      cairn.kernel.tanh ins(%b : memref<64xf32>) outs(%c : memref<64xf32>)
// CHECK-NEXT:      %c.view = cairn.view activation "c.view" %c
// CHECK-NEXT:      %row = cairn.buffer activation "row" : memref<16xf32>
// CHECK-NEXT:      cairn.kernel.reduce_sum
// CHECK-NEXT:      %d = cairn.buffer activation "d" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.add ins(%c.view, %row : memref<4x16xf32>, memref<16xf32>) outs(%d : memref<4x16xf32>)
// CHECK-NEXT:      %e = cairn.buffer activation "e" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.dropout ins(%d : memref<4x16xf32>) outs(%e : memref<4x16xf32>)
// CHECK-NEXT:      cairn.kernel.sub ins(%e, %d : memref<4x16xf32>, memref<4x16xf32>) outs(%output : memref<4x16xf32>)

// -----

// Tests that a buffer lives as long as its views: p dies at the relu by
// its own uses, but the add reads p.view after, so q cannot take p's bytes.
// The add reads two views whose roots die there: views are never written
// over either.
cairn.program "ViewLater" attributes {batch = 4 : i64, optimizer = "", source = "viewlater.cairn", target = "cpu"} {
  %out = cairn.buffer output "output" : memref<16xf32>
  cairn.step train_step {
    %p = cairn.buffer temp "p" : memref<64xf32>
    cairn.kernel.fill outs(%p : memref<64xf32>) {n = 64 : i64, value = 1.0 : f64}
    %pv = cairn.view temp "p.view" %p : memref<64xf32> to memref<4x16xf32>
    %q = cairn.buffer temp "q" : memref<64xf32>
    cairn.kernel.relu ins(%p : memref<64xf32>) outs(%q : memref<64xf32>) {n = 64 : i64}
    %qv = cairn.view temp "q.view" %q : memref<64xf32> to memref<4x16xf32>
    %r = cairn.buffer temp "r" : memref<4x16xf32>
    cairn.kernel.add ins(%pv, %qv : memref<4x16xf32>, memref<4x16xf32>) outs(%r : memref<4x16xf32>) {lhs_strides = array<i64: 16, 1>, n = 64 : i64, rhs_strides = array<i64: 16, 1>}
    cairn.kernel.reduce_sum ins(%r : memref<4x16xf32>) outs(%out : memref<16xf32>) {alpha = 1.0 : f64, reduced = array<i1: true, false>}
  }
  cairn.step forward {
  }
}

// CHECK-LABEL: cairn.program "ViewLater"
// CHECK-NOT:     in_place

// The real thing: in the two-layer perceptron the relu of each step writes
// over its linear's output, and the training step's relu_grad over the
// fc2 input gradient; nothing else.
// TINY:     %relu = cairn.buffer saved "relu" in_place(%fc1.linear : memref<4x16xf32>) : memref<4x16xf32>
// TINY-NOT: in_place
// TINY:     %relu_grad = cairn.buffer temp "relu_grad" in_place(%fc2.linear_grad_input : memref<4x16xf32>) : memref<4x16xf32>
// TINY-NOT: in_place
// TINY:     cairn.step forward
// TINY-NOT: in_place
// TINY:     %relu.1 = cairn.buffer activation "relu.1" in_place(%fc1.linear.1 : memref<4x16xf32>) : memref<4x16xf32>
// TINY-NOT: in_place
