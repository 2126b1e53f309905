// RUN: cairn-opt %s -split-input-file -verify-diagnostics

// One negative case for every diagnostic of the training ops
// (CairnTrainingOps.cpp), of matmul's transpose flags, and of the result
// attributes of a training step (cairn.role, cairn.updates).

// Tests that a relu_grad's operands have one type.
func.func @f(%dy: tensor<4x8xf32>, %y: tensor<4x9xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'cairn.relu_grad' op requires the same type for all operands and results}}
  %0 = "cairn.relu_grad"(%dy, %y) : (tensor<4x8xf32>, tensor<4x9xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that gelu_grad's approximate is "none" or "tanh".
func.func @f(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'cairn.gelu_grad' op expected approximate to be "none" or "tanh" but got "fast"}}
  %0 = cairn.gelu_grad %dy, %x {approximate = "fast"} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that softmax_grad's dim is in [0, rank).
func.func @f(%dy: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'cairn.softmax_grad' op expected dim in [0, 2) but got 2}}
  %0 = cairn.softmax_grad %dy, %y {dim = 2} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that log_softmax_grad's dim is in [0, rank).
func.func @f(%dy: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'cairn.log_softmax_grad' op expected dim in [0, 2) but got -1}}
  %0 = cairn.log_softmax_grad %dy, %y {dim = -1} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that matmul checks its shapes after the transpositions.
func.func @f(%a: tensor<8x64x32xf32>, %b: tensor<32x16xf32>) -> tensor<8x32x16xf32> {
  // expected-error @+1 {{'cairn.matmul' op expected rhs with dimension -2 equal to the last dimension of lhs [8, 32, 64] but got [32, 16]}}
  %0 = cairn.matmul %a, %b {transpose_lhs = true} : tensor<8x64x32xf32>, tensor<32x16xf32> -> tensor<8x32x16xf32>
  return %0 : tensor<8x32x16xf32>
}

// -----

// Tests that matmul's result follows the transpositions.
func.func @f(%a: tensor<8x64x32xf32>, %b: tensor<16x32xf32>) -> tensor<8x64x32xf32> {
  // expected-error @+1 {{'cairn.matmul' op expected result of type 'tensor<8x64x16xf32>' but got 'tensor<8x64x32xf32>'}}
  %0 = cairn.matmul %a, %b {transpose_rhs = true} : tensor<8x64x32xf32>, tensor<16x32xf32> -> tensor<8x64x32xf32>
  return %0 : tensor<8x64x32xf32>
}

// -----

// Tests that linear_grad_input's dy ends with the weight's out.
func.func @f(%dy: tensor<64x10xf32>, %w: tensor<12x784xf32>) -> tensor<64x784xf32> {
  // expected-error @+1 {{'cairn.linear_grad_input' op expected weight [out, in] and dy [..., out] but got weight [12, 784] and dy [64, 10]}}
  %0 = cairn.linear_grad_input %dy, %w : (tensor<64x10xf32>, tensor<12x784xf32>) -> tensor<64x784xf32>
  return %0 : tensor<64x784xf32>
}

// -----

// Tests that linear_grad_input's result is dy's leading dimensions and in.
func.func @f(%dy: tensor<64x10xf32>, %w: tensor<10x784xf32>) -> tensor<32x784xf32> {
  // expected-error @+1 {{'cairn.linear_grad_input' op expected result of type 'tensor<64x784xf32>' but got 'tensor<32x784xf32>'}}
  %0 = cairn.linear_grad_input %dy, %w : (tensor<64x10xf32>, tensor<10x784xf32>) -> tensor<32x784xf32>
  return %0 : tensor<32x784xf32>
}

// -----

// Tests that linear_grad_input computes in one half type (its float32
// tensors are rounded to it; another half type is not).
func.func @f(%dy: tensor<64x10xbf16>, %w: tensor<10x784xf16>) -> tensor<64x784xf32> {
  // expected-error @+1 {{'cairn.linear_grad_input' op expected weight with element type 'bf16' or 'f32' but got 'tensor<10x784xf16>'}}
  %0 = cairn.linear_grad_input %dy, %w : (tensor<64x10xbf16>, tensor<10x784xf16>) -> tensor<64x784xf32>
  return %0 : tensor<64x784xf32>
}

