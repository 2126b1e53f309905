// RUN: cairn-opt %s -split-input-file -cairn-fuse-elementwise | FileCheck %s
// RUN: cairn-opt %s -split-input-file -cairn-fuse-elementwise=max-ops=2 | FileCheck %s --check-prefix=MAX2
// RUN: cairn-opt %s -split-input-file -cairn-fuse-elementwise=max-inputs=2 | FileCheck %s --check-prefix=INPUTS2

// Tests that element-wise chains become one kernel before the plan and a relu
// folds into its linear. The program is `cairn build --emit=mlir
// --stop-after=lower` of
//   h = relu(fc(flatten(image, 1)));  y = sigmoid(h * 2.0 + x);  head(y)
// In the training step relu's result and sigmoid's are saved for the
// backward pass, so only what nothing else reads fuses: the linear writes
// relu's result (fc.linear is gone), mul and add feed sigmoid (their
// results are gone; the fill of 2.0 runs first and is a scalar input), and
// the backward chain sigmoid_grad, mul, relu_grad is one kernel.

// CHECK-LABEL: cairn.step train_step
// CHECK-NOT: "fc.linear"
// CHECK: %[[RELU:.+]] = cairn.buffer saved "relu" : memref<4x8xf32>
// CHECK-NEXT: cairn.kernel.linear ins(%{{.+}}, %fc.weight, %fc.bias : {{.*}}) outs(%[[RELU]] : memref<4x8xf32>) {in = 8 : i64, out = 8 : i64, relu = true, rows = 4 : i64}
// CHECK-NEXT: %[[SCALAR:.+]] = cairn.buffer saved "constant" : memref<f32>
// CHECK-NEXT: cairn.kernel.fill outs(%[[SCALAR]] : memref<f32>) {n = 1 : i64, value = 2.000000e+00 : f64}
// CHECK-NEXT: %[[SIG:.+]] = cairn.buffer saved "sigmoid" : memref<4x8xf32>
// Registers: 0 relu, 1 the scalar 2.0, 2 x; 3 = 0 * 1, 4 = 3 + 2, 5 = sigmoid(4).
// CHECK-NEXT: cairn.kernel.elementwise_chain ins(%[[RELU]], %[[SCALAR]], %[[X:.+]] : memref<4x8xf32>, memref<f32>, memref<4x8xf32>) outs(%[[SIG]] : memref<4x8xf32>) {args = array<i64: 0, 1, 3, 2, 4, -1>, n = 32 : i64, ops = ["mul", "add", "sigmoid"]}
// CHECK-NOT: cairn.kernel.mul
// CHECK-NOT: cairn.kernel.add
// CHECK: %[[DH:.+]] = cairn.buffer temp "head.linear_grad_input"
// Registers: 0 dy, 1 sigmoid's result, 2 the scalar 2.0, 3 relu's result;
// 4 = sigmoid_grad(0, 1), 5 = 4 * 2, 6 = relu_grad(5, 3).
// CHECK: cairn.kernel.elementwise_chain ins(%[[DH]], %[[SIG]], %[[SCALAR]], %[[RELU]] : {{.*}}) outs(%{{.+}} : memref<4x8xf32>) {args = array<i64: 0, 1, 4, 2, 5, 3>, n = 32 : i64, ops = ["sigmoid_grad", "mul", "relu_grad"]}
// CHECK-LABEL: cairn.step forward
// CHECK: cairn.kernel.linear {{.*}}relu = true
// CHECK: cairn.kernel.elementwise_chain {{.*}}ops = ["mul", "add", "sigmoid"]
// CHECK-NEXT: cairn.kernel.linear {{.*}}outs(%output

// With max-ops=2 the chains stop at two ops: mul and add fuse, sigmoid runs
// alone.
// MAX2-LABEL: cairn.step train_step
// MAX2: cairn.kernel.elementwise_chain {{.*}}ops = ["mul", "add"]
// MAX2-NEXT: %[[S:.+]] = cairn.buffer saved "sigmoid"
// MAX2-NEXT: cairn.kernel.sigmoid

// With max-inputs=2 mul (relu, the scalar) stops before add would read a
// third buffer (x): mul runs alone, add and sigmoid fuse.
// INPUTS2-LABEL: cairn.step train_step
// INPUTS2: cairn.kernel.mul ins(%relu, %constant
// INPUTS2: cairn.kernel.elementwise_chain ins(%mul, %reshape : {{.*}}) {{.*}}ops = ["add", "sigmoid"]

