// RUN: cairn-opt %s | cairn-opt | FileCheck %s
// RUN: cairn-opt %s --mlir-print-op-generic | cairn-opt | FileCheck %s

// Round trip of every op of CairnTrainingOps.td (the backward and the
// optimizer update), of matmul's transpose flags, and of the attributes of
// a training step's arguments and results.

// relu_grad, sigmoid_grad, tanh_grad and the softmax grads read the forward
// result y; gelu_grad, silu_grad, hardswish_grad, clamp_grad and
// leaky_relu_grad the forward input x.
// CHECK-LABEL: func.func @activations
// CHECK-SAME: (%[[DY:.+]]: tensor<8x128xf32>, %[[X:.+]]: tensor<8x128xf32>, %[[Y:.+]]: tensor<8x128xf32>)
func.func @activations(%dy: tensor<8x128xf32>, %x: tensor<8x128xf32>, %y: tensor<8x128xf32>) -> tensor<8x128xf32> {
  // CHECK: %[[R:.+]] = cairn.relu_grad %[[DY]], %[[Y]] : tensor<8x128xf32>
  %0 = cairn.relu_grad %dy, %y : tensor<8x128xf32>
  // CHECK: %[[S:.+]] = cairn.sigmoid_grad %[[R]], %[[Y]] : tensor<8x128xf32>
  %1 = cairn.sigmoid_grad %0, %y : tensor<8x128xf32>
  // CHECK: %[[T:.+]] = cairn.tanh_grad %[[S]], %[[Y]] : tensor<8x128xf32>
  %2 = cairn.tanh_grad %1, %y : tensor<8x128xf32>
  // CHECK: %[[G:.+]] = cairn.gelu_grad %[[T]], %[[X]] : tensor<8x128xf32>
  %3 = cairn.gelu_grad %2, %x : tensor<8x128xf32>
  // CHECK: %[[GT:.+]] = cairn.gelu_grad %[[G]], %[[X]] {approximate = "tanh"} : tensor<8x128xf32>
  %4 = cairn.gelu_grad %3, %x {approximate = "tanh"} : tensor<8x128xf32>
  // CHECK: %[[SM:.+]] = cairn.softmax_grad %[[GT]], %[[Y]] {dim = 1 : i64} : tensor<8x128xf32>
  %5 = cairn.softmax_grad %4, %y {dim = 1} : tensor<8x128xf32>
  // CHECK: %[[LS:.+]] = cairn.log_softmax_grad %[[SM]], %[[Y]] {dim = 0 : i64} : tensor<8x128xf32>
  %6 = cairn.log_softmax_grad %5, %y {dim = 0} : tensor<8x128xf32>
  // CHECK: %[[SI:.+]] = cairn.silu_grad %[[LS]], %[[X]] : tensor<8x128xf32>
  %7 = cairn.silu_grad %6, %x : tensor<8x128xf32>
  // CHECK: %[[HS:.+]] = cairn.hardswish_grad %[[SI]], %[[X]] : tensor<8x128xf32>
  %8 = cairn.hardswish_grad %7, %x : tensor<8x128xf32>
  // CHECK: %[[C:.+]] = cairn.clamp_grad %[[HS]], %[[X]] {min = -1.000000e+00 : f64} : tensor<8x128xf32>
  %9 = cairn.clamp_grad %8, %x {min = -1.0 : f64} : tensor<8x128xf32>
  // CHECK: cairn.leaky_relu_grad %[[C]], %[[X]] {negative_slope = 1.000000e-02 : f64} : tensor<8x128xf32>
  %10 = cairn.leaky_relu_grad %9, %x {negative_slope = 0.01 : f64} : tensor<8x128xf32>
  return %10 : tensor<8x128xf32>
}

