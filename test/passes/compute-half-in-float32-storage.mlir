// RUN: cairn-opt %s -split-input-file --cairn-compute-half-in-float32=half-storage-kernels=all | FileCheck %s
// RUN: cairn-opt %s -split-input-file --cairn-compute-half-in-float32 | FileCheck %s --check-prefix=WIDEN
// RUN: cairn-opt %s -split-input-file --cairn-compute-half-in-float32="half-products=true half-storage-kernels=one-type" | FileCheck %s --check-prefix=ONETYPE
// RUN: not cairn-opt %s -split-input-file --cairn-compute-half-in-float32=half-storage-kernels=some 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: unknown half-storage-kernels 'some' (none, one-type or all)

// Tests that with half-storage-kernels (the CPU) a max pool on one half type
// and its gradient over windows that do not overlap stay in bf16, with no
// float32 copies; that the gradient of overlapping windows (3x3, stride 2:
// an element can take two gradients, whose sum float32 must round once) is
// still computed in float32 from copies, also with one-type (CUDA's); and
// that without the option every pool is widened.
// precision.test checks the CPU's kernels.
module attributes {cairn.batch = 2 : i64, cairn.model = "P"} {
  func.func @forward(%x: tensor<2x3x8x8xbf16>, %dy: tensor<2x3x4x4xbf16>,
                     %dy3: tensor<2x3x3x3xbf16>)
      -> (tensor<2x3x4x4xbf16>, tensor<2x3x8x8xbf16>, tensor<2x3x8x8xbf16>) {
    %y = cairn.max_pool2d %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<2x3x8x8xbf16> -> tensor<2x3x4x4xbf16>
    %dx = cairn.max_pool2d_grad %dy, %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x4x4xbf16>, tensor<2x3x8x8xbf16>) -> tensor<2x3x8x8xbf16>
    %dx3 = cairn.max_pool2d_grad %dy3, %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x3x3xbf16>, tensor<2x3x8x8xbf16>) -> tensor<2x3x8x8xbf16>
    return %y, %dx, %dx3 : tensor<2x3x4x4xbf16>, tensor<2x3x8x8xbf16>, tensor<2x3x8x8xbf16>
  }
}
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT: %[[Y:.*]] = cairn.max_pool2d %arg0 {{.*}} : tensor<2x3x8x8xbf16> -> tensor<2x3x4x4xbf16>
// CHECK-NEXT: %[[DX:.*]] = cairn.max_pool2d_grad %arg1, %arg0 {{.*}} : (tensor<2x3x4x4xbf16>, tensor<2x3x8x8xbf16>) -> tensor<2x3x8x8xbf16>
// CHECK-NEXT: %[[DY3:.*]] = cairn.cast %arg2 : tensor<2x3x3x3xbf16> -> tensor<2x3x3x3xf32>
// CHECK-NEXT: %[[X3:.*]] = cairn.cast %arg0 : tensor<2x3x8x8xbf16> -> tensor<2x3x8x8xf32>
// CHECK-NEXT: %[[G3:.*]] = cairn.max_pool2d_grad %[[DY3]], %[[X3]] {{.*}} -> tensor<2x3x8x8xf32>
// CHECK-NEXT: %[[DX3:.*]] = cairn.cast %[[G3]] : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xbf16>
// CHECK-NEXT: return %[[Y]], %[[DX]], %[[DX3]]

// ONETYPE-LABEL: func.func @forward(
// ONETYPE-NEXT: cairn.max_pool2d %arg0 {{.*}} : tensor<2x3x8x8xbf16> -> tensor<2x3x4x4xbf16>
// ONETYPE-NEXT: cairn.max_pool2d_grad %arg1, %arg0 {{.*}} -> tensor<2x3x8x8xbf16>
// ONETYPE-NEXT: cairn.cast %arg2 : tensor<2x3x3x3xbf16> -> tensor<2x3x3x3xf32>

