// RUN: cairn-opt %s -split-input-file -verify-diagnostics

// One negative case for every diagnostic of the cairn dialect: the shape
// rules (ShapeFunctions.cpp) reached through the op verifiers, the op
// verifiers, the discardable cairn.* attributes and the attribute verifiers.

// Tests that an operand of dynamic shape is rejected.
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'cairn.relu' op expected operand #0 of static shape but got 'tensor<?x4xf32>'}}
  %0 = cairn.relu %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Tests that an operand with a zero dimension is rejected.
func.func @f(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // expected-error @+1 {{'cairn.relu' op expected operand #0 with dimensions >= 1 but got 'tensor<0x4xf32>'}}
  %0 = cairn.relu %x : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

// Tests that an operand with more than 2^48 elements is rejected.
func.func @f(%x: tensor<1000000000x1000000xf32>) -> tensor<1000000000x1000000xf32> {
  // expected-error @+1 {{'cairn.relu' op expected operand #0 with at most 2^48 elements but got 'tensor<1000000000x1000000xf32>'}}
  %0 = cairn.relu %x : tensor<1000000000x1000000xf32>
  return %0 : tensor<1000000000x1000000xf32>
}

// -----

// Tests that a result of dynamic shape is rejected.
func.func @f(%x: tensor<4x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'cairn.reshape' op expected result #0 of static shape but got 'tensor<?x4xf32>'}}
  %0 = cairn.reshape %x : tensor<4x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Tests that a result with a zero dimension is rejected.
func.func @f() -> tensor<0xf32> {
  // expected-error @+1 {{'cairn.constant' op expected result #0 with dimensions >= 1 but got 'tensor<0xf32>'}}
  %0 = cairn.constant dense<> : tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

// Tests that elementwise operands must share their element type.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'cairn.add' op expected rhs with element type 'f32' but got 'tensor<4xf16>'}}
  %0 = cairn.add %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that elementwise operands must broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'cairn.sub' op expected broadcast-compatible shapes but got [2, 3] and [4]}}
  %0 = cairn.sub %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that the result of an elementwise op is the broadcast shape.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'cairn.mul' op expected result of type 'tensor<2x3xf32>' but got 'tensor<3xf32>'}}
  %0 = cairn.mul %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that a broadcast beyond 2^48 elements is rejected.
func.func @f(%a: tensor<16777216x1xf32>, %b: tensor<1x33554432xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'cairn.div' op expected result with at most 2^48 elements but got [16777216, 33554432]}}
  %0 = cairn.div %a, %b : tensor<16777216x1xf32>, tensor<1x33554432xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// Tests that gelu's approximate is "none" or "tanh".
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cairn.gelu' op expected approximate to be "none" or "tanh" but got "fast"}}
  %0 = cairn.gelu %x {approximate = "fast"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that softmax's dim is in [0, rank).
func.func @f(%x: tensor<64x10xf32>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.softmax' op expected dim in [0, 2) but got 2}}
  %0 = cairn.softmax %x {dim = 2} : tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that log_softmax's dim is normalized (not negative).
func.func @f(%x: tensor<64x10xf32>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.log_softmax' op expected dim in [0, 2) but got -1}}
  %0 = cairn.log_softmax %x {dim = -1} : tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that a softmax's result has its input's element type, or float32
// for a half input.
func.func @f(%x: tensor<64x10xbf16>) -> tensor<64x10xf16> {
  // expected-error @+1 {{'cairn.softmax' op expected result with element type 'bf16' or 'f32' but got 'tensor<64x10xf16>'}}
  %0 = cairn.softmax %x {dim = 1} : tensor<64x10xbf16> -> tensor<64x10xf16>
  return %0 : tensor<64x10xf16>
}

// -----

// Tests that a float32 softmax's result is float32.
func.func @f(%x: tensor<64x10xf32>) -> tensor<64x10xf64> {
  // expected-error @+1 {{'cairn.softmax' op expected result with element type 'f32' but got 'tensor<64x10xf64>'}}
  %0 = cairn.softmax %x {dim = 1} : tensor<64x10xf32> -> tensor<64x10xf64>
  return %0 : tensor<64x10xf64>
}

// -----

// Tests that a softmax keeps its input's shape.
func.func @f(%x: tensor<64x10xbf16>) -> tensor<64x11xf32> {
  // expected-error @+1 {{'cairn.softmax' op requires the same shape for all operands and results}}
  %0 = cairn.softmax %x {dim = 1} : tensor<64x10xbf16> -> tensor<64x11xf32>
  return %0 : tensor<64x11xf32>
}

// -----

// Tests that matmul operands have rank >= 2.
func.func @f(%a: tensor<4xf32>, %b: tensor<4x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'cairn.matmul' op expected operands of rank >= 2 but got [4] and [4, 2]}}
  %0 = cairn.matmul %a, %b : tensor<4xf32>, tensor<4x2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that matmul contraction dimensions agree.
func.func @f(%a: tensor<3x4xf32>, %b: tensor<5x2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'cairn.matmul' op expected rhs with dimension -2 equal to the last dimension of lhs [3, 4] but got [5, 2]}}
  %0 = cairn.matmul %a, %b : tensor<3x4xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that matmul batch dimensions broadcast.
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<3x4x2xf32>) -> tensor<2x3x2xf32> {
  // expected-error @+1 {{'cairn.matmul' op expected broadcast-compatible batch dimensions but got [2, 3, 4] and [3, 4, 2]}}
  %0 = cairn.matmul %a, %b : tensor<2x3x4xf32>, tensor<3x4x2xf32> -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}

