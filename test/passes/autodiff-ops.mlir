// RUN: cairn-opt %s --cairn-autodiff -split-input-file | FileCheck %s

// The rule of each op family, one small @loss per case.

// A value used twice (h, in the relu and in the add) gets the sum of its
// gradients; relu_grad reads relu's result r, not h, even though h is live;
// SGD's nesterov and weight decay are carried to sgd_update.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 0.01, nesterov = true>} {
  func.func @loss(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %t: tensor<4x3xf32> {cairn.name = "t", cairn.role = #cairn.role<input>},
                  %w: tensor<3x8xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %h = cairn.linear %x, %w : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
    %r = cairn.relu %h : tensor<4x3xf32>
    %s = cairn.add %r, %h : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
    %l = cairn.mse_loss %s, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x8xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}, %[[MW:[^:]+]]: tensor<3x8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "w.momentum_buffer", cairn.role = #cairn.role<optimizer_state>}, %[[X:[^:]+]]: tensor<4x8xf32>
// CHECK:      %[[H:.+]] = cairn.linear %[[X]], %[[W]]
// CHECK-NEXT: %[[R:.+]] = cairn.relu %[[H]]
// CHECK-NEXT: %[[S:.+]] = cairn.add %[[R]], %[[H]]
// CHECK-NEXT: %[[L:.+]] = cairn.mse_loss %[[S]], %[[T:[^ ]+]]
// CHECK-NEXT: %[[ONE:.+]] = cairn.constant {cairn.backward_seed} dense<1.000000e+00>
// CHECK-NEXT: %[[DS:.+]] = cairn.mse_loss_grad %[[ONE]], %[[S]], %[[T]]
// CHECK-NEXT: %[[DR:.+]] = cairn.relu_grad %[[DS]], %[[R]] : tensor<4x3xf32>
// CHECK-NEXT: %[[DH:.+]] = cairn.add %[[DS]], %[[DR]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[DW:.+]] = cairn.linear_grad_weight %[[DH]], %[[X]]
// CHECK-NEXT: %[[NW:[^,]+]], %[[NMW:[^ ]+]] = cairn.sgd_update %[[W]], %[[DW]] momentum_buffer %[[MW]] {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT: return %[[L]], %[[NW]], %[[NMW]], %[[DW]] :

// -----

// Broadcasting binary ops: each operand's gradient is summed back to its
// shape (over the leading dimensions it lacks and those where it has 1,
// then reshaped when the rank differs); sub's rhs and div's rhs are negated;
// mean's gradient is divided by the count, reshaped and broadcast.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%h: tensor<2x4x3xf32> {cairn.name = "h", cairn.role = #cairn.role<param>},
                  %p1: tensor<3xf32> {cairn.name = "p1", cairn.role = #cairn.role<param>},
                  %p2: tensor<4x1xf32> {cairn.name = "p2", cairn.role = #cairn.role<param>},
                  %p3: tensor<1x1x3xf32> {cairn.name = "p3", cairn.role = #cairn.role<param>},
                  %p4: tensor<2x1x1xf32> {cairn.name = "p4", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.add %h, %p1 : tensor<2x4x3xf32>, tensor<3xf32> -> tensor<2x4x3xf32>
    %1 = cairn.sub %0, %p2 : tensor<2x4x3xf32>, tensor<4x1xf32> -> tensor<2x4x3xf32>
    %2 = cairn.mul %1, %p3 : tensor<2x4x3xf32>, tensor<1x1x3xf32> -> tensor<2x4x3xf32>
    %3 = cairn.div %2, %p4 : tensor<2x4x3xf32>, tensor<2x1x1xf32> -> tensor<2x4x3xf32>
    %4 = cairn.mean %3 {dims = array<i64: 0, 1, 2>, keepdim = false} : tensor<2x4x3xf32> -> tensor<f32>
    return %4 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[H:[^:]+]]: tensor<2x4x3xf32> {{[^}]*}}}, %[[P1:[^:]+]]: tensor<3xf32> {{[^}]*}}}, %[[P2:[^:]+]]: tensor<4x1xf32> {{[^}]*}}}, %[[P3:[^:]+]]: tensor<1x1x3xf32> {{[^}]*}}}, %[[P4:[^:]+]]: tensor<2x1x1xf32>