// CHECK-LABEL: func.func @matmul_transposed
func.func @matmul_transposed(%dy: tensor<8x64x16xf32>, %a: tensor<8x64x32xf32>, %b: tensor<32x16xf32>, %c: tensor<8x32x64xf32>) -> (tensor<8x64x32xf32>, tensor<8x32x16xf32>, tensor<8x16x32xf32>) {
  // CHECK: cairn.matmul %{{.+}}, %{{.+}} {transpose_rhs = true} : tensor<8x64x16xf32>, tensor<32x16xf32> -> tensor<8x64x32xf32>
  %0 = cairn.matmul %dy, %b {transpose_rhs = true} : tensor<8x64x16xf32>, tensor<32x16xf32> -> tensor<8x64x32xf32>
  // CHECK: cairn.matmul %{{.+}}, %{{.+}} {transpose_lhs = true} : tensor<8x64x32xf32>, tensor<8x64x16xf32> -> tensor<8x32x16xf32>
  %1 = cairn.matmul %a, %dy {transpose_lhs = true} : tensor<8x64x32xf32>, tensor<8x64x16xf32> -> tensor<8x32x16xf32>
  // CHECK: cairn.matmul %{{.+}}, %{{.+}} {transpose_lhs = true, transpose_rhs = true} : tensor<8x64x16xf32>, tensor<8x32x64xf32> -> tensor<8x16x32xf32>
  %2 = cairn.matmul %dy, %c {transpose_lhs = true, transpose_rhs = true} : tensor<8x64x16xf32>, tensor<8x32x64xf32> -> tensor<8x16x32xf32>
  // Flags equal to their default are not printed.
  // CHECK: cairn.matmul %{{.+}}, %{{.+}} : tensor<8x64x32xf32>, tensor<32x16xf32> -> tensor<8x64x16xf32>
  %3 = cairn.matmul %a, %b {transpose_lhs = false, transpose_rhs = false} : tensor<8x64x32xf32>, tensor<32x16xf32> -> tensor<8x64x16xf32>
  return %0, %1, %2 : tensor<8x64x32xf32>, tensor<8x32x16xf32>, tensor<8x16x32xf32>
}

// CHECK-LABEL: func.func @linear
func.func @linear(%dy: tensor<8x16x10xf32>, %x: tensor<8x16x784xf32>, %w: tensor<10x784xf32>) -> (tensor<8x16x784xf32>, tensor<10x784xf32>) {
  // CHECK: cairn.linear_grad_input %{{.+}}, %{{.+}} : (tensor<8x16x10xf32>, tensor<10x784xf32>) -> tensor<8x16x784xf32>
  %0 = cairn.linear_grad_input %dy, %w : (tensor<8x16x10xf32>, tensor<10x784xf32>) -> tensor<8x16x784xf32>
  // CHECK: cairn.linear_grad_weight %{{.+}}, %{{.+}} : (tensor<8x16x10xf32>, tensor<8x16x784xf32>) -> tensor<10x784xf32>
  %1 = cairn.linear_grad_weight %dy, %x : (tensor<8x16x10xf32>, tensor<8x16x784xf32>) -> tensor<10x784xf32>
  return %0, %1 : tensor<8x16x784xf32>, tensor<10x784xf32>
}

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%dy: tensor<8x16x16x16xf32>, %x: tensor<8x4x32x32xf32>, %w: tensor<16x2x3x3xf32>) -> (tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>) {
  // CHECK: cairn.conv2d_grad_input %{{.+}}, %{{.+}} {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<16x2x3x3xf32>) -> tensor<8x4x32x32xf32>
  %0 = cairn.conv2d_grad_input %dy, %w {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<16x2x3x3xf32>) -> tensor<8x4x32x32xf32>
  // CHECK: cairn.conv2d_grad_weight %{{.+}}, %{{.+}} {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<8x4x32x32xf32>) -> tensor<16x2x3x3xf32>
  %1 = cairn.conv2d_grad_weight %dy, %x {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<8x4x32x32xf32>) -> tensor<16x2x3x3xf32>
  return %0, %1 : tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>
}

// A transposed convolution (ConvTranspose2d) with its bias, in bf16 with the
// float32 master bias it rounds as it reads it.
// CHECK-LABEL: func.func @conv_transpose
func.func @conv_transpose(%x: tensor<8x16x16x16xbf16>, %w: tensor<16x2x3x3xbf16>, %b: tensor<4xf32>) -> tensor<8x4x32x32xbf16> {
  // CHECK: cairn.conv2d_grad_input %{{.+}}, %{{.+}} bias %{{.+}} {{.*}} : (tensor<8x16x16x16xbf16>, tensor<16x2x3x3xbf16>, tensor<4xf32>) -> tensor<8x4x32x32xbf16>
  %0 = cairn.conv2d_grad_input %x, %w bias %b {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xbf16>, tensor<16x2x3x3xbf16>, tensor<4xf32>) -> tensor<8x4x32x32xbf16>
  return %0 : tensor<8x4x32x32xbf16>
}

