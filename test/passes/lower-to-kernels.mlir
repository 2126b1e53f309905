// RUN: cairn-opt %s -split-input-file --cairn-lower-to-kernels | FileCheck %s
// RUN: cairn-opt %s -split-input-file --cairn-lower-to-kernels | cairn-opt | FileCheck %s
// RUN: cairn-opt %s -split-input-file --cairn-lower-to-kernels=target=cuda | FileCheck %s --check-prefix=CUDA

// From @train_step and @forward (cairn-autodiff's output for
// test/passes/Inputs/tiny-mlp.cairn, without @loss) to one cairn.program:
// persistent buffers named by their state_dict keys with their
// initializers, per-step buffers with their kinds, reshapes as views,
// one kernel per op with every size as an attribute, optimizer updates
// written over their params and momentum buffers, and no functions left.
// On CUDA, a GEMM whose reduction (K) is longer than both sides of its
// output gets a split-K workspace of its output's bytes rounded up to 256
// (passes/LowerOps.cpp, gemmWorkspaceBytes); the CPU gives GEMMs none.

// Tests that the training step and the forward pass of a two-layer
// perceptron become one program.
module attributes {cairn.batch = 4 : i64, cairn.model = "Tiny", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<4x2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                     %w1: tensor<16x8xf32> {cairn.init = #cairn.init<uniform, 0.35355339059327373>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>},
                     %b1: tensor<16xf32> {cairn.init = #cairn.init<uniform, 0.35355339059327373>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>},
                     %w2: tensor<3x16xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>},
                     %b2: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.bias", cairn.role = #cairn.role<param>}) -> tensor<4x3xf32> {
    %0 = cairn.reshape %x : tensor<4x2x4xf32> -> tensor<4x8xf32> loc("tiny.cairn":13:18)
    %1 = cairn.linear %0, %w1, %b1 : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("fc1"("tiny.cairn":13:14))
    %2 = cairn.relu %1 : tensor<4x16xf32> loc("tiny.cairn":13:9)
    %3 = cairn.linear %2, %w2, %b2 : (tensor<4x16xf32>, tensor<3x16xf32>, tensor<3xf32>) -> tensor<4x3xf32> loc("fc2"("tiny.cairn":14:12))
    return %3 : tensor<4x3xf32> loc("tiny.cairn":12:3)
  }
  func.func @train_step(%w1: tensor<16x8xf32> {cairn.init = #cairn.init<uniform, 0.35355339059327373>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>},
                        %b1: tensor<16xf32> {cairn.init = #cairn.init<uniform, 0.35355339059327373>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>},
                        %w2: tensor<3x16xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>},
                        %b2: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.bias", cairn.role = #cairn.role<param>},
                        %mw1: tensor<16x8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc1.weight.momentum_buffer", cairn.role = #cairn.role<optimizer_state>},
                        %mb1: tensor<16xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc1.bias.momentum_buffer", cairn.role = #cairn.role<optimizer_state>},
                        %mw2: tensor<3x16xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc2.weight.momentum_buffer", cairn.role = #cairn.role<optimizer_state>},
                        %mb2: tensor<3xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc2.bias.momentum_buffer", cairn.role = #cairn.role<optimizer_state>},
                        %x: tensor<4x2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                        %y: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>})
      -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>},
          tensor<16x8xf32> {cairn.name = "fc1.weight", cairn.role = #cairn.role<param>, cairn.updates = 0 : i64},
          tensor<16xf32> {cairn.name = "fc1.bias", cairn.role = #cairn.role<param>, cairn.updates = 1 : i64},
          tensor<3x16xf32> {cairn.name = "fc2.weight", cairn.role = #cairn.role<param>, cairn.updates = 2 : i64},
          tensor<3xf32> {cairn.name = "fc2.bias", cairn.role = #cairn.role<param>, cairn.updates = 3 : i64},
          tensor<16x8xf32> {cairn.name = "fc1.weight.momentum_buffer", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 4 : i64},
          tensor<16xf32> {cairn.name = "fc1.bias.momentum_buffer", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 5 : i64},
          tensor<3x16xf32> {cairn.name = "fc2.weight.momentum_buffer", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 6 : i64},
          tensor<3xf32> {cairn.name = "fc2.bias.momentum_buffer", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 7 : i64},
          tensor<16x8xf32> {cairn.name = "grad.fc1.weight", cairn.role = #cairn.role<gradient>},
          tensor<16xf32> {cairn.name = "grad.fc1.bias", cairn.role = #cairn.role<gradient>},
          tensor<3x16xf32> {cairn.name = "grad.fc2.weight", cairn.role = #cairn.role<gradient>},
          tensor<3xf32> {cairn.name = "grad.fc2.bias", cairn.role = #cairn.role<gradient>}) {
    %0 = cairn.reshape %x : tensor<4x2x4xf32> -> tensor<4x8xf32> loc("tiny.cairn":13:18)
    %1 = cairn.linear %0, %w1, %b1 : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("fc1"("tiny.cairn":13:14))
    %2 = cairn.relu %1 : tensor<4x16xf32> loc("tiny.cairn":13:9)
    %3 = cairn.linear %2, %w2, %b2 : (tensor<4x16xf32>, tensor<3x16xf32>, tensor<3xf32>) -> tensor<4x3xf32> loc("fc2"("tiny.cairn":14:12))
    %4 = cairn.cross_entropy %3, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32> loc("tiny.cairn":17:12)
    %5 = cairn.constant dense<1.000000e+00> : tensor<f32> loc("tiny.cairn":17:12)
    %6 = cairn.cross_entropy_grad %5, %3, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32> loc("tiny.cairn":17:12)
    %7 = cairn.linear_grad_input %6, %w2 : (tensor<4x3xf32>, tensor<3x16xf32>) -> tensor<4x16xf32> loc("fc2"("tiny.cairn":14:12))
    %8 = cairn.linear_grad_weight %6, %2 : (tensor<4x3xf32>, tensor<4x16xf32>) -> tensor<3x16xf32> loc("fc2"("tiny.cairn":14:12))
    %9 = cairn.sum %6 {dims = array<i64: 0>, keepdim = false} : tensor<4x3xf32> -> tensor<3xf32> loc("fc2"("tiny.cairn":14:12))
    %10 = cairn.relu_grad %7, %2 : tensor<4x16xf32> loc("tiny.cairn":13:9)
    %11 = cairn.linear_grad_weight %10, %0 : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32> loc("fc1"("tiny.cairn":13:14))
    %12 = cairn.sum %10 {dims = array<i64: 0>, keepdim = false} : tensor<4x16xf32> -> tensor<16xf32> loc("fc1"("tiny.cairn":13:14))
    %nw1, %nmw1 = cairn.sgd_update %w1, %11 momentum_buffer %mw1 {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) loc("tiny.cairn":9:9)
    %nb1, %nmb1 = cairn.sgd_update %b1, %12 momentum_buffer %mb1 {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) loc("tiny.cairn":9:9)
    %nw2, %nmw2 = cairn.sgd_update %w2, %8 momentum_buffer %mw2 {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64} : (tensor<3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>) -> (tensor<3x16xf32>, tensor<3x16xf32>) loc("tiny.cairn":10:9)
    %nb2, %nmb2 = cairn.sgd_update %b2, %9 momentum_buffer %mb2 {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) loc("tiny.cairn":10:9)
    return %4, %nw1, %nb1, %nw2, %nb2, %nmw1, %nmb1, %nmw2, %nmb2, %11, %12, %8, %9 : tensor<f32>, tensor<16x8xf32>, tensor<16xf32>, tensor<3x16xf32>, tensor<3xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<3x16xf32>, tensor<3xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<3x16xf32>, tensor<3xf32> loc("tiny.cairn":16:3)
  }
} loc("tiny.cairn":4:1)

// CHECK-NOT:   func.func
// CHECK-LABEL: cairn.program "Tiny" attributes {batch = 4 : i64, optimizer = "SGD(lr=0.1, momentum=0.9, dampening=0, weight_decay=0, nesterov=False)", source = "tiny.cairn", target = "cpu"} {
// Persistent buffers: the params, the optimizer state (zeros), the inputs,
// then the outputs (the loss of the training step, the forward's result).
// CHECK-NEXT:    %fc1.weight = cairn.buffer param "fc1.weight" {init = #cairn.init<uniform, 0.35355339059327373>} : memref<16x8xf32>
// CHECK-NEXT:    %fc1.bias = cairn.buffer param "fc1.bias" {init = #cairn.init<uniform, 0.35355339059327373>} : memref<16xf32>
// CHECK-NEXT:    %fc2.weight = cairn.buffer param "fc2.weight" {init = #cairn.init<uniform, 0.25>} : memref<3x16xf32>
// CHECK-NEXT:    %fc2.bias = cairn.buffer param "fc2.bias" {init = #cairn.init<uniform, 0.25>} : memref<3xf32>
// CHECK-NEXT:    %fc1.weight.momentum_buffer = cairn.buffer optimizer "fc1.weight.momentum_buffer" {init = #cairn.init<zeros, 0.0>} : memref<16x8xf32>
// CHECK-NEXT:    %fc1.bias.momentum_buffer = cairn.buffer optimizer "fc1.bias.momentum_buffer" {init = #cairn.init<zeros, 0.0>} : memref<16xf32>
// CHECK-NEXT:    %fc2.weight.momentum_buffer = cairn.buffer optimizer "fc2.weight.momentum_buffer" {init = #cairn.init<zeros, 0.0>} : memref<3x16xf32>
// CHECK-NEXT:    %fc2.bias.momentum_buffer = cairn.buffer optimizer "fc2.bias.momentum_buffer" {init = #cairn.init<zeros, 0.0>} : memref<3xf32>
// CHECK-NEXT:    %x = cairn.buffer input "x" : memref<4x2x4xf32>
// CHECK-NEXT:    %y = cairn.buffer input "y" : memref<4xi64>
// CHECK-NEXT:    %loss = cairn.buffer output "loss" : memref<f32>
// CHECK-NEXT:    %output = cairn.buffer output "output" : memref<4x3xf32>

// The training step. Kinds: fc1.linear is read by the forward part only
// (activation); relu and fc2.linear by the backward part too (saved); what
// the backward part defines is temp, the gradients grad. The loss kernel
// writes the persistent loss directly.
// CHECK-NEXT:    cairn.step train_step {
// CHECK-NEXT:      %reshape = cairn.view activation "reshape" %x : memref<4x2x4xf32> to memref<4x8xf32>
// CHECK-NEXT:      %fc1.linear = cairn.buffer activation "fc1.linear" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.linear ins(%reshape, %fc1.weight, %fc1.bias : memref<4x8xf32>, memref<16x8xf32>, memref<16xf32>) outs(%fc1.linear : memref<4x16xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
// CHECK-NEXT:      %relu = cairn.buffer saved "relu" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.relu ins(%fc1.linear : memref<4x16xf32>) outs(%relu : memref<4x16xf32>) {n = 64 : i64}
// CHECK-NEXT:      %fc2.linear = cairn.buffer saved "fc2.linear" : memref<4x3xf32>
// CHECK-NEXT:      cairn.kernel.linear ins(%relu, %fc2.weight, %fc2.bias : memref<4x16xf32>, memref<3x16xf32>, memref<3xf32>) outs(%fc2.linear : memref<4x3xf32>) {in = 16 : i64, out = 3 : i64, rows = 4 : i64}
// CHECK-NEXT:      cairn.kernel.cross_entropy ins(%fc2.linear, %y : memref<4x3xf32>, memref<4xi64>) outs(%loss : memref<f32>) {classes = 3 : i64, label_smoothing = 0.000000e+00 : f64, rows = 4 : i64}
// CHECK-NEXT:      %constant = cairn.buffer temp "constant" : memref<f32>
// CHECK-NEXT:      cairn.kernel.fill outs(%constant : memref<f32>) {n = 1 : i64, value = 1.000000e+00 : f64}
// CHECK-NEXT:      %cross_entropy_grad = cairn.buffer temp "cross_entropy_grad" : memref<4x3xf32>
// CHECK-NEXT:      cairn.kernel.cross_entropy_grad ins(%constant, %fc2.linear, %y : memref<f32>, memref<4x3xf32>, memref<4xi64>) outs(%cross_entropy_grad : memref<4x3xf32>) {classes = 3 : i64, label_smoothing = 0.000000e+00 : f64, rows = 4 : i64}
// CHECK-NEXT:      %fc2.linear_grad_input = cairn.buffer temp "fc2.linear_grad_input" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.linear_grad_input ins(%cross_entropy_grad, %fc2.weight : memref<4x3xf32>, memref<3x16xf32>) outs(%fc2.linear_grad_input : memref<4x16xf32>) {in = 16 : i64, out = 3 : i64, rows = 4 : i64}
// CHECK-NEXT:      %grad.fc2.weight = cairn.buffer grad "grad.fc2.weight" : memref<3x16xf32>
// CHECK-NEXT:      cairn.kernel.linear_grad_weight ins(%cross_entropy_grad, %relu : memref<4x3xf32>, memref<4x16xf32>) outs(%grad.fc2.weight : memref<3x16xf32>) {in = 16 : i64, out = 3 : i64, rows = 4 : i64}
// CHECK-NEXT:      %grad.fc2.bias = cairn.buffer grad "grad.fc2.bias" : memref<3xf32>
// CHECK-NEXT:      cairn.kernel.reduce_sum ins(%cross_entropy_grad : memref<4x3xf32>) outs(%grad.fc2.bias : memref<3xf32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, false>}
// CHECK-NEXT:      %relu_grad = cairn.buffer temp "relu_grad" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.relu_grad ins(%fc2.linear_grad_input, %relu : memref<4x16xf32>, memref<4x16xf32>) outs(%relu_grad : memref<4x16xf32>) {n = 64 : i64}
// CHECK-NEXT:      %grad.fc1.weight = cairn.buffer grad "grad.fc1.weight" : memref<16x8xf32>
// CHECK-NEXT:      cairn.kernel.linear_grad_weight ins(%relu_grad, %reshape : memref<4x16xf32>, memref<4x8xf32>) outs(%grad.fc1.weight : memref<16x8xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
// CHECK-NEXT:      %grad.fc1.bias = cairn.buffer grad "grad.fc1.bias" : memref<16xf32>
// CHECK-NEXT:      cairn.kernel.reduce_sum ins(%relu_grad : memref<4x16xf32>) outs(%grad.fc1.bias : memref<16xf32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, false>}
// The updates write over the param and its momentum buffer: no new buffer,
// no copy.
// CHECK-NEXT:      cairn.kernel.sgd_update ins(%fc1.weight, %grad.fc1.weight, %fc1.weight.momentum_buffer, _ : memref<16x8xf32>, memref<16x8xf32>, memref<16x8xf32>) outs(%fc1.weight, %fc1.weight.momentum_buffer : memref<16x8xf32>, memref<16x8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, n = 128 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:      cairn.kernel.sgd_update ins(%fc1.bias, %grad.fc1.bias, %fc1.bias.momentum_buffer, _ : memref<16xf32>, memref<16xf32>, memref<16xf32>) outs(%fc1.bias, %fc1.bias.momentum_buffer : memref<16xf32>, memref<16xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, n = 16 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:      cairn.kernel.sgd_update ins(%fc2.weight, %grad.fc2.weight, %fc2.weight.momentum_buffer, _ : memref<3x16xf32>, memref<3x16xf32>, memref<3x16xf32>) outs(%fc2.weight, %fc2.weight.momentum_buffer : memref<3x16xf32>, memref<3x16xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, n = 48 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:      cairn.kernel.sgd_update ins(%fc2.bias, %grad.fc2.bias, %fc2.bias.momentum_buffer, _ : memref<3xf32>, memref<3xf32>, memref<3xf32>) outs(%fc2.bias, %fc2.bias.momentum_buffer : memref<3xf32>, memref<3xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, n = 3 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:    }

// The forward pass: its own per-step buffers (all activations, names made
// unique across the program), the persistent buffers shared, the last
// kernel writing the output directly.
// CHECK-NEXT:    cairn.step forward {
// CHECK-NEXT:      %reshape.1 = cairn.view activation "reshape.1" %x : memref<4x2x4xf32> to memref<4x8xf32>
// CHECK-NEXT:      %fc1.linear.1 = cairn.buffer activation "fc1.linear.1" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.linear ins(%reshape.1, %fc1.weight, %fc1.bias : memref<4x8xf32>, memref<16x8xf32>, memref<16xf32>) outs(%fc1.linear.1 : memref<4x16xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
// CHECK-NEXT:      %relu.1 = cairn.buffer activation "relu.1" : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.relu ins(%fc1.linear.1 : memref<4x16xf32>) outs(%relu.1 : memref<4x16xf32>) {n = 64 : i64}
// CHECK-NEXT:      cairn.kernel.linear ins(%relu.1, %fc2.weight, %fc2.bias : memref<4x16xf32>, memref<3x16xf32>, memref<3xf32>) outs(%output : memref<4x3xf32>) {in = 16 : i64, out = 3 : i64, rows = 4 : i64}
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NOT:   func.func

// On CUDA only fc2's forward GEMM (m = 4 rows, n = 3 outputs, k = 16
// inputs) has K longer than both output sides: it gets 48 bytes of output
// rounded up to 256, as 64 f32, in each step. fc1's (k = 8 < n = 16) and
// the gradients' (k = 4 rows) get none.
// CUDA-LABEL: cairn.program "Tiny" attributes {batch = {{.*}}, target = "cuda"} {
// CUDA-NOT:   workspace
// CUDA:       %fc2.workspace = cairn.buffer workspace "fc2.workspace" : memref<64xf32>
// CUDA-NEXT:  cairn.kernel.linear ins(%relu, %fc2.weight, %fc2.bias : memref<4x16xf32>, memref<3x16xf32>, memref<3xf32>) outs(%fc2.linear : memref<4x3xf32>) workspace(%fc2.workspace : memref<64xf32>) {in = 16 : i64, out = 3 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}
// CUDA-NOT:   workspace
// CUDA:       cairn.step forward
// CUDA-NOT:   workspace
// CUDA:       %fc2.workspace.1 = cairn.buffer workspace "fc2.workspace.1" : memref<64xf32>
// CUDA-NEXT:  cairn.kernel.linear ins(%relu.1, %fc2.weight, %fc2.bias : memref<4x16xf32>, memref<3x16xf32>, memref<3xf32>) outs(%output : memref<4x3xf32>) workspace(%fc2.workspace.1 : memref<64xf32>) {in = 16 : i64, out = 3 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}
// CUDA-NEXT:  }

// -----

// Tests that a new value computed while the old one is still read is copied
// over its argument at the end, and that an output that is a view of an
// input is copied into the output buffer.
module attributes {cairn.batch = 2 : i64, cairn.model = "Copies"} {
  func.func @train_step(%w: tensor<2x2xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "w", cairn.role = #cairn.role<param>},
                        %b: tensor<2xf32> {cairn.name = "b", cairn.role = #cairn.role<input>})
      -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>},
          tensor<2x2xf32> {cairn.name = "w", cairn.role = #cairn.role<param>, cairn.updates = 0 : i64}) {
    %new = cairn.add %w, %b : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
    %sq = cairn.mul %w, %w : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %loss = cairn.sum %sq {dims = array<i64: 0, 1>, keepdim = false} : tensor<2x2xf32> -> tensor<f32>
    return %loss, %new : tensor<f32>, tensor<2x2xf32>
  }
  func.func @forward(%b: tensor<2xf32> {cairn.name = "b", cairn.role = #cairn.role<input>}) -> tensor<1x2xf32> {
    %0 = cairn.reshape %b : tensor<2xf32> -> tensor<1x2xf32>
    return %0 : tensor<1x2xf32>
  }
} loc("copies.cairn":1:1)

// The new w (w + b, b broadcast along rows: stride 0) is computed while
// w is still read by the mul: it gets a buffer of its own and a copy over
// w at the end, which makes it a saved buffer (read after the loss). The
// forward's output is a view of the input b: copied into "output".
// CHECK-LABEL: cairn.program "Copies" attributes {batch = 2 : i64, optimizer = "", source = "copies.cairn", target = "cpu"} {
// CHECK-NEXT:    %w = cairn.buffer param "w" {init = #cairn.init<ones, 0.0>} : memref<2x2xf32>
// CHECK-NEXT:    %b = cairn.buffer input "b" : memref<2xf32>
// CHECK-NEXT:    %loss = cairn.buffer output "loss" : memref<f32>
// CHECK-NEXT:    %output = cairn.buffer output "output" : memref<1x2xf32>
// CHECK-NEXT:    cairn.step train_step {
// CHECK-NEXT:      %add = cairn.buffer saved "add" : memref<2x2xf32>
// CHECK-NEXT:      cairn.kernel.add ins(%w, %b : memref<2x2xf32>, memref<2xf32>) outs(%add : memref<2x2xf32>) {lhs_strides = array<i64: 2, 1>, n = 4 : i64, rhs_strides = array<i64: 0, 1>}
// CHECK-NEXT:      %mul = cairn.buffer activation "mul" : memref<2x2xf32>
// CHECK-NEXT:      cairn.kernel.mul ins(%w, %w : memref<2x2xf32>, memref<2x2xf32>) outs(%mul : memref<2x2xf32>) {lhs_strides = array<i64: 2, 1>, n = 4 : i64, rhs_strides = array<i64: 2, 1>}
// CHECK-NEXT:      cairn.kernel.reduce_sum ins(%mul : memref<2x2xf32>) outs(%loss : memref<f32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, true>}
// CHECK-NEXT:      cairn.kernel.copy ins(%add : memref<2x2xf32>) outs(%w : memref<2x2xf32>)
// CHECK-NEXT:    }
// CHECK-NEXT:    cairn.step forward {
// CHECK-NEXT:      %reshape = cairn.view activation "reshape" %b : memref<2xf32> to memref<1x2xf32>
// CHECK-NEXT:      cairn.kernel.copy ins(%reshape : memref<1x2xf32>) outs(%output : memref<1x2xf32>)
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CUDA-LABEL: cairn.program "Copies"
// CUDA-NOT:   workspace

// -----

// Tests that on CUDA a weight gradient whose reduction runs over a batch
// much longer than its features gets a workspace. dW = dy^T x is a GEMM of
// m = 12 outputs by n = 10 inputs over k = 256 rows; the output holds
// 12 * 10 * 4 = 480 bytes, 512 rounded up: 128 f32. The forward GEMM
// (m = 256, n = 12, k = 10) and the input gradient (none here) get none.
module attributes {cairn.batch = 256 : i64, cairn.model = "Wide", cairn.optimizer = #cairn.sgd<lr = 0.01, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<256x10xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                     %w: tensor<12x10xf32> {cairn.init = #cairn.init<uniform, 0.31622776601683794>, cairn.name = "fc.weight", cairn.role = #cairn.role<param>},
                     %b: tensor<12xf32> {cairn.init = #cairn.init<uniform, 0.31622776601683794>, cairn.name = "fc.bias", cairn.role = #cairn.role<param>}) -> tensor<256x12xf32> {
    %0 = cairn.linear %x, %w, %b : (tensor<256x10xf32>, tensor<12x10xf32>, tensor<12xf32>) -> tensor<256x12xf32> loc("fc"("wide.cairn":7:12))
    return %0 : tensor<256x12xf32>
  }
  func.func @train_step(%w: tensor<12x10xf32> {cairn.init = #cairn.init<uniform, 0.31622776601683794>, cairn.name = "fc.weight", cairn.role = #cairn.role<param>},
                        %b: tensor<12xf32> {cairn.init = #cairn.init<uniform, 0.31622776601683794>, cairn.name = "fc.bias", cairn.role = #cairn.role<param>},
                        %x: tensor<256x10xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                        %t: tensor<256x12xf32> {cairn.name = "t", cairn.role = #cairn.role<input>})
      -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>},
          tensor<12x10xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>, cairn.updates = 0 : i64},
          tensor<12xf32> {cairn.name = "fc.bias", cairn.role = #cairn.role<param>, cairn.updates = 1 : i64},
          tensor<12x10xf32> {cairn.name = "grad.fc.weight", cairn.role = #cairn.role<gradient>},
          tensor<12xf32> {cairn.name = "grad.fc.bias", cairn.role = #cairn.role<gradient>}) {
    %0 = cairn.linear %x, %w, %b : (tensor<256x10xf32>, tensor<12x10xf32>, tensor<12xf32>) -> tensor<256x12xf32> loc("fc"("wide.cairn":7:12))
    %1 = cairn.mse_loss %0, %t : (tensor<256x12xf32>, tensor<256x12xf32>) -> tensor<f32>
    %2 = cairn.constant dense<1.000000e+00> : tensor<f32>
    %3 = cairn.mse_loss_grad %2, %0, %t : (tensor<f32>, tensor<256x12xf32>, tensor<256x12xf32>) -> tensor<256x12xf32>
    %4 = cairn.linear_grad_weight %3, %x : (tensor<256x12xf32>, tensor<256x10xf32>) -> tensor<12x10xf32> loc("fc"("wide.cairn":7:12))
    %5 = cairn.sum %3 {dims = array<i64: 0>, keepdim = false} : tensor<256x12xf32> -> tensor<12xf32> loc("fc"("wide.cairn":7:12))
    %nw = cairn.sgd_update %w, %4 {dampening = 0.000000e+00 : f64, lr = 1.000000e-02 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64} : (tensor<12x10xf32>, tensor<12x10xf32>) -> tensor<12x10xf32>
    %nb = cairn.sgd_update %b, %5 {dampening = 0.000000e+00 : f64, lr = 1.000000e-02 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64} : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
    return %1, %nw, %nb, %4, %5 : tensor<f32>, tensor<12x10xf32>, tensor<12xf32>, tensor<12x10xf32>, tensor<12xf32>
  }
} loc("wide.cairn":1:1)

// The CPU gives no GEMM a workspace; SGD without momentum has no momentum
// buffer: `_` in and out.
// CHECK-LABEL: cairn.program "Wide"
// CHECK-NOT:   workspace
// CHECK:       cairn.kernel.linear_grad_weight ins(%mse_loss_grad, %x : memref<256x12xf32>, memref<256x10xf32>) outs(%grad.fc.weight : memref<12x10xf32>) {in = 10 : i64, out = 12 : i64, rows = 256 : i64}
// CHECK-NOT:   workspace
// CHECK:       cairn.kernel.sgd_update ins(%fc.weight, %grad.fc.weight, _, _ : memref<12x10xf32>, memref<12x10xf32>) outs(%fc.weight, _ : memref<12x10xf32>)
// CHECK-NOT:   workspace
// CHECK:       cairn.step forward

// CUDA-LABEL: cairn.program "Wide" attributes {batch = {{.*}}, target = "cuda"} {
// CUDA-NOT:   workspace
// CUDA:       %grad.fc.weight = cairn.buffer grad "grad.fc.weight" : memref<12x10xf32>
// CUDA-NEXT:  %fc.workspace = cairn.buffer workspace "fc.workspace" : memref<128xf32>
// CUDA-NEXT:  cairn.kernel.linear_grad_weight ins(%mse_loss_grad, %x : memref<256x12xf32>, memref<256x10xf32>) outs(%grad.fc.weight : memref<12x10xf32>) workspace(%fc.workspace : memref<128xf32>) {in = 10 : i64, out = 12 : i64, rows = 256 : i64, workspace_bytes = 512 : i64}
// CUDA-NOT:   workspace
// CUDA:       cairn.step forward
// CUDA-NOT:   workspace
// CUDA:       cairn.kernel.linear ins(%x, %fc.weight, %fc.bias : memref<256x10xf32>, memref<12x10xf32>, memref<12xf32>) outs(%output : memref<256x12xf32>) {in = 10 : i64, out = 12 : i64, rows = 256 : i64}