// CHECK:      %[[A:.+]] = cairn.add %[[H]], %[[P1]]
// CHECK-NEXT: %[[S:.+]] = cairn.sub %[[A]], %[[P2]]
// CHECK-NEXT: %[[M:.+]] = cairn.mul %[[S]], %[[P3]]
// CHECK-NEXT: %[[D:.+]] = cairn.div %[[M]], %[[P4]]
// CHECK-NEXT: %[[L:.+]] = cairn.mean %[[D]]
// mean: divided by the count (2 * 4 * 3), reshaped to keepdim form, broadcast.
// CHECK-NEXT: %[[ONE:.+]] = cairn.constant {cairn.backward_seed} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[N:.+]] = cairn.constant dense<2.400000e+01> : tensor<f32>
// CHECK-NEXT: %[[G0:.+]] = cairn.div %[[ONE]], %[[N]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT: %[[G1:.+]] = cairn.reshape %[[G0]] : tensor<f32> -> tensor<1x1x1xf32>
// CHECK-NEXT: %[[DD:.+]] = cairn.broadcast %[[G1]] : tensor<1x1x1xf32> -> tensor<2x4x3xf32>
// div: dy / b for a; -dy * (y / b), summed over the dims b broadcast in.
// CHECK-NEXT: %[[DM:.+]] = cairn.div %[[DD]], %[[P4]]
// CHECK-NEXT: %[[Q:.+]] = cairn.div %[[D]], %[[P4]]
// CHECK-NEXT: %[[T:.+]] = cairn.mul %[[DD]], %[[Q]]
// CHECK-NEXT: %[[T1:.+]] = cairn.sum %[[T]] {dims = array<i64: 1, 2>, keepdim = true} : tensor<2x4x3xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT: %[[NEG:.+]] = cairn.constant dense<-1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DP4:.+]] = cairn.mul %[[T1]], %[[NEG]] : tensor<2x1x1xf32>, tensor<f32> -> tensor<2x1x1xf32>
// mul: dy times the other operand.
// CHECK-NEXT: %[[DS:.+]] = cairn.mul %[[DM]], %[[P3]]
// CHECK-NEXT: %[[T2:.+]] = cairn.mul %[[DM]], %[[S]]
// CHECK-NEXT: %[[DP3:.+]] = cairn.sum %[[T2]] {dims = array<i64: 0, 1>, keepdim = true} : tensor<2x4x3xf32> -> tensor<1x1x3xf32>
// sub: the rhs's gradient, reduced to [4, 1] (a reshape drops the leading 1), times -1.
// CHECK-NEXT: %[[T3:.+]] = cairn.sum %[[DS]] {dims = array<i64: 0, 2>, keepdim = true} : tensor<2x4x3xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[T4:.+]] = cairn.reshape %[[T3]] : tensor<1x4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[NEG2:.+]] = cairn.constant dense<-1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DP2:.+]] = cairn.mul %[[T4]], %[[NEG2]]
// add: the same-shape operand takes dy as is; the [3] one sums the leading dims away.
// CHECK-NEXT: %[[DP1:.+]] = cairn.sum %[[DS]] {dims = array<i64: 0, 1>, keepdim = false} : tensor<2x4x3xf32> -> tensor<3xf32>
// CHECK:      return %[[L]], {{.*}}, %[[DS]], %[[DP1]], %[[DP2]], %[[DP3]], %[[DP4]] :

// -----

