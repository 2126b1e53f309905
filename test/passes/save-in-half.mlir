// RUN: cairn-opt %s -split-input-file --cairn-autocast=precision=f16 --cairn-autodiff --cairn-save-in-half=precision=f16 | FileCheck %s
// RUN: cairn-opt %s -split-input-file --cairn-autocast=precision=bf16 --cairn-autodiff --cairn-save-in-half=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: cairn-opt %s -split-input-file --cairn-autocast=precision=f16 --cairn-autodiff --cairn-save-in-half | FileCheck %s --check-prefix=F32
// RUN: not cairn-opt %s -split-input-file --cairn-save-in-half=precision=f8 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that an f16 step holds layer norm's float32 input and softmax's float32 output in f16
// from the forward to the backward: the residual sum is cast to f16 after the layer norm, its
// last forward reader, and widened again right before layer_norm_grad; softmax's output has
// autocast's f16 copy for fc2 (which fc2's weight gradient reads anyway), and softmax_grad reads
// that copy widened. The forward computes in float32 as before. bf16 stores softmax's output
// in f16 too (in [0, 1], where f16 is finer than bf16), beside autocast's bf16 copy, and keeps
// the residual sum float32 (f16 could overflow it); a module whose precision is f32 (the
// default, with no cairn.precision: autocast's f16 here came from its own option) keeps both.
// The second module pins its softmax to float32 (a `precision f32` region), and its residual
// sum is in a checkpoint region (computed again for the backward, not held): nothing is stored
// in half.
module attributes {cairn.batch = 2 : i64, cairn.model = "M", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %y: tensor<2xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}, %w1: tensor<4x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>}, %g: tensor<4xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "ln.weight", cairn.role = #cairn.role<param>}, %b: tensor<4xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "ln.bias", cairn.role = #cairn.role<param>}, %w2: tensor<3x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %1 = cairn.add %0, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
    %2 = cairn.layer_norm %1 weight %g bias %b {eps = 1.000000e-05 : f64, normalized_rank = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %3 = cairn.softmax %2 {dim = 1 : i64} : tensor<2x4xf32>
    %4 = cairn.linear %3, %w2 : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %5 = cairn.cross_entropy %4, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
    return %5 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK: %[[SUM:.*]] = cairn.add
// CHECK-NEXT: %[[LN:.*]] = cairn.layer_norm %[[SUM]]
// CHECK-NEXT: %[[SUM16:.*]] = cairn.cast %[[SUM]] : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK-NEXT: %[[Y:.*]] = cairn.softmax %[[LN]]
// CHECK-NEXT: %[[Y16:.*]] = cairn.cast %[[Y]] : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK: cairn.linear_grad_weight %{{.*}}, %[[Y16]]
// CHECK-NOT: cairn.softmax_grad
// CHECK: %[[YW:.*]] = cairn.cast %[[Y16]] : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK-NEXT: %[[DX:.*]] = cairn.softmax_grad %{{.*}}, %[[YW]]
// CHECK-NEXT: %[[SUMW:.*]] = cairn.cast %[[SUM16]] : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK-NEXT: cairn.layer_norm_grad %[[DX]], %[[SUMW]]

// BF16-LABEL: func.func @train_step(
// BF16: %[[SUM:.*]] = cairn.add
// BF16-NOT: cairn.cast %[[SUM]]
// BF16: %[[Y:.*]] = cairn.softmax
// BF16-NEXT: cairn.cast %[[Y]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// BF16-NEXT: %[[Y16:.*]] = cairn.cast %[[Y]] : tensor<2x4xf32> -> tensor<2x4xf16>
// BF16: %[[YW:.*]] = cairn.cast %[[Y16]] : tensor<2x4xf16> -> tensor<2x4xf32>
// BF16-NEXT: cairn.softmax_grad %{{.*}}, %[[YW]]
// BF16-NEXT: cairn.layer_norm_grad %{{.*}}, %[[SUM]]

// F32-LABEL: func.func @train_step(
// F32: %[[SUM:.*]] = cairn.add
// F32: %[[Y:.*]] = cairn.softmax
// F32: cairn.softmax_grad %{{.*}}, %[[Y]]
// F32-NEXT: cairn.layer_norm_grad %{{.*}}, %[[SUM]]

// BAD: error: cairn-save-in-half: unknown precision 'f8'; expected f16, bf16 or f32

// -----

module attributes {cairn.batch = 2 : i64, cairn.model = "M", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %y: tensor<2xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}, %w1: tensor<4x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>}, %g: tensor<4xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "ln.weight", cairn.role = #cairn.role<param>}, %b: tensor<4xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "ln.bias", cairn.role = #cairn.role<param>}, %w2: tensor<3x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %1 = cairn.add %0, %x {cairn.checkpoint = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
    %2 = cairn.layer_norm %1 weight %g bias %b {eps = 1.000000e-05 : f64, normalized_rank = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %3 = cairn.softmax %2 {cairn.precision = #cairn.precision<f32>, dim = 1 : i64} : tensor<2x4xf32>
    %4 = cairn.linear %3, %w2 : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %5 = cairn.cross_entropy %4, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
    return %5 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK: %[[SUM:.*]] = cairn.add
// CHECK: %[[Y:.*]] = cairn.softmax
// CHECK: cairn.softmax_grad %{{.*}}, %[[Y]]
// CHECK-NEXT: cairn.layer_norm_grad %{{.*}}, %[[SUM]]