// CHECK-LABEL: func.func @norms
func.func @norms(%dy: tensor<8x16x4x4xf32>, %x: tensor<8x16x4x4xf32>, %g: tensor<16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>, %n: tensor<i64>,
                 %ldy: tensor<8x16x64xf32>, %lx: tensor<8x16x64xf32>, %lg: tensor<16x64xf32>) {
  // CHECK: cairn.batch_norm_grad %{{.+}}, %{{.+}} weight %{{.+}} {eps = 1.000000e-05 : f64} : (tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
  %0:3 = cairn.batch_norm_grad %dy, %x weight %g {eps = 1.0e-5 : f64} : (tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
  // CHECK: cairn.batch_norm_grad %{{.+}}, %{{.+}} {eps = 1.000000e-03 : f64} : (tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
  %1:3 = cairn.batch_norm_grad %dy, %x {eps = 1.0e-3 : f64} : (tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
  // CHECK: cairn.batch_norm_running_update %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {momentum = 1.000000e-01 : f64} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<i64>)
  %2:3 = cairn.batch_norm_running_update %x, %m, %v, %n {momentum = 0.1 : f64} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<i64>)
  // CHECK: cairn.layer_norm_grad %{{.+}}, %{{.+}} weight %{{.+}} {eps = 1.000000e-05 : f64, normalized_rank = 2 : i64} : (tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<16x64xf32>) -> (tensor<8x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>)
  %3:3 = cairn.layer_norm_grad %ldy, %lx weight %lg {eps = 1.0e-5 : f64, normalized_rank = 2 : i64} : (tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<16x64xf32>) -> (tensor<8x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>)
  return
}

// CHECK-LABEL: func.func @embedding
func.func @embedding(%dy: tensor<8x32x64xf32>, %ids: tensor<8x32xi64>) -> (tensor<1000x64xf32>, tensor<1000x64xf32>) {
  // CHECK: cairn.embedding_grad %{{.+}}, %{{.+}} {num_embeddings = 1000 : i64, padding_idx = 0 : i64} : (tensor<8x32x64xf32>, tensor<8x32xi64>) -> tensor<1000x64xf32>
  %0 = cairn.embedding_grad %dy, %ids {num_embeddings = 1000 : i64, padding_idx = 0 : i64} : (tensor<8x32x64xf32>, tensor<8x32xi64>) -> tensor<1000x64xf32>
  // CHECK: cairn.embedding_grad %{{.+}}, %{{.+}} {num_embeddings = 1000 : i64} : (tensor<8x32x64xf32>, tensor<8x32xi64>) -> tensor<1000x64xf32>
  %1 = cairn.embedding_grad %dy, %ids {num_embeddings = 1000 : i64} : (tensor<8x32x64xf32>, tensor<8x32xi64>) -> tensor<1000x64xf32>
  return %0, %1 : tensor<1000x64xf32>, tensor<1000x64xf32>
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%dy: tensor<8x16x16x16xf32>, %x: tensor<8x16x32x32xf32>, %ady: tensor<8x512x1x1xf32>) {
  // CHECK: cairn.max_pool2d_grad %{{.+}}, %{{.+}} {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  %0 = cairn.max_pool2d_grad %dy, %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  // CHECK: cairn.avg_pool2d_grad %{{.+}} {ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<8x16x16x16xf32> -> tensor<8x16x32x32xf32>
  %1 = cairn.avg_pool2d_grad %dy {ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<8x16x16x16xf32> -> tensor<8x16x32x32xf32>
  // CHECK: cairn.adaptive_avg_pool2d_grad %{{.+}} : tensor<8x512x1x1xf32> -> tensor<8x512x7x7xf32>
  %2 = cairn.adaptive_avg_pool2d_grad %ady : tensor<8x512x1x1xf32> -> tensor<8x512x7x7xf32>
  return
}

// CHECK-LABEL: func.func @movement
func.func @movement(%dy: tensor<8x4xf32>, %x: tensor<64x1xf32>) -> (tensor<8x10xf32>, tensor<64x10xf32>) {
  // CHECK: cairn.slice_grad %{{.+}} {limit = array<i64: 8, 10>, start = array<i64: 0, 2>, step = array<i64: 1, 2>} : tensor<8x4xf32> -> tensor<8x10xf32>
  %0 = cairn.slice_grad %dy {limit = array<i64: 8, 10>, start = array<i64: 0, 2>, step = array<i64: 1, 2>} : tensor<8x4xf32> -> tensor<8x10xf32>
  // CHECK: cairn.broadcast %{{.+}} : tensor<64x1xf32> -> tensor<64x10xf32>
  %1 = cairn.broadcast %x : tensor<64x1xf32> -> tensor<64x10xf32>
  return %0, %1 : tensor<8x10xf32>, tensor<64x10xf32>
}

// CHECK-LABEL: func.func @losses
func.func @losses(%dl: tensor<f32>, %logits: tensor<64x10xf32>, %labels: tensor<64xi64>, %y: tensor<64x1xf32>, %t: tensor<64x1xf32>) -> (tensor<64x10xf32>, tensor<64x1xf32>) {
  // CHECK: cairn.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} {label_smoothing = 1.000000e-01 : f64} : (tensor<f32>, tensor<64x10xf32>, tensor<64xi64>) -> tensor<64x10xf32>
  %0 = cairn.cross_entropy_grad %dl, %logits, %labels {label_smoothing = 0.1 : f64} : (tensor<f32>, tensor<64x10xf32>, tensor<64xi64>) -> tensor<64x10xf32>
  // CHECK: cairn.mse_loss_grad %{{.+}}, %{{.+}}, %{{.+}} : (tensor<f32>, tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
  %1 = cairn.mse_loss_grad %dl, %y, %t : (tensor<f32>, tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
  return %0, %1 : tensor<64x10xf32>, tensor<64x1xf32>
}

// CHECK-LABEL: func.func @optimizers
func.func @optimizers(%p: tensor<10x784xf32>, %g: tensor<10x784xf32>, %b: tensor<10x784xf32>, %m: tensor<10x784xf32>, %v: tensor<10x784xf32>) {
  // CHECK: cairn.sgd_update %{{.+}}, %{{.+}} momentum_buffer %{{.+}} {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 5.000000e-04 : f64} : (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>) -> (tensor<10x784xf32>, tensor<10x784xf32>)
  %0:2 = cairn.sgd_update %p, %g momentum_buffer %b {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.9 : f64, nesterov = true, weight_decay = 5.0e-4 : f64} : (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>) -> (tensor<10x784xf32>, tensor<10x784xf32>)
  // CHECK: cairn.sgd_update %{{.+}}, %{{.+}} {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64} : (tensor<10x784xf32>, tensor<10x784xf32>) -> tensor<10x784xf32>
  %1 = cairn.sgd_update %p, %g {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64} : (tensor<10x784xf32>, tensor<10x784xf32>) -> tensor<10x784xf32>
  // CHECK: cairn.adam_update %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, lr = 1.000000e-03 : f64, weight_decay = 0.000000e+00 : f64} : (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>) -> (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>)
  %2:3 = cairn.adam_update %p, %g, %m, %v {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, lr = 1.0e-3 : f64, weight_decay = 0.0 : f64} : (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>) -> (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>)
  // AdamW.
  // CHECK: cairn.adam_update %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, decoupled_weight_decay = true, eps = 1.000000e-08 : f64, lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64}
  %3:3 = cairn.adam_update %p, %g, %m, %v {beta1 = 0.9 : f64, beta2 = 0.999 : f64, decoupled_weight_decay = true, eps = 1.0e-8 : f64, lr = 1.0e-3 : f64, weight_decay = 0.01 : f64} : (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>) -> (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>)
  return
}

// clip_grad_norm's coefficient of a step's gradients (infinity norm too).
// CHECK-LABEL: func.func @clip
func.func @clip(%a: tensor<10x784xf32>, %b: tensor<10xf32>) -> (tensor<f32>, tensor<f32>) {
  // CHECK: cairn.clip_coefficient %{{.+}}, %{{.+}} {max_norm = 1.000000e+00 : f64, norm_type = 2.000000e+00 : f64} : (tensor<10x784xf32>, tensor<10xf32>) -> tensor<f32>
  %0 = cairn.clip_coefficient %a, %b {max_norm = 1.0 : f64, norm_type = 2.0 : f64} : (tensor<10x784xf32>, tensor<10xf32>) -> tensor<f32>
  // CHECK: cairn.clip_coefficient %{{.+}} {max_norm = 5.000000e-01 : f64, norm_type = 0x7FF0000000000000 : f64} : (tensor<10xf32>) -> tensor<f32>
  %1 = cairn.clip_coefficient %b {max_norm = 0.5 : f64, norm_type = 0x7FF0000000000000 : f64} : (tensor<10xf32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// The attributes of a training step: the new roles on arguments, and
// cairn.role and cairn.updates on results.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%{{.+}}: tensor<10xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}, %{{.+}}: tensor<10xf32> {cairn.name = "w.exp_avg", cairn.role = #cairn.role<optimizer_state>})
// CHECK-SAME: -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}, tensor<10xf32> {cairn.name = "w", cairn.role = #cairn.role<param>, cairn.updates = 0 : i64}, tensor<10xf32> {cairn.name = "grad.w", cairn.role = #cairn.role<gradient>})
func.func @step(%w: tensor<10xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}, %m: tensor<10xf32> {cairn.name = "w.exp_avg", cairn.role = #cairn.role<optimizer_state>})
    -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>},
        tensor<10xf32> {cairn.name = "w", cairn.role = #cairn.role<param>, cairn.updates = 0 : i64},
        tensor<10xf32> {cairn.name = "grad.w", cairn.role = #cairn.role<gradient>}) {
  %0 = cairn.constant dense<0.0> : tensor<f32>
  return %0, %w, %m : tensor<f32>, tensor<10xf32>, tensor<10xf32>
}
