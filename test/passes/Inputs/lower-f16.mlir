// Half-precision tensors, which neither backend's kernels take (used by
// lower-to-kernels-invalid.mlir; no expected-* lines, so that its RUN lines
// without -verify-diagnostics see the diagnostics alone).
module {
  func.func @train_step(%x: tensor<4xf16> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    %0 = cairn.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @forward(%x: tensor<4xf16> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf16> {
    return %x : tensor<4xf16>
  }
}
