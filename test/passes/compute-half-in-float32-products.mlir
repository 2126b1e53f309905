// RUN: cairn-opt %s --cairn-compute-half-in-float32=half-products=true | FileCheck %s
// RUN: cairn-opt %s --cairn-compute-half-in-float32 | FileCheck %s --check-prefix=WIDEN

// Tests that with half-products (CUDA's tensor cores) a linear, its two
// gradients and a matmul all of whose tensors are bf16 stay in bf16, with no
// float32 copies; that every other op on half tensors (the relu) is still
// computed in float32 from copies; and that without the option every GEMM
// is widened, as for the CPU.
module attributes {cairn.batch = 2 : i64, cairn.model = "H"} {
  func.func @forward(%x: tensor<2x4xbf16>, %w: tensor<3x4xbf16>, %b: tensor<3xbf16>,
                     %dy: tensor<2x3xbf16>, %m: tensor<4x5xbf16>)
      -> (tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<3x4xbf16>, tensor<2x5xbf16>) {
    %y = cairn.linear %x, %w, %b : (tensor<2x4xbf16>, tensor<3x4xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
    %r = cairn.relu %y : tensor<2x3xbf16>
    %dx = cairn.linear_grad_input %dy, %w : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
    %dw = cairn.linear_grad_weight %dy, %x : (tensor<2x3xbf16>, tensor<2x4xbf16>) -> tensor<3x4xbf16>
    %p = cairn.matmul %x, %m : tensor<2x4xbf16>, tensor<4x5xbf16> -> tensor<2x5xbf16>
    return %r, %dx, %dw, %p : tensor<2x3xbf16>, tensor<2x4xbf16>, tensor<3x4xbf16>, tensor<2x5xbf16>
  }
}
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT: %[[Y:.*]] = cairn.linear %arg0, %arg1, %arg2 : (tensor<2x4xbf16>, tensor<3x4xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
// CHECK-NEXT: %[[Y32:.*]] = cairn.cast %[[Y]] : tensor<2x3xbf16> -> tensor<2x3xf32>
// CHECK-NEXT: %[[R32:.*]] = cairn.relu %[[Y32]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R:.*]] = cairn.cast %[[R32]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK-NEXT: %[[DX:.*]] = cairn.linear_grad_input %arg3, %arg1 : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
// CHECK-NEXT: %[[DW:.*]] = cairn.linear_grad_weight %arg3, %arg0 : (tensor<2x3xbf16>, tensor<2x4xbf16>) -> tensor<3x4xbf16>
// CHECK-NEXT: %[[P:.*]] = cairn.matmul %arg0, %arg4 : tensor<2x4xbf16>, tensor<4x5xbf16> -> tensor<2x5xbf16>
// CHECK-NEXT: return %[[R]], %[[DX]], %[[DW]], %[[P]]

// WIDEN-LABEL: func.func @forward(
// WIDEN-NOT: cairn.linear %arg0
// WIDEN: cairn.linear {{.*}} -> tensor<2x3xf32>
// WIDEN: cairn.linear_grad_input {{.*}} -> tensor<2x4xf32>
// WIDEN: cairn.linear_grad_weight {{.*}} -> tensor<3x4xf32>
// WIDEN: cairn.matmul {{.*}} -> tensor<2x5xf32>