// -----

// Tests that matmul operands share their element type.
func.func @f(%a: tensor<3x4xf32>, %b: tensor<4x2xf64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'cairn.matmul' op expected rhs with element type 'f32' but got 'tensor<4x2xf64>'}}
  %0 = cairn.matmul %a, %b : tensor<3x4xf32>, tensor<4x2xf64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that linear's input has the weight's in features.
func.func @f(%x: tensor<64x1x28x28xf32>, %w: tensor<10x784xf32>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.linear' op expected input with last dimension 784 but got [64, 1, 28, 28]}}
  %0 = cairn.linear %x, %w : (tensor<64x1x28x28xf32>, tensor<10x784xf32>) -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that linear's weight is [out, in].
func.func @f(%x: tensor<64x784xf32>, %w: tensor<784xf32>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.linear' op expected weight of shape [out, in] but got [784]}}
  %0 = cairn.linear %x, %w : (tensor<64x784xf32>, tensor<784xf32>) -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that linear's input has rank >= 1.
func.func @f(%x: tensor<f32>, %w: tensor<10x1xf32>) -> tensor<10xf32> {
  // expected-error @+1 {{'cairn.linear' op expected input of rank >= 1 but got []}}
  %0 = cairn.linear %x, %w : (tensor<f32>, tensor<10x1xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// Tests that linear's bias is [out].
func.func @f(%x: tensor<64x784xf32>, %w: tensor<10x784xf32>, %b: tensor<11xf32>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.linear' op expected bias of shape [10] but got [11]}}
  %0 = cairn.linear %x, %w, %b : (tensor<64x784xf32>, tensor<10x784xf32>, tensor<11xf32>) -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that linear's weight has the element type it computes in: with no
// half type among its tensors, the input's.
func.func @f(%x: tensor<64x784xf64>, %w: tensor<10x784xf32>) -> tensor<64x10xf64> {
  // expected-error @+1 {{'cairn.linear' op expected weight with element type 'f64' but got 'tensor<10x784xf32>'}}
  %0 = cairn.linear %x, %w : (tensor<64x784xf64>, tensor<10x784xf32>) -> tensor<64x10xf64>
  return %0 : tensor<64x10xf64>
}

// -----

// Tests that a linear computes in one half type: its float32 tensors are
// rounded to it, another half type is not.
func.func @f(%x: tensor<64x784xf32>, %w: tensor<10x784xbf16>, %b: tensor<10xf16>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'cairn.linear' op expected bias with element type 'bf16' or 'f32' but got 'tensor<10xf16>'}}
  %0 = cairn.linear %x, %w, %b : (tensor<64x784xf32>, tensor<10x784xbf16>, tensor<10xf16>) -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// Tests that a linear's result has the type it computes in, or float32.
func.func @f(%x: tensor<64x784xbf16>, %w: tensor<10x784xbf16>) -> tensor<64x10xf64> {
  // expected-error @+1 {{'cairn.linear' op expected result with element type 'bf16' or 'f32' but got 'tensor<64x10xf64>'}}
  %0 = cairn.linear %x, %w : (tensor<64x784xbf16>, tensor<10x784xbf16>) -> tensor<64x10xf64>
  return %0 : tensor<64x10xf64>
}

// -----

// Tests that a convolution's weight gradient computes in one half type.
func.func @f(%dy: tensor<2x4x8x8xf16>, %x: tensor<2x3x8x8xbf16>) -> tensor<4x3x3x3xf32> {
  // expected-error @+1 {{'cairn.conv2d_grad_weight' op expected input with element type 'f16' or 'f32' but got 'tensor<2x3x8x8xbf16>'}}
  %0 = cairn.conv2d_grad_weight %dy, %x {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x4x8x8xf16>, tensor<2x3x8x8xbf16>) -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

// Tests that linear's result is [..., out].
func.func @f(%x: tensor<64x784xf32>, %w: tensor<10x784xf32>) -> tensor<64x11xf32> {
  // expected-error @+1 {{'cairn.linear' op expected result of type 'tensor<64x10xf32>' but got 'tensor<64x11xf32>'}}
  %0 = cairn.linear %x, %w : (tensor<64x784xf32>, tensor<10x784xf32>) -> tensor<64x11xf32>
  return %0 : tensor<64x11xf32>
}

// -----

// Tests that conv2d's input is [N, C, H, W].
func.func @f(%x: tensor<3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected input of shape [N, C, H, W] but got [3, 32, 32]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<16x30x30xf32>
  return %0 : tensor<16x30x30xf32>
}

// -----

// Tests that conv2d's weight is [O, C / groups, kh, kw].
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected weight of shape [O, C / groups, kh, kw] but got [16, 3, 3]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<1x3x32x32xf32>, tensor<16x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's stride has two values.
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected stride with 2 values but got [1, 1, 1]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's stride is >= 1.
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected stride with values >= 1 but got [0, 1]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 0, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's padding is >= 0.
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected padding with values >= 0 but got [-1, 0]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: -1, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's dilation is >= 1.
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected dilation with values >= 1 but got [1, 0]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 0>, groups = 1} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's groups is >= 1.
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected groups >= 1 but got 0}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 0} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's input channels divide by groups.
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x1x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected input channels divisible by groups 2 but got [1, 3, 32, 32]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2} : (tensor<1x3x32x32xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's output channels divide by groups.
func.func @f(%x: tensor<1x4x32x32xf32>, %w: tensor<15x2x3x3xf32>) -> tensor<1x15x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected output channels divisible by groups 2 but got weight [15, 2, 3, 3]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2} : (tensor<1x4x32x32xf32>, tensor<15x2x3x3xf32>) -> tensor<1x15x30x30xf32>
  return %0 : tensor<1x15x30x30xf32>
}

