// RUN: cairn-opt %s --cairn-autocast=precision=bf16 --cairn-autodiff | FileCheck %s

// Tests that the half copy of a float32 value read by several products sums
// their gradients in float32: cairn-autocast casts the layer norm's float32
// output to bf16 once for both linears (as the transformer's q, k and v
// projections read one input), while PyTorch's autocast casts it once per
// use, so autograd adds the uses' gradients widened. Each linear_grad_input
// is widened before the add, and the add is float32; a bf16 add would round
// every partial sum.
module attributes {cairn.batch = 2 : i64, cairn.model = "M", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %g: tensor<4xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "norm.weight", cairn.role = #cairn.role<param>}, %w1: tensor<4x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "q.weight", cairn.role = #cairn.role<param>}, %w2: tensor<4x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "k.weight", cairn.role = #cairn.role<param>}) -> tensor<2x4xf32> {
    %0 = cairn.layer_norm %x weight %g {normalized_rank = 1, eps = 1.0e-5} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
  func.func @loss(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %y: tensor<2xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}, %g: tensor<4xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "norm.weight", cairn.role = #cairn.role<param>}, %w1: tensor<4x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "q.weight", cairn.role = #cairn.role<param>}, %w2: tensor<4x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "k.weight", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.layer_norm %x weight %g {normalized_rank = 1, eps = 1.0e-5} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %1 = cairn.linear %0, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %2 = cairn.linear %0, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %3 = cairn.add %1, %2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
    %4 = cairn.cross_entropy %3, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<f32>
    return %4 : tensor<f32>
  }
}
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[N:.*]] = cairn.layer_norm {{.*}} -> tensor<2x4xf32>
// CHECK: %[[H:.*]] = cairn.cast %[[N]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK: cairn.linear %[[H]]
// CHECK: cairn.linear %[[H]]
// CHECK: %[[D1:.*]] = cairn.linear_grad_input {{.*}} -> tensor<2x4xbf16>
// CHECK: %[[W1:.*]] = cairn.cast %[[D1]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[D2:.*]] = cairn.linear_grad_input {{.*}} -> tensor<2x4xbf16>
// CHECK: %[[W2:.*]] = cairn.cast %[[D2]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[SUM:.*]] = cairn.add %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NOT: cairn.add {{.*}}xbf16>
// CHECK: cairn.layer_norm_grad %[[SUM]]
