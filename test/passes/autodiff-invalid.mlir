// RUN: cairn-opt %s --cairn-autodiff -split-input-file -verify-diagnostics

// Every diagnostic of the autodiff pass, at the location it names.

// Tests that a module without @loss is rejected.
// expected-error @+1 {{expected a function @loss (the training forward) to build @train_step from}}
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that the optimizer is required.
// expected-error @+1 {{expected 'cairn.optimizer' on the module to build @train_step}}
module {
  func.func @loss(%w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.sum %w {dims = array<i64: 0>, keepdim = false} : tensor<4xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Tests that a module that already has @train_step is rejected.
// expected-error @+1 {{expected no @train_step before autodiff}}
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.sum %w {dims = array<i64: 0>, keepdim = false} : tensor<4xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @train_step() {
    return
  }
}

// -----

// Tests that @loss returns a scalar.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> tensor<4xf32> {
    // expected-error @+1 {{expected @loss to return one rank-0 float tensor (the loss)}}
    return %w : tensor<4xf32>
  }
}

// -----

// Tests that every argument of @loss has a name and a role.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>},
                  // expected-error @+1 {{expected argument #1 of @loss to have 'cairn.name' and 'cairn.role'}}
                  %x: tensor<4xf32> {cairn.name = "x"}) -> tensor<f32> {
    %0 = cairn.mul %w, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0>, keepdim = false} : tensor<4xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// Tests that @loss's arguments are inputs, params or buffers.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  // expected-error @+1 {{expected argument #0 of @loss to be an input, param or buffer but got #cairn.role<optimizer_state>}}
  func.func @loss(%w: tensor<4xf32> {cairn.name = "w.exp_avg", cairn.role = #cairn.role<optimizer_state>}) -> tensor<f32> {
    %0 = cairn.sum %w {dims = array<i64: 0>, keepdim = false} : tensor<4xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Tests that an op without a gradient rule on the path from a param to the
// loss is an error at that op.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>},
                  %x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<f32> {
    // expected-error @+1 {{no gradient rule for 'cairn.relu_grad'}}
    %0 = cairn.relu_grad %x, %w : tensor<4xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0>, keepdim = false} : tensor<4xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// Tests that an op without a gradient rule that no param reaches is fine,
// and one that a param reaches is not.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>},
                  %x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<f32> {
    %0 = cairn.relu_grad %x, %x : tensor<4xf32>
    %1 = cairn.mul %0, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    // expected-error @+1 {{no gradient rule for 'cairn.softmax_grad'}}
    %2 = cairn.softmax_grad %1, %0 {dim = 0 : i64} : tensor<4xf32>
    %3 = cairn.sum %2 {dims = array<i64: 0>, keepdim = false} : tensor<4xf32> -> tensor<f32>
    return %3 : tensor<f32>
  }
}

// -----

// Tests that a batch_norm in eval mode inside @loss has no gradient rule.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %g: tensor<3xf32> {cairn.name = "bn.weight", cairn.role = #cairn.role<param>},
                  %b: tensor<3xf32> {cairn.name = "bn.bias", cairn.role = #cairn.role<param>},
                  %m: tensor<3xf32> {cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>},
                  %v: tensor<3xf32> {cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}) -> tensor<f32> {
    // expected-error @+1 {{no gradient rule for 'cairn.batch_norm' in eval mode (training = false)}}
    %0 = cairn.batch_norm %x weight %g bias %b mean %m var %v {eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = false} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// Tests that a training-mode batch_norm's running statistics are buffers.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %m: tensor<3xf32> {cairn.name = "bn.running_mean", cairn.role = #cairn.role<param>},
                  %v: tensor<3xf32> {cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}) -> tensor<f32> {
    // expected-error @+1 {{expected the running statistics of a training-mode batch_norm to be buffer arguments}}
    %0 = cairn.batch_norm %x mean %m var %v {eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = true} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// Tests that the running mean is named as PyTorch's state_dict names it.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %m: tensor<3xf32> {cairn.name = "bn.mean", cairn.role = #cairn.role<buffer>},
                  %v: tensor<3xf32> {cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}) -> tensor<f32> {
    // expected-error @+1 {{expected the running mean buffer to be named '<layer>.running_mean' but got 'bn.mean'}}
    %0 = cairn.batch_norm %x mean %m var %v {eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = true} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// Tests that a layer with running statistics has its num_batches_tracked.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %m: tensor<3xf32> {cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>},
                  %v: tensor<3xf32> {cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>},
                  %n: tensor<i64> {cairn.name = "other.num_batches_tracked", cairn.role = #cairn.role<buffer>}) -> tensor<f32> {
    // expected-error @+1 {{expected a buffer argument 'bn.num_batches_tracked' for the running statistics of this batch_norm}}
    %0 = cairn.batch_norm %x mean %m var %v {eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = true} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}
