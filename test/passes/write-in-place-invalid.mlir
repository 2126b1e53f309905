// RUN: cairn-opt %s -verify-diagnostics --cairn-write-in-place

// Tests that the pass needs a program: the tensor-level functions are
// cairn-lower-to-kernels' to turn into one.
// expected-error @+1 {{cairn-write-in-place expected a cairn.program (cairn-lower-to-kernels makes it from @train_step and @forward)}}
module {
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
