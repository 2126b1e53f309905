// RUN: cairn-opt %s | cairn-opt | FileCheck %s
// RUN: cairn-opt %s --mlir-print-op-generic | cairn-opt | FileCheck %s

// Round trip of every cairn op, one function per op family: the custom form
// printed and parsed back, and the generic form parsed back to the custom one.

// CHECK-LABEL: func.func @constant
func.func @constant() -> tensor<2x2xf32> {
  // CHECK: %[[C:.+]] = cairn.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %0 = cairn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // CHECK: %{{.+}} = cairn.constant dense<7> : tensor<3xi64>
  %1 = cairn.constant dense<7> : tensor<3xi64>
  // CHECK: return %[[C]]
  return %0 : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.+]]: tensor<64x10xf32>, %[[B:.+]]: tensor<10xf32>, %[[S:.+]]: tensor<1x1xf32>)
func.func @binary(%a: tensor<64x10xf32>, %b: tensor<10xf32>, %s: tensor<1x1xf32>) -> tensor<64x10xf32> {
  // CHECK: %[[ADD:.+]] = cairn.add %[[A]], %[[B]] : tensor<64x10xf32>, tensor<10xf32> -> tensor<64x10xf32>
  %0 = cairn.add %a, %b : tensor<64x10xf32>, tensor<10xf32> -> tensor<64x10xf32>
  // CHECK: %[[SUB:.+]] = cairn.sub %[[B]], %[[ADD]] : tensor<10xf32>, tensor<64x10xf32> -> tensor<64x10xf32>
  %1 = cairn.sub %b, %0 : tensor<10xf32>, tensor<64x10xf32> -> tensor<64x10xf32>
  // CHECK: %[[MUL:.+]] = cairn.mul %[[SUB]], %[[S]] : tensor<64x10xf32>, tensor<1x1xf32> -> tensor<64x10xf32>
  %2 = cairn.mul %1, %s : tensor<64x10xf32>, tensor<1x1xf32> -> tensor<64x10xf32>
  // CHECK: cairn.div %[[MUL]], %[[A]] : tensor<64x10xf32>, tensor<64x10xf32> -> tensor<64x10xf32>
  %3 = cairn.div %2, %a : tensor<64x10xf32>, tensor<64x10xf32> -> tensor<64x10xf32>
  return %3 : tensor<64x10xf32>
}

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.+]]: tensor<8x128xbf16>)
func.func @unary(%x: tensor<8x128xbf16>) -> tensor<8x128xbf16> {
  // CHECK: %[[R:.+]] = cairn.relu %[[X]] : tensor<8x128xbf16>
  %0 = cairn.relu %x : tensor<8x128xbf16>
  // CHECK: %[[S:.+]] = cairn.sigmoid %[[R]] : tensor<8x128xbf16>
  %1 = cairn.sigmoid %0 : tensor<8x128xbf16>
  // CHECK: %[[T:.+]] = cairn.tanh %[[S]] : tensor<8x128xbf16>
  %2 = cairn.tanh %1 : tensor<8x128xbf16>
  // CHECK: %[[G:.+]] = cairn.gelu %[[T]] : tensor<8x128xbf16>
  %3 = cairn.gelu %2 : tensor<8x128xbf16>
  // CHECK: %[[GT:.+]] = cairn.gelu %[[G]] {approximate = "tanh"} : tensor<8x128xbf16>
  %4 = cairn.gelu %3 {approximate = "tanh"} : tensor<8x128xbf16>
  // CHECK: %[[SI:.+]] = cairn.silu %[[GT]] : tensor<8x128xbf16>
  %5 = cairn.silu %4 : tensor<8x128xbf16>
  // CHECK: %[[HS:.+]] = cairn.hardswish %[[SI]] : tensor<8x128xbf16>
  %6 = cairn.hardswish %5 : tensor<8x128xbf16>
  // CHECK: %[[C:.+]] = cairn.clamp %[[HS]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<8x128xbf16>
  %7 = cairn.clamp %6 {min = 0.0 : f64, max = 6.0 : f64} : tensor<8x128xbf16>
  // CHECK: %[[CM:.+]] = cairn.clamp %[[C]] {max = 5.000000e-01 : f64} : tensor<8x128xbf16>
  %8 = cairn.clamp %7 {max = 0.5 : f64} : tensor<8x128xbf16>
  // CHECK: cairn.leaky_relu %[[CM]] {negative_slope = 2.000000e-01 : f64} : tensor<8x128xbf16>
  %9 = cairn.leaky_relu %8 {negative_slope = 0.2 : f64} : tensor<8x128xbf16>
  return %9 : tensor<8x128xbf16>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<64x10xf32>) -> tensor<64x10xf32> {
  // CHECK: %[[S:.+]] = cairn.softmax %{{.+}} {dim = 1 : i64} : tensor<64x10xf32>
  %0 = cairn.softmax %x {dim = 1} : tensor<64x10xf32>
  // CHECK: cairn.log_softmax %[[S]] {dim = 0 : i64} : tensor<64x10xf32>
  %1 = cairn.log_softmax %0 {dim = 0} : tensor<64x10xf32>
  return %1 : tensor<64x10xf32>
}

