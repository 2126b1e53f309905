// RUN: cairn-opt %s --cairn-autodiff | cairn-opt | FileCheck %s

// clip_grad_norm: one clip_coefficient of every trained gradient, after the
// backward and before any update; each update (and each reported gradient)
// takes its gradient times the coefficient. The param "unused" has no
// gradient and stays out of the norm.

module attributes {cairn.batch = 4 : i64, cairn.model = "M",
                   cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>,
                   cairn.clip_grad_norm = {max_norm = 0.5 : f64, norm_type = 0x7FF0000000000000 : f64}} {
  func.func @forward(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                     %w: tensor<3x8xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc.weight", cairn.role = #cairn.role<param>},
                     %b: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc.bias", cairn.role = #cairn.role<param>},
                     %unused: tensor<5xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "unused", cairn.role = #cairn.role<param>}) -> tensor<4x3xf32> {
    %0 = cairn.linear %x, %w, %b : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
  func.func @loss(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %y: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>},
                  %w: tensor<3x8xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc.weight", cairn.role = #cairn.role<param>},
                  %b: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.35>, cairn.name = "fc.bias", cairn.role = #cairn.role<param>},
                  %unused: tensor<5xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "unused", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w, %b : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %1 = cairn.cross_entropy %0, %y {label_smoothing = 0.0 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[DW:.+]] = cairn.linear_grad_weight
// CHECK:         %[[DB:.+]] = cairn.sum
// CHECK-NOT:     cairn.sgd_update
// CHECK:         %[[C:.+]] = cairn.clip_coefficient %[[DW]], %[[DB]] {max_norm = 5.000000e-01 : f64, norm_type = 0x7FF0000000000000 : f64} : (tensor<3x8xf32>, tensor<3xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[CW:.+]] = cairn.mul %[[DW]], %[[C]] : tensor<3x8xf32>, tensor<f32> -> tensor<3x8xf32>
// CHECK-NEXT:    %[[CB:.+]] = cairn.mul %[[DB]], %[[C]] : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
// CHECK-NEXT:    %[[NW:.+]] = cairn.sgd_update %{{.+}}, %[[CW]]
// CHECK-NEXT:    %[[NB:.+]] = cairn.sgd_update %{{.+}}, %[[CB]]
// CHECK-NEXT:    return %{{.+}}, %[[NW]], %[[NB]], %[[CW]], %[[CB]]
