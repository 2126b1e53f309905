// RUN: cairn-opt %s -split-input-file --cairn-autocast=precision=f16 | FileCheck %s
// RUN: cairn-opt %s -split-input-file --cairn-autocast=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: cairn-opt %s -split-input-file --cairn-autocast=precision=f32 | FileCheck %s --check-prefix=F32

// Tests the element type each op computes in: linear in half (its input,
// weight and bias cast once each, right before the linear reads them), relu and
// the scaled product following their operand (the scalar made again in
// half, not cast, the float32 one gone), the loss in float32 (the logits cast back); @forward's
// output cast back to the declared float32. bf16 alike; float32 leaves the
// model as it is (autocast-autodiff.mlir differentiates this model).
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
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT: %[[X:.*]] = cairn.cast %{{.*}} : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK-NEXT: %[[W:.*]] = cairn.cast %{{.*}} : tensor<8x4xf32> -> tensor<8x4xf16>
// CHECK-NEXT: %[[B:.*]] = cairn.cast %{{.*}} : tensor<8xf32> -> tensor<8xf16>
// CHECK-NEXT: %[[Y:.*]] = cairn.linear %[[X]], %[[W]], %[[B]] : (tensor<2x4xf16>, tensor<8x4xf16>, tensor<8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT: %[[OUT:.*]] = cairn.cast %[[Y]] : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK-NEXT: return %[[OUT]] : tensor<2x8xf32>
// CHECK-LABEL: func.func @loss(
// CHECK-COUNT-3: cairn.cast
// CHECK-NEXT: %[[L:.*]] = cairn.linear {{.*}} -> tensor<2x8xf16>
// CHECK-NEXT: %[[R:.*]] = cairn.relu %[[L]] : tensor<2x8xf16>
// CHECK-NEXT: %[[H:.*]] = cairn.constant dense<5.000000e-01> : tensor<f16>
// CHECK-NEXT: %[[M:.*]] = cairn.mul %[[R]], %[[H]] : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
// CHECK-NEXT: %[[M32:.*]] = cairn.cast %[[M]] : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK-NEXT: cairn.cross_entropy %[[M32]], %{{.*}} {{.*}} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>

// BF16-LABEL: func.func @forward(
// BF16: cairn.linear {{.*}} : (tensor<2x4xbf16>, tensor<8x4xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16>
// BF16: cairn.cast %{{.*}} : tensor<2x8xbf16> -> tensor<2x8xf32>

// F32-NOT: cairn.cast
// F32-NOT: f16

// -----

// Tests that a value read in half by two ops is cast once; that an op in a
// `precision f32` region keeps float32 whatever the model's type; that a sum
// of a half and a float32 tensor is float32; that batch_norm takes the half
// output of a convolution as it is, with its float32 parameters and
// statistics (it computes in float32, its input is kept in half), and
// max_pool follows its input.
module attributes {cairn.batch = 2 : i64, cairn.model = "N"} {
  func.func @forward(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %w: tensor<4x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc.weight", cairn.role = #cairn.role<param>}) -> tensor<2x4xf32> {
    %0 = cairn.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %1 = cairn.linear %0, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %2 = cairn.linear %1, %w {cairn.precision = #cairn.precision<f32>} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %3 = cairn.add %1, %2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
    return %3 : tensor<2x4xf32>
  }
}
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT: %[[X:.*]] = cairn.cast
// CHECK-NEXT: %[[W:.*]] = cairn.cast %{{.*}} : tensor<4x4xf32> -> tensor<4x4xf16>
// CHECK-NEXT: %[[A:.*]] = cairn.linear %[[X]], %[[W]] {{.*}} -> tensor<2x4xf16>
// CHECK-NEXT: %[[B:.*]] = cairn.linear %[[A]], %[[W]] {{.*}} -> tensor<2x4xf16>
// CHECK-NEXT: %[[B32:.*]] = cairn.cast %[[B]] : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK-NEXT: %[[C:.*]] = cairn.linear %[[B32]], %{{.*}} {cairn.precision = #cairn.precision<f32>} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[S:.*]] = cairn.add %[[B32]], %[[C]] : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: return %[[S]]

// -----

module attributes {cairn.batch = 2 : i64, cairn.model = "C"} {
  func.func @forward(%x: tensor<2x1x4x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %w: tensor<2x1x3x3xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "conv.weight", cairn.role = #cairn.role<param>}, %g: tensor<2xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "bn.weight", cairn.role = #cairn.role<param>}, %b: tensor<2xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.bias", cairn.role = #cairn.role<param>}, %m: tensor<2xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>}, %v: tensor<2xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}) -> tensor<2x2x2x2xf32> {
    %0 = cairn.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x4x4xf32>
    %1 = cairn.batch_norm %0 weight %g bias %b mean %m var %v {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = false} : (tensor<2x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x4x4xf32>
    %2 = cairn.max_pool2d %1 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<2x2x4x4xf32> -> tensor<2x2x2x2xf32>
    return %2 : tensor<2x2x2x2xf32>
  }
}
// CHECK-LABEL: func.func @forward(
// CHECK: %[[C:.*]] = cairn.conv2d {{.*}} : (tensor<2x1x4x4xf16>, tensor<2x1x3x3xf16>) -> tensor<2x2x4x4xf16>
// CHECK-NEXT: %[[N:.*]] = cairn.batch_norm %[[C]] {{.*}} : (tensor<2x2x4x4xf16>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x4x4xf16>
// CHECK-NEXT: %[[P:.*]] = cairn.max_pool2d %[[N]] {{.*}} : tensor<2x2x4x4xf16> -> tensor<2x2x2x2xf16>
// CHECK-NEXT: %[[P32:.*]] = cairn.cast %[[P]] : tensor<2x2x2x2xf16> -> tensor<2x2x2x2xf32>
// CHECK-NEXT: return %[[P32]]