// -----

// Tests that conv2d's weight has C / groups input channels.
func.func @f(%x: tensor<1x4x32x32xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected weight of shape [16, 2, 3, 3] for input [1, 4, 32, 32] and groups 2 but got [16, 4, 3, 3]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2} : (tensor<1x4x32x32xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's bias is [O].
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected bias of shape [16] but got [3]}}
  %0 = cairn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

// Tests that conv2d's kernel fits in the padded input.
func.func @f(%x: tensor<1x3x4x4xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x1x1xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected an input whose padded height and width hold the kernel [3, 3] with dilation [2, 2] but got [1, 3, 4, 4] with padding [0, 0]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>, groups = 1} : (tensor<1x3x4x4xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x1x1xf32>
  return %0 : tensor<1x16x1x1xf32>
}

// -----

// Tests that conv2d's window arithmetic does not overflow.
func.func @f(%x: tensor<1x3x4x4xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x1x1xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected a window whose size fits in 64 bits but got kernel [3, 3], padding [4611686018427387904, 0] and dilation [1, 1]}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 4611686018427387904, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<1x3x4x4xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x1x1xf32>
  return %0 : tensor<1x16x1x1xf32>
}

// -----

// Tests that conv2d's result follows PyTorch's formula.
func.func @f(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x15x15xf32> {
  // expected-error @+1 {{'cairn.conv2d' op expected result of type 'tensor<1x16x16x16xf32>' but got 'tensor<1x16x15x15xf32>'}}
  %0 = cairn.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x15x15xf32>
  return %0 : tensor<1x16x15x15xf32>
}

// -----

// Tests that batch_norm's weight and bias come together.
func.func @f(%x: tensor<8x16xf32>, %w: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected weight and bias to be both present or both absent}}
  %0 = cairn.batch_norm %x weight %w {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that batch_norm's running statistics come together.
func.func @f(%x: tensor<8x16xf32>, %m: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected running_mean and running_var to be both present or both absent}}
  %0 = cairn.batch_norm %x mean %m {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that batch_norm in eval mode needs running statistics.
func.func @f(%x: tensor<8x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected running_mean and running_var in eval mode (training = false)}}
  %0 = cairn.batch_norm %x weight %w bias %b {eps = 1.0e-5, momentum = 0.1, training = false} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that batch_norm's eps is > 0.
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected eps > 0 but got 0}}
  %0 = cairn.batch_norm %x  {eps = 0.0, momentum = 0.1, training = true} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that batch_norm's momentum is in [0, 1].
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected momentum in [0, 1] but got 1.5}}
  %0 = cairn.batch_norm %x  {eps = 1.0e-5, momentum = 1.5, training = true} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that batch_norm's input has rank 2, 3 or 4.
func.func @f(%x: tensor<8x16x2x2x2xf32>) -> tensor<8x16x2x2x2xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected input of rank 2, 3 or 4 ([N, C], [N, C, L] or [N, C, H, W]) but got [8, 16, 2, 2, 2]}}
  %0 = cairn.batch_norm %x  {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16x2x2x2xf32>) -> tensor<8x16x2x2x2xf32>
  return %0 : tensor<8x16x2x2x2xf32>
}

// -----

// Tests that batch_norm's weight is [C].
func.func @f(%x: tensor<8x16x4x4xf32>, %w: tensor<8xf32>, %b: tensor<16xf32>) -> tensor<8x16x4x4xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected weight of shape [16] but got [8]}}
  %0 = cairn.batch_norm %x weight %w bias %b {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16x4x4xf32>, tensor<8xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  return %0 : tensor<8x16x4x4xf32>
}

// -----

// Tests that batch_norm's bias is [C].
func.func @f(%x: tensor<8x16x4x4xf32>, %w: tensor<16xf32>, %b: tensor<16x1xf32>) -> tensor<8x16x4x4xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected bias of shape [16] but got [16, 1]}}
  %0 = cairn.batch_norm %x weight %w bias %b {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16x1xf32>) -> tensor<8x16x4x4xf32>
  return %0 : tensor<8x16x4x4xf32>
}

