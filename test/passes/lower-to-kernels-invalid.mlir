// RUN: cairn-opt %s --cairn-lower-to-kernels -split-input-file -verify-diagnostics
// RUN: not cairn-opt %S/Inputs/lower-f16.mlir --cairn-lower-to-kernels=target=cuda 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not cairn-opt %S/Inputs/lower-f16.mlir --cairn-lower-to-kernels=target=tpu 2>&1 | FileCheck %s --check-prefix=TARGET

// Every diagnostic of cairn-lower-to-kernels (passes/LowerToKernels.cpp,
// LowerSteps.cpp, LowerOps.cpp) that a module can reach. Not here: "result
// #i updates no argument of its type", which the dialect's check of
// cairn.updates on @train_step's results reports first, and the internal
// errors of writing the program (passes/KernelGraphIR.cpp), which no
// lowering produces.

// The CUDA backend takes no half precision either, and names itself.
// CUDA: lower-f16.mlir:5:25: error: cannot lower 'x' of type 'tensor<4xf16>' to the CUDA backend (it takes f32 and f64 tensors, i32 and i64 indices)

// An unknown target is an error at the module before anything is lowered:
// the f16 argument is not looked at.
// TARGET: lower-f16.mlir:4:1: error: cairn-lower-to-kernels: unknown target 'tpu'; expected cpu or cuda
// TARGET-NOT: cannot lower

// Tests that the module has both functions to lower.
// expected-error @+1 {{internal error: expected @train_step and @forward to generate code for}}
module {
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    %0 = cairn.relu %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Tests that an f16 argument cannot be lowered to the CPU backend, at the
// argument.
module {
  func.func @train_step(
      // expected-error @+1 {{cannot lower 'x' of type 'tensor<4xf16>' to the CPU backend (it takes f32 and f64 tensors, i32 and i64 indices)}}
      %x: tensor<4xf16> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @forward(%x: tensor<4xf16> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf16> {
    return %x : tensor<4xf16>
  }
}

// -----

// Tests that an op on a bf16 tensor other than a cast or a reshape cannot be
// lowered to the CPU backend, at the op (cairn-compute-half-in-float32 gives
// it float32 operands first).
module {
  func.func @train_step(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    // expected-error @+1 {{cannot lower 'cairn.constant' on 'tensor<4xbf16>' to the CPU backend (it takes f32 and f64 tensors, i32 and i64 indices; f16 and bf16 ones are converted and reshaped only)}}
    %0 = cairn.constant dense<1.0> : tensor<4xbf16>
    %1 = cairn.constant dense<1.0> : tensor<f32>
    return %1 : tensor<f32>
  }
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that an op with no kernel is an error at the op.
module {
  func.func private @helper(tensor<4xf32>) -> tensor<4xf32>
  func.func @train_step(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    // expected-error @+1 {{cannot lower 'func.call' to the CPU backend}}
    %0 = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = cairn.constant dense<1.0> : tensor<f32>
    return %1 : tensor<f32>
  }
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that a broadcast of integers that adds elements has no kernel.
module {
  func.func @train_step(%y: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    // expected-error @+1 {{cannot lower 'cairn.broadcast' to the CPU backend}}
    %0 = cairn.broadcast %y : tensor<4xi64> -> tensor<2x4xi64>
    %1 = cairn.constant dense<1.0> : tensor<f32>
    return %1 : tensor<f32>
  }
  func.func @forward(%y: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}) -> tensor<4xi64> {
    return %y : tensor<4xi64>
  }
}

// -----

// Tests that a constant that is not dense cannot be lowered.
module {
  func.func @train_step(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    // expected-error @+1 {{cannot lower 'cairn.constant' to the CPU backend: only dense constants are supported}}
    %0 = cairn.constant dense_resource<blob> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F"
    }
  }
#-}

// -----

// Tests that every argument has a name and a persistent role: a gradient
// cannot be an argument.
module {
  func.func @train_step(
      // expected-error @+1 {{internal error: argument #0 of @train_step needs 'cairn.name' and an input, param, buffer or optimizer_state 'cairn.role'}}
      %g: tensor<4xf32> {cairn.name = "grad.w", cairn.role = #cairn.role<gradient>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that an argument without a name is rejected.
module {
  func.func @train_step(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @forward(
      // expected-error @+1 {{internal error: argument #0 of @forward needs 'cairn.name' and an input, param, buffer or optimizer_state 'cairn.role'}}
      %x: tensor<4xf32> {cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that the two steps agree on the tensor of a name.
module {
  func.func @train_step(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @forward(
      // expected-error @+1 {{internal error: 'x' of @forward differs from the tensor of that name in the other step}}
      %x: tensor<8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
}

// -----

// Tests that the two steps agree on the kind of a name.
module {
  func.func @train_step(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<param>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @forward(
      // expected-error @+1 {{internal error: 'x' of @forward differs from the tensor of that name in the other step}}
      %x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that @forward returns one tensor.
module {
  func.func @train_step(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<4xf32>, tensor<4xf32>) {
    // expected-error @+1 {{internal error: expected @forward to return one tensor (the output)}}
    return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// Tests that every result of @train_step has a name and a role.
module {
  func.func @train_step(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}, tensor<4xf32>) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    // expected-error @+1 {{internal error: result #1 of @train_step needs 'cairn.name' and 'cairn.role'}}
    return %0, %x : tensor<f32>, tensor<4xf32>
  }
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that a result is an output, a gradient or an update: a param
// without cairn.updates is none.
module {
  func.func @train_step(%w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}, tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    // expected-error @+1 {{internal error: result #1 is neither an output, a gradient nor the new value of an argument}}
    return %0, %w : tensor<f32>, tensor<4xf32>
  }
  func.func @forward(%w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> tensor<4xf32> {
    return %w : tensor<4xf32>
  }
}