// matmul: transposed matmuls, the broadcast batch summed away; a forward
// transpose flag is folded into the gradient's flags.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%a: tensor<2x4x3xf32> {cairn.name = "a", cairn.role = #cairn.role<param>},
                  %b: tensor<3x5xf32> {cairn.name = "b", cairn.role = #cairn.role<param>},
                  %c: tensor<6x5xf32> {cairn.name = "c", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x5xf32> -> tensor<2x4x5xf32>
    %1 = cairn.matmul %0, %c {transpose_rhs = true} : tensor<2x4x5xf32>, tensor<6x5xf32> -> tensor<2x4x6xf32>
    %2 = cairn.sum %1 {dims = array<i64: 0, 1, 2>, keepdim = false} : tensor<2x4x6xf32> -> tensor<f32>
    return %2 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x4x3xf32> {{[^}]*}}}, %[[B:[^:]+]]: tensor<3x5xf32> {{[^}]*}}}, %[[C:[^:]+]]: tensor<6x5xf32>
// CHECK:      %[[AB:.+]] = cairn.matmul %[[A]], %[[B]] :
// CHECK:      %[[DY:.+]] = cairn.broadcast
// d(AB) = dy c (c was transposed); dc = dy^T (AB), summed over the batch.
// CHECK-NEXT: %[[DAB:.+]] = cairn.matmul %[[DY]], %[[C]] : tensor<2x4x6xf32>, tensor<6x5xf32> -> tensor<2x4x5xf32>
// CHECK-NEXT: %[[T:.+]] = cairn.matmul %[[DY]], %[[AB]] {transpose_lhs = true} : tensor<2x4x6xf32>, tensor<2x4x5xf32> -> tensor<2x6x5xf32>
// CHECK-NEXT: %[[DC:.+]] = cairn.sum %[[T]] {dims = array<i64: 0>, keepdim = false} : tensor<2x6x5xf32> -> tensor<6x5xf32>
// da = d(AB) b^T; db = a^T d(AB), summed over the batch b was broadcast in.
// CHECK-NEXT: %[[DA:.+]] = cairn.matmul %[[DAB]], %[[B]] {transpose_rhs = true} : tensor<2x4x5xf32>, tensor<3x5xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[T2:.+]] = cairn.matmul %[[A]], %[[DAB]] {transpose_lhs = true} : tensor<2x4x3xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT: %[[DB:.+]] = cairn.sum %[[T2]] {dims = array<i64: 0>, keepdim = false} : tensor<2x3x5xf32> -> tensor<3x5xf32>
// CHECK:      return {{.*}}, %[[DA]], %[[DB]], %[[DC]] :

// -----

