// RUN: cairn-opt %s --cairn-autocast=precision=f16 --cairn-autodiff --cairn-check-scaled-gradients | FileCheck %s
// RUN: cairn-opt %s --cairn-autocast="precision=bf16 loss-scaling=true" --cairn-autodiff --cairn-check-scaled-gradients | FileCheck %s --check-prefix=BF16
// RUN: cairn-opt %s --cairn-autocast=precision=f16 --cairn-autodiff --cairn-check-scaled-gradients --cairn-compute-half-in-float32 --cairn-lower-to-kernels=target=cpu | FileCheck %s --check-prefix=KERNELS
// RUN: cairn-opt %s --cairn-autocast=precision=bf16 --cairn-autodiff --cairn-check-scaled-gradients | FileCheck %s --check-prefix=NONE
// RUN: cairn-opt --split-input-file %S/Inputs/check-scaled-gradients-kept.mlir --cairn-check-scaled-gradients | FileCheck %s --check-prefix=KEPT

// Tests that loss scaling's found_inf reads each gradient scaled, as the backward computed
// it: fc1's weight gradient in f16 (the linear_grad_weight, not its float32 widening),
// batch norm's float32 ones as they are; and that each gradient's widening and its product
// with 1 / scale come right before its update, after the check and the skip_selects of the
// running statistics, so that the step holds the f16 gradient until the check. The update
// and the step's gradient result take the unscaled float32 value, as before. bf16 with a
// scaler alike; a step without one is left as it is.
module attributes {cairn.batch = 2 : i64, cairn.model = "M", cairn.optimizer = #cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.0, decoupled_weight_decay = false>} {
  func.func @forward(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %w1: tensor<8x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>}, %g: tensor<8xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "bn.weight", cairn.role = #cairn.role<param>}, %b: tensor<8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.bias", cairn.role = #cairn.role<param>}, %m: tensor<8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>}, %v: tensor<8xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}, %n: tensor<i64> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>}) -> tensor<2x8xf32> {
    %0 = cairn.linear %x, %w1 : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    %1 = cairn.batch_norm %0 weight %g bias %b mean %m var %v {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = false} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    return %1 : tensor<2x8xf32>
  }
  func.func @loss(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %y: tensor<2xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}, %w1: tensor<8x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>}, %g: tensor<8xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "bn.weight", cairn.role = #cairn.role<param>}, %b: tensor<8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.bias", cairn.role = #cairn.role<param>}, %m: tensor<8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>}, %v: tensor<8xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}, %n: tensor<i64> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w1 : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    %1 = cairn.batch_norm %0 weight %g bias %b mean %m var %v {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = true} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    %2 = cairn.cross_entropy %1, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
    return %2 : tensor<f32>
  }
}
// CHECK: module attributes {{{.*}}cairn.loss_scaling
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[GW16:.*]] = cairn.linear_grad_weight {{.*}} -> tensor<8x4xf16>
// CHECK: %[[INV:.*]] = cairn.loss_scale {inverse} : tensor<f32>
// CHECK: %[[FOUND:.*]] = cairn.found_inf %[[GW16]], %[[GG:[^,]*]], %[[GB:[^ ]*]] : (tensor<8x4xf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
// CHECK: cairn.skip_select %[[FOUND]]
// CHECK: cairn.skip_select %[[FOUND]]
// CHECK: cairn.skip_select %[[FOUND]]
// CHECK-NEXT: %[[WIDE:.*]] = cairn.cast %[[GW16]] : tensor<8x4xf16> -> tensor<8x4xf32>
// CHECK-NEXT: %[[UW:.*]] = cairn.mul %[[WIDE]], %[[INV]] : tensor<8x4xf32>, tensor<f32> -> tensor<8x4xf32>
// CHECK-NEXT: cairn.adam_update %arg0, %[[UW]], {{.*}} found_inf %[[FOUND]]
// CHECK-NEXT: %[[UG:.*]] = cairn.mul %[[GG]], %[[INV]] : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
// CHECK-NEXT: cairn.adam_update %arg1, %[[UG]], {{.*}} found_inf %[[FOUND]]
// CHECK-NEXT: %[[UB:.*]] = cairn.mul %[[GB]], %[[INV]] : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
// CHECK-NEXT: cairn.adam_update %arg2, %[[UB]], {{.*}} found_inf %[[FOUND]]
// CHECK-NEXT: return {{.*}}, %[[UW]], %[[UG]], %[[UB]] :

// BF16-LABEL: func.func @train_step(
// BF16: %[[FOUND:.*]] = cairn.found_inf %{{.*}} : (tensor<8x4xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
// BF16: cairn.cast %{{.*}} : tensor<8x4xbf16> -> tensor<8x4xf32>
// BF16-NEXT: cairn.mul
// BF16-NEXT: cairn.adam_update %arg0, {{.*}} found_inf %[[FOUND]]

// The CPU's found_inf kernel reads the f16 gradient.
// KERNELS: cairn.kernel.found_inf ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<8x4xf16>, memref<8xf32>, memref<8xf32>) outs(%[[KFOUND:.*]] : memref<f32>)
// KERNELS: cairn.kernel.cast ins(%{{.*}} : memref<8x4xf16>) outs(%{{.*}} : memref<8x4xf32>)
// KERNELS: cairn.kernel.mul ins(%{{.*}}, %{{.*}} : memref<8x4xf32>, memref<f32>)
// KERNELS-NEXT: cairn.kernel.adam_update ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[KFOUND]] :

// NONE-LABEL: func.func @train_step(
// NONE-NOT: found_inf
// NONE: return

// KEPT-LABEL: func.func @read_before(
// KEPT: %[[U:.*]] = cairn.mul
// KEPT-NEXT: cairn.sum %[[U]]
// KEPT-NEXT: cairn.found_inf %[[U]] : (tensor<4xf32>)
// KEPT-LABEL: func.func @not_unscaled(
// KEPT: %[[U:.*]] = cairn.mul
// KEPT-NEXT: cairn.found_inf %[[U]] : (tensor<4xf32>)
