// RUN: cairn-opt %s -cairn-fuse-elementwise=dropout=true | FileCheck %s
// RUN: cairn-opt %s -cairn-fuse-elementwise | FileCheck %s --check-prefix=ALONE
// RUN: cairn build %S/Inputs/fuse-dropout.cairn --emit=mlir --stop-after=fuse | FileCheck %s --check-prefix=CPU
// RUN: cairn build %S/Inputs/fuse-dropout.cairn --target cuda --emit=mlir --stop-after=fuse | FileCheck %s --check-prefix=ALONE
// RUN: cairn build %S/Inputs/fuse-dropout.cairn --replicas 2 --emit=mlir --stop-after=schedule | FileCheck %s --check-prefix=REPLICAS

// Tests that with `dropout` (the CPU's chains draw masks) a dropout joins an
// element-wise chain: gelu, the two dropouts and the residual add of
// Inputs/fuse-dropout.cairn are one kernel in the forward, the two dropouts'
// backward and gelu's one in the backward, each dropout's rate and stream
// (and replica stride, 0: one replica) in chain order; the dropouts' buffers
// are gone. Without it (the default, CUDA's) every dropout runs alone, and
// the chains stop at them (the forward step, without dropout, fuses gelu and
// add either way). The IR is `cairn build Inputs/fuse-dropout.cairn
// --emit=mlir --stop-after=lower`, locations dropped; the driver passes the
// target's choice (LoweringTarget::chainDropout).

// CHECK-LABEL: cairn.step train_step
// CHECK-NOT: "drop.dropout"
// CHECK: %[[ADD:.+]] = cairn.buffer saved "add" : memref<4x8xf32>
// Registers: 0 fc.linear, 1 x; 2 = gelu(0), 3 = dropout(2), 4 = dropout(3), 5 = 1 + 4.
// CHECK-NEXT: cairn.kernel.elementwise_chain ins(%fc.linear, %reshape : memref<4x8xf32>, memref<4x8xf32>) outs(%[[ADD]] : memref<4x8xf32>) {args = array<i64: 0, -1, 2, -1, 3, -1, 1, 4>, dropout_p = array<f64: 2.500000e-01, 5.000000e-01>, dropout_replica_strides = array<i64: 0, 0>, dropout_streams = array<i64: 0, 1>, n = 32 : i64, ops = ["gelu_exact", "dropout", "dropout", "add"]}
// CHECK-NOT: cairn.kernel.dropout
// Registers: 0 dy, 1 fc.linear; 2 = dropout(0) (drop2's), 3 = dropout(2) (drop's), 4 = gelu_grad(3, 1).
// CHECK: cairn.kernel.elementwise_chain ins(%head.linear_grad_input, %fc.linear : memref<4x8xf32>, memref<4x8xf32>) outs(%gelu_grad : memref<4x8xf32>) {args = array<i64: 0, -1, 2, -1, 3, 1>, dropout_p = array<f64: 5.000000e-01, 2.500000e-01>, dropout_replica_strides = array<i64: 0, 0>, dropout_streams = array<i64: 1, 0>, n = 32 : i64, ops = ["dropout", "dropout", "gelu_exact_grad"]}
// CHECK-NOT: cairn.kernel.dropout
// CHECK-LABEL: cairn.step forward
// CHECK: cairn.kernel.elementwise_chain {{.*}}ops = ["gelu_exact", "add"]

// CPU-LABEL: cairn.step train_step
// CPU: cairn.kernel.elementwise_chain {{.*}}ops = ["gelu_exact", "dropout", "dropout", "add"]
// CPU-NOT: cairn.kernel.dropout
// CPU: cairn.kernel.elementwise_chain {{.*}}ops = ["dropout", "dropout", "gelu_exact_grad"]

// With --replicas, cairn-all-reduce-gradients (after fusion) shifts replica
// r's streams by r times the streams of one (2), the chained dropouts' too.
// REPLICAS-LABEL: cairn.step train_step
// REPLICAS: dropout_replica_strides = array<i64: 2, 2>, dropout_streams = array<i64: 0, 1>, {{.*}}ops = ["gelu_exact", "dropout", "dropout", "add"]
// REPLICAS: dropout_replica_strides = array<i64: 2, 2>, dropout_streams = array<i64: 1, 0>, {{.*}}ops = ["dropout", "dropout", "gelu_exact_grad"]