// A half input into a float32 result (autocast's float32 softmax).
// CHECK-LABEL: func.func @half_softmax
func.func @half_softmax(%x: tensor<64x10xbf16>) -> tensor<64x10xf32> {
  // CHECK: cairn.softmax %{{.+}} {dim = 1 : i64} : tensor<64x10xbf16> -> tensor<64x10xf32>
  %0 = cairn.softmax %x {dim = 1} : tensor<64x10xbf16> -> tensor<64x10xf32>
  // CHECK: cairn.log_softmax %{{.+}} {dim = 0 : i64} : tensor<64x10xbf16> -> tensor<64x10xf32>
  %1 = cairn.log_softmax %x {dim = 0} : tensor<64x10xbf16> -> tensor<64x10xf32>
  return %1 : tensor<64x10xf32>
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<8x64x32xf32>, %b: tensor<32x16xf32>, %c: tensor<2x1x16x4xf32>) -> tensor<2x8x64x4xf32> {
  // CHECK: %[[M:.+]] = cairn.matmul %{{.+}}, %{{.+}} : tensor<8x64x32xf32>, tensor<32x16xf32> -> tensor<8x64x16xf32>
  %0 = cairn.matmul %a, %b : tensor<8x64x32xf32>, tensor<32x16xf32> -> tensor<8x64x16xf32>
  // CHECK: cairn.matmul %[[M]], %{{.+}} : tensor<8x64x16xf32>, tensor<2x1x16x4xf32> -> tensor<2x8x64x4xf32>
  %1 = cairn.matmul %0, %c : tensor<8x64x16xf32>, tensor<2x1x16x4xf32> -> tensor<2x8x64x4xf32>
  return %1 : tensor<2x8x64x4xf32>
}

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: tensor<64x784xf32>, %[[W:.+]]: tensor<10x784xf32>, %[[B:.+]]: tensor<10xf32>, %[[S:.+]]: tensor<4x7x784xf32>)
func.func @linear(%x: tensor<64x784xf32>, %w: tensor<10x784xf32>, %b: tensor<10xf32>, %s: tensor<4x7x784xf32>) -> tensor<4x7x10xf32> {
  // CHECK: cairn.linear %[[X]], %[[W]], %[[B]] : (tensor<64x784xf32>, tensor<10x784xf32>, tensor<10xf32>) -> tensor<64x10xf32>
  %0 = cairn.linear %x, %w, %b : (tensor<64x784xf32>, tensor<10x784xf32>, tensor<10xf32>) -> tensor<64x10xf32>
  // CHECK: cairn.linear %[[S]], %[[W]] : (tensor<4x7x784xf32>, tensor<10x784xf32>) -> tensor<4x7x10xf32>
  %1 = cairn.linear %s, %w : (tensor<4x7x784xf32>, tensor<10x784xf32>) -> tensor<4x7x10xf32>
  return %1 : tensor<4x7x10xf32>
}

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<8x4x32x32xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<16xf32>, %g: tensor<8x2x5x5xf32>) -> tensor<8x8x14x14xf32> {
  // CHECK: %[[C:.+]] = cairn.conv2d %{{.+}}, %{{.+}}, %{{.+}} {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x4x32x32xf32>, tensor<16x4x3x3xf32>, tensor<16xf32>) -> tensor<8x16x32x32xf32>
  %0 = cairn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<8x4x32x32xf32>, tensor<16x4x3x3xf32>, tensor<16xf32>) -> tensor<8x16x32x32xf32>
  // Grouped, strided and dilated, no bias: (32 + 0 - 2 * 4 - 1) / 2 + 1 = 12.
  // CHECK: cairn.conv2d %[[C]], %{{.+}} {dilation = array<i64: 2, 1>, groups = 8 : i64, padding = array<i64: 0, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>, tensor<8x2x5x5xf32>) -> tensor<8x8x12x15xf32>
  %1 = cairn.conv2d %0, %g {stride = array<i64: 2, 2>, padding = array<i64: 0, 1>, dilation = array<i64: 2, 1>, groups = 8} : (tensor<8x16x32x32xf32>, tensor<8x2x5x5xf32>) -> tensor<8x8x12x15xf32>
  %2 = cairn.slice %1 {start = array<i64: 0, 0, 0, 0>, limit = array<i64: 8, 8, 12, 14>, step = array<i64: 1, 1, 1, 1>} : tensor<8x8x12x15xf32> -> tensor<8x8x12x14xf32>
  %3 = cairn.concat %2, %2 {dim = 2} : (tensor<8x8x12x14xf32>, tensor<8x8x12x14xf32>) -> tensor<8x8x24x14xf32>
  %4 = cairn.slice %3 {start = array<i64: 0, 0, 0, 0>, limit = array<i64: 8, 8, 14, 14>, step = array<i64: 1, 1, 1, 1>} : tensor<8x8x24x14xf32> -> tensor<8x8x14x14xf32>
  return %4 : tensor<8x8x14x14xf32>
}