// Data movement: concat's gradient is a slice per input, slice's a
// slice_grad, permute's the inverse permutation, reshape's a reshape back;
// sum with keepdim broadcasts directly.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%p: tensor<2x3xf32> {cairn.name = "p", cairn.role = #cairn.role<param>},
                  %q: tensor<2x1xf32> {cairn.name = "q", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.concat %p, %q {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
    %1 = cairn.slice %0 {limit = array<i64: 2, 4>, start = array<i64: 0, 1>, step = array<i64: 1, 2>} : tensor<2x4xf32> -> tensor<2x2xf32>
    %2 = cairn.permute %1 {permutation = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
    %3 = cairn.reshape %2 : tensor<2x2xf32> -> tensor<4xf32>
    %4 = cairn.sum %3 {dims = array<i64: 0>, keepdim = true} : tensor<4xf32> -> tensor<1xf32>
    %5 = cairn.reshape %4 : tensor<1xf32> -> tensor<f32>
    return %5 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK:      %[[ONE:.+]] = cairn.constant {cairn.backward_seed} dense<1.000000e+00>
// CHECK-NEXT: %[[G0:.+]] = cairn.reshape %[[ONE]] : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT: %[[G1:.+]] = cairn.broadcast %[[G0]] : tensor<1xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[G2:.+]] = cairn.reshape %[[G1]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[G3:.+]] = cairn.permute %[[G2]] {permutation = array<i64: 1, 0>}
// CHECK-NEXT: %[[G4:.+]] = cairn.slice_grad %[[G3]] {limit = array<i64: 2, 4>, start = array<i64: 0, 1>, step = array<i64: 1, 2>} : tensor<2x2xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[DP:.+]] = cairn.slice %[[G4]] {limit = array<i64: 2, 3>, start = array<i64: 0, 0>, step = array<i64: 1, 1>} : tensor<2x4xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DQ:.+]] = cairn.slice %[[G4]] {limit = array<i64: 2, 4>, start = array<i64: 0, 3>, step = array<i64: 1, 1>} : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK:      return {{.*}}, %[[DP]], %[[DQ]] :

// -----

// Activations and softmax: sigmoid_grad, tanh_grad and the softmax grads
// read the forward result (as relu_grad does, in the first case), gelu_grad,
// silu_grad, hardswish_grad, clamp_grad and leaky_relu_grad the forward
// input, with the forward's bounds and slope.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%p: tensor<4x10xf32> {cairn.name = "p", cairn.role = #cairn.role<param>},
                  %y: tensor<4xi32> {cairn.name = "y", cairn.role = #cairn.role<input>}) -> tensor<f32> {
    %s = cairn.silu %p : tensor<4x10xf32>
    %h = cairn.hardswish %s : tensor<4x10xf32>
    %c = cairn.clamp %h {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x10xf32>
    %l = cairn.leaky_relu %c {negative_slope = 0.2 : f64} : tensor<4x10xf32>
    %0 = cairn.sigmoid %l : tensor<4x10xf32>
    %1 = cairn.tanh %0 : tensor<4x10xf32>
    %2 = cairn.gelu %1 {approximate = "tanh"} : tensor<4x10xf32>
    %3 = cairn.softmax %2 {dim = 1 : i64} : tensor<4x10xf32>
    %4 = cairn.log_softmax %3 {dim = 0 : i64} : tensor<4x10xf32>
    %5 = cairn.cross_entropy %4, %y {label_smoothing = 0.0 : f64} : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
    return %5 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK:      %[[SI:.+]] = cairn.silu %[[P:[^ ]+]]
// CHECK-NEXT: %[[HS:.+]] = cairn.hardswish %[[SI]]
// CHECK-NEXT: %[[C:.+]] = cairn.clamp %[[HS]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK-NEXT: %[[L:.+]] = cairn.leaky_relu %[[C]] {negative_slope = 2.000000e-01 : f64}
// CHECK-NEXT: %[[S:.+]] = cairn.sigmoid %[[L]]
// CHECK-NEXT: %[[T:.+]] = cairn.tanh %[[S]]
// CHECK-NEXT: %[[G:.+]] = cairn.gelu %[[T]] {approximate = "tanh"}
// CHECK-NEXT: %[[SM:.+]] = cairn.softmax %[[G]] {dim = 1 : i64}
// CHECK-NEXT: %[[LS:.+]] = cairn.log_softmax %[[SM]] {dim = 0 : i64}
// CHECK-NEXT: cairn.cross_entropy %[[LS]], %[[Y:[^ ]+]]
// CHECK-NEXT: %[[ONE:.+]] = cairn.constant
// CHECK-NEXT: %[[D0:.+]] = cairn.cross_entropy_grad %[[ONE]], %[[LS]], %[[Y]] {{.*}} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[D1:.+]] = cairn.log_softmax_grad %[[D0]], %[[LS]] {dim = 0 : i64}
// CHECK-NEXT: %[[D2:.+]] = cairn.softmax_grad %[[D1]], %[[SM]] {dim = 1 : i64}
// CHECK-NEXT: %[[D3:.+]] = cairn.gelu_grad %[[D2]], %[[T]] {approximate = "tanh"}
// CHECK-NEXT: %[[D4:.+]] = cairn.tanh_grad %[[D3]], %[[T]]
// CHECK-NEXT: %[[D5:.+]] = cairn.sigmoid_grad %[[D4]], %[[S]]
// CHECK-NEXT: %[[DL:.+]] = cairn.leaky_relu_grad %[[D5]], %[[C]] {negative_slope = 2.000000e-01 : f64}
// CHECK-NEXT: %[[DC:.+]] = cairn.clamp_grad %[[DL]], %[[HS]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK-NEXT: %[[D6:.+]] = cairn.hardswish_grad %[[DC]], %[[SI]]
// CHECK-NEXT: %[[D7:.+]] = cairn.silu_grad %[[D6]], %[[P]]
// CHECK-NEXT: cairn.sgd_update %[[P]], %[[D7]]

// -----

// Embedding (integer indices get no gradient) and layer_norm; mse_loss with
// a target that is itself trained gets the negated gradient.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%ids: tensor<2x5xi64> {cairn.name = "ids", cairn.role = #cairn.role<input>},
                  %e: tensor<100x8xf32> {cairn.name = "embed.weight", cairn.role = #cairn.role<param>},
                  %g: tensor<8xf32> {cairn.name = "norm.weight", cairn.role = #cairn.role<param>},
                  %b: tensor<8xf32> {cairn.name = "norm.bias", cairn.role = #cairn.role<param>},
                  %t: tensor<2x5x8xf32> {cairn.name = "target", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.embedding %ids, %e {padding_idx = 0 : i64} : (tensor<2x5xi64>, tensor<100x8xf32>) -> tensor<2x5x8xf32>
    %1 = cairn.layer_norm %0 weight %g bias %b {eps = 1.0e-05 : f64, normalized_rank = 1 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
    %2 = cairn.mse_loss %1, %t : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<f32>
    return %2 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[E:[^:]+]]: tensor<100x8xf32> {{[^}]*}}}, %[[G:[^:]+]]: tensor<8xf32> {{[^}]*}}}, %[[B:[^:]+]]: tensor<8xf32> {{[^}]*}}}, %[[T:[^:]+]]: tensor<2x5x8xf32> {{[^}]*}}}, %[[IDS:[^:]+]]: tensor<2x5xi64>
// CHECK:      %[[EMB:.+]] = cairn.embedding %[[IDS]], %[[E]]
// CHECK-NEXT: %[[LN:.+]] = cairn.layer_norm %[[EMB]] weight %[[G]] bias %[[B]]
// CHECK-NEXT: cairn.mse_loss %[[LN]], %[[T]]
// CHECK-NEXT: %[[ONE:.+]] = cairn.constant
// CHECK-NEXT: %[[DLN:.+]] = cairn.mse_loss_grad %[[ONE]], %[[LN]], %[[T]]
// CHECK-NEXT: %[[NEG:.+]] = cairn.constant dense<-1.000000e+00>
// CHECK-NEXT: %[[DT:.+]] = cairn.mul %[[DLN]], %[[NEG]]
// CHECK-NEXT: %[[DEMB:[^,]+]], %[[DG:[^,]+]], %[[DB:[^ ]+]] = cairn.layer_norm_grad %[[DLN]], %[[EMB]] weight %[[G]] {eps = 1.000000e-05 : f64, normalized_rank = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8xf32>) -> (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT: %[[DE:.+]] = cairn.embedding_grad %[[DEMB]], %[[IDS]] {num_embeddings = 100 : i64, padding_idx = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5xi64>) -> tensor<100x8xf32>
// CHECK:      return {{.*}}, %[[DE]], %[[DG]], %[[DB]], %[[DT]] :

// -----

// Pooling: avg_pool2d_grad and adaptive_avg_pool2d_grad take their
// attributes from the forward op; an eval-mode dropout passes the gradient.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%p: tensor<2x3x8x8xf32> {cairn.name = "p", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.avg_pool2d %p {ceil_mode = true, count_include_pad = false, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x3x8x8xf32> -> tensor<2x3x5x5xf32>
    %1 = cairn.dropout %0 {p = 0.5 : f64, stream = 0 : i64, training = false} : tensor<2x3x5x5xf32>
    %2 = cairn.adaptive_avg_pool2d %1 {output_size = array<i64: 1, 1>} : tensor<2x3x5x5xf32> -> tensor<2x3x1x1xf32>
    %3 = cairn.sum %2 {dims = array<i64: 0, 1, 2, 3>, keepdim = false} : tensor<2x3x1x1xf32> -> tensor<f32>
    return %3 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK:      %[[G:.+]] = cairn.broadcast {{.*}} -> tensor<2x3x1x1xf32>
// CHECK-NEXT: %[[G1:.+]] = cairn.adaptive_avg_pool2d_grad %[[G]] : tensor<2x3x1x1xf32> -> tensor<2x3x5x5xf32>
// CHECK-NEXT: %[[G2:.+]] = cairn.avg_pool2d_grad %[[G1]] {ceil_mode = true, count_include_pad = false, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x3x5x5xf32> -> tensor<2x3x8x8xf32>
// CHECK-NEXT: cairn.sgd_update %{{.+}}, %[[G2]]

// -----

// A BatchNorm layer called twice: its running statistics are updated twice,
// in call order, the second update from the first's results; its weight's
// gradient sums both calls'. A BatchNorm without affine part or running
// statistics gets batch_norm_grad without weight and no update.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<4x3xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %w: tensor<3x3xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>},
                  %g: tensor<3xf32> {cairn.name = "bn.weight", cairn.role = #cairn.role<param>},
                  %b: tensor<3xf32> {cairn.name = "bn.bias", cairn.role = #cairn.role<param>},
                  %m: tensor<3xf32> {cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>},
                  %v: tensor<3xf32> {cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>},
                  %n: tensor<i64> {cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
    %1 = cairn.batch_norm %0 weight %g bias %b mean %m var %v {eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = true} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %2 = cairn.batch_norm %1 weight %g bias %b mean %m var %v {eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = true} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %3 = cairn.batch_norm %2 {eps = 1.0e-03 : f64, momentum = 0.1 : f64, training = true} : (tensor<4x3xf32>) -> tensor<4x3xf32>
    %4 = cairn.sum %3 {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %4 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x3xf32> {{[^}]*}}}, %[[G:[^:]+]]: tensor<3xf32> {{[^}]*}}}, %[[B:[^:]+]]: tensor<3xf32> {{[^}]*}}}, %[[M:[^:]+]]: tensor<3xf32> {{[^}]*}}}, %[[V:[^:]+]]: tensor<3xf32> {{[^}]*}}}, %[[N:[^:]+]]: tensor<i64>