// -----

// Tests that batch_norm's running_mean is [C].
func.func @f(%x: tensor<8x16x4x4xf32>, %m: tensor<17xf32>, %v: tensor<16xf32>) -> tensor<8x16x4x4xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected running_mean of shape [16] but got [17]}}
  %0 = cairn.batch_norm %x mean %m var %v {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16x4x4xf32>, tensor<17xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  return %0 : tensor<8x16x4x4xf32>
}

// -----

// Tests that batch_norm's running_var has the input's element type.
func.func @f(%x: tensor<8x16x4x4xf32>, %m: tensor<16xf32>, %v: tensor<16xf16>) -> tensor<8x16x4x4xf32> {
  // expected-error @+1 {{'cairn.batch_norm' op expected running_var with element type 'f32' but got 'tensor<16xf16>'}}
  %0 = cairn.batch_norm %x mean %m var %v {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf16>) -> tensor<8x16x4x4xf32>
  return %0 : tensor<8x16x4x4xf32>
}

// -----

// Tests that batch_norm's result has the input's type.
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf16> {
  // expected-error @+1 {{'cairn.batch_norm' op expected result of type 'tensor<8x16xf32>' but got 'tensor<8x16xf16>'}}
  %0 = cairn.batch_norm %x  {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16xf32>) -> tensor<8x16xf16>
  return %0 : tensor<8x16xf16>
}

// -----

// Tests that layer_norm's normalized_rank is in [1, rank].
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'cairn.layer_norm' op expected normalized_rank in [1, 2] for input [8, 64] but got 3}}
  %0 = cairn.layer_norm %x {normalized_rank = 3, eps = 1.0e-5} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// Tests that layer_norm's eps is > 0.
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'cairn.layer_norm' op expected eps > 0 but got -1}}
  %0 = cairn.layer_norm %x {normalized_rank = 1, eps = -1.0} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// Tests that layer_norm's weight has the normalized shape.
func.func @f(%x: tensor<8x16x64xf32>, %w: tensor<64xf32>) -> tensor<8x16x64xf32> {
  // expected-error @+1 {{'cairn.layer_norm' op expected weight of shape [16, 64] but got [64]}}
  %0 = cairn.layer_norm %x weight %w {normalized_rank = 2, eps = 1.0e-5} : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  return %0 : tensor<8x16x64xf32>
}

// -----

// Tests that layer_norm's bias has the normalized shape.
func.func @f(%x: tensor<8x16x64xf32>, %b: tensor<32xf32>) -> tensor<8x16x64xf32> {
  // expected-error @+1 {{'cairn.layer_norm' op expected bias of shape [64] but got [32]}}
  %0 = cairn.layer_norm %x bias %b {normalized_rank = 1, eps = 1.0e-5} : (tensor<8x16x64xf32>, tensor<32xf32>) -> tensor<8x16x64xf32>
  return %0 : tensor<8x16x64xf32>
}

// -----

// Tests that embedding's weight is [num, dim].
func.func @f(%i: tensor<8xi64>, %w: tensor<1000xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'cairn.embedding' op expected weight of shape [num_embeddings, embedding_dim] but got [1000]}}
  %0 = cairn.embedding %i, %w : (tensor<8xi64>, tensor<1000xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that embedding's padding_idx is in [0, num).
func.func @f(%i: tensor<8xi64>, %w: tensor<1000x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'cairn.embedding' op expected padding_idx in [0, 1000) but got 1000}}
  %0 = cairn.embedding %i, %w {padding_idx = 1000} : (tensor<8xi64>, tensor<1000x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Tests that embedding's result is indices.shape + [dim] with the weight's element type.
func.func @f(%i: tensor<8xi32>, %w: tensor<1000x4xf16>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'cairn.embedding' op expected result of type 'tensor<8x4xf16>' but got 'tensor<8x4xf32>'}}
  %0 = cairn.embedding %i, %w : (tensor<8xi32>, tensor<1000x4xf16>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Tests that dropout's p is in [0, 1).
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cairn.dropout' op expected p in [0, 1) but got 1}}
  %0 = cairn.dropout %x {p = 1.0, training = true, stream = 0} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that dropout's stream is >= 0.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cairn.dropout' op expected stream >= 0 but got -1}}
  %0 = cairn.dropout %x {p = 0.5, training = true, stream = -1} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that max_pool2d's input is [N, C, H, W].
func.func @f(%x: tensor<16x32x32xf32>) -> tensor<16x16x16xf32> {
  // expected-error @+1 {{'cairn.max_pool2d' op expected input of shape [N, C, H, W] but got [16, 32, 32]}}
  %0 = cairn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<16x32x32xf32> -> tensor<16x16x16xf32>
  return %0 : tensor<16x16x16xf32>
}

// -----

// Tests that max_pool2d's kernel_size is >= 1.
func.func @f(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'cairn.max_pool2d' op expected kernel_size with values >= 1 but got [0, 2]}}
  %0 = cairn.max_pool2d %x {kernel_size = array<i64: 0, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Tests that max_pool2d's padding is at most half the kernel, as in PyTorch.
func.func @f(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'cairn.max_pool2d' op expected padding <= kernel_size / 2 but got padding [0, 2] and kernel_size [2, 2]}}
  %0 = cairn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 2>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Tests that max_pool2d's window fits in the padded input.