// Products in a half type with float32 tensors, rounded to it as they are
// read or written (ir/ProductTypes.h): master weights and a bias, the input
// batch, a weight gradient for the float32 master.
// CHECK-LABEL: func.func @half_products
func.func @half_products(%x: tensor<64x784xbf16>, %w: tensor<10x784xf32>, %b: tensor<10xf32>, %dy: tensor<64x10xbf16>,
                         %img: tensor<8x4x32x32xf32>, %k: tensor<16x4x3x3xf32>, %dz: tensor<8x16x32x32xf16>) -> tensor<16x4x3x3xf32> {
  // CHECK: cairn.linear %{{.+}}, %{{.+}}, %{{.+}} : (tensor<64x784xbf16>, tensor<10x784xf32>, tensor<10xf32>) -> tensor<64x10xbf16>
  %0 = cairn.linear %x, %w, %b : (tensor<64x784xbf16>, tensor<10x784xf32>, tensor<10xf32>) -> tensor<64x10xbf16>
  // CHECK: cairn.linear_grad_input %{{.+}}, %{{.+}} : (tensor<64x10xbf16>, tensor<10x784xf32>) -> tensor<64x784xbf16>
  %1 = cairn.linear_grad_input %dy, %w : (tensor<64x10xbf16>, tensor<10x784xf32>) -> tensor<64x784xbf16>
  // CHECK: cairn.linear_grad_weight %{{.+}}, %{{.+}} : (tensor<64x10xbf16>, tensor<64x784xbf16>) -> tensor<10x784xf32>
  %2 = cairn.linear_grad_weight %dy, %x : (tensor<64x10xbf16>, tensor<64x784xbf16>) -> tensor<10x784xf32>
  // CHECK: cairn.conv2d %{{.+}}, %{{.+}} {{.*}} : (tensor<8x4x32x32xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x32x32xf16>
  %3 = cairn.conv2d %img, %k {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<8x4x32x32xf32>, tensor<16x4x3x3xf32>) -> tensor<8x16x32x32xf16>
  // CHECK: cairn.conv2d_grad_input %{{.+}}, %{{.+}} {{.*}} : (tensor<8x16x32x32xf16>, tensor<16x4x3x3xf32>) -> tensor<8x4x32x32xf16>
  %4 = cairn.conv2d_grad_input %dz, %k {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<8x16x32x32xf16>, tensor<16x4x3x3xf32>) -> tensor<8x4x32x32xf16>
  // CHECK: cairn.conv2d_grad_weight %{{.+}}, %{{.+}} {{.*}} : (tensor<8x16x32x32xf16>, tensor<8x4x32x32xf32>) -> tensor<16x4x3x3xf32>
  %5 = cairn.conv2d_grad_weight %dz, %img {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<8x16x32x32xf16>, tensor<8x4x32x32xf32>) -> tensor<16x4x3x3xf32>
  return %5 : tensor<16x4x3x3xf32>
}

// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<8x16x4x4xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>, %[[M:.+]]: tensor<16xf32>, %[[V:.+]]: tensor<16xf32>, %[[S:.+]]: tensor<8x16xf32>)
func.func @batch_norm(%x: tensor<8x16x4x4xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>, %s: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[T:.+]] = cairn.batch_norm %[[X]] weight %[[G]] bias %[[B]] mean %[[M]] var %[[V]] {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = true} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  %0 = cairn.batch_norm %x weight %g bias %b mean %m var %v {eps = 1.0e-5, momentum = 0.1, training = true} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  // CHECK: cairn.batch_norm %[[T]] mean %[[M]] var %[[V]] {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = false} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  %1 = cairn.batch_norm %0 mean %m var %v {eps = 1.0e-5, momentum = 0.1, training = false} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  // CHECK: cairn.batch_norm %[[S]] weight %[[G]] bias %[[B]] {eps = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64, training = true} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %2 = cairn.batch_norm %s weight %g bias %b {eps = 1.0e-3, momentum = 0.0, training = true} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<8x16x64xf32>, %[[G:.+]]: tensor<16x64xf32>, %[[B:.+]]: tensor<16x64xf32>)
func.func @layer_norm(%x: tensor<8x16x64xf32>, %g: tensor<16x64xf32>, %b: tensor<16x64xf32>) -> tensor<8x16x64xf32> {
  // CHECK: %[[L:.+]] = cairn.layer_norm %[[X]] weight %[[G]] bias %[[B]] {eps = 1.000000e-05 : f64, normalized_rank = 2 : i64} : (tensor<8x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<8x16x64xf32>
  %0 = cairn.layer_norm %x weight %g bias %b {normalized_rank = 2, eps = 1.0e-5} : (tensor<8x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<8x16x64xf32>
  // CHECK: cairn.layer_norm %[[L]] {eps = 1.000000e-05 : f64, normalized_rank = 1 : i64} : (tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %1 = cairn.layer_norm %0 {normalized_rank = 1, eps = 1.0e-5} : (tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %1 : tensor<8x16x64xf32>
}

// CHECK-LABEL: func.func @embedding
func.func @embedding(%ids: tensor<8x32xi64>, %one: tensor<i32>, %w: tensor<1000x64xf16>) -> tensor<64xf16> {
  // CHECK: cairn.embedding %{{.+}}, %{{.+}} {padding_idx = 0 : i64} : (tensor<8x32xi64>, tensor<1000x64xf16>) -> tensor<8x32x64xf16>
  %0 = cairn.embedding %ids, %w {padding_idx = 0} : (tensor<8x32xi64>, tensor<1000x64xf16>) -> tensor<8x32x64xf16>
  // CHECK: cairn.embedding %{{.+}}, %{{.+}} : (tensor<i32>, tensor<1000x64xf16>) -> tensor<64xf16>
  %1 = cairn.embedding %one, %w : (tensor<i32>, tensor<1000x64xf16>) -> tensor<64xf16>
  return %1 : tensor<64xf16>
}

// CHECK-LABEL: func.func @dropout
func.func @dropout(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // CHECK: %[[D:.+]] = cairn.dropout %{{.+}} {p = 5.000000e-01 : f64, stream = 0 : i64, training = true} : tensor<64x256xf32>
  %0 = cairn.dropout %x {p = 0.5, training = true, stream = 0} : tensor<64x256xf32>
  // CHECK: cairn.dropout %[[D]] {p = 0.000000e+00 : f64, stream = 7 : i64, training = false} : tensor<64x256xf32>
  %1 = cairn.dropout %0 {p = 0.0, training = false, stream = 7} : tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<8x16x32x32xf32>, %odd: tensor<1x1x5x5xf32>) -> tensor<8x16x1x1xf32> {
  // CHECK: %[[M:.+]] = cairn.max_pool2d %{{.+}} {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xf32>
  %0 = cairn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xf32>
  // ceil_mode: ceil((5 - 2) / 2) + 1 = 3.
  // CHECK: cairn.max_pool2d %{{.+}} {ceil_mode = true, {{.+}}} : tensor<1x1x5x5xf32> -> tensor<1x1x3x3xf32>
  %1 = cairn.max_pool2d %odd {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = true} : tensor<1x1x5x5xf32> -> tensor<1x1x3x3xf32>
  // CHECK: %[[A:.+]] = cairn.avg_pool2d %[[M]] {ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<8x16x16x16xf32> -> tensor<8x16x8x8xf32>
  %2 = cairn.avg_pool2d %0 {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true} : tensor<8x16x16x16xf32> -> tensor<8x16x8x8xf32>
  // CHECK: cairn.adaptive_avg_pool2d %[[A]] {output_size = array<i64: 1, 1>} : tensor<8x16x8x8xf32> -> tensor<8x16x1x1xf32>
  %3 = cairn.adaptive_avg_pool2d %2 {output_size = array<i64: 1, 1>} : tensor<8x16x8x8xf32> -> tensor<8x16x1x1xf32>
  return %3 : tensor<8x16x1x1xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<64x1x28x28xf32>, %i: tensor<6xi32>) -> tensor<2x3xi32> {
  // CHECK: %[[R:.+]] = cairn.reshape %{{.+}} : tensor<64x1x28x28xf32> -> tensor<64x784xf32>
  %0 = cairn.reshape %x : tensor<64x1x28x28xf32> -> tensor<64x784xf32>
  // CHECK: %[[P:.+]] = cairn.permute %[[R]] {permutation = array<i64: 1, 0>} : tensor<64x784xf32> -> tensor<784x64xf32>
  %1 = cairn.permute %0 {permutation = array<i64: 1, 0>} : tensor<64x784xf32> -> tensor<784x64xf32>
  // CHECK: %[[C:.+]] = cairn.concat %[[P]], %[[P]], %[[P]] {dim = 1 : i64} : (tensor<784x64xf32>, tensor<784x64xf32>, tensor<784x64xf32>) -> tensor<784x192xf32>
  %2 = cairn.concat %1, %1, %1 {dim = 1} : (tensor<784x64xf32>, tensor<784x64xf32>, tensor<784x64xf32>) -> tensor<784x192xf32>
  // ceil((192 - 1) / 10) = 20.
  // CHECK: cairn.slice %[[C]] {limit = array<i64: 784, 192>, start = array<i64: 3, 1>, step = array<i64: 1, 10>} : tensor<784x192xf32> -> tensor<781x20xf32>
  %3 = cairn.slice %2 {start = array<i64: 3, 1>, limit = array<i64: 784, 192>, step = array<i64: 1, 10>} : tensor<784x192xf32> -> tensor<781x20xf32>
  // CHECK: cairn.reshape %{{.+}} : tensor<6xi32> -> tensor<2x3xi32>
  %4 = cairn.reshape %i : tensor<6xi32> -> tensor<2x3xi32>
  // CHECK: cairn.concat %{{.+}} {dim = 0 : i64} : (tensor<6xi32>) -> tensor<6xi32>
  %5 = cairn.concat %i {dim = 0} : (tensor<6xi32>) -> tensor<6xi32>
  return %4 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<8x16x4xf32>) -> tensor<8x1x1xf32> {
  // CHECK: cairn.sum %{{.+}} {dims = array<i64: 0, 2>, keepdim = false} : tensor<8x16x4xf32> -> tensor<16xf32>
  %0 = cairn.sum %x {dims = array<i64: 0, 2>, keepdim = false} : tensor<8x16x4xf32> -> tensor<16xf32>
  // CHECK: cairn.mean %{{.+}} {dims = array<i64: 1, 2>, keepdim = true} : tensor<8x16x4xf32> -> tensor<8x1x1xf32>
  %1 = cairn.mean %x {dims = array<i64: 1, 2>, keepdim = true} : tensor<8x16x4xf32> -> tensor<8x1x1xf32>
  // CHECK: cairn.sum %{{.+}} {dims = array<i64: 0, 1, 2>, keepdim = false} : tensor<8x16x4xf32> -> tensor<f32>
  %2 = cairn.sum %x {dims = array<i64: 0, 1, 2>, keepdim = false} : tensor<8x16x4xf32> -> tensor<f32>
  return %1 : tensor<8x1x1xf32>
}

// A half input summed into a float32 result.
// CHECK-LABEL: func.func @half_reductions
func.func @half_reductions(%x: tensor<8x16xbf16>, %y: tensor<8x16xf16>) -> tensor<16xf32> {
  // CHECK: cairn.sum %{{.+}} {dims = array<i64: 0>, keepdim = false} : tensor<8x16xbf16> -> tensor<16xf32>
  %0 = cairn.sum %x {dims = array<i64: 0>, keepdim = false} : tensor<8x16xbf16> -> tensor<16xf32>
  // CHECK: cairn.mean %{{.+}} {dims = array<i64: 1>, keepdim = false} : tensor<8x16xf16> -> tensor<8xf32>
  %1 = cairn.mean %y {dims = array<i64: 1>, keepdim = false} : tensor<8x16xf16> -> tensor<8xf32>
  return %0 : tensor<16xf32>
}

// CHECK-LABEL: func.func @losses
func.func @losses(%logits: tensor<64x10xf32>, %labels: tensor<64xi64>, %y: tensor<64x1xf64>, %t: tensor<64x1xf64>) -> tensor<f32> {
  // CHECK: %[[L:.+]] = cairn.cross_entropy %{{.+}}, %{{.+}} {label_smoothing = 1.000000e-01 : f64} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
  %0 = cairn.cross_entropy %logits, %labels {label_smoothing = 0.1} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
  // CHECK: cairn.mse_loss %{{.+}}, %{{.+}} : (tensor<64x1xf64>, tensor<64x1xf64>) -> tensor<f64>
  %1 = cairn.mse_loss %y, %t : (tensor<64x1xf64>, tensor<64x1xf64>) -> tensor<f64>
  // CHECK: return %[[L]]
  return %0 : tensor<f32>
}
