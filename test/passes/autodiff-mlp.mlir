// RUN: cairn-opt %s --cairn-autodiff | cairn-opt | FileCheck %s
// RUN: cairn-opt %s --cairn-autodiff --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// The training step of linear-relu-linear-cross_entropy with SGD (momentum,
// weight decay): the argument and result contract, the backward op sequence,
// one optimizer op per param, and the locations of the new ops. The param
// "unused" has no path to the loss: no state, no update, no gradient.

module attributes {cairn.batch = 4 : i64, cairn.model = "MLP", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 0.0005, nesterov = false>} {
  func.func @forward(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                     %w1: tensor<16x8xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>},
                     %b1: tensor<16xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>},
                     %w2: tensor<3x16xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>},
                     %b2: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.bias", cairn.role = #cairn.role<param>},
                     %unused: tensor<5xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "unused", cairn.role = #cairn.role<param>}) -> tensor<4x3xf32> {
    %0 = cairn.linear %x, %w1, %b1 : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("fc1"("mlp.cairn":12:9))
    %1 = cairn.relu %0 : tensor<4x16xf32> loc("mlp.cairn":12:5)
    %2 = cairn.linear %1, %w2, %b2 : (tensor<4x16xf32>, tensor<3x16xf32>, tensor<3xf32>) -> tensor<4x3xf32> loc("fc2"("mlp.cairn":13:12))
    return %2 : tensor<4x3xf32>
  }
  func.func @loss(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>} loc("mlp.cairn":2:3),
                  %y: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>} loc("mlp.cairn":3:3),
                  %w1: tensor<16x8xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>} loc("mlp.cairn":5:3),
                  %b1: tensor<16xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>} loc("mlp.cairn":5:3),
                  %w2: tensor<3x16xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>} loc("mlp.cairn":6:3),
                  %b2: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.bias", cairn.role = #cairn.role<param>} loc("mlp.cairn":6:3),
                  %unused: tensor<5xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "unused", cairn.role = #cairn.role<param>} loc("mlp.cairn":7:3)) -> tensor<f32> {
    %0 = cairn.linear %x, %w1, %b1 : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("fc1"("mlp.cairn":12:9))
    %1 = cairn.relu %0 : tensor<4x16xf32> loc("mlp.cairn":12:5)
    %2 = cairn.linear %1, %w2, %b2 : (tensor<4x16xf32>, tensor<3x16xf32>, tensor<3xf32>) -> tensor<4x3xf32> loc("fc2"("mlp.cairn":13:12))
    %3 = cairn.cross_entropy %2, %y {label_smoothing = 0.1 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32> loc("mlp.cairn":16:12)
    return %3 : tensor<f32> loc("mlp.cairn":16:5)
  } loc("mlp.cairn":15:3)
} loc("mlp.cairn":1:1)