func.func @f(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'cairn.max_pool2d' op expected an input whose padded height and width hold the kernel [3, 3] with dilation [2, 2] but got [1, 1, 4, 4] with padding [0, 0]}}
  %0 = cairn.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>, ceil_mode = false} : tensor<1x1x4x4xf32> -> tensor<1x1x1x1xf32>
  return %0 : tensor<1x1x1x1xf32>
}

// -----

// Tests that max_pool2d's ceil mode drops a last window that starts in the right padding.
func.func @f(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'cairn.max_pool2d' op expected result of type 'tensor<1x1x3x3xf32>' but got 'tensor<1x1x4x4xf32>'}}
  %0 = cairn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = true} : tensor<1x1x5x5xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Tests that avg_pool2d's stride has two values.
func.func @f(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'cairn.avg_pool2d' op expected stride with 2 values but got [2]}}
  %0 = cairn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = true} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Tests that avg_pool2d's result follows PyTorch's formula.
func.func @f(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{'cairn.avg_pool2d' op expected result of type 'tensor<1x1x2x2xf32>' but got 'tensor<1x1x3x3xf32>'}}
  %0 = cairn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = true} : tensor<1x1x5x5xf32> -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// Tests that adaptive_avg_pool2d's output_size has two values.
func.func @f(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32> {
  // expected-error @+1 {{'cairn.adaptive_avg_pool2d' op expected output_size with 2 values but got [1]}}
  %0 = cairn.adaptive_avg_pool2d %x {output_size = array<i64: 1>} : tensor<1x8x7x7xf32> -> tensor<1x8x1x1xf32>
  return %0 : tensor<1x8x1x1xf32>
}

// -----

// Tests that adaptive_avg_pool2d's output_size is >= 1.
func.func @f(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32> {
  // expected-error @+1 {{'cairn.adaptive_avg_pool2d' op expected output_size with values >= 1 but got [0, 1]}}
  %0 = cairn.adaptive_avg_pool2d %x {output_size = array<i64: 0, 1>} : tensor<1x8x7x7xf32> -> tensor<1x8x1x1xf32>
  return %0 : tensor<1x8x1x1xf32>
}

// -----

// Tests that reshape keeps the element type.
func.func @f(%x: tensor<4x4xf32>) -> tensor<16xf16> {
  // expected-error @+1 {{'cairn.reshape' op expected result with element type 'f32' but got 'tensor<16xf16>'}}
  %0 = cairn.reshape %x : tensor<4x4xf32> -> tensor<16xf16>
  return %0 : tensor<16xf16>
}

// -----

// Tests that reshape keeps the element count.
func.func @f(%x: tensor<64x784xf32>) -> tensor<64x785xf32> {
  // expected-error @+1 {{'cairn.reshape' op expected result with 50176 elements, as input 'tensor<64x784xf32>', but got 'tensor<64x785xf32>'}}
  %0 = cairn.reshape %x : tensor<64x784xf32> -> tensor<64x785xf32>
  return %0 : tensor<64x785xf32>
}

// -----

// Tests that permute takes a permutation of [0, rank).
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'cairn.permute' op expected a permutation of [0, 2) for input [2, 3] but got [0, 0]}}
  %0 = cairn.permute %x {permutation = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that permute's result has the permuted dimensions.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'cairn.permute' op expected result of type 'tensor<3x2xf32>' but got 'tensor<2x3xf32>'}}
  %0 = cairn.permute %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that concat takes at least one input.
func.func @f() -> tensor<1xf32> {
  // expected-error @+1 {{'cairn.concat' op expected at least one input but got none}}
  %0 = cairn.concat {dim = 0} : () -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// Tests that concat's dim is in [0, rank).
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'cairn.concat' op expected dim in [0, 2) for input [2, 3] but got 2}}
  %0 = cairn.concat %a, %a {dim = 2} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that concat's inputs agree except at dim.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'cairn.concat' op expected input #1 to match input #0 [2, 3] except at dimension 1 but got [4, 5]}}
  %0 = cairn.concat %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Tests that concat's inputs share their element type.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'cairn.concat' op expected input #1 with element type 'f32' but got 'tensor<2x3xi32>'}}
  %0 = cairn.concat %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that slice takes one start, limit and step per dimension.
func.func @f(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'cairn.slice' op expected start, limit and step with one value per dimension of input [3, 4] but got [0], [3] and [1]}}
  %0 = cairn.slice %x {start = array<i64: 0>, limit = array<i64: 3>, step = array<i64: 1>} : tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests that slice's bounds are ordered and inside the input.
func.func @f(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'cairn.slice' op expected 0 <= start <= limit <= 4 at dimension 1 but got start 1 and limit 5}}
  %0 = cairn.slice %x {start = array<i64: 0, 1>, limit = array<i64: 3, 5>, step = array<i64: 1, 1>} : tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests that slice's step is >= 1.