// WIDEN-LABEL: func.func @forward(
// WIDEN: cairn.cast %arg0 : tensor<2x3x8x8xbf16> -> tensor<2x3x8x8xf32>
// WIDEN-NEXT: cairn.max_pool2d {{.*}} -> tensor<2x3x4x4xf32>
// WIDEN-NOT: cairn.max_pool2d{{.*}}bf16
// WIDEN: return

// -----

// Tests that with half-storage-kernels batch norm, its running update and
// its gradient on bf16 data keep their float32 parameters and statistics and
// read and write bf16 with no copies, and so do an activation and its
// gradient on one half type (gelu's, which saves its input), and dropout;
// with one-type (CUDA's) too. Without the option, every one is widened.
module attributes {cairn.batch = 2 : i64, cairn.model = "N"} {
  func.func @norm(%x: tensor<2x3x4x4xbf16>, %dy: tensor<2x3x4x4xbf16>,
                  %w: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>,
                  %v: tensor<3xf32>, %n: tensor<i64>)
      -> (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<i64>,
          tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>,
          tensor<2x3x4x4xbf16>, tensor<2x3x4x4xbf16>) {
    %y = cairn.batch_norm %x weight %w bias %b mean %m var %v {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = true} : (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xbf16>
    %nm, %nv, %nn = cairn.batch_norm_running_update %x, %m, %v, %n {momentum = 1.000000e-01 : f64} : (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<i64>)
    %dx, %dw, %db = cairn.batch_norm_grad %dy, %x weight %w {eps = 1.000000e-05 : f64} : (tensor<2x3x4x4xbf16>, tensor<2x3x4x4xbf16>, tensor<3xf32>) -> (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>)
    %g = cairn.gelu %y {approximate = "none"} : tensor<2x3x4x4xbf16>
    %dg = cairn.gelu_grad %dy, %y {approximate = "none"} : tensor<2x3x4x4xbf16>
    %d = cairn.dropout %g {p = 5.000000e-01 : f64, stream = 0 : i64, training = true} : tensor<2x3x4x4xbf16>
    return %d, %nm, %nv, %nn, %dx, %dw, %db, %dg, %y : tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<i64>, tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4x4xbf16>, tensor<2x3x4x4xbf16>
  }
}
// CHECK-LABEL: func.func @norm(
// CHECK-NOT: cairn.cast
// CHECK: cairn.batch_norm %arg0 weight %arg2 bias %arg3 mean %arg4 var %arg5 {{.*}} : (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xbf16>
// CHECK-NEXT: cairn.batch_norm_running_update %arg0, {{.*}} : (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<i64>)
// CHECK-NEXT: cairn.batch_norm_grad %arg1, %arg0 weight %arg2 {{.*}} -> (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: cairn.gelu {{.*}} : tensor<2x3x4x4xbf16>
// CHECK-NEXT: cairn.gelu_grad {{.*}} : tensor<2x3x4x4xbf16>
// CHECK-NEXT: cairn.dropout {{.*}} : tensor<2x3x4x4xbf16>
// CHECK-NEXT: return

// ONETYPE-LABEL: func.func @norm(
// ONETYPE-NOT: cairn.cast
// ONETYPE: cairn.batch_norm %arg0 weight %arg2 {{.*}} -> tensor<2x3x4x4xbf16>
// ONETYPE-NEXT: cairn.batch_norm_running_update %arg0,
// ONETYPE-NEXT: cairn.batch_norm_grad %arg1, %arg0 {{.*}} -> (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>)
// ONETYPE-NEXT: cairn.gelu {{.*}} : tensor<2x3x4x4xbf16>
// ONETYPE-NEXT: cairn.gelu_grad {{.*}} : tensor<2x3x4x4xbf16>
// ONETYPE-NEXT: cairn.dropout {{.*}} : tensor<2x3x4x4xbf16>
// ONETYPE-NEXT: return

// WIDEN-LABEL: func.func @norm(
// WIDEN: cairn.cast %arg0 : tensor<2x3x4x4xbf16> -> tensor<2x3x4x4xf32>
// WIDEN-NEXT: cairn.batch_norm {{.*}} -> tensor<2x3x4x4xf32>
// WIDEN-NOT: cairn.batch_norm{{.*}}bf16
// WIDEN-NOT: cairn.gelu{{.*}}bf16
// WIDEN-NOT: cairn.dropout{{.*}}bf16
// WIDEN: return

// -----

// Tests that with half-storage-kernels a linear, its two gradients and a
// relu on bf16 stay in bf16 with no float32 copies (the CPU's halfGemm
// widens panels of the operands itself), and so do a convolution and its
// two gradients (HalfConv.h widens a group of images at a time); and that
// without the option they are widened.
module attributes {cairn.batch = 2 : i64, cairn.model = "C"} {
  func.func @conv(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %b: tensor<4xbf16>,
                  %dy: tensor<2x4x8x8xbf16>)
      -> (tensor<2x4x8x8xbf16>, tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>) {
    %y = cairn.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16>) -> tensor<2x4x8x8xbf16>
    %dx = cairn.conv2d_grad_input %dy, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x4x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x3x8x8xbf16>
    %dw = cairn.conv2d_grad_weight %dy, %x {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x4x8x8xbf16>, tensor<2x3x8x8xbf16>) -> tensor<4x3x3x3xbf16>
    return %y, %dx, %dw : tensor<2x4x8x8xbf16>, tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>
  }
}
// CHECK-LABEL: func.func @conv(
// CHECK-NEXT: cairn.conv2d %arg0, %arg1, %arg2 {{.*}} -> tensor<2x4x8x8xbf16>
// CHECK-NEXT: cairn.conv2d_grad_input %arg3, %arg1 {{.*}} -> tensor<2x3x8x8xbf16>
// CHECK-NEXT: cairn.conv2d_grad_weight %arg3, %arg0 {{.*}} -> tensor<4x3x3x3xbf16>
// CHECK-NEXT: return

