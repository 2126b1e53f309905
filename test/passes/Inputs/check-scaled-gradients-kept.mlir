// Input of check-scaled-gradients.mlir: found_inf operands the pass leaves as they are.

// A gradient read before the check (here by the step's sum): it keeps its place.
func.func @read_before(%h: tensor<4xf16>) -> (tensor<f32>, tensor<4xf32>, tensor<f32>) {
  %g = cairn.cast %h : tensor<4xf16> -> tensor<4xf32>
  %inv = cairn.loss_scale {inverse} : tensor<f32>
  %u = cairn.mul %g, %inv : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %s = cairn.sum %u {dims = array<i64: 0>, keepdim = false} : tensor<4xf32> -> tensor<f32>
  %f = cairn.found_inf %u : (tensor<4xf32>) -> tensor<f32>
  return %f, %u, %s : tensor<f32>, tensor<4xf32>, tensor<f32>
}

// -----

// A gradient not unscaled by 1 / scale (a product with the scale itself) is checked as it is.
func.func @not_unscaled(%g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %scale = cairn.loss_scale : tensor<f32>
  %u = cairn.mul %g, %scale : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %f = cairn.found_inf %u : (tensor<4xf32>) -> tensor<f32>
  return %f, %u : tensor<f32>, tensor<4xf32>
}