// CHECK-SAME: tensor<3xf32> {cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>, cairn.updates = 3 : i64}, tensor<3xf32> {cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>, cairn.updates = 4 : i64}, tensor<i64> {cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>, cairn.updates = 5 : i64}
// CHECK:      %[[X0:.+]] = cairn.linear
// CHECK-NEXT: %[[X1:.+]] = cairn.batch_norm %[[X0]]
// CHECK-NEXT: %[[M1:[^,]+]], %[[V1:[^,]+]], %[[N1:[^ ]+]] = cairn.batch_norm_running_update %[[X0]], %[[M]], %[[V]], %[[N]]
// CHECK-NEXT: %[[X2:.+]] = cairn.batch_norm %[[X1]]
// CHECK-NEXT: %[[M2:[^,]+]], %[[V2:[^,]+]], %[[N2:[^ ]+]] = cairn.batch_norm_running_update %[[X1]], %[[M1]], %[[V1]], %[[N1]]
// CHECK-NEXT: %[[X3:.+]] = cairn.batch_norm %[[X2]] {eps = 1.000000e-03 : f64, momentum = 1.000000e-01 : f64, training = true}
// CHECK-NEXT: cairn.sum %[[X3]]
// CHECK:      %[[D3:[^,]+]], %{{[^,]+}}, %{{[^ ]+}} = cairn.batch_norm_grad %{{.+}}, %[[X2]] {eps = 1.000000e-03 : f64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: %[[D2:[^,]+]], %[[DG2:[^,]+]], %[[DB2:[^ ]+]] = cairn.batch_norm_grad %[[D3]], %[[X1]] weight %[[G]]
// CHECK-NEXT: %[[D1:[^,]+]], %[[DG1:[^,]+]], %[[DB1:[^ ]+]] = cairn.batch_norm_grad %[[D2]], %[[X0]] weight %[[G]]
// CHECK-NEXT: %[[DG:.+]] = cairn.add %[[DG2]], %[[DG1]]
// CHECK-NEXT: %[[DB:.+]] = cairn.add %[[DB2]], %[[DB1]]
// CHECK-NEXT: %[[DW:.+]] = cairn.linear_grad_weight %[[D1]]
// CHECK:      return %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[M2]], %[[V2]], %[[N2]], %[[DW]], %[[DG]], %[[DB]] :