// WIDEN-LABEL: func.func @conv(
// WIDEN: cairn.conv2d {{.*}} -> tensor<2x4x8x8xf32>
// WIDEN: cairn.conv2d_grad_input {{.*}} -> tensor<2x3x8x8xf32>
// WIDEN: cairn.conv2d_grad_weight {{.*}} -> tensor<4x3x3x3xf32>
// WIDEN: return

// -----

module attributes {cairn.batch = 2 : i64, cairn.model = "L"} {
  func.func @linear(%x: tensor<2x4xbf16>, %w: tensor<3x4xbf16>, %b: tensor<3xbf16>,
                    %dy: tensor<2x3xbf16>)
      -> (tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<3x4xbf16>) {
    %y = cairn.linear %x, %w, %b : (tensor<2x4xbf16>, tensor<3x4xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
    %r = cairn.relu %y : tensor<2x3xbf16>
    %dx = cairn.linear_grad_input %dy, %w : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
    %dw = cairn.linear_grad_weight %dy, %x : (tensor<2x3xbf16>, tensor<2x4xbf16>) -> tensor<3x4xbf16>
    return %r, %dx, %dw : tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<3x4xbf16>
  }
}
// CHECK-LABEL: func.func @linear(
// CHECK-NEXT: cairn.linear %arg0, %arg1, %arg2 : (tensor<2x4xbf16>, tensor<3x4xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
// CHECK-NEXT: cairn.relu {{.*}} : tensor<2x3xbf16>
// CHECK-NEXT: cairn.linear_grad_input %arg3, %arg1 : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
// CHECK-NEXT: cairn.linear_grad_weight %arg3, %arg0 : (tensor<2x3xbf16>, tensor<2x4xbf16>) -> tensor<3x4xbf16>
// CHECK-NEXT: return

// WIDEN-LABEL: func.func @linear(
// WIDEN: cairn.linear {{.*}} -> tensor<2x3xf32>
// WIDEN: cairn.linear_grad_input {{.*}} -> tensor<2x4xf32>
// WIDEN: cairn.linear_grad_weight {{.*}} -> tensor<3x4xf32>
// WIDEN: return

// -----

// Tests that with half-storage-kernels a sum of a bf16 value's float32 copy
// (autocast sums in float32: a bias gradient) reads the bf16 value itself,
// and the copy goes; that a mean of a bf16 value this pass would widen reads
// it too, into a float32 result it then narrows; and that a copy another op
// still reads stays for it. Without the option, and with one-type (CUDA's
// sums take one type), the sums read the copies.
module attributes {cairn.batch = 2 : i64, cairn.model = "S"} {
  func.func @sums(%dy: tensor<4x3xbf16>, %z: tensor<4x3xbf16>)
      -> (tensor<3xf32>, tensor<4xbf16>, tensor<3xf32>, tensor<4x3xf32>) {
    %w = cairn.cast %dy : tensor<4x3xbf16> -> tensor<4x3xf32>
    %s = cairn.sum %w {dims = array<i64: 0>, keepdim = false} : tensor<4x3xf32> -> tensor<3xf32>
    %m = cairn.mean %dy {dims = array<i64: 1>, keepdim = false} : tensor<4x3xbf16> -> tensor<4xbf16>
    %zw = cairn.cast %z : tensor<4x3xbf16> -> tensor<4x3xf32>
    %t = cairn.sum %zw {dims = array<i64: 0>, keepdim = false} : tensor<4x3xf32> -> tensor<3xf32>
    return %s, %m, %t, %zw : tensor<3xf32>, tensor<4xbf16>, tensor<3xf32>, tensor<4x3xf32>
  }
}
// CHECK-LABEL: func.func @sums(
// CHECK-NEXT: %[[S:.*]] = cairn.sum %arg0 {{.*}} : tensor<4x3xbf16> -> tensor<3xf32>
// CHECK-NEXT: %[[M32:.*]] = cairn.mean %arg0 {{.*}} : tensor<4x3xbf16> -> tensor<4xf32>
// CHECK-NEXT: %[[M:.*]] = cairn.cast %[[M32]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT: %[[ZW:.*]] = cairn.cast %arg1 : tensor<4x3xbf16> -> tensor<4x3xf32>
// CHECK-NEXT: %[[T:.*]] = cairn.sum %arg1 {{.*}} : tensor<4x3xbf16> -> tensor<3xf32>
// CHECK-NEXT: return %[[S]], %[[M]], %[[T]], %[[ZW]]

// ONETYPE-LABEL: func.func @sums(
// ONETYPE: cairn.sum %{{.*}} : tensor<4x3xf32> -> tensor<3xf32>
// ONETYPE-NOT: cairn.sum %{{.*}}bf16
// ONETYPE-NOT: cairn.mean %{{.*}}bf16
// ONETYPE: return

// WIDEN-LABEL: func.func @sums(
// WIDEN: cairn.sum %{{.*}} : tensor<4x3xf32> -> tensor<3xf32>
// WIDEN-NOT: cairn.sum %{{.*}}bf16
// WIDEN-NOT: cairn.mean %{{.*}}bf16
// WIDEN: return

// -----

// Tests that with half-storage-kernels a linear and its gradients read the
// float32 weight and bias arguments (a model's master weights) instead of
// their casts to bf16, and the weight gradient whose one reader widens it
// is written in float32 (ir/ProductTypes.h: the product rounds them as it
// reads or writes them); that a cast of a computed float32 value (relu's,
// which need not live on) stays, and so does the half result of a product that
// something else reads too; and that a convolution reads the float32 input
// batch and weight, and a linear a reshape of the batch; and that a linear
// all of whose operands are float32 keeps its half result, the type it
// computes in (ir/ProductTypes.h), and its cast. Without the option the
// casts stay and the products are widened.
module attributes {cairn.batch = 2 : i64, cairn.model = "M"} {
  func.func @masters(%x: tensor<2x4xbf16>, %w: tensor<3x4xf32>, %b: tensor<3xf32>,
                     %dy: tensor<2x3xbf16>, %h: tensor<2x4xf32>,
                     %img: tensor<2x3x8x8xf32>, %k: tensor<4x3x3x3xf32>,
                     %dz: tensor<2x4x8x8xbf16>, %dz2: tensor<2x3xbf16>,
                     %v: tensor<3x192xf32>)
      -> (tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<3x4xf32>, tensor<2x3xbf16>,
          tensor<3x4xbf16>, tensor<3x4xf32>, tensor<2x4x8x8xbf16>,
          tensor<4x3x3x3xf32>, tensor<3x192xbf16>, tensor<2x3xf32>) {
    %wh = cairn.cast %w : tensor<3x4xf32> -> tensor<3x4xbf16>
    %vh = cairn.cast %v : tensor<3x192xf32> -> tensor<3x192xbf16>
    %bh = cairn.cast %b : tensor<3xf32> -> tensor<3xbf16>
    %y = cairn.linear %x, %wh, %bh : (tensor<2x4xbf16>, tensor<3x4xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
    %dx = cairn.linear_grad_input %dy, %wh : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
    %dwh = cairn.linear_grad_weight %dy, %x : (tensor<2x3xbf16>, tensor<2x4xbf16>) -> tensor<3x4xbf16>
    %dw = cairn.cast %dwh : tensor<3x4xbf16> -> tensor<3x4xf32>
    %hr = cairn.relu %h : tensor<2x4xf32>
    %hh = cairn.cast %hr : tensor<2x4xf32> -> tensor<2x4xbf16>
    %y2 = cairn.linear %hh, %wh : (tensor<2x4xbf16>, tensor<3x4xbf16>) -> tensor<2x3xbf16>
    %flat = cairn.reshape %img : tensor<2x3x8x8xf32> -> tensor<2x192xf32>
    %flath = cairn.cast %flat : tensor<2x192xf32> -> tensor<2x192xbf16>
    %dwf = cairn.linear_grad_weight %dz2, %flath : (tensor<2x3xbf16>, tensor<2x192xbf16>) -> tensor<3x192xbf16>
    %emb = cairn.linear %flath, %vh : (tensor<2x192xbf16>, tensor<3x192xbf16>) -> tensor<2x3xbf16>
    %emb32 = cairn.cast %emb : tensor<2x3xbf16> -> tensor<2x3xf32>
    %dw2h = cairn.linear_grad_weight %dy, %hh : (tensor<2x3xbf16>, tensor<2x4xbf16>) -> tensor<3x4xbf16>
    %dw2 = cairn.cast %dw2h : tensor<3x4xbf16> -> tensor<3x4xf32>
    %imgh = cairn.cast %img : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xbf16>
    %kh = cairn.cast %k : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xbf16>
    %z = cairn.conv2d %imgh, %kh {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x4x8x8xbf16>
    %dkh = cairn.conv2d_grad_weight %dz, %imgh {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x4x8x8xbf16>, tensor<2x3x8x8xbf16>) -> tensor<4x3x3x3xbf16>
    %dk = cairn.cast %dkh : tensor<4x3x3x3xbf16> -> tensor<4x3x3x3xf32>
    return %y, %dx, %dw, %y2, %dw2h, %dw2, %z, %dk, %dwf, %emb32 : tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<3x4xf32>, tensor<2x3xbf16>, tensor<3x4xbf16>, tensor<3x4xf32>, tensor<2x4x8x8xbf16>, tensor<4x3x3x3xf32>, tensor<3x192xbf16>, tensor<2x3xf32>
  }
}
// CHECK-LABEL: func.func @masters(
// CHECK-NEXT: %[[Y:.*]] = cairn.linear %arg0, %arg1, %arg2 : (tensor<2x4xbf16>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT: %[[DX:.*]] = cairn.linear_grad_input %arg3, %arg1 : (tensor<2x3xbf16>, tensor<3x4xf32>) -> tensor<2x4xbf16>
// CHECK-NEXT: %[[DW:.*]] = cairn.linear_grad_weight %arg3, %arg0 : (tensor<2x3xbf16>, tensor<2x4xbf16>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[HR:.*]] = cairn.relu %arg4 : tensor<2x4xf32>
// CHECK-NEXT: %[[HH:.*]] = cairn.cast %[[HR]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[Y2:.*]] = cairn.linear %[[HH]], %arg1 : (tensor<2x4xbf16>, tensor<3x4xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT: %[[FLAT:.*]] = cairn.reshape %arg5 : tensor<2x3x8x8xf32> -> tensor<2x192xf32>
// CHECK-NEXT: %[[DWF:.*]] = cairn.linear_grad_weight %arg8, %[[FLAT]] : (tensor<2x3xbf16>, tensor<2x192xf32>) -> tensor<3x192xbf16>
// CHECK-NEXT: %[[EMB:.*]] = cairn.linear %[[FLAT]], %arg9 : (tensor<2x192xf32>, tensor<3x192xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT: %[[EMB32:.*]] = cairn.cast %[[EMB]] : tensor<2x3xbf16> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DW2H:.*]] = cairn.linear_grad_weight %arg3, %[[HH]] : {{.*}} -> tensor<3x4xbf16>
// CHECK-NEXT: %[[DW2:.*]] = cairn.cast %[[DW2H]] : tensor<3x4xbf16> -> tensor<3x4xf32>
// CHECK-NEXT: %[[Z:.*]] = cairn.conv2d %arg5, %arg6 {{.*}} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xbf16>
// CHECK-NEXT: %[[DK:.*]] = cairn.conv2d_grad_weight %arg7, %arg5 {{.*}} : (tensor<2x4x8x8xbf16>, tensor<2x3x8x8xf32>) -> tensor<4x3x3x3xf32>
// CHECK-NEXT: return %[[Y]], %[[DX]], %[[DW]], %[[Y2]], %[[DW2H]], %[[DW2]], %[[Z]], %[[DK]], %[[DWF]], %[[EMB32]]

// WIDEN-LABEL: func.func @masters(
// WIDEN: cairn.cast %arg1 : tensor<3x4xf32> -> tensor<3x4xbf16>
// WIDEN-NOT: cairn.linear{{.*}}bf16
// WIDEN-NOT: cairn.conv2d{{.*}}bf16
// WIDEN: return

// -----

// Tests that with half-storage-kernels a product whose operands end with it
// and take more bytes than its half result keeps that result and its
// widening cast (inference's linear2 after its gelu: written in float32 it
// would be live with the gelu's output; in half, the cast's float32 copy
// comes once that is gone), while a product whose operand lives on (read
// again, as a weight gradient's are) writes the float32 result.
module attributes {cairn.batch = 2 : i64, cairn.model = "M"} {
  func.func @dying(%x: tensor<2x64xf32>, %w: tensor<4x64xf32>, %w2: tensor<4x64xf32>)
      -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x64xbf16>) {
    %g = cairn.gelu %x : tensor<2x64xf32>
    %gh = cairn.cast %g : tensor<2x64xf32> -> tensor<2x64xbf16>
    %wh = cairn.cast %w : tensor<4x64xf32> -> tensor<4x64xbf16>
    %y = cairn.linear %gh, %wh : (tensor<2x64xbf16>, tensor<4x64xbf16>) -> tensor<2x4xbf16>
    %y32 = cairn.cast %y : tensor<2x4xbf16> -> tensor<2x4xf32>
    %r = cairn.relu %x : tensor<2x64xf32>
    %rh = cairn.cast %r : tensor<2x64xf32> -> tensor<2x64xbf16>
    %w2h = cairn.cast %w2 : tensor<4x64xf32> -> tensor<4x64xbf16>
    %z = cairn.linear %rh, %w2h : (tensor<2x64xbf16>, tensor<4x64xbf16>) -> tensor<2x4xbf16>
    %z32 = cairn.cast %z : tensor<2x4xbf16> -> tensor<2x4xf32>
    return %y32, %z32, %rh : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x64xbf16>
  }
}
// CHECK-LABEL: func.func @dying(
// CHECK: %[[Y:.*]] = cairn.linear %{{.*}}, %arg1 : (tensor<2x64xbf16>, tensor<4x64xf32>) -> tensor<2x4xbf16>
// CHECK-NEXT: %[[Y32:.*]] = cairn.cast %[[Y]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[Z:.*]] = cairn.linear %{{.*}}, %arg2 : (tensor<2x64xbf16>, tensor<4x64xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return %[[Y32]], %[[Z]],

// -----

// Tests that with half-storage-kernels the element-wise add, sub, mul and
// div on one half type (a residual add, a scale) stay half, their kernels
// widening each element and rounding the result, and so does a matmul
// (batchedHalfGemm); and that without the option they are all widened.
module attributes {cairn.batch = 2 : i64, cairn.model = "E"} {
  func.func @binary(%a: tensor<2x8xbf16>, %b: tensor<2x8xbf16>, %s: tensor<8xbf16>,
                    %m: tensor<8x4xbf16>)
      -> (tensor<2x8xbf16>, tensor<2x8xbf16>, tensor<2x4xbf16>) {
    %0 = cairn.add %a, %b : tensor<2x8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
    %1 = cairn.mul %0, %s : tensor<2x8xbf16>, tensor<8xbf16> -> tensor<2x8xbf16>
    %2 = cairn.sub %1, %a : tensor<2x8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
    %3 = cairn.div %2, %b : tensor<2x8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
    %4 = cairn.matmul %3, %m : tensor<2x8xbf16>, tensor<8x4xbf16> -> tensor<2x4xbf16>
    return %3, %0, %4 : tensor<2x8xbf16>, tensor<2x8xbf16>, tensor<2x4xbf16>
  }
}
// CHECK-LABEL: func.func @binary(
// CHECK-NEXT: cairn.add %arg0, %arg1 : tensor<2x8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT: cairn.mul {{.*}} : tensor<2x8xbf16>, tensor<8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT: cairn.sub {{.*}} -> tensor<2x8xbf16>
// CHECK-NEXT: cairn.div {{.*}} -> tensor<2x8xbf16>
// CHECK-NEXT: cairn.matmul {{.*}} -> tensor<2x4xbf16>
// CHECK-NEXT: return

// WIDEN-LABEL: func.func @binary(
// WIDEN: cairn.add {{.*}} -> tensor<2x8xf32>
// WIDEN-NOT: cairn.{{add|mul|sub|div|matmul}}{{.*}}-> tensor<2x{{[48]}}xbf16>
// WIDEN: return

// -----

// Tests that with half-storage-kernels a softmax and a log-softmax in
// float32 of a half value's float32 copy (autocast's float32 list) read the
// half value, and the copy goes; a copy another op reads too stays for it.
// Without the option, and with one-type, the softmaxes read the copy.
module attributes {cairn.batch = 2 : i64, cairn.model = "S"} {
  func.func @softmax(%x: tensor<2x4x8xbf16>)
      -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
    %w = cairn.cast %x : tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
    %s = cairn.softmax %w {dim = 2 : i64} : tensor<2x4x8xf32>
    %l = cairn.log_softmax %w {dim = 1 : i64} : tensor<2x4x8xf32>
    %e = cairn.sigmoid %w : tensor<2x4x8xf32>
    return %s, %l, %e : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  }
}
// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT: %[[W:.*]] = cairn.cast %arg0 : tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
// CHECK-NEXT: cairn.softmax %arg0 {dim = 2 : i64} : tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
// CHECK-NEXT: cairn.log_softmax %arg0 {dim = 1 : i64} : tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
// CHECK-NEXT: cairn.sigmoid %[[W]] : tensor<2x4x8xf32>

// ONETYPE-LABEL: func.func @softmax(
// ONETYPE: cairn.softmax %{{.*}} : tensor<2x4x8xf32>
// ONETYPE-NOT: cairn.softmax %{{.*}}bf16
// ONETYPE: return

// WIDEN-LABEL: func.func @softmax(
// WIDEN: cairn.softmax %{{.*}} : tensor<2x4x8xf32>
// WIDEN-NOT: bf16> -> tensor<2x4x8xf32>
// WIDEN: return