// ALONE-LABEL: cairn.step train_step
// ALONE-NOT: elementwise_chain
// ALONE: cairn.kernel.dropout {{.*}}stream = 0
// ALONE-NEXT: %{{.+}} = cairn.buffer
// ALONE-NEXT: cairn.kernel.dropout {{.*}}stream = 1
// ALONE-NOT: ops = [{{.*}}"dropout"
// ALONE-LABEL: cairn.step forward
// ALONE: cairn.kernel.elementwise_chain {{.*}}ops = ["gelu_exact", "add"]

module attributes {cairn.batch = 4 : i64, cairn.eval_loss = {kind = "cross_entropy", label_smoothing = 0.000000e+00 : f64, target = "label"}, cairn.model = "FuseDropout", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  cairn.program "FuseDropout" attributes {batch = 4 : i64, eval_loss = {kind = "cross_entropy", label_smoothing = 0.000000e+00 : f64, target = "label"}, optimizer = "SGD(lr=0.1, momentum=0, dampening=0, weight_decay=0, nesterov=False)", source = "fuse-dropout.cairn", target = "cpu"} {
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
      %fc.linear = cairn.buffer saved "fc.linear" : memref<4x8xf32>
      cairn.kernel.linear ins(%reshape, %fc.weight, %fc.bias : memref<4x8xf32>, memref<8x8xf32>, memref<8xf32>) outs(%fc.linear : memref<4x8xf32>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
      %gelu = cairn.buffer activation "gelu" : memref<4x8xf32>
      cairn.kernel.gelu ins(%fc.linear : memref<4x8xf32>) outs(%gelu : memref<4x8xf32>) {n = 32 : i64, tanh = false}
      %drop.dropout = cairn.buffer activation "drop.dropout" : memref<4x8xf32>
      cairn.kernel.dropout ins(%gelu : memref<4x8xf32>) outs(%drop.dropout : memref<4x8xf32>) {n = 32 : i64, p = 2.500000e-01 : f64, stream = 0 : i64}
      %drop2.dropout = cairn.buffer activation "drop2.dropout" : memref<4x8xf32>
      cairn.kernel.dropout ins(%drop.dropout : memref<4x8xf32>) outs(%drop2.dropout : memref<4x8xf32>) {n = 32 : i64, p = 5.000000e-01 : f64, stream = 1 : i64}
      %add = cairn.buffer saved "add" : memref<4x8xf32>
      cairn.kernel.add ins(%reshape, %drop2.dropout : memref<4x8xf32>, memref<4x8xf32>) outs(%add : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
      %head.linear = cairn.buffer saved "head.linear" : memref<4x3xf32>
      cairn.kernel.linear ins(%add, %head.weight, %head.bias : memref<4x8xf32>, memref<3x8xf32>, memref<3xf32>) outs(%head.linear : memref<4x3xf32>) {in = 8 : i64, out = 3 : i64, rows = 4 : i64}
      cairn.kernel.cross_entropy ins(%head.linear, %label : memref<4x3xf32>, memref<4xi64>) outs(%loss : memref<f32>) {classes = 3 : i64, label_smoothing = 0.000000e+00 : f64, rows = 4 : i64}
      %constant = cairn.buffer temp "constant" : memref<f32>
      cairn.kernel.fill outs(%constant : memref<f32>) {n = 1 : i64, value = 1.000000e+00 : f64, cairn.backward_seed}
      %cross_entropy_grad = cairn.buffer temp "cross_entropy_grad" : memref<4x3xf32>
      cairn.kernel.cross_entropy_grad ins(%constant, %head.linear, %label : memref<f32>, memref<4x3xf32>, memref<4xi64>) outs(%cross_entropy_grad : memref<4x3xf32>) {classes = 3 : i64, label_smoothing = 0.000000e+00 : f64, rows = 4 : i64}
      %head.linear_grad_input = cairn.buffer temp "head.linear_grad_input" : memref<4x8xf32>
      cairn.kernel.linear_grad_input ins(%cross_entropy_grad, %head.weight : memref<4x3xf32>, memref<3x8xf32>) outs(%head.linear_grad_input : memref<4x8xf32>) {in = 8 : i64, out = 3 : i64, rows = 4 : i64}
      %grad.head.weight = cairn.buffer grad "grad.head.weight" : memref<3x8xf32>
      cairn.kernel.linear_grad_weight ins(%cross_entropy_grad, %add : memref<4x3xf32>, memref<4x8xf32>) outs(%grad.head.weight : memref<3x8xf32>) {in = 8 : i64, out = 3 : i64, rows = 4 : i64}
      %grad.head.bias = cairn.buffer grad "grad.head.bias" : memref<3xf32>
      cairn.kernel.reduce_sum ins(%cross_entropy_grad : memref<4x3xf32>) outs(%grad.head.bias : memref<3xf32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, false>}
      %drop2.dropout.1 = cairn.buffer temp "drop2.dropout.1" : memref<4x8xf32>
      cairn.kernel.dropout ins(%head.linear_grad_input : memref<4x8xf32>) outs(%drop2.dropout.1 : memref<4x8xf32>) {n = 32 : i64, p = 5.000000e-01 : f64, stream = 1 : i64}
      %drop.dropout.1 = cairn.buffer temp "drop.dropout.1" : memref<4x8xf32>
      cairn.kernel.dropout ins(%drop2.dropout.1 : memref<4x8xf32>) outs(%drop.dropout.1 : memref<4x8xf32>) {n = 32 : i64, p = 2.500000e-01 : f64, stream = 0 : i64}
      %gelu_grad = cairn.buffer temp "gelu_grad" : memref<4x8xf32>
      cairn.kernel.gelu_grad ins(%drop.dropout.1, %fc.linear : memref<4x8xf32>, memref<4x8xf32>) outs(%gelu_grad : memref<4x8xf32>) {n = 32 : i64, tanh = false}
      %grad.fc.weight = cairn.buffer grad "grad.fc.weight" : memref<8x8xf32>
      cairn.kernel.linear_grad_weight ins(%gelu_grad, %reshape : memref<4x8xf32>, memref<4x8xf32>) outs(%grad.fc.weight : memref<8x8xf32>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
      %grad.fc.bias = cairn.buffer grad "grad.fc.bias" : memref<8xf32>
      cairn.kernel.reduce_sum ins(%gelu_grad : memref<4x8xf32>) outs(%grad.fc.bias : memref<8xf32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, false>}
      cairn.kernel.sgd_update ins(%fc.weight, %grad.fc.weight, _, _ : memref<8x8xf32>, memref<8x8xf32>) outs(%fc.weight, _ : memref<8x8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 64 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
      cairn.kernel.sgd_update ins(%fc.bias, %grad.fc.bias, _, _ : memref<8xf32>, memref<8xf32>) outs(%fc.bias, _ : memref<8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
      cairn.kernel.sgd_update ins(%head.weight, %grad.head.weight, _, _ : memref<3x8xf32>, memref<3x8xf32>) outs(%head.weight, _ : memref<3x8xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 24 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
      cairn.kernel.sgd_update ins(%head.bias, %grad.head.bias, _, _ : memref<3xf32>, memref<3xf32>) outs(%head.bias, _ : memref<3xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 3 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    }
    cairn.step forward {
      %reshape.1 = cairn.view activation "reshape.1" %image : memref<4x1x2x4xf32> to memref<4x8xf32>
      %fc.linear.1 = cairn.buffer activation "fc.linear.1" : memref<4x8xf32>
      cairn.kernel.linear ins(%reshape.1, %fc.weight, %fc.bias : memref<4x8xf32>, memref<8x8xf32>, memref<8xf32>) outs(%fc.linear.1 : memref<4x8xf32>) {in = 8 : i64, out = 8 : i64, rows = 4 : i64}
      %gelu.1 = cairn.buffer activation "gelu.1" : memref<4x8xf32>
      cairn.kernel.gelu ins(%fc.linear.1 : memref<4x8xf32>) outs(%gelu.1 : memref<4x8xf32>) {n = 32 : i64, tanh = false}
      %add.1 = cairn.buffer activation "add.1" : memref<4x8xf32>
      cairn.kernel.add ins(%reshape.1, %gelu.1 : memref<4x8xf32>, memref<4x8xf32>) outs(%add.1 : memref<4x8xf32>) {lhs_strides = array<i64: 8, 1>, n = 32 : i64, rhs_strides = array<i64: 8, 1>}
      cairn.kernel.linear ins(%add.1, %head.weight, %head.bias : memref<4x8xf32>, memref<3x8xf32>, memref<3xf32>) outs(%output : memref<4x3xf32>) {in = 8 : i64, out = 3 : i64, rows = 4 : i64}
    }
  }
}