// -----

// Adam: exp_avg then exp_avg_sq per trained param, after the params and
// buffers; the new state is returned over it, in argument order.
module attributes {cairn.optimizer = #cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.98, eps = 1.0e-06, weight_decay = 0.01>} {
  func.func @loss(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>} loc("adam.cairn":2:3),
                  %w: tensor<3x8xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>} loc("adam.cairn":4:3),
                  %b: tensor<3xf32> {cairn.name = "fc.bias", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w, %b : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
} loc("adam.cairn":1:1)

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x8xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>},
// CHECK-SAME: %[[B:[^:]+]]: tensor<3xf32> {cairn.name = "fc.bias", cairn.role = #cairn.role<param>},
// CHECK-SAME: %[[MW:[^:]+]]: tensor<3x8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc.weight.exp_avg", cairn.role = #cairn.role<optimizer_state>},
// CHECK-SAME: %[[VW:[^:]+]]: tensor<3x8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc.weight.exp_avg_sq", cairn.role = #cairn.role<optimizer_state>},
// CHECK-SAME: %[[MB:[^:]+]]: tensor<3xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc.bias.exp_avg", cairn.role = #cairn.role<optimizer_state>},
// CHECK-SAME: %[[VB:[^:]+]]: tensor<3xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc.bias.exp_avg_sq", cairn.role = #cairn.role<optimizer_state>},
// CHECK-SAME: %{{[^:]+}}: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>})
// CHECK-SAME: -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>},
// CHECK-SAME: tensor<3x8xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>, cairn.updates = 0 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "fc.bias", cairn.role = #cairn.role<param>, cairn.updates = 1 : i64},
// CHECK-SAME: tensor<3x8xf32> {cairn.name = "fc.weight.exp_avg", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 2 : i64},
// CHECK-SAME: tensor<3x8xf32> {cairn.name = "fc.weight.exp_avg_sq", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 3 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "fc.bias.exp_avg", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 4 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "fc.bias.exp_avg_sq", cairn.role = #cairn.role<optimizer_state>, cairn.updates = 5 : i64},
// CHECK-SAME: tensor<3x8xf32> {cairn.name = "grad.fc.weight", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<3xf32> {cairn.name = "grad.fc.bias", cairn.role = #cairn.role<gradient>})
// CHECK:      %[[DW:.+]] = cairn.linear_grad_weight
// CHECK-NEXT: %[[DB:.+]] = cairn.sum
// CHECK-NEXT: %[[NW:[^,]+]], %[[NMW:[^,]+]], %[[NVW:[^ ]+]] = cairn.adam_update %[[W]], %[[DW]], %[[MW]], %[[VW]] {beta1 = 9.000000e-01 : f64, beta2 = 0.97999999999999998 : f64, eps = 9.9999999999999995E-7 : f64, lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64} : (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>)
// CHECK-NEXT: %[[NB:[^,]+]], %[[NMB:[^,]+]], %[[NVB:[^ ]+]] = cairn.adam_update %[[B]], %[[DB]], %[[MB]], %[[VB]]
// CHECK-NEXT: return %{{.+}}, %[[NW]], %[[NB]], %[[NMW]], %[[NVW]], %[[NMB]], %[[NVB]], %[[DW]], %[[DB]] :