// @forward and @loss are unchanged.
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT:    cairn.linear
// CHECK-NEXT:    cairn.relu
// CHECK-NEXT:    cairn.linear
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @loss(
// CHECK-NEXT:    cairn.linear
// CHECK-NEXT:    cairn.relu
// CHECK-NEXT:    cairn.linear
// CHECK-NEXT:    cairn.cross_entropy
// CHECK-NEXT:    return

// Arguments: params in @loss's order, one momentum buffer per trained param,
// then the inputs.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W1:[^:]+]]: tensor<16x8xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>},
// CHECK-SAME: %[[B1:[^:]+]]: tensor<16xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>},
// CHECK-SAME: %[[W2:[^:]+]]: tensor<3x16xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>},
// CHECK-SAME: %[[B2:[^:]+]]: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.bias", cairn.role = #cairn.role<param>},
// CHECK-SAME: %{{[^:]+}}: tensor<5xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "unused", cairn.role = #cairn.role<param>},
// CHECK-SAME: %[[MW1:[^:]+]]: tensor<16x8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc1.weight.momentum_buffer", cairn.role = #cairn.role<optimizer_state>},
// CHECK-SAME: %[[MB1:[^:]+]]: tensor<16xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc1.bias.momentum_buffer", cairn.role = #cairn.role<optimizer_state>},
// CHECK-SAME: %[[MW2:[^:]+]]: tensor<3x16xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc2.weight.momentum_buffer", cairn.role = #cairn.role<optimizer_state>},
// CHECK-SAME: %[[MB2:[^:]+]]: tensor<3xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc2.bias.momentum_buffer", cairn.role = #cairn.role<optimizer_state>},
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
// CHECK-SAME: %[[Y:[^:]+]]: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>})
// Results: the loss, the updated arguments in argument order, the gradients.
// CHECK-SAME: -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>},
// CHECK-SAME: tensor<16x8xf32> {cairn.name = "fc1.weight", cairn.role = #cairn.role<param>, cairn.updates = 0 : i64},
// CHECK-SAME: tensor<16xf32> {cairn.name = "fc1.bias", cairn.role = #cairn.role<param>, cairn.updates = 1 : i64},
// CHECK-SAME: tensor<3x16xf32> {cairn.name = "fc2.weight", cairn.role = #cairn.role<param>, cairn.updates = 2 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "fc2.bias", cairn.role = #cairn.role<param>, cairn.updates = 3 : i64},
// CHECK-SAME: tensor<16x8xf32> {cairn.name = "fc1.weight.momentum_buffer", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 5 : i64},
// CHECK-SAME: tensor<16xf32> {cairn.name = "fc1.bias.momentum_buffer", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 6 : i64},
// CHECK-SAME: tensor<3x16xf32> {cairn.name = "fc2.weight.momentum_buffer", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 7 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "fc2.bias.momentum_buffer", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 8 : i64},
// CHECK-SAME: tensor<16x8xf32> {cairn.name = "grad.fc1.weight", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<16xf32> {cairn.name = "grad.fc1.bias", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<3x16xf32> {cairn.name = "grad.fc2.weight", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<3xf32> {cairn.name = "grad.fc2.bias", cairn.role = #cairn.role<gradient>})
// The forward, cloned.
// CHECK-NEXT:  %[[H:.+]] = cairn.linear %[[X]], %[[W1]], %[[B1]]
// CHECK-NEXT:  %[[R:.+]] = cairn.relu %[[H]]
// CHECK-NEXT:  %[[Z:.+]] = cairn.linear %[[R]], %[[W2]], %[[B2]]
// CHECK-NEXT:  %[[LOSS:.+]] = cairn.cross_entropy %[[Z]], %[[Y]] {label_smoothing = 1.000000e-01 : f64}
// The backward, from d(loss) = 1; no gradient for the input x.
// CHECK-NEXT:  %[[ONE:.+]] = cairn.constant {cairn.backward_seed} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:  %[[DZ:.+]] = cairn.cross_entropy_grad %[[ONE]], %[[Z]], %[[Y]] {label_smoothing = 1.000000e-01 : f64} : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
// CHECK-NEXT:  %[[DR:.+]] = cairn.linear_grad_input %[[DZ]], %[[W2]] : (tensor<4x3xf32>, tensor<3x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:  %[[DW2:.+]] = cairn.linear_grad_weight %[[DZ]], %[[R]] : (tensor<4x3xf32>, tensor<4x16xf32>) -> tensor<3x16xf32>
// CHECK-NEXT:  %[[DB2:.+]] = cairn.sum %[[DZ]] {dims = array<i64: 0>, keepdim = false} : tensor<4x3xf32> -> tensor<3xf32>
// relu_grad reads relu's result R (as threshold_backward), not its input H.
// CHECK-NEXT:  %[[DH:.+]] = cairn.relu_grad %[[DR]], %[[R]] : tensor<4x16xf32>
// CHECK-NEXT:  %[[DW1:.+]] = cairn.linear_grad_weight %[[DH]], %[[X]] : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
// CHECK-NEXT:  %[[DB1:.+]] = cairn.sum %[[DH]] {dims = array<i64: 0>, keepdim = false} : tensor<4x16xf32> -> tensor<16xf32>
// The optimizer, in param order.
// CHECK-NEXT:  %[[NW1:[^,]+]], %[[NMW1:[^ ]+]] = cairn.sgd_update %[[W1]], %[[DW1]] momentum_buffer %[[MW1]] {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 5.000000e-04 : f64}
// CHECK-NEXT:  %[[NB1:[^,]+]], %[[NMB1:[^ ]+]] = cairn.sgd_update %[[B1]], %[[DB1]] momentum_buffer %[[MB1]]
// CHECK-NEXT:  %[[NW2:[^,]+]], %[[NMW2:[^ ]+]] = cairn.sgd_update %[[W2]], %[[DW2]] momentum_buffer %[[MW2]]
// CHECK-NEXT:  %[[NB2:[^,]+]], %[[NMB2:[^ ]+]] = cairn.sgd_update %[[B2]], %[[DB2]] momentum_buffer %[[MB2]]
// CHECK-NEXT:  return %[[LOSS]], %[[NW1]], %[[NB1]], %[[NW2]], %[[NB2]], %[[NMW1]], %[[NMB1]], %[[NMW2]], %[[NMB2]], %[[DW1]], %[[DB1]], %[[DW2]], %[[DB2]] :

// Every backward op has the location of the forward op it differentiates;
// the optimizer ops that of their param's argument.
// LOC-LABEL: func.func @train_step(
// LOC:       cairn.constant {{.*}} loc("mlp.cairn":16:12)
// LOC-NEXT:  cairn.cross_entropy_grad {{.*}} loc("mlp.cairn":16:12)
// LOC-NEXT:  cairn.linear_grad_input {{.*}} loc("fc2"("mlp.cairn":13:12))
// LOC-NEXT:  cairn.linear_grad_weight {{.*}} loc("fc2"("mlp.cairn":13:12))
// LOC-NEXT:  cairn.sum {{.*}} loc("fc2"("mlp.cairn":13:12))
// LOC-NEXT:  cairn.relu_grad {{.*}} loc("mlp.cairn":12:5)
// LOC-NEXT:  cairn.linear_grad_weight {{.*}} loc("fc1"("mlp.cairn":12:9))
// LOC-NEXT:  cairn.sum {{.*}} loc("fc1"("mlp.cairn":12:9))
// LOC-NEXT:  cairn.sgd_update {{.*}} loc("mlp.cairn":5:3)
// LOC-NEXT:  cairn.sgd_update {{.*}} loc("mlp.cairn":5:3)
// LOC-NEXT:  cairn.sgd_update {{.*}} loc("mlp.cairn":6:3)
// LOC-NEXT:  cairn.sgd_update {{.*}} loc("mlp.cairn":6:3)
// LOC-NEXT:  return {{.*}} loc("mlp.cairn":16:5)
// LOC-NEXT:  } loc("mlp.cairn":15:3)