func.func @f(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'cairn.slice' op expected step >= 1 at dimension 0 but got 0}}
  %0 = cairn.slice %x {start = array<i64: 0, 0>, limit = array<i64: 3, 4>, step = array<i64: 0, 1>} : tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests that slice is not empty.
func.func @f(%x: tensor<3x4xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'cairn.slice' op expected a non-empty slice at dimension 1 but got start = limit = 2}}
  %0 = cairn.slice %x {start = array<i64: 0, 2>, limit = array<i64: 3, 2>, step = array<i64: 1, 1>} : tensor<3x4xf32> -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

// Tests that slice's result has ceil((limit - start) / step) elements per dimension.
func.func @f(%x: tensor<3x4xf32>) -> tensor<1x1xf32> {
  // expected-error @+1 {{'cairn.slice' op expected result of type 'tensor<2x2xf32>' but got 'tensor<1x1xf32>'}}
  %0 = cairn.slice %x {start = array<i64: 0, 1>, limit = array<i64: 3, 4>, step = array<i64: 2, 2>} : tensor<3x4xf32> -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// Tests that sum's dims are sorted and unique.
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'cairn.sum' op expected a non-empty, sorted list of unique dims in [0, 3) for input [2, 3, 4] but got [2, 1]}}
  %0 = cairn.sum %x {dims = array<i64: 2, 1>, keepdim = false} : tensor<2x3x4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that a float32 sum is not narrowed to half (only a half input may be
// summed into float32).
func.func @f(%x: tensor<2x3xf32>) -> tensor<3xbf16> {
  // expected-error @+1 {{'cairn.sum' op expected result of type 'tensor<3xf32>' but got 'tensor<3xbf16>'}}
  %0 = cairn.sum %x {dims = array<i64: 0>, keepdim = false} : tensor<2x3xf32> -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

// Tests that a half sum's result is its own type or float32, not the other
// half type.
func.func @f(%x: tensor<2x3xf16>) -> tensor<3xbf16> {
  // expected-error @+1 {{'cairn.sum' op expected result of type 'tensor<3xf16>' but got 'tensor<3xbf16>'}}
  %0 = cairn.sum %x {dims = array<i64: 0>, keepdim = false} : tensor<2x3xf16> -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

// Tests that mean's dims are not empty.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'cairn.mean' op expected a non-empty, sorted list of unique dims in [0, 2) for input [2, 3] but got []}}
  %0 = cairn.mean %x {dims = array<i64>, keepdim = false} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that mean with keepdim keeps the reduced dimensions as 1.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'cairn.mean' op expected result of type 'tensor<2x1xf32>' but got 'tensor<2xf32>'}}
  %0 = cairn.mean %x {dims = array<i64: 1>, keepdim = true} : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that cross_entropy's logits are [N, C].
func.func @f(%l: tensor<10xf32>, %y: tensor<10xi64>) -> tensor<f32> {
  // expected-error @+1 {{'cairn.cross_entropy' op expected logits of shape [N, C] but got [10]}}
  %0 = cairn.cross_entropy %l, %y {label_smoothing = 0.0} : (tensor<10xf32>, tensor<10xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that cross_entropy's labels are [N].
func.func @f(%l: tensor<64x10xf32>, %y: tensor<32xi64>) -> tensor<f32> {
  // expected-error @+1 {{'cairn.cross_entropy' op expected labels of shape [64] but got [32]}}
  %0 = cairn.cross_entropy %l, %y {label_smoothing = 0.0} : (tensor<64x10xf32>, tensor<32xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that cross_entropy's label_smoothing is in [0, 1].
func.func @f(%l: tensor<64x10xf32>, %y: tensor<64xi64>) -> tensor<f32> {
  // expected-error @+1 {{'cairn.cross_entropy' op expected label_smoothing in [0, 1] but got -0.1}}
  %0 = cairn.cross_entropy %l, %y {label_smoothing = -0.1} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that cross_entropy's result is a scalar of the logits' element type.
func.func @f(%l: tensor<64x10xf32>, %y: tensor<64xi64>) -> tensor<64xf32> {
  // expected-error @+1 {{'cairn.cross_entropy' op expected result of type 'tensor<f32>' but got 'tensor<64xf32>'}}
  %0 = cairn.cross_entropy %l, %y {label_smoothing = 0.0} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// Tests that mse_loss's target has the input's type.
func.func @f(%x: tensor<64x1xf32>, %t: tensor<64xf32>) -> tensor<f32> {
  // expected-error @+1 {{'cairn.mse_loss' op expected target of type 'tensor<64x1xf32>' but got 'tensor<64xf32>'}}
  %0 = cairn.mse_loss %x, %t : (tensor<64x1xf32>, tensor<64xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that mse_loss's result is a scalar.
func.func @f(%x: tensor<64x1xf32>, %t: tensor<64x1xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'cairn.mse_loss' op expected result of type 'tensor<f32>' but got 'tensor<1xf32>'}}
  %0 = cairn.mse_loss %x, %t : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// Tests that cairn.checkpoint is an i64 >= 0.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 'cairn.checkpoint' to be an i64 integer >= 0 but got -1 : i64}}
  %0 = cairn.relu %x {cairn.checkpoint = -1} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that cairn.device is an i64, not another integer type.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 'cairn.device' to be an i64 integer >= 0 but got 1 : i32}}
  %0 = cairn.relu %x {cairn.device = 1 : i32} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that cairn.precision is a #cairn.precision attribute.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 'cairn.precision' to be a #cairn.precision attribute but got "f16"}}
  %0 = cairn.relu %x {cairn.precision = "f16"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that an unknown cairn attribute on an op is an error naming it.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown attribute 'cairn.stage' (expected one of cairn.checkpoint, cairn.device, cairn.precision on ops; cairn.model, cairn.batch, cairn.optimizer, cairn.lr_schedule, cairn.clip_grad_norm, cairn.eval_loss, cairn.loss_scaling on the module)}}
  %0 = cairn.relu %x {cairn.stage = 1} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a function argument attribute on an op is rejected.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 'cairn.name' in the attributes of a function argument, not on an op}}
  %0 = cairn.relu %x {cairn.name = "relu"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that cairn.model belongs on the builtin module.
// expected-error @+1 {{expected 'cairn.model' on the builtin module but found it on 'func.func'}}
func.func @f() attributes {cairn.model = "mlp"} {
  return
}

// -----

// Tests that cairn.model is a string.
// expected-error @+1 {{expected 'cairn.model' to be a string but got 1 : i64}}
module attributes {cairn.model = 1} {
}

// -----

// Tests that cairn.batch is > 0.
// expected-error @+1 {{expected 'cairn.batch' to be an i64 integer > 0 but got 0 : i64}}
module attributes {cairn.batch = 0} {
}

// -----

// Tests that an lr schedule comes with an optimizer.
// expected-error @+1 {{expected 'cairn.lr_schedule' only with 'cairn.optimizer'}}
module attributes {cairn.lr_schedule = [{name = "StepLR", step_size = 3 : i64, gamma = 0.5 : f64}]} {
}

// -----

// Tests that the schedule's schedulers are torch's, with their fields.
// expected-error @+1 {{unknown scheduler 'ExponentialLR'; expected StepLR, CosineAnnealingLR or LinearLR}}
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>,
                   cairn.lr_schedule = [{name = "ExponentialLR", gamma = 0.5 : f64}]} {
}

// -----

// expected-error @+1 {{StepLR: unexpected field 'T_max'}}
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>,
                   cairn.lr_schedule = [{name = "StepLR", step_size = 3 : i64, gamma = 0.5 : f64, T_max = 3 : i64}]} {
}

// -----

// expected-error @+1 {{StepLR: step_size must be at least 1, not 0}}
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>,
                   cairn.lr_schedule = [{name = "StepLR", step_size = 0 : i64, gamma = 0.5 : f64}]} {
}

// -----

// Tests gradient clipping's settings.
// expected-error @+1 {{clip_grad_norm: norm_type must be positive or 'inf', not 0}}
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>,
                   cairn.clip_grad_norm = {max_norm = 1.0 : f64, norm_type = 0.0 : f64}} {
}