module attributes {cairn.batch = 4 : i64, cairn.model = "Fuse", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  cairn.program "Fuse" attributes {batch = 4 : i64, optimizer = "SGD(lr=0.1, momentum=0, dampening=0, weight_decay=0, nesterov=False)", source = "fuse.cairn", target = "cpu"} {
    %fc.weight = cairn.buffer param "fc.weight" {init = #cairn.init<uniform, 0.35355339059327373>} : memref<8x8xf32>
    %fc.bias = cairn.buffer param "fc.bias" {init = #cairn.init<uniform, 0.35355339059327373>} : memref<8xf32>
    %head.weight = cairn.buffer param "head.weight" {init = #cairn.init<uniform, 0.35355339059327373>} : memref<3x8xf32>
    %head.bias = cairn.buffer param "head.bias" {init = #cairn.init<uniform, 0.35355339059327373>} : memref<3xf32>
    %image = cairn.buffer input "image" : memref<4x1x2x4xf32>
    %label = cairn.buffer input "label" : memref<4xi64>
    %loss = cairn.buffer output "loss" : memref<f32>
    %output = cairn.buffer output "output" : memref<4x3xf32>
    cairn.step train_step {
      %reshape = cairn.view activation "reshape" %image : memref<4x1x2x4xf32> to memref<4x8xf32>
      %fc.linear = cairn.buffer activation "fc.linear" : memref<4x8xf32>
      cairn.kernel.linear ins(%reshape, %fc.weight, %fc.bias : memref<4x8xf32>, memref<8x8xf32>, memref<8xf32>) outs(%fc.linear : memref<4x8xf32>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
      %relu = cairn.buffer saved "relu" : memref<4x8xf32>
      cairn.kernel.relu ins(%fc.linear : memref<4x8xf32>) outs(%relu : memref<4x8xf32>) {n = 32 : i64}
      %constant = cairn.buffer saved "constant" : memref<f32>
      cairn.kernel.fill outs(%constant : memref<f32>) {n = 1 : i64, value = 2.000000e+00 : f64}
      %mul = cairn.buffer activation "mul" : memref<4x8xf32>
      cairn.kernel.mul ins(%relu, %constant : memref<4x8xf32>, memref<f32>) outs(%mul : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 0, 0>}
      %add = cairn.buffer activation "add" : memref<4x8xf32>
      cairn.kernel.add ins(%mul, %reshape : memref<4x8xf32>, memref<4x8xf32>) outs(%add : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
      %sigmoid = cairn.buffer saved "sigmoid" : memref<4x8xf32>
      cairn.kernel.sigmoid ins(%add : memref<4x8xf32>) outs(%sigmoid : memref<4x8xf32>) {n = 32 : i64}
      %head.linear = cairn.buffer saved "head.linear" : memref<4x3xf32>
      cairn.kernel.linear ins(%sigmoid, %head.weight, %head.bias : memref<4x8xf32>, memref<3x8xf32>, memref<3xf32>) outs(%head.linear : memref<4x3xf32>) {in = 8 : i64, out = 3 : i64, rows = 4 : i64}
      cairn.kernel.cross_entropy ins(%head.linear, %label : memref<4x3xf32>, memref<4xi64>) outs(%loss : memref<f32>) {classes = 3 : i64, label_smoothing = 0.000000e+00 : f64, rows = 4 : i64}
      %constant.1 = cairn.buffer temp "constant.1" : memref<f32>
      cairn.kernel.fill outs(%constant.1 : memref<f32>) {n = 1 : i64, value = 1.000000e+00 : f64}
      %cross_entropy_grad = cairn.buffer temp "cross_entropy_grad" : memref<4x3xf32>
      cairn.kernel.cross_entropy_grad ins(%constant.1, %head.linear, %label : memref<f32>, memref<4x3xf32>, memref<4xi64>) outs(%cross_entropy_grad : memref<4x3xf32>) {classes = 3 : i64, label_smoothing = 0.000000e+00 : f64, rows = 4 : i64}
      %head.linear_grad_input = cairn.buffer temp "head.linear_grad_input" : memref<4x8xf32>
      cairn.kernel.linear_grad_input ins(%cross_entropy_grad, %head.weight : memref<4x3xf32>, memref<3x8xf32>) outs(%head.linear_grad_input : memref<4x8xf32>) {in = 8 : i64, out = 3 : i64, rows = 4 : i64}
      %grad.head.weight = cairn.buffer grad "grad.head.weight" : memref<3x8xf32>
      cairn.kernel.linear_grad_weight ins(%cross_entropy_grad, %sigmoid : memref<4x3xf32>, memref<4x8xf32>) outs(%grad.head.weight : memref<3x8xf32>) {in = 8 : i64, out = 3 : i64, rows = 4 : i64}
      %grad.head.bias = cairn.buffer grad "grad.head.bias" : memref<3xf32>
      cairn.kernel.reduce_sum ins(%cross_entropy_grad : memref<4x3xf32>) outs(%grad.head.bias : memref<3xf32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, false>}
      %sigmoid_grad = cairn.buffer temp "sigmoid_grad" : memref<4x8xf32>
      cairn.kernel.sigmoid_grad ins(%head.linear_grad_input, %sigmoid : memref<4x8xf32>, memref<4x8xf32>) outs(%sigmoid_grad : memref<4x8xf32>) {n = 32 : i64}
      %mul.1 = cairn.buffer temp "mul.1" : memref<4x8xf32>
      cairn.kernel.mul ins(%sigmoid_grad, %constant : memref<4x8xf32>, memref<f32>) outs(%mul.1 : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 0, 0>}
      %relu_grad = cairn.buffer temp "relu_grad" : memref<4x8xf32>
      cairn.kernel.relu_grad ins(%mul.1, %relu : memref<4x8xf32>, memref<4x8xf32>) outs(%relu_grad : memref<4x8xf32>) {n = 32 : i64}
      %grad.fc.weight = cairn.buffer grad "grad.fc.weight" : memref<8x8xf32>
      cairn.kernel.linear_grad_weight ins(%relu_grad, %reshape : memref<4x8xf32>, memref<4x8xf32>) outs(%grad.fc.weight : memref<8x8xf32>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
      %grad.fc.bias = cairn.buffer grad "grad.fc.bias" : memref<8xf32>
      cairn.kernel.reduce_sum ins(%relu_grad : memref<4x8xf32>) outs(%grad.fc.bias : memref<8xf32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, false>}
      cairn.kernel.sgd_update ins(%fc.weight, %grad.fc.weight, _, _ : memref<8x8xf32>, memref<8x8xf32>) outs(%fc.weight, _ : memref<8x8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 64 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
      cairn.kernel.sgd_update ins(%fc.bias, %grad.fc.bias, _, _ : memref<8xf32>, memref<8xf32>) outs(%fc.bias, _ : memref<8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
      cairn.kernel.sgd_update ins(%head.weight, %grad.head.weight, _, _ : memref<3x8xf32>, memref<3x8xf32>) outs(%head.weight, _ : memref<3x8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 24 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
      cairn.kernel.sgd_update ins(%head.bias, %grad.head.bias, _, _ : memref<3xf32>, memref<3xf32>) outs(%head.bias, _ : memref<3xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 3 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    }
    cairn.step forward {
      %reshape.1 = cairn.view activation "reshape.1" %image : memref<4x1x2x4xf32> to memref<4x8xf32>
      %fc.linear.1 = cairn.buffer activation "fc.linear.1" : memref<4x8xf32>
      cairn.kernel.linear ins(%reshape.1, %fc.weight, %fc.bias : memref<4x8xf32>, memref<8x8xf32>, memref<8xf32>) outs(%fc.linear.1 : memref<4x8xf32>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
      %relu.1 = cairn.buffer activation "relu.1" : memref<4x8xf32>
      cairn.kernel.relu ins(%fc.linear.1 : memref<4x8xf32>) outs(%relu.1 : memref<4x8xf32>) {n = 32 : i64}
      %constant.2 = cairn.buffer activation "constant.2" : memref<f32>
      cairn.kernel.fill outs(%constant.2 : memref<f32>) {n = 1 : i64, value = 2.000000e+00 : f64}
      %mul.2 = cairn.buffer activation "mul.2" : memref<4x8xf32>
      cairn.kernel.mul ins(%relu.1, %constant.2 : memref<4x8xf32>, memref<f32>) outs(%mul.2 : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 0, 0>}
      %add.1 = cairn.buffer activation "add.1" : memref<4x8xf32>
      cairn.kernel.add ins(%mul.2, %reshape.1 : memref<4x8xf32>, memref<4x8xf32>) outs(%add.1 : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
      %sigmoid.1 = cairn.buffer activation "sigmoid.1" : memref<4x8xf32>
      cairn.kernel.sigmoid ins(%add.1 : memref<4x8xf32>) outs(%sigmoid.1 : memref<4x8xf32>) {n = 32 : i64}
      cairn.kernel.linear ins(%sigmoid.1, %head.weight, %head.bias : memref<4x8xf32>, memref<3x8xf32>, memref<3xf32>) outs(%output : memref<4x3xf32>) {in = 8 : i64, out = 3 : i64, rows = 4 : i64}
    }
  }
}


// -----

// Tests what does not fuse: an intermediate two kernels read (%t, read by
// relu and by sigmoid), a result the runtime reads by name (the gradient
// %grad.w, though only mul reads it after), and an operand broadcast by
// strides (%row, [8] over [4, 8]). relu and sigmoid of %t each stay a kernel
// of their own; nothing here becomes a chain.

// CHECK-LABEL: cairn.program "NoFusion"
// CHECK-NOT: elementwise_chain
// CHECK: cairn.kernel.add ins(%x, %x
// CHECK: cairn.kernel.relu ins(%t
// CHECK: cairn.kernel.sigmoid ins(%t
// CHECK: cairn.kernel.add ins(%x, %row
// CHECK: cairn.kernel.relu ins(%b
// CHECK: cairn.kernel.relu ins(%x
// CHECK: cairn.kernel.mul ins(%grad.w
// CHECK-NOT: elementwise_chain
cairn.program "NoFusion" attributes {batch = 4 : i64, optimizer = "", source = "nofusion.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4x8xf32>
  %row = cairn.buffer param "row" : memref<8xf32>
  %w = cairn.buffer param "w" : memref<8x8xf32>
  %out = cairn.buffer output "out" : memref<4x8xf32>
  cairn.step train_step {
    %t = cairn.buffer activation "t" : memref<4x8xf32>
    cairn.kernel.add ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%t : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    %r = cairn.buffer activation "r" : memref<4x8xf32>
    cairn.kernel.relu ins(%t : memref<4x8xf32>) outs(%r : memref<4x8xf32>) {n = 32 : i64}
    %s = cairn.buffer activation "s" : memref<4x8xf32>
    cairn.kernel.sigmoid ins(%t : memref<4x8xf32>) outs(%s : memref<4x8xf32>) {n = 32 : i64}
    %b = cairn.buffer activation "b" : memref<4x8xf32>
    cairn.kernel.add ins(%x, %row : memref<4x8xf32>, memref<8xf32>) outs(%b : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 0, 1>}
    %c = cairn.buffer activation "c" : memref<4x8xf32>
    cairn.kernel.relu ins(%b : memref<4x8xf32>) outs(%c : memref<4x8xf32>) {n = 32 : i64}
    %grad.w = cairn.buffer grad "grad.w" : memref<4x8xf32>
    cairn.kernel.relu ins(%x : memref<4x8xf32>) outs(%grad.w : memref<4x8xf32>) {n = 32 : i64}
    cairn.kernel.mul ins(%grad.w, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
  }
}

// -----

// Tests chains whose members are not next to each other in the list. The
// chain runs where its last member was, so a kernel in between may produce
// a later member's input (the linear writing %v, as the backward's gradient
// sum feeds a relu_grad), but none may write what an earlier member reads
// (the update writing %p before relu would read p * x). Glued kernels
// (cairn.before_first_use) fuse only with glued ones, and the chain stays
// glued.

// CHECK-LABEL: cairn.program "Apart"
// CHECK: %[[V:.+]] = cairn.buffer activation "v"
// CHECK-NEXT: cairn.kernel.linear ins(%x, %w, _ : {{.*}}) outs(%[[V]] : memref<4x8xf32>)
// CHECK-NEXT: cairn.kernel.elementwise_chain ins(%x, %[[V]] : memref<4x8xf32>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {args = array<i64: 0, 0, 2, 1>, n = 32 : i64, ops = ["add", "add"]}
// CHECK: %[[PX:.+]] = cairn.buffer activation "px"
// CHECK-NEXT: cairn.kernel.mul ins(%p, %x
// CHECK: cairn.kernel.sgd_update
// CHECK-NEXT: cairn.kernel.relu ins(%[[PX]]
// CHECK: cairn.kernel.add ins(%x, %x {{.*}}) outs(%[[E:[^ ]+]] {{.*}}) {{{.*}}lhs_strides
// CHECK-NEXT: %[[G:.+]] = cairn.buffer activation "g"
// CHECK-NEXT: cairn.kernel.relu ins(%[[E]] {{.*}}) {n = 32 : i64, cairn.before_first_use}
// CHECK-NEXT: cairn.kernel.elementwise_chain ins(%x : memref<4x8xf32>) outs(%out3 : memref<4x8xf32>) {args = array<i64: 0, -1, 1, -1>, n = 32 : i64, ops = ["tanh", "sigmoid"], cairn.before_first_use}
// CHECK-NEXT: cairn.kernel.add ins(%[[G]], %x
// CHECK-NOT: elementwise_chain
cairn.program "Apart" attributes {batch = 4 : i64, optimizer = "", source = "apart.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4x8xf32>
  %w = cairn.buffer param "w" : memref<8x8xf32>
  %p = cairn.buffer param "p" : memref<4x8xf32>
  %out = cairn.buffer output "out" : memref<4x8xf32>
  %out2 = cairn.buffer output "out2" : memref<4x8xf32>
  %out3 = cairn.buffer output "out3" : memref<4x8xf32>
  %out4 = cairn.buffer output "out4" : memref<4x8xf32>
  cairn.step train_step {
    %u = cairn.buffer activation "u" : memref<4x8xf32>
    cairn.kernel.add ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%u : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    %v = cairn.buffer activation "v" : memref<4x8xf32>
    cairn.kernel.linear ins(%x, %w, _ : memref<4x8xf32>, memref<8x8xf32>) outs(%v : memref<4x8xf32>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
    cairn.kernel.add ins(%u, %v : memref<4x8xf32>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    %px = cairn.buffer activation "px" : memref<4x8xf32>
    cairn.kernel.mul ins(%p, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%px : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    %grad.p = cairn.buffer grad "grad.p" : memref<4x8xf32>
    cairn.kernel.fill outs(%grad.p : memref<4x8xf32>) {n = 32 : i64, value = 1.000000e+00 : f64}
    cairn.kernel.sgd_update ins(%p, %grad.p, _, _ : memref<4x8xf32>, memref<4x8xf32>) outs(%p, _ : memref<4x8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 32 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    cairn.kernel.relu ins(%px : memref<4x8xf32>) outs(%out2 : memref<4x8xf32>) {n = 32 : i64}
    %e = cairn.buffer activation "e" : memref<4x8xf32>
    cairn.kernel.add ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%e : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    %g = cairn.buffer activation "g" : memref<4x8xf32>
    cairn.kernel.relu ins(%e : memref<4x8xf32>) outs(%g : memref<4x8xf32>) {cairn.before_first_use, n = 32 : i64}
    %h = cairn.buffer activation "h" : memref<4x8xf32>
    cairn.kernel.tanh ins(%x : memref<4x8xf32>) outs(%h : memref<4x8xf32>) {cairn.before_first_use, n = 32 : i64}
    cairn.kernel.sigmoid ins(%h : memref<4x8xf32>) outs(%out3 : memref<4x8xf32>) {cairn.before_first_use, n = 32 : i64}
    cairn.kernel.add ins(%g, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%out4 : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
  }
}

// -----

// Tests that a chain does not grow across a gap when that would hold more
// bytes there than the intermediate it removes: the sum of micro-batch
// gradients, g0 + g1 then + g2 after g2's kernel, stays two adds (one chain
// would keep g0 and g1, two buffers, until g2 is made, where s1 takes one).
// Where g1 is read after the gap anyway, only g0 would be held longer, no
// more than s1: that chain fuses.

// CHECK-LABEL: cairn.program "Accumulate"
// CHECK: cairn.kernel.add ins(%g0, %g1 {{.*}}) outs(%s1
// CHECK: cairn.kernel.fill outs(%g2
// CHECK-NEXT: cairn.kernel.add ins(%s1, %g2 {{.*}}) outs(%out
// CHECK-NOT: elementwise_chain
// CHECK-LABEL: cairn.program "AccumulateReadLater"
// CHECK: cairn.kernel.fill outs(%g2
// CHECK-NEXT: cairn.kernel.elementwise_chain ins(%g0, %g1, %g2 {{.*}}) outs(%out {{.*}}) {{{.*}}ops = ["add", "add"]}
// CHECK-NEXT: cairn.kernel.relu ins(%g1
cairn.program "Accumulate" attributes {batch = 4 : i64, optimizer = "", source = "accumulate.cairn", target = "cpu"} {
  %out = cairn.buffer output "out" : memref<4x8xf32>
  cairn.step train_step {
    %g0 = cairn.buffer temp "g0" : memref<4x8xf32>
    cairn.kernel.fill outs(%g0 : memref<4x8xf32>) {n = 32 : i64, value = 1.000000e+00 : f64}
    %g1 = cairn.buffer temp "g1" : memref<4x8xf32>
    cairn.kernel.fill outs(%g1 : memref<4x8xf32>) {n = 32 : i64, value = 2.000000e+00 : f64}
    %s1 = cairn.buffer temp "s1" : memref<4x8xf32>
    cairn.kernel.add ins(%g0, %g1 : memref<4x8xf32>, memref<4x8xf32>) outs(%s1 : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    %g2 = cairn.buffer temp "g2" : memref<4x8xf32>
    cairn.kernel.fill outs(%g2 : memref<4x8xf32>) {n = 32 : i64, value = 3.000000e+00 : f64}
    cairn.kernel.add ins(%s1, %g2 : memref<4x8xf32>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
  }
}
cairn.program "AccumulateReadLater" attributes {batch = 4 : i64, optimizer = "", source = "accumulate.cairn", target = "cpu"} {
  %out = cairn.buffer output "out" : memref<4x8xf32>
  %out2 = cairn.buffer output "out2" : memref<4x8xf32>
  cairn.step train_step {
    %g0 = cairn.buffer temp "g0" : memref<4x8xf32>
    cairn.kernel.fill outs(%g0 : memref<4x8xf32>) {n = 32 : i64, value = 1.000000e+00 : f64}
    %g1 = cairn.buffer temp "g1" : memref<4x8xf32>
    cairn.kernel.fill outs(%g1 : memref<4x8xf32>) {n = 32 : i64, value = 2.000000e+00 : f64}
    %s1 = cairn.buffer temp "s1" : memref<4x8xf32>
    cairn.kernel.add ins(%g0, %g1 : memref<4x8xf32>, memref<4x8xf32>) outs(%s1 : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    %g2 = cairn.buffer temp "g2" : memref<4x8xf32>
    cairn.kernel.fill outs(%g2 : memref<4x8xf32>) {n = 32 : i64, value = 3.000000e+00 : f64}
    cairn.kernel.add ins(%s1, %g2 : memref<4x8xf32>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    cairn.kernel.relu ins(%g1 : memref<4x8xf32>) outs(%out2 : memref<4x8xf32>) {n = 32 : i64}
  }
}

// -----

// Tests intermediates read through views. A reshape between two members is
// the intermediate's other name: the chain takes it in, and the view goes
// with the buffer. A view the runtime reads by name (an output) keeps its
// buffer, so that chain stops before the reader.

// CHECK-LABEL: cairn.program "Views"
// CHECK-NOT: cairn.view activation "flat"
// CHECK: cairn.kernel.elementwise_chain ins(%x : memref<4x8xf32>) outs(%out : memref<32xf32>) {args = array<i64: 0, 0, 1, -1>, n = 32 : i64, ops = ["add", "tanh"]}
// CHECK: %[[S:.+]] = cairn.buffer activation "s"
// CHECK-NEXT: cairn.kernel.sigmoid ins(%x {{.*}}) outs(%[[S]] :
// CHECK-NEXT: %[[SEEN:.+]] = cairn.view output "seen" %[[S]]
// CHECK-NEXT: cairn.kernel.relu ins(%[[SEEN]]
// CHECK-NOT: elementwise_chain
cairn.program "Views" attributes {batch = 4 : i64, optimizer = "", source = "views.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4x8xf32>
  %out = cairn.buffer output "out" : memref<32xf32>
  %out2 = cairn.buffer output "out2" : memref<32xf32>
  cairn.step train_step {
    %t = cairn.buffer activation "t" : memref<4x8xf32>
    cairn.kernel.add ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%t : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
    %flat = cairn.view activation "flat" %t : memref<4x8xf32> to memref<32xf32>
    cairn.kernel.tanh ins(%flat : memref<32xf32>) outs(%out : memref<32xf32>) {n = 32 : i64}
    %s = cairn.buffer activation "s" : memref<4x8xf32>
    cairn.kernel.sigmoid ins(%x : memref<4x8xf32>) outs(%s : memref<4x8xf32>) {n = 32 : i64}
    %seen = cairn.view output "seen" %s : memref<4x8xf32> to memref<32xf32>
    cairn.kernel.relu ins(%seen : memref<32xf32>) outs(%out2 : memref<32xf32>) {n = 32 : i64}
  }
}
