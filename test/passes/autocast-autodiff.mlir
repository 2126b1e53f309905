// RUN: cairn-opt %s --cairn-autocast=precision=f16 --cairn-autodiff | FileCheck %s

// Tests that autodiff differentiates what cairn-autocast typed: the gradient
// of each value has its type, so the weight's gradient is half up to the
// cast, whose rule brings it back to float32 for the float32 master weight
// the update writes; the loss's seed (the loss scale: f16 has a loss
// scaler, autodiff-loss-scaling.mlir) and the loss stay float32.
module attributes {cairn.batch = 2 : i64, cairn.model = "M", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %w1: tensor<8x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>}, %b1: tensor<8xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>}) -> tensor<2x8xf32> {
    %0 = cairn.linear %x, %w1, %b1 : (tensor<2x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    return %0 : tensor<2x8xf32>
  }
  func.func @loss(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %y: tensor<2xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}, %w1: tensor<8x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>}, %b1: tensor<8xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w1, %b1 : (tensor<2x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    %1 = cairn.relu %0 : tensor<2x8xf32>
    %2 = cairn.constant dense<5.000000e-01> : tensor<f32>
    %3 = cairn.mul %1, %2 : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
    %4 = cairn.cross_entropy %3, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
    return %4 : tensor<f32>
  }
}
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[LOSS:.*]] = cairn.cross_entropy {{.*}} -> tensor<f32>
// CHECK: cairn.cross_entropy_grad {{.*}} : (tensor<f32>, tensor<2x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
// CHECK-NEXT: cairn.cast %{{.*}} : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK: cairn.linear_grad_weight {{.*}} -> tensor<8x4xf16>
// CHECK-DAG: %[[GW:.*]] = cairn.cast %{{.*}} : tensor<8x4xf16> -> tensor<8x4xf32>
// CHECK-DAG: %[[GB:.*]] = cairn.cast %{{.*}} : tensor<8xf16> -> tensor<8xf32>
// CHECK: %[[UW:.*]] = cairn.mul %[[GW]], %{{.*}} : tensor<8x4xf32>, tensor<f32> -> tensor<8x4xf32>
// CHECK: %[[UB:.*]] = cairn.mul %[[GB]], %{{.*}} : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
// CHECK: cairn.sgd_update %{{.*}}, %[[UW]] found_inf {{.*}} -> tensor<8x4xf32>
// CHECK: cairn.sgd_update %{{.*}}, %[[UB]] found_inf {{.*}} -> tensor<8xf32>
// CHECK: return {{.*}} : tensor<f32>,
