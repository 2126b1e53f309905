// RUN: cairn-opt %s --cairn-check-executable -split-input-file -verify-diagnostics | FileCheck %s

// What no generated executable could run (cairn build runs this pass first). A model that
// keeps the contract is left as it is.

// CHECK-LABEL: func.func @forward
// CHECK: cairn.linear
module attributes {cairn.batch = 4 : i64, cairn.model = "M", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                     %w: tensor<2x3xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>}) -> tensor<4x2xf32> {
    %0 = cairn.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %y: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>},
                  %w: tensor<2x3xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    %1 = cairn.cross_entropy %0, %y {label_smoothing = 0.0 : f64} : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// An input whose first dimension is not the batch size, in either function.
module attributes {cairn.batch = 4 : i64, cairn.model = "M", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  // expected-error @+1 {{input 'y' of shape [3] does not start with the batch size 4}}
                  %y: tensor<3xf32> {cairn.name = "y", cairn.role = #cairn.role<input>}) -> tensor<f32> {
    %0 = cairn.mean %x {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// A forward result without a row per example.
module attributes {cairn.batch = 4 : i64, cairn.model = "M", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<3xf32> {
    %0 = cairn.sum %x {dims = array<i64: 0>, keepdim = false} : tensor<4x3xf32> -> tensor<3xf32>
    // expected-error @+1 {{forward returns [3]; an executable reads one floating-point output of shape [batch, ...] (batch 4), a row per example}}
    return %0 : tensor<3xf32>
  }
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<f32> {
    %0 = cairn.mean %x {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// No optimizer: nothing to train.
// expected-error @+1 {{cairn build makes a training executable, which needs a loss(...) { ... } and an optimizer; this model has no optimizer}}
module attributes {cairn.batch = 4 : i64, cairn.model = "M"} {
  func.func @forward(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<f32> {
    %0 = cairn.mean %x {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}
