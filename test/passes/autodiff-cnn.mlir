// RUN: cairn-opt %s --cairn-autodiff | cairn-opt | FileCheck %s

// conv-bn-relu-maxpool-flatten-dropout-linear-cross_entropy with SGD without
// momentum: the training-mode batch_norm's running statistics are updated
// in the forward part and returned over their buffers; dropout's backward
// is the same dropout (same p and stream) on the gradient; no gradient for
// the image; no optimizer state.

module attributes {cairn.batch = 2 : i64, cairn.model = "CNN", cairn.optimizer = #cairn.sgd<lr = 0.05, momentum = 0.0, dampening = 0.0, weight_decay = 0.0005, nesterov = false>} {
  func.func @loss(%x: tensor<2x1x4x4xf32> {cairn.name = "image", cairn.role = #cairn.role<input>},
                  %y: tensor<2xi64> {cairn.name = "label", cairn.role = #cairn.role<input>},
                  %cw: tensor<3x1x3x3xf32> {cairn.init = #cairn.init<uniform, 0.33>, cairn.name = "conv.weight", cairn.role = #cairn.role<param>},
                  %cb: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.33>, cairn.name = "conv.bias", cairn.role = #cairn.role<param>},
                  %g: tensor<3xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "bn.weight", cairn.role = #cairn.role<param>},
                  %b: tensor<3xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.bias", cairn.role = #cairn.role<param>},
                  %m: tensor<3xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>},
                  %v: tensor<3xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>},
                  %n: tensor<i64> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>},
                  %fw: tensor<5x12xf32> {cairn.init = #cairn.init<uniform, 0.29>, cairn.name = "fc.weight", cairn.role = #cairn.role<param>},
                  %fb: tensor<5xf32> {cairn.init = #cairn.init<uniform, 0.29>, cairn.name = "fc.bias", cairn.role = #cairn.role<param>}) -> tensor<f32> {
    %0 = cairn.conv2d %x, %cw, %cb {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x1x4x4xf32>, tensor<3x1x3x3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
    %1 = cairn.batch_norm %0 weight %g bias %b mean %m var %v {eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = true} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
    %2 = cairn.relu %1 : tensor<2x3x4x4xf32>
    %3 = cairn.max_pool2d %2 {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<2x3x4x4xf32> -> tensor<2x3x2x2xf32>
    %4 = cairn.reshape %3 : tensor<2x3x2x2xf32> -> tensor<2x12xf32>
    %5 = cairn.dropout %4 {p = 0.25 : f64, stream = 7 : i64, training = true} : tensor<2x12xf32>
    %6 = cairn.linear %5, %fw, %fb : (tensor<2x12xf32>, tensor<5x12xf32>, tensor<5xf32>) -> tensor<2x5xf32>
    %7 = cairn.cross_entropy %6, %y {label_smoothing = 0.0 : f64} : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
    return %7 : tensor<f32>
  }
}

// No optimizer-state arguments: the inputs follow the params and buffers.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[CW:[^:]+]]: tensor<3x1x3x3xf32> {{[^}]*}}"conv.weight"
// CHECK-SAME: %[[CB:[^:]+]]: tensor<3xf32> {{[^}]*}}"conv.bias"
// CHECK-SAME: %[[G:[^:]+]]: tensor<3xf32> {{[^}]*}}"bn.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<3xf32> {{[^}]*}}"bn.bias"
// CHECK-SAME: %[[M:[^:]+]]: tensor<3xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>},
// CHECK-SAME: %[[V:[^:]+]]: tensor<3xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>},
// CHECK-SAME: %[[N:[^:]+]]: tensor<i64> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>},
// CHECK-SAME: %[[FW:[^:]+]]: tensor<5x12xf32> {{[^}]*}}"fc.weight"
// CHECK-SAME: %[[FB:[^:]+]]: tensor<5xf32> {{[^}]*}}"fc.bias"
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x1x4x4xf32> {cairn.name = "image", cairn.role = #cairn.role<input>},
// CHECK-SAME: %[[Y:[^:]+]]: tensor<2xi64> {cairn.name = "label", cairn.role = #cairn.role<input>})
// CHECK-SAME: -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>},
// CHECK-SAME: tensor<3x1x3x3xf32> {cairn.name = "conv.weight", cairn.role = #cairn.role<param>, cairn.updates = 0 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "conv.bias", cairn.role = #cairn.role<param>, cairn.updates = 1 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "bn.weight", cairn.role = #cairn.role<param>, cairn.updates = 2 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "bn.bias", cairn.role = #cairn.role<param>, cairn.updates = 3 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>, cairn.updates = 4 : i64},
// CHECK-SAME: tensor<3xf32> {cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>, cairn.updates = 5 : i64},
// CHECK-SAME: tensor<i64> {cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>, cairn.updates = 6 : i64},
// CHECK-SAME: tensor<5x12xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>, cairn.updates = 7 : i64},
// CHECK-SAME: tensor<5xf32> {cairn.name = "fc.bias", cairn.role = #cairn.role<param>, cairn.updates = 8 : i64},
// CHECK-SAME: tensor<3x1x3x3xf32> {cairn.name = "grad.conv.weight", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<3xf32> {cairn.name = "grad.conv.bias", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<3xf32> {cairn.name = "grad.bn.weight", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<3xf32> {cairn.name = "grad.bn.bias", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<5x12xf32> {cairn.name = "grad.fc.weight", cairn.role = #cairn.role<gradient>},
// CHECK-SAME: tensor<5xf32> {cairn.name = "grad.fc.bias", cairn.role = #cairn.role<gradient>})
// CHECK-NEXT:  %[[C:.+]] = cairn.conv2d %[[X]], %[[CW]], %[[CB]]
// CHECK-NEXT:  %[[BN:.+]] = cairn.batch_norm %[[C]] weight %[[G]] bias %[[B]] mean %[[M]] var %[[V]] {{{.*}}training = true}
// CHECK-NEXT:  %[[NM:[^,]+]], %[[NV:[^,]+]], %[[NN:[^ ]+]] = cairn.batch_norm_running_update %[[C]], %[[M]], %[[V]], %[[N]] {momentum = 1.000000e-01 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<i64>)
// CHECK-NEXT:  %[[R:.+]] = cairn.relu %[[BN]]
// CHECK-NEXT:  %[[P:.+]] = cairn.max_pool2d %[[R]]
// CHECK-NEXT:  %[[F:.+]] = cairn.reshape %[[P]]
// CHECK-NEXT:  %[[D:.+]] = cairn.dropout %[[F]] {p = 2.500000e-01 : f64, stream = 7 : i64, training = true}
// CHECK-NEXT:  %[[Z:.+]] = cairn.linear %[[D]], %[[FW]], %[[FB]]
// CHECK-NEXT:  %[[LOSS:.+]] = cairn.cross_entropy %[[Z]], %[[Y]]
// CHECK-NEXT:  %[[ONE:.+]] = cairn.constant {cairn.backward_seed} dense<1.000000e+00>
// CHECK-NEXT:  %[[DZ:.+]] = cairn.cross_entropy_grad %[[ONE]], %[[Z]], %[[Y]]
// CHECK-NEXT:  %[[DD:.+]] = cairn.linear_grad_input %[[DZ]], %[[FW]]
// CHECK-NEXT:  %[[DFW:.+]] = cairn.linear_grad_weight %[[DZ]], %[[D]]
// CHECK-NEXT:  %[[DFB:.+]] = cairn.sum %[[DZ]] {dims = array<i64: 0>, keepdim = false}
// CHECK-NEXT:  %[[DF:.+]] = cairn.dropout %[[DD]] {p = 2.500000e-01 : f64, stream = 7 : i64, training = true} : tensor<2x12xf32>
// CHECK-NEXT:  %[[DP:.+]] = cairn.reshape %[[DF]] : tensor<2x12xf32> -> tensor<2x3x2x2xf32>
// CHECK-NEXT:  %[[DR:.+]] = cairn.max_pool2d_grad %[[DP]], %[[R]] {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x2x2xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
// relu_grad reads relu's result R, not the batch_norm output BN, which only
// relu reads: BN need not live until the backward pass.
// CHECK-NEXT:  %[[DBN:.+]] = cairn.relu_grad %[[DR]], %[[R]] : tensor<2x3x4x4xf32>
// CHECK-NEXT:  %[[DC:[^,]+]], %[[DG:[^,]+]], %[[DB:[^ ]+]] = cairn.batch_norm_grad %[[DBN]], %[[C]] weight %[[G]] {eps = 1.000000e-05 : f64}
// CHECK-NEXT:  %[[DCW:.+]] = cairn.conv2d_grad_weight %[[DC]], %[[X]] {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<3x1x3x3xf32>
// CHECK-NEXT:  %[[DCB:.+]] = cairn.sum %[[DC]] {dims = array<i64: 0, 2, 3>, keepdim = false} : tensor<2x3x4x4xf32> -> tensor<3xf32>
// Without momentum: no buffer operand, one result.
// CHECK-NEXT:  %[[NCW:.+]] = cairn.sgd_update %[[CW]], %[[DCW]] {dampening = 0.000000e+00 : f64, lr = 5.000000e-02 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 5.000000e-04 : f64} : (tensor<3x1x3x3xf32>, tensor<3x1x3x3xf32>) -> tensor<3x1x3x3xf32>
// CHECK-NEXT:  %[[NCB:.+]] = cairn.sgd_update %[[CB]], %[[DCB]]
// CHECK-NEXT:  %[[NG:.+]] = cairn.sgd_update %[[G]], %[[DG]]
// CHECK-NEXT:  %[[NB:.+]] = cairn.sgd_update %[[B]], %[[DB]]
// CHECK-NEXT:  %[[NFW:.+]] = cairn.sgd_update %[[FW]], %[[DFW]]
// CHECK-NEXT:  %[[NFB:.+]] = cairn.sgd_update %[[FB]], %[[DFB]]
// CHECK-NEXT:  return %[[LOSS]], %[[NCW]], %[[NCB]], %[[NG]], %[[NB]], %[[NM]], %[[NV]], %[[NN]], %[[NFW]], %[[NFB]], %[[DCW]], %[[DCB]], %[[DG]], %[[DB]], %[[DFW]], %[[DFB]] :
// CHECK-NOT: conv2d_grad_input