// -----

// Tests that linear_grad_weight's dy and input have the same leading dimensions.
func.func @f(%dy: tensor<64x10xf32>, %x: tensor<32x784xf32>) -> tensor<10x784xf32> {
  // expected-error @+1 {{'cairn.linear_grad_weight' op expected dy [..., out] and input [..., in] with the same leading dimensions but got dy [64, 10] and input [32, 784]}}
  %0 = cairn.linear_grad_weight %dy, %x : (tensor<64x10xf32>, tensor<32x784xf32>) -> tensor<10x784xf32>
  return %0 : tensor<10x784xf32>
}

// -----

// Tests that linear_grad_weight's result is [out, in].
func.func @f(%dy: tensor<64x10xf32>, %x: tensor<64x784xf32>) -> tensor<784x10xf32> {
  // expected-error @+1 {{'cairn.linear_grad_weight' op expected result of type 'tensor<10x784xf32>' but got 'tensor<784x10xf32>'}}
  %0 = cairn.linear_grad_weight %dy, %x : (tensor<64x10xf32>, tensor<64x784xf32>) -> tensor<784x10xf32>
  return %0 : tensor<784x10xf32>
}

// -----

// Tests that conv2d_grad_input's dy is the forward conv2d's result.
func.func @f(%dy: tensor<8x16x16x16xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<8x3x32x32xf32> {
  // expected-error @+1 {{'cairn.conv2d_grad_input' op expected dy of shape [8, 16, 32, 32] (the forward op's result) but got [8, 16, 16, 16]}}
  %0 = cairn.conv2d_grad_input %dy, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x16x16x16xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x32x32xf32>
  return %0 : tensor<8x3x32x32xf32>
}

// -----

// Tests that a transposed convolution's bias has one element per result channel.
func.func @f(%x: tensor<8x16x16x16xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<8x3x32x32xf32> {
  // expected-error @+1 {{'cairn.conv2d_grad_input' op expected a bias [3] (the result's channels) but got [16]}}
  %0 = cairn.conv2d_grad_input %x, %w bias %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<8x3x32x32xf32>
  return %0 : tensor<8x3x32x32xf32>
}

// -----

// Tests that a transposed convolution's bias is of its half type or float32.
func.func @f(%x: tensor<8x16x16x16xbf16>, %w: tensor<16x3x3x3xbf16>, %b: tensor<3xf16>) -> tensor<8x3x32x32xbf16> {
  // expected-error @+1 {{'cairn.conv2d_grad_input' op}}
  %0 = cairn.conv2d_grad_input %x, %w bias %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xbf16>, tensor<16x3x3x3xbf16>, tensor<3xf16>) -> tensor<8x3x32x32xbf16>
  return %0 : tensor<8x3x32x32xbf16>
}

// -----

// Tests that conv2d_grad_input runs conv2d's shape rule.
func.func @f(%dy: tensor<8x16x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<8x4x32x32xf32> {
  // expected-error @+1 {{'cairn.conv2d_grad_input' op expected weight of shape [16, 4, 3, 3] for input [8, 4, 32, 32] and groups 1 but got [16, 3, 3, 3]}}
  %0 = cairn.conv2d_grad_input %dy, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x4x32x32xf32>
  return %0 : tensor<8x4x32x32xf32>
}

// -----

// Tests that conv2d_grad_weight's dy is the forward conv2d's result.
func.func @f(%dy: tensor<8x16x32x32xf32>, %x: tensor<8x3x32x32xf32>) -> tensor<16x3x3x3xf32> {
  // expected-error @+1 {{'cairn.conv2d_grad_weight' op expected dy of shape [8, 16, 30, 30] (the forward op's result) but got [8, 16, 32, 32]}}
  %0 = cairn.conv2d_grad_weight %dy, %x {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>, tensor<8x3x32x32xf32>) -> tensor<16x3x3x3xf32>
  return %0 : tensor<16x3x3x3xf32>
}

// -----

// Tests that conv2d_grad_weight's tensors share their element type where
// none is half.
func.func @f(%dy: tensor<8x16x32x32xf32>, %x: tensor<8x3x32x32xf64>) -> tensor<16x3x3x3xf32> {
  // expected-error @+1 {{'cairn.conv2d_grad_weight' op expected input with element type 'f32' but got 'tensor<8x3x32x32xf64>'}}
  %0 = cairn.conv2d_grad_weight %dy, %x {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>, tensor<8x3x32x32xf64>) -> tensor<16x3x3x3xf32>
  return %0 : tensor<16x3x3x3xf32>
}

// -----

// Tests that batch_norm_grad's input has rank 2, 3 or 4.
func.func @f(%dy: tensor<16xf32>, %x: tensor<16xf32>) {
  // expected-error @+1 {{'cairn.batch_norm_grad' op expected input of rank 2, 3 or 4 ([N, C], [N, C, L] or [N, C, H, W]) but got [16]}}
  %0:3 = cairn.batch_norm_grad %dy, %x {eps = 1.0e-5 : f64} : (tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Tests that batch_norm_grad's eps is > 0.
func.func @f(%dy: tensor<8x16xf32>, %x: tensor<8x16xf32>) {
  // expected-error @+1 {{'cairn.batch_norm_grad' op expected eps > 0 but got 0}}
  %0:3 = cairn.batch_norm_grad %dy, %x {eps = 0.0 : f64} : (tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Tests that batch_norm_grad's dy has the input's type.
func.func @f(%dy: tensor<8x15xf32>, %x: tensor<8x16xf32>) {
  // expected-error @+1 {{'cairn.batch_norm_grad' op expected dy of type 'tensor<8x16xf32>' but got 'tensor<8x15xf32>'}}
  %0:3 = cairn.batch_norm_grad %dy, %x {eps = 1.0e-5 : f64} : (tensor<8x15xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Tests that batch_norm_grad's weight is [C].
func.func @f(%dy: tensor<8x16xf32>, %x: tensor<8x16xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'cairn.batch_norm_grad' op expected weight of type 'tensor<16xf32>' but got 'tensor<8xf32>'}}
  %0:3 = cairn.batch_norm_grad %dy, %x weight %w {eps = 1.0e-5 : f64} : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Tests that batch_norm_grad's parameter gradients are [C].
func.func @f(%dy: tensor<8x16xf32>, %x: tensor<8x16xf32>) {
  // expected-error @+1 {{'cairn.batch_norm_grad' op expected result #2 of type 'tensor<16xf32>' but got 'tensor<8xf32>'}}
  %0:3 = cairn.batch_norm_grad %dy, %x {eps = 1.0e-5 : f64} : (tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<8xf32>)
  return
}

// -----

// Tests that batch_norm_running_update's momentum is in [0, 1].
func.func @f(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'cairn.batch_norm_running_update' op expected momentum in [0, 1] but got 1.5}}
  %0:3 = cairn.batch_norm_running_update %x, %m, %v, %n {momentum = 1.5 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<i64>)
  return
}

// -----

// Tests that batch_norm_running_update needs more than one value per channel (the unbiased variance).
func.func @f(%x: tensor<1x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'cairn.batch_norm_running_update' op expected more than one value per channel but got input [1, 16]}}
  %0:3 = cairn.batch_norm_running_update %x, %m, %v, %n {momentum = 0.1 : f64} : (tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<i64>)
  return
}

// -----

// Tests that batch_norm_running_update's statistics are [C].
func.func @f(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<15xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'cairn.batch_norm_running_update' op expected running_var of type 'tensor<16xf32>' but got 'tensor<15xf32>'}}
  %0:3 = cairn.batch_norm_running_update %x, %m, %v, %n {momentum = 0.1 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<15xf32>, tensor<i64>) -> (tensor<16xf32>, tensor<15xf32>, tensor<i64>)
  return
}

// -----

// Tests that batch_norm_running_update's count is rank 0.
func.func @f(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>, %n: tensor<1xi64>) {
  // expected-error @+1 {{'cairn.batch_norm_running_update' op expected num_batches_tracked of type 'tensor<i64>' but got 'tensor<1xi64>'}}
  %0:3 = cairn.batch_norm_running_update %x, %m, %v, %n {momentum = 0.1 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<1xi64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<1xi64>)
  return
}

// -----

// Tests that batch_norm_running_update's count is i64.
func.func @f(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>, %n: tensor<i32>) {
  // expected-error @+1 {{'cairn.batch_norm_running_update' op operand #3 must be tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0:3 = cairn.batch_norm_running_update %x, %m, %v, %n {momentum = 0.1 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<i32>)
  return
}

// -----

// Tests that batch_norm_running_update's results have their operands' types.
func.func @f(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'cairn.batch_norm_running_update' op expected result #1 of type 'tensor<16xf32>' but got 'tensor<16xf16>'}}
  %0:3 = cairn.batch_norm_running_update %x, %m, %v, %n {momentum = 0.1 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf16>, tensor<i64>)
  return
}

// -----

// Tests that layer_norm_grad's normalized_rank is in [1, rank].
func.func @f(%dy: tensor<8x64xf32>, %x: tensor<8x64xf32>) {
  // expected-error @+1 {{'cairn.layer_norm_grad' op expected normalized_rank in [1, 2] for input [8, 64] but got 3}}
  %0:3 = cairn.layer_norm_grad %dy, %x {eps = 1.0e-5 : f64, normalized_rank = 3} : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

// Tests that layer_norm_grad's eps is > 0.
func.func @f(%dy: tensor<8x64xf32>, %x: tensor<8x64xf32>) {
  // expected-error @+1 {{'cairn.layer_norm_grad' op expected eps > 0 but got -1}}
  %0:3 = cairn.layer_norm_grad %dy, %x {eps = -1.0 : f64, normalized_rank = 1} : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

// Tests that layer_norm_grad's parameter gradients have the normalized shape.
func.func @f(%dy: tensor<8x16x64xf32>, %x: tensor<8x16x64xf32>) {
  // expected-error @+1 {{'cairn.layer_norm_grad' op expected result #1 of type 'tensor<16x64xf32>' but got 'tensor<64xf32>'}}
  %0:3 = cairn.layer_norm_grad %dy, %x {eps = 1.0e-5 : f64, normalized_rank = 2} : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

// Tests that embedding_grad's num_embeddings is >= 1.
func.func @f(%dy: tensor<8x64xf32>, %ids: tensor<8xi64>) -> tensor<1x64xf32> {
  // expected-error @+1 {{'cairn.embedding_grad' op expected num_embeddings >= 1 but got 0}}
  %0 = cairn.embedding_grad %dy, %ids {num_embeddings = 0 : i64} : (tensor<8x64xf32>, tensor<8xi64>) -> tensor<1x64xf32>
  return %0 : tensor<1x64xf32>
}

// -----

// Tests that embedding_grad's padding_idx is in [0, num_embeddings).
func.func @f(%dy: tensor<8x64xf32>, %ids: tensor<8xi64>) -> tensor<100x64xf32> {
  // expected-error @+1 {{'cairn.embedding_grad' op expected padding_idx in [0, 100) but got 100}}
  %0 = cairn.embedding_grad %dy, %ids {num_embeddings = 100 : i64, padding_idx = 100 : i64} : (tensor<8x64xf32>, tensor<8xi64>) -> tensor<100x64xf32>
  return %0 : tensor<100x64xf32>
}

// -----

// Tests that embedding_grad's dy is indices + [dim].
func.func @f(%dy: tensor<8x64xf32>, %ids: tensor<4x8xi64>) -> tensor<100x64xf32> {
  // expected-error @+1 {{'cairn.embedding_grad' op expected dy of shape indices + [dim] with indices [4, 8] but got [8, 64]}}
  %0 = cairn.embedding_grad %dy, %ids {num_embeddings = 100 : i64} : (tensor<8x64xf32>, tensor<4x8xi64>) -> tensor<100x64xf32>
  return %0 : tensor<100x64xf32>
}

// -----

// Tests that embedding_grad's result is [num_embeddings, dim].
func.func @f(%dy: tensor<8x64xf32>, %ids: tensor<8xi64>) -> tensor<99x64xf32> {
  // expected-error @+1 {{'cairn.embedding_grad' op expected result of type 'tensor<100x64xf32>' but got 'tensor<99x64xf32>'}}
  %0 = cairn.embedding_grad %dy, %ids {num_embeddings = 100 : i64} : (tensor<8x64xf32>, tensor<8xi64>) -> tensor<99x64xf32>
  return %0 : tensor<99x64xf32>
}

// -----

// Tests that max_pool2d_grad's result has the input's type.
func.func @f(%dy: tensor<8x16x16x16xf32>, %x: tensor<8x16x32x32xf32>) -> tensor<8x16x32x31xf32> {
  // expected-error @+1 {{'cairn.max_pool2d_grad' op expected result of type 'tensor<8x16x32x32xf32>' but got 'tensor<8x16x32x31xf32>'}}
  %0 = cairn.max_pool2d_grad %dy, %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>) -> tensor<8x16x32x31xf32>
  return %0 : tensor<8x16x32x31xf32>
}

// -----

// Tests that max_pool2d_grad's dy is the forward result.
func.func @f(%dy: tensor<8x16x16x16xf32>, %x: tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32> {
  // expected-error @+1 {{'cairn.max_pool2d_grad' op expected dy of shape [8, 16, 30, 30] (the forward op's result) but got [8, 16, 16, 16]}}
  %0 = cairn.max_pool2d_grad %dy, %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  return %0 : tensor<8x16x32x32xf32>
}

// -----

// Tests that avg_pool2d_grad runs avg_pool2d's shape rule.
func.func @f(%dy: tensor<8x16x16x16xf32>) -> tensor<8x16x32x32xf32> {
  // expected-error @+1 {{'cairn.avg_pool2d_grad' op expected padding <= kernel_size / 2 but got padding [2, 2] and kernel_size [2, 2]}}
  %0 = cairn.avg_pool2d_grad %dy {ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 2, 2>, padding = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<8x16x16x16xf32> -> tensor<8x16x32x32xf32>
  return %0 : tensor<8x16x32x32xf32>
}

// -----

// Tests that adaptive_avg_pool2d_grad's dy has rank 4.
func.func @f(%dy: tensor<8x512xf32>) -> tensor<8x512x7x7xf32> {
  // expected-error @+1 {{'cairn.adaptive_avg_pool2d_grad' op expected dy [N, C, oh, ow] but got [8, 512]}}
  %0 = cairn.adaptive_avg_pool2d_grad %dy : tensor<8x512xf32> -> tensor<8x512x7x7xf32>
  return %0 : tensor<8x512x7x7xf32>
}

// -----

// Tests that adaptive_avg_pool2d_grad's dy has the input's batch and channels.
func.func @f(%dy: tensor<8x256x1x1xf32>) -> tensor<8x512x7x7xf32> {
  // expected-error @+1 {{'cairn.adaptive_avg_pool2d_grad' op expected dy of shape [8, 512, 1, 1] (the forward op's result) but got [8, 256, 1, 1]}}
  %0 = cairn.adaptive_avg_pool2d_grad %dy : tensor<8x256x1x1xf32> -> tensor<8x512x7x7xf32>
  return %0 : tensor<8x512x7x7xf32>
}

// -----

// Tests that slice_grad's dy is the forward slice's result.
func.func @f(%dy: tensor<8x5xf32>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'cairn.slice_grad' op expected dy of shape [8, 4] (the forward op's result) but got [8, 5]}}
  %0 = cairn.slice_grad %dy {limit = array<i64: 8, 10>, start = array<i64: 0, 2>, step = array<i64: 1, 2>} : tensor<8x5xf32> -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// -----

// Tests that broadcast's input broadcasts to its result.
func.func @f(%x: tensor<64x2xf32>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.broadcast' op expected a result shape that [64, 2] broadcasts to but got [64, 10]}}
  %0 = cairn.broadcast %x : tensor<64x2xf32> -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that broadcast never drops dimensions.
func.func @f(%x: tensor<4x64x10xf32>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.broadcast' op expected a result shape that [4, 64, 10] broadcasts to but got [64, 10]}}
  %0 = cairn.broadcast %x : tensor<4x64x10xf32> -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that broadcast keeps the element type.
func.func @f(%x: tensor<64x1xf32>) -> tensor<64x10xf16> {
  // expected-error @+1 {{'cairn.broadcast' op expected result with element type 'f32' but got 'tensor<64x10xf16>'}}
  %0 = cairn.broadcast %x : tensor<64x1xf32> -> tensor<64x10xf16>
  return %0 : tensor<64x10xf16>
}

// -----

// Tests that cross_entropy_grad's dloss is rank 0.
func.func @f(%dl: tensor<1xf32>, %l: tensor<64x10xf32>, %y: tensor<64xi64>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.cross_entropy_grad' op expected dloss of type 'tensor<f32>' but got 'tensor<1xf32>'}}
  %0 = cairn.cross_entropy_grad %dl, %l, %y {label_smoothing = 0.0 : f64} : (tensor<1xf32>, tensor<64x10xf32>, tensor<64xi64>) -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that cross_entropy_grad's label_smoothing is in [0, 1].
func.func @f(%dl: tensor<f32>, %l: tensor<64x10xf32>, %y: tensor<64xi64>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.cross_entropy_grad' op expected label_smoothing in [0, 1] but got 2}}
  %0 = cairn.cross_entropy_grad %dl, %l, %y {label_smoothing = 2.0 : f64} : (tensor<f32>, tensor<64x10xf32>, tensor<64xi64>) -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that cross_entropy_grad runs cross_entropy's shape rule.
func.func @f(%dl: tensor<f32>, %l: tensor<64x10xf32>, %y: tensor<32xi64>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.cross_entropy_grad' op expected labels of shape [64] but got [32]}}
  %0 = cairn.cross_entropy_grad %dl, %l, %y {label_smoothing = 0.0 : f64} : (tensor<f32>, tensor<64x10xf32>, tensor<32xi64>) -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that cross_entropy_grad's result has the logits' type.
func.func @f(%dl: tensor<f32>, %l: tensor<64x10xf32>, %y: tensor<64xi64>) -> tensor<64x10xf16> {
  // expected-error @+1 {{'cairn.cross_entropy_grad' op expected result of type 'tensor<64x10xf32>' but got 'tensor<64x10xf16>'}}
  %0 = cairn.cross_entropy_grad %dl, %l, %y {label_smoothing = 0.0 : f64} : (tensor<f32>, tensor<64x10xf32>, tensor<64xi64>) -> tensor<64x10xf16>
  return %0 : tensor<64x10xf16>
}

// -----

// Tests that mse_loss_grad's target has the input's type.
func.func @f(%dl: tensor<f32>, %x: tensor<64x1xf32>, %t: tensor<64xf32>) -> tensor<64x1xf32> {
  // expected-error @+1 {{'cairn.mse_loss_grad' op expected target of type 'tensor<64x1xf32>' but got 'tensor<64xf32>'}}
  %0 = cairn.mse_loss_grad %dl, %x, %t : (tensor<f32>, tensor<64x1xf32>, tensor<64xf32>) -> tensor<64x1xf32>
  return %0 : tensor<64x1xf32>
}

// -----

// Tests that sgd_update checks its hyperparameters as #cairn.sgd does.
func.func @f(%p: tensor<10xf32>, %g: tensor<10xf32>) -> tensor<10xf32> {
  // expected-error @+1 {{'cairn.sgd_update' op expected lr > 0 but got 0}}
  %0 = cairn.sgd_update %p, %g {dampening = 0.0 : f64, lr = 0.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64} : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// Tests that sgd_update's nesterov needs momentum and no dampening.
func.func @f(%p: tensor<10xf32>, %g: tensor<10xf32>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'cairn.sgd_update' op expected momentum > 0 and dampening = 0 with nesterov but got momentum 0.9 and dampening 0.1}}
  %0:2 = cairn.sgd_update %p, %g momentum_buffer %b {dampening = 0.1 : f64, lr = 0.1 : f64, momentum = 0.9 : f64, nesterov = true, weight_decay = 0.0 : f64} : (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>)
  return
}

// -----

// Tests that sgd_update has a momentum buffer when momentum != 0.
func.func @f(%p: tensor<10xf32>, %g: tensor<10xf32>) -> tensor<10xf32> {
  // expected-error @+1 {{'cairn.sgd_update' op expected a momentum_buffer operand exactly when momentum != 0 but got momentum 0.9 without one}}
  %0 = cairn.sgd_update %p, %g {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.9 : f64, nesterov = false, weight_decay = 0.0 : f64} : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// Tests that sgd_update has no momentum buffer when momentum = 0.
func.func @f(%p: tensor<10xf32>, %g: tensor<10xf32>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'cairn.sgd_update' op expected a momentum_buffer operand exactly when momentum != 0 but got momentum 0 with one}}
  %0:2 = cairn.sgd_update %p, %g momentum_buffer %b {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64} : (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>)
  return
}

// -----

// Tests that sgd_update returns the new momentum buffer with the new param.
func.func @f(%p: tensor<10xf32>, %g: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32> {
  // expected-error @+1 {{'cairn.sgd_update' op expected 2 results but got 1}}
  %0 = cairn.sgd_update %p, %g momentum_buffer %b {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.9 : f64, nesterov = false, weight_decay = 0.0 : f64} : (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// Tests that sgd_update's grad has the param's type.
func.func @f(%p: tensor<10xf32>, %g: tensor<5xf32>) -> tensor<10xf32> {
  // expected-error @+1 {{'cairn.sgd_update' op expected operand #1 of type 'tensor<10xf32>' but got 'tensor<5xf32>'}}
  %0 = cairn.sgd_update %p, %g {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64} : (tensor<10xf32>, tensor<5xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// Tests that adam_update checks its hyperparameters as #cairn.adam does.
func.func @f(%p: tensor<10xf32>, %g: tensor<10xf32>, %m: tensor<10xf32>, %v: tensor<10xf32>) {
  // expected-error @+1 {{'cairn.adam_update' op expected beta1 in [0, 1) but got 1}}
  %0:3 = cairn.adam_update %p, %g, %m, %v {beta1 = 1.0 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, lr = 1.0e-3 : f64, weight_decay = 0.0 : f64} : (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>)
  return
}

// -----

// Tests that adam_update's results have the param's type.
func.func @f(%p: tensor<10xf32>, %g: tensor<10xf32>, %m: tensor<10xf32>, %v: tensor<10xf32>) {
  // expected-error @+1 {{'cairn.adam_update' op expected result #2 of type 'tensor<10xf32>' but got 'tensor<10xf16>'}}
  %0:3 = cairn.adam_update %p, %g, %m, %v {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, lr = 1.0e-3 : f64, weight_decay = 0.0 : f64} : (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf16>)
  return
}

// -----

// Tests that cairn.updates names an argument.
// expected-error @+1 {{expected 'cairn.updates' of result #0 to be an i64 argument index in [0, 1) but got 1 : i64}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {cairn.updates = 1 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// Tests that cairn.updates is an i64.
// expected-error @+1 {{expected 'cairn.updates' of result #0 to be an i64 argument index in [0, 1) but got 0 : i32}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {cairn.updates = 0 : i32}) {
  return %x : tensor<4xf32>
}

// -----

// Tests that a result with cairn.updates has the type of the argument it updates.
// expected-error @+1 {{expected result #0 to have the type of argument #1 that it updates, 'tensor<8xf32>', but got 'tensor<4xf32>'}}
func.func @f(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<4xf32> {cairn.updates = 1 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// Tests that cairn.role on a result is a #cairn.role.
// expected-error @+1 {{expected 'cairn.role' of result #0 to be a #cairn.role attribute but got "output"}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {cairn.role = "output"}) {
  return %x : tensor<4xf32>
}

// -----

// Tests that the clip coefficient's gradients share one element type.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf64>) -> tensor<f32> {
  // expected-error @+1 {{expected gradients of one element type, 'f32', but got 'tensor<4xf64>'}}
  %0 = cairn.clip_coefficient %a, %b {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<4xf32>, tensor<4xf64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that the clip coefficient is a rank-0 tensor of the gradients' type.
func.func @f(%a: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{expected result of type 'tensor<f32>' but got 'tensor<1xf32>'}}
  %0 = cairn.clip_coefficient %a {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<4xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// Tests that max_norm is positive.
func.func @f(%a: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{clip_grad_norm: max_norm must be positive, not 0}}
  %0 = cairn.clip_coefficient %a {max_norm = 0.0 : f64, norm_type = 2.0 : f64} : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