// -----

// Tests the eval loss's form.
// expected-error @+1 {{expected the eval loss {kind = "cross_entropy" or "mse_loss", label_smoothing = F : f64, target = "input"} but got {kind = "l1_loss", label_smoothing = 0.000000e+00 : f64, target = "y"}}}
module attributes {cairn.eval_loss = {kind = "l1_loss", label_smoothing = 0.0 : f64, target = "y"}} {
}

// -----

// Tests that cairn.optimizer is an SGD or Adam attribute.
// expected-error @+1 {{expected 'cairn.optimizer' to be a #cairn.sgd or #cairn.adam attribute but got "sgd"}}
module attributes {cairn.optimizer = "sgd"} {
}

// -----

// Tests that cairn.name on an argument is a non-empty string.
// expected-error @+1 {{expected 'cairn.name' of argument #1 to be a non-empty string but got ""}}
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32> {cairn.name = ""}) {
  return
}

// -----

// Tests that cairn.role is a #cairn.role attribute.
// expected-error @+1 {{expected 'cairn.role' of argument #0 to be a #cairn.role attribute but got "param"}}
func.func @f(%x: tensor<4xf32> {cairn.role = "param"}) {
  return
}

// -----

// Tests that cairn.init is a #cairn.init attribute.
// expected-error @+1 {{expected 'cairn.init' of argument #0 to be a #cairn.init attribute but got #cairn.role<param>}}
func.func @f(%x: tensor<4xf32> {cairn.init = #cairn.role<param>}) {
  return
}

// -----

// Tests that an unknown cairn attribute on an argument is an error naming it.
// expected-error @+1 {{unknown attribute 'cairn.device' on argument #0 (expected cairn.name, cairn.role or cairn.init)}}
func.func @f(%x: tensor<4xf32> {cairn.device = 0}) {
  return
}

// -----

// Tests that cairn.name on a result is a non-empty string.
// expected-error @+1 {{expected 'cairn.name' of result #0 to be a non-empty string but got 3 : i64}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {cairn.name = 3}) {
  return %x : tensor<4xf32>
}

// -----

