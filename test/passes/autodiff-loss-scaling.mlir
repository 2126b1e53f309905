// RUN: cairn-opt %s --cairn-autocast=precision=f16 --cairn-autodiff | FileCheck %s
// RUN: cairn-opt %s --cairn-autocast=precision=bf16 --cairn-autodiff | FileCheck %s --check-prefix=BF16
// RUN: cairn-opt %s --cairn-autocast="precision=bf16 loss-scaling=true" --cairn-autodiff | FileCheck %s
// RUN: cairn-opt %s --cairn-autocast=precision=f16 --cairn-autodiff --cairn-compute-half-in-float32 --cairn-lower-to-kernels=target=cpu | FileCheck %s --check-prefix=KERNELS
// RUN: cairn-opt %s --cairn-autocast=precision=f16 --cairn-autodiff --cairn-compute-half-in-float32 --cairn-lower-to-kernels=target=cuda | FileCheck %s --check-prefix=KERNELS

// Tests torch.amp.GradScaler's step as autodiff builds it for an f16 model:
// cairn-autocast marks the module, the backward starts from the loss scale
// times the marked 1 (which micro-batches and replicas make 1/M, 1/(M R)),
// every gradient is multiplied by its inverse before anything reads it, the
// updates take found_inf of those gradients (a skipped step changes
// nothing), and the running statistics the forward computed are committed
// over the old ones unless the step is skipped. bf16 has float32's range:
// no scaler, unless loss-scaling asks for one (cairn build --loss-scaling):
// then the same step. The CPU and CUDA lower it alike.
module attributes {cairn.batch = 2 : i64, cairn.model = "M", cairn.optimizer = #cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.0, decoupled_weight_decay = false>} {
  func.func @forward(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %w1: tensor<8x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>}, %g: tensor<8xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "bn.weight", cairn.role = #cairn.role<param>}, %b: tensor<8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.bias", cairn.role = #cairn.role<param>}, %m: tensor<8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>}, %v: tensor<8xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}, %n: tensor<i64> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>}) -> tensor<2x8xf32> {
    %0 = cairn.linear %x, %w1 : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    %1 = cairn.batch_norm %0 weight %g bias %b mean %m var %v {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = false} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    return %1 : tensor<2x8xf32>
  }
  func.func @loss(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}, %y: tensor<2xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}, %w1: tensor<8x4xf32> {cairn.init = #cairn.init<uniform, 0.5>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>}, %g: tensor<8xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "bn.weight", cairn.role = #cairn.role<param>}, %b: tensor<8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.bias", cairn.role = #cairn.role<param>}, %m: tensor<8xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.running_mean", cairn.role = #cairn.role<buffer>}, %v: tensor<8xf32> {cairn.init = #cairn.init<ones, 1.0>, cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}, %n: tensor<i64> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "bn.num_batches_tracked", cairn.role = #cairn.role<buffer>}) -> tensor<f32> {
    %0 = cairn.linear %x, %w1 : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    %1 = cairn.batch_norm %0 weight %g bias %b mean %m var %v {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = true} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    %2 = cairn.cross_entropy %1, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
    return %2 : tensor<f32>
  }
}
// CHECK: module attributes {{{.*}}cairn.loss_scaling
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}, tensor<f32> {cairn.name = "found_inf", cairn.role = #cairn.role<output>},
// CHECK: %[[NM:[^,]*]], %[[NV:[^,]*]], %[[NC:[^ ]*]] = cairn.batch_norm_running_update
// CHECK: %[[LOSS:.*]] = cairn.cross_entropy {{.*}} -> tensor<f32>
// CHECK: %[[SCALE:.*]] = cairn.loss_scale : tensor<f32>
// CHECK: %[[ONE:.*]] = cairn.constant {cairn.backward_seed} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SEED:.*]] = cairn.mul %[[SCALE]], %[[ONE]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK: cairn.cross_entropy_grad %[[SEED]],
// CHECK: %[[INV:.*]] = cairn.loss_scale {inverse} : tensor<f32>
// CHECK: %[[GW:.*]] = cairn.mul %{{.*}}, %[[INV]] : tensor<8x4xf32>, tensor<f32> -> tensor<8x4xf32>
// CHECK: %[[GG:.*]] = cairn.mul %{{.*}}, %[[INV]] : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
// CHECK: %[[GB:.*]] = cairn.mul %{{.*}}, %[[INV]] : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
// CHECK: %[[FOUND:.*]] = cairn.found_inf %[[GW]], %[[GG]], %[[GB]] : (tensor<8x4xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
// CHECK: %[[MEAN:.*]] = cairn.skip_select %[[FOUND]], %[[NM]], %arg3 : (tensor<f32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK: %[[VAR:.*]] = cairn.skip_select %[[FOUND]], %[[NV]], %arg4
// CHECK: %[[COUNT:.*]] = cairn.skip_select %[[FOUND]], %[[NC]], %arg5 : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: cairn.adam_update %arg0, %[[GW]], %{{.*}}, %{{.*}} found_inf %[[FOUND]]
// CHECK: cairn.adam_update %arg1, %[[GG]], %{{.*}}, %{{.*}} found_inf %[[FOUND]]
// CHECK: cairn.adam_update %arg2, %[[GB]], %{{.*}}, %{{.*}} found_inf %[[FOUND]]
// CHECK: return %[[LOSS]], %[[FOUND]], {{.*}}%[[MEAN]], %[[VAR]], %[[COUNT]]

// BF16-NOT: cairn.loss_scaling
// BF16-LABEL: func.func @train_step(
// BF16-NOT: loss_scale
// BF16-NOT: found_inf
// BF16-NOT: skip_select
// BF16: return

// KERNELS: cairn.kernel.loss_scale outs(%{{.*}} : memref<f32>) {inverse = false}
// KERNELS: cairn.kernel.fill outs(%{{.*}} : memref<f32>) {n = 1 : i64, value = 1.000000e+00 : f64, cairn.backward_seed}
// KERNELS: cairn.kernel.loss_scale outs(%{{.*}} : memref<f32>) {inverse = true}
// KERNELS: cairn.kernel.found_inf ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<8x4xf32>, memref<8xf32>, memref<8xf32>) outs(%[[KFOUND:.*]] : memref<f32>)
// KERNELS: cairn.kernel.skip_select ins(%[[KMEAN:[^,]*]], %{{.*}}, %[[KFOUND]] : memref<8xf32>, memref<8xf32>, memref<f32>) outs(%[[KMEAN]] : memref<8xf32>)
// KERNELS: cairn.kernel.adam_update ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[KFOUND]] :