// -----

// Backward ops take cairn.device and cairn.precision from their forward op,
// not cairn.checkpoint (which marks forward ops to recompute).
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %w: tensor<3x8xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w {cairn.checkpoint = 0 : i64, cairn.device = 1 : i64, cairn.precision = #cairn.precision<bf16>} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0, 1>, keepdim = false} : tensor<4x3xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK:      cairn.linear {{.*}}{cairn.checkpoint = 0 : i64, cairn.device = 1 : i64, cairn.precision = #cairn.precision<bf16>}
// CHECK:      cairn.linear_grad_weight {{.*}}{cairn.device = 1 : i64, cairn.precision = #cairn.precision<bf16>}
// CHECK-NOT:  cairn.checkpoint

// -----

// A loss that no param reaches: the step returns the loss alone.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %w: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.sum %x {dims = array<i64: 0>, keepdim = false} : tensor<4xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %{{[^:]+}}: tensor<4xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}, %[[X:[^:]+]]: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>})
// CHECK-SAME: -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
// CHECK-NEXT: %[[L:.+]] = cairn.sum %[[X]]
// CHECK-NEXT: return %[[L]] : tensor<f32>

// -----

// ConvTranspose2d is conv2d_grad_input, the adjoint of a convolution: the
// gradient of its input is that convolution of dy (no bias), the gradient of
// its weight conv2d_grad_weight with its input and dy exchanged.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<2x4x5x5xf32> {cairn.name = "x", cairn.role = #cairn.role<param>},
                  %w: tensor<4x3x3x3xf32> {cairn.name = "w", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.conv2d_grad_input %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x10x10xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0, 1, 2, 3>, keepdim = false} : tensor<2x3x10x10xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK:      %[[Y:.+]] = cairn.conv2d_grad_input %[[X:[^,]+]], %[[W:[^ ]+]] {{.*}} -> tensor<2x3x10x10xf32>
// CHECK:      %[[DY:.+]] = cairn.broadcast %{{.+}} -> tensor<2x3x10x10xf32>
// CHECK-DAG:  cairn.conv2d %[[DY]], %[[W]] {{.*}}stride = array<i64: 2, 2>{{.*}} -> tensor<2x4x5x5xf32>
// CHECK-DAG:  cairn.conv2d_grad_weight %[[X]], %[[DY]] {{.*}} : (tensor<2x4x5x5xf32>, tensor<2x3x10x10xf32>) -> tensor<4x3x3x3xf32>

// -----

// A ConvTranspose2d's bias: its gradient is dy summed over all but the
// channels, as a convolution's bias's.
module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @loss(%x: tensor<2x4x5x5xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %w: tensor<4x3x3x3xf32> {cairn.name = "w", cairn.role = #cairn.role<param>},
                  %b: tensor<3xf32> {cairn.name = "b", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.conv2d_grad_input %x, %w bias %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<2x3x10x10xf32>
    %1 = cairn.sum %0 {dims = array<i64: 0, 1, 2, 3>, keepdim = false} : tensor<2x3x10x10xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// CHECK-LABEL: func.func @train_step(
// CHECK:      cairn.conv2d_grad_input %{{[^,]+}}, %{{[^ ]+}} bias %{{[^ ]+}} {{.*}} -> tensor<2x3x10x10xf32>
// CHECK:      %[[DY:.+]] = cairn.broadcast %{{.+}} -> tensor<2x3x10x10xf32>
// CHECK-NOT:  cairn.conv2d %
// CHECK-DAG:  cairn.conv2d_grad_weight %{{[^,]+}}, %[[DY]] {{.*}} -> tensor<4x3x3x3xf32>
// CHECK-DAG:  cairn.sum %[[DY]] {dims = array<i64: 0, 2, 3>, keepdim = false} : tensor<2x3x10x10xf32> -> tensor<3xf32>