// Tests that an unknown cairn attribute on a result is an error naming it.
// expected-error @+1 {{unknown attribute 'cairn.init' on result #0 (expected cairn.name, cairn.role or cairn.updates)}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {cairn.init = #cairn.init<zeros, 0.0>}) {
  return %x : tensor<4xf32>
}

// -----

// Tests that an init scale is finite and >= 0.
// expected-error @+1 {{expected a finite scale >= 0 but got -1}}
module attributes {test.a = #cairn.init<normal, -1.0>} {
}

// -----

// Tests that a zeroed row is a row (or -1: none).
// expected-error @+1 {{expected zero_row >= 0 (or -1: none) but got -2}}
module attributes {test.a = #cairn.init<normal, 1.0, zero_row = -2>} {
}

// -----

// Tests that SGD's lr is > 0.
// expected-error @+1 {{expected lr > 0 but got 0}}
module attributes {test.a = #cairn.sgd<lr = 0.0, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
}

// -----

// Tests that SGD's momentum is >= 0.
// expected-error @+1 {{expected momentum >= 0 but got -0.5}}
module attributes {test.a = #cairn.sgd<lr = 0.1, momentum = -0.5, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
}

// -----

// Tests that SGD's dampening is >= 0.
// expected-error @+1 {{expected dampening >= 0 but got -1}}
module attributes {test.a = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = -1.0, weight_decay = 0.0, nesterov = false>} {
}

// -----

// Tests that SGD's weight_decay is >= 0.
// expected-error @+1 {{expected weight_decay >= 0 but got -0.001}}
module attributes {test.a = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = -0.001, nesterov = false>} {
}

// -----

// Tests that SGD with nesterov needs momentum and no dampening, as in torch.
// expected-error @+1 {{expected momentum > 0 and dampening = 0 with nesterov but got momentum 0.9 and dampening 0.1}}
module attributes {test.a = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.1, weight_decay = 0.0, nesterov = true>} {
}

// -----

// Tests that SGD's nesterov is true or false.
// expected-error @+2 {{expected 'true' or 'false'}}
// expected-error @+1 {{failed to parse Cairn_SGDAttr parameter 'nesterov' which is to be a `bool`}}
module attributes {test.a = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 0.0, nesterov = 1>} {
}

// -----

// Tests that Adam's lr is > 0.
// expected-error @+1 {{expected lr > 0 but got -1}}
module attributes {test.a = #cairn.adam<lr = -1.0, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>} {
}

// -----

// Tests that Adam's beta1 is in [0, 1).
// expected-error @+1 {{expected beta1 in [0, 1) but got 1}}
module attributes {test.a = #cairn.adam<lr = 0.001, beta1 = 1.0, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>} {
}

// -----

// Tests that Adam's beta2 is in [0, 1).
// expected-error @+1 {{expected beta2 in [0, 1) but got -0.1}}
module attributes {test.a = #cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = -0.1, eps = 1.0e-8, weight_decay = 0.0>} {
}

// -----

// Tests that Adam's eps is > 0.
// expected-error @+1 {{expected eps > 0 but got 0}}
module attributes {test.a = #cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 0.0, weight_decay = 0.0>} {
}

// -----

// Tests that Adam's weight_decay is >= 0.
// expected-error @+1 {{expected weight_decay >= 0 but got -1}}
module attributes {test.a = #cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = -1.0>} {
}

// -----

// Tests that clamp has a bound (torch.clamp needs min or max).
func.func @clamp_without_bounds(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cairn.clamp' op expected a min or a max bound}}
  %0 = cairn.clamp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the loss scale is a float32 scalar.
func.func @loss_scale_f16() -> tensor<f16> {
  // expected-error @+1 {{'cairn.loss_scale' op expected result of type 'tensor<f32>' but got 'tensor<f16>'}}
  %0 = cairn.loss_scale : tensor<f16>
  return %0 : tensor<f16>
}

// -----

// Tests that found_inf looks at one gradient at least.
func.func @found_inf_of_nothing() -> tensor<f32> {
  // expected-error @+1 {{'cairn.found_inf' op expected at least one gradient}}
  %0 = cairn.found_inf : () -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that skip_select's new and old values have one type.
func.func @skip_select_types(%f: tensor<f32>, %a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{'cairn.skip_select' op expected updated of type 'tensor<4xf16>' but got 'tensor<4xf32>'}}
  %0 = cairn.skip_select %f, %a, %b : (tensor<f32>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that an update's found_inf is a float32 scalar, not one of the param's type.
func.func @sgd_found_inf(%w: tensor<4xf32>, %g: tensor<4xf32>, %f: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'cairn.sgd_update' op expected found_inf of type 'tensor<f32>' but got 'tensor<4xf32>'}}
  %0 = cairn.sgd_update %w, %g found_inf %f {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that loss scaling is a unit attribute of a trained module.
// expected-error @+1 {{expected 'cairn.loss_scaling' only with 'cairn.optimizer'}}
module attributes {cairn.loss_scaling} {
}

// -----

func.func @loss_scaling_on_an_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 'cairn.loss_scaling' as a unit attribute of the builtin module}}
  %0 = cairn.relu %x {cairn.loss_scaling} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
